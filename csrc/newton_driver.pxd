# The finite Newton driver of Keerthi & DeCoste (JMLR 2005, Sections 3-4 and Appendix A,
# generalized as in Sections 6-7), written once over a loss interface: mfn's family
# (csrc/mfn_losses.pxd: binary and ordinal terms of a piecewise quadratic loss), svr's
# squared eps-insensitive loss (csrc/svr_loss.pxd) and, as a smooth loss, lr's and
# softmax's logistic loss (csrc/logistic_newton.pxd's lr_loss: truncated Newton) are its
# implementations.
#
# The objective is f(beta) = lam/2 ||beta||_Lam^2 + sum of piecewise quadratic terms of the
# margins y = X w (||.||_Lam: the first nreg weights).  At beta every term lies in a zone
# where it is quadratic (active: zone 1) or linear (0 or a constant slope).  The Newton
# model keeps the zones; its minimizer beta_bar solves a weighted least-squares problem
#
#     min lam/2 ||beta||_Lam^2 + 1/2 sum_{active j} cc_j ((A beta)_j - tt_j)^2
#
# (eq. 11; eq. 23 with a shift for linear pieces), by CGLS (csrc/cgls.pxd) seeded at
# beta (residual z = tt - A beta).  Appendix A's loop, as the driver runs it:
#
#   1. y = X w at the start (the caller's), f(beta)
#   3. the loss classifies the terms at beta and builds the active set: the operator A,
#      the curvature weights cc, the residual z and the seed beta_bar (loss.active);
#      CGLS solves the model (heuristic 1: at most 10 iterations in the first step of a
#      cold start; a step's CGLS ends at eq. 13, or at the forcing term once the
#      quadratic-model rule at forcing_guard holds too)
#   5. d = beta_bar - beta and dy = X d (loss.step_image, mostly from CGLS's own
#      accumulation); stop if CGLS met eq. 13 (checked on the true residual when CGLS
#      took the recurrence's word for it) and the zones are consistent at beta_bar: the
#      terms whose zone changed add at most eps ||z||_C to the gradient (loss.mismatch);
#      heuristic 2: converge at eps = 1e-2 first
#   6. the exact line search on beta + delta d over the knees of the loss (loss.line_search)
#   7. beta += delta* d, y likewise, back to 3 -- unless f would grow (Appendix A's
#      F > F_previous test, made before the step): then y is recomputed once and the
#      iteration retried, and a second failure ends the solve (NO_DESCENT)
#
# Besides the paper's test the driver stops at the first iterate with ||grad f|| <=
# gstop ||grad f(0)|| (GRADIENT; LIBLINEAR's test), read off the residual each CGLS starts
# from, which is -grad f(beta) (on a warm start ||grad f(0)||^2 is the caller's, g0sq);
# where the loss knows a gap certificate for the gradient (loss.certified_rr: f - f* <=
# ||grad f||^2 / (2 lam) when every weight is regularized) the test waits for it too.
#
# A smooth loss (NewtonLoss.smooth: no zones) has no step 5 test: the loop ends by the
# gradient test alone (the loss's gradient_test and accept hooks may set and extend it),
# at the cap or once stalled -- there after one more CGLS, of no iteration, that takes the
# tests at the final point and leaves -grad f in W.r.  Its line search need not be exact
# and may move the margins itself (NewtonLoss.move, which also says whether an undone
# step counts as an iteration and whether the solve has stalled).
#
# Distributed over row blocks (csrc/comm.pxd): the terms are this rank's, beta is the same
# on every rank; every sum over terms is reduced before it is used (in the loss's hooks
# and here), so every rank takes each decision alike.  With a weight split of the Newton
# loop (NewtonWork.split, Split.outer: mfn's binary terms) beta is valid on this rank's
# weights only and gathered by the caller at the end; NewtonWork.cg_split splits CGLS
# alone.  Once the Stop record is stopped (Ctrl-C, an exception in the callback,
# request_stop: csrc/interrupt.pxd) the driver returns at once and the caller raises.

