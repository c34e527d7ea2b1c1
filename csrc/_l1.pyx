# L1-regularized binary classifiers by coordinate descent over features:
# CDN for the squared hinge (LIBLINEAR -s 5) and newGLMNET for the logistic loss (-s 6).
#
# Problem.  Over the examples k in `rows` (x_k includes the bias feature, whose weight
# is regularized like the others), with t_k = +-1 and a_k = C c_k (c_k: class weight x
# sample weight), the margin z_k = t_k w.x_k and
#
#     cdn     f(w) = ||w||_1 + sum_k a_k max(0, 1 - z_k)^2            (b_k = 1 - z_k)
#     glmnet  f(w) = ||w||_1 + sum_k a_k log(1 + exp(-z_k))
#
# L(w) denotes the loss sum.  Both methods work one feature (column) at a time, so the
# core first builds a column-major copy of the training rows (CSC: colptr, the
# position k of each entry, and its value t_k x_kj, i.e. the label folded in), once per
# solve; the bias feature is a dense column of value `bias`.
#
# Optimality (both problems).  w is optimal iff, for every j, the minimum-norm
# subgradient vanishes:
#     S_j = g_j + 1 if w_j > 0,  g_j - 1 if w_j < 0,  max(0, |g_j| - 1) sign(g_j) if w_j = 0,
# g = grad L(w).  Stopping rule (LIBLINEAR's for -s 5 and -s 6, its README):
#     ||S(w)||_1 <= eps' ||S(w^0)||_1,      eps' = eps max(min(n+, n-), 1) / n,
# the reference taken at a cold start (w^0 = 0) whatever the start, so that a warm start
# does not change the target.  As in the papers (and LIBLINEAR), cdn sums each S_j over a
# sweep at the point the sweep reached, and its reference is the sum of the first sweep
# from w = 0 (a warm start first runs that one sweep to measure it); glmnet measures
# S(w) at the iterate, and its reference is ||S(0)||_1.  A stop on a shrunk set is
# checked again on every feature before it counts.
#
# CDN (Yuan, Chang, Hsieh & Lin, JMLR 2010, Section 4.1 and the appendix on the L2 loss;
# coordinate descent with one-variable Newton directions, after Chang, Hsieh & Lin 2008).
# Each outer iteration visits the active features in a random order; for feature j,
# with b the residuals 1 - z and I = {k : b_k > 0},
#     g_j = -2 sum_{k in I} a_k b_k v_kj,   h_j = 2 sum_{k in I} a_k v_kj^2 + nu
# (v_kj = t_k x_kj; h_j is the generalized second derivative, nu = 1e-12), the Newton
# direction minimizes g_j d + h_j d^2 / 2 + |w_j + d|:
#     d = -(g_j + 1)/h_j   if g_j + 1 <= h_j w_j
#     d = -(g_j - 1)/h_j   if g_j - 1 >= h_j w_j
#     d = -w_j             otherwise,
# and the step lambda d, lambda = 1, 1/2, 1/4, ... (at most max_linesearch trials),
# is the first that meets the Armijo condition
#     L(w + lambda d e_j) - L(w) + |w_j + lambda d| - |w_j| <= sigma lambda (g_j d + |w_j + d| - |w_j|)
# with sigma = 0.01.  The loss change is first bounded by g_j z + H_j z^2 / 2 with the
# constant H_j = 2 sum_k a_k v_kj^2 (the curvature of the squared hinge is at most 2 a_k
# v_kj^2 on every row): when the bound already meets the condition the trial costs O(1);
# otherwise the exact change sum_{x_kj != 0} a_k (max(0, b_k - z v_kj)^2 - max(0, b_k)^2)
# is summed over the column, moving b to the trial step on the way (so that an accepted
# trial needs no further pass; a rejected one is undone by the next).
# Shrinking (the paper's Section 4.1.2, after the dual CD of Hsieh et al. 2008): with M
# the largest |S_j| of the previous outer iteration, a feature with w_j = 0 and
# -1 + M/n < g_j < 1 - M/n leaves the active set (M = inf after a reset: none leaves).
# Departure: the shrunk set is also reset each time its sweep's ||S||_1 has fallen
# tenfold since the last sweep over every feature, not only once it meets the stopping
# rule.  A feature shrunk early can become optimal away from 0 later; with the rule's
# reset alone, a tight solve of a 300 x 400 text problem (C = 2, -e 1e-6) spent 500
# sweeps converging on a shrunk set 2.5% above the optimum (2236 sweeps in all, 1078 with
# the tenfold resets, 985 without shrinking).
#
# newGLMNET (Yuan, Ho & Lin, JMLR 2012, Algorithms 3 and 4, Sections 3-5).  Each outer
# (Newton) iteration at w, with tau_k = 1/(1 + exp(-z_k)),
#     g = grad L(w)   = sum_k a_k (tau_k - 1) v_k,
#     H = X' D X + nu I,  D_kk = a_k tau_k (1 - tau_k),
# minimizes the quadratic model
#     q(d) = g.d + d'Hd / 2 + ||w + d||_1 - ||w||_1
# by coordinate descent over the working set J (a random order each inner sweep),
# keeping Xd_k = x_k.d (with the label folded in) so that
#     dq/dd_j = g_j + sum_k D_kk v_kj Xd_k + nu d_j,    H_jj = sum_k D_kk v_kj^2 + nu,
# and each coordinate step is the closed-form minimizer of the one-variable model (the
# three cases above, on u_j = w_j + d_j, which is stored instead of d_j so that the
# zero branch sets u_j to exactly 0), bounded to |step| <= 10 as a safeguard against
# a near-zero H_jj (not in the paper; the outer line search would otherwise need more
# halvings than it allows).  Then the line search: the first
# lambda = 1, 1/2, ... with
#     f(w + lambda d) - f(w) <= sigma lambda (g.d + ||w + d||_1 - ||w||_1),   sigma = 0.01
# (the paper's gamma = 0); each trial changes z only on rows with Xd_k != 0, one exp
# and one log1p each.  No step within max_linesearch trials ends the solve (a stall).
# Two levels of shrinking (Section 5.2): each Newton iteration computes g_j on every
# feature, and the outer level leaves out of its working set J the features with w_j = 0
# and -1 + M_out/n < g_j < 1 - M_out/n (M_out: the largest |S_j| of the previous
# Newton iteration; the stopping rule is checked on every feature); the inner level
# removes, within one Newton iteration, features
# with u_j = 0 and -1 + M_in/n < dq/dd_j < 1 - M_in/n (M_in: the largest violation of
# the previous inner sweep).  Inner stopping (Section 5.1's adaptive rule): the sum of
# the inner violations over a sweep <= eps_in ||S(0)||_1, eps_in starting at 1 and
# divided by 4 whenever an inner solve ended after a single sweep; at most
# inner_max_iter sweeps per Newton iteration.
#
# Free bias (LIBLINEAR's -R; free = the bias column, else -1).  The bias weight then has no
# |w_b| term: its subgradient is g_b itself (violation |g_b|, counted in ||S||_1 like the
# others), its step the plain Newton step -g_b/h_b (Armijo without the |.| change), and it
# is never shrunk.
#
# Certificate (both).  The Fenchel dual of min ||w||_1 + sum_k phi_k(z_k) is
#     max_alpha  -sum_k phi_k*(-alpha_k)   s.t.  ||sum_k alpha_k v_k||_inf <= 1,
#     squared hinge: -phi_k*(-alpha) = alpha - alpha^2 / (4 a_k),  alpha >= 0
#     logistic:      -phi_k*(-alpha) = a_k H(alpha / a_k),  0 <= alpha <= a_k,
#                    H(p) = -p log p - (1 - p) log(1 - p),
# and alpha_k = -phi_k'(z_k) (2 a_k max(0, b_k), resp. a_k (1 - tau_k)) is the dual
# optimum at the primal optimum, where sum_k alpha_k v_k = -g has infinity norm <= 1.
# At any w the point s alpha, s = min(1, 1 / ||g||_inf) (for the squared hinge the
# maximizer of the concave dual value s A - s^2 B, A = sum alpha, B = sum alpha^2/(4a),
# if smaller), is dual feasible; P(w) - D(s alpha) >= P(w) - P* bounds the error.
# With a free bias the dual has the equality constraint sum_k alpha_k t_k = 0 (the bias
# column is t_k bias) and no infinity-norm row for it: the side (t_k = +1 or -1) with the
# larger sum of alpha is first scaled down to the other's sum (each alpha_k stays in its
# range), then s is taken over the regularized columns as above; at the optimum g_b = 0,
# so both sums agree and nothing changes.
#
# Threads (docs/threads.md).  glmnet: each Newton iteration's gradient and Hessian
# diagonal are computed column by column on the threads (each column summed in order by
# one thread), its per-row loops split over the threads, and an inner coordinate's two
# passes over its column (the gather of dq/dd_j, the update of Xd) split by blocks of
# COL_BLOCK entries.  cdn: a coordinate's passes over its column (g_j and h_j, the
# line search's trials, the update of b) split by blocks of COL_BLOCK entries.  The
# coordinates themselves stay in order.  Every sum over rows or over a long column is taken by fixed blocks
# (ROW_BLOCK rows, COL_BLOCK entries), each summed in order, the blocks added in order:
# the same sums, hence the same model bit for bit, on any number of threads.
#
# The margins (cdn: b; glmnet: z, exp(z) and the loss of each row) are updated
# incrementally, as the papers do, and the returned objective and certificate are
# computed from them (they differ from a recomputation by rounding only).  Everything
# runs without the GIL, allocation-free (the Python entries allocate every buffer as
# numpy arrays), and polls for Ctrl-C (csrc/interrupt.pxd) every few milliseconds of
# work.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.math cimport fabs, exp, log, log1p, INFINITY, NAN
from libc.string cimport memset
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
from cython.parallel cimport prange
import numpy as np
from csr cimport CSR, make_csr, check_rows, entry_threads
from rng cimport shuffle
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    STALLED = 2         # glmnet: no step passed the line search

