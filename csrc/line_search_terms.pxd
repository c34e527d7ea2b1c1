# The pass over the terms of csrc/line_search.pxd's exact line search (its block comment
# has the mathematics): the breakpoints where a term's margin meets a knee of the loss,
# the line of phi' on the first piece and phi'(1), and the change of that line when a
# breakpoint is crossed (eq. 18) -- over all terms, or in fixed chunks on threads.
# Inline: cimported, not compiled on its own.

from libc.stdint cimport int64_t
from libc.math cimport INFINITY
from libc.string cimport memmove
from chunked cimport CHUNK_MAX, n_chunks, chunk_sums
from mfn_terms cimport Loss, Terms, zone, loss_slope, term_at

# Knee of a breakpoint (stored in the low bit of Breakpoint.k).
cdef enum:
    KNEE_HI = 0
    KNEE_LO = 1

ctypedef struct Breakpoint:
    double delta
    int64_t k                      # 2 * term + knee



cdef enum:
    LS_CHUNK_TERMS = 16384         # examples of a chunk of the pass (collect_chunked), at least


cdef inline void cross_one(const Loss* L, const Terms* T, const Breakpoint* bp, double* ls,
                            double* rs) noexcept nogil:
    """Add to l, r the change of phi''s line from crossing the breakpoint bp (eq. 18).

    At a hi knee a term leaves (rising margin) or enters (falling) zone 1; at a lo knee it
    passes between zones 1 and 2, trading its linear term -c kappa t dv for the quadratic
    one.  Each update depends only on its own term, so crossings commute.
    """
    cdef int64_t k, s, term
    cdef double v, dv, t, e, g, sg
    term = bp.k >> 1
    if T.nb == 0:
        k = term
        s = 0
    else:
        k = term // T.nb
        s = term - k * T.nb
    term_at(T, k, s, &v, &dv, &t)
    e = L.a * T.c[k]
    if (bp.k & 1) == KNEE_HI:
        sg = -e if t * dv > 0.0 else e
        ls[0] += sg * (v - t * L.tm) * dv
        rs[0] += sg * (v - t * L.tm + dv) * dv
    else:
        g = T.c[k] * L.kappa * t * dv
        if t * dv > 0.0:             # zone 2 -> 1
            ls[0] += g + e * (v - t * L.tm) * dv
            rs[0] += g + e * (v - t * L.tm + dv) * dv
        else:                        # zone 1 -> 2
            ls[0] -= g + e * (v - t * L.tm) * dv
            rs[0] -= g + e * (v - t * L.tm + dv) * dv


cdef inline void cross_breakpoints(const Loss* L, const Terms* T, const Breakpoint* bp, int64_t a, int64_t b,
                        double* ls, double* rs) noexcept nogil:
    """Add to l, r the change of phi''s line from crossing the breakpoints bp[a:b]."""
    cdef int64_t j
    for j in range(a, b):
        cross_one(L, T, &bp[j], ls, rs)


cdef inline void _add_bp(Breakpoint* bp, int64_t* n_near, int64_t* n_far, int64_t cap,
                         double delta, int64_t term, int knee) noexcept nogil:
    """Store a breakpoint: those before delta = 1 from the front of bp, the others from
    the back (bp holds cap entries)."""
    cdef int64_t j
    if delta < 1.0:
        j = n_near[0]
        n_near[0] += 1
    else:
        n_far[0] += 1
        j = cap - n_far[0]
    bp[j].delta = delta
    bp[j].k = 2 * term + knee


cdef inline void _collect_binary_nolo(const Loss* L, const Terms* T, int64_t k0, int64_t k1,
                                     Breakpoint* bp, int64_t* n_near, int64_t* n_far,
                                     int64_t cap, double* ls, double* rs,
                                     double* slope1) noexcept nogil:
    """exact_line_search's pass over the terms k0:k1 for binary terms of a loss without a
    linear zone (L2, least squares), in margins o = t v and their rates t dv: as t = +-1,
    each term's contribution equals the general pass's exactly ((v - t tm) dv =
    (o - tm) rate); only the order of summation differs.  Adds the ends of phi''s
    first piece and phi'(1), and stores the breakpoints where a margin crosses hi
    (into bp, which holds cap)."""
    cdef int64_t k
    cdef double o, rate, o1, e, d0, a = L.a, tm = L.tm, hi = L.hi
    cdef double l = 0.0, r = 0.0, s1 = 0.0
    cdef int has_hi = hi < INFINITY
    for k in range(k0, k1):
        o = T.t[k] * T.y[k]
        rate = T.t[k] * T.dy[k]
        o1 = o + rate
        if o1 < hi:
            s1 += T.c[k] * (-a * (tm - o1)) * rate
        if o < hi:                             # zone 1
            e = a * T.c[k]
            d0 = (o - tm) * rate
            l += e * d0
            r += e * (o - tm + rate) * rate
            if rate > 0.0 and has_hi:          # leaves zone 1 upwards
                _add_bp(bp, n_near, n_far, cap, (hi - o) / rate, k, KNEE_HI)
        elif rate < 0.0:                       # enters zone 1
            _add_bp(bp, n_near, n_far, cap, (hi - o) / rate, k, KNEE_HI)
    ls[0] += l
    rs[0] += r
    slope1[0] += s1


