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
# With full_sub (linsvm's default, `--subproblem all`) full loops add every
# other class to S, starting in W at its bound: the method solves (10) / (21)
# exactly and goes beyond the restricted set only where a held class has a
# negative multiplier (SECTOR has ~13 non-zero alphas per example, which the
# restricted set can only collect one per visit).
#
# Algorithm 2.1 / 3.1 with the Section 2.1 heuristics (the driver sdm_run):
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
# the pool cannot grow); the Python wrapper allocates everything else.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.stdlib cimport malloc, realloc, free
from libc.string cimport memcpy, memset
from libc.math cimport fabs, INFINITY
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
import numpy as np
from csr cimport CSR, make_csr, sq_norm_row
from sdm_sub cimport FREE, AT_LO, AT_HI, sub_iter_cap


# ------------------------------------------------------------------ sub-problems

cdef int cs_subproblem(int64_t n, double A, const double* g, const double* b, double* d,
                       char* inW, int max_it) noexcept nogil:
    """Solve (10) over n variables: min 1/2 A ||d||^2 + g.d, d <= b, sum d = 0.

    b >= 0 (b_m = C_i^m - alpha_i^m) and A > 0.  Primal active-set method from
    d = 0 with the working set given in inW (1: held at its bound; only
    variables with b = 0 may start there).  On return d is the minimizer and
    inW[t] = 1 marks the variables held at their bound d_t = b_t exactly.
    Returns the number of iterations, or -1 if max_it stopped it (d is then
    feasible and no worse than 0).
    """
    cdef int64_t t, nF, block
    cdef int it = 0
    cdef double gbar, gref, sbar, sg, sb, step, p, dstar, mu, mu_min, tol, scale = 0.0
    for t in range(n):
        d[t] = 0.0
        if b[t] != 0.0:
            inW[t] = 0
        if fabs(g[t]) > scale:
            scale = fabs(g[t])
        if A * b[t] > scale:
            scale = A * b[t]
    tol = 1e-13 * (1.0 + scale)
    while True:
        it += 1
        if it > max_it:
            return -1
        # equality-constrained minimizer on the free set F
        nF = 0
        sg = 0.0
        sb = 0.0
        gref = 0.0
        for t in range(n):
            if inW[t]:
                sb += b[t]
            else:
                if nF == 0:
                    gref = g[t]          # sums of g - gref: exact for tied gradients
                nF += 1
                sg += g[t] - gref
        if nF == 0:
            return it
        # beta = mean_F g - A sum_W b / |F|; d_t = (beta - g_t) / A is computed as
        # (mean_F g - g_t) / A - sum_W b / |F| so that a tiny A does not magnify the
        # rounding of beta into the equality constraint
        gbar = gref + sg / nF
        sbar = sb / nF
        # ratio test: the first bound met on the way from d to that minimizer
        step = 1.0
        block = -1
        for t in range(n):
            if not inW[t]:
                dstar = (gbar - g[t]) / A - sbar
                p = dstar - d[t]
                if p > 0.0 and dstar > b[t]:
                    if (b[t] - d[t]) / p < step:
                        step = (b[t] - d[t]) / p
                        block = t
        if step < 0.0:
            step = 0.0
        for t in range(n):
            if not inW[t]:
                d[t] += step * ((gbar - g[t]) / A - sbar - d[t])
        if block >= 0:
            d[block] = b[block]
            inW[block] = 1
            continue
        # at the minimizer: multipliers mu_t = beta - g_t - A b_t of the bounds in W
        block = -1
        mu_min = -tol
        for t in range(n):
            if inW[t]:
                mu = (gbar - g[t]) - A * (sbar + b[t])
                if mu < mu_min:
                    mu_min = mu
                    block = t
        if block < 0:
            return it
        inW[block] = 0


cdef int ww_subproblem(int64_t n, double A, const double* g, const double* lo,
                       const double* hi, double* d, char* flag, int max_it) noexcept nogil:
    """Solve (21) restricted to n variables:
    min 1/2 A ||d||^2 + 1/2 A (sum d)^2 + g.d,  lo <= d <= hi  (lo <= 0 <= hi, A > 0).

    Primal active-set method from d = 0 with the working set given in flag
    (AT_LO allowed only where lo = 0, AT_HI only where hi = 0, else FREE).  On
    return flag[t] = AT_LO / AT_HI marks the variables held at that bound
    exactly, FREE the others.  Returns iterations, or -1 if max_it stopped it.
    """
    cdef int64_t t, nF, block
    cdef int it = 0, side
    cdef double T, sW, sg, step, p, dstar, grad, viol, worst, tol, scale = 0.0
    for t in range(n):
        d[t] = 0.0
        if (flag[t] == AT_LO and lo[t] != 0.0) or (flag[t] == AT_HI and hi[t] != 0.0) \
                or flag[t] > AT_HI:
            flag[t] = FREE
        if fabs(g[t]) > scale:
            scale = fabs(g[t])
        if A * hi[t] > scale:
            scale = A * hi[t]
        if -A * lo[t] > scale:
            scale = -A * lo[t]
    tol = 1e-13 * (1.0 + scale)
    while True:
        it += 1
        if it > max_it:
            return -1
        nF = 0
        sW = 0.0
        sg = 0.0
        for t in range(n):
            if flag[t] == FREE:
                nF += 1
                sg += g[t]
            else:
                sW += d[t]
        # free minimizer: d_t = -g_t / A - T, T = total sum at that point
        T = (sW - sg / A) / (1.0 + nF)
        step = 1.0
        block = -1
        side = FREE
        for t in range(n):
            if flag[t] == FREE:
                dstar = -g[t] / A - T
                p = dstar - d[t]
                if p > 0.0 and dstar > hi[t]:
                    if (hi[t] - d[t]) / p < step:
                        step = (hi[t] - d[t]) / p
                        block = t
                        side = AT_HI
                elif p < 0.0 and dstar < lo[t]:
                    if (lo[t] - d[t]) / p < step:
                        step = (lo[t] - d[t]) / p
                        block = t
                        side = AT_LO
        if step < 0.0:
            step = 0.0
        for t in range(n):
            if flag[t] == FREE:
                d[t] += step * (-g[t] / A - T - d[t])
        if block >= 0:
            d[block] = hi[block] if side == AT_HI else lo[block]
            flag[block] = side
            continue
        # multipliers: gradient A d_t + A sum(d) + g_t must be >= 0 at lo, <= 0 at hi
        T = 0.0
        for t in range(n):
            T += d[t]
        block = -1
        worst = tol
        for t in range(n):
            if flag[t] != FREE:
                grad = A * (d[t] + T) + g[t]
                viol = -grad if flag[t] == AT_LO else grad
                if viol > worst:
                    worst = viol
                    block = t
        if block < 0:
            return it
        flag[block] = FREE
