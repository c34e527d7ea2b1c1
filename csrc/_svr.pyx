# Linear support vector regression: the primal finite Newton method (LIBLINEAR -s 11's
# problem) and dual coordinate descent (-s 12 and -s 13, Ho & Lin, JMLR 2012).
#
# Problems, over the examples k in `rows` (x_k includes the bias feature), targets y_k,
# costs c_k >= 0, tube width p >= 0, e_k = w.x_k - y_k:
#
#     l2 (-s 11 / -s 12):  F(w) = 1/2 ||w||^2 + C sum_k c_k max(0, |e_k| - p)^2
#     l1 (-s 13):          F(w) = 1/2 ||w||^2 + C sum_k c_k max(0, |e_k| - p)
#
# ---------------------------------------------------------------- primal Newton (l2)
# The squared eps-insensitive loss is piecewise quadratic, so the L2-SVM-MFN method of
# Keerthi & DeCoste (JMLR 2005, Sections 3-4, Appendix A) applies as it is: in the
# paper's scaling (lam = 1/(2C), f = lam F)
#
#     f(beta) = lam/2 ||beta||_Lam^2 + 1/2 sum_k c_k max(0, |e_k| - p)^2
#
# (||.||_Lam: every weight, or every weight but the bias's when the bias is free,
# cgls.pxd's nreg).  At beta the examples fall in three zones: above the tube
# (e_k > p), below it (e_k < -p) and inside.  The Newton model keeps the zones; on the
# active examples (outside the tube) it is the least-squares problem of eq. 11,
#
#     min lam/2 ||beta||_Lam^2 + 1/2 sum_{k active} c_k (x_k.beta - tt_k)^2,
#     tt_k = y_k + p above the tube, y_k - p below it,
#
# solved by CGLS (cgls.pxd) over the active rows, seeded at beta (residual
# z_k = tt_k - x_k.beta).  Then, by mfn's driver (csrc/newton_driver.pxd, with this loss
# as csrc/svr_loss.pxd): the step d = beta_bar - beta and X d (accumulated by CGLS on the
# active rows, one mat-vec over the others); stop when CGLS met eq. 13 at eps and the zones are consistent at beta_bar (the examples whose
# zone changed add at most eps ||z||_C to the gradient, measured as
# sum c_k |l'(e_k) - l'_model(e_k)| ||x_k||); else the exact line search of Sec. 4.4 on
# beta + delta d.  phi'(delta) is piecewise linear with two knots per example (where
# e_k + delta dy_k crosses +p and -p); each example is handed to line_search.pxd's
# exact line search as two L2-SVM terms with one knee each,
#
#     below: t = +1, v = x.beta - (y_k - p) + 1    (o = t v < 1 iff e_k < -p)
#     above: t = -1, v = x.beta - (y_k + p) - 1    (o = t v < 1 iff e_k > p),
#
# each with loss 1/2 (1 - o)^2 for o < 1: exactly the example's loss, so the search
# (selection instead of a sort, phi'(1) first, and its distributed form over the ranks'
# breakpoints) is mfn's.  Heuristics 1 (at most 10 CGLS iterations on the first step of
# a cold start) and 2 (converge at eps = 1e-2 first) as in mfn, and so is the guard on
# the inexact-Newton forcing term (a step's CGLS ends at ||r|| <= eta ||r_0|| only once
# Galli & Lin's quadratic-model rule at the guard holds too: cgls.pxd, qguard; without
# it, a step whose gradient is mostly one direction ends after one iterate).  LIBLINEAR's
# gradient test, ||grad f(beta)|| <= gstop ||grad f(0)||, is read off the residual each CGLS starts
# from (it is -grad f(beta)); on a warm start ||grad f(0)|| takes one pass.
# Distributed over row blocks exactly as mfn (every sum over examples reduced).
#
# ---------------------------------------------------------------- dual CD (l1, l2)
# Ho & Lin (2012), eq. (13)-(15) and Algorithm 4: with beta_k = alpha+_k - alpha-_k and
# w(beta) = sum_k beta_k x_k the dual is
#
#     min_beta g(beta) = 1/2 ||w(beta)||^2 + sum_k (lam_k/2 beta_k^2 - y_k beta_k + p |beta_k|),
#     -U_k <= beta_k <= U_k;   l1: lam_k = 0, U_k = C c_k;   l2: lam_k = 1/(2 C c_k), U_k = inf.
#
# Coordinate k: G = w.x_k - y_k + lam_k beta_k, H = ||x_k||^2 + lam_k; the one-variable
# problem min_d G d + H d^2 / 2 + p |beta_k + d| has the closed form (Sec. 3.2)
#     d = -(G + p)/H if G + p < H beta_k;  -(G - p)/H if G - p > H beta_k;  else -beta_k,
# then beta_k + d is clipped to [-U_k, U_k].  The optimality violation of k (the
# minimum-norm subgradient) is |G + p| (beta_k > 0), |G - p| (beta_k < 0),
# max(0, -(G + p), G - p) (beta_k = 0), max(0, G + p) at U_k, max(0, -(G - p)) at -U_k.
# Loops run over fresh random permutations of the active examples; shrinking (Sec. 3.4):
# with M the largest violation of the previous loop, beta_k = 0 with G + p > M and
# G - p < -M, beta_k = U_k with G + p < -M, beta_k = -U_k with G - p > M leave the
# active set.  Stop when the loop's summed violation is <= eps x that of the first
# loop (on a warm start: that of beta = 0, sum_k max(0, |y_k| - p)); if examples were
# shrunk, the solve goes on over all of them first.  The duality gap
# F(w(beta)) + g(beta) >= F(w) - F* certifies the result.
#
# Inputs are addressed through `rows`; y and c are per position in rows.  Work arrays
# are allocated by the Python entries; nothing in the nogil code allocates or raises.

