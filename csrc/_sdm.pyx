# The Sequential Dual Method for multi-class linear SVMs (Keerthi, Sundararajan,
# Chang, Hsieh & Lin, KDD 2008): Crammer-Singer (Section 2, Algorithm 2.1) and
# Weston-Watkins (Section 3, Algorithm 3.1).
#
# Notation (the paper's): examples i = 1..l (positions in `rows`), classes
# m = 0..k-1, y_i the class of example i, x_i its row with the bias feature,
# A_i = ||x_i||^2, U_i = C c_i (c_i = class weight x sample weight), W the
# n_weights x k weight matrix stored row-major (W[j*k + m] = w_m[j]).
#
# Crammer-Singer.  Primal (1): min 1/2 sum_m ||w_m||^2 + sum_i U_i xi_i,
#   w_{y_i}.x_i - w_m.x_i >= e_i^m - xi_i (all m), e_i^m = [m != y_i].
# Dual (4): min f(alpha) = 1/2 sum_m ||w_m||^2 + sum_i sum_m e_i^m alpha_i^m,
#   w_m = sum_i alpha_i^m x_i (3),  alpha_i^m <= C_i^m,  sum_m alpha_i^m = 0,
#   C_i^m = U_i [m = y_i].
# Gradient (5) g_i^m = w_m.x_i + e_i^m; optimality measure (6)
#   v_i = max_m g_i^m - min_{m: alpha_i^m < C_i^m} g_i^m; stop when v_i < eps (9).
# Sub-problem (10): min_d 1/2 A_i ||d||^2 + g_i.d  s.t.  d <= C_i - alpha_i, 1.d = 0,
#   over m = M_i (7) and the m with alpha_i^m < C_i^m (end of Section 2).
#
# Weston-Watkins.  Primal (14): min 1/2 sum_m ||w_m||^2 + sum_i U_i sum_{m != y_i} xi_i^m,
#   w_{y_i}.x_i - w_m.x_i >= 1 - xi_i^m, xi_i^m >= 0.
# Dual (16): min f(alpha) = 1/2 sum_m ||w_m||^2 - sum_i sum_{m != y_i} alpha_i^m,
#   0 <= alpha_i^m <= U_i, w_m = -sum_i alpha_i^m x_i (15), alpha_i^{y_i} = -sum_{m != y_i} alpha_i^m.
#   (The text extraction of the paper prints "+ sum alpha" in (16) and
#   "0 <= d <= C1 - alpha" in (21); the gradient (17), which ends in -1, and the
#   box 0 <= alpha + d <= C fix the signs used here.)
# Gradient (17) g_i^m = w_{y_i}.x_i - w_m.x_i - 1; measure (18) v_i^m = |g| if
#   0 < alpha < U, max(0, -g) at 0, max(0, g) at U; stop when v_i^m < eps (20).
# Sub-problem (21): min_d 1/2 A_i ||d||^2 + 1/2 A_i (1.d)^2 + g_i.d,
#   -alpha_i <= d <= U_i - alpha_i, over the m with v_i^m > 0 (end of Section 3).
#
# Both sub-problems are solved by a primal active-set method for convex QP
# (Fletcher; the paper's choice) started at d = 0.  With the working set W of
# variables held at a bound, the equality-constrained QP on the free set F has
# a closed form: the Hessian is A_i I (CS) or A_i (I + 11') (WW), whose block
# on F inverts as (1/A_i)(I - 11'/(1 + |F|)).
#   CS: d_m = (beta - g_m) / A_i on F, beta = (sum_F g_m - A_i sum_W b_m) / |F|
#   WW: d_m = -g_m / A_i - T on F,     T = (sum_W d_m - sum_F g_m / A_i) / (1 + |F|) = 1.d
# A step towards that point stops at the first bound it meets (which joins W);
# at the point itself the multipliers of W are checked and the most negative
# one leaves W; no negative multiplier: optimal.  Each iteration costs O(|S|).
# The paper's restricted sub-problem is the set S with W empty at the start.
# With subproblem "all" (linsvm's default, `--subproblem all`) full loops add every
# other class to S, starting in W at its bound: the method solves (10) / (21)
# exactly and goes beyond the restricted set only where a held class has a
# negative multiplier (where examples keep many non-zero alphas the restricted set
# collects one per visit; docs/solvers.md, "sdm-cs, sdm-ww, dcd").
#
# Algorithm 2.1 / 3.1 with the Section 2.1 heuristics (the driver sdm_run; eps is
# the entries' tol):
#   eps_cur = 1 (cooling; eps without it); repeat:
#     full loop: a fresh random permutation of all examples; for each i compute
#       g_i over all classes (O(k nnz_i), contiguous rows of W), v_i; if v_i > 0
#       solve the sub-problem, update alpha_i and the changed columns of W.
#       If max v_i < eps_cur over the loop: eps_cur /= 10 (not below eps;
#       steps the loop already meets are skipped); at eps the next full loop
#       is lazy: it only measures until some v_i >= eps, so if it finds none
#       it has moved nothing and eq. 9 / 20 holds exactly at the returned
#       alpha (the paper's loop moves alpha after measuring it).
#     shrunk loops (shrinking on): fresh permutations of the examples kept by
#       the removal rule, each visit computing and optimizing only the kept
#       alphas: CS drops examples whose alphas are all 0 or are exactly the pair
#       alpha^{y_i} = U_i, alpha^m = -U_i, and touches only non-zero alphas;
#       WW keeps examples with some 0 < alpha < U_i and touches only those.
#       Repeat until max v < eps_cur on them or their g evaluations exceed
#       effort_cap * k * l (footnote: 5 effective loops), then a full loop.
#
# Storage.  alpha_i^{y_i} (CS) is a dense vector; the other alpha_i^m are kept
# sparse, as the paper suggests for many classes: per example a block of
# (class, value) pairs for the non-zero ones in a pool that grows by doubling a
# block when it fills (moving it to the end; the pool is compacted when half
# of it is abandoned blocks, and blocks are trimmed after a full loop when they
# hold more than twice the entries).  Memory is O(l + non-zeros), not O(l k).
# Exact bounds: the alphas a sub-problem holds at a bound are set to 0 or U_i
# exactly, and a free alpha^{y_i} is set to -sum of the others, so the
# shrinking tests (== 0, == U_i) are exact and sum_m alpha_i^m = 0 does not drift.
# Examples with U_i = 0 have all alphas 0; examples with A_i = 0 (x_i = 0, no
# bias) do not move W, so their alphas are set once to their optimum (CS:
# alpha^{y_i} = U_i, alpha^m = -U_i for the first m != y_i; WW: all alpha^m = U_i)
# and they take no part in the loops.
#
# Warm start: the caller passes feasible alphas; W is recomputed from them and
# the looping examples' alphas are moved along the ray r alpha, r >= 1, to the
# best feasible dual value (see sdm_solve).
#
# The core is serial and does not raise: it returns a status (NO_MEMORY when
# the pool cannot grow); the Python entries allocate everything else and fill the
# settings (SdmSettings) from their keywords, the solver catalog's option names
# (linsvm/problem/catalog.py).  The rows come from a data view (linsvm._data.DataView).
#
# The pieces: csrc/sdm_subproblems.pxi (the sub-problems), csrc/sdm_pool.pxi (the
# alpha pool), csrc/sdm_state.pxi (the settings, the SDM record, the scatters over one
# row, the store of one example's alphas), csrc/sdm_steps.pxi (the visits of one
# example), csrc/sdm_loops.pxi (the loops); this file: the entries, the start point
# and the objectives.


