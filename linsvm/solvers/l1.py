"""L1-regularized binary classifiers: cdn (LIBLINEAR -s 5) and glmnet (-s 6).

    cdn     min_w ||w||_1 + C sum_i c_i max(0, 1 - t_i w.x_i)^2       (LIBLINEAR -s 5)
    glmnet  min_w ||w||_1 + C sum_i c_i log(1 + exp(-t_i w.x_i))      (LIBLINEAR -s 6)

x_i includes the bias feature when bias > 0, and its weight is L1-regularized like the
others (LIBLINEAR without -R), or, with regularize_bias off (LIBLINEAR's -R), free: the
bias weight leaves ||w||_1; c_i is the relative cost (class weight x sample weight).
The papers write the same problems with the same C, so nothing is rescaled.

cdn is coordinate descent over the features with a one-variable Newton direction and
an Armijo line search, with shrinking (CDN: Yuan, Chang, Hsieh & Lin, "A comparison of
optimization methods and software for large-scale L1-regularized linear
classification", JMLR 11, 2010, Section 4.1); glmnet is newGLMNET (Yuan, Ho & Lin, "An
improved GLMNET for L1-regularized logistic regression", JMLR 13, 2012): Newton
iterations whose quadratic model (exact Hessian) is minimized by coordinate descent,
with shrinking at the outer and the inner level, a line search, and the adaptive inner
tolerance.  Both work on a column copy of the training rows (labels folded in) built by
the core, csrc/_l1.pyx, whose block comment has the equations; the core reads the rows
through the problem's data view (Problem.view).

-e is LIBLINEAR's rule for -s 5 and -s 6: ||S(w)||_1 <= eps min(n+, n-)/n ||S(w^0)||_1,
S the minimum-norm subgradient, w^0 = 0 (the reference is a cold start's also for a warm
start, so the target does not depend on the start; cdn measures S over a sweep, as the
paper does).  Defaults: cdn 0.002, glmnet 0.002, where LIBLINEAR's 0.01 can end
further from the optimum (docs/liblinear.md, "Defaults").

Certificate.  The dual of min ||w||_1 + sum_i phi_i(t_i w.x_i) is
max -sum_i phi_i*(-alpha_i) subject to ||sum_i alpha_i t_i x_i||_inf <= 1; from w the
core builds alpha_i = -phi_i'(t_i w.x_i) scaled into the feasible set and reports the
relative gap (P - D)/P (stats "gap").  It bounds the distance to the optimum, but it is
weak where the gradient has large entries on dense columns at a loose -e (a bias column
that is the sum of one-hot groups, say; docs/l1.md, "Stopping rule and certificate"):
so a stop by the rule is accepted as LIBLINEAR accepts it, and a solve that ends
otherwise (iteration cap; glmnet's line search finding no step) without a gap <= 0.01
returns converged=False and a warning.

Heavy costs (a departure from LIBLINEAR).  The rule's reference ||S(0)||_1 grows with the
largest costs c_i while the L1 term's slopes stay 1, so once a few examples weigh far
more than the others the rule can stop far above the optimum (heart_scale, -w1 100:
glmnet 2.7% above it; one example weighing 1e4 times the others: 71-181%, all silently).
So when max c_i / min c_i (positive costs) >= HEAVY_COSTS and the gap exceeds GAP_GUARD,
the solve goes on from w at eps/10, up to SETTLE_ROUNDS times, until a round lowers the
objective by at most SETTLED of itself (the rounds' falls shrink about tenfold, so what
is left is about the last one's ninth) or the gap certifies; a last round that still
falls more, or a round at its iteration cap, ends in a warning.  Not a certificate where
the gap is loose, but no longer silent (docs/l1.md, "Heavy costs").  The same rounds
follow a stop whose subgradient is large against the objective: by convexity
    F(w) - F* <= S(w).(w - w*) <= ||S(w)||_1 ||w - w*||_inf,
and with ||w - w*||_inf taken as ||w||_inf this bound, relative to F(w) (stats
"subgradient_bound"), is at least LOOSE_STOP.  It is no certificate (w* can be larger
than w), but it is at most 0.072 at every default stop on the shared sets and above 1 where
the rule stopped far above the optimum: unscaled features (australian, C = 1: cdn 2.9%,
glmnet 5.8% above it), separable data at a large feature scale, glmnet at C = 64 on
generated imbalanced text (1.1%) (docs/l1.md, "Loose stops").

Continuation in C (option c_path = K, off by default; a departure from LIBLINEAR, which
has none).  The solve at C is preceded by solves at C/2^K, ..., C/2, each from the weights
of the one before and stopped by the same rule at PATH_LOOSENESS times eps (each against its
own cold reference); the solve at C then starts from the last of them and stops by the rule
at eps, so the problem and the accuracy asked are the same as a cold start's.  This is the
pathwise idea of Friedman, Hastie & Tibshirani (J. Stat. Softw. 33, 2010) applied to a
single C: from w = 0 at a large C the first sweeps make far more weights non-zero than the
optimum has and coordinate descent is slow to remove them, where a start at C/2 is
already near the optimum's zero pattern.  It pays only at such C (docs/l1.md, "Large C").

Warm starts take the weights (start) of any model, L1 or L2: the problem is convex and
the stopping reference is a cold start's, so every start reaches the same accuracy; the
models keep exact zeros (stats "n_nonzero" counts the non-zero weights).  One-vs-rest
beyond two classes is linsvm.train's job.  Both run their passes over long columns (and
glmnet its gradient and row loops) on n_threads threads, with the same model for every
count (csrc/_l1.pyx, threads).  One process only: there is
no distributed L1 solver.  Both are declared (options, defaults, LIBLINEAR codes) in
linsvm.solvers.l1_spec; docs/l1.md is the user's page.
"""
from __future__ import annotations

