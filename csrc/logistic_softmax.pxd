# The multinomial products of softmax (csrc/_logistic.pyx, whose loss model is
# csrc/logistic_loss.pxd): the scores W'x_i of k classes per row and their scatter, and
# the operator of the Newton step's least-squares problem that cgls.pxd runs on.
#
# W is an n_weights x k array, row-major (weight j of class l at W[j k + l]); a term is
# an (example, class) pair, i-major.  The scatters follow csr_passes.pxd's: K row blocks
# chosen from the data's shape alone (mm_blocks: its rule for n_weights k accumulators),
# each accumulated in row order into its own buffer, the buffers summed in block order,
# so the results never depend on the thread count.  Rows are read through csr.pxd's
# row-entry accessors.

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from cython.parallel cimport prange
from csr cimport (CSR, VALUES_F64, VALUES_F32, row_start, row_stop, entry_index,
                  entry_value_as, value_layout, total_nnz)
from csr_passes cimport SCATTER_MAX_BLOCKS, blocks_for
from cgls cimport Operator

# ------------------------------------------------------------------ multinomial products

# Each row kernel is one loop over the row's entries through csr.pxd's entry_value_as,
# called with the layout as a constant in each branch (the idiom of csr.pxd's "Row
# entries"): each copy knows its layout, and the loop tests nothing per entry.

cdef inline void _scores_body(const CSR* X, int layout, int64_t i, const double* W, int64_t k,
                              double* out) noexcept nogil:
    cdef int64_t p, l, lo = row_start(X, i), hi = row_stop(X, i)
    cdef const double* wr
    cdef double v
    for l in range(k):
        out[l] = 0.0
    for p in range(lo, hi):
        v = entry_value_as(X, layout, i, p)
        wr = W + <int64_t>entry_index(X, p) * k
        for l in range(k):
            out[l] += v * wr[l]
    if X.bias > 0:
        wr = W + X.n_features * k
        for l in range(k):
            out[l] += X.bias * wr[l]


cdef inline void _row_scores(const CSR* X, int64_t i, const double* W, int64_t k,
                             double* out) noexcept nogil:
    """out[0:k] = W' x_i (W row-major n_weights x k; the bias feature included)."""
    cdef int lay = value_layout(X)
    if lay == VALUES_F64:
        _scores_body(X, VALUES_F64, i, W, k, out)
    elif lay == VALUES_F32:
        _scores_body(X, VALUES_F32, i, W, k, out)
    else:
        _scores_body(X, lay, i, W, k, out)


cdef inline void _scatter_body(const CSR* X, int layout, int64_t i, const double* s,
                               int64_t k, double* out, bint squared) noexcept nogil:
    cdef int64_t p, l, lo = row_start(X, i), hi = row_stop(X, i)
    cdef double* orow
    cdef double v, b = X.bias
    for p in range(lo, hi):
        v = entry_value_as(X, layout, i, p)
        if squared:
            v = v * v
        orow = out + <int64_t>entry_index(X, p) * k
        for l in range(k):
            orow[l] += v * s[l]
    if b > 0:
        orow = out + X.n_features * k
        for l in range(k):
            orow[l] += (b * b if squared else b) * s[l]


cdef inline void _row_scatter(const CSR* X, int64_t i, const double* s, int64_t k,
                              double* out) noexcept nogil:
    """out[j, :] += x_ij s[0:k] for the features j of row i (the bias feature included)."""
    cdef int lay = value_layout(X)
    if lay == VALUES_F64:
        _scatter_body(X, VALUES_F64, i, s, k, out, 0)
    elif lay == VALUES_F32:
        _scatter_body(X, VALUES_F32, i, s, k, out, 0)
    else:
        _scatter_body(X, lay, i, s, k, out, 0)


