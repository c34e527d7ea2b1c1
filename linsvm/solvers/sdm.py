"""SDM: the Sequential Dual Method for multi-class linear SVMs (Keerthi et al., KDD 2008).

Two solvers, each with one weight column per class and argmax prediction (eq. 2):

sdm-cs  Crammer-Singer (Section 2, Algorithm 2.1), LIBLINEAR -s 4's objective:
            1/2 sum_m ||w_m||^2 + C sum_i c_i max_m (e_i^m - (w_{y_i} - w_m).x_i),
        e_i^m = [m != y_i] (the max includes m = y_i, so the loss is >= 0).
sdm-ww  Weston-Watkins (Section 3, Algorithm 3.1):
            1/2 sum_m ||w_m||^2 + C sum_i c_i sum_{m != y_i} max(0, 1 - (w_{y_i} - w_m).x_i).

x_i includes the bias feature when bias > 0 and c_i is the example's relative
cost (class weight x sample weight).  The paper writes the same problems, (1)
and (14), with one C for all examples: linsvm's C is the paper's C, and the
per-example bound of the dual is U_i = C c_i (LIBLINEAR's weighted C).  No
rescaling is needed, so -e means exactly the paper's epsilon: the stopping rule
v_i < eps for all i, with v_i of eq. 6 (CS) or max_m v_i^m of eq. 18 (WW),
default 0.1 as the paper recommends, guarded (a departure: a stop counts once the
duality gap also certifies 1% of the objective, else the solve continues from its
alphas at a smaller eps, linsvm.solvers.gaps.gap_guard_shrink; what the guard gains
and costs is measured in docs/benchmarks.md, "The duality-gap guard").

The compiled core (csrc/_sdm.pyx, whose block comment has the algorithm) runs
random permutations, the active-set sub-problem solver, shrinking (both of the
Section 2.1 modifications) with the footnote's 5-effective-loop cap on shrunk
work, and cooling of epsilon from 1 by factors of 10.  Departures (measured in
docs/benchmarks.md, "The dual methods' departures"):

* Sub-problem (`--subproblem`, default `all`): in full loops (10) / (21) is
  solved over all classes, by the same active-set method started from the
  paper's restricted set (M_i and the alphas off their bound) with every
  other class held at its bound, so it only goes on when a held class has a
  negative multiplier.  The paper restricts the sub-problem to that set,
  assuming few alphas per example are non-zero; where examples keep many at
  the optimum, the restricted set, which admits one new class per visit, is
  slow to collect them.  Shrunk loops are the paper's either way (non-zero
  alphas only).
* Certification: the paper's loop measures v_i before moving alpha_i, so the
  loop that meets eq. 9 / 20 has moved alpha after measuring it.  At the
  target epsilon the next full loop is "lazy": it only measures until it
  meets a v_i >= eps; if it meets none it changed nothing and the returned
  alpha satisfies eq. 9 / 20 exactly (kkt_violation is then exact).
* Cooling skips the graded steps a full loop already meets (relevant after a
  warm start).

Warm start (alpha-seeding, end of Section 2.3): the dual variables of a
previous solve come back as `state`.  When C or the costs changed, each
example's alphas are made feasible for the new bound U_i: for CS an example
with alpha_i^{y_i} > U_i has all its alphas scaled by U_i / alpha_i^{y_i}
(keeping sum_m alpha_i^m = 0); for WW each alpha is clipped to [0, U_i].  The
kernel then moves the seed along the ray r alpha, r >= 1, to the best dual
value that stays feasible (only when C grew: an alpha at its bound pins
r = 1), and recomputes W from alpha (what seeding saves along a path of C:
docs/benchmarks.md, "The dual methods' departures").  A weight matrix alone (no
state) cannot seed a dual method: it is ignored with a warning.

On several MPI ranks (problem.comm set) the solve is CoCoA+ (linsvm.solvers.cocoa):
rounds of `local_epochs` full loops of sdm_run (with its shrunk loops, without
cooling) on each rank's block of the examples, one allreduce of the change in W
(n_weights x n_classes) per round; -e then means a relative duality gap
(P - D) / P <= min(eps, 0.01) over all ranks (the local passes use eps for their
shrunk phases), max_iter caps the rounds, and a seeded start is not moved along the
ray.  The state holds this rank's alphas.
"""
from __future__ import annotations

import numpy as np

from .. import _sdm
from ..problem.csr import take_rows, to_scipy, with_layout
from ..problem.registry import FitResult
from .cocoa import cocoa_rounds, rank_seed, target_gap
from .gaps import GAP_GUARD, GAP_GUARD_MIN_EPS, gap_guard_shrink, relative_gap
from .gather import finish_on_root, fits, total_nnz
from .handover import Payoff

_STATUS = {0: "converged", 1: "full-loop cap", 2: "out of memory"}


def _empty_alpha(n):
    return (np.zeros(n), np.zeros(n + 1, dtype=np.int64), np.zeros(0, dtype=np.int32),
            np.zeros(0))


def _seed_from_state(state, kind, codes, n_classes, U):
    """Feasible start alphas for bounds U from a previous solve's state, or None
    (with the reason) when the state does not belong to this problem."""
    if not isinstance(state, dict) or state.get("kind") != kind:
        return None, "the previous solver state is not an SDM-" + kind.upper() + " state"
    n = codes.shape[0]
    try:
        ay = np.array(state["alpha_y"], dtype=np.float64)
        ptr = np.asarray(state["a_ptr"], dtype=np.int64)
        cls = np.asarray(state["a_cls"], dtype=np.int32)
        val = np.array(state["a_val"], dtype=np.float64)
        old_codes = np.asarray(state["codes"])
    except (KeyError, TypeError, ValueError):
        return None, "the previous solver state is incomplete"
    if int(state.get("n_classes", -1)) != n_classes or old_codes.shape != (n,) \
            or not np.array_equal(old_codes, codes):
        return None, "the previous model was trained on other examples or classes"
    if ay.shape != (n,) or ptr.shape != (n + 1,) or ptr[0] != 0 or np.any(np.diff(ptr) < 0) \
            or ptr[-1] != cls.shape[0] or cls.shape != val.shape:
        return None, "the previous solver state is malformed"
    row_of = np.repeat(np.arange(n), np.diff(ptr))
    if cls.size:
        if cls.min() < 0 or cls.max() >= n_classes or np.any(cls == codes[row_of]):
            return None, "the previous solver state has a bad class index"
        order = np.lexsort((cls, row_of))
        same = (row_of[order][1:] == row_of[order][:-1]) & (cls[order][1:] == cls[order][:-1])
        if np.any(same):
            return None, "the previous solver state repeats a class within an example"
    if not (np.all(np.isfinite(val)) and np.all(np.isfinite(ay))):
        return None, "the previous solver state is not finite"
    Ui = U[row_of]
    if kind == "cs":
        if np.any(val > 0):
            return None, "the previous solver state is not Crammer-Singer feasible"
        # scale the examples whose alpha^{y_i} exceeds the new bound U_i (alpha^{y_i} is
        # taken as stored: recomputing it as -sum of the others would move the ones
        # sitting exactly at their bound by a rounding error and unshrink them)
        if np.any(ay < 0) or np.any(np.abs(ay + np.bincount(row_of, weights=val, minlength=n))
                                    > 1e-9 * (1.0 + np.abs(ay))):
            return None, "the previous solver state is not Crammer-Singer feasible"
        scale = np.ones(n)
        over = ay > U                        # then ay > U >= 0
        scale[over] = U[over] / ay[over]
        val = val * scale[row_of]
        ay = np.where(over, U, ay * scale)
        keep = val < 0
    else:
        if np.any(val < 0):
            return None, "the previous solver state is not Weston-Watkins feasible"
        val = np.minimum(val, Ui)
        ay = np.zeros(n)
        keep = val > 0
    counts = np.bincount(row_of[keep], minlength=n)
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    ay[U <= 0] = 0.0
    return (np.ascontiguousarray(ay), ptr, np.ascontiguousarray(cls[keep]),
            np.ascontiguousarray(val[keep])), None


