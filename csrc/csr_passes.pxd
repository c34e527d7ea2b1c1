# The passes over many rows of csrc/csr.pxd's CSR (included as inline functions by every
# solver core): X.w row by row (matvec), the scatter X^T.u in fixed row blocks
# (rmatvec, col_sq_sums), and the fused normal mat-vec X'CX p of the Newton and CGLS
# steps.  Rows are read only through csr.pxd's row kernels (dot_row, axpy_row,
# axpy_row_sq), which read each layout of the values; the blocks are chosen from the
# data's shape alone, never from the layout, so every layout gives the same bits.
#
# OpenMP is used when the build has it.  Results never depend on the number of
# threads: X.w is row by row, and the scatter X^T.u splits the rows into K fixed
# blocks, chosen from the data alone (scatter_blocks), each accumulated in row order
# into its own buffer, the buffers then summed in block order -- so `-m 1` and `-m 8`
# give the same weights bit for bit.  Threads share out the blocks.

from libc.stdint cimport int64_t
from libc.string cimport memset
from cython.parallel cimport prange
from csr cimport CSR, dot_row, axpy_row, axpy_row_sq, total_nnz


cdef inline void matvec(const CSR* X, const int64_t* rows, int64_t n, const double* w,
                        double* out) noexcept nogil:
    """out[k] = x_{rows[k]} . w for k < n."""
    cdef int64_t k
    if X.n_threads > 1 and n > 256:
        for k in prange(n, schedule="static", num_threads=X.n_threads):
            out[k] = dot_row(X, rows[k], w)
    else:
        for k in range(n):
            out[k] = dot_row(X, rows[k], w)


# --------------------------------------------------------------------------- #
# The scatter X^T u in fixed row blocks
#
# A scatter over n rows with z non-zeros moves about B z bytes (B = 12: an int32
# index and a float64 value per non-zero; 8 with float32 values, 4 for a pattern).
# Splitting the rows into K blocks, each accumulated into its own n_weights-vector,
# costs about 24 bytes per weight and extra block (zero the buffer, read it, add it
# in).  K is the largest count that keeps this under an eighth of the pass,
#     K = 1 + floor(12 z / (192 n_weights)),   K <= 64,  K <= n / 64,
# taken at B = 12 for every layout (for a pattern it costs up to 3/8 of its cheaper
# pass), so that every layout gives the float64 kernels' bits.  K depends on the
# data's shape alone: the threads only share out the blocks, and
# out_j = ((acc_0j + acc_1j) + acc_2j) + ... in block order whatever their number.
#
# A scatter over a subset of the rows (an active set) whose rule gives K = 1 still
# takes two blocks when the scratch holds one (the whole matrix has K >= 2: no memory
# is added) and z >= n_weights / 2: one block leaves every thread but one idle, while
# the second block's clear and sum stream the weights in order, several times cheaper
# per byte than the scatter's scattered writes (on an imbalanced text set's active
# rows, 2 threads then take half the time of one block, and one thread no longer).
# --------------------------------------------------------------------------- #

cdef enum:
    SECOND_BLOCK_WEIGHTS = 2    # a second block once z >= n_weights / this
    SCATTER_MAX_BLOCKS = 64
    SCATTER_MIN_ROWS = 256      # fewer rows: one block, no threads
    SCATTER_BLOCK_ROWS = 64     # at least this many rows per block
    SUM_CHUNK = 1024            # weights summed over the blocks per step (8 KB of out)


cdef inline int blocks_for(double nnz, int64_t n_weights, double bytes_per_nnz,
                           int64_t n) noexcept nogil:
    """Row blocks K of a scatter over n rows carrying nnz non-zeros (see above)."""
    cdef double k
    if n < SCATTER_MIN_ROWS or n_weights <= 0:
        return 1
    k = 1.0 + bytes_per_nnz * nnz / (192.0 * n_weights)
    if k > SCATTER_MAX_BLOCKS:
        k = SCATTER_MAX_BLOCKS
    if k > n / SCATTER_BLOCK_ROWS:
        k = n / SCATTER_BLOCK_ROWS
    return <int>k if k >= 1.0 else 1


