"""L2-regularized logistic regression: lr (LIBLINEAR -s 0), lr-dual (-s 7) and softmax.

Objectives (LIBLINEAR's scaling: x_i includes the bias feature, whose weight is regularized;
c_i is the example's cost factor, class weight x sample weight; t_i = +-1):

    lr, lr-dual  f(w) = 1/2 ||w||^2 + C sum_i c_i log(1 + exp(-t_i w.x_i))
    softmax      f(W) = 1/2 sum_m ||w_m||^2 + C sum_i c_i [log sum_m exp(w_m.x_i) - w_{y_i}.x_i]

lr and lr-dual are binary solvers (train() runs one-vs-rest beyond two classes); softmax is
multinomial: one weight column per class, all trained at once, the decision the argmax of
w_m.x.  No rescaling is involved: softmax's f is, term for term, scikit-learn's
LogisticRegression objective (l2 penalty, the same C, sample weights as c_i) when the
intercept is an explicit, regularized feature (fit_intercept=False and a column of ones:
scikit-learn does not regularize its own intercept).  On two classes softmax solves the
problem as stated, with two columns: its minimizer has w_1 = -w_2, w_1 - w_2 is lr's solution
at 2C and f is half of lr's f there; the model keeps both columns, as sdm-cs does.

lr and softmax -- truncated Newton (Lin, Weng & Keerthi 2008; Galli & Lin 2022) in
csrc/_logistic.pyx, whose included files have the equations (csrc/logistic_loss.pxd,
csrc/logistic_newton.pxd): each Newton step solves
H d = -g by the shared CGLS (csrc/cgls.pxd) as the weighted least-squares problem of IRLS
(softmax: over the operator W -> [M_i W'x_i]_i, M_i = I - 1 p_i', which factors the Hessian
blocks C c_i (diag(p_i) - p_i p_i') without storing any), with the damped Jacobi
preconditioner (weight 0.01, LIBLINEAR's) and Galli & Lin's quadratic-model truncation
(cg_tol 0.5, adaptive, as in LIBLINEAR's 2.4 series); docs/logistic.md, "Options", says how that
inner stopping was chosen among its alternatives.  CGLS hands back X d, so the line search (a safeguarded 1-D Newton iteration on phi(tau) = f(w + tau d))
costs O(n) per trial and no pass over the data.

Stopping.  lr: -e is LIBLINEAR -s 0's test ||grad f(w)|| <= eps max(min(n+, n-), 1)/n
||grad f(0)|| (default 0.002, tighter than LIBLINEAR's 0.01: docs/liblinear.md,
"Defaults"); softmax: ||grad f(W)|| <= eps ||grad f(0)|| (default SOFTMAX_TOL).  Both
read it off the residual each CGLS starts from, and count it only once the duality gap
also certifies GAP_GUARD = 1% (below): LIBLINEAR's test alone can stop far above the
optimum on a nearly separable problem at a large C (tests/test_logistic.py,
test_default_stop_certifies_one_percent_...; docs/logistic.md has the figures).

lr-dual -- dual coordinate descent with an inner Newton step per coordinate (Yu, Huang & Lin,
Machine Learning 2011, Sec. 3, Algorithms 3-4; csrc/logistic_dual.pxd's block comment).
-e measures what LIBLINEAR -s 7's does, the largest |dD/dalpha_i| met in a loop, but defaults
to LRDUAL_TOL = 0.01, not LIBLINEAR's 0.1: on the shared sets LIBLINEAR's 0.1 stops about
where this measure reaches 0.01, so 0.01 gives LIBLINEAR's accuracy (docs/logistic.md,
"Stopping, certificates, warnings", has the figures; docs/bench-logistic.md the runs).

Certificate (every solver): the relative duality gap (P - D)/|P| at the dual point built from
w, alpha_i = C c_i sigma(-t_i w.x_i) (softmax: the probabilities), D(alpha) =
-1/2 ||sum alpha_i t_i x_i||^2 - sum_i [alpha_i log alpha_i + (C c_i - alpha_i)
log(C c_i - alpha_i) - C c_i log(C c_i)], reported as stats["gap"].  There P - D =
1/2 ||grad f(w)||^2 exactly: an upper bound on f - f* that is loose by the Hessian's
conditioning (docs/logistic.md has an example).  lr also
certifies by alpha(w) linearized along a Newton step (with a free bias, balanced), whose
gap is 1/2 ||r||^2 (r: the step's CG residual) plus second-order terms; where LIBLINEAR's
test holds and the gap does not, that step's CG runs until this point certifies
(csrc/logistic_newton.pxd, Certificate).  lr-dual takes the better of D at its iterate and at
alpha(w).  A solve that ends otherwise (iteration cap, no descent left) with a gap above
1% warns and returns converged=False.

Distributed (problem.comm set): lr and softmax run over row blocks (distributed="rows"): the
same iterates as the serial solve up to rounding, one allreduce of n_weights k + 3 doubles
per CG iteration (csrc/cgls.pxd) and a few small ones per Newton step.  lr-dual is serial
only (use lr).  docs/logistic.md has the same for users.
"""
from __future__ import annotations

