"""One-class SVM (LIBLINEAR -s 21) by dual coordinate descent with two-variable updates
(Chou, Lin & Lin, SDM 2020, "Dual coordinate-descent methods for linear one-class SVM
and SVDD"; csrc/_oneclass.pyx).

Problem (Schoelkopf et al.'s nu-formulation, n training examples, labels ignored):

    min_{w, rho, xi}  1/2 ||w||^2 - rho + 1/(nu n) sum_i xi_i,   w.x_i >= rho - xi_i,  xi_i >= 0,

decision value w.x - rho (>= 0: inlier).  nu in (0, 1] (option `nu`, LIBLINEAR's -n,
default 0.5) bounds the fractions at the optimum: training outliers <= nu <= support
vectors (stats outlier_fraction and sv_fraction; an example counts as an outlier when
w.x_i < rho by more than the final violation, below which a tie at rho cannot be told
apart; at a loose -e the fractions are those of the approximate solution).

Scaling: the weights and the threshold returned are LIBLINEAR's, those of the dual scaled
by nu n (w = sum a_i x_i with 0 <= a_i <= 1, sum a_i = nu n): nu n times the w and rho of
the problem above, so decision values equal LIBLINEAR's; FitResult.offset = -rho
(the model's decision value is w.x - rho).  stats["objective"] is the
problem above at (w, rho) / (nu n), its dual_objective -1/2 ||w / (nu n)||^2, and gap
their relative difference, which bounds the relative suboptimality of the result.

Like LIBLINEAR: no bias feature (LIBLINEAR refuses -B >= 0 with -s 21; so does this
solver, a bias would be a constant feature that shifts every w.x alike and only moves
rho), and no example weights (LIBLINEAR ignores -wi for -s 21: there are no classes;
costs given here are ignored and reported in stats["ignored_costs"]).

Stopping: LIBLINEAR's rule, the maximal violation max_{a_i < 1} -G_i - min_{a_i > 0} -G_i
< -e (default 0.01, LIBLINEAR's), G_i = w.x_i in the scaled dual, accepted once the
duality gap certifies 1% (else continued at a smaller -e).  The state (the dual a) seeds a
later solve with the same nu on the same examples.  Serial only.
"""
from __future__ import annotations

import numpy as np

from .. import _kernels, _oneclass
from ..errors import ParameterError
from ..problem.registry import FitResult
from .gaps import GAP_GUARD, GAP_GUARD_MIN_EPS, gap_guard_shrink, relative_gap


def fit_oneclass(problem, params, start, state, log):
    """Train a linear one-class SVM (module docstring).  See linsvm.solvers for the
    contract; problem.t is ignored.  Returns the weights (n_features values: no bias),
    offset = -rho; stats: objective, dual_objective, gap, n_iter (outer
    iterations), violation, n_sv, n_bound, sv_fraction, outlier_fraction, nu, status."""
    if problem.comm is not None:
        raise ParameterError("oneclass is serial only (dual coordinate descent)")
    if problem.bias > 0:
        raise ParameterError("oneclass takes no bias feature (-B -1), as LIBLINEAR -s 21")
    nu, max_iter, n = params["nu"], params["max_iter"], problem.n_rows
    if n == 0:
        raise ParameterError("one-class training needs at least one example")
    a, init, warning = np.zeros(n), True, None
    if state is not None:
        ok = (isinstance(state, dict) and state.get("kind") == "oneclass"
              and np.shape(state.get("a")) == (n,) and state.get("nu") == nu)
        if ok:
            a, init = np.array(state["a"], dtype=np.float64), False
        else:
            warning = "oneclass: the previous solver state does not belong to this problem; starting afresh"
    elif start is not None:
        warning = "oneclass is a dual method and cannot start from weights alone; starting afresh"
    callback = None
    if log is not None:
        def callback(it, viol, active):
            log(f"oneclass iter {it:4d}  violation {viol:.4g}  active {active}")
    # the objectives' scale: w* = sum a_i x_i with sum a_i = 1, so |P|, |D| <= max ||x_i||^2;
    # a gap below 1e-12 of it is rounding (data centred at the origin: w* = 0, rho* = 0,
    # where P and D are both rounding and their ratio means nothing)
    floor = 1e-12 * _max_sq_norm(problem)
    eps, iters = params.tol, 0
    while True:
        st = _oneclass.oneclass_solve(problem.view, nu=nu, a=a, init=init, eps=eps,
                                      max_iter=max_iter - iters, callback=callback)
        init = False
        iters += int(st["n_iter"])
        gap = relative_gap(st["primal"], st["dual"])
        if st["primal"] - st["dual"] <= floor:
            gap = 0.0
        if st["status"] != 0 or gap <= GAP_GUARD or eps <= GAP_GUARD_MIN_EPS or iters >= max_iter:
            break
        if log is not None:
            log(f"oneclass: violation < {eps:g} with a relative duality gap of {gap:.3g}: "
                f"continuing at eps {eps * gap_guard_shrink(gap):g}")
        eps *= gap_guard_shrink(gap)
    costs = problem.cost
    stats = {"objective": st["primal"], "dual_objective": st["dual"], "gap": gap,
             "n_iter": iters, "violation": st["violation"], "n_sv": st["n_sv"],
             "n_bound": st["n_bound"], "sv_fraction": st["n_sv"] / n,
             "outlier_fraction": st["n_outliers"] / n, "nu": nu, "final_eps": eps,
             "ignored_costs": bool(np.any(costs != 1.0)),
             "status": "converged" if st["status"] == 0 else "iteration cap"}
    converged = True
    if gap > GAP_GUARD:            # at the cap too: a certified gap within 1% is a result
        converged = False
        warning = (f"oneclass stopped {'at the iteration cap (max_iter=' + str(max_iter) + ')' if st['status'] else 'at eps ' + format(eps, 'g')} "
                   f"with a relative duality gap of {gap:.3g} > {GAP_GUARD:g}; raise --max-iter or tighten -e")
    return FitResult(st["w"], stats, offset=-float(st["rho"]), warning=warning,
                     converged=converged, state={"kind": "oneclass", "a": a, "nu": nu})


def _max_sq_norm(problem):
    """max over the problem's rows of ||x_i||^2 (0 without rows), in one pass over them
    that allocates nothing per row or per non-zero."""
    return float(_kernels.max_row_sq_norm(problem.view)[0]) if problem.n_rows else 0.0