cdef inline int64_t scratch_doubles(const int64_t[::1] indptr, int64_t n_features,
                                    double bias) noexcept nogil:
    """Doubles of scratch a CSR over these buffers needs for its scatters on any rows:
    (K - 1) n_weights for K = the blocks of all rows (every subset needs fewer).
    Independent of the thread count."""
    cdef int64_t n = indptr.shape[0] - 1
    cdef int64_t nw = n_features + (1 if bias > 0 else 0)
    cdef int k = blocks_for(<double>(indptr[n] - indptr[0]), nw, 12.0, n)
    return (k - 1) * nw


cdef inline int scatter_blocks(const CSR* X, int64_t n) noexcept nogil:
    """K for a scatter over n of X's rows, their non-zeros estimated from the average row
    (blocks_for, at least two when the scratch allows and they are not too few: above)."""
    cdef double nnz
    cdef int k
    if X.max_blocks <= 1 or n < SCATTER_MIN_ROWS:
        return 1
    nnz = (total_nnz(X) / X.n_rows) * n
    k = blocks_for(nnz, X.n_weights, 12.0, n)
    if k < 2 and nnz * SECOND_BLOCK_WEIGHTS >= X.n_weights:     # n >= 256: room for two
        k = 2
    return k if k < X.max_blocks else X.max_blocks


cdef inline double* block_acc(const CSR* X, double* out, int64_t b) noexcept nogil:
    """Accumulator of block b: out itself for block 0, a scratch buffer for the others."""
    return out if b == 0 else X.scratch + (b - 1) * X.n_weights


cdef inline void scatter_rows(const CSR* X, const int64_t* rows, int64_t lo, int64_t hi,
                              const double* u, double* acc, int squared) noexcept nogil:
    """acc = sum_{lo <= k < hi} u[k] x_{rows[k]} (squared: u[k] x_{rows[k]}**2) in row
    order, overwritten (added to with X.no_clear); rows with u[k] == 0 are skipped."""
    cdef int64_t k
    if not X.no_clear:
        memset(acc, 0, X.n_weights * sizeof(double))
    for k in range(lo, hi):
        if u[k] != 0.0:
            if squared:
                axpy_row_sq(X, rows[k], u[k], acc)
            else:
                axpy_row(X, rows[k], u[k], acc)


cdef inline void sum_blocks(const CSR* X, int K, double* out) noexcept nogil:
    """out_j += acc_1j + ... + acc_{K-1}j, in block order for every j (threads split j)."""
    cdef int64_t nw = X.n_weights, n_chunks = (nw + SUM_CHUNK - 1) // SUM_CHUNK
    cdef int64_t ch
    cdef int T = X.n_threads
    if K <= 1:
        return
    if T > 1 and n_chunks > 1:
        for ch in prange(n_chunks, schedule="static", num_threads=T):
            _sum_chunk(X, K, out, ch)
    else:
        for ch in range(n_chunks):
            _sum_chunk(X, K, out, ch)


cdef inline void _sum_chunk(const CSR* X, int K, double* out, int64_t ch) noexcept nogil:
    cdef int64_t nw = X.n_weights, j, lo = ch * SUM_CHUNK
    cdef int64_t hi = lo + SUM_CHUNK if lo + SUM_CHUNK < nw else nw
    cdef int b
    cdef const double* acc
    for b in range(1, K):
        acc = X.scratch + (b - 1) * nw
        for j in range(lo, hi):
            out[j] += acc[j]


cdef inline void _scatter(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                          double* out, int squared) noexcept nogil:
    """out = sum_k u[k] * x_{rows[k]} (squared: u[k] * x_{rows[k]}**2), overwritten, in
    scatter_blocks(X, n) row blocks summed in block order; threads take whole blocks."""
    cdef int K = scatter_blocks(X, n)
    cdef int T = X.n_threads if X.n_threads < K else K
    cdef int64_t b
    if K == 1:
        scatter_rows(X, rows, 0, n, u, out, squared)
        return
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            scatter_rows(X, rows, b * n // K, (b + 1) * n // K, u, block_acc(X, out, b),
                         squared)
    else:
        for b in range(K):
            scatter_rows(X, rows, b * n // K, (b + 1) * n // K, u, block_acc(X, out, b),
                         squared)
    sum_blocks(X, K, out)