cdef int TRACE_COLS = 6   # iteration, objective (nan unless logged for cdn), ||S||_1 of the
                          # iteration, active features, seconds, inner sweeps / failed searches

cdef double NU = 1e-12         # added to every second derivative (both papers' nu)
cdef double SIGMA = 0.01       # Armijo constant of both line searches
cdef double STEP_BOUND = 10.0  # glmnet: bound on one coordinate step of the quadratic model
cdef double TINY_STEP = 1e-12  # cdn: a Newton step below this (not to 0) changes nothing
cdef double RESET_FACTOR = 0.1 # shrunk sets are re-checked each time ||S||_1 falls tenfold


cdef struct CSC:
    const int64_t* colptr      # n_cols + 1
    const int32_t* row         # position k of each entry
    const double* val          # t_k x_kj
    int64_t n_cols
    int64_t n_rows
    int n_threads              # threads of the column and row passes (module notes)


cdef enum:
    COL_BLOCK = 4096           # entries of a column one thread sums (module notes: threads)
    ROW_BLOCK = 8192           # rows of a per-row sum one thread sums


cdef inline int64_t _n_blocks(int64_t n, int64_t size) noexcept nogil:
    return (n + size - 1) // size


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


cdef void build_csc(const CSR* X, const int64_t* rows, int64_t n, const double* t,
                    int64_t* colptr, int32_t* row, double* val) noexcept nogil:
    """The columns of the rows X[rows] with the labels folded in: column j holds, for each
    position k (ascending) with x_kj != 0, row[p] = k and val[p] = t_k x_kj; the bias
    feature (X.bias > 0) is column X.n_features, dense.  colptr has X.n_weights + 1
    entries; row and val as many as the rows' non-zeros (+ n with a bias).

    Counting sort: count per column into colptr[j + 1], prefix sums, fill with colptr[j]
    as the cursor of column j, then shift colptr back by one place."""
    cdef int64_t k, p, r, j, q, nw = X.n_weights
    memset(colptr, 0, (nw + 1) * sizeof(int64_t))
    for k in range(n):
        r = rows[k]
        for p in range(X.indptr[r], X.indptr[r + 1]):
            colptr[X.indices[p] + 1] += 1
    if X.bias > 0:
        colptr[X.n_features + 1] = n
    for j in range(nw):
        colptr[j + 1] += colptr[j]
    for k in range(n):
        r = rows[k]
        for p in range(X.indptr[r], X.indptr[r + 1]):
            j = X.indices[p]
            q = colptr[j]
            row[q] = <int32_t>k
            val[q] = t[k] * X.data[p]
            colptr[j] = q + 1
        if X.bias > 0:
            q = colptr[X.n_features]
            row[q] = <int32_t>k
            val[q] = t[k] * X.bias
            colptr[X.n_features] = q + 1
    j = nw
    while j > 0:
        colptr[j] = colptr[j - 1]
        j -= 1
    colptr[0] = 0


cdef void margins(const CSC* A, const double* w, double* z) noexcept nogil:
    """z_k = t_k w.x_k = sum_j w_j v_kj, from the columns of the non-zero weights."""
    cdef int64_t j, p
    cdef double wj
    memset(z, 0, A.n_rows * sizeof(double))
    for j in range(A.n_cols):
        wj = w[j]
        if wj != 0.0:
            for p in range(A.colptr[j], A.colptr[j + 1]):
                z[A.row[p]] += wj * A.val[p]


cdef void _residuals(const CSC* A, const double* w, double* ba, int S) noexcept nogil:
    """ba[S k] = b_k = 1 - z_k(w) (with S = 2 the other slot, a_k, untouched)."""
    cdef int64_t j, p, k
    cdef double wj
    for k in range(A.n_rows):
        ba[S * k] = 1.0
    for j in range(A.n_cols):
        wj = w[j]
        if wj != 0.0:
            for p in range(A.colptr[j], A.colptr[j + 1]):
                ba[S * A.row[p]] -= wj * A.val[p]


cdef double violation(double g, double wj) noexcept nogil:
    """|S_j|, the minimum-norm subgradient of |w_j| + L at w_j with dL/dw_j = g."""
    if wj > 0.0:
        return fabs(g + 1.0)
    if wj < 0.0:
        return fabs(g - 1.0)
    if g + 1.0 < 0.0:
        return -(g + 1.0)
    if g - 1.0 > 0.0:
        return g - 1.0
    return 0.0


cdef inline double subgrad(double g, double wj, bint is_free) noexcept nogil:
    """|S_j|: violation(g, wj), or |g| for the free bias."""
    return fabs(g) if is_free else violation(g, wj)


