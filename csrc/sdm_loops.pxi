# The loops of the sequential dual method (csrc/_sdm.pyx, whose block comment has the
# algorithm): Algorithm 2.1 / 3.1 with the Section 2.1 heuristics -- full loops over a
# fresh permutation of the examples, cooling of eps_cur, the lazy loop that certifies,
# and the runs of shrunk loops between full loops -- with the trace, the progress
# callback and the polls for Ctrl-C.  Included in csrc/_sdm.pyx, after sdm_steps.pxi.

from libc.stdint cimport int64_t, uint64_t
from clock cimport monotonic_seconds
from rng cimport shuffle
from interrupt cimport stop_poll, stop_keep

# trace columns: kind (0 full loop, 1 shrunk phase, 2 measuring pass), eps_cur, max v, dual f,
# seconds, effective loops so far, loops so far
cdef enum:
    TRACE_COLS = 7

# the loops poll for Ctrl-C / stop requests every POLL_EVERY visits (a power of two)
cdef enum:
    POLL_EVERY = 256

# What sdm_run reports (and the trace it writes).
ctypedef struct SdmOut:
    double* trace       # TRACE_COLS doubles per row: room for 3 max_iter + 2 rows
    int64_t n_trace     # rows written
    int n_full          # full loops
    int64_t n_loops     # all loops
    double vfinal       # the max violation of the last full loop


cdef inline int sdm_poll(SDM* s) noexcept nogil:
    """Poll s.stop, the g evaluations since the last poll being the work; returns 1 if
    the solve must stop."""
    cdef int64_t work = (s.evals - s.polled) * s.stop.per_row
    s.polled = s.evals
    return stop_poll(s.stop, work)


cdef inline int sdm_report(SDM* s, SdmOut* out, int kind, double eps_cur, double vmax,
                           double t0, double denom, void* callback) noexcept nogil:
    """One trace row, then callback(kind, full loops, eps_cur, vmax, f, effective loops)
    with the GIL (its exception stops the solve: stop_keep); returns 1 if the solve was
    stopped by then (checked only with a callback)."""
    cdef double* row = out.trace + out.n_trace * TRACE_COLS
    row[0] = kind
    row[1] = eps_cur
    row[2] = vmax
    row[3] = s.f
    row[4] = monotonic_seconds() - t0
    row[5] = s.evals / denom
    row[6] = out.n_loops
    out.n_trace += 1
    if callback == NULL:
        return 0
    with gil:
        try:
            (<object>callback)(kind, out.n_full, eps_cur, vmax, s.f, s.evals / denom)
        except BaseException as e:
            stop_keep(s.stop, e)
    return s.stop.stopped


cdef double full_loop(SDM* s, int64_t* idx, int64_t n_idx, double lazy_eps,
                             uint64_t* rng, int* err) noexcept nogil:
    """One loop over all examples in a fresh random order; returns max v_i (eq. 6 / 18).

    Every example with v_i > 0 is updated, except that with lazy_eps > 0 the
    loop only measures until it meets a v_i >= lazy_eps: a loop that never
    does has moved nothing, so eq. 9 / 20 holds exactly at its end.  A stop (s.stop)
    ends the loop early."""
    cdef int64_t s_i
    cdef int ww = s.opt.weston_watkins
    cdef double v, vmax = 0.0, thresh = lazy_eps if lazy_eps > 0.0 else 0.0
    shuffle(rng, idx, n_idx)
    for s_i in range(n_idx):
        if ww:
            v = ww_full_step(s, idx[s_i], thresh, err)
        else:
            v = cs_full_step(s, idx[s_i], thresh, err)
        if v > vmax:
            vmax = v
            if vmax >= thresh:
                thresh = 0.0
        if err[0]:
            break
        if (s_i & (POLL_EVERY - 1)) == POLL_EVERY - 1 and sdm_poll(s):
            break
    return vmax


cdef inline int64_t kept_examples(SDM* s, const int64_t* idx, int64_t n_idx,
                                  int64_t* shr) noexcept nogil:
    """shr = the examples of idx[0:n_idx] that the removal rule keeps, in order; returns
    their number (idx and shr may be the same array)."""
    cdef int64_t s_i, j, kept = 0
    cdef int ww = s.opt.weston_watkins
    for s_i in range(n_idx):
        j = idx[s_i]
        if (ww_kept(s, j) if ww else cs_kept(s, j)):
            shr[kept] = j
            kept += 1
    return kept


