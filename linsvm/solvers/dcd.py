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
stopping rule, max PG - min PG <= eps over a loop of all examples (default 0.03,
tighter than the 0.1 of [9] and LIBLINEAR, whose stop can end further from the optimum:
docs/liblinear.md, "Defaults"), guarded (a departure): a stop counts only once the
duality gap certifies the objective within 1% (P - D <= 0.01 P); otherwise
the solve continues from its alphas at a smaller eps (gap_guard_shrink; one loop cap).
The unguarded rule can stop well above the optimum, in single columns of a
one-vs-rest run above all; what the guard gains and costs is measured in
docs/benchmarks.md, "The duality-gap guard".
The compiled core is csrc/_dcd.pyx.

Both losses finish in the primal when dual coordinate descent cannot (option
`primal_fallback`, on by default; linsvm/solvers/handover.py): a solve whose gap,
judged at loops 10, 20, 40, ..., predicts no certified 1% within the loop cap, or that
reaches the cap or stops without certifying 1%, continues from its w with the exact
primal solver of the same objective -- mfn-l1 (l1, Huber continuation with a certified
gap) or mfn (l2) -- whose dual point (alpha_k = C c_k H_tau'(1 - t_k w.x_k), resp.
2 C c_k max(0, 1 - t_k w.x_k)) gives the state and, with mfn-l1's own dual bound, the
certificate.  LIBLINEAR -s 1 does the same for l2 (after 300 loops it switches to -s 2).
Unscaled data are where the loops alone stay far from the optimum (docs/benchmarks.md,
"The dual methods' departures").

