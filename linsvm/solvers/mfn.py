"""L2-SVM-MFN: the modified finite Newton method (Keerthi & DeCoste, JMLR 2005).

Minimizes linsvm's L2-SVM objective (LIBLINEAR -s 2 for the same -c and -B)

    F(w) = 1/2 ||w||^2 + C sum_i c_i max(0, 1 - t_i w.x_i)^2,

x_i including the bias feature when bias > 0 and c_i the relative cost of
example i (class weight x sample weight).  The paper writes the problem as
eq. 2, f(beta) = lam/2 ||beta||^2 + 1/2 sum_{i in I} c_i d_i^2 with
lam = 1/C_paper and C_paper = 2C, so F = f / lam; the compiled core
(csrc/_mfn.pyx, csrc/newton_driver.pxd) works in the paper's scaling so that its relative CGLS
stopping rule (eq. 13, tolerance -e) means what the paper says.

Section 4 heuristics: 1 (at most 10 CGLS iterations on the first Newton step
of a cold start) and 2 (converge first at eps = 1e-2, then at -e) are on by
default; 3 (first solve on a random subset of the examples, then seed the full
solve with it) is the `subset` option.  A warm start (beta-seeding, Section
4.1) skips heuristic 1 but, unlike Appendix A's ini = 1 branch, keeps
heuristic 2 (along a path of C it takes fewer CGLS iterations to the same answer:
docs/solvers.md, "mfn").  The maximum dual KKT violation of Section 4.7 is always
reported; with `kkt_tol` the solve continues with eps / 10 until it holds.  CGLS is
preconditioned by 1 / (lam + w diag(X_1' C X_1)), w = `jacobi_weight` (0.3; 1 is plain
Jacobi), the damped Jacobi of Hsia, Chiang & Lin (ACML 2018); docs/solvers.md gives
the measurements.  A step's CGLS ends at eq. 13, or at the inexact-Newton forcing term
||r|| <= `forcing` ||r_0|| once Galli & Lin's quadratic-model rule at `forcing_guard`
holds too (never at the first iteration; csrc/cgls.pxd): unguarded, the forcing term can
end a step after one iteration on data with few positives (docs/threads.md, "Imbalance").

Stopping (defaults that beat LIBLINEAR at its own defaults): the paper's
rule (the zones settled and eq. 13 at -e) and LIBLINEAR's gradient test, whichever
comes first: the solve also ends at the first Newton iterate with ||grad F(w)|| <=
gtol min(n+, n-)/n ||grad F(0)||, read off the residual each CGLS starts from
(csrc/cgls.pxd), so it costs no pass over the data on a cold start and one on a warm
start.  gtol is GTOL_PER_TOL x -e unless given (0: the paper's rule alone), so that -e
stays the one accuracy knob.  The default -e is 0.005 (gtol 0.0015).  The paper's 1e-6
stops far closer to the optimum than LIBLINEAR -s 2 at its defaults, at several times its
cost; the pair (0.01, 0.003), chosen first on data outside the defaults table, stopped
about as close as -s 2 does (docs/benchmarks.md, "At the defaults"), but further on some
sets; at 0.005 mfn ends no further than -s 2 at its defaults on every set of
docs/liblinear.md's "Defaults" table.

Certified.  Both tests are scaled by what class and example weights inflate (||grad F(0)||,
||z||), so with costs that vary neither alone bounds F - F* (docs/solvers.md,
"Certified stopping", has an example).  F is 1-strongly convex, so F - F* <= 1/2 ||grad F||^2: with varying
costs (`costs_vary`) the gradient test counts only once that bound is within GAP_GUARD
(1%) of F too (gap_stop, csrc/mfn_losses.pxd's certified bound), and the result is checked by the duality gap of
its dual point (`certificate`, which also covers a free bias); above 1% the solve
continues from beta at -e / 10, and warns when it cannot get there.  With equal costs the
stop is LIBLINEAR's test, as before; the gap is reported either way (docs/solvers.md,
"Certified stopping").

The compiled driver is shared by the whole family (csrc/newton_driver.pxd: one Newton
loop over a piecewise quadratic loss given as (a, tm, hi, lo)); this module
holds its Python side for binary terms, `run_newton` (with its `Newton` record) and
`subset_seed`, which linsvm/solvers/mfn_family.py (ls, mfn-huber, mfn-l1, mfn-ord) uses
too.  mfn
is the loss L2_LOSS, and its iterates are the same, bit for bit, as before the
family was added.

Distributed (distributed="rows" for the whole family): with problem.comm
set, each rank holds a block of the rows and the compiled driver completes every sum
over rows by an allreduce (csrc/newton_driver.pxd): one allreduce of
n_weights + 3 doubles per CGLS iteration (csrc/cgls.pxd), a few small ones per Newton
step (the start residual, f, counts, the exact line search's rounds, which find the
serial root's piece over every rank's breakpoints: csrc/line_search.pxd).  Every rank
ends with the same weights, those of the serial solve on the union of the blocks up to
rounding (the sums add in another order, so a solve stopped at a loose -e can stop a
little elsewhere, as the serial one does on its rows in another order).  The subset of
heuristic 3 and the counts of the gradient test are the serial ones.
"""
from __future__ import annotations

