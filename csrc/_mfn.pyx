# The modified finite Newton family of Keerthi & DeCoste (JMLR 2005): one Newton
# driver for every loss of the family, binary and ordinal.
#
# Problem.  Each solver minimizes, in the paper's scaling,
#
#     f(beta) = lam/2 ||beta||^2 + sum_j c_j l(o_j),      o_j = t_j v_j,
#
# over "terms" j.  A binary term is an example k: v_k = y_k = x_k . beta (x_k
# includes the bias feature), t_k = +-1.  An ordinal term is a pair (k, s) of an
# example and one of the nb = p - 1 thresholds (Section 7, eq. 25): beta = (w, b),
# v_ks = y_k - b_s with y_k = x_k . w, and t_ks = -1 if the rank of k is <= s
# (k must score below b_s - 1), +1 otherwise (above b_s + 1).
#
# Loss.  Every member uses the same convex, C^1, piecewise quadratic l, given
# by a Loss record (a, tm, hi, lo) on the margin o:
#
#     zone 0   o >= hi          l = 0
#     zone 1   lo < o < hi      l = a/2 (tm - o)^2              (the least-squares piece)
#     zone 2   o <= lo          l = kappa (lo - o) + a/2 (tm - lo)^2,   kappa = a (tm - lo)
#
#     L2-SVM (mfn, eq. 2/20)        a = 1,       tm = hi = 1,     lo = -inf
#     LS-SVM (ls, Section 4.3)      a = 1,       tm = 1, hi = +inf, lo = -inf  (all active)
#     modified Huber (eq. 21)       a = 1,       tm = hi = 1,     lo = -1      (xi = 1 - o:
#                                   zone 0/1/2 are the paper's I0/I1/I2)
#     smoothed hinge, width tau     a = 1/(2 tau), tm = hi = 1 + tau, lo = 1 - tau  (Section 6:
#                                   tau/2 L_h(xi/tau + 1), one stage of the L1 continuation;
#                                   tau = 2^-k keeps every constant exact, kappa = 1)
#
# Algorithm (Sections 3-4, 6, 7 and Appendix A; notation of Appendix A):
#   1. start from beta (0 or a warm start); y = X w
#   3. classify the terms into zones at beta.  The Newton model keeps the zones:
#          lam/2 ||beta||^2 + 1/2 sum_{zone 1} a c_j (v_j - t_j tm)^2 - sum_{zone 2} c_j kappa t_j v_j
#      With q = (1/lam) sum_{zone 2} c_j kappa t_j x_j it is the shifted least-squares problem
#      of eq. 23 in beta~ = beta - q, solved by CGLS seeded at beta - q (residual z = t tm - v
#      on zone 1, weights a c_j), then beta_bar = beta~ + q.  Binary terms use the shared
#      cgls.pxd over the CSR rows of zone 1; ordinal terms (eq. 26) the same CGLS over the
#      operator (w, b) -> x_k . w - b_s (ordinal_operator below).  Heuristic 1: at most 10
#      CGLS iterations in the first step of a cold start.  A step's CGLS ends at eq. 13,
#      or at the forcing term ||r|| <= eta ||r_0|| once Galli & Lin's quadratic-model rule
#      at forcing_guard holds too (cgls.pxd, qguard).  Unguarded, the forcing term ended
#      every other step after one iteration on data with 1-2% positives, where the
#      gradient is mostly one direction, and the paper's stop then came 6e-4 above the
#      optimum instead of 1e-5 for the same work (docs/threads.md, "Imbalance").
#   5. dv = v(beta_bar) - v(beta) = X d with d = beta_bar - beta.  For binary terms CGLS
#      accumulates d and X d on zone 1 as it steps (cgls.pxd), so one mat-vec over the
#      other rows completes dv; ordinal terms take one mat-vec over all.  Stop if CGLS met
#      eq. 13 (for binary terms checked here on the true residual, once, when the rest
#      of the test passes) and the zones are consistent at beta_bar: terms whose zone
#      changed may add at most eps ||z||_C to the gradient, measured as
#      sum c_j |l'(o_j) - l'_model(o_j)| ||x_j||
#      (terms within 1e-8 of a knee count as consistent: Appendix A, footnote 17; within a
#      thousandth of zone 1's width if that is smaller).  Then
#      ||grad f(beta_bar)|| <= 2 eps ||z||_C.  Heuristic 2: converge at eps = 1e-2 first.
#   6. exact line search on beta + delta d: phi' is continuous, increasing and piecewise
#      linear, with a breakpoint wherever a term crosses a knee (hi or lo); each crossing
#      adds one term's change of piece to the end values l, r of phi''s line (eq. 16-18,
#      generalized to the three zones of Section 6 and to the p*m ordinal terms of
#      Section 7).  The root is found by selection instead of a sort (see exact_line_search).
#   7. beta += delta* d, y likewise, and back to 3 -- unless f would grow (Appendix A's
#      F > F_previous test, made before the step): then, as when delta* = 0, y is
#      recomputed once and the iteration retried, and a second failure ends the solve
#      (status NO_DESCENT: no descent left at machine precision).
#
# With a = 1, tm = hi = 1, lo = -inf every operation, and its rounding, is the one
# L2-SVM-MFN did before the family was added (multiplications by a = 1 and t tm = t
# are exact), so `mfn` keeps its iterates bit for bit.
#
# Distributed over row blocks (issue 18; Python entries' `comm`, csrc/comm.pxd): each rank
# holds its block of the examples (possibly none) and the same beta.  The zones, margins,
# CGLS residuals and breakpoints stay per rank; every sum over terms is completed by an
# allreduce before it is used (f, the eq. 23 shift, z'Cz, the zone mismatch, counts, the
# gradient test's ||grad f(0)||, the Section 4.7 KKT), CGLS takes one allreduce of
# nw + 3 doubles per iteration (cgls.pxd) and the line search's selection runs over every
# rank's breakpoints (mfn_shared.pxd), so every decision is taken on the same numbers on
# every rank and all end with the same beta.  The Jacobi diagonal is then summed afresh
# at each Newton step (diag_update is a rank-local shortcut).  With a weight split
# (Work.split, binary terms: csrc/wsplit.pxd) CGLS runs in cgls.pxd's split arrangement
# instead: each weight one owner, two sparse exchanges of the weights several ranks
# share and two small allreduces per iteration, and the binary Newton loop is split
# too (beta valid on each rank's own and touched weights, gathered at the end).
# Ordinal terms (Work.cg_split) split CGLS alone: the thresholds are weights every rank
# touches, and each Newton step's step is gathered on every rank (beta replicated).
#
# Inputs are addressed through `rows` (training rows, a fold or a random subset);
# t (binary) or the rank codes (ordinal) and the costs c are per position in rows.
# Work arrays are allocated once per solve by the Python entries below; nothing in
# the nogil code allocates or raises.

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy, memset
from libc.math cimport fabs, fmax, fmin, sqrt, isfinite, INFINITY
import numpy as np
cimport numpy as cnp

cnp.import_array()
from csr cimport (vdot, CSR, matvec, rmatvec, col_sq_sums, sq_norm_row, dot, axpy_row_sq,
                 entry_threads)
from linsvm._data cimport DataView
from entry_view cimport view_csr, view_rows
from cgls cimport Operator, csr_operator, cgls, residual, residual_split
from mfn_shared cimport (KNEE_HI, KNEE_LO, Breakpoint, Loss, Terms, make_loss, zone, loss_value,
                         loss_slope, mismatch_term, term_at, term_out, exact_line_search,
                         check_codes, _loss_from, dual_kkt)
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request
from comm cimport Comm, comm_from, comm_active, comm_sum, comm_sum1
from wsplit cimport Split, split_from, split_reduce, split_scatter, split_gather, split_dot

# Status codes returned to Python.
cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    NO_DESCENT = 2
    GRADIENT = 3                   # stopped by the gradient test (Params.gstop)
    CALLER = 4                     # the callback asked to stop after a step (its test held)