import numpy as np

from .. import _logistic
from .._kernels import csr_matvec, vdot
from ..errors import ParameterError
from ..problem.catalog import make_params
from ..problem.registry import FitResult
from ..runtime.threads import resolve_threads
from .gaps import GAP_GUARD, GAP_GUARD_MIN_EPS, gap_guard_shrink, relative_gap
from .mfn import exchange_stats, weight_split
from .softmax_dual import softmax_free_bias_dual

_STATUS = {0: "converged", 1: "iteration cap", 2: "no further descent at machine precision"}

# The line search's settings (module constants, not options: they change the path, not the
# answer): stop at |phi'(tau)| <= LS_TOL |phi'(0)|, at most LS_MAX trials per Newton step.
LS_TOL = 0.1
LS_MAX = 20

# The default -e of softmax and lr-dual live in linsvm.solvers.logistic_spec (lr-dual's 0.01:
# LIBLINEAR -s 7's 0.1 inflates the measure for coordinates that cross U_i/2; docs/logistic.md,
# "Stopping, certificates, warnings", compares the two)
# lr-dual's finish with lr at its loop cap: lr's default -e / 10 (LIBLINEAR's -s 7 finishes
# with -s 0 at a tenth of the tolerance -s 0 would use)
FALLBACK_TOL = 0.001
# the smallest C c_i the dual is solved for: LIBLINEAR's cold start 1e-3 C c_i stays a
# normal number above it (below, lr solves the problem: fit_lrdual)
DUAL_MIN_COST = 1e3 * np.finfo(np.float64).tiny


def gradient_factor(t, comm=None):
    """LIBLINEAR's scaling of -s 0's gradient test, max(min(n+, n-), 1) / n for labels t = +-1
    (counted over every rank with comm)."""
    n = t.shape[0]
    n_pos = int(np.count_nonzero(t > 0))
    if comm is not None:
        n, n_pos = (int(v) for v in comm.sum_scalars(n, n_pos))
    return max(min(n_pos, n - n_pos), 1) / n if n else 0.0


def _newton_settings(opts, nnz):
    """The Newton cores' settings (csrc/logistic_newton.pxd's Params) from the catalog's
    options, by the same names, and the line search's constants."""
    settings = {name: opts[name] for name in ("max_iter", "cg_max_iter", "cg_tol", "forcing",
                                              "precondition", "jacobi_weight")}
    return dict(settings, ls_tol=LS_TOL, ls_max=LS_MAX,
                n_threads=resolve_threads(opts["n_threads"], nnz))


def _finish(name, st, tol, opts, weights):
    """FitResult of a Newton solve: stats, the gap, and the warning of an uncertified end."""
    gap = relative_gap(st["f"], st["dual"])
    stats = {
        "objective": st["f"],
        "dual_objective": st["dual"],
        "gap": gap,
        "grad_norm": st["grad_norm"],
        "n_iter": int(st["n_iter"]),
        "cg_iter": int(st["cg_iter"]),
        "ls_trials": int(st["ls_trials"]),
        "status": _STATUS[st["status"]],
        "trace": st["trace"],
    }
    warning = None
    if st["status"] != 0 and gap > GAP_GUARD:
        what = (f"at the iteration cap (max_iter={opts['max_iter']})" if st["status"] == 1
                else "with no further descent at machine precision")
        warning = (f"{name} stopped {what} with a relative duality gap of {gap:.3g} > "
                   f"{GAP_GUARD:g} (-e {tol:g}); raise --max-iter or loosen -e")
    return FitResult(weights, stats, warning=warning, converged=warning is None)


