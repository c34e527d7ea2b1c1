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
# max PG - min PG <= eps (the entries' tol) over one loop of the active set; if examples were
# shrunk, the active set is reset to all of them and the loop continues, so the
# solve ends only on a loop over every example.
#
# Examples with c_k = 0 have no dual variable (alpha_k = 0).  An example with
# x_k = 0 under l1 (possible only without a bias feature) has QD_k = 0: its
# best alpha_k is U_k whatever w is, so it is set once and skipped.
#
# Inputs are the rows of a data view (linsvm._data.DataView); t and c are per position
# in its row list.  The core is serial (coordinate descent is sequential) and
# allocation-free; the Python entries allocate every buffer and fill the settings
# (DcdSettings) from their keywords, which carry the solver catalog's option names
# (linsvm/problem/catalog.py: C, loss, tol, shrinking, max_iter, local_epochs).
#
# Memory.  A loop visits the examples in random order, so every per-example value it
# reads is a cache miss once the data outgrow the cache: the row's offsets (through
# rows and indptr), t, D, QD, U and alpha were seven of them per step.  The core
# first copies each active example into one 64-byte Example (its span in indices /
# data, t, D, QD, U, alpha, and its position), aligned to a cache line, and the loop
# reads that one line; it also prefetches the Example AHEAD steps ahead and the
# first entries of the row AHEAD/2 steps ahead, whose address that Example holds.
# The permutations and every floating-point operation are those of the plain loop,
# so the iterates are the same bit for bit (docs/threads.md, "dcd's loop and its cache
# misses", has the profile).  alpha is written back when the core returns.

from libc.stdint cimport int64_t, uint64_t
from libc.math cimport INFINITY
from clock cimport monotonic_seconds
import numpy as np
from csr cimport CSR, dot_row, sq_norm_row, dot, axpy_row
from linsvm._data cimport DataView
from dcd_loop cimport (EXAMPLE_DOUBLES, DcdSettings, DcdWork, LoopState,
                      aligned_examples, pack_examples, unpack_examples, dcd_loop)
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    HANDED_OVER = 2

cdef int TRACE_COLS = 5       # loop, dual f, PG spread, seconds, active size

# What dcd_core reports.
ctypedef struct DcdOut:
    double f                  # the dual objective f(alpha): given on entry, kept up to date
    int n_iter                # loops run
    double spread             # the last loop's PG spread

# The certificate at the returned alpha (dcd_solve).
ctypedef struct Certificate:
    double primal             # 1/2 ||w||^2 + the losses at w
    double sum_alpha
    double sum_sq             # sum D_kk alpha_k^2
    double ww                 # ||w||^2
    double PGmax
    double PGmin
    int64_t n_sv
    int64_t n_bound


cdef object example_buffer(int64_t n):
    """Scratch for dcd_core's Examples of n positions (one more, for the alignment)."""
    return np.empty(EXAMPLE_DOUBLES * (n + 1), dtype=np.float64)


cdef inline double _projected(double G, double alpha, double U) noexcept nogil:
    """The projected gradient of the box 0 <= alpha <= U."""
    if alpha <= 0.0:
        return G if G < 0.0 else 0.0
    if alpha >= U:
        return G if G > 0.0 else 0.0
    return G


cdef inline double _loss_term(double Cc, double margin, int loss) noexcept nogil:
    """C c_k times the loss at a margin t_k w.x_k < 1: hinge (loss 1) or its square."""
    return Cc * ((1.0 - margin) if loss == 1 else (1.0 - margin) * (1.0 - margin))


cdef DcdSettings _settings(double C, str loss, double tol, bint shrinking, int max_iter,
                           double sigma) except *:
    """The settings struct of an entry's keywords (loss: the catalog's "l1" or "l2")."""
    cdef DcdSettings opt
    if loss not in ("l1", "l2"):
        raise ValueError(f"loss must be 'l1' (hinge) or 'l2' (squared hinge), not {loss!r}")
    opt.C = C
    opt.loss = 1 if loss == "l1" else 2
    opt.tol = tol
    opt.shrinking = shrinking
    opt.max_iter = max_iter
    opt.sigma = sigma
    return opt


cdef int _point_work(DcdWork* A, const double[::1] t, const double[::1] c, double[::1] alpha,
                     double[::1] U, double[::1] Dg, double[::1] QD,
                     int64_t[::1] index) except -1:
    """Point A at the entry's per-position arrays (all of one length >= 1); no scratch."""
    A.t = &t[0]
    A.c = &c[0]
    A.alpha = &alpha[0]
    A.U = &U[0]
    A.Dg = &Dg[0]
    A.QD = &QD[0]
    A.index = &index[0]
    A.n_total = 0
    A.ex = NULL
    A.trace = NULL
    return 0