from libc.stdint cimport int8_t, int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset
from libc.math cimport fabs, sqrt, isfinite, INFINITY
import numpy as np
cimport numpy as cnp

cnp.import_array()
from csr cimport (vdot, CSR, dot, dot_row, axpy_row, sq_norm_row, dot_row_span, axpy_row_span,
                  row_start, row_stop, prefetch_span, LINSVM_PREFETCH, entry_threads)
from csr_passes cimport matvec, rmatvec
from linsvm._data cimport DataView
from line_search cimport Breakpoint
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise
from comm cimport Comm, comm_from, comm_active, comm_sum, comm_sum1
from wsplit cimport Split, split_from
from newton_driver cimport (CONVERGED, MAX_ITER, NewtonSettings, NewtonWork, NewtonLoss,
                           newton_drive, newton_settings, check_settings, take_setting)
from svr_loss cimport SvrState, tube_slope, svr_value, grad0_sq, svr_loss
from rng cimport shuffle


cdef int _check_common(DataView data, const double[::1] y, const double[::1] c, double p,
                       int64_t n_want, int64_t n_got) except -1:
    """Raise ValueError unless the targets and costs match the view's rows in length and
    are finite (costs >= 0), p >= 0 and the solution vector has n_want entries (n_got)."""
    cdef int64_t k, m = data.n
    if y.shape[0] != m or c.shape[0] != m:
        raise ValueError("targets/costs and rows differ in length")
    if n_got != n_want:
        raise ValueError(f"the start vector has {n_got} entries, expected {n_want}")
    if not (p >= 0.0 and isfinite(p)):
        raise ValueError("the tube width p must be >= 0 and finite")
    for k in range(m):
        if not (isfinite(y[k]) and isfinite(c[k]) and c[k] >= 0.0):
            raise ValueError("targets must be finite and costs finite and >= 0")
    return 0