import numpy as np

from .. import _l1
from ..errors import DataError, ParameterError
from .l1_spec import MAX_LINESEARCH, PATH_LOOSENESS, SERIAL_ONLY
from ..problem.registry import FitResult
from ..runtime.threads import resolve_threads
from .gaps import GAP_GUARD, relative_gap

_STATUS = {0: "converged", 1: "iteration cap", 2: "line search found no step"}
# The column copy numbers each entry's example with an int32 position (csrc/l1_columns.pxd:
# 4 bytes per non-zero, where an int64 would take 8; every offset over the non-zeros is
# int64), so the examples of one solve, not its non-zeros, are bounded.
MAX_EXAMPLES = 2**31 - 1
HEAVY_COSTS = 100.0     # max/min of the costs from which the rule is not trusted alone
SETTLE_ROUNDS = 3       # rounds at eps/10, eps/100, eps/1000 at most
SETTLED = 0.01          # a round that lowers the objective by at most this fraction ends them
LOOSE_STOP = 0.1        # ||S||_1 ||w||_inf / F from which a stop by the rule is not trusted alone


def eps_scale(t):
    """LIBLINEAR's factor of -e for -s 5 and -s 6: max(min(n+, n-), 1) / n."""
    n = t.shape[0]
    pos = int(np.count_nonzero(t > 0))
    return max(min(pos, n - pos), 1) / n if n else 1.0


def _start(problem, start):
    """The start weights as a contiguous float64 array, or None."""
    if start is None:
        return None
    w0 = np.ascontiguousarray(start, dtype=np.float64).reshape(-1)
    if w0.shape[0] != problem.n_weights or not np.all(np.isfinite(w0)):
        raise ParameterError(f"a warm start needs {problem.n_weights} finite weights, "
                             f"got {w0.shape[0]}")
    return w0