cdef int64_t _set_positions(const CSR* X, const int64_t* rows, int64_t m,
                            const DcdSettings* opt, DcdWork* A) noexcept nogil:
    """U, Dg and QD of every position, alpha clipped to its box (0 where c_k = 0, U_k where
    QD_k = 0: x_k = 0 under l1), and the positions taking part listed in A.index;
    returns their number."""
    cdef int64_t k, n_total = 0
    cdef double xx
    for k in range(m):
        A.U[k] = 0.0
        A.Dg[k] = 0.0
        A.QD[k] = 0.0
        if A.c[k] <= 0.0:                   # no loss term: no dual variable
            A.alpha[k] = 0.0
            continue
        xx = sq_norm_row(X, rows[k])
        if opt.loss == 1:
            A.U[k] = opt.C * A.c[k]
        else:
            A.U[k] = INFINITY
            A.Dg[k] = 0.5 / (opt.C * A.c[k])
        A.QD[k] = opt.sigma * xx + A.Dg[k]
        if A.alpha[k] < 0.0:
            A.alpha[k] = 0.0
        elif A.alpha[k] > A.U[k]:
            A.alpha[k] = A.U[k]
        if A.QD[k] <= 0.0:                  # x_k = 0 under l1: alpha_k = U_k is optimal
            A.alpha[k] = A.U[k]
            continue
        A.index[n_total] = k
        n_total += 1
    return n_total


cdef inline void _trace_row(double* row, int it, double f, double spread, double seconds,
                            int64_t n_active) noexcept nogil:
    row[0] = it
    row[1] = f
    row[2] = spread
    row[3] = seconds
    row[4] = n_active


cdef int _call_back(void* callback, int it, double f, double spread, int64_t n_active,
                    Stop* stop) noexcept nogil:
    """callback(loop, f, spread, active size) with the GIL: 1 if it returned a true value
    (a hand-over); an exception it raises stops the solve (stop_keep)."""
    cdef int handed = 0
    with gil:
        try:
            if (<object>callback)(it, f, spread, n_active):
                handed = 1
        except BaseException as exc:
            stop_keep(stop, exc)
    return handed


cdef int dcd_core(const CSR* X, const int64_t* rows, const DcdSettings* opt, DcdWork* A,
                  double* w, uint64_t* rng, DcdOut* out, void* callback,
                  Stop* stop) noexcept nogil:
    """Dual coordinate descent with shrinking (see the block comment).

    A.index[0:A.n_total] holds the positions taking part (in any order on return); w =
    sum alpha t x on entry; A.ex: room for n_total Examples, and alpha is written back
    from them on return; A.trace gets one row per loop.  X.row_scale must be NULL (the
    view's csr).  out.f holds the dual objective f(alpha) on entry and is kept up to date.
    opt.sigma scales each step's move of w (w += sigma d t_k x_k): 1 for the serial solve
    (exact: the products are unchanged), sigma' of a CoCoA+ local pass (dcd_local_pass,
    whose QD holds sigma' ||x_k||^2 + D_kk).
    Returns CONVERGED, MAX_ITER or HANDED_OVER (the callback, called after every loop,
    returned a true value: the caller finishes the solve another way).  Each loop polls
    stop (csrc/interrupt.pxd): once it is stopped the solve returns, the caller raises.
    """
    cdef LoopState L
    cdef double t0 = monotonic_seconds()
    cdef int it = 0, status = MAX_ITER, handed = 0
    L.n_active = A.n_total
    L.Mbar = INFINITY
    L.mbar = -INFINITY
    out.spread = 0.0
    pack_examples(X, rows, A)
    while it < opt.max_iter:
        dcd_loop(X, opt, A.ex, A.index, w, &L, &out.f, rng)
        it += 1
        if L.n_active == 0:
            L.PGmax = 0.0
            L.PGmin = 0.0
        out.spread = L.PGmax - L.PGmin
        _trace_row(A.trace + (it - 1) * TRACE_COLS, it, out.f, out.spread, monotonic_seconds() - t0,
                   L.n_active)
        if callback != NULL:
            handed = _call_back(callback, it, out.f, out.spread, L.n_active, stop)
        if stop_poll(stop, L.n_active * stop.per_row):
            break
        if handed:
            status = HANDED_OVER
            break
        if out.spread <= opt.tol:
            if L.n_active == A.n_total:
                status = CONVERGED
                break
            # converged on the shrunk set: reset and check every example
            L.n_active = A.n_total
            L.Mbar = INFINITY
            L.mbar = -INFINITY
            continue
        L.Mbar = L.PGmax if L.PGmax > 0.0 else INFINITY
        L.mbar = L.PGmin if L.PGmin < 0.0 else -INFINITY
    unpack_examples(A)
    out.n_iter = it
    return status