ctypedef struct Work:
    # per example (m)
    int64_t* act_rows              # rows of the zone-1 examples
    int64_t* act_pos               # binary: their positions k
    int64_t* lin_rows              # rows of the zone-2 examples (binary)
    int64_t* off_rows              # binary: rows of the examples outside zone 1
    int64_t* off_pos               # and their positions k
    int64_t n_act, n_lin           # binary: zone-1 and zone-2 examples of the last step
    double* lin_u                  # c kappa t / lam for them
    int64_t* ex_ptr                # ordinal: first zone-1 term of each active example (m + 1)
    double* xw                     # ordinal CGLS scratch: x_k . p_w
    double* U                      # ordinal CGLS scratch: summed term weights per example
    double* ytry                   # margins at the line search's point, before accepting it
    double* xd                     # binary: X d on the zone-1 rows, as CGLS accumulated it
    # per term (m * per)
    double* z                      # CGLS residual t tm - v on zone 1
    double* cc                     # CGLS weight a c on zone 1
    double* q
    double* u
    int32_t* act_s                 # ordinal: threshold of each zone-1 term
    Breakpoint* bp                 # line search (2 per term)
    int64_t n_bp                   # room in bp
    # per weight (nbeta)
    double* beta_bar
    double* r
    double* p
    double* sv
    double* minv
    double* shift                  # q of eq. 23 (binary, zone 2)
    double* h                      # fused CGLS scratch: X'C q
    double* dsum                   # binary: the CGLS step d = beta_bar - beta, accumulated
    double* diag                   # binary: diag(X_1' C X_1) of the last step's zone 1
    int64_t* in1                   # binary: 1 if example k was in that zone 1, else 0
    int64_t* chg                   # binary: examples whose zone-1 membership changed
    int have_diag                  # diag and in1 describe the last step's zone 1
    int shifted                    # binary: the last step solved for beta~ = beta - shift
    Stop* stop                     # polled by the loops (csrc/interrupt.pxd)
    const Comm* comm               # the ranks of a distributed solve (csrc/comm.pxd)
    const Split* split             # binary CGLS in the weight-split arrangement, or NULL
    const Split* cg_split          # ordinal: CGLS alone split (the Newton loop replicated)
    double* cg_xd                  # ordinal split CGLS: the step's image on the terms
    int64_t nreg                   # weights regularized: the first nreg of beta (binary
                                   # terms with a free bias: nbeta - 1; else nbeta)


ctypedef struct Params:
    double eps                     # eq. 13 tolerance
    double eta                     # inexact-Newton forcing term (0: off)
    double guard                   # its guard: the quadratic-model rule at this tolerance
                                   # must hold too (cgls.pxd, qguard; 0: no guard)
    int warm
    int heuristic1
    int heuristic2
    int precondition
    double jw                      # weight of the Jacobi diagonal in the preconditioner (cgls.pxd)
    int diag_update                # binary: update the Jacobi diagonal by the rows that moved
    int fused                      # fused CGLS iterations (cgls.pxd), binary terms
    double gstop                   # binary: stop at the first iterate with ||grad f|| <=
                                   # gstop ||grad f(0)|| (0: off; see newton_core)
    double g0sq                    # ||grad f(0)||^2 if known at entry (a warm start), else -1
    double gap_stop                # binary, every weight regularized: the gradient test
                                   # counts only once ||grad f||^2 <= 2 gap_stop lam f
                                   # (a relative duality gap <= gap_stop; 0: off)
    int max_iter
    int cg_max_iter


cdef double primal(const Loss* L, double lam, const double* beta, int64_t nbeta,
                   const Terms* T, const Comm* comm, const Split* split=NULL) noexcept nogil:
    """f(beta) = lam/2 ||beta||^2 + sum_j c_j l(o_j)  (eq. 2, 19, 25), from the margins
    (comm: this rank's terms, the loss sums reduced; split: beta valid on this rank's
    weights, ||beta||^2 summed over the owned ones and reduced with the loss)."""
    cdef int64_t k, s
    cdef double q2 = 0.0, lin = 0.0, v, t, o, d, a = L.a, tm = L.tm, hi = L.hi
    cdef double red[3]
    cdef int zn
    if split != NULL:
        return _primal_split(L, lam, beta, nbeta, T, comm, split)
    if T.nb == 0 and L.lo == -INFINITY:      # binary terms, no zone 2: the same sums, fewer tests
        for k in range(T.m):
            v = T.y[k]
            t = T.t[k]
            if t * v < hi:
                d = v - t * tm
                q2 += a * T.c[k] * d * d
        if comm_active(comm):
            q2 = comm_sum1(comm, q2)
        return 0.5 * lam * dot(beta, beta, nbeta) + 0.5 * q2
    for k in range(T.m):
        for s in range(T.per):
            term_out(T, k, s, &v, &t)
            o = t * v
            zn = zone(L, o)
            if zn == 1:
                d = v - t * L.tm
                q2 += L.a * T.c[k] * d * d
            elif zn == 2:
                lin += T.c[k] * (L.kappa * (L.lo - o) + L.lin0)
    if comm_active(comm):
        red[0] = q2
        red[1] = lin
        comm_sum(comm, red, 2)
        q2 = red[0]
        lin = red[1]
    return 0.5 * lam * dot(beta, beta, nbeta) + 0.5 * q2 + lin


cdef double _primal_split(const Loss* L, double lam, const double* beta, int64_t nbeta,
                          const Terms* T, const Comm* comm, const Split* split) noexcept nogil:
    """primal() of binary terms with a weight split: one allreduce of the loss's two
    sums and this rank's part of ||beta||^2 (its owned weights)."""
    cdef int64_t k
    cdef double v, t, o, red[3]
    cdef int zn
    red[0] = 0.0
    red[1] = 0.0
    red[2] = split_dot(split, beta, beta, nbeta)
    for k in range(T.m):
        v = T.y[k]
        t = T.t[k]
        o = t * v
        zn = zone(L, o)
        if zn == 1:
            red[0] += L.a * T.c[k] * (v - t * L.tm) * (v - t * L.tm)
        elif zn == 2:
            red[1] += T.c[k] * (L.kappa * (L.lo - o) + L.lin0)
    comm_sum(comm, red, 3)
    return 0.5 * lam * red[2] + 0.5 * red[0] + red[1]


cdef double _primal_at(const Loss* L, double lam, const double* beta, int64_t nbeta,
                       const Terms* T, double* y, int64_t nw, const Comm* comm,
                       const Split* split=NULL) noexcept nogil:
    """primal() at another point: beta and its margins y (the thresholds inside beta)."""
    cdef Terms T2 = T[0]
    T2.y = y
    if T.nb > 0:
        T2.b = beta + nw
    return primal(L, lam, beta, nbeta, &T2, comm, split)


cdef void copy_weights(double* dst, const double* src, int64_t n, const Split* S) noexcept nogil:
    """dst = src: the n weights, or with an outer weight split (S) this rank's (S.mine)."""
    cdef int64_t i, j
    if S == NULL:
        memcpy(dst, src, n * sizeof(double))
        return
    for i in range(S.n_mine):
        j = S.mine[i]
        dst[j] = src[j]


cdef void zone_counts(const Loss* L, const Terms* T, int64_t* counts,
                      const Comm* comm) noexcept nogil:
    """Number of terms in zones 0, 1, 2 at beta (comm: over every rank's terms)."""
    cdef int64_t k, s
    cdef double v, t
    cdef double red[3]
    counts[0] = 0
    counts[1] = 0
    counts[2] = 0
    for k in range(T.m):
        for s in range(T.per):
            term_out(T, k, s, &v, &t)
            counts[zone(L, t * v)] += 1
    if comm_active(comm):
        for k in range(3):
            red[k] = <double>counts[k]
        comm_sum(comm, red, 3)
        for k in range(3):
            counts[k] = <int64_t>red[k]


# ------------------------------------------------------------------ ordinal operator (eq. 26)

ctypedef struct OrdAct:
    # The zone-1 terms of an ordinal problem, grouped by example.
    const int64_t* rows            # row of each active example (n_ex)
    const int64_t* ptr             # its terms are ptr[e] .. ptr[e + 1] - 1
    const int32_t* s               # threshold of each term
    int64_t n_ex
    int64_t n_terms
    int64_t nw                     # weights before the thresholds in beta
    int64_t nb
    double* xw                     # scratch: x_k . p_w per active example (n_ex)
    double* U                      # scratch: summed term weights per active example (n_ex)


