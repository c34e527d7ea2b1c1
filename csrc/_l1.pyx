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
# rule.  A feature shrunk early can become optimal away from 0 later, and with the rule's
# reset alone a tight solve can spend most of its sweeps converging on a shrunk set whose
# optimum is not the problem's (docs/l1.md, implementation notes).
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
# coordinates themselves stay in order.  Every sum over rows or over a long column is
# taken by fixed blocks (ROW_BLOCK rows, COL_BLOCK entries), each summed in order, the
# blocks added in order: the same sums, hence the same model bit for bit, on any number
# of threads.
#
# The margins (cdn: b; glmnet: z, exp(z) and the loss of each row) are updated
# incrementally, as the papers do, and the returned objective and certificate are
# computed from them (they differ from a recomputation by rounding only).  Everything
# runs without the GIL, allocation-free (the Python entries allocate every buffer as
# numpy arrays), and polls for Ctrl-C (csrc/interrupt.pxd) per coordinate.
#
# Where the code is: the column copy and the passes over a column in csrc/l1_columns.pxd,
# what both methods share (settings, subgradient, Newton step, trace) in
# csrc/l1_shared.pxd, CDN in csrc/l1_cdn.pxd, newGLMNET in csrc/l1_glmnet.pxd, the
# certificate in csrc/l1_certificate.pxd; this file holds the Python entries.


from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.math cimport exp, log
import numpy as np
from csr cimport CSR, entry_threads
from linsvm._data cimport DataView
from interrupt cimport Stop, stop_init, stop_raise
from l1_shared cimport L1Settings, CONVERGED, MAX_ITER, TRACE_COLS, NU, reg_abs, logistic_loss
from l1_columns cimport CSC, COL_BLOCK, n_blocks, column_entries, build_csc, margins, residuals
from l1_cdn cimport CdnWork, CdnOut, cdn_core
from l1_glmnet cimport GlmWork, GlmOut, glmnet_core, start_norm
from l1_certificate cimport certificate

# The settings keywords of the entries (L1Settings; the catalog's option names, and the
# solve's C, eps and seed); regularize_bias and n_threads may be left out.
_CDN_SETTINGS = ("C", "eps", "seed", "max_iter", "max_linesearch", "shrinking",
                 "regularize_bias", "n_threads")
_GLMNET_SETTINGS = _CDN_SETTINGS + ("inner_max_iter",)
_SETTING_DEFAULTS = {"regularize_bias": True, "n_threads": 1}


# ------------------------------------------------------------------ Python entries


def column_copy_nnz(DataView data):
    """Entries of the column copy of the view's rows (their non-zeros, + one per row with
    a bias feature)."""
    cdef CSR X = data.csr(1, NULL)
    cdef const int64_t* rows = data.row_list()
    return column_entries(&X, rows, data.n)


cdef int _read_settings(L1Settings* s, dict given, tuple names) except -1:
    """Fill s once from an entry's settings keywords: exactly `names`, regularize_bias
    and n_threads optional (True and 1); inner_max_iter is 0 where it is not one."""
    unknown = sorted(set(given) - set(names))
    if unknown:
        raise TypeError(f"unknown settings: {', '.join(unknown)}")
    kw = dict(_SETTING_DEFAULTS, **given)
    missing = [name for name in names if name not in kw]
    if missing:
        raise TypeError(f"missing settings: {', '.join(missing)}")
    s.C = kw["C"]
    s.eps = kw["eps"]
    s.seed = kw["seed"]
    s.max_iter = kw["max_iter"]
    s.inner_max_iter = kw.get("inner_max_iter", 0)
    s.max_linesearch = kw["max_linesearch"]
    s.shrinking = kw["shrinking"]
    s.regularize_bias = kw["regularize_bias"]
    s.n_threads = kw["n_threads"]
    return 0


cdef int64_t _free_column(DataView data, const L1Settings* s):
    """The free bias column (regularize_bias off, with a bias feature), or -1."""
    return -1 if (s.regularize_bias or data.bias <= 0) else data.n_features


cdef double _nothing_to_fit(a, int64_t m, w, int64_t n_features, int64_t free, double loss0):
    """f(w) where no coordinate can move: no rows (||w||_1 of the regularized weights), or
    no weights (every margin 0: sum_k a_k loss(0), loss(0) = loss0, 1 for the squared
    hinge, log 2 for the logistic loss; the dual then equals it, the feasible set being
    one point)."""
    if m == 0:
        return float(np.abs(w[:n_features] if free >= 0 else w).sum())
    return float(np.sum(a[:m])) * loss0