def _with_monitor(callback, monitor, w):
    """One per-loop callback for dcd_core: the progress callback (if any), then the
    monitor on (loop, w, dual), whose answer it returns."""
    def both(it, f, spread, n_active):
        if callback is not None:
            callback(it, f, spread, n_active)
        return monitor(it, w, -f)
    return both


cdef double _start_point(const CSR* X, const int64_t* rows, int64_t m, const DcdWork* A,
                         double* w) noexcept nogil:
    """w = sum alpha t x (w zero on entry); returns f = 1/2 w.w + 1/2 sum D alpha^2 -
    sum alpha."""
    cdef int64_t k
    cdef double sum_alpha = 0.0, sum_sq = 0.0
    for k in range(m):
        if A.alpha[k] != 0.0:
            axpy_row(X, rows[k], A.alpha[k] * A.t[k], w)
            sum_alpha += A.alpha[k]
            sum_sq += A.Dg[k] * A.alpha[k] * A.alpha[k]
    return 0.5 * dot(w, w, X.n_weights) + 0.5 * sum_sq - sum_alpha


cdef void _certify(const CSR* X, const int64_t* rows, int64_t m, const DcdSettings* opt,
                   const DcdWork* A, const double* w, Certificate* Z) noexcept nogil:
    """The certificate at the returned alpha and w, from scratch: the primal, the dual's
    terms, the PG extremes over the positions taking part and the counts (m = 0: the
    objective's 1/2 ||w||^2 alone)."""
    cdef int64_t k
    cdef double margin, G, PG
    Z.primal = 0.0
    Z.sum_alpha = 0.0
    Z.sum_sq = 0.0
    Z.PGmax = -INFINITY
    Z.PGmin = INFINITY
    Z.n_sv = 0
    Z.n_bound = 0
    for k in range(m):
        if A.c[k] <= 0.0:
            continue
        margin = A.t[k] * dot_row(X, rows[k], w)
        if margin < 1.0:
            Z.primal += _loss_term(opt.C * A.c[k], margin, opt.loss)
        Z.sum_alpha += A.alpha[k]
        Z.sum_sq += A.Dg[k] * A.alpha[k] * A.alpha[k]
        if A.alpha[k] > 0.0:
            Z.n_sv += 1
            if A.alpha[k] >= A.U[k]:
                Z.n_bound += 1
        if A.QD[k] <= 0.0:
            continue
        G = margin - 1.0 + A.Dg[k] * A.alpha[k]
        PG = _projected(G, A.alpha[k], A.U[k])
        if PG > Z.PGmax:
            Z.PGmax = PG
        if PG < Z.PGmin:
            Z.PGmin = PG
    Z.ww = dot(w, w, X.n_weights)
    Z.primal += 0.5 * Z.ww


