# CDN, the coordinate descent of csrc/_l1.pyx's `-s cdn` (its block comment has the
# method: Yuan, Chang, Hsieh & Lin, JMLR 2010, Section 4.1): one coordinate's Newton
# direction and line search, a sweep over the active features with shrinking, and the
# outer iterations.  Everything here is inline: this file is cimported, not compiled
# on its own.

from libc.stdint cimport int64_t, uint64_t
from libc.math cimport fabs, INFINITY, NAN
from rng cimport shuffle
from interrupt cimport Stop, stop_poll, stop_keep
from clock cimport monotonic_seconds
from l1_shared cimport (L1Settings, Sweep, CONVERGED, MAX_ITER, NU, SIGMA, TINY_STEP, RESET_FACTOR,
                        subgrad, reg_abs, can_shrink, newton_step, trace_row)
from l1_columns cimport CSC, col_grad, col_trial, col_shift


cdef struct CdnWork:
    # The state of a CDN solve over the column copy A
    double* ba          # b_k = 1 - z_k(w) at ba[S k]; a_k at ba[2 k + 1] when S = 2
    int S               # 2: each row's residual and cost side by side (one cache line per
                        # entry of a column); 1: every cost equal (a0), the residuals alone
                        # (half the memory the random accesses touch)
    double a0           # the common cost a_k when S = 1
    double* w           # the weights
    const double* Hub   # H_j = 2 sum_k a_k v_kj^2 + nu, the curvature bound of the Armijo test
    int64_t* index      # index[0:n_total]: the features taking part (any order)
    int64_t n_total
    int64_t free        # the free bias column, or -1
    double* part        # three doubles per block of the longest column (the passes' blocks)
    double* trace       # one row of TRACE_COLS per outer iteration


cdef struct CdnOut:
    int n_iter
    int status
    int64_t n_active
    int64_t ls_failures
    double last_norm          # sum of |S_j| over the last sweep


cdef inline int cdn_line_search(const CSC* A, CdnWork* W, int max_ls, int64_t j, int64_t p0,
                                int64_t p1, double g, double h, double loss_old) noexcept nogil:
    """The Newton direction of feature j (its column's entries p0:p1, gradient g, second
    derivative h, loss loss_old on the column) and its Armijo line search (csrc/_l1.pyx);
    w_j and b move by the accepted step.  Returns 1 if no trial passed, else 0.

    A trial of the exact Armijo test moves b by its step while it sums the new loss, so
    that the accepted trial's pass is the update (a rejected one is undone by the next
    trial's pass, or by one more pass if every trial fails)."""
    cdef double wj = W.w[j], d, delta, lam, zstep, wnew, reg_change, shift, loss_new
    cdef double applied
    cdef bint is_free = j == W.free
    cdef int m, accepted
    d = -g / h if is_free else newton_step(g, h, wj)
    if fabs(d) < TINY_STEP and wj + d != 0.0:
        return 0
    # Armijo: loss change + |w_j + z| - |w_j| <= sigma lam (g d + |w_j + d| - |w_j|)
    delta = g * d + reg_abs(wj + d, is_free) - reg_abs(wj, is_free)
    lam = 1.0
    accepted = 0
    applied = 0.0           # the step b currently carries on this column
    for m in range(max_ls):
        zstep = lam * d
        wnew = wj + zstep
        reg_change = reg_abs(wnew, is_free) - reg_abs(wj, is_free)
        # the quadratic upper bound of the loss change first (O(1))
        if g * zstep + 0.5 * W.Hub[j] * zstep * zstep + reg_change <= SIGMA * lam * delta:
            accepted = 1
            break
        # the exact change, moving b to this trial on the way
        shift = zstep - applied
        loss_new = col_trial(A, p0, p1, W.ba, W.S, W.a0, shift, W.part)
        applied = zstep
        if loss_new - loss_old + reg_change <= SIGMA * lam * delta:
            accepted = 2
            break
        lam *= 0.5
    if accepted:
        W.w[j] = wnew
    else:
        zstep = 0.0         # undo the last trial below
    if accepted != 2 and zstep != applied:
        col_shift(A, p0, p1, W.ba, W.S, zstep - applied)
    return 0 if accepted else 1