def _fit(name, problem, params, start, log):
    """Both solvers: the core's call, the certificate and the FitResult."""
    if problem.comm is not None:
        raise ParameterError(SERIAL_ONLY.format(name=name))
    if problem.n_rows > MAX_EXAMPLES:
        raise DataError(f"-s {name} takes at most {MAX_EXAMPLES} examples (its column copy "
                        f"numbers them with int32), not {problem.n_rows}; -s mfn has no "
                        "such bound")
    opts = params.options
    settings = dict(C=params.C, eps=params.tol * eps_scale(problem.t),
                    seed=params.seed & 0xFFFFFFFFFFFFFFFF, max_iter=opts["max_iter"],
                    max_linesearch=MAX_LINESEARCH, shrinking=opts["shrinking"],
                    regularize_bias=opts["regularize_bias"],
                    n_threads=resolve_threads(opts["n_threads"], problem.X.nnz))
    if name == "glmnet":
        settings["inner_max_iter"] = opts["inner_max_iter"]
    w0, path_iter = _path(name, problem, settings, _start(problem, start),
                           opts.get("c_path", 0), log)
    st = _solve(name, problem, settings, w0, log)
    st["n_iter"] += path_iter
    why = _distrust(st, problem)
    st, rounds, fall = _settle(name, problem, settings, st, params.tol, why, log)
    w = st["w"]
    gap = relative_gap(st["primal"], st["dual"])
    stats = {
        "objective": st["primal"],
        "dual_objective": st["dual"],
        "gap": gap,
        "n_nonzero": int(np.count_nonzero(w)),
        "n_iter": int(st["n_iter"]),
        "status": _STATUS[st["status"]],
        "subgradient_norm": st["last_norm"],
        "reference_norm": st["ref"],
        "grad_inf": st["grad_inf"],
        "n_active": st["n_active"],
        "warm_start": "weights" if start is not None else "none",
        "settle_rounds": rounds,
        "subgradient_bound": _subgradient_bound(st),
        "path_iter": path_iter,
    }
    if name == "cdn":
        stats["linesearch_failures"] = st["ls_failures"]
        stats["trace"] = [dict(iter=int(r[0]), objective=float(r[1]), subgradient_norm=r[2],
                               active=int(r[3]), seconds=r[4]) for r in st["trace"]]
    else:
        stats["inner_iter"] = st["inner_total"]
        stats["linesearch_trials"] = st["ls_trials"]
        stats["inner_eps"] = st["inner_eps"]
        stats["trace"] = [dict(iter=int(r[0]), objective=float(r[1]), subgradient_norm=r[2],
                               active=int(r[3]), seconds=r[4], inner=int(r[5]))
                          for r in st["trace"]]
    warning, converged = None, True
    if st["status"] != 0 and gap > GAP_GUARD:
        converged = False
        stop = (f"at the iteration cap (max_iter={opts['max_iter']})" if st["status"] == 1
                else "when its line search found no step")
        if rounds:
            stop += f" in a round at -e {params.tol / 10.0 ** rounds:.3g} ({why})"
        warning = (f"{name} stopped {stop} with ||S||_1 {st['last_norm']:.3g} (target "
                   f"{st['eps'] * st['ref']:.3g}) and relative duality gap {gap:.3g} > "
                   f"{GAP_GUARD:g}; raise --max-iter" + ("" if rounds else " or loosen -e")
                   + (", or start along a path in C (--c-path 4)"
                      if name == "cdn" and st["status"] == 1 and not path_iter else ""))
    elif fall > SETTLED and gap > GAP_GUARD:
        converged = False
        warning = (f"{name}'s objective still fell by {fall:.2g} of itself at {SETTLE_ROUNDS} "
                   f"tenfold tighter rounds ({why}; "
                   f"relative duality gap {gap:.3g}): it may lie far above the "
                   "optimum; lower -e")
    return FitResult(w, stats, warning=warning, converged=converged)


def _solve(name, problem, settings, start, log):
    """One call of the core (cdn_solve or glmnet_solve) at settings["eps"], from start
    (weights or None); its dict, with the eps it ran at."""
    data = dict(t=problem.t, c=problem.cost, start=start)
    callback = None
    if name == "cdn":
        if log is not None:
            def callback(it, f, norm1, n_active):
                log(f"cdn iter {it:4d}  f {f:.10g}  |S|_1 {norm1:.4g}  active {n_active}")
        st = _l1.cdn_solve(problem.view, **data, callback=callback, **settings)
    else:
        if log is not None:
            def callback(it, f, norm1, n_active, inner, step):
                log(f"glmnet iter {it:3d}  f {f:.10g}  |S|_1 {norm1:.4g}  active {n_active}  "
                    f"inner {inner}  step {step:g}")
        st = _l1.glmnet_solve(problem.view, **data, callback=callback, **settings)
    st["eps"] = settings["eps"]
    return st


def _path(name, problem, settings, start, steps, log):
    """The continuation in C of the module notes (option c_path = steps): solves at
    C/2^steps, ..., C/2, each to PATH_LOOSENESS times the rule's eps and from the one
    before (the first from start); (the last stage's weights, or start when steps = 0;
    the stages' iterations in all).  A stage that ends otherwise than by the rule (its
    cap) still hands on its weights: only the solve at C is judged."""
    w, n_iter = start, 0
    for k in range(steps, 0, -1):
        stage = dict(settings, C=settings["C"] / 2.0 ** k, eps=settings["eps"] * PATH_LOOSENESS)
        st = _solve(name, problem, stage, w, log)
        w = st["w"]
        n_iter += int(st["n_iter"])
        if log is not None:
            log(f"{name}: path stage at C = {stage['C']:.6g} ended after {st['n_iter']} "
                f"iterations, objective {st['primal']:.10g}")
    return w, n_iter


