# SVMperf: the 1-slack cutting-plane solvers of Joachims, "Training Linear SVMs in
# Linear Time" (KDD 2006), Algorithm 1 (classification, OP2) and Algorithm 2
# (ordinal regression / ROC area, OP5).
#
# Problem (the paper's structural form, one slack xi shared by all constraints):
#
#     min_{w, xi >= 0}  1/2 w.w + Cp xi
#     s.t.  w.x_c >= b_c - xi   for every constraint c,
#
# Classification (OP2, per-example costs q_k >= 0, labels t_k = +-1, n examples):
#     c in {0,1}^n,  x_c = (1/n) sum_k c_k q_k t_k x_k,  b_c = (1/n) sum_k c_k q_k.
# Ordinal regression (OP5, pairs P = {(i, j): same query, level_i > level_j},
# pair weight v_ij = q_i q_j, m = sum_P v_ij), in the condensed form of Alg. 2:
#     x_c = (1/m) sum_k (c+_k - c-_k) x_k,  b_c = (1/(2m)) sum_k (c+_k + c-_k),
#     c+_i = q_i sum_{j: (i,j) in P, c_ij = 1} q_j,  c-_j = q_j sum_{i: (i,j) in P, c_ij = 1} q_i.
# linsvm's -c C maps to Cp = C n (classification) and Cp = C sum_k q_k (ordinal):
# then Cp xi' = C sum_k q_k max(0, 1 - t_k w.x_k), resp. (C n / m) sum_P v_ij hinge_ij.
#
# Algorithm 1 / 2 (the loop of perf_core):
#   4: (w, xi) = optimum over the working set W, solved in the dual (OP3 on W):
#          max_a  b.a - 1/2 a' G a   s.t.  a >= 0, sum a <= Cp,   G_ij = x_ci . x_cj,
#      w = sum_j a_j x_cj, xi = max(0, max_j (b_j - w.x_cj)), by a primal active-set
#      method with Newton steps on the free set (qp_active; SMO, qp_smo, as its
#      fallback), warm started from the previous alphas, solved to KKT violation
#      qp_tol (then b.a - 1/2 a'Ga is a certified lower bound on the optimum and
#      F(w) minus it bounds F(w) - F*).  SMO alone needed thousands of steps per
#      cut on these near-singular Gram matrices (a1a, C = 10: 5.5 s vs 0.07 s).
#   5-7: the most violated constraint at w (one pass over the data):
#      classification: c_k = [t_k w.x_k < 1]                               (oracle_binary)
#      ordinal: c_ij = [w.x_i - w.x_j < 1], counted by sorting the scores
#      of each query and two sweeps with a Fenwick tree over the levels    (ordinal_counts)
#      xi' = b_c - w.x_c  (the average weighted hinge loss at w)
#   9: stop when xi' <= xi + eps; otherwise add c to W (its vector x_c stored
#      dense, one new row and column of G) and go back to 4.
#      Guarded (a departure, linsvm/solvers/perf.py): the stop also needs the duality
#      gap F(w) - D = 1/2 w.w + Cp xi' - (b.a - 1/2 a'Ga) <= gap_guard F(w), so the
#      returned objective is certified within gap_guard of the optimum whatever eps
#      is in absolute terms (gap_guard = 0: the paper's rule alone).
#
# The constraint store (V: one dense row of n_weights per constraint, G, b,
# alpha) lives in buffers the Python wrapper allocates; when they are full the
# core returns NEED_ROOM and the wrapper re-enters with larger ones.  A
# constraint whose alpha stayed 0 for `inactive_iters` QP solutions is removed
# (it does not change the current optimum, so the QP value still grows by the
# Lemma 2 amount per cut); only ~20-40 of hundreds of cuts are ever active.  At the
# cap max_constraints, constraints with alpha = 0 are dropped, or, when every
# one is active, all are merged into their alpha-weighted average (a valid
# inequality implied by OP2/OP5 that leaves the current optimum unchanged), so
# Theorem 3's guarantee and Lemma 2's monotone progress still hold.
#
# Cost per iteration: one pass over the non-zeros (s n), the sort (n log n, Alg. 2),
# the sweeps (n log R), and O(|W| n_weights) for w and the new row of G.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset, memmove
from libc.math cimport sqrt, fabs, INFINITY
from libc.float cimport DBL_EPSILON
import numpy as np
from csr cimport (CSR, make_csr, matvec, rmatvec, dot_row, axpy_row, dot, scratch_doubles,
                 scatter_blocks)
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request
from comm cimport Comm, comm_from, comm_active, comm_sum, comm_allgather

# Status codes returned to Python.
cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    NEED_ROOM = 2

# Oracle kinds.
cdef enum:
    BINARY = 0
    ORDINAL = 1

ctypedef struct Item:
    double s          # score w.x_k
    int64_t k         # position of the example in `rows`

ctypedef struct Oracle:
    int kind
    const int64_t* rows       # n row numbers of X
    int64_t n
    const double* t           # BINARY: labels +-1 per position
    const double* q           # cost factor per position
    double scale              # 1/n (BINARY) or 1/m (ORDINAL)
    const int32_t* level      # ORDINAL: level of each position within its query, 0..R_g-1
    const int64_t* perm       # ORDINAL: positions grouped by query
    const int64_t* gptr       # ORDINAL: group g is perm[gptr[g]:gptr[g+1]]
    const int32_t* glevels    # ORDINAL: R_g, number of levels in group g
    int64_t n_groups
    Item* items               # ORDINAL: n scratch items
    Item* items2              # ORDINAL: n more, for the radix sort
    int64_t* counts           # ORDINAL: RADIX_PASSES * RADIX_SIZE counters
    double* fen               # ORDINAL: Fenwick tree, max R_g + 1 entries
    double* cplus             # ORDINAL: c+ per position (output)
    double* cminus            # ORDINAL: c- per position (output)
    double* s                 # scores w.x_k per position (output)
    double* u                 # coefficients of x_k in x_c per position (output)
    # distributed (csrc/comm.pxd): the rows are this rank's block
    const Comm* comm          # NULL or the serial record: a serial solve
    double* pk                # n_weights + 3 doubles: the packed allreduce
    double flag               # in: this rank's stop flag; out: the ranks' sum
    Oracle* glob              # ORDINAL, groups split over ranks: the oracle of all
                              # positions (every rank's, in rank order), or NULL
    int64_t offset            # glob: this rank's first position among all
    int64_t pad               # glob: max positions on one rank (the gather's width)
    const int64_t* per_rank   # glob: positions on each rank
    double* gat               # glob: size * pad gathered scores


# --------------------------------------------------------------------------- #
# The most violated constraint (lines 5-7 of Algorithm 1, 5-22 of Algorithm 2)
# --------------------------------------------------------------------------- #

