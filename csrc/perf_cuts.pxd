# The cutting-plane loop of csrc/_perf.pyx (its block comment has Algorithms 1 and 2):
# the working set W of constraints (their dense vectors, Gram matrix, right-hand sides
# and alphas), its upkeep (inactive constraints removed, the cap's drop or merge), the
# point w of the working-set optimum, and the repeat loop, perf_core.  Everything here
# is inline: this file is cimported, not compiled on its own.

from libc.stdint cimport int64_t
from libc.string cimport memcpy, memset
from csr cimport CSR, dot
from interrupt cimport Stop, stop_poll, stop_keep
from comm cimport comm_active
from perf_oracle cimport Oracle, oracle
from perf_qp cimport QPWork, qp_active

# Status codes returned to Python.
cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    NEED_ROOM = 2


cdef struct PerfSettings:
    # One solve's settings, filled once from the Python entry's keywords (the catalog's
    # option names, linsvm/problem/catalog.py's PERF_OPTIONS; Cp, eps, qp_max_iter and
    # gap_guard are the solve's)
    double Cp                   # the paper's C (linsvm's C times n, resp. sum_k q_k)
    double eps                  # line 9's tolerance: stop when xi' <= xi + eps
    double gap_guard            # and (F(w) - dual) <= gap_guard F(w) (0: line 9 alone)
    int64_t max_constraints     # cap on the working set
    int64_t max_iter            # cap on oracle calls
    int64_t inactive_iters      # remove a constraint after this many QP solutions at alpha 0
    int64_t soft_rows           # a full store of this many rows frees long-inactive ones first
    double qp_tol               # KKT tolerance of the working-set QP
    int64_t qp_max_iter         # cap on the active-set iterations of one QP
    int n_threads               # threads of the oracle's passes (0: every OpenMP thread)


ctypedef struct Cuts:
    double** V         # ld rows of nw: V[j] is constraint j's vector x_c for j < k, and the
                       # rows from k on are free ones, filled by the next cuts
    double** spare     # ld: scratch for compaction (row pointers)
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
    int64_t soft_rows  # a full store of this many rows or more frees rows before it grows:
    int64_t soft_age   # it removes the constraints inactive for soft_age solutions first
    int64_t n_removed  # constraints removed as inactive for max_age solutions
    int64_t n_dropped  # constraints dropped at the cap (alpha = 0)
    int64_t n_merges   # merges of all constraints into one at the cap
    int resumed        # set when the core returned NEED_ROOM: W's QP is solved already


ctypedef struct Result:
    int64_t n_iter       # oracle calls (iterations of the repeat loop)
    int64_t qp_iter      # active-set iterations, all QPs
    int64_t qp_smo       # SMO steps (fallback), all QPs
    double xi            # xi of the working-set optimum at the returned w
    double xi_prime      # xi' (most violated constraint) at the returned w
    double qp_viol       # KKT violation of the last QP
    double dual          # b.alpha - 1/2 alpha'G alpha of the last QP (a lower bound on the optimum)


cdef inline void qp_objective(const Cuts* W, double* dual) noexcept nogil:
    """dual = b.alpha - 1/2 alpha'G alpha = 1/2 (b.alpha - alpha.grad) with grad = G alpha - b."""
    cdef int64_t j
    cdef double d = 0.0
    for j in range(W.k):
        d += W.alpha[j] * (W.b[j] - W.grad[j])
    dual[0] = 0.5 * d


cdef inline void compact_cuts(Cuts* W, int64_t nk) noexcept nogil:
    """Keep constraints W.keep[0:nk] (increasing), in that order, and drop the others: their
    rows move behind the kept ones, free for the next cuts (row pointers move, no row is
    copied, so the store holds as many rows as the working set ever held at once)."""
    cdef int64_t p, q, j, nf = 0, ld = W.ld
    q = 0
    for j in range(W.k):
        if q < nk and W.keep[q] == j:
            q += 1
        else:
            W.spare[nf] = W.V[j]
            nf += 1
    # in increasing order every read is at or after the position written
    for p in range(nk):
        for q in range(nk):
            W.G[p * ld + q] = W.G[W.keep[p] * ld + W.keep[q]]
        W.V[p] = W.V[W.keep[p]]
        W.b[p] = W.b[W.keep[p]]
        W.alpha[p] = W.alpha[W.keep[p]]
        W.grad[p] = W.grad[W.keep[p]]
        W.age[p] = W.age[W.keep[p]]
    for j in range(nf):
        W.V[nk + j] = W.spare[j]
    W.k = nk


cdef inline void reduce_cuts(Cuts* W, int64_t nw, const double* w) noexcept nogil:
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
        compact_cuts(W, nk)
        return
    for j in range(W.k):
        A += W.alpha[j]
        bb += W.alpha[j] * W.b[j]
    for p in range(nw):
        W.V[0][p] = w[p] / A
    W.b[0] = bb / A
    W.alpha[0] = A
    W.G[0] = dot(W.V[0], W.V[0], nw)
    W.grad[0] = W.G[0] * A - W.b[0]
    W.age[0] = 0
    W.k = 1
    W.n_merges += 1


cdef inline void remove_inactive(Cuts* W, int64_t max_age) noexcept nogil:
    """Remove constraints inactive (alpha = 0) in the last max_age QP solutions (W.max_age
    <= 0: none; removal leaves the working-set optimum as it is)."""
    cdef int64_t j, nk = 0
    if W.max_age <= 0:
        return
    for j in range(W.k):
        if W.age[j] < max_age:
            W.keep[nk] = j
            nk += 1
    if nk < W.k:
        W.n_removed += W.k - nk
        compact_cuts(W, nk)


