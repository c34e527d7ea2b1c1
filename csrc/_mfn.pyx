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
# Algorithm (Sections 3-4, 6, 7 and Appendix A; notation of Appendix A), as the finite
# Newton driver (csrc/newton_driver.pxd) runs it over mfn's terms (csrc/mfn_losses.pxd):
#   1. start from beta (0 or a warm start); y = X w
#   3. classify the terms into zones at beta.  The Newton model keeps the zones:
#          lam/2 ||beta||^2 + 1/2 sum_{zone 1} a c_j (v_j - t_j tm)^2 - sum_{zone 2} c_j kappa t_j v_j
#      With q = (1/lam) sum_{zone 2} c_j kappa t_j x_j it is the shifted least-squares problem
#      of eq. 23 in beta~ = beta - q, solved by CGLS seeded at beta - q (residual z = t tm - v
#      on zone 1, weights a c_j), then beta_bar = beta~ + q.  Binary terms use the shared
#      cgls.pxd over the CSR rows of zone 1; ordinal terms (eq. 26) the same CGLS over the
#      operator (w, b) -> x_k . w - b_s (csrc/mfn_losses.pxd's ordinal_operator).
#      Heuristic 1: at most 10 CGLS iterations in the first step of a cold start.  A
#      step's CGLS ends at eq. 13, or at the forcing term ||r|| <= eta ||r_0|| once Galli &
#      Lin's quadratic-model rule at forcing_guard holds too (cgls.pxd, qguard): unguarded,
#      the forcing term can end a step after one iteration where the gradient is mostly
#      one direction (data with few positives), and such steps make little progress on
#      the rest (docs/threads.md, "Imbalance", has the measurements).
#   5. dv = v(beta_bar) - v(beta) = X d with d = beta_bar - beta.  For binary terms CGLS
#      accumulates d and X d on zone 1 as it steps (cgls.pxd), so one mat-vec over the
#      other rows completes dv; ordinal terms take one mat-vec over all.  Stop if CGLS met
#      eq. 13 (for binary terms checked by the driver on the true residual, once, when the
#      rest of the test passes) and the zones are consistent at beta_bar: terms whose zone
#      changed may add at most eps ||z||_C to the gradient, measured as
#      sum c_j |l'(o_j) - l'_model(o_j)| ||x_j||
#      (terms within 1e-8 of a knee count as consistent: Appendix A, footnote 17; within a
#      thousandth of zone 1's width if that is smaller).  Then
#      ||grad f(beta_bar)|| <= 2 eps ||z||_C.  Heuristic 2: converge at eps = 1e-2 first.
#   6. exact line search on beta + delta d: phi' is continuous, increasing and piecewise
#      linear, with a breakpoint wherever a term crosses a knee (hi or lo); each crossing
#      adds one term's change of piece to the end values l, r of phi''s line (eq. 16-18,
#      generalized to the three zones of Section 6 and to the p*m ordinal terms of
#      Section 7).  The root is found by selection instead of a sort (csrc/line_search.pxd).
#   7. beta += delta* d, y likewise, and back to 3 -- unless f would grow (Appendix A's
#      F > F_previous test, made before the step): then, as when delta* = 0, y is
#      recomputed once and the iteration retried, and a second failure ends the solve
#      (status NO_DESCENT: no descent left at machine precision).
#
# With a = 1, tm = hi = 1, lo = -inf every operation, and its rounding, is the one
# L2-SVM-MFN did before the family was added (multiplications by a = 1 and t tm = t
# are exact), so `mfn` keeps its iterates bit for bit.
#
# Distributed over row blocks (the Python entries' `comm`, csrc/comm.pxd): each rank
# holds its block of the examples (possibly none) and the same beta.  The zones, margins,
# CGLS residuals and breakpoints stay per rank; every sum over terms is completed by an
# allreduce before it is used (f, the eq. 23 shift, z'Cz, the zone mismatch, counts, the
# gradient test's ||grad f(0)||, the Section 4.7 KKT), CGLS takes one allreduce of
# nw + 3 doubles per iteration (cgls.pxd) and the line search's selection runs over every
# rank's breakpoints (line_search.pxd), so every decision is taken on the same numbers on
# every rank and all end with the same beta.  The Jacobi diagonal is then summed afresh
# at each Newton step (diag_update is a rank-local shortcut).  With a weight split
# (NewtonWork.split, binary terms: csrc/wsplit.pxd) CGLS runs in cgls.pxd's split
# arrangement instead: each weight one owner, two sparse exchanges of the weights several ranks
# share and two small allreduces per iteration, and the binary Newton loop is split
# too (beta valid on each rank's own and touched weights, gathered at the end).
# Ordinal terms (NewtonWork.cg_split) split CGLS alone: the thresholds are weights every
# rank touches, and each Newton step's step is gathered on every rank (beta replicated).
#
# Inputs are addressed through `rows` (training rows, a fold or a random subset);
# t (binary) or the rank codes (ordinal) and the costs c are per position in rows.
# Work arrays are allocated once per solve by the Python entries below; nothing in
# the nogil code allocates or raises.

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memset
from libc.math cimport fabs, fmax, isfinite, INFINITY
import numpy as np
cimport numpy as cnp

