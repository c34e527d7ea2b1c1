# Python entry points to the shared CSR kernels of csr.pxd and the one-pass checks
# production uses before a solve: thread count discovery, a serial dot product, X[rows] @ w,
# the CSR buffer check, label scan, binary targets, finiteness.  (The wrappers that only
# tests use to check the kernels against scipy are in csrc/_testing.pyx.)
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free
import numpy as np
from csr cimport CSR, make_csr, all_unit, matvec, linsvm_max_threads, vdot as csr_vdot


def max_threads():
    """Number of OpenMP threads the kernels use by default (1 without OpenMP)."""
    return linsvm_max_threads()


def vdot(const double[::1] a, const double[::1] b):
    """a . b, summed in index order on one thread (csr.pxd vdot): the dot product of the
    solvers' Python layer, in place of numpy's BLAS, whose threads would split the sum by
    the machine's cores and then spin for about 0.1 s (docs/threads.md, "BLAS threads")."""
    return csr_vdot(a, b)


def csr_matvec(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
               int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] w,
               int n_threads=1, bint pattern=False):
    """Return X[rows] @ w (w includes the bias weight when bias > 0); pattern: read only
    the column indices when every value is 1.0, as the solvers do."""
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, n_threads, NULL)
    if pattern:
        X.unit = all_unit(&X)
    out = np.empty(rows.shape[0], dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        matvec(&X, &rows[0] if rows.shape[0] else NULL, rows.shape[0], &w[0], &o[0] if rows.shape[0] else NULL)
    return out


cdef inline int64_t first_non_finite(const double* v, int64_t n) noexcept nogil:
    """Index of the first NaN or infinity among v[0:n], or -1."""
    cdef int64_t k
    for k in range(n):
        if not (v[k] - v[k] == 0.0):            # inf - inf and nan - nan are nan
            return k
    return -1


def check_csr(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              int64_t n_features):
    """One pass over canonical CSR buffers for what the kernels index unchecked.

    Returns (code, where): (0, -1) when row pointers never decrease, every column
    index lies in [0, n_features) and every value is finite; otherwise the first
    failure, (1, row) for a decreasing row pointer, (2, k) for a column index
    out of range at stored entry k, (3, k) for a non-finite value at entry k.
    The caller has checked that indptr runs from 0 to len(data) and that
    indices and data have one length.
    """
    cdef int64_t i, k, n_rows = indptr.shape[0] - 1, nnz = data.shape[0]
    cdef int code = 0
    cdef int64_t where = -1
    with nogil:
        for i in range(n_rows):
            if indptr[i + 1] < indptr[i]:
                code = 1
                where = i
                break
        if code == 0:
            for k in range(nnz):
                if indices[k] < 0 or indices[k] >= n_features:
                    code = 2
                    where = k
                    break
        if code == 0:
            where = first_non_finite(&data[0] if nnz else NULL, nnz)
            if where >= 0:
                code = 3
    return code, where


def scan_labels(const double[::1] y, int max_distinct=64):
    """Distinct values of y in order of first appearance, in one pass.

    Returns (labels, bad): labels is a float64 array of the distinct values
    (None when there are more than max_distinct of them, so the caller falls
    back to sorting), bad the index of the first non-finite value or -1
    (labels is then None).
    """
    cdef int64_t i, n = y.shape[0], bad = -1
    cdef int j, k = 0, cap = max_distinct if max_distinct > 0 else 1, overflow = 0
    cdef double v
    cdef double* seen = <double*>malloc(cap * sizeof(double))
    if seen == NULL:
        raise MemoryError()
    try:
        with nogil:
            for i in range(n):
                v = y[i]
                if not (v - v == 0.0):
                    bad = i
                    break
                if overflow or (k > 0 and v == seen[k - 1]):
                    continue
                for j in range(k):
                    if v == seen[j]:
                        break
                else:
                    if k == cap:
                        overflow = 1        # keep scanning for non-finite values only
                        continue
                    seen[k] = v
                    k += 1
        if bad >= 0 or overflow:
            return None, bad
        return np.array([seen[j] for j in range(k)], dtype=np.float64), -1
    finally:
        free(seen)


def binary_targets(const double[::1] y, double positive):
    """Return t with t_i = +1 where y_i == positive and -1 elsewhere (one pass)."""
    cdef int64_t i, n = y.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] t = out
    with nogil:
        for i in range(n):
            t[i] = 1.0 if y[i] == positive else -1.0
    return out


