# The sparse store of the sequential dual method's alphas (csrc/_sdm.pyx, "Storage"):
# per example a block of (class, value) pairs for its non-zero alpha_i^m, m != y_i, in
# one pool that grows by doubling a block when it fills (moving it to the end of the
# pool), compacted when half of the pool is abandoned blocks, and trimmed after a full
# loop when the blocks hold more than twice the entries.  Memory is O(l + non-zeros).
# Included in csrc/_sdm.pyx.

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset

ctypedef struct Pool:
    int32_t* cls        # class of each stored alpha
    double* val         # its value
    int64_t* off        # start of example i's block
    int32_t* cnt        # entries in use
    int32_t* cap        # block size
    int64_t n           # examples
    int64_t size        # allocated entries
    int64_t used        # entries handed out (end of the last block)
    int64_t live        # sum of cap (used - live: abandoned blocks)
    int32_t max_cap     # k - 1


cdef int pool_init(Pool* P, int64_t n, int32_t max_cap, int64_t size) noexcept nogil:
    """Empty blocks for n examples and room for `size` entries; -1 when out of memory."""
    if size < 16:
        size = 16
    P.n = n
    P.size = size
    P.used = 0
    P.live = 0
    P.max_cap = max_cap if max_cap > 0 else 1
    P.cls = <int32_t*>malloc(size * sizeof(int32_t))
    P.val = <double*>malloc(size * sizeof(double))
    P.off = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    P.cnt = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    P.cap = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    if P.cls == NULL or P.val == NULL or P.off == NULL or P.cnt == NULL or P.cap == NULL:
        return -1
    memset(P.off, 0, (n + 1) * sizeof(int64_t))
    memset(P.cnt, 0, (n + 1) * sizeof(int32_t))
    memset(P.cap, 0, (n + 1) * sizeof(int32_t))
    return 0


cdef void pool_free(Pool* P) noexcept nogil:
    free(P.cls)
    free(P.val)
    free(P.off)
    free(P.cnt)
    free(P.cap)
    P.cls = NULL
    P.val = NULL
    P.off = NULL
    P.cnt = NULL
    P.cap = NULL


cdef int pool_compact(Pool* P, int64_t extra) noexcept nogil:
    """Copy every block, in example order, into fresh arrays with room for `extra` more."""
    cdef int64_t size = 2 * (P.live + extra) + 16, i, pos = 0
    cdef int32_t* cls = <int32_t*>malloc(size * sizeof(int32_t))
    cdef double* val = <double*>malloc(size * sizeof(double))
    if cls == NULL or val == NULL:
        free(cls)
        free(val)
        return -1
    for i in range(P.n):
        if P.cnt[i] > 0:
            memcpy(cls + pos, P.cls + P.off[i], P.cnt[i] * sizeof(int32_t))
            memcpy(val + pos, P.val + P.off[i], P.cnt[i] * sizeof(double))
        P.off[i] = pos
        pos += P.cap[i]
    free(P.cls)
    free(P.val)
    P.cls = cls
    P.val = val
    P.size = size
    P.used = pos
    return 0


cdef void pool_trim(Pool* P) noexcept nogil:
    """Shrink every block to its entries plus one spare when the blocks hold more than
    twice the entries (e.g. after the first Weston-Watkins loops), so that memory
    follows the non-zeros; a failed allocation leaves the pool as it was."""
    cdef int64_t i, total = 0, size, pos = 0
    cdef int32_t* cls
    cdef double* val
    for i in range(P.n):
        total += P.cnt[i]
    if P.used <= 2 * (total + P.n) + 1024:
        return
    size = 2 * (total + P.n) + 16
    cls = <int32_t*>malloc(size * sizeof(int32_t))
    val = <double*>malloc(size * sizeof(double))
    if cls == NULL or val == NULL:
        free(cls)
        free(val)
        return
    for i in range(P.n):
        if P.cnt[i] > 0:
            memcpy(cls + pos, P.cls + P.off[i], P.cnt[i] * sizeof(int32_t))
            memcpy(val + pos, P.val + P.off[i], P.cnt[i] * sizeof(double))
        P.off[i] = pos
        P.cap[i] = P.cnt[i] + 1 if P.cnt[i] < P.max_cap else P.cnt[i]
        pos += P.cap[i]
    free(P.cls)
    free(P.val)
    P.cls = cls
    P.val = val
    P.size = size
    P.used = pos
    P.live = pos


cdef int pool_reserve(Pool* P, int64_t i, int32_t need) noexcept nogil:
    """Make example i's block hold at least `need` (<= max_cap) entries, keeping its
    contents; the block moves to the end of the pool when it grows.  -1: no memory."""
    cdef int32_t newcap
    cdef int64_t newsize
    cdef int32_t* cls
    cdef double* val
    if need <= P.cap[i]:
        return 0
    newcap = 2 * P.cap[i] if P.cap[i] > 0 else 2
    if newcap < need:
        newcap = need
    if newcap > P.max_cap:
        newcap = P.max_cap if P.max_cap >= need else need
    if P.used + newcap > P.size:
        if 2 * (P.used - P.live) > P.used:
            if pool_compact(P, newcap) != 0:
                return -1
        if P.used + newcap > P.size:
            newsize = 2 * P.size
            if newsize < P.used + newcap:
                newsize = P.used + newcap
            cls = <int32_t*>realloc(P.cls, newsize * sizeof(int32_t))
            if cls == NULL:
                return -1
            P.cls = cls
            val = <double*>realloc(P.val, newsize * sizeof(double))
            if val == NULL:
                return -1
            P.val = val
            P.size = newsize
    if P.cnt[i] > 0:
        memcpy(P.cls + P.used, P.cls + P.off[i], P.cnt[i] * sizeof(int32_t))
        memcpy(P.val + P.used, P.val + P.off[i], P.cnt[i] * sizeof(double))
    P.off[i] = P.used
    P.live += newcap - P.cap[i]
    P.cap[i] = newcap
    P.used += newcap
    return 0
