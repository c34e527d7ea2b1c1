# lr's and softmax's truncated Newton (csrc/_logistic.pyx) as a smooth loss of the one Newton
# driver (csrc/newton_driver.pxd; lr_loss, run by lr_drive): each step's CGLS tests, the line
# search along it and the move, the stopping tests and the certificate, over the loss model
# of csrc/logistic_loss.pxd (whose block comment has the problems and each step's weighted
# least-squares problem).  The driver's loop takes each step and its tests; the hooks below
# hold what is lr's.
#
# CGLS runs with eq. 13 off (eps 0: its ||z||_C scale means nothing here); it stops by its
# forcing term (||r|| <= forcing ||g||), or by the quadratic-model rule of Galli & Lin in its
# adaptive form (cgls.pxd's qtol with qadapt: i (Q_{i-1} - Q_i) <= min(cg_tol,
# ||g||_{M^-1}^(1/2)) |Q_i|), or at the cap.  It hands back the step d and its image A d
# accumulated as it goes (dsum, xd): for the binary problem A d = X d, and for the
# multinomial one M_i (X d)_i differs from (X d)_i by a constant across the classes of each
# row, which the softmax loss does not see, so the line search needs no pass over the data.
#
# Line search: phi(tau) = f(w + tau d) is smooth and strictly convex; its derivatives
#     phi'(tau)  = w.d + tau d.d + sum_i U_i l'(m_i + tau t_i xd_i) t_i xd_i
#     phi''(tau) = d.d + sum_i U_i l''(m_i + tau t_i xd_i) xd_i^2
# (multinomial: sum_i U_i (pi_i(tau).xi_i - xi_{i,y_i}) and sum_i U_i (pi_i.xi_i^2 - (pi_i.xi_i)^2),
# pi_i(tau) = softmax(o_i + tau xi_i)) cost O(terms) each, one exp per term.  A safeguarded
# Newton iteration on phi' from tau = 1 (a bracket [lo, hi] of the root, bisection when the
# Newton point leaves it) stops at |phi'(tau)| <= ls_tol |phi'(0)|; the step is kept only if f
# decreased (else the margins are recomputed from w once and the iteration retried, then the
# solve ends with NO_DESCENT: none left at machine precision).
#
# Stop (LIBLINEAR's test for -s 0): ||g(w)|| <= gstop ||g(0)||, gstop = eps min(n+, n-)/n for
# the binary problem, read off the residual each CGLS starts from (its r_0 = -g(w)), so the test
# costs no pass; it counts only when the duality gap also certifies gap_stop of f:
#
# Certificate.  The dual point built from w, alpha_i = U_i sigma(-m_i) (multinomial: the
# probabilities pi_i = p_i(W)), is feasible, and with w_alpha = sum_i alpha_i t_i x_i = w - g
# (multinomial: W_pi = sum_i U_i x_i (Y_i - p_i)' = W - G):
#     D(alpha) = -1/2 ||w_alpha||^2 - sum_i [alpha_i log alpha_i + (U_i - alpha_i) log(U_i - alpha_i)
#                                            - U_i log U_i]
#              = -1/2 ||w_alpha||^2 + sum_i U_i (l(m_i) + m_i sigma(-m_i))
#     D(pi)    = -1/2 ||W_pi||^2 - sum_i U_i sum_m pi_im log pi_im          (multinomial)
# (each from U l(m) = max_{0<=a<=U} -a m - [a log a + (U-a) log(U-a) - U log U], resp.
# lse(o) = max_{pi in simplex} pi.o - sum pi log pi), and P(w) - D = 1/2 ||g||^2 exactly, so
# ||g||^2 <= 2 gap_stop f(w) is the gap test, folded into the gradient test's threshold.
# That bound is loose by H's conditioning (docs/logistic.md, "Stopping, certificates,
# warnings"), and a better dual point comes with each Newton step (binary problem): linearize
# alpha(w) along the step d, alpha_i = U_i (s_i - s_i (1 - s_i) t_i xd_i), s_i = sigma(-m_i),
# clipped to [0, U_i].  Unclipped, its w_alpha is w - g - (H - I) d = w + d + r with
# r = -g - H d CGLS's final residual, so P(w + d) - D = 1/2 ||r||^2 + (Fenchel-Young terms of
# second order in X d): the gap of the Newton point shrinks with CG's residual, not with g.
# The driver computes it when 1/2 ||r||^2 <= gap_stop f (r is known; the entropy terms take
# two logs a row), estimates w_alpha by w + d + r, and when that estimate certifies after the
# line search, sums w_alpha = sum_i alpha_i t_i x_i exactly (one pass); the best such D
# certifies every later point, whose gradient test then stands alone.
# Free bias (LIBLINEAR -s 0 -R; softmax: scikit-learn's unpenalized intercept): the bias weight
# (multinomial: the bias row, the last k weights) leaves 1/2 ||w||^2 (cgls' nreg, and every
# ||.||^2 of the driver over the first nreg weights).  The binary dual then has
# the constraint sum_i alpha_i t_i = 0, which alpha(w) meets only at the optimum: the side
# (t_i = +1 or -1) with the larger sum of alpha is scaled down by the ratio of the two sums
# (free_bias_dual), and D of that point, with the entropy terms of the scaled alpha, is the
# certificate; P - D is no longer 1/2 ||g||^2.  The driver checks that D once the gradient
# test holds, and if it does not certify, solves the same Newton model's step to certify
# as above, the Newton step's point balanced the same way (its estimate leaves out the bias
# weight); the caller repeats the solve tighter only if neither certifies.
# The multinomial dual has
# one such constraint per class; linsvm.solvers.softmax_dual builds its feasible point (a
# shift of every row's scores by one vector, chosen so that the constraints hold).
#
# Distributed over row blocks (csrc/comm.pxd): each rank holds its block of the examples and
# the same w.  CGLS takes one allreduce of nbeta + 3 doubles per iteration (cgls.pxd); each
# line-search trial one of 2 doubles; f, phi'(0), the certificate's sums and ||g(0)|| one each
# per use.  Every decision is taken on reduced numbers, so every rank keeps the same w.

