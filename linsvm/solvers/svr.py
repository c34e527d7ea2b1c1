"""Linear support vector regression: LIBLINEAR's -s 11, -s 12 and -s 13 problems.

In linsvm's scaling (docs/design.md, "The fit contract"; x includes the bias feature of
value -B, c_i the relative cost of example i, y_i its real target, p = `epsilon` the
tube's half-width, LIBLINEAR's -p, default 0.1):

    svr (-s 11)           F(w) = 1/2 ||w||_R^2 + C sum_i c_i max(0, |y_i - w.x_i| - p)^2
    svr-dual --loss l2    the same F (LIBLINEAR -s 12), by its dual
    svr-dual --loss l1    F(w) = 1/2 ||w||^2 + C sum_i c_i max(0, |y_i - w.x_i| - p)   (-s 13)

svr: the modified finite Newton method of Keerthi & DeCoste (JMLR 2005, Sections 3-4)
on the squared eps-insensitive loss (csrc/_svr.pyx): the active set is the examples
outside the tube, each a least-squares term with target y_i + p (above the tube) or
y_i - p (below); CGLS (csrc/cgls.pxd) on the active rows, the exact line search of
Sec. 4.4 with two knots per example (csrc/line_search.pxd), heuristics 1-2 and the
options of mfn.  Paper scaling lam = 1/(2C), F = f / lam (as mfn).

The free intercept.  ||w||_R is ||w||^2 over every weight, or, with
`regularize_bias` False (svr's default; LIBLINEAR's -R), over every weight but the bias
feature's: the intercept is then free, as in least squares.  With the bias regularized
like the other weights (LIBLINEAR's -s 11 without -R, which `-s 11` solves) a target far
from zero is reached through a large bias weight; at the optimum that costs little
unless C is small for the number of examples (the regularizer then holds the bias weight
back and the fit can be worse than the targets' mean: fit_note says so from the
solution), but a stop relative to the gradient at w = 0 -- LIBLINEAR's -s 11 test, whose
reference a large target offset inflates -- ends far from the optimum (svr's duality-gap
guard goes on until the gap certifies 1%).  svr by name leaves the bias free (an
objective of its own; regularize_bias=True is LIBLINEAR's).  The dual method cannot free
the bias without an equality constraint, so svr-dual by name centers the targets instead
(`center_targets`): it solves for y_i - y_offset with y_offset the cost-weighted mean of
the targets, reported as stats["y_offset"] and FitResult.offset: the model predicts
w.x + y_offset.  Off (the default with -s 12 / -s 13), it solves LIBLINEAR's problem as
it is.

Stopping.  svr: LIBLINEAR -s 11's test ||grad F(w)|| <= gtol ||grad F(0)|| (gtol = -e
unless given; default -e 0.0001, LIBLINEAR's), read off the residual each CGLS starts
from, or the paper's rule (zones settled, eq. 13 at -e), whichever first.  svr-dual:
Ho & Lin's rule (the summed violation of a loop <= -e times the first loop's; default 0.1,
LIBLINEAR's), accepted once the duality gap certifies 1% (else continued at a smaller
-e, as dcd).  Both report the relative duality gap (stats["gap"]): svr from the dual
point b_i = -2 C c_i l'(e_i) of its result (csrc/_svr.pyx, svr_certificate); a result
with a gap above 1% is returned with converged=False and a warning.

Distributed (svr only, distributed="rows"): each rank holds a block of the examples;
every sum over examples is completed by an allreduce, exactly as mfn (csrc/_mfn.pyx).
svr-dual is serial (sequential coordinate descent): use svr on several ranks.
"""
from __future__ import annotations

import numpy as np

from .. import _svr
from .._kernels import csr_matvec, vdot
from ..errors import ParameterError
from ..problem.registry import FitResult
from ..runtime.threads import resolve_threads
from .gaps import GAP_GUARD, GAP_GUARD_MIN_EPS, gap_guard_shrink, relative_gap
from .mfn import exchange_stats, weight_split

_STATUS = {0: "converged", 1: "iteration cap", 2: "converged (no further descent at machine precision)",
           3: "converged (gradient test)"}