cdef void ord_apply(const Operator* A, const double* p, double* out) noexcept nogil:
    """out_j = x_k . p_w - p_b[s]  for the active terms j = (k, s): one mat-vec over the
    active examples, whatever their number of terms."""
    cdef const OrdAct* O = <const OrdAct*>A.ctx
    cdef int64_t e, j
    matvec(A.X, O.rows, O.n_ex, p, O.xw)
    for e in range(O.n_ex):
        for j in range(O.ptr[e], O.ptr[e + 1]):
            out[j] = O.xw[e] - p[O.nw + O.s[j]]


cdef void ord_apply_t(const Operator* A, const double* u, double* out) noexcept nogil:
    """out = A' u: out_w = sum_k (sum_{j of k} u_j) x_k (one scatter), out_b[s] = -sum_{j: s_j = s} u_j."""
    cdef const OrdAct* O = <const OrdAct*>A.ctx
    cdef int64_t e, j
    cdef double acc
    for e in range(O.n_ex):
        acc = 0.0
        for j in range(O.ptr[e], O.ptr[e + 1]):
            acc += u[j]
        O.U[e] = acc
    rmatvec(A.X, O.rows, O.n_ex, O.U, out)
    memset(out + O.nw, 0, O.nb * sizeof(double))
    for j in range(O.n_terms):
        out[O.nw + O.s[j]] -= u[j]


cdef Operator ordinal_operator(const CSR* X, const OrdAct* O) noexcept nogil:
    """The operator of eq. 26 on the active terms of O, (w, b) -> x_k . w - b_s, for
    cgls.pxd: applied in O(nnz of the active examples + number of active terms).  It
    has no fused pass and no built-in Jacobi diagonal (ordinal_step forms minv)."""
    cdef Operator A
    A.n = O.n_terms
    A.nw = O.nw + O.nb
    A.poll_rows = O.n_ex
    A.apply = ord_apply
    A.apply_t = ord_apply_t
    A.normal = NULL
    A.apply_t_sq = NULL
    A.X = X
    A.rows = O.rows
    A.ctx = O
    return A


# ------------------------------------------------------------------ Newton steps (step 3)

cdef int binary_step(const CSR* X, const int64_t* rows, const Terms* T, const Loss* L,
                     double lam, const double* beta, Work* W, double eps, double eta,
                     double guard, int cg_cap, int precondition, double jw, int diag_update,
                     int fused, int64_t* n_act_out, int* optimal, double stop_rr=0.0,
                     double* rr0=NULL) noexcept nogil:
    """beta_bar (W.beta_bar) = argmin of the Newton model of binary terms (eq. 11 / eq. 23)
    by cgls.pxd, seeded at beta - q.  Returns the CGLS iterations.

    The damped Jacobi preconditioner 1 / (lam + jw diag(X_1' C X_1)) (cgls.pxd) keeps
    its diagonal across Newton steps:
    when fewer than a quarter of the zone-1 examples entered or left zone 1 since the
    last step, diag is updated by their rows alone (+- c x_k^2) instead of being
    summed again over all of zone 1.  It only preconditions, so rounding in diag
    changes the CGLS path at rounding level and never what eq. 13 accepts.
    stop_rr, rr0: the gradient test of cgls.pxd (*optimal = 2: beta is accepted; CGLS's
    entry residual is -grad f(beta), zone 2 included through beta~ = beta - q).
    Distributed (W.comm): this rank's examples; the shift q is reduced (and formed by
    every rank whenever the loss has a zone 2, as another rank may have terms there),
    the Jacobi diagonal is summed afresh at every step (a rank's update would only know
    its own rows), and CGLS runs over the ranks (cgls.pxd).  *n_act_out and W.n_act:
    this rank's zone 1."""
    cdef int64_t k, j, n_act = 0, n_lin = 0, nw = X.n_weights, n_chg = 0
    cdef double o
    cdef int zn, it, keep, jacobi = precondition, dist = comm_active(W.comm)
    cdef int64_t n_off = 0
    cdef Operator A
    for k in range(T.m):
        o = T.t[k] * T.y[k]
        zn = zone(L, o)
        if (zn == 1) != W.in1[k]:
            W.chg[n_chg] = k
            n_chg += 1
        if zn == 1:
            W.act_rows[n_act] = rows[k]
            W.act_pos[n_act] = k
            W.cc[n_act] = L.a * T.c[k]
            W.z[n_act] = T.t[k] * L.tm - T.y[k]
            n_act += 1
            continue
        W.off_rows[n_off] = rows[k]
        W.off_pos[n_off] = k
        n_off += 1
        if zn == 2:
            W.lin_rows[n_lin] = rows[k]
            W.lin_u[n_lin] = T.c[k] * L.kappa * T.t[k] / lam
            n_lin += 1
    copy_weights(W.beta_bar, beta, nw, W.split)
    W.shifted = n_lin > 0 or (dist and L.lo > -INFINITY)
    if W.shifted:                                 # eq. 23: solve for beta~ = beta - q
        rmatvec(X, W.lin_rows, n_lin, W.lin_u, W.shift)
        if W.split != NULL:                       # q on this rank's weights
            split_reduce(W.split, W.shift)
            split_scatter(W.split, W.shift)
            for j in range(W.split.n_mine):
                W.beta_bar[W.split.mine[j]] -= W.shift[W.split.mine[j]]
        else:
            comm_sum(W.comm, W.shift, nw)
            for j in range(nw):
                W.beta_bar[j] -= W.shift[j]
    if precondition:
        keep = diag_update and W.have_diag and 4 * n_chg < n_act and not dist and W.nreg == nw
        for j in range(n_chg):                    # rows in and out of zone 1
            k = W.chg[j]
            W.in1[k] = 1 - W.in1[k]
            if keep:
                axpy_row_sq(X, rows[k], L.a * T.c[k] if W.in1[k] else -L.a * T.c[k], W.diag)
        if keep:
            for j in range(nw):
                W.minv[j] = 1.0 / (lam + jw * fmax(W.diag[j], 0.0))
            jacobi = 0                            # else cgls sums diag over zone 1 again
        W.have_diag = 1
    # with jacobi, cgls builds minv = 1 / (lam + jw diag(X_1' C X_1)) (and W.diag) itself;
    # it also hands back the step d (W.dsum) and X_1 d (W.xd), and leaves the eq. 13
    # check of the true residual to binary_eq13 (called only when the driver may stop)
    A = csr_operator(X, W.act_rows, n_act)
    it = cgls(&A, W.cc, lam, W.beta_bar, W.z, W.q, W.u, W.r, W.p, W.sv,
              W.minv if precondition else NULL, eps, eta, cg_cap, optimal, W.stop, fused, W.h,
              jacobi, W.dsum, W.xd, 0, W.diag, jw, stop_rr, rr0, W.comm, W.nreg, guard,
              guard > 0.0, W.split, guard > 0.0)
    if W.shifted and W.split != NULL:
        for j in range(W.split.n_mine):
            W.beta_bar[W.split.mine[j]] += W.shift[W.split.mine[j]]
    elif W.shifted:
        for j in range(nw):
            W.beta_bar[j] += W.shift[j]
    W.n_act = n_act
    W.n_lin = n_lin
    n_act_out[0] = n_act
    return it


cdef void binary_step_image(const CSR* X, const Terms* T, Work* W) noexcept nogil:
    """dy = X d for the step of the last binary_step (d = W.dsum, copied to W.p): the
    zone-1 rows from CGLS's accumulated X_1 d, one mat-vec over the other rows only."""
    cdef int64_t j, n_off = T.m - W.n_act
    copy_weights(W.p, W.dsum, X.n_weights, W.split)
    for j in range(W.n_act):
        T.dy[W.act_pos[j]] = W.xd[j]
    matvec(X, W.off_rows, n_off, W.p, W.q)
    for j in range(n_off):
        T.dy[W.off_pos[j]] = W.q[j]


cdef int binary_eq13(const CSR* X, Work* W, double lam, double eps, double zcz) noexcept nogil:
    """Eq. 13 on the true residual r = X_1'C z - lam beta~ of the last binary_step's
    CGLS (beta~ = beta_bar - shift), whose own test used the fused recurrence (zcz
    reduced when distributed; r is, here)."""
    cdef int64_t j, nw = X.n_weights
    cdef const double* bt = W.beta_bar
    cdef Operator A = csr_operator(X, W.act_rows, W.n_act)
    if W.shifted:
        for j in range(nw):
            W.sv[j] = W.beta_bar[j] - W.shift[j]
        bt = W.sv
    if W.split != NULL:                       # r on the owned weights, ||r||^2 reduced
        residual_split(&A, W.cc, W.z, lam, bt, W.u, W.r, NULL, NULL, 1.0, W.split, W.nreg)
        return comm_sum1(W.comm, split_dot(W.split, W.r, W.r, nw)) <= eps * eps * zcz
    residual(&A, W.cc, W.z, lam, bt, W.u, W.r, NULL, NULL, 1.0, W.comm, W.nreg)
    return dot(W.r, W.r, nw) <= eps * eps * zcz


