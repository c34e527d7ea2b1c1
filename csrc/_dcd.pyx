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
#
# Memory.  A loop visits the examples in random order, so every per-example value it
# reads is a cache miss once the data outgrow the cache: the row's offsets (through
# rows and indptr), t, D, QD, U and alpha were seven of them per step.  The core
# first copies each active example into one 64-byte Example (its span in indices /
# data, t, D, QD, U, alpha, and its position), aligned to a cache line, and the loop
# reads that one line; it also prefetches the Example AHEAD steps ahead and the
# first entries of the row AHEAD/2 steps ahead, whose address that Example holds.
# The permutations and every floating-point operation are those of the plain loop,
# so the iterates are the same bit for bit (measured in docs/threads.md, "dcd's loop
# and its cache misses").  alpha is written back when the core returns.

from libc.stdint cimport int32_t, int64_t, uint64_t, uintptr_t
from libc.math cimport fabs, INFINITY
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
import numpy as np
from csr cimport (CSR, make_csr, dot_row, sq_norm_row, dot, axpy_row, dot_row_span,
                 axpy_row_span, LINSVM_PREFETCH)
from rng cimport shuffle
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    HANDED_OVER = 2

cdef int TRACE_COLS = 5       # loop, dual f, PG spread, seconds, active size

# One active example as the loop reads it (block comment, "Memory"): 8 x 8 bytes.
ctypedef struct Example:
    int64_t lo                # the row's span [lo, hi) in indices / data
    int64_t hi
    double t
    double Dg
    double QD
    double U
    double alpha
    int64_t k                 # its position in rows (alpha[k] on return)

cdef enum:
    AHEAD = 8                 # prefetch distance, in steps of the loop
    EXAMPLE_DOUBLES = 8       # sizeof(Example) / sizeof(double)


cdef object example_buffer(int64_t n):
    """Scratch for dcd_core's Examples of n positions (one more, for the alignment)."""
    return np.empty(EXAMPLE_DOUBLES * (n + 1), dtype=np.float64)


