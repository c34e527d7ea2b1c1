# What stops the SVM-light parser (csrc/_svmlight.pyx): its return codes, the kinds of
# bad input, and the report of the first error -- its line, the offending token (its
# first ERR_TOK_MAX bytes) and two numbers -- that Parser.error() words in one line.

from libc.stdint cimport int64_t
from libc.string cimport memchr, memcpy
from svmlight_numbers cimport is_end, is_digit, token_end

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

cdef enum:
    ERR_TOK_MAX = 40
    INT32_MAX_ = 2147483647


ctypedef struct ErrorReport:
    int code                # E_*; E_NONE while the input is good
    int64_t line
    int64_t a               # numbers the message names (an index, a line, a limit)
    int64_t b
    char tok[64]            # the token's first bytes
    Py_ssize_t tok_len
    Py_ssize_t tok_full     # the token's whole length


cdef inline int report(ErrorReport* E, int code, int64_t line, const char* tok,
                       const char* tok_end, int64_t a, int64_t b) noexcept nogil:
    """Record an error about the token [tok, tok_end); returns RC_ERROR."""
    cdef Py_ssize_t n = tok_end - tok
    E.code = code
    E.line = line
    E.a = a
    E.b = b
    E.tok_full = n
    if n > ERR_TOK_MAX:
        n = ERR_TOK_MAX
    if n > 0:
        memcpy(E.tok, tok, n)
    E.tok_len = n
    return RC_ERROR


cdef inline int feature_error(ErrorReport* E, int64_t line, const char* tok) noexcept nogil:
    """Classify a feature token whose index part is not plain digits + ':'."""
    cdef const char* te = token_end(tok)
    cdef const char* colon = <const char*>memchr(tok, c':', te - tok)
    cdef const char* q
    if colon == NULL:
        return report(E, E_NO_COLON, line, tok, te, 0, 0)
    if colon - tok == 3 and tok[0] == c'q' and tok[1] == c'i' and tok[2] == c'd':
        return report(E, E_QID_PLACE, line, tok, te, 0, 0)
    if colon == tok:
        return report(E, E_EMPTY_INDEX, line, tok, te, 0, 0)
    if tok[0] == c'-' and colon - tok > 1:
        q = tok + 1
        while q < colon and is_digit(q[0]):
            q += 1
        if q == colon:
            return report(E, E_NEG_INDEX, line, tok, colon, 0, 0)
    return report(E, E_BAD_INDEX, line, tok, te, 0, 0)


cdef inline str _text(bytes b):
    return b.decode("utf-8", "backslashreplace")


cdef inline str _quote(bytes b, bint truncated):
    """'token' for messages: undecodable bytes as \\xNN, control characters escaped."""
    text = _text(b)
    s = "".join([ch if ch.isprintable() else repr(ch)[1:len(repr(ch)) - 1] for ch in text])
    return "'" + s + ("...'" if truncated else "'")


cdef inline str error_message(const ErrorReport* E):
    """The one-line description of the error E records."""
    cdef int code = E.code
    raw = E.tok[:E.tok_len]
    tok = _quote(raw, E.tok_full > E.tok_len)
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
        return f"row has no qid, but earlier rows do (first at line {E.a})"
    if code == E_QID_UNEXPECTED:
        return f"row has a qid, but earlier rows do not (first at line {E.a})"
    if code == E_NO_COLON:
        return f"token {tok} has no ':' (want <index>:<value>)"
    if code == E_BAD_INDEX:
        return f"bad feature index in {tok}"
    if code == E_EMPTY_INDEX:
        return f"missing feature index in {tok}"
    if code == E_NEG_INDEX:
        return f"feature index {_text(raw)} is not >= 1"
    if code == E_INDEX_ZERO:
        return "feature index 0 is not >= 1"
    if code == E_INDEX_INT32:
        return (f"feature index {_text(raw)}{'...' if E.tok_full > E.tok_len else ''}"
                f" beyond int32 (max {INT32_MAX_})")
    if code == E_INDEX_NFEAT:
        return f"feature index {E.a} > n_features={E.b}"
    if code == E_NOT_INCREASING:
        return f"indices not increasing ({E.a} after {E.b})"
    if code == E_EMPTY_VALUE:
        return f"missing value after ':' in {tok}"
    if code == E_NON_NUMERIC:
        return f"non-numeric value {tok}"
    if code == E_NON_FINITE:
        return f"non-finite value {tok}"
    if code == E_STRAY_CR:
        return "carriage return (\\r) inside a line"
    return "no error"


# ---------------------------------------------------------------- classifying a bad token

cdef inline int label_error(ErrorReport* E, int64_t line, const char* tok, const char* p,
                            int st) noexcept nogil:
    """The label token at tok did not parse (parse_double's status st, stopped at p)."""
    cdef const char* q = token_end(tok)
    if memchr(tok, c':', q - tok) != NULL:
        return report(E, E_MISSING_LABEL, line, tok, q, 0, 0)
    if st == 2 and p == q:
        return report(E, E_LABEL_NONFINITE, line, tok, q, 0, 0)
    return report(E, E_BAD_LABEL, line, tok, q, 0, 0)


cdef inline int index_error(ErrorReport* E, int64_t line, const char* tok, const char* p,
                            int64_t idx, int64_t prev, int64_t limit) noexcept nogil:
    """The feature index idx at [tok, p) is above limit or not above the row's last, prev."""
    if idx > limit:
        if idx > INT32_MAX_:
            return report(E, E_INDEX_INT32, line, tok, p, idx, 0)
        return report(E, E_INDEX_NFEAT, line, tok, p, idx, limit)
    if idx == 0:
        return report(E, E_INDEX_ZERO, line, tok, p, 0, 0)
    return report(E, E_NOT_INCREASING, line, tok, p, idx, prev)


cdef inline int value_error(ErrorReport* E, int64_t line, const char* tok, const char* q,
                            const char* p, int st) noexcept nogil:
    """The value at q of the feature token at tok did not parse (status st, stopped at p)."""
    if is_end(q[0]):
        return report(E, E_EMPTY_VALUE, line, tok, token_end(tok), 0, 0)
    if st == 2 and is_end(p[0]):
        return report(E, E_NON_FINITE, line, q, p, 0, 0)
    return report(E, E_NON_NUMERIC, line, q, token_end(q), 0, 0)