def dcd_solve(DataView data, *, const double[::1] t, const double[::1] c, double C, str loss,
              double[::1] alpha, double tol, bint shrinking, uint64_t seed, int max_iter,
              object callback, object monitor=None):
    """Solve the binary SVM dual by coordinate descent (paper [9], Algorithms 1 and 3)
    over the rows of `data` (a linsvm._data.DataView with its row list).

    Minimizes f(alpha) = 1/2 alpha'(Q + D)alpha - sum alpha over 0 <= alpha <= U
    (see the block comment: loss "l1" = hinge, U = C c, D = 0; "l2" = squared hinge,
    U = inf, D = 1/(2 C c)), starting from `alpha` (updated in place; values outside
    the box are clipped), stopping when the PG spread of a loop over every example is
    <= tol.  t = +-1 and c >= 0 finite, one entry per position, as alpha (the caller
    validates them; the view checked the rows).

    callback(loop, f, PG spread, active size) is called after every loop (progress);
    monitor(loop, w, dual), if given, too, with the current w (read it, do not keep
    it) and dual value -f: when it returns a true value the solve stops there with
    status 2 (the caller hands the problem to another solver).

    Returns a dict: w (n_weights), status (0 converged, 1 loop cap, 2 stopped by
    monitor), n_iter (loops), dual (the maximization dual -f(alpha)), primal (the
    primal objective at w), pg_spread (max PG - min PG recomputed at the
    returned alpha over all examples: the optimality measure of [9]),
    loop_spread (the measure of the last loop), n_sv, n_bound, trace (one row
    per loop: loop, f, PG spread, seconds, active-set size).
    """
    cdef DcdSettings opt = _settings(C, loss, tol, shrinking, max_iter, 1.0)
    cdef int64_t m = data.n
    cdef int status = CONVERGED
    cdef uint64_t rng = seed
    cdef DcdWork A
    cdef DcdOut out
    cdef Certificate Z
    if t.shape[0] != m or c.shape[0] != m or alpha.shape[0] != m:
        raise ValueError("t, c and alpha must have one entry per position of the view")
    w_arr = np.zeros(data.n_weights, dtype=np.float64)
    if m == 0:
        return dict(w=w_arr, status=CONVERGED, n_iter=0, dual=0.0, primal=0.0, pg_spread=0.0,
                    loop_spread=0.0, n_sv=0, n_bound=0,
                    trace=np.zeros((0, TRACE_COLS), dtype=np.float64))
    cdef const int64_t* rows = data.row_list()
    cdef CSR X = data.csr(1, NULL)
    cdef double[::1] wv = w_arr
    cdef double[::1] exv = example_buffer(m)
    trace_arr = np.zeros((max(max_iter, 1), TRACE_COLS), dtype=np.float64)
    cdef double[:, ::1] tr = trace_arr
    U, Dg, QD, index = np.zeros(m), np.zeros(m), np.zeros(m), np.empty(m, dtype=np.int64)
    _point_work(&A, t, c, alpha, U, Dg, QD, index)
    A.ex = aligned_examples(exv)
    A.trace = &tr[0, 0]
    if monitor is not None:
        callback = _with_monitor(callback, monitor, w_arr)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop S
    stop_init(&S, data.nnz, data.n_rows)
    out.n_iter = 0
    out.spread = 0.0
    with nogil:
        A.n_total = _set_positions(&X, rows, m, &opt, &A)
        out.f = _start_point(&X, rows, m, &A, &wv[0])
        if A.n_total > 0:
            status = dcd_core(&X, rows, &opt, &A, &wv[0], &rng, &out, cb, &S)
        _certify(&X, rows, m if not S.stopped else 0, &opt, &A, &wv[0], &Z)
    stop_raise(&S)                          # Ctrl-C: the work arrays go as it unwinds
    return dict(w=w_arr, status=status, n_iter=out.n_iter,
                dual=float(Z.sum_alpha - 0.5 * Z.ww - 0.5 * Z.sum_sq), primal=float(Z.primal),
                pg_spread=float(Z.PGmax - Z.PGmin) if A.n_total > 0 else 0.0,
                loop_spread=float(out.spread), n_sv=Z.n_sv, n_bound=Z.n_bound,
                trace=trace_arr[:out.n_iter].copy())


# ------------------------------------------------------------------ CoCoA+ local passes
#
# A distributed dcd (linsvm/solvers/cocoa.py) keeps the examples of one MPI rank's block
# here and w replicated.  Each round runs dcd_core on the block's CoCoA+ subproblem
# (Ma et al. 2015, adding, sigma' = number of ranks): the coordinate step of alpha_k sees
# v = w + sigma' dw (dw = the change of w this round from this block) in its gradient
# and sigma' ||x_k||^2 + D_kk as its curvature, so dcd_core runs unchanged on v with
# QD = sigma' ||x_k||^2 + D_kk and w-steps scaled by sigma'.  With one rank (sigma' = 1)
# the subproblem is the serial dual.

cdef class LocalBlock:
    """The fixed part of one block's local passes (dcd_local_setup): the view, t, c and
    alpha as given (alpha is updated in place by every pass), U (box), Dg (D_kk), QD
    (sigma ||x_k||^2 + D_kk), index[0:n_total] (the positions taking part) and the
    settings C, loss, sigma."""
    cdef readonly DataView data
    cdef readonly object t, c, alpha, U, Dg, QD, index
    cdef readonly int64_t n_total
    cdef DcdSettings opt


