# Shared CSR kernels of linsvm (csrc/csr.pxd), included as inline functions by every solver core.
#
# A data set is a CSR matrix X (n_rows x n_features) with int64 row pointers,
# int32 column indices and values in one of three layouts (below), plus an optional
# constant "bias" feature of value `bias` appended as column n_features (LIBLINEAR's
# -B): with bias > 0 a weight vector has n_features + 1 entries and
#     x_i . w = sum_j X[i, j] w[j] + bias * w[n_features].
# The bias column is never materialised.
#
# The values.  Entry p of row i has its value in one of these layouts, which the
# struct's fields tell apart and value_layout names:
#   VALUES_F64  data[p], a float64 (the lossless default);
#   VALUES_F32  data32[p], a float32, widened to double as it is read;
#   VALUES_ONE  1.0 (unit): no value is read, only the column index -- a pattern
#               (data and data32 NULL: nothing stored), or stored values that
#               read_pattern found all exactly 1.0;
#   VALUES_ROW  row_scale[i], one value per row (read_pattern's row scales).
# Widening a float32 is exact and x * 1.0 == x, and every kernel adds its products in
# one order whatever the layout, so a float32 matrix gives the bits of the float64 one
# holding the same (rounded) values, and a pattern those of its values stored as 1.0.
# Each kernel tests the layout once per row or per pass, never per entry: the span
# kernels are specialised by value type (value_t), and a core that walks entries
# itself calls its loop body with the layout as a constant (value_layout, "Row
# entries" below), so each copy reads its layout without a test.
#
# Solvers address examples through a list `rows` of row numbers (the training
# set, a fold, a random subset or an active set), so no row is ever copied.
#
# Every function here is nogil and allocation-free.  The passes over many rows
# (matvec, the blocked scatter X^T.u, the fused normal mat-vec) are in
# csrc/csr_passes.pxd, on OpenMP threads when the build has them.

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport realloc, free
from libc.string cimport memcpy, memset

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
    const double* data      # float64 values (VALUES_F64), or NULL
    const float* data32     # float32 values (VALUES_F32), or NULL; never both set
    int64_t n_rows
    int64_t n_features      # columns of X, not counting the bias column
    int64_t n_weights       # n_features + (bias > 0)
    double bias             # value of the constant feature, <= 0: none
    int n_threads           # threads for matvec/rmatvec (1: serial)
    double* scratch         # (max_blocks - 1) * n_weights doubles for the scatter, or NULL
    int max_blocks          # row blocks the scratch can hold (1: no scratch)
    int unit                # every value is exactly 1.0 (VALUES_ONE): the kernels read
                            # only the column indices; with data and data32 NULL a
                            # pattern, which stores no values at all
    const double* row_scale # or every stored value of row i is row_scale[i] (binary term
                            # presence scaled to unit rows): read only the indices too, and
                            # multiply once per row; NULL: the values as stored
    int no_clear            # 1: a one-block scatter adds into its output instead of
                            # clearing it first (the caller keeps it zero wherever the
                            # rows write: csrc/cgls.pxd's weight split, O(|T_r|) not O(d))


# The stored value types the span kernels are specialised for.
ctypedef fused value_t:
    double
    float


cdef enum:
    VALUES_F64 = 0          # data[p]
    VALUES_F32 = 1          # data32[p]
    VALUES_ONE = 2          # 1.0
    VALUES_ROW = 3          # row_scale[i]


# --------------------------------------------------------------------------- #
# Row entries: the one way a core walks a row's stored entries itself (a column copy,
# a per-class scatter, a packed record of spans).  Together with the kernels below and
# csr_passes.pxd's they are the only code that reads X.indptr, X.indices and the values,
# so a new layout of the values changes this file alone.
#
# The idiom for a loop over entries that must not test the layout per entry: write its
# body once over entry_value_as(X, layout, i, p) with `layout` a parameter, and call it
# with the layout as a constant in each branch,
#     lay = value_layout(X)
#     if lay == VALUES_F64: body(X, VALUES_F64, ...)
#     elif lay == VALUES_F32: body(X, VALUES_F32, ...)
#     else: body(X, lay, ...)
# -- the inlined copy of each branch knows its layout, and entry_value_as's tests fold
# away (the last copy keeps them, for patterns and row scales, where the loop reads no
# value array).
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