def _progress(name, log):
    if log is None:
        return None

    def callback(it, f, cg_it, step, gnorm):
        log(f"{name} iter {it:3d}  objective {f:.10g}  |g| {gnorm:.3g}  cg {cg_it}  step {step:.3g}")
    return callback


def fit_lr(problem, params, start, state, log):
    """Train binary L2-regularized logistic regression by truncated Newton (module notes).

    The weights are beta = (w, w_bias); stats hold objective (f(w)), dual_objective and gap
    (the certificate), grad_norm, n_iter (Newton steps), cg_iter, ls_trials, status and
    trace.  Warm start: `start` (beta-seeding along C)."""
    opts, X = params.options, problem.X
    beta = np.zeros(problem.n_weights) if start is None else \
        np.array(start, dtype=np.float64, copy=True)
    free = not opts["regularize_bias"] and problem.bias > 0
    gstop = min(params.tol * gradient_factor(problem.t, problem.comm), 0.999)
    split = weight_split(problem, opts.get("weight_split", "off"))

    def solve(gstop):
        return _logistic.lr_solve(
            problem.view, t=problem.t, c=problem.cost, C=params.C, beta=beta,
            callback=_progress("lr", log), comm=problem.comm, split=split, gstop=gstop,
            gap_stop=GAP_GUARD, regularize_bias=not free, **_newton_settings(opts, X.nnz))
    st = _certified_solve("lr", solve, gstop, None if free else False, log)
    res = _finish("lr", st, params.tol, opts, beta)
    res.stats.update(exchange_stats(problem, {"weight_exchange": "split" if split else "allreduce"}))
    return res


def fit_softmax(problem, params, start, state, log):
    """Train multinomial logistic regression by truncated Newton over all columns (module
    notes).  The weights are W (n_weights x n_classes); stats as fit_lr's."""
    opts, X, k = params.options, problem.X, problem.n_classes
    nw = problem.n_weights
    beta = np.zeros(nw * k) if start is None else \
        np.array(np.asarray(start, dtype=np.float64).reshape(nw, k), copy=True).reshape(-1)
    free = not opts["regularize_bias"] and problem.bias > 0

    def solve(gstop):
        return _logistic.softmax_solve(
            problem.view, codes=problem.codes, n_classes=k, c=problem.cost, C=params.C,
            beta=beta, callback=_progress("softmax", log), comm=problem.comm, gstop=gstop,
            gap_stop=GAP_GUARD, regularize_bias=not free, **_newton_settings(opts, X.nnz))
    # a free intercept's certificate is linsvm.solvers.softmax_dual's (the core's is NaN)
    dual = (lambda: softmax_free_bias_dual(problem, params.C, beta.reshape(nw, k))) \
        if free else False
    st = _certified_solve("softmax", solve, min(params.tol, 0.999), dual, log)
    W = beta.reshape(nw, k)
    if free:
        # free intercepts are determined up to one constant added to all (the softmax and
        # the penalty do not see it): take the one whose intercepts sum to 0, as a gradient
        # method started at 0 keeps them (scikit-learn's lbfgs)
        W[-1] -= W[-1].mean()
    _centre_penalized_rows(W, nw - 1 if free else nw, st)
    return _finish("softmax", st, params.tol, opts, W)


def _centre_penalized_rows(W, n_rows, st):
    """Subtract from each of the first n_rows rows of W (the penalized weights, n_weights x k)
    its mean over the classes, and update st's f and grad_norm to match.

    Adding one vector v to every column w_m leaves each softmax, hence the loss, unchanged
    and changes the penalty by k/2 ||v||^2 + v . sum_m w_m, least at v = -mean_m w_m: the
    minimizer has sum_m w_m = 0 (Zhu & Hastie, Biostatistics 2004), which exact Newton steps
    from 0 keep but Jacobi-preconditioned ones do not, so an iterate stopped at -e carries a
    class-mean drift of the order of its gradient.  With mu_j the row means, removing them
    lowers f by k/2 ||mu||^2 and, since row j of the gradient sums over the classes to
    k mu_j (the loss's part sums to 0: sum_m p_im - y_im = 0), ||grad||^2 by k ||mu||^2;
    the predictions, the probabilities and hence the dual point do not change."""
    k = W.shape[1]
    mu = W[:n_rows].mean(axis=1)
    W[:n_rows] -= mu[:, None]
    drop = k * vdot(mu, mu)
    st["f"] -= 0.5 * drop
    st["grad_norm"] = float(np.sqrt(max(st["grad_norm"] ** 2 - drop, 0.0)))


