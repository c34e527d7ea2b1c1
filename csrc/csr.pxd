# Shared CSR kernels of linsvm (csrc/csr.pxd), included as inline functions by every solver core.
#
# A data set is a CSR matrix X (n_rows x n_features) with int64 row pointers,
# int32 column indices and float64 values, plus an optional constant "bias"
# feature of value `bias` appended as column n_features (LIBLINEAR's -B): with
# bias > 0 a weight vector has n_features + 1 entries and
#     x_i . w = sum_j X[i, j] w[j] + bias * w[n_features].
# The bias column is never materialised.
#
# Solvers address examples through a list `rows` of row numbers (the training
# set, a fold, a random subset or an active set), so no row is ever copied.
#
# Every function here is nogil and allocation-free; matvec/rmatvec use OpenMP
# when the build has it.  Results never depend on the number of threads: X.w is
# row by row, and the scatter X^T.u splits the rows into K fixed blocks, chosen
# from the data alone (scatter_blocks), each accumulated in row order into its own
# buffer, the buffers then summed in block order -- so `-m 1` and `-m 8` give the
# same weights bit for bit.  Threads share out the blocks.

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from cython.parallel cimport prange, parallel, threadid

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    static int linsvm_max_threads(void) { return omp_get_max_threads(); }
    #else
    static int linsvm_max_threads(void) { return 1; }
    #endif
    """
    int linsvm_max_threads() noexcept nogil

cdef extern from *:
    """
    /* a hint to fetch the line at p into the cache (a loop that visits rows in random
       order asks for the next ones' data ahead of use); nothing where unsupported */
    #if defined(__GNUC__) || defined(__clang__)
    #define LINSVM_PREFETCH(p) __builtin_prefetch((const void*)(p))
    #else
    #define LINSVM_PREFETCH(p) ((void)0)
    #endif
    """
    void LINSVM_PREFETCH(const void* p) noexcept nogil


cdef inline int entry_threads(int n_threads) noexcept nogil:
    """Threads of a Python entry's kernels: n_threads, or all OpenMP threads for 0."""
    return linsvm_max_threads() if n_threads <= 0 else n_threads


ctypedef struct CSR:
    const int64_t* indptr
    const int32_t* indices
    const double* data
    int64_t n_rows
    int64_t n_features      # columns of X, not counting the bias column
    int64_t n_weights       # n_features + (bias > 0)
    double bias             # value of the constant feature, <= 0: none
    int n_threads           # threads for matvec/rmatvec (1: serial)
    double* scratch         # (max_blocks - 1) * n_weights doubles for the scatter, or NULL
    int max_blocks          # row blocks the scratch can hold (1: no scratch)
    int unit                # every stored value is exactly 1.0 (a 0/1 pattern matrix):
                            # the kernels then read only the column indices
    const double* row_scale # or every stored value of row i is row_scale[i] (binary term
                            # presence scaled to unit rows): read only the indices too, and
                            # multiply once per row; NULL: the values as stored
    int no_clear            # 1: a one-block scatter adds into its output instead of
                            # clearing it first (the caller keeps it zero wherever the
                            # rows write: csrc/cgls.pxd's weight split, O(|T_r|) not O(d))


# --------------------------------------------------------------------------- #
# Row entries: the one way a core walks a row's stored entries itself (a column copy,
# a per-class scatter, a packed record of spans).  Together with the kernels below they
# are the only code that reads X.indptr, X.indices and X.data, so a new layout of the
# values (none for a 0/1 pattern, float32) changes this file alone.
# --------------------------------------------------------------------------- #

cdef inline int64_t row_start(const CSR* X, int64_t i) noexcept nogil:
    """First entry position p of row i (its entries are row_start <= p < row_stop)."""
    return X.indptr[i]


cdef inline int64_t row_stop(const CSR* X, int64_t i) noexcept nogil:
    """One past the last entry position of row i."""
    return X.indptr[i + 1]


cdef inline int32_t entry_index(const CSR* X, int64_t p) noexcept nogil:
    """Column index of the entry at position p."""
    return X.indices[p]


cdef inline double entry_value(const CSR* X, int64_t i, int64_t p) noexcept nogil:
    """Value of the entry at position p of row i, as the kernels read it (1.0 for a
    pattern, the row's one value with row_scale)."""
    if X.row_scale != NULL:
        return X.row_scale[i]
    if X.unit:
        return 1.0
    return X.data[p]