cdef inline void _row_scatter_sq(const CSR* X, int64_t i, const double* s, int64_t k,
                                 double* out) noexcept nogil:
    """out[j, :] += x_ij^2 s[0:k] (the bias feature included)."""
    cdef int lay = value_layout(X)
    if lay == VALUES_F64:
        _scatter_body(X, VALUES_F64, i, s, k, out, 1)
    elif lay == VALUES_F32:
        _scatter_body(X, VALUES_F32, i, s, k, out, 1)
    else:
        _scatter_body(X, lay, i, s, k, out, 1)


cdef inline void mm_matvec(const CSR* X, const int64_t* rows, int64_t m, const double* W, int64_t k,
                    double* out) noexcept nogil:
    """out[i, :] = W' x_{rows[i]} for i < m (row-parallel with X.n_threads)."""
    cdef int64_t i
    if X.n_threads > 1 and m > 256:
        for i in prange(m, schedule="static", num_threads=X.n_threads):
            _row_scores(X, rows[i], W, k, out + i * k)
    else:
        for i in range(m):
            _row_scores(X, rows[i], W, k, out + i * k)


cdef inline void _mm_rows(const CSR* X, const int64_t* rows, int64_t lo, int64_t hi,
                          const double* S, int64_t k, double* acc, int squared) noexcept nogil:
    """acc = sum_{lo <= i < hi} x_{rows[i]} S[i, :]' (squared: x^2), overwritten, in row order."""
    cdef int64_t i
    memset(acc, 0, X.n_weights * k * sizeof(double))
    for i in range(lo, hi):
        if squared:
            _row_scatter_sq(X, rows[i], S + i * k, k, acc)
        else:
            _row_scatter(X, rows[i], S + i * k, k, acc)


cdef inline int mm_blocks(const CSR* X, int64_t m, int64_t k) noexcept nogil:
    """Row blocks of a multinomial scatter over m of X's rows: csr_passes.pxd's rule (blocks_for)
    for n_weights k accumulators, from the data's shape alone (never the thread count)."""
    if m <= 0 or X.n_rows <= 0:
        return 1
    return blocks_for((total_nnz(X) / X.n_rows) * m,
                      X.n_weights * k, 12.0, m)     # <= SCATTER_MAX_BLOCKS


cdef inline void mm_rmatvec(const CSR* X, const int64_t* rows, int64_t m, const double* S, int64_t k,
                     double* out, double* scratch, int squared=0) noexcept nogil:
    """out = sum_i x_{rows[i]} S[i, :]' (n_weights x k, overwritten; squared: x^2), as csr_passes'
    scatter: K = mm_blocks row blocks (scratch: (K - 1) n_weights k doubles, sized for all of
    X's rows by mm_scratch_doubles; NULL: one block), each accumulated in row order, the
    threads sharing out whole blocks, summed in block order -- the same bits for every
    thread count."""
    cdef int64_t j, nwk = X.n_weights * k
    cdef int K = mm_blocks(X, m, k) if scratch != NULL else 1
    cdef int T = X.n_threads if X.n_threads < K else K
    cdef int64_t b
    if K <= 1:
        _mm_rows(X, rows, 0, m, S, k, out, squared)
        return
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            _mm_rows(X, rows, b * m // K, (b + 1) * m // K, S, k,
                     out if b == 0 else scratch + (b - 1) * nwk, squared)
    else:
        for b in range(K):
            _mm_rows(X, rows, b * m // K, (b + 1) * m // K, S, k,
                     out if b == 0 else scratch + (b - 1) * nwk, squared)
    for b in range(1, K):
        for j in range(nwk):
            out[j] += scratch[(b - 1) * nwk + j]


cdef inline int64_t mm_scratch_doubles(const CSR* X, int64_t k) noexcept nogil:
    """Doubles of scratch mm_rmatvec needs on any of X's rows: (K - 1) n_weights k."""
    return (mm_blocks(X, X.n_rows, k) - 1) * X.n_weights * k


# ------------------------------------------------------------------ the multinomial operator
#
# For cgls.pxd: A W = [M_i (X W)_i]_i, M_i = I - 1 p_i' (terms (i, l), i-major), so that
# A'CA = sum_i x_i x_i' (x) M_i' diag(c_i) M_i; with c_il = U_i p_il that is the Hessian block
# U_i (diag(p_i) - p_i p_i').  M_i' u = u - p_i (1'u).

