# The state of one SDM solve (csrc/_sdm.pyx, whose block comment has the algorithm and
# the paper's notation): its settings, the SDM record the steps share, and the per-class
# scatters over one example's row -- its scores x_i.w_m against the row-major W and the
# update of W's changed columns -- which read the row through csr.pxd's row entries --
# and the store of one example's alphas.  Included in csrc/_sdm.pyx, after
# sdm_pool.pxi.

from libc.stdint cimport int32_t, int64_t, uint64_t
from csr cimport (CSR, VALUES_F64, VALUES_F32, row_start, row_stop, entry_index, entry_value_as,
                  value_layout)
from interrupt cimport Stop

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    NO_MEMORY = 2

cdef enum:
    SUBPROBLEM_RESTRICTED = 0   # the paper's set: M_i and the alphas off their bound
    SUBPROBLEM_ALL = 1          # (10) / (21) over every class in full loops
    DENSE_RATIO = 4             # a shrunk visit over n classes computes all k scores
                                # when n DENSE_RATIO >= k (the same answer either way)

# The settings of one solve or local pass, filled once from the entry's keywords (the
# solver catalog's names, linsvm/problem/catalog.py; `subproblem` is "all" or
# "restricted" there).
ctypedef struct SdmSettings:
    int weston_watkins          # 0: Crammer-Singer (sdm-cs), 1: Weston-Watkins (sdm-ww)
    double tol                  # the paper's eps: stop when every v_i < tol
    int shrinking
    int cooling                 # eps_cur from 1 down to tol by factors of 10
    double effort_cap           # effective loops of a run of shrunk loops
    int max_iter                # full loops (a local pass: its local_epochs)
    int subproblem              # SUBPROBLEM_ALL or SUBPROBLEM_RESTRICTED
    int dense_ratio             # DENSE_RATIO
    double sigma                # W-steps scaled by sigma: 1 serial, sigma' in a CoCoA+ pass
    uint64_t seed               # the random state's start (a local pass: its rng)

ctypedef struct SDM:
    CSR X
    const int64_t* rows
    const int32_t* y
    const double* U     # U_i = C c_i
    const double* A     # A_i = sigma ||x_i||^2
    int64_t l
    int64_t k
    double* W           # n_weights x k, row-major
    double* ay          # CS: alpha_i^{y_i}
    Pool P
    double* g           # k: g_i^m (CS) / scores then g_i^m (WW)
    double* a           # k: dense alpha of the current example; 0 between examples
    char* mark          # k: membership marks; 0 between examples
    int32_t* S          # k: classes of the sub-problem
    double* gs          # k: their gradients
    double* lo          # k: lower bounds on d (WW)
    double* hi          # k: upper bounds on d
    double* ds          # k: the sub-problem's solution
    char* flag          # k: the bounds it holds
    int32_t* cm         # k + 1: columns of W that change
    double* cd          # k + 1: their coefficients (w_m += cd x_i)
    double f            # dual objective (4) / (16), kept up to date
    int64_t evals       # g_i^m evaluations so far
    int64_t sub_caps    # sub-problems stopped by their iteration cap
    int max_sub_it
    SdmSettings opt
    Stop* stop          # polled every POLL_EVERY visits (csrc/interrupt.pxd)
    int64_t polled      # evals at the last poll


# The scatters read the row's values through csr.pxd's entry_value_as.  Each public
# function below calls its body with the layout as a constant in each branch (the idiom
# of csr.pxd's "Row entries"): each copy knows its layout, and the loop tests nothing
# per entry.


cdef inline void _scores_all(SDM* s, const CSR* X, int layout, int64_t row,
                             double* h) noexcept nogil:
    cdef int64_t p, m, k = s.k, end = row_stop(X, row)
    cdef double xv
    cdef double* wr
    for m in range(k):
        h[m] = 0.0
    for p in range(row_start(X, row), end):
        xv = entry_value_as(X, layout, row, p)
        wr = s.W + <int64_t>entry_index(X, p) * k
        for m in range(k):
            h[m] += xv * wr[m]
    if X.bias > 0:
        xv = X.bias
        wr = s.W + X.n_features * k
        for m in range(k):
            h[m] += xv * wr[m]


cdef inline void scores_all(SDM* s, int64_t row, double* h) noexcept nogil:
    """h[m] = x_row . w_m for every class m."""
    cdef int lay = value_layout(&s.X)
    if lay == VALUES_F64:
        _scores_all(s, &s.X, VALUES_F64, row, h)
    elif lay == VALUES_F32:
        _scores_all(s, &s.X, VALUES_F32, row, h)
    else:
        _scores_all(s, &s.X, lay, row, h)