from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libc.math cimport log, log1p, fabs, fmax, fmin, sqrt, INFINITY, NAN
from csr cimport dot
from csr_passes cimport rmatvec
from cgls cimport CglsSettings, CglsWork
from interrupt cimport stop_keep
from comm cimport comm_sum, comm_sum1
from newton_driver cimport (GRADIENT, STEP_MOVED, STEP_UNDONE, NewtonSettings, NewtonWork,
                           NewtonState, NewtonLoss, newton_drive)
from logistic_loss cimport (Model, BINARY, CONVERGED, _sig_minus, _logloss, model_eval,
                            model_setup, model_slope0, model_trial, model_accept,
                            model_scores, model_dual_terms, model_operator)


ctypedef struct Params:
    # the settings of a solve: the entry's keywords by the same names (the catalog's,
    # linsvm.solvers.logistic_spec's NEWTON_OPTIONS, where the option is one)
    int max_iter                   # Newton steps
    int cg_max_iter                # CGLS iterations per step
    double cg_tol                  # the quadratic-model rule (above; 0: off)
    double forcing                 # CGLS's forcing term (0: off)
    int precondition               # the damped Jacobi preconditioner
    double jacobi_weight           # its weight (cgls.pxd's jw)
    int n_threads                  # the kernels' threads (0: all)
    int regularize_bias            # 0 (with a bias feature): the bias weights are free
    double gstop                   # the gradient test's factor (0: off)
    double gap_stop                # the gap test: 1/2 ||g||^2 <= gap_stop f
    double ls_tol                  # line search: |phi'(tau)| <= ls_tol |phi'(0)|
    int ls_max                     # line search: trials per Newton step


ctypedef struct LrState:
    # lr's record behind the driver's interface (lr_loss)
    Model* M
    const Params* P
    void* callback                 # callback(it, f, cg_it, step, ||g at the step's start||)
                                   # after each step, or NULL
    double F                       # f(beta) at the last step's start (at the end: at beta)
    double dual_step               # the best D of a Newton step's dual point (-inf: none yet)
    int dual_at_beta               # free bias: dual_step holds the balanced D of the final beta
    int by_step                    # the Newton step's dual point applies (binary, not split)
    int certify                    # solve this Newton model's step again, to certify
    double cert_rr                 # the residual this step's CGLS certifies at (0: none)
    double tau                     # the last step's length
    double ent                     # the entropy terms of the last step's dual point
    int n_ls                       # line-search trials in all


ctypedef struct Result:
    int status                     # CONVERGED, MAX_ITER or NO_DESCENT
    int n_iter                     # Newton steps
    int64_t cg_iter                # CGLS iterations in all
    int64_t ls_trials              # line-search trials in all
    double f                       # f(beta)
    double gsq                     # ||g(beta)||^2
    double dual                    # D of the certificate


