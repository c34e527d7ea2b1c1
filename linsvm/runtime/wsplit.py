"""The weight split of a distributed finite Newton solve: who owns which weight, and
which weights each rank's rows touch (issue 29; the kernels are csrc/wsplit.pxd's).

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
no rank touches to rank j mod P.  The plan needs every rank's T_r: one gather of
4 |T_r| bytes per rank, per plan (one per Newton solve).
"""
from __future__ import annotations

import numpy as np

from .collective import gather_objects

__all__ = ["WeightSplit", "touched", "owners", "plan", "use_split", "pays"]



def touched(indptr, indices, rows, n_weights, bias_col=-1):
    """The sorted weights (int32) the given CSR rows have non-zeros in, with the bias
    column bias_col (>= 0) when there is a row."""
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
        if bias_col >= 0:
            mask[bias_col] = True
    return np.flatnonzero(mask).astype(np.int32)


def owners(sets, n_weights, n_ranks):
    """The owner of every weight (int32, module notes) from every rank's touched set."""
    cnt = np.zeros(n_weights, dtype=np.int32)
    for t in sets:
        cnt[t] += 1
    j = np.arange(n_weights, dtype=np.int64)
    pick = (j % np.maximum(cnt, 1)).astype(np.int32)
    owner = (j % n_ranks).astype(np.int32)
    seen = np.zeros(n_weights, dtype=np.int32)
    for r, t in enumerate(sets):
        owner[t[seen[t] == pick[t]]] = r
        seen[t] += 1
    return owner


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

    def __init__(self, rank, n_ranks, owner, sets):
        n_weights = owner.shape[0]
        small = owner.astype(np.int16) if n_ranks <= 32767 else owner   # a radix sort
        self.perm = np.argsort(small, kind="stable").astype(np.int64)
        self.own_cnt = np.bincount(owner, minlength=n_ranks).astype(np.int64)
        start = int(self.own_cnt[:rank].sum())
        self.own = self.perm[start:start + int(self.own_cnt[rank])].copy()
        mine = sets[rank]
        sel = mine[owner[mine] != rank].astype(np.int64)
        self.pr_idx = sel[np.argsort(small[sel], kind="stable")]
        self.pr_cnt = np.bincount(owner[self.pr_idx], minlength=n_ranks).astype(np.int64)
        parts, cnt = [], np.zeros(n_ranks, dtype=np.int64)
        for r, t in enumerate(sets):
            if r != rank:
                f = t[owner[t] == rank]
                parts.append(np.searchsorted(self.own, f).astype(np.int64))
                cnt[r] = f.shape[0]
        self.ps_pos = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)
        self.ps_cnt = cnt
        keep = owner == rank                    # own and T_r together (a mask: numpy's
        keep[mine] = True                       # union1d sorts, 20x slower at d = 5M)
        self.mine = np.flatnonzero(keep).astype(np.int64)
        self.n_touched = int(mine.shape[0])
        self.n_weights = n_weights
        n_buf = max(self.ps_pos.shape[0], self.pr_idx.shape[0], n_weights, 1)
        self.acc = np.zeros(max(self.own.shape[0], 1))
        self.sbuf = np.zeros(max(self.ps_pos.shape[0], self.pr_idx.shape[0], self.own.shape[0], 1))
        self.rbuf = np.zeros(n_buf)

    def bytes_per_iteration(self):
        """Bytes this rank sends in one CGLS iteration's two exchanges (scatter of p,
        reduction of X'Cq), its own part excluded (module notes)."""
        return 8 * (self.ps_pos.shape[0] + self.pr_idx.shape[0])


def plan(coll, indptr, indices, rows, n_weights, bias_col=-1):
    """This rank's WeightSplit over the Collective coll (every rank calls it; rows: this
    rank's rows of the solve)."""
    mine = touched(indptr, indices, rows, n_weights, bias_col)
    sets = gather_objects(coll, mine, nbytes=4 * mine.shape[0])
    return WeightSplit(coll.rank, coll.size, owners(sets, n_weights, coll.size), sets)


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