def _fit(kind, problem, params, W0, state, log):
    name = "sdm-" + kind
    codes, cost = problem.codes, problem.cost
    C, tol, seed, opts = params.C, params.tol, params.seed, params.options
    k = problem.n_classes
    U = C * cost
    n = problem.n_rows
    warning = None
    start, why = (None, None) if state is None else _seed_from_state(state, kind, codes, k, U)
    if start is not None:
        warm = "alpha"
    else:
        start = _empty_alpha(n)
        warm = "none"
        if state is not None:
            warning = f"{name}: {why}; starting from alpha = 0"
            warm = "state rejected"
        elif W0 is not None:
            warning = (f"{name} is a dual method and cannot start from weights alone (no dual "
                       "state: the model was loaded from a file or trained by another solver); "
                       "starting from alpha = 0")
            warm = "weights ignored"
    if problem.comm is not None:
        return _fit_cocoa(kind, problem, params, start, warm, warning, log)
    ay, ptr, cls, val = start

    callback = None
    if log is not None:
        def callback(phase, n_full, eps_cur, vmax, f, eff):
            what = ("full loop", "  shrunk ", "  check  ")[phase]
            log(f"{name} {what} {n_full:4d}  eps {eps_cur:<6g} max violation {vmax:.4g}  "
                f"dual {-f:.10g}  effective loops {eff:.2f}")

    # the paper's stop (max violation <= eps) is accepted once the duality gap also
    # certifies 1% (GAP_GUARD); else the solve continues from its alphas at a smaller eps
    eps, loops, trace = tol, 0, []
    while True:
        st = _sdm.sdm_solve(problem.view, y=codes, n_classes=k, U=U,
                            weston_watkins=kind == "ww", alphas=(ay, ptr, cls, val),
                            callback=callback, tol=eps, shrinking=opts["shrinking"],
                            cooling=opts["cooling"], effort_cap=opts["effort_cap"],
                            max_iter=opts["max_iter"] - loops, seed=seed & 0xFFFFFFFFFFFFFFFF,
                            subproblem=opts["subproblem"])
        loops += int(st["n_full"])
        trace.extend(st["trace"])
        rel_gap = relative_gap(st["primal"], st["dual"])
        if st["status"] != 0 or rel_gap <= GAP_GUARD or eps <= GAP_GUARD_MIN_EPS \
                or loops >= opts["max_iter"]:
            break
        again, _ = _seed_from_state({"kind": kind, "n_classes": k, "codes": codes, "C": C,
                                     "alpha_y": st["alpha_y"] if kind == "cs" else np.zeros(n),
                                     "a_ptr": st["a_ptr"], "a_cls": st["a_cls"],
                                     "a_val": st["a_val"]}, kind, codes, k, U)
        if again is None:
            break
        if log is not None:
            log(f"{name}: max violation <= {eps:g} but the duality gap is {rel_gap:.3g} of the "
                f"objective (> {GAP_GUARD:g}): continuing at eps "
                f"{eps * gap_guard_shrink(rel_gap):g}")
        ay, ptr, cls, val = again
        eps *= gap_guard_shrink(rel_gap)
    stats = {
        "objective": st["primal"],
        "dual_objective": st["dual"],
        "duality_gap": st["primal"] - st["dual"],
        "n_iter": int(st["n_loops"]),
        "n_full_loops": loops,
        "effective_loops": float(st["effective_loops"]),
        "kkt_violation": float(st["max_violation"]),
        "n_nonzero": int(st["n_nonzero"]),
        "subproblem_caps": int(st["subproblem_caps"]),
        "status": _STATUS[st["status"]],
        "warm_start": warm,
        "trace": [dict(phase=("full", "shrunk", "check")[int(r[0])], eps=r[1], max_violation=r[2],
                       dual=-r[3], seconds=r[4], effective_loops=r[5], loops=int(r[6]))
                  for r in trace],
    }
    stats["final_eps"] = eps
    converged = True
    if st["status"] == 1 or rel_gap > GAP_GUARD:
        converged = False
        warning = (f"{name} stopped at the full-loop cap (max_iter={opts['max_iter']}) with "
                   f"max violation {st['max_violation']:.3g} (eps {eps:g}) and relative duality "
                   f"gap {rel_gap:.3g}: raise --max-iter or loosen -e")
        if st["status"] != 1:
            warning = (f"{name} stopped at max violation {st['max_violation']:.3g} <= eps {eps:g} "
                       f"with a relative duality gap of {rel_gap:.3g} > {GAP_GUARD:g}")
    return FitResult(st["W"], stats, warning=warning, converged=converged,
                     state={"kind": kind, "n_classes": k, "codes": codes.copy(), "C": C,
                            "alpha_y": st["alpha_y"].copy() if kind == "cs" else np.zeros(n),
                            "a_ptr": st["a_ptr"], "a_cls": st["a_cls"], "a_val": st["a_val"]})


