# Seeded pseudo-random numbers for the sequential dual solvers (csrc/_sdm.pyx, csrc/_dcd.pyx).
#
# The generator is SplitMix64 (Steele, Lea & Flood, OOPSLA 2014): the state is
# a 64-bit counter advanced by the golden-ratio increment, and each output is
# the counter passed through a 64-bit mixing function.  It is small, fast,
# passes BigCrush, and a seed fully determines the stream, so the same seed
# gives the same permutations on every platform (LIBLINEAR's weak spot: the
# unseeded global rand()).  Everything here is nogil and allocation-free.

from libc.stdint cimport uint64_t, int64_t


cdef inline uint64_t rng_next(uint64_t* state) noexcept nogil:
    """Advance `state` and return the next 64 random bits."""
    cdef uint64_t z
    state[0] += <uint64_t>0x9E3779B97F4A7C15ULL
    z = state[0]
    z = (z ^ (z >> 30)) * <uint64_t>0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * <uint64_t>0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline int64_t rng_below(uint64_t* state, int64_t n) noexcept nogil:
    """A random integer in [0, n) for n >= 1 (multiply-shift on the top 32 bits
    when n < 2^32, whose bias is below n / 2^32; modulo otherwise)."""
    cdef uint64_t r = rng_next(state)
    if n < (<int64_t>1 << 32):
        return <int64_t>(((r >> 32) * <uint64_t>n) >> 32)
    return <int64_t>(r % <uint64_t>n)


cdef inline void shuffle(uint64_t* state, int64_t* a, int64_t n) noexcept nogil:
    """Permute a[0:n] uniformly at random in place (Fisher-Yates, from the back)."""
    cdef int64_t i, j, tmp
    i = n - 1
    while i > 0:
        j = rng_below(state, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp
        i -= 1