cdef inline bint values_as_stored(const CSR* X) noexcept nogil:
    """1 if entry_value(X, i, p) is the stored value itself (neither a pattern nor row
    scales).  The idiom for a row loop that must not test the layout per entry: write its
    body once over entry_value and call it as
        if values_as_stored(X): body(X, ...)
        else: body(X, ...)
    -- in the first copy the compiler knows the layout and drops entry_value's tests."""
    return X.unit == 0 and X.row_scale == NULL


cdef inline const double* stored_values(const CSR* X) noexcept nogil:
    """The stored values, entry p's at [p], of a CSR that reads them as stored (neither a
    pattern nor row scales: DataView.csr's); NULL for one that does not (entry_value
    then).  For a loop over entries that must not test the layout per entry."""
    if X.unit or X.row_scale != NULL:
        return NULL
    return X.data


cdef inline double total_nnz(const CSR* X) noexcept nogil:
    """Stored entries of the whole matrix (a double: cost models divide by it)."""
    return <double>(X.indptr[X.n_rows] - X.indptr[0])


cdef inline void prefetch_span(const CSR* X, int64_t p) noexcept nogil:
    """Ask the cache for the entries from position p on (a loop that visits rows in
    random order, ahead of use)."""
    LINSVM_PREFETCH(&X.indices[p])
    if not X.unit and X.data != NULL:
        LINSVM_PREFETCH(&X.data[p])


cdef inline double dot_span(const int32_t* ind, const double* val, int64_t a, int64_t b,
                            const double* w, int unit) noexcept nogil:
    """sum over p in [a, b) of val[p] * w[ind[p]] (of w[ind[p]] when unit).

    Four partial sums break the chain of dependent additions (one add latency per
    non-zero with a single sum), so a row's loads can run in parallel.
    """
    cdef double s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
    cdef int64_t p = a
    if unit:
        while p + 4 <= b:
            s0 += w[ind[p]]
            s1 += w[ind[p + 1]]
            s2 += w[ind[p + 2]]
            s3 += w[ind[p + 3]]
            p += 4
        while p < b:
            s0 += w[ind[p]]
            p += 1
    else:
        while p + 4 <= b:
            s0 += val[p] * w[ind[p]]
            s1 += val[p + 1] * w[ind[p + 1]]
            s2 += val[p + 2] * w[ind[p + 2]]
            s3 += val[p + 3] * w[ind[p + 3]]
            p += 4
        while p < b:
            s0 += val[p] * w[ind[p]]
            p += 1
    return (s0 + s1) + (s2 + s3)


cdef inline double dot_row(const CSR* X, int64_t i, const double* w) noexcept nogil:
    """Return x_i . w (including the bias feature)."""
    # locals, so the compiler need not reload the struct's pointers per non-zero
    cdef const int32_t* ind = X.indices
    cdef const double* val = X.data
    cdef double s
    if X.row_scale != NULL:
        s = X.row_scale[i] * dot_span(ind, val, X.indptr[i], X.indptr[i + 1], w, 1)
    else:
        s = dot_span(ind, val, X.indptr[i], X.indptr[i + 1], w, X.unit)
    if X.bias > 0:
        s += X.bias * w[X.n_features]
    return s


cdef inline void axpy_span(const int32_t* ind, const double* val, int64_t a, int64_t b,
                           double s, double* out, int unit) noexcept nogil:
    """out[ind[p]] += s * val[p] (+= s when unit) for p in [a, b): the scatter of one
    row's span (the bias feature is the caller's).

    Unrolled by four like dot_span: the scatter's loop control costs as much as its
    body on short rows.  Column indices within a row are distinct, so the four
    updates of a group never touch one entry twice and their order is immaterial.
    """
    cdef int64_t p = a
    if unit:
        while p + 4 <= b:
            out[ind[p]] += s
            out[ind[p + 1]] += s
            out[ind[p + 2]] += s
            out[ind[p + 3]] += s
            p += 4
        while p < b:
            out[ind[p]] += s
            p += 1
    else:
        while p + 4 <= b:
            out[ind[p]] += s * val[p]
            out[ind[p + 1]] += s * val[p + 1]
            out[ind[p + 2]] += s * val[p + 2]
            out[ind[p + 3]] += s * val[p + 3]
            p += 4
        while p < b:
            out[ind[p]] += s * val[p]
            p += 1