def dcd_local_setup(DataView data, *, const double[::1] t, const double[::1] c, double C,
                    str loss, double sigma, double[::1] alpha):
    """The LocalBlock of this rank's examples, the rows of `data`: t, c and alpha hold one
    entry per position; alpha is clipped to the box, set to 0 where c_k = 0 and to U_k
    where QD_k = 0 (x_k = 0 under l1), as dcd_solve does."""
    cdef LocalBlock B = LocalBlock()
    cdef int64_t m = data.n
    cdef DcdWork A
    if not (alpha.shape[0] == c.shape[0] == t.shape[0] == m):
        raise ValueError("t, c and alpha must have one entry per position of the view")
    B.opt = _settings(C, loss, 0.0, False, 0, sigma)
    B.data, B.t, B.c, B.alpha = data, t.base, c.base, alpha.base
    B.U, B.Dg, B.QD = np.zeros(m), np.zeros(m), np.zeros(m)
    B.index = np.empty(m, dtype=np.int64)
    B.n_total = 0
    if m == 0:
        return B
    cdef const int64_t* rows = data.row_list()
    cdef CSR X = data.csr(1, NULL)
    _point_work(&A, t, c, alpha, B.U, B.Dg, B.QD, B.index)
    with nogil:
        A.n_total = _set_positions(&X, rows, m, &B.opt, &A)
    B.n_total = A.n_total
    return B


cdef void _block_terms(const CSR* X, const int64_t* rows, int64_t m, const DcdSettings* opt,
                       const DcdWork* A, const double* w, double* loss,
                       double* dual) noexcept nogil:
    """The block's shares of the certificate at (w, alpha): loss = sum C c_k loss(t_k
    w.x_k), dual = sum alpha_k - 1/2 D_kk alpha_k^2 (over the positions with c_k > 0)."""
    cdef int64_t k
    cdef double margin
    for k in range(m):
        if A.c[k] > 0.0:
            margin = A.t[k] * dot_row(X, rows[k], w)
            if margin < 1.0:
                loss[0] += _loss_term(opt.C * A.c[k], margin, opt.loss)
            dual[0] += A.alpha[k] - 0.5 * A.Dg[k] * A.alpha[k] * A.alpha[k]


def dcd_local_pass(LocalBlock block, *, const double[::1] w, double[::1] v, double tol,
                   bint shrinking, uint64_t[::1] rng, int local_epochs):
    """One CoCoA+ round of this block (see the notes above): first the block's share of
    the certificate at (w, alpha) as they come in, then up to local_epochs loops of
    dcd_core on the local subproblem (stopping early when the PG spread of a loop over
    every example of the block is <= tol), moving block.alpha (in place) and v, which
    starts as w and ends as w + sigma dw.  rng (one uint64) holds the block's random
    state (advanced).

    Returns a dict: status (0: the local rule met, 1: the loop cap), n_iter, loss
    (sum over the block of C c_k loss(t_k w.x_k)), dual (sum alpha_k - 1/2 sum D_kk
    alpha_k^2: the block's separable dual terms), stopped (the exception that stopped
    the pass -- Ctrl-C, a stop request -- or None: the caller decides collectively)."""
    cdef DcdSettings opt = block.opt
    cdef DataView data = block.data
    cdef int64_t m = data.n, k, nw = w.shape[0], n_total = block.n_total
    cdef int status = CONVERGED
    cdef double loss_sum = 0.0, dual_sum = 0.0
    cdef DcdWork A
    cdef DcdOut out
    cdef Stop S
    if v.shape[0] != nw or nw != data.n_weights:
        raise ValueError("inconsistent weight lengths")
    if rng.shape[0] != 1:
        raise ValueError("rng must hold one state")
    opt.tol = tol
    opt.shrinking = shrinking
    opt.max_iter = local_epochs
    for k in range(nw):
        v[k] = w[k]
    if m == 0:
        return dict(status=CONVERGED, n_iter=0, loss=0.0, dual=0.0, stopped=None)
    cdef const int64_t* rows = data.row_list()
    cdef CSR X = data.csr(1, NULL)
    trace_arr = np.zeros((max(local_epochs, 1), TRACE_COLS), dtype=np.float64)
    cdef double[:, ::1] tr = trace_arr
    cdef double[::1] exv = example_buffer(n_total)
    _point_work(&A, block.t, block.c, block.alpha, block.U, block.Dg, block.QD, block.index)
    A.n_total = n_total
    A.ex = aligned_examples(exv)
    A.trace = &tr[0, 0]
    out.f = 0.0
    out.n_iter = 0
    stop_init(&S, data.nnz, data.n_rows)
    with nogil:
        _block_terms(&X, rows, m, &opt, &A, &w[0], &loss_sum, &dual_sum)
        if n_total > 0 and local_epochs > 0:
            status = dcd_core(&X, rows, &opt, &A, &v[0], &rng[0], &out, NULL, &S)
    stopped = None
    try:
        if S.stopped:
            stop_raise(&S)
    except BaseException as e:          # noqa: kept for the collective decision
        stopped = e
    return dict(status=status, n_iter=out.n_iter, loss=float(loss_sum), dual=float(dual_sum),
                stopped=stopped)
