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
from .l1_spec import MAX_LINESEARCH, SERIAL_ONLY
from ..problem.registry import FitResult
from ..runtime.threads import resolve_threads
from .gaps import GAP_GUARD, relative_gap

_STATUS = {0: "converged", 1: "iteration cap", 2: "line search found no step"}
# The column copy numbers each entry's example with an int32 position (csrc/l1_columns.pxd:
# 4 bytes per non-zero, where an int64 would take 8; every offset over the non-zeros is
# int64), so the examples of one solve, not its non-zeros, are bounded.
MAX_EXAMPLES = 2**31 - 1


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
    data = dict(t=problem.t, c=problem.cost, start=_start(problem, start))
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
        st = _l1.glmnet_solve(problem.view, **data, callback=callback,
                              inner_max_iter=opts["inner_max_iter"], **settings)
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
        why = (f"at the iteration cap (max_iter={opts['max_iter']})" if st["status"] == 1
               else "when its line search found no step")
        warning = (f"{name} stopped {why} with ||S||_1 {st['last_norm']:.3g} (target "
                   f"{settings['eps'] * st['ref']:.3g}) and relative duality gap {gap:.3g} > "
                   f"{GAP_GUARD:g}; raise --max-iter or loosen -e")
    return FitResult(w, stats, warning=warning, converged=converged)


def fit_cdn(problem, params, start, state, log):
    """L1-regularized L2-loss SVM by CDN (Yuan et al. 2010, Section 4.1; LIBLINEAR -s 5).

    Minimizes ||w||_1 + C sum_i c_i max(0, 1 - t_i w.x_i)^2 (module docstring) from
    `start` (weights) or w = 0; state is not used.  stats: objective, dual_objective,
    gap ((P - D)/P of the scaled dual point), n_nonzero, n_iter (outer iterations),
    status, subgradient_norm (||S||_1 of the last sweep) and reference_norm (the rule
    stops at -e min(n+,n-)/n times it), grad_inf, n_active, linesearch_failures, trace."""
    return _fit("cdn", problem, params, start, log)


def fit_glmnet(problem, params, start, state, log):
    """L1-regularized logistic regression by newGLMNET (Yuan, Ho & Lin 2012; LIBLINEAR -s 6).

    Minimizes ||w||_1 + C sum_i c_i log(1 + exp(-t_i w.x_i)) (module docstring) from
    `start` (weights) or w = 0; state is not used.  stats as fit_cdn's (n_iter: Newton
    iterations, subgradient_norm at the last iterate checked), plus inner_iter (inner
    sweeps in all), linesearch_trials and inner_eps (the adaptive inner tolerance at
    the end, relative to reference_norm)."""
    return _fit("glmnet", problem, params, start, log)