cdef double oracle_binary(const CSR* X, Oracle* O, const double* w, double* xc,
                          double* rhs) noexcept nogil:
    """Lines 5-7 of Algorithm 1 at w.

    s_k = x_k.w; c_k = [t_k s_k < 1]; u_k = c_k q_k t_k / n;
    xc = sum_k u_k x_k (= x_c); rhs = (1/n) sum_k c_k q_k (= b_c).
    Returns xi' = b_c - w.x_c = (1/n) sum_k q_k max(0, 1 - t_k s_k), summed
    term by term (no cancellation).  One pass over the rows: serial runs fuse
    the dot product and the scatter of each row; with threads, matvec then rmatvec.
    """
    cdef int64_t k, n = O.n
    cdef double s, a, r = 0.0, xi = 0.0, sc = O.scale
    if X.n_threads > 1 or scatter_blocks(X, n) > 1:
        matvec(X, O.rows, n, w, O.s)
        for k in range(n):
            s = O.s[k]
            if O.t[k] * s < 1.0:
                O.u[k] = O.q[k] * O.t[k] * sc
                r += O.q[k]
                xi += O.q[k] * (1.0 - O.t[k] * s)
            else:
                O.u[k] = 0.0
        rmatvec(X, O.rows, n, O.u, xc)
    else:
        memset(xc, 0, X.n_weights * sizeof(double))
        for k in range(n):
            s = dot_row(X, O.rows[k], w)
            O.s[k] = s
            if O.t[k] * s < 1.0:
                a = O.q[k] * O.t[k] * sc
                O.u[k] = a
                if a != 0.0:
                    axpy_row(X, O.rows[k], a, xc)
                r += O.q[k]
                xi += O.q[k] * (1.0 - O.t[k] * s)
            else:
                O.u[k] = 0.0
    if comm_active(O.comm):
        reduce_cut(X, O, xc, &r, &xi)
    rhs[0] = r * sc
    return xi * sc


cdef void reduce_cut(const CSR* X, Oracle* O, double* xc, double* a, double* b) noexcept nogil:
    """Distributed: xc, a, b and the stop flag summed over the ranks, one allreduce
    of n_weights + 3 doubles (the cut's only communication besides glob's gather)."""
    cdef int64_t nw = X.n_weights
    memcpy(O.pk, xc, nw * sizeof(double))
    O.pk[nw] = a[0]
    O.pk[nw + 1] = b[0]
    O.pk[nw + 2] = O.flag
    comm_sum(O.comm, O.pk, nw + 3)
    memcpy(xc, O.pk, nw * sizeof(double))
    a[0] = O.pk[nw]
    b[0] = O.pk[nw + 1]
    O.flag = O.pk[nw + 2]


cdef enum:
    RADIX_BITS = 11
    RADIX_PASSES = 6               # 6 * 11 >= 64 key bits
    RADIX_SIZE = 2048
    SMALL_SORT = 32


cdef inline uint64_t desc_key(double s) noexcept nogil:
    """An unsigned key whose increasing order is the decreasing order of s
    (IEEE-754 bits, sign-folded; -0.0 and +0.0 get the same key)."""
    cdef uint64_t u
    s = s + 0.0
    memcpy(&u, &s, sizeof(double))
    if u >> 63:
        u = ~u
    else:
        u = u ^ (<uint64_t>1 << 63)
    return ~u


cdef void sort_desc(Item* a, Item* tmp, int64_t n, int64_t* cnt) noexcept nogil:
    """Sort a[0:n] by decreasing score, stably (ties keep their order).

    LSD radix sort on desc_key, 11 bits per pass, passes whose digit is the same
    for every item skipped (O(n) per pass, no comparisons: glibc qsort with a
    comparator was 10x slower on a9a's many tied scores); insertion sort below
    SMALL_SORT items.  tmp holds n items; cnt RADIX_PASSES * RADIX_SIZE counters.
    """
    cdef int64_t i, j, d, b, c, total
    cdef uint64_t key
    cdef Item x
    cdef Item* src = a
    cdef Item* dst = tmp
    cdef Item* sw
    cdef int64_t* cd
    if n <= SMALL_SORT:
        for i in range(1, n):
            x = a[i]
            j = i - 1
            while j >= 0 and desc_key(a[j].s) > desc_key(x.s):
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
        return
    memset(cnt, 0, RADIX_PASSES * RADIX_SIZE * sizeof(int64_t))
    for i in range(n):
        key = desc_key(a[i].s)
        for d in range(RADIX_PASSES):
            cnt[d * RADIX_SIZE + <int64_t>((key >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))] += 1
    for d in range(RADIX_PASSES):
        cd = cnt + d * RADIX_SIZE
        if cd[<int64_t>((desc_key(src[0].s) >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))] == n:
            continue
        total = 0
        for b in range(RADIX_SIZE):
            c = cd[b]
            cd[b] = total
            total += c
        for i in range(n):
            b = <int64_t>((desc_key(src[i].s) >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))
            dst[cd[b]] = src[i]
            cd[b] += 1
        sw = src
        src = dst
        dst = sw
    if src != a:
        memcpy(a, src, n * sizeof(Item))


cdef inline void fen_add(double* fen, int64_t R, int64_t lev, double v) noexcept nogil:
    """Fenwick tree over levels 0..R-1: add v at `lev`."""
    cdef int64_t i = lev + 1
    while i <= R:
        fen[i] += v
        i += i & (-i)


cdef inline double fen_prefix(const double* fen, int64_t cnt) noexcept nogil:
    """Sum of the values at levels 0..cnt-1."""
    cdef int64_t i = cnt
    cdef double s = 0.0
    while i > 0:
        s += fen[i]
        i -= i & (-i)
    return s


cdef void ordinal_counts(Oracle* O) noexcept nogil:
    """The condensed representation (c+, c-) of the most violated OP5 constraint.

    With c_ij = [s_i - s_j < 1] for every pair (i, j) of one query with
    level_i > level_j (proof of Theorem 5):
        c+_i = q_i sum { q_j : level_j < level_i, s_i - s_j < 1 },
        c-_j = q_j sum { q_i : level_i > level_j, s_i - s_j < 1 }.
    Per query (Algorithm 2, lines 5-22): sort by decreasing score (line 5, sort_desc), then
    sweep 1 walks i down the order while a second pointer inserts every j with
    s_i - s_j < 1 (a prefix of the order that only grows, since the difference
    is monotone in both scores, also in rounded arithmetic) into a Fenwick
    tree over the levels, weighted by q_j; c+_i is its prefix sum below
    level_i.  Sweep 2 is the mirror image (ascending order, levels counted
    from the top) for c-.  The Fenwick tree replaces the paper's per-level
    counters a and b, so all R levels are done in the same two sweeps:
    O(n log n + n log R) instead of O(n log n + R n).  The predicate is
    evaluated as the same floating-point expression s_i - s_j < 1 as a
    brute-force pair enumeration would, so the counts agree exactly.
    """
    cdef int64_t g, a, p, a0, ng, i, j, R
    cdef const double* s = O.s
    cdef Item* it = O.items
    for g in range(O.n_groups):
        a0 = O.gptr[g]
        ng = O.gptr[g + 1] - a0
        R = O.glevels[g]
        for a in range(ng):
            i = O.perm[a0 + a]
            O.cplus[i] = 0.0
            O.cminus[i] = 0.0
            it[a].s = s[i]
            it[a].k = i
        if R < 2 or ng < 2:
            continue
        sort_desc(it, O.items2, ng, O.counts)
        # sweep 1 (decreasing s_i): j enters when s_i - s_j < 1
        memset(O.fen, 0, (R + 1) * sizeof(double))
        p = 0
        for a in range(ng):
            i = it[a].k
            while p < ng and s[i] - it[p].s < 1.0:
                fen_add(O.fen, R, O.level[it[p].k], O.q[it[p].k])
                p += 1
            O.cplus[i] = O.q[i] * fen_prefix(O.fen, O.level[i])
        # sweep 2 (increasing s_j): i enters when s_i - s_j < 1; levels reversed
        memset(O.fen, 0, (R + 1) * sizeof(double))
        p = ng - 1
        for a in range(ng - 1, -1, -1):
            j = it[a].k
            while p >= 0 and it[p].s - s[j] < 1.0:
                fen_add(O.fen, R, R - 1 - O.level[it[p].k], O.q[it[p].k])
                p -= 1
            O.cminus[j] = O.q[j] * fen_prefix(O.fen, R - 1 - O.level[j])