from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.math cimport INFINITY
import numpy as np
from csr cimport sq_norm_row
from linsvm._data cimport DataView
from interrupt cimport Stop, stop_init, stop_raise
from sdm_sub cimport sub_iter_cap

# The core's cdef functions, in the order they build on each other (textual includes:
# one module, so that the compiler inlines exactly what it did when they were one file).
include "sdm_subproblems.pxi"
include "sdm_pool.pxi"
include "sdm_state.pxi"
include "sdm_steps.pxi"
include "sdm_loops.pxi"

# The settings keywords of each entry: the solver catalog's option names, with the
# solve's tol (-e) and seed.
_SOLVE_SETTINGS = ("tol", "shrinking", "cooling", "effort_cap", "max_iter", "seed",
                   "subproblem")
_PASS_SETTINGS = ("tol", "shrinking", "effort_cap", "local_epochs", "subproblem")


cdef SdmSettings _settings(dict given, tuple names, bint weston_watkins,
                           double sigma) except *:
    """The settings struct of an entry's settings keywords (exactly `names`)."""
    cdef SdmSettings opt
    if sorted(given) != sorted(names):
        raise TypeError(f"the settings are {', '.join(names)}, not {', '.join(sorted(given))}")
    if given["subproblem"] not in ("all", "restricted"):
        raise ValueError(f"subproblem must be 'all' or 'restricted', not {given['subproblem']!r}")
    opt.weston_watkins = weston_watkins
    opt.tol = given["tol"]
    opt.shrinking = bool(given["shrinking"])
    opt.cooling = bool(given.get("cooling", False))
    opt.effort_cap = given["effort_cap"]
    opt.max_iter = given["max_iter"] if "max_iter" in given else given["local_epochs"]
    opt.subproblem = SUBPROBLEM_ALL if given["subproblem"] == "all" else SUBPROBLEM_RESTRICTED
    opt.dense_ratio = DENSE_RATIO
    opt.sigma = sigma
    opt.seed = given.get("seed", 0)
    return opt