cdef object _carve(int64_t m, int64_t nw, int max_iter, NewtonWork* W, SvrState* S):
    """The work arrays of a Newton solve, carved into W and S; returns the arrays (the
    caller keeps them) and the trace's offset in the first.  The line search's
    breakpoints (2 per example) lie over CGLS's cc, z, q, u and its trial margins over
    xd, all dead while it runs (csrc/newton_driver.pxd, NewtonWork); zone 1 and the
    other examples share one list (svr_active)."""
    cdef int64_t me = max(m, 1), mw = max(nw, 1)
    fbuf = np.zeros(15 * me + 9 * mw + 3 + max(max_iter, 1), dtype=np.float64)
    ibuf = np.zeros(2 * me, dtype=np.int64)
    zbuf = np.zeros(me, dtype=np.int8)
    cdef double* F0 = <double*>cnp.PyArray_DATA(fbuf)
    cdef int64_t* I0 = <int64_t*>cnp.PyArray_DATA(ibuf)
    W.y, W.dy = F0, F0 + me
    W.cc, W.z, W.q, W.u, W.xd = F0 + 2 * me, F0 + 3 * me, F0 + 4 * me, F0 + 5 * me, F0 + 6 * me
    W.ytry = W.xd
    S.bp = <Breakpoint*>W.cc                   # 4 doubles per example: cc, z, q, u
    S.tv, S.tdv, S.tt, S.tc = F0 + 7 * me, F0 + 9 * me, F0 + 11 * me, F0 + 13 * me   # 2 m each
    W.beta_bar = F0 + 15 * me
    W.r, W.p, W.sv = W.beta_bar + mw, W.beta_bar + 2 * mw, W.beta_bar + 3 * mw
    W.minv, W.dsum, W.diag = W.beta_bar + 4 * mw, W.beta_bar + 5 * mw, W.beta_bar + 6 * mw
    W.h = W.beta_bar + 7 * mw                   # nw + 3
    S.act_rows, S.act_pos = I0, I0 + me
    S.zone_of = <int8_t*>cnp.PyArray_DATA(zbuf)
    return (fbuf, ibuf, zbuf), 15 * me + 9 * mw + 3