from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libc.math cimport fabs, fmin, isfinite, INFINITY
from csr cimport CSR, dot
from csr_passes cimport matvec
from chunked cimport axpy_into
from cgls cimport (Operator, CglsSettings, CglsWork, cgls_solve, cgls_settings, residual,
                   residual_split)
from interrupt cimport Stop, stop_poll, stop_keep
from comm cimport Comm, comm_active, comm_sum, comm_sum1
from wsplit cimport Split, split_dot

# Status codes returned to Python.
cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    NO_DESCENT = 2
    GRADIENT = 3                   # stopped by the gradient test (NewtonSettings.gstop)
    CALLER = 4                     # the callback asked to stop after a step (its test held)


ctypedef struct NewtonSettings:
    # The driver's settings, named as the catalog's options (linsvm/problem/catalog.py).
    double tol                     # eq. 13's tolerance (-e)
    double forcing                 # the inexact-Newton forcing term (0: off)
    double forcing_guard           # its guard: the quadratic-model rule's tolerance (0: none)
    int warm                       # beta is a warm start (heuristic 1 does not apply)
    int heuristic1
    int heuristic2
    int precondition               # the damped Jacobi preconditioner of CGLS
    double jacobi_weight
    int diag_update                # mfn's binary terms: the Jacobi diagonal kept across steps
    int compact_rows               # mfn's binary terms: few active rows copied for CGLS
    int fused_cg
    double gstop                   # the gradient test's factor (0: off)
    double g0sq                    # ||grad f(0)||^2 if known at entry (a warm start), else -1
    double gap_stop                # the gradient test counts once it certifies this gap (0: off)
    int max_iter
    int cg_max_iter


ctypedef struct NewtonWork:
    # What the driver reads and writes besides the loss's own record.
    const CSR* X                   # the rows (margins y = X[rows] w)
    const int64_t* rows
    int64_t m                      # examples
    int64_t nbeta                  # entries of beta
    int64_t nreg                   # regularized: the first nreg
    double lam
    double* y                      # m: the margins at beta
    double* dy                     # m: X d of the step
    double* ytry                   # m: the margins at the line search's point
    double* beta_bar               # nbeta: the Newton point, then the trial point
    # CGLS's arrays: per term (z, cc, q, u, xd), per weight (the others; p is then d).
    # The per-term ones are dead from the end of a step's tests (_settled) to the next
    # step's active set, so a loss may lay its line search's arrays and ytry over them.
    double* z
    double* cc
    double* q
    double* u
    double* xd
    double* r
    double* p
    double* sv
    double* minv
    double* h                      # nbeta + 3
    double* dsum
    double* diag
    Operator A                     # the last step's active terms
    Stop* stop
    const Comm* comm
    const Split* split             # the Newton loop split too (outer), or NULL
    const Split* cg_split          # CGLS split, the loop replicated, or NULL


cdef inline NewtonSettings newton_settings(dict kw, dict fixed) except *:
    """NewtonSettings from a Python entry's settings keywords, named as its fields (the
    catalog's option names where it has them), and the values the entry fixes (`fixed`,
    which kw may not hold); g0sq starts unknown (-1).  TypeError for a name that is not a
    field or is fixed, ValueError naming a field neither gives."""
    cdef NewtonSettings P
    names = ("tol", "forcing", "forcing_guard", "warm", "heuristic1", "heuristic2",
             "precondition", "jacobi_weight", "diag_update", "compact_rows", "fused_cg", "gstop",
             "gap_stop", "max_iter", "cg_max_iter")
    for name in kw:
        if name not in names or name in fixed:
            raise TypeError(f"unexpected setting {name!r}")
    P = dict(kw, g0sq=-1.0, **fixed)
    return P


cdef inline int check_settings(const NewtonSettings* P) except -1:
    """Raise ValueError for settings the driver cannot take."""
    if not 0.0 < P.jacobi_weight <= 1.0:
        raise ValueError(f"jacobi_weight must be in (0, 1], got {P.jacobi_weight!r}")
    if not (P.gstop >= 0.0 and isfinite(P.gstop)):     # >= 1: w = 0 passes (a huge -e)
        raise ValueError(f"gstop must be finite and >= 0, got {P.gstop!r}")
    if not 0.0 <= P.forcing_guard < 1.0:
        raise ValueError(f"forcing_guard must be in [0, 1), got {P.forcing_guard!r}")
    return 0