cdef inline void axpy_row(const CSR* X, int64_t i, double a, double* out) noexcept nogil:
    """out += a * x_i (including the bias feature)."""
    if X.row_scale != NULL:
        axpy_span(X.indices, X.data, X.indptr[i], X.indptr[i + 1], a * X.row_scale[i], out, 1)
    else:
        axpy_span(X.indices, X.data, X.indptr[i], X.indptr[i + 1], a, out, X.unit)
    if X.bias > 0:
        out[X.n_features] += a * X.bias


cdef inline double dot_row_span(const CSR* X, int64_t lo, int64_t hi,
                                const double* w) noexcept nogil:
    """x . w for the row whose non-zeros are [lo, hi), the bias feature included: the dual
    coordinate solvers' packed records keep each row's span (X.row_scale must be NULL)."""
    cdef double s = dot_span(X.indices, X.data, lo, hi, w, X.unit)
    if X.bias > 0:
        s += X.bias * w[X.n_features]
    return s


cdef inline void axpy_row_span(const CSR* X, int64_t lo, int64_t hi, double a,
                               double* out) noexcept nogil:
    """out += a x for the row whose non-zeros are [lo, hi), the bias feature included (as
    dot_row_span)."""
    axpy_span(X.indices, X.data, lo, hi, a, out, X.unit)
    if X.bias > 0:
        out[X.n_features] += a * X.bias


cdef inline double sq_norm_row(const CSR* X, int64_t i) noexcept nogil:
    """Return ||x_i||^2 (including the bias feature)."""
    cdef int64_t p
    cdef double s = 0.0
    if X.row_scale != NULL:
        s = (X.indptr[i + 1] - X.indptr[i]) * X.row_scale[i] * X.row_scale[i]
    else:
        for p in range(X.indptr[i], X.indptr[i + 1]):
            s += X.data[p] * X.data[p]
    if X.bias > 0:
        s += X.bias * X.bias
    return s


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


cdef inline void axpy_row_sq(const CSR* X, int64_t i, double a, double* out) noexcept nogil:
    """out += a * x_i**2 elementwise (including the bias feature)."""
    cdef const int32_t* ind = X.indices
    cdef const double* val = X.data
    cdef int64_t p, end = X.indptr[i + 1]
    cdef double sa = a
    if X.unit or X.row_scale != NULL:
        if X.row_scale != NULL:
            sa = a * X.row_scale[i] * X.row_scale[i]
        for p in range(X.indptr[i], end):
            out[ind[p]] += sa
        if X.bias > 0:
            out[X.n_features] += a * X.bias * X.bias
        return
    for p in range(X.indptr[i], end):
        out[ind[p]] += a * val[p] * val[p]
    if X.bias > 0:
        out[X.n_features] += a * X.bias * X.bias


# --------------------------------------------------------------------------- #
# The scatter X^T u in fixed row blocks
#
# A scatter over n rows with z non-zeros moves about B z bytes (B = 12: an int32
# index and a float64 value per non-zero, 4 when every value is 1).  Splitting the
# rows into K blocks, each accumulated into its own n_weights-vector, costs about
# 24 bytes per weight and extra block (zero the buffer, read it, add it in).  K is
# the largest count that keeps this under an eighth of the pass,
#     K = 1 + floor(12 z / (192 n_weights)),   K <= 64,  K <= n / 64,
# taken at B = 12 for pattern rows too (there it costs up to 3/8 of their cheaper
# pass), so that the pattern kernels give the general ones' bits.  K depends on the
# data's shape alone: the threads only share out the blocks, and
# out_j = ((acc_0j + acc_1j) + acc_2j) + ... in block order whatever their number.
# --------------------------------------------------------------------------- #

cdef enum:
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
    """K for a scatter over n of X's rows, their non-zeros estimated from the average row."""
    cdef double nnz
    cdef int k
    if X.max_blocks <= 1 or n < SCATTER_MIN_ROWS:
        return 1
    nnz = (<double>(X.indptr[X.n_rows] - X.indptr[0]) / X.n_rows) * n
    k = blocks_for(nnz, X.n_weights, 12.0, n)
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