cdef inline double reg_abs(double x, bint is_free) noexcept nogil:
    """|x|, the L1 term of a weight (0 for the free bias)."""
    return 0.0 if is_free else fabs(x)


cdef inline double newton_step(double g, double h, double u) noexcept nogil:
    """The minimizer d of g d + h d^2 / 2 + |u + d| (h > 0): the three cases of the block
    comment; the last one is exactly -u."""
    if g + 1.0 <= h * u:
        return -(g + 1.0) / h
    if g - 1.0 >= h * u:
        return -(g - 1.0) / h
    return -u


cdef inline double logistic_loss(double zk, double ezk) noexcept nogil:
    """log(1 + exp(-z)) from z and ez = exp(z), without overflow (ez may be 0 or inf)."""
    if zk >= 0.0:
        return log1p(1.0 / ezk)
    return -zk + log1p(ezk)


cdef double start_norm(const CSC* A, const double* a, double factor, int64_t free) noexcept nogil:
    """||S(0)||_1: at w = 0 every margin is 0, so g_j(0) = -factor sum_k a_k v_kj
    (factor 2 for the squared hinge, 1/2 for the logistic loss; free: the free column)."""
    cdef int64_t j, p
    cdef double s, total = 0.0
    for j in range(A.n_cols):
        s = 0.0
        for p in range(A.colptr[j], A.colptr[j + 1]):
            s += a[A.row[p]] * A.val[p]
        total += subgrad(-factor * s, 0.0, j == free)
    return total


# ----------------------------------------------------------------------------- CDN

cdef struct CdnOut:
    int n_iter
    int status
    int64_t n_active
    int64_t ls_failures
    double last_norm          # sum of |S_j| over the last sweep


cdef inline void _grad_span(const int32_t* row, const double* val, const double* rs, int S,
                            double a0, int64_t p0, int64_t p1, double* out) noexcept nogil:
    """Over the entries p0:p1 of one column: out = (-sum_I a_k b_k v_kj, sum_I a_k v_kj^2,
    sum_I a_k b_k^2) (I: b_k > 0), with b_k = rs[S k] and a_k = rs[S k + 1] (S = 2) or a0
    (S = 1, every cost equal).  Called with S a literal, so that the compiler makes one
    loop for each layout."""
    cdef int64_t p, k
    cdef double g = 0.0, h = 0.0, lo = 0.0, bk, v, ak, ab
    for p in range(p0, p1):
        k = row[p]
        bk = rs[S * k]
        if bk > 0.0:
            v = val[p]
            ak = rs[S * k + 1] if S == 2 else a0
            ab = ak * bk
            g -= ab * v
            lo += ab * bk
            h += ak * v * v
    out[0] = g
    out[1] = h
    out[2] = lo


cdef void col_grad(const CSC* A, int64_t p0, int64_t p1, const double* rs, int S,
                   double a0, double* g_out, double* h_out, double* loss_out,
                   double* part) noexcept nogil:
    """_grad_span's three sums over one column (entries p0:p1), by blocks of COL_BLOCK
    entries on the threads, added in order (module notes: threads; part: three doubles
    per block)."""
    cdef int64_t nb = _n_blocks(p1 - p0, COL_BLOCK), b
    cdef double out[3]
    if nb <= 1:
        if S == 1:
            _grad_span(A.row, A.val, rs, 1, a0, p0, p1, out)
        else:
            _grad_span(A.row, A.val, rs, 2, 0.0, p0, p1, out)
    else:
        for b in prange(nb, schedule="static", num_threads=A.n_threads):
            if S == 1:
                _grad_span(A.row, A.val, rs, 1, a0, p0 + b * COL_BLOCK,
                           min(p1, p0 + (b + 1) * COL_BLOCK), &part[3 * b])
            else:
                _grad_span(A.row, A.val, rs, 2, 0.0, p0 + b * COL_BLOCK,
                           min(p1, p0 + (b + 1) * COL_BLOCK), &part[3 * b])
        out[0] = 0.0
        out[1] = 0.0
        out[2] = 0.0
        for b in range(nb):
            out[0] += part[3 * b]
            out[1] += part[3 * b + 1]
            out[2] += part[3 * b + 2]
    g_out[0] = out[0]
    h_out[0] = out[1]
    loss_out[0] = out[2]


cdef inline double _trial_col_span(const int32_t* row, const double* val, double* rs, int S,
                                   double a0, double shift, int64_t p0,
                                   int64_t p1) noexcept nogil:
    """b_k -= shift v_kj over the entries p0:p1 of one column, returning the new
    sum_I a_k b_k^2 there (S a literal, as _grad_span's)."""
    cdef int64_t p, k
    cdef double lo = 0.0, bk
    for p in range(p0, p1):
        k = row[p]
        bk = rs[S * k] - shift * val[p]
        rs[S * k] = bk
        if bk > 0.0:
            lo += (rs[S * k + 1] if S == 2 else a0) * bk * bk
    return lo


cdef double col_trial(const CSC* A, int64_t p0, int64_t p1, double* rs, int S,
                      double a0, double shift, double* part) noexcept nogil:
    """_trial_col_span over one column by blocks of COL_BLOCK entries on the threads, the
    blocks' sums added in order (part: one double per block)."""
    cdef int64_t nb = _n_blocks(p1 - p0, COL_BLOCK), b
    cdef double lo = 0.0
    if nb <= 1:
        if S == 1:
            return _trial_col_span(A.row, A.val, rs, 1, a0, shift, p0, p1)
        return _trial_col_span(A.row, A.val, rs, 2, 0.0, shift, p0, p1)
    for b in prange(nb, schedule="static", num_threads=A.n_threads):
        if S == 1:
            part[b] = _trial_col_span(A.row, A.val, rs, 1, a0, shift, p0 + b * COL_BLOCK,
                                      min(p1, p0 + (b + 1) * COL_BLOCK))
        else:
            part[b] = _trial_col_span(A.row, A.val, rs, 2, 0.0, shift, p0 + b * COL_BLOCK,
                                      min(p1, p0 + (b + 1) * COL_BLOCK))
    for b in range(nb):
        lo += part[b]
    return lo


cdef inline void _shift_span(const int32_t* row, const double* val, double* rs, int S,
                             double shift, int64_t p0, int64_t p1) noexcept nogil:
    cdef int64_t p
    for p in range(p0, p1):
        rs[S * row[p]] -= shift * val[p]


cdef void col_shift(const CSC* A, int64_t p0, int64_t p1, double* rs, int S,
                    double shift) noexcept nogil:
    """rs[S k] -= shift v_kj over one column (distinct rows: any split gives the same):
    cdn's residuals b, and glmnet's Xd (S = 1, shift = -step)."""
    cdef int64_t nb = _n_blocks(p1 - p0, COL_BLOCK), b
    if nb <= 1 or A.n_threads <= 1:
        if S == 1:
            _shift_span(A.row, A.val, rs, 1, shift, p0, p1)
        else:
            _shift_span(A.row, A.val, rs, 2, shift, p0, p1)
        return
    for b in prange(nb, schedule="static", num_threads=A.n_threads):
        if S == 1:
            _shift_span(A.row, A.val, rs, 1, shift, p0 + b * COL_BLOCK,
                        min(p1, p0 + (b + 1) * COL_BLOCK))
        else:
            _shift_span(A.row, A.val, rs, 2, shift, p0 + b * COL_BLOCK,
                        min(p1, p0 + (b + 1) * COL_BLOCK))