cdef dict _setup(DataView data, const double[::1] t, const double[::1] c, double C,
                 const double[::1] w0):
    """Checks, the column copy of the view's rows, a_k = C c_k, and the start weights
    (numpy arrays)."""
    cdef int64_t m = data.n, k, nnz, nw = data.n_weights
    if m > 2147483647:
        raise ValueError("the L1 solvers index at most 2^31 - 1 examples")
    if t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    if w0 is not None and w0.shape[0] != nw:
        raise ValueError(f"a start of {w0.shape[0]} weights for {nw}")
    cdef CSR X = data.csr(1, NULL)
    cdef const int64_t* rows = data.row_list()
    nnz = column_entries(&X, rows, m)
    colptr = np.empty(nw + 1, dtype=np.int64)
    row = np.empty(max(nnz, 1), dtype=np.int32)
    val = np.empty(max(nnz, 1), dtype=np.float64)
    a = np.empty(max(m, 1), dtype=np.float64)
    w = np.zeros(nw, dtype=np.float64) if w0 is None else np.array(w0, dtype=np.float64)
    cdef int64_t[::1] cp = colptr
    cdef int32_t[::1] rw = row
    cdef double[::1] vl = val, av = a
    with nogil:
        for k in range(m):
            av[k] = C * c[k] if c[k] > 0.0 else 0.0
        if m > 0:
            build_csc(&X, rows, m, &t[0], &cp[0], &rw[0], &vl[0])
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


# ----------------------------------------------------------------------------- CDN

cdef void _cdn_curvature(const CSC* A, const double* a, double* Hub) noexcept nogil:
    """H_j = 2 sum_k a_k v_kj^2 (+ nu): the curvature bound of the cheap Armijo test."""
    cdef int64_t j, p
    for j in range(A.n_cols):
        Hub[j] = NU
        for p in range(A.colptr[j], A.colptr[j + 1]):
            Hub[j] += 2.0 * a[A.row[p]] * A.val[p] * A.val[p]


cdef void _cdn_layout(CdnWork* W, const double* a, int64_t m) noexcept nogil:
    """W.S = 1 and W.a0 the cost when every a_k is the same (m > 0), else W.S = 2 with
    each a_k beside its residual."""
    cdef int64_t k
    W.a0 = a[0]
    W.S = 1
    for k in range(m):
        if a[k] != W.a0:
            W.S = 2
    if W.S == 2:
        for k in range(m):
            W.ba[2 * k + 1] = a[k]


cdef void _cdn_reference(const CSC* A, CdnWork* W, const L1Settings* s, double* w0,
                         double* ref, CdnOut* out, Stop* stop) noexcept nogil:
    """The stopping rule's reference at a warm start, a cold start's first sweep: one
    sweep from w = 0 (b = 1) with the same seed, so that a cold start's first sweep is
    this one; then w is the start again (w0: n_cols doubles of room; b is the caller's
    to rebuild)."""
    cdef uint64_t rng0 = s.seed
    cdef int64_t j, k
    for j in range(A.n_cols):
        w0[j] = W.w[j]
        W.w[j] = 0.0
    for k in range(A.n_rows):
        W.ba[W.S * k] = 1.0
    cdn_core(A, W, s, 0.0, 1, &rng0, ref, out, NULL, stop)
    for j in range(A.n_cols):
        W.w[j] = w0[j]