cdef double oracle_ordinal(const CSR* X, Oracle* O, const double* w, double* xc,
                           double* rhs) noexcept nogil:
    """Lines 5-22 of Algorithm 2 at w: scores, (c+, c-), x_c and b_c.

    u_k = (c+_k - c-_k) / m, xc = sum_k u_k x_k, rhs = (1/(2m)) sum_k (c+_k + c-_k).
    Returns xi' = b_c - w.x_c = (1/m) sum_P v_ij max(0, 1 - (s_i - s_j)).
    """
    cdef int64_t k, n = O.n, rk, i, at
    cdef double r = 0.0, ws = 0.0, sc = O.scale
    cdef Oracle* G = O.glob
    matvec(X, O.rows, n, w, O.s)
    if G != NULL:
        # groups split over the ranks: every rank gathers all scores (pad doubles per
        # rank) and counts the same (c+, c-) of all positions; it keeps its own
        comm_allgather(O.comm, O.s, O.pad, O.gat)
        at = 0
        for rk in range(O.comm.size):
            for i in range(O.per_rank[rk]):
                G.s[at] = O.gat[rk * O.pad + i]
                at += 1
        ordinal_counts(G)
        for k in range(n):
            O.cplus[k] = G.cplus[O.offset + k]
            O.cminus[k] = G.cminus[O.offset + k]
    else:
        ordinal_counts(O)
    for k in range(n):
        O.u[k] = (O.cplus[k] - O.cminus[k]) * sc
        r += O.cplus[k] + O.cminus[k]
        ws += O.u[k] * O.s[k]
    rmatvec(X, O.rows, n, O.u, xc)
    if comm_active(O.comm):
        reduce_cut(X, O, xc, &r, &ws)
    rhs[0] = 0.5 * r * sc
    return rhs[0] - ws


cdef inline double oracle(const CSR* X, Oracle* O, const double* w, double* xc,
                          double* rhs) noexcept nogil:
    if O.kind == BINARY:
        return oracle_binary(X, O, w, xc, rhs)
    return oracle_ordinal(X, O, w, xc, rhs)


# --------------------------------------------------------------------------- #
# The working-set QP (line 4), solved in its dual
# --------------------------------------------------------------------------- #

cdef inline double qG(const double* G, int64_t ld, int64_t i, int64_t j) noexcept nogil:
    """G_ij, with index -1 the slack variable (a zero row and column)."""
    if i < 0 or j < 0:
        return 0.0
    return G[i * ld + j]


cdef void qp_gradient(const double* G, int64_t ld, const double* b, int64_t k,
                      const double* alpha, double* grad) noexcept nogil:
    """grad = G alpha - b (the gradient of the minimized form)."""
    cdef int64_t i, l
    cdef double d
    for i in range(k):
        d = -b[i]
        for l in range(k):
            if alpha[l] != 0.0:
                d += G[i * ld + l] * alpha[l]
        grad[i] = d


cdef int64_t qp_smo(const double* G, int64_t ld, const double* b, int64_t k, double Cp,
                    double* alpha, double* grad, double tol, int64_t max_steps,
                    double* viol_out) noexcept nogil:
    """Solve OP3 restricted to k constraints, warm started from `alpha`:

        min_a  f(a) = 1/2 a'Ga - b'a   s.t.  a >= 0,  sum_j a_j <= Cp.

    A slack variable a_s = Cp - sum_j a_j (index -1: zero row of G, b_s = 0)
    turns the constraint into sum = Cp.  KKT: with g = grad f (g_s = 0), a is
    optimal iff max_{a_j > 0} g_j <= min_j g_j.  Each SMO step (Fan, Chen & Lin
    2005 working-set selection) increases the variable i of smallest gradient
    and decreases the one j among a_j > 0 that maximizes the second-order gain
    (g_j - g_i)^2 / (G_ii + G_jj - 2 G_ij), by the exact minimizer of f on that
    line, clipped at a_j = 0.  G may be singular (repeated or dependent
    constraints): zero curvature is replaced by a tiny one, and the clip
    bounds the step.  Stops when the violation max_{a_j>0} g_j - min g <= tol
    (raised to a rounding floor 16 eps Cp max_j G_jj, below which the
    gradient cannot be resolved) or after max_steps steps; the gradient is then
    recomputed from scratch and the test repeated.  The duality gap of the
    result is sum_j a_j (g_j - min g) <= Cp * violation.
    On return grad = G a - b (fresh) and *viol_out the final violation.
    Returns the number of steps.
    """
    cdef int64_t i, j, l, jbest, steps = 0
    cdef double s = 0.0, sigma, gmin, gmax, best, d, a, tstep, lim, Gmax = 0.0, tau, tol_eff
    cdef double Qii, Qij, Qjj
    for j in range(k):
        if not (alpha[j] > 0.0):           # also clears a NaN
            alpha[j] = 0.0
        s += alpha[j]
    if s > Cp:
        d = Cp / s
        s = 0.0
        for j in range(k):
            alpha[j] *= d
            s += alpha[j]
    sigma = Cp - s if Cp > s else 0.0
    for j in range(k):
        if G[j * ld + j] > Gmax:
            Gmax = G[j * ld + j]
    tau = 1e-12 * Gmax if Gmax > 0.0 else 1e-300
    tol_eff = tol
    if 16.0 * DBL_EPSILON * Cp * Gmax > tol_eff:
        tol_eff = 16.0 * DBL_EPSILON * Cp * Gmax
    qp_gradient(G, ld, b, k, alpha, grad)
    while True:
        while steps < max_steps:
            # i: the variable to increase, smallest gradient (slack: 0)
            i = -1
            gmin = 0.0
            for j in range(k):
                if grad[j] < gmin:
                    gmin = grad[j]
                    i = j
            # the largest gradient among variables that can decrease
            gmax = 0.0 if sigma > 0.0 else -INFINITY
            for j in range(k):
                if alpha[j] > 0.0 and grad[j] > gmax:
                    gmax = grad[j]
            if gmax - gmin <= tol_eff:
                break
            # j: second-order choice among a_j > 0 (and the slack) with g_j > g_i
            Qii = qG(G, ld, i, i)
            jbest = -2
            best = -1.0
            if sigma > 0.0 and i >= 0:
                d = -gmin
                a = Qii if Qii > tau else tau
                best = d * d / a
                jbest = -1
            for j in range(k):
                if alpha[j] > 0.0 and grad[j] > gmin and j != i:
                    d = grad[j] - gmin
                    a = Qii + G[j * ld + j] - 2.0 * qG(G, ld, i, j)
                    if a < tau:
                        a = tau
                    if d * d / a > best:
                        best = d * d / a
                        jbest = j
            if jbest == -2:                  # cannot happen while gmax > gmin; be safe
                break
            j = jbest
            Qjj = qG(G, ld, j, j)
            Qij = qG(G, ld, i, j)
            d = (grad[j] if j >= 0 else 0.0) - gmin
            a = Qii + Qjj - 2.0 * Qij
            if a < tau:
                a = tau
            tstep = d / a
            lim = alpha[j] if j >= 0 else sigma
            if tstep >= lim:
                tstep = lim
            # move: a_i += t, a_j -= t, grad += t (G[:, i] - G[:, j])
            if i >= 0:
                alpha[i] += tstep
            else:
                sigma += tstep
            if j >= 0:
                alpha[j] = 0.0 if tstep == lim else alpha[j] - tstep
            else:
                sigma = 0.0 if tstep == lim else sigma - tstep
            for l in range(k):
                grad[l] += tstep * (qG(G, ld, l, i) - qG(G, ld, l, j))
            steps += 1
        qp_gradient(G, ld, b, k, alpha, grad)
        s = 0.0
        for j in range(k):
            s += alpha[j]
        sigma = Cp - s if Cp > s else 0.0
        gmin = 0.0
        gmax = 0.0 if sigma > 0.0 else -INFINITY
        for j in range(k):
            if grad[j] < gmin:
                gmin = grad[j]
            if alpha[j] > 0.0 and grad[j] > gmax:
                gmax = grad[j]
        viol_out[0] = gmax - gmin if gmax - gmin > 0.0 else 0.0
        if viol_out[0] <= tol_eff or steps >= max_steps:
            break
    return steps


