"""CoCoA+: the dual coordinate solvers (dcd, sdm-cs, sdm-ww) on several MPI ranks.

Dual coordinate methods update one example's dual variables at a time against the
current w, so they do not distribute exactly.  CoCoA+ (Ma, Smith, Jaggi, Jordan,
Richtarik & Takac, "Adding vs. averaging in distributed primal-dual optimization",
ICML 2015; "Distributed optimization with arbitrary local solvers", 2017) runs them
in rounds.  Rank k holds the dual variables alpha_[k] of its block of examples (they
never travel) and every rank holds the same w = W(alpha), the primal point of all of
them.  In a round each rank runs local passes of the serial solver's own code on its
block's subproblem (the "adding" variant, gamma = 1, sigma' = K, K the number of ranks)

    max over the block's alphas:  sum_{i in k} (dual terms of alpha_i)
                                  - w.dw_k - sigma'/2 ||dw_k||^2,

dw_k the change of w that the block's alphas make this round: a coordinate step
sees w + sigma' dw_k in its gradient and sigma' ||x_i||^2 (the curvature of the
w part; the separable terms, e.g. the squared hinge's D_ii, unscaled) in its step.
With K = 1 this is the serial dual.  Then ONE allreduce per round adds the
blocks' changes, w <- w + sum_k dw_k, which by the choice sigma' = K can only
raise the global dual (the subproblems bound it from below).

The stop is the global duality gap.  P(w) = 1/2 ||w||^2 + sum of every block's
losses at w, D(alpha) = sum of every block's separable dual terms - 1/2 ||w||^2;
both sums are taken by each rank on its block at the round's starting (w, alpha)
while it runs its pass and travel in the same allreduce as dw (a few scalars
appended to it).  So the certificate of a round's starting point arrives with the
round's update; when it certifies, that point -- w and the alphas as they were
before the pass, which the block keeps -- is the result and the pass is dropped.

-e in distributed mode: the solve stops at the first round whose starting point has
    (P - D) / P <= min(eps, 0.01)
(the relative duality gap, a certified bound on the relative distance of the
returned objective above the optimum; 0.01 is the serial solvers' gap guard, so the
defaults certify at least what the serial solve does).  The serial stopping rules
(a PG spread, the SDM violation) are per example and do not add over ranks; inside
a pass they still end it early once the block's own subproblem meets them at eps
(shrunk when every rank's pass did so without certifying the gap).  max_iter caps the
rounds; a capped solve returns its last certified point with a warning.

Traffic per round: one allreduce of n_weights x n_columns + 4 doubles (dcd: one
column).  Each rank's pass costs `local_epochs` loops over its block plus one loop
of dot products for the certificate.  At the end dcd adds one max and one sum
allreduce (its PG spread and support-vector counts) and SDM one sum (its non-zeros).

The rounds are set by the conservative aggregation (sigma' = K) more than by the
local accuracy, so local_epochs beyond 2 buys little; the default is 2.  The dual
gains slowly near the end, so tight l2 solves are better left to mfn (exact over
ranks).  The rounds a solve takes, by local_epochs and ranks, are measured in
docs/mpi.md, "CoCoA+ rounds, measured".

When the rounds stop paying (the hand-over rule of linsvm.solvers.handover, judged at
rounds 10, 20, 40, ...) or reach the cap uncertified, dcd finishes with mfn-l1 / mfn
over the same row blocks (exact distributed Newton), and sdm-cs / sdm-ww finish with the
serial solver on the gathered rows (linsvm.solvers.gather) -- at once when one round's
W outweighs the whole data set.

Blocks that differ in their classes converge much more slowly (docs/mpi.md, "CoCoA+
rounds, measured"): byte-range splits of a sorted file give exactly such blocks;
shuffle such a file once before training.
"""
from __future__ import annotations

import numpy as np

from .._kernels import vdot
from .gaps import GAP_GUARD, relative_gap


