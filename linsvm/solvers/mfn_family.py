"""The rest of the modified finite Newton family (Keerthi & DeCoste, JMLR 2005).

Four solvers on the Newton driver of `mfn` (csrc/newton_driver.pxd: CGLS on the terms
in the least-squares zone, exact line search over the knees of a piecewise quadratic
loss); each only chooses the loss, the scaling and the stopping rule.  In linsvm's
scaling (docs/design.md, "The fit contract"; x includes the bias feature, value -B,
whose weight is regularized; c_i = class weight x sample weight):

ls         F(w) = 1/2||w||^2 + C sum_i c_i (1 - y_i w.x_i)^2.  LS-SVM solved by CGLS
           with every example active: the paper's LS-SVM-CG (Section 4.3).  Paper
           form eq. 2 with I = all, lam = 1/(2C) ("as mfn"), F = f / lam.  One
           least-squares solve; -e is the eq. 13 tolerance.
mfn-huber  F(w) = 1/2||w||^2 + 2C sum_i c_i L_h(1 - y_i w.x_i), L_h the modified Huber
           loss of eq. 21 (0 for xi <= 0, xi^2/2 for 0 < xi < 2, 2(xi - 1) beyond).
           Index sets I0, I1, I2 of Section 6; each Newton step is the shifted
           least-squares problem of eq. 22-23 (CGLS on I1 in beta - q,
           q = (1/lam) sum_{I2} c_i 2 y_i x_i); the exact line search tracks
           crossings between all three sets.  lam = 1/(2C), F = f / lam.
           Heuristics 1-3 and -e as for mfn.
mfn-l1     F(w) = 1/2||w||^2 + C sum_i c_i max(0, 1 - y_i w.x_i) (LIBLINEAR -s 3).
           Section 6's continuation: stage j minimizes the smoothed objective with
           H_tau(xi) = tau/2 L_h(xi/tau + 1) (0 below -tau, (xi + tau)^2/(4 tau) on
           |xi| < tau, xi above tau; H_tau - max(0, xi) lies in [0, tau/4]),
           seeded by the stage before.  lam = 1/C (C_paper = C).  The stopping rule
           is a duality gap: with alpha_i = C c_i H_tau'(xi_i) in [0, C c_i] (a
           feasible point of the hinge-loss dual) and w_alpha = sum alpha_i y_i x_i,
               D(alpha) = sum alpha_i - 1/2 ||w_alpha||^2 <= F* <= F(w),
               G = F(w) - D(alpha) = 1/2 ||w - w_alpha||^2 + sum_i [C c_i max(0, xi_i) - alpha_i xi_i];
           the first part is the smoothed problem's gradient (inexact stage
           solve), the second its smoothing (each term <= C c_i tau / 8, only for
           |xi_i| < tau).  The solver returns the stage end point of lowest F and
           stops when F_min - D_max <= e D_max (D_max the best dual value met), so
           the returned w satisfies (F(w) - F*) / F* <= e.  Otherwise it shrinks
           tau where the smoothing part is too big and tightens the CGLS tolerance
           where the gradient part is; when double precision cannot go further
           (badly scaled data) it stops with a warning and the gap it did certify
           (see fit_l1).
mfn-ord    F(w, b) = 1/2(||w||^2 + ||b||^2) + C sum_{s=1}^{p-1} sum_i c_i max(0, 1 - z_is (w.x_i - b_s))^2,
           z_is = -1 if rank(i) <= s else +1: Chu & Keerthi's implicit thresholds
           with squared violations, eq. 25 with lam = 1/(2C) ("as mfn").  Newton
           steps solve eq. 26 by CGLS over the violating (example, threshold)
           pairs; the exact line search runs over up to (p-1) m breakpoints.
           Thresholds are regularized (eq. 25) and, by Chu & Keerthi's swap
           argument (which still holds with that regularization and with costs),
           ordered at the optimum; a tiny inversion left by the tolerance is
           removed by sorting, which never increases F, and reported.  Work space:
           about 52 bytes per (example, threshold) pair (CGLS vectors over the
           pairs and the breakpoints), allocated once per solve.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .. import _mfn
from .._kernels import vdot
from ..errors import ParameterError
from ..problem.checks import max_row_norm
from ..problem.registry import FitResult
from ..runtime.threads import resolve_threads
from .gaps import GAP_GUARD, GAP_GUARD_MIN_EPS
from .gaps import costs_vary, progressed
from .hinge_polish import polish
from .mfn import (DRIVER_OPTIONS, STATUS, Newton, certificate, certified, exchange_stats,
                  run_newton, start_vector, subset_seed, uncertified_warning, weight_split)

LS_LOSS = (1.0, 1.0, math.inf, -math.inf)          # (a, tm, hi, lo): zone 1 everywhere
HUBER_LOSS = (1.0, 1.0, 1.0, -1.0)                 # eq. 21 in the margin o = 1 - xi


def smoothed_hinge(tau):
    """Core loss (a, tm, hi, lo) of H_tau(1 - o) = tau/2 L_h((1 - o)/tau + 1).  tau should
    be a power of two: then 1 +- tau, a and the slope a (tm - lo) = 1 are exact."""
    return (0.5 / tau, 1.0 + tau, 1.0 + tau, 1.0 - tau)


def _power_of_two_at_most(x):
    return 2.0 ** math.floor(math.log2(x))


TAU_MIN = 2.0 ** -45                     # 1 +- tau still exact in double
POLISH_FIRST = 4                         # a stage's first polish (_StageStop), then 8, 16, ...
POLISH_WIDTH = 4.0                       # its band: |xi| < POLISH_WIDTH tau
POLISH_HOPE = 4.0                        # polish in a stage whose predicted smoothing part
                                         # is within this factor of the target


def _cap_warning(name, opts, measure=""):
    """The iteration-cap message; measure: what was reached (e.g. the gradient norm)."""
    return (f"{name} stopped at the iteration cap (max_iter={opts['max_iter']}) before the "
            f"active set settled{measure}; the model may be inaccurate: raise --max-iter or loosen -e")


class Certified(NamedTuple):
    """The end of _certified_newton's runs: st of the last run, the Newton and CGLS
    iterations of all, the trace in linsvm's scaling, the relative duality gap at the
    result and the last eps."""
    st: dict
    n_iter: int
    cg_iter: int
    trace: list
    gap: float
    eps: float


def _certified_newton(problem, lam, beta, tol, warm, opts, log, how):
    """run_newton at -e tol, then, when the costs vary (gaps.costs_vary), again from beta at
    -e / 10 while the result's relative duality gap (mfn.certificate) exceeds GAP_GUARD,
    up to the iteration cap or GAP_GUARD_MIN_EPS.  Returns a Certified."""
    eps, n_iter, cg_iter, trace, last = tol, 0, 0, [], math.inf
    must_certify = costs_vary(problem)
    while True:
        st = run_newton(problem, lam, beta, eps, warm, opts, log, how)
        n_iter, cg_iter = n_iter + st["n_iter"], cg_iter + st["cg_iter"]
        trace.extend((st["trace"] / lam).tolist())
        F, gap = certificate(problem, lam, beta, how.loss, opts)
        if not must_certify or certified(gap) or st["status"] == 1 or eps <= GAP_GUARD_MIN_EPS \
                or not math.isfinite(gap) or not progressed(last, F):
            return Certified(st, n_iter, cg_iter, trace, gap, eps)
        last = F
        if log is not None:
            log(f"{how.name} relative duality gap {gap:.3g} > {GAP_GUARD:g}: continuing with "
                f"eps {eps / 10:g}")
        eps, warm = eps / 10.0, True


def _binary_result(problem, lam, beta, how, run, opts, tol):
    """FitResult of the solver how.name (Certified run at -e tol) with statistics in
    linsvm's scaling (F = f / lam), with the gradient norm and the relative duality gap
    (run.gap, reached at -e run.eps) at the result, and the warning of the iteration cap
    or, when the costs vary, of a gap above GAP_GUARD."""
    name, st, gap = how.name, run.st, run.gap
    f, g, _, _ = _mfn.gradient(problem.view, t=problem.t, c=problem.cost, lam=lam, beta=beta,
                               loss=how.loss, n_threads=opts["n_threads"], comm=problem.comm,
                               regularize_bias=opts.get("regularize_bias", True))
    stats = {
        "objective": f / lam,
        "n_iter": run.n_iter,
        "cg_iter": run.cg_iter,
        "n_active": st["n_active"],
        "grad_norm": float(np.sqrt(vdot(g, g))) / lam,
        "gap": gap,
        "status": STATUS[st["status"]],
        "trace": run.trace,
        **exchange_stats(problem, st),
    }
    warning = None
    if not math.isfinite(gap):
        warning = uncertified_warning(name, gap, tol, run.eps)
    elif st["status"] == 1:
        warning = _cap_warning(name, opts, f" (gradient norm {stats['grad_norm']:.3g}, relative "
                                           f"duality gap {gap:.3g}, -e {tol:g})")
    elif not certified(gap) and costs_vary(problem):
        warning = uncertified_warning(name, gap, tol, run.eps)
    return FitResult(beta, stats, warning=warning, converged=warning is None)


# ---------------------------------------------------------------------------- ls

# ls has no index set to change: the heuristics and the forcing term do not apply.
_LS_FIXED = {"heuristic1": False, "heuristic2": False, "forcing": 0.0, "forcing_guard": 0.0}


def fit_ls(problem, params, start, state, log):
    """LS-SVM by CGLS with all examples active (LS-SVM-CG, Section 4.3).

    Minimizes 1/2||w||^2 + C sum c_i (1 - y_i w.x_i)^2, i.e. the normal equations
    (lam I + X'CX) beta = X'C y with lam = 1/(2C), by (preconditioned) CGLS to
    the eq. 13 tolerance -e, seeded at beta0 when given.  One Newton step
    suffices (no index set to change); more happen only if --cg-max-iter cuts
    CGLS short.  stats include grad_norm = ||grad F||.
    """
    tol = params.tol
    lam = 1.0 / (2.0 * params.C)
    opts = dict(params.options, n_threads=resolve_threads(params["n_threads"], problem.X.nnz),
                **_LS_FIXED)
    beta, warm = start_vector(problem, start)
    how = Newton(LS_LOSS, "ls")
    run = _certified_newton(problem, lam, beta, tol, warm, opts, log, how)
    return _binary_result(problem, lam, beta, how, run, opts, tol)


# ---------------------------------------------------------------------------- mfn-huber

def fit_huber(problem, params, start, state, log):
    """Modified Huber loss by the finite Newton method (Section 6, eq. 21-23).

    Minimizes 1/2||w||^2 + 2C sum c_i L_h(1 - y_i w.x_i) = f / lam with
    lam = 1/(2C), f the paper's eq. 19 with L = L_h.  Same heuristics and -e as
    mfn.  stats include n_active = |I1|, n_linear = |I2| and grad_norm = ||grad F||
    at the result.
    """
    tol = params.tol
    lam = 1.0 / (2.0 * params.C)
    opts = dict(params.options, n_threads=resolve_threads(params["n_threads"], problem.X.nnz))
    beta, warm = start_vector(problem, start)
    warm, n_iter, cg_iter = subset_seed(problem, lam, beta, tol, warm, opts, log, params.seed,
                                        HUBER_LOSS, "mfn-huber")
    how = Newton(HUBER_LOSS, "mfn-huber")
    run = _certified_newton(problem, lam, beta, tol, warm, opts, log, how)
    run = run._replace(n_iter=n_iter + run.n_iter, cg_iter=cg_iter + run.cg_iter)
    res = _binary_result(problem, lam, beta, how, run, opts, tol)
    res.stats["n_linear"] = run.st["n_zone2"]
    return res


# ---------------------------------------------------------------------------- mfn-l1

def hinge_certificate(problem, C, beta, tau, n_threads=1):
    """Duality-gap certificate of w = beta for the hinge-loss objective, from the dual
    point alpha_i = C c_i H_tau'(xi_i) (module docstring; computed by _mfn.hinge_certificate).

    Returns a dict: F (hinge objective at beta), D (dual value, <= F*), gap_grad
    (1/2||beta - w_alpha||^2), gap_smooth (sum C c_i max(0, xi_i) - alpha_i xi_i),
    gap = gap_grad + gap_smooth (= F - D), n_quad (|xi_i| < tau).  (Not the margins X beta:
    the stages keep certificates, and a row-length array in each would outlive the solve
    that needs the memory.)
    """
    F, D, gg, gs, nq, _ = _mfn.hinge_certificate(problem.view, t=problem.t, c=problem.cost,
                                                 C=C, beta=beta, tau=tau, n_threads=n_threads,
                                                 comm=problem.comm)
    return {"F": F, "D": D, "gap_grad": gg, "gap_smooth": gs, "gap": gg + gs, "n_quad": nq}


class _Best:
    """The certificate over all points seen: the lowest hinge objective F_min (and its
    beta) and the highest dual value D_max.  Every D is a lower bound on F*, so
    (F_min - D_max)/D_max bounds the relative gap of the returned point."""

    def __init__(self):
        self.F, self.beta, self.D, self.cert = math.inf, None, -math.inf, None

    def update(self, cert, beta, tol):
        """Fold in a certificate at beta; return True if it moved F_min or D_max by more
        than a tenth of the tolerance."""
        scale = 0.1 * tol * max(abs(self.D), abs(cert["D"]), 1e-300)
        moved = cert["F"] < self.F - scale or cert["D"] > self.D + scale
        if cert["F"] < self.F:
            self.F, self.beta, self.cert = cert["F"], beta.copy(), cert
        self.D = max(self.D, cert["D"])
        return moved

    def gap(self):
        return (self.F - self.D) / self.D if self.D > 0 else math.inf

    def certified(self, tol):
        return self.D > 0 and self.F - self.D <= tol * self.D


class _StageStop:
    """A stage's early end: run_newton's `until` test, true once the returned point is
    certified, so that the stage need not go on to its own optimum for nothing.

    * The bound: H_tau(xi) >= max(0, xi) ((xi + tau)^2 / (4 tau) - xi = (xi - tau)^2 /
      (4 tau) on the quadratic piece), so F(w) <= F_tau(w) at every iterate; once
      F_tau(w) <= (1 + tol) D_max (the best dual value met so far), w is certified.
    * The polish (linsvm.solvers.hinge_polish), in a stage whose smoothing part may fit
      the tolerance (`hopeful`), at its Newton iterations 4, 8, 16, ...: a dual point
      closer to F* than the plain certificate's, and a second primal point; both go
      into `best`.  Serial solves only (that module's notes).
    `cert` is the certificate that ended the stage, if one did."""

    def __init__(self, problem, C, tau, beta, best, tol, settings, hopeful):
        self.problem, self.C, self.tau, self.beta, self.best = problem, C, tau, beta, best
        self.tol, self.settings = tol, settings
        self.hopeful = hopeful and problem.comm is None
        self.cert = None
        self.polishes = 0
        self.moved = False          # whether a polish moved `best` (the stall rule's progress)

    def __call__(self, it, objective, cg_it):
        best, tol = self.best, self.tol
        if best.D > 0 and objective <= (1.0 + tol) * best.D:
            return True
        if not self.hopeful or it < POLISH_FIRST or it & (it - 1):
            return False
        seed, n_threads, log = self.settings
        p = polish(self.problem, self.C, self.beta, POLISH_WIDTH * self.tau, tol, seed,
                   n_threads, tau=self.tau)
        self.polishes += 1
        cert = {"F": p["F"], "D": p["D"], "n_quad": p["n_quad"]}
        self.moved |= best.update(cert, self.beta, tol)
        self.moved |= best.update({"F": p["F_v"], "D": p["D"], "n_quad": p["n_quad"]}, p["v"], tol)
        if log is not None:
            log(f"mfn-l1 polish at iteration {it}: objective {min(p['F'], p['F_v']):.10g}  "
                f"dual {p['D']:.10g}  relative gap {best.gap():.3g}  ({p['n_band']} "
                f"examples, {p['loops']} loops)")
        if best.certified(tol):
            self.cert = cert
            return True
        return False


class _Predictor:
    """The continuation's predictor step.  While no example crosses the edge of the
    quadratic band, the stage optimum w(tau) is a smooth function of tau, to first order
    linear: a free support vector sits at xi = tau (2 a/C - 1) for its dual value a, so its
    margin shrinks with tau.  From the last two solved stages (tau_1, w_1), (tau_2, w_2)
    and the next width tau, the start
        w = w_2 + (tau - tau_2) / (tau_2 - tau_1) (w_2 - w_1)
    puts those examples back into the new, narrower quadratic band, which the Newton steps
    otherwise refill a few thousand examples at a time.  Taken only when it lowers F_tau
    (where the path has turned, as on w8a, it does not).

    It keeps one weight vector through a stage: w_1 while beta goes from w_2 to the next
    end (the candidate is formed in that vector's place)."""

    def __init__(self, problem, lam, n_threads, log):
        self.problem, self.lam, self.n_threads, self.log = problem, lam, n_threads, log
        self.prev = None          # (tau_1, w_1): the solved stage end before beta's
        self.last = None          # tau_2 when beta is the end of a solved stage, else None

    def start(self, beta, tau, loss):
        """Before the stage at width tau: move beta (in place) to the predictor when that
        pays, and keep beta's stage end as the next one's w_1."""
        if self.last is None or self.last == tau:     # no solved end, or a stage run again
            return
        if self.prev is None:
            self.prev = (self.last, beta.copy())
            return
        tau1, buf = self.prev
        r = (tau - self.last) / (self.last - tau1)
        buf *= -r
        buf += (1.0 + r) * beta                       # w_2 + r (w_2 - w_1), in w_1's place
        f_here, f_pred = self._smoothed(beta, loss), self._smoothed(buf, loss)
        taken = f_pred < f_here
        if taken:
            buf[:], beta[:] = beta, buf.copy()        # beta: the candidate; buf: w_2
        else:
            buf[:] = beta
        self.prev = (self.last, buf)
        if self.log is not None:
            self.log(f"mfn-l1 predictor for tau {tau:.3g}: objective {f_pred:.10g} against "
                     f"{f_here:.10g} at the last stage's end ({'taken' if taken else 'not taken'})")

    def end(self, tau, solved):
        """After the stage at width tau: beta is its end; the predictor uses solved ends."""
        self.last = tau if solved else None

    def _smoothed(self, w, loss):
        pr = self.problem
        return _mfn.gradient(pr.view, t=pr.t, c=pr.cost, lam=self.lam, beta=w, loss=loss,
                             n_threads=self.n_threads, comm=pr.comm)[0] / self.lam


# mfn-l1 has no heuristic 2 (its stages already tighten the CGLS tolerance in turn).
_L1_FIXED = {"heuristic2": False}


def fit_l1(problem, params, start, state, log):
    """L1-loss (hinge) SVM by Huber continuation (Section 6), with a certified gap.

    Stage j minimizes F_tau(w) = 1/2||w||^2 + C sum c_i H_tau(xi_i) by the
    finite Newton driver (paper scaling lam = 1/C, loss tau/2 L_h(xi/tau + 1)),
    seeded by stage j - 1.  After each stage the duality gap G = F(w) - D(alpha)
    of hinge_certificate is split into its gradient part (stage solved
    inexactly) and its smoothing part (tau too large).  The returned w is the
    point of lowest hinge objective F_min met at a stage end or a polish; D_max, the
    best dual value met, is a lower bound on F*:

    * each stage after the second starts from _Predictor's point (the last two stage
      optima extrapolated in tau) when that lowers F_tau;
    * stop when F_min - D_max <= tol * D_max: then (F(w) - F*)/F* <= tol; since
      F <= F_tau, a stage ends at the first Newton iterate with F_tau(w) <= (1 + tol) D_max
      (a stage that reaches it would otherwise go on to its own optimum for nothing);
    * a departure: in a stage whose smoothing part (the last one's times the ratio of
      the taus) is within POLISH_HOPE of the target, the dual polish (hinge_polish)
      at Newton iterations 4, 8, 16, ... may certify an iterate long before the stage's
      own optimum, where the plain dual point's gradient part is still large (_StageStop);
    * if the gradient part exceeds tol*D/2, the CGLS tolerance is divided by 100;
    * if the smoothing part exceeds tol*D/2, tau shrinks by the factor
      tol*D/(4 smoothing part) clipped to [1/8, 1/2] and rounded down to a power
      of two (the smoothing part falls at least in proportion to tau: it is
      <= C tau/8 sum_{|xi|<tau} c_i);
    * stop with a warning after two stages in a row that move neither F_min nor
      D_max by a tenth of the tolerance once the CGLS tolerance is at its floor
      1e-12 (double precision cannot certify more:
      seen on badly scaled data such as the unscaled Australian set, whose
      features reach 1e5), or at --max-stages.

    tau stays a power of two (--tau0 is rounded down to one), so that the
    smoothed loss is exactly C^1 in floating point (csrc/mfn_terms.pxd, make_loss).
    The paper's schedule tau_j = 2^-j is the case of factor 1/2 from tau0 = 1;
    linsvm starts at --tau0 (default 1/4) and lets the certificate choose the
    factor (1/2, 1/4 or 1/8).  A warm start first evaluates the certificate at
    beta0 for tau0 4^-k, k = 0..6 (and the previous solve's final tau, from
    `state`), and starts from the tau with the smallest gap, returning at once
    if it is certified.
    """
    C, tol = params.C, params.tol
    lam = 1.0 / C
    opts = dict(params.options, n_threads=resolve_threads(params["n_threads"], problem.X.nnz),
                **_L1_FIXED)
    beta, warm = start_vector(problem, start)
    nt = opts["n_threads"]
    tau = _power_of_two_at_most(float(opts["tau0"]))
    cg_eps = float(opts["cg_tol"])
    n_iter = cg_iter = stages = stalled = polishes = 0
    smooth_next = math.inf
    last_tau = tau
    trace = []
    best = _Best()
    predictor = _Predictor(problem, lam, nt, log)
    if warm:
        tau = _warm_tau(problem, C, beta, tau, state, nt, tol, best, log)
    status = "converged (certified)"
    newton_cap = False
    while not best.certified(tol):
        if stages >= opts["max_stages"] or tau < TAU_MIN:
            status = "stage cap"
            break
        if stalled >= 2:
            status = "stalled"
            break
        stages += 1
        loss = smoothed_hinge(tau)
        predictor.start(beta, tau, loss)
        stop = _StageStop(problem, C, tau, beta, best, tol, (params.seed, nt, log),
                          hopeful=smooth_next <= POLISH_HOPE * tol * best.D)
        st = run_newton(problem, lam, beta, cg_eps, warm, opts, log,
                        Newton(loss, f"mfn-l1 tau={tau:.3g}", until=stop))
        polishes += stop.polishes
        warm = True
        n_iter += st["n_iter"]
        cg_iter += st["cg_iter"]
        newton_cap |= st["status"] == 1
        trace.extend(st["trace"] / lam)
        last_tau = tau
        if stop.cert is not None:
            _log_stage(log, stages, tau, stop.cert, best, st, "certified by the dual polish")
            break
        cert = hinge_certificate(problem, C, beta, tau, nt)
        progress = best.update(cert, beta, tol) or stop.moved
        predictor.end(tau, st["status"] in (0, 2))
        _log_stage(log, stages, tau, cert, best, st, STATUS[st["status"]])
        cg_eps, next_tau, moved = _next_stage(cert, tol * max(best.D, 0.0), cg_eps, tau)
        smooth_next = cert["gap_smooth"] * next_tau / tau     # it falls about as tau does
        tau = next_tau
        stalled = 0 if progress or moved else stalled + 1
    if best.beta is not None:
        beta = best.beta
    stats = {"objective": best.F, "n_iter": n_iter, "cg_iter": cg_iter,
             "n_active": best.cert["n_quad"] if best.cert else 0, "stages": stages,
             "tau": last_tau, "cg_tol_final": cg_eps, "dual_objective": best.D,
             "duality_gap": best.gap(), "status": status, "trace": trace, "polishes": polishes,
             **(exchange_stats(problem, st) if stages else {})}
    warning = _l1_warning(problem, stats, tol, newton_cap, opts)
    return FitResult(beta, stats, warning=warning, converged=warning is None,
                     state={"tau": last_tau})


def _l1_warning(problem, stats, tol, newton_cap, opts):
    """fit_l1's warning when its certificate fell short (None when certified; then a
    Newton cap met on the way is only noted in stats)."""
    status = stats["status"]
    if status == "converged (certified)":
        if newton_cap:
            stats["newton_cap_hit"] = True
        return None
    why = _stall_hint(problem, newton_cap, opts) if status == "stalled" else "raise --max-stages"
    return (f"mfn-l1 stopped after {stats['stages']} stages ({status}) with relative duality "
            f"gap {stats['duality_gap']:.3g} > -e {tol:g}: {why}")


# Rows of a norm between these (without the bias feature) count as scaled: unit-length
# rows, svm-scale's [-1, 1] or [0, 1], z-scores; the unscaled Australian set's reach 1e5.
SCALED_ROW_NORMS = (1e-3, 1e3)


def _stall_hint(problem, newton_cap, opts):
    """What a stalled mfn-l1 solve's warning says (fit_l1's docstring): on data whose
    largest row norm (over all MPI ranks) lies outside SCALED_ROW_NORMS, that double
    precision cannot certify more and the features want scaling; on scaled data, that
    its stages' Newton solves stopped at --max-iter (a large C makes the smoothed
    problems slow) when they did, else only that double precision cannot certify more."""
    top = np.array([max_row_norm(problem.X, problem.rows, -1.0)])
    if problem.comm is not None:
        problem.comm.max(top)
    lo, hi = SCALED_ROW_NORMS
    if top[0] > 0.0 and not lo <= top[0] <= hi:
        return (f"double precision cannot certify more on this data (rows of norm up to "
                f"{top[0]:.3g}: badly scaled features? scale them, e.g. linsvm scale)")
    if newton_cap:
        return (f"its stages' Newton solves stopped at --max-iter {opts['max_iter']}: raise "
                "--max-iter (a large C makes the smoothed problems slow to solve)")
    return "double precision cannot certify more on this data"


def _log_stage(log, stage, tau, cert, best, st, how):
    """The progress line of a finished stage (with the split of the plain certificate)."""
    if log is None:
        return
    split = (f"gradient part {cert['gap_grad']:.3g}, smoothing part {cert['gap_smooth']:.3g}; "
             if "gap_grad" in cert else "")
    log(f"mfn-l1 stage {stage}: tau {tau:.3g}  objective {cert['F']:.10g}  dual {cert['D']:.10g}  "
        f"relative gap {best.gap():.3g}  (this stage: {split}{st['n_iter']} Newton, "
        f"{st['cg_iter']} CGLS iterations, {how})")


def _next_stage(cert, target, cg_eps, tau):
    """What a stage's certificate decides (fit_l1's docstring): the CGLS tolerance / 100
    if the gradient part exceeds target / 2; tau shrunk if the smoothing part does, or if
    nothing else moved.  Returns (cg_eps, tau, whether cg_eps moved)."""
    moved = False
    if cert["gap_grad"] > 0.5 * target and cg_eps > 1e-12:
        cg_eps = max(cg_eps * 1e-2, 1e-12)
        moved = True
    if cert["gap_smooth"] > 0.5 * target or not moved:
        factor = 0.25 * target / cert["gap_smooth"] if cert["gap_smooth"] > 0 else 0.5
        tau *= _power_of_two_at_most(min(0.5, max(0.125, factor)))
    return cg_eps, tau, moved


def _warm_tau(problem, C, beta, tau0, state, n_threads, tol, best, log):
    """The smoothing width a warm start of mfn-l1 begins at: of tau0 4^-k, k = 0..6, and
    the previous solve's final tau (`state`), the one whose certificate at beta has the
    smallest relative gap; every certificate also updates `best`."""
    ladder = [tau0 * 4.0 ** -k for k in range(7)]
    if isinstance(state, dict) and state.get("tau", 0) > 0:
        ladder.append(_power_of_two_at_most(float(state["tau"])))
    pick = None
    for cand in ladder:
        cert = hinge_certificate(problem, C, beta, cand, n_threads)
        best.update(cert, beta, tol)
        score = cert["gap"] / cert["D"] if cert["D"] > 0 else math.inf
        if pick is None or score < pick[0]:
            pick = (score, cand)
    if log is not None:
        log(f"mfn-l1 warm start: relative gap {best.gap():.3g}, starting at tau {pick[1]:.3g}")
    return pick[1]


# ---------------------------------------------------------------------------- mfn-ord

def fit_ord(problem, params, start, state, log):
    """Ordinal regression with implicit thresholds (Chu & Keerthi; Section 7, eq. 25-26).

    Minimizes 1/2(||w||^2 + ||b||^2) + C sum_s sum_i c_i max(0, 1 - z_is (w.x_i - b_s))^2
    = f / lam, lam = 1/(2C).  problem.codes: rank index 0..n_levels-1 per example;
    start: (w0, thresholds0) or None.  The thresholds come back ascending; stats
    include n_active (violating example-threshold pairs), grad_norm = ||grad F||
    and threshold_inversion (max b_s - b_{s+1} before sorting; 0 when ordered).
    qid is not used (eq. 25 has no queries).
    """
    codes, cost = problem.codes, problem.cost
    tol = params.tol
    lam = 1.0 / (2.0 * params.C)
    opts = dict(params.options, n_threads=resolve_threads(params["n_threads"], problem.X.nnz))
    nb = problem.n_classes - 1
    nw = problem.n_weights
    if start is None:
        beta, warm = np.zeros(nw + nb), False
    else:
        w0, b0 = start
        beta = np.concatenate([np.asarray(w0, dtype=np.float64).reshape(-1),
                               np.asarray(b0, dtype=np.float64).reshape(-1)])
        if beta.shape[0] != nw + nb:
            raise ParameterError(f"warm start has {beta.shape[0]} values, expected {nw + nb}")
        warm = True
    split = weight_split(problem, opts.get("weight_split", "off"), n_extra=nb)
    callback = None
    if log is not None:
        def callback(it, f, n_active, cg_it):
            log(f"mfn-ord iter {it:3d}  objective {f / lam:.10g}  active pairs {n_active}  cg {cg_it}")
    st = _mfn.ordinal_solve(problem.view, codes=codes, n_thresholds=nb, c=cost, lam=lam,
                            beta=beta, callback=callback, comm=problem.comm, split=split,
                            tol=tol, warm=warm, n_threads=opts["n_threads"],
                            **{name: opts[name] for name in DRIVER_OPTIONS if name != "fused_cg"})
    thresholds = beta[nw:].copy()
    inversion = float(max(0.0, np.max(thresholds[:-1] - thresholds[1:]))) if nb > 1 else 0.0
    if inversion > 0:
        beta[nw:] = np.sort(thresholds)        # never increases F (swap argument)
    f, g, _ = _mfn.ordinal_gradient(problem.view, codes=codes, n_thresholds=nb, c=cost,
                                    lam=lam, beta=beta, n_threads=opts["n_threads"],
                                    comm=problem.comm)
    stats = {
        "objective": f / lam,
        "n_iter": st["n_iter"],
        "cg_iter": st["cg_iter"],
        "n_active": st["n_active"],
        "grad_norm": float(np.sqrt(vdot(g, g))) / lam,
        "threshold_inversion": inversion,
        "status": STATUS[st["status"]],
        **exchange_stats(problem, {"weight_exchange": "split" if split is not None
                                   else "allreduce"}),
        "trace": list(st["trace"] / lam),
    }
    warning, converged = None, True
    if st["status"] == 1:
        warning = _cap_warning("mfn-ord", opts, f" (gradient norm {stats['grad_norm']:.3g}, -e {tol:g})")
        converged = False
    elif problem.qid is not None:
        warning = "mfn-ord ignores query ids (eq. 25 has no queries)"
    return FitResult(beta[:nw].copy(), stats, thresholds=beta[nw:].copy(), warning=warning,
                     converged=converged)