from rng cimport shuffle
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    NO_MEMORY = 2

# trace columns: kind (0 full loop, 1 shrunk phase, 2 measuring pass), eps_cur, max v, dual f, seconds,
# effective loops so far, loops so far
cdef int TRACE_COLS = 7

# the loops poll for Ctrl-C / stop requests every POLL_EVERY visits (a power of two)
cdef enum:
    POLL_EVERY = 256


cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


# ------------------------------------------------------------------ sparse alpha pool

ctypedef struct Pool:
    int32_t* cls        # class of each stored alpha
    double* val         # its value
    int64_t* off        # start of example i's block
    int32_t* cnt        # entries in use
    int32_t* cap        # block size
    int64_t n           # examples
    int64_t size        # allocated entries
    int64_t used        # entries handed out (end of the last block)
    int64_t live        # sum of cap (used - live: abandoned blocks)
    int32_t max_cap     # k - 1


cdef int pool_init(Pool* P, int64_t n, int32_t max_cap, int64_t size) noexcept nogil:
    """Empty blocks for n examples and room for `size` entries; -1 when out of memory."""
    if size < 16:
        size = 16
    P.n = n
    P.size = size
    P.used = 0
    P.live = 0
    P.max_cap = max_cap if max_cap > 0 else 1
    P.cls = <int32_t*>malloc(size * sizeof(int32_t))
    P.val = <double*>malloc(size * sizeof(double))
    P.off = <int64_t*>malloc((n + 1) * sizeof(int64_t))
    P.cnt = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    P.cap = <int32_t*>malloc((n + 1) * sizeof(int32_t))
    if P.cls == NULL or P.val == NULL or P.off == NULL or P.cnt == NULL or P.cap == NULL:
        return -1
    memset(P.off, 0, (n + 1) * sizeof(int64_t))
    memset(P.cnt, 0, (n + 1) * sizeof(int32_t))
    memset(P.cap, 0, (n + 1) * sizeof(int32_t))
    return 0


cdef void pool_free(Pool* P) noexcept nogil:
    free(P.cls)
    free(P.val)
    free(P.off)
    free(P.cnt)
    free(P.cap)
    P.cls = NULL
    P.val = NULL
    P.off = NULL
    P.cnt = NULL
    P.cap = NULL


cdef int pool_compact(Pool* P, int64_t extra) noexcept nogil:
    """Copy every block, in example order, into fresh arrays with room for `extra` more."""
    cdef int64_t size = 2 * (P.live + extra) + 16, i, pos = 0
    cdef int32_t* cls = <int32_t*>malloc(size * sizeof(int32_t))
    cdef double* val = <double*>malloc(size * sizeof(double))
    if cls == NULL or val == NULL:
        free(cls)
        free(val)
        return -1
    for i in range(P.n):
        if P.cnt[i] > 0:
            memcpy(cls + pos, P.cls + P.off[i], P.cnt[i] * sizeof(int32_t))
            memcpy(val + pos, P.val + P.off[i], P.cnt[i] * sizeof(double))
        P.off[i] = pos
        pos += P.cap[i]
    free(P.cls)
    free(P.val)
    P.cls = cls
    P.val = val
    P.size = size
    P.used = pos
    return 0


cdef void pool_trim(Pool* P) noexcept nogil:
    """Shrink every block to its entries plus one spare when the blocks hold more than
    twice the entries (e.g. after the first Weston-Watkins loops), so that memory
    follows the non-zeros; a failed allocation leaves the pool as it was."""
    cdef int64_t i, total = 0, size, pos = 0
    cdef int32_t* cls
    cdef double* val
    for i in range(P.n):
        total += P.cnt[i]
    if P.used <= 2 * (total + P.n) + 1024:
        return
    size = 2 * (total + P.n) + 16
    cls = <int32_t*>malloc(size * sizeof(int32_t))
    val = <double*>malloc(size * sizeof(double))
    if cls == NULL or val == NULL:
        free(cls)
        free(val)
        return
    for i in range(P.n):
        if P.cnt[i] > 0:
            memcpy(cls + pos, P.cls + P.off[i], P.cnt[i] * sizeof(int32_t))
            memcpy(val + pos, P.val + P.off[i], P.cnt[i] * sizeof(double))
        P.off[i] = pos
        P.cap[i] = P.cnt[i] + 1 if P.cnt[i] < P.max_cap else P.cnt[i]
        pos += P.cap[i]
    free(P.cls)
    free(P.val)
    P.cls = cls
    P.val = val
    P.size = size
    P.used = pos
    P.live = pos