def cdn_solve(DataView data, *, const double[::1] t, const double[::1] c, object start,
              object callback, **settings):
    """Minimize ||w||_1 + C sum_k c_k max(0, 1 - t_k w.x_k)^2 over the view's rows by CDN
    (block comment).

    t = +-1 and c >= 0 finite, one per row of the view (its checked row numbers; the
    buffers as CSRBuffers guarantees them).  start: None (w = 0) or n_weights weights.
    settings, keywords filling L1Settings: C; eps, the relative rule's eps' (the caller
    scales -e by max(min(n+, n-), 1)/n): the solve stops once a full sweep's ||S||_1 <=
    eps' ref, ref the ||S||_1 of a cold start's first sweep; seed; max_iter (outer
    iterations); max_linesearch (trials of each line search); shrinking;
    regularize_bias (default True; False with a bias feature: the bias weight leaves
    ||w||_1, a free intercept); n_threads (default 1; threads of the passes over long
    columns, 0: every OpenMP thread; the result is the same for every count).

    Returns a dict: w, status (0 converged, 1 iteration cap), n_iter, primal (f(w)),
    dual (the dual value of the scaled point), grad_inf (||grad L(w)||_inf), ref
    (the reference ||S||_1), last_norm (||S||_1 of the last sweep), n_active, ls_failures
    (coordinates whose line search found no step), trace (per outer iteration:
    iteration, objective (nan when not logged), ||S||_1, active features, seconds,
    failed line searches so far)."""
    cdef L1Settings s
    _read_settings(&s, settings, _CDN_SETTINGS)
    if s.max_iter < 0 or s.max_linesearch < 1:
        raise ValueError("max_iter must be >= 0 and max_linesearch >= 1")
    cdef int64_t m = data.n, k, nw, free = _free_column(data, &s)
    cdef double ref = -1.0, primal = 0.0, dual = 0.0, gmax = 0.0
    cdef uint64_t rng = s.seed
    cdef CdnOut out
    out.n_iter = 0
    out.status = CONVERGED
    out.n_active = 0
    out.ls_failures = 0
    out.last_norm = 0.0
    S = _setup(data, t, c, s.C,
               None if start is None else np.ascontiguousarray(start, dtype=np.float64))
    w_arr = S["w"]
    nw = w_arr.shape[0]
    if m == 0 or nw == 0:
        primal = _nothing_to_fit(S["a"], m, w_arr, data.n_features, free, 1.0)
        return dict(w=w_arr, status=CONVERGED, n_iter=0, primal=primal,
                    dual=primal if nw == 0 else 0.0, grad_inf=0.0, ref=0.0, last_norm=0.0,
                    n_active=0, ls_failures=0, trace=np.zeros((0, TRACE_COLS)))
    ba_arr = np.empty(2 * m, dtype=np.float64)
    cert_arr = np.empty(2 * m, dtype=np.float64)       # z and alpha at the end
    cdef bint warm = start is not None and bool(np.any(w_arr != 0))
    w0_arr = w_arr.copy() if warm else np.empty(1)
    hub_arr = np.empty(nw, dtype=np.float64)
    idx_arr = np.empty(nw, dtype=np.int64)
    trace_arr = np.zeros((max(s.max_iter, 1), TRACE_COLS), dtype=np.float64)
    part_arr = np.empty(3 * n_blocks(m, COL_BLOCK) + 3, dtype=np.float64)
    cdef double[::1] wv = w_arr, bav = ba_arr, hv = hub_arr, av = S["a"], w0v = w0_arr
    cdef double[::1] cv = cert_arr, pv = part_arr
    cdef int64_t[::1] iv = idx_arr
    cdef double[:, ::1] tr = trace_arr
    cdef CSC A = _csc_view(S, m)
    A.n_threads = entry_threads(s.n_threads)
    cdef CdnWork W
    W.ba = &bav[0]
    W.w = &wv[0]
    W.Hub = &hv[0]
    W.index = &iv[0]
    W.free = free
    W.part = &pv[0]
    W.trace = &tr[0, 0]
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop st
    stop_init(&st, A.colptr[A.n_cols], A.n_cols)
    with nogil:
        W.n_total = _active_features(&A, W.w, W.index)
        _cdn_curvature(&A, &av[0], &hv[0])
        _cdn_layout(&W, &av[0], m)
        if warm and W.n_total > 0 and s.max_iter > 0:
            _cdn_reference(&A, &W, &s, &w0v[0], &ref, &out, &st)
        # b = 1 - z(w)
        residuals(&A, W.w, W.ba, W.S)
        if W.n_total > 0 and s.max_iter > 0 and not st.stopped:
            cdn_core(&A, &W, &s, s.eps, s.max_iter, &rng, &ref, &out, cb, &st)
        if not st.stopped:
            # the margins z = 1 - b the solve kept, and alpha, in the certificate's space
            for k in range(m):
                cv[k] = 1.0 - bav[W.S * k]
            certificate(&A, &av[0], W.w, &cv[0], NULL, &cv[m], 2, -1.0, free, &primal, &dual,
                        &gmax)
    stop_raise(&st)
    if s.max_iter == 0:
        out.status = MAX_ITER
    return dict(w=w_arr, status=out.status, n_iter=out.n_iter, primal=float(primal),
                dual=float(dual), grad_inf=float(gmax), ref=float(max(ref, 0.0)),
                last_norm=float(out.last_norm), n_active=int(out.n_active),
                ls_failures=int(out.ls_failures), trace=trace_arr[:out.n_iter].copy())


# -------------------------------------------------------------------------- newGLMNET

cdef void _glm_work(GlmWork* W, double[::1] a, double[::1] w, double[:, ::1] R,
                    double[:, ::1] per_weight, int64_t[:, ::1] I, double[::1] part,
                    double[:, ::1] trace) noexcept:
    """Point W at the entry's buffers: R, 9 rows of per-row doubles (z, ez, lk, D, g, Xd,
    ez_new, lk_new, and alpha for the certificate); per_weight, 3 rows (u, grad, hdiag);
    I, 2 rows of feature indices (index, qindex)."""
    W.a = &a[0]
    W.w = &w[0]
    W.z = &R[0, 0]
    W.ez = &R[1, 0]
    W.lk = &R[2, 0]
    W.Dk = &R[3, 0]
    W.gk = &R[4, 0]
    W.Xd = &R[5, 0]
    W.ez_new = &R[6, 0]
    W.lk_new = &R[7, 0]
    W.u = &per_weight[0, 0]
    W.grad = &per_weight[1, 0]
    W.hdiag = &per_weight[2, 0]
    W.index = &I[0, 0]
    W.qindex = &I[1, 0]
    W.part = &part[0]
    W.trace = &trace[0, 0]