cnp.import_array()
from csr cimport vdot, CSR, RowCopy, free_row_copy, dot, entry_threads
from csr_passes cimport matvec, rmatvec
from linsvm._data cimport DataView
from mfn_terms cimport Loss, Terms, make_loss, zone, loss_value, loss_slope, term_out
from line_search cimport Breakpoint
from mfn_shared cimport check_codes, _loss_from, dual_kkt
from interrupt cimport Stop, stop_init, stop_raise
from comm cimport Comm, comm_from, comm_active, comm_sum
from wsplit cimport Split, split_from, split_gather
from newton_driver cimport (NewtonSettings, NewtonWork, NewtonLoss, newton_drive,
                           newton_settings, check_settings, take_setting)
from mfn_losses cimport (MfnState, primal, binary_loss, ordinal_loss, zone_counts, all_zero,
                         grad_at_zero_sq, set_terms)


ctypedef struct _Solve:
    # What a solve is besides its view and settings (_solve): its terms and options.
    const double* t                # binary: labels (n_t), or NULL
    int64_t n_t
    const int32_t* codes           # ordinal: rank codes (n_codes), or NULL
    int64_t n_codes
    int64_t nb                     # thresholds (0: binary terms)
    Loss L
    double lam
    int n_threads                  # of the kernels (0: all)
    int pattern                    # read only the column indices where the values allow it
    int kkt                        # also the Section 4.7 dual KKT violation
    int regularize_bias            # 0: the bias weight is free


cdef int _check(DataView data, const _Solve* I, const NewtonSettings* P, int64_t nbeta,
                int64_t n_c) except -1:
    """Raise ValueError for lengths, codes, the loss or settings a solve cannot take."""
    cdef int64_t m = data.n, nb = I.nb
    if nbeta != data.n_weights + nb:
        raise ValueError(f"beta has {nbeta} entries, expected {data.n_weights + nb}")
    if n_c != m or (nb == 0 and I.n_t != m) or (nb > 0 and I.n_codes != m):
        raise ValueError("labels/costs and rows differ in length")
    check_settings(P)
    if nb > 0:
        check_codes(I.codes, m, nb)
        if I.L.lo > -INFINITY:
            raise ValueError("ordinal terms take losses without a linear piece")
    if not (I.lam > 0 and isfinite(I.lam)):
        raise ValueError("lam must be > 0")
    if not I.regularize_bias and (nb > 0 or I.L.lo > -INFINITY):
        raise ValueError("a free bias needs binary terms of a loss without a linear zone")
    return 0


