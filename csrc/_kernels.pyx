# Python entry points to the shared CSR kernels of csr.pxd and the one-pass checks
# production uses before a solve: thread count discovery, a serial dot product, X[rows] @ w,
# the CSR buffer check, label scan, binary targets, finiteness, the chunk checks of a mapped
# binary data file.  (The wrappers that only tests use to check the kernels against scipy
# are in csrc/_testing.pyx.)
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free
import numpy as np
from csr cimport (CSR, VALUES_F64, VALUES_F32, read_pattern, linsvm_max_threads,
                  vdot as csr_vdot, row_start, row_stop, entry_index, entry_value,
                  entry_value_as, value_layout, value_t)
from csr_passes cimport matvec
from linsvm._data cimport DataView


def max_threads():
    """Number of OpenMP threads the kernels use by default (1 without OpenMP)."""
    return linsvm_max_threads()


def vdot(const double[::1] a, const double[::1] b):
    """a . b, summed in index order on one thread (csr.pxd vdot): the dot product of the
    solvers' Python layer, in place of numpy's BLAS, whose threads would split the sum by
    the machine's cores and then stay spinning, taking cores from the kernels' threads
    (docs/threads.md, "BLAS threads")."""
    return csr_vdot(a, b)


def csr_matvec(DataView data, const double[::1] w, int n_threads=1, bint pattern=False):
    """Return X[rows] @ w for the view's rows (every row when it has none; w includes
    the bias weight when the view has the bias feature); pattern: read only the column
    indices when every value is 1.0, as the solvers do."""
    cdef CSR X = data.csr(n_threads, NULL)
    cdef const int64_t[::1] rows
    if w.shape[0] < data.n_weights:
        raise ValueError(f"w has {w.shape[0]} entries, the view {data.n_weights} weights")
    rows = data.rows_array if data.rows_array is not None else np.arange(data.n, dtype=np.int64)
    if pattern:
        read_pattern(&X, NULL)          # a 0/1 pattern reads the indices only
    cdef int64_t n = rows.shape[0]
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        matvec(&X, &rows[0] if n else NULL, n, &w[0] if w.shape[0] else NULL,
               &o[0] if n else NULL)
    return out


cdef inline int64_t first_non_finite(const value_t* v, int64_t n) noexcept nogil:
    """Index of the first NaN or infinity among v[0:n], or -1."""
    cdef int64_t k
    for k in range(n):
        if not (v[k] - v[k] == 0.0):            # inf - inf and nan - nan are nan
            return k
    return -1


cdef int64_t _first_bad_value(data) except -2:
    """first_non_finite over the values of a CSR: a float64 or float32 array, or None
    (a pattern: no values, -1)."""
    cdef const double[::1] v64
    cdef const float[::1] v32
    cdef int64_t n, where
    if data is None:
        return -1
    if data.dtype == np.float32:
        v32 = data
        n = v32.shape[0]
        with nogil:
            where = first_non_finite(&v32[0] if n else <const float*>NULL, n)
        return where
    v64 = data
    n = v64.shape[0]
    with nogil:
        where = first_non_finite(&v64[0] if n else <const double*>NULL, n)
    return where


ctypedef fused index_t:
    int32_t
    int64_t


def check_csr(const int64_t[::1] indptr, const index_t[::1] indices, data,
              int64_t n_features, int32_t[::1] narrow=None):
    """One pass over CSR buffers for what the kernels index unchecked.

    data: the values, float64 or float32 (1-D, contiguous), or None for a pattern (no
    values to check).  Returns (code, where): (0, -1) when row pointers never
    decrease, every column index lies in [0, n_features) and every value is finite;
    otherwise the first failure, (1, row) for a decreasing row pointer, (2, k) for a
    column index out of range at stored entry k, (3, k) for a non-finite value at
    entry k.  The caller has checked that indptr runs from 0 to len(indices), that
    indices and data have one length, and that n_features <= 2**31 - 1.

    indices may be int32 or int64 (a scipy matrix past 2**31 non-zeros).  With int64
    indices, `narrow` (int32, one entry per index) receives each index as int32 in the
    same pass that checks it -- in range, so it fits -- which is all the conversion
    to the cores' layout costs; on a failure at entry k, narrow[k:] is undefined.
    """
    cdef int64_t i, k, n_rows = indptr.shape[0] - 1, nnz = indices.shape[0]
    cdef int code = 0
    cdef int64_t where = -1
    cdef int64_t j
    cdef bint wide = index_t is int64_t
    if wide and (narrow is None or narrow.shape[0] != nnz):
        raise ValueError("check_csr: int64 indices need an int32 `narrow` of their length")
    with nogil:
        for i in range(n_rows):
            if indptr[i + 1] < indptr[i]:
                code = 1
                where = i
                break
        if code == 0 and wide:
            for k in range(nnz):
                j = indices[k]
                if j < 0 or j >= n_features:
                    code = 2
                    where = k
                    break
                narrow[k] = <int32_t>j
        elif code == 0:
            for k in range(nnz):
                if indices[k] < 0 or indices[k] >= n_features:
                    code = 2
                    where = k
                    break
    if code == 0:
        where = _first_bad_value(data)
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
        where = first_non_finite(&v[0] if n else <const double*>NULL, n)
    return where < 0