cdef inline double line_search(Model* M, double wd, double dd, double phi0, double ls_tol,
                               int ls_max, int* n_trials) noexcept nogil:
    """The safeguarded 1-D Newton iteration on phi'(tau) = 0 from tau = 1 (block comment),
    phi'(0) = phi0 < 0.  Returns the last tau tried (M keeps its per-term values)."""
    cdef double lo = 0.0, hi = INFINITY, tau = 1.0, tn, g, hh
    cdef double gh[2]
    cdef int it = 0
    while True:
        gh[0] = 0.0
        gh[1] = 0.0
        model_trial(M, tau, gh)
        comm_sum(M.comm, gh, 2)
        it += 1
        g = wd + tau * dd + gh[0]
        hh = dd + gh[1]
        if fabs(g) <= ls_tol * fabs(phi0) or it >= ls_max:
            break
        if g < 0.0:
            lo = tau
        else:
            hi = tau
        tn = tau - g / hh if hh > 0.0 else INFINITY
        if not (tn > lo and tn < hi):
            tn = 0.5 * (lo + hi) if hi < INFINITY else 2.0 * tau
        if tn == tau:
            break
        tau = tn
    n_trials[0] += it
    return tau


cdef inline double side_scale(double t, const double* sides) noexcept nogil:
    """The factor that balances a free bias's dual point (free_bias_dual): the side of
    label t (sides[1]: t = +1, sides[0]: t = -1, the sums of alpha) with the larger sum is
    scaled down to the other's sum; 1 for the smaller side."""
    if t > 0.0 and sides[1] > sides[0]:
        return sides[0] / sides[1]
    if t < 0.0 and sides[0] > sides[1]:
        return sides[1] / sides[0]
    return 1.0


cdef inline double step_dual_terms(const Model* M, double* au, int balance) noexcept nogil:
    """The dual point linearized along the step whose image is M.xi (block comment), at the
    current scores, balanced over the two sides as free_bias_dual balances alpha(w) when
    `balance` (a free bias; one allreduce): au_i = alpha_i t_i; returns this rank's
    sum_i U_i H(alpha_i / U_i), H the binary entropy.  Binary problem only."""
    cdef int64_t i
    cdef double s = 0.0, mm, sb, p
    cdef double sides[2]
    sides[0] = 0.0
    sides[1] = 0.0
    for i in range(M.m):
        mm = M.t[i] * M.o[i]
        sb = _sig_minus(mm, M.e[i])
        p = sb - sb * (1.0 - sb) * M.t[i] * M.xi[i]
        p = 0.0 if p <= 0.0 else (1.0 if p >= 1.0 else p)
        au[i] = p
        sides[1 if M.t[i] > 0.0 else 0] += M.U[i] * p
    if balance:
        comm_sum(M.comm, sides, 2)
    for i in range(M.m):
        p = au[i]
        if balance:
            p *= side_scale(M.t[i], sides)
        if 0.0 < p < 1.0:
            s -= M.U[i] * (p * log(p) + (1.0 - p) * log1p(-p))
        au[i] = M.U[i] * p * M.t[i]
    return s


cdef inline double step_dual(Model* M, const double* beta, NewtonWork* W, double F,
                             double gap_stop, double grad_rr, double* ent) noexcept nogil:
    """After a CGLS from beta: the estimate of D at the step's dual point (block comment),
    -1/2 ||w + d + r||^2 over the regularized weights + ent, ent its entropy terms over every
    rank (W.u then holds alpha t, balanced with a free bias); or -inf when CGLS's residual
    is too large for that point to certify gap_stop of F, or for the next point's gradient
    (about -r) to pass the test ||g||^2 <= grad_rr, where its certificate would wait."""
    cdef int64_t j
    cdef double vv = 0.0, v, rr = dot(W.r, W.r, M.nbeta)
    if 0.5 * rr > gap_stop * F or rr > grad_rr:
        return -INFINITY
    ent[0] = comm_sum1(M.comm, step_dual_terms(M, W.u, M.nreg < M.nbeta))
    for j in range(M.nreg):
        v = beta[j] + W.dsum[j] + W.r[j]
        vv += v * v
    return -0.5 * vv + ent[0]