def _certified_solve(name, solve, gstop, dual, log):
    """Run solve(gstop) (a Newton core's entry) and, for a free bias, repeat it from where it
    stopped with the gradient test gap_guard_shrink(gap) times tighter until the duality gap
    certifies GAP_GUARD: the core's gap test by 1/2 ||g||^2 does not hold with a free bias
    (lr's core certifies by its balanced dual points itself, so it repeats only when they
    could not; softmax's stop is the gradient test alone).  dual: False (the bias is
    regularized: one run, the core's test certifies), None (the core's dual is the
    certificate), or a function giving it.  Returns the runs merged (_merged).  Every rank
    decides on the same reduced numbers."""
    runs = []
    while True:
        st = solve(gstop)
        runs.append(st)
        if dual is False:
            break
        if dual is not None:
            st["dual"] = dual()
        gap = relative_gap(st["f"], st["dual"])
        if st["status"] != 0 or gap <= GAP_GUARD or gstop <= GAP_GUARD_MIN_EPS:
            break
        if log is not None:
            log(f"{name}: relative duality gap {gap:.3g} > {GAP_GUARD:g}: continuing at a "
                f"gradient test {gap_guard_shrink(gap):g} times tighter")
        gstop *= gap_guard_shrink(gap)
    return _merged(runs)


def _merged(runs):
    """The last run's result with the counts and traces of all the runs of one solve."""
    return dict(runs[-1], **{key: sum(r[key] for r in runs) for key in ("n_iter", "cg_iter",
                                                                          "ls_trials")},
                trace=np.concatenate([r["trace"] for r in runs]))


def _dual_start(problem, params, start, state):
    """(alpha, C c - alpha, warm-start note, warning): alpha-seeding from `state` (the alphas
    of a previous lr-dual solve on these examples, each pair scaled by C c_i / U_i_previous,
    which keeps both inside the new box without cancellation), or the dual point built from
    the weights `start` (alpha_i = C c_i sigma(-t_i w.x_i): the optimum's own dual point when
    w is optimal), or LIBLINEAR's cold start alpha_i = min(1e-3 C c_i, 1e-8)."""
    t, U = problem.t, params.C * problem.cost
    n = problem.n_rows
    if state is not None:
        ok = (isinstance(state, dict) and state.get("kind") == "lr-dual"
              and all(np.shape(state.get(key)) == (n,) for key in ("alpha", "alpha_c", "t", "U"))
              and np.array_equal(state["t"], t))
        if ok:
            a0, b0, U0 = (np.asarray(state[key], dtype=np.float64) for key in ("alpha", "alpha_c", "U"))
            had = U0 > 0
            ok = bool(np.all(np.isfinite(a0) & np.isfinite(b0) & np.isfinite(U0))
                      and np.all(a0[had] > 0) and np.all(b0[had] > 0))
        if ok:
            scale = np.divide(U, U0, out=np.zeros(n), where=U0 > 0)
            alpha, alpha_c = a0 * scale, b0 * scale
            new = (U > 0) & (U0 <= 0)           # examples that had no cost before
            alpha[new], alpha_c[new] = _cold_alpha(U[new])
            return alpha, alpha_c, "alpha", None
        return _cold_alpha(U) + ("state rejected",
                                 "lr-dual: the previous solver state does not belong to this "
                                 "problem; starting from the cold start")
    if start is not None:
        margins = t * csr_matvec(problem.view, np.asarray(start, dtype=np.float64))
        e = np.exp(-np.abs(margins))
        below = np.where(margins >= 0, e / (1 + e), 1 / (1 + e))      # sigma(-m)
        above = np.where(margins >= 0, 1 / (1 + e), e / (1 + e))      # sigma(m)
        alpha, alpha_c = U * below, U * above
        # a margin beyond ~745 underflows sigma: keep every pair inside the box
        tiny = np.minimum(1e-300, 1e-3 * U)
        alpha, alpha_c = np.maximum(alpha, tiny), np.maximum(alpha_c, tiny)
        return alpha, alpha_c, "weights", None
    return _cold_alpha(U) + ("none", None)