cdef inline void _scores_body(const CSR* X, int layout, const int64_t* rows, int64_t n,
                              const double[:, ::1] W, int64_t width,
                              double[:, ::1] o) noexcept nogil:
    """o[r, :] += sum_j x_ij W[j, :] over row i = rows[r]'s entries with j < width."""
    cdef int64_t r, i, p, c, j, k = W.shape[1]
    cdef double v
    for r in range(n):
        i = r if rows == NULL else rows[r]
        for p in range(row_start(X, i), row_stop(X, i)):
            j = entry_index(X, p)
            if j < width:
                v = entry_value_as(X, layout, i, p)
                for c in range(k):
                    o[r, c] += v * W[j, c]


def csr_scores(DataView data, const double[:, ::1] W):
    """Decision values of the view's rows (every row when it has none, else those its
    rows list, in that order) under the weight matrix W (n_weights x k): out[r, c] =
    sum_j x_ij W[j, c] over row i's stored entries with column j < width, the model's
    width W.shape[0] - (bias > 0) (later columns are ignored), then + bias W[width, c]
    when the view's bias > 0 (W's bias row).  Each sum runs over the row's entries in
    stored order, as scipy's CSR products do, so the values are theirs bit for bit (a
    float32 view's those of its values widened, a pattern's those of its values 1.0)."""
    cdef CSR X = data.csr(1, NULL)
    cdef const int64_t* rows = data.rows
    cdef double bias = data.bias
    cdef int64_t width = W.shape[0] - (1 if bias > 0 else 0)
    cdef int64_t n = data.n, k = W.shape[1]
    cdef int64_t r, c
    cdef int lay = value_layout(&X)
    if width < 0:
        raise ValueError("W has no bias row for the view's bias feature")
    out = np.zeros((n, k), dtype=np.float64)
    cdef double[:, ::1] o = out
    with nogil:
        if lay == VALUES_F64:
            _scores_body(&X, VALUES_F64, rows, n, W, width, o)
        elif lay == VALUES_F32:
            _scores_body(&X, VALUES_F32, rows, n, W, width, o)
        else:
            _scores_body(&X, lay, rows, n, W, width, o)
        if bias > 0:
            for r in range(n):
                for c in range(k):
                    o[r, c] = o[r, c] + W[width, c] * bias
    return out


cdef inline void _transposed_body(const CSR* X, int layout, const int64_t* rows, int64_t n,
                                  const double[:, ::1] M, double[:, ::1] o) noexcept nogil:
    """o[j, :] += x_ij M[r, :] over row i = rows[r]'s entries, and the bias row."""
    cdef int64_t r, i, p, c, j, k = M.shape[1]
    cdef double v, bias = X.bias
    for r in range(n):
        i = r if rows == NULL else rows[r]
        for p in range(row_start(X, i), row_stop(X, i)):
            j = entry_index(X, p)
            v = entry_value_as(X, layout, i, p)
            for c in range(k):
                o[j, c] += v * M[r, c]
        if bias > 0:
            for c in range(k):
                o[X.n_features, c] += bias * M[r, c]


def csr_transposed_scores(DataView data, const double[:, ::1] M):
    """X[rows]' M over the view's rows (every row when it has none) for M (one row per
    position, k columns): out[j, c] = sum_r x_{rows[r], j} M[r, c] over the stored
    entries, and, when the view's bias > 0, one more row out[n_features, c] = bias
    sum_r M[r, c] (the bias feature's column)."""
    cdef CSR X = data.csr(1, NULL)
    cdef int64_t n = data.n
    cdef int lay = value_layout(&X)
    if M.shape[0] != n:
        raise ValueError(f"M has {M.shape[0]} rows for {n} positions")
    out = np.zeros((data.n_weights, M.shape[1]), dtype=np.float64)
    cdef double[:, ::1] o = out
    with nogil:
        if lay == VALUES_F64:
            _transposed_body(&X, VALUES_F64, data.rows, n, M, o)
        elif lay == VALUES_F32:
            _transposed_body(&X, VALUES_F32, data.rows, n, M, o)
        else:
            _transposed_body(&X, lay, data.rows, n, M, o)
    return out


cdef inline double _sq_norm(const CSR* X, int layout, int64_t r, double b2) noexcept nogil:
    """b2 + ||x_r||^2 summed in index order."""
    cdef int64_t j
    cdef double v, s = b2
    for j in range(row_start(X, r), row_stop(X, r)):
        v = entry_value_as(X, layout, r, j)
        s += v * v
    return s