ctypedef struct SoftOp:
    const double* P                # m x k probabilities at the Newton point
    int64_t k
    double* S                      # m x k scratch (M_i' u per row)
    double* scratch                # block accumulators of mm_rmatvec, or NULL
    double* scratch2               # as many more, for soft_apply_t_sq's second sum


cdef inline void _apply_M(const double* p, const double* v, int64_t k, double* out) noexcept nogil:
    """out = M v = v - (p.v) 1."""
    cdef int64_t l
    cdef double pv = 0.0
    for l in range(k):
        pv += p[l] * v[l]
    for l in range(k):
        out[l] = v[l] - pv


cdef inline void _apply_Mt(const double* p, const double* u, int64_t k, double* out) noexcept nogil:
    """out = M' u = u - p (1'u)."""
    cdef int64_t l
    cdef double su = 0.0
    for l in range(k):
        su += u[l]
    for l in range(k):
        out[l] = u[l] - p[l] * su


cdef inline void soft_apply(const Operator* A, const double* V, double* out) noexcept nogil:
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, k = O.k, m = A.poll_rows
    mm_matvec(A.X, A.rows, m, V, k, out)
    for i in range(m):
        _apply_M(O.P + i * k, out + i * k, k, out + i * k)


cdef inline void soft_apply_t(const Operator* A, const double* u, double* out) noexcept nogil:
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, k = O.k, m = A.poll_rows
    for i in range(m):
        _apply_Mt(O.P + i * k, u + i * k, k, O.S + i * k)
    mm_rmatvec(A.X, A.rows, m, O.S, k, out, O.scratch)


cdef inline double _soft_normal_rows(const Operator* A, const double* V, const double* c,
                                     double* q, double* u, double* S, int64_t lo, int64_t hi,
                                     double* acc) noexcept nogil:
    """soft_normal on rows lo..hi-1, in row order: q, u and acc = their part of A'Cq
    (overwritten), each row scattered while it is in cache; returns their part of q'Cq."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, l, k = O.k
    cdef double qcq = 0.0
    cdef double* qi
    cdef double* si
    memset(acc, 0, A.nw * sizeof(double))
    for i in range(lo, hi):
        qi = q + i * k
        si = S + i * k
        _row_scores(A.X, A.rows[i], V, k, qi)
        _apply_M(O.P + i * k, qi, k, qi)
        for l in range(k):
            u[i * k + l] = c[i * k + l] * qi[l]
            qcq += u[i * k + l] * qi[l]
        _apply_Mt(O.P + i * k, u + i * k, k, si)
        _row_scatter(A.X, A.rows[i], si, k, acc)
    return qcq


cdef inline void _sum_block_accs(double* out, const double* scratch, int K,
                                 int64_t nwk) noexcept nogil:
    """out += scratch block 1 + ... + block K-1, in block order."""
    cdef int b
    cdef int64_t j
    for b in range(1, K):
        for j in range(nwk):
            out[j] += scratch[(b - 1) * nwk + j]


cdef inline double soft_normal(const Operator* A, const double* V, const double* c, double* q,
                        double* u, double* h) noexcept nogil:
    """q = A V and h = A'C q in one pass over the rows (each row scattered while it is in
    cache), in mm_blocks row blocks summed in block order (threads share out whole blocks:
    the same bits for every thread count); returns q'Cq."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t m = A.poll_rows, nwk = A.nw
    cdef int K = mm_blocks(A.X, m, O.k) if O.scratch != NULL else 1
    cdef int T = A.X.n_threads if A.X.n_threads < K else K
    cdef int64_t b
    cdef double qcq = 0.0
    cdef double parts[SCATTER_MAX_BLOCKS]
    if K <= 1:
        return _soft_normal_rows(A, V, c, q, u, O.S, 0, m, h)
    if K > SCATTER_MAX_BLOCKS:
        K = SCATTER_MAX_BLOCKS
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            parts[b] = _soft_normal_rows(A, V, c, q, u, O.S, b * m // K, (b + 1) * m // K,
                                         h if b == 0 else O.scratch + (b - 1) * nwk)
    else:
        for b in range(K):
            parts[b] = _soft_normal_rows(A, V, c, q, u, O.S, b * m // K, (b + 1) * m // K,
                                         h if b == 0 else O.scratch + (b - 1) * nwk)
    _sum_block_accs(h, O.scratch, K, nwk)
    for b in range(K):
        qcq += parts[b]
    return qcq