cdef inline double step_dual_exact(Model* M, NewtonWork* W, double ent) noexcept nogil:
    """D at the dual point held in W.u (alpha t) with entropy terms ent: one pass for
    w_alpha = sum_i alpha_i t_i x_i, one allreduce; ||.||^2 over the regularized weights."""
    rmatvec(M.X, M.rows, M.m, W.u, W.sv)
    comm_sum(M.comm, W.sv, M.nbeta)
    return -0.5 * dot(W.sv, W.sv, M.nreg) + ent


cdef inline double free_bias_dual(Model* M, NewtonWork* W) noexcept nogil:
    """D at a feasible dual point of the binary problem with a free bias (block comment):
    its dual adds the constraint sum_i alpha_i t_i = 0 (the bias column is constant), which
    alpha_i = U_i sigma(-m_i) meets only at the optimum.  The side (t_i = +1 or -1) with the
    larger sum of alpha is scaled down by the ratio of the sums (every alpha_i stays inside
    (0, U_i)); then D = -1/2 ||sum_i alpha_i t_i x_i||_R^2 + sum_i U_i H(alpha_i / U_i), H the
    binary entropy, ||.||_R without the bias weight.  One pass over the rows, one allreduce
    of the weights and two of scalars."""
    cdef int64_t i, nb = M.nbeta
    cdef double sides[2]
    cdef double mm, q, p, sc, ent = 0.0
    sides[0] = 0.0
    sides[1] = 0.0
    for i in range(M.m):
        sides[1 if M.t[i] > 0.0 else 0] += M.U[i] * _sig_minus(M.t[i] * M.o[i], M.e[i])
    comm_sum(M.comm, sides, 2)
    for i in range(M.m):
        mm = M.t[i] * M.o[i]
        q = _sig_minus(mm, M.e[i])
        sc = side_scale(M.t[i], sides)
        W.u[i] = sc * M.U[i] * q * M.t[i]
        if sc == 1.0:                        # H(sigma(-m)) = l(m) + m sigma(-m), stably
            ent += M.U[i] * (_logloss(mm, M.e[i]) + mm * q)
        else:
            p = sc * q
            if p > 0.0:
                ent -= M.U[i] * (p * log(p) + (1.0 - p) * log1p(-p))
    rmatvec(M.X, M.rows, M.m, W.u, W.sv)
    comm_sum(M.comm, W.sv, nb)
    return -0.5 * dot(W.sv, W.sv, M.nreg) + comm_sum1(M.comm, ent)


cdef inline double lr_stop_rr(const LrState* L, const NewtonState* G) noexcept nogil:
    """The gradient test's threshold on ||g||^2: the driver's gstop^2 ||g(0)||^2 (-1: not
    known before the first CGLS of a cold start), +inf without a gradient test (gstop 0:
    the gap test alone)."""
    return INFINITY if L.P.gstop <= 0.0 else G.stop_rr


cdef inline double lr_value(NewtonLoss* NL, NewtonWork* W, const double* beta,
                            const double* y) noexcept nogil:
    """f(beta) from the scores M.o (= W.y, y): model_eval also keeps the per-term values
    that model_setup reads."""
    cdef LrState* L = <LrState*>NL.state
    return 0.5 * dot(beta, beta, W.nreg) + comm_sum1(L.M.comm, model_eval(L.M))


cdef inline void lr_active(NewtonLoss* NL, NewtonWork* W, const double* beta,
                           CglsSettings* S, CglsWork* C) noexcept nogil:
    """The Newton model at beta (logistic_loss.pxd: every term, weights cc and residual z),
    CGLS seeded at beta."""
    cdef LrState* L = <LrState*>NL.state
    model_setup(L.M)
    memcpy(W.beta_bar, beta, W.nbeta * sizeof(double))
    W.A = model_operator(L.M)


cdef inline void lr_tests(NewtonLoss* NL, NewtonWork* W, NewtonState* G,
                          CglsSettings* S) noexcept nogil:
    """The step's CGLS tests (block comment): no eq. 13 (the driver's tol 0), the forcing
    term with the quadratic-model rule at cg_tol, adaptive and stopping by itself (not a
    guard only); the gradient test with the gap folded in, and where the gradient test
    holds but the gap does not, the step solved to the residual at which its dual point
    certifies (with room for the second-order terms)."""
    cdef LrState* L = <LrState*>NL.state
    cdef double stop_rr = lr_stop_rr(L, G), gap = L.P.gap_stop, thr
    L.F = G.F
    # (1/2 ||g||^2 = P - D holds without a free bias only; with one the balanced dual
    # point is checked once the gradient test holds; a Newton step's dual point that
    # certifies leaves the gradient test alone)
    if stop_rr < 0.0:
        thr = 0.0
    elif W.nreg < W.nbeta or G.F - L.dual_step <= gap * G.F:
        thr = stop_rr
    else:
        thr = fmin(stop_rr, 2.0 * gap * G.F)
    L.cert_rr = (gap * G.F if L.by_step and (thr < stop_rr < INFINITY or L.certify)
                 else 0.0)
    S.qadapt = 1
    S.qguard = 0
    S.stop_rr = 0.0 if L.certify else thr
    S.grad_rr = (INFINITY if L.certify else stop_rr) if L.cert_rr > 0.0 else 0.0
    S.cert_rr = L.cert_rr
    L.certify = 0


