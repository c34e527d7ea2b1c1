# The visits of one example by the sequential dual method (csrc/_sdm.pyx, whose block
# comment has the algorithm): for Crammer-Singer and for Weston-Watkins, a full visit
# (every class: g_i, v_i, then the sub-problem) and a shrunk visit (the classes the
# removal rule keeps), each moving alpha_i, W and f; and each method's removal rule.
# Included in csrc/_sdm.pyx, after sdm_subproblems.pxi and sdm_state.pxi.

from libc.stdint cimport int32_t, int64_t
from libc.math cimport fabs, INFINITY
from sdm_sub cimport FREE, AT_LO, AT_HI

# ------------------------------------------------------------------ Crammer-Singer steps

cdef int cs_apply(SDM* s, int64_t i, int64_t row, int32_t yi, int64_t n) noexcept nogil:
    """Move alpha_i by the sub-problem's solution over S[0:n], update W and f, store.

    The bounds the sub-problem holds are set exactly (alpha = 0 or U_i), and a
    free alpha^{y_i} is set to -sum of the others (S holds every non-zero alpha
    of the example), so sum_m alpha_i^m = 0 does not drift and an example whose
    other alphas all reach 0 gets alpha^{y_i} = 0 exactly."""
    cdef int64_t t, nchg = 0, ty = -1
    cdef int32_t m
    cdef double old, new, dlt, total = 0.0, Ui = s.U[i], Ai = s.A[i]
    for t in range(n):
        m = s.S[t]
        if m == yi:
            ty = t
            continue
        old = s.a[m]
        if s.flag[t]:
            new = 0.0                               # exactly at the bound
        else:
            new = old + s.ds[t]
            if new > 0.0:
                new = 0.0
        total += new
        dlt = new - old
        if dlt != 0.0:
            s.cm[nchg] = m
            s.cd[nchg] = dlt
            nchg += 1
            s.f += dlt * s.gs[t] + 0.5 * Ai * dlt * dlt
        s.a[m] = new
    if ty >= 0:
        old = s.a[yi]
        if s.flag[ty]:
            new = Ui
        else:
            new = -total
            if new > Ui:
                new = Ui
            elif new < 0.0:
                new = 0.0
        dlt = new - old
        if dlt != 0.0:
            s.cm[nchg] = yi
            s.cd[nchg] = dlt
            nchg += 1
            s.f += dlt * s.gs[ty] + 0.5 * Ai * dlt * dlt
        s.a[yi] = new
    update_w(s, row, nchg)
    s.ay[i] = s.a[yi]
    return store_alphas(s, i, n, yi)


cdef double cs_full_step(SDM* s, int64_t i, double thresh, int* err) noexcept nogil:
    """Step (a)-(b) of Algorithm 2.1 for example i over all classes, step (b) only if
    v_i > 0 and v_i >= thresh; returns v_i (6)."""
    cdef Pool* P = &s.P
    cdef int64_t row = s.rows[i], k = s.k, m, e, n, off = P.off[i], cnt = P.cnt[i], M
    cdef int32_t yi = s.y[i], c
    cdef double Ui = s.U[i], ay = s.ay[i], gmin = INFINITY, gM, v
    cdef double* g = s.g
    cdef int r
    scores_all(s, row, g)
    for m in range(k):
        g[m] += 1.0
    g[yi] -= 1.0
    s.evals += k
    if ay < Ui:
        gmin = g[yi]
    for e in range(cnt):
        c = P.cls[off + e]
        if g[c] < gmin:
            gmin = g[c]
    M = 0
    gM = g[0]
    for m in range(1, k):
        if g[m] > gM:
            gM = g[m]
            M = m
    v = gM - gmin
    if not (v > 0.0) or v < thresh:
        return v
    # S = {y_i if alpha^{y_i} < U_i or M_i = y_i} + the non-zero alphas + M_i
    n = 0
    s.a[yi] = ay
    if ay < Ui or M == yi:
        s.S[n] = yi
        s.gs[n] = g[yi]
        s.hi[n] = Ui - ay
        n += 1
    for e in range(cnt):
        c = P.cls[off + e]
        s.a[c] = P.val[off + e]
        s.S[n] = c
        s.gs[n] = g[c]
        s.hi[n] = -P.val[off + e]
        n += 1
    if M != yi and s.a[M] == 0.0:
        s.S[n] = <int32_t>M
        s.gs[n] = g[M]
        s.hi[n] = 0.0
        n += 1
    for e in range(n):
        s.flag[e] = 0
    if s.opt.subproblem == SUBPROBLEM_ALL:
        # every other class too, starting in the working set at its bound (b = 0)
        for m in range(k):
            if m == yi:
                if ay < Ui or M == yi:
                    continue
            elif m == M or s.a[m] != 0.0:
                continue
            s.S[n] = <int32_t>m
            s.gs[n] = g[m]
            s.hi[n] = 0.0
            s.flag[n] = 1
            n += 1
    r = cs_subproblem(n, s.A[i], s.gs, s.hi, s.ds, s.flag, s.max_sub_it)
    if r < 0:
        s.sub_caps += 1
    if cs_apply(s, i, row, yi, n) != 0:
        err[0] = NO_MEMORY
    s.a[yi] = 0.0
    return v