cdef inline void cuts_to_w(const Cuts* W, int64_t nw, double* w) noexcept nogil:
    """w = sum_j alpha_j x_cj."""
    cdef int64_t j, p
    cdef const double* v
    cdef double a
    memset(w, 0, nw * sizeof(double))
    for j in range(W.k):
        a = W.alpha[j]
        if a != 0.0:
            v = W.V[j]
            for p in range(nw):
                w[p] += a * v[p]


cdef inline void solve_qp(Cuts* W, QPWork* Q, const PerfSettings* s,
                          Result* res) noexcept nogil:
    """Line 4 on the working set, warm started from the current alphas; ages updated."""
    cdef int64_t j
    res.qp_iter += qp_active(W.G, W.ld, W.b, W.k, s.Cp, W.alpha, W.grad, Q, s.qp_tol,
                             s.qp_max_iter, &res.qp_viol, &res.qp_smo)
    for j in range(W.k):
        W.age[j] = 0 if W.alpha[j] > 0.0 else W.age[j] + 1


cdef inline int cuts_point(const Cuts* W, int64_t nw, double* w, const double* w0,
                           double* xi_w, Result* res) noexcept nogil:
    """Line 4's result: w = sum_j alpha_j x_cj and xi = max(0, max_j (b_j - w.x_cj)) of the
    working-set optimum, and its dual value in res.dual; with W empty, w = w0 (or 0) and
    xi = 0.  Returns whether line 9 may stop at this point ((w0, 0) is not the optimum
    over an empty W)."""
    cdef int64_t j
    if W.k > 0:
        cuts_to_w(W, nw, w)
        xi_w[0] = 0.0
        for j in range(W.k):
            if -W.grad[j] > xi_w[0]:
                xi_w[0] = -W.grad[j]
        qp_objective(W, &res.dual)
        return 1
    if w0 != NULL:
        memcpy(w, w0, nw * sizeof(double))
    else:
        memset(w, 0, nw * sizeof(double))
    xi_w[0] = 0.0
    res.dual = 0.0
    return w0 == NULL


cdef inline void add_cut(Cuts* W, int64_t nw, const double* w, const double* xc,
                         double rhs) noexcept nogil:
    """Line 8: add the constraint (x_c, b_c) to W, its new row and column of G (making room
    at the cap first)."""
    cdef int64_t j, k
    cdef const double* v
    cdef double* vk
    if W.k >= W.hard_cap:
        reduce_cuts(W, nw, w)
    k = W.k
    vk = W.V[k]
    memcpy(vk, xc, nw * sizeof(double))
    W.b[k] = rhs
    W.alpha[k] = 0.0
    W.age[k] = 0
    for j in range(k + 1):
        v = W.V[j]
        W.G[k * W.ld + j] = dot(vk, v, nw)
        W.G[j * W.ld + k] = W.G[k * W.ld + j]
    W.k = k + 1


cdef inline void report_cut(const Result* res, const double* w, int64_t nw, int64_t k,
                            double Cp, void* callback, Stop* stop) noexcept nogil:
    """The callback (iteration, xi, xi', constraints, the working-set objective
    1/2 w.w + Cp xi, its dual value); its exception is kept in the Stop record."""
    cdef double nrm = dot(w, w, nw)
    with gil:
        try:
            (<object>callback)(res.n_iter, res.xi, res.xi_prime, k, 0.5 * nrm + Cp * res.xi,
                               res.dual)
        except BaseException as e:
            stop_keep(stop, e)


cdef inline int perf_core(const CSR* X, Oracle* O, Cuts* W, QPWork* Q, const PerfSettings* s,
                          double* w, const double* w0, double* xc, Result* res,
                          void* callback, Stop* stop) noexcept nogil:
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
    cdef int64_t nw = X.n_weights
    cdef double xi_p, xi_w = 0.0, rhs = 0.0, nrm
    cdef int can_stop, status
    # a run resumed after NEED_ROOM starts at its solved QP: solving it again would age its
    # constraints once more, so when they go would depend on how the store grows
    if W.k > 0 and not W.resumed:
        solve_qp(W, Q, s, res)
    W.resumed = 0
    while True:
        # line 4 result: w and xi of the working-set optimum
        can_stop = cuts_point(W, nw, w, w0, &xi_w, res)
        remove_inactive(W, W.max_age)
        if W.k >= W.ld and W.ld >= W.soft_rows:
            # the cuts' rows would outgrow the data: let go of the long-inactive ones first
            remove_inactive(W, W.soft_age)
        if W.k >= W.ld and W.ld < W.hard_cap:
            status = NEED_ROOM
            W.resumed = 1
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
            report_cut(res, w, nw, W.k, s.Cp, callback, stop)
        if comm_active(O.comm):
            if O.flag > 0.0:
                stop.stopped = 1
                status = MAX_ITER
                break
        elif stop_poll(stop, O.n * stop.per_row + W.k * nw):
            status = MAX_ITER
            break
        # line 9, guarded: F(w) - D <= gap_guard F(w) too (csrc/_perf.pyx)
        if can_stop and xi_p <= xi_w + s.eps:
            nrm = 0.5 * dot(w, w, nw) + s.Cp * xi_p
            if s.gap_guard <= 0.0 or nrm - res.dual <= s.gap_guard * nrm:
                status = CONVERGED
                break
        if res.n_iter >= s.max_iter:
            status = MAX_ITER
            break
        # line 8: add the constraint
        add_cut(W, nw, w, xc, rhs)
        # line 4 on the new working set
        solve_qp(W, Q, s, res)
    return status
