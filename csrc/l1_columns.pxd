# The column copy of csrc/_l1.pyx's solvers (its block comment has the equations) and the
# passes over one column: the training rows copied column by column with the labels
# folded in (v_kj = t_k x_kj), the margins and residuals built from it, and the sums a
# coordinate step takes over its column, by fixed blocks of COL_BLOCK entries on the
# threads (the notes on threads in its block comment).  Everything here is inline: this
# file is cimported, not compiled on its own.

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memset
from cython.parallel cimport prange
from csr cimport CSR, row_start, row_stop, entry_index, entry_value


cdef struct CSC:
    const int64_t* colptr      # n_cols + 1
    const int32_t* row         # position k of each entry
    const double* val          # t_k x_kj
    int64_t n_cols
    int64_t n_rows
    int n_threads              # threads of the column and row passes (csrc/_l1.pyx: threads)


cdef enum:
    COL_BLOCK = 4096           # entries of a column one thread sums (csrc/_l1.pyx: threads)
    ROW_BLOCK = 8192           # rows of a per-row sum one thread sums


cdef inline int64_t n_blocks(int64_t n, int64_t size) noexcept nogil:
    """Blocks of `size` that cover n items."""
    return (n + size - 1) // size


cdef inline int64_t column_entries(const CSR* X, const int64_t* rows, int64_t n) noexcept nogil:
    """Entries of the column copy of X[rows]: the rows' non-zeros (+ n with a bias)."""
    cdef int64_t k, total = 0
    for k in range(n):
        total += row_stop(X, rows[k]) - row_start(X, rows[k])
    return total + (n if X.bias > 0 else 0)


cdef inline void build_csc(const CSR* X, const int64_t* rows, int64_t n, const double* t,
                           int64_t* colptr, int32_t* row, double* val) noexcept nogil:
    """The columns of the rows X[rows] with the labels folded in: column j holds, for each
    position k (ascending) with x_kj != 0, row[p] = k and val[p] = t_k x_kj; the bias
    feature (X.bias > 0) is column X.n_features, dense.  colptr has X.n_weights + 1
    entries; row and val as many as the rows' non-zeros (+ n with a bias).

    Counting sort: count per column into colptr[j + 1], prefix sums, fill with colptr[j]
    as the cursor of column j, then shift colptr back by one place."""
    cdef int64_t k, p, r, j, q, nw = X.n_weights
    memset(colptr, 0, (nw + 1) * sizeof(int64_t))
    for k in range(n):
        r = rows[k]
        for p in range(row_start(X, r), row_stop(X, r)):
            colptr[entry_index(X, p) + 1] += 1
    if X.bias > 0:
        colptr[X.n_features + 1] = n
    for j in range(nw):
        colptr[j + 1] += colptr[j]
    for k in range(n):
        r = rows[k]
        for p in range(row_start(X, r), row_stop(X, r)):
            j = entry_index(X, p)
            q = colptr[j]
            row[q] = <int32_t>k
            val[q] = t[k] * entry_value(X, r, p)
            colptr[j] = q + 1
        if X.bias > 0:
            q = colptr[X.n_features]
            row[q] = <int32_t>k
            val[q] = t[k] * X.bias
            colptr[X.n_features] = q + 1
    j = nw
    while j > 0:
        colptr[j] = colptr[j - 1]
        j -= 1
    colptr[0] = 0


cdef inline void margins(const CSC* A, const double* w, double* z) noexcept nogil:
    """z_k = t_k w.x_k = sum_j w_j v_kj, from the columns of the non-zero weights."""
    cdef int64_t j, p
    cdef double wj
    memset(z, 0, A.n_rows * sizeof(double))
    for j in range(A.n_cols):
        wj = w[j]
        if wj != 0.0:
            for p in range(A.colptr[j], A.colptr[j + 1]):
                z[A.row[p]] += wj * A.val[p]


cdef inline void residuals(const CSC* A, const double* w, double* ba, int S) noexcept nogil:
    """ba[S k] = b_k = 1 - z_k(w) (with S = 2 the other slot, a_k, untouched)."""
    cdef int64_t j, p, k
    cdef double wj
    for k in range(A.n_rows):
        ba[S * k] = 1.0
    for j in range(A.n_cols):
        wj = w[j]
        if wj != 0.0:
            for p in range(A.colptr[j], A.colptr[j + 1]):
                ba[S * A.row[p]] -= wj * A.val[p]