cdef inline int shrunk_loops(SDM* s, const int64_t* idx, int64_t n_idx, int64_t* shr,
                             double eps_cur, double denom, uint64_t* rng, SdmOut* out,
                             int* err, double* vmax_out) noexcept nogil:
    """A run of shrunk loops (Section 2.1): fresh permutations of the examples the
    removal rule keeps, each visit optimizing only the kept alphas, until max v < eps_cur
    on them or their g evaluations exceed effort_cap k l (denom = k l); vmax_out gets the
    last loop's max v.  Returns 1 if the solve was stopped."""
    cdef int64_t s_i, n_shr = kept_examples(s, idx, n_idx, shr)
    cdef int ww = s.opt.weston_watkins
    cdef double v, vmax = 0.0, evals0 = s.evals
    while n_shr > 0:
        shuffle(rng, shr, n_shr)
        vmax = 0.0
        for s_i in range(n_shr):
            if ww:
                v = ww_shrunk_step(s, shr[s_i], err)
            else:
                v = cs_shrunk_step(s, shr[s_i], err)
            if v > vmax:
                vmax = v
            if err[0]:
                break
            if (s_i & (POLL_EVERY - 1)) == POLL_EVERY - 1 and sdm_poll(s):
                break
        if sdm_poll(s):
            return 1
        out.n_loops += 1
        if err[0] or vmax < eps_cur or (s.evals - evals0) > s.opt.effort_cap * denom:
            break
        # drop the examples that now meet the removal rule
        n_shr = kept_examples(s, shr, n_shr, shr)
    vmax_out[0] = vmax
    return 0


cdef int sdm_run(SDM* s, int64_t* idx, int64_t n_idx, int64_t* shr, uint64_t* rng,
                        SdmOut* out, void* callback) noexcept nogil:
    """Algorithm 2.1 (CS) or 3.1 (WW, s.opt.weston_watkins) with shrinking and cooling
    (Section 2.1), by s.opt.

    idx[0:n_idx] lists the examples taking part; shr has room for n_idx entries.
    Every example with v_i > 0 is updated when visited, as in the paper, so a
    loop that meets eq. 9 / 20 has moved alpha after measuring it.  At the
    target eps the loop after such a loop is lazy (see full_loop): if it meets
    the rule it has moved nothing and the solve ends with eq. 9 / 20 holding
    exactly at the returned alpha (trace kind 2); otherwise it has been an
    ordinary full loop.  Returns CONVERGED, MAX_ITER or NO_MEMORY; out.vfinal gets
    the max violation of the last full loop.  Once s.stop is stopped (Ctrl-C, an
    exception in the callback, a stop request) it returns MAX_ITER at once; the
    caller raises.
    """
    cdef double eps = s.opt.tol, eps_cur = s.opt.tol, vmax, t0 = monotonic_seconds(), denom
    cdef int err = 0, lazy = 0, kind
    if s.opt.cooling and eps < 1.0:
        eps_cur = 1.0
    denom = <double>s.k * <double>n_idx
    while out.n_full < s.opt.max_iter:
        # ---- full loop (lazy: the one that may certify)
        vmax = full_loop(s, idx, n_idx, eps if lazy else 0.0, rng, &err)
        if sdm_poll(s):
            return MAX_ITER
        out.n_full += 1
        out.n_loops += 1
        out.vfinal = vmax
        kind = 2 if (lazy and vmax < eps) else 0
        if sdm_report(s, out, kind, eps_cur, vmax, t0, denom, callback):
            return MAX_ITER
        if err:
            return NO_MEMORY
        if lazy and vmax < eps:
            return CONVERGED
        lazy = 0
        pool_trim(&s.P)
        if vmax < eps_cur:
            if eps_cur > eps:
                # cooling: the next graded step (factors of 10), skipping the steps this
                # loop already meets (after a warm start the first loop may meet several)
                eps_cur = eps_cur / 10.0
                while eps_cur > eps and vmax < eps_cur / 10.0:
                    eps_cur = eps_cur / 10.0
                if eps_cur < eps:
                    eps_cur = eps
            if vmax < eps_cur:
                lazy = 1                        # at eps: certify with the next loop
            continue
        if not s.opt.shrinking:
            continue
        # ---- shrunk loops
        vmax = 0.0
        if shrunk_loops(s, idx, n_idx, shr, eps_cur, denom, rng, out, &err, &vmax):
            return MAX_ITER
        if sdm_report(s, out, 1, eps_cur, vmax, t0, denom, callback):
            return MAX_ITER
        if err:
            return NO_MEMORY
    return MAX_ITER
