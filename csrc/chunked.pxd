# Passes over long vectors in fixed chunks, shared by the Newton-type cores (csrc/cgls_steps.pxd,
# csrc/line_search.pxd, csrc/newton_driver.pxd, csrc/mfn_losses.pxd).  A vector of n entries
# is cut into K = n_chunks(n, size) chunks, chunk c covering [c n / K, (c + 1) n / K); a sum
# runs in index order within each chunk and the chunks' sums are added in chunk order.  K
# depends on n alone, so threads only share out the chunks and every thread count gives the
# same bits (docs/threads.md).  Element-wise passes have no order to keep; they take the
# same chunks on the threads.  Inline: cimported, not compiled on its own.

from libc.stdint cimport int64_t
from cython.parallel cimport prange


cdef enum:
    CHUNK_ENTRIES = 4096           # entries of a chunk of a vector, at least
    CHUNK_MAX = 256                # chunks at most (their sums live on the stack)
    CHUNK_THREADS_MIN = 65536      # shorter vectors: every chunk on one thread


cdef inline int64_t n_chunks(int64_t n, int64_t size) noexcept nogil:
    """Chunks of a pass over n entries, at least `size` a chunk (at most CHUNK_MAX, at
    least 1)."""
    cdef int64_t k = (n + size - 1) // size
    if k > CHUNK_MAX:
        return CHUNK_MAX
    return k if k > 0 else 1


cdef inline int chunk_threads(int64_t n, int n_threads) noexcept nogil:
    """Threads for a pass over n entries: n_threads from CHUNK_THREADS_MIN entries, else 1."""
    return n_threads if (n_threads > 1 and n >= CHUNK_THREADS_MIN) else 1


cdef inline double _dot_span(const double* a, const double* b, int64_t lo,
                             int64_t hi) noexcept nogil:
    cdef int64_t j
    cdef double s = 0.0
    for j in range(lo, hi):
        s += a[j] * b[j]
    return s


cdef inline double dot_chunked(const double* a, const double* b, int64_t n,
                               int n_threads) noexcept nogil:
    """a . b in the chunks of n_chunks(n, CHUNK_ENTRIES) (block comment)."""
    cdef int64_t K = n_chunks(n, CHUNK_ENTRIES), c
    cdef int T = chunk_threads(n, n_threads)
    cdef double part[CHUNK_MAX]
    cdef double s = 0.0
    if T > 1:
        for c in prange(K, schedule="static", num_threads=T):
            part[c] = _dot_span(a, b, c * n // K, (c + 1) * n // K)
    else:
        for c in range(K):
            part[c] = _dot_span(a, b, c * n // K, (c + 1) * n // K)
    for c in range(K):
        s += part[c]
    return s


cdef inline void _axpy_span(double* out, const double* a, double s, const double* b,
                            int64_t lo, int64_t hi) noexcept nogil:
    cdef int64_t j
    for j in range(lo, hi):
        out[j] = a[j] + s * b[j]


cdef inline void axpy_into(double* out, const double* a, double s, const double* b, int64_t n,
                           int n_threads) noexcept nogil:
    """out = a + s b, element by element (out may be a), on the threads from
    CHUNK_THREADS_MIN entries."""
    cdef int64_t K = n_chunks(n, CHUNK_ENTRIES), c
    cdef int T = chunk_threads(n, n_threads)
    if T > 1:
        for c in prange(K, schedule="static", num_threads=T):
            _axpy_span(out, a, s, b, c * n // K, (c + 1) * n // K)
    else:
        _axpy_span(out, a, s, b, 0, n)
