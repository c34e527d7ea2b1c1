"""SVM-light / LIBSVM text format: the compiled parser and writer.

This module is private; `linsvm.io.svmlight` is its user.  It knows nothing about
files, names or exceptions of linsvm: the parser is fed byte chunks, reports a
status code, and on failure offers the line number and a one-line description
that `linsvm.io.svmlight` prefixes with the file name (parse in two layers).

`Parser` consumes a byte stream in chunks of any size.  Complete lines are parsed
in place, straight from the caller's buffer, with the GIL released; an incomplete
last line is carried over and finished with the next chunk.  Rows go into growing
C arrays (csrc/svmlight_store.pxd), which `take()` trims and hands to NumPy without
a copy: each array is owned by a small `_Owned` object exposing the buffer
protocol, which the NumPy array keeps alive as its base.  Numbers are converted
exactly, to the same double as Python's float() (csrc/svmlight_numbers.pxd); errors
are classified and worded by csrc/svmlight_errors.pxd.  Grammar of one line
(separators: any run of spaces and tabs)::

    line    := [label [qid] {feature}] [comment] ["\\r"] "\\n"
    label   := number                      (finite)
    qid     := "qid:" ["+"|"-"] digits     (int64)
    feature := digits ":" number           (1 <= index <= 2**31 - 1, increasing)
    number  := ["+"|"-"] (digits ["." [digits]] | "." digits) [("e"|"E") ["+"|"-"] digits]
    comment := "#" anything

`format_rows` turns a block of CSR rows into SVM-light text (csrc/svmlight_text.pxd).
"""

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawRealloc, PyMem_RawFree
from cpython.buffer cimport PyBUF_FORMAT
from cpython.bytes cimport PyBytes_FromStringAndSize
from libc.stdint cimport int32_t, int64_t
from libc.string cimport memchr, memcpy

import numpy as np

from svmlight_numbers cimport (is_end, skip_to_token, is_digit, token_end, parse_double,
                               parse_int64, dense_rows)
from svmlight_errors cimport (ErrorReport, report, feature_error, label_error, index_error,
                              value_error, error_message, RC_DONE, RC_LIMIT, RC_ERROR,
                              RC_NOMEM, E_NONE, E_BAD_QID, E_QID_MISSING, E_QID_UNEXPECTED,
                              E_STRAY_CR, INT32_MAX_)
from svmlight_store cimport (Rows, Carry, PY_SSIZE_T_MAX, rows_free, reserve_rows,
                             reserve_nnz, grow_nnz, presize, start_row, carry_append)
from svmlight_text cimport OutBuf, out_reserve, fmt_int, fmt_double

# Index digits are accumulated up to this bound only; anything at or above it
# is certainly beyond int32, and stopping there keeps int64 from overflowing.
cdef int64_t INDEX_CAP = 100000000000


# ---------------------------------------------------------------- dense rows (model files' weights)

def parse_dense_rows(const unsigned char[::1] buf, Py_ssize_t start, Py_ssize_t stop,
                     Py_ssize_t n_cols, double[::1] out, Py_ssize_t out_row, Py_ssize_t max_rows):
    """Parse whole lines of buf[start:stop] as rows of exactly n_cols numbers.

    Line grammar: blanks (spaces, tabs) around and between the numbers (the
    `number` of the module docstring, converted exactly), then "\n" or
    "\r\n".  buf[stop - 1] must be a newline.  Row r of the text goes to
    out[(out_row + r) * n_cols : (out_row + r + 1) * n_cols]; at most
    max_rows rows are parsed.

    Returns (rows, pos, status, col): rows parsed and stored, and with status
    0 the position just after the last of them; otherwise row `rows` (0-based
    within this call) is bad, pos is where its line starts, col the 1-based
    position of the value concerned and status 1 (not a number), 2 (overflows
    to infinity), 3 (fewer than n_cols values) or 4 (more than n_cols).
    """
    if (start < 0 or stop > buf.shape[0] or start > stop or n_cols < 1 or out_row < 0
            or max_rows < 0):
        raise ValueError("parse_dense_rows: bad arguments")
    if stop > start and buf[stop - 1] != 10:
        raise ValueError("parse_dense_rows: the block must end with a newline")
    if (out_row + max_rows) * n_cols > out.shape[0]:
        raise ValueError("parse_dense_rows: output array too small")
    if stop == start or max_rows == 0:
        return 0, start, 0, 0
    cdef const char* base = <const char*>&buf[0]
    cdef const char* line = base + start
    cdef Py_ssize_t rows = 0, col = 0
    # The GIL stays held: full-precision weights (17 digits) mostly take the exact slow
    # path, which needs it, and taking it back per number would cost more than the parse.
    cdef int status = dense_rows(&line, base + stop, n_cols, &out[out_row * n_cols], max_rows,
                                 &rows, &col)
    if status != 0:
        return rows, line - base, status, col + 1
    return rows, line - base, 0, 0