cdef inline void _grad_span(const int32_t* row, const double* val, const double* rs, int S,
                            double a0, int64_t p0, int64_t p1, double* out) noexcept nogil:
    """Over the entries p0:p1 of one column: out = (-sum_I a_k b_k v_kj, sum_I a_k v_kj^2,
    sum_I a_k b_k^2) (I: b_k > 0), with b_k = rs[S k] and a_k = rs[S k + 1] (S = 2) or a0
    (S = 1, every cost equal).  Called with S a literal, so that the compiler makes one
    loop for each layout."""
    cdef int64_t p, k
    cdef double g = 0.0, h = 0.0, lo = 0.0, bk, v, ak, ab
    for p in range(p0, p1):
        k = row[p]
        bk = rs[S * k]
        if bk > 0.0:
            v = val[p]
            ak = rs[S * k + 1] if S == 2 else a0
            ab = ak * bk
            g -= ab * v
            lo += ab * bk
            h += ak * v * v
    out[0] = g
    out[1] = h
    out[2] = lo


cdef inline void col_grad(const CSC* A, int64_t p0, int64_t p1, const double* rs, int S,
                          double a0, double* g_out, double* h_out, double* loss_out,
                          double* part) noexcept nogil:
    """_grad_span's three sums over one column (entries p0:p1), by blocks of COL_BLOCK
    entries on the threads, added in order (csrc/_l1.pyx: threads; part: three doubles
    per block)."""
    cdef int64_t nb = n_blocks(p1 - p0, COL_BLOCK), b
    cdef double out[3]
    if nb <= 1:
        if S == 1:
            _grad_span(A.row, A.val, rs, 1, a0, p0, p1, out)
        else:
            _grad_span(A.row, A.val, rs, 2, 0.0, p0, p1, out)
    else:
        for b in prange(nb, schedule="static", num_threads=A.n_threads):
            if S == 1:
                _grad_span(A.row, A.val, rs, 1, a0, p0 + b * COL_BLOCK,
                           min(p1, p0 + (b + 1) * COL_BLOCK), &part[3 * b])
            else:
                _grad_span(A.row, A.val, rs, 2, 0.0, p0 + b * COL_BLOCK,
                           min(p1, p0 + (b + 1) * COL_BLOCK), &part[3 * b])
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        for b in range(nb):
            out[0] += part[3 * b]
            out[1] += part[3 * b + 1]
            out[2] += part[3 * b + 2]
    g_out[0] = out[0]
    h_out[0] = out[1]
    loss_out[0] = out[2]


cdef inline double _trial_col_span(const int32_t* row, const double* val, double* rs, int S,
                                   double a0, double shift, int64_t p0,
                                   int64_t p1) noexcept nogil:
    """b_k -= shift v_kj over the entries p0:p1 of one column, returning the new
    sum_I a_k b_k^2 there (S a literal, as _grad_span's)."""
    cdef int64_t p, k
    cdef double lo = 0.0, bk
    for p in range(p0, p1):
        k = row[p]
        bk = rs[S * k] - shift * val[p]
        rs[S * k] = bk
        if bk > 0.0:
            lo += (rs[S * k + 1] if S == 2 else a0) * bk * bk
    return lo


cdef inline double col_trial(const CSC* A, int64_t p0, int64_t p1, double* rs, int S,
                             double a0, double shift, double* part) noexcept nogil:
    """_trial_col_span over one column by blocks of COL_BLOCK entries on the threads, the
    blocks' sums added in order (part: one double per block)."""
    cdef int64_t nb = n_blocks(p1 - p0, COL_BLOCK), b
    cdef double lo = 0.0
    if nb <= 1:
        if S == 1:
            return _trial_col_span(A.row, A.val, rs, 1, a0, shift, p0, p1)
        return _trial_col_span(A.row, A.val, rs, 2, 0.0, shift, p0, p1)
    for b in prange(nb, schedule="static", num_threads=A.n_threads):
        if S == 1:
            part[b] = _trial_col_span(A.row, A.val, rs, 1, a0, shift, p0 + b * COL_BLOCK,
                                      min(p1, p0 + (b + 1) * COL_BLOCK))
        else:
            part[b] = _trial_col_span(A.row, A.val, rs, 2, 0.0, shift, p0 + b * COL_BLOCK,
                                      min(p1, p0 + (b + 1) * COL_BLOCK))
    for b in range(nb):
        lo += part[b]
    return lo