cdef double cs_shrunk_step(SDM* s, int64_t i, int* err) noexcept nogil:
    """A shrunk visit of example i: only y_i and the classes with non-zero alpha;
    returns v_i restricted to them."""
    cdef Pool* P = &s.P
    cdef int64_t row = s.rows[i], e, n, t, tM, off = P.off[i], cnt = P.cnt[i]
    cdef int32_t yi = s.y[i]
    cdef double Ui = s.U[i], ay = s.ay[i], gmin = INFINITY, v
    cdef int r
    s.S[0] = yi
    s.gs[0] = 0.0
    s.a[yi] = ay
    n = 1
    for e in range(cnt):
        s.S[n] = P.cls[off + e]
        s.gs[n] = 1.0
        s.a[P.cls[off + e]] = P.val[off + e]
        n += 1
    if n * s.opt.dense_ratio >= s.k:
        # many classes: stream whole rows of W (prefetch-friendly) and pick them out
        scores_all(s, row, s.g)
        for t in range(n):
            s.gs[t] += s.g[s.S[t]]
    else:
        scores_some(s, row, s.S, n, s.gs)
    s.evals += n
    tM = 0
    for t in range(1, n):
        if s.gs[t] > s.gs[tM]:
            tM = t
    if ay < Ui:
        gmin = s.gs[0]
    for t in range(1, n):
        if s.gs[t] < gmin:
            gmin = s.gs[t]
    v = s.gs[tM] - gmin
    if not (v > 0.0):
        for t in range(n):
            s.a[s.S[t]] = 0.0
        return v if v == v else 0.0
    if ay >= Ui and tM != 0:
        # y_i sits at its bound and is not M_i: leave it out of the sub-problem
        n -= 1
        s.S[0] = s.S[n]
        s.gs[0] = s.gs[n]
    for t in range(n):
        s.hi[t] = (Ui if s.S[t] == yi else 0.0) - s.a[s.S[t]]
        s.flag[t] = 0
    r = cs_subproblem(n, s.A[i], s.gs, s.hi, s.ds, s.flag, s.max_sub_it)
    if r < 0:
        s.sub_caps += 1
    if cs_apply(s, i, row, yi, n) != 0:
        err[0] = NO_MEMORY
    s.a[yi] = 0.0
    return v


cdef inline bint cs_kept(SDM* s, int64_t i) noexcept nogil:
    """Section 2.1 removal rule, negated: some alpha non-zero, and not exactly the pair
    alpha^{y_i} = U_i, alpha^m = -U_i."""
    return s.ay[i] != 0.0 and not (s.P.cnt[i] == 1 and s.ay[i] == s.U[i])


# ------------------------------------------------------------------ Weston-Watkins steps

cdef int ww_apply(SDM* s, int64_t i, int64_t row, int32_t yi, int64_t n) noexcept nogil:
    """Move alpha_i by the sub-problem's solution over S[0:n], update W and f, store."""
    cdef int64_t t, nchg = 0
    cdef int32_t m
    cdef double old, new, dlt, dsum = 0.0, dsq = 0.0, lin = 0.0, Ui = s.U[i], Ai = s.A[i]
    for t in range(n):
        m = s.S[t]
        old = s.a[m]
        if s.flag[t] == AT_LO:
            new = 0.0
        elif s.flag[t] == AT_HI:
            new = Ui
        else:
            new = old + s.ds[t]
            if new < 0.0:
                new = 0.0
            elif new > Ui:
                new = Ui
        dlt = new - old
        if dlt != 0.0:
            s.cm[nchg] = m
            s.cd[nchg] = -dlt                 # w_m -= d x_i  (15)
            nchg += 1
            dsum += dlt
            dsq += dlt * dlt
            lin += dlt * s.gs[t]
        s.a[m] = new
    if dsum != 0.0:
        s.cm[nchg] = yi                       # w_{y_i} += (sum d) x_i
        s.cd[nchg] = dsum
        nchg += 1
    s.f += lin + 0.5 * Ai * (dsq + dsum * dsum)
    update_w(s, row, nchg)
    return store_alphas(s, i, n, yi)


cdef inline double ww_measure(double gm, double am, double Ui) noexcept nogil:
    """v_i^m of (18)."""
    if am <= 0.0:
        return -gm if gm < 0.0 else 0.0
    if am >= Ui:
        return gm if gm > 0.0 else 0.0
    return fabs(gm)