cdef inline void _scores_some(SDM* s, const CSR* X, int layout, int64_t row,
                              const int32_t* cls, int64_t n, double* h) noexcept nogil:
    cdef int64_t p, t, k = s.k, end = row_stop(X, row)
    cdef double xv
    cdef double* wr
    for p in range(row_start(X, row), end):
        xv = entry_value_as(X, layout, row, p)
        wr = s.W + <int64_t>entry_index(X, p) * k
        for t in range(n):
            h[t] += xv * wr[cls[t]]
    if X.bias > 0:
        xv = X.bias
        wr = s.W + X.n_features * k
        for t in range(n):
            h[t] += xv * wr[cls[t]]


cdef inline void scores_some(SDM* s, int64_t row, const int32_t* cls, int64_t n,
                             double* h) noexcept nogil:
    """h[t] += x_row . w_{cls[t]} for t < n (h holds the starting values)."""
    cdef int lay = value_layout(&s.X)
    if lay == VALUES_F64:
        _scores_some(s, &s.X, VALUES_F64, row, cls, n, h)
    elif lay == VALUES_F32:
        _scores_some(s, &s.X, VALUES_F32, row, cls, n, h)
    else:
        _scores_some(s, &s.X, lay, row, cls, n, h)


cdef inline void _update_w(SDM* s, const CSR* X, int layout, int64_t row,
                           int64_t nchg) noexcept nogil:
    cdef int64_t p, c, k = s.k, end = row_stop(X, row)
    cdef double xv
    cdef double* wr
    for p in range(row_start(X, row), end):
        xv = entry_value_as(X, layout, row, p)
        wr = s.W + <int64_t>entry_index(X, p) * k
        for c in range(nchg):
            wr[s.cm[c]] += s.cd[c] * xv
    if X.bias > 0:
        xv = X.bias
        wr = s.W + X.n_features * k
        for c in range(nchg):
            wr[s.cm[c]] += s.cd[c] * xv


cdef inline void update_w(SDM* s, int64_t row, int64_t nchg) noexcept nogil:
    """w_{cm[c]} += cd[c] x_row for c < nchg (sigma cd[c] x_row when s.opt.sigma != 1: a
    CoCoA+ local pass, sdm_local_pass; cd is scaled in place)."""
    cdef int64_t c
    if nchg == 0:
        return
    if s.opt.sigma != 1.0:
        for c in range(nchg):
            s.cd[c] = s.cd[c] * s.opt.sigma
    cdef int lay = value_layout(&s.X)
    if lay == VALUES_F64:
        _update_w(s, &s.X, VALUES_F64, row, nchg)
    elif lay == VALUES_F32:
        _update_w(s, &s.X, VALUES_F32, row, nchg)
    else:
        _update_w(s, &s.X, lay, row, nchg)


cdef int store_alphas(SDM* s, int64_t i, int64_t n, int32_t yi) noexcept nogil:
    """Rewrite example i's sparse block: its entries outside S[0:n] unchanged, then the
    members of S (other than y_i) whose new value s.a[m] is non-zero.  Clears s.mark
    and s.a for S.  -1 when the pool cannot grow."""
    cdef Pool* P = &s.P
    cdef int64_t t, e, off, cnt = P.cnt[i], keep = 0
    cdef int32_t m, need
    for t in range(n):
        s.mark[s.S[t]] = 1
    off = P.off[i]
    for e in range(cnt):
        if not s.mark[P.cls[off + e]]:
            keep += 1
    need = <int32_t>keep
    for t in range(n):
        m = s.S[t]
        if m != yi and s.a[m] != 0.0:
            need += 1
    if pool_reserve(P, i, need) != 0:
        return -1
    off = P.off[i]
    keep = 0
    for e in range(cnt):
        m = P.cls[off + e]
        if not s.mark[m]:
            P.cls[off + keep] = m
            P.val[off + keep] = P.val[off + e]
            keep += 1
    for t in range(n):
        m = s.S[t]
        if m != yi and s.a[m] != 0.0:
            P.cls[off + keep] = m
            P.val[off + keep] = s.a[m]
            keep += 1
        s.mark[m] = 0
        s.a[m] = 0.0
    P.cnt[i] = <int32_t>keep
    return 0