cdef inline double qS(const double* G, int64_t ld, int64_t k, int64_t i, int64_t j) noexcept nogil:
    """Q_ij of the QP with the slack variable as index k (a zero row and column)."""
    if i >= k or j >= k:
        return 0.0
    return G[i * ld + j]


cdef int chol_solve(double* H, int64_t n, int64_t ldh, double delta, double* y) noexcept nogil:
    """Solve (H + delta I) y = y in place by Cholesky (H overwritten by its factor, lower
    triangle).  Returns -1, leaving y untouched, on a non-positive pivot."""
    cdef int64_t i, j, l
    cdef double d, s
    for j in range(n):
        d = H[j * ldh + j] + delta
        for l in range(j):
            d -= H[j * ldh + l] * H[j * ldh + l]
        if not (d > 0.0):
            return -1
        d = sqrt(d)
        H[j * ldh + j] = d
        for i in range(j + 1, n):
            s = H[i * ldh + j]
            for l in range(j):
                s -= H[i * ldh + l] * H[j * ldh + l]
            H[i * ldh + j] = s / d
    for i in range(n):                       # L z = y
        s = y[i]
        for l in range(i):
            s -= H[i * ldh + l] * y[l]
        y[i] = s / H[i * ldh + i]
    for i in range(n - 1, -1, -1):           # L' y = z
        s = y[i]
        for l in range(i + 1, n):
            s -= H[l * ldh + i] * y[l]
        y[i] = s / H[i * ldh + i]
    return 0


ctypedef struct QPWork:
    double* H          # (ld + 1)^2: reduced Hessian and its Cholesky factor
    int64_t* F         # ld + 1: free variables
    double* p          # ld + 1: search direction (index k: the slack)
    double* y          # ld + 1: right-hand side / solution


cdef int64_t qp_active(const double* G, int64_t ld, const double* b, int64_t k, double Cp,
                       double* alpha, double* grad, QPWork* Q, double tol, int64_t max_iter,
                       double* viol_out, int64_t* smo_steps) noexcept nogil:
    """Solve OP3 on k constraints (the problem of qp_smo) by a primal active-set method.

    Variables z = (alpha, slack), sum z = Cp, z >= 0; the free set F is
    {z_j > 0}, plus, once f is minimal on that face (max_F g - min_F g <= tol),
    the variable of smallest gradient (its multiplier is negative).  Each
    iteration takes the Newton step on the face: with r in F (the largest
    z_r) eliminated by p_r = -sum_{a != r} p_a, the reduced Hessian is
    H_ab = Q_ab - Q_ar - Q_rb + Q_rr and H p = -(g_a - g_r); H may be singular
    (dependent constraints), so it is solved with a relative ridge of 1e-13
    (raised x100 while Cholesky fails), and the step length is the exact
    minimizer of f along p, cut at the first variable that reaches 0.  Each
    iteration costs O(k |F| + |F|^3) and lowers f; near-singular faces end
    at a bound, regular ones at the face optimum, so warm starts after one new
    constraint finish in a few iterations.  When a step makes no progress
    (a direction that is not one of descent in rounded arithmetic) a burst of
    SMO steps (qp_smo) takes over.  Same stopping test and outputs as qp_smo;
    returns the number of active-set iterations (SMO steps in *smo_steps).
    """
    cdef int64_t i, j, a, c, r, nf, m, it = 0, jmin, blocking, tries
    cdef double s = 0.0, sigma, gmin, gmax, gFmin, gFmax, Gmax = 0.0, tol_eff, delta, hmax
    cdef double slope, curv, tstar, tmax, t, lim, z, gr, d
    cdef double* H = Q.H
    cdef int64_t ldh = ld + 1
    cdef int ok
    for j in range(k):
        if not (alpha[j] > 0.0):
            alpha[j] = 0.0
        s += alpha[j]
    if s > Cp:
        d = Cp / s
        for j in range(k):
            alpha[j] *= d
    s = 0.0
    for j in range(k):
        s += alpha[j]
    sigma = Cp - s if Cp > s else 0.0
    for j in range(k):
        if G[j * ld + j] > Gmax:
            Gmax = G[j * ld + j]
    tol_eff = tol
    if 16.0 * DBL_EPSILON * Cp * Gmax > tol_eff:
        tol_eff = 16.0 * DBL_EPSILON * Cp * Gmax
    viol_out[0] = 0.0
    while True:
        qp_gradient(G, ld, b, k, alpha, grad)
        s = 0.0
        for j in range(k):
            s += alpha[j]
        sigma = Cp - s if Cp > s else 0.0
        jmin = k
        gmin = 0.0
        gmax = 0.0 if sigma > 0.0 else -INFINITY
        for j in range(k):
            if grad[j] < gmin:
                gmin = grad[j]
                jmin = j
            if alpha[j] > 0.0 and grad[j] > gmax:
                gmax = grad[j]
        viol_out[0] = gmax - gmin if gmax > gmin else 0.0
        if viol_out[0] <= tol_eff or it >= max_iter:
            break
        it += 1
        # the free set; release jmin when f is minimal on the face
        nf = 0
        gFmin = INFINITY
        gFmax = -INFINITY
        r = -1
        z = -1.0
        for j in range(k + 1):
            if j < k:
                if not (alpha[j] > 0.0):
                    continue
                d = grad[j]
                lim = alpha[j]
            else:
                if not (sigma > 0.0):
                    continue
                d = 0.0
                lim = sigma
            Q.F[nf] = j
            nf += 1
            if d < gFmin:
                gFmin = d
            if d > gFmax:
                gFmax = d
            if lim > z:
                z = lim
                r = j
        if nf == 0 or gFmax - gFmin <= tol_eff:
            Q.F[nf] = jmin
            nf += 1
        ok = 0
        if nf >= 2:
            # put r last; F[0:m] are the eliminated-coordinate variables
            m = nf - 1
            for a in range(nf):
                if Q.F[a] == r:
                    Q.F[a] = Q.F[m]
                    Q.F[m] = r
                    break
            gr = grad[r] if r < k else 0.0
            delta = 0.0
            for tries in range(8):
                hmax = 0.0
                for a in range(m):
                    i = Q.F[a]
                    for c in range(a + 1):
                        j = Q.F[c]
                        d = (qS(G, ld, k, i, j) - qS(G, ld, k, i, r) - qS(G, ld, k, r, j)
                             + qS(G, ld, k, r, r))
                        H[a * ldh + c] = d
                        H[c * ldh + a] = d
                    if H[a * ldh + a] > hmax:
                        hmax = H[a * ldh + a]
                    Q.y[a] = -((grad[i] if i < k else 0.0) - gr)
                if tries == 0:
                    delta = 1e-13 * hmax if hmax > 0.0 else 1e-300
                else:
                    delta *= 100.0
                if chol_solve(H, m, ldh, delta, Q.y) == 0:
                    ok = 1
                    break
            if ok:
                # direction p on F, slope g.p, curvature p'Qp, exact step cut at the bounds
                d = 0.0
                for a in range(m):
                    Q.p[a] = Q.y[a]
                    d += Q.y[a]
                Q.p[m] = -d
                slope = 0.0
                for a in range(nf):
                    i = Q.F[a]
                    slope += Q.p[a] * (grad[i] if i < k else 0.0)
                curv = 0.0
                for a in range(nf):
                    i = Q.F[a]
                    if i >= k:
                        continue
                    d = 0.0
                    for c in range(nf):
                        j = Q.F[c]
                        if j < k:
                            d += G[i * ld + j] * Q.p[c]
                    curv += Q.p[a] * d
                ok = slope < 0.0
            if ok:
                tstar = -slope / curv if curv > 0.0 else INFINITY
                tmax = INFINITY
                blocking = -1
                for a in range(nf):
                    if Q.p[a] < 0.0:
                        i = Q.F[a]
                        lim = (alpha[i] if i < k else sigma) / (-Q.p[a])
                        if lim < tmax:
                            tmax = lim
                            blocking = a
                t = tstar if tstar < tmax else tmax
                ok = t > 0.0 and t < INFINITY
            if ok:
                for a in range(nf):
                    i = Q.F[a]
                    if i < k:
                        alpha[i] += t * Q.p[a]
                        if alpha[i] < 0.0 or (a == blocking and t == tmax):
                            alpha[i] = 0.0
        if not ok:
            smo_steps[0] += qp_smo(G, ld, b, k, Cp, alpha, grad, tol, 50 * (k + 1), viol_out)
    return it