cdef double ww_full_step(SDM* s, int64_t i, double thresh, int* err) noexcept nogil:
    """Algorithm 3.1 for example i over all classes, the update only if
    max_m v_i^m >= thresh; returns max_m v_i^m (18)."""
    cdef Pool* P = &s.P
    cdef int64_t row = s.rows[i], k = s.k, m, e, n, off = P.off[i], cnt = P.cnt[i]
    cdef int32_t yi = s.y[i], c
    cdef double Ui = s.U[i], hy, vi = 0.0, vm
    cdef double* g = s.g
    cdef int r
    scores_all(s, row, g)
    hy = g[yi]
    for m in range(k):
        g[m] = hy - g[m] - 1.0               # (17)
    s.evals += k - 1
    for e in range(cnt):
        s.a[P.cls[off + e]] = P.val[off + e]
    n = 0
    for m in range(k):
        if m == yi:
            continue
        vm = ww_measure(g[m], s.a[m], Ui)
        if vm > 0.0:
            if vm > vi:
                vi = vm
            s.S[n] = <int32_t>m
            s.gs[n] = g[m]
            s.lo[n] = -s.a[m]
            s.hi[n] = Ui - s.a[m]
            s.flag[n] = FREE
            n += 1
    if n == 0 or vi < thresh:
        for e in range(cnt):
            s.a[P.cls[off + e]] = 0.0
        return vi
    if s.opt.subproblem == SUBPROBLEM_ALL:
        # the classes with v_i^m = 0 too, starting at their bound (or free if inside)
        e = n
        for m in range(k):
            if m == yi or ww_measure(g[m], s.a[m], Ui) > 0.0:
                continue
            s.S[e] = <int32_t>m
            s.gs[e] = g[m]
            s.lo[e] = -s.a[m]
            s.hi[e] = Ui - s.a[m]
            s.flag[e] = AT_LO if s.a[m] <= 0.0 else (AT_HI if s.a[m] >= Ui else FREE)
            e += 1
        n = e
    r = ww_subproblem(n, s.A[i], s.gs, s.lo, s.hi, s.ds, s.flag, s.max_sub_it)
    if r < 0:
        s.sub_caps += 1
    if ww_apply(s, i, row, yi, n) != 0:
        err[0] = NO_MEMORY
    for e in range(P.cnt[i]):                  # clear the entries outside S
        s.a[P.cls[P.off[i] + e]] = 0.0
    return vi


cdef double ww_shrunk_step(SDM* s, int64_t i, int* err) noexcept nogil:
    """A shrunk visit of example i: only the alphas with 0 < alpha < U_i; returns
    the largest v_i^m among them."""
    cdef Pool* P = &s.P
    cdef int64_t row = s.rows[i], e, n = 0, t, off = P.off[i], cnt = P.cnt[i]
    cdef int32_t yi = s.y[i], c
    cdef double Ui = s.U[i], hy, vi = 0.0, am
    cdef int r
    for e in range(cnt):
        am = P.val[off + e]
        if 0.0 < am < Ui:
            c = P.cls[off + e]
            s.S[n] = c
            s.a[c] = am
            s.gs[n] = 0.0
            n += 1
    if n == 0:
        return 0.0
    s.S[n] = yi                                # h_{y_i} rides along as entry n
    s.gs[n] = 0.0
    if (n + 1) * s.opt.dense_ratio >= s.k:
        scores_all(s, row, s.g)
        for t in range(n + 1):
            s.gs[t] += s.g[s.S[t]]
    else:
        scores_some(s, row, s.S, n + 1, s.gs)
    hy = s.gs[n]
    s.evals += n
    for t in range(n):
        s.gs[t] = hy - s.gs[t] - 1.0
        s.lo[t] = -s.a[s.S[t]]
        s.hi[t] = Ui - s.a[s.S[t]]
        s.flag[t] = FREE
        if fabs(s.gs[t]) > vi:
            vi = fabs(s.gs[t])
    if not (vi > 0.0):
        for t in range(n):
            s.a[s.S[t]] = 0.0
        return 0.0
    r = ww_subproblem(n, s.A[i], s.gs, s.lo, s.hi, s.ds, s.flag, s.max_sub_it)
    if r < 0:
        s.sub_caps += 1
    if ww_apply(s, i, row, yi, n) != 0:
        err[0] = NO_MEMORY
    return vi


cdef inline bint ww_kept(SDM* s, int64_t i) noexcept nogil:
    """Shrinking for WW: keep an example if some alpha_i^m is strictly inside (0, U_i)."""
    cdef int64_t e, off = s.P.off[i]
    cdef double am
    for e in range(s.P.cnt[i]):
        am = s.P.val[off + e]
        if 0.0 < am < s.U[i]:
            return True
    return False
