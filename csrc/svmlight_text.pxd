# The SVM-light writer's numbers (csrc/_svmlight.pyx, format_rows): 1-based indices and
# integers by a fast integer path, other values in the shortest form that reads back to
# the same double (repr(float) without a trailing ".0"), into a growing byte buffer.

from cpython.mem cimport PyMem_RawRealloc, PyMem_Free
from libc.stdint cimport int64_t, uint64_t
from libc.string cimport memcpy, strlen
from libc.math cimport floor, fabs, signbit

cdef extern from "Python.h":
    # Public C-API; declared here because Cython ships no .pxd for it.
    char *PyOS_double_to_string(double val, char format_code, int precision,
                                int flags, int *ptype)


ctypedef struct OutBuf:     # the text written so far: p[0:n] of cap bytes (PyMem_Raw)
    char* p
    Py_ssize_t n, cap


cdef inline int out_reserve(OutBuf* out, Py_ssize_t extra) except -1:
    """Room for `extra` more bytes: the buffer grows by half (at least 64 KiB)."""
    cdef Py_ssize_t cap
    cdef void* q
    if out.n + extra <= out.cap:
        return 0
    cap = out.cap + (out.cap >> 1)
    if cap < out.n + extra:
        cap = out.n + extra
    if cap < 65536:
        cap = 65536
    q = PyMem_RawRealloc(out.p, cap)
    if q == NULL:
        raise MemoryError()
    out.p = <char*>q
    out.cap = cap
    return 0


cdef inline Py_ssize_t fmt_int(char* out, int64_t v) noexcept nogil:
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


cdef inline Py_ssize_t fmt_double(char* out, double v) except -1:
    """Shortest round-tripping decimal form of a finite v at out (<= 32 bytes)."""
    cdef char* s
    cdef Py_ssize_t n
    if v == floor(v) and fabs(v) < 9007199254740992.0:
        if v == 0.0 and signbit(v):
            out[0] = c'-'
            out[1] = c'0'
            return 2
        return fmt_int(out, <int64_t>v)
    s = PyOS_double_to_string(v, c'r', 0, 0, NULL)
    if s == NULL:
        raise MemoryError()
    n = strlen(s)
    memcpy(out, s, n)
    PyMem_Free(s)
    return n