def svr_newton_solve(DataView data, *, const double[::1] y, const double[::1] c, double C,
                     double[::1] beta, object callback=None, object comm=None,
                     object split=None, double ref_prediction=0.0, **settings):
    """Minimize F(w) = 1/2 ||w||_R^2 + C sum_k c_k max(0, |w.x_k - y_k| - p)^2 by the
    modified finite Newton method (block comment; Keerthi & DeCoste 2005, Sections 3-4),
    updating beta in place.  settings, every one required (the catalog's option names):
    epsilon (p, the tube's half-width), regularize_bias (off: ||.||_R leaves out the bias
    weight, when bias > 0), tol (eq. 13's tolerance), warm, heuristic1, heuristic2,
    precondition, jacobi_weight, fused_cg, forcing, forcing_guard, max_iter, cg_max_iter,
    n_threads (as for csrc/_mfn.pyx's newton_solve), and gstop >= 0: also stop at the
    first iterate with ||grad F|| <= gstop ||grad F(beta_0)|| (LIBLINEAR's test; 0: off),
    beta_0 the model predicting ref_prediction everywhere (0: beta = 0; a free bias's
    solve passes the mean target, the reference of a cold start).  comm: None, or the
    Collective of a distributed solve (rows, y, c this rank's block).  split: None, or
    this rank's linsvm.runtime.wsplit.WeightSplit (with comm): CGLS in the weight-split
    arrangement (cgls.pxd), the Newton loop replicated.  callback(it, f, n_active, cg_it)
    after each outer iteration that moved beta (f in the paper's scaling; a true return
    value after a line-search step ends the solve, status 4).
    Returns a dict: status (0 converged, 1 iteration cap, 2 no descent, 3 gradient test),
    n_iter, cg_iter, objective F, n_active (examples outside the tube, over every rank),
    trace (F per Newton iteration)."""
    cdef int64_t m = data.n, k, nw = data.n_weights
    cdef int status, n_iter = 0
    cdef int64_t cg_total = 0, n_act = 0, o_trace
    cdef double lam = 0.5 / C, F = 0.0
    cdef double p = take_setting(settings, "epsilon")
    cdef bint regularize_bias = take_setting(settings, "regularize_bias")
    cdef int n_threads = take_setting(settings, "n_threads")
    cdef NewtonSettings P = newton_settings(settings, SVR_FIXED)
    _check_common(data, y, c, p, nw, beta.shape[0])
    if not (C > 0 and isfinite(C)):
        raise ValueError("C must be > 0")
    check_settings(&P)
    cdef NewtonWork W
    cdef SvrState S
    arrays, o_trace = _carve(m, nw, P.max_iter, &W, &S)
    cdef double* trace = <double*>cnp.PyArray_DATA(arrays[0]) + o_trace
    cdef CSR X
    scratch = data.kernel_csr(entry_threads(n_threads), 0, &X)
    cdef Stop ST
    cdef Comm CM = comm_from(comm)
    cdef Split SP
    cdef void* cb = <void*>callback if callback is not None else NULL
    stop_init(&ST, data.nnz, data.n_rows)
    W.X, W.rows, W.m, W.nbeta, W.lam = &X, data.row_list(), m, nw, lam
    W.nreg = nw - 1 if (not regularize_bias and data.bias > 0) else nw
    W.stop, W.comm, W.split, W.cg_split = &ST, &CM, NULL, NULL
    S.yt = &y[0] if m > 0 else NULL
    S.c = &c[0] if m > 0 else NULL
    S.p = p
    if split is not None and comm_active(&CM):
        if split.n_weights != nw:
            raise ValueError("the weight split is for another number of weights")
        SP = split_from(split, &CM)           # CGLS alone: the Newton loop replicated
        W.cg_split = &SP
    cdef NewtonLoss NL = svr_loss(&S)
    with nogil:
        matvec(&X, W.rows, m, &beta[0], W.y)
        if P.gstop > 0.0 and P.warm:
            P.g0sq = grad0_sq(&S, &W, ref_prediction)
        status = newton_drive(&NL, &W, &beta[0], &P, &n_iter, &cg_total, trace, cb)
        if not ST.stopped:
            F = svr_value(&NL, &W, &beta[0], W.y)
            for k in range(m):
                if S.c[k] > 0.0 and fabs(W.y[k] - S.yt[k]) > p:
                    n_act += 1
            if comm_active(&CM):
                n_act = <int64_t>comm_sum1(&CM, <double>n_act)
    stop_raise(&ST)
    return dict(status=status, n_iter=n_iter, cg_iter=int(cg_total), objective=F / lam,
                n_active=int(n_act), trace=arrays[0][o_trace:o_trace + n_iter] / lam)


# svr_newton_solve's fixed settings: the Jacobi diagonal summed afresh at each step, the
# gradient test uncertified (the caller checks the duality gap)
SVR_FIXED = dict(diag_update=False, compact_rows=False, gap_stop=0.0)


def svr_primal_value(DataView data, *, const double[::1] y, const double[::1] c, double C,
                     double epsilon, const double[::1] w, str loss,
                     bint regularize_bias=True, object comm=None):
    """(F(w), grad F(w), pred) for the SVR objective with tube half-width epsilon (loss
    "l1": F's subgradient with sign(0) = 0; "l2": its square).  comm: sums over every
    rank's examples."""
    if loss not in ("l1", "l2"):
        raise ValueError(f"loss must be 'l1' or 'l2', got {loss!r}")
    cdef int l1 = loss == "l1"
    cdef double p = epsilon
    cdef int64_t m = data.n, k, j
    cdef int64_t nw = data.n_weights
    cdef int64_t nreg = nw - 1 if (not regularize_bias and data.bias > 0) else nw
    cdef double e, a, lsum = 0.0
    cdef Comm CM = comm_from(comm)
    _check_common(data, y, c, p, nw, w.shape[0])
    cdef const int64_t* rows = data.row_list()
    g_arr = np.zeros(nw + 1, dtype=np.float64)
    pred_arr = np.zeros(m, dtype=np.float64)
    u_arr = np.zeros(m, dtype=np.float64)
    cdef double[::1] g = g_arr, pred = pred_arr, u = u_arr
    cdef CSR X = data.csr(1, NULL)
    with nogil:
        if m > 0:
            matvec(&X, rows, m, &w[0], &pred[0])
            for k in range(m):
                e = pred[k] - y[k]
                a = fabs(e) - p
                if a > 0.0:
                    if l1:
                        lsum += c[k] * a
                        u[k] = C * c[k] * (1.0 if e > 0 else -1.0)
                    else:
                        lsum += c[k] * a * a
                        u[k] = 2.0 * C * c[k] * (a if e > 0 else -a)
            rmatvec(&X, rows, m, &u[0], &g[0])
        if comm_active(&CM):
            g[nw] = lsum
            comm_sum(&CM, &g[0], nw + 1)
            lsum = g[nw]
        for j in range(nreg):
            g[j] += w[j]
    wr = np.asarray(w)[:nreg]
    return 0.5 * vdot(wr, wr) + C * lsum, g_arr[:nw].copy(), pred_arr