def _local_W(kind, problem, alphas):
    """W(alpha) of this block's alphas (eq. 3 for CS, eq. 15 for WW): n_weights x k."""
    ay, ptr, cls, val = alphas
    X, rows, codes, k = problem.X, problem.rows, problem.codes, problem.n_classes
    n = rows.shape[0]
    W = np.zeros((problem.n_weights, k))
    if n == 0 or (not np.any(val) and not np.any(ay)):
        return W
    # scipy only for a seeded start: the ranks of a cold start do not pay for its import
    import scipy.sparse as sp

    row_of = np.repeat(np.arange(n), np.diff(ptr))
    if kind == "cs":
        coef = (np.concatenate([val, ay]), np.concatenate([row_of, np.arange(n)]),
                np.concatenate([cls, codes]))
    else:
        coef = (np.concatenate([-val, np.bincount(row_of, weights=val, minlength=n)]),
                np.concatenate([row_of, np.arange(n)]), np.concatenate([cls, codes]))
    B = sp.csr_matrix((coef[0], (coef[1], coef[2])), shape=(n, k))   # duplicates add up
    # the block's rows with float64 values (a pattern's ones, for these rows only)
    Xs = to_scipy(with_layout(take_rows(X, rows), "float64"))
    W[:X.n_features] = (Xs.T @ B).toarray()
    if problem.bias > 0:
        W[X.n_features] = problem.bias * np.asarray(B.sum(axis=0)).ravel()
    return W


class _SdmBlock:
    """This rank's SDM local passes (linsvm.solvers.cocoa): its alphas and work arrays."""

    def __init__(self, kind, problem, params, alphas, sigma):
        opts = params.options
        self.view, self.sigma, self.epochs = problem.view, float(sigma), opts["local_epochs"]
        self.args = dict(y=problem.codes, n_classes=problem.n_classes,
                         U=params.C * problem.cost, weston_watkins=kind == "ww",
                         shrinking=opts["shrinking"], effort_cap=opts["effort_cap"],
                         subproblem=opts["subproblem"])
        self.rng = np.array([rank_seed(params.seed, problem.comm.rank)], dtype=np.uint64)
        self.V = np.zeros((problem.n_weights, problem.n_classes))
        self.alphas = alphas
        # the closed-form alphas (U_i = 0, x_i = 0) once: a pass without loops
        self._pass(self.V, 1.0, 0)
        self.prev = self.alphas

    def _pass(self, W, eps, loops):
        ay, ptr, cls, val = self.alphas
        st = _sdm.sdm_local_pass(self.view, **self.args, alphas=(ay.copy(), ptr, cls, val), W=W,
                                 V=self.V, sigma=self.sigma, rng=self.rng, tol=eps,
                                 local_epochs=loops)
        self.alphas = (st["alpha_y"], st["a_ptr"], st["a_cls"], st["a_val"])
        return st

    def run(self, w, eps):
        """One local pass from (w, alpha): cocoa_rounds' contract."""
        self.prev = self.alphas
        try:
            st = self._pass(w, eps, self.epochs)
        except MemoryError as exc:      # reported through the allreduce: every rank stops
            return self.V, 0.0, 0.0, False, exc, 0
        return self.V, st["loss"], st["dual"], st["status"] == 0, st["stopped"], st["n_full"]

    def revert(self):
        """Back to the alphas the last pass started from."""
        self.alphas = self.prev