# ---------------------------------------------------------------- buffers handed to NumPy

cdef class _Owned:
    """Owner of one PyMem_Raw block, exposed through the buffer protocol.

    np.asarray(owner) makes an array on the block without copying; the array
    keeps the owner alive, and the owner frees the block when it dies.
    """
    cdef void* ptr
    cdef Py_ssize_t shape[1]
    cdef Py_ssize_t strides[1]
    cdef Py_ssize_t itemsize
    cdef const char* fmt

    def __getbuffer__(self, Py_buffer* view, int flags):
        view.buf = self.ptr
        view.obj = self
        view.len = self.shape[0] * self.itemsize
        view.readonly = 0
        view.itemsize = self.itemsize
        view.format = <char*>self.fmt if (flags & PyBUF_FORMAT) else NULL
        view.ndim = 1
        view.shape = self.shape
        view.strides = self.strides
        view.suboffsets = NULL
        view.internal = NULL

    def __dealloc__(self):
        if self.ptr != NULL:
            PyMem_RawFree(self.ptr)
            self.ptr = NULL


cdef object _wrap(void* ptr, Py_ssize_t n, Py_ssize_t itemsize, const char* fmt):
    """An ndarray over ptr[:n] that takes ownership of ptr (trimmed to n items)."""
    cdef void* q
    cdef _Owned o = _Owned.__new__(_Owned)
    cdef Py_ssize_t nbytes = (n if n > 0 else 1) * itemsize
    q = PyMem_RawRealloc(ptr, nbytes)      # trim (or allocate when ptr is NULL)
    if q == NULL:
        if ptr == NULL:
            raise MemoryError()
        q = ptr                             # shrinking failed: keep the larger block
    o.ptr = q
    o.shape[0] = n
    o.strides[0] = itemsize
    o.itemsize = itemsize
    o.fmt = fmt
    return np.asarray(o)


# ---------------------------------------------------------------- parser