cdef int cdn_core(const CSC* A, double* ba, int S, double a0, double* w, const double* Hub,
                  int64_t* index, int64_t n_total, double eps, double* ref, int shrinking,
                  uint64_t* rng, int max_iter, int max_ls, double* trace, CdnOut* out,
                  void* callback, Stop* stop, int64_t free, double* part) noexcept nogil:
    """CDN outer iterations (block comment) from w (free: the free bias column or -1), with ba[S k] = b_k = 1 - z_k(w) and
    a_k = ba[2k + 1] (S = 2: each row's residual and cost side by side, one cache line
    per entry of a column) or a0 (S = 1: every cost equal, the residuals alone, half
    the memory the random accesses touch).

    index[0:n_total] are the features taking part.  Returns CONVERGED (||S||_1 of a full
    sweep <= eps ref[0]) or MAX_ITER; ref[0] < 0 on entry: the first sweep's ||S||_1
    becomes ref[0] (a cold start's reference); stops early (returns MAX_ITER with
    stop.stopped set) once the Stop record says so.  trace gets one row per outer
    iteration.

    A coordinate costs two passes over its column: one for g_j, h_j (and the column's
    loss), and one that moves b by the accepted step; a trial of the exact Armijo test
    moves b by its step while it sums the new loss, so that the accepted trial's pass is
    the update (a rejected one is undone by the next trial's pass, or by one more pass
    if every trial fails).  Each pass runs by blocks on A.n_threads threads (module
    notes: threads; part: scratch of three doubles per block of the longest column)."""
    cdef int64_t n_active = n_total, s, j, p, k, tmp, p0, p1, n_ls_fail = 0
    cdef double n_ex = <double>A.n_rows
    cdef double Mold = INFINITY, Mnew, norm1, g, h, v, bk, ab, ak, d, delta, lam, zstep, shift
    cdef double applied, loss_old, loss_new, wj, wnew, reg_change, obj, t0 = _now()
    cdef double reset_norm = INFINITY
    cdef int it = 0, status = MAX_ITER, m, accepted
    cdef bint is_free
    while it < max_iter:
        shuffle(rng, index, n_active)
        Mnew = 0.0
        norm1 = 0.0
        s = 0
        while s < n_active:
            j = index[s]
            p0 = A.colptr[j]
            p1 = A.colptr[j + 1]
            # g_j = -2 sum_I a_k b_k v_kj,  h_j = 2 sum_I a_k v_kj^2 + nu;  the column's loss
            col_grad(A, p0, p1, ba, S, a0, &g, &h, &loss_old, part)
            g *= 2.0
            h = 2.0 * h + NU
            wj = w[j]
            is_free = j == free
            if (wj == 0.0 and shrinking and not is_free and g + 1.0 > Mold / n_ex
                    and g - 1.0 < -Mold / n_ex):
                # shrink: swap j to the end of the active part and revisit slot s
                n_active -= 1
                tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                continue
            v = subgrad(g, wj, is_free)
            if v > Mnew:
                Mnew = v
            norm1 += v
            s += 1
            if stop_poll(stop, p1 - p0 + 1):
                break
            d = -g / h if is_free else newton_step(g, h, wj)
            if fabs(d) < TINY_STEP and wj + d != 0.0:
                continue
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
                if g * zstep + 0.5 * Hub[j] * zstep * zstep + reg_change <= SIGMA * lam * delta:
                    accepted = 1
                    break
                # the exact change, moving b to this trial on the way
                shift = zstep - applied
                loss_new = col_trial(A, p0, p1, ba, S, a0, shift, part)
                applied = zstep
                if loss_new - loss_old + reg_change <= SIGMA * lam * delta:
                    accepted = 2
                    break
                lam *= 0.5
            if accepted:
                w[j] = wnew
            else:
                n_ls_fail += 1
                zstep = 0.0         # undo the last trial below
            if accepted != 2 and zstep != applied:
                col_shift(A, p0, p1, ba, S, zstep - applied)
        if stop.stopped:
            break
        it += 1
        obj = NAN
        if callback != NULL:
            obj = 0.0
            for k in range(A.n_rows):
                if ba[S * k] > 0.0:
                    obj += (ba[2 * k + 1] if S == 2 else a0) * ba[S * k] * ba[S * k]
            for j in range(A.n_cols):
                obj += reg_abs(w[j], j == free)
        trace[(it - 1) * TRACE_COLS + 0] = it
        trace[(it - 1) * TRACE_COLS + 1] = obj
        trace[(it - 1) * TRACE_COLS + 2] = norm1
        trace[(it - 1) * TRACE_COLS + 3] = n_active
        trace[(it - 1) * TRACE_COLS + 4] = _now() - t0
        trace[(it - 1) * TRACE_COLS + 5] = n_ls_fail
        if callback != NULL:
            with gil:
                try:
                    (<object>callback)(it, obj, norm1, n_active)
                except BaseException as e:
                    stop_keep(stop, e)
        out.last_norm = norm1
        if stop.stopped:
            break
        if ref[0] < 0.0:
            ref[0] = norm1
        if norm1 <= eps * ref[0] or (n_active < n_total and norm1 <= RESET_FACTOR * reset_norm):
            if norm1 <= eps * ref[0] and n_active == n_total:
                status = CONVERGED
                break
            # converged on the shrunk set (or a tenth of the way there): check every
            # feature again
            n_active = n_total
            Mold = INFINITY
            reset_norm = norm1
            continue
        if n_active == n_total:
            reset_norm = norm1
        Mold = Mnew
    out.n_iter = it
    out.status = status
    out.n_active = n_active
    out.ls_failures = n_ls_fail
    return status


# -------------------------------------------------------------------------- newGLMNET

cdef struct GlmOut:
    int n_iter
    int status
    int64_t n_active
    int64_t inner_total        # inner sweeps over all Newton iterations
    int64_t ls_trials          # line-search trials over all Newton iterations
    double last_norm           # ||S(w)||_1 at the last iterate checked
    double inner_eps
    double grad_inf            # ||grad L||_inf at the last iterate checked
    int grad_at_w              # 1: that iterate is the returned w


cdef void grad_and_curvature(const CSC* A, const int64_t* index, int64_t n,
                             const double* gk, const double* Dk, double* grad,
                             double* hdiag) noexcept nogil:
    """grad[j] = sum_k gk_k v_kj and hdiag[j] = sum_k D_kk v_kj^2 (without nu) for every
    column j = index[s], s < n: each column summed in order by one thread."""
    cdef const int32_t* row = A.row
    cdef const double* val = A.val
    cdef int64_t s, j, p, k
    cdef double g, h, v
    for s in prange(n, schedule="dynamic", chunksize=16, num_threads=A.n_threads):
        j = index[s]
        g = 0.0
        h = 0.0
        for p in range(A.colptr[j], A.colptr[j + 1]):
            k = row[p]
            v = val[p]
            g = g + gk[k] * v
            h = h + Dk[k] * v * v
        grad[j] = g
        hdiag[j] = h


cdef inline double _model_span(const int32_t* row, const double* val, const double* Dk,
                               const double* Xd, int64_t p0, int64_t p1) noexcept nogil:
    cdef int64_t p, k
    cdef double g = 0.0
    for p in range(p0, p1):
        k = row[p]
        g += Dk[k] * val[p] * Xd[k]
    return g


cdef double col_model_grad(const CSC* A, int64_t p0, int64_t p1, const double* Dk,
                           const double* Xd, double* part) noexcept nogil:
    """sum_k D_kk v_kj Xd_k over the column's entries p0:p1, by blocks of COL_BLOCK
    entries (module notes: threads; part holds one double per block)."""
    cdef int64_t nb = _n_blocks(p1 - p0, COL_BLOCK), b
    cdef double g = 0.0
    if nb <= 1:
        return _model_span(A.row, A.val, Dk, Xd, p0, p1)
    for b in prange(nb, schedule="static", num_threads=A.n_threads):
        part[b] = _model_span(A.row, A.val, Dk, Xd, p0 + b * COL_BLOCK,
                              min(p1, p0 + (b + 1) * COL_BLOCK))
    for b in range(nb):
        g += part[b]
    return g


cdef inline double _trial_span(const double* a, const double* z, const double* Xd,
                               const double* lk, double lam, double* ez_new, double* lk_new,
                               int64_t k0, int64_t k1) noexcept nogil:
    cdef int64_t k
    cdef double dloss = 0.0, zn, ezn
    for k in range(k0, k1):
        if Xd[k] != 0.0:
            zn = z[k] + lam * Xd[k]
            ezn = exp(zn)
            ez_new[k] = ezn
            lk_new[k] = logistic_loss(zn, ezn)
            dloss += a[k] * (lk_new[k] - lk[k])
    return dloss


cdef double trial_loss_change(int64_t n, const double* a, const double* z, const double* Xd,
                              const double* lk, double lam, double* ez_new, double* lk_new,
                              double* part, int T) noexcept nogil:
    """sum_k a_k (loss(z_k + lam Xd_k) - loss(z_k)) over the rows with Xd_k != 0, their
    new exp(z) and loss in ez_new, lk_new: by blocks of ROW_BLOCK rows (module notes)."""
    cdef int64_t nb = _n_blocks(n, ROW_BLOCK), b
    cdef double dloss = 0.0
    if nb <= 1:
        return _trial_span(a, z, Xd, lk, lam, ez_new, lk_new, 0, n)
    for b in prange(nb, schedule="static", num_threads=T):
        part[b] = _trial_span(a, z, Xd, lk, lam, ez_new, lk_new, b * ROW_BLOCK,
                              min(n, (b + 1) * ROW_BLOCK))
    for b in range(nb):
        dloss += part[b]
    return dloss


cdef int glmnet_core(const CSC* A, const double* a, double* w, double* u, double* z,
                     double* ez, double* lk, double* Dk, double* gk, double* Xd,
                     double* ez_new, double* lk_new, double* grad, double* hdiag,
                     int64_t* index, int64_t* qindex, int64_t n_total, double eps_abs,
                     double ref, int shrinking, uint64_t* rng, int max_iter, int inner_max,
                     int max_ls, double* f, double* trace, GlmOut* out, void* callback,
                     Stop* stop, int64_t free, double* part) noexcept nogil:
    """newGLMNET Newton iterations (block comment) from w (free: the free bias column or -1) with z = z(w), ez = exp(z),
    lk = log(1 + exp(-z)) per row and f = f(w).  Work space per row: gk (the loss
    derivative a_k (tau_k - 1)), Dk (D_kk) and Xd.

    ref = ||S(0)||_1 scales the inner tolerance.  Returns CONVERGED, MAX_ITER or STALLED
    (no step passed the line search); stops early (MAX_ITER, stop.stopped set) once the
    Stop record says so.  trace gets one row per Newton iteration.  part: scratch of
    one double per block of a column or of the rows (module notes: threads)."""
    cdef int64_t n = A.n_rows, n_active = n_total, q_active, s, j, k, tmp, p0, p1
    cdef int64_t inner_total = 0, ls_total = 0, nnz_active
    cdef double n_ex = <double>n
    cdef double Mold = INFINITY, Mnew, norm1, g, h, v, pk, tk, ezk, wj, uj, step, gmax
    cdef double qMold, qMnew, qnorm1, inner_eps = 1.0, delta, lam, reg_change, dloss
    cdef double t0 = _now()
    cdef int it = 0, status = MAX_ITER, it_in, m, accepted
    cdef bint is_free
    while it < max_iter:
        # --- per row: the loss derivative a_k (tau_k - 1) and D_kk = a_k tau_k (1 - tau_k)
        for k in prange(n, schedule="static", num_threads=A.n_threads):
            ezk = ez[k]
            pk = 1.0 / (1.0 + ezk)              # 1 - tau_k
            tk = ezk * pk if ezk < 1e300 else 1.0
            gk[k] = -a[k] * pk
            Dk[k] = a[k] * tk * pk
        # --- gradient and Hessian diagonal on every feature (on the threads); outer
        # shrinking (this iteration's working set J: index[0:n_active])
        grad_and_curvature(A, index, n_total, gk, Dk, grad, hdiag)
        Mnew = 0.0
        norm1 = 0.0
        gmax = 0.0
        nnz_active = 0
        n_active = n_total
        s = 0
        while s < n_active:
            j = index[s]
            g = grad[j]
            h = hdiag[j]
            if fabs(g) > gmax:
                gmax = fabs(g)
            wj = w[j]
            is_free = j == free
            if (wj == 0.0 and shrinking and not is_free and g + 1.0 > Mold / n_ex
                    and g - 1.0 < -Mold / n_ex):
                n_active -= 1
                tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                continue
            v = subgrad(g, wj, is_free)
            if v > Mnew:
                Mnew = v
            norm1 += v
            hdiag[j] = h + NU
            nnz_active += A.colptr[j + 1] - A.colptr[j]
            s += 1
            if stop_poll(stop, A.colptr[j + 1] - A.colptr[j] + 1):
                break
        if stop.stopped or stop_poll(stop, n):
            break
        out.last_norm = norm1
        out.grad_inf = gmax
        out.grad_at_w = 1
        if norm1 <= eps_abs:
            status = CONVERGED
            break
        Mold = Mnew
        # --- inner coordinate descent on q(d) over the active features; u = w + d
        for s in range(n_active):
            j = index[s]
            u[j] = w[j]
            qindex[s] = j
        memset(Xd, 0, n * sizeof(double))
        q_active = n_active
        qMold = INFINITY
        it_in = 0
        while it_in < inner_max:
            shuffle(rng, qindex, q_active)
            qMnew = 0.0
            qnorm1 = 0.0
            s = 0
            while s < q_active:
                j = qindex[s]
                p0 = A.colptr[j]
                p1 = A.colptr[j + 1]
                # dq/dd_j = g_j + sum_k D_kk v_kj Xd_k + nu d_j
                g = col_model_grad(A, p0, p1, Dk, Xd, part)
                uj = u[j]
                g += grad[j] + NU * (uj - w[j])
                h = hdiag[j]
                is_free = j == free
                if (uj == 0.0 and shrinking and not is_free and g + 1.0 > qMold / n_ex
                        and g - 1.0 < -qMold / n_ex):
                    q_active -= 1
                    tmp = qindex[s]; qindex[s] = qindex[q_active]; qindex[q_active] = tmp
                    continue
                v = subgrad(g, uj, is_free)
                if v > qMnew:
                    qMnew = v
                qnorm1 += v
                s += 1
                step = -g / h if is_free else newton_step(g, h, uj)
                if step == -uj and not is_free:
                    u[j] = 0.0
                else:
                    if step > STEP_BOUND:
                        step = STEP_BOUND
                    elif step < -STEP_BOUND:
                        step = -STEP_BOUND
                    if step == 0.0:
                        continue
                    u[j] = uj + step
                step = u[j] - uj
                col_shift(A, p0, p1, Xd, 1, -step)     # Xd_k += step v_kj
                if stop_poll(stop, p1 - p0 + 1):
                    break
            it_in += 1
            if stop.stopped:
                break
            if qnorm1 <= inner_eps * ref:
                if q_active == n_active:
                    break
                q_active = n_active
                qMold = INFINITY
                continue
            qMold = qMnew
        inner_total += it_in
        if stop.stopped:
            break
        if it_in <= 1:
            inner_eps *= 0.25
        # --- line search on f(w + lam d)
        delta = 0.0
        for s in range(n_active):
            j = index[s]
            delta += grad[j] * (u[j] - w[j]) + reg_abs(u[j], j == free) - reg_abs(w[j], j == free)
        lam = 1.0
        accepted = 0
        for m in range(max_ls):
            ls_total += 1
            reg_change = 0.0
            for s in range(n_active):
                j = index[s]
                if j == free:
                    continue
                if lam == 1.0:
                    reg_change += fabs(u[j]) - fabs(w[j])
                else:
                    reg_change += fabs(w[j] + lam * (u[j] - w[j])) - fabs(w[j])
            dloss = trial_loss_change(n, a, z, Xd, lk, lam, ez_new, lk_new, part, A.n_threads)
            if reg_change + dloss <= SIGMA * lam * delta:
                accepted = 1
                break
            lam *= 0.5
            if stop_poll(stop, n):
                break
        if stop.stopped:
            break
        if not accepted:
            status = STALLED
            break
        for s in range(n_active):
            j = index[s]
            if lam == 1.0:
                w[j] = u[j]
            else:
                w[j] = w[j] + lam * (u[j] - w[j])
        for k in prange(n, schedule="static", num_threads=A.n_threads):
            if Xd[k] != 0.0:
                z[k] = z[k] + lam * Xd[k]
                ez[k] = ez_new[k]
                lk[k] = lk_new[k]
        f[0] += reg_change + dloss
        out.grad_at_w = 0
        it += 1
        trace[(it - 1) * TRACE_COLS + 0] = it
        trace[(it - 1) * TRACE_COLS + 1] = f[0]
        trace[(it - 1) * TRACE_COLS + 2] = norm1
        trace[(it - 1) * TRACE_COLS + 3] = n_active
        trace[(it - 1) * TRACE_COLS + 4] = _now() - t0
        trace[(it - 1) * TRACE_COLS + 5] = it_in
        if callback != NULL:
            with gil:
                try:
                    (<object>callback)(it, f[0], norm1, n_active, it_in, lam)
                except BaseException as e:
                    stop_keep(stop, e)
            if stop.stopped:
                break
    out.n_iter = it
    out.status = status
    out.n_active = n_active
    out.inner_total = inner_total
    out.ls_trials = ls_total
    out.inner_eps = inner_eps
    return status