cdef inline object take_setting(dict kw, str name):
    """kw.pop(name), or TypeError naming the missing setting."""
    try:
        return kw.pop(name)
    except KeyError:
        raise TypeError(f"missing setting {name!r}") from None


ctypedef struct NewtonState:
    # The driver's loop state, which the hooks of a smooth loss read and write.
    int it                         # outer iterations counted
    int cg_it                      # CGLS iterations of the last step
    int optimal                    # CGLS's answer: 1 eq. 13, 2 the gradient test at entry
    int checked                    # the step's eq. 13 held on the true residual (CGLS
                                   # checked it, or took no recurrence)
    int refreshed                  # the margins were recomputed after a failed step
    int stalled                    # no descent left (smooth: the final tests remain)
    int final                      # this CGLS runs no iteration: the tests at the last point
    double eps                     # the current eq. 13 tolerance (heuristic 2)
    double F
    double rr0                     # ||grad f(beta)||^2 read off the step's CGLS
    double stop_rr                 # gstop^2 ||grad f(0)||^2 (< 0: not known yet)
    int64_t n_show                 # active terms over every rank


# What a loss's own move (NewtonLoss.move) reports.
cdef enum:
    STEP_NONE = -1                 # no descent left: the solve ends (NO_DESCENT)
    STEP_RETRY = 0                 # not moved, the margins recomputed; the iteration counts
    STEP_MOVED = 1
    STEP_UNDONE = 2                # not moved, the margins recomputed; the iteration is
                                   # taken back (the loop counts the steps taken)


cdef struct NewtonLoss

ctypedef double (*nl_value)(NewtonLoss* L, NewtonWork* W, const double* beta,
                            const double* y) noexcept nogil
ctypedef void (*nl_active)(NewtonLoss* L, NewtonWork* W, const double* beta,
                           CglsSettings* S, CglsWork* C) noexcept nogil
ctypedef void (*nl_step)(NewtonLoss* L, NewtonWork* W, const double* beta) noexcept nogil
ctypedef double (*nl_measure)(NewtonLoss* L, NewtonWork* W) noexcept nogil
ctypedef const double* (*nl_point)(NewtonLoss* L, NewtonWork* W) noexcept nogil
ctypedef double (*nl_search)(NewtonLoss* L, NewtonWork* W, const double* beta) noexcept nogil
ctypedef double (*nl_bound)(NewtonLoss* L, NewtonWork* W, double f) noexcept nogil
ctypedef void (*nl_tests)(NewtonLoss* L, NewtonWork* W, NewtonState* G,
                          CglsSettings* S) noexcept nogil
ctypedef int (*nl_verdict)(NewtonLoss* L, NewtonWork* W, NewtonState* G) noexcept nogil
ctypedef int (*nl_move)(NewtonLoss* L, NewtonWork* W, double* beta,
                        NewtonState* G) noexcept nogil

cdef struct NewtonLoss:
    # A loss as the driver sees it; `state` is the implementation's record.  Every hook
    # reduces its own sums over terms when distributed.  A piecewise quadratic loss gives
    # the first eight hooks and leaves the last three NULL; a smooth one (smooth: no zones)
    # gives value, active and move, and may give gradient_test and accept.
    void* state
    int smooth                     # no zones: no settled test nor its full step, no
                                   # step_image / mismatch; at the cap or once stalled one
                                   # more CGLS, of no iteration, takes the tests at the
                                   # final point (W.r then holds -grad f there)
    nl_value value                 # f at (beta, margins y)
    nl_active active               # classify at beta: W.A, W.cc, W.z, W.beta_bar's seed;
                                   # may adjust CGLS's settings and arrays for its operator
    nl_step after_cgls             # after CGLS (NULL: nothing): e.g. undo eq. 23's shift
    nl_step step_image             # W.p = d = beta_bar - beta, W.dy = X d
    nl_measure mismatch            # the gradient the zone changes at beta_bar add (local)
    nl_point cg_point              # the point CGLS solved for (NULL: W.beta_bar)
    nl_search line_search          # delta* of the exact line search along W.p
    nl_bound certified_rr          # ||grad f||^2 below which f is certified (NULL: none)
    nl_tests gradient_test         # sets the step's CGLS tests (stop_rr, grad_rr, cert_rr,
                                   # the quadratic-model rule) from the loop's state (NULL:
                                   # the gradient test at stop_rr, with certified_rr)
    nl_verdict accept              # the gradient test held: 1 stop (GRADIENT), 0 solve the
                                   # same model again (NULL: stop)
    nl_move move                   # the line search and the move, which may set the margins
                                   # itself: a STEP_ code (NULL: line_search, then the
                                   # driver's evaluated trial)