cdef inline int lr_accept(NewtonLoss* NL, NewtonWork* W, NewtonState* G) noexcept nogil:
    """The gradient test holds at beta: stop, unless a free bias's balanced dual point of
    beta does not certify the gap; then this Newton model again, its step solved to
    certify (0)."""
    cdef LrState* L = <LrState*>NL.state
    cdef double gap = L.P.gap_stop
    if (G.optimal == 2 and L.by_step and W.nreg < W.nbeta and G.F - L.dual_step > gap * G.F
            and not G.final):
        L.dual_step = fmax(L.dual_step, free_bias_dual(L.M, W))
        if G.F - L.dual_step > gap * G.F:
            L.certify = 1
            return 0
        L.dual_at_beta = 1
    return 1


cdef inline int lr_step(LrState* L, NewtonWork* W, double* beta, NewtonState* G,
                        double dest) noexcept nogil:
    """The line search along the step d = W.dsum, whose image CGLS accumulated in M.xi, and
    the move to beta + tau d if f decreased: STEP_MOVED.  Else the step is undone, the
    scores recomputed from beta (a second time in a row: the solve has stalled) and the
    iteration taken back: STEP_UNDONE.  dest: the estimate of D at the step's dual point
    (-inf: none); when it certifies at the new point, D is summed exactly there."""
    cdef Model* M = L.M
    cdef int64_t j, nb = W.nbeta, nr = W.nreg
    cdef double wd, dd, phi0, Fnew, F = G.F
    wd = dot(beta, W.dsum, nr)
    dd = dot(W.dsum, W.dsum, nr)
    phi0 = wd + comm_sum1(M.comm, model_slope0(M))
    Fnew = F
    L.tau = 0.0
    if phi0 < 0.0:
        memcpy(W.ytry, M.o, M.m * M.k * sizeof(double))
        L.tau = line_search(M, wd, dd, phi0, L.P.ls_tol, L.P.ls_max, &L.n_ls)
        Fnew = comm_sum1(M.comm, model_accept(M, L.tau))
        for j in range(nb):
            W.beta_bar[j] = beta[j] + L.tau * W.dsum[j]
        Fnew += 0.5 * dot(W.beta_bar, W.beta_bar, nr)
    if not (phi0 < 0.0 and Fnew <= F):
        if phi0 < 0.0:                      # undo the step
            memcpy(M.o, W.ytry, M.m * M.k * sizeof(double))
        # the scores drift from X beta as steps add up; recompute them once and retry,
        # else only the tests are left
        model_scores(M, beta)
        G.F = 0.5 * dot(beta, beta, nr) + comm_sum1(M.comm, model_eval(M))
        if G.refreshed:
            G.stalled = 1
        G.refreshed = 1
        return STEP_UNDONE
    G.refreshed = 0
    memcpy(beta, W.beta_bar, nb * sizeof(double))
    if F - Fnew <= 1e-14 * fabs(Fnew):      # no progress left at machine precision
        G.stalled = 1
    G.F = Fnew
    if Fnew - dest <= L.P.gap_stop * Fnew:  # the estimate certifies: D exactly, one pass
        L.dual_step = fmax(L.dual_step, step_dual_exact(M, W, L.ent))
    return STEP_MOVED