cdef double _glm_start(const CSC* A, GlmWork* W) noexcept nogil:
    """exp(z) and the loss of every row from z = z(w); returns f(w)."""
    cdef int64_t k
    cdef double f = 0.0
    for k in range(A.n_cols):
        f += reg_abs(W.w[k], k == W.free)
    for k in range(A.n_rows):
        W.ez[k] = exp(W.z[k])
        W.lk[k] = logistic_loss(W.z[k], W.ez[k])
        f += W.a[k] * W.lk[k]
    return f


def glmnet_solve(DataView data, *, const double[::1] t, const double[::1] c, object start,
                 object callback, **settings):
    """Minimize ||w||_1 + C sum_k c_k log(1 + exp(-t_k w.x_k)) over the view's rows by
    newGLMNET (block comment).

    t, c, start and settings as cdn_solve's (the reference of eps is ||S(0)||_1; max_iter
    caps the Newton iterations; n_threads the threads of the column and row passes),
    and inner_max_iter, the cap on the sweeps of each inner solve.

    Returns a dict as cdn_solve's (status 2: stalled, no step passed the line search),
    with inner_total (inner sweeps, all Newton iterations), ls_trials and inner_eps (the
    adaptive inner tolerance at the end), and a trace whose last column is the inner
    sweeps of the iteration (objective always filled)."""
    cdef L1Settings s
    _read_settings(&s, settings, _GLMNET_SETTINGS)
    if s.max_iter < 0 or s.inner_max_iter < 1 or s.max_linesearch < 1:
        raise ValueError("max_iter must be >= 0, inner_max_iter and max_linesearch >= 1")
    cdef int64_t m = data.n, nw, free = _free_column(data, &s)
    cdef double ref = 0.0, primal = 0.0, dual = 0.0, gmax = 0.0
    cdef uint64_t rng = s.seed
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
    S = _setup(data, t, c, s.C,
               None if start is None else np.ascontiguousarray(start, dtype=np.float64))
    w_arr = S["w"]
    nw = w_arr.shape[0]
    if m == 0 or nw == 0:
        primal = _nothing_to_fit(S["a"], m, w_arr, data.n_features, free, log(2.0))
        return dict(w=w_arr, status=CONVERGED, n_iter=0, primal=primal,
                    dual=primal if nw == 0 else 0.0, grad_inf=0.0, ref=0.0, last_norm=0.0,
                    n_active=0, inner_total=0, ls_trials=0, inner_eps=1.0,
                    trace=np.zeros((0, TRACE_COLS)))
    per_row = np.empty((9, m), dtype=np.float64)   # z ez lk D g Xd ez_new lk_new alpha
    per_weight = np.empty((3, nw), dtype=np.float64)      # u grad hdiag
    idx_arr = np.empty((2, nw), dtype=np.int64)
    trace_arr = np.zeros((max(s.max_iter, 1), TRACE_COLS), dtype=np.float64)
    part_arr = np.empty(n_blocks(m, COL_BLOCK) + 1, dtype=np.float64)  # >= the row blocks
    cdef double[:, ::1] R = per_row
    cdef CSC A = _csc_view(S, m)
    A.n_threads = entry_threads(s.n_threads)
    cdef GlmWork W
    _glm_work(&W, S["a"], w_arr, R, per_weight, idx_arr, part_arr, trace_arr)
    W.free = free
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop st
    stop_init(&st, A.colptr[A.n_cols], A.n_cols)
    with nogil:
        W.n_total = _active_features(&A, W.w, W.index)
        ref = start_norm(&A, W.a, 0.5, free)
        margins(&A, W.w, W.z)
        W.f = _glm_start(&A, &W)
        if W.n_total > 0 and s.max_iter > 0:
            glmnet_core(&A, &W, &s, s.eps * ref, ref, &rng, &out, cb, &st)
        if not st.stopped:
            certificate(&A, W.a, W.w, W.z, W.ez, &R[8, 0], 3,
                        out.grad_inf if out.grad_at_w else -1.0, free, &primal, &dual, &gmax)
    stop_raise(&st)
    if s.max_iter == 0:
        out.status = MAX_ITER
    return dict(w=w_arr, status=out.status, n_iter=out.n_iter, primal=float(primal),
                dual=float(dual), grad_inf=float(gmax), ref=float(ref),
                last_norm=float(out.last_norm), n_active=int(out.n_active),
                inner_total=int(out.inner_total), ls_trials=int(out.ls_trials),
                inner_eps=float(out.inner_eps), trace=trace_arr[:out.n_iter].copy())