import math
import weakref
from typing import Callable, NamedTuple

import numpy as np

from .. import _mfn
from ..problem.registry import FitResult
from ..runtime.threads import resolve_threads
from ..runtime.wsplit import pays, plan as split_plan, use_split
from .gaps import GAP_GUARD, GAP_GUARD_MIN_EPS, costs_vary, progressed, relative_gap

STATUS = {0: "converged", 1: "iteration cap", 2: "converged (no further descent at machine precision)",
           3: "converged (gradient test)", 4: "stopped by the caller's test"}

# Losses of the finite Newton family as the core takes them, (a, tm, hi, lo): zone 1
# (a/2 (tm - o)^2) for lo < o < hi, 0 above hi, linear below lo (csrc/_mfn.pyx).
L2_LOSS = (1.0, 1.0, 1.0, -math.inf)


# The driver's settings that are mfn's options by the same names (MFN_OPTIONS in the
# catalog), passed to the compiled entries as they are.
DRIVER_OPTIONS = ("heuristic1", "heuristic2", "precondition", "forcing", "forcing_guard",
                  "max_iter", "cg_max_iter", "fused_cg", "jacobi_weight")


class Newton(NamedTuple):
    """What one run_newton solves for and how it stops: the loss (a, tm, hi, lo), the
    name its progress lines carry, kkt (also return the Section 4.7 dual KKT violation,
    L2 loss), gstop (also stop at the first iterate with ||grad|| <= gstop ||grad at 0||;
    0: off), gap_stop (> 0: that test counts only once it certifies a relative duality
    gap of gap_stop too; csrc/_mfn.pyx, newton_solve) and until(it, objective, cg_it), a
    test after each step that moved beta (objective = f / lam; beta in place is the
    iterate): True ends the solve there (status 4; distributed, it must answer alike on
    every rank).  compact_rows: CGLS reads a step's active rows from a contiguous copy
    when they are at most a quarter of the rows (csrc/mfn_losses.pxd, binary_active; the
    same iterates up to rounding)."""
    loss: tuple = L2_LOSS
    name: str = "mfn"
    kkt: bool = False
    gstop: float = 0.0
    gap_stop: float = 0.0
    until: Callable | None = None
    compact_rows: bool = True