# ---------------------------------------------------------------- dual coordinate descent

cdef inline double _violation(double G, double p, double b, double U) noexcept nogil:
    """The optimality violation of coordinate k (block comment)."""
    cdef double Gp = G + p, Gn = G - p
    if b == 0.0:
        if Gp < 0.0:
            return -Gp
        if Gn > 0.0:
            return Gn
        return 0.0
    if b >= U:
        return Gp if Gp > 0.0 else 0.0
    if b <= -U:
        return -Gn if Gn < 0.0 else 0.0
    if b > 0.0:
        return fabs(Gp)
    return fabs(Gn)


ctypedef struct Ex:
    # One example of the dual solve, packed so that a coordinate step reads one record
    # (its row span, target, variable and constants) instead of six arrays.
    int64_t start                  # its non-zeros: indices/data[start:end]
    int64_t end
    double y
    double b                       # the dual variable beta_k
    double QD                      # ||x_k||^2 + lam_k
    double U                       # the box: -U_k <= beta_k <= U_k
    double Dg                      # lam_k


cdef enum:
    AHEAD = 8                      # prefetch distance of svr_dcd, in steps of its loop


ctypedef struct DualCd:
    # Ho & Lin's Algorithm 4 as svr_dcd runs it: its settings, generator and outputs.
    double epsilon                 # p, the tube's half-width
    double tol                     # stop: summed violation <= tol x the reference
    double ref                     # the reference summed violation (<= 0: the first loop's)
    int warm                       # the reference is the violation at b = 0 (_dual_start)
    int shrinking
    int max_iter
    uint64_t rng                   # the permutations' generator (csrc/rng.pxd)
    int n_iter                     # out: loops
    double violation               # out: the last loop's summed violation, relative
    double* trace                  # out: (loop, summed violation, active) per loop
    void* callback                 # callback(loop, relative violation, active), or NULL
    Stop* stop