cdef inline int value_layout(const CSR* X) noexcept nogil:
    """The layout X's kernels read the values in: VALUES_ROW, VALUES_ONE, VALUES_F32 or
    VALUES_F64 (the first that applies, in this order)."""
    if X.row_scale != NULL:
        return VALUES_ROW
    if X.unit:
        return VALUES_ONE
    if X.data32 != NULL:
        return VALUES_F32
    return VALUES_F64


cdef inline double entry_value_as(const CSR* X, int layout, int64_t i,
                                  int64_t p) noexcept nogil:
    """Value of the entry at position p of row i read in `layout` (value_layout(X)):
    the idiom above passes it as a constant."""
    if layout == VALUES_F64:
        return X.data[p]
    if layout == VALUES_F32:
        return X.data32[p]
    if layout == VALUES_ONE:
        return 1.0
    return X.row_scale[i]


cdef inline double entry_value(const CSR* X, int64_t i, int64_t p) noexcept nogil:
    """Value of the entry at position p of row i, as the kernels read it (1.0 for a
    pattern, the row's one value with row_scale), the layout tested on each call."""
    return entry_value_as(X, value_layout(X), i, p)


cdef inline double total_nnz(const CSR* X) noexcept nogil:
    """Stored entries of the whole matrix (a double: cost models divide by it)."""
    return <double>(X.indptr[X.n_rows] - X.indptr[0])


# --------------------------------------------------------------------------- #
# A contiguous copy of some rows.  Rows visited through a row list lie scattered over
# the whole matrix, and a pass over a small subset of short rows waits on a cache and
# TLB miss per row (on imbalanced text, 52,000 rows of 15 entries among 673,000: four
# times the time of the same pass over a copy).  A loop that passes over the same
# subset many times (CGLS over a Newton step's active rows) copies it once.
# --------------------------------------------------------------------------- #

cdef struct RowCopy:
    # gather_rows's buffers, grown on demand (malloc'd: free_row_copy releases them)
    int64_t* indptr                # rows + 1
    int32_t* indices               # entries
    double* data                   # entries (a float64 layout)
    float* data32                  # entries (a float32 layout)
    double* row_scale              # rows (a row-scaled layout)
    int64_t* iota                  # rows: 0, 1, ..., the copy's row list
    int64_t cap_rows
    int64_t cap_nnz


cdef inline void free_row_copy(RowCopy* R) noexcept nogil:
    free(R.indptr)
    free(R.indices)
    free(R.data)
    free(R.data32)
    free(R.row_scale)
    free(R.iota)
    memset(R, 0, sizeof(RowCopy))


cdef inline int _grow(void** buf, int64_t n, size_t size) noexcept nogil:
    cdef void* q = realloc(buf[0], <size_t>(n if n > 0 else 1) * size)
    if q == NULL:
        return -1
    buf[0] = q
    return 0