def run_newton(problem, lam, beta, eps, warm, opts, log, how=Newton()):
    """One call of the compiled finite Newton driver for the binary terms of `problem`
    as `how` says, at eq. 13's tolerance eps, updating beta in place, with progress lines
    ("NAME iter ...", objective in linsvm's scaling f / lam) sent to `log`.  opts: every
    option of DRIVER_OPTIONS and n_threads (as resolve_threads takes it), and optionally
    regularize_bias and weight_split: a solver without one of these options states the
    value it runs with."""
    callback = None
    if log is not None or how.until is not None:
        def callback(it, f, n_active, cg_it):
            if log is not None:
                log(f"{how.name} iter {it:3d}  objective {f / lam:.10g}  active {n_active}  "
                    f"cg {cg_it}")
            return how.until is not None and how.until(it, f / lam, cg_it)
    split = weight_split(problem, opts.get("weight_split", "off"))
    st = _mfn.newton_solve(
        problem.view, t=problem.t, c=problem.cost, lam=lam, beta=beta, loss=how.loss,
        callback=callback, comm=problem.comm, split=split, tol=eps, warm=warm,
        n_threads=resolve_threads(opts["n_threads"], problem.X.nnz),
        regularize_bias=opts.get("regularize_bias", True), pattern=True, kkt=how.kkt,
        diag_update=True, compact_rows=how.compact_rows, gstop=how.gstop,
        gap_stop=how.gap_stop,
        **{name: opts[name] for name in DRIVER_OPTIONS})
    del st["y"]     # the margins: a row-length array the callers' next solve would keep alive
    st["weight_exchange"] = "split" if split is not None else "allreduce"
    return st


def weight_split(problem, setting, n_extra=0):
    """The weight-split plan of a distributed solve of `problem` (linsvm.runtime.wsplit,
    csrc/cgls.pxd), or None for the allreduce arrangement: setting "on", "off", or
    "auto" (use_split's rule on the whole problem's non-zeros, then `pays` on the plan).
    n_extra: weights after problem.n_weights that every row has (an ordinal problem's
    thresholds).  None when serial."""
    coll = problem.comm
    if coll is None:
        return None
    X, rows = problem.X, problem.rows
    n_weights = problem.n_weights + n_extra
    key = (id(coll), id(X.indices), n_weights, problem.bias > 0, setting)
    hit = _PLANS.get(id(rows))
    mine = hit is not None and hit[0]() is rows and hit[1] == key   # mfn-l1's stages, OvR
    # every rank must take the same path (building a plan is collective): a rank whose
    # rows array is shared between solves (an empty block) may hit where the others miss
    if coll.sum_scalars(1.0 if mine else 0.0)[0] == coll.size:
        return hit[2]
    nnz = int((X.indptr[rows + 1] - X.indptr[rows]).sum()) if rows.shape[0] else 0
    plan = None
    if use_split(setting, coll, n_weights, nnz):
        dense = ([X.n_features] if problem.bias > 0 else []) + list(
            range(problem.n_weights, n_weights))
        plan = split_plan(coll, X.indptr, X.indices, rows, n_weights, dense)
        if setting == "auto" and not pays(coll, plan):
            plan = None
    _PLANS[id(rows)] = (weakref.ref(rows), key, plan)
    weakref.finalize(rows, _PLANS.pop, id(rows), None)
    return plan


# {id of a rows array: (a weak reference to it, key, the plan of the solves on it)}, an
# entry living as long as the array; every rank caches alike, so all agree whether to
# build a plan (a collective)
_PLANS = {}


def exchange_stats(problem, st):
    """{"weight_exchange": "split" or "allreduce"} of a distributed solve (nothing when
    serial): which arrangement its CGLS iterations ran in."""
    return {} if problem.comm is None else {"weight_exchange": st["weight_exchange"]}