cdef inline bint _fold(double s, int64_t p, double* m, int64_t* bad) noexcept nogil:
    """m = max(m, s) for the squared norm s of position p; 1 (bad = p) if s is not finite."""
    if not (s - s == 0.0):
        bad[0] = p
        return 1
    if s > m[0]:
        m[0] = s
    return 0


cdef inline int64_t _max_sq_body(const CSR* X, int layout, const int64_t* rows, int64_t n,
                                 double b2, double* m) noexcept nogil:
    """The max_row_sq_norm loop: m = the largest sum, returns the first bad position or -1."""
    cdef int64_t p, bad = -1
    for p in range(n):
        if _fold(_sq_norm(X, layout, p if rows == NULL else rows[p], b2), p, m, &bad):
            break
    return bad


def max_row_sq_norm(DataView data):
    """(m, k): m = the largest ||x_r||^2 over the view's rows r = rows[k] (every row when
    it has none; x including the bias feature's bias^2 when bias > 0), summed in index
    order; k = the first position whose sum is not finite (it overflowed), or -1."""
    cdef CSR X = data.csr(1, NULL)
    cdef int lay = value_layout(&X)
    cdef double bias = data.bias
    cdef int64_t bad
    cdef double m = 0.0, b2 = bias * bias if bias > 0 else 0.0
    with nogil:
        if lay == VALUES_F64:
            bad = _max_sq_body(&X, VALUES_F64, data.rows, data.n, b2, &m)
        elif lay == VALUES_F32:
            bad = _max_sq_body(&X, VALUES_F32, data.rows, data.n, b2, &m)
        else:
            bad = _max_sq_body(&X, lay, data.rows, data.n, b2, &m)
    return m, bad


cdef inline double _entry_sq_norm(const CSR* X, int64_t i, double b2) noexcept nogil:
    """b2 + ||x_i||^2 over row i's entries in index order, through csr.pxd's entry_value
    (so every value layout the view reads)."""
    cdef int64_t p
    cdef double s = b2, v
    for p in range(row_start(X, i), row_stop(X, i)):
        v = entry_value(X, i, p)
        s += v * v
    return s


def row_sq_norms(DataView data):
    """out[r] = ||x_i||^2 for each position r of the view, i = rows[r] (every row in
    order when it has none), plus bias^2 when the view has the bias feature: one pass
    over the rows' entries, summed in index order, nothing allocated but the output.
    A square beyond the float range is inf, silently (the caller judges it)."""
    cdef CSR X = data.csr(1, NULL)
    cdef const int64_t* rows = data.rows
    cdef int64_t r, n = data.n
    cdef double b2 = data.bias * data.bias if data.bias > 0 else 0.0
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for r in range(n):
            o[r] = _entry_sq_norm(&X, r if rows == NULL else rows[r], b2)
    return out


# --------------------------------------------------------------------------- #
# Chunk checks of a mapped binary data file (linsvm.io.binfile): the reader streams each
# section once, in chunks that stay in the cache, through its CRC-32 and these checks, so
# that a file whose checksums hold but whose contents would send a core out of bounds is
# refused before any core sees it.  Each returns the position of the first fault in the
# chunk (or -1); the caller adds the chunk's offset and names the row.
# --------------------------------------------------------------------------- #

def first_bad_row_pointer(const int64_t[::1] p, int64_t prev, int64_t nnz):
    """Position k of the first row pointer of the chunk p with p[k] < p[k - 1] (prev for
    k = 0: the last pointer of the chunk before) or p[k] > nnz; -1 when none."""
    cdef int64_t k, n = p.shape[0], last = prev, bad = -1
    with nogil:
        for k in range(n):
            if p[k] < last or p[k] > nnz:
                bad = k
                break
            last = p[k]
    return bad


def scan_column_indices(const int32_t[::1] ind, int64_t n_features):
    """(bad, top) over a chunk of column indices: bad the position of the first index
    outside [0, n_features) (-1 when none), top 1 + the largest index of the chunk (0
    for none): the chunk's share of the file's largest 1-based feature index."""
    cdef int64_t k, n = ind.shape[0], bad = -1
    cdef int32_t j, lo = 0, hi = -1
    with nogil:
        # min and max without an exit, which the compiler vectorizes; the position of a
        # fault only when there is one
        for k in range(n):
            j = ind[k]
            lo = j if j < lo else lo
            hi = j if j > hi else hi
        if lo < 0 or hi >= n_features:
            for k in range(n):
                if ind[k] < 0 or ind[k] >= n_features:
                    bad = k
                    break
    return bad, <int64_t>hi + 1


def first_non_finite_value(v):
    """Position of the first NaN or infinity of the float64 or float32 array v, or -1
    (check_csr's scan of the values, for one chunk of a binary data file)."""
    return _first_bad_value(v)