cdef inline int gather_rows(const CSR* X, const int64_t* rows, int64_t n, double max_nnz,
                            RowCopy* R, CSR* out) noexcept nogil:
    """out = the rows X[rows[0:n]] as a CSR of their own, stored contiguously in R
    (grown as needed), in X's value layout and with X's other fields (bias, threads,
    scratch), whose row k is rows[k]: a kernel over (out, R.iota, n) reads the same
    numbers in the same order as over (X, rows, n), except where it estimates its row
    blocks from the average row (csr_passes.pxd, scatter_blocks), here the copy's own.
    Returns 0; 1 (nothing copied) when the rows hold more than max_nnz entries; -1 when
    memory ran out (out is then not set)."""
    cdef int64_t k, r, p0, len_, nnz = 0
    cdef int lay = value_layout(X)
    for k in range(n):
        nnz += X.indptr[rows[k] + 1] - X.indptr[rows[k]]
    if nnz > max_nnz:
        return 1
    if n + 1 > R.cap_rows:
        if (_grow(<void**>&R.indptr, n + 1, sizeof(int64_t)) or
                _grow(<void**>&R.iota, n + 1, sizeof(int64_t)) or
                (lay == VALUES_ROW and _grow(<void**>&R.row_scale, n + 1, sizeof(double)))):
            return -1
        for k in range(R.cap_rows, n + 1):
            R.iota[k] = k
        R.cap_rows = n + 1
    if nnz > R.cap_nnz:
        if (_grow(<void**>&R.indices, nnz, sizeof(int32_t)) or
                (lay == VALUES_F64 and _grow(<void**>&R.data, nnz, sizeof(double))) or
                (lay == VALUES_F32 and _grow(<void**>&R.data32, nnz, sizeof(float)))):
            return -1
        R.cap_nnz = nnz
    R.indptr[0] = 0
    for k in range(n):
        r = rows[k]
        p0 = X.indptr[r]
        len_ = X.indptr[r + 1] - p0
        memcpy(&R.indices[R.indptr[k]], &X.indices[p0], len_ * sizeof(int32_t))
        if lay == VALUES_F64:
            memcpy(&R.data[R.indptr[k]], &X.data[p0], len_ * sizeof(double))
        elif lay == VALUES_F32:
            memcpy(&R.data32[R.indptr[k]], &X.data32[p0], len_ * sizeof(float))
        elif lay == VALUES_ROW:
            R.row_scale[k] = X.row_scale[r]
        R.indptr[k + 1] = R.indptr[k] + len_
    out[0] = X[0]
    out.indptr = R.indptr
    out.indices = R.indices
    out.data = R.data if lay == VALUES_F64 else NULL
    out.data32 = R.data32 if lay == VALUES_F32 else NULL
    out.row_scale = R.row_scale if lay == VALUES_ROW else NULL
    out.n_rows = n
    return 0


cdef inline void prefetch_span(const CSR* X, int64_t p) noexcept nogil:
    """Ask the cache for the entries from position p on (a loop that visits rows in
    random order, ahead of use)."""
    LINSVM_PREFETCH(&X.indices[p])
    if X.unit:
        return
    if X.data != NULL:
        LINSVM_PREFETCH(&X.data[p])
    elif X.data32 != NULL:
        LINSVM_PREFETCH(&X.data32[p])


# --------------------------------------------------------------------------- #
# Row kernels
# --------------------------------------------------------------------------- #

cdef inline double dot_span(const int32_t* ind, const value_t* val, int64_t a, int64_t b,
                            const double* w, int unit) noexcept nogil:
    """sum over p in [a, b) of val[p] * w[ind[p]] (of w[ind[p]] when unit; val is then
    not read and may be NULL).

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
            s0 += <double>val[p] * w[ind[p]]
            s1 += <double>val[p + 1] * w[ind[p + 1]]
            s2 += <double>val[p + 2] * w[ind[p + 2]]
            s3 += <double>val[p + 3] * w[ind[p + 3]]
            p += 4
        while p < b:
            s0 += <double>val[p] * w[ind[p]]
            p += 1
    return (s0 + s1) + (s2 + s3)


cdef inline void axpy_span(const int32_t* ind, const value_t* val, int64_t a, int64_t b,
                           double s, double* out, int unit) noexcept nogil:
    """out[ind[p]] += s * val[p] (+= s when unit, val not read) for p in [a, b): the
    scatter of one row's span (the bias feature is the caller's).

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
            out[ind[p]] += s * <double>val[p]
            out[ind[p + 1]] += s * <double>val[p + 1]
            out[ind[p + 2]] += s * <double>val[p + 2]
            out[ind[p + 3]] += s * <double>val[p + 3]
            p += 4
        while p < b:
            out[ind[p]] += s * <double>val[p]
            p += 1