cdef object _carve(DataView data, const _Solve* I, int64_t nbeta, int max_iter,
                   NewtonWork* W, MfnState* M):
    """Every work array of a solve in one float64 and one int64 allocation (a small
    problem pays for allocations as much as for arithmetic), carved into W and M: only
    the arrays its terms use (binary or ordinal, a loss with or without zone 2).  The
    line search's breakpoints and trial margins lie over CGLS's per-term arrays, dead
    while it runs (csrc/newton_driver.pxd, NewtonWork).  Returns (fbuf, ibuf, the
    scratch's offset, the trace's offset), which the caller keeps."""
    cdef int64_t m = data.n, nb = I.nb
    cdef int binary = nb == 0
    cdef int zone2 = binary and I.L.lo > -INFINITY
    cdef int64_t n_terms = m * (nb if nb > 0 else 1)
    cdef int64_t nbp = 2 * n_terms if (I.L.lo > -INFINITY and I.L.hi < INFINITY) else n_terms
    cdef int64_t me = m + 1, mt = max(n_terms, 1), mw = max(nbeta, 1)
    cdef int64_t n_trace = max(max_iter, 1)
    # per example: dy, and xd (binary), lin_u (zone 2), xw and U (ordinal)
    cdef int64_t n_ex = 1 + (1 + zone2 if binary else 2)
    fbuf = np.empty(n_ex * me + 4 * mt + 9 * mw + 3 + n_trace
                    + max(data.scratch_doubles(), 1), dtype=np.float64)
    # act_rows, then binary: act_pos (lin_rows), in1 (bytes); ordinal: ex_ptr, act_s
    cdef int64_t n_int = (2 + zone2) * me + (me + 7) // 8 if binary else 2 * me + (mt + 1) // 2
    ibuf = np.empty(n_int, dtype=np.int64)
    cdef int64_t* ib = <int64_t*>cnp.PyArray_DATA(ibuf)
    cdef double* EX = <double*>cnp.PyArray_DATA(fbuf)   # the per-example arrays
    cdef double* TM = EX + n_ex * me            # z, cc, q, u: 4 x n_terms
    cdef double* WV = TM + 4 * mt               # beta_bar, r, p, sv, minv, shift, dsum, diag, h
    cdef int64_t o_trace = (WV - EX) + 9 * mw + 3
    memset(WV, 0, (9 * mw + 3) * sizeof(double))
    memset(EX + o_trace, 0, n_trace * sizeof(double))
    W.dy = EX
    W.z, W.cc, W.q, W.u = TM, TM + mt, TM + 2 * mt, TM + 3 * mt
    # breakpoints (16 bytes each: 2 or 4 doubles a term) over z, cc (and q, u)
    M.bp = <Breakpoint*>TM
    M.n_bp = max(nbp, 1)
    M.act_rows = ib
    M.act_pos = M.lin_rows = M.ex_ptr = NULL
    M.lin_u = M.xw = M.U = NULL
    M.in1 = NULL
    M.act_s = NULL
    if binary:
        W.xd = EX + me
        W.ytry = W.xd                           # xd is spent once d's image is formed
        M.act_pos = ib + me
        M.in1 = <uint8_t*>(ib + (2 + zone2) * me)
        memset(M.in1, 0, me)                    # no example in zone 1 yet
        if zone2:
            M.lin_u = EX + 2 * me
            M.lin_rows = ib + 2 * me
    else:
        W.xd = NULL                             # ordinal CGLS takes M.cg_xd, or none
        W.ytry = W.u                            # free beside z and cc's breakpoints
        M.xw, M.U = EX + me, EX + 2 * me
        M.ex_ptr = ib + me
        M.act_s = <int32_t*>(ib + 2 * me)
    W.beta_bar, W.r, W.p, W.sv, W.minv = WV, WV + mw, WV + 2 * mw, WV + 3 * mw, WV + 4 * mw
    M.shift, W.dsum, W.diag, W.h = WV + 5 * mw, WV + 6 * mw, WV + 7 * mw, WV + 8 * mw
    M.have_diag = 0
    M.shifted = 0
    M.cg_xd = NULL
    return fbuf, ibuf, o_trace + n_trace, o_trace