cdef inline void _shift_span(const int32_t* row, const double* val, double* rs, int S,
                             double shift, int64_t p0, int64_t p1) noexcept nogil:
    """rs[S k] -= shift v_kj over the entries p0:p1 of one column."""
    cdef int64_t p
    for p in range(p0, p1):
        rs[S * row[p]] -= shift * val[p]


cdef inline void col_shift(const CSC* A, int64_t p0, int64_t p1, double* rs, int S,
                           double shift) noexcept nogil:
    """rs[S k] -= shift v_kj over one column (distinct rows: any split gives the same):
    cdn's residuals b, and glmnet's Xd (S = 1, shift = -step)."""
    cdef int64_t nb = n_blocks(p1 - p0, COL_BLOCK), b
    if nb <= 1 or A.n_threads <= 1:
        if S == 1:
            _shift_span(A.row, A.val, rs, 1, shift, p0, p1)
        else:
            _shift_span(A.row, A.val, rs, 2, shift, p0, p1)
        return
    for b in prange(nb, schedule="static", num_threads=A.n_threads):
        if S == 1:
            _shift_span(A.row, A.val, rs, 1, shift, p0 + b * COL_BLOCK,
                        min(p1, p0 + (b + 1) * COL_BLOCK))
        else:
            _shift_span(A.row, A.val, rs, 2, shift, p0 + b * COL_BLOCK,
                        min(p1, p0 + (b + 1) * COL_BLOCK))


cdef inline void grad_and_curvature(const CSC* A, const int64_t* index, int64_t n,
                                    const double* gk, const double* Dk, double* grad,
                                    double* hdiag) noexcept nogil:
    """grad[j] = sum_k gk_k v_kj and hdiag[j] = sum_k D_kk v_kj^2 (without nu) for every
    column j = index[s], s < n: each column summed in order by one thread."""
    cdef const int32_t* row = A.row
    cdef const double* val = A.val
    cdef int64_t s, j, p, k
    cdef double g, h, v
    for s in prange(n, schedule="dynamic", chunksize=16, num_threads=A.n_threads):
        j = index[s]
        g = 0.0
        h = 0.0
        for p in range(A.colptr[j], A.colptr[j + 1]):
            k = row[p]
            v = val[p]
            g = g + gk[k] * v
            h = h + Dk[k] * v * v
        grad[j] = g
        hdiag[j] = h


cdef inline double _model_span(const int32_t* row, const double* val, const double* Dk,
                               const double* Xd, int64_t p0, int64_t p1) noexcept nogil:
    """sum_k D_kk v_kj Xd_k over the entries p0:p1 of one column."""
    cdef int64_t p, k
    cdef double g = 0.0
    for p in range(p0, p1):
        k = row[p]
        g += Dk[k] * val[p] * Xd[k]
    return g


cdef inline double col_model_grad(const CSC* A, int64_t p0, int64_t p1, const double* Dk,
                                  const double* Xd, double* part) noexcept nogil:
    """sum_k D_kk v_kj Xd_k over the column's entries p0:p1, by blocks of COL_BLOCK
    entries (csrc/_l1.pyx: threads; part holds one double per block)."""
    cdef int64_t nb = n_blocks(p1 - p0, COL_BLOCK), b
    cdef double g = 0.0
    if nb <= 1:
        return _model_span(A.row, A.val, Dk, Xd, p0, p1)
    for b in prange(nb, schedule="static", num_threads=A.n_threads):
        part[b] = _model_span(A.row, A.val, Dk, Xd, p0 + b * COL_BLOCK,
                              min(p1, p0 + (b + 1) * COL_BLOCK))
    for b in range(nb):
        g += part[b]
    return g