# ------------------------------------------------------------------ certificate

cdef void certificate(const CSC* A, const double* a, const double* w, const double* z,
                      const double* ez, double* alpha, int loss, double gknown, int64_t free,
                      double* primal, double* dual, double* gmax) noexcept nogil:
    """Primal f(w) and dual value of the scaled point s alpha (block comment), from the
    margins z the solve kept up to date (and, for the logistic loss, ez = exp(z), or NULL);
    gmax = ||grad L(w)||_inf over the regularized columns, computed by one pass over the
    columns unless gknown >= 0 is it already (never with a free bias, whose balancing
    changes alpha).  loss 2: squared hinge, 3: logistic.  free: the free bias column or -1.
    alpha (n values) is work space."""
    cdef int64_t n = A.n_rows, j, k, p
    cdef double P = 0.0, Asum = 0.0, B = 0.0, s, gm = 0.0, gj, xi, ezk, pk, q, D = 0.0
    cdef double side[2]
    for j in range(A.n_cols):
        P += reg_abs(w[j], j == free)
    for k in range(n):
        if a[k] <= 0.0:
            alpha[k] = 0.0
            continue
        if loss == 2:
            xi = 1.0 - z[k]
            if xi > 0.0:
                P += a[k] * xi * xi
                alpha[k] = 2.0 * a[k] * xi
            else:
                alpha[k] = 0.0
        else:
            ezk = ez[k] if ez != NULL else exp(z[k])
            P += a[k] * logistic_loss(z[k], ezk)
            alpha[k] = a[k] / (1.0 + ezk)
    if free >= 0:
        # the equality constraint: scale the side with the larger sum down to the other's
        # (the free column is dense: one entry per row, val = t_k bias)
        side[0] = 0.0
        side[1] = 0.0
        for p in range(A.colptr[free], A.colptr[free + 1]):
            side[1 if A.val[p] > 0.0 else 0] += alpha[A.row[p]]
        for p in range(A.colptr[free], A.colptr[free + 1]):
            k = A.row[p]
            if A.val[p] > 0.0 and side[1] > side[0]:
                alpha[k] *= side[0] / side[1]
            elif A.val[p] < 0.0 and side[0] > side[1]:
                alpha[k] *= side[1] / side[0]
        gknown = -1.0
    for k in range(n):
        if loss == 2 and a[k] > 0.0:
            Asum += alpha[k]
            B += alpha[k] * alpha[k] / (4.0 * a[k])
    # ||sum_k alpha_k v_k||_inf = ||grad L(w)||_inf over the regularized columns
    for j in range(A.n_cols if gknown < 0.0 else 0):
        if j == free:
            continue
        gj = 0.0
        for p in range(A.colptr[j], A.colptr[j + 1]):
            gj += alpha[A.row[p]] * A.val[p]
        if fabs(gj) > gm:
            gm = fabs(gj)
    if gknown >= 0.0:
        gm = gknown
    s = 1.0 if gm <= 1.0 else 1.0 / gm
    if loss == 2:
        if B > 0.0 and Asum / (2.0 * B) < s:
            s = Asum / (2.0 * B)
        D = s * Asum - s * s * B
    else:
        for k in range(n):
            if a[k] <= 0.0:
                continue
            pk = s * alpha[k] / a[k]
            q = 0.0
            if pk > 0.0:
                q -= pk * log(pk)
            if pk < 1.0:
                q -= (1.0 - pk) * log1p(-pk)
            D += a[k] * q
    primal[0] = P
    dual[0] = D
    gmax[0] = gm


# ------------------------------------------------------------------ Python entries

def request_stop():
    """Make every solve of this module running now, in any thread, stop and raise
    KeyboardInterrupt (csrc/interrupt.pxd; linsvm.interrupt.stop_running_solves)."""
    stop_request()


def column_copy_nnz(const int64_t[::1] indptr, const int64_t[::1] rows, double bias):
    """Entries of the column copy of X[rows] (its non-zeros, + len(rows) with a bias)."""
    cdef int64_t k, total = 0, m = rows.shape[0], n_rows = indptr.shape[0] - 1
    check_rows(rows, n_rows)
    for k in range(m):
        total += indptr[rows[k] + 1] - indptr[rows[k]]
    return total + (m if bias > 0 else 0)


