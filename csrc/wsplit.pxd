# The weight split of a distributed CGLS (csrc/wsplit.pxd; the plan is built
# by linsvm/runtime/wsplit.py, whose notes give the ownership rule).
#
# Rows are split over the ranks as in the allreduce arrangement (csrc/cgls.pxd), but
# each weight j has one owner, and a rank keeps valid only the entries of the vectors
# of CGLS that it owns (beta's step, r, s, p, minv) plus the direction p on T_r, the
# weights its rows touch.  Three exchanges, all deterministic:
#
#   split_reduce(h):   h = sum over the ranks of their X_r'u, on the owned weights,
#                      added in rank order (0 + h_0 + h_1 + ... + h_{P-1}, the sum a
#                      rank-ordered allreduce forms); the entries each rank sends are
#                      those of T_r owned elsewhere.
#   split_scatter(p):  p on T_r from the owners.
#   split_gather(v):   the whole of v on every rank from the owners' entries (once per
#                      CGLS solve when the outer Newton loop keeps replicated weights,
#                      once per Newton solve when it is split too: Split.outer).
#
# split_dot gives a rank's part of a dot product over the weights (its owned entries;
# the caller sums the parts over the ranks with its other scalars).

from libc.stdint cimport int64_t
from libc.string cimport memset
from comm cimport Comm, comm_alltoallv, comm_allgatherv


ctypedef struct Split:
    const Comm* comm
    int64_t n_own                  # weights this rank owns
    const int64_t* own             # which (sorted)
    int64_t n_ps                   # owned entries other ranks touch (all ranks together)
    const int64_t* ps_pos          # their positions in own, grouped by rank in rank order
    const int64_t* ps_cnt          # how many for each rank (0 for this rank)
    int64_t n_pr                   # entries of T_r owned elsewhere
    const int64_t* pr_idx          # which, grouped by owner in rank order
    const int64_t* pr_cnt          # how many from each owner
    const int64_t* own_cnt         # every rank's n_own
    const int64_t* perm            # every rank's own, concatenated in rank order
    int64_t n_mine                 # own and T_r together
    const int64_t* mine
    int outer                      # 1: the Newton loop keeps vectors valid on mine only
                                   # (CGLS scatters its step instead of gathering it)
    double* acc                    # n_own doubles of scratch
    double* sbuf                   # max(n_ps, n_pr, n_own) doubles
    double* rbuf                   # max(n_ps, n_pr, n_weights) doubles


cdef inline void split_reduce(const Split* S, double* h) noexcept nogil:
    """h[own] <- the sum over the ranks of their h, in rank order (block comment); the
    other entries of h are left as they were."""
    cdef int64_t i, k, at = 0
    cdef int r, me = S.comm.rank
    for k in range(S.n_pr):
        S.sbuf[k] = h[S.pr_idx[k]]
    comm_alltoallv(S.comm, S.sbuf, S.pr_cnt, S.rbuf, S.ps_cnt)
    memset(S.acc, 0, S.n_own * sizeof(double))
    for r in range(S.comm.size):
        if r == me:
            for i in range(S.n_own):
                S.acc[i] += h[S.own[i]]
        else:
            for k in range(at, at + S.ps_cnt[r]):
                S.acc[S.ps_pos[k]] += S.rbuf[k]
            at += S.ps_cnt[r]
    for i in range(S.n_own):
        h[S.own[i]] = S.acc[i]


cdef inline void split_scatter(const Split* S, double* p) noexcept nogil:
    """p on this rank's T_r <- the owners' entries (block comment)."""
    cdef int64_t k
    for k in range(S.n_ps):
        S.sbuf[k] = p[S.own[S.ps_pos[k]]]
    comm_alltoallv(S.comm, S.sbuf, S.ps_cnt, S.rbuf, S.pr_cnt)
    for k in range(S.n_pr):
        p[S.pr_idx[k]] = S.rbuf[k]


cdef inline void split_gather(const Split* S, double* v) noexcept nogil:
    """v (all weights) <- the owners' entries, on every rank."""
    cdef int64_t i, k, n = 0
    cdef int r
    for i in range(S.n_own):
        S.sbuf[i] = v[S.own[i]]
    for r in range(S.comm.size):
        n += S.own_cnt[r]
    comm_allgatherv(S.comm, S.sbuf, S.n_own, S.rbuf, S.own_cnt)
    for k in range(n):
        v[S.perm[k]] = S.rbuf[k]


cdef inline double split_dot(const Split* S, const double* a, const double* b,
                             int64_t limit) noexcept nogil:
    """sum over the owned j < limit of a_j b_j (this rank's part of a . b)."""
    cdef int64_t i, j
    cdef double s = 0.0
    for i in range(S.n_own):
        j = S.own[i]
        if j < limit:
            s += a[j] * b[j]
    return s


cdef inline Split split_from(object plan, const Comm* comm, int outer=0):
    """The Split record of a linsvm.runtime.wsplit.WeightSplit (borrowed: the caller keeps
    the plan alive for the solve, its arrays being float64 / int64 and contiguous);
    outer: the caller's Newton loop is split too."""
    cdef Split S
    S.comm = comm
    S.outer = outer
    S.n_mine = plan.mine.shape[0]
    S.mine = <const int64_t*><size_t>plan.mine.ctypes.data
    S.n_own = plan.own.shape[0]
    S.own = <const int64_t*><size_t>plan.own.ctypes.data
    S.n_ps = plan.ps_pos.shape[0]
    S.ps_pos = <const int64_t*><size_t>plan.ps_pos.ctypes.data
    S.ps_cnt = <const int64_t*><size_t>plan.ps_cnt.ctypes.data
    S.n_pr = plan.pr_idx.shape[0]
    S.pr_idx = <const int64_t*><size_t>plan.pr_idx.ctypes.data
    S.pr_cnt = <const int64_t*><size_t>plan.pr_cnt.ctypes.data
    S.own_cnt = <const int64_t*><size_t>plan.own_cnt.ctypes.data
    S.perm = <const int64_t*><size_t>plan.perm.ctypes.data
    S.acc = <double*><size_t>plan.acc.ctypes.data
    S.sbuf = <double*><size_t>plan.sbuf.ctypes.data
    S.rbuf = <double*><size_t>plan.rbuf.ctypes.data
    return S