def _cold_alpha(U):
    alpha = np.minimum(1e-3 * U, 1e-8)
    return alpha, U - alpha


def _dual_fits(alpha, alpha_c, cost):
    """Whether every example with a cost has 0 < alpha_i, 0 < C c_i - alpha_i and finite
    values: what lrdual_solve takes.  A C c_i so small that 1e-3 C c_i underflows to 0
    (C = 5e-324) or so large that the iterates overflow fails it."""
    has = cost > 0
    with np.errstate(all="ignore"):
        a, b = alpha[has], alpha_c[has]
        return bool(np.all((a > 0) & (b > 0) & np.isfinite(a + b)))


def _dual_loops(problem, params, alpha, alpha_c, callback, log):
    """lrdual_solve's loops at -e, then at the gap guard's smaller eps while the duality
    gap stays above GAP_GUARD; alpha, alpha_c updated in place.  Returns (the last
    solve's dict, loops, inner Newton steps, trace rows, the last eps, gap, dual value,
    failed): failed when the dual's iterates are not finite numbers (a C c_i beyond
    what the box 0 < alpha_i < C c_i holds in floating point)."""
    t = problem.t
    eps, loops, trace, newton, max_iter = params.tol, 0, [], 0, params.options["max_iter"]
    while True:
        st = _logistic.lrdual_solve(
            problem.view, t=t, c=problem.cost, C=params.C, alpha=alpha, alpha_c=alpha_c,
            eps=eps, seed=(params.seed + loops) & 0xFFFFFFFFFFFFFFFF,
            max_iter=max_iter - loops, callback=callback)
        loops += int(st["n_iter"])
        newton += int(st["newton_iter"])
        trace.extend(st["trace"].tolist())
        dual = max(st["dual"], st["dual_w"])
        failed = not (np.isfinite(st["primal"]) and np.isfinite(dual) and np.isfinite(st["w"]).all()
                      and _dual_fits(alpha, alpha_c, problem.cost))
        dual = -np.inf if failed else dual
        gap = relative_gap(st["primal"], dual)
        if (failed or st["status"] != 0 or gap <= GAP_GUARD or eps <= GAP_GUARD_MIN_EPS
                or loops >= max_iter):
            return st, loops, newton, trace, eps, gap, dual, failed
        if log is not None:
            log(f"lr-dual: violation <= {eps:g} but the duality gap is {gap:.3g} of the objective "
                f"(> {GAP_GUARD:g}): continuing at eps {eps * gap_guard_shrink(gap):g}")
        eps *= gap_guard_shrink(gap)


def _unrepresentable(params):
    """The one-line error of a dual that floating point cannot hold, with the fallback off."""
    return ParameterError(f"lr-dual: C = {params.C:g} (times the example costs) is out of the "
                          "range where the dual's variables 0 < alpha_i < C c_i can be computed "
                          "in floating point; use -s lr (the primal of the same problem), or "
                          "leave primal_fallback on")


