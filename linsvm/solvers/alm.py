"""SVM-ALM: the augmented-Lagrangian primal solver for Lp-loss SVMs.

Nie, Huang, Wang & Huang, "New Primal SVM Solver with Linear Computational Cost
for Big Data Classifications", ICML 2014: Algorithm 2 (inexact SVM-ALM, `-s alm`)
and Algorithm 1 (exact SVM-ALM, `-s alm-exact`).  Minimizes, for any real p >= 1,

    P(w) = 1/2 ||w||^2 + C sum_i c_i max(0, 1 - y_i w.x_i)^p,

x_i including the bias feature (value -B, regularized) when -B > 0 and c_i the
example's cost factor (class weight x sample weight).  p = 1 is LIBLINEAR's
-s 3 objective and p = 2 its -s 1 / -s 2 one (and linsvm's mfn).

Scaling.  The paper's eq. 4 is obj(w, b) = 1/2 w'w + C sum (1 - (w'x_i + b) y_i)_+^p:
the same C (C_paper = C); only its intercept b is unregularized.  linsvm's
default puts the intercept in the regularized bias feature instead (DESIGN.md);
`--free-intercept` solves the paper's problem,

    P(w, b) = 1/2 ||w||^2 + C sum_i c_i max(0, 1 - y_i (w.x_i + b))^p,

and stores b in the model's bias row as b / B (so decision values are w.x + B
w_last = w.x + b); it needs -B > 0, and the model's params record
free_intercept = true.

The algorithm (csrc/_alm.pyx has the equations as read from the paper): split
e_i = y_i - w.x_i (eq. 5), alternate the closed-form/Newton e-step (eq. 10-13),
one optimal-step gradient step in w (eq. 16-18; alm) or a CGLS least-squares
solve (eq. 14-15; alm-exact, sharing csrc/cgls.pxd with mfn), and the multiplier
update (eq. 9), with a non-decreasing penalty mu capped at --mu-max (the paper's
1e5).  Departures, each with its reason:

* mu schedule: `--mu-rule balance` (default) raises mu by --mu-growth only when
  the primal residual ||Xw + e - y|| (relative) exceeds the dual one.  The
  paper's experiments grow mu geometrically (`--mu-rule geometric`): with one
  gradient step per iteration mu reaches the cap and the iterates freeze (the
  w-step shrinks like 1/mu); with exact steps (Algorithm 1 is ADMM) it stalls
  too (docs/solvers.md has the measurements).  `--mu-rule eq29` applies the
  paper's eq. 29 bound one step late (it needs the iterate it governs).
* mu0: the paper gives none; default 10 / sum_i ||x_i||^2 (scale-aware).
* `--precondition` (default on): the w-step direction is D^-1 g, D the
  diagonal of X'X + I/mu, with eq. 18's exact step along it: on unscaled data
  the plain gradient step of eq. 16 can make no progress; off gives the paper's
  step exactly.
* Two mat-vecs per inexact iteration, not the paper's three: X w is updated from
  X g (the step's own product) and recomputed every _REFRESH (50) iterations.
* Start: w = 0 (the paper starts from w = 1), lam = 0; a warm start w0 takes
  lam from w0's dual point (alpha_i = C c_i p (1 - y_i w0.x_i)_+^(p-1)).

Stopping (`--stop`, tolerance -e, default 1e-4): `objective` (default) is the
paper's Section 4 rule, relative objective change |P_k - P_(k-1)| <= e |P_k|;
`gradient` is Algorithms 1-2's ||grad P|| <= e, in LIBLINEAR's relative form
(e min(n+, n-)/n ||grad P(0)||; p > 1; one extra mat-vec per iteration); `gap`
stops when a certified duality gap is <= e |P|.  The iteration cap (--max-iter,
paper 100, default 1000) always applies.  The certificate is free: the
multipliers give a dual feasible alpha at every iteration (scaled by the best
factor), and stats["gap"] is the final relative gap (P - D) / |P|, an upper
bound on the true relative suboptimality.  It lags the true gap early on, so it
does not replace the paper's rule, but it guards it (a departure): the
objective rule fires only once the certified gap is below min(1%, 100 e) (so
the default -e 1e-4 certifies 1%, and a smaller -e asks for more).  Unguarded,
the relative change can fire far from the optimum (on unscaled data, and for
alm-exact with p = 1), and a looser guard lets p = 1 runs stop a few percent
above it; docs/solvers.md has the measurements.  A run that reaches the
iteration cap first returns with a ConvergenceWarning giving the certified gap.

Distributed (both registered distributed="rows"): on P MPI ranks each
rank holds a block of the rows (and their e, multipliers and margins); w is
replicated.  Every sum over rows is local and then reduced, so every rank runs
the serial iterates up to the order of those sums and takes every decision (step,
mu, stop) on the same reduced numbers.  Per `alm` iteration: one allreduce of X'r
with the e-step's dual sums and a stop flag (n_weights + 3 doubles), one of
||X d||^2 (1 double) and one allgather of 7 doubles per rank (residual norms, the
loss and the certificate's minimum, summed in rank order alike on every rank).
Three collectives, not one, because each needs the last: the step length needs
||X d||^2 before w moves, and the residuals and loss at the new w decide mu and
the stop before the next e-step.  `alm-exact` has the first and the last; its
CGLS w-step runs distributed in csrc/cgls.pxd (the recurrence arrangement, one
allreduce of n_weights + 3 doubles per CGLS iteration, one more for the start
residual and one per true-residual check of its stop).  --stop gradient adds an
allreduce of n_weights doubles, and --free-intercept's rebalanced certificate two
allreduces (three for p = 1) when it is formed.  The ranks sum in another order
than the serial loop, and with p = 1 the iteration amplifies such rounding (the
serial solve on the same rows in another order drifts likewise), so the two answers
agree within their certified gaps, and to 1e-9 when the gap asked for (--stop gap
-e) is that small.
"""
from __future__ import annotations