cdef int pool_reserve(Pool* P, int64_t i, int32_t need) noexcept nogil:
    """Make example i's block hold at least `need` (<= max_cap) entries, keeping its
    contents; the block moves to the end of the pool when it grows.  -1: no memory."""
    cdef int32_t newcap
    cdef int64_t newsize
    cdef int32_t* cls
    cdef double* val
    if need <= P.cap[i]:
        return 0
    newcap = 2 * P.cap[i] if P.cap[i] > 0 else 2
    if newcap < need:
        newcap = need
    if newcap > P.max_cap:
        newcap = P.max_cap if P.max_cap >= need else need
    if P.used + newcap > P.size:
        if 2 * (P.used - P.live) > P.used:
            if pool_compact(P, newcap) != 0:
                return -1
        if P.used + newcap > P.size:
            newsize = 2 * P.size
            if newsize < P.used + newcap:
                newsize = P.used + newcap
            cls = <int32_t*>realloc(P.cls, newsize * sizeof(int32_t))
            if cls == NULL:
                return -1
            P.cls = cls
            val = <double*>realloc(P.val, newsize * sizeof(double))
            if val == NULL:
                return -1
            P.val = val
            P.size = newsize
    if P.cnt[i] > 0:
        memcpy(P.cls + P.used, P.cls + P.off[i], P.cnt[i] * sizeof(int32_t))
        memcpy(P.val + P.used, P.val + P.off[i], P.cnt[i] * sizeof(double))
    P.off[i] = P.used
    P.live += newcap - P.cap[i]
    P.cap[i] = newcap
    P.used += newcap
    return 0


# ------------------------------------------------------------------ solver state

ctypedef struct SDM:
    CSR X
    const int64_t* rows
    const int32_t* y
    const double* U     # U_i = C c_i
    const double* A     # A_i = ||x_i||^2
    int64_t l
    int64_t k
    double* W           # n_weights x k, row-major
    double* ay          # CS: alpha_i^{y_i}
    Pool P
    double* g           # k: g_i^m (CS) / scores then g_i^m (WW)
    double* a           # k: dense alpha of the current example; 0 between examples
    char* mark          # k: membership marks; 0 between examples
    int32_t* S          # k: classes of the sub-problem
    double* gs          # k: their gradients
    double* lo          # k: lower bounds on d (WW)
    double* hi          # k: upper bounds on d
    double* ds          # k: the sub-problem's solution
    char* flag          # k: the bounds it holds
    int32_t* cm         # k + 1: columns of W that change
    double* cd          # k + 1: their coefficients (w_m += cd x_i)
    double f            # dual objective (4) / (16), kept up to date
    int64_t evals       # g_i^m evaluations so far
    int64_t sub_caps    # sub-problems stopped by their iteration cap
    int max_sub_it
    int full_sub        # full loops: solve (10) / (21) over every class, not the restricted set
    int dense_ratio     # shrunk visits compute all k scores when n_classes * dense_ratio >= k
    Stop* stop          # polled every POLL_EVERY visits (csrc/interrupt.pxd)
    double sigma        # W-steps scaled by sigma: 1 serial, sigma' in a CoCoA+ local pass
    int64_t polled      # evals at the last poll


cdef inline void scores_all(SDM* s, int64_t row, double* h) noexcept nogil:
    """h[m] = x_row . w_m for every class m."""
    cdef const int32_t* ind = s.X.indices
    cdef const double* val = s.X.data
    cdef int64_t p, m, k = s.k, end = s.X.indptr[row + 1]
    cdef double xv
    cdef double* wr
    for m in range(k):
        h[m] = 0.0
    for p in range(s.X.indptr[row], end):
        xv = val[p]
        wr = s.W + <int64_t>ind[p] * k
        for m in range(k):
            h[m] += xv * wr[m]
    if s.X.bias > 0:
        xv = s.X.bias
        wr = s.W + s.X.n_features * k
        for m in range(k):
            h[m] += xv * wr[m]


cdef inline void scores_some(SDM* s, int64_t row, const int32_t* cls, int64_t n,
                             double* h) noexcept nogil:
    """h[t] += x_row . w_{cls[t]} for t < n (h holds the starting values)."""
    cdef const int32_t* ind = s.X.indices
    cdef const double* val = s.X.data
    cdef int64_t p, t, k = s.k, end = s.X.indptr[row + 1]
    cdef double xv
    cdef double* wr
    for p in range(s.X.indptr[row], end):
        xv = val[p]
        wr = s.W + <int64_t>ind[p] * k
        for t in range(n):
            h[t] += xv * wr[cls[t]]
    if s.X.bias > 0:
        xv = s.X.bias
        wr = s.W + s.X.n_features * k
        for t in range(n):
            h[t] += xv * wr[cls[t]]


cdef inline void update_w(SDM* s, int64_t row, int64_t nchg) noexcept nogil:
    """w_{cm[c]} += cd[c] x_row for c < nchg (sigma cd[c] x_row when s.sigma != 1: a
    CoCoA+ local pass, sdm_local_pass; cd is scaled in place)."""
    cdef const int32_t* ind = s.X.indices
    cdef const double* val = s.X.data
    cdef int64_t p, c, k = s.k, end = s.X.indptr[row + 1]
    cdef double xv
    cdef double* wr
    if nchg == 0:
        return
    if s.sigma != 1.0:
        for c in range(nchg):
            s.cd[c] = s.cd[c] * s.sigma
    for p in range(s.X.indptr[row], end):
        xv = val[p]
        wr = s.W + <int64_t>ind[p] * k
        for c in range(nchg):
            wr[s.cm[c]] += s.cd[c] * xv
    if s.X.bias > 0:
        xv = s.X.bias
        wr = s.W + s.X.n_features * k
        for c in range(nchg):
            wr[s.cm[c]] += s.cd[c] * xv