cdef int svr_dcd(const CSR* X, Ex* ex, double* w, int64_t* index, int64_t n_total,
                 DualCd* D) noexcept nogil:
    """Ho & Lin's Algorithm 4 with shrinking (block comment) from the ex[k].b (w = sum b x
    on entry).  Returns CONVERGED or MAX_ITER."""
    cdef int64_t n_active = n_total, s, tmp
    cdef double M = INFINITY, Mnew, Snew, G, H, Gp, Gn, d, b_old, vio
    cdef double p = D.epsilon, ref = D.ref
    cdef int it = 0, status = MAX_ITER, shrinking = D.shrinking
    cdef Ex* e
    while it < D.max_iter:
        shuffle(&D.rng, index, n_active)
        Mnew = 0.0
        Snew = 0.0
        s = 0
        while s < n_active:
            # the visits go in random order: ask for the next records and rows ahead of use
            if s + AHEAD < n_active:
                LINSVM_PREFETCH(&ex[index[s + AHEAD]])
            if s + AHEAD // 2 < n_active:
                prefetch_span(X, ex[index[s + AHEAD // 2]].start)
            e = &ex[index[s]]
            G = dot_row_span(X, e.start, e.end, w) - e.y + e.Dg * e.b
            Gp = G + p
            Gn = G - p
            if shrinking:
                if (e.b == 0.0 and Gp > M and Gn < -M) or (e.b >= e.U and Gp < -M) or \
                        (e.b <= -e.U and Gn > M):
                    n_active -= 1
                    tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                    continue
            vio = _violation(G, p, e.b, e.U)
            if vio > Mnew:
                Mnew = vio
            Snew += vio
            H = e.QD
            if Gp < H * e.b:
                d = -Gp / H
            elif Gn > H * e.b:
                d = -Gn / H
            else:
                d = -e.b
            s += 1
            if fabs(d) < 1e-12:
                continue
            b_old = e.b
            e.b = b_old + d
            if e.b > e.U:
                e.b = e.U
            elif e.b < -e.U:
                e.b = -e.U
            d = e.b - b_old
            if d != 0.0:
                axpy_row_span(X, e.start, e.end, d, w)   # w += d x_k
        it += 1
        if ref <= 0.0:
            ref = Snew if Snew > 0.0 else 1e-300
        D.trace[3 * (it - 1)] = it
        D.trace[3 * (it - 1) + 1] = Snew
        D.trace[3 * (it - 1) + 2] = n_active
        D.violation = Snew / ref
        if D.callback != NULL:
            with gil:
                try:
                    (<object>D.callback)(it, Snew / ref, n_active)
                except BaseException as exc:
                    stop_keep(D.stop, exc)
        if stop_poll(D.stop, n_active * D.stop.per_row):
            break
        if Snew <= D.tol * ref:
            if n_active == n_total:
                status = CONVERGED
                break
            n_active = n_total                      # check every example before stopping
            M = INFINITY
            continue
        M = Mnew if Mnew > 0.0 else INFINITY
    D.n_iter = it
    return status


cdef int _dual_start(const CSR* X, const int64_t* rows, int64_t m, const double* y,
                     const double* c, double C, int l1, double* b, double* box,
                     int64_t* index, double* w, DualCd* D) noexcept nogil:
    """The box, the diagonal and the start: box (3 m) holds U_k, lam_k (Dg) and
    QD_k = ||x_k||^2 + lam_k; b clipped to the box (0 where c_k = 0), w = sum b_k x_k,
    index the examples that can move; with D.warm, D.ref the reference violation at
    b = 0, sum_k max(0, |y_k| - p).  Returns how many examples can move."""
    cdef int64_t k, n_total = 0
    cdef double* U = box
    cdef double* Dg = box + m
    cdef double* QD = box + 2 * m
    cdef double a, p = D.epsilon, ref = 0.0
    for k in range(m):
        if c[k] <= 0.0:
            U[k] = 0.0
            Dg[k] = 0.0
            b[k] = 0.0
        elif l1:
            U[k] = C * c[k]
            Dg[k] = 0.0
        else:
            U[k] = INFINITY
            Dg[k] = 0.5 / (C * c[k])
        if b[k] > U[k]:
            b[k] = U[k]
        elif b[k] < -U[k]:
            b[k] = -U[k]
        QD[k] = sq_norm_row(X, rows[k]) + Dg[k]
        if c[k] > 0.0:
            if QD[k] > 0.0:
                index[n_total] = k
                n_total += 1
            elif l1:
                # x_k = 0: the best b_k is U_k sign(y_k) when |y_k| > p, whatever w is
                b[k] = U[k] if y[k] > p else (-U[k] if y[k] < -p else 0.0)
        if b[k] != 0.0:
            axpy_row(X, rows[k], b[k], w)
        if D.warm:
            a = fabs(y[k]) - p
            if c[k] > 0.0 and a > 0.0:
                ref += a
    if D.warm and ref <= 0.0:
        ref = 1e-300
    D.ref = ref
    return n_total


def svr_dual_solve(DataView data, *, const double[::1] y, const double[::1] c, double C,
                   double[::1] b, object callback=None, **settings):
    """Solve the SVR dual by coordinate descent (Ho & Lin 2012, Algorithm 4; block
    comment), starting from b (updated in place, clipped to the box; examples with
    c = 0 are held at 0).  settings, every one required (the catalog's option names):
    loss ("l1": -s 13, "l2": -s 12), epsilon (p), tol, shrinking, max_iter, seed (of the
    permutations), warm (measure the stop against the violation at b = 0 instead of the
    first loop's).  Returns a dict: w, status (0 converged, 1 loop cap), n_iter, primal
    F(w), dual (the maximization dual -g(b)), violation (the last loop's, relative), n_sv
    (b != 0), n_bound (|b| = U), trace (loop, summed violation, active)."""
    cdef int64_t m = data.n, k, n_total
    cdef int status = CONVERGED
    cdef DualCd D
    loss = take_setting(settings, "loss")
    D.epsilon, D.tol = take_setting(settings, "epsilon"), take_setting(settings, "tol")
    D.shrinking = take_setting(settings, "shrinking")
    D.max_iter, D.rng = take_setting(settings, "max_iter"), take_setting(settings, "seed")
    D.warm = take_setting(settings, "warm")
    D.n_iter, D.violation = 0, 0.0
    if settings:
        raise TypeError(f"unexpected setting {next(iter(settings))!r}")
    if loss not in ("l1", "l2"):
        raise ValueError(f"loss must be 'l1' or 'l2', got {loss!r}")
    if not (C > 0 and isfinite(C)):
        raise ValueError("C must be > 0")
    _check_common(data, y, c, D.epsilon, m, b.shape[0])
    cdef const int64_t* rows = data.row_list()
    cdef int l1 = loss == "l1"
    w_arr = np.zeros(data.n_weights, dtype=np.float64)
    box_arr = np.empty(3 * max(m, 1), dtype=np.float64)       # U, lam_k, QD per example
    idx_arr = np.empty(max(m, 1), dtype=np.int64)
    ex_arr = np.empty(7 * max(m, 1), dtype=np.float64)         # m Ex records (56 bytes)
    trace_arr = np.zeros(3 * max(D.max_iter, 1), dtype=np.float64)
    cdef double* box = <double*>cnp.PyArray_DATA(box_arr)
    cdef double* w = <double*>cnp.PyArray_DATA(w_arr)
    cdef int64_t* index = <int64_t*>cnp.PyArray_DATA(idx_arr)
    cdef Ex* ex = <Ex*>cnp.PyArray_DATA(ex_arr)
    cdef CSR X = data.csr(1, NULL)
    cdef Stop ST
    D.trace = <double*>cnp.PyArray_DATA(trace_arr)
    D.callback = <void*>callback if callback is not None else NULL
    D.stop = &ST
    stop_init(&ST, data.nnz, data.n_rows)
    with nogil:
        n_total = _dual_start(&X, rows, m, &y[0] if m > 0 else NULL,
                              &c[0] if m > 0 else NULL, C, l1, &b[0] if m > 0 else NULL, box,
                              index, w, &D)
        if D.max_iter > 0 and n_total > 0:
            for k in range(m):
                ex[k].start = row_start(&X, rows[k])
                ex[k].end = row_stop(&X, rows[k])
                ex[k].y = y[k]
                ex[k].b = b[k]
                ex[k].QD = box[2 * m + k]
                ex[k].U = box[k]
                ex[k].Dg = box[m + k]
            status = svr_dcd(&X, ex, w, index, n_total, &D)
            for k in range(m):
                b[k] = ex[k].b
    stop_raise(&ST)
    ww, lsum, dsum, n_sv, n_bound = _dual_values(&X, rows, y, c, b, box, D.epsilon, l1, w_arr)
    return dict(w=w_arr, status=status, n_iter=D.n_iter, primal=0.5 * ww + C * lsum,
                dual=-(0.5 * ww + dsum),
                violation=D.violation, n_sv=n_sv, n_bound=n_bound,
                trace=trace_arr[:3 * D.n_iter].reshape(-1, 3).copy())


cdef tuple _dual_values(const CSR* X, const int64_t* rows, const double[::1] y,
                        const double[::1] c, const double[::1] b, const double* box, double p,
                        int l1, w_arr):
    """The certificate's sums at the returned point: ||w||^2, the loss sum of F(w) =
    1/2 ||w||^2 + C loss, the separable part of g(b) = 1/2 ||w||^2 + that part, and the
    counts n_sv, n_bound."""
    cdef int64_t k, m = b.shape[0], n_sv = 0, n_bound = 0
    cdef const double[::1] w = w_arr
    cdef double e, a, primal = 0.0, dual = 0.0, ww = vdot(w_arr, w_arr)
    for k in range(m):
        e = dot_row(X, rows[k], &w[0]) - y[k]
        a = fabs(e) - p
        if a > 0.0:
            primal += c[k] * (a if l1 else a * a)
        dual += box[m + k] * 0.5 * b[k] * b[k] - y[k] * b[k] + p * fabs(b[k])
        if b[k] != 0.0:
            n_sv += 1
            if fabs(b[k]) >= box[k]:
                n_bound += 1
    return ww, primal, dual, int(n_sv), int(n_bound)


def svr_certificate(DataView data, *, const double[::1] y, const double[::1] c, double C,
                    double epsilon, const double[::1] w, bint regularize_bias,
                    int n_threads=1, object comm=None):
    """Duality-gap certificate of w for the l2 SVR (F of svr_newton_solve): the dual point
    b_k = -2 C c_k l'(e_k) of the primal optimality condition w = sum_k b_k x_k (Ho & Lin
    2012, eq. 13 with lam_k = 1/(2 C c_k)); with a free bias its dual has the constraint
    sum_k b_k = 0 (the bias column is constant), met by subtracting the mean of b over the
    examples with c_k > 0.  Returns (F(w), D(b)) with D(b) = -(1/2 ||w(b)||_R^2 +
    sum_k (b_k^2 / (4 C c_k) - y_k b_k + p |b_k|)) <= F* <= F(w), p = epsilon.  comm: every sum over
    every rank's examples."""
    cdef double p = epsilon
    cdef int64_t m = data.n, k
    cdef int64_t nw = data.n_weights
    cdef int64_t nreg = nw - 1 if (not regularize_bias and data.bias > 0) else nw
    cdef double e, a, shift = 0.0
    cdef double sums[4]
    cdef Comm CM = comm_from(comm)
    _check_common(data, y, c, p, nw, w.shape[0])
    cdef CSR X
    scratch = data.kernel_csr(entry_threads(n_threads), 0, &X)
    cdef const int64_t* rows = data.row_list()
    pred_arr = np.zeros(m, dtype=np.float64)
    b_arr = np.zeros(m, dtype=np.float64)
    wb_arr = np.zeros(nw, dtype=np.float64)
    cdef double[::1] pred = pred_arr, b = b_arr, wb = wb_arr
    sums[0] = 0.0      # loss
    sums[1] = 0.0      # sum b
    sums[2] = 0.0      # count c > 0
    sums[3] = 0.0      # dual's separable part
    with nogil:
        if m > 0:
            matvec(&X, rows, m, &w[0], &pred[0])
        for k in range(m):
            e = pred[k] - y[k]
            a = tube_slope(e, p)
            sums[0] += c[k] * a * a
            if c[k] > 0.0:
                b[k] = -2.0 * C * c[k] * a
                sums[1] += b[k]
                sums[2] += 1.0
        comm_sum(&CM, sums, 3)
        if nreg < nw and sums[2] > 0.0:
            shift = sums[1] / sums[2]
        for k in range(m):
            if c[k] > 0.0:
                b[k] -= shift
                sums[3] += b[k] * b[k] / (4.0 * C * c[k]) - y[k] * b[k] + p * fabs(b[k])
        if m > 0:
            rmatvec(&X, rows, m, &b[0], &wb[0])
        comm_sum(&CM, &wb[0], nw)
        sums[3] = comm_sum1(&CM, sums[3])
    F = 0.5 * vdot(w[:nreg], w[:nreg]) + C * sums[0]
    D = -(0.5 * vdot(wb_arr[:nreg], wb_arr[:nreg]) + sums[3])
    return F, D