import numpy as np

from .. import _alm
from ..errors import ParameterError
from .._data import DataView
from .._kernels import csr_matvec
from ..problem.registry import FitResult
from ..runtime.threads import resolve_threads
from .handover import Payoff, finish_in_primal, l2_dual

_STATUS = {0: "converged", 1: "iteration cap", 2: "breakdown (non-finite objective)",
           3: "handed over"}
_REFRESH = 50                  # recompute X w every this many inexact iterations
_GUARD = 0.01                  # the objective rule also needs a certified gap <= min(1%, 100 e)
_GUARD_PER_TOL = 100.0
# Hand-over (linsvm/solvers/handover.py): with p = 1 or 2 and the objective rule the
# certified gap is judged at iterations 100, 200, 400, 800; when its rate predicts no 1%
# within max_iter (or at the cap) mfn-l1 / mfn finish from beta.
HANDOVER_FIRST_CHECK = 100
_L1_FINISH_TOL = 1e-3          # mfn-l1's default -e: a certified 0.1%


def _checked_options(opts, bias):
    """(p, stop rule, free intercept?, mu0) from the solver's options, with the
    combinations the registry cannot check refused (ParameterError)."""
    p = float(opts["p"])
    stop = opts["stop"]                   # the registry checked the choices
    if stop == "gradient" and p == 1.0:
        raise ParameterError("--stop gradient needs p > 1 (the hinge loss has no gradient); "
                             "use --stop gap or --stop objective")
    free_b = bool(opts["free_intercept"])
    if free_b and not bias > 0:
        raise ParameterError("--free-intercept stores the intercept as the bias feature's "
                             "weight: it needs -B > 0")
    mu0 = opts["mu0"]
    mu0 = None if mu0 is None else float(mu0)
    if mu0 is not None and mu0 > opts["mu_max"]:
        err = ParameterError(f"mu0 {mu0:g} exceeds mu_max {opts['mu_max']:g}")
        err.option, err.detail = "mu0", f"{mu0:g} exceeds --mu-max {opts['mu_max']:g}"   # the CLI's words
        raise err
    return p, stop, free_b, mu0