cdef object _solve(DataView data, const _Solve* I, NewtonSettings* P, const double[::1] c,
                   double[::1] beta, object callback, object comm, object split):
    """Allocate the work arrays once and run the finite Newton driver on mfn's binary
    (I.nb == 0) or ordinal terms.  comm: None, or the linsvm.runtime.collective.Collective
    of a distributed solve (the view's rows are this rank's); split: its WeightSplit."""
    cdef int64_t m = data.n, nbeta = beta.shape[0]
    cdef int status, n_iter = 0
    cdef int64_t cg_total = 0, o_scratch, o_trace
    cdef int64_t counts[3]
    _check(data, I, P, nbeta, c.shape[0])
    cdef NewtonWork W
    cdef MfnState M
    if I.pattern:       # the view's one scan of the values (and its scratch) first, alone
        data.pattern_csr(1, NULL)
    y_arr = np.empty(m, dtype=np.float64)
    fbuf, ibuf, o_scratch, o_trace = _carve(data, I, nbeta, P.max_iter, &W, &M)
    cdef double* F0 = <double*>cnp.PyArray_DATA(fbuf)
    cdef CSR X = (data.pattern_csr(entry_threads(I.n_threads), F0 + o_scratch) if I.pattern
                  else data.csr(entry_threads(I.n_threads), F0 + o_scratch))
    cdef double kkt_viol = -1.0
    cdef Comm C = comm_from(comm)
    cdef Stop S
    cdef Split SP
    stop_init(&S, data.nnz, data.n_rows)
    W.X, W.rows, W.m, W.nbeta, W.lam = &X, data.row_list(), m, nbeta, I.lam
    W.nreg = nbeta - 1 if (not I.regularize_bias and data.bias > 0) else nbeta
    W.y = <double*>cnp.PyArray_DATA(y_arr)
    W.stop, W.comm, W.split, W.cg_split = &S, &C, NULL, NULL
    cg_xd_arr = None
    if split is not None and comm_active(&C):
        if split.n_weights != nbeta:
            raise ValueError("the weight split is for another number of weights")
        SP = split_from(split, &C, I.nb == 0)     # binary: the Newton loop split too
        W.cg_split = &SP
        if I.nb == 0:
            W.split = &SP
        else:                                     # ordinal: CGLS alone
            cg_xd_arr = np.empty(max(m * I.nb, 1), dtype=np.float64)
            M.cg_xd = <double*>cnp.PyArray_DATA(cg_xd_arr)
    M.L = I.L
    set_terms(&M, &W, I.t, I.codes, I.nb, &c[0] if m > 0 else NULL, &beta[0])
    M.gap_stop = P.gap_stop
    M.diag_update = P.diag_update
    cdef RowCopy RC
    memset(&RC, 0, sizeof(RowCopy))
    M.copy = &RC if (P.compact_rows and I.nb == 0) else NULL
    cdef NewtonLoss NL = binary_loss(&M) if I.nb == 0 else ordinal_loss(&M)
    cdef void* cb = <void*>callback if callback is not None else NULL
    with nogil:
        if not all_zero(&beta[0], nbeta):
            matvec(&X, W.rows, m, &beta[0], W.y)
            if P.gstop > 0.0 and (m > 0 or comm_active(&C)):   # ||grad f(0)||^2, the gradient test
                P.g0sq = grad_at_zero_sq(&X, W.rows, &M.T, &M.L, W.u, W.r, &C)
        else:                                 # a cold start: X w = 0
            memset(W.y, 0, m * sizeof(double))
        status = newton_drive(&NL, &W, &beta[0], P, &n_iter, &cg_total, F0 + o_trace, cb)
        if W.split != NULL and not S.stopped:  # the whole of beta on every rank
            split_gather(W.split, &beta[0])
        if not S.stopped:
            zone_counts(&M.L, &M.T, counts, &C)
            if I.kkt and I.nb == 0 and W.nreg == nbeta and (m > 0 or comm_active(&C)):
                # Section 4.7, on the scratch Newton is done with
                kkt_viol = dual_kkt(&X, W.rows, m, M.T.t, M.T.c, I.lam, W.y, W.q, W.u, W.r, &C)
    free_row_copy(&RC)
    stop_raise(&S)                            # Ctrl-C: the work arrays go as it unwinds
    return dict(status=status, n_iter=n_iter, cg_iter=cg_total,
                f=float(primal(&M.L, I.lam, &beta[0], W.nreg, &M.T, &C, NULL)),
                n_active=int(counts[1]), n_zone0=int(counts[0]), n_zone2=int(counts[2]),
                trace=fbuf[o_trace:o_trace + n_iter].copy(), y=y_arr,
                kkt=kkt_viol if kkt_viol >= 0.0 else None)