cdef class Parser:
    """Incremental SVM-light parser.

    Usage (this is what linsvm.io.svmlight does)::

        p = Parser(with_qid, n_features_limit)
        for chunk in chunks:
            p.feed(chunk)                 # any bytes-like object
            while p.parse(max_rows) == 1: # row limit reached: drain, continue
                arrays = p.take()
            (p.parse(...) == -1 means an error: see p.error())
        p.end()                           # the input has ended
        ... parse() again as above, then take()

    The caller must keep calling parse() until it returns 0 before feeding
    the next chunk.  Line numbers count every line of the whole stream.
    parse() releases the GIL, so one Parser must not be used from two
    threads at once.
    """
    cdef Rows R                     # the rows held, and where the stream's rows are
    cdef Carry carry                # an incomplete line carried over from the last chunk
    cdef ErrorReport err
    cdef int qid_mode               # -1 undecided, 0 rows have no qid, 1 rows have qid
    cdef int64_t qid_first_line
    cdef int64_t limit              # largest allowed feature index
    cdef int64_t lineno             # lines parsed so far
    cdef int64_t n_skipped          # blank and comment lines so far
    cdef int64_t rows_taken         # rows handed over by take() before the held ones
    # current chunk
    cdef const unsigned char[::1] view
    cdef const char* buf
    cdef Py_ssize_t buf_len, pos
    cdef bint ended

    def __cinit__(self, bint with_qid=False, n_features=None):
        self.R.want_qid = with_qid
        self.qid_mode = -1
        self.limit = INT32_MAX_
        if n_features is not None:
            if n_features < 0:
                raise ValueError("n_features must be >= 0")
            if n_features < INT32_MAX_:
                self.limit = n_features
        self.buf = NULL
        self.buf_len = 0
        self.pos = 0

    def __dealloc__(self):
        rows_free(&self.R)
        PyMem_RawFree(self.carry.text)

    # -- the parsing loop -----------------------------------------------------

    cdef int _parse_head(self, const char** pp, int64_t lineno, double* label,
                         int64_t* qv) noexcept nogil:
        """The label and the optional qid of a line, from pp[0] on the label (left after
        them, or where the error is); RC_DONE or RC_ERROR."""
        cdef const char* p = pp[0]
        cdef const char* tok = p
        cdef int st = parse_double(&p, label)
        cdef bint has_qid = False
        pp[0] = p
        if st != 0 or not is_end(p[0]):
            return label_error(&self.err, lineno, tok, p, st)
        while p[0] == c' ' or p[0] == c'\t':
            p += 1
        pp[0] = p
        qv[0] = 0
        if p[0] == c'q' and p[1] == c'i' and p[2] == c'd' and p[3] == c':':
            tok = p
            p += 4
            st = parse_int64(&p, qv)
            pp[0] = p
            if st != 0 or not is_end(p[0]):
                return report(&self.err, E_BAD_QID, lineno, tok, token_end(tok), 0, 0)
            has_qid = True
        if self.R.want_qid:
            if self.qid_mode < 0:
                self.qid_mode = has_qid
                self.qid_first_line = lineno
            elif self.qid_mode != has_qid:
                return report(&self.err, E_QID_UNEXPECTED if has_qid else E_QID_MISSING,
                              lineno, NULL, NULL, self.qid_first_line, 0)
        return RC_DONE

    cdef int _parse_lines(self, const char* p, const char* end, Py_ssize_t max_rows,
                          const char** stop) noexcept nogil:
        """Parse the complete lines in [p, end) (end[-1] is '\\n').

        Stops early when max_rows rows are buffered (RC_LIMIT) or on an error.
        stop[0] receives the first unparsed byte.
        """
        # Hot state lives in locals; it is written back before any call that
        # may look at it (growth, errors) and on exit.
        cdef Py_ssize_t nnz = self.R.nnz, cap_nnz = self.R.cap_nnz, n_rows = self.R.n_rows
        cdef int32_t* indices = self.R.indices
        cdef double* data = self.R.data
        cdef int64_t lineno = self.lineno, skipped = self.n_skipped
        cdef int64_t noted = self.R.gap_skipped[self.R.n_gaps - 1] if self.R.n_gaps else 0
        cdef int64_t max_index = self.R.max_index, limit = self.limit, idx, prev, qv
        cdef const char* tok
        cdef const char* q
        cdef double label, val
        cdef int st, rc = RC_DONE
        cdef char c
        while p < end:
            if n_rows >= max_rows:
                rc = RC_LIMIT
                break
            lineno += 1
            st = skip_to_token(&p, end)
            if st == 1:                      # blank or comment-only line
                skipped += 1
                continue
            if st < 0:
                rc = report(&self.err, E_STRAY_CR, lineno, p, p, 0, 0)
                break
            rc = self._parse_head(&p, lineno, &label, &qv)
            if rc != RC_DONE:
                break
            if start_row(&self.R, n_rows, self.rows_taken + n_rows, label, qv, skipped,
                         &noted) != 0:
                rc = RC_NOMEM
                break
            # features
            prev = 0
            while True:
                st = skip_to_token(&p, end)
                if st == 1:                  # end of the row
                    break
                if st < 0:
                    rc = report(&self.err, E_STRAY_CR, lineno, p, p, 0, 0)
                    break
                c = p[0]
                # index
                tok = p
                idx = 0
                while is_digit(c):
                    if idx < INDEX_CAP:
                        idx = idx * 10 + (c - c'0')
                    p += 1
                    c = p[0]
                if p == tok or c != c':':
                    rc = feature_error(&self.err, lineno, tok)
                    break
                if idx > limit or idx <= prev:
                    rc = index_error(&self.err, lineno, tok, p, idx, prev, limit)
                    break
                # value
                p += 1
                q = p
                st = parse_double(&p, &val)
                if st != 0 or not is_end(p[0]):
                    rc = value_error(&self.err, lineno, tok, q, p, st)
                    break
                # store:  indices[nnz], data[nnz] = idx - 1, val
                if nnz >= cap_nnz:
                    self.R.nnz = nnz
                    if grow_nnz(&self.R) != 0:
                        rc = RC_NOMEM
                        break
                    cap_nnz = self.R.cap_nnz
                    indices = self.R.indices
                    data = self.R.data
                indices[nnz] = <int32_t>(idx - 1)
                data[nnz] = val
                nnz += 1
                prev = idx
            if rc != RC_DONE:
                break
            # finish the row
            if prev > max_index:
                max_index = prev
            n_rows += 1
            self.R.indptr[n_rows] = nnz
        stop[0] = p
        self.R.nnz = nnz
        self.R.n_rows = n_rows
        self.R.max_index = max_index
        self.lineno = lineno
        self.n_skipped = skipped
        return rc

    cdef int _parse_buf(self, Py_ssize_t max_rows) noexcept nogil:
        """Parse what can be parsed of the current chunk and the carry."""
        cdef const char* b = self.buf
        cdef Py_ssize_t n = self.buf_len
        cdef Py_ssize_t pos = self.pos
        cdef const char* nl
        cdef const char* last
        cdef const char* stop
        cdef int rc
        # 1. finish the line carried over from the previous chunk
        if self.carry.len > 0:
            if not self.carry.complete:
                if pos >= n:
                    return RC_DONE
                nl = <const char*>memchr(b + pos, c'\n', n - pos)
                if nl == NULL:
                    if carry_append(&self.carry, b + pos, n - pos) != 0:
                        return RC_NOMEM
                    self.pos = n
                    return RC_DONE
                if carry_append(&self.carry, b + pos, nl + 1 - (b + pos)) != 0:
                    return RC_NOMEM
                pos = nl + 1 - b
                self.pos = pos
                self.carry.complete = True
            rc = self._parse_lines(self.carry.text, self.carry.text + self.carry.len, max_rows,
                                   &stop)
            if rc != RC_DONE:
                return rc
            self.carry.len = 0
            self.carry.complete = False
        # 2. the complete lines of the chunk, parsed in place
        if pos >= n:
            return RC_DONE
        last = b + n - 1
        while last >= b + pos and last[0] != c'\n':
            last -= 1
        if last >= b + pos:
            if presize(&self.R, b + pos, last + 1) != 0:
                return RC_NOMEM
            rc = self._parse_lines(b + pos, last + 1, max_rows, &stop)
            self.pos = stop - b
            if rc != RC_DONE:
                return rc
            pos = last + 1 - b
        # 3. keep the incomplete tail for the next chunk
        if pos < n:
            if carry_append(&self.carry, b + pos, n - pos) != 0:
                return RC_NOMEM
        self.pos = n
        return RC_DONE

    # -- Python interface -----------------------------------------------------

    def feed(self, data, Py_ssize_t n=-1):
        """Hand the parser the next chunk: a bytes-like object, of which the
        first n bytes (all when n < 0) are input.  The object must not change
        until parse() has returned 0."""
        if self.pos < self.buf_len:
            raise RuntimeError("feed() before the previous chunk was parsed")
        if self.ended:
            raise RuntimeError("feed() after end()")
        self.buf = NULL
        self.buf_len = 0
        self.pos = 0
        self.view = None
        cdef const unsigned char[::1] v = data
        if n < 0 or n > v.shape[0]:
            n = v.shape[0]
        if n == 0:
            return
        self.view = v
        self.buf = <const char*>&v[0]
        self.buf_len = n

    def end(self):
        """Declare the end of the input: an unterminated last line counts."""
        if self.pos < self.buf_len:
            raise RuntimeError("end() before the last chunk was parsed")
        if not self.ended:
            self.ended = True
            if self.carry.len > 0 and not self.carry.complete:
                if carry_append(&self.carry, b"\n", 1) != 0:
                    raise MemoryError()
                self.carry.complete = True

    def parse(self, Py_ssize_t max_rows=PY_SSIZE_T_MAX):
        """Parse buffered input until it runs out (returns 0), until max_rows
        rows are held (returns 1: take() them and call parse() again), or up to
        an error (returns -1: see error())."""
        cdef int rc
        if self.err.code != E_NONE:
            return RC_ERROR
        with nogil:
            rc = self._parse_buf(max_rows)
        if rc == RC_NOMEM:
            raise MemoryError("out of memory while parsing")
        return rc

    @property
    def n_rows(self):
        """Rows held (not yet taken)."""
        return self.R.n_rows

    @property
    def nnz(self):
        """Non-zeros held (not yet taken)."""
        return self.R.nnz

    def reserve(self, Py_ssize_t n_rows, Py_ssize_t nnz):
        """Make room for n_rows rows and nnz non-zeros in all (a size hint)."""
        if reserve_rows(&self.R, n_rows) != 0 or reserve_nnz(&self.R, nnz) != 0:
            raise MemoryError()

    @property
    def lineno(self):
        """Lines parsed so far in the whole stream."""
        return self.lineno

    def row_gaps(self):
        """Where the rows are, as two int64 arrays (rows, skipped): row rows[k] of the
        whole stream (rows taken before count) and every row after it up to the next
        entry are preceded by skipped[k] blank or comment lines, so row r lies on line
        r + 1 + skipped[k], k the last entry with rows[k] <= r (no entry: none
        skipped).  Empty for a stream without blank or comment lines before a row."""
        rows = np.empty(self.R.n_gaps, dtype=np.int64)
        skipped = np.empty(self.R.n_gaps, dtype=np.int64)
        cdef Py_ssize_t k
        for k in range(self.R.n_gaps):
            rows[k] = self.R.gap_rows[k]
            skipped[k] = self.R.gap_skipped[k]
        return rows, skipped

    @property
    def qid_mode(self):
        """With with_qid: -1 before the first row, then 1 if the rows have a
        qid and 0 if not (the pattern every later row must follow)."""
        return self.qid_mode

    @property
    def qid_first_line(self):
        """Line of the row that set qid_mode (0 while it is -1)."""
        return self.qid_first_line if self.qid_mode >= 0 else 0

    def take(self):
        """Hand over the rows held as NumPy arrays and start afresh.

        Returns (indptr int64, indices int32, data float64, labels float64,
        qid int64 or None, max_index) where max_index is the largest 1-based
        feature index among these rows (0 if none).

        Guarantees, which linsvm.problem.CSRBuffers.trusted relies on (the
        solver cores index these arrays without bounds checks):

        * the arrays are 1-D, C-contiguous, exactly n_rows + 1 / nnz / n_rows
          long, and owned by nobody else;
        * indptr[0] == 0 (set when the array is first allocated, in
          svmlight_store.pxd's reserve_rows, or below), indptr[-1] == nnz, and indptr never
          decreases: a row's end is written only when the row is complete
          (`self.R.indptr[n_rows] = nnz` in _parse_lines), nnz only grows,
          and a line that fails stops the parse before its row is ended;
        * every stored index is idx - 1 for an idx that passed
          `idx > limit` (limit = min(n_features, 2**31 - 1)) and
          `idx <= prev` (prev starts at 0 on each row), so
          0 <= index < max_index <= limit, and indices increase within a row;
        * every value and label is finite: parse_double returns 0 only for a
          finite double (its fast path multiplies or divides a mantissa
          <= 2**53 by an exact power of ten <= 1e22; its slow path refuses
          infinity, and its grammar cannot spell nan), and any other return
          stops the parse with an error.
        """
        cdef Rows* R = &self.R
        cdef Py_ssize_t n_rows = R.n_rows
        cdef Py_ssize_t nnz = R.nnz
        cdef int64_t* indptr = R.indptr
        if indptr == NULL:
            indptr = <int64_t*>PyMem_RawMalloc(sizeof(int64_t))
            if indptr == NULL:
                raise MemoryError()
            indptr[0] = 0
        R.indptr = NULL
        a_indptr = _wrap(indptr, n_rows + 1, sizeof(int64_t), b"q")
        a_indices = _wrap(R.indices, nnz, sizeof(int32_t), b"i")
        R.indices = NULL
        a_data = _wrap(R.data, nnz, sizeof(double), b"d")
        R.data = NULL
        a_labels = _wrap(R.labels, n_rows, sizeof(double), b"d")
        R.labels = NULL
        a_qid = None
        if R.want_qid:
            a_qid = _wrap(R.qids, n_rows, sizeof(int64_t), b"q")
            R.qids = NULL
        max_index = R.max_index
        self.rows_taken += n_rows
        R.hint_rows = n_rows
        R.hint_nnz = nnz
        R.n_rows = 0
        R.cap_rows = 0
        R.nnz = 0
        R.cap_nnz = 0
        R.max_index = 0
        return a_indptr, a_indices, a_data, a_labels, a_qid, max_index

    def error(self):
        """(line number, one-line description) of the error that stopped parsing."""
        return self.err.line, error_message(&self.err)