# --------------------------------------------------------------------------- #
# The cutting-plane loop
# --------------------------------------------------------------------------- #

ctypedef struct Cuts:
    double* V          # ld x nw: constraint vectors x_c
    double* G          # ld x ld: Gram matrix
    double* b          # ld: right-hand sides b_c
    double* alpha      # ld: dual variables
    double* grad       # ld: QP gradient G alpha - b
    int64_t* age       # ld: consecutive QP solutions with alpha_j = 0
    int64_t* keep      # ld: scratch for compaction
    int64_t ld         # capacity of the buffers
    int64_t k          # constraints in the working set
    int64_t hard_cap   # max_constraints
    int64_t max_age    # remove a constraint after this many inactive solutions (0: never)
    int64_t n_removed  # constraints removed as inactive for max_age solutions
    int64_t n_dropped  # constraints dropped at the cap (alpha = 0)
    int64_t n_merges   # merges of all constraints into one at the cap


ctypedef struct Result:
    int64_t n_iter       # oracle calls (iterations of the repeat loop)
    int64_t qp_iter      # active-set iterations, all QPs
    int64_t qp_smo       # SMO steps (fallback), all QPs
    double xi            # xi of the working-set optimum at the returned w
    double xi_prime      # xi' (most violated constraint) at the returned w
    double qp_viol       # KKT violation of the last QP
    double dual          # b.alpha - 1/2 alpha'G alpha of the last QP (a lower bound on the optimum)


cdef void qp_objective(const Cuts* W, double* dual) noexcept nogil:
    """dual = b.alpha - 1/2 alpha'G alpha = 1/2 (b.alpha - alpha.grad) with grad = G alpha - b."""
    cdef int64_t j
    cdef double d = 0.0
    for j in range(W.k):
        d += W.alpha[j] * (W.b[j] - W.grad[j])
    dual[0] = 0.5 * d


cdef void compact_cuts(Cuts* W, int64_t nw, int64_t nk) noexcept nogil:
    """Keep constraints W.keep[0:nk] (increasing), in that order, and drop the others."""
    cdef int64_t p, q, ld = W.ld
    # in increasing order every read is at or after the position written
    for p in range(nk):
        for q in range(nk):
            W.G[p * ld + q] = W.G[W.keep[p] * ld + W.keep[q]]
        if W.keep[p] != p:
            memmove(W.V + p * nw, W.V + W.keep[p] * nw, nw * sizeof(double))
        W.b[p] = W.b[W.keep[p]]
        W.alpha[p] = W.alpha[W.keep[p]]
        W.grad[p] = W.grad[W.keep[p]]
        W.age[p] = W.age[W.keep[p]]
    W.k = nk


cdef void reduce_cuts(Cuts* W, int64_t nw, const double* w) noexcept nogil:
    """Make room at the cap: drop constraints with alpha = 0, or, when all are active,
    replace them by one, x = w / A, b = sum_j alpha_j b_j / A with alpha = A = sum alpha
    (implied by OP2/OP5, and the current optimum stays optimal)."""
    cdef int64_t j, p, nk = 0
    cdef double A = 0.0, bb = 0.0
    for j in range(W.k):
        if W.alpha[j] > 0.0:
            W.keep[nk] = j
            nk += 1
    if nk < W.k:
        W.n_dropped += W.k - nk
        compact_cuts(W, nw, nk)
        return
    for j in range(W.k):
        A += W.alpha[j]
        bb += W.alpha[j] * W.b[j]
    for p in range(nw):
        W.V[p] = w[p] / A
    W.b[0] = bb / A
    W.alpha[0] = A
    W.G[0] = dot(W.V, W.V, nw)
    W.grad[0] = W.G[0] * A - W.b[0]
    W.age[0] = 0
    W.k = 1
    W.n_merges += 1


cdef void remove_inactive(Cuts* W, int64_t nw) noexcept nogil:
    """Remove constraints inactive (alpha = 0) in the last max_age QP solutions."""
    cdef int64_t j, nk = 0
    if W.max_age <= 0:
        return
    for j in range(W.k):
        if W.age[j] < W.max_age:
            W.keep[nk] = j
            nk += 1
    if nk < W.k:
        W.n_removed += W.k - nk
        compact_cuts(W, nw, nk)