cdef inline int lr_move(NewtonLoss* NL, NewtonWork* W, double* beta,
                        NewtonState* G) noexcept nogil:
    """The step's dual point (its estimate, until one certifies), the line search and the
    move (lr_step); L.callback after a step taken (an exception stops the solve)."""
    cdef LrState* L = <LrState*>NL.state
    cdef double stop_rr = lr_stop_rr(L, G), dest = -INFINITY
    cdef int moved
    if L.by_step and G.F - L.dual_step > L.P.gap_stop * G.F:
        # (a certifying step: whatever the gradient test, its point is the one wanted)
        dest = step_dual(L.M, beta, W, G.F, L.P.gap_stop,
                         INFINITY if L.cert_rr > 0.0 or stop_rr < 0.0 else stop_rr, &L.ent)
    moved = lr_step(L, W, beta, G, dest)
    if moved == STEP_MOVED and L.callback != NULL:
        with gil:
            try:
                (<object>L.callback)(G.it, G.F, G.cg_it, L.tau, sqrt(G.rr0))
            except BaseException as e:
                stop_keep(W.stop, e)
    return moved


cdef inline NewtonLoss lr_loss(LrState* L) noexcept nogil:
    """The driver's interface to lr's loss: smooth, its own line search and tests."""
    cdef NewtonLoss NL
    NL.state = L
    NL.smooth = 1
    NL.value = lr_value
    NL.active = lr_active
    NL.after_cgls = NULL
    NL.step_image = NULL
    NL.mismatch = NULL
    NL.cg_point = NULL
    NL.line_search = NULL
    NL.certified_rr = NULL
    NL.gradient_test = lr_tests
    NL.accept = lr_accept
    NL.move = lr_move
    return NL


cdef inline int lr_drive(LrState* L, NewtonWork* W, double* beta, double g0sq,
                         double* trace, Result* R) noexcept nogil:
    """Truncated Newton from beta (in/out) with L.M.o = its scores (W.y), by the driver
    over lr_loss; g0sq: ||g(0)||^2 if known at entry (a warm start), else -1.  Returns
    R.status; R.f = f(beta), and W.r = -g(beta) (every exit follows a CGLS of no iteration
    at beta).  trace[it] = f after iteration it.  Once W.stop is stopped it returns at
    once (beta meaningless; the caller raises)."""
    cdef const Params* P = L.P
    cdef NewtonSettings S
    cdef NewtonLoss NL = lr_loss(L)
    cdef int status
    S.tol = 0.0                    # no eq. 13: its ||z||_C scale means nothing here
    S.forcing = P.forcing
    S.forcing_guard = P.cg_tol
    S.warm = 0
    S.heuristic1 = 0
    S.heuristic2 = 0
    S.precondition = P.precondition
    S.jacobi_weight = P.jacobi_weight
    S.diag_update = 0
    S.fused_cg = 1
    S.gstop = P.gstop if P.gstop > 0.0 else 0.0
    S.g0sq = g0sq
    S.gap_stop = P.gap_stop
    S.max_iter = P.max_iter
    S.cg_max_iter = P.cg_max_iter
    # the Newton step's dual point (block comment): binary, not split
    L.by_step = L.M.kind == BINARY and L.M.split == NULL and P.gap_stop > 0.0
    L.dual_step = -INFINITY
    L.dual_at_beta = 0
    L.certify = 0
    L.cert_rr = 0.0
    L.tau = 0.0
    L.ent = 0.0
    L.n_ls = 0
    L.F = 0.0
    status = newton_drive(&NL, W, beta, &S, &R.n_iter, &R.cg_iter, trace, NULL)
    R.status = CONVERGED if status == GRADIENT else status
    R.ls_trials = L.n_ls
    R.f = L.F
    return R.status


cdef inline void certificate(const LrState* L, NewtonWork* W, const double* beta,
                             Result* R) noexcept nogil:
    """R.dual = D at the dual point built from beta, or at the best Newton step's (block
    comment), and R.gsq = ||g(beta)||^2, from W.r = -g(beta) (lr_drive's exit).  With a
    free bias (M.nreg < M.nbeta) the dual point is balanced first (free_bias_dual)."""
    cdef Model* M = L.M
    cdef int64_t j, nb = M.nbeta, nr = M.nreg
    R.gsq = dot(W.r, W.r, nb)
    if nr < nb:                              # multinomial: the caller's (NaN here)
        if M.kind != BINARY:
            R.dual = NAN
        elif L.dual_at_beta:                 # the driver's check at beta has it already
            R.dual = L.dual_step
        else:
            R.dual = fmax(free_bias_dual(M, W), L.dual_step)
        return
    for j in range(nb):                      # w_alpha = w - g = w + r
        W.sv[j] = beta[j] + W.r[j]
    R.dual = -0.5 * dot(W.sv, W.sv, nb) + comm_sum1(M.comm, model_dual_terms(M))
    R.dual = fmax(R.dual, L.dual_step)       # or a Newton step's dual point, if better
