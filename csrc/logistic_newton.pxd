# The truncated Newton driver of csrc/_logistic.pyx (lr and softmax): each step's CGLS, the
# line search along it, the stopping tests and the certificate, over the loss model of
# csrc/logistic_loss.pxd (whose block comment has the problems and each step's weighted
# least-squares problem).
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
from csr cimport rmatvec, dot
from cgls cimport Operator, CglsSettings, CglsWork, cgls_settings, cgls_solve
from interrupt cimport Stop, stop_poll, stop_keep
from comm cimport comm_sum, comm_sum1
from logistic_loss cimport (Model, BINARY, CONVERGED, MAX_ITER, NO_DESCENT, _sig_minus, _logloss,
                            model_eval, model_setup, model_slope0, model_trial, model_accept,
                            model_scores, model_loss_grad, model_dual_terms, model_operator)


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


ctypedef struct Work:
    # per weight (nbeta; h: nbeta + 3)
    double* beta_bar
    double* r
    double* p
    double* sv
    double* minv
    double* diag
    double* dsum
    double* h
    # per term (m k)
    double* q
    double* u
    double* ytry                   # scores saved before a step, to undo it
    Stop* stop
    double* trace                  # f after each Newton step (max_iter doubles)
    void* callback                 # callback(it, f, cg_it, step, ||g at the step's start||)
                                   # after each step, or NULL
    double g0sq                    # ||g(0)||^2 if known at entry (warm start), else -1
    double dual_step               # the best D of a Newton step's dual point (-inf: none yet)
    int dual_at_beta               # free bias: dual_step holds the balanced D of the final beta


ctypedef struct Result:
    int status                     # CONVERGED, MAX_ITER or NO_DESCENT
    int n_iter                     # Newton steps
    int64_t cg_iter                # CGLS iterations in all
    int64_t ls_trials              # line-search trials in all
    double f                       # f(beta)
    double gsq                     # ||g(beta)||^2
    double dual                    # D of the certificate
    int have_grad                  # W.r holds -g(beta)


ctypedef struct Drive:
    # the state of newton_core's iteration
    int it                         # Newton steps taken
    int cg_it                      # CGLS iterations of the last step
    int n_ls                       # line-search trials
    int refreshed                  # the scores were recomputed from beta after a failed step
    int stalled                    # no descent left: only the tests remain
    int certify                    # solve this Newton model's step again, to certify
    int by_step                    # the Newton step's dual point applies (binary, not split)
    double F                       # f(beta)
    double rr0                     # ||g(beta)||^2, the last CGLS's entry residual
    double stop_rr                 # the gradient test's threshold on ||g||^2 (-1: not known
                                   # before the first CGLS of a cold start; +inf: no test)
    double tau                     # the last step's length
    double ent                     # the entropy terms of the last step's dual point


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