def all_finite(a):
    """True if every value of the float64 array a (any shape, C-contiguous) is finite."""
    cdef const double[::1] v = a.reshape(-1)
    cdef int64_t n = v.shape[0], where
    with nogil:
        where = first_non_finite(&v[0] if n else NULL, n)
    return where < 0


def csr_scores(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
               const double[:, ::1] W, int64_t n_features, double bias,
               const int64_t[::1] rows=None):
    """Decision values of the CSR rows (all, or those `rows` lists, in its order) under
    the weight matrix W (n_weights x k): out[r, c] = sum_j x_ij W[j, c] over row i's
    stored entries with column j < n_features (the model's width: later columns are
    ignored), then + bias W[n_features, c] when bias > 0 (W's bias row).  Each sum runs
    over the row's entries in stored order, as scipy's CSR products do, so the values
    are theirs bit for bit.  rows must index the buffers' rows (the caller checked them)."""
    cdef bint every = rows is None
    cdef int64_t n = indptr.shape[0] - 1 if every else rows.shape[0], k = W.shape[1]
    cdef int64_t r, i, p, c, j
    cdef double v
    out = np.zeros((n, k), dtype=np.float64)
    cdef double[:, ::1] o = out
    with nogil:
        for r in range(n):
            i = r if every else rows[r]
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                if j < n_features:
                    v = data[p]
                    for c in range(k):
                        o[r, c] += v * W[j, c]
        if bias > 0:
            for r in range(n):
                for c in range(k):
                    o[r, c] = o[r, c] + W[n_features, c] * bias
    return out


def csr_transposed_scores(const int64_t[::1] indptr, const int32_t[::1] indices,
                          const double[::1] data, const int64_t[::1] rows,
                          const double[:, ::1] M, int64_t n_features, double bias):
    """X[rows]' M for M (len(rows) x k): out[j, c] = sum_r x_{rows[r], j} M[r, c] over the
    stored entries with column j < n_features, and, when bias > 0, one more row
    out[n_features, c] = bias sum_r M[r, c] (the bias feature's column).  rows must index
    the buffers' rows (the caller's problem checked them)."""
    cdef int64_t n = rows.shape[0], k = M.shape[1], r, i, p, c, j
    cdef double v
    out = np.zeros((n_features + (1 if bias > 0 else 0), k), dtype=np.float64)
    cdef double[:, ::1] o = out
    with nogil:
        for r in range(n):
            i = rows[r]
            for p in range(indptr[i], indptr[i + 1]):
                j = indices[p]
                if j < n_features:
                    v = data[p]
                    for c in range(k):
                        o[j, c] += v * M[r, c]
            if bias > 0:
                for c in range(k):
                    o[n_features, c] += bias * M[r, c]
    return out


def max_row_sq_norm(const int64_t[::1] indptr, const double[::1] data, const int64_t[::1] rows,
                    double bias):
    """(m, k): m = the largest ||x_r||^2 over the rows r = rows[k] (x including the bias
    feature's bias^2 when bias > 0), summed in index order; k = the first position in
    rows whose sum is not finite (it overflowed), or -1.  rows must lie in the matrix."""
    cdef int64_t p, j, r, bad = -1
    cdef double s, m = 0.0, b2 = bias * bias if bias > 0 else 0.0
    with nogil:
        for p in range(rows.shape[0]):
            r = rows[p]
            s = b2
            for j in range(indptr[r], indptr[r + 1]):
                s += data[j] * data[j]
            if not (s - s == 0.0):
                bad = p
                break
            if s > m:
                m = s
    return m, bad