cdef void cuts_to_w(const Cuts* W, int64_t nw, double* w) noexcept nogil:
    """w = sum_j alpha_j x_cj."""
    cdef int64_t j, p
    cdef const double* v
    cdef double a
    memset(w, 0, nw * sizeof(double))
    for j in range(W.k):
        a = W.alpha[j]
        if a != 0.0:
            v = W.V + j * nw
            for p in range(nw):
                w[p] += a * v[p]


cdef inline void solve_qp(Cuts* W, QPWork* Q, double Cp, double qp_tol, int64_t qp_max_iter,
                          Result* res) noexcept nogil:
    """Line 4 on the working set, warm started from the current alphas; ages updated."""
    cdef int64_t j
    res.qp_iter += qp_active(W.G, W.ld, W.b, W.k, Cp, W.alpha, W.grad, Q, qp_tol, qp_max_iter,
                             &res.qp_viol, &res.qp_smo)
    for j in range(W.k):
        W.age[j] = 0 if W.alpha[j] > 0.0 else W.age[j] + 1


cdef int _distribute(_OracleData od, object comm, int64_t nw, object glob) except -1:
    """Make od's oracle distributed over comm (a Collective): the packed allreduce
    buffer and, for glob = (q, level, perm, gptr, glevels, per_rank) of all ranks'
    positions in rank order, the gathered oracle of ordinal_counts (perf_solve)."""
    cdef _OracleData god
    cdef double[::1] pkv, gatv
    cdef const int64_t[::1] prv
    cdef int64_t rk
    od.C = comm_from(comm)
    od.O.comm = &od.C
    pk = np.zeros(nw + 3)
    pkv = pk
    od.O.pk = &pkv[0]
    od.keep.append(pk)
    if glob is None:
        return 0
    q_all, level_all, perm_all, gptr_all, glevels_all, per_rank = glob
    per_rank = np.ascontiguousarray(per_rank, dtype=np.int64)
    if per_rank.shape[0] != od.C.size or per_rank[od.C.rank] != od.O.n:
        raise ValueError("per_rank must hold every rank's number of positions")
    n_all = int(per_rank.sum())
    god = _make_oracle(ORDINAL, np.zeros(n_all, dtype=np.int64), np.zeros(1), q_all, od.O.scale,
                       level_all, perm_all, gptr_all, glevels_all)
    prv = per_rank
    od.O.pad = max(int(per_rank.max()), 1)
    od.O.offset = 0
    for rk in range(od.C.rank):
        od.O.offset += prv[rk]
    od.O.per_rank = &prv[0]
    gat = np.zeros(od.C.size * od.O.pad)
    gatv = gat
    od.O.gat = &gatv[0]
    od.O.glob = &god.O
    od.keep.extend([god, per_rank, gat])
    return 0


cdef int perf_core(const CSR* X, Oracle* O, Cuts* W, QPWork* Q, double Cp, double eps,
                   double gap_guard, double* w, const double* w0, double* xc,
                   double qp_tol, int64_t qp_max_iter, int64_t max_iter,
                   Result* res, void* callback, Stop* stop) noexcept nogil:
    """The repeat loop of Algorithm 1 / 2 on the working set W (in/out).

    On entry W holds k >= 0 constraints with feasible alphas; w0 (or NULL)
    is where the first cut goes when W is empty (Algorithm 1 starts at w = 0).
    Returns CONVERGED, MAX_ITER (res.n_iter reached max_iter) or NEED_ROOM
    (W is full below the cap: the caller grows the buffers and calls again;
    the state is entirely in W and res).  On return w = sum alpha_j x_cj (or
    w0 / 0 when W is empty), res.xi and res.xi_prime are taken at that w and
    O.s holds its scores.  Each iteration polls stop (csrc/interrupt.pxd): once it is
    stopped the core returns MAX_ITER at once and the caller raises.
    """
    cdef int64_t nw = X.n_weights, j, k
    cdef double xi_p, xi_w, rhs = 0.0, nrm
    cdef int can_stop, status
    cdef const double* v
    cdef double* vk
    if W.k > 0:
        solve_qp(W, Q, Cp, qp_tol, qp_max_iter, res)
    while True:
        # line 4 result: w and xi of the working-set optimum
        if W.k > 0:
            cuts_to_w(W, nw, w)
            xi_w = 0.0
            for j in range(W.k):
                if -W.grad[j] > xi_w:
                    xi_w = -W.grad[j]
            qp_objective(W, &res.dual)
            can_stop = 1
        else:
            if w0 != NULL:
                memcpy(w, w0, nw * sizeof(double))
            else:
                memset(w, 0, nw * sizeof(double))
            xi_w = 0.0
            res.dual = 0.0
            can_stop = w0 == NULL      # (w0, 0) is not the optimum over an empty W
        remove_inactive(W, nw)
        if W.k >= W.ld and W.ld < W.hard_cap:
            status = NEED_ROOM
            break
        # lines 5-7: the most violated constraint at w
        if comm_active(O.comm):                 # distributed: stop together (reduce_cut)
            stop_poll(stop, O.n * stop.per_row + W.k * nw)
            O.flag = stop.stopped
        xi_p = oracle(X, O, w, xc, &rhs)
        res.n_iter += 1
        res.xi = xi_w
        res.xi_prime = xi_p
        if callback != NULL:
            nrm = dot(w, w, nw)
            with gil:
                try:
                    (<object>callback)(res.n_iter, xi_w, xi_p, W.k, 0.5 * nrm + Cp * xi_w,
                                       res.dual)
                except BaseException as e:
                    stop_keep(stop, e)
        if comm_active(O.comm):
            if O.flag > 0.0:
                stop.stopped = 1
                status = MAX_ITER
                break
        elif stop_poll(stop, O.n * stop.per_row + W.k * nw):
            status = MAX_ITER
            break
        # line 9, guarded: F(w) - D <= gap_guard F(w) too (block comment)
        if can_stop and xi_p <= xi_w + eps:
            nrm = 0.5 * dot(w, w, nw) + Cp * xi_p
            if gap_guard <= 0.0 or nrm - res.dual <= gap_guard * nrm:
                status = CONVERGED
                break
        if res.n_iter >= max_iter:
            status = MAX_ITER
            break
        # line 8: add the constraint (make room at the cap first)
        if W.k >= W.hard_cap:
            reduce_cuts(W, nw, w)
        k = W.k
        vk = W.V + k * nw
        memcpy(vk, xc, nw * sizeof(double))
        W.b[k] = rhs
        W.alpha[k] = 0.0
        W.age[k] = 0
        for j in range(k + 1):
            v = W.V + j * nw
            W.G[k * W.ld + j] = dot(vk, v, nw)
            W.G[j * W.ld + k] = W.G[k * W.ld + j]
        W.k = k + 1
        # line 4 on the new working set
        solve_qp(W, Q, Cp, qp_tol, qp_max_iter, res)
    return status


# --------------------------------------------------------------------------- #
# Python entry points (inputs validated by linsvm/solvers/perf.py)
# --------------------------------------------------------------------------- #