def _targets(problem):
    """The real targets of a regression problem (problem.t), checked: one finite value
    per position."""
    y = problem.t
    if y is None or np.shape(y) != (problem.n_rows,):
        raise ParameterError("a regression problem needs one real target per example (problem.t)")
    y = np.ascontiguousarray(y, dtype=np.float64)
    if not np.all(np.isfinite(y)):
        raise ParameterError("regression targets must be finite")
    return y


def _args(problem, y):
    return dict(data=problem.view, y=y, c=problem.cost)


# svr's options that are the Newton driver's settings by the same names (csrc/_svr.pyx,
# svr_newton_solve)
NEWTON_OPTIONS = ("epsilon", "regularize_bias", "heuristic1", "heuristic2", "precondition",
                  "jacobi_weight", "fused_cg", "forcing", "forcing_guard", "max_iter",
                  "cg_max_iter")


def fit_svr(problem, params, start, state, log):
    """L2-loss SVR by the modified finite Newton method (module docstring; Keerthi &
    DeCoste 2005, Sections 3-4 and Appendix A, on the squared eps-insensitive loss).

    See linsvm.solvers for the contract.  Weights beta = (w, w_bias).  stats: objective
    F(beta) (linsvm's scaling, ||.||_R as regularize_bias says), dual_objective, gap
    (relative duality gap), n_iter (Newton iterations), cg_iter, n_active (examples
    outside the tube), status, trace."""
    opts, C, tol = params.options, params.C, params.tol
    y = _targets(problem)
    beta = np.zeros(problem.n_weights) if start is None else np.array(start, dtype=np.float64)
    warm = start is not None
    ref = 0.0
    if not opts["regularize_bias"] and problem.bias > 0:
        # A free bias's gradient test measures against the intercept-only model (the
        # cost-weighted mean target), where a cold start also begins (warm=False: the
        # reference is read off the first CGLS): every iterate then moves with the
        # targets, so a shift of all targets changes nothing but the bias (the relative
        # test at w = 0 would stop a far-from-zero problem early, cold or warm-started:
        # LIBLINEAR -R's trap, docs/regression.md).
        sums = (vdot(problem.cost, y), float(problem.cost.sum()))
        if problem.comm is not None:
            sums = tuple(float(v) for v in problem.comm.sum_scalars(*sums))
        ref = sums[0] / sums[1] if sums[1] > 0 else 0.0
        if start is None:
            beta[-1] = ref / problem.bias
    gtol = tol if opts["gtol"] is None else opts["gtol"]
    callback = None
    if log is not None:
        def callback(it, f, n_active, cg_it):
            log(f"svr iter {it:3d}  objective {f * 2.0 * C:.10g}  active {n_active}  cg {cg_it}")
    nnz = problem.X.nnz
    threads = resolve_threads(opts["n_threads"], nnz)
    args = _args(problem, y)
    n_iter = cg_iter = 0
    trace = []
    eps = tol
    split = weight_split(problem, opts["weight_split"])
    while True:
        st = _svr.svr_newton_solve(
            **args, C=C, beta=beta, callback=callback, comm=problem.comm, split=split,
            ref_prediction=ref, tol=eps, warm=warm, gstop=gtol, n_threads=threads,
            **{name: opts[name] for name in NEWTON_OPTIONS})
        n_iter, cg_iter = n_iter + st["n_iter"], cg_iter + st["cg_iter"]
        trace.extend(np.asarray(st["trace"]).tolist())
        F, D = _svr.svr_certificate(**args, C=C, epsilon=opts["epsilon"], w=beta,
                                    regularize_bias=opts["regularize_bias"], n_threads=threads,
                                    comm=problem.comm)
        gap = relative_gap(F, D)
        # the gap guard: a stop counts once the gap certifies 1%; else go on from beta
        # with both tests tightened (each Newton step then gains more per step)
        if gap <= GAP_GUARD or st["status"] == 1 or eps <= GAP_GUARD_MIN_EPS:
            break
        if log is not None:
            log(f"svr: relative duality gap {gap:.3g} > {GAP_GUARD:g}: continuing with -e "
                f"{eps * 0.1:g}")
        eps, gtol, warm = eps * 0.1, gtol * 0.1, True
    st = dict(st, n_iter=n_iter, cg_iter=cg_iter, trace=np.array(trace))
    stats = {"objective": F, "dual_objective": D, "gap": gap, "n_iter": st["n_iter"],
             "cg_iter": st["cg_iter"], "n_active": st["n_active"],
             "status": _STATUS[st["status"]], "trace": st["trace"],
             **exchange_stats(problem, {"weight_exchange": "split" if split else "allreduce"})}
    warning = None
    if st["status"] == 1:
        warning = (f"svr stopped at the iteration cap (max_iter={opts['max_iter']}) with a "
                   f"relative duality gap of {gap:.3g}; raise --max-iter or loosen -e")
    elif gap > GAP_GUARD:
        warning = (f"svr stopped with a relative duality gap of {gap:.3g} > {GAP_GUARD:g} "
                   f"(-e {tol:g}); tighten -e")
    note = None
    if opts["regularize_bias"] or problem.bias <= 0:
        why = (f"its bias weight {beta[-1]:.6g} is regularized, which at C = {C:g} holds it "
               "back" if problem.bias > 0 else "there is no bias feature (-B <= 0) to shift them")
        fix = ("-R frees it (a free intercept, -s svr's default), or raise -c" if problem.bias > 0
               else "give -B 1")
        note = fit_note(problem, y, beta, 0.0, "l2", opts["epsilon"], "svr", why, fix)
    return FitResult(beta, stats, warning=warning or note, converged=warning is None)