cdef inline double dot_row_span(const CSR* X, int64_t lo, int64_t hi,
                                const double* w) noexcept nogil:
    """x . w for the row whose non-zeros are [lo, hi), the bias feature included: the dual
    coordinate solvers' packed records keep each row's span (X.row_scale must be NULL)."""
    cdef double s
    if X.data32 != NULL and not X.unit:
        s = dot_span(X.indices, X.data32, lo, hi, w, 0)
    else:
        s = dot_span(X.indices, X.data, lo, hi, w, X.unit)
    if X.bias > 0:
        s += X.bias * w[X.n_features]
    return s


cdef inline void axpy_row_span(const CSR* X, int64_t lo, int64_t hi, double a,
                               double* out) noexcept nogil:
    """out += a x for the row whose non-zeros are [lo, hi), the bias feature included (as
    dot_row_span)."""
    if X.data32 != NULL and not X.unit:
        axpy_span(X.indices, X.data32, lo, hi, a, out, 0)
    else:
        axpy_span(X.indices, X.data, lo, hi, a, out, X.unit)
    if X.bias > 0:
        out[X.n_features] += a * X.bias


cdef inline double dot_row(const CSR* X, int64_t i, const double* w) noexcept nogil:
    """Return x_i . w (including the bias feature)."""
    cdef double s
    if X.row_scale != NULL:
        s = X.row_scale[i] * dot_span(X.indices, X.data, X.indptr[i], X.indptr[i + 1], w, 1)
        if X.bias > 0:
            s += X.bias * w[X.n_features]
        return s
    return dot_row_span(X, X.indptr[i], X.indptr[i + 1], w)


cdef inline void axpy_row(const CSR* X, int64_t i, double a, double* out) noexcept nogil:
    """out += a * x_i (including the bias feature)."""
    if X.row_scale != NULL:
        axpy_span(X.indices, X.data, X.indptr[i], X.indptr[i + 1], a * X.row_scale[i], out, 1)
        if X.bias > 0:
            out[X.n_features] += a * X.bias
        return
    axpy_row_span(X, X.indptr[i], X.indptr[i + 1], a, out)


cdef inline double sq_span(const value_t* val, int64_t a, int64_t b) noexcept nogil:
    """sum over p in [a, b) of val[p]^2, in order."""
    cdef int64_t p
    cdef double v, s = 0.0
    for p in range(a, b):
        v = val[p]
        s += v * v
    return s


cdef inline double sq_norm_row(const CSR* X, int64_t i) noexcept nogil:
    """Return ||x_i||^2 (including the bias feature)."""
    cdef int64_t a = X.indptr[i], b = X.indptr[i + 1]
    cdef double s
    if X.row_scale != NULL:
        s = (b - a) * X.row_scale[i] * X.row_scale[i]
    elif X.unit:
        s = <double>(b - a)             # 1.0 * 1.0 summed b - a times, exactly
    elif X.data32 != NULL:
        s = sq_span(X.data32, a, b)
    else:
        s = sq_span(X.data, a, b)
    if X.bias > 0:
        s += X.bias * X.bias
    return s


cdef inline void axpy_sq_span(const int32_t* ind, const value_t* val, int64_t a, int64_t b,
                              double s, double* out) noexcept nogil:
    """out[ind[p]] += s * val[p]^2 for p in [a, b)."""
    cdef int64_t p
    for p in range(a, b):
        out[ind[p]] += s * <double>val[p] * <double>val[p]


cdef inline void axpy_row_sq(const CSR* X, int64_t i, double a, double* out) noexcept nogil:
    """out += a * x_i**2 elementwise (including the bias feature)."""
    cdef const int32_t* ind = X.indices
    cdef int64_t p, end = X.indptr[i + 1]
    cdef double sa = a
    if X.unit or X.row_scale != NULL:
        if X.row_scale != NULL:
            sa = a * X.row_scale[i] * X.row_scale[i]
        for p in range(X.indptr[i], end):
            out[ind[p]] += sa
    elif X.data32 != NULL:
        axpy_sq_span(ind, X.data32, X.indptr[i], end, a, out)
    else:
        axpy_sq_span(ind, X.data, X.indptr[i], end, a, out)
    if X.bias > 0:
        out[X.n_features] += a * X.bias * X.bias


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