cdef tuple _work(int64_t l, int64_t k, int max_iter):
    """The work arrays of an entry: A (l), idx and shr (l), F (7 x (k + 1) doubles), I
    (3 x (k + 1) int32), Cm (2 x (k + 1) bytes), trace (3 max_iter + 2 rows)."""
    return (np.zeros(max(l, 1), dtype=np.float64), np.empty(max(l, 1), dtype=np.int64),
            np.empty(max(l, 1), dtype=np.int64), np.zeros((7, k + 1), dtype=np.float64),
            np.zeros((3, k + 1), dtype=np.int32), np.zeros((2, k + 1), dtype=np.int8),
            np.zeros((3 * max(max_iter, 1) + 2, TRACE_COLS), dtype=np.float64))


cdef int _init_sdm(SDM* s, Stop* S, DataView data, const int32_t[::1] y, const double[::1] U,
                   double[::1] alpha_y, double* W, tuple work,
                   const SdmSettings* opt) except -1:
    """Point the SDM record of sdm_solve / sdm_local_pass at the view's rows, its inputs
    (W: n_weights x k) and the entry's work arrays (_work), with the settings, the stop
    record S and an empty alpha pool (pool_init fills it)."""
    cdef int64_t l = data.n
    cdef double[::1] A = work[0]
    cdef double[:, ::1] F = work[3]
    cdef int32_t[:, ::1] I = work[4]
    cdef signed char[:, ::1] Cm = work[5]
    s.X = data.csr(1, NULL)
    s.rows = data.row_list()
    s.y = &y[0] if l > 0 else NULL
    s.U = &U[0] if l > 0 else NULL
    s.A = &A[0]
    s.l = l
    s.k = F.shape[1] - 1
    s.W = W
    s.ay = &alpha_y[0] if l > 0 else NULL
    s.g = &F[0, 0]
    s.a = &F[1, 0]
    s.gs = &F[2, 0]
    s.lo = &F[3, 0]
    s.hi = &F[4, 0]
    s.ds = &F[5, 0]
    s.cd = &F[6, 0]
    s.S = &I[0, 0]
    s.cm = &I[1, 0]
    s.mark = <char*>&Cm[0, 0]
    s.flag = <char*>&Cm[1, 0]
    s.f = 0.0
    s.evals = 0
    s.sub_caps = 0
    s.max_sub_it = sub_iter_cap(s.k)
    s.opt = opt[0]
    stop_init(S, data.nnz, data.n_rows)
    s.stop = S
    s.polled = 0
    s.P.cls = NULL
    s.P.val = NULL
    s.P.off = NULL
    s.P.cnt = NULL
    s.P.cap = NULL
    return 0


