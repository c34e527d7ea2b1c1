# Where the SVM-light parser (csrc/_svmlight.pyx) puts what it reads: the rows in five
# growing C arrays, where the rows are in the stream, and the carry buffer of a line
# cut by a chunk's end.  The arrays are allocated with PyMem_RawMalloc/PyMem_RawRealloc
# (so tracemalloc sees them) and grow by a factor of 1.5; Parser.take() hands them to
# NumPy without a copy.

from cpython.mem cimport PyMem_RawRealloc, PyMem_RawFree
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy

cdef extern from "Python.h":
    const Py_ssize_t PY_SSIZE_T_MAX


ctypedef struct Rows:
    int64_t* indptr         # n_rows + 1, indptr[0] = 0
    int32_t* indices        # nnz, 0-based
    double* data            # nnz
    double* labels          # n_rows
    int64_t* qids           # n_rows, only with want_qid
    Py_ssize_t n_rows, cap_rows, nnz, cap_nnz
    Py_ssize_t hint_rows, hint_nnz  # the first capacities after a take(): its sizes
    bint presized
    bint want_qid
    int64_t max_index       # the largest 1-based feature index of the rows held
    # where the rows are: row r is on line r + 1 + (blank and comment lines before
    # it); one (row, lines skipped so far) pair per row that follows such lines --
    # none for a file without them, so nothing is held in the normal case
    int64_t* gap_rows
    int64_t* gap_skipped
    Py_ssize_t n_gaps, cap_gaps


ctypedef struct Carry:      # an incomplete line carried over from the previous chunk
    char* text
    Py_ssize_t len, cap
    bint complete           # it ends in '\n' (the next chunk completed it, or end())


cdef inline void rows_free(Rows* R) noexcept nogil:
    PyMem_RawFree(R.indptr)
    PyMem_RawFree(R.indices)
    PyMem_RawFree(R.data)
    PyMem_RawFree(R.labels)
    PyMem_RawFree(R.qids)
    PyMem_RawFree(R.gap_rows)
    PyMem_RawFree(R.gap_skipped)


cdef inline int reserve_rows(Rows* R, Py_ssize_t cap) noexcept nogil:
    """Capacity for at least cap rows; 0 or -1 (out of memory)."""
    cdef bint fresh = R.indptr == NULL
    cdef void* q
    if cap <= R.cap_rows:
        return 0
    if cap > PY_SSIZE_T_MAX // 16:
        return -1
    q = PyMem_RawRealloc(R.indptr, (cap + 1) * sizeof(int64_t))
    if q == NULL:
        return -1
    R.indptr = <int64_t*>q
    if fresh:
        R.indptr[0] = 0
    q = PyMem_RawRealloc(R.labels, cap * sizeof(double))
    if q == NULL:
        return -1
    R.labels = <double*>q
    if R.want_qid:
        q = PyMem_RawRealloc(R.qids, cap * sizeof(int64_t))
        if q == NULL:
            return -1
        R.qids = <int64_t*>q
    R.cap_rows = cap
    return 0


cdef inline int reserve_nnz(Rows* R, Py_ssize_t cap) noexcept nogil:
    """Capacity for at least cap non-zeros; 0 or -1 (out of memory)."""
    cdef void* q
    if cap <= R.cap_nnz:
        return 0
    if cap > PY_SSIZE_T_MAX // 16:
        return -1
    q = PyMem_RawRealloc(R.indices, cap * sizeof(int32_t))
    if q == NULL:
        return -1
    R.indices = <int32_t*>q
    q = PyMem_RawRealloc(R.data, cap * sizeof(double))
    if q == NULL:
        return -1
    R.data = <double*>q
    R.cap_nnz = cap
    return 0


cdef inline int grow_rows(Rows* R) noexcept nogil:
    """Room for one more row: the capacity grows by half (at least 64)."""
    cdef Py_ssize_t cap = R.cap_rows + (R.cap_rows >> 1)
    if cap < 64:
        cap = 64
    if R.cap_rows == 0 and cap < R.hint_rows:
        cap = R.hint_rows
    return reserve_rows(R, cap)


cdef inline int grow_nnz(Rows* R) noexcept nogil:
    """Room for one more non-zero: the capacity grows by half (at least 1024)."""
    cdef Py_ssize_t cap = R.cap_nnz + (R.cap_nnz >> 1)
    if cap < 1024:
        cap = 1024
    if R.cap_nnz == 0 and cap < R.hint_nnz:
        cap = R.hint_nnz
    return reserve_nnz(R, cap)


cdef inline int presize(Rows* R, const char* p, const char* end) noexcept nogil:
    """Size empty arrays for the lines in [p, end) by counting ':' and '\\n'.

    Every non-zero has one ':' (qids and comments may add more), every row
    one line end, so this is a close upper bound; it spares small inputs
    the slack of geometric growth.  Only done for the first chunk.
    """
    cdef Py_ssize_t n_colon = 0, n_nl = 0
    cdef char c
    if R.presized:
        return 0
    R.presized = True
    while p < end:
        c = p[0]
        n_colon += c == c':'
        n_nl += c == c'\n'
        p += 1
    if reserve_rows(R, R.n_rows + n_nl + 1) != 0:
        return -1
    return reserve_nnz(R, R.nnz + n_colon + 1)


cdef inline int record_gap(Rows* R, int64_t row, int64_t skipped) noexcept nogil:
    """Note that row `row` (of the whole stream) follows `skipped` blank or comment
    lines in all; 0 or -1 (out of memory)."""
    cdef Py_ssize_t cap
    cdef void* q
    if R.n_gaps >= R.cap_gaps:
        cap = R.cap_gaps * 2 if R.cap_gaps else 16
        q = PyMem_RawRealloc(R.gap_rows, cap * sizeof(int64_t))
        if q == NULL:
            return -1
        R.gap_rows = <int64_t*>q
        q = PyMem_RawRealloc(R.gap_skipped, cap * sizeof(int64_t))
        if q == NULL:
            return -1
        R.gap_skipped = <int64_t*>q
        R.cap_gaps = cap
    R.gap_rows[R.n_gaps] = row
    R.gap_skipped[R.n_gaps] = skipped
    R.n_gaps += 1
    return 0


cdef inline int start_row(Rows* R, Py_ssize_t i, int64_t row, double label, int64_t qid,
                          int64_t skipped, int64_t* noted) noexcept nogil:
    """Begin held row i, row `row` of the stream, with its label (and qid): noted where it
    is (record_gap) when lines were skipped since the last note (noted[0], updated), room
    made for it; 0 or -1 (out of memory)."""
    if skipped != noted[0]:
        if record_gap(R, row, skipped) != 0:
            return -1
        noted[0] = skipped
    if i >= R.cap_rows:
        if grow_rows(R) != 0:
            return -1
    R.labels[i] = label
    if R.want_qid:
        R.qids[i] = qid
    return 0


cdef inline int carry_append(Carry* C, const char* s, Py_ssize_t n) noexcept nogil:
    """Append s[:n] to the carried line; 0 or -1 (out of memory)."""
    cdef Py_ssize_t cap
    cdef void* q
    if C.len + n > C.cap:
        cap = C.cap * 2
        if cap < C.len + n:
            cap = C.len + n
        if cap < 256:
            cap = 256
        q = PyMem_RawRealloc(C.text, cap)
        if q == NULL:
            return -1
        C.text = <char*>q
        C.cap = cap
    memcpy(C.text + C.len, s, n)
    C.len += n
    return 0