def _n_threads(int n_threads):
    from ._kernels import max_threads
    return max_threads() if n_threads <= 0 else n_threads


cdef class _OracleData:
    """Owns the numpy buffers behind an Oracle struct."""
    cdef Oracle O
    cdef Comm C
    cdef object keep
    cdef public object s, u, cplus, cminus

    def __cinit__(self):
        self.keep = []


cdef _OracleData _make_oracle(int kind, const int64_t[::1] rows, const double[::1] t,
                              const double[::1] q, double scale, object level, object perm,
                              object gptr, object glevels, int64_t n_scores=0):
    """The Oracle over positions `rows` (score buffer: max(n, n_scores) doubles)."""
    cdef _OracleData od = _OracleData()
    cdef int64_t n = rows.shape[0], n_groups = 0, maxR = 1, g
    cdef const int32_t[::1] lv
    cdef const int64_t[::1] pv, gv
    cdef const int32_t[::1] glv
    cdef double[::1] sv, uv, cpv, cmv, fv, itv
    cdef int64_t[::1] ctv
    od.s = np.zeros(max(n, n_scores, 1))
    od.u = np.zeros(max(n, 1))
    sv = od.s
    uv = od.u
    od.O.kind = kind
    od.O.rows = &rows[0] if n > 0 else NULL
    od.O.n = n
    od.O.t = &t[0] if (kind == BINARY and n > 0) else NULL
    od.O.q = &q[0] if n > 0 else NULL
    od.O.scale = scale
    od.O.s = &sv[0]
    od.O.u = &uv[0]
    od.O.comm = NULL
    od.O.pk = NULL
    od.O.flag = 0.0
    od.O.glob = NULL
    od.O.offset = 0
    od.O.pad = 0
    od.O.per_rank = NULL
    od.O.gat = NULL
    od.keep.extend([rows, t, q])
    if kind == ORDINAL:
        lv = level
        pv = perm
        gv = gptr
        glv = glevels
        n_groups = glv.shape[0]
        for g in range(n_groups):
            if glv[g] > maxR:
                maxR = glv[g]
        od.cplus = np.zeros(max(n, 1))
        od.cminus = np.zeros(max(n, 1))
        fen = np.zeros(maxR + 1)
        items = np.zeros(4 * max(n, 1))          # 2n Item structs (16 bytes each)
        counts = np.zeros(RADIX_PASSES * RADIX_SIZE, dtype=np.int64)
        cpv = od.cplus
        cmv = od.cminus
        fv = fen
        itv = items
        od.O.level = &lv[0] if n > 0 else NULL
        od.O.perm = &pv[0] if n > 0 else NULL
        od.O.gptr = &gv[0]
        od.O.glevels = &glv[0] if n_groups > 0 else NULL
        od.O.n_groups = n_groups
        od.O.items = <Item*>&itv[0]
        od.O.items2 = (<Item*>&itv[0]) + max(n, 1)
        ctv = counts
        od.O.counts = &ctv[0]
        od.O.fen = &fv[0]
        od.O.cplus = &cpv[0]
        od.O.cminus = &cmv[0]
        od.keep.extend([level, perm, gptr, glevels, fen, items, counts])
    return od


def most_violated(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                  int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] w,
                  int kind, const double[::1] t, const double[::1] q, double scale,
                  level=None, perm=None, gptr=None, glevels=None, int n_threads=1):
    """The oracle the solver calls (Alg. 1 lines 5-7 / Alg. 2 lines 5-22), for tests.

    kind 0 (classification): t = labels +-1, scale = 1/n.  kind 1 (ordinal):
    level/perm/gptr/glevels describe the queries (see linsvm/solvers/perf.py),
    scale = 1/m.  Returns dict(xi_prime, x_c, b_c, scores, u) and for kind 1
    also cplus, cminus.
    """
    cdef int64_t nw = n_features + (1 if bias > 0 else 0)
    cdef int T = _n_threads(n_threads)
    if w.shape[0] != nw:
        raise ValueError("w has the wrong length")
    scratch = np.zeros(max(scratch_doubles(indptr, n_features, bias), 1))
    cdef double[::1] scv = scratch
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, T, &scv[0])
    cdef _OracleData od = _make_oracle(kind, rows, t, q, scale, level, perm, gptr, glevels)
    xc_arr = np.zeros(max(nw, 1))
    cdef double[::1] xcv = xc_arr
    cdef double rhs = 0.0, xi
    with nogil:
        xi = oracle(&X, &od.O, &w[0] if nw > 0 else NULL, &xcv[0], &rhs)
    n = rows.shape[0]
    out = dict(xi_prime=xi, x_c=xc_arr[:nw], b_c=rhs, scores=od.s[:n].copy(), u=od.u[:n].copy())
    if kind == ORDINAL:
        out["cplus"] = od.cplus[:n].copy()
        out["cminus"] = od.cminus[:n].copy()
    return out


def qp_solve(G, b, double Cp, alpha0=None, double tol=1e-12, int64_t max_iter=100000,
             str method="active"):
    """Solve max_a b.a - 1/2 a'Ga s.t. a >= 0, sum a <= Cp with the solver's QP code (tests).

    method: "active" (qp_active, what the solver uses) or "smo" (qp_smo, its fallback).
    Returns (alpha, dict(iterations, smo_steps, violation, dual, grad)).
    """
    Garr = np.ascontiguousarray(G, dtype=np.float64)
    barr = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
    cdef int64_t k = barr.shape[0], ld = k + 1
    if Garr.shape != (k, k) or not np.all(np.isfinite(Garr)) or not np.all(np.isfinite(barr)):
        raise ValueError("G must be a finite k x k matrix for k = len(b)")
    if not (Cp > 0):
        raise ValueError("Cp must be > 0")
    alpha = np.zeros(ld)
    if alpha0 is not None:
        a0 = np.asarray(alpha0, dtype=np.float64).reshape(-1)
        if a0.shape[0] != k:
            raise ValueError("alpha0 must have len(b) entries")
        alpha[:k] = a0
    grad = np.zeros(ld)
    Gp = np.zeros((ld, ld))
    Gp[:k, :k] = Garr
    bp = np.zeros(ld)
    bp[:k] = barr
    H = np.zeros((ld + 1) * (ld + 1))
    F = np.zeros(ld + 1, dtype=np.int64)
    pv = np.zeros(ld + 1)
    yv = np.zeros(ld + 1)
    cdef double[:, ::1] Gv = Gp
    cdef double[::1] bv = bp, av = alpha, gv = grad, Hv = H, pvv = pv, yvv = yv
    cdef int64_t[::1] Fv = F
    cdef QPWork Q
    Q.H = &Hv[0]
    Q.F = &Fv[0]
    Q.p = &pvv[0]
    Q.y = &yvv[0]
    cdef double viol = 0.0
    cdef int64_t it = 0, smo = 0
    cdef bint active = method == "active"
    if method not in ("active", "smo"):
        raise ValueError("method must be 'active' or 'smo'")
    with nogil:
        if active:
            it = qp_active(&Gv[0, 0], ld, &bv[0], k, Cp, &av[0], &gv[0], &Q, tol, max_iter,
                           &viol, &smo)
        else:
            smo = qp_smo(&Gv[0, 0], ld, &bv[0], k, Cp, &av[0], &gv[0], tol, max_iter, &viol)
    a = alpha[:k].copy()
    dual = float(barr @ a - 0.5 * a @ Garr @ a)
    return a, dict(iterations=int(it), smo_steps=int(smo), violation=float(viol), dual=dual,
                   grad=grad[:k].copy())