def rank_seed(seed, rank):
    """The random state of rank `rank`'s local passes: the seed mixed with the rank."""
    return (int(seed) + 0x9E3779B97F4A7C15 * (int(rank) + 1)) & 0xFFFFFFFFFFFFFFFF


def target_gap(tol):
    """The relative duality gap a distributed solve stops at: min(tol, GAP_GUARD)."""
    return min(float(tol), GAP_GUARD)


def cocoa_rounds(coll, block, w, tol, max_rounds, log=None, name="cocoa", payoff=None):
    """Run CoCoA+ rounds (module notes) until the relative duality gap of a round's
    starting point is <= target_gap(tol), or for max_rounds rounds, or -- with a
    `payoff` (linsvm.solvers.handover.Payoff) -- until the rule judges at one of its
    checkpoints that the rounds stopped paying (info["handed"]: the caller finishes).

    coll: the Collective; w: the replicated W(alpha) of the blocks' current alphas
    (float64 array, any shape; not changed); block: this rank's local solver, with
    run(w, eps) -> (v, loss, dual, met, stopped, loops): one pass from (w, its alphas)
    on the subproblem with sigma' = coll.size, v = w + sigma' dw, loss and dual its
    block's shares of the certificate at the starting point, met whether the local
    rule held at eps, stopped the exception that stopped the pass (Ctrl-C) or None,
    loops the loops it ran; and
    revert(): back to the alphas the last pass started from.

    Returns (w, info): the certified point's w (every rank the same bits) and a dict
    with primal, dual, rel_gap, rounds, converged, final_eps, local_loops (the sum
    of the passes' loops on this rank), bytes_per_round (this rank's payload), handed
    and trace (one dict per round).  Every rank takes the same decisions: they depend
    on the allreduced certificate only."""
    K = coll.size
    target = target_gap(tol)
    eps_local = float(tol)
    w = np.array(w, dtype=np.float64)           # a private copy, updated in place
    n = w.size
    buf = np.empty(n + 4)
    rounds, loops, trace = 0, 0, []
    while True:
        v, loss, dual, met, stopped, n_loops = block.run(w, eps_local)
        loops += n_loops
        np.subtract(v.reshape(-1), w.reshape(-1), out=buf[:n])
        buf[:n] /= K                            # dw_k = (v - w) / sigma'
        buf[n:] = (loss, dual, 1.0 if met else 0.0, 1.0 if stopped is not None else 0.0)
        coll.sum(buf)
        rounds += 1
        if buf[n + 3] > 0:                      # a rank was stopped: every rank stops
            block.revert()
            raise stopped if stopped is not None else KeyboardInterrupt()
        sq = vdot(w.reshape(-1), w.reshape(-1))
        primal, dual_obj = 0.5 * sq + float(buf[n]), float(buf[n + 1]) - 0.5 * sq
        rel = relative_gap(primal, dual_obj)
        trace.append({"round": rounds - 1, "primal": primal, "dual": dual_obj, "rel_gap": rel,
                      "eps_local": eps_local, "local_met": int(buf[n + 2])})
        if log is not None:
            log(f"{name} round {rounds - 1:4d}  primal {primal:.10g}  dual {dual_obj:.10g}  "
                f"gap {rel:.3g}  local eps {eps_local:g}")
        if payoff is not None and rounds == 1:
            payoff.start(rel)
        handed = (payoff is not None and rel > target and payoff.due(rounds - 1)
                  and payoff.judge(rounds - 1, rel))
        if rel <= target or rounds >= max_rounds or handed:
            block.revert()                      # the certified point: the round's start
            return w, {"primal": primal, "dual": dual_obj, "rel_gap": rel,
                       "rounds": rounds - 1, "converged": rel <= target,
                       "final_eps": eps_local, "local_loops": loops, "handed": handed,
                       "bytes_per_round": 8 * (n + 4), "trace": trace}
        w += buf[:n].reshape(w.shape)
        if buf[n + 2] >= K:                     # every block met its rule: ask more of them
            eps_local *= 0.1