def fit_lrdual(problem, params, start, state, log):
    """Train binary L2-regularized logistic regression by dual coordinate descent with an inner
    Newton step per coordinate (Yu, Huang & Lin 2011; csrc/logistic_dual.pxd).

    -e measures what LIBLINEAR -s 7's does: stop when the largest |d D / d alpha_i| met in a
    loop over every example is <= eps (default LRDUAL_TOL = 0.01); the stop counts once the
    duality gap also certifies 1% (GAP_GUARD; else the loops go on at eps *
    gap_guard_shrink(gap)).  At the loop cap the solve finishes with lr from its w at -e
    FALLBACK_TOL (as LIBLINEAR -s 7 switches to -s 0; lr's gap test then certifies 1%),
    unless primal_fallback is off.  Where C c_i is too small or too large for the dual's box
    0 < alpha_i < C c_i in floating point (C c_i < DUAL_MIN_COST, or the iterates overflow:
    LIBLINEAR -s 7 returns NaN weights there), lr solves the problem from w = 0 instead
    (ParameterError with primal_fallback off).  Stats: objective (f(w)), dual_objective (the
    larger of D(alpha) and D at the dual point built from w), gap, kkt_violation (the last
    loop's largest |d D / d alpha_i|), n_iter (loops), newton_iter, status, warm_start,
    trace.  State: the alphas, for alpha-seeding along C."""
    t, opts = problem.t, params.options
    alpha, alpha_c, warm, warning = _dual_start(problem, params, start, state)
    callback = None
    if log is not None:
        def callback(it, gmax, newton):
            log(f"lr-dual loop {it:4d}  max violation {gmax:.4g}  inner Newton steps {newton}")
    max_iter = opts["max_iter"]
    U = params.C * problem.cost
    if _dual_fits(alpha, alpha_c, problem.cost) and np.all(U[U > 0] >= DUAL_MIN_COST):
        st, loops, newton, trace, eps, gap, dual, failed = _dual_loops(problem, params, alpha,
                                                                        alpha_c, callback, log)
    else:
        st, loops, newton, trace = None, 0, 0, []
        eps, gap, dual, failed = params.tol, np.inf, -np.inf, True
    if failed and not opts["primal_fallback"]:
        raise _unrepresentable(params)
    w, finished, lr_stats = (None, "lr", None) if failed else (st["w"], "lr-dual", None)
    objective_value = None if failed else st["primal"]
    if failed or (st["status"] == 1 and opts["primal_fallback"]):
        if log is not None:
            log(f"lr-dual: C = {params.C:g} is beyond what the dual holds in floating point: "
                "solving with lr from w = 0" if failed else
                f"lr-dual: loop cap ({loops} loops, relative duality gap {gap:.3g}): finishing "
                "with lr from its w (as LIBLINEAR -s 7 switches to -s 0)")
        res = fit_lr(problem, make_params("lr", C=params.C, tol=FALLBACK_TOL, seed=params.seed),
                     None if failed else w, None, log)
        w, finished, lr_stats = res.weights, "lr", res.stats
        objective_value, dual = res.stats["objective"], max(dual, res.stats["dual_objective"])
        gap = relative_gap(objective_value, dual)
        converged = res.converged
    else:
        converged = gap <= GAP_GUARD
    stats = {
        "objective": objective_value,
        "dual_objective": dual,
        "gap": gap,
        "kkt_violation": lr_stats.get("kkt_violation", 0.0) if failed else st["violation"],
        "n_iter": loops,
        "newton_iter": newton,
        "status": (_STATUS[st["status"]] if finished == "lr-dual" else
                   "solved by lr (C beyond the dual's floating point)" if failed
                   else "finished by lr"),
        "final_eps": eps,
        "warm_start": warm,
        "finished_by": finished,
        "trace": [dict(loop=int(r[0]), violation=r[1], seconds=r[2], newton=int(r[3]))
                  for r in trace],
    }
    if lr_stats is not None:
        stats["lr_iter"] = int(lr_stats["n_iter"])
        stats["cg_iter"] = int(lr_stats["cg_iter"])
    if not converged and finished == "lr":
        warning = (f"lr-dual finished by lr: relative duality gap {gap:.3g} > {GAP_GUARD:g} "
                   f"({res.warning or 'lr converged'})")
    elif not converged:
        where = (f"at the loop cap (max_iter={max_iter})" if st["status"] == 1
                 else "at the smallest eps the gap guard tries")
        warning = (f"lr-dual stopped {where} with max violation {st['violation']:.3g} (eps "
                   f"{eps:g}) and a relative duality gap of {gap:.3g} > {GAP_GUARD:g}; raise "
                   "--max-iter or loosen -e")
    return FitResult(w, stats, warning=warning, converged=converged,
                     state=None if failed else {"kind": "lr-dual", "alpha": alpha,
                                                "alpha_c": alpha_c, "t": t.copy(),
                                                "U": params.C * problem.cost, "C": params.C})