cdef int store_alphas(SDM* s, int64_t i, int64_t n, int32_t yi) noexcept nogil:
    """Rewrite example i's sparse block: its entries outside S[0:n] unchanged, then the
    members of S (other than y_i) whose new value s.a[m] is non-zero.  Clears s.mark
    and s.a for S.  -1 when the pool cannot grow."""
    cdef Pool* P = &s.P
    cdef int64_t t, e, off, cnt = P.cnt[i], keep = 0
    cdef int32_t m, need
    for t in range(n):
        s.mark[s.S[t]] = 1
    off = P.off[i]
    for e in range(cnt):
        if not s.mark[P.cls[off + e]]:
            keep += 1
    need = <int32_t>keep
    for t in range(n):
        m = s.S[t]
        if m != yi and s.a[m] != 0.0:
            need += 1
    if pool_reserve(P, i, need) != 0:
        return -1
    off = P.off[i]
    keep = 0
    for e in range(cnt):
        m = P.cls[off + e]
        if not s.mark[m]:
            P.cls[off + keep] = m
            P.val[off + keep] = P.val[off + e]
            keep += 1
    for t in range(n):
        m = s.S[t]
        if m != yi and s.a[m] != 0.0:
            P.cls[off + keep] = m
            P.val[off + keep] = s.a[m]
            keep += 1
        s.mark[m] = 0
        s.a[m] = 0.0
    P.cnt[i] = <int32_t>keep
    return 0


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
    if s.full_sub:
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
    if n * s.dense_ratio >= s.k:
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
    if s.full_sub:
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
    if (n + 1) * s.dense_ratio >= s.k:
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


# ------------------------------------------------------------------ driver

cdef inline void _trace_row(SDM* s, double* trace, int64_t* n_trace, int kind, double eps_cur,
                            double vmax, double t0, double denom, int64_t n_loops) noexcept nogil:
    cdef double* row = trace + n_trace[0] * TRACE_COLS
    row[0] = kind
    row[1] = eps_cur
    row[2] = vmax
    row[3] = s.f
    row[4] = _now() - t0
    row[5] = s.evals / denom
    row[6] = n_loops
    n_trace[0] += 1


cdef inline int sdm_poll(SDM* s) noexcept nogil:
    """Poll s.stop, the g evaluations since the last poll being the work; returns 1 if
    the solve must stop."""
    cdef int64_t work = (s.evals - s.polled) * s.stop.per_row
    s.polled = s.evals
    return stop_poll(s.stop, work)


cdef double full_loop(SDM* s, int ww, int64_t* idx, int64_t n_idx, double lazy_eps,
                      uint64_t* rng, int* err) noexcept nogil:
    """One loop over all examples in a fresh random order; returns max v_i (eq. 6 / 18).

    Every example with v_i > 0 is updated, except that with lazy_eps > 0 the
    loop only measures until it meets a v_i >= lazy_eps: a loop that never
    does has moved nothing, so eq. 9 / 20 holds exactly at its end.  A stop (s.stop)
    ends the loop early."""
    cdef int64_t s_i
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


cdef int sdm_run(SDM* s, int ww, int64_t* idx, int64_t n_idx, int64_t* shr, double eps,
                 int shrinking, int cooling, double effort_cap, int max_iter, uint64_t* rng,
                 double* trace, int64_t* n_trace, int* n_full, int64_t* n_loops,
                 double* vfinal, void* callback) noexcept nogil:
    """Algorithm 2.1 (ww = 0) or 3.1 (ww = 1) with shrinking and cooling (Section 2.1).

    idx[0:n_idx] lists the examples taking part; shr has room for n_idx entries.
    Every example with v_i > 0 is updated when visited, as in the paper, so a
    loop that meets eq. 9 / 20 has moved alpha after measuring it.  At the
    target eps the loop after such a loop is lazy (see full_loop): if it meets
    the rule it has moved nothing and the solve ends with eq. 9 / 20 holding
    exactly at the returned alpha (trace kind 2); otherwise it has been an
    ordinary full loop.  Returns CONVERGED, MAX_ITER or NO_MEMORY; vfinal gets
    the max violation of the last full loop.  Once s.stop is stopped (Ctrl-C, an
    exception in the callback, a stop request) it returns MAX_ITER at once; the
    caller raises.
    """
    cdef double eps_cur = eps, vmax, v, t0 = _now(), evals0, denom
    cdef int64_t s_i, n_shr, j, kept
    cdef int err = 0, status = MAX_ITER, lazy = 0
    if cooling and eps < 1.0:
        eps_cur = 1.0
    denom = <double>s.k * <double>n_idx
    while n_full[0] < max_iter:
        # ---- full loop (lazy: the one that may certify)
        vmax = full_loop(s, ww, idx, n_idx, eps if lazy else 0.0, rng, &err)
        if sdm_poll(s):
            return MAX_ITER
        n_full[0] += 1
        n_loops[0] += 1
        vfinal[0] = vmax
        _trace_row(s, trace, n_trace, 2 if (lazy and vmax < eps) else 0, eps_cur, vmax, t0,
                   denom, n_loops[0])
        if callback != NULL:
            with gil:
                try:
                    (<object>callback)(2 if (lazy and vmax < eps) else 0, n_full[0], eps_cur,
                                       vmax, s.f, s.evals / denom)
                except BaseException as e:
                    stop_keep(s.stop, e)
            if s.stop.stopped:
                return MAX_ITER
        if err:
            return NO_MEMORY
        if lazy and vmax < eps:
            status = CONVERGED
            break
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
        if not shrinking:
            continue
        # ---- shrunk loops
        n_shr = 0
        for s_i in range(n_idx):
            j = idx[s_i]
            kept = ww_kept(s, j) if ww else cs_kept(s, j)
            if kept:
                shr[n_shr] = j
                n_shr += 1
        evals0 = s.evals
        vmax = 0.0
        while n_shr > 0:
            shuffle(rng, shr, n_shr)
            vmax = 0.0
            for s_i in range(n_shr):
                if ww:
                    v = ww_shrunk_step(s, shr[s_i], &err)
                else:
                    v = cs_shrunk_step(s, shr[s_i], &err)
                if v > vmax:
                    vmax = v
                if err:
                    break
                if (s_i & (POLL_EVERY - 1)) == POLL_EVERY - 1 and sdm_poll(s):
                    break
            if sdm_poll(s):
                return MAX_ITER
            n_loops[0] += 1
            if err or vmax < eps_cur or (s.evals - evals0) > effort_cap * denom:
                break
            # drop the examples that now meet the removal rule
            kept = 0
            for s_i in range(n_shr):
                j = shr[s_i]
                if (ww_kept(s, j) if ww else cs_kept(s, j)):
                    shr[kept] = j
                    kept += 1
            n_shr = kept
        _trace_row(s, trace, n_trace, 1, eps_cur, vmax, t0, denom, n_loops[0])
        if callback != NULL:
            with gil:
                try:
                    (<object>callback)(1, n_full[0], eps_cur, vmax, s.f, s.evals / denom)
                except BaseException as e:
                    stop_keep(s.stop, e)
            if s.stop.stopped:
                return MAX_ITER
        if err:
            return NO_MEMORY
    return status


