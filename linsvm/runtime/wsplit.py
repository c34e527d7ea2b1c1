"""The weight split of a distributed finite Newton solve: who owns which weight, and
which weights each rank's rows touch (the kernels are csrc/wsplit.pxd's; docs/mpi.md,
"Weight split").

With the rows split over P ranks, the allreduce arrangement (csrc/cgls.pxd) moves and
updates the whole weight vector on every rank in every CGLS iteration: 2 (P - 1) / P
x 8 d bytes per rank on a ring, whatever P.  On data with many features and few
non-zeros per row (hashed n-grams: kdd2010, url) a rank's rows touch a set T_r of
the features much smaller than d, and most features are touched by one rank only.
The split gives every weight j one owner among the ranks that touch it, and a CGLS
iteration exchanges only what is shared:

- a rank receives the direction p on T_r from the owners (the weights it owns it has);
- it sends its partial X_r'Cq on T_r to the owners, which add the contributions in
  rank order (the sum is then the same on every run, and the one a rank-ordered
  allreduce forms);
- each owner updates its weights' entries of the step, residual and direction.

So a rank sends 8 (|T_r| - |T_r and owned|) + 8 (sum over its owned weights of the
other ranks touching them) bytes per iteration (`bytes_per_iteration`), which for a
weight touched by k ranks is 2 (k - 1) x 8 bytes in all instead of about 2 P x 8.

Ownership (the same on every rank): weight j touched by the ranks R_j (in rank order)
belongs to R_j[j mod |R_j|], spreading the shared weights over their ranks; a weight
no rank touches to rank j mod P.

The plan (one per Newton solve) is decided at each weight's home rank j mod P, so that
no rank holds another's T_r (with P ranks each touching a few million hashed features,
every rank would otherwise hold P touched lists):

1. each rank sends its touched weights to their homes (an object alltoall, 4 |T_r|
   bytes sent);
2. a home, receiving from the ranks in rank order, knows R_j for each of its weights
   and so the owner; it answers each rank with the owners of the weights it sent, and
   sends each owner the pairs (weight, other rank touching it);
3. the owned lists are gathered in rank order (the layout of the final allgather of
   the weights: 8 d bytes received per rank, as the weights themselves need).

Memory per rank: O(|T_r| + d / P) for the plan's exchanges, plus the d-long
arrays every rank keeps anyway (the weight vector and that layout).
"""
from __future__ import annotations

import numpy as np

from .collective import exchange_objects, gather_objects

__all__ = ["WeightSplit", "touched", "plan", "plan_touched", "use_split", "pays"]


def touched(indptr, indices, rows, n_weights, dense=()):
    """The sorted weights (int32) the given CSR rows have non-zeros in, with the columns
    `dense` (the bias feature's, an ordinal problem's thresholds: every row has them)
    when there is a row."""
    rows = np.asarray(rows, dtype=np.int64)
    mask = np.zeros(n_weights, dtype=bool)
    if rows.shape[0]:
        starts, ends = indptr[rows], indptr[rows + 1]
        if rows.shape[0] == rows[-1] - rows[0] + 1 and np.all(np.diff(rows) == 1):
            mask[indices[starts[0]:ends[-1]]] = True
        else:
            lengths = ends - starts
            first = np.cumsum(lengths) - lengths
            pos = np.repeat(starts - first, lengths) + np.arange(int(lengths.sum()))
            mask[indices[pos]] = True
        mask[np.asarray(dense, dtype=np.int64)] = True
    return np.flatnonzero(mask).astype(np.int32)


class WeightSplit:
    """One rank's exchange plan (module notes); the arrays csrc/wsplit.pxd's Split
    record points at.

    own: the weights this rank owns (sorted); own_cnt, perm: every rank's count and
    the owned lists concatenated in rank order (the final allgather).  pr_idx, pr_cnt:
    the weights of T_r owned elsewhere, grouped by owner in rank order (received in a
    scatter of p, sent in a reduction).  ps_pos, ps_cnt: for each other rank in rank
    order, the positions in `own` of the owned weights it touches (sent in a scatter,
    received in a reduction).  mine: the owned weights and T_r together (the entries of
    the weight vectors a rank keeps valid when the Newton loop is split too).  acc, sbuf,
    rbuf: scratch."""

    def __init__(self, n_weights, touched_, own, own_cnt, perm, pr_idx, pr_cnt, ps_pos, ps_cnt):
        self.n_weights, self.n_touched = n_weights, int(touched_.shape[0])
        self.own, self.own_cnt, self.perm = own, own_cnt, perm
        self.pr_idx, self.pr_cnt, self.ps_pos, self.ps_cnt = pr_idx, pr_cnt, ps_pos, ps_cnt
        keep = np.zeros(n_weights, dtype=bool)  # own and T_r together (a mask, O(d):
        keep[own] = True                        # numpy's union1d sorts, O(d log d))
        keep[touched_] = True
        self.mine = np.flatnonzero(keep).astype(np.int64)
        self.acc = np.zeros(max(own.shape[0], 1))
        self.sbuf = np.zeros(max(ps_pos.shape[0], pr_idx.shape[0], own.shape[0], 1))
        self.rbuf = np.zeros(max(ps_pos.shape[0], pr_idx.shape[0], n_weights, 1))

    def bytes_per_iteration(self):
        """Bytes this rank sends in one CGLS iteration's two exchanges (scatter of p,
        reduction of X'Cq), its own part excluded (module notes)."""
        return 8 * (self.ps_pos.shape[0] + self.pr_idx.shape[0])