cdef int ordinal_step(const CSR* X, const int64_t* rows, const Terms* T, const Loss* L,
                      double lam, const double* beta, int64_t nbeta, Work* W, double eps,
                      double eta, double guard, int cg_cap, int precondition, double jw,
                      int64_t* n_act_out,
                      int* optimal) noexcept nogil:
    """beta_bar = argmin of eq. 26 (the zone-1 terms at beta kept) by cgls.pxd over the
    ordinal operator, seeded at beta.  Ordinal losses have no zone 2 (checked by the
    Python entry).  Distributed (W.comm): this rank's examples; the preconditioner's
    diagonal is reduced and CGLS runs over the ranks (cgls.pxd); *n_act_out counts
    this rank's zone-1 terms."""
    cdef int64_t k, s, j, n_act = 0, n_ex = 0, start, nw = X.n_weights
    cdef double v, t, w_sum
    cdef OrdAct O
    cdef Operator A
    for k in range(T.m):
        start = n_act
        for s in range(T.nb):
            term_out(T, k, s, &v, &t)
            if zone(L, t * v) == 1:
                W.act_s[n_act] = <int32_t>s
                W.cc[n_act] = L.a * T.c[k]
                W.z[n_act] = t * L.tm - v
                n_act += 1
        if n_act > start:
            W.act_rows[n_ex] = rows[k]
            W.ex_ptr[n_ex] = start
            n_ex += 1
    W.ex_ptr[n_ex] = n_act
    O.rows = W.act_rows
    O.ptr = W.ex_ptr
    O.s = W.act_s
    O.n_ex = n_ex
    O.n_terms = n_act
    O.nw = nw
    O.nb = T.nb
    O.xw = W.xw
    O.U = W.U
    A = ordinal_operator(X, &O)
    memcpy(W.beta_bar, beta, nbeta * sizeof(double))
    if precondition:                              # minv = 1 / (lam + jw diag(A' C A))
        for k in range(n_ex):
            w_sum = 0.0
            for j in range(W.ex_ptr[k], W.ex_ptr[k + 1]):
                w_sum += W.cc[j]
            W.U[k] = w_sum
        col_sq_sums(X, W.act_rows, n_ex, W.U, W.minv)
        memset(W.minv + nw, 0, T.nb * sizeof(double))
        for j in range(n_act):
            W.minv[nw + W.act_s[j]] += W.cc[j]
        if W.cg_split != NULL:                    # summed at the owners, valid there
            split_reduce(W.cg_split, W.minv)
            for k in range(W.cg_split.n_own):
                j = W.cg_split.own[k]
                W.minv[j] = 1.0 / (lam + jw * W.minv[j])
        else:
            comm_sum(W.comm, W.minv, nbeta)
            for j in range(nbeta):
                W.minv[j] = 1.0 / (lam + jw * W.minv[j])
    n_act_out[0] = n_act
    # with W.cg_split, CGLS in the split arrangement: the step in dsum, its image in
    # cg_xd, beta_bar gathered on every rank at the end (both NULL without one)
    return cgls(&A, W.cc, lam, W.beta_bar, W.z, W.q, W.u, W.r, W.p, W.sv,
                W.minv if precondition else NULL, eps, eta, cg_cap, optimal, W.stop, 0, W.h,
                0, W.dsum if W.cg_split != NULL else NULL, W.cg_xd, 1, NULL, 1.0, 0.0, NULL,
                W.comm, -1, guard, guard > 0.0, W.cg_split, guard > 0.0)


# ------------------------------------------------------------------ the Newton driver

cdef double zone_mismatch(const Loss* L, const Terms* T, const CSR* X,
                          const int64_t* rows) noexcept nogil:
    """sum over terms whose zone at beta_bar (v + dv) differs from their zone at beta of
    c |l'(o) - l'_model(o)| ||x_term||: a bound on the gradient the zone changes add.
    ||x_term|| is ||x_k|| for binary terms, sqrt(||x_k||^2 + 1) for ordinal ones (the
    threshold's coefficient), computed only for the few terms that moved."""
    cdef int64_t k, s
    cdef double v, dv, t, mm, total = 0.0
    for k in range(T.m):
        for s in range(T.per):
            term_at(T, k, s, &v, &dv, &t)
            mm = mismatch_term(L, zone(L, t * v), t * (v + dv))
            if mm != 0.0:
                total += T.c[k] * mm * sqrt(sq_norm_row(X, rows[k]) + (1.0 if T.nb > 0 else 0.0))
    return total