# ------------------------------------------------------------------ Python entry points

cdef void _init_sdm(SDM* s, Stop* S, const int64_t[::1] indptr, const int32_t[::1] indices,
                    const double[::1] data, int64_t n_features, double bias,
                    const int64_t[::1] rows, const int32_t[::1] y, const double[::1] U, double* A,
                    double* W, double[::1] alpha_y, double[:, ::1] F, int32_t[:, ::1] I,
                    signed char[:, ::1] Cm, int64_t k, bint full_subproblem, int dense_ratio,
                    double sigma):
    """Point the SDM record of sdm_solve / sdm_local_pass at its inputs and the entry's
    work arrays (A: l, W: n_weights x k, F: 7 x (k + 1), I: 3 x (k + 1), Cm: 2 x (k + 1)),
    with the curvature scale sigma (1: the serial problem), the stop record S, and an
    empty alpha pool (pool_init fills it)."""
    cdef int64_t l = rows.shape[0]
    s.X = make_csr(indptr, indices, data, n_features, bias, 1, NULL)
    s.rows = &rows[0] if l > 0 else NULL
    s.y = &y[0] if l > 0 else NULL
    s.U = &U[0] if l > 0 else NULL
    s.A = A
    s.l = l
    s.k = k
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
    s.max_sub_it = sub_iter_cap(k)
    s.full_sub = full_subproblem
    s.dense_ratio = dense_ratio
    s.sigma = sigma
    stop_init(S, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    s.stop = S
    s.polled = 0
    s.P.cls = NULL
    s.P.val = NULL
    s.P.off = NULL
    s.P.cnt = NULL
    s.P.cap = NULL


cdef int _load_start(SDM* s, int ww, const int64_t* a_ptr, const int32_t* a_cls,
                     const double* a_val, double sigma, double* A, int64_t* idx,
                     int64_t* n_idx) noexcept nogil:
    """Load the start point (a_ptr, a_cls, a_val: the non-zero alpha_i^m, m != y_i, of
    each example) into the pool, blocks packed in example order; set A_i = sigma
    ||x_i||^2 (A: the array s.A reads); give the examples with U_i = 0 or x_i = 0 their closed-form alphas and
    list the others, the examples of the loops, in idx[0:n_idx].  Returns CONVERGED, or
    NO_MEMORY when the pool cannot grow."""
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
        A[i] = sigma * Ai
        if s.U[i] <= 0.0:
            s.P.cnt[i] = 0
            s.ay[i] = 0.0
        elif Ai <= 0.0:
            if pool_reserve(&s.P, i, <int32_t>(k - 1)) != 0:
                return NO_MEMORY
            if ww:
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


def request_stop():
    """Make every solve of this module running now, in any thread, stop and raise
    KeyboardInterrupt (csrc/interrupt.pxd; linsvm.interrupt.stop_running_solves)."""
    stop_request()


def sdm_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              int64_t n_features, double bias, const int64_t[::1] rows, const int32_t[::1] y,
              int64_t n_classes, const double[::1] U, bint weston_watkins, double[::1] alpha_y,
              const int64_t[::1] a_ptr, const int32_t[::1] a_cls, const double[::1] a_val,
              double eps, bint shrinking, bint cooling, double effort_cap, int max_iter,
              uint64_t seed, bint full_subproblem, int dense_ratio, object callback):
    """Solve the Crammer-Singer dual (4) (weston_watkins False, Algorithm 2.1) or the
    Weston-Watkins dual (16) (True, Algorithm 3.1) by SDM with shrinking and cooling.

    The start point is given sparsely: alpha_y (CS: alpha_i^{y_i}, len(rows); updated
    in place; ignored for WW) and, per example i, the pairs
    (a_cls[p], a_val[p]) for a_ptr[i] <= p < a_ptr[i+1]: its non-zero alpha_i^m,
    m != y_i.  It must be feasible (CS: alpha_i^m <= 0 for m != y_i, alpha_y = -sum,
    alpha_y <= U_i; WW: 0 <= alpha <= U_i), with classes distinct, != y_i and in
    [0, n_classes); every buffer must be validated by the caller (indices, rows,
    y in [0, n_classes), U >= 0 finite).  U_i = C c_i.  full_subproblem: solve
    (10) / (21) over every class in full loops (else the paper's restricted
    set); dense_ratio: a shrunk visit over n classes computes all k scores
    from contiguous rows of W when n * dense_ratio >= k (gathering n columns
    otherwise); the answer is the same either way.

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
    cdef int64_t l = rows.shape[0], k = n_classes, i, e, p, m, n_idx = 0, nw
    cdef int64_t n_trace = 0, n_loops = 0, total = 0
    cdef int n_full = 0, status = CONVERGED, ww = weston_watkins
    cdef uint64_t rng = seed
    cdef double vfinal = 0.0, sq = 0.0, sum_a = 0.0, primal = 0.0, hy, xi
    cdef double s_loop, r, r_max, seed_scale = 1.0
    cdef int64_t j
    cdef SDM s
    cdef Stop S
    cdef int32_t c
    nw = n_features + (1 if bias > 0 else 0)
    if k < 2:
        raise ValueError("need at least two classes")
    if alpha_y.shape[0] != l or y.shape[0] != l or U.shape[0] != l or a_ptr.shape[0] != l + 1:
        raise ValueError("inconsistent lengths")
    W_arr = np.zeros((nw, k), dtype=np.float64)
    A_arr = np.zeros(max(l, 1), dtype=np.float64)
    idx_arr = np.empty(max(l, 1), dtype=np.int64)
    shr_arr = np.empty(max(l, 1), dtype=np.int64)
    fk = np.zeros((7, k + 1), dtype=np.float64)
    ik = np.zeros((3, k + 1), dtype=np.int32)
    ck = np.zeros((2, k + 1), dtype=np.int8)
    trace_arr = np.zeros((3 * max(max_iter, 1) + 2, TRACE_COLS), dtype=np.float64)
    cdef double[:, ::1] Wv = W_arr, F = fk, tr = trace_arr
    cdef double[::1] Av = A_arr
    cdef int32_t[:, ::1] I = ik
    cdef signed char[:, ::1] Cm = ck
    cdef int64_t[::1] idx = idx_arr, shr = shr_arr
    cdef void* cb = <void*>callback if callback is not None else NULL
    _init_sdm(&s, &S, indptr, indices, data, n_features, bias, rows, y, U, &Av[0],
              &Wv[0, 0] if nw > 0 else NULL, alpha_y, F, I, Cm, k, full_subproblem, dense_ratio,
              1.0)
    try:
        if pool_init(&s.P, l, <int32_t>(k - 1), a_ptr[l] + l // 4 + 16) != 0:
            raise MemoryError("SDM: cannot allocate the alpha pool")
        with nogil:
            status = _load_start(&s, ww, &a_ptr[0], &a_cls[0] if a_cls.shape[0] else NULL,
                                 &a_val[0] if a_val.shape[0] else NULL, 1.0, &Av[0], &idx[0],
                                 &n_idx)
            if status == CONVERGED:
                # W from alpha: (3) for CS, (15) for WW
                for i in range(l):
                    if not ww and alpha_y[i] != 0.0:
                        s.cm[0] = y[i]
                        s.cd[0] = alpha_y[i]
                        update_w(&s, rows[i], 1)
                    e = 0
                    for p in range(s.P.cnt[i]):
                        s.cm[e] = s.P.cls[s.P.off[i] + p]
                        s.cd[e] = s.P.val[s.P.off[i] + p]
                        if ww:
                            s.cd[e] = -s.cd[e]
                            sum_a += s.P.val[s.P.off[i] + p]
                        e += 1
                    if ww and e > 0:
                        s.cm[e] = y[i]
                        s.cd[e] = 0.0
                        for p in range(e):
                            s.cd[e] -= s.cd[p]
                        e += 1
                    update_w(&s, rows[i], e)
                    if not ww:
                        sum_a += alpha_y[i]
                for p in range(nw * k):
                    sq += s.W[p] * s.W[p]
                s.f = 0.5 * sq - sum_a
                # a seeded start: move the looping examples' alphas along the ray r alpha,
                # r >= 1, to the best dual value that stays feasible (-f = r S - r^2 ||W||^2 / 2
                # + const, S their sum of alpha^{y_i} (CS) or alpha (WW)).  Only r > 1: it
                # keeps every alpha at a bound there (zeros stay zero, and an alpha at U_i
                # makes r_max = 1), where r < 1 would pull them all inside the box
                s_loop = 0.0
                r_max = INFINITY
                for j in range(n_idx):
                    i = idx[j]
                    if ww:
                        for p in range(s.P.off[i], s.P.off[i] + s.P.cnt[i]):
                            s_loop += s.P.val[p]
                            if U[i] / s.P.val[p] < r_max:
                                r_max = U[i] / s.P.val[p]
                    elif alpha_y[i] > 0.0:
                        s_loop += alpha_y[i]
                        if U[i] / alpha_y[i] < r_max:
                            r_max = U[i] / alpha_y[i]
                if s_loop > 0.0:
                    r = s_loop / sq if sq > 0.0 else r_max
                    if r > r_max:
                        r = r_max
                    if r == r and r != INFINITY and r > 1.0:
                        for j in range(n_idx):
                            i = idx[j]
                            for p in range(s.P.off[i], s.P.off[i] + s.P.cnt[i]):
                                s.P.val[p] = s.P.val[p] * r
                                if ww and s.P.val[p] > U[i]:
                                    s.P.val[p] = U[i]
                            if not ww:
                                alpha_y[i] = alpha_y[i] * r
                                if alpha_y[i] > U[i]:
                                    alpha_y[i] = U[i]
                        for p in range(nw * k):
                            s.W[p] = s.W[p] * r
                        s.f = 0.5 * r * r * sq - (sum_a - s_loop) - r * s_loop
                        seed_scale = r
                if n_idx > 0:
                    status = sdm_run(&s, ww, &idx[0], n_idx, &shr[0], eps, shrinking, cooling,
                                     effort_cap, max_iter, &rng, &tr[0, 0], &n_trace, &n_full,
                                     &n_loops, &vfinal, cb)
        stop_raise(&S)                      # Ctrl-C: the pool is freed below as it unwinds
        if status == NO_MEMORY:
            raise MemoryError("SDM: cannot grow the alpha pool")
        # export the solution (non-zeros only) and the objectives
        for i in range(l):
            total += s.P.cnt[i]
        ptr_out = np.zeros(l + 1, dtype=np.int64)
        cls_out = np.empty(total, dtype=np.int32)
        val_out = np.empty(total, dtype=np.float64)
        scores_arr = np.empty(k, dtype=np.float64)
        stat = dict(status=status, n_full=n_full, n_loops=n_loops,
                    effective_loops=s.evals / (<double>k * n_idx) if n_idx > 0 else 0.0,
                    max_violation=vfinal, subproblem_caps=s.sub_caps, seed_scale=seed_scale)
        stat.update(_export_and_objectives(&s, ww, ptr_out, cls_out, val_out, scores_arr))
        stat.update(W=W_arr, alpha_y=np.asarray(alpha_y), a_ptr=ptr_out, a_cls=cls_out,
                    a_val=val_out, n_nonzero=int(total) + int(np.count_nonzero(alpha_y)) * (1 - ww),
                    trace=trace_arr[:n_trace].copy())
        return stat
    finally:
        pool_free(&s.P)


cdef dict _export_and_objectives(SDM* s, int ww, int64_t[::1] ptr, int32_t[::1] cls,
                                 double[::1] val, double[::1] h):
    """Copy the pool into CSR arrays; return the primal and dual objectives."""
    cdef int64_t i, p, q = 0, m, k = s.k, nw = s.X.n_weights
    cdef int32_t yi
    cdef double sq = 0.0, sum_a = 0.0, loss = 0.0, xi, hy, mg
    with nogil:
        for i in range(s.l):
            ptr[i] = q
            for p in range(s.P.cnt[i]):
                cls[q] = s.P.cls[s.P.off[i] + p]
                val[q] = s.P.val[s.P.off[i] + p]
                if ww:
                    sum_a += val[q]
                q += 1
            if not ww:
                sum_a += s.ay[i]
            if s.U[i] <= 0.0:
                continue
            scores_all(s, s.rows[i], &h[0])
            yi = s.y[i]
            hy = h[yi]
            if ww:
                xi = 0.0
                for m in range(k):
                    if m != yi:
                        mg = 1.0 - hy + h[m]
                        if mg > 0.0:
                            xi += mg
            else:
                xi = 0.0
                for m in range(k):
                    mg = (1.0 if m != yi else 0.0) + h[m] - hy
                    if mg > xi:
                        xi = mg
            loss += s.U[i] * xi
        ptr[s.l] = q
        for p in range(nw * k):
            sq += s.W[p] * s.W[p]
    return dict(primal=0.5 * sq + loss, dual=sum_a - 0.5 * sq)


# ------------------------------------------------------------------ CoCoA+ local passes
#
# A distributed sdm-cs / sdm-ww (linsvm/solvers/cocoa.py) keeps the alphas of one MPI
# rank's block of examples and W replicated.  Each round runs sdm_run on the block's
# CoCoA+ subproblem (Ma et al. 2015, adding, sigma' = number of ranks): the sub-problem
# of example i sees the scores of V = W + sigma' dW (dW = the change of W this round
# from this block) and the curvature sigma' A_i in place of A_i, i.e. the same code with
# s.A = sigma' ||x_i||^2 and W-steps scaled by sigma' (update_w).  With one rank the
# subproblem is the serial dual.

cdef double _block_loss(SDM* s, int ww, double* h) noexcept nogil:
    """sum_i U_i xi_i over the block at s.W: the block's share of (1) / (14)."""
    cdef int64_t i, m, k = s.k
    cdef int32_t yi
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