# ------------------------------------------------------------------ shared pieces

cdef inline void reverse_both(int64_t* rows, int64_t* pos, int64_t lo, int64_t hi) noexcept nogil:
    """Reverse rows[lo:hi] and pos[lo:hi] in place: the examples a loss's selection filled
    from the end of its active lists (the others after the active ones) put back in
    the order of k."""
    cdef int64_t j, tmp, n = hi - lo
    for j in range(n // 2):
        tmp = rows[lo + j]
        rows[lo + j] = rows[hi - 1 - j]
        rows[hi - 1 - j] = tmp
        tmp = pos[lo + j]
        pos[lo + j] = pos[hi - 1 - j]
        pos[hi - 1 - j] = tmp


cdef inline void copy_weights(double* dst, const double* src, int64_t n,
                              const Split* S) noexcept nogil:
    """dst = src: the n weights, or with an outer weight split (S) this rank's (S.mine)."""
    cdef int64_t i, j
    if S == NULL:
        memcpy(dst, src, n * sizeof(double))
        return
    for i in range(S.n_mine):
        j = S.mine[i]
        dst[j] = src[j]


cdef inline void image_on_rows(NewtonWork* W, const int64_t* act_pos, const int64_t* off_rows,
                               const int64_t* off_pos) noexcept nogil:
    """d = W.dsum (into W.p) and W.dy = X d for a step whose CGLS ran on rows: the active
    rows from CGLS's accumulated image (W.xd), one mat-vec over the others only."""
    cdef int64_t j, n_act = W.A.n, n_off = W.m - W.A.n
    copy_weights(W.p, W.dsum, W.X.n_weights, W.split)
    for j in range(n_act):
        W.dy[act_pos[j]] = W.xd[j]
    matvec(W.X, off_rows, n_off, W.p, W.q)
    for j in range(n_off):
        W.dy[off_pos[j]] = W.q[j]


cdef inline int true_eq13(NewtonLoss* L, NewtonWork* W, double eps, double zcz) noexcept nogil:
    """Eq. 13 on the true residual r = A'C z - Lam beta~ of the last step's CGLS (beta~
    the point it solved for), whose own test used the fused recurrence (zcz reduced when
    distributed; r is, here)."""
    cdef const double* bt = W.beta_bar
    if L.cg_point != NULL:
        bt = L.cg_point(L, W)
    if W.split != NULL:                       # r on the owned weights, ||r||^2 reduced
        residual_split(&W.A, W.cc, W.z, W.lam, bt, W.u, W.r, NULL, NULL, 1.0, W.split, W.nreg)
        return comm_sum1(W.comm, split_dot(W.split, W.r, W.r, W.A.nw)) <= eps * eps * zcz
    residual(&W.A, W.cc, W.z, W.lam, bt, W.u, W.r, NULL, NULL, 1.0, W.comm, W.nreg)
    return dot(W.r, W.r, W.A.nw) <= eps * eps * zcz


cdef inline int report(void* callback, int it, double F, int64_t n_show, int cg_it,
                       Stop* stop) noexcept nogil:
    """callback(it, f, n_active, cg_it) after an outer iteration; returns its answer (an
    exception stops the solve: csrc/interrupt.pxd)."""
    cdef int answer = 0
    if callback == NULL:
        return 0
    with gil:
        try:
            answer = bool((<object>callback)(it, F, n_show, cg_it))
        except BaseException as e:
            stop_keep(stop, e)
    return answer


# ------------------------------------------------------------------ the driver

cdef inline void _newton_step(NewtonLoss* L, NewtonWork* W, const double* beta,
                              const NewtonSettings* P, NewtonState* G) noexcept nogil:
    """Step 3: the Newton point W.beta_bar of the model that keeps the zones of beta, by
    CGLS over the loss's active terms; the gradient test on its entry residual."""
    cdef CglsSettings S
    cdef CglsWork C
    cdef int cap = 10 if (P.heuristic1 and not P.warm and G.it == 1) else P.cg_max_iter
    # the gradient test, certified where the loss bounds the gap by the gradient
    cdef double grad_rr = G.stop_rr if G.stop_rr > 0.0 else 0.0
    if G.final:
        cap = 0
    if grad_rr > 0.0 and L.certified_rr != NULL and L.gradient_test == NULL:
        grad_rr = fmin(grad_rr, L.certified_rr(L, W, G.F))
    S = cgls_settings(G.eps, P.forcing, P.forcing_guard, cap, W.stop, W.comm)
    S.fused_cg = P.fused_cg
    S.jacobi = P.precondition
    S.jacobi_weight = P.jacobi_weight
    S.verify = 0                  # eq. 13's true residual: true_eq13, when about to stop
    S.stop_rr = grad_rr
    S.nreg = W.nreg
    S.split = W.cg_split
    C.z = W.z
    C.q = W.q
    C.u = W.u
    C.r = W.r
    C.p = W.p
    C.s = W.sv
    C.minv = W.minv if P.precondition else NULL
    C.h = W.h
    C.dsum = W.dsum
    C.xd = W.xd
    C.diag = W.diag
    L.active(L, W, beta, &S, &C)
    if L.gradient_test != NULL:
        L.gradient_test(L, W, G, &S)
    G.checked = S.verify or not (S.fused_cg or comm_active(W.comm))
    G.cg_it = cgls_solve(&W.A, W.cc, W.lam, W.beta_bar, &S, &C, &G.optimal, &G.rr0)
    if L.after_cgls != NULL:
        L.after_cgls(L, W, beta)


cdef inline int _settled(NewtonLoss* L, NewtonWork* W, NewtonState* G) noexcept nogil:
    """Step 5's test at beta_bar: the zones consistent (the mismatch within eps ||z||_C)
    and eq. 13 on the true residual."""
    cdef int64_t j
    cdef double mismatch = L.mismatch(L, W), zcz = 0.0
    cdef double red[2]
    for j in range(W.A.n):
        zcz += W.cc[j] * W.z[j] * W.z[j]
    if comm_active(W.comm):
        red[0] = mismatch
        red[1] = zcz
        comm_sum(W.comm, red, 2)
        mismatch = red[0]
        zcz = red[1]
    return mismatch * mismatch <= G.eps * G.eps * zcz and (
        G.checked or true_eq13(L, W, G.eps, zcz))


cdef inline int _line_step(NewtonLoss* L, NewtonWork* W, double* beta,
                           NewtonState* G) noexcept nogil:
    """Steps 6-7: the exact line search, then the move (STEP_MOVED), a retry after
    recomputing the margins (STEP_RETRY), or no descent left (STEP_NONE).  The step is evaluated before it is taken
    (Appendix A stops if F grows): with a direction at rounding level the slope's pieces
    are rounding noise and the "exact" step can be absurd."""
    cdef int64_t j, k
    cdef double delta = L.line_search(L, W, beta)
    cdef double Fnew = G.F
    if delta > 0.0:
        if W.split != NULL:
            for j in range(W.split.n_mine):
                k = W.split.mine[j]
                W.beta_bar[k] = beta[k] + delta * W.p[k]
        else:
            axpy_into(W.beta_bar, beta, delta, W.p, W.nbeta, W.X.n_threads)
        axpy_into(W.ytry, W.y, delta, W.dy, W.m, W.X.n_threads)
        Fnew = L.value(L, W, W.beta_bar, W.ytry)
    if delta <= 0.0 or Fnew > G.F + 1e-12 * fabs(G.F):
        # y is updated incrementally (step 7); at a tight eps its drift from X w can
        # exceed the slope of a short step.  Recompute it once and retry before
        # declaring that no descent is left.
        if not G.refreshed:
            matvec(W.X, W.rows, W.m, beta, W.y)
            G.F = L.value(L, W, beta, W.y)
            G.refreshed = 1
            return STEP_RETRY
        return STEP_NONE
    G.refreshed = 0
    copy_weights(beta, W.beta_bar, W.nbeta, W.split)
    memcpy(W.y, W.ytry, W.m * sizeof(double))
    G.F = Fnew
    return STEP_MOVED


cdef inline int newton_drive(NewtonLoss* L, NewtonWork* W, double* beta,
                             const NewtonSettings* P, int* n_iter, int64_t* cg_total,
                             double* trace, void* callback) noexcept nogil:
    """The finite Newton method (block comment) from beta (in/out; W.y = X w on entry and
    exit); returns a status code.  trace[it] receives f after outer iteration it;
    callback(it, f, n_active, cg_it) after each that moved beta (a true answer after a
    line-search step ends the solve: CALLER).  Once W.stop is stopped it returns at
    once, beta and W.y then being meaningless."""
    cdef int64_t k
    cdef int status = MAX_ITER, moved
    cdef int need_second = P.heuristic2 and P.tol < 1e-2
    cdef NewtonState G
    G.it = 0
    G.eps = 1e-2 if need_second else P.tol
    G.F = L.value(L, W, beta, W.y)
    G.rr0 = -1.0
    G.stop_rr = P.gstop * P.gstop * P.g0sq if P.g0sq >= 0.0 else -1.0
    G.refreshed = 0
    G.stalled = 0
    G.n_show = 0
    cg_total[0] = 0
    while True:
        G.final = G.stalled or G.it >= P.max_iter
        if G.final and not L.smooth:
            status = MAX_ITER
            break
        if stop_poll(W.stop, W.m * W.stop.per_row):
            break
        G.it += 1
        _newton_step(L, W, beta, P, &G)
        if G.optimal == 2 or (L.smooth and G.rr0 == 0.0):
            G.it -= 1                     # ||grad f(beta)|| <= gstop ||grad f(0)||
            if L.accept == NULL or L.accept(L, W, &G):
                status = GRADIENT
                break
            continue
        if G.final:                       # smooth: the final point's tests did not hold
            G.it -= 1
            status = NO_DESCENT if G.stalled else MAX_ITER
            break
        if G.stop_rr < 0.0 and P.gstop > 0.0:     # a cold start: rr0 = ||grad f(0)||^2
            G.stop_rr = P.gstop * P.gstop * G.rr0
        cg_total[0] += G.cg_it
        if W.stop.stopped:
            break
        if not L.smooth:
            G.n_show = W.A.n
            if comm_active(W.comm):
                G.n_show = <int64_t>comm_sum1(W.comm, <double>W.A.n)
            L.step_image(L, W, beta)      # step 5: d = beta_bar - beta, dy = X d
            if G.optimal and _settled(L, W, &G):
                copy_weights(beta, W.beta_bar, W.nbeta, W.split)
                for k in range(W.m):
                    W.y[k] += W.dy[k]
                G.F = L.value(L, W, beta, W.y)
                trace[G.it - 1] = G.F
                report(callback, G.it, G.F, G.n_show, G.cg_it, W.stop)
                if W.stop.stopped:
                    break
                if need_second:           # step 8: second round at the final eps
                    need_second = 0
                    G.eps = P.tol
                    continue
                status = CONVERGED
                break
        moved = L.move(L, W, beta, &G) if L.move != NULL else _line_step(L, W, beta, &G)
        trace[G.it - 1] = G.F
        if moved == STEP_UNDONE:
            G.it -= 1
            continue
        if moved == STEP_RETRY:
            continue
        if moved == STEP_NONE:
            status = NO_DESCENT
            break
        if report(callback, G.it, G.F, G.n_show, G.cg_it, W.stop):
            status = CALLER
            break
    n_iter[0] = G.it
    return status