cdef int newton_core(const CSR* X, const int64_t* rows, Terms* T, const Loss* L, double lam,
                     double* beta, int64_t nbeta, Work* W, const Params* P,
                     int* n_iter, int64_t* cg_total, double* trace, void* callback) noexcept nogil:
    """The modified finite Newton method (Appendix A, generalized as in Sections 6-7) from
    beta (in/out); returns a status code.  T.y holds X w on entry and on exit.
    trace[it] receives f after outer iteration it.  Once W.stop is stopped (Ctrl-C, an
    exception in the callback, a stop request: csrc/interrupt.pxd) it returns at once,
    beta and T.y then being meaningless; the caller raises.

    Besides the paper's test (zones settled and eq. 13 at the final eps), binary terms
    may stop at the first iterate whose gradient satisfies ||grad f|| <= gstop
    ||grad f(0)|| (status GRADIENT; an option, see linsvm/solvers/mfn.py): the
    test of LIBLINEAR's Newton solvers, checked for free on the residual each CGLS
    starts from, before any iteration of it runs.

    Distributed (W.comm, csrc/comm.pxd): T and rows are this rank's block, beta is
    replicated.  Every sum over terms (f, the zone mismatch, z'Cz, counts, the line
    search's) is reduced before it is used, so every rank takes each decision (accept,
    retry, stop) alike and ends with the same beta; CGLS takes one allreduce per
    iteration (cgls.pxd).  Only a stop (Ctrl-C, which mpiexec sends to every rank)
    ends one rank's loop on its own."""
    cdef int64_t k, j, n_act, n_show, nw = X.n_weights
    cdef int it = 0, cg_it, cg_cap, optimal, status = MAX_ITER, refreshed = 0
    cdef int need_second = P.heuristic2 and P.eps < 1e-2
    cdef int dist = comm_active(W.comm)
    cdef double eps_cur = 1e-2 if need_second else P.eps
    cdef double F = primal(L, lam, beta, W.nreg, T, W.comm, W.split), delta, mismatch, zcz, Fnew
    cdef double red[2]
    # the gradient test: stop_rr = gstop^2 ||grad f(0)||^2, known at entry on a warm start,
    # else read off the first step's CGLS (at beta = 0 its entry residual is -grad f(0))
    cdef double rr0 = -1.0, stop_rr = P.gstop * P.gstop * P.g0sq if P.g0sq >= 0.0 else -1.0
    cdef double grad_rr
    cg_total[0] = 0
    while True:
        if it >= P.max_iter:
            status = MAX_ITER
            break
        if stop_poll(W.stop, T.m * W.stop.per_row):
            break
        it += 1
        # step 3: the Newton point of the model that keeps the zones of beta
        cg_cap = 10 if (P.heuristic1 and not P.warm and it == 1) else P.cg_max_iter
        if T.nb == 0:
            # the gradient test, certified: f - f* <= ||grad f||^2 / (2 lam) (f is lam-strongly
            # convex when every weight is regularized), so it also asks for a relative gap
            grad_rr = stop_rr if stop_rr > 0.0 else 0.0
            if grad_rr > 0.0 and P.gap_stop > 0.0 and W.nreg == nbeta:
                grad_rr = fmin(grad_rr, 2.0 * P.gap_stop * lam * F)
            cg_it = binary_step(X, rows, T, L, lam, beta, W, eps_cur, P.eta, P.guard, cg_cap,
                                P.precondition, P.jw, P.diag_update, P.fused, &n_act, &optimal,
                                grad_rr, &rr0)
            if optimal == 2:                  # ||grad f(beta)|| <= gstop ||grad f(0)||
                it -= 1
                status = GRADIENT
                break
            if stop_rr < 0.0 and P.gstop > 0.0:
                stop_rr = P.gstop * P.gstop * rr0
        else:
            cg_it = ordinal_step(X, rows, T, L, lam, beta, nbeta, W, eps_cur, P.eta, P.guard,
                                 cg_cap, P.precondition, P.jw, &n_act, &optimal)
        cg_total[0] += cg_it
        if W.stop.stopped:
            break
        n_show = n_act if not dist else <int64_t>comm_sum1(W.comm, <double>n_act)
        # step 5: outputs at beta_bar (dy = X d_w, d = beta_bar - beta); converged if
        # the zones did not move (and, for binary terms, eq. 13 holds for the true
        # residual: the CGLS recurrence's says so when fused)
        if T.nb == 0:
            binary_step_image(X, T, W)
        else:
            for j in range(nbeta):
                W.p[j] = W.beta_bar[j] - beta[j]
            matvec(X, rows, T.m, W.p, T.dy)
        if optimal:
            mismatch = zone_mismatch(L, T, X, rows)
            zcz = 0.0
            for j in range(n_act):
                zcz += W.cc[j] * W.z[j] * W.z[j]
            if dist:
                red[0] = mismatch
                red[1] = zcz
                comm_sum(W.comm, red, 2)
                mismatch = red[0]
                zcz = red[1]
            # eq. 13 on the true residual: a distributed CGLS, binary or not fused, stops
            # on its recurrence too (cgls.pxd)
            if mismatch * mismatch <= eps_cur * eps_cur * zcz and (
                    T.nb > 0 or (not P.fused and not dist)
                    or binary_eq13(X, W, lam, eps_cur, zcz)):
                copy_weights(beta, W.beta_bar, nbeta, W.split)
                for k in range(T.m):
                    T.y[k] += T.dy[k]
                F = primal(L, lam, beta, W.nreg, T, W.comm, W.split)
                trace[it - 1] = F
                if callback != NULL:
                    with gil:
                        try:
                            (<object>callback)(it, F, n_show, cg_it)
                        except BaseException as e:
                            stop_keep(W.stop, e)
                    if W.stop.stopped:
                        break
                if need_second:            # step 8: second round at the final eps
                    need_second = 0
                    eps_cur = P.eps
                    continue
                status = CONVERGED
                break
        # steps 6-7: exact line search, then move.  The step is evaluated before it
        # is taken (Appendix A stops if F grows): with a direction at rounding level
        # (||d|| ~ 1e-13) the slope's pieces are rounding noise and the "exact" step
        # can be absurd (a9a, tau ~ 1e-7: delta = 6e12, F 11434 -> 17687).
        delta = exact_line_search(L, lam, beta, W.p, W.nreg, T, W.bp, W.n_bp, W.comm, W.split)
        Fnew = F
        if delta > 0.0:
            if W.split != NULL:
                for j in range(W.split.n_mine):
                    k = W.split.mine[j]
                    W.beta_bar[k] = beta[k] + delta * W.p[k]
            else:
                for j in range(nbeta):
                    W.beta_bar[j] = beta[j] + delta * W.p[j]
            for k in range(T.m):
                W.ytry[k] = T.y[k] + delta * T.dy[k]
            Fnew = _primal_at(L, lam, W.beta_bar, W.nreg, T, W.ytry, X.n_weights, W.comm,
                              W.split)
        if delta <= 0.0 or Fnew > F + 1e-12 * fabs(F):
            # y is updated incrementally (step 7); at a tight eps its drift from
            # X w (~1e-14) can exceed the slope of a short step.  Recompute it
            # once and retry before declaring that no descent is left.
            if not refreshed:
                matvec(X, rows, T.m, beta, T.y)
                F = primal(L, lam, beta, W.nreg, T, W.comm, W.split)
                trace[it - 1] = F
                refreshed = 1
                continue
            trace[it - 1] = F
            status = NO_DESCENT
            break
        refreshed = 0
        copy_weights(beta, W.beta_bar, nbeta, W.split)
        memcpy(T.y, W.ytry, T.m * sizeof(double))
        F = Fnew
        trace[it - 1] = F
        if callback != NULL:
            with gil:
                try:
                    if (<object>callback)(it, F, n_show, cg_it):
                        status = CALLER
                except BaseException as e:
                    stop_keep(W.stop, e)
            if status == CALLER:
                break
    n_iter[0] = it
    return status


# ------------------------------------------------------------------ Python entries

cdef int all_zero(const double* v, int64_t n) noexcept nogil:
    cdef int64_t j
    for j in range(n):
        if v[j] != 0.0:
            return 0
    return 1


cdef double grad_at_zero_sq(const CSR* X, const int64_t* rows, const Terms* T, const Loss* L,
                            double* u, double* g, const Comm* comm) noexcept nogil:
    """||grad f(0)||^2 for binary terms: grad f(0) = sum_k c_k l'(0) t_k x_k (u: m doubles,
    g: n_weights doubles of scratch; comm: the sum over every rank's terms)."""
    cdef int64_t k
    cdef double s = loss_slope(L, 0.0)
    for k in range(T.m):
        u[k] = T.c[k] * s * T.t[k]
    rmatvec(X, rows, T.m, u, g)
    comm_sum(comm, g, X.n_weights)
    return dot(g, g, X.n_weights)