def fit_note(problem, y, w, offset, loss, epsilon, name, why, fix):
    """The one-line note for a regression model that fits its training targets worse
    than a constant would -- relevant only where the model has no free intercept: no
    bias feature, or a regularized bias weight (then a large bias weight is fine at the
    optimum: the note is for what the solution shows, not for the targets' offset);
    None otherwise.  It fires when, on the training examples, the model's loss
    sum_i c_i l(|r_i| - p) (l the solve's loss, r_i = y_i - w.x_i - offset) exceeds that
    of predicting the targets' cost-weighted mean m (a free intercept does at least as
    well as m at its optimum), or the residuals' weighted mean d exceeds both their
    spread s and the tube p (shifting every prediction by d would then more than halve
    the training MSE).  `why` and `fix` say what holds the model back and what frees it."""
    c = problem.cost
    total = float(c.sum())
    r = y - (csr_matvec(problem.view, w) + offset) if problem.n_weights else y - offset
    sums = [total, vdot(c, y), vdot(c, r), vdot(c, r * r), _loss_sum(c, r, loss, epsilon)]
    if problem.comm is not None:
        sums = [float(v) for v in problem.comm.sum_scalars(*sums)]
    total, sy, sr, srr, fitted = sums
    if total <= 0:
        return None
    m = sy / total
    constant = _loss_sum(c, y - m, loss, epsilon)
    if problem.comm is not None:
        constant = float(problem.comm.sum_scalars(constant)[0])
    shift = sr / total
    spread = float(np.sqrt(max(srr / total - shift * shift, 0.0)))
    worse = fitted > constant
    if not worse and not abs(shift) > max(spread, epsilon):
        return None
    what = (f"fits its training targets worse than their mean {m:.6g} does (loss "
            f"{fitted / total:.4g} per example against {constant / total:.4g})" if worse else
            f"predicts its training targets {abs(shift):.4g} too {'low' if shift > 0 else 'high'} "
            f"on average, more than the residuals' spread {spread:.4g}")
    return f"{name}: the model {what}: {why}; {fix}"


def _loss_sum(c, r, loss, epsilon):
    """sum_i c_i l(|r_i| - epsilon), l = max(0, .)^2 (loss l2) or max(0, .) (l1)."""
    e = np.maximum(np.abs(r) - epsilon, 0.0)
    return vdot(c, e * e if loss == "l2" else e)


def _offset(problem, y, center):
    """The cost-weighted mean of the targets (0 when not centering)."""
    if not center:
        return 0.0
    cost = problem.cost
    total = float(cost.sum())
    return vdot(cost, y) / total if total > 0 else 0.0