def sdm_local_pass(*, const int64_t[::1] indptr, const int32_t[::1] indices,
                   const double[::1] data, int64_t n_features, double bias,
                   const int64_t[::1] rows, const int32_t[::1] y, int64_t n_classes,
                   const double[::1] U, bint weston_watkins, double[::1] alpha_y,
                   const int64_t[::1] a_ptr, const int32_t[::1] a_cls,
                   const double[::1] a_val, const double[:, ::1] W, double[:, ::1] V,
                   double sigma, double eps, bint shrinking, double effort_cap, int max_iter,
                   uint64_t[::1] rng, bint full_subproblem, int dense_ratio):
    """One CoCoA+ round of this block (see the notes above).

    The block's alphas come in as sdm_solve's start point (alpha_y updated in place;
    feasible, validated by the caller) and W (n_weights x n_classes) is the replicated
    W(alpha) of every block.  Examples with U_i = 0 or x_i = 0 get their closed-form
    alphas first (as in sdm_solve; they do not move W).  Then the block's share of the
    certificate is taken at (W, alpha) -- loss: sum_i U_i xi_i at W; dual: the separable
    dual terms (CS: sum alpha_i^{y_i}, WW: sum alpha) -- and max_iter full loops of
    sdm_run (shrinking as given, no cooling, eps for its shrunk phases and its lazy
    stop) run on the local subproblem, moving alpha and V, which starts as W and ends
    as W + sigma dW.  rng (one uint64) is the block's random state, advanced.

    Returns a dict: status (0 the local rule met, 1 the loop cap, 2 out of memory),
    n_full, n_loops, loss, dual, the alphas after the pass (alpha_y, a_ptr, a_cls,
    a_val, non-zeros only), stopped (the exception that stopped the pass or None: the
    caller decides collectively)."""
    cdef int64_t l = rows.shape[0], k = n_classes, i, e, p, m, n_idx = 0, nw, total = 0
    cdef int64_t n_trace = 0, n_loops = 0
    cdef int n_full = 0, status = CONVERGED, ww = weston_watkins
    cdef double vfinal = 0.0, sum_a = 0.0, loss = 0.0
    cdef SDM s
    cdef Stop S
    nw = n_features + (1 if bias > 0 else 0)
    if k < 2:
        raise ValueError("need at least two classes")
    if alpha_y.shape[0] != l or y.shape[0] != l or U.shape[0] != l or a_ptr.shape[0] != l + 1 \
            or rng.shape[0] != 1:
        raise ValueError("inconsistent lengths")
    if W.shape[0] != nw or W.shape[1] != k or V.shape[0] != nw or V.shape[1] != k:
        raise ValueError("inconsistent weight shapes")
    A_arr = np.zeros(max(l, 1), dtype=np.float64)
    idx_arr = np.empty(max(l, 1), dtype=np.int64)
    shr_arr = np.empty(max(l, 1), dtype=np.int64)
    fk = np.zeros((7, k + 1), dtype=np.float64)
    ik = np.zeros((3, k + 1), dtype=np.int32)
    ck = np.zeros((2, k + 1), dtype=np.int8)
    trace_arr = np.zeros((3 * max(max_iter, 1) + 2, TRACE_COLS), dtype=np.float64)
    cdef double[:, ::1] F = fk, tr = trace_arr
    cdef double[::1] Av = A_arr
    cdef int32_t[:, ::1] I = ik
    cdef signed char[:, ::1] Cm = ck
    cdef int64_t[::1] idx = idx_arr, shr = shr_arr
    _init_sdm(&s, &S, indptr, indices, data, n_features, bias, rows, y, U, &Av[0],
              &V[0, 0] if nw > 0 else NULL, alpha_y, F, I, Cm, k, full_subproblem, dense_ratio,
              sigma)
    try:
        if pool_init(&s.P, l, <int32_t>(k - 1), a_ptr[l] + l // 4 + 16) != 0:
            raise MemoryError("SDM: cannot allocate the alpha pool")
        with nogil:
            for i in range(nw):
                for m in range(k):
                    V[i, m] = W[i, m]
            status = _load_start(&s, ww, &a_ptr[0], &a_cls[0] if a_cls.shape[0] else NULL,
                                 &a_val[0] if a_val.shape[0] else NULL, sigma, &Av[0], &idx[0],
                                 &n_idx)
            if status == CONVERGED:
                for i in range(l):
                    if ww:
                        for p in range(s.P.cnt[i]):
                            sum_a += s.P.val[s.P.off[i] + p]
                    else:
                        sum_a += alpha_y[i]
                loss = _block_loss(&s, ww, s.g)
                if n_idx > 0 and max_iter > 0:
                    status = sdm_run(&s, ww, &idx[0], n_idx, &shr[0], eps, shrinking, 0,
                                     effort_cap, max_iter, &rng[0], &tr[0, 0], &n_trace,
                                     &n_full, &n_loops, &vfinal, NULL)
        stopped = None
        try:
            if S.stopped:
                stop_raise(&S)
        except BaseException as exc:        # kept for the collective decision
            stopped = exc
        if status == NO_MEMORY:
            raise MemoryError("SDM: cannot grow the alpha pool")
        for i in range(l):
            total += s.P.cnt[i]
        ptr_out = np.zeros(l + 1, dtype=np.int64)
        cls_out = np.empty(total, dtype=np.int32)
        val_out = np.empty(total, dtype=np.float64)
        _export_pool(&s, ptr_out, cls_out, val_out)
        return dict(status=status if stopped is None else MAX_ITER, n_full=n_full,
                    n_loops=n_loops, loss=float(loss), dual=float(sum_a),
                    alpha_y=np.asarray(alpha_y), a_ptr=ptr_out, a_cls=cls_out, a_val=val_out,
                    stopped=stopped)
    finally:
        pool_free(&s.P)


cdef void _export_pool(SDM* s, int64_t[::1] ptr, int32_t[::1] cls, double[::1] val):
    """Copy the pool into CSR arrays (non-zeros only, example order)."""
    cdef int64_t i, p, q = 0
    for i in range(s.l):
        ptr[i] = q
        for p in range(s.P.cnt[i]):
            cls[q] = s.P.cls[s.P.off[i] + p]
            val[q] = s.P.val[s.P.off[i] + p]
            q += 1
    ptr[s.l] = q