cdef object _solve(DataView data, const double* t, int64_t n_t, const int32_t* codes,
                   int64_t n_codes, int64_t nb, const double[::1] c, double lam,
                   double[::1] beta, Loss L, double eps, bint warm, bint heuristic1,
                   bint heuristic2, bint precondition, double eta, int max_iter, int cg_max_iter,
                   int n_threads, object callback, bint fused=False, bint pattern=True,
                   bint kkt=False, bint diag_update=True, double jacobi_weight=1.0,
                   double gstop=0.0, object comm=None, bint regularize_bias=True,
                   object split=None, double forcing_guard=0.0, double gap_stop=0.0):
    """Allocate the work arrays once and run newton_core (binary if nb == 0): t (n_t
    labels) for binary terms, codes (n_codes ranks) for ordinal ones.  regularize_bias
    False (binary terms with a bias feature and no zone 2): the bias weight is free.  comm: None, or
    the linsvm.collective.Collective of a distributed solve (the rows are this rank's)."""
    cdef int64_t m = data.n, nbeta = beta.shape[0], k
    cdef int64_t nw = data.n_weights
    cdef int64_t per = nb if nb > 0 else 1
    cdef int64_t n_terms = m * per
    cdef int T_threads = entry_threads(n_threads)
    cdef int status, n_iter = 0
    cdef int64_t cg_total = 0
    cdef int64_t counts[3]
    if nbeta != nw + nb:
        raise ValueError(f"beta has {nbeta} entries, expected {nw + nb}")
    if c.shape[0] != m or (nb == 0 and n_t != m) or (nb > 0 and n_codes != m):
        raise ValueError("labels/costs and rows differ in length")
    if not 0.0 < jacobi_weight <= 1.0:
        raise ValueError(f"jacobi_weight must be in (0, 1], got {jacobi_weight!r}")
    if nb > 0:
        check_codes(codes, m, nb)
        if L.lo > -INFINITY:
            raise ValueError("ordinal terms take losses without a linear piece")
    if not (lam > 0 and isfinite(lam)):
        raise ValueError("lam must be > 0")
    if not regularize_bias and (nb > 0 or L.lo > -INFINITY):
        raise ValueError("a free bias needs binary terms of a loss without a linear zone")
    if not (gstop >= 0.0 and isfinite(gstop)):       # >= 1: w = 0 passes (a huge -e)
        raise ValueError(f"gstop must be finite and >= 0, got {gstop!r}")
    if not 0.0 <= forcing_guard < 1.0:
        raise ValueError(f"forcing_guard must be in [0, 1), got {forcing_guard!r}")
    # All work arrays in one float64 and one int64 allocation (a small problem pays
    # for allocations as much as for arithmetic), carved below.
    nbp = 2 * n_terms if (L.lo > -INFINITY and L.hi < INFINITY) else n_terms
    cdef int64_t me = m + 1, mt = max(n_terms, 1), mw = max(nbeta, 1)
    cdef int64_t n_trace = max(max_iter, 1), n_bp = 2 * max(nbp, 1)
    cdef int64_t n_scratch = max(data.scratch_doubles(), 1)
    y_arr = np.empty(m, dtype=np.float64)
    fbuf = np.empty(5 * me + 4 * mt + max(m, 1) + 9 * mw + 3 + n_bp + n_trace + n_scratch,
                    dtype=np.float64)
    # act_rows, act_pos, lin_rows, off_rows, off_pos, ex_ptr, in1, chg, act_s
    ibuf = np.empty(8 * me + (mt + 1) // 2, dtype=np.int64)
    cdef double* yv = <double*>cnp.PyArray_DATA(y_arr)
    cdef int64_t* ib = <int64_t*>cnp.PyArray_DATA(ibuf)
    cdef double* EX = <double*>cnp.PyArray_DATA(fbuf)   # lin_u, xw, U, ytry, xd: 5 x (m + 1)
    cdef double* TM = EX + 5 * me               # z, cc, q, u: 4 x n_terms
    cdef double* dyp = TM + 4 * mt
    cdef double* WV = dyp + max(m, 1)           # beta_bar, r, p, sv, minv, shift, dsum, diag, h
    cdef double* bpp = WV + 9 * mw + 3          # Breakpoint structs, 16 bytes each
    cdef int64_t o_trace = (bpp - EX) + n_bp    # where the trace starts in fbuf
    cdef double* tracep = EX + o_trace
    cdef double* svp = tracep + n_trace
    memset(WV, 0, (9 * mw + 3) * sizeof(double))
    memset(&ib[6 * me], 0, me * sizeof(int64_t))       # in1: no example in zone 1 yet
    memset(tracep, 0, n_trace * sizeof(double))
    cdef CSR X = data.pattern_csr(T_threads, svp) if pattern else data.csr(T_threads, svp)
    cdef double kkt_viol = -1.0
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef const int64_t* rp = view_rows(data)
    cdef Comm C = comm_from(comm)
    cdef int dist = comm_active(&C)
    cdef Terms T
    cdef Work W
    cdef Params P
    cdef Stop S
    stop_init(&S, data.nnz, data.n_rows)
    W.stop = &S
    W.comm = &C
    cdef Split SP
    W.split = NULL
    W.cg_split = NULL
    W.cg_xd = NULL
    cg_xd_arr = None
    if split is not None and dist:
        if split.n_weights != nbeta:
            raise ValueError("the weight split is for another number of weights")
        if nb == 0:
            SP = split_from(split, &C, 1)         # the Newton loop split too
            W.split = &SP
        else:                                     # CGLS alone (ordinal_step)
            SP = split_from(split, &C, 0)
            W.cg_split = &SP
            cg_xd_arr = np.empty(mt, dtype=np.float64)
            W.cg_xd = <double*>cnp.PyArray_DATA(cg_xd_arr)
    T.m = m
    T.nb = nb
    T.per = per
    T.t = t if (nb == 0 and m > 0) else NULL
    T.code = codes if (nb > 0 and m > 0) else NULL
    T.c = &c[0] if m > 0 else NULL
    T.y = yv if m > 0 else NULL
    T.dy = dyp
    T.b = &beta[nw] if nb > 0 else NULL
    T.db = WV + 2 * mw + nw if nb > 0 else NULL      # the step d lives in W.p
    W.lin_u = EX
    W.xw = EX + me
    W.U = EX + 2 * me
    W.ytry = EX + 3 * me
    W.xd = EX + 4 * me
    W.act_rows = &ib[0]
    W.act_pos = &ib[me]
    W.lin_rows = &ib[2 * me]
    W.off_rows = &ib[3 * me]
    W.off_pos = &ib[4 * me]
    W.ex_ptr = &ib[5 * me]
    W.in1 = &ib[6 * me]
    W.chg = &ib[7 * me]
    W.have_diag = 0
    W.act_s = <int32_t*>&ib[8 * me]
    W.n_act = 0
    W.n_lin = 0
    W.z = TM
    W.cc = TM + mt
    W.q = TM + 2 * mt
    W.u = TM + 3 * mt
    W.bp = <Breakpoint*>bpp
    W.n_bp = max(nbp, 1)
    W.beta_bar = WV
    W.r = WV + mw
    W.p = WV + 2 * mw
    W.sv = WV + 3 * mw
    W.minv = WV + 4 * mw
    W.shift = WV + 5 * mw
    W.dsum = WV + 6 * mw
    W.diag = WV + 7 * mw
    W.h = WV + 8 * mw                           # nbeta + 3: a distributed CGLS's pack
    W.shifted = 0
    W.nreg = nbeta - 1 if (not regularize_bias and data.bias > 0) else nbeta
    P.eps = eps
    P.eta = eta
    P.guard = forcing_guard
    P.warm = warm
    P.heuristic1 = heuristic1
    P.heuristic2 = heuristic2
    P.precondition = precondition
    P.jw = jacobi_weight
    P.diag_update = diag_update
    P.fused = fused
    P.max_iter = max_iter
    P.cg_max_iter = cg_max_iter
    P.gstop = gstop if nb == 0 else 0.0
    P.g0sq = -1.0
    P.gap_stop = gap_stop
    with nogil:
        if not all_zero(&beta[0], nbeta):
            matvec(&X, rp, m, &beta[0], T.y)
            if P.gstop > 0.0 and (m > 0 or dist):     # ||grad f(0)||^2, for the gradient test
                P.g0sq = grad_at_zero_sq(&X, rp, &T, &L, W.u, W.r, &C)
        else:                                 # a cold start: X w = 0
            memset(T.y, 0, m * sizeof(double))
        status = newton_core(&X, rp, &T, &L, lam, &beta[0], nbeta, &W, &P, &n_iter, &cg_total,
                             tracep, cb)
        if W.split != NULL and not S.stopped:  # the whole of beta on every rank
            split_gather(W.split, &beta[0])
        if not S.stopped:
            zone_counts(&L, &T, counts, &C)
            if kkt and nb == 0 and W.nreg == nbeta and (m > 0 or dist):   # Section 4.7, on the scratch Newton is done with
                kkt_viol = dual_kkt(&X, rp, m, T.t, T.c, lam, T.y, W.q, W.u, W.r, &C)
    stop_raise(&S)                            # Ctrl-C: the work arrays go as it unwinds
    return dict(status=status, n_iter=n_iter, cg_iter=cg_total,
                f=float(primal(&L, lam, &beta[0], W.nreg, &T, &C)),
                n_active=int(counts[1]), n_zone0=int(counts[0]), n_zone2=int(counts[2]),
                trace=fbuf[o_trace:o_trace + n_iter].copy(), y=y_arr,
                kkt=kkt_viol if kkt_viol >= 0.0 else None)


def request_stop():
    """Make every solve of this module running now, in any thread, stop and raise
    KeyboardInterrupt (csrc/interrupt.pxd; linsvm.interrupt.stop_running_solves)."""
    stop_request()


def newton_solve(DataView data, *, const double[::1] t, const double[::1] c, double lam,
                 double[::1] beta, loss, double eps, bint warm, bint heuristic1, bint heuristic2,
                 bint precondition, double eta, int max_iter, int cg_max_iter, int n_threads,
                 object callback, bint fused, bint pattern, bint kkt, bint diag_update,
                 double jacobi_weight, double gstop, object comm=None,
                 bint regularize_bias=True, object split=None, double forcing_guard=0.0,
                 double gap_stop=0.0):
    """Minimize lam/2 ||beta||^2 + sum_k c_k l(t_k x_k . beta) by the finite Newton driver,
    updating `beta` in place.  loss = (a, tm, hi, lo) (block comment of csrc/_mfn.pyx).
    fused: one pass over the active rows per CGLS iteration (cgls.pxd).  pattern: read
    only the column indices when every value of X is 1.0 (the same results, bit for bit),
    or when each row has one value (binary terms scaled to unit rows: the row's value
    multiplies its sum once, so results differ from the stored values' by rounding).
    diag_update: keep the Jacobi diagonal from one Newton step to the next, updated by
    the rows that entered or left zone 1 (off: summed over zone 1 at every step; the
    same iterates up to rounding in the preconditioner).  jacobi_weight: jw in (0, 1] of
    the CGLS preconditioner 1 / (lam + jw diag(X_1' C X_1)) (1: plain Jacobi; cgls.pxd).
    kkt: also return the Section 4.7 dual KKT violation (as mfn_dual_kkt) as "kkt".
    gstop >= 0: also stop at the first iterate with ||grad f|| <= gstop ||grad f(0)||
    (status 3; 0: off, the paper's stopping rule alone).  gap_stop > 0 (every weight
    regularized): that test counts only once ||grad f||^2 <= 2 gap_stop lam f too, i.e.
    once f - f* <= ||grad f||^2 / (2 lam) certifies a relative gap of gap_stop (with a
    free bias the bound does not hold and the test stands alone: the caller certifies).
    comm: None (serial), or the linsvm.collective.Collective of a distributed solve:
    rows, t, c are then this rank's block of the examples (possibly none), every rank
    calls with the same beta and options and gets the same beta back, the model of the
    union of the blocks (f, n_active, n_zone0/2 and kkt over every rank; y this rank's).
    diag_update does not apply then (the diagonal is summed afresh at each step).
    regularize_bias False (bias > 0, a loss without zone 2): lam regularizes every weight
    but the bias feature's, which is free (LIBLINEAR's -R; cgls.pxd's nreg); kkt is then
    None (Section 4.7's dual has no equality constraint for a free bias).
    split: None, or this rank's linsvm.runtime.wsplit.WeightSplit (with comm): CGLS in
    the weight-split arrangement (cgls.pxd, csrc/wsplit.pxd).
    forcing_guard > 0: the forcing term eta ends a step's CGLS only once Galli & Lin's
    quadratic-model rule at min(forcing_guard, ||r_0||_{M^-1}^(1/2)) holds too (cgls.pxd,
    qguard); 0: the forcing term alone (the iterates of before the guard, bit for bit).

    callback(it, f, n_active, cg_it): called after each outer iteration that moved beta
    (f in the paper's scaling; beta in place is the iterate, whole unless split); a true
    return value ends the solve there (status 4), a distributed solve's on every rank
    alike.

    data: the examples (linsvm._data.DataView: the CSR buffers, the bias feature and the
    rows, checked when it was built); lengths and the loss are checked here.  Returns a dict: status (0 converged,
    1 iteration cap, 2 no descent, 3 gradient test, 4 the callback's stop), n_iter,
    cg_iter, f (at the result), n_active
    (terms in zone 1), n_zone0, n_zone2, trace (f per iteration) and y = X[rows] beta.
    """
    return _solve(data, &t[0] if t.shape[0] else NULL,
                  t.shape[0], NULL, 0, 0, c, lam, beta, _loss_from(loss), eps, warm, heuristic1,
                  heuristic2, precondition, eta, max_iter, cg_max_iter, n_threads, callback,
                  fused, pattern, kkt, diag_update, jacobi_weight, gstop, comm, regularize_bias,
                  split, forcing_guard, gap_stop)


def ordinal_solve(DataView data, *, const int32_t[::1] codes, int64_t n_thresholds,
                  const double[::1] c, double lam, double[::1] beta, double eps, bint warm,
                  bint heuristic1, bint heuristic2, bint precondition, double eta, int max_iter,
                  int cg_max_iter, int n_threads, object callback, double jacobi_weight,
                  object comm=None, object split=None, double forcing_guard=0.0):
    """Minimize eq. 25 with costs, lam/2 ||beta||^2 + 1/2 sum_{k,s} c_k max(0, 1 - t_ks (y_k - b_s))^2,
    beta = (w, b_1..b_nb) updated in place, codes in [0, nb] (Section 7).  Returns the
    dict of newton_solve; y = X[rows] w (without thresholds); n_active counts violating
    (example, threshold) pairs.  comm: as for newton_solve.  split: None, or this rank's
    linsvm.runtime.wsplit.WeightSplit over all nw + nb entries of beta (with comm): each
    Newton step's CGLS in the weight-split arrangement, its step gathered at the end
    (the Newton loop stays replicated).  forcing_guard: as for newton_solve."""
    if n_thresholds < 1:
        raise ValueError("an ordinal problem needs at least one threshold")
    return _solve(data, NULL, 0,
                  &codes[0] if codes.shape[0] else NULL, codes.shape[0], n_thresholds, c, lam,
                  beta, make_loss(1.0, 1.0, 1.0, -INFINITY), eps, warm, heuristic1, heuristic2,
                  precondition, eta, max_iter, cg_max_iter, n_threads, callback, False, True,
                  False, True, jacobi_weight, 0.0, comm, True, split, forcing_guard)


def gradient(DataView data, *, const double[::1] t, const double[::1] c, double lam,
             const double[::1] beta, loss, int n_threads,
             object comm=None, bint regularize_bias=True):
    """Return (f, grad, dl, y) for the binary objective of newton_solve at beta
    (regularize_bias False with bias > 0: lam/2 ||beta||^2 without the bias weight):
    f = lam/2 ||beta||^2 + sum_k c_k l(o_k), its gradient lam beta + sum_k c_k l'(o_k) t_k x_k,
    dl_k = l'(o_k) per unit cost, and y = X[rows] beta (o_k = t_k y_k).  comm (as for
    newton_solve): f and grad over every rank's examples (one allreduce); dl, y this
    rank's."""
    cdef Loss L = _loss_from(loss)
    cdef int64_t m = data.n, nw = beta.shape[0], k
    cdef int64_t nreg = nw - 1 if (not regularize_bias and data.bias > 0) else nw
    cdef double lsum = 0.0
    cdef Comm CM = comm_from(comm)
    cdef CSR X
    if nw != data.n_weights or t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    scratch = view_csr(data, n_threads, 0, &X)
    cdef const int64_t* rows = view_rows(data)
    gl_arr = np.zeros(nw + 1, dtype=np.float64)      # the gradient's sum, then the loss sum
    g_arr = gl_arr[:nw]
    dl_arr = np.zeros(m, dtype=np.float64)
    u_arr = np.zeros(m, dtype=np.float64)
    y_arr = np.zeros(m, dtype=np.float64)
    cdef double[::1] g = gl_arr, dl = dl_arr, u = u_arr, y = y_arr
    with nogil:
        if m > 0:
            matvec(&X, rows, m, &beta[0], &y[0])
            for k in range(m):
                dl[k] = loss_slope(&L, t[k] * y[k])
                lsum += c[k] * loss_value(&L, t[k] * y[k])
                u[k] = c[k] * dl[k] * t[k]
            rmatvec(&X, rows, m, &u[0], &g[0])
        if comm_active(&CM):
            g[nw] = lsum
            comm_sum(&CM, &g[0], nw + 1)
            lsum = g[nw]
        for k in range(nreg):
            g[k] += lam * beta[k]
    f = 0.5 * lam * vdot(beta[:nreg], beta[:nreg]) + lsum
    return f, g_arr, dl_arr, y_arr


def ordinal_gradient(DataView data, *, const int32_t[::1] codes, int64_t n_thresholds,
                     const double[::1] c, double lam, const double[::1] beta, int n_threads,
                     object comm=None):
    """Return (f, grad, y) for eq. 25 with costs at beta = (w, b): f, its gradient with
    respect to (w, b), and y = X[rows] w.  comm: as for gradient."""
    cdef Comm CM = comm_from(comm)
    cdef Loss L = make_loss(1.0, 1.0, 1.0, -INFINITY)
    cdef int64_t m = data.n, nbeta = beta.shape[0], k, s
    cdef int64_t nw = data.n_weights, nb = n_thresholds
    cdef double lsum = 0.0, v, tk, sl, acc
    cdef CSR X
    if nb < 1 or nbeta != nw + nb or codes.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    scratch = view_csr(data, n_threads, 0, &X)
    cdef const int64_t* rows = view_rows(data)
    check_codes(&codes[0] if m else NULL, m, nb)
    gl_arr = np.zeros(nbeta + 1, dtype=np.float64)   # the gradient's sums, then the loss sum
    g_arr = gl_arr[:nbeta]
    u_arr = np.zeros(m, dtype=np.float64)
    y_arr = np.zeros(m, dtype=np.float64)
    cdef double[::1] g = gl_arr, u = u_arr, y = y_arr
    with nogil:
        if m > 0:
            matvec(&X, rows, m, &beta[0], &y[0])
            for k in range(m):
                acc = 0.0
                for s in range(nb):
                    v = y[k] - beta[nw + s]
                    tk = 1.0 if codes[k] > s else -1.0
                    lsum += c[k] * loss_value(&L, tk * v)
                    sl = c[k] * loss_slope(&L, tk * v) * tk      # d/dv of c l(t v)
                    acc += sl
                    g[nw + s] -= sl
                u[k] = acc
            rmatvec(&X, rows, m, &u[0], &g[0])
        if comm_active(&CM):
            g[nbeta] = lsum
            comm_sum(&CM, &g[0], nbeta + 1)
            lsum = g[nbeta]
        for k in range(nbeta):
            g[k] += lam * beta[k]
    f = 0.5 * lam * vdot(beta, beta) + lsum
    return f, g_arr, y_arr


def hinge_certificate(DataView data, *, const double[::1] t, const double[::1] c,
                      double C, const double[::1] beta, double tau, int n_threads,
                      object comm=None):
    """Duality-gap certificate of beta for F(w) = 1/2||w||^2 + C sum c_k max(0, xi_k),
    xi_k = 1 - t_k x_k . beta, from the dual point alpha_k = C c_k H_tau'(xi_k) with
    H_tau'(xi) = clip((xi + tau) / (2 tau), 0, 1), feasible for the hinge dual
    (0 <= alpha_k <= C c_k).  With w_alpha = sum alpha_k t_k x_k (one scatter):
        F = F(beta),  D = sum alpha - 1/2 ||w_alpha||^2 <= F*,
        gap_grad = 1/2 ||beta - w_alpha||^2,  gap_smooth = sum C c_k max(0, xi_k) - alpha_k xi_k >= 0,
    and F - D = gap_grad + gap_smooth exactly (beta . w_alpha = sum alpha_k t_k y_k).
    Returns (F, D, gap_grad, gap_smooth, n_quad = #{|xi_k| < tau}, y = X beta).
    comm (as for newton_solve): every sum over every rank's examples (one allreduce);
    y this rank's."""
    cdef int64_t m = data.n, nw = beta.shape[0], k, n_quad = 0
    cdef double hinge = 0.0, smooth = 0.0, asum = 0.0, xi, al, h
    cdef Comm CM = comm_from(comm)
    cdef CSR X
    if nw != data.n_weights or t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    if not (tau > 0 and C > 0):
        raise ValueError("tau and C must be > 0")
    scratch = view_csr(data, n_threads, 0, &X)
    cdef const int64_t* rows = view_rows(data)
    y_arr = np.zeros(m, dtype=np.float64)
    u_arr = np.zeros(m, dtype=np.float64)
    wl_arr = np.zeros(nw + 4, dtype=np.float64)      # w_alpha, then the four sums
    wa_arr = wl_arr[:nw]
    cdef double[::1] y = y_arr, u = u_arr, wa = wl_arr
    with nogil:
        if m > 0:
            matvec(&X, rows, m, &beta[0], &y[0])
            for k in range(m):
                xi = 1.0 - t[k] * y[k]
                h = (xi + tau) / (2.0 * tau)
                al = C * c[k] * (0.0 if h <= 0.0 else (1.0 if h >= 1.0 else h))
                if fabs(xi) < tau:
                    n_quad += 1
                hinge += c[k] * (xi if xi > 0.0 else 0.0)
                smooth += C * c[k] * (xi if xi > 0.0 else 0.0) - al * xi
                asum += al
                u[k] = al * t[k]
            rmatvec(&X, rows, m, &u[0], &wa[0])
        if comm_active(&CM):
            wa[nw] = hinge
            wa[nw + 1] = smooth
            wa[nw + 2] = asum
            wa[nw + 3] = <double>n_quad
            comm_sum(&CM, &wa[0], nw + 4)
            hinge = wa[nw]
            smooth = wa[nw + 1]
            asum = wa[nw + 2]
            n_quad = <int64_t>wa[nw + 3]
    resid = np.asarray(beta) - wa_arr
    F = 0.5 * vdot(beta, beta) + C * hinge
    D = asum - 0.5 * vdot(wa_arr, wa_arr)
    return F, D, 0.5 * vdot(resid, resid), max(smooth, 0.0), int(n_quad), y_arr


def binary_certificate(DataView data, *, const double[::1] t, const double[::1] c,
                       double lam, const double[::1] beta, loss, int n_threads,
                       object comm=None, bint regularize_bias=True):
    """Duality-gap certificate of beta for the binary objective of newton_solve, in
    linsvm's scaling F = f / lam = 1/2 ||beta||_R^2 + sum_k U_k l(o_k), U_k = c_k / lam,
    o_k = t_k x_k . beta, for any loss (a, tm, hi, lo) of the family.

    Dual: for mu_k = U_k t_k s_k with s_k in the range of l',
        D(mu) = -1/2 ||(X'mu)_R||^2 - sum_k U_k l*(s_k),   l*(s) = s tm + s^2 / (2a),
    finite only if the free weights see no net force: with a free bias (regularize_bias
    False, bias > 0) sum_k mu_k = 0.  The point is s_k = l'(o_k) (F - D is then
    1/2 ||grad F||^2); with a free bias the larger of sum_{mu > 0} mu and -sum_{mu < 0} mu
    is scaled down to the other (s_k theta, theta in [0, 1], stays in l*'s domain), and
        F - D = 1/2 ||beta_R + (X'mu)_R||^2 + sum_k U_k [l(o_k) + l*(s_k) - s_k o_k],
    every piece >= 0, summed as such.  Returns (F, F - D).  comm: every sum over every
    rank's examples (two allreduces)."""
    cdef Loss L = _loss_from(loss)
    cdef int64_t m = data.n, nw = beta.shape[0], k, j
    cdef int64_t nreg = nw - 1 if (not regularize_bias and data.bias > 0) else nw
    cdef double lsum = 0.0, fy = 0.0, o, s, pos = 0.0, neg = 0.0, sp = 1.0, sn = 1.0, g2 = 0.0
    cdef double red[2]
    cdef Comm CM = comm_from(comm)
    cdef CSR X
    if nw != data.n_weights or t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    if not lam > 0:
        raise ValueError("lam must be > 0")
    scratch = view_csr(data, n_threads, 0, &X)
    cdef const int64_t* rows = view_rows(data)
    gl_arr = np.zeros(nw + 2, dtype=np.float64)      # X'u, then the two sums
    y_arr = np.zeros(m, dtype=np.float64)
    s_arr = np.zeros(m, dtype=np.float64)
    u_arr = np.zeros(m, dtype=np.float64)
    cdef double[::1] g = gl_arr, y = y_arr, sl = s_arr, u = u_arr
    with nogil:
        if m > 0:
            matvec(&X, rows, m, &beta[0], &y[0])
        for k in range(m):
            sl[k] = loss_slope(&L, t[k] * y[k])
            if t[k] * sl[k] * c[k] > 0.0:
                pos += t[k] * sl[k] * c[k]
            else:
                neg -= t[k] * sl[k] * c[k]
        if nreg < nw:                                # a free bias: balance the two signs
            red[0] = pos
            red[1] = neg
            comm_sum(&CM, red, 2)
            if red[0] > red[1]:
                sp = red[1] / red[0]
            elif red[1] > red[0]:
                sn = red[0] / red[1]
        for k in range(m):
            o = t[k] * y[k]
            s = sl[k] * (sp if t[k] * sl[k] * c[k] > 0.0 else sn)
            lsum += c[k] * loss_value(&L, o)
            fy += c[k] * fmax(loss_value(&L, o) + s * L.tm + s * s / (2.0 * L.a) - s * o, 0.0)
            u[k] = c[k] * t[k] * s
        if m > 0:
            rmatvec(&X, rows, m, &u[0], &g[0])
        g[nw] = lsum
        g[nw + 1] = fy
        comm_sum(&CM, &g[0], nw + 2)
        for j in range(nreg):                        # lam beta_R + X'(c t s) = lam (beta_R + (X'mu)_R)
            g2 += (lam * beta[j] + g[j]) * (lam * beta[j] + g[j])
    F = 0.5 * vdot(beta[:nreg], beta[:nreg]) + gl_arr[nw] / lam
    return F, 0.5 * g2 / (lam * lam) + gl_arr[nw + 1] / lam