cdef inline void _collect(const Loss* L, const Terms* T, int64_t k0, int64_t k1, Breakpoint* bp,
                          int64_t* n_near, int64_t* n_far, int64_t cap, double* ls, double* rs,
                          double* slope1) noexcept nogil:
    """exact_line_search's pass over the examples k0:k1 (any loss, binary or ordinal
    terms): adds the ends of phi''s first piece and phi'(1), and stores the breakpoints
    where a term's margin meets a knee (at most two per term, in the order its margin
    meets them; into bp, which holds cap)."""
    cdef int64_t k, s, term
    cdef double v, dv, t, e, g, rate, l = ls[0], r = rs[0], s1 = slope1[0]
    cdef int zn
    cdef int has_hi = L.hi < INFINITY
    cdef int has_lo = L.lo > -INFINITY
    for k in range(k0, k1):
        for s in range(T.per):
            term_at(T, k, s, &v, &dv, &t)
            term = k * T.per + s
            zn = zone(L, t * v)
            rate = t * dv
            s1 += T.c[k] * loss_slope(L, t * (v + dv)) * rate
            if zn == 1:
                e = L.a * T.c[k]
                l += e * (v - t * L.tm) * dv
                r += e * (v - t * L.tm + dv) * dv
                if rate > 0.0:
                    if has_hi:                # leaves zone 1 upwards
                        _add_bp(bp, n_near, n_far, cap, (t * L.hi - v) / dv, term, KNEE_HI)
                elif rate < 0.0 and has_lo:   # falls into zone 2
                    _add_bp(bp, n_near, n_far, cap, (t * L.lo - v) / dv, term, KNEE_LO)
            elif zn == 0:
                if rate < 0.0:                # enters zone 1 (then maybe zone 2)
                    _add_bp(bp, n_near, n_far, cap, (t * L.hi - v) / dv, term, KNEE_HI)
                    if has_lo:
                        _add_bp(bp, n_near, n_far, cap, (t * L.lo - v) / dv, term, KNEE_LO)
            else:
                g = T.c[k] * L.kappa * t * dv
                l -= g
                r -= g
                if rate > 0.0:                # rises into zone 1 (then maybe zone 0)
                    _add_bp(bp, n_near, n_far, cap, (t * L.lo - v) / dv, term, KNEE_LO)
                    if has_hi:
                        _add_bp(bp, n_near, n_far, cap, (t * L.hi - v) / dv, term, KNEE_HI)
    ls[0] = l
    rs[0] = r
    slope1[0] = s1



cdef inline void collect_terms(const Loss* L, const Terms* T, int64_t k0, int64_t k1,
                               Breakpoint* bp, int64_t* n_near, int64_t* n_far, int64_t cap,
                               double* ls, double* rs, double* slope1) noexcept nogil:
    """The pass over the examples k0:k1 (_collect, or _collect_binary_nolo for binary
    terms of a loss without a linear zone: L2, least squares)."""
    if T.nb == 0 and not (L.lo > -INFINITY):
        _collect_binary_nolo(L, T, k0, k1, bp, n_near, n_far, cap, ls, rs, slope1)
    else:
        _collect(L, T, k0, k1, bp, n_near, n_far, cap, ls, rs, slope1)