cdef double _nothing_to_fit(a, int64_t m, w, int64_t n_features, int64_t free, double loss0):
    """f(w) where no coordinate can move: no rows (||w||_1 of the regularized weights), or
    no weights (every margin 0: sum_k a_k loss(0), loss(0) = loss0, 1 for the squared
    hinge, log 2 for the logistic loss; the dual then equals it, the feasible set being
    one point)."""
    if m == 0:
        return float(np.abs(w[:n_features] if free >= 0 else w).sum())
    return float(np.sum(a[:m])) * loss0


cdef dict _setup(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                 int64_t n_features, double bias, const int64_t[::1] rows,
                 const double[::1] t, const double[::1] c, double C, const double[::1] w0):
    """Checks, the column copy, a_k = C c_k, and the start weights (numpy arrays)."""
    cdef int64_t m = rows.shape[0], k, nnz, nw = n_features + (1 if bias > 0 else 0)
    if m > 2147483647:
        raise ValueError("the L1 solvers index at most 2^31 - 1 examples")
    if t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    if w0 is not None and w0.shape[0] != nw:
        raise ValueError(f"a start of {w0.shape[0]} weights for {nw}")
    nnz = column_copy_nnz(indptr, rows, bias)
    colptr = np.empty(nw + 1, dtype=np.int64)
    row = np.empty(max(nnz, 1), dtype=np.int32)
    val = np.empty(max(nnz, 1), dtype=np.float64)
    a = np.empty(max(m, 1), dtype=np.float64)
    w = np.zeros(nw, dtype=np.float64) if w0 is None else np.array(w0, dtype=np.float64)
    cdef int64_t[::1] cp = colptr
    cdef int32_t[::1] rw = row
    cdef double[::1] vl = val, av = a
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, 1, NULL)
    with nogil:
        for k in range(m):
            av[k] = C * c[k] if c[k] > 0.0 else 0.0
        if m > 0:
            build_csc(&X, &rows[0], m, &t[0], &cp[0], &rw[0], &vl[0])
    return dict(colptr=colptr, row=row, val=val, a=a, w=w)


cdef CSC _csc_view(dict S, int64_t n):
    cdef int64_t[::1] cp = S["colptr"]
    cdef int32_t[::1] rw = S["row"]
    cdef double[::1] vl = S["val"]
    cdef CSC A
    A.colptr = &cp[0]
    A.row = &rw[0]
    A.val = &vl[0]
    A.n_cols = cp.shape[0] - 1
    A.n_rows = n
    A.n_threads = 1
    return A


cdef int64_t _active_features(const CSC* A, double* w, int64_t* index) noexcept nogil:
    """The features taking part, in index[0:n]: every non-empty column; a weight on an
    empty column (possible in a warm start) is set to 0, its optimum."""
    cdef int64_t j, n_total = 0
    for j in range(A.n_cols):
        if A.colptr[j + 1] > A.colptr[j]:
            index[n_total] = j
            n_total += 1
        else:
            w[j] = 0.0
    return n_total


def cdn_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] t,
              const double[::1] c, double C, object start, double eps, bint shrinking,
              uint64_t seed, int max_iter, int max_linesearch, object callback,
              bint regularize_bias=True, int n_threads=1):
    """Minimize ||w||_1 + C sum_k c_k max(0, 1 - t_k w.x_k)^2 by CDN (block comment);
    regularize_bias False (bias > 0): the bias weight leaves ||w||_1 (a free intercept).
    n_threads: threads of the passes over long columns (0: every OpenMP thread); the
    result is the same for every count (block comment).

    Buffers must be validated by the caller: indices in [0, n_features), rows in
    [0, n_rows) (checked here too), t = +-1, c >= 0 finite, one t and c per row.  start:
    None (w = 0) or n_features + (bias > 0) weights.  eps is the relative rule's
    eps' (the caller scales -e by max(min(n+, n-), 1)/n): the solve stops once a full
    sweep's ||S||_1 <= eps' ref, ref the ||S||_1 of a cold start's first sweep.

    Returns a dict: w, status (0 converged, 1 iteration cap), n_iter, primal (f(w)),
    dual (the dual value of the scaled point), grad_inf (||grad L(w)||_inf), ref
    (the reference ||S||_1), last_norm (||S||_1 of the last sweep), n_active, ls_failures
    (coordinates whose line search found no step), trace (per outer iteration:
    iteration, objective (nan when not logged), ||S||_1, active features, seconds,
    failed line searches so far)."""
    cdef int64_t m = rows.shape[0], k, j, p, n_total, nw
    cdef int64_t free = -1 if (regularize_bias or bias <= 0) else n_features
    cdef double ref = 0.0, primal = 0.0, dual = 0.0, gmax = 0.0
    cdef uint64_t rng = seed, rng0
    cdef double a0 = 0.0
    cdef int S2 = 2
    cdef CdnOut out
    out.n_iter = 0
    out.status = CONVERGED
    out.n_active = 0
    out.ls_failures = 0
    out.last_norm = 0.0
    if max_iter < 0 or max_linesearch < 1:
        raise ValueError("max_iter must be >= 0 and max_linesearch >= 1")
    S = _setup(indptr, indices, data, n_features, bias, rows, t, c, C,
               None if start is None else np.ascontiguousarray(start, dtype=np.float64))
    w_arr = S["w"]
    nw = w_arr.shape[0]
    ba_arr = np.empty(2 * max(m, 1), dtype=np.float64)
    cert_arr = np.empty(2 * max(m, 1), dtype=np.float64)       # z and alpha at the end
    cdef bint warm = start is not None and bool(np.any(w_arr != 0))
    w0_arr = w_arr.copy() if warm else np.empty(1)
    hub_arr = np.empty(max(nw, 1), dtype=np.float64)
    idx_arr = np.empty(max(nw, 1), dtype=np.int64)
    trace_arr = np.zeros((max(max_iter, 1), TRACE_COLS), dtype=np.float64)
    part_arr = np.empty(3 * _n_blocks(m, COL_BLOCK) + 3, dtype=np.float64)
    cdef double[::1] wv = w_arr, bav = ba_arr, hv = hub_arr, av = S["a"], w0v = w0_arr
    cdef double[::1] cv = cert_arr, pv = part_arr
    cdef int64_t[::1] iv = idx_arr
    cdef double[:, ::1] tr = trace_arr
    cdef CSC A = _csc_view(S, m)
    A.n_threads = entry_threads(n_threads)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop st
    stop_init(&st, A.colptr[A.n_cols], A.n_cols)
    if m == 0 or nw == 0:
        primal = _nothing_to_fit(S["a"], m, w_arr, n_features, free, 1.0)
        return dict(w=w_arr, status=CONVERGED, n_iter=0, primal=primal,
                    dual=primal if nw == 0 else 0.0, grad_inf=0.0, ref=0.0, last_norm=0.0,
                    n_active=0, ls_failures=0, trace=trace_arr[:0].copy())
    with nogil:
        n_total = _active_features(&A, &wv[0], &iv[0])
        # H_j = 2 sum_k a_k v_kj^2 (+ nu): the curvature bound of the cheap Armijo test
        for j in range(nw):
            hv[j] = NU
            for p in range(A.colptr[j], A.colptr[j + 1]):
                hv[j] += 2.0 * av[A.row[p]] * A.val[p] * A.val[p]
        a0 = av[0]
        S2 = 1
        for k in range(m):
            if av[k] != a0:
                S2 = 2
        if S2 == 2:
            for k in range(m):
                bav[2 * k + 1] = av[k]
        ref = -1.0
        if warm and n_total > 0 and max_iter > 0:
            # the reference of the stopping rule is a cold start's first sweep: one sweep
            # from w = 0 (the same seed, so a cold start's first sweep is this one)
            rng0 = rng
            for j in range(nw):
                w0v[j] = wv[j]
                wv[j] = 0.0
            for k in range(m):
                bav[S2 * k] = 1.0
            cdn_core(&A, &bav[0], S2, a0, &wv[0], &hv[0], &iv[0], n_total, 0.0, &ref, shrinking,
                     &rng0, 1, max_linesearch, &tr[0, 0], &out, NULL, &st, free, &pv[0])
            for j in range(nw):
                wv[j] = w0v[j]
        # b = 1 - z(w)
        _residuals(&A, &wv[0], &bav[0], S2)
        if n_total > 0 and max_iter > 0 and not st.stopped:
            cdn_core(&A, &bav[0], S2, a0, &wv[0], &hv[0], &iv[0], n_total, eps, &ref, shrinking,
                     &rng, max_iter, max_linesearch, &tr[0, 0], &out, cb, &st, free, &pv[0])
        if not st.stopped:
            # the margins z = 1 - b the solve kept, and alpha, in the certificate's space
            for k in range(m):
                cv[k] = 1.0 - bav[S2 * k]
            certificate(&A, &av[0], &wv[0], &cv[0], NULL, &cv[m], 2, -1.0, free, &primal, &dual,
                        &gmax)
    stop_raise(&st)
    if max_iter == 0:
        out.status = MAX_ITER
    return dict(w=w_arr, status=out.status, n_iter=out.n_iter, primal=float(primal),
                dual=float(dual), grad_inf=float(gmax), ref=float(max(ref, 0.0)),
                last_norm=float(out.last_norm), n_active=int(out.n_active),
                ls_failures=int(out.ls_failures), trace=trace_arr[:out.n_iter].copy())