def subset_seed(problem, lam, beta, eps, warm, opts, log, seed, loss=L2_LOSS, name="mfn"):
    """Heuristic 3 (Section 4.6): solve on a random fraction opts["subset"] of the
    examples to seed the full solve.  Updates beta; returns (warm, n_iter, cg_iter).
    Distributed, the subset is the serial one: drawn over the union of the blocks in
    rank order, each rank keeping the picks in its own block."""
    frac = opts["subset"]
    n, first = problem.n_rows, 0
    if problem.comm is not None:
        counts = problem.comm.allgather(np.array([n], dtype=np.float64))[:, 0].astype(np.int64)
        first, n = int(counts[:problem.comm.rank].sum()), int(counts.sum())
    if not (0.0 < frac < 1.0 and n > 1):
        return warm, 0, 0
    rng = np.random.default_rng(seed)
    size = max(1, int(math.ceil(frac * n)))
    pick = np.sort(rng.choice(n, size=size, replace=False))
    if problem.comm is not None:
        pick = pick[(pick >= first) & (pick < first + problem.n_rows)] - first
    st = run_newton(problem.subset(pick), lam, beta, eps, warm, opts, log, Newton(loss, name))
    return True, st["n_iter"], st["cg_iter"]


# gtol's default as a multiple of -e: 0.0015 at the default -e 0.005 (see the module docstring).
GTOL_PER_TOL = 0.3


def gradient_stop(t, gtol, comm=None):
    """The factor of the gradient test, gtol min(n+, n-) / n for labels t = +-1: the
    scaling of LIBLINEAR's Newton solvers' test ||grad F(w)|| <= eps min(n+, n-) / n
    ||grad F(0)|| (train -s 2, default eps 0.01), which asks for more on unbalanced data.
    comm: t is this rank's block; n and n+ are counted over every rank."""
    if not gtol:
        return 0.0
    n = t.shape[0]
    n_pos = int(np.count_nonzero(t > 0))
    if comm is not None:
        n, n_pos = (int(v) for v in comm.sum_scalars(n, n_pos))
    return gtol * min(n_pos, n - n_pos) / n if n else 0.0


def start_vector(problem, start, extra=0):
    """(beta, warm): a copy of the warm start, or zeros of n_weights + extra values."""
    if start is None:
        return np.zeros(problem.n_weights + extra), False
    return np.array(start, dtype=np.float64, copy=True), True


def certificate(problem, lam, beta, loss, opts):
    """(F, gap): the objective F(beta) in linsvm's scaling (F = f / lam) and the relative
    duality gap (F - D) / F of beta's dual point for `loss` (csrc/_mfn.pyx,
    binary_certificate: with every weight regularized F - D = 1/2 ||grad F||^2, the
    strong-convexity bound on F - F*; with a free bias the point balanced over the two
    signs).  gap bounds (F - F*) / F whatever the costs c_i; inf or nan when the sums
    overflowed (then nothing is certified)."""
    F, diff = _mfn.binary_certificate(
        problem.view, t=problem.t, c=problem.cost, lam=lam, beta=beta,
        loss=loss, n_threads=resolve_threads(opts["n_threads"], problem.X.nnz),
        comm=problem.comm, regularize_bias=opts.get("regularize_bias", True))
    return F, relative_gap(F, F - diff) if math.isfinite(diff) and math.isfinite(F) else math.nan


def certified(gap):
    """True when a relative duality gap certifies GAP_GUARD (False for nan)."""
    return gap <= GAP_GUARD


def uncertified_warning(name, gap, tol, eps):
    """The warning of a solve that ended without certifying GAP_GUARD."""
    if not math.isfinite(gap):
        return (f"{name} could not certify its result: its duality gap is not finite (sums "
                f"over the data overflow double precision: rescale the features, e.g. linsvm scale)")
    return (f"{name} stopped with a relative duality gap of {gap:.3g} > {GAP_GUARD:g} (-e {tol:g}, "
            f"continued down to {eps:g}); the model may be inaccurate (unscaled features or "
            "extreme weights limit what double precision certifies: scale the features)")