cdef inline void _diag_weights(const double* p, const double* c, int64_t k,
                               double* out) noexcept nogil:
    """out_l = sum_a c_a (M)_al^2 = c_l (1 - p_l)^2 + p_l^2 (sum_a c_a - c_l) for one row."""
    cdef int64_t l
    cdef double cs = 0.0
    for l in range(k):
        cs += c[l]
    for l in range(k):
        out[l] = c[l] * (1.0 - p[l]) * (1.0 - p[l]) + p[l] * p[l] * (cs - c[l])


cdef inline void _soft_sq_rows(const Operator* A, const double* u, const double* c,
                               int64_t lo, int64_t hi, double* r, double* diag) noexcept nogil:
    """soft_apply_t_sq on rows lo..hi-1 in row order (r, diag overwritten with their parts)."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, k = O.k
    cdef double* sd
    memset(r, 0, A.nw * sizeof(double))
    memset(diag, 0, A.nw * sizeof(double))
    for i in range(lo, hi):
        sd = O.S + i * k
        _apply_Mt(O.P + i * k, u + i * k, k, sd)
        _row_scatter(A.X, A.rows[i], sd, k, r)
        _diag_weights(O.P + i * k, c + i * k, k, sd)
        _row_scatter_sq(A.X, A.rows[i], sd, k, diag)


cdef inline void soft_apply_t_sq(const Operator* A, const double* u, const double* c, double* r,
                          double* diag) noexcept nogil:
    """r = A'u and diag = diag(A'CA): for weight (j, l), sum_i x_ij^2 sum_a c_ia (M_i)_al^2 =
    sum_i x_ij^2 [c_il (1 - p_il)^2 + p_il^2 (sum_a c_ia - c_il)]; one pass, both scatters
    while the row is in cache, in mm_blocks row blocks as soft_normal."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t m = A.poll_rows, nwk = A.nw
    cdef int K = mm_blocks(A.X, m, O.k) if O.scratch != NULL else 1
    cdef int T = A.X.n_threads if A.X.n_threads < K else K
    cdef int64_t b
    if K <= 1:
        _soft_sq_rows(A, u, c, 0, m, r, diag)
        return
    if K > SCATTER_MAX_BLOCKS:
        K = SCATTER_MAX_BLOCKS
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            _soft_sq_rows(A, u, c, b * m // K, (b + 1) * m // K,
                          r if b == 0 else O.scratch + (b - 1) * nwk,
                          diag if b == 0 else O.scratch2 + (b - 1) * nwk)
    else:
        for b in range(K):
            _soft_sq_rows(A, u, c, b * m // K, (b + 1) * m // K,
                          r if b == 0 else O.scratch + (b - 1) * nwk,
                          diag if b == 0 else O.scratch2 + (b - 1) * nwk)
    _sum_block_accs(r, O.scratch, K, nwk)
    _sum_block_accs(diag, O.scratch2, K, nwk)


cdef inline Operator soft_operator(const CSR* X, const int64_t* rows, int64_t m, SoftOp* O) noexcept nogil:
    cdef Operator A
    A.n = m * O.k
    A.nw = X.n_weights * O.k
    A.poll_rows = m
    A.apply = soft_apply
    A.apply_t = soft_apply_t
    A.normal = soft_normal
    A.apply_t_sq = soft_apply_t_sq
    A.X = X
    A.rows = rows
    A.ctx = O
    return A
