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
# when the build has it (rows are independent for X.w; X^T.u is a scatter and
# uses one accumulator per thread, reduced afterwards).

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


ctypedef struct CSR:
    const int64_t* indptr
    const int32_t* indices
    const double* data
    int64_t n_rows
    int64_t n_features      # columns of X, not counting the bias column
    int64_t n_weights       # n_features + (bias > 0)
    double bias             # value of the constant feature, <= 0: none
    int n_threads           # threads for matvec/rmatvec (1: serial)
    double* scratch         # n_threads * n_weights doubles for rmatvec, or NULL
    int unit                # every stored value is exactly 1.0 (a 0/1 pattern matrix):
                            # the kernels then read only the column indices


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
    cdef double s = dot_span(ind, val, X.indptr[i], X.indptr[i + 1], w, X.unit)
    if X.bias > 0:
        s += X.bias * w[X.n_features]
    return s


cdef inline void axpy_row(const CSR* X, int64_t i, double a, double* out) noexcept nogil:
    """out += a * x_i (including the bias feature).

    Unrolled by four like dot_span: the scatter's loop control costs as much as its
    body on short rows.  Column indices within a row are distinct, so the four
    updates of a group never touch one entry twice and their order is immaterial.
    """
    cdef const int32_t* ind = X.indices
    cdef const double* val = X.data
    cdef int64_t p = X.indptr[i], end = X.indptr[i + 1]
    if X.unit:
        while p + 4 <= end:
            out[ind[p]] += a
            out[ind[p + 1]] += a
            out[ind[p + 2]] += a
            out[ind[p + 3]] += a
            p += 4
        while p < end:
            out[ind[p]] += a
            p += 1
    else:
        while p + 4 <= end:
            out[ind[p]] += a * val[p]
            out[ind[p + 1]] += a * val[p + 1]
            out[ind[p + 2]] += a * val[p + 2]
            out[ind[p + 3]] += a * val[p + 3]
            p += 4
        while p < end:
            out[ind[p]] += a * val[p]
            p += 1
    if X.bias > 0:
        out[X.n_features] += a * X.bias


cdef inline double sq_norm_row(const CSR* X, int64_t i) noexcept nogil:
    """Return ||x_i||^2 (including the bias feature)."""
    cdef int64_t p
    cdef double s = 0.0
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
    if X.unit:
        for p in range(X.indptr[i], end):
            out[ind[p]] += a
        if X.bias > 0:
            out[X.n_features] += a * X.bias * X.bias
        return
    for p in range(X.indptr[i], end):
        out[ind[p]] += a * val[p] * val[p]
    if X.bias > 0:
        out[X.n_features] += a * X.bias * X.bias


cdef inline void _scatter(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                          double* out, int squared) noexcept nogil:
    """out = sum_k u[k] * x_{rows[k]} (squared: u[k] * x_{rows[k]}**2), overwritten.

    Rows with u[k] == 0 are skipped.  Parallel only when the rows carry many
    more non-zeros than the per-thread accumulators have entries, so that the
    reduction does not dominate; the summation order is fixed for a given
    thread count, so results are reproducible.
    """
    cdef int64_t k, j, nnz_est = 0
    cdef int t, T = X.n_threads
    cdef double* acc
    memset(out, 0, X.n_weights * sizeof(double))
    if T > 1 and X.scratch != NULL and n > 256:
        nnz_est = <int64_t>((<double>(X.indptr[X.n_rows] - X.indptr[0]) / (X.n_rows if X.n_rows > 0 else 1)) * n)
    if T > 1 and X.scratch != NULL and n > 256 and nnz_est > 4 * T * X.n_weights:
        memset(X.scratch, 0, T * X.n_weights * sizeof(double))
        with parallel(num_threads=T):
            acc = X.scratch + threadid() * X.n_weights
            for k in prange(n, schedule="static"):
                if u[k] != 0.0:
                    if squared:
                        axpy_row_sq(X, rows[k], u[k], acc)
                    else:
                        axpy_row(X, rows[k], u[k], acc)
        for j in prange(X.n_weights, schedule="static", num_threads=T):
            for t in range(T):
                out[j] += X.scratch[t * X.n_weights + j]
    else:
        for k in range(n):
            if u[k] != 0.0:
                if squared:
                    axpy_row_sq(X, rows[k], u[k], out)
                else:
                    axpy_row(X, rows[k], u[k], out)


cdef inline void rmatvec(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                         double* out) noexcept nogil:
    """out = sum_k u[k] * x_{rows[k]}  (X[rows]^T u; out has n_weights entries)."""
    _scatter(X, rows, n, u, out, 0)


cdef inline void col_sq_sums(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                             double* out) noexcept nogil:
    """out_j = sum_k u[k] * X[rows[k], j]^2  (the diagonal of X[rows]^T diag(u) X[rows])."""
    _scatter(X, rows, n, u, out, 1)


cdef inline double normal_matvec(const CSR* X, const int64_t* rows, int64_t n, const double* p,
                                 const double* c, double* q, double* u, double* out) noexcept nogil:
    """q[k] = x_{rows[k]} . p and out = sum_k c[k] q[k] x_{rows[k]} (X' C X p); returns q'Cq.

    Serially this is one pass over the rows: each row is read once and scattered
    while it is still in L1 (the fused Hessian-vector product of LIBLINEAR's
    l2r_l2_svc_fun::Hv), half the memory traffic of matvec followed by rmatvec.
    With threads it is matvec, then rmatvec of u = C q (u: n doubles of scratch).
    """
    cdef int64_t k
    cdef double s, a, qcq = 0.0
    if X.n_threads > 1 and n > 256:
        matvec(X, rows, n, p, q)
        for k in range(n):
            u[k] = c[k] * q[k]
            qcq += u[k] * q[k]
        rmatvec(X, rows, n, u, out)
        return qcq
    memset(out, 0, X.n_weights * sizeof(double))
    for k in range(n):
        s = dot_row(X, rows[k], p)
        q[k] = s
        a = c[k] * s
        qcq += a * s
        if a != 0.0:
            axpy_row(X, rows[k], a, out)          # the row is still in cache
    return qcq


cdef inline void rmatvec_col_sq(const CSR* X, const int64_t* rows, int64_t n, const double* u,
                                const double* c, double* out, double* diag) noexcept nogil:
    """out = X[rows]' u and diag_j = sum_k c[k] X[rows[k], j]^2, both overwritten, in one
    pass over the rows when serial (rmatvec and col_sq_sums otherwise)."""
    cdef int64_t k
    if X.n_threads > 1 and n > 256:
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


cdef inline CSR make_csr(const int64_t[::1] indptr, const int32_t[::1] indices,
                         const double[::1] data, int64_t n_features, double bias,
                         int n_threads, double* scratch) noexcept nogil:
    """Fill a CSR view of validated buffers (the caller keeps them alive)."""
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
    X.unit = 0
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
