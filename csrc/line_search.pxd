# The exact line search of the modified finite Newton family (Keerthi & DeCoste 2005,
# Sections 4.4, 6, 7): phi(delta) = f(beta + delta d) over delta >= 0 for a piecewise
# quadratic loss (csrc/mfn_terms.pxd), its root found by selection over the breakpoints,
# serially or over the ranks' breakpoints; the pass over the terms that finds them is
# csrc/line_search_terms.pxd.  Inline: cimported, not compiled on its own.

from libc.stdint cimport int64_t
from libc.math cimport INFINITY
from libc.stdlib cimport malloc, free, qsort
from chunked cimport CHUNK_ENTRIES, Pair, n_chunks, chunk_sums
from comm cimport Comm, comm_active, comm_sum, comm_allgather
from wsplit cimport Split
from mfn_terms cimport Loss, Terms
from line_search_terms cimport (KNEE_HI, KNEE_LO, Breakpoint, Chunks, cross_one,
                                cross_breakpoints, collect_terms, collect_chunked,
                                gather_near, gather_far, cross_near)

# The distributed selection's rounds: each rank samples SEL_S of its candidates, the
# ranks agree on up to SEL_K pivots, and one allreduce of the crossings per bin
# between them decides which bin holds the root (_line_search_dist).
cdef enum:
    SEL_S = 32
    SEL_K = 32


ctypedef struct _Sample:
    double delta
    double weight


cdef inline int _cmp_sample(const void* x, const void* y) noexcept nogil:
    cdef double a = (<const _Sample*>x).delta, b = (<const _Sample*>y).delta
    return -1 if a < b else (1 if a > b else 0)