def _start_multipliers(problem, C, p, state, beta, warm, view):
    """The multipliers to start from: carried over from the previous fit of this column
    (scaled to this C), else from the warm start's dual point (margins over the core's
    view), else 0 (the paper)."""
    n = problem.n_rows
    lam = None
    if isinstance(state, dict) and state.get("lam") is not None and state.get("C", 0) > 0:
        lam0 = np.asarray(state["lam"], dtype=np.float64)
        if lam0.shape == (n,) and np.all(np.isfinite(lam0)):
            lam = lam0 * (C / state["C"])
    if lam is None and warm:
        Xw = csr_matvec(view, np.ascontiguousarray(beta), 1)
        v = np.maximum(0.0, 1.0 - problem.t * Xw)
        alpha = C * problem.cost * (np.where(v > 0, 1.0, 0.0) if p == 1.0 else p * v ** (p - 1.0))
        lam = -problem.t * alpha
    if lam is None:
        lam = np.zeros(n)
    return np.ascontiguousarray(lam, dtype=np.float64)


def _fit(exact, problem, params, start, state, log):
    name = "alm-exact" if exact else "alm"
    X, bias = problem.X, problem.bias
    C, tol, opts = params.C, params.tol, params.options
    p, stop, free_b, mu0 = _checked_options(opts, bias)
    nw = problem.n_weights
    beta0 = None
    if start is not None:
        beta0 = np.array(start, dtype=np.float64, copy=True).ravel()
        if beta0.shape != (nw,) or not np.all(np.isfinite(beta0)):
            raise ParameterError(f"initial weights must be {nw} finite numbers")
    n_threads = resolve_threads(opts["n_threads"], X.nnz)
    core_bias = 1.0 if free_b else bias        # the free intercept b is a column of ones
    beta = np.zeros(nw) if beta0 is None else beta0
    if free_b:
        beta[-1] *= bias                       # model weight b / B -> b
    view = problem.view if core_bias == bias else DataView(X, core_bias, problem.rows)
    lam = _start_multipliers(problem, C, p, state, beta, beta0 is not None, view)

    guard = min(_GUARD, _GUARD_PER_TOL * float(tol))
    payoff = (Payoff(HANDOVER_FIRST_CHECK, opts["max_iter"], guard)
              if opts["primal_fallback"] and p in (1.0, 2.0) and stop == "objective"
              and not free_b else None)
    callback = _callback(name, log, payoff)

    st = _alm.alm_solve(
        view, problem.t, problem.cost, beta, lam, callback=callback, comm=problem.comm,
        C=float(C), tol=float(tol), p=p, exact=exact, free_intercept=free_b,
        precondition=bool(opts["precondition"]), mu0=mu0, mu_max=float(opts["mu_max"]),
        mu_rule=opts["mu_rule"], mu_growth=float(opts["mu_growth"]), stop=stop,
        max_iter=int(opts["max_iter"]), refresh=_REFRESH, guard=guard, n_threads=n_threads,
        **({"cg_tol": float(opts["cg_tol"]), "cg_max_iter": int(opts["cg_max_iter"])}
           if exact else {}))
    if payoff is not None and st["status"] in (1, 3):
        beta, lam, finisher = _finish(name, problem, params, p, beta, st, guard, log)
    else:
        finisher = None
    f = st["f"]
    rel_gap = st["gap"] / abs(f) if f != 0 else (0.0 if st["gap"] <= 0 else float("inf"))
    if free_b:
        beta[-1] /= bias
    stats = {
        "objective": f,
        "n_iter": st["n_iter"],
        "n_matvec": st["n_matvec"],
        "gap": rel_gap,
        "dual": st["dual"],
        "mu0": st["mu0"],
        "mu": st["mu"],
        "primal_residual": st["primal_res"],
        "dual_residual": st["dual_res"],
        "status": _STATUS[st["status"]],
        "trace": st["f_trace"].tolist(),
        "mu_trace": st["mu_trace"].tolist(),
    }
    if exact:
        stats["cg_iter"] = st["cg_iter"]
    if payoff is not None and payoff.history:
        stats["gap_checks"] = [list(h) for h in payoff.history]
    if finisher is not None:
        stats["finished_by"] = "mfn-l1" if p == 1.0 else "mfn"
        stats["status"] = ("converged" if st["status"] == 0 else "not certified") + \
            f" (handed over to {stats['finished_by']})"
    if stop == "gradient":
        stats["grad_norm"] = st["grad_norm"]
    warning = None
    if st["status"] == 2:
        warning = (f"{name} broke down: the objective became non-finite at iteration "
                   f"{st['n_iter']} (p = {p:g} on data this large overflows?); the model "
                   "is not usable")
    elif finisher is not None and st["status"] != 0:
        warning = (f"{name} finished by {stats['finished_by']}: relative duality gap "
                   f"{rel_gap:.3g} > {guard:g} ({finisher.warning or 'it converged'})")
    elif st["status"] == 1:
        target = (f"-e {tol:g}" if stop == "gap" else
                  f"needed {min(_GUARD, _GUARD_PER_TOL * float(tol)):g} for -e {tol:g}"
                  if stop == "objective" else
                  f"gradient norm {st['grad_norm']:.3g} > {st['grad_stop']:.3g} for -e {tol:g}")
        warning = (f"{name} stopped at the iteration cap (max_iter={opts['max_iter']}) "
                   f"with a certified relative duality gap of {rel_gap:.3g} ({target}): "
                   "raise --max-iter or loosen -e")
    return FitResult(beta, stats, warning=warning, converged=st["status"] == 0,
                     state={"lam": lam, "C": float(C)})