cdef inline double step_dual(Model* M, const double* beta, Work* W, double F,
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


cdef inline double step_dual_exact(Model* M, Work* W, double ent) noexcept nogil:
    """D at the dual point held in W.u (alpha t) with entropy terms ent: one pass for
    w_alpha = sum_i alpha_i t_i x_i, one allreduce; ||.||^2 over the regularized weights."""
    rmatvec(M.X, M.rows, M.m, W.u, W.sv)
    comm_sum(M.comm, W.sv, M.nbeta)
    return -0.5 * dot(W.sv, W.sv, M.nreg) + ent


cdef inline double free_bias_dual(Model* M, Work* W) noexcept nogil:
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


cdef inline int newton_cgls(Model* M, Work* W, const Params* P, int max_iter, double stop_rr,
                            double grad_rr, double cert_rr, double* rr0,
                            int* optimal) noexcept nogil:
    """The Newton model at the current point (model_setup's weights and residual) solved by
    CGLS seeded at W.beta_bar = beta, over the regularized weights M.nreg: at most max_iter
    iterations; the gradient test ||g||^2 <= stop_rr at entry (0: none), where rr0 gets
    ||g||^2; grad_rr, cert_rr: the certifying step (cgls.pxd; 0: none).  W.dsum gets the
    step and M.xi its image; returns the iterations."""
    cdef Operator A = model_operator(M)
    # no eq. 13 (eps 0): the forcing term with the quadratic-model rule at cg_tol, adaptive
    # and stopping by itself (not a guard only); fused products, the true residual unchecked
    cdef CglsSettings S = cgls_settings(0.0, P.forcing, P.cg_tol, max_iter, W.stop, M.comm)
    cdef CglsWork G
    S.qadapt = 1
    S.qguard = 0
    S.fused_cg = 1
    S.jacobi = P.precondition
    S.jacobi_weight = P.jacobi_weight
    S.verify = 0
    S.stop_rr = stop_rr
    S.grad_rr = grad_rr
    S.cert_rr = cert_rr
    S.nreg = M.nreg
    S.split = M.split
    G.z = M.z
    G.q = W.q
    G.u = W.u
    G.r = W.r
    G.p = W.p
    G.s = W.sv
    G.minv = W.minv if P.precondition else NULL
    G.h = W.h
    G.dsum = W.dsum
    G.xd = M.xi
    G.diag = W.diag
    return cgls_solve(&A, M.cc, 1.0, W.beta_bar, &S, &G, optimal, rr0)


cdef inline int newton_step(Model* M, double* beta, Work* W, const Params* P, Drive* S,
                            double dest) noexcept nogil:
    """The line search along the step d = W.dsum, whose image CGLS accumulated in M.xi, and
    the move to beta + tau d if f decreased: returns 1.  Else the step is undone, the scores
    recomputed from beta (a second time in a row: the solve has stalled) and S.it taken back:
    returns 0.  dest: the estimate of D at the step's dual point (-inf: none); when it
    certifies at the new point, D is summed exactly there."""
    cdef int64_t j, nb = M.nbeta, nr = M.nreg
    cdef double wd, dd, phi0, Fnew, F = S.F
    wd = dot(beta, W.dsum, nr)
    dd = dot(W.dsum, W.dsum, nr)
    phi0 = wd + comm_sum1(M.comm, model_slope0(M))
    Fnew = F
    S.tau = 0.0
    if phi0 < 0.0:
        memcpy(W.ytry, M.o, M.m * M.k * sizeof(double))
        S.tau = line_search(M, wd, dd, phi0, P.ls_tol, P.ls_max, &S.n_ls)
        Fnew = comm_sum1(M.comm, model_accept(M, S.tau))
        for j in range(nb):
            W.beta_bar[j] = beta[j] + S.tau * W.dsum[j]
        Fnew += 0.5 * dot(W.beta_bar, W.beta_bar, nr)
    if not (phi0 < 0.0 and Fnew <= F):
        if phi0 < 0.0:                      # undo the step
            memcpy(M.o, W.ytry, M.m * M.k * sizeof(double))
        # the scores drift from X beta as steps add up; recompute them once and retry,
        # else only the tests are left
        model_scores(M, beta)
        S.F = 0.5 * dot(beta, beta, nr) + comm_sum1(M.comm, model_eval(M))
        W.trace[S.it - 1] = S.F
        if S.refreshed:
            S.stalled = 1
        S.refreshed = 1
        S.it -= 1
        return 0
    S.refreshed = 0
    memcpy(beta, W.beta_bar, nb * sizeof(double))
    if F - Fnew <= 1e-14 * fabs(Fnew):      # no progress left at machine precision
        S.stalled = 1
    S.F = Fnew
    if Fnew - dest <= P.gap_stop * Fnew:    # the estimate certifies: D exactly, one pass
        W.dual_step = fmax(W.dual_step, step_dual_exact(M, W, S.ent))
    W.trace[S.it - 1] = S.F
    return 1


cdef inline void _report(Work* W, const Drive* S) noexcept nogil:
    """W.callback after a Newton step; an exception it raises stops the solve."""
    if W.callback == NULL:
        return
    with gil:
        try:
            (<object>W.callback)(S.it, S.F, S.cg_it, S.tau, sqrt(S.rr0))
        except BaseException as e:
            stop_keep(W.stop, e)


cdef inline int newton_core(Model* M, double* beta, Work* W, const Params* P,
                            Result* R) noexcept nogil:
    """Truncated Newton from beta (in/out) with M.o = its scores; returns R.status.  On exit
    R.f = f(beta), and with R.have_grad set, W.r = -g(beta) (the last CGLS's entry residual)
    and R.gsq = ||g(beta)||^2.  W.trace[it] = f after iteration it.  Once W.stop is stopped
    it returns at once (beta meaningless; the caller raises)."""
    cdef int64_t nb = M.nbeta, nr = M.nreg
    cdef int optimal
    cdef double thr, cert_rr, dest
    cdef Drive S
    S.it = 0
    S.cg_it = 0
    S.n_ls = 0
    S.refreshed = 0
    S.stalled = 0
    S.certify = 0
    S.rr0 = 0.0
    S.tau = 0.0
    S.ent = 0.0
    # the Newton step's dual point (block comment): binary, not split
    S.by_step = M.kind == BINARY and M.split == NULL and P.gap_stop > 0.0
    W.dual_step = -INFINITY
    W.dual_at_beta = 0
    S.F = 0.5 * dot(beta, beta, nr) + comm_sum1(M.comm, model_eval(M))
    if P.gstop <= 0.0:
        S.stop_rr = INFINITY
    else:
        S.stop_rr = P.gstop * P.gstop * W.g0sq if W.g0sq >= 0.0 else -1.0
    R.status = MAX_ITER
    R.have_grad = 0
    R.cg_iter = 0
    while True:
        if stop_poll(W.stop, M.m * M.k * W.stop.per_row):
            break
        # the Newton model at beta, solved by CGLS seeded at beta; its entry residual is -g
        # and the tests are taken on it before any iteration (at the cap, or once f stalled:
        # only the tests)
        model_setup(M)
        memcpy(W.beta_bar, beta, nb * sizeof(double))
        # (1/2 ||g||^2 = P - D holds without a free bias only; with one the balanced dual
        # point is checked once the gradient test holds; a Newton step's dual point that
        # certifies leaves the gradient test alone)
        if S.stop_rr < 0.0:
            thr = 0.0
        elif nr < nb or S.F - W.dual_step <= P.gap_stop * S.F:
            thr = S.stop_rr
        else:
            thr = fmin(S.stop_rr, 2.0 * P.gap_stop * S.F)
        # where the gradient test holds but the gap does not, CGLS solves the step to the
        # residual at which its dual point certifies (with room for the second-order terms)
        cert_rr = (P.gap_stop * S.F if S.by_step and (thr < S.stop_rr < INFINITY or S.certify)
                   else 0.0)
        S.cg_it = newton_cgls(M, W, P, P.cg_max_iter if S.it < P.max_iter and not S.stalled
                              else 0, 0.0 if S.certify else thr,
                              (INFINITY if S.certify else S.stop_rr) if cert_rr > 0.0 else 0.0,
                              cert_rr, &S.rr0, &optimal)
        S.certify = 0
        if W.stop.stopped:
            break
        R.gsq = S.rr0
        if (optimal == 2 and S.by_step and nr < nb and S.F - W.dual_step > P.gap_stop * S.F
                and S.it < P.max_iter and not S.stalled):
            # a free bias: the gradient test holds; the balanced dual point of beta, else
            # this Newton model again, its step solved to certify
            W.dual_step = fmax(W.dual_step, free_bias_dual(M, W))
            if S.F - W.dual_step > P.gap_stop * S.F:
                S.certify = 1
                continue
            W.dual_at_beta = 1
        if optimal == 2 or S.rr0 == 0.0:    # the gradient and gap tests hold at beta
            R.have_grad = 1
            R.status = CONVERGED
            break
        if S.stop_rr < 0.0:                 # a cold start: this residual was -g(0)
            S.stop_rr = P.gstop * P.gstop * S.rr0
        if S.it >= P.max_iter or S.stalled:   # W.r = -g(beta): CGLS ran no iteration
            R.have_grad = 1
            R.status = MAX_ITER if not S.stalled else NO_DESCENT
            break
        S.it += 1
        R.cg_iter += S.cg_it
        dest = -INFINITY                    # this step's dual point, until one certifies
        if S.by_step and S.F - W.dual_step > P.gap_stop * S.F:
            # (a certifying step: whatever the gradient test, its point is the one wanted)
            dest = step_dual(M, beta, W, S.F, P.gap_stop,
                             INFINITY if cert_rr > 0.0 or S.stop_rr < 0.0 else S.stop_rr, &S.ent)
        if newton_step(M, beta, W, P, &S, dest):
            _report(W, &S)
    R.n_iter = S.it
    R.ls_trials = S.n_ls
    R.f = S.F
    return R.status


cdef inline void certificate(Model* M, const double* beta, Work* W, Result* R) noexcept nogil:
    """R.dual = D at the dual point built from beta, or at the best Newton step's (block
    comment), and R.gsq = ||g(beta)||^2; W.r holds -g(beta) when R.have_grad, else g is summed
    here (one pass, one allreduce).  With a free bias (M.nreg < M.nbeta) the dual point is
    balanced first (free_bias_dual)."""
    cdef int64_t j, nb = M.nbeta, nr = M.nreg
    if not R.have_grad:
        model_loss_grad(M, W.u, W.r)         # the loss part of g ...
        for j in range(nb):
            W.r[j] = -((beta[j] if j < nr else 0.0) + W.r[j])      # ... and r = -g
    R.gsq = dot(W.r, W.r, nb)
    if nr < nb:                              # multinomial: the caller's (NaN here)
        if M.kind != BINARY:
            R.dual = NAN
        elif W.dual_at_beta:                 # the driver's check at beta has it already
            R.dual = W.dual_step
        else:
            R.dual = fmax(free_bias_dual(M, W), W.dual_step)
        return
    for j in range(nb):                      # w_alpha = w - g = w + r
        W.sv[j] = beta[j] + W.r[j]
    R.dual = -0.5 * dot(W.sv, W.sv, nb) + comm_sum1(M.comm, model_dual_terms(M))
    R.dual = fmax(R.dual, W.dual_step)       # or a Newton step's dual point, if better
