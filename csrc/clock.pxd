# The one clock of the compiled cores (csrc/clock.pxd): seconds on the monotonic clock,
# for the elapsed time of a solve or of its steps (only differences mean anything).

from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC


cdef inline double monotonic_seconds() noexcept nogil:
    """Seconds on CLOCK_MONOTONIC (never set back; its origin is arbitrary)."""
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec
