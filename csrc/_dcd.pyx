# Dual coordinate descent for binary linear SVMs (Hsieh, Chang, Lin, Keerthi &
# Sundararajan, ICML 2008: reference [9] of the SDM paper, the binary case of
# SDM, and the solver Section 4 of the SDM paper uses for one-vs-rest).
#
# Primal, over the examples k in `rows` (x_k includes the bias feature):
#
#     l1 (hinge):          min_w 1/2 ||w||^2 + sum_k U_k max(0, 1 - t_k w.x_k)       U_k = C c_k
#     l2 (squared hinge):  min_w 1/2 ||w||^2 + sum_k C c_k max(0, 1 - t_k w.x_k)^2
#
# (LIBLINEAR -s 3 and -s 1 for the same C and bias; c_k = class weight x sample
# weight).  Dual, with Q_kj = t_k t_j x_k.x_j and w(alpha) = sum_k alpha_k t_k x_k:
#
#     min_alpha f(alpha) = 1/2 alpha' (Q + D) alpha - sum_k alpha_k,   0 <= alpha_k <= U_k
#
#     l1: D_kk = 0,             U_k = C c_k
#     l2: D_kk = 1 / (2 C c_k), U_k = +inf
#
# Algorithm (paper [9], Algorithms 1 and 3): loops over a fresh random
# permutation of the active examples; for each k
#     G  = t_k w.x_k - 1 + D_kk alpha_k                      (the partial derivative)
#     PG = min(G, 0) if alpha_k = 0, max(G, 0) if alpha_k = U_k, else G   (projected)
#     if PG != 0:  alpha_k <- min(max(alpha_k - G / QD_k, 0), U_k),  QD_k = ||x_k||^2 + D_kk
#                  w <- w + (alpha_k,new - alpha_k,old) t_k x_k
# Shrinking (Algorithm 3): with M, m the largest and smallest PG of the previous
# loop (M <= 0 counts as +inf, m >= 0 as -inf), an example at alpha_k = 0 with
# G > M, or at alpha_k = U_k with G < m, leaves the active set.  Stopping rule:
# max PG - min PG <= eps over one loop of the active set; if examples were
# shrunk, the active set is reset to all of them and the loop continues, so the
# solve ends only on a loop over every example.
#
# Examples with c_k = 0 have no dual variable (alpha_k = 0).  An example with
# x_k = 0 under l1 (possible only without a bias feature) has QD_k = 0: its
# best alpha_k is U_k whatever w is, so it is set once and skipped.
#
# Inputs are addressed through `rows`; t and c are per position in rows.  The
# core is serial (coordinate descent is sequential) and allocation-free; the
# Python wrapper allocates every buffer.

from libc.stdint cimport int32_t, int64_t, uint64_t
from cython.parallel cimport prange
from libc.math cimport fabs, INFINITY
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
import numpy as np
from csr cimport CSR, make_csr, dot_row, axpy_row, sq_norm_row, dot, dot_span, axpy_span
from rng cimport shuffle
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    HANDED_OVER = 2

cdef int TRACE_COLS = 5       # loop, dual f, PG spread, seconds, active size


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef inline double _projected(double G, double alpha, double U) noexcept nogil:
    """The projected gradient of the box 0 <= alpha <= U."""
    if alpha <= 0.0:
        return G if G < 0.0 else 0.0
    if alpha >= U:
        return G if G > 0.0 else 0.0
    return G


cdef int dcd_core(const CSR* X, const int64_t* rows, const double* t, const double* U,
                  const double* Dg, const double* QD, double* alpha, double* w,
                  int64_t* index, int64_t n_total, double eps, int shrinking,
                  uint64_t* rng, int max_iter, double* f, int* n_iter, double* spread_out,
                  double* trace, void* callback, Stop* stop, double sigma) noexcept nogil:
    """Dual coordinate descent with shrinking (see the block comment).

    index[0:n_total] holds the positions taking part; w = sum alpha t x on entry.
    f holds the dual objective f(alpha) on entry and is kept up to date.
    sigma scales each step's move of w (w += sigma d t_k x_k): 1 for the serial
    solve (exact: the products are unchanged), sigma' of a CoCoA+ local pass
    (dcd_local_pass, whose QD holds sigma' ||x_k||^2 + D_kk).
    Returns CONVERGED, MAX_ITER or HANDED_OVER (the callback, called after every loop,
    returned a true value: the caller finishes the solve another way); trace gets one
    row per loop.  Each loop polls stop (csrc/interrupt.pxd): once it is stopped the
    solve returns, the caller raises.
    """
    cdef int64_t n_active = n_total, s, k, tmp
    cdef double Mbar = INFINITY, mbar = -INFINITY, PGmax, PGmin, G, PG, a_old, a_new, d
    cdef double t0 = _now(), spread = 0.0
    cdef int it = 0, status = MAX_ITER, handed = 0
    while it < max_iter:
        shuffle(rng, index, n_active)
        PGmax = -INFINITY
        PGmin = INFINITY
        s = 0
        while s < n_active:
            k = index[s]
            G = t[k] * dot_row(X, rows[k], w) - 1.0 + Dg[k] * alpha[k]
            PG = 0.0
            if alpha[k] <= 0.0:
                if shrinking and G > Mbar:
                    # shrink: swap k to the end of the active part and revisit slot s
                    n_active -= 1
                    tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                    continue
                if G < 0.0:
                    PG = G
            elif alpha[k] >= U[k]:
                if shrinking and G < mbar:
                    n_active -= 1
                    tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                    continue
                if G > 0.0:
                    PG = G
            else:
                PG = G
            if PG > PGmax:
                PGmax = PG
            if PG < PGmin:
                PGmin = PG
            if PG != 0.0:
                a_old = alpha[k]
                a_new = a_old - G / QD[k]
                if a_new < 0.0:
                    a_new = 0.0
                elif a_new > U[k]:
                    a_new = U[k]
                alpha[k] = a_new
                d = a_new - a_old
                if d != 0.0:
                    # w += d t_k x_k;  f changes by d G + d^2 QD / 2
                    axpy_row(X, rows[k], d * t[k] * sigma, w)
                    f[0] += d * G + 0.5 * d * d * QD[k]
            s += 1
        it += 1
        if n_active == 0:
            PGmax = 0.0
            PGmin = 0.0
        spread = PGmax - PGmin
        trace[(it - 1) * TRACE_COLS + 0] = it
        trace[(it - 1) * TRACE_COLS + 1] = f[0]
        trace[(it - 1) * TRACE_COLS + 2] = spread
        trace[(it - 1) * TRACE_COLS + 3] = _now() - t0
        trace[(it - 1) * TRACE_COLS + 4] = n_active
        if callback != NULL:
            with gil:
                try:
                    if (<object>callback)(it, f[0], spread, n_active):
                        handed = 1
                except BaseException as e:
                    stop_keep(stop, e)
        if stop_poll(stop, n_active * stop.per_row):
            break
        if handed:
            status = HANDED_OVER
            break
        if spread <= eps:
            if n_active == n_total:
                status = CONVERGED
                break
            # converged on the shrunk set: reset and check every example
            n_active = n_total
            Mbar = INFINITY
            mbar = -INFINITY
            continue
        Mbar = PGmax if PGmax > 0.0 else INFINITY
        mbar = PGmin if PGmin < 0.0 else -INFINITY
    n_iter[0] = it
    spread_out[0] = spread
    return status


# ------------------------------------------------------------------ the block method
#
# Chiang, Lee & Lin (KDD 2016), "Parallel dual coordinate descent method for large-scale
# linear classification in multi-core environments", Sec. 3: almost all of a loop's time
# is in the gradients G_k = t_k w.x_k - 1 + D_kk alpha_k (a dot product per example),
# and late in a solve almost none of them leads to a move.  So each loop walks its
# permutation in blocks B of candidates:
#   1. G_k for every k in B at the same w, in parallel (one thread's dot product per k);
#   2. in the permutation's order, shrinking tests and PG_k as in the serial loop, and
#      the working set  W = {k in B : |PG_k| >= theta}  (theta below);
#   3. in the same order, the coordinate step of each k in W with its gradient at the
#      current w: G_k of step 1 for the first move of the block, recomputed after one
#      (w has changed), then alpha_k and w as in the serial loop.
# The threshold (the paper's selection of the coordinates worth a sequential step)
# keeps W small: theta starts at min(THETA0, eps / 10) (a warm start at the optimum
# then steps at once) and shrinks tenfold each time a loop's |PG| are all <= 10 theta,
# down to 0.001 eps; a loop with |PG| < theta everywhere has spread < 2 theta, so
# theta keeps shrinking until the serial stopping rule (spread <= eps over a loop of
# all examples) can hold.  The rule, the shrinking and the reset are the serial
# loop's; shrinking tests the gradients of step 1, and the PG spread takes the working
# set's projected gradients at their steps' w (as the serial loop measures them) and
# the others' of step 1 (|PG| < theta).
#
# Identical for every thread count: each G_k is one dot product however the block is
# shared out, steps 2 and 3 run on one thread in a fixed order, and the block size
# follows the working sets alone: it doubles (to BLOCK_MAX) after a block with
# |W| <= |B| / 64 and halves (to BLOCK_MIN) after one with |W| > |B| / 8, so that the
# recomputed gradients (|W| - 1 per block) stay a small share of the dot products.
# The threads take part only in blocks of at least PARALLEL_MIN_NNZ non-zeros (the
# average row's count times |B|); smaller ones run on the calling thread.  The loops
# read each example's span, t, U, D, QD and alpha from one record (Example): in a
# random order, separate arrays cost a cache miss each per example (docs/threads.md).

cdef enum:
    BLOCK_MIN = 1
    BLOCK_START = 256
    BLOCK_MAX = 4096
    PARALLEL_MIN_NNZ = 16384

cdef double THETA0 = 0.01


ctypedef struct Example:
    # one example's data in one record (a cache line): the loop visits the examples
    # in random order, and separate arrays cost a cache miss each per visit
    int64_t start, end      # its span in X's indices and data
    double t, U, Dg, QD
    double alpha


cdef inline double _ex_dot(const CSR* X, const Example* e, const double* w) noexcept nogil:
    """x_k . w (with the bias feature)."""
    cdef double s = dot_span(X.indices, X.data, e.start, e.end, w, X.unit)
    if X.bias > 0:
        s += X.bias * w[X.n_features]
    return s


cdef inline void _ex_axpy(const CSR* X, const Example* e, double a, double* w) noexcept nogil:
    """w += a x_k (with the bias feature)."""
    axpy_span(X.indices, X.data, e.start, e.end, a, w, X.unit)
    if X.bias > 0:
        w[X.n_features] += a * X.bias


cdef inline void _block_gradients(const CSR* X, const Example* ex, const double* w,
                                  const int64_t* index, int64_t b, double* G,
                                  int n_threads) noexcept nogil:
    """G[j] = t_k w.x_k - 1 + D_kk alpha_k for k = index[j], j < b (step 1)."""
    cdef int64_t j
    cdef const Example* e
    if n_threads > 1:
        for j in prange(b, schedule="static", num_threads=n_threads):
            e = ex + index[j]
            G[j] = e.t * _ex_dot(X, e, w) - 1.0 + e.Dg * e.alpha
    else:
        for j in range(b):
            e = ex + index[j]
            G[j] = e.t * _ex_dot(X, e, w) - 1.0 + e.Dg * e.alpha


cdef inline int64_t _block_updates(const CSR* X, Example* ex, double* w, const int64_t* ws,
                                   const double* Gws, int64_t n_ws, double* f,
                                   double* PGext) noexcept nogil:
    """Step 3: the coordinate steps of the working set ws (gradients Gws at the block's
    w) in order, PGext[0], PGext[1] widened to their projected gradients at the current
    w (the ones the serial loop measures); returns how many moved alpha."""
    cdef int64_t q, moved = 0
    cdef double G, PG, a_old, a_new, d
    cdef Example* e
    for q in range(n_ws):
        e = ex + ws[q]
        G = Gws[q] if moved == 0 else e.t * _ex_dot(X, e, w) - 1.0 + e.Dg * e.alpha
        PG = _projected(G, e.alpha, e.U)
        if PG > PGext[0]:
            PGext[0] = PG
        if PG < PGext[1]:
            PGext[1] = PG
        a_old = e.alpha
        a_new = a_old - G / e.QD
        if a_new < 0.0:
            a_new = 0.0
        elif a_new > e.U:
            a_new = e.U
        d = a_new - a_old
        if d != 0.0:
            e.alpha = a_new
            # w += d t_k x_k;  f changes by d G + d^2 QD / 2
            _ex_axpy(X, e, d * e.t, w)
            f[0] += d * G + 0.5 * d * d * e.QD
            moved += 1
    return moved


ctypedef struct BlockWork:
    double* G           # BLOCK_MAX gradients of the block (step 1)
    int64_t* ws         # BLOCK_MAX: the working set (positions)
    double* Gws         # BLOCK_MAX: their gradients
    int n_threads
    double row_nnz      # the average row's non-zeros (PARALLEL_MIN_NNZ)
    int64_t counts[4]   # blocks, blocks on the threads, gradients (step 1), steps (step 3)


cdef int64_t _block_pass(const CSR* X, Example* ex, double* w, int64_t* index,
                         int64_t n_active, int shrinking, double Mbar, double mbar,
                         double theta, double* f, double* PGext, BlockWork* bw) noexcept nogil:
    """One loop of the block method over index[0:n_active] (already permuted): steps
    1-3 block by block.  PGext[0], PGext[1] get the loop's max and min PG: at the
    block's w for the examples left out of W, at the step's w for those in W.  Returns
    the active size after shrinking."""
    cdef int64_t s = 0, b = BLOCK_START, send, j, k, n_ws, last, tmp
    cdef double G, PG, a
    cdef int nt
    PGext[0] = -INFINITY
    PGext[1] = INFINITY
    while s < n_active:
        send = b if b < n_active - s else n_active - s
        nt = bw.n_threads if send * bw.row_nnz >= PARALLEL_MIN_NNZ else 1
        _block_gradients(X, ex, w, index + s, send, bw.G, nt)
        bw.counts[0] += 1
        bw.counts[1] += nt > 1
        bw.counts[2] += send
        n_ws = 0
        j = 0
        while j < send:
            k = index[s + j]
            G = bw.G[j]
            a = ex[k].alpha
            if shrinking and ((a <= 0.0 and G > Mbar) or (a >= ex[k].U and G < mbar)):
                # shrink k: the block's last candidate takes its slot, the next example
                # outside the block the last candidate's, k the active part's end
                n_active -= 1
                last = s + send - 1
                tmp = index[s + j]
                index[s + j] = index[last]
                bw.G[j] = bw.G[send - 1]
                index[last] = index[n_active]
                index[n_active] = tmp
                send -= 1
                continue
            PG = _projected(G, a, ex[k].U)
            if PG != 0.0 and fabs(PG) >= theta:
                bw.ws[n_ws] = k
                bw.Gws[n_ws] = G
                n_ws += 1
            else:
                if PG > PGext[0]:
                    PGext[0] = PG
                if PG < PGext[1]:
                    PGext[1] = PG
            j += 1
        _block_updates(X, ex, w, bw.ws, bw.Gws, n_ws, f, PGext)
        bw.counts[3] += n_ws
        s += send
        if n_ws * 64 <= send:
            b = b * 2 if b * 2 <= BLOCK_MAX else BLOCK_MAX
        elif n_ws * 8 > send:
            b = b // 2 if b // 2 >= BLOCK_MIN else BLOCK_MIN
    return n_active


cdef int dcd_block_core(const CSR* X, Example* ex, double* w, int64_t* index, int64_t n_total,
                        double eps, int shrinking, uint64_t* rng, int max_iter, double* f,
                        int* n_iter, double* spread_out, double* trace, void* callback,
                        Stop* stop, BlockWork* bw) noexcept nogil:
    """dcd_core's solve by the block method (see the notes above) on the examples ex
    (their alphas updated in place); the other arguments, status and trace as
    dcd_core's, and the same stopping rule, shrinking and reset."""
    cdef int64_t n_active = n_total
    cdef double Mbar = INFINITY, mbar = -INFINITY, spread = 0.0, t0 = _now()
    cdef double theta = THETA0 if THETA0 < 0.1 * eps else 0.1 * eps, theta_min = 0.001 * eps
    cdef double PGext[2]
    cdef int it = 0, status = MAX_ITER, handed = 0
    if theta_min > theta:
        theta_min = theta
    while it < max_iter:
        shuffle(rng, index, n_active)
        n_active = _block_pass(X, ex, w, index, n_active, shrinking, Mbar, mbar, theta, f,
                               PGext, bw)
        it += 1
        if n_active == 0:
            PGext[0] = 0.0
            PGext[1] = 0.0
        spread = PGext[0] - PGext[1]
        trace[(it - 1) * TRACE_COLS + 0] = it
        trace[(it - 1) * TRACE_COLS + 1] = f[0]
        trace[(it - 1) * TRACE_COLS + 2] = spread
        trace[(it - 1) * TRACE_COLS + 3] = _now() - t0
        trace[(it - 1) * TRACE_COLS + 4] = n_active
        if callback != NULL:
            with gil:
                try:
                    if (<object>callback)(it, f[0], spread, n_active):
                        handed = 1
                except BaseException as e:
                    stop_keep(stop, e)
        if stop_poll(stop, n_active * stop.per_row):
            break
        if handed:
            status = HANDED_OVER
            break
        if spread <= 10.0 * theta and PGext[0] <= 10.0 * theta and -PGext[1] <= 10.0 * theta \
                and theta > theta_min:
            theta = 0.1 * theta if 0.1 * theta > theta_min else theta_min
        if spread <= eps:
            if n_active == n_total:
                status = CONVERGED
                break
            n_active = n_total
            Mbar = INFINITY
            mbar = -INFINITY
            continue
        Mbar = PGext[0] if PGext[0] > 0.0 else INFINITY
        mbar = PGext[1] if PGext[1] < 0.0 else -INFINITY
    n_iter[0] = it
    spread_out[0] = spread
    return status


def request_stop():
    """Make every solve of this module running now, in any thread, stop and raise
    KeyboardInterrupt (csrc/interrupt.pxd; linsvm.interrupt.stop_running_solves)."""
    stop_request()


def _with_monitor(callback, monitor, w):
    """One per-loop callback for dcd_core: the progress callback (if any), then the
    monitor on (loop, w, dual), whose answer it returns."""
    def both(it, f, spread, n_active):
        if callback is not None:
            callback(it, f, spread, n_active)
        return monitor(it, w, -f)
    return both


def dcd_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] t,
              const double[::1] c, double C, int loss, double[::1] alpha, double eps,
              bint shrinking, uint64_t seed, int max_iter, object callback, object monitor=None,
              int n_threads=1):
    """Solve the binary SVM dual by coordinate descent (paper [9], Algorithms 1 and 3).

    Minimizes f(alpha) = 1/2 alpha'(Q + D)alpha - sum alpha over 0 <= alpha <= U
    (see the block comment: loss 1 = hinge, U = C c, D = 0; loss 2 = squared
    hinge, U = inf, D = 1/(2 C c)), starting from `alpha` (updated in place;
    values outside the box are clipped).  Buffers must be validated by
    the caller: indices in [0, n_features), rows in [0, n_rows), t = +-1,
    c >= 0 finite, len(t) == len(c) == len(alpha) == len(rows).

    callback(loop, f, PG spread, active size) is called after every loop (progress);
    monitor(loop, w, dual), if given, too, with the current w (read it, do not keep
    it) and dual value -f: when it returns a true value the solve stops there with
    status 2 (the caller hands the problem to another solver).

    The loops are the block method (Chiang, Lee & Lin 2016; dcd_block_core): the
    gradients of each block on n_threads threads, the steps on one, so the result is
    the same bit for bit for every n_threads.

    Returns a dict: w (n_features + (bias > 0)), status (0 converged, 1 loop
    cap, 2 stopped by monitor), n_iter (loops), dual (the maximization dual -f(alpha)), primal (the
    primal objective at w), pg_spread (max PG - min PG recomputed at the
    returned alpha over all examples: the optimality measure of [9]),
    loop_spread (the measure of the last loop), n_sv, n_bound, trace (one row
    per loop: loop, f, PG spread, seconds, active-set size), block_counts (blocks,
    blocks whose gradients ran on the threads, gradients, coordinate steps).
    """
    cdef int64_t m = rows.shape[0], k, n_total = 0, n_sv = 0, n_bound = 0
    cdef int64_t nw = n_features + (1 if bias > 0 else 0)
    cdef int status = CONVERGED, n_iter = 0
    cdef double f = 0.0, spread_loop = 0.0, G, PG, PGmax = -INFINITY, PGmin = INFINITY
    cdef double margin, primal = 0.0, sum_alpha = 0.0, sum_sq = 0.0, xx
    cdef uint64_t rng = seed
    if loss not in (1, 2):
        raise ValueError("loss must be 1 (hinge) or 2 (squared hinge)")
    w_arr = np.zeros(nw, dtype=np.float64)
    Uarr = np.zeros(m, dtype=np.float64)
    Darr = np.zeros(m, dtype=np.float64)
    QDarr = np.zeros(m, dtype=np.float64)
    idx_arr = np.empty(max(m, 1), dtype=np.int64)
    trace_arr = np.zeros((max(max_iter, 1), TRACE_COLS), dtype=np.float64)
    Gb_arr, Gws_arr = np.empty(BLOCK_MAX), np.empty(BLOCK_MAX)
    ws_arr = np.empty(BLOCK_MAX, dtype=np.int64)
    cdef double[::1] wv = w_arr, Uv = Uarr, Dv = Darr, QDv = QDarr, Gbv = Gb_arr, Gwsv = Gws_arr
    cdef int64_t[::1] wsv = ws_arr
    cdef BlockWork bw
    ex_arr = np.empty(max(m, 1) * sizeof(Example), dtype=np.uint8)
    cdef unsigned char[::1] exv = ex_arr
    cdef Example* ex
    cdef double[:, ::1] tr = trace_arr
    cdef int64_t[::1] idx = idx_arr
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, 1, NULL)
    bw.G, bw.ws, bw.Gws = &Gbv[0], &wsv[0], &Gwsv[0]
    bw.n_threads = n_threads if n_threads > 1 else 1
    bw.row_nnz = (indptr[indptr.shape[0] - 1] - indptr[0]) / max(indptr.shape[0] - 1, 1)
    bw.counts[:] = [0, 0, 0, 0]
    if monitor is not None:
        callback = _with_monitor(callback, monitor, w_arr)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop S
    stop_init(&S, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    if m == 0:
        return dict(w=w_arr, status=CONVERGED, n_iter=0, dual=0.0, primal=0.0, pg_spread=0.0,
                    loop_spread=0.0, n_sv=0, n_bound=0, trace=trace_arr[:0].copy(),
                    block_counts=(0, 0, 0, 0))
    with nogil:
        for k in range(m):
            xx = sq_norm_row(&X, rows[k])
            if c[k] <= 0.0:                 # no loss term: no dual variable
                alpha[k] = 0.0
                continue
            if loss == 1:
                Uv[k] = C * c[k]
                Dv[k] = 0.0
            else:
                Uv[k] = INFINITY
                Dv[k] = 0.5 / (C * c[k])
            QDv[k] = xx + Dv[k]
            if alpha[k] < 0.0:
                alpha[k] = 0.0
            elif alpha[k] > Uv[k]:
                alpha[k] = Uv[k]
            if QDv[k] <= 0.0:               # x_k = 0 under l1: alpha_k = U_k is optimal
                alpha[k] = Uv[k]
                continue
            idx[n_total] = k
            n_total += 1
        # w = sum alpha t x;  f = 1/2 w.w + 1/2 sum D alpha^2 - sum alpha
        for k in range(m):
            if alpha[k] != 0.0:
                axpy_row(&X, rows[k], alpha[k] * t[k], &wv[0])
                sum_alpha += alpha[k]
                sum_sq += Dv[k] * alpha[k] * alpha[k]
        f = 0.5 * dot(&wv[0], &wv[0], nw) + 0.5 * sum_sq - sum_alpha
        if n_total > 0:
            ex = <Example*>&exv[0]
            for k in range(m):
                ex[k].start = indptr[rows[k]]
                ex[k].end = indptr[rows[k] + 1]
                ex[k].t = t[k]
                ex[k].U = Uv[k]
                ex[k].Dg = Dv[k]
                ex[k].QD = QDv[k]
                ex[k].alpha = alpha[k]
            status = dcd_block_core(&X, ex, &wv[0], &idx[0], n_total, eps, shrinking, &rng,
                                    max_iter, &f, &n_iter, &spread_loop, &tr[0, 0], cb, &S, &bw)
            for k in range(m):
                alpha[k] = ex[k].alpha
        # certificate at the returned alpha, primal and dual objectives, from scratch
        sum_alpha = 0.0
        sum_sq = 0.0
        for k in range(m if not S.stopped else 0):
            if c[k] <= 0.0:
                continue
            margin = t[k] * dot_row(&X, rows[k], &wv[0])
            if margin < 1.0:
                primal += (C * c[k]) * ((1.0 - margin) if loss == 1 else (1.0 - margin) * (1.0 - margin))
            sum_alpha += alpha[k]
            sum_sq += Dv[k] * alpha[k] * alpha[k]
            if alpha[k] > 0.0:
                n_sv += 1
                if alpha[k] >= Uv[k]:
                    n_bound += 1
            if QDv[k] <= 0.0:
                continue
            G = margin - 1.0 + Dv[k] * alpha[k]
            PG = _projected(G, alpha[k], Uv[k])
            if PG > PGmax:
                PGmax = PG
            if PG < PGmin:
                PGmin = PG
        xx = dot(&wv[0], &wv[0], nw)
        primal += 0.5 * xx
    stop_raise(&S)                          # Ctrl-C: the work arrays go as it unwinds
    return dict(w=w_arr, status=status, n_iter=n_iter,
                dual=float(sum_alpha - 0.5 * xx - 0.5 * sum_sq), primal=float(primal),
                pg_spread=float(PGmax - PGmin) if n_total > 0 else 0.0,
                loop_spread=float(spread_loop), n_sv=n_sv, n_bound=n_bound,
                trace=trace_arr[:n_iter].copy(),
                block_counts=(bw.counts[0], bw.counts[1], bw.counts[2], bw.counts[3]))


# ------------------------------------------------------------------ CoCoA+ local passes
#
# A distributed dcd (linsvm/solvers/cocoa.py) keeps the examples of one MPI rank's block
# here and w replicated.  Each round runs dcd_core on the block's CoCoA+ subproblem
# (Ma et al. 2015, adding, sigma' = number of ranks): the coordinate step of alpha_k sees
# v = w + sigma' dw (dw = the change of w this round from this block) in its gradient
# and sigma' ||x_k||^2 + D_kk as its curvature, so dcd_core runs unchanged on v with
# QD = sigma' ||x_k||^2 + D_kk and w-steps scaled by sigma'.  With one rank (sigma' = 1)
# the subproblem is the serial dual.

def dcd_local_setup(*, const int64_t[::1] indptr, const int32_t[::1] indices,
                    const double[::1] data, int64_t n_features, double bias,
                    const int64_t[::1] rows, const double[::1] c, double C, int loss,
                    double sigma, double[::1] alpha, double[::1] U, double[::1] Dg,
                    double[::1] QD, int64_t[::1] index):
    """The fixed arrays of this block's local passes: U (box), Dg (D_kk), QD
    (sigma ||x_k||^2 + D_kk) and the positions taking part in index[0:n]; alpha is
    clipped to the box, set to 0 where c_k = 0 and to U_k where QD_k = 0 (x_k = 0
    under l1), as dcd_solve does.  Buffers as dcd_solve's; U, Dg, QD, index and alpha
    hold len(rows) entries.  Returns n."""
    cdef int64_t m = rows.shape[0], k, n_total = 0
    cdef double xx
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, 1, NULL)
    if loss not in (1, 2):
        raise ValueError("loss must be 1 (hinge) or 2 (squared hinge)")
    if not (U.shape[0] == Dg.shape[0] == QD.shape[0] == index.shape[0] == alpha.shape[0]
            == c.shape[0] == m):
        raise ValueError("inconsistent lengths")
    with nogil:
        for k in range(m):
            U[k] = 0.0
            Dg[k] = 0.0
            QD[k] = 0.0
            if c[k] <= 0.0:
                alpha[k] = 0.0
                continue
            xx = sq_norm_row(&X, rows[k])
            if loss == 1:
                U[k] = C * c[k]
            else:
                U[k] = INFINITY
                Dg[k] = 0.5 / (C * c[k])
            QD[k] = sigma * xx + Dg[k]
            if alpha[k] < 0.0:
                alpha[k] = 0.0
            elif alpha[k] > U[k]:
                alpha[k] = U[k]
            if QD[k] <= 0.0:
                alpha[k] = U[k]
                continue
            index[n_total] = k
            n_total += 1
    return n_total


def dcd_local_pass(*, const int64_t[::1] indptr, const int32_t[::1] indices,
                   const double[::1] data, int64_t n_features, double bias,
                   const int64_t[::1] rows, const double[::1] t, const double[::1] c, double C,
                   int loss, const double[::1] U, const double[::1] Dg, const double[::1] QD,
                   int64_t[::1] index, int64_t n_total, double[::1] alpha,
                   const double[::1] w, double[::1] v, double sigma, double eps,
                   bint shrinking, uint64_t[::1] rng, int max_iter):
    """One CoCoA+ round of this block (see the notes above): first the block's share of
    the certificate at (w, alpha) as they come in, then up to max_iter loops of
    dcd_core on the local subproblem (stopping early when the PG spread of a loop over
    every example of the block is <= eps), moving alpha (in place) and v, which
    starts as w and ends as w + sigma dw.  U, Dg, QD, index, n_total from
    dcd_local_setup; rng holds the block's random state (advanced).

    Returns a dict: status (0: the local rule met, 1: the loop cap), n_iter, loss
    (sum over the block of C c_k loss(t_k w.x_k)), dual (sum alpha_k - 1/2 sum D_kk
    alpha_k^2: the block's separable dual terms), stopped (the exception that stopped
    the pass -- Ctrl-C, a stop request -- or None: the caller decides collectively)."""
    cdef int64_t m = rows.shape[0], k, nw = w.shape[0]
    cdef int status = CONVERGED, n_iter = 0
    cdef double loss_sum = 0.0, dual_sum = 0.0, margin, f = 0.0, spread = 0.0
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, 1, NULL)
    cdef Stop S
    if v.shape[0] != nw or nw != n_features + (1 if bias > 0 else 0):
        raise ValueError("inconsistent weight lengths")
    if not (U.shape[0] == Dg.shape[0] == QD.shape[0] == index.shape[0] == alpha.shape[0]
            == c.shape[0] == t.shape[0] == m) or not 0 <= n_total <= m or rng.shape[0] != 1:
        raise ValueError("inconsistent lengths")
    trace_arr = np.zeros((max(max_iter, 1), TRACE_COLS), dtype=np.float64)
    cdef double[:, ::1] tr = trace_arr
    stop_init(&S, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    with nogil:
        for k in range(m):
            if c[k] > 0.0:
                margin = t[k] * dot_row(&X, rows[k], &w[0])
                if margin < 1.0:
                    loss_sum += (C * c[k]) * ((1.0 - margin) if loss == 1
                                              else (1.0 - margin) * (1.0 - margin))
                dual_sum += alpha[k] - 0.5 * Dg[k] * alpha[k] * alpha[k]
        for k in range(nw):
            v[k] = w[k]
        if n_total > 0 and max_iter > 0:
            status = dcd_core(&X, &rows[0], &t[0], &U[0], &Dg[0], &QD[0], &alpha[0], &v[0],
                              &index[0], n_total, eps, shrinking, &rng[0], max_iter, &f,
                              &n_iter, &spread, &tr[0, 0], NULL, &S, sigma)
    stopped = None
    try:
        if S.stopped:
            stop_raise(&S)
    except BaseException as e:          # noqa: kept for the collective decision
        stopped = e
    return dict(status=status, n_iter=n_iter, loss=float(loss_sum), dual=float(dual_sum),
                stopped=stopped)