def newton_solve(DataView data, *, const double[::1] t, const double[::1] c, double lam,
                 double[::1] beta, loss, object callback=None, object comm=None,
                 object split=None, **settings):
    """Minimize lam/2 ||beta||^2 + sum_k c_k l(t_k x_k . beta) by the finite Newton driver,
    updating `beta` in place.  loss = (a, tm, hi, lo) (block comment of csrc/_mfn.pyx).
    data: the examples (linsvm._data.DataView: the CSR buffers, the bias feature and the
    rows, checked when it was built); lengths, the loss and the settings are checked here.

    settings, every one required (the catalog's option names where it has them):
    tol: eq. 13's tolerance.  warm: beta is a warm start (heuristic 1 does not apply).
    heuristic1, heuristic2, precondition, max_iter, cg_max_iter: as the catalog says.
    forcing: the inexact-Newton forcing term eta (0: off); forcing_guard > 0: it ends a
    step's CGLS only once Galli & Lin's quadratic-model rule at min(forcing_guard,
    ||r_0||_{M^-1}^(1/2)) holds too (cgls.pxd, qguard; 0: the forcing term alone).
    jacobi_weight: jw in (0, 1] of the CGLS preconditioner 1 / (lam + jw diag(X_1' C X_1))
    (1: plain Jacobi; cgls.pxd).  fused_cg: one pass over the active rows per CGLS
    iteration (cgls.pxd).  n_threads: of the kernels (0: all).  pattern: read only the
    column indices when every value of X is 1.0 (the same results, bit for bit), or when
    each row has one value (binary terms scaled to unit rows: the row's value multiplies
    its sum once, so results differ from the stored values' by rounding).  diag_update:
    keep the Jacobi diagonal from one Newton step to the next, updated by the rows that
    entered or left zone 1 (off: summed over zone 1 at every step; the same iterates up to
    rounding in the preconditioner).  compact_rows: a step whose zone 1 holds at most a
    quarter of the examples runs CGLS over a contiguous copy of those rows (csr.pxd,
    gather_rows; the same iterates up to the rounding of the scatter's row blocks;
    binary terms without a weight split).  kkt: also return the Section 4.7 dual KKT violation
    as "kkt".  gstop >= 0: also stop at the first iterate with ||grad f|| <= gstop
    ||grad f(0)|| (status 3; 0: off, the paper's stopping rule alone).  gap_stop > 0
    (every weight regularized): that test counts only once ||grad f||^2 <= 2 gap_stop lam f
    too, i.e. once f - f* <= ||grad f||^2 / (2 lam) certifies a relative gap of gap_stop
    (with a free bias the bound does not hold and the test stands alone: the caller
    certifies).  regularize_bias False (bias > 0, a loss without zone 2): lam regularizes
    every weight but the bias feature's, which is free (LIBLINEAR's -R; cgls.pxd's nreg);
    kkt is then None (Section 4.7's dual has no equality constraint for a free bias).

    comm: None (serial), or the linsvm.runtime.collective.Collective of a distributed
    solve: rows, t, c are then this rank's block of the examples (possibly none), every
    rank calls with the same beta and settings and gets the same beta back, the model of
    the union of the blocks (f, n_active, n_zone0/2 and kkt over every rank; y this
    rank's); diag_update does not apply then (the diagonal is summed afresh at each step).
    split: None, or this rank's linsvm.runtime.wsplit.WeightSplit (with comm): CGLS in the
    weight-split arrangement (cgls.pxd, csrc/wsplit.pxd), the Newton loop split too.

    callback(it, f, n_active, cg_it): called after each outer iteration that moved beta
    (f in the paper's scaling; beta in place is the iterate, whole unless split); a true
    return value ends the solve there (status 4), a distributed solve's on every rank
    alike.

    Returns a dict: status (0 converged, 1 iteration cap, 2 no descent, 3 gradient test,
    4 the callback's stop), n_iter, cg_iter, f (at the result), n_active (terms in zone
    1), n_zone0, n_zone2, trace (f per iteration) and y = X[rows] beta.
    """
    cdef _Solve I
    I.t, I.n_t = (&t[0] if t.shape[0] else NULL), t.shape[0]
    I.codes, I.n_codes, I.nb = NULL, 0, 0
    I.L, I.lam = _loss_from(loss), lam
    I.n_threads = take_setting(settings, "n_threads")
    I.pattern = take_setting(settings, "pattern")
    I.kkt = take_setting(settings, "kkt")
    I.regularize_bias = take_setting(settings, "regularize_bias")
    cdef NewtonSettings P = newton_settings(settings, {})
    return _solve(data, &I, &P, c, beta, callback, comm, split)