cdef inline Example* _examples(double[::1] buf) noexcept nogil:
    """The first 64-byte boundary in an example_buffer."""
    return <Example*>((<uintptr_t>&buf[0] + 63) & ~(<uintptr_t>63))


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
                  double* trace, void* callback, Stop* stop, double sigma,
                  Example* ex) noexcept nogil:
    """Dual coordinate descent with shrinking (see the block comment).

    index[0:n_total] holds the positions taking part (in any order on return); w =
    sum alpha t x on entry; ex: room for n_total Examples (_examples), and alpha is
    written back from them on return.  X.row_scale must be NULL (make_csr's, here).
    f holds the dual objective f(alpha) on entry and is kept up to date.
    sigma scales each step's move of w (w += sigma d t_k x_k): 1 for the serial
    solve (exact: the products are unchanged), sigma' of a CoCoA+ local pass
    (dcd_local_pass, whose QD holds sigma' ||x_k||^2 + D_kk).
    Returns CONVERGED, MAX_ITER or HANDED_OVER (the callback, called after every loop,
    returned a true value: the caller finishes the solve another way); trace gets one
    row per loop.  Each loop polls stop (csrc/interrupt.pxd): once it is stopped the
    solve returns, the caller raises.
    """
    cdef int64_t n_active = n_total, s, k, tmp, j
    cdef double Mbar = INFINITY, mbar = -INFINITY, PGmax, PGmin, G, PG, a_old, a_new, d
    cdef double t0 = _now(), spread = 0.0
    cdef int it = 0, status = MAX_ITER, handed = 0
    cdef const int32_t* ind = X.indices
    cdef const double* val = X.data
    cdef int unit = X.unit
    cdef Example* e
    for j in range(n_total):                  # pack; the loop shuffles Example numbers
        k = index[j]
        ex[j].lo = X.indptr[rows[k]]
        ex[j].hi = X.indptr[rows[k] + 1]
        ex[j].t = t[k]
        ex[j].Dg = Dg[k]
        ex[j].QD = QD[k]
        ex[j].U = U[k]
        ex[j].alpha = alpha[k]
        ex[j].k = k
        index[j] = j
    while it < max_iter:
        shuffle(rng, index, n_active)
        PGmax = -INFINITY
        PGmin = INFINITY
        s = 0
        while s < n_active:
            if s + AHEAD < n_active:
                LINSVM_PREFETCH(&ex[index[s + AHEAD]])
            if s + AHEAD // 2 < n_active:
                e = &ex[index[s + AHEAD // 2]]
                LINSVM_PREFETCH(&ind[e.lo])
                if not unit:
                    LINSVM_PREFETCH(&val[e.lo])
            e = &ex[index[s]]
            G = e.t * dot_row_span(X, e.lo, e.hi, w) - 1.0 + e.Dg * e.alpha
            PG = 0.0
            if e.alpha <= 0.0:
                if shrinking and G > Mbar:
                    # shrink: swap it to the end of the active part and revisit slot s
                    n_active -= 1
                    tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                    continue
                if G < 0.0:
                    PG = G
            elif e.alpha >= e.U:
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
                a_old = e.alpha
                a_new = a_old - G / e.QD
                if a_new < 0.0:
                    a_new = 0.0
                elif a_new > e.U:
                    a_new = e.U
                e.alpha = a_new
                d = a_new - a_old
                if d != 0.0:
                    # w += d t_k x_k;  f changes by d G + d^2 QD / 2
                    axpy_row_span(X, e.lo, e.hi, d * e.t * sigma, w)
                    f[0] += d * G + 0.5 * d * d * e.QD
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
                except BaseException as exc:
                    stop_keep(stop, exc)
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
    for j in range(n_total):                  # unpack
        alpha[ex[j].k] = ex[j].alpha
        index[j] = ex[index[j]].k
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
              bint shrinking, uint64_t seed, int max_iter, object callback, object monitor=None):
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

    Returns a dict: w (n_features + (bias > 0)), status (0 converged, 1 loop
    cap, 2 stopped by monitor), n_iter (loops), dual (the maximization dual -f(alpha)), primal (the
    primal objective at w), pg_spread (max PG - min PG recomputed at the
    returned alpha over all examples: the optimality measure of [9]),
    loop_spread (the measure of the last loop), n_sv, n_bound, trace (one row
    per loop: loop, f, PG spread, seconds, active-set size).
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
    cdef double[::1] wv = w_arr, Uv = Uarr, Dv = Darr, QDv = QDarr
    cdef double[:, ::1] tr = trace_arr
    cdef int64_t[::1] idx = idx_arr
    cdef double[::1] exv = example_buffer(m)
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, 1, NULL)
    if monitor is not None:
        callback = _with_monitor(callback, monitor, w_arr)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop S
    stop_init(&S, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    if m == 0:
        return dict(w=w_arr, status=CONVERGED, n_iter=0, dual=0.0, primal=0.0, pg_spread=0.0,
                    loop_spread=0.0, n_sv=0, n_bound=0, trace=trace_arr[:0].copy())
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
            status = dcd_core(&X, &rows[0], &t[0], &Uv[0], &Dv[0], &QDv[0], &alpha[0], &wv[0],
                              &idx[0], n_total, eps, shrinking, &rng, max_iter, &f, &n_iter,
                              &spread_loop, &tr[0, 0], cb, &S, 1.0, _examples(exv))
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
                trace=trace_arr[:n_iter].copy())


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
    cdef double[::1] exv = example_buffer(n_total)
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
                              &n_iter, &spread, &tr[0, 0], NULL, &S, sigma, _examples(exv))
    stopped = None
    try:
        if S.stopped:
            stop_raise(&S)
    except BaseException as e:          # noqa: kept for the collective decision
        stopped = e
    return dict(status=status, n_iter=n_iter, loss=float(loss_sum), dual=float(dual_sum),
                stopped=stopped)