cdef inline int64_t _bin_of(double v, const double* piv, int64_t K) noexcept nogil:
    """Bin of v among the ascending pivots: 2j for the open interval (piv[j-1], piv[j]),
    2j + 1 for v == piv[j] (2K: above every pivot)."""
    cdef int64_t lo = 0, hi = K, mid
    while lo < hi:                           # lo = number of pivots < v
        mid = (lo + hi) // 2
        if piv[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    if lo < K and piv[lo] == v:
        return 2 * lo + 1
    return 2 * lo


cdef inline double _pool_round(const Breakpoint* bp, int64_t a, int64_t b, double* buf,
                               double* got, _Sample* pool, int64_t* n_pool,
                               const Comm* comm) noexcept nogil:
    """One round's samples: SEL_S evenly spaced over this rank's candidates bp[a:b] (and
    their count) sent to every rank; the pool of every rank's, each weighted by the count
    it stands for.  Returns the candidates' total over the ranks."""
    cdef int64_t i, r, n_loc = b - a, n_s = min(n_loc, <int64_t>SEL_S), width = SEL_S + 2
    cdef double total = 0.0, w
    buf[0] = <double>n_loc
    buf[1] = <double>n_s
    for i in range(n_s):                     # evenly spaced over the candidates
        buf[2 + i] = bp[a + (2 * i + 1) * n_loc // (2 * n_s)].delta
    for i in range(n_s, SEL_S):
        buf[2 + i] = 0.0
    comm_allgather(comm, buf, width, got)
    n_pool[0] = 0
    for r in range(comm.size):
        total += got[width * r]
        n_s = <int64_t>got[width * r + 1]
        if n_s > 0:
            w = got[width * r] / n_s
            for i in range(n_s):
                pool[n_pool[0]].delta = got[width * r + 2 + i]
                pool[n_pool[0]].weight = w
                n_pool[0] += 1
    return total


cdef inline int64_t _pivots(_Sample* pool, int64_t n_pool, double total,
                            double* piv) noexcept nogil:
    """The pivots: weighted quantiles k / (SEL_K + 1) of the pool, without repeats, into
    piv (ascending); returns their number."""
    cdef int64_t i, j = 1, K = 0
    cdef double acc = 0.0, step = total / (SEL_K + 1)
    qsort(pool, n_pool, sizeof(_Sample), _cmp_sample)
    for i in range(n_pool):
        acc += pool[i].weight
        if acc >= j * step or i == n_pool - 1:
            if K == 0 or pool[i].delta > piv[K - 1]:
                piv[K] = pool[i].delta
                K += 1
            while j <= SEL_K and acc >= j * step:
                j += 1
            if K == SEL_K:
                break
    return K


cdef inline int64_t _bin_round(const Loss* L, const Terms* T, const Breakpoint* bp, int64_t a,
                               int64_t b, const double* piv, int64_t K, double* bins,
                               double* ls, double* rs, const Comm* comm) noexcept nogil:
    """Cross this rank's candidates bp[a:b] into the 2K + 1 bins of the pivots (bin j:
    (l, r) at bins[2j:2j+2], its count at bins[2 (2K + 1) + j]), sum the bins over the
    ranks, and return the bin that holds the root, ls and rs then crossed up to it."""
    cdef int64_t i, j, chosen = 2 * K
    cdef double cl = ls[0], cr = rs[0], pl, pr
    for i in range(3 * (2 * K + 1)):
        bins[i] = 0.0
    for i in range(a, b):
        j = _bin_of(bp[i].delta, piv, K)
        cross_one(L, T, &bp[i], &bins[2 * j], &bins[2 * j + 1])
        bins[2 * (2 * K + 1) + j] += 1.0
    comm_sum(comm, bins, 3 * (2 * K + 1))
    for j in range(K):
        pl = cl + bins[4 * j]
        pr = cr + bins[4 * j + 1]
        if pl + piv[j] * (pr - pl) >= 0.0:   # phi'(pivot) >= 0: the root is left of it
            chosen = 2 * j
            break
        cl = pl + bins[4 * j + 2]            # cross the pivot's own breakpoints too
        cr = pr + bins[4 * j + 3]
    ls[0] = cl
    rs[0] = cr
    return chosen


cdef inline double _line_search_dist(const Loss* L, const Terms* T, Breakpoint* bp,
                                     int64_t n_near, int64_t n_far, int64_t cap, double lreg,
                                     double rreg, double ls, double rs, double slope1,
                                     const Comm* comm) noexcept nogil:
    """exact_line_search's selection over the ranks' breakpoints (each rank holds those of
    its own terms): ls, rs, slope1 are this rank's term sums, lreg, rreg the
    regularizer's part.  The first allreduce (5 doubles) completes ls, rs and phi'(1)
    and the crossings before delta = 1.  Then rounds, each of one allgather and one
    allreduce: every rank sends SEL_S evenly spaced samples of its candidates (and
    their count); from the pooled samples, weighted by the count each stands for,
    all ranks pick the same SEL_K pivots (weighted quantiles); each rank sums the
    change of phi''s line from crossing its candidates in each of the 2 SEL_K + 1 bins
    (below, at and between the pivots) and one allreduce adds them; phi' at the pivots
    then names the bin that holds the root, every rank crosses the bins below it and
    keeps its candidates in it.  As with the serial selection the answer is the walk's
    (the piece of phi' that holds its root); a round divides the candidates by about
    SEL_K, and a bin of equal breakpoints is settled in one round, so the rounds end
    after O(log_K #breakpoints), when no rank has candidates left (the allreduce also
    counts each bin's candidates, so that is known without another round).  Per round:
    one allgather of SEL_S + 2 doubles per rank, one allreduce of 3 (2 SEL_K + 1)."""
    cdef double red[5]
    cdef double total
    cdef double* buf
    cdef double* piv
    cdef double* bins
    cdef _Sample* pool
    cdef int64_t a, b, i, n_pool, K, chosen, keep, size = comm.size, width = SEL_S + 2
    cdef Breakpoint tmp
    red[0] = ls
    red[1] = rs
    red[2] = slope1
    red[3] = 0.0
    red[4] = 0.0
    cross_breakpoints(L, T, bp, 0, n_near, &red[3], &red[4])
    comm_sum(comm, red, 5)
    ls = lreg + red[0]
    rs = rreg + red[1]
    slope1 = rreg + red[2]
    if ls >= 0.0:
        return 0.0
    if slope1 >= 0.0:                        # the root is in [0, 1]
        a = 0
        b = n_near
    else:                                    # beyond 1: cross everything before it
        ls += red[3]
        rs += red[4]
        a = cap - n_far
        b = cap
    buf = <double*>malloc((width * (size + 1) + SEL_K + 3 * (2 * SEL_K + 1)) * sizeof(double)
                          + size * SEL_S * sizeof(_Sample))
    if buf == NULL:                          # the other ranks would wait: end the job
        with gil:
            (<object>comm.obj).abort("out of memory in the exact line search")
    piv = buf + width * (size + 1)
    bins = piv + SEL_K
    pool = <_Sample*>(bins + 3 * (2 * SEL_K + 1))
    while True:                          # until no rank has candidates left
        total = _pool_round(bp, a, b, buf, buf + width, pool, &n_pool, comm)
        if total == 0.0:
            break
        K = _pivots(pool, n_pool, total, piv)
        chosen = _bin_round(L, T, bp, a, b, piv, K, bins, &ls, &rs, comm)
        keep = a                                 # this rank's candidates in that bin
        for i in range(a, b):
            if _bin_of(bp[i].delta, piv, K) == chosen:
                tmp = bp[i]; bp[i] = bp[keep]; bp[keep] = tmp
                keep += 1
        b = keep
        if bins[2 * (2 * K + 1) + chosen] == 0.0:   # no rank has candidates left
            break
    free(buf)
    if rs - ls <= 0.0:
        return 0.0
    return -ls / (rs - ls)


cdef inline void _reg_span(const void* ctx, int64_t c, int64_t lo, int64_t hi,
                           double* out) noexcept nogil:
    """out = (beta.d, (beta + d).d) over the weights lo:hi, in order (a chunk_fn over the
    Pair (beta, d))."""
    cdef const double* beta = (<const Pair*>ctx).a
    cdef const double* d = (<const Pair*>ctx).b
    cdef int64_t j
    cdef double l = 0.0, r = 0.0
    for j in range(lo, hi):
        l += beta[j] * d[j]
        r += (beta[j] + d[j]) * d[j]
    out[0] = l
    out[1] = r


cdef inline void _regularizer(double lam, const double* beta, const double* d, int64_t nbeta,
                              const Split* split, int n_threads, double* ls,
                              double* rs) noexcept nogil:
    """The regularizer's part of phi' at delta = 0 and 1: ls = lam beta.d, rs =
    lam (beta + d).d (split: over this rank's owned weights, in order; else in the fixed
    chunks of csrc/chunked.pxd: the same bits for every thread count)."""
    cdef int64_t i, j
    cdef double l = 0.0, r = 0.0
    cdef double sums[2]
    cdef Pair R
    if split != NULL:
        for i in range(split.n_own):
            j = split.own[i]
            if j < nbeta:
                l += beta[j] * d[j]
                r += (beta[j] + d[j]) * d[j]
    else:
        R.a = beta
        R.b = d
        chunk_sums(_reg_span, &R, nbeta, n_chunks(nbeta, CHUNK_ENTRIES), 2, n_threads, sums)
        l = sums[0]
        r = sums[1]
    ls[0] = l * lam
    rs[0] = r * lam


cdef inline double _select(const Loss* L, const Terms* T, Breakpoint* bp, int64_t a, int64_t b,
                           double ls, double rs) noexcept nogil:
    """The root of phi' by selection over the candidates bp[a:b] (ls, rs: phi''s line at
    delta = 0 and 1 on the piece left of them): split them around a pivot, cross those
    left of it, keep the side where phi' changes sign.  Returns delta* (0 if phi' does
    not grow on the root's piece)."""
    cdef int64_t i, lt, gt
    cdef double pivot, d0, d1, d2, l2, r2
    cdef Breakpoint tmp
    while a < b:
        # pivot: median of three; 3-way partition of bp[a:b] into < pivot, == pivot, > pivot
        d0 = bp[a].delta
        d1 = bp[a + (b - a) // 2].delta
        d2 = bp[b - 1].delta
        pivot = max(min(d0, d1), min(max(d0, d1), d2))
        lt = a
        i = a
        gt = b
        while i < gt:
            if bp[i].delta < pivot:
                tmp = bp[i]; bp[i] = bp[lt]; bp[lt] = tmp
                lt += 1
                i += 1
            elif bp[i].delta > pivot:
                gt -= 1
                tmp = bp[i]; bp[i] = bp[gt]; bp[gt] = tmp
            else:
                i += 1
        l2 = ls
        r2 = rs
        cross_breakpoints(L, T, bp, a, lt, &l2, &r2)
        if l2 + pivot * (r2 - l2) >= 0.0:    # phi'(pivot) >= 0: the root is left of the pivot
            b = lt
        else:                                # right of it: cross everything up to the pivot
            ls = l2
            rs = r2
            cross_breakpoints(L, T, bp, lt, gt, &ls, &rs)
            a = gt
    if rs - ls <= 0.0:
        return 0.0
    return -ls / (rs - ls)


cdef inline double exact_line_search(const Loss* L, double lam, const double* beta, const double* d,
                               int64_t nbeta, const Terms* T, Breakpoint* bp,
                               int64_t cap, const Comm* comm=NULL,
                               const Split* split=NULL, int n_threads=1) noexcept nogil:
    """Minimize phi(delta) = f(beta + delta d) over delta >= 0 (Sections 4.4, 6, 7).

    Works on the term outputs v and their steps dv (from T: y, dy and, for ordinal
    terms, the thresholds b and their step db = d[nw:]), dv computed once per
    Newton step from d itself, not as v(beta_bar) - v(beta): at tight tolerances
    that difference of O(1) numbers loses the digits the slope lives in.
    phi' is continuous, increasing and piecewise linear.  On each piece, l and r
    are the values its line takes at delta = 0 and delta = 1 (eq. 16-17); a term
    crossing a knee at delta_j = (t_j knee - v_j) / dv_j changes them (eq. 18,
    cross_breakpoints).  A term has at most two breakpoints on the ray (hi and lo, in the
    order its margin meets them).  The paper sorts the breakpoints and walks them
    from the left; since only the piece holding the root matters, this finds it
    by selection instead (expected O(#breakpoints), no sort): split the
    breakpoints around a pivot, cross those left of it, and keep the side where
    phi' changes sign.  The answer is the walk's.  The same pass also takes
    phi'(1) directly (a Newton step is mostly taken whole or cut short): when it
    is >= 0 the root lies in [0, 1] and only the breakpoints before 1 enter the
    selection; otherwise those are crossed at once and the selection runs over
    the rest.  bp has room for cap breakpoints (at most 2 per term, 1 when the
    loss has one knee).  Returns delta* (0 if d is not a descent direction).
    comm (csrc/comm.pxd): T holds this rank's terms (beta, d replicated); the sums are
    reduced and the selection runs over every rank's breakpoints (_line_search_dist),
    so every rank returns the same delta*.  split (csrc/wsplit.pxd, with comm): beta and d
    are valid on this rank's weights only; the regularizer's sums are taken over the
    owned ones and reduced with the terms'.  Serial runs on many terms take the pass in
    fixed chunks on n_threads threads (csrc/line_search_terms.pxd), with the same result for every
    thread count.
    """
    cdef int64_t a, b, n_near = 0, n_far = 0
    cdef double ls = 0.0, rs = 0.0, slope1, lreg = 0.0, rreg = 0.0
    cdef int dist = comm_active(comm)
    cdef Chunks C
    _regularizer(lam, beta, d, nbeta, split, n_threads, &ls, &rs)
    slope1 = rs
    if dist and split == NULL:                # the terms' sums apart, to be reduced
        lreg = ls
        rreg = rs
        ls = 0.0
        rs = 0.0
        slope1 = 0.0
    if not dist and collect_chunked(L, T, bp, cap, &C, n_threads, &ls, &rs, &slope1):
        if ls >= 0.0:
            return 0.0
        if slope1 >= 0.0:
            return _select(L, T, bp, 0, gather_near(T, bp, &C), ls, rs)
        cross_near(L, T, bp, &C, &ls, &rs)
        return _select(L, T, bp, cap - gather_far(T, bp, cap, &C), cap, ls, rs)
    collect_terms(L, T, 0, T.m, bp, &n_near, &n_far, cap, &ls, &rs, &slope1)
    if dist:
        return _line_search_dist(L, T, bp, n_near, n_far, cap, lreg, rreg, ls, rs, slope1, comm)
    if ls >= 0.0:
        return 0.0
    if slope1 >= 0.0:                        # the root is in [0, 1]
        a = 0
        b = n_near
    else:                                    # beyond 1: cross everything before it
        cross_breakpoints(L, T, bp, 0, n_near, &ls, &rs)
        a = cap - n_far
        b = cap
    return _select(L, T, bp, a, b, ls, rs)