def plan(coll, indptr, indices, rows, n_weights, dense=()):
    """This rank's WeightSplit over the Collective coll (every rank calls it; rows: this
    rank's rows of the solve; dense: as for `touched`)."""
    return plan_touched(coll, touched(indptr, indices, rows, n_weights, dense), n_weights)


def _grouped(values, keys, n_ranks):
    """values split by key (0..n_ranks-1) in key order, each group in its given order;
    the group sizes; and the order (values[order] is the groups concatenated)."""
    keys = np.asarray(keys, dtype=np.int64)
    counts = np.bincount(keys, minlength=n_ranks)
    order = np.argsort(keys, kind="stable")
    return np.split(values[order], np.cumsum(counts)[:-1]), counts, order


def _home_decisions(rank, n_ranks, n_weights, got):
    """At home `rank`, from got[s] (the weights homed here that rank s touches, ascending):
    every received (weight, rank s) entry sorted by weight then rank, with its weight's
    owner (module notes: R_j[j mod |R_j|]); and the weights homed here that no rank
    touches (owned here, j mod P = rank).  Memory: O(entries received) and n_weights / P
    bytes."""
    J = np.concatenate([np.asarray(t, dtype=np.int64) for t in got])
    S = np.concatenate([np.full(t.shape[0], s, dtype=np.int64) for s, t in enumerate(got)])
    order = np.lexsort((S, J))
    J, S = J[order], S[order]
    first = np.r_[True, J[1:] != J[:-1]] if J.shape[0] else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(first)                             # each touched weight's run
    runs = np.diff(np.r_[starts, J.shape[0]])
    owner = S[starts + J[starts] % runs]                       # one per touched weight
    entry_owner = np.repeat(owner, runs)
    free = np.ones(len(range(rank, n_weights, n_ranks)), dtype=bool)
    free[J[starts] // n_ranks] = False
    untouched = rank + n_ranks * np.flatnonzero(free).astype(np.int64)
    return J, S, entry_owner, untouched


def plan_touched(coll, mine, n_weights):
    """This rank's WeightSplit from T_r = `mine` (its touched weights, ascending), decided
    at the weights' homes (module notes, steps 1-3); every rank calls it."""
    P, rank = coll.size, coll.rank
    mine = np.asarray(mine, dtype=np.int64)
    index = np.int32 if n_weights < 2 ** 31 else np.int64
    # 1. the touched weights to their homes j mod P
    parts, _, by_home = _grouped(mine, mine % P, P)
    got = exchange_objects(coll, [p.astype(index) for p in parts], nbytes=4 * mine.shape[0])
    # 2. the homes decide; each rank learns its weights' owners, each owner who else touches
    J, S, O, untouched = _home_decisions(rank, P, n_weights, got)
    del got
    replies, _, _ = _grouped(O.astype(np.int32), S, P)         # in each rank's sent order
    replies = exchange_objects(coll, replies, nbytes=4 * O.shape[0])
    owner_of = np.empty(mine.shape[0], dtype=np.int64)
    owner_of[by_home] = np.concatenate(replies)
    other = O != S
    pairs, _, _ = _grouped(np.stack([J[other], S[other]], axis=1).astype(index), O[other], P)
    recv = exchange_objects(coll, pairs, nbytes=8 * int(other.sum()))
    del J, S, O, other
    own = np.sort(np.concatenate([mine[owner_of == rank], untouched]))
    got_pairs = np.concatenate(recv).astype(np.int64)
    by_rank = np.lexsort((got_pairs[:, 0], got_pairs[:, 1]))     # by the other rank, then weight
    ps_pos = np.searchsorted(own, got_pairs[by_rank, 0]).astype(np.int64)
    ps_cnt = np.bincount(got_pairs[:, 1], minlength=P).astype(np.int64)
    elsewhere = owner_of != rank
    pr_parts, pr_cnt, _ = _grouped(mine[elsewhere], owner_of[elsewhere], P)
    # 3. every rank's owned list in rank order: the final allgather's layout
    own_cnt = np.array(gather_objects(coll, int(own.shape[0])), dtype=np.int64)
    perm = np.empty(int(own_cnt.sum()), dtype=np.int64)
    coll.allgatherv(own, perm, own_cnt)
    return WeightSplit(n_weights, mine, own, own_cnt, perm, np.concatenate(pr_parts),
                       pr_cnt.astype(np.int64), ps_pos, ps_cnt)


def use_split(setting, coll, n_weights, nnz_local):
    """Whether a distributed solve should build a weight-split plan: setting "on" /
    "off", or "auto": when the weight vector is not small beside a rank's rows, its
    8 d bytes above a quarter of the 12 nnz / P bytes of a rank's share of the non-zeros
    (the same answer on every rank: nnz is summed over the ranks; `pays` then judges
    the plan).  Never when serial (coll None)."""
    if coll is None or setting == "off":
        return False
    if setting == "on":
        return True
    (nnz,) = coll.sum_scalars(float(nnz_local))
    return 4 * 8.0 * n_weights > 12.0 * nnz / coll.size


def pays(coll, plan):
    """auto's second test, on the plan: the busiest rank's two exchanges per CGLS
    iteration send at most half of what a ring allreduce of the d + 3 doubles sends per
    rank, 2 (P - 1) / P x 8 (d + 3) bytes (the same answer on every rank)."""
    import numpy as np

    worst = coll.max(np.array([float(plan.bytes_per_iteration())]))[0]
    return worst <= 0.5 * 2 * (coll.size - 1) / coll.size * 8 * (plan.n_weights + 3)