cdef void _init_out(SdmOut* out, tuple work):
    cdef double[:, ::1] tr = work[6]
    out.trace = &tr[0, 0]
    out.n_trace = 0
    out.n_full = 0
    out.n_loops = 0
    out.vfinal = 0.0


cdef int _check(DataView data, int64_t k, tuple alphas, const int32_t[::1] y,
                const double[::1] U) except -1:
    """Check the lengths of an entry's per-position inputs."""
    if k < 2:
        raise ValueError("need at least two classes")
    if len(alphas) != 4:
        raise ValueError("alphas must be (alpha_y, a_ptr, a_cls, a_val)")
    if (len(alphas[0]) != data.n or y.shape[0] != data.n or U.shape[0] != data.n
            or len(alphas[1]) != data.n + 1):
        raise ValueError("inconsistent lengths")
    return 0


cdef int _load_start(SDM* s, const int64_t* a_ptr, const int32_t* a_cls, const double* a_val,
                     double* A, int64_t* idx, int64_t* n_idx) noexcept nogil:
    """Load the start point (a_ptr, a_cls, a_val: the non-zero alpha_i^m, m != y_i, of
    each example) into the pool, blocks packed in example order; set A_i = sigma
    ||x_i||^2 (A: the array s.A reads); give the examples with U_i = 0 or x_i = 0 their
    closed-form alphas and list the others, the examples of the loops, in idx[0:n_idx].
    Returns CONVERGED, or NO_MEMORY when the pool cannot grow."""
    cdef int64_t i, p, e, m, l = s.l, k = s.k
    cdef double Ai
    n_idx[0] = 0
    for i in range(l):
        s.P.off[i] = s.P.used
        s.P.cnt[i] = <int32_t>(a_ptr[i + 1] - a_ptr[i])
        s.P.cap[i] = s.P.cnt[i]
        for p in range(a_ptr[i], a_ptr[i + 1]):
            s.P.cls[s.P.used] = a_cls[p]
            s.P.val[s.P.used] = a_val[p]
            s.P.used += 1
        s.P.live += s.P.cap[i]
    for i in range(l):
        Ai = sq_norm_row(&s.X, s.rows[i])
        A[i] = s.opt.sigma * Ai
        if s.U[i] <= 0.0:
            s.P.cnt[i] = 0
            s.ay[i] = 0.0
        elif Ai <= 0.0:
            if pool_reserve(&s.P, i, <int32_t>(k - 1)) != 0:
                return NO_MEMORY
            if s.opt.weston_watkins:
                e = 0
                for m in range(k):
                    if m != s.y[i]:
                        s.P.cls[s.P.off[i] + e] = <int32_t>m
                        s.P.val[s.P.off[i] + e] = s.U[i]
                        e += 1
                s.P.cnt[i] = <int32_t>e
            else:
                s.P.cls[s.P.off[i]] = 1 if s.y[i] == 0 else 0
                s.P.val[s.P.off[i]] = -s.U[i]
                s.P.cnt[i] = 1
                s.ay[i] = s.U[i]
        else:
            idx[n_idx[0]] = i
            n_idx[0] += 1
    return CONVERGED