With more than two classes linsvm.train runs it one-vs-rest (one column per
class, LIBLINEAR's rule for class weights).

On several MPI ranks (problem.comm set) the solve is CoCoA+ (linsvm.solvers.cocoa):
rounds of `local_epochs` loops of this kernel on each rank's block of the examples
(its own permutations, seeded by the seed and the rank, and shrinking within a
pass), one allreduce of the change in w per round; -e then means a relative duality
gap (P - D) / P <= min(eps, 0.01) over all ranks, max_iter caps the rounds, and
--loss l2 does not fall back to mfn (use -s mfn, which runs exactly over the ranks,
for tight l2 solves).  The state holds this rank's alphas.

Warm start (alpha-seeding): the alphas of a previous solve come back as
`state`; they are scaled by C / C_previous and clipped to the new box
[0, U_i] (l1; l2 has no upper bound), and w is recomputed from them (along a
path of growing C, scaling saves loops over clipping alone: docs/benchmarks.md,
"The dual methods' departures").  Weights alone (no state) cannot seed a dual
method and are ignored with a warning.
"""
from __future__ import annotations

import numpy as np

from .. import _dcd
from .._kernels import csr_matvec
from ..problem.registry import FitResult
from .cocoa import cocoa_rounds, rank_seed, target_gap
from .gaps import GAP_GUARD, GAP_GUARD_MIN_EPS, gap_guard_shrink, relative_gap
from .gather import finish_on_root, fits
from .handover import LoopMonitor, Payoff, block_w, finish_in_primal, hinge_dual, l2_dual

_STATUS = {0: "converged", 1: "iteration cap", 2: "handed over"}
# mfn-l1's -e when it finishes an l1 solve: its default (a certified 0.1%) at dcd's
# default -e 0.1, tighter in proportion to a tighter -e.
_L1_FINISH_TOL = 1e-3


def _seed_alpha(problem, params, start, state):
    """The start alphas of a solve (alpha-seeding from `state`, see the module notes):
    (alpha, warm-start note, warning or None)."""
    t, cost, n, C, loss = problem.t, problem.cost, problem.n_rows, params.C, params["loss"]
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
    elif start is not None:
        warning = ("dcd is a dual method and cannot start from weights alone (no dual state: the "
                   "model was loaded from a file or trained by another solver); starting from alpha = 0")
        warm = "weights ignored"
    return alpha, warm, warning


def fit_dcd(problem, params, start, state, log):
    """Train a binary linear SVM by dual coordinate descent ([9], Algorithms 1 and 3).

    See linsvm.solvers for the contract and the module docstring for the objective.
    The weights are beta = (w, w_bias); stats hold objective (primal, linsvm's
    scaling), dual_objective, duality_gap, kkt_violation (max PG - min PG recomputed
    at the returned alphas: [9]'s optimality measure), n_iter (loops), n_sv, n_bound,
    status, finished_by (dcd, or mfn / mfn-l1 after a hand-over: module notes),
    gap_checks (the hand-over rule's (loop, relative gap) pairs) and trace; the state
    is the alphas, for alpha-seeding.  On several MPI ranks (problem.comm set) it runs
    CoCoA+ (module notes) and -e is a relative duality gap (P - D) / P <= min(eps,
    0.01) over all ranks.
    """
    if problem.comm is not None:
        return _fit_dcd_cocoa(problem, params, start, state, log)
    C, seed, opts = params.C, params.seed, params.options
    loss = opts["loss"]
    alpha, warm, warning = _seed_alpha(problem, params, start, state)
    monitor = LoopMonitor(problem, C, loss, opts["max_iter"]) if opts["primal_fallback"] else None
    st, eps, loops, trace = _dual_loops(problem, params, alpha, monitor, log)
    rel_gap = relative_gap(st["primal"], st["dual"])
    finisher = None
    if opts["primal_fallback"] and problem.n_rows > 0 and (st["status"] != 0
                                                          or rel_gap > GAP_GUARD):
        why = (f"the duality gap ({rel_gap:.3g}) stopped paying for its loops "
               f"({monitor.payoff.history[-1][0]} loops)" if st["status"] == 2 else
               f"no certified solution after {loops} loops")
        alpha, dual, finisher = finish_in_primal(problem, C, loss, st["w"], seed, log, why,
                                                 l1_tol=min(_L1_FINISH_TOL, 0.01 * params.tol))
        handed = st["status"] == 2
        st = _certificate(problem, params, alpha)
        # the primal point, certified by the best dual value known (w(alpha) only
        # approximates it)
        st["w"], st["primal"] = finisher.weights, finisher.stats["objective"]
        if dual is not None and dual > st["dual"]:
            st["dual"] = dual
        rel_gap = relative_gap(st["primal"], st["dual"])
        st["status"] = 0 if rel_gap <= GAP_GUARD else 1
        st["handed"] = handed
    st["n_iter"], st["trace"] = loops, trace
    stats = _stats(st, warm, eps, finisher, loss, monitor)
    converged = True
    if finisher is not None and st["status"] == 1:
        converged = False
        warning = (f"dcd --loss {loss} finished by {stats['finished_by']}: relative duality gap "
                   f"{rel_gap:.3g} > {GAP_GUARD:g} ({finisher.warning or 'it converged'})")
    elif st["status"] == 1 or rel_gap > GAP_GUARD:
        converged = False
        max_iter = opts["max_iter"]
        warning = (f"dcd stopped at the loop cap (max_iter={max_iter}) with PG "
                   f"spread {st['loop_spread']:.3g} (eps {eps:g}) and relative duality gap "
                   f"{rel_gap:.3g}; raise --max-iter or loosen -e")
        if st["status"] != 1:
            warning = (f"dcd stopped at PG spread {st['loop_spread']:.3g} <= eps {eps:g} with a "
                       f"relative duality gap of {rel_gap:.3g} > {GAP_GUARD:g} (the rule cannot "
                       "certify 1% here; scale the features?)")
    return FitResult(st["w"], stats, warning=warning, converged=converged,
                     state={"kind": "dcd", "alpha": alpha, "t": problem.t.copy(), "loss": loss,
                            "C": C})


def _dcd_args(problem, params):
    """The arguments of _dcd.dcd_solve that one solve keeps (the catalog's names)."""
    return dict(t=problem.t, c=problem.cost, C=params.C, loss=params["loss"])


def _dual_loops(problem, params, alpha, monitor, log):
    """[9]'s loops from alpha (updated in place) under the gap guard: -e is [9]'s
    PG-spread rule; its stop is accepted once the duality gap also certifies 1%
    (GAP_GUARD), else the solve continues from its alphas at a smaller eps.  `monitor`
    (a LoopMonitor or None) may stop them for a hand-over (status 2).  Returns (the
    last dcd_solve result, eps, loops, trace)."""
    opts, max_iter = params.options, params["max_iter"]
    callback = None
    if log is not None:
        def callback(it, f, spread, n_active):
            log(f"dcd loop {it:4d}  dual {-f:.10g}  PG spread {spread:.4g}  active {n_active}")
    eps, loops, trace = params.tol, 0, []
    while True:
        if monitor is not None:
            monitor.offset = loops
        st = _dcd.dcd_solve(problem.view, **_dcd_args(problem, params), alpha=alpha, tol=eps,
                            shrinking=opts["shrinking"], seed=params.seed & 0xFFFFFFFFFFFFFFFF,
                            max_iter=max_iter - loops, callback=callback, monitor=monitor)
        loops += int(st["n_iter"])
        trace.extend(st["trace"])
        rel_gap = relative_gap(st["primal"], st["dual"])
        if st["status"] != 0 or rel_gap <= GAP_GUARD or eps <= GAP_GUARD_MIN_EPS \
                or loops >= max_iter:
            return st, eps, loops, trace
        if log is not None:
            log(f"dcd: PG spread <= {eps:g} but the duality gap is {rel_gap:.3g} of the "
                f"objective (> {GAP_GUARD:g}): continuing at eps "
                f"{eps * gap_guard_shrink(rel_gap):g}")
        eps *= gap_guard_shrink(rel_gap)


def _certificate(problem, params, alpha):
    """dcd_solve without a loop: w(alpha), the dual value, PG spread and counts at alpha."""
    return _dcd.dcd_solve(problem.view, **_dcd_args(problem, params), alpha=alpha,
                          tol=params.tol, shrinking=False, seed=0, max_iter=0, callback=None)


def _stats(st, warm, eps, finisher, loss, monitor):
    """fit_dcd's stats from the final dcd_solve result `st` (see fit_dcd)."""
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
        "finished_by": "dcd" if finisher is None else ("mfn-l1" if loss == "l1" else "mfn"),
        "trace": [dict(loop=int(r[0]), dual=-r[1], pg_spread=r[2], seconds=r[3], active=int(r[4]))
                  for r in st["trace"]],
    }
    stats["final_eps"] = eps
    if monitor is not None and monitor.payoff.history:
        stats["gap_checks"] = [list(h) for h in monitor.payoff.history]
    if finisher is not None:
        stats["mfn_iter"] = int(finisher.stats["n_iter"])
        how = "handed over" if st["handed"] else "finished"
        stats["status"] = (f"converged ({how} to {stats['finished_by']})" if st["status"] == 0
                           else f"not certified ({how} to {stats['finished_by']})")
    return stats


class _DcdBlock:
    """This rank's dcd local passes (linsvm.solvers.cocoa): its alphas and work arrays."""

    def __init__(self, problem, params, alpha, sigma):
        self.params = params
        self.local = _dcd.dcd_local_setup(problem.view, t=problem.t, c=problem.cost, C=params.C,
                                          loss=params["loss"], sigma=float(sigma), alpha=alpha)
        self.alpha = alpha
        self.U, self.Dg, self.index = self.local.U, self.local.Dg, self.local.index
        self.n_total = self.local.n_total
        self.prev = alpha.copy()
        self.v = np.empty(problem.n_weights)
        self.rng = np.array([rank_seed(params.seed, problem.comm.rank)], dtype=np.uint64)

    def run(self, w, eps):
        """One local pass from (w, alpha): cocoa_rounds' contract."""
        self.prev[:] = self.alpha
        st = _dcd.dcd_local_pass(self.local, w=w, v=self.v, tol=eps,
                                 shrinking=self.params["shrinking"], rng=self.rng,
                                 local_epochs=self.params["local_epochs"])
        return self.v, st["loss"], st["dual"], st["status"] == 0, st["stopped"], st["n_iter"]

    def revert(self):
        """Back to the alphas the last pass started from."""
        self.alpha[:] = self.prev


def _fit_dcd_cocoa(problem, params, start, state, log):
    """fit_dcd on several MPI ranks: CoCoA+ rounds of dcd's local passes on this rank's
    block (linsvm.solvers.cocoa), stopping on the global duality gap (P - D) / P <=
    min(-e, 0.01).  With --primal-fallback (the default) the rounds are judged by the
    hand-over rule at rounds 10, 20, 40, ... (linsvm.solvers.handover) and a solve
    whose rounds stop paying, or that reaches the round cap uncertified, finishes as
    the serial one does, with mfn-l1 / mfn over the same row blocks, from its w.  Same
    result and stats as fit_dcd (n_iter: rounds; local_loops: this rank's loops),
    plus rounds, bytes_per_round and the state of this rank's alphas."""
    coll, t = problem.comm, problem.t
    C, loss, fallback = params.C, params["loss"], params["primal_fallback"]
    alpha, warm, warning = _seed_alpha(problem, params, start, state)
    block = _DcdBlock(problem, params, alpha, coll.size)
    w0 = coll.sum(block_w(problem, alpha * t))
    # a CoCoA+ round on K ranks gains about 1/K of a serial loop (sigma' = K): the rule
    # judges the rounds against max_iter / K, the serial loops they stand for, and against
    # the rounds spent when the finish cannot be slow: mfn for the squared hinge, or for
    # the hinge the serial solver on the gathered rows (mfn-l1 over the row blocks can be:
    # docs/audit.md, "dcd's hand-over")
    gather = fallback and loss == "l1" and fits(problem, 32.0 * problem.n_weights)
    payoff = (Payoff(cap=params["max_iter"] / coll.size, spent=gather or loss == "l2")
              if fallback else None)
    w, info = cocoa_rounds(coll, block, w0, params.tol, params["max_iter"], log, "dcd", payoff)
    alpha = block.alpha
    primal, dual, finisher = info["primal"], info["dual"], None
    if gather and not info["converged"]:
        finisher, alpha = _gathered_finish(problem, params, alpha, info, log)
        w, primal = finisher.weights, finisher.stats["objective"]
        dual = max(hinge_dual(problem, alpha), finisher.stats["dual_objective"])
    elif fallback and not info["converged"]:
        why = (f"the duality gap ({info['rel_gap']:.3g}) stopped paying for its CoCoA+ rounds "
               f"({info['rounds']} rounds)" if info["handed"] else
               f"no certified solution after {info['rounds']} rounds")
        alpha, _, finisher = finish_in_primal(problem, C, loss, w, params.seed, log, why,
                                              l1_tol=min(_L1_FINISH_TOL, 0.01 * params.tol))
        # the primal point certified by the dual value of the alphas returned with it
        w, primal = finisher.weights, finisher.stats["objective"]
        dual = l2_dual(problem, C, alpha) if loss == "l2" else hinge_dual(problem, alpha)
    rel_gap = relative_gap(primal, dual)
    converged = rel_gap <= target_gap(params.tol)
    spread, counts = _block_optimality(problem, block, alpha, w)
    by = ("dcd, serial on the gathered rows" if gather else "mfn-l1" if loss == "l1"
          else "mfn")
    if not converged:
        cap = f"the round cap (max_iter={params['max_iter']})"
        warning = (f"dcd --loss {loss} (CoCoA+ on {coll.size} MPI ranks) finished by "
                   f"{by}: relative duality gap {rel_gap:.3g} > "
                   f"{target_gap(params.tol):g} ({finisher.warning or 'it converged'})"
                   if finisher is not None else
                   f"dcd (CoCoA+ on {coll.size} MPI ranks) stopped at {cap} with a relative "
                   f"duality gap of {rel_gap:.3g} > {target_gap(params.tol):g}: raise --max-iter "
                   "or --local-epochs, loosen -e, or turn --primal-fallback on")
    how = "" if finisher is None else (" (handed over" if info["handed"] else " (finished") + \
        f" to {by})"
    stats = {
        "objective": primal,
        "dual_objective": dual,
        "duality_gap": primal - dual,
        "kkt_violation": spread,
        "n_iter": int(info["rounds"]),
        "rounds": int(info["rounds"]),
        "local_loops": int(info["local_loops"]),
        "bytes_per_round": int(info["bytes_per_round"]),
        "n_sv": int(counts[0]),
        "n_bound": int(counts[1]),
        "status": ("converged" if converged else "not certified" if finisher is not None
                   else "round cap") + how,
        "warm_start": warm,
        "finished_by": "dcd (CoCoA+)" if finisher is None else by,
        "final_eps": info["final_eps"],
        "trace": info["trace"],
    }
    if payoff is not None and payoff.history:
        stats["gap_checks"] = [list(h) for h in payoff.history]
    if finisher is not None:
        stats["serial_loops" if gather else "mfn_iter"] = int(finisher.stats["n_iter"])
    return FitResult(w, stats, warning=warning, converged=converged,
                     state={"kind": "dcd", "alpha": alpha, "t": t.copy(), "loss": loss, "C": C})


def _gathered_finish(problem, params, alpha, info, log):
    """The serial dcd run on every rank's rows and alphas, from where the rounds left
    them, on rank 0 (linsvm.solvers.gather): (its FitResult, this rank's share of its
    final alphas) on every rank."""
    if log is not None:
        why = "stopped paying" if info["handed"] else "reached the cap uncertified"
        log(f"dcd: the CoCoA+ rounds {why} (relative gap {info['rel_gap']:.3g} after "
            f"{info['rounds']} rounds): finishing serially on the gathered rows")

    def solve(whole, parts):
        state = {"kind": "dcd", "alpha": np.concatenate(parts), "t": whole.t.copy(),
                 "loss": params["loss"], "C": params.C}
        return fit_dcd(whole, params, None, state, log)

    def share(res, lo, hi):
        return np.array(res.state["alpha"][lo:hi])

    return finish_on_root(problem, alpha, solve, share)


def _block_optimality(problem, block, alpha, w):
    """The PG spread (max PG - min PG over every rank's examples, [9]'s optimality
    measure) at (alpha, w) and the global counts of support vectors and of alphas at
    their bound: one max and one sum allreduce."""
    coll, t, n = problem.comm, problem.t, problem.n_rows
    margins = t * csr_matvec(problem.view, w) if n else np.zeros(0)
    act = block.index[:block.n_total]
    G = margins[act] - 1.0 + block.Dg[act] * alpha[act]
    PG = np.where(alpha[act] <= 0, np.minimum(G, 0), np.where(alpha[act] >= block.U[act],
                                                               np.maximum(G, 0), G))
    ext = coll.max(np.array([PG.max() if PG.size else -np.inf, -PG.min() if PG.size else -np.inf]))
    pos = problem.cost > 0
    counts = coll.sum(np.array([np.count_nonzero(alpha[pos] > 0),
                                np.count_nonzero((alpha > 0) & (alpha >= block.U) & pos)],
                               dtype=np.float64))
    return (float(ext[0] + ext[1]) if np.isfinite(ext[0]) else 0.0), counts