# ---------------------------------------------------------------- writer

ctypedef fused index_t:
    int32_t
    int64_t

ctypedef fused ptr_t:
    int32_t
    int64_t


def format_rows(const ptr_t[::1] indptr, const index_t[::1] indices,
                const double[::1] data, const double[::1] labels,
                const int64_t[::1] qid, bint with_qid,
                Py_ssize_t r0, Py_ssize_t r1):
    """SVM-light text of CSR rows r0..r1-1 as bytes.

    Inputs are trusted (validated by linsvm.io.svmlight): canonical CSR, finite
    values, 0 <= indices < 2**31 - 1, len(qid) == len(labels) when with_qid.
    """
    cdef OutBuf out
    cdef Py_ssize_t i, k, k0, k1
    if r0 < 0 or r1 > labels.shape[0] or r1 + 1 > indptr.shape[0] or r0 > r1:
        raise ValueError("row range out of bounds")
    if with_qid and qid.shape[0] < r1:
        raise ValueError("qid too short")
    k0 = indptr[r0] if r1 > r0 else 0
    k1 = indptr[r1] if r1 > r0 else 0
    if k0 < 0 or k1 > data.shape[0] or k1 > indices.shape[0] or k0 > k1:
        raise ValueError("indptr out of bounds")
    out.p, out.n, out.cap = NULL, 0, 0
    try:
        out_reserve(&out, (r1 - r0) * 32 + (k1 - k0) * 24 + 64)
        for i in range(r0, r1):
            k0 = indptr[i]
            k1 = indptr[i + 1]
            if k0 > k1 or k1 > data.shape[0]:
                raise ValueError("indptr not monotonic")
            out_reserve(&out, 80 + (k1 - k0) * 48)
            out.n += fmt_double(out.p + out.n, labels[i])
            if with_qid:
                memcpy(out.p + out.n, b" qid:", 5)
                out.n += 5
                out.n += fmt_int(out.p + out.n, qid[i])
            for k in range(k0, k1):
                out.p[out.n] = c' '
                out.n += 1
                out.n += fmt_int(out.p + out.n, <int64_t>indices[k] + 1)
                out.p[out.n] = c':'
                out.n += 1
                out.n += fmt_double(out.p + out.n, data[k])
            out.p[out.n] = c'\n'
            out.n += 1
        return PyBytes_FromStringAndSize(out.p, out.n)
    finally:
        PyMem_RawFree(out.p)