cdef int _load_pool(SDM* s, tuple alphas, double[::1] A, int64_t[::1] idx,
                    int64_t* n_idx) except -1:
    """pool_init for the start point `alphas`, then _load_start (without the GIL);
    MemoryError when the pool cannot be had."""
    cdef const int64_t[::1] a_ptr = alphas[1]
    cdef const int32_t[::1] a_cls = alphas[2]
    cdef const double[::1] a_val = alphas[3]
    cdef int status
    if pool_init(&s.P, s.l, <int32_t>(s.k - 1), a_ptr[s.l] + s.l // 4 + 16) != 0:
        raise MemoryError("SDM: cannot allocate the alpha pool")
    with nogil:
        status = _load_start(s, &a_ptr[0], &a_cls[0] if a_cls.shape[0] else NULL,
                             &a_val[0] if a_val.shape[0] else NULL, &A[0], &idx[0], n_idx)
    if status == NO_MEMORY:
        raise MemoryError("SDM: cannot grow the alpha pool")
    return 0



cdef void _w_from_alpha(SDM* s, double* sq, double* sum_a) noexcept nogil:
    """W = W(alpha): (3) for CS, (15) for WW (W zero on entry); sq = ||W||^2 and sum_a =
    the dual's linear term (CS: sum alpha^{y_i}; WW: sum alpha)."""
    cdef int64_t i, e, p, nw = s.X.n_weights
    cdef int ww = s.opt.weston_watkins
    for i in range(s.l):
        if not ww and s.ay[i] != 0.0:
            s.cm[0] = s.y[i]
            s.cd[0] = s.ay[i]
            update_w(s, s.rows[i], 1)
        e = 0
        for p in range(s.P.cnt[i]):
            s.cm[e] = s.P.cls[s.P.off[i] + p]
            s.cd[e] = s.P.val[s.P.off[i] + p]
            if ww:
                s.cd[e] = -s.cd[e]
                sum_a[0] += s.P.val[s.P.off[i] + p]
            e += 1
        if ww and e > 0:
            s.cm[e] = s.y[i]
            s.cd[e] = 0.0
            for p in range(e):
                s.cd[e] -= s.cd[p]
            e += 1
        update_w(s, s.rows[i], e)
        if not ww:
            sum_a[0] += s.ay[i]
    for p in range(nw * s.k):
        sq[0] += s.W[p] * s.W[p]


cdef double _seed_along_ray(SDM* s, const int64_t* idx, int64_t n_idx, double sq,
                            double sum_a) noexcept nogil:
    """A seeded start: move the looping examples' alphas along the ray r alpha, r >= 1,
    to the best dual value that stays feasible (-f = r S - r^2 ||W||^2 / 2 + const, S
    their sum of alpha^{y_i} (CS) or alpha (WW); sq = ||W||^2, sum_a the dual's linear
    term at r = 1), scaling W and setting f; returns r (1: not moved).  Only r > 1: it
    keeps every alpha at a bound there (zeros stay zero, and an alpha at U_i makes
    r_max = 1), where r < 1 would pull them all inside the box."""
    cdef int64_t i, j, p, nw = s.X.n_weights
    cdef int ww = s.opt.weston_watkins
    cdef double s_loop = 0.0, r, r_max = INFINITY
    for j in range(n_idx):
        i = idx[j]
        if ww:
            for p in range(s.P.off[i], s.P.off[i] + s.P.cnt[i]):
                s_loop += s.P.val[p]
                if s.U[i] / s.P.val[p] < r_max:
                    r_max = s.U[i] / s.P.val[p]
        elif s.ay[i] > 0.0:
            s_loop += s.ay[i]
            if s.U[i] / s.ay[i] < r_max:
                r_max = s.U[i] / s.ay[i]
    if not s_loop > 0.0:
        return 1.0
    r = s_loop / sq if sq > 0.0 else r_max
    if r > r_max:
        r = r_max
    if not (r == r and r != INFINITY and r > 1.0):
        return 1.0
    for j in range(n_idx):
        i = idx[j]
        for p in range(s.P.off[i], s.P.off[i] + s.P.cnt[i]):
            s.P.val[p] = s.P.val[p] * r
            if ww and s.P.val[p] > s.U[i]:
                s.P.val[p] = s.U[i]
        if not ww:
            s.ay[i] = s.ay[i] * r
            if s.ay[i] > s.U[i]:
                s.ay[i] = s.U[i]
    for p in range(nw * s.k):
        s.W[p] = s.W[p] * r
    s.f = 0.5 * r * r * sq - (sum_a - s_loop) - r * s_loop
    return r


def sdm_solve(DataView data, *, const int32_t[::1] y, int64_t n_classes, const double[::1] U,
              bint weston_watkins, tuple alphas, object callback=None, **settings):
    """Solve the Crammer-Singer dual (4) (weston_watkins False, Algorithm 2.1) or the
    Weston-Watkins dual (16) (True, Algorithm 3.1) by SDM with shrinking and cooling,
    over the rows of `data` (a linsvm._data.DataView with its row list).

    y (the classes, in [0, n_classes)) and U (U_i = C c_i >= 0, finite) hold one entry
    per position; the caller validates them.  The start point is given sparsely, as
    alphas = (alpha_y, a_ptr, a_cls, a_val): alpha_y (CS: alpha_i^{y_i}, one per
    position; updated in place; ignored for WW) and, per example i, the pairs
    (a_cls[p], a_val[p]) for a_ptr[i] <= p < a_ptr[i+1]: its non-zero alpha_i^m,
    m != y_i.  It must be feasible (CS: alpha_i^m <= 0 for m != y_i, alpha_y = -sum,
    alpha_y <= U_i; WW: 0 <= alpha <= U_i), with classes distinct, != y_i and in
    [0, n_classes).  callback(kind, full loops, eps_cur, max v, f, effective loops)
    after every full loop and shrunk phase.

    The settings, by the solver catalog's names: tol (the paper's eps), shrinking,
    cooling, effort_cap, max_iter (full loops), seed, subproblem ("all": solve (10) /
    (21) over every class in full loops; "restricted": the paper's set).

    Returns a dict: W (n_weights x n_classes), status (0 converged, 1 full-loop
    cap, 2 out of memory), n_full (full loops), n_loops (all loops),
    effective_loops (g evaluations / (k l)), max_violation (the paper's measure
    over the last full loop: exact at the returned alpha when converged),
    seed_scale (the r applied to a seeded start, 1 if none),
    primal (1) / (14) and dual (-f of (4) / (16)) objectives, the solution as
    alpha_y plus a_ptr, a_cls, a_val (non-zeros only), n_nonzero,
    subproblem_caps, and trace (rows: kind 0 full loop / 1 shrunk phase,
    eps_cur, max v, dual f, seconds, effective loops, loops).
    """
    cdef SdmSettings opt = _settings(settings, _SOLVE_SETTINGS, weston_watkins, 1.0)
    cdef int64_t k = n_classes, n_idx = 0, nw = data.n_weights, p
    cdef int status = CONVERGED
    cdef uint64_t rng = opt.seed
    cdef double sq = 0.0, sum_a = 0.0, seed_scale = 1.0, loss = 0.0
    cdef SDM s
    cdef Stop S
    cdef SdmOut out
    _check(data, k, alphas, y, U)
    cdef double[::1] alpha_y = alphas[0]
    W_arr = np.zeros((nw, k), dtype=np.float64)
    cdef double[:, ::1] Wv = W_arr
    work = _work(data.n, k, opt.max_iter)
    cdef int64_t[::1] idx = work[1], shr = work[2]
    cdef void* cb = <void*>callback if callback is not None else NULL
    _init_sdm(&s, &S, data, y, U, alpha_y, &Wv[0, 0] if nw > 0 else NULL, work, &opt)
    _init_out(&out, work)
    try:
        _load_pool(&s, alphas, work[0], idx, &n_idx)
        with nogil:
            _w_from_alpha(&s, &sq, &sum_a)
            s.f = 0.5 * sq - sum_a
            seed_scale = _seed_along_ray(&s, &idx[0], n_idx, sq, sum_a)
            if n_idx > 0:
                status = sdm_run(&s, &idx[0], n_idx, &shr[0], &rng, &out, cb)
        stop_raise(&S)                      # Ctrl-C: the pool is freed below as it unwinds
        if status == NO_MEMORY:
            raise MemoryError("SDM: cannot grow the alpha pool")
        stat = dict(status=status, n_full=out.n_full, n_loops=out.n_loops,
                    effective_loops=s.evals / (<double>k * n_idx) if n_idx > 0 else 0.0,
                    max_violation=out.vfinal, subproblem_caps=s.sub_caps,
                    seed_scale=seed_scale, W=W_arr, alpha_y=np.asarray(alpha_y),
                    trace=work[6][:out.n_trace].copy())
        stat.update(_export_pool(&s))
        sq = 0.0
        with nogil:
            sum_a = _dual_terms(&s)
            loss = _block_loss(&s, s.g)
            for p in range(nw * k):
                sq += s.W[p] * s.W[p]
        stat.update(primal=0.5 * sq + loss, dual=sum_a - 0.5 * sq,
                    n_nonzero=stat["a_cls"].shape[0] + int(np.count_nonzero(alpha_y)) * (
                        1 - s.opt.weston_watkins))
        return stat
    finally:
        pool_free(&s.P)


cdef dict _export_pool(SDM* s):
    """The pool as CSR arrays (non-zeros only, example order): a_ptr, a_cls, a_val."""
    cdef int64_t i, p, q = 0, total = 0
    for i in range(s.l):
        total += s.P.cnt[i]
    ptr_arr = np.zeros(s.l + 1, dtype=np.int64)
    cls_arr = np.empty(total, dtype=np.int32)
    val_arr = np.empty(total, dtype=np.float64)
    cdef int64_t[::1] ptr = ptr_arr
    cdef int32_t[::1] cls = cls_arr
    cdef double[::1] val = val_arr
    for i in range(s.l):
        ptr[i] = q
        for p in range(s.P.cnt[i]):
            cls[q] = s.P.cls[s.P.off[i] + p]
            val[q] = s.P.val[s.P.off[i] + p]
            q += 1
    ptr[s.l] = q
    return dict(a_ptr=ptr_arr, a_cls=cls_arr, a_val=val_arr)


cdef double _dual_terms(SDM* s) noexcept nogil:
    """The separable dual terms of the block's alphas: CS sum alpha_i^{y_i}, WW sum alpha."""
    cdef int64_t i, p
    cdef double sum_a = 0.0
    for i in range(s.l):
        if s.opt.weston_watkins:
            for p in range(s.P.cnt[i]):
                sum_a += s.P.val[s.P.off[i] + p]
        else:
            sum_a += s.ay[i]
    return sum_a


cdef double _block_loss(SDM* s, double* h) noexcept nogil:
    """sum_i U_i xi_i over the examples at s.W: the loss of (1) / (14); h: k doubles."""
    cdef int64_t i, m, k = s.k
    cdef int32_t yi
    cdef int ww = s.opt.weston_watkins
    cdef double loss = 0.0, xi, hy, mg
    for i in range(s.l):
        if s.U[i] <= 0.0:
            continue
        scores_all(s, s.rows[i], h)
        yi = s.y[i]
        hy = h[yi]
        xi = 0.0
        for m in range(k):
            if ww:
                if m != yi:
                    mg = 1.0 - hy + h[m]
                    if mg > 0.0:
                        xi += mg
            else:
                mg = (1.0 if m != yi else 0.0) + h[m] - hy
                if mg > xi:
                    xi = mg
        loss += s.U[i] * xi
    return loss


# ------------------------------------------------------------------ CoCoA+ local passes
#
# A distributed sdm-cs / sdm-ww (linsvm/solvers/cocoa.py) keeps the alphas of one MPI
# rank's block of examples and W replicated.  Each round runs sdm_run on the block's
# CoCoA+ subproblem (Ma et al. 2015, adding, sigma' = number of ranks): the sub-problem
# of example i sees the scores of V = W + sigma' dW (dW = the change of W this round
# from this block) and the curvature sigma' A_i in place of A_i, i.e. the same code with
# s.A = sigma' ||x_i||^2 and W-steps scaled by sigma' (update_w).  With one rank the
# subproblem is the serial dual.

def sdm_local_pass(DataView data, *, const int32_t[::1] y, int64_t n_classes,
                   const double[::1] U, bint weston_watkins, tuple alphas,
                   const double[:, ::1] W, double[:, ::1] V, double sigma, uint64_t[::1] rng,
                   **settings):
    """One CoCoA+ round of this block (see the notes above).

    The block's alphas come in as sdm_solve's start point (alphas[0] updated in place;
    feasible, validated by the caller) and W (n_weights x n_classes) is the replicated
    W(alpha) of every block.  Examples with U_i = 0 or x_i = 0 get their closed-form
    alphas first (as in sdm_solve; they do not move W).  Then the block's share of the
    certificate is taken at (W, alpha) -- loss: sum_i U_i xi_i at W; dual: the separable
    dual terms (CS: sum alpha_i^{y_i}, WW: sum alpha) -- and local_epochs full loops of
    sdm_run (shrinking as given, no cooling, tol for its shrunk phases and its lazy
    stop) run on the local subproblem, moving alpha and V, which starts as W and ends
    as W + sigma dW.  rng (one uint64) is the block's random state, advanced.  The
    settings: tol, shrinking, effort_cap, local_epochs, subproblem (as sdm_solve's).

    Returns a dict: status (0 the local rule met, 1 the loop cap, 2 out of memory),
    n_full, n_loops, loss, dual, the alphas after the pass (alpha_y, a_ptr, a_cls,
    a_val, non-zeros only), stopped (the exception that stopped the pass or None: the
    caller decides collectively)."""
    cdef SdmSettings opt = _settings(settings, _PASS_SETTINGS, weston_watkins, sigma)
    cdef int64_t k = n_classes, i, m, n_idx = 0, nw = data.n_weights
    cdef int status = CONVERGED
    cdef double sum_a = 0.0, loss = 0.0
    cdef SDM s
    cdef Stop S
    cdef SdmOut out
    _check(data, k, alphas, y, U)
    if rng.shape[0] != 1:
        raise ValueError("rng must hold one state")
    if W.shape[0] != nw or W.shape[1] != k or V.shape[0] != nw or V.shape[1] != k:
        raise ValueError("inconsistent weight shapes")
    cdef double[::1] alpha_y = alphas[0]
    work = _work(data.n, k, opt.max_iter)
    cdef int64_t[::1] idx = work[1], shr = work[2]
    _init_sdm(&s, &S, data, y, U, alpha_y, &V[0, 0] if nw > 0 else NULL, work, &opt)
    _init_out(&out, work)
    try:
        for i in range(nw):
            for m in range(k):
                V[i, m] = W[i, m]
        _load_pool(&s, alphas, work[0], idx, &n_idx)
        with nogil:
            sum_a = _dual_terms(&s)
            loss = _block_loss(&s, s.g)
            if n_idx > 0 and opt.max_iter > 0:
                status = sdm_run(&s, &idx[0], n_idx, &shr[0], &rng[0], &out, NULL)
        stopped = None
        try:
            if S.stopped:
                stop_raise(&S)
        except BaseException as exc:        # kept for the collective decision
            stopped = exc
        if status == NO_MEMORY:
            raise MemoryError("SDM: cannot grow the alpha pool")
        res = dict(status=status if stopped is None else MAX_ITER, n_full=out.n_full,
                   n_loops=out.n_loops, loss=float(loss), dual=float(sum_a),
                   alpha_y=np.asarray(alpha_y), stopped=stopped)
        res.update(_export_pool(&s))
        return res
    finally:
        pool_free(&s.P)
