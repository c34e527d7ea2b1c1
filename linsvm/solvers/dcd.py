"""Dual coordinate descent for binary linear SVMs (Hsieh et al., ICML 2008).

The method is reference [9] of the SDM paper (Keerthi et al., KDD 2008): SDM
specialized to two classes, and the solver that paper's Section 4 uses for
one-vs-rest.  It minimizes LIBLINEAR's objectives for the same -c and -B:

    --loss l1:  1/2 ||w||^2 + C sum_i c_i max(0, 1 - t_i w.x_i)      (LIBLINEAR -s 3)
    --loss l2:  1/2 ||w||^2 + C sum_i c_i max(0, 1 - t_i w.x_i)^2    (LIBLINEAR -s 1)

x_i including the bias feature when bias > 0, c_i the relative cost (class
weight x sample weight).  [9] writes the same problems with the same C, so
there is no rescaling: the dual box is 0 <= alpha_i <= U_i = C c_i (l1), or
alpha_i >= 0 with the diagonal D_ii = 1 / (2 C c_i) (l2).  Each loop runs over
a fresh random permutation, with shrinking ([9] Algorithm 3); -e is [9]'s
stopping rule, max PG - min PG <= eps over a loop of all examples (default 0.1,
as in [9] and LIBLINEAR).  The compiled core is csrc/_dcd.pyx.

With more than two classes linsvm.train runs it one-vs-rest (one column per
class, LIBLINEAR's rule for class weights).

Warm start (alpha-seeding): the alphas of a previous solve come back as
`state`; they are scaled by C / C_previous and clipped to the new box
[0, U_i] (l1; l2 has no upper bound), and w is recomputed from them.  Along
C paths of 11 values (2^-6..2^4, tol 1e-3) scaling took 2665 loops on a1a
with l2 against 7394 when only clipping and 9582 cold (w1a l1: 4553 / 4942 /
6419).  Weights alone (no state) cannot seed a dual method and are ignored
with a warning.
"""
from __future__ import annotations

import numpy as np

from .. import _dcd
from ..errors import ParameterError
from ..problem import check_binary_targets, check_rows_and_costs
from . import Option, SolverInfo, register, work_memory

_STATUS = {0: "converged", 1: "iteration cap"}
_LOSSES = {"l1": 1, "l2": 2}


def fit_dcd(X, rows, t, cost, C, bias, tol, beta0, seed, log, state=None, **opts):
    """Train a binary linear SVM by dual coordinate descent ([9], Algorithms 1 and 3).

    See linsvm.solvers for the calling convention and the module docstring for
    the objective.  Returns (beta, stats): beta = (w, w_bias); stats holds
    objective (primal, linsvm's scaling), dual_objective, duality_gap,
    kkt_violation (max PG - min PG recomputed at the returned alphas: [9]'s
    optimality measure), n_iter (loops), n_sv, n_bound, status, trace and
    `_state` (the alphas, for alpha-seeding).
    """
    loss = opts.get("loss", "l1")
    if loss not in _LOSSES:
        raise ParameterError(f"dcd: --loss must be l1 (hinge) or l2 (squared hinge), got {loss!r}")
    rows, cost = check_rows_and_costs(X, rows, cost, allow_empty=True)
    n = rows.shape[0]
    t = check_binary_targets(t, n)
    if not (np.isfinite(C) and C > 0):
        raise ParameterError(f"C must be > 0 and finite, got {C!r}")
    if not (np.isfinite(tol) and tol > 0):
        raise ParameterError(f"tolerance must be > 0, got {tol!r}")

    warning = None
    alpha = np.zeros(n)
    warm = "none"
    if state is not None:
        ok = (isinstance(state, dict) and state.get("kind") == "dcd"
              and np.shape(state.get("alpha")) == (n,) and np.shape(state.get("t")) == (n,)
              and np.array_equal(state["t"], t))
        a0 = np.array(state["alpha"], dtype=np.float64) if ok else None
        C0 = state.get("C") if ok else None
        if ok and np.all(np.isfinite(a0)) and np.all(a0 >= 0) and isinstance(C0, float) and C0 > 0:
            # scale by C / C_previous, then clip to the new box (the kernel clips too)
            U = C * cost if loss == "l1" else np.where(cost > 0, np.inf, 0.0)
            alpha = np.minimum(a0 * (C / C0), U)
            warm = "alpha"
        else:
            warning = "dcd: the previous solver state does not belong to this problem; starting from alpha = 0"
            warm = "state rejected"
    elif beta0 is not None:
        warning = ("dcd is a dual method and cannot start from weights alone (no dual state: the "
                   "model was loaded from a file or trained by another solver); starting from alpha = 0")
        warm = "weights ignored"

    callback = None
    if log is not None:
        def callback(it, f, spread, n_active):
            log(f"dcd loop {it:4d}  dual {-f:.10g}  PG spread {spread:.4g}  active {n_active}")

    st = _dcd.dcd_solve(X.indptr, X.indices, X.data, X.n_features, bias, rows, t, cost, C,
                        _LOSSES[loss], alpha, eps=tol, shrinking=opts.get("shrinking", True),
                        seed=int(seed) & 0xFFFFFFFFFFFFFFFF, max_iter=opts.get("max_iter", 1000),
                        callback=callback)
    stats = {
        "objective": st["primal"],
        "dual_objective": st["dual"],
        "duality_gap": st["primal"] - st["dual"],
        "kkt_violation": st["pg_spread"],
        "loop_violation": st["loop_spread"],
        "n_iter": int(st["n_iter"]),
        "n_sv": int(st["n_sv"]),
        "n_bound": int(st["n_bound"]),
        "status": _STATUS[st["status"]],
        "warm_start": warm,
        "trace": [dict(loop=int(r[0]), dual=-r[1], pg_spread=r[2], seconds=r[3], active=int(r[4]))
                  for r in st["trace"]],
        "_state": {"kind": "dcd", "alpha": alpha, "t": t.copy(), "loss": loss, "C": C},
    }
    if st["status"] == 1:
        warning = (f"dcd stopped at the loop cap (max_iter={opts.get('max_iter', 1000)}) with PG "
                   f"spread {st['loop_spread']:.3g} > eps {tol:g}; raise --max-iter or loosen -e")
    if warning is not None:
        stats["warning"] = warning
    return st["w"], stats


# Work arrays: w, the start copy and the returned weights; per row: alpha, U, D, QD, index.
_MEMORY_DCD = work_memory(3, 48)

register(SolverInfo(
    name="dcd",
    kind="binary",
    objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i) (--loss l1, LIBLINEAR -s 3) or its "
              "square (--loss l2, LIBLINEAR -s 1)",
    default_tol=0.1,
    tol_meaning="max PG - min PG <= eps over a loop of all examples (Hsieh et al. 2008)",
    paper="Hsieh et al. 2008 (ref. [9] of Keerthi et al. 2008), Algorithms 1 and 3",
    fit=fit_dcd,
    options={
        "loss": Option(str, "l1", "dcd: l1 = hinge (LIBLINEAR -s 3), l2 = squared hinge (-s 1)"),
        "shrinking": Option(bool, True, "shrinking: leave out variables stuck at a bound "
                                        "(Sec. 2.1 / Hsieh et al. Alg. 3)"),
        "max_iter": Option(int, 1000, "cap on loops over the examples", 1),
    },
    loss="l1",
    memory=_MEMORY_DCD,
))