def _callback(name, log, payoff):
    """alm_solve's callback: progress lines, and the hand-over rule (or None)."""
    if log is None and payoff is None:
        return None

    def callback(it, f, mu, pres, dres, gap):
        rel = gap / abs(f) if f else gap
        if log is not None and (it == 1 or it % 10 == 0):
            log(f"{name} iter {it:4d}  objective {f:.10g}  mu {mu:.3g}  primal res {pres:.2e}  "
                f"dual res {dres:.2e}  gap {rel:.2e}")
        return payoff is not None and payoff.due(it) and payoff.judge(it, rel)
    return callback


def _finish(name, problem, params, p, beta, st, guard, log):
    """Finish an alm solve (p = 1 or 2, the objective rule) that reached the cap or
    stopped paying (linsvm/solvers/handover.py) with mfn-l1 / mfn from its beta; st is
    updated to the finisher's objective, certificate and status.  Returns (beta, the
    multipliers of the finisher's dual point, the finisher's FitResult)."""
    why = (f"the duality gap stopped paying for its iterations ({st['n_iter']} iterations)"
           if st["status"] == 3 else f"no certified solution after {st['n_iter']} iterations")
    C = params.C
    alpha, dual, res = finish_in_primal(problem, C, "l1" if p == 1.0 else "l2", beta,
                                        params.seed, log, why, name, min(guard, _L1_FINISH_TOL),
                                        n_threads=params["n_threads"])
    if dual is None:
        dual = l2_dual(problem, C, alpha)
    f = res.stats["objective"]
    st["f"], st["dual"], st["gap"] = f, dual, f - dual
    st["status"] = 0 if f - dual <= guard * abs(f) else 1
    return res.weights, -problem.t * alpha, res


def fit_alm(problem, params, start, state, log):
    """Train a binary Lp-SVM by the inexact SVM-ALM (Algorithm 2).

    See linsvm.solvers for the contract.  stats: objective P, n_iter, n_matvec, gap
    (certified relative duality gap), dual (the lower bound), mu0 and final mu,
    residuals, status, trace (P per iteration), mu_trace; the state is the
    multipliers.  A suspect solve warns.
    """
    return _fit(False, problem, params, start, state, log)


def fit_alm_exact(problem, params, start, state, log):
    """Train a binary Lp-SVM by the exact SVM-ALM (Algorithm 1; CGLS w-step).

    As fit_alm, plus stats["cg_iter"] (CGLS iterations in all).
    """
    return _fit(True, problem, params, start, state, log)