# --------------------------------------------------------------------------- #
# Making a CSR, and reading a pattern from stored values
# --------------------------------------------------------------------------- #

cdef inline CSR make_csr(const int64_t[::1] indptr, const int32_t[::1] indices,
                         const double* data, const float* data32, int64_t n_features,
                         double bias) noexcept nogil:
    """A CSR view of validated buffers (the caller keeps them alive), one thread and no
    scatter scratch (DataView.csr sets both): data float64 values, or data32 float32
    ones, or both NULL for a pattern (unit: every value 1.0, none stored)."""
    cdef CSR X
    X.indptr = &indptr[0]
    X.indices = &indices[0] if indices.shape[0] > 0 else NULL
    X.data = data if indices.shape[0] > 0 else NULL
    X.data32 = data32 if indices.shape[0] > 0 and data == NULL else NULL
    X.n_rows = indptr.shape[0] - 1
    X.n_features = n_features
    X.bias = bias
    X.n_weights = n_features + (1 if bias > 0 else 0)
    X.n_threads = 1
    X.scratch = NULL
    X.max_blocks = 1
    X.unit = 1 if data == NULL and data32 == NULL else 0
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


cdef inline int _all_one(const value_t* val, int64_t a, int64_t b) noexcept nogil:
    """1 if val[p] == 1.0 for every p in [a, b)."""
    cdef int64_t p
    for p in range(a, b):
        if val[p] != 1.0:
            return 0
    return 1


cdef inline int all_unit(const CSR* X) noexcept nogil:
    """1 if every stored value of X is exactly 1.0 (then x * 1.0 == x, so the kernels
    give bit for bit the same results reading indices only), else 0; 1 for a pattern."""
    if X.unit:
        return 1
    if X.data32 != NULL:
        return _all_one(X.data32, X.indptr[0], X.indptr[X.n_rows])
    if X.data != NULL:
        return _all_one(X.data, X.indptr[0], X.indptr[X.n_rows])
    return 1                            # no entries


cdef inline int _row_scales(const CSR* X, const value_t* val, double* scale) noexcept nogil:
    """row_scales over the stored values val."""
    cdef int64_t i, p
    cdef double v
    for i in range(X.n_rows):
        if X.indptr[i + 1] == X.indptr[i]:
            scale[i] = 1.0
            continue
        v = val[X.indptr[i]]
        for p in range(X.indptr[i] + 1, X.indptr[i + 1]):
            if val[p] != v:
                return 0
        scale[i] = v
    return 1


cdef inline int row_scales(const CSR* X, double* scale) noexcept nogil:
    """1 if every row's stored values are one number each (binary term presence scaled to
    unit rows, say), with scale[i] that number (1.0 for an empty row); else 0 (scale
    then undefined; 0 for a pattern, which has no stored values).  Rows whose values are
    all exactly 1.0 make X a pattern (all_unit), which reads no scale at all: the caller
    prefers that."""
    if X.unit:
        return 0
    if X.data32 != NULL:
        return _row_scales(X, X.data32, scale)
    if X.data != NULL:
        return _row_scales(X, X.data, scale)
    return 0


cdef inline void read_pattern(CSR* X, double* scale) noexcept nogil:
    """Let X's kernels read only its column indices where the values allow it: a 0/1
    pattern (X.unit), or one value per row (X.row_scale = scale, n_rows doubles the
    caller keeps alive; NULL: patterns only).  One pass over the values; none for a
    pattern, which is unit already."""
    if X.unit:
        return
    X.unit = all_unit(X)
    if not X.unit and scale != NULL and X.n_rows > 0 and row_scales(X, scale):
        X.row_scale = scale