def glmnet_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices,
                 const double[::1] data, int64_t n_features, double bias,
                 const int64_t[::1] rows, const double[::1] t, const double[::1] c, double C,
                 object start, double eps, bint shrinking, uint64_t seed, int max_iter,
                 int inner_max_iter, int max_linesearch, object callback,
                 bint regularize_bias=True, int n_threads=1):
    """Minimize ||w||_1 + C sum_k c_k log(1 + exp(-t_k w.x_k)) by newGLMNET (block comment);
    regularize_bias as cdn_solve's.  n_threads: threads of the column and row passes
    (0: every OpenMP thread); the result is the same for every count (block comment).

    Buffers, start and eps as cdn_solve's, the reference ||S(0)||_1.  max_iter caps the Newton iterations,
    inner_max_iter the sweeps of each inner solve, max_linesearch the trials of each
    line search.

    Returns a dict as cdn_solve's (status 2: stalled, no step passed the line search),
    with inner_total (inner sweeps, all Newton iterations), ls_trials and inner_eps (the
    adaptive inner tolerance at the end), and a trace whose last column is the inner
    sweeps of the iteration (objective always filled)."""
    cdef int64_t m = rows.shape[0], k, n_total, nw
    cdef int64_t free = -1 if (regularize_bias or bias <= 0) else n_features
    cdef double ref = 0.0, primal = 0.0, dual = 0.0, gmax = 0.0, f = 0.0
    cdef uint64_t rng = seed
    cdef GlmOut out
    out.n_iter = 0
    out.status = CONVERGED
    out.n_active = 0
    out.inner_total = 0
    out.ls_trials = 0
    out.last_norm = 0.0
    out.inner_eps = 1.0
    out.grad_inf = 0.0
    out.grad_at_w = 0
    if max_iter < 0 or inner_max_iter < 1 or max_linesearch < 1:
        raise ValueError("max_iter must be >= 0, inner_max_iter and max_linesearch >= 1")
    S = _setup(indptr, indices, data, n_features, bias, rows, t, c, C,
               None if start is None else np.ascontiguousarray(start, dtype=np.float64))
    w_arr = S["w"]
    nw = w_arr.shape[0]
    per_row = np.empty((9, max(m, 1)), dtype=np.float64)   # z ez lk D g Xd ez_new lk_new alpha
    per_weight = np.empty((3, max(nw, 1)), dtype=np.float64)      # u grad hdiag
    idx_arr = np.empty((2, max(nw, 1)), dtype=np.int64)
    trace_arr = np.zeros((max(max_iter, 1), TRACE_COLS), dtype=np.float64)
    part_arr = np.empty(_n_blocks(m, COL_BLOCK) + 1, dtype=np.float64)  # >= the row blocks
    cdef double[::1] wv = w_arr, av = S["a"], pv = part_arr
    cdef double[:, ::1] R = per_row, W = per_weight, tr = trace_arr
    cdef int64_t[:, ::1] I = idx_arr
    cdef CSC A = _csc_view(S, m)
    A.n_threads = entry_threads(n_threads)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop st
    stop_init(&st, A.colptr[A.n_cols], A.n_cols)
    if m == 0 or nw == 0:
        primal = _nothing_to_fit(S["a"], m, w_arr, n_features, free, log(2.0))
        return dict(w=w_arr, status=CONVERGED, n_iter=0, primal=primal,
                    dual=primal if nw == 0 else 0.0, grad_inf=0.0, ref=0.0, last_norm=0.0,
                    n_active=0,
                    inner_total=0, ls_trials=0, inner_eps=1.0, trace=trace_arr[:0].copy())
    with nogil:
        n_total = _active_features(&A, &wv[0], &I[0, 0])
        ref = start_norm(&A, &av[0], 0.5, free)
        margins(&A, &wv[0], &R[0, 0])
        f = 0.0
        for k in range(nw):
            f += reg_abs(wv[k], k == free)
        for k in range(m):
            R[1, k] = exp(R[0, k])
            R[2, k] = logistic_loss(R[0, k], R[1, k])
            f += av[k] * R[2, k]
        if n_total > 0 and max_iter > 0:
            glmnet_core(&A, &av[0], &wv[0], &W[0, 0], &R[0, 0], &R[1, 0], &R[2, 0], &R[3, 0],
                        &R[4, 0], &R[5, 0], &R[6, 0], &R[7, 0], &W[1, 0], &W[2, 0],
                        &I[0, 0], &I[1, 0], n_total, eps * ref, ref, shrinking, &rng, max_iter,
                        inner_max_iter, max_linesearch, &f, &tr[0, 0], &out, cb, &st, free,
                        &pv[0])
        if not st.stopped:
            certificate(&A, &av[0], &wv[0], &R[0, 0], &R[1, 0], &R[8, 0], 3,
                        out.grad_inf if out.grad_at_w else -1.0, free, &primal, &dual, &gmax)
    stop_raise(&st)
    if max_iter == 0:
        out.status = MAX_ITER
    return dict(w=w_arr, status=out.status, n_iter=out.n_iter, primal=float(primal),
                dual=float(dual), grad_inf=float(gmax), ref=float(ref),
                last_norm=float(out.last_norm), n_active=int(out.n_active),
                inner_total=int(out.inner_total), ls_trials=int(out.ls_trials),
                inner_eps=float(out.inner_eps), trace=trace_arr[:out.n_iter].copy())