cdef inline double dot(const double* a, const double* b, int64_t n) noexcept nogil:
    """Return a . b for dense vectors."""
    cdef int64_t j
    cdef double s = 0.0
    for j in range(n):
        s += a[j] * b[j]
    return s


cdef inline double vdot(const double[::1] a, const double[::1] b):
    """a . b of two vectors of one length, summed in index order on one thread: what the
    compiled modules' Python-level code (certificates, objectives) takes instead of
    numpy's dot, whose BLAS may split the sum over the machine's cores (the last bits
    then depend on the machine) and leave its threads spinning after it, taking
    cores from the kernels' threads (docs/threads.md, "BLAS threads")."""
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"vdot: lengths {a.shape[0]} and {b.shape[0]} differ")
    if a.shape[0] == 0:
        return 0.0
    return dot(&a[0], &b[0], a.shape[0])


cdef inline CSR make_csr(const int64_t[::1] indptr, const int32_t[::1] indices,
                         const double[::1] data, int64_t n_features, double bias,
                         int n_threads, double* scratch) noexcept nogil:
    """Fill a CSR view of validated buffers (the caller keeps them alive).  scratch:
    NULL (every scatter in one block) or scratch_doubles(indptr, n_features, bias)
    doubles, whatever n_threads is -- the blocks, and so the results, must not depend
    on it."""
    cdef CSR X
    X.indptr = &indptr[0]
    X.indices = &indices[0] if indices.shape[0] > 0 else NULL
    X.data = &data[0] if data.shape[0] > 0 else NULL
    X.n_rows = indptr.shape[0] - 1
    X.n_features = n_features
    X.bias = bias
    X.n_weights = n_features + (1 if bias > 0 else 0)
    X.n_threads = n_threads if n_threads > 0 else 1
    X.scratch = scratch
    X.max_blocks = 1
    if scratch != NULL and X.n_weights > 0:
        X.max_blocks = 1 + <int>(scratch_doubles(indptr, n_features, bias) // X.n_weights)
    X.unit = 0
    X.row_scale = NULL
    X.no_clear = 0
    return X


cdef inline int check_rows(const int64_t[::1] rows, int64_t n_rows) except -1:
    """Raise ValueError unless every entry of rows is a row number in [0, n_rows): the
    kernels index rows without bounds checks."""
    cdef int64_t k
    for k in range(rows.shape[0]):
        if rows[k] < 0 or rows[k] >= n_rows:
            raise ValueError(f"row numbers must lie in [0, {n_rows})")
    return 0


cdef inline int all_unit(const CSR* X) noexcept nogil:
    """1 if every stored value of X is exactly 1.0 (then x * 1.0 == x, so the kernels
    give bit for bit the same results reading indices only), else 0."""
    cdef int64_t p, end = X.indptr[X.n_rows]
    for p in range(X.indptr[0], end):
        if X.data[p] != 1.0:
            return 0
    return 1


cdef inline int row_scales(const CSR* X, double* scale) noexcept nogil:
    """1 if every row's stored values are one number each (binary term presence scaled to
    unit rows, say), with scale[i] that number (1.0 for an empty row); else 0 (scale
    then undefined).  Rows whose values are all exactly 1.0 make X a pattern (all_unit),
    which reads no scale at all: the caller prefers that."""
    cdef int64_t i, p
    cdef double v
    for i in range(X.n_rows):
        if X.indptr[i + 1] == X.indptr[i]:
            scale[i] = 1.0
            continue
        v = X.data[X.indptr[i]]
        for p in range(X.indptr[i] + 1, X.indptr[i + 1]):
            if X.data[p] != v:
                return 0
        scale[i] = v
    return 1


cdef inline void read_pattern(CSR* X, double* scale) noexcept nogil:
    """Let X's kernels read only its column indices where the values allow it: a 0/1
    pattern (X.unit), or one value per row (X.row_scale = scale, n_rows doubles the
    caller keeps alive; NULL: patterns only).  One pass over the values."""
    X.unit = all_unit(X)
    if not X.unit and scale != NULL and X.n_rows > 0 and row_scales(X, scale):
        X.row_scale = scale