# The pass over the terms in fixed chunks (serial runs, when csrc/chunked.pxd's rule at
# LS_CHUNK_TERMS gives at least two): chunk c holds the examples [c m / K, (c + 1) m / K)
# and a region of bp of q slots per
# term (q = cap / terms >= the knees a term can meet), where it stores its breakpoints
# as the whole pass stores them in bp (those before 1 from the region's front, the others
# from its back).  Each chunk sums its part of l, r and phi'(1) in order, the chunks' sums
# are added in chunk order, and the regions are then moved together (gather_near,
# gather_far), so K, the sums and the breakpoints' order depend on the terms alone and
# the threads only share out the chunks.
ctypedef struct Chunks:
    int64_t K
    int64_t q                      # breakpoint slots per term
    int64_t n_near[CHUNK_MAX]
    int64_t n_far[CHUNK_MAX]
    const Loss* L                  # the pass's loss, terms and buffer
    const Terms* T
    Breakpoint* bp


cdef inline int64_t _chunk_lo(const Terms* T, const Chunks* C, int64_t c) noexcept nogil:
    """First example of chunk c."""
    return c * T.m // C.K


cdef inline void _collect_chunk(const void* ctx, int64_t c, int64_t k0, int64_t k1,
                                double* out) noexcept nogil:
    """Chunk c's part of the pass (above) over the examples k0:k1, in its own region of bp
    (a chunk_fn over the Chunks record, which it writes only at c)."""
    cdef Chunks* C = <Chunks*>ctx
    cdef int64_t slots = C.q * C.T.per
    C.n_near[c] = 0
    C.n_far[c] = 0
    out[0] = 0.0
    out[1] = 0.0
    out[2] = 0.0
    collect_terms(C.L, C.T, k0, k1, C.bp + k0 * slots, &C.n_near[c], &C.n_far[c],
                  (k1 - k0) * slots, &out[0], &out[1], &out[2])


cdef inline int collect_chunked(const Loss* L, const Terms* T, Breakpoint* bp, int64_t cap,
                                 Chunks* C, int n_threads, double* ls, double* rs,
                                 double* slope1) noexcept nogil:
    """The pass in chunks (above) on n_threads threads, the chunks' sums (added in chunk
    order) added to ls, rs and slope1; 0 (nothing done) when the terms make one chunk or
    bp has fewer slots than a term's knees."""
    cdef int64_t kn = 2 if (L.lo > -INFINITY and L.hi < INFINITY) else 1
    cdef double sums[3]
    C.K = n_chunks(T.m, LS_CHUNK_TERMS)
    if C.K < 2:
        return 0
    C.q = cap // (T.m * T.per)
    if C.q < kn:
        return 0
    C.L = L
    C.T = T
    C.bp = bp
    chunk_sums(_collect_chunk, C, T.m, C.K, 3, n_threads, sums)
    ls[0] += sums[0]
    rs[0] += sums[1]
    slope1[0] += sums[2]
    return 1


cdef inline int64_t gather_near(const Terms* T, Breakpoint* bp, const Chunks* C) noexcept nogil:
    """The chunks' breakpoints before 1 moved to bp[0:n] in chunk order (each region
    starts at or after its destination, so a move never overwrites one still to come);
    returns n.  The regions' other breakpoints are then lost."""
    cdef int64_t c, n = 0, slots = C.q * T.per
    for c in range(C.K):
        if C.n_near[c] > 0:
            memmove(&bp[n], &bp[_chunk_lo(T, C, c) * slots], C.n_near[c] * sizeof(Breakpoint))
        n += C.n_near[c]
    return n


cdef inline int64_t gather_far(const Terms* T, Breakpoint* bp, int64_t cap,
                                const Chunks* C) noexcept nogil:
    """The chunks' breakpoints at or after 1 moved to bp[cap - n:cap], the last chunk's
    highest (each region ends at or before its destination, moving up from the last
    chunk); returns n.  The breakpoints before 1 are then lost."""
    cdef int64_t c, n = 0, slots = C.q * T.per
    c = C.K - 1
    while c >= 0:
        n += C.n_far[c]
        if C.n_far[c] > 0:
            memmove(&bp[cap - n], &bp[_chunk_lo(T, C, c + 1) * slots - C.n_far[c]],
                    C.n_far[c] * sizeof(Breakpoint))
        c -= 1
    return n


cdef inline void cross_near(const Loss* L, const Terms* T, const Breakpoint* bp,
                             const Chunks* C, double* ls, double* rs) noexcept nogil:
    """_cross over every chunk's breakpoints before 1, in their regions, in chunk order."""
    cdef int64_t c, a, slots = C.q * T.per
    for c in range(C.K):
        a = _chunk_lo(T, C, c) * slots
        cross_breakpoints(L, T, bp, a, a + C.n_near[c], ls, rs)