def _fit_cocoa(kind, problem, params, start, warm, warning, log):
    """_fit on several MPI ranks: CoCoA+ rounds of SDM's local passes on this rank's block
    (linsvm.solvers.cocoa), stopping on the global duality gap (P - D) / P <= min(-e,
    0.01).  With --gather-finish (the default) the rounds are judged by the hand-over
    rule (linsvm.solvers.handover) and rounds that stop paying, or that reach the cap
    uncertified, finish serially from the gathered rows and alphas
    (linsvm.solvers.gather) when rank 0 can hold them.  A seeded start is not moved
    along the ray (the serial kernel's step).  Stats as the serial solve's (n_iter:
    rounds; n_full_loops: this rank's local full loops), plus rounds and
    bytes_per_round; the state holds this rank's alphas."""
    name, coll = "sdm-" + kind, problem.comm
    # judged as dcd's rounds are (linsvm.solvers.dcd), but against the rounds spent too:
    # the finish is the serial solver from the gathered alphas, no slower than a serial
    # run, while rounds that gain little cost a serial loop's work each P of them
    # (and only when the rows fit on rank 0: else the rounds go on to the cap)
    payoff = (Payoff(cap=params["max_iter"] / coll.size, spent=True)
              if params["gather_finish"] and fits(problem, _gather_extra(problem)) else None)
    if payoff is not None and _rounds_outweigh_data(problem):
        # a round would send more than the whole data set: gather it at once
        info = {"converged": False, "handed": False, "at_once": True, "rounds": 0,
                "rel_gap": float("nan"), "primal": float("nan"), "dual": float("nan"),
                "local_loops": 0, "bytes_per_round": 0, "final_eps": params.tol, "trace": []}
        finisher, alphas = _gather_finish(kind, problem, params, start, info, log)
        if finisher is not None:
            return _cocoa_result(kind, problem, params, finisher.weights, alphas, info,
                                 finisher, warm, warning, payoff)
    block = _SdmBlock(kind, problem, params, start, coll.size)
    W0 = coll.sum(_local_W(kind, problem, block.alphas))
    W, info = cocoa_rounds(coll, block, W0, params.tol, params["max_iter"], log, name, payoff)
    alphas, finisher = block.alphas, None
    if payoff is not None and not info["converged"]:
        finisher, alphas = _gather_finish(kind, problem, params, alphas, info, log)
    return _cocoa_result(kind, problem, params, W, alphas, info, finisher, warm, warning, payoff)


def _rounds_outweigh_data(problem):
    """Whether one CoCoA+ round's allreduce (n_weights x n_classes doubles) carries more
    bytes than gathering every rank's rows once (12 per non-zero) would."""
    return 8.0 * problem.n_weights * problem.n_classes > 12.0 * total_nnz(problem)


def _cocoa_result(kind, problem, params, W, alphas, info, finisher, warm, warning, payoff):
    """The FitResult of a distributed SDM solve (see _fit_cocoa)."""
    name, coll, k = "sdm-" + kind, problem.comm, problem.n_classes
    if finisher is not None:
        W = finisher.weights
    stats = _cocoa_stats(info, finisher, warm)
    if payoff is not None and payoff.history:
        stats["gap_checks"] = [list(h) for h in payoff.history]
    converged = info["converged"] if finisher is None else finisher.converged
    if finisher is not None and not converged:
        warning = f"{name} finished serially after CoCoA+ rounds: {finisher.warning}"
    elif not converged:
        warning = (f"{name} (CoCoA+ on {coll.size} MPI ranks) stopped at the round cap "
                   f"(max_iter={params['max_iter']}) with a relative duality gap of "
                   f"{info['rel_gap']:.3g} > {target_gap(params.tol):g}: raise --max-iter or "
                   "--local-epochs, or loosen -e" + (
                       "" if payoff is None else
                       " (the rows do not fit on rank 0 for --gather-finish)"))
    ay, ptr, cls, val = alphas
    stats["n_nonzero"] = int(coll.sum(np.array([float(cls.shape[0] + (
        np.count_nonzero(ay) if kind == "cs" else 0))]))[0])
    n = problem.n_rows
    return FitResult(W, stats, warning=warning, converged=converged,
                     state={"kind": kind, "n_classes": k, "codes": problem.codes.copy(),
                            "C": params.C, "alpha_y": ay.copy() if kind == "cs" else np.zeros(n),
                            "a_ptr": ptr, "a_cls": cls, "a_val": val})


def _cocoa_stats(info, finisher, warm):
    """The stats of a distributed SDM solve (see _fit_cocoa)."""
    stats = {
        "objective": info["primal"],
        "dual_objective": info["dual"],
        "duality_gap": info["primal"] - info["dual"],
        "n_iter": int(info["rounds"]),
        "rounds": int(info["rounds"]),
        "n_full_loops": int(info["local_loops"]),
        "bytes_per_round": int(info["bytes_per_round"]),
        "status": "converged" if info["converged"] else "round cap",
        "warm_start": warm,
        "final_eps": info["final_eps"],
        "trace": info["trace"],
        "finished_by": "CoCoA+ rounds",
    }
    if finisher is not None:
        fs = finisher.stats
        stats.update(objective=fs["objective"], dual_objective=fs["dual_objective"],
                     duality_gap=fs["duality_gap"], kkt_violation=fs["kkt_violation"],
                     serial_full_loops=fs["n_full_loops"], final_eps=fs["final_eps"],
                     finished_by="serial, gathered " + (
                         "at once (a round outweighs the data)" if info.get("at_once") else
                         "after rounds stopped paying" if info["handed"] else
                         "after the round cap"),
                     status=fs["status"] + " (finished serially from the gathered alphas)")
    return stats


def _gather_extra(problem):
    """Bytes the serial finish needs beyond the gathered rows: four W-sized arrays."""
    return 8.0 * problem.n_weights * problem.n_classes * 4


def _gather_finish(kind, problem, params, alphas, info, log):
    """The serial finish of linsvm.solvers.gather from this rank's alphas: (the serial
    FitResult, this rank's share of its final alphas), or (None, alphas) when the rows
    do not fit on rank 0."""
    k = problem.n_classes
    if not fits(problem, extra_bytes=_gather_extra(problem)):
        return None, alphas
    if log is not None:
        if info.get("at_once"):
            log(f"sdm-{kind}: a CoCoA+ round would send more than the whole data set: "
                "solving serially on the gathered rows")
        else:
            why = "stopped paying" if info["handed"] else "reached the cap uncertified"
            log(f"sdm-{kind}: the CoCoA+ rounds {why} (relative gap {info['rel_gap']:.3g} "
                f"after {info['rounds']} rounds): finishing serially on the gathered rows")

    def solve(whole, parts):
        a_ptr = np.zeros(whole.n_rows + 1, dtype=np.int64)
        np.cumsum(np.concatenate([np.diff(p[1]) for p in parts]), out=a_ptr[1:])
        state = {"kind": kind, "n_classes": k, "codes": whole.codes, "C": params.C,
                 "alpha_y": np.concatenate([p[0] for p in parts]), "a_ptr": a_ptr,
                 "a_cls": np.concatenate([p[2] for p in parts]),
                 "a_val": np.concatenate([p[3] for p in parts])}
        return _fit(kind, whole, params, None, state, log)

    def share(res, lo, hi):
        st = res.state
        p0, p1 = int(st["a_ptr"][lo]), int(st["a_ptr"][hi])
        return (np.array(st["alpha_y"][lo:hi]), st["a_ptr"][lo:hi + 1] - p0,
                np.array(st["a_cls"][p0:p1]), np.array(st["a_val"][p0:p1]))

    return finish_on_root(problem, alphas, solve, share)


def fit_sdm_cs(problem, params, start, state, log):
    """Train a Crammer-Singer multi-class SVM by SDM (paper Section 2, Algorithm 2.1).

    Minimizes 1/2 sum_m ||w_m||^2 + C sum_i c_i xi_i subject to
    (w_{y_i} - w_m).x_i >= e_i^m - xi_i (eq. 1) through its dual (eq. 4).  See
    linsvm.solvers for the contract.  The weights W are n_weights x n_classes;
    stats hold objective (eq. 1), dual_objective (-f of eq. 4), duality_gap,
    kkt_violation (max v_i of eq. 6 over the last full loop, < tol when
    converged), n_iter (all loops), n_full_loops, effective_loops (g evaluations
    / (k l)), n_nonzero alphas, status and trace; the state is the non-zero
    alphas, for alpha-seeding.  On several MPI ranks (problem.comm set) it runs
    CoCoA+ (module notes) and -e is a relative duality gap (P - D) / P <=
    min(eps, 0.01) over all ranks.
    """
    return _fit("cs", problem, params, start, state, log)


def fit_sdm_ww(problem, params, start, state, log):
    """Train a Weston-Watkins multi-class SVM by SDM (paper Section 3, Algorithm 3.1).

    Minimizes 1/2 sum_m ||w_m||^2 + C sum_i c_i sum_{m != y_i} xi_i^m subject to
    (w_{y_i} - w_m).x_i >= 1 - xi_i^m, xi_i^m >= 0 (eq. 14) through its dual
    (eq. 16).  Same contract and statistics as fit_sdm_cs, with kkt_violation the
    max v_i^m of eq. 18; on several MPI ranks the same as fit_sdm_cs's.
    """
    return _fit("ww", problem, params, start, state, log)