def fit_mfn(problem, params, start, state, log):
    """Train a binary L2-SVM by L2-SVM-MFN (paper Sections 3-4, Appendix A).

    See linsvm.solvers for the contract.  The weights are beta = (w, w_bias); stats
    hold objective F(beta), gap (the relative duality gap (F - D)/F that certifies
    (F - F*)/F, `certificate`), n_iter (Newton iterations), cg_iter, n_active (|I| at the
    solution), kkt_violation (Section 4.7, paper scaling), status, final_eps and trace.
    A stop counts once its gap is <= GAP_GUARD (the gradient test asks it itself);
    otherwise the solve goes on from beta at -e / 10 (gtol following), and warns if it
    reaches the iteration cap, GAP_GUARD_MIN_EPS or a --kkt-tol it cannot meet first.
    """
    opts, tol = params.options, params.tol
    lam = 1.0 / (2.0 * params.C)
    beta, warm = start_vector(problem, start)
    traces = []                 # objective per Newton step, one array per round
    n_iter = cg_iter = 0
    if opts["subset"]:      # heuristic 3: solve on a random subset, then seed the full problem
        warm, n_iter, cg_iter = subset_seed(problem, lam, beta, tol, warm, opts, log, params.seed)

    eps, last = tol, math.inf
    kkt_tol = opts["kkt_tol"]
    must_certify = costs_vary(problem)
    while True:
        gtol = GTOL_PER_TOL * eps if opts["gtol"] is None else opts["gtol"]   # follows eps
        gstop = gradient_stop(problem.t, gtol, problem.comm)
        how = Newton(kkt=True, gstop=gstop, gap_stop=GAP_GUARD if must_certify else 0.0)
        st = run_newton(problem, lam, beta, eps, warm, opts, log, how)
        n_iter += st["n_iter"]
        cg_iter += st["cg_iter"]
        traces.append(st["trace"] / lam)
        kkt = st["kkt"]                # None with a free bias (no Section 4.7 measure)
        F, gap = certificate(problem, lam, beta, L2_LOSS, opts)
        kkt_short = kkt_tol is not None and kkt is not None and kkt > kkt_tol and eps > 1e-15
        # go on while the gap is above 1% and a smaller eps can still lower it
        uncertified = (must_certify and not certified(gap) and math.isfinite(gap)
                       and progressed(last, F) and eps > GAP_GUARD_MIN_EPS)
        if st["status"] == 1 or not (kkt_short or uncertified):
            break
        last = F
        if log is not None:
            why = (f"dual KKT violation {kkt:.3g} > {kkt_tol:g}" if kkt_short
                   else f"relative duality gap {gap:.3g} > {GAP_GUARD:g}")
            log(f"mfn {why}: continuing with eps {eps / 10:g}")
        eps /= 10.0
        warm = True

    stats = {
        "objective": F,
        "gap": gap,
        "n_iter": n_iter,
        "cg_iter": cg_iter,
        "n_active": st["n_active"],
        "kkt_violation": kkt,
        "final_eps": eps,
        "status": STATUS[st["status"]],
        "trace": traces[0] if len(traces) == 1 else np.concatenate(traces),
        **exchange_stats(problem, st),
    }
    warning = None
    if not math.isfinite(gap):
        warning = uncertified_warning("mfn", gap, tol, eps)
    elif st["status"] == 1:
        warning = (
            f"mfn stopped at the iteration cap (max_iter={opts['max_iter']}) before the "
            f"active set settled (dual KKT violation {_num(kkt)}, relative duality gap "
            f"{gap:.3g}, -e {tol:g}); the model may be inaccurate: raise --max-iter or loosen -e"
        )
    elif must_certify and not certified(gap):
        warning = uncertified_warning("mfn", gap, tol, eps)
    elif kkt_tol is not None and kkt is not None and kkt > kkt_tol:
        warning = f"mfn could not bring the dual KKT violation {kkt:.3g} below --kkt-tol {kkt_tol:g}"
    return FitResult(beta, stats, warning=warning, converged=warning is None)


def _num(v):
    """A measure to 3 digits, nan when there is none."""
    return f"{v if v is not None else float('nan'):.3g}"