def fit_svr_dual(problem, params, start, state, log):
    """SVR by dual coordinate descent (Ho & Lin, JMLR 2012, Algorithm 4, with shrinking):
    --loss l2 is LIBLINEAR -s 12, --loss l1 -s 13 (module docstring, csrc/_svr.pyx).

    See linsvm.solvers for the contract.  With center_targets the targets are y - y_offset
    (stats["y_offset"]; the model predicts w.x + y_offset).  stats: objective (primal F at
    the returned w, of the centered problem when centering), dual_objective, gap (relative
    duality gap), n_iter (loops), n_sv, n_bound, violation (the last loop's summed
    violation relative to the reference), y_offset, status, trace.  The state (the dual
    variables b) seeds a later solve (alpha-seeding): b scaled by C / C_previous and
    clipped to the new box.  Weights alone cannot seed a dual method (ignored, warned)."""
    if problem.comm is not None:
        raise ParameterError("svr-dual is serial only; use -s svr (LIBLINEAR -s 11) on several MPI ranks")
    opts, C, tol = params.options, params.C, params.tol
    loss, max_iter = opts["loss"], opts["max_iter"]
    y0 = _targets(problem)
    off = _offset(problem, y0, opts["center_targets"])
    y = y0 - off if off else y0
    n = problem.n_rows
    b, warm, warning = np.zeros(n), False, None
    if state is not None:
        ok = (isinstance(state, dict) and state.get("kind") == "svr-dual"
              and np.shape(state.get("b")) == (n,) and state.get("y_offset") == off
              and isinstance(state.get("C"), float) and state["C"] > 0)
        if ok:
            b = np.array(state["b"], dtype=np.float64) * (C / state["C"])
            warm = True
        else:
            warning = "svr-dual: the previous solver state does not belong to this problem; starting from b = 0"
    elif start is not None:
        warning = ("svr-dual is a dual method and cannot start from weights alone; "
                   "starting from b = 0")
    callback = None
    if log is not None:
        def callback(it, vio, n_active):
            log(f"svr-dual loop {it:4d}  violation {vio:.4g}  active {n_active}")
    args = _args(problem, y)
    eps, loops, traces = tol, 0, []
    while True:
        st = _svr.svr_dual_solve(**args, C=C, b=b, callback=callback, epsilon=opts["epsilon"],
                                 loss=loss, tol=eps, shrinking=opts["shrinking"],
                                 seed=(params.seed + loops) & 0xFFFFFFFFFFFFFFFF,
                                 max_iter=max_iter - loops, warm=warm or loops > 0)
        loops += int(st["n_iter"])
        traces.append(st["trace"])
        gap = relative_gap(st["primal"], st["dual"])
        if st["status"] != 0 or gap <= GAP_GUARD or eps <= GAP_GUARD_MIN_EPS or loops >= max_iter:
            break
        if log is not None:
            log(f"svr-dual: stopped at eps {eps:g} with a relative duality gap of {gap:.3g} "
                f"(> {GAP_GUARD:g}): continuing at eps {eps * gap_guard_shrink(gap):g}")
        eps *= gap_guard_shrink(gap)
    stats = {"objective": st["primal"], "dual_objective": st["dual"], "gap": gap,
             "n_iter": loops, "n_sv": st["n_sv"], "n_bound": st["n_bound"],
             "violation": st["violation"], "y_offset": off, "final_eps": eps,
             "status": "converged" if st["status"] == 0 else "iteration cap",
             "trace": np.concatenate(traces) if traces else np.zeros((0, 3))}
    converged = True
    if not opts["center_targets"]:
        why = (f"its bias weight {st['w'][-1]:.6g} is regularized, which at C = {C:g} holds it "
               "back" if problem.bias > 0 else "there is no bias feature (-B <= 0) to shift them")
        fix = ("--center-targets (-s svr-dual's default) centres the targets" +
               (", or raise -c" if problem.bias > 0 else ""))
        warning = fit_note(problem, y0, st["w"], 0.0, loss, opts["epsilon"], "svr-dual", why,
                           fix) or warning
    if gap > GAP_GUARD:            # at the cap too: a certified gap within 1% is a result
        converged = False
        warning = (f"svr-dual stopped {'at the loop cap (max_iter=' + str(max_iter) + ')' if st['status'] else 'at eps ' + format(eps, 'g')} "
                   f"with a relative duality gap of {gap:.3g} > {GAP_GUARD:g}; raise --max-iter, "
                   "or use -s svr (the primal Newton method, --loss l2)")
    return FitResult(st["w"], stats, offset=float(off), warning=warning, converged=converged,
                     state={"kind": "svr-dual", "b": b, "C": float(C), "loss": loss,
                            "y_offset": off})
