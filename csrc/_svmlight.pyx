"""SVM-light / LIBSVM text format: the compiled parser and writer.

This module is private; `linsvm.data` is its only user.  It knows nothing about
files, names or exceptions of linsvm: the parser is fed byte chunks, reports a
status code, and on failure offers the line number and a one-line description
that `linsvm.data` prefixes with the file name (parse in two layers).

Parser
------
`Parser` consumes a byte stream in chunks of any size.  Complete lines are
parsed in place, straight from the caller's buffer, with the GIL released; an
incomplete last line is copied to a small carry buffer and finished with the
next chunk.  Rows go into five growing C arrays, allocated with
PyMem_RawMalloc/PyMem_RawRealloc (so tracemalloc sees them) and grown by a
factor of 1.5:

    indptr  int64  (n_rows + 1)    indices int32 (nnz, 0-based)
    data    float64 (nnz)          labels  float64 (n_rows)
    qid     int64  (n_rows, only when asked for)

`take()` trims them to size and hands them to NumPy without a copy: each array
is owned by a small `_Owned` object exposing the buffer protocol, which the
NumPy array keeps alive as its base.

Grammar of one line (separators: any run of spaces and tabs)::

    line    := [label [qid] {feature}] [comment] ["\\r"] "\\n"
    label   := number                      (finite)
    qid     := "qid:" ["+"|"-"] digits     (int64)
    feature := digits ":" number           (1 <= index <= 2**31 - 1, increasing)
    number  := ["+"|"-"] (digits ["." [digits]] | "." digits) [("e"|"E") ["+"|"-"] digits]
    comment := "#" anything

Numbers are converted exactly, to the same double as Python's float(): a fast
path handles a decimal mantissa below 2**53 scaled by a power of ten that is
itself exact (Clinger's observation: one correctly rounded IEEE multiply or
divide of two exact operands gives the correctly rounded result); a second one
the 16-19 digit mantissas of values printed by repr() (0.10440134307313079 has
17 digits, above 2**53) scaled by 10**q with |q| <= 27, in exact integer
arithmetic (lsvm_decimal_to_double below); anything else goes to
PyOS_string_to_double (David Gay's correctly rounded strtod, independent of the
locale), taking the GIL for that rare path.  Before the second path a file of such
values went through that call for most of its numbers: 17 s of the 29 s that
`linsvm-train` took on a 1.1 GB file of 43M of them.

Writer
------
`format_rows` turns a block of CSR rows into SVM-light text: 1-based indices,
labels and values in the shortest form that reads back to the same double
(`repr(float)` without a trailing ".0"; integers below 2**53 are printed by a
fast integer path that gives the same digits).
"""

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawRealloc, PyMem_RawFree, PyMem_Free
from cpython.buffer cimport PyBUF_FORMAT
from cpython.bytes cimport PyBytes_FromStringAndSize
from cpython.exc cimport PyErr_Occurred, PyErr_Clear
from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memchr, memcpy, strlen
from libc.math cimport floor, fabs, signbit

import numpy as np


cdef extern from "Python.h":
    # Both are public C-API; declared here because Cython ships no .pxd for them.
    # Called with overflow_exception NULL: an out-of-range value gives +-HUGE_VAL
    # and no exception.
    double PyOS_string_to_double(const char *s, char **endptr, void *overflow_exception)
    char *PyOS_double_to_string(double val, char format_code, int precision,
                                int flags, int *ptype)
    const Py_ssize_t PY_SSIZE_T_MAX

cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    #if defined(__SIZEOF_INT128__)
    static const uint64_t LSVM_POW5[28] = {
        1ULL, 5ULL, 25ULL, 125ULL, 625ULL, 3125ULL, 15625ULL, 78125ULL, 390625ULL,
        1953125ULL, 9765625ULL, 48828125ULL, 244140625ULL, 1220703125ULL, 6103515625ULL,
        30517578125ULL, 152587890625ULL, 762939453125ULL, 3814697265625ULL,
        19073486328125ULL, 95367431640625ULL, 476837158203125ULL, 2384185791015625ULL,
        11920928955078125ULL, 59604644775390625ULL, 298023223876953125ULL,
        1490116119384765625ULL, 7450580596923828125ULL};

    /* w * 10**q rounded to the nearest double (ties to even), for 0 < w < 2**64 and
       |q| <= 27, from exact integers: 10**q = 5**q 2**q, so the value is
           n 2**q                    with n = w 5**q (q >= 0, exact in 128 bits), or
           (n + r/d) 2**(q - s)      with n = floor(w 2**s / d), r = the remainder,
                                     d = 5**-q < 2**63, s = 64 + clz(w) (q < 0),
       n then rounded to 53 bits by its dropped bits, the remainder (r > 0) breaking
       a tie upwards.  5**27 < 2**63 and 10**-27 <= value < 2**64 10**27, so every
       result is a normal double.  Returns 0 (out untouched) where unsupported. */
    static int lsvm_decimal_to_double(uint64_t w, int64_t q, double* out) {
        unsigned __int128 n, num, rest, half;
        uint64_t top, d, hi, bits64;
        int e2, sticky = 0, nbits, shift, s;
        if (w == 0 || q < -27 || q > 27)
            return 0;
        if (q >= 0) {
            n = (unsigned __int128)w * LSVM_POW5[q];
            e2 = (int)q;
        } else {
            d = LSVM_POW5[-q];
            s = 64 + __builtin_clzll(w);
            num = ((unsigned __int128)(w << (s - 64))) << 64;      /* w 2**s */
            n = num / d;
            sticky = num != n * d;
            e2 = (int)q - s;
        }
        hi = (uint64_t)(n >> 64);
        nbits = hi ? 128 - __builtin_clzll(hi) : 64 - __builtin_clzll((uint64_t)n);
        shift = nbits - 53;
        if (shift <= 0) {
            top = (uint64_t)n << -shift;                 /* exact: sticky is 0 here */
        } else {
            top = (uint64_t)(n >> shift);
            rest = n & ((((unsigned __int128)1) << shift) - 1);
            half = ((unsigned __int128)1) << (shift - 1);
            if (rest > half || (rest == half && (sticky || (top & 1))))
                top++;
            if (top == (1ULL << 53)) {
                top >>= 1;
                shift++;
            }
        }
        /* value = top 2**(e2 + shift), top in [2**52, 2**53) */
        bits64 = ((uint64_t)(e2 + shift + 52 + 1023) << 52) | (top & ((1ULL << 52) - 1));
        memcpy(out, &bits64, sizeof(double));
        return 1;
    }
    #else
    static int lsvm_decimal_to_double(uint64_t w, int64_t q, double* out) { return 0; }
    #endif
    """
    int lsvm_decimal_to_double(uint64_t w, int64_t q, double* out) nogil


cdef extern from "<float.h>":
    # 0 when double arithmetic is done in double precision (SSE2, ARM, ...).  The
    # fast path needs that: with x87 extended precision one multiply could be
    # rounded twice, so there everything goes to the exact slow path.
    const int FLT_EVAL_METHOD


# ---------------------------------------------------------------------------
# Status and error codes
# ---------------------------------------------------------------------------

# Return codes of Parser.parse(): the fed chunk is consumed / max_rows rows are
# held / bad input (see Parser.error()) / out of memory (raised as MemoryError).
cdef enum:
    RC_DONE = 0
    RC_LIMIT = 1
    RC_ERROR = -1
    RC_NOMEM = -2

cdef enum:
    E_NONE = 0
    E_MISSING_LABEL
    E_BAD_LABEL
    E_LABEL_NONFINITE
    E_BAD_QID
    E_QID_PLACE
    E_QID_MISSING
    E_QID_UNEXPECTED
    E_NO_COLON
    E_BAD_INDEX
    E_EMPTY_INDEX
    E_NEG_INDEX
    E_INDEX_ZERO
    E_INDEX_INT32
    E_INDEX_NFEAT
    E_NOT_INCREASING
    E_EMPTY_VALUE
    E_NON_NUMERIC
    E_NON_FINITE
    E_STRAY_CR

cdef int64_t INT32_MAX_ = 2147483647
# Index digits are accumulated up to this bound only; anything at or above it
# is certainly beyond int32, and stopping there keeps int64 from overflowing.
cdef int64_t INDEX_CAP = 100000000000
cdef int ERR_TOK_MAX = 40

# Exact powers of ten: 10**k is representable exactly for 0 <= k <= 22.
cdef double[23] POW10 = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
                         1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18,
                         1e19, 1e20, 1e21, 1e22]
cdef uint64_t TWO53 = 9007199254740992ULL


# ---------------------------------------------------------------------------
# Character classes and number parsing (pure C, nogil)
# ---------------------------------------------------------------------------

cdef inline bint _is_end(char c) noexcept nogil:
    """True if c ends a token: separator, line end, carriage return or comment."""
    return c == c' ' or c == c'\t' or c == c'\n' or c == c'\r' or c == c'#'


cdef inline int _skip_to_token(const char** pp, const char* end) noexcept nogil:
    """Skip blanks.  If the line ends there (newline, CRLF, or a '#' comment) move
    past its end and return 1; return -1 at a stray CR (p left on it); else 0
    with p on the next token.  The buffer always ends in a newline."""
    cdef const char* p = pp[0]
    while p[0] == c' ' or p[0] == c'\t':
        p += 1
    if p[0] == c'\n':
        pp[0] = p + 1
        return 1
    if p[0] == c'#':
        pp[0] = <const char*>memchr(p, c'\n', end - p) + 1
        return 1
    if p[0] == c'\r':
        if p[1] == c'\n':
            pp[0] = p + 2
            return 1
        pp[0] = p
        return -1
    pp[0] = p
    return 0


cdef inline bint _is_digit(char c) noexcept nogil:
    return c'0' <= c <= c'9'


cdef inline const char* _token_end(const char* p) noexcept nogil:
    """First byte at or after p that ends a token (a '\\n' always follows)."""
    while not _is_end(p[0]):
        p += 1
    return p


cdef int _slow_double(const char* s, Py_ssize_t n, double* out) noexcept nogil:
    """Exact conversion of the valid decimal string s[:n] by Python's strtod.

    Returns 0, or -1 if Python rejected it or memory ran out.  Takes the GIL.
    """
    cdef char small[128]
    cdef char* tmp = small
    cdef char* endp = NULL
    cdef int rc = 0
    if n >= 128:
        tmp = <char*>PyMem_RawMalloc(n + 1)
        if tmp == NULL:
            return -1
    memcpy(tmp, s, n)
    tmp[n] = 0
    with gil:
        out[0] = PyOS_string_to_double(tmp, &endp, NULL)
        if PyErr_Occurred() != NULL:
            PyErr_Clear()
            rc = -1
        elif endp != tmp + n:
            rc = -1
    if tmp != small:
        PyMem_RawFree(tmp)
    return rc


cdef inline int _parse_double(const char** pp, double* out) noexcept nogil:
    """Parse a decimal number at pp[0]; advance pp[0] past it.

    Returns 0 (finite value in out), 1 (not a number; pp[0] points where the
    grammar broke), 2 (valid syntax but the value overflows to infinity).
    The caller checks that the token ends at pp[0].
    """
    cdef const char* start = pp[0]
    cdef const char* p = start
    cdef bint neg = False
    cdef bint any_digit = False
    cdef bint inexact = False
    cdef uint64_t mant = 0
    cdef int nd = 0                 # significant digits held in mant
    cdef int64_t exp10 = 0          # value = mant * 10**exp10 (when exact)
    cdef int64_t e = 0
    cdef bint eneg = False
    cdef int d
    cdef double v
    cdef char c = p[0]
    if c == c'-':
        neg = True
        p += 1
    elif c == c'+':
        p += 1
    # integer part
    c = p[0]
    while _is_digit(c):
        any_digit = True
        d = c - c'0'
        if mant == 0 and d == 0:
            pass                    # leading zero
        elif nd < 19:
            mant = mant * 10 + <uint64_t>d
            nd += 1
        else:
            exp10 += 1              # digit dropped from the mantissa
            if d != 0:
                inexact = True
        p += 1
        c = p[0]
    # fraction
    if c == c'.':
        p += 1
        c = p[0]
        while _is_digit(c):
            any_digit = True
            d = c - c'0'
            if mant == 0 and d == 0:
                exp10 -= 1
            elif nd < 19:
                mant = mant * 10 + <uint64_t>d
                nd += 1
                exp10 -= 1
            elif d != 0:
                inexact = True
            p += 1
            c = p[0]
    if not any_digit:
        pp[0] = p
        return 1
    # exponent
    if c == c'e' or c == c'E':
        p += 1
        c = p[0]
        if c == c'-':
            eneg = True
            p += 1
        elif c == c'+':
            p += 1
        c = p[0]
        if not _is_digit(c):
            pp[0] = p
            return 1
        while _is_digit(c):
            if e < 100000000:
                e = e * 10 + (c - c'0')
            p += 1
            c = p[0]
        if eneg:
            exp10 -= e
        else:
            exp10 += e
    pp[0] = p
    if mant == 0:
        out[0] = -0.0 if neg else 0.0
        return 0
    if FLT_EVAL_METHOD == 0 and not inexact and mant <= TWO53:
        if 0 <= exp10 <= 22:
            v = <double>mant * POW10[exp10]
            out[0] = -v if neg else v
            return 0
        if -22 <= exp10 < 0:
            v = <double>mant / POW10[-exp10]
            out[0] = -v if neg else v
            return 0
        if 22 < exp10 <= 22 + 15:
            # Move the excess power into the mantissa while it stays exact.
            while exp10 > 22 and mant <= TWO53 // 10:
                mant *= 10
                exp10 -= 1
            if exp10 == 22:
                v = <double>mant * POW10[22]
                out[0] = -v if neg else v
                return 0
    if not inexact and lsvm_decimal_to_double(mant, exp10, &v):
        out[0] = -v if neg else v
        return 0
    if _slow_double(start, p - start, &v) != 0:
        return 1
    if v - v != 0.0:                # inf (nan cannot come from this grammar)
        return 2
    out[0] = v
    return 0


cdef inline int _parse_int64(const char** pp, int64_t* out) noexcept nogil:
    """Parse ["+"|"-"] digits as int64; 0 ok, 1 syntax error or overflow."""
    cdef const char* p = pp[0]
    cdef bint neg = False
    cdef uint64_t v = 0
    cdef uint64_t lim
    cdef int d
    if p[0] == c'-':
        neg = True
        p += 1
    elif p[0] == c'+':
        p += 1
    if not _is_digit(p[0]):
        pp[0] = p
        return 1
    lim = 9223372036854775808ULL if neg else 9223372036854775807ULL
    while _is_digit(p[0]):
        d = p[0] - c'0'
        if v > (lim - <uint64_t>d) // 10:
            pp[0] = p
            return 1
        v = v * 10 + <uint64_t>d
        p += 1
    pp[0] = p
    if neg:
        out[0] = <int64_t>(0ULL - v)
    else:
        out[0] = <int64_t>v
    return 0


# ---------------------------------------------------------------------------
# Dense rows of numbers (the weight rows of model files; linsvm.model uses it)
# ---------------------------------------------------------------------------

cdef inline bint _ends_value(const char* p) noexcept nogil:
    """True if a number may end at p: a blank, a newline or CRLF."""
    return p[0] == c' ' or p[0] == c'\t' or p[0] == c'\n' or (p[0] == c'\r' and p[1] == c'\n')


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
    if start < 0 or stop > buf.shape[0] or start > stop or n_cols < 1 or out_row < 0 or max_rows < 0:
        raise ValueError("parse_dense_rows: bad arguments")
    if stop > start and buf[stop - 1] != 10:
        raise ValueError("parse_dense_rows: the block must end with a newline")
    if (out_row + max_rows) * n_cols > out.shape[0]:
        raise ValueError("parse_dense_rows: output array too small")
    if stop == start or max_rows == 0:
        return 0, start, 0, 0
    cdef const char* base = <const char*>&buf[0]
    cdef const char* p = base + start
    cdef const char* end = base + stop
    cdef const char* line = p
    cdef double* o = &out[0]
    cdef Py_ssize_t rows = 0
    cdef Py_ssize_t col = 0
    cdef Py_ssize_t k
    cdef int status = 0
    cdef int rc
    cdef double v
    # The GIL stays held: full-precision weights (17 digits) mostly take the exact slow
    # path, which needs it, and taking it back per number would cost more than the parse.
    while rows < max_rows and p < end:
        line = p
        col = 0
        k = (out_row + rows) * n_cols
        while True:
            while p[0] == c' ' or p[0] == c'\t':
                p += 1
            if p[0] == c'\n':
                p += 1
                break
            if p[0] == c'\r' and p[1] == c'\n':
                p += 2
                break
            if col == n_cols:
                status = 4
                break
            rc = _parse_double(&p, &v)
            if rc == 0 and not _ends_value(p):
                rc = 1
            if rc != 0:
                status = rc
                break
            o[k + col] = v
            col += 1
        if status == 0 and col != n_cols:
            status = 3
        if status != 0:
            break
        rows += 1
    if status != 0:
        return rows, line - base, status, col + 1
    return rows, p - base, 0, 0


# ---------------------------------------------------------------------------
# Buffers handed to NumPy
# ---------------------------------------------------------------------------

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


# ---------------------------------------------------------------------------
# Parser
# ---------------------------------------------------------------------------

cdef class Parser:
    """Incremental SVM-light parser.

    Usage (this is what linsvm.data does)::

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
    # output arrays and their sizes
    cdef int64_t* indptr
    cdef int32_t* indices
    cdef double* data
    cdef double* labels
    cdef int64_t* qids
    cdef Py_ssize_t n_rows, cap_rows, nnz, cap_nnz
    cdef Py_ssize_t hint_rows, hint_nnz
    cdef bint presized
    cdef int64_t max_index
    # options and stream state
    cdef bint want_qid
    cdef int qid_mode               # -1 undecided, 0 rows have no qid, 1 rows have qid
    cdef int64_t qid_first_line
    cdef int64_t limit              # largest allowed feature index
    cdef int64_t lineno             # lines parsed so far
    # where the rows are: row r is on line r + 1 + (blank and comment lines before
    # it); one (row, lines skipped so far) pair per row that follows such lines --
    # none for a file without them, so nothing is held in the normal case
    cdef int64_t n_skipped          # blank and comment lines so far
    cdef int64_t rows_taken         # rows handed over by take() before the held ones
    cdef int64_t* gap_rows
    cdef int64_t* gap_skipped
    cdef Py_ssize_t n_gaps, cap_gaps
    # current chunk
    cdef const unsigned char[::1] view
    cdef const char* buf
    cdef Py_ssize_t buf_len, pos
    # incomplete line carried over from the previous chunk
    cdef char* carry
    cdef Py_ssize_t carry_len, carry_cap
    cdef bint carry_complete
    cdef bint ended
    # error report
    cdef int err
    cdef int64_t err_line, err_a, err_b
    cdef char err_tok[64]
    cdef Py_ssize_t err_tok_len, err_tok_full

    def __cinit__(self, bint with_qid=False, n_features=None):
        self.want_qid = with_qid
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
        PyMem_RawFree(self.indptr)
        PyMem_RawFree(self.indices)
        PyMem_RawFree(self.data)
        PyMem_RawFree(self.labels)
        PyMem_RawFree(self.qids)
        PyMem_RawFree(self.carry)
        PyMem_RawFree(self.gap_rows)
        PyMem_RawFree(self.gap_skipped)

    # -- storage ------------------------------------------------------------

    cdef int _reserve_rows(self, Py_ssize_t cap) noexcept nogil:
        """Capacity for at least cap rows; 0 or -1 (out of memory)."""
        cdef bint fresh = self.indptr == NULL
        cdef void* q
        if cap <= self.cap_rows:
            return 0
        if cap > PY_SSIZE_T_MAX // 16:
            return -1
        q = PyMem_RawRealloc(self.indptr, (cap + 1) * sizeof(int64_t))
        if q == NULL:
            return -1
        self.indptr = <int64_t*>q
        if fresh:
            self.indptr[0] = 0
        q = PyMem_RawRealloc(self.labels, cap * sizeof(double))
        if q == NULL:
            return -1
        self.labels = <double*>q
        if self.want_qid:
            q = PyMem_RawRealloc(self.qids, cap * sizeof(int64_t))
            if q == NULL:
                return -1
            self.qids = <int64_t*>q
        self.cap_rows = cap
        return 0

    cdef int _reserve_nnz(self, Py_ssize_t cap) noexcept nogil:
        """Capacity for at least cap non-zeros; 0 or -1 (out of memory)."""
        cdef void* q
        if cap <= self.cap_nnz:
            return 0
        if cap > PY_SSIZE_T_MAX // 16:
            return -1
        q = PyMem_RawRealloc(self.indices, cap * sizeof(int32_t))
        if q == NULL:
            return -1
        self.indices = <int32_t*>q
        q = PyMem_RawRealloc(self.data, cap * sizeof(double))
        if q == NULL:
            return -1
        self.data = <double*>q
        self.cap_nnz = cap
        return 0

    cdef int _grow_rows(self) noexcept nogil:
        """Room for one more row: the capacity grows by half (at least 64)."""
        cdef Py_ssize_t cap = self.cap_rows + (self.cap_rows >> 1)
        if cap < 64:
            cap = 64
        if self.cap_rows == 0 and cap < self.hint_rows:
            cap = self.hint_rows
        return self._reserve_rows(cap)

    cdef int _grow_nnz(self) noexcept nogil:
        """Room for one more non-zero: the capacity grows by half (at least 1024)."""
        cdef Py_ssize_t cap = self.cap_nnz + (self.cap_nnz >> 1)
        if cap < 1024:
            cap = 1024
        if self.cap_nnz == 0 and cap < self.hint_nnz:
            cap = self.hint_nnz
        return self._reserve_nnz(cap)

    cdef int _presize(self, const char* p, const char* end) noexcept nogil:
        """Size empty arrays for the lines in [p, end) by counting ':' and '\\n'.

        Every non-zero has one ':' (qids and comments may add more), every row
        one line end, so this is a close upper bound; it spares small inputs
        the slack of geometric growth.  Only done for the first chunk.
        """
        cdef Py_ssize_t n_colon = 0, n_nl = 0
        cdef char c
        if self.presized:
            return 0
        self.presized = True
        while p < end:
            c = p[0]
            n_colon += c == c':'
            n_nl += c == c'\n'
            p += 1
        if self._reserve_rows(self.n_rows + n_nl + 1) != 0:
            return -1
        return self._reserve_nnz(self.nnz + n_colon + 1)

    cdef int _record_gap(self, int64_t row, int64_t skipped) noexcept nogil:
        """Note that row `row` (of the whole stream) follows `skipped` blank or comment
        lines in all; 0 or -1 (out of memory)."""
        cdef Py_ssize_t cap
        cdef void* q
        if self.n_gaps >= self.cap_gaps:
            cap = self.cap_gaps * 2 if self.cap_gaps else 16
            q = PyMem_RawRealloc(self.gap_rows, cap * sizeof(int64_t))
            if q == NULL:
                return -1
            self.gap_rows = <int64_t*>q
            q = PyMem_RawRealloc(self.gap_skipped, cap * sizeof(int64_t))
            if q == NULL:
                return -1
            self.gap_skipped = <int64_t*>q
            self.cap_gaps = cap
        self.gap_rows[self.n_gaps] = row
        self.gap_skipped[self.n_gaps] = skipped
        self.n_gaps += 1
        return 0

    cdef int _carry_append(self, const char* s, Py_ssize_t n) noexcept nogil:
        cdef Py_ssize_t cap
        cdef void* q
        if self.carry_len + n > self.carry_cap:
            cap = self.carry_cap * 2
            if cap < self.carry_len + n:
                cap = self.carry_len + n
            if cap < 256:
                cap = 256
            q = PyMem_RawRealloc(self.carry, cap)
            if q == NULL:
                return -1
            self.carry = <char*>q
            self.carry_cap = cap
        memcpy(self.carry + self.carry_len, s, n)
        self.carry_len += n
        return 0

    # -- errors ---------------------------------------------------------------

    cdef int _fail(self, int code, int64_t line, const char* tok, const char* tok_end,
                   int64_t a, int64_t b) noexcept nogil:
        """Record an error about the token [tok, tok_end); returns RC_ERROR."""
        cdef Py_ssize_t n = tok_end - tok
        self.err = code
        self.err_line = line
        self.err_a = a
        self.err_b = b
        self.err_tok_full = n
        if n > ERR_TOK_MAX:
            n = ERR_TOK_MAX
        if n > 0:
            memcpy(self.err_tok, tok, n)
        self.err_tok_len = n
        return RC_ERROR

    cdef int _feature_error(self, int64_t line, const char* tok) noexcept nogil:
        """Classify a feature token whose index part is not plain digits + ':'."""
        cdef const char* te = _token_end(tok)
        cdef const char* colon = <const char*>memchr(tok, c':', te - tok)
        cdef const char* q
        if colon == NULL:
            return self._fail(E_NO_COLON, line, tok, te, 0, 0)
        if colon - tok == 3 and tok[0] == c'q' and tok[1] == c'i' and tok[2] == c'd':
            return self._fail(E_QID_PLACE, line, tok, te, 0, 0)
        if colon == tok:
            return self._fail(E_EMPTY_INDEX, line, tok, te, 0, 0)
        if tok[0] == c'-' and colon - tok > 1:
            q = tok + 1
            while q < colon and _is_digit(q[0]):
                q += 1
            if q == colon:
                return self._fail(E_NEG_INDEX, line, tok, colon, 0, 0)
        return self._fail(E_BAD_INDEX, line, tok, te, 0, 0)

    # -- the parsing loop -----------------------------------------------------

    cdef int _parse_lines(self, const char* p, const char* end, Py_ssize_t max_rows,
                          const char** stop) noexcept nogil:
        """Parse the complete lines in [p, end) (end[-1] is '\\n').

        Stops early when max_rows rows are buffered (RC_LIMIT) or on an error.
        stop[0] receives the first unparsed byte.
        """
        # Hot state lives in locals; it is written back before any call that
        # may look at it (growth, errors) and on exit.
        cdef Py_ssize_t nnz = self.nnz
        cdef Py_ssize_t cap_nnz = self.cap_nnz
        cdef Py_ssize_t n_rows = self.n_rows
        cdef int32_t* indices = self.indices
        cdef double* data = self.data
        cdef int64_t lineno = self.lineno
        cdef int64_t skipped = self.n_skipped
        cdef int64_t noted = self.gap_skipped[self.n_gaps - 1] if self.n_gaps else 0
        cdef int64_t max_index = self.max_index
        cdef int64_t limit = self.limit
        cdef bint want_qid = self.want_qid
        cdef const char* tok
        cdef const char* q
        cdef int64_t idx, prev, qv
        cdef double label, val
        cdef bint has_qid
        cdef int st
        cdef int rc = RC_DONE
        cdef char c

        while p < end:
            if n_rows >= max_rows:
                rc = RC_LIMIT
                break
            lineno += 1
            st = _skip_to_token(&p, end)
            if st == 1:                      # blank or comment-only line
                skipped += 1
                continue
            if st < 0:
                rc = self._fail(E_STRAY_CR, lineno, p, p, 0, 0)
                break

            # label
            tok = p
            st = _parse_double(&p, &label)
            if st != 0 or not _is_end(p[0]):
                q = _token_end(tok)
                if memchr(tok, c':', q - tok) != NULL:
                    rc = self._fail(E_MISSING_LABEL, lineno, tok, q, 0, 0)
                elif st == 2 and p == q:
                    rc = self._fail(E_LABEL_NONFINITE, lineno, tok, q, 0, 0)
                else:
                    rc = self._fail(E_BAD_LABEL, lineno, tok, q, 0, 0)
                break

            # optional qid
            while p[0] == c' ' or p[0] == c'\t':
                p += 1
            has_qid = False
            qv = 0
            if p[0] == c'q' and p[1] == c'i' and p[2] == c'd' and p[3] == c':':
                tok = p
                p += 4
                if _parse_int64(&p, &qv) != 0 or not _is_end(p[0]):
                    rc = self._fail(E_BAD_QID, lineno, tok, _token_end(tok), 0, 0)
                    break
                has_qid = True
            if want_qid:
                if self.qid_mode < 0:
                    self.qid_mode = has_qid
                    self.qid_first_line = lineno
                elif self.qid_mode != has_qid:
                    rc = self._fail(E_QID_UNEXPECTED if has_qid else E_QID_MISSING,
                                    lineno, NULL, NULL, self.qid_first_line, 0)
                    break

            # start the row (noting where it is when lines were skipped since the last note)
            if skipped != noted:
                if self._record_gap(self.rows_taken + n_rows, skipped) != 0:
                    rc = RC_NOMEM
                    break
                noted = skipped
            if n_rows >= self.cap_rows:
                if self._grow_rows() != 0:
                    rc = RC_NOMEM
                    break
            self.labels[n_rows] = label
            if want_qid:
                self.qids[n_rows] = qv

            # features
            prev = 0
            while True:
                st = _skip_to_token(&p, end)
                if st == 1:                  # end of the row
                    break
                if st < 0:
                    rc = self._fail(E_STRAY_CR, lineno, p, p, 0, 0)
                    break
                c = p[0]
                # index
                tok = p
                idx = 0
                while _is_digit(c):
                    if idx < INDEX_CAP:
                        idx = idx * 10 + (c - c'0')
                    p += 1
                    c = p[0]
                if p == tok or c != c':':
                    rc = self._feature_error(lineno, tok)
                    break
                if idx > limit:
                    if idx > INT32_MAX_:
                        rc = self._fail(E_INDEX_INT32, lineno, tok, p, idx, 0)
                    else:
                        rc = self._fail(E_INDEX_NFEAT, lineno, tok, p, idx, limit)
                    break
                if idx <= prev:
                    if idx == 0:
                        rc = self._fail(E_INDEX_ZERO, lineno, tok, p, 0, 0)
                    else:
                        rc = self._fail(E_NOT_INCREASING, lineno, tok, p, idx, prev)
                    break
                # value
                p += 1
                q = p
                st = _parse_double(&p, &val)
                if st != 0 or not _is_end(p[0]):
                    if _is_end(q[0]):
                        rc = self._fail(E_EMPTY_VALUE, lineno, tok, _token_end(tok), 0, 0)
                    elif st == 2 and _is_end(p[0]):
                        rc = self._fail(E_NON_FINITE, lineno, q, p, 0, 0)
                    else:
                        rc = self._fail(E_NON_NUMERIC, lineno, q, _token_end(q), 0, 0)
                    break
                # store:  indices[nnz], data[nnz] = idx - 1, val
                if nnz >= cap_nnz:
                    self.nnz = nnz
                    if self._grow_nnz() != 0:
                        rc = RC_NOMEM
                        break
                    cap_nnz = self.cap_nnz
                    indices = self.indices
                    data = self.data
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
            self.indptr[n_rows] = nnz

        stop[0] = p
        self.nnz = nnz
        self.n_rows = n_rows
        self.max_index = max_index
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
        if self.carry_len > 0:
            if not self.carry_complete:
                if pos >= n:
                    return RC_DONE
                nl = <const char*>memchr(b + pos, c'\n', n - pos)
                if nl == NULL:
                    if self._carry_append(b + pos, n - pos) != 0:
                        return RC_NOMEM
                    self.pos = n
                    return RC_DONE
                if self._carry_append(b + pos, nl + 1 - (b + pos)) != 0:
                    return RC_NOMEM
                pos = nl + 1 - b
                self.pos = pos
                self.carry_complete = True
            rc = self._parse_lines(self.carry, self.carry + self.carry_len, max_rows, &stop)
            if rc != RC_DONE:
                return rc
            self.carry_len = 0
            self.carry_complete = False
        # 2. the complete lines of the chunk, parsed in place
        if pos >= n:
            return RC_DONE
        last = b + n - 1
        while last >= b + pos and last[0] != c'\n':
            last -= 1
        if last >= b + pos:
            if self._presize(b + pos, last + 1) != 0:
                return RC_NOMEM
            rc = self._parse_lines(b + pos, last + 1, max_rows, &stop)
            self.pos = stop - b
            if rc != RC_DONE:
                return rc
            pos = last + 1 - b
        # 3. keep the incomplete tail for the next chunk
        if pos < n:
            if self._carry_append(b + pos, n - pos) != 0:
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
            if self.carry_len > 0 and not self.carry_complete:
                if self._carry_append(b"\n", 1) != 0:
                    raise MemoryError()
                self.carry_complete = True

    def parse(self, Py_ssize_t max_rows=PY_SSIZE_T_MAX):
        """Parse buffered input until it runs out (returns 0), until max_rows
        rows are held (returns 1: take() them and call parse() again), or up to
        an error (returns -1: see error())."""
        cdef int rc
        if self.err != E_NONE:
            return RC_ERROR
        with nogil:
            rc = self._parse_buf(max_rows)
        if rc == RC_NOMEM:
            raise MemoryError("out of memory while parsing")
        return rc

    @property
    def n_rows(self):
        """Rows held (not yet taken)."""
        return self.n_rows

    @property
    def nnz(self):
        """Non-zeros held (not yet taken)."""
        return self.nnz

    def reserve(self, Py_ssize_t n_rows, Py_ssize_t nnz):
        """Make room for n_rows rows and nnz non-zeros in all (a size hint)."""
        if self._reserve_rows(n_rows) != 0 or self._reserve_nnz(nnz) != 0:
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
        rows = np.empty(self.n_gaps, dtype=np.int64)
        skipped = np.empty(self.n_gaps, dtype=np.int64)
        cdef Py_ssize_t k
        for k in range(self.n_gaps):
            rows[k] = self.gap_rows[k]
            skipped[k] = self.gap_skipped[k]
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
          _reserve_rows, or below), indptr[-1] == nnz, and indptr never
          decreases: a row's end is written only when the row is complete
          (`self.indptr[n_rows] = nnz` in _parse_lines), nnz only grows,
          and a line that fails stops the parse before its row is ended;
        * every stored index is idx - 1 for an idx that passed
          `idx > limit` (limit = min(n_features, 2**31 - 1)) and
          `idx <= prev` (prev starts at 0 on each row), so
          0 <= index < max_index <= limit, and indices increase within a row;
        * every value and label is finite: _parse_double returns 0 only for a
          finite double (its fast path multiplies or divides a mantissa
          <= 2**53 by an exact power of ten <= 1e22; its slow path refuses
          infinity, and its grammar cannot spell nan), and any other return
          stops the parse with an error.
        """
        cdef Py_ssize_t n_rows = self.n_rows
        cdef Py_ssize_t nnz = self.nnz
        cdef int64_t* indptr = self.indptr
        if indptr == NULL:
            indptr = <int64_t*>PyMem_RawMalloc(sizeof(int64_t))
            if indptr == NULL:
                raise MemoryError()
            indptr[0] = 0
        self.indptr = NULL
        a_indptr = _wrap(indptr, n_rows + 1, sizeof(int64_t), b"q")
        a_indices = _wrap(self.indices, nnz, sizeof(int32_t), b"i")
        self.indices = NULL
        a_data = _wrap(self.data, nnz, sizeof(double), b"d")
        self.data = NULL
        a_labels = _wrap(self.labels, n_rows, sizeof(double), b"d")
        self.labels = NULL
        a_qid = None
        if self.want_qid:
            a_qid = _wrap(self.qids, n_rows, sizeof(int64_t), b"q")
            self.qids = NULL
        max_index = self.max_index
        self.rows_taken += n_rows
        self.hint_rows = n_rows
        self.hint_nnz = nnz
        self.n_rows = 0
        self.cap_rows = 0
        self.nnz = 0
        self.cap_nnz = 0
        self.max_index = 0
        return a_indptr, a_indices, a_data, a_labels, a_qid, max_index

    def error(self):
        """(line number, one-line description) of the error that stopped parsing."""
        return self.err_line, self._message()

    cdef str _message(self):
        cdef int code = self.err
        raw = self.err_tok[:self.err_tok_len]
        tok = _quote(raw, self.err_tok_full > self.err_tok_len)
        if raw.lstrip(b"+-").lower() in (b"nan", b"inf", b"infinity"):
            # Python's float() would take these; say why they are refused.
            if code == E_BAD_LABEL:
                code = E_LABEL_NONFINITE
            elif code == E_NON_NUMERIC:
                code = E_NON_FINITE
        if code == E_MISSING_LABEL:
            return f"missing label (line starts with {tok})"
        if code == E_BAD_LABEL:
            return f"bad label {tok}"
        if code == E_LABEL_NONFINITE:
            return f"bad label {tok} (not finite)"
        if code == E_BAD_QID:
            return f"bad qid {tok} (want qid:<integer>)"
        if code == E_QID_PLACE:
            return f"{tok}: qid must come right after the label"
        if code == E_QID_MISSING:
            return f"row has no qid, but earlier rows do (first at line {self.err_a})"
        if code == E_QID_UNEXPECTED:
            return f"row has a qid, but earlier rows do not (first at line {self.err_a})"
        if code == E_NO_COLON:
            return f"token {tok} has no ':' (want <index>:<value>)"
        if code == E_BAD_INDEX:
            return f"bad feature index in {tok}"
        if code == E_EMPTY_INDEX:
            return f"missing feature index in {tok}"
        if code == E_NEG_INDEX:
            return f"feature index {_text(self.err_tok[:self.err_tok_len])} is not >= 1"
        if code == E_INDEX_ZERO:
            return "feature index 0 is not >= 1"
        if code == E_INDEX_INT32:
            return (f"feature index {_text(self.err_tok[:self.err_tok_len])}"
                    f"{'...' if self.err_tok_full > self.err_tok_len else ''}"
                    f" beyond int32 (max {INT32_MAX_})")
        if code == E_INDEX_NFEAT:
            return f"feature index {self.err_a} > n_features={self.err_b}"
        if code == E_NOT_INCREASING:
            return f"indices not increasing ({self.err_a} after {self.err_b})"
        if code == E_EMPTY_VALUE:
            return f"missing value after ':' in {tok}"
        if code == E_NON_NUMERIC:
            return f"non-numeric value {tok}"
        if code == E_NON_FINITE:
            return f"non-finite value {tok}"
        if code == E_STRAY_CR:
            return "carriage return (\\r) inside a line"
        return "no error"


def _text(bytes b):
    return b.decode("utf-8", "backslashreplace")


def _quote(bytes b, bint truncated):
    """'token' for messages: undecodable bytes as \\xNN, control characters escaped."""
    text = _text(b)
    s = "".join([ch if ch.isprintable() else repr(ch)[1:len(repr(ch)) - 1] for ch in text])
    return "'" + s + ("...'" if truncated else "'")


# ---------------------------------------------------------------------------
# Writer
# ---------------------------------------------------------------------------

ctypedef fused index_t:
    int32_t
    int64_t

ctypedef fused ptr_t:
    int32_t
    int64_t


cdef inline Py_ssize_t _fmt_int(char* out, int64_t v) noexcept nogil:
    """Decimal digits of v at out; returns their count."""
    cdef char tmp[24]
    cdef int n = 0
    cdef int i
    cdef uint64_t u
    cdef Py_ssize_t k = 0
    if v < 0:
        out[0] = c'-'
        k = 1
        u = 0ULL - <uint64_t>v
    else:
        u = <uint64_t>v
    while True:
        tmp[n] = <char>(c'0' + <int>(u % 10))
        n += 1
        u //= 10
        if u == 0:
            break
    for i in range(n):
        out[k + i] = tmp[n - 1 - i]
    return k + n


cdef Py_ssize_t _fmt_double(char* out, double v) except -1:
    """Shortest round-tripping decimal form of a finite v at out (<= 32 bytes)."""
    cdef char* s
    cdef Py_ssize_t n
    if v == floor(v) and fabs(v) < 9007199254740992.0:
        if v == 0.0 and signbit(v):
            out[0] = c'-'
            out[1] = c'0'
            return 2
        return _fmt_int(out, <int64_t>v)
    s = PyOS_double_to_string(v, c'r', 0, 0, NULL)
    if s == NULL:
        raise MemoryError()
    n = strlen(s)
    memcpy(out, s, n)
    PyMem_Free(s)
    return n


cdef class _OutBuf:
    cdef char* p
    cdef Py_ssize_t n, cap

    def __dealloc__(self):
        PyMem_RawFree(self.p)

    cdef int reserve(self, Py_ssize_t extra) except -1:
        cdef Py_ssize_t cap
        cdef void* q
        if self.n + extra <= self.cap:
            return 0
        cap = self.cap + (self.cap >> 1)
        if cap < self.n + extra:
            cap = self.n + extra
        if cap < 65536:
            cap = 65536
        q = PyMem_RawRealloc(self.p, cap)
        if q == NULL:
            raise MemoryError()
        self.p = <char*>q
        self.cap = cap
        return 0


def format_rows(const ptr_t[::1] indptr, const index_t[::1] indices,
                const double[::1] data, const double[::1] labels,
                const int64_t[::1] qid, bint with_qid,
                Py_ssize_t r0, Py_ssize_t r1):
    """SVM-light text of CSR rows r0..r1-1 as bytes.

    Inputs are trusted (validated by linsvm.data): canonical CSR, finite
    values, 0 <= indices < 2**31 - 1, len(qid) == len(labels) when with_qid.
    """
    cdef _OutBuf out = _OutBuf()
    cdef Py_ssize_t i, k, k0, k1
    if r0 < 0 or r1 > labels.shape[0] or r1 + 1 > indptr.shape[0] or r0 > r1:
        raise ValueError("row range out of bounds")
    if with_qid and qid.shape[0] < r1:
        raise ValueError("qid too short")
    k0 = indptr[r0] if r1 > r0 else 0
    k1 = indptr[r1] if r1 > r0 else 0
    if k0 < 0 or k1 > data.shape[0] or k1 > indices.shape[0] or k0 > k1:
        raise ValueError("indptr out of bounds")
    out.reserve((r1 - r0) * 32 + (k1 - k0) * 24 + 64)
    for i in range(r0, r1):
        k0 = indptr[i]
        k1 = indptr[i + 1]
        if k0 > k1 or k1 > data.shape[0]:
            raise ValueError("indptr not monotonic")
        out.reserve(80 + (k1 - k0) * 48)
        out.n += _fmt_double(out.p + out.n, labels[i])
        if with_qid:
            memcpy(out.p + out.n, b" qid:", 5)
            out.n += 5
            out.n += _fmt_int(out.p + out.n, qid[i])
        for k in range(k0, k1):
            out.p[out.n] = c' '
            out.n += 1
            out.n += _fmt_int(out.p + out.n, <int64_t>indices[k] + 1)
            out.p[out.n] = c':'
            out.n += 1
            out.n += _fmt_double(out.p + out.n, data[k])
        out.p[out.n] = c'\n'
        out.n += 1
    return PyBytes_FromStringAndSize(out.p, out.n)