def request_stop():
    """Make every solve of this module running now, in any thread, stop and raise
    KeyboardInterrupt (csrc/interrupt.pxd; linsvm.interrupt.stop_running_solves)."""
    stop_request()


def perf_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
               int64_t n_features, double bias, const int64_t[::1] rows, int kind,
               const double[::1] t, const double[::1] q, double scale, double Cp, double eps, w0,
               V0, G0, b0, alpha0, level, perm, gptr, glevels, int64_t max_constraints,
               int64_t max_iter, int64_t inactive_iters, double qp_tol, int64_t qp_max_iter,
               int n_threads, object callback, object comm=None, object glob=None,
               double gap_guard=0.0):
    """Run Algorithm 1 (kind 0) or 2 (kind 1) from the working set (V0, G0, b0, alpha0).

    The stop is line 9's, xi' <= xi + eps, and when gap_guard > 0 also a relative
    duality gap (F(w) - dual) / F(w) <= gap_guard (the block comment).

    Buffers must be validated by the caller (see linsvm/solvers/perf.py).
    comm: None (serial) or a linsvm.collective.Collective: rows, t, q (and the query
    layout) are then this rank's block, possibly empty, scale and Cp global, the
    working set replicated; each cut is one allreduce of n_weights + 3 doubles
    (x_c, b_c, xi' and a stop flag) and the working-set QP is solved alike on every
    rank.  glob (kind 1, queries split over ranks): (q, level, perm, gptr, glevels,
    per_rank) of all positions in rank order; each cut then also gathers every
    rank's scores (see _distribute).  The scores returned are this rank's.
    Returns a dict: status (0 converged, 1 iteration cap), w, n_iter, qp_iter,
    qp_smo_steps, xi, xi_prime, qp_violation, dual, scores (at w), the
    working set V, G, b, alpha (k rows), n_removed, n_dropped, n_merges.
    """
    cdef int64_t nw = n_features + (1 if bias > 0 else 0)
    cdef int64_t n = rows.shape[0], k0 = 0, ld
    cdef int T = _n_threads(n_threads)
    cdef int status
    if max_constraints < 2:
        raise ValueError("max_constraints must be >= 2")
    scratch = np.zeros(max(scratch_doubles(indptr, n_features, bias), 1))
    cdef double[::1] scv = scratch
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, T, &scv[0])
    cdef _OracleData od = _make_oracle(kind, rows, t, q, scale, level, perm, gptr, glevels,
                                       0 if glob is None else max(np.max(glob[5]), 1))
    if comm is not None:
        _distribute(od, comm, nw, glob)
    if V0 is not None:
        k0 = np.shape(b0)[0]
    if k0 > max_constraints:
        raise ValueError("the warm-start working set is larger than max_constraints")
    ld = min(max_constraints, max(16, 2 * k0))
    V = np.zeros((ld, max(nw, 1)))
    G = np.zeros((ld, ld))
    b = np.zeros(ld)
    alpha = np.zeros(ld)
    if k0 > 0:
        V[:k0, :nw] = V0
        G[:k0, :k0] = G0
        b[:k0] = b0
        alpha[:k0] = alpha0
    w = np.zeros(max(nw, 1))
    xc = np.zeros(max(nw, 1))
    w0_arr = None if w0 is None else np.ascontiguousarray(w0, dtype=np.float64)
    if w0_arr is not None and w0_arr.shape[0] != nw:
        raise ValueError("w0 has the wrong length")
    cdef double[::1] wv = w, xcv = xc
    cdef double[::1] w0v
    cdef const double* w0p = NULL
    if w0_arr is not None and nw > 0:
        w0v = w0_arr
        w0p = &w0v[0]
    cdef Cuts W
    cdef QPWork Q
    cdef Result res
    res.n_iter = 0
    res.qp_iter = 0
    res.qp_smo = 0
    res.xi = 0.0
    res.xi_prime = 0.0
    res.qp_viol = 0.0
    res.dual = 0.0
    W.k = k0
    W.hard_cap = max_constraints
    W.max_age = inactive_iters
    W.n_removed = 0
    W.n_dropped = 0
    W.n_merges = 0
    age = np.zeros(ld, dtype=np.int64)
    cdef double[:, ::1] Vv, Gv
    cdef double[::1] bv, av, gv, Hv, pvv, yvv
    cdef int64_t[::1] agev, kv, Fv
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop S
    stop_init(&S, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    while True:
        grad = np.zeros(ld)
        keep = np.zeros(ld, dtype=np.int64)
        H = np.zeros((ld + 1) * (ld + 1))
        F = np.zeros(ld + 1, dtype=np.int64)
        pw = np.zeros(ld + 1)
        yw = np.zeros(ld + 1)
        Vv = V
        Gv = G
        bv = b
        av = alpha
        gv = grad
        agev = age
        kv = keep
        Hv = H
        Fv = F
        pvv = pw
        yvv = yw
        W.V = &Vv[0, 0]
        W.G = &Gv[0, 0]
        W.b = &bv[0]
        W.alpha = &av[0]
        W.grad = &gv[0]
        W.age = &agev[0]
        W.keep = &kv[0]
        W.ld = ld
        Q.H = &Hv[0]
        Q.F = &Fv[0]
        Q.p = &pvv[0]
        Q.y = &yvv[0]
        with nogil:
            status = perf_core(&X, &od.O, &W, &Q, Cp, eps, gap_guard, &wv[0], w0p, &xcv[0], qp_tol,
                               qp_max_iter, max_iter, &res, cb, &S)
        stop_raise(&S)                      # Ctrl-C: the work arrays go as it unwinds
        if status != NEED_ROOM:
            break
        # grow the constraint store (the wrapper allocates; the core never does)
        new_ld = min(max_constraints, 2 * ld)
        V2 = np.zeros((new_ld, max(nw, 1)))
        G2 = np.zeros((new_ld, new_ld))
        V2[:W.k] = V[:W.k]
        G2[:W.k, :W.k] = G[:W.k, :W.k]
        b = np.concatenate([b, np.zeros(new_ld - ld)])
        alpha = np.concatenate([alpha, np.zeros(new_ld - ld)])
        age = np.concatenate([age, np.zeros(new_ld - ld, dtype=np.int64)])
        V, G, ld = V2, G2, new_ld
    k = W.k
    return dict(status=status, w=w[:nw].copy(), n_iter=int(res.n_iter), qp_iter=int(res.qp_iter),
                qp_smo_steps=int(res.qp_smo), xi=float(res.xi), xi_prime=float(res.xi_prime),
                qp_violation=float(res.qp_viol), dual=float(res.dual), scores=od.s[:n].copy(),
                V=V[:k, :nw].copy(), G=G[:k, :k].copy(), b=b[:k].copy(), alpha=alpha[:k].copy(),
                n_removed=int(W.n_removed), n_dropped=int(W.n_dropped), n_merges=int(W.n_merges))