cdef inline void rmatvec(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                         double* out) noexcept nogil:
    """out = sum_k u[k] * x_{rows[k]}  (X[rows]^T u; out has n_weights entries)."""
    _scatter(X, rows, n, u, out, 0)


cdef inline void col_sq_sums(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                             double* out) noexcept nogil:
    """out_j = sum_k u[k] * X[rows[k], j]^2  (the diagonal of X[rows]^T diag(u) X[rows])."""
    _scatter(X, rows, n, u, out, 1)


cdef inline double fused_rows(const CSR* X, const int64_t* rows, int64_t lo, int64_t hi,
                              const double* p, const double* c, double* q,
                              double* acc) noexcept nogil:
    """For lo <= k < hi: q[k] = x_{rows[k]} . p and acc = sum_k c[k] q[k] x_{rows[k]}
    (overwritten; added to with X.no_clear), each row scattered while it is still in L1;
    returns sum_k c[k] q[k]^2."""
    cdef int64_t k
    cdef double s, a, qcq = 0.0
    if not X.no_clear:
        memset(acc, 0, X.n_weights * sizeof(double))
    for k in range(lo, hi):
        s = dot_row(X, rows[k], p)
        q[k] = s
        a = c[k] * s
        qcq += a * s
        if a != 0.0:
            axpy_row(X, rows[k], a, acc)
    return qcq


cdef inline double normal_matvec(const CSR* X, const int64_t* rows, int64_t n, const double* p,
                                 const double* c, double* q, double* u, double* out) noexcept nogil:
    """q[k] = x_{rows[k]} . p and out = sum_k c[k] q[k] x_{rows[k]} (X' C X p); returns q'Cq.

    One pass over the rows: each row is read once and scattered while it is still in
    L1 (the fused Hessian-vector product of LIBLINEAR's l2r_l2_svc_fun::Hv), half the
    memory traffic of matvec followed by rmatvec, in the scatter's row blocks (threads
    take whole blocks; q'Cq summed per block, then in block order).  With one block and
    threads it is matvec, then rmatvec of u = C q (u: n doubles of scratch); the same
    numbers, since the scatter then runs in row order.
    """
    cdef int K = scatter_blocks(X, n)
    cdef int T = X.n_threads if X.n_threads < K else K
    cdef int64_t k, b
    cdef double qcq = 0.0
    cdef double part[SCATTER_MAX_BLOCKS]
    if K == 1:
        if X.n_threads > 1 and n > SCATTER_MIN_ROWS:
            matvec(X, rows, n, p, q)
            for k in range(n):
                u[k] = c[k] * q[k]
                qcq += u[k] * q[k]
            scatter_rows(X, rows, 0, n, u, out, 0)
            return qcq
        return fused_rows(X, rows, 0, n, p, c, q, out)
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            part[b] = fused_rows(X, rows, b * n // K, (b + 1) * n // K, p, c, q,
                                 block_acc(X, out, b))
    else:
        for b in range(K):
            part[b] = fused_rows(X, rows, b * n // K, (b + 1) * n // K, p, c, q,
                                 block_acc(X, out, b))
    sum_blocks(X, K, out)
    for b in range(K):
        qcq += part[b]
    return qcq


cdef inline void rmatvec_col_sq(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                                const double* c, double* out, double* diag) noexcept nogil:
    """out = X[rows]' u and diag_j = sum_k c[k] X[rows[k], j]^2, both overwritten, in one
    pass over the rows when serial with one block (rmatvec and col_sq_sums otherwise,
    the same numbers)."""
    cdef int64_t k
    if X.n_threads > 1 or scatter_blocks(X, n) > 1:
        rmatvec(X, rows, n, u, out)
        col_sq_sums(X, rows, n, c, diag)
        return
    memset(out, 0, X.n_weights * sizeof(double))
    memset(diag, 0, X.n_weights * sizeof(double))
    for k in range(n):
        axpy_row(X, rows[k], u[k], out)
        axpy_row_sq(X, rows[k], c[k], diag)     # the same row, still in cache

