# Numbers and tokens of the SVM-light text (csrc/_svmlight.pyx, whose docstring has the
# grammar): the character classes of a line, and the exact conversion of a decimal
# number to the same double as Python's float().
#
# A fast path handles a decimal mantissa below 2**53 scaled by a power of ten that is
# itself exact (Clinger's observation: one correctly rounded IEEE multiply or divide of
# two exact operands gives the correctly rounded result); a second one the 16-19 digit
# mantissas of values printed by repr() (0.10440134307313079 has 17 digits, above 2**53)
# scaled by 10**q with |q| <= 27, in exact integer arithmetic (lsvm_decimal_to_double
# below); anything else goes to PyOS_string_to_double (David Gay's correctly rounded
# strtod, independent of the locale), taking the GIL for that rare path.  Files of
# full-precision values mostly take the second path (docs/benchmarks.md, "Reading
# data").  Everything here is nogil and allocation-free but that rare path.

from cpython.mem cimport PyMem_RawMalloc, PyMem_RawFree
from cpython.exc cimport PyErr_Occurred, PyErr_Clear
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memchr, memcpy


cdef extern from "Python.h":
    # Public C-API; declared here because Cython ships no .pxd for it.  Called with
    # overflow_exception NULL: an out-of-range value gives +-HUGE_VAL and no exception.
    double PyOS_string_to_double(const char *s, char **endptr, void *overflow_exception)

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


cdef extern from *:
    """
    /* exact powers of ten: 10**k is representable exactly for 0 <= k <= 22 */
    static const double LSVM_POW10[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
        1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
    static const uint64_t LSVM_TWO53 = 9007199254740992ULL;
    """
    const double LSVM_POW10[23]
    const uint64_t LSVM_TWO53


# ---------------------------------------------------------------- character classes and numbers

cdef inline bint is_end(char c) noexcept nogil:
    """True if c ends a token: separator, line end, carriage return or comment."""
    return c == c' ' or c == c'\t' or c == c'\n' or c == c'\r' or c == c'#'


cdef inline int skip_to_token(const char** pp, const char* end) noexcept nogil:
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


cdef inline bint is_digit(char c) noexcept nogil:
    return c'0' <= c <= c'9'


cdef inline const char* token_end(const char* p) noexcept nogil:
    """First byte at or after p that ends a token (a '\\n' always follows)."""
    while not is_end(p[0]):
        p += 1
    return p


cdef inline int slow_double(const char* s, Py_ssize_t n, double* out) noexcept nogil:
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


cdef inline int decimal_value(uint64_t mant, int64_t exp10, bint neg, bint inexact,
                              const char* start, const char* stop, double* out) noexcept nogil:
    """The double of (-1)**neg mant 10**exp10 (inexact: digits beyond the 19 held were
    dropped), the number spelt by [start, stop): 0 (finite value in out), 1 (Python
    rejected it), 2 (it overflows to infinity)."""
    cdef double v
    if mant == 0:
        out[0] = -0.0 if neg else 0.0
        return 0
    if FLT_EVAL_METHOD == 0 and not inexact and mant <= LSVM_TWO53:
        if 0 <= exp10 <= 22:
            v = <double>mant * LSVM_POW10[exp10]
            out[0] = -v if neg else v
            return 0
        if -22 <= exp10 < 0:
            v = <double>mant / LSVM_POW10[-exp10]
            out[0] = -v if neg else v
            return 0
        if 22 < exp10 <= 22 + 15:
            # Move the excess power into the mantissa while it stays exact.
            while exp10 > 22 and mant <= LSVM_TWO53 // 10:
                mant *= 10
                exp10 -= 1
            if exp10 == 22:
                v = <double>mant * LSVM_POW10[22]
                out[0] = -v if neg else v
                return 0
    if not inexact and lsvm_decimal_to_double(mant, exp10, &v):
        out[0] = -v if neg else v
        return 0
    if slow_double(start, stop - start, &v) != 0:
        return 1
    if v - v != 0.0:                # inf (nan cannot come from this grammar)
        return 2
    out[0] = v
    return 0


cdef inline int parse_double(const char** pp, double* out) noexcept nogil:
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
    cdef char c = p[0]
    if c == c'-':
        neg = True
        p += 1
    elif c == c'+':
        p += 1
    # integer part
    c = p[0]
    while is_digit(c):
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
        while is_digit(c):
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
        if not is_digit(c):
            pp[0] = p
            return 1
        while is_digit(c):
            if e < 100000000:
                e = e * 10 + (c - c'0')
            p += 1
            c = p[0]
        if eneg:
            exp10 -= e
        else:
            exp10 += e
    pp[0] = p
    return decimal_value(mant, exp10, neg, inexact, start, p, out)


cdef inline int parse_int64(const char** pp, int64_t* out) noexcept nogil:
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
    if not is_digit(p[0]):
        pp[0] = p
        return 1
    lim = 9223372036854775808ULL if neg else 9223372036854775807ULL
    while is_digit(p[0]):
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


cdef inline bint ends_value(const char* p) noexcept nogil:
    """True if a number may end at p: a blank, a newline or CRLF."""
    return p[0] == c' ' or p[0] == c'\t' or p[0] == c'\n' or (p[0] == c'\r' and p[1] == c'\n')




cdef inline int dense_rows(const char** pp, const char* end, Py_ssize_t n_cols, double* o,
                           Py_ssize_t max_rows, Py_ssize_t* n_rows,
                           Py_ssize_t* n_col) noexcept nogil:
    """Parse up to max_rows whole lines from pp[0] (before end, end[-1] a newline) as rows
    of exactly n_cols numbers each into o[r * n_cols:(r + 1) * n_cols] (parse_dense_rows's
    grammar).  n_rows[0] counts the rows stored.  Returns 0, pp[0] then just after the
    last of them; else the bad row's status (1 not a number, 2 overflows to infinity, 3
    fewer than n_cols values, 4 more), pp[0] at the start of its line and n_col[0] the
    number of values before the one concerned."""
    cdef const char* p = pp[0]
    cdef const char* line = p
    cdef Py_ssize_t rows = 0, col = 0, k
    cdef int status = 0, rc
    cdef double v
    while rows < max_rows and p < end:
        line = p
        col = 0
        k = rows * n_cols
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
            rc = parse_double(&p, &v)
            if rc == 0 and not ends_value(p):
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
    n_rows[0] = rows
    n_col[0] = col
    pp[0] = line if status != 0 else p
    return status