def ordinal_solve(DataView data, *, const int32_t[::1] codes, int64_t n_thresholds,
                  const double[::1] c, double lam, double[::1] beta, object callback=None,
                  object comm=None, object split=None, **settings):
    """Minimize eq. 25 with costs, lam/2 ||beta||^2 + 1/2 sum_{k,s} c_k max(0, 1 - t_ks (y_k - b_s))^2,
    beta = (w, b_1..b_nb) updated in place, codes in [0, nb] (Section 7).  settings: those
    of newton_solve but fused_cg, diag_update, gstop, gap_stop, pattern, kkt and
    regularize_bias (two-pass CGLS, no gradient test, the column indices read where the
    values allow it, every weight regularized).  Returns the dict of newton_solve; y =
    X[rows] w (without thresholds); n_active counts violating (example, threshold) pairs.
    comm: as for newton_solve.  split: None, or this rank's
    linsvm.runtime.wsplit.WeightSplit over all nw + nb entries of beta (with comm): each
    Newton step's CGLS in the weight-split arrangement, its step gathered at the end (the
    Newton loop stays replicated)."""
    if n_thresholds < 1:
        raise ValueError("an ordinal problem needs at least one threshold")
    cdef _Solve I
    I.t, I.n_t = NULL, 0
    I.codes, I.n_codes, I.nb = (&codes[0] if codes.shape[0] else NULL), codes.shape[0], n_thresholds
    I.L, I.lam = make_loss(1.0, 1.0, 1.0, -INFINITY), lam
    I.n_threads = take_setting(settings, "n_threads")
    I.pattern, I.kkt, I.regularize_bias = True, False, True
    cdef NewtonSettings P = newton_settings(settings, ORDINAL_FIXED)
    return _solve(data, &I, &P, c, beta, callback, comm, split)


# ordinal_solve's fixed settings (its docstring)
ORDINAL_FIXED = dict(fused_cg=False, diag_update=True, compact_rows=False, gstop=0.0,
                     gap_stop=0.0)


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
    scratch = data.kernel_csr(entry_threads(n_threads), 0, &X)
    cdef const int64_t* rows = data.row_list()
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
    scratch = data.kernel_csr(entry_threads(n_threads), 0, &X)
    cdef const int64_t* rows = data.row_list()
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
    scratch = data.kernel_csr(entry_threads(n_threads), 0, &X)
    cdef const int64_t* rows = data.row_list()
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
    scratch = data.kernel_csr(entry_threads(n_threads), 0, &X)
    cdef const int64_t* rows = data.row_list()
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