def _cost_spread(problem):
    """max c_i / min c_i over the examples of positive cost (1 when none)."""
    c = problem.cost[problem.cost > 0]
    return float(c.max() / c.min()) if c.size else 1.0


def _subgradient_bound(st):
    """||S(w)||_1 ||w||_inf / F(w) at a core's result (module notes; 0 when F <= 0)."""
    f = st["primal"]
    return float(st["last_norm"] * np.abs(st["w"]).max() / f) if f > 0 and st["w"].size else 0.0


def _distrust(st, problem):
    """Why a stop by the rule is not trusted alone (module notes), in words, or None:
    costs spanning HEAVY_COSTS or more, or a subgradient bound of at least LOOSE_STOP."""
    spread = _cost_spread(problem)
    if spread >= HEAVY_COSTS:
        return f"costs spanning {spread:.3g}x"
    bound = _subgradient_bound(st)
    if bound >= LOOSE_STOP:
        return f"||S||_1 ||w||_inf at {bound:.2g} of the objective"
    return None


def _settle(name, problem, settings, st, tol, why, log):
    """The tighter rounds of the module notes after a stop by the rule, when why (from
    _distrust) is not None: (the last round's result with n_iter and trace over all
    rounds, the rounds run, the last round's fall of the objective relative to its end;
    0 when none ran).  A round that meets its iteration cap ends them with its status: a
    slow fall there is no evidence (cdn under a weight of 1e3 fell by under 1% in a
    capped round ending 34% above F*)."""
    rounds, fall = 0, 0.0
    if st["status"] != 0 or why is None:
        return st, rounds, fall
    settings = dict(settings)
    n_iter, trace = st["n_iter"], [st["trace"]]
    while rounds < SETTLE_ROUNDS and relative_gap(st["primal"], st["dual"]) > GAP_GUARD:
        settings["eps"] = st["eps"] / 10.0
        nxt = _solve(name, problem, settings, st["w"], log)
        rounds += 1
        fall = (st["primal"] - nxt["primal"]) / abs(nxt["primal"]) if nxt["primal"] else 0.0
        n_iter += nxt["n_iter"]
        trace.append(nxt["trace"])
        if log is not None:
            log(f"{name}: {why}; a round at "
                f"-e {tol / 10.0 ** rounds:.3g} lowered the objective by {fall:.3g} of itself")
        if nxt["primal"] <= st["primal"]:
            st = nxt
        if nxt["status"] != 0 or fall <= SETTLED:
            break
    st["n_iter"] = n_iter
    st["trace"] = np.concatenate(trace) if len(trace) > 1 else trace[0]
    return st, rounds, fall


def fit_cdn(problem, params, start, state, log):
    """L1-regularized L2-loss SVM by CDN (Yuan et al. 2010, Section 4.1; LIBLINEAR -s 5).

    Minimizes ||w||_1 + C sum_i c_i max(0, 1 - t_i w.x_i)^2 (module docstring) from
    `start` (weights) or w = 0; state is not used.  stats: objective, dual_objective,
    gap ((P - D)/P of the scaled dual point), n_nonzero, n_iter (outer iterations),
    status, subgradient_norm (||S||_1 of the last sweep) and reference_norm (the rule
    stops at -e min(n+,n-)/n times it), grad_inf, n_active, linesearch_failures, trace,
    settle_rounds (the tighter rounds run), subgradient_bound (||S||_1 ||w||_inf / F at
    the end, ||S||_1 as the rule measures it) and path_iter (the iterations of the c_path
    stages, also counted in n_iter)."""
    return _fit("cdn", problem, params, start, log)


def fit_glmnet(problem, params, start, state, log):
    """L1-regularized logistic regression by newGLMNET (Yuan, Ho & Lin 2012; LIBLINEAR -s 6).

    Minimizes ||w||_1 + C sum_i c_i log(1 + exp(-t_i w.x_i)) (module docstring) from
    `start` (weights) or w = 0; state is not used.  stats as fit_cdn's (n_iter: Newton
    iterations, subgradient_norm at the last iterate checked), plus inner_iter (inner
    sweeps in all), linesearch_trials and inner_eps (the adaptive inner tolerance at
    the end, relative to reference_norm)."""
    return _fit("glmnet", problem, params, start, log)
