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


ctypedef void (*chunk_fn)(const void* ctx, int64_t c, int64_t lo, int64_t hi,
                         double* out) noexcept nogil
# a chunk's pass: chunk c over the entries lo:hi of the caller's vectors (ctx), its sums
# (at most CHUNK_SUMS, each in index order) into out


cdef enum:
    CHUNK_SUMS = 3                 # sums a chunk_fn may return


cdef inline void chunk_sums(chunk_fn f, const void* ctx, int64_t n, int64_t K, int n_sums,
                            int n_threads, double* sums) noexcept nogil:
    """Run f over the K (<= CHUNK_MAX) chunks of n entries, chunk c covering
    [c n / K, (c + 1) n / K), on n_threads threads from CHUNK_THREADS_MIN entries; sums[i]
    (i < n_sums) = the chunks' i-th sums added in chunk order (block comment)."""
    cdef int64_t c
    cdef int i
    cdef double part[CHUNK_SUMS * CHUNK_MAX]
    if chunk_threads(n, n_threads) > 1:
        for c in prange(K, schedule="static", num_threads=n_threads):
            f(ctx, c, c * n // K, (c + 1) * n // K, &part[CHUNK_SUMS * c])
    else:
        for c in range(K):
            f(ctx, c, c * n // K, (c + 1) * n // K, &part[CHUNK_SUMS * c])
    for i in range(n_sums):
        sums[i] = 0.0
    for c in range(K):
        for i in range(n_sums):
            sums[i] += part[CHUNK_SUMS * c + i]


ctypedef struct Pair:
    # two vectors of one length, the context of a chunk_fn over both
    const double* a
    const double* b


cdef inline void _dot_chunk(const void* ctx, int64_t c, int64_t lo, int64_t hi,
                            double* out) noexcept nogil:
    cdef const Pair* P = <const Pair*>ctx
    cdef int64_t j
    cdef double s = 0.0
    for j in range(lo, hi):
        s += P.a[j] * P.b[j]
    out[0] = s


cdef inline double dot_chunked(const double* a, const double* b, int64_t n,
                               int n_threads) noexcept nogil:
    """a . b in the chunks of n_chunks(n, CHUNK_ENTRIES) (block comment)."""
    cdef Pair P
    cdef double s
    P.a = a
    P.b = b
    chunk_sums(_dot_chunk, &P, n, n_chunks(n, CHUNK_ENTRIES), 1, n_threads, &s)
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