cdef inline void cdn_sweep(const CSC* A, CdnWork* W, const L1Settings* s, double M_old,
                           Sweep* sw, Stop* stop) noexcept nogil:
    """One sweep over the active features index[0:sw.n_active] in their order: for each,
    g_j, h_j and the column's loss in one pass, the shrinking test against M_old, |S_j|,
    then the coordinate's step (cdn_line_search).  Stops early once the Stop record says
    so.  Each pass runs by blocks on A.n_threads threads (csrc/_l1.pyx: threads)."""
    cdef int64_t n_active = sw.n_active, i = 0, j, p0, p1, tmp, n_ls_fail = sw.ls_failures
    cdef double n_ex = <double>A.n_rows
    cdef double M_new = 0.0, norm1 = 0.0, g, h, v, wj, loss_old
    cdef bint is_free
    while i < n_active:
        j = W.index[i]
        p0 = A.colptr[j]
        p1 = A.colptr[j + 1]
        # g_j = -2 sum_I a_k b_k v_kj,  h_j = 2 sum_I a_k v_kj^2 + nu;  the column's loss
        col_grad(A, p0, p1, W.ba, W.S, W.a0, &g, &h, &loss_old, W.part)
        g *= 2.0
        h = 2.0 * h + NU
        wj = W.w[j]
        is_free = j == W.free
        if can_shrink(g, wj, s.shrinking, is_free, M_old, n_ex):
            # shrink: swap j to the end of the active part and revisit slot i
            n_active -= 1
            tmp = W.index[i]; W.index[i] = W.index[n_active]; W.index[n_active] = tmp
            continue
        v = subgrad(g, wj, is_free)
        if v > M_new:
            M_new = v
        norm1 += v
        i += 1
        if stop_poll(stop, p1 - p0 + 1):
            break
        n_ls_fail += cdn_line_search(A, W, s.max_linesearch, j, p0, p1, g, h, loss_old)
    sw.M_new = M_new
    sw.norm1 = norm1
    sw.n_active = n_active
    sw.ls_failures = n_ls_fail


cdef inline void cdn_report(const CSC* A, const CdnWork* W, int it, const Sweep* sw,
                            double t0, void* callback, Stop* stop) noexcept nogil:
    """Outer iteration it's trace row, and the callback (it, f(w), ||S||_1, active
    features), f(w) computed from b only when there is a callback (else nan)."""
    cdef int64_t k, j
    cdef int S = W.S
    cdef const double* ba = W.ba
    cdef double obj = NAN
    if callback != NULL:
        obj = 0.0
        for k in range(A.n_rows):
            if ba[S * k] > 0.0:
                obj += (ba[2 * k + 1] if S == 2 else W.a0) * ba[S * k] * ba[S * k]
        for j in range(A.n_cols):
            obj += reg_abs(W.w[j], j == W.free)
    trace_row(W.trace, it, obj, sw.norm1, sw.n_active, monotonic_seconds() - t0, sw.ls_failures)
    if callback != NULL:
        with gil:
            try:
                (<object>callback)(it, obj, sw.norm1, sw.n_active)
            except BaseException as e:
                stop_keep(stop, e)


cdef inline int cdn_core(const CSC* A, CdnWork* W, const L1Settings* s, double eps,
                         int max_iter, uint64_t* rng, double* ref, CdnOut* out,
                         void* callback, Stop* stop) noexcept nogil:
    """CDN outer iterations (csrc/_l1.pyx) from W.w, with b = 1 - z(w) in W.ba, at most
    max_iter of them, each in an order drawn from rng.

    Returns CONVERGED (||S||_1 of a full sweep <= eps ref[0]) or MAX_ITER; ref[0] < 0 on
    entry: the first sweep's ||S||_1 becomes ref[0] (a cold start's reference); stops
    early (returns MAX_ITER with stop.stopped set) once the Stop record says so.
    W.trace gets one row per outer iteration."""
    cdef Sweep sw
    cdef double M_old = INFINITY, norm1, t0 = monotonic_seconds()
    cdef double reset_norm = INFINITY
    cdef int it = 0, status = MAX_ITER
    sw.n_active = W.n_total
    sw.ls_failures = 0
    while it < max_iter:
        shuffle(rng, W.index, sw.n_active)
        cdn_sweep(A, W, s, M_old, &sw, stop)
        if stop.stopped:
            break
        it += 1
        cdn_report(A, W, it, &sw, t0, callback, stop)
        norm1 = sw.norm1
        out.last_norm = norm1
        if stop.stopped:
            break
        if ref[0] < 0.0:
            ref[0] = norm1
        if norm1 <= eps * ref[0] or (sw.n_active < W.n_total
                                     and norm1 <= RESET_FACTOR * reset_norm):
            if norm1 <= eps * ref[0] and sw.n_active == W.n_total:
                status = CONVERGED
                break
            # converged on the shrunk set (or a tenth of the way there): check every
            # feature again
            sw.n_active = W.n_total
            M_old = INFINITY
            reset_norm = norm1
            continue
        if sw.n_active == W.n_total:
            reset_norm = norm1
        M_old = sw.M_new
    out.n_iter = it
    out.status = status
    out.n_active = sw.n_active
    out.ls_failures = sw.ls_failures
    return status
