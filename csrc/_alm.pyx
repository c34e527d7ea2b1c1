# SVM-ALM: the augmented-Lagrangian primal solver of Nie, Huang, Wang & Huang,
# "New Primal SVM Solver with Linear Computational Cost for Big Data
# Classifications", ICML 2014 (Algorithm 1, exact; Algorithm 2, inexact).
#
# Problem (the paper's eq. 4, in linsvm's scaling, which is the paper's: same C)
#
#     min_beta  P(beta) = 1/2 sum_{j < nreg} beta_j^2 + C sum_k c_k (1 - y_k x_k.beta)_+^p
#
# over the examples k of the row list `rows` (labels y_k = +-1, cost factors
# c_k >= 0, p >= 1 real).  x_k includes the bias column (value X.bias) when
# X.bias > 0.  nreg = n_weights: the bias weight is regularized (linsvm's -B,
# LIBLINEAR's); nreg = n_weights - 1 (free_intercept): the last weight is the paper's
# unregularized intercept b (the caller builds X with bias value 1 for it).
# Below "X beta" is the vector of margins m_k = x_k.beta (the paper's X^T w + 1b,
# its X being d x n with examples as columns) and "X^T u" is sum_k u_k x_k.
#
# The symbols lost in the text extraction, as read here (rho_j = 1 for j < nreg,
# 0 for the free intercept, so "w" and "b" are both inside beta):
#
#   eq. 5  e_k = y_k - x_k.beta, since 1 - y_k m_k = y_k (y_k - m_k) for y_k = +-1:
#          min_{beta, e} 1/2 ||beta||_rho^2 + C sum_k c_k (y_k e_k)_+^p
#          subject to X beta + e - y = 0.
#   eq. 6  L = 1/2||beta||_rho^2 + C sum c_k (y_k e_k)_+^p + lam.(X beta + e - y).
#   eq. 7  AL = L + mu/2 ||X beta + e - y||^2.
#   eq. 8  AL = 1/2||beta||_rho^2 + C sum c_k (y_k e_k)_+^p + mu/2 ||X beta + e - y + lam/mu||^2
#          (minus the constant ||lam||^2 / 2mu).
#   eq. 9  lam <- lam + mu (X beta + e - y).
#   eq. 10 e_k = argmin F_k(e) = gamma_k (y_k e)_+^p + 1/2 (e - t_k)^2,
#          gamma_k = C c_k / mu,  t_k = y_k - m_k - lam_k / mu.
#   eq. 11 for y_k e > 0:  dF/de = p gamma y_k (y_k e)^(p-1) + e - t_k = 0; with
#          u = y_k e, s = y_k t_k:  h(u) = u + p gamma u^(p-1) - s = 0, h increasing
#          (p >= 1), root in (0, min(s, (s / (p gamma))^(1/(p-1)))) when s > 0;
#          for s <= 0 the minimizer is e = t_k (no loss).  Solved here by a
#          bracketed Newton iteration with bisection fallback (rtsafe).
#   eq. 12 p = 1:  e = t - y gamma if y t > gamma;  0 if 0 <= y t <= gamma;  t if y t < 0.
#   eq. 13 p = 2:  e = t / (1 + 2 gamma) if y t > 0;  t otherwise.
#   eq. 14 with e fixed, minimize (times 2/mu)
#          G(beta) = 1/mu ||beta||_rho^2 + ||X beta - z||^2,  z = y - e - lam/mu.
#   eq. 15 G as one least-squares problem ||A beta - d||^2, A = [X; mu^-1/2 I_rho],
#          d = [z; 0]: solved by CGLS (csrc/cgls.pxd) for Algorithm 1.
#   eq. 16 gradient (halved): g = X^T (X beta - z) + 1/mu rho*beta (the b row has
#          no 1/mu term: g_b = sum_k (m_k - z_k), the paper's n b + 1^T(X^T w - z)).
#   eq. 17 s = argmin_s G(beta - s g), a quadratic in s.
#   eq. 18 s = ((X g).(X beta - z) + 1/mu g.rho*beta) / (||X g||^2 + 1/mu ||g||_rho^2)
#            =  g.g / (||X g||^2 + 1/mu ||g||_rho^2)
#          (the numerator is g.g by eq. 16).  With a diagonal preconditioner D
#          (`precondition`, a departure) the direction is d = D^-1 g and the same
#          exact minimization gives s = d.g / (||X d||^2 + 1/mu ||d||_rho^2).
#   eq. 27 AL(k) <= AL(k-1) + (mu_(k-1) + mu_k) / (2 mu_(k-1)^2) ||lam_(k-1) - lam_(k-2)||^2,
#          where AL(k) = AL(beta_k, e_k, lam_(k-1), mu_k): each iteration's e-step and
#          w-step do not increase AL at fixed (lam, mu) (the chain after eq. 29), and
#          the multiplier update adds exactly the last term.  Lemma 3's requirement.
#   eq. 29 an upper limit on mu_(k+1) that keeps Phi_k = 1/2||beta_k||^2 +
#          C sum (y e_k)_+^p + mu_k/2 ||r_k||^2 non-increasing:
#          mu_(k+1) <= (Phi_k - f(beta_(k+1), e_(k+1))) / (1/2 ||r_(k+1)||^2).
#          It needs the iterate that mu_(k+1) produces; here it is applied one
#          step late (the bound from the last two iterates limits the next mu).
#
# Algorithm 2 (inexact), iteration k at penalty mu = mu_k, margins m = X beta kept:
#   1. e-step (eq. 10-13) and r = X beta - z = m - y + e + lam/mu.   [O(n)]
#   2. g = X^T r + 1/mu rho*beta (eq. 16); d = g or D^-1 g;
#      q = X d; s by eq. 18; beta -= s d; m -= s q.                   [2 mat-vecs]
#   3. lam += mu (m + e - y) (eq. 9); P(beta) from m; stopping test; next mu.
# The paper counts three mat-vecs (X beta, X^T(.), X g); X beta is updated from
# q = X d here, and recomputed every `refresh` iterations against drift.
#
# Algorithm 1 (exact): step 2 is CGLS on eq. 15, lam_cg = 1/mu, targets z, seeded
# at beta (Jacobi-preconditioned with `precondition`, stopping at the relative
# residual cg_tol); its final residual gives m without another mat-vec.  The
# gradient g of step 2 is still formed (one mat-vec) for the certificate and the
# dual residual.  cgls.pxd
# regularizes every coordinate, so with a free intercept the step solves
# eq. 14 plus a proximal term 1/(2mu) (b - b_prev)^2 (targets shifted by b_prev);
# its fixed points are those of eq. 14.
#
# A certificate comes free: lamhat = mu r (step 1) is the multiplier for which
# e is exactly optimal (-lamhat_k in C c_k d/de (y_k e_k)_+^p), so
# alpha_k = -y_k lamhat_k = C c_k p (y_k e_k)_+^(p-1) is dual feasible and
#     D(alpha) = sum alpha_k - sum C c_k l*(alpha_k / (C c_k)) - 1/2 ||X^T(alpha y)||^2,
#     l*(v) = (p-1)(v/p)^(p/(p-1)) (p > 1), 0 on [0, 1] (p = 1),
# is a lower bound on min P, with X^T(alpha y) = -X^T lamhat = rho*beta - mu g.
# Any t alpha (t >= 0, t alpha <= C c for p = 1) is dual feasible too, and the
# best t has a closed form for p = 1, 2 (bisection else): the multipliers carry
# the right pattern before the right scale, so this tightens the bound early.
# The best bound seen is kept.  With a free intercept the dual also needs
# sum alpha_k y_k = 0 (= -mu g_b): alpha is then rescaled on the heavier class and
# X^T(alpha y) recomputed (one mat-vec, only when the gap is needed).
#
# Stopping rules (stop): "objective", the paper's Section 4 rule, |P_k - P_(k-1)| <=
# tol |P_k|, guarded (a departure): it also needs P - D <= guard |P| (the Python layer
# passes min(1%, 100 tol)), because alone it can stop far from the optimum on unscaled
# data (docs/solvers.md); "gradient", the rule of Algorithms 1-2, ||grad P|| <= tol
# max(min(n+, n-), 1)/n ||grad P(0)|| (LIBLINEAR's form; p > 1; one more mat-vec per
# iteration); "gap", the duality gap, P - D <= tol |P|.  Always: the iteration cap.
#
# mu schedule (mu_rule), always non-decreasing and capped at mu_max:
# "geometric", mu <- mu_growth mu (the paper's experiments);  "eq29", eq. 29 (above),
# at most geometric;  "balance", residual balancing (a departure): mu <- mu_growth mu
# when the relative primal residual ||X beta + e - y|| / max(||X beta||, ||e||, ||y||)
# exceeds the relative dual residual mu ||g|| / max(||rho beta||, ||X^T lamhat||).


from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libc.math cimport fabs, sqrt, fmax, INFINITY
import numpy as np
from csr cimport CSR, entry_threads, dot
from csr_passes cimport matvec, rmatvec, col_sq_sums
from linsvm._data cimport DataView
from cgls cimport Operator, CglsSettings, CglsWork, csr_operator, cgls_settings, cgls_solve
from alm_steps cimport loss_kind
from alm_state cimport (Examples, Settings, Work, Iterate, Result, CONVERGED, MAX_ITER,
                        HANDED_OVER, STOP_OBJECTIVE, STOP_GRADIENT)
from alm_certificate cimport nrm, primal, aug_lagrangian, scaled_dual, dual_value, primal_gradient
from alm_iteration cimport e_step, dist_grad, multipliers, measure, next_mu
from comm cimport Comm, comm_from, comm_active, comm_sum, comm_sum1
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise
from clock cimport monotonic_seconds

# mu0 <= 0 asks for MU0_SCALE / sum_k ||x_k||^2 (see linsvm/solvers/alm.py)
cdef double _MU0_SCALE = 10.0
MU0_SCALE = _MU0_SCALE


# ---------------------------------------------------------------- the w-step

cdef void grad_G(const CSR* X, const int64_t* rows, int64_t n, const double* beta,
                        int64_t nreg, const double* r, double inv_mu, double* g) noexcept nogil:
    """g = X^T r + 1/mu rho*beta (eq. 16, halved), r = X beta - z."""
    cdef int64_t j
    rmatvec(X, rows, n, r, g)
    for j in range(nreg):
        g[j] += inv_mu * beta[j]


cdef double step_along(const CSR* X, const int64_t* rows, int64_t n, double* beta,
                              int64_t nreg, double* m, const double* g, double inv_mu,
                              const double* dinv, double* d, double* q,
                              const Comm* cm=NULL) noexcept nogil:
    """The optimal step of eq. 17-18 along d = -dinv*g (d = -g if dinv is NULL):
    s = d.g / (||X d||^2 + 1/mu ||d||_rho^2), beta -= s d, m -= s X d.  Returns
    s (0, and nothing moves, when d.g <= 0, i.e. g = 0).  Over row blocks (cm a
    distributed Comm) ||X d||^2 is summed over the ranks (one allreduce of one
    double); g, beta and d are replicated, m and q this rank's rows."""
    cdef int64_t j, nw = X.n_weights
    cdef double num, den, s
    if dinv != NULL:
        for j in range(nw):
            d[j] = dinv[j] * g[j]
    else:
        memcpy(d, g, nw * sizeof(double))
    num = dot(d, g, nw)
    if not (num > 0.0):
        return 0.0
    matvec(X, rows, n, d, q)
    den = comm_sum1(cm, dot(q, q, n)) + inv_mu * dot(d, d, nreg)
    if not (den > 0.0):
        return 0.0
    s = num / den
    for j in range(nw):
        beta[j] -= s * d[j]
    for j in range(n):
        m[j] -= s * q[j]
    return s


cdef void set_precond(const double* colsq, int64_t nw, int64_t nreg, double inv_mu,
                             double* dinv) noexcept nogil:
    """dinv_j = 1 / diag(X^T X + 1/mu rho)_j (Jacobi); 1 where that is 0."""
    cdef int64_t j
    cdef double v
    for j in range(nw):
        v = colsq[j] + (inv_mu if j < nreg else 0.0)
        dinv[j] = 1.0 / v if v > 0.0 else 1.0


# ---------------------------------------------------------------- one iteration, step by step
#
# Steps 2a, 2b and 4 of the block comment; steps 1, 3 and 5 are csrc/alm_iteration.pxd's,
# the e-step's closed forms and root (eq. 10-13) csrc/alm_steps.pxd's, the objective and
# the certificate csrc/alm_certificate.pxd's, the records csrc/alm_state.pxd's.

cdef int gradient_step_2a(const Examples* E, const Operator* A, const Settings* S, Work* W,
                          Result* R, const double* beta, int64_t nreg,
                          Iterate* I) noexcept nogil:
    """Step 2a: the gradient g of G at the old beta (eq. 16), and from it the dual
    residual and (serial) the certificate D(alpha).  Returns 1 when a distributed solve
    was stopped on some rank (every rank leaves)."""
    cdef int64_t j, nw = E.X.n_weights
    cdef double a, sumsq, Dk, mu = I.mu
    if comm_active(E.cm):                       # X^T r, asum, qsum, stop: one allreduce
        if dist_grad(A, beta, nreg, I.inv_mu, W, I.asum, I.qsum, E.cm):
            return 1
        I.asum = W.pk[nw]
        I.qsum = W.pk[nw + 1]
    else:
        grad_G(E.X, E.rows, E.n, beta, nreg, W.r, I.inv_mu, W.g)
    R.n_matvec += 1
    sumsq = 0.0
    for j in range(nreg):                       # X^T(alpha y) = rho*beta - mu g
        a = beta[j] - mu * W.g[j]
        sumsq += a * a
    I.sumsq = sumsq
    I.dres = mu * nrm(W.g, nw) / fmax(fmax(nrm(beta, nreg), sqrt(sumsq)), 1e-300)
    if not comm_active(E.cm):                   # distributed: after step 3 (tmax reduced)
        Dk = scaled_dual(I.asum, I.qsum, sumsq, I.tmax, S.p, S.kind)
        if S.free_intercept:
            I.gb = Dk    # not a bound (sum alpha y = -mu g_b need not vanish): see step 4
        elif Dk > R.dual:
            R.dual = Dk
    return 0


cdef int w_step(const Examples* E, const Operator* A, const Settings* S, Work* W, Result* R,
                double* beta, int64_t nreg, Iterate* I) noexcept nogil:
    """Step 2b: the optimal gradient step of eq. 16-18 (Algorithm 2), or CGLS on eq. 15
    from beta (Algorithm 1, S.exact), moving beta and W.m = X beta.  Returns 1 when a
    serial CGLS was stopped."""
    cdef int64_t k, nw = E.X.n_weights, n = E.n
    cdef const double* y = E.y
    cdef int dist = comm_active(E.cm), cg_it, optimal
    cdef double inv_mu = I.inv_mu, b_prev = 0.0
    if S.precondition:
        if S.exact:                             # cgls: minv = 1 / diag(1/mu I + X^T X)
            set_precond(W.colsq, nw, nw, inv_mu, W.dinv)
        else:
            set_precond(W.colsq, nw, nreg, inv_mu, W.dinv)
    if not S.exact:
        step_along(E.X, E.rows, n, beta, nreg, W.m, W.g, inv_mu,
                   W.dinv if S.precondition else NULL, W.d, W.q, E.cm)
        R.n_matvec += 1
        return 0
    # CGLS on eq. 15 from beta; targets z = y - e - lam/mu (minus b_prev with a free
    # intercept: the proximal form, see the block comment)
    if S.free_intercept:
        b_prev = beta[nw - 1]
        beta[nw - 1] = 0.0
    for k in range(n):
        W.v[k] = y[k] - W.e[k] - W.lam[k] * inv_mu - b_prev
        W.r[k] = -W.r[k]                        # cgls residual targets - X beta = z - m
    # distributed: cgls over the row blocks (csrc/cgls.pxd: one allreduce of nw + 3
    # doubles per CGLS iteration, in W.pk); it polls no stop record there (a rank must
    # not leave alone): the stop flag travels with step 2a's allreduce
    # eq. 13 at cg_tol alone (no forcing term), not fused, no Jacobi fill: CS's defaults
    cdef CglsSettings CS = cgls_settings(S.cg_tol, 0.0, 0.0, S.cg_max_iter,
                                         NULL if dist else W.stop, E.cm)
    cdef CglsWork CW
    CW.z = W.r
    CW.q = W.q
    CW.u = W.u
    CW.r = W.wa
    CW.p = W.grad
    CW.s = W.cgs
    CW.minv = W.dinv if S.precondition else NULL
    CW.h = W.pk if dist else NULL
    CW.dsum = NULL
    CW.xd = NULL
    CW.diag = NULL
    cg_it = cgls_solve(A, W.ones, inv_mu, beta, &CS, &CW, &optimal, NULL)
    if W.stop.stopped and not dist:
        return 1
    R.cg_iter += cg_it
    R.n_matvec += 2 * cg_it + 1
    for k in range(n):
        W.m[k] = W.v[k] - W.r[k] + b_prev
    if S.free_intercept:
        beta[nw - 1] += b_prev
    return 0


cdef int stop_rules(const Examples* E, const Settings* S, Work* W, Result* R,
                    const double* beta, int64_t nreg, Iterate* I, void* callback) noexcept nogil:
    """Step 4: the stopping rule, then the callback (iterations 1, 10, 20, ... and at
    convergence), which may hand the solve over.  Returns 1 when the solve ends."""
    cdef double f = I.f
    cdef int it = I.it
    if S.stop == STOP_OBJECTIVE:
        if fabs(f - I.f_prev) <= S.tol * fabs(f) and f - R.dual <= S.guard * fabs(f):
            I.status = CONVERGED
    elif S.stop == STOP_GRADIENT:
        primal_gradient(E, S, beta, nreg, W.m, W.u, W.grad)
        R.n_matvec += 1
        R.grad_norm = nrm(W.grad, E.X.n_weights)
        if R.grad_norm <= S.grad_stop:
            I.status = CONVERGED
    elif f - R.dual <= S.tol * fabs(f):
        I.status = CONVERGED
    if callback != NULL and (it == 1 or it % 10 == 0 or I.status == CONVERGED):
        with gil:                               # every 10th iteration: the GIL seldom
            try:
                if (<object>callback)(it, f, I.mu, I.pres, I.dres, f - R.dual) \
                        and I.status != CONVERGED:
                    I.status = HANDED_OVER      # the same answer on every rank
            except BaseException as e:
                stop_keep(W.stop, e)
    return I.status == CONVERGED or I.status == HANDED_OVER


# ---------------------------------------------------------------- the solver

cdef int alm_core(const Examples* E, double* beta, const Settings* S, Work* W, Result* R,
                  void* callback) noexcept nogil:
    """Algorithm 2 (or 1 if S.exact) from beta (in/out) with W.m = X beta, W.lam
    and W.e given.  Distributed (E.cm active): the rows are this
    rank's block and every sum over rows is reduced over the ranks -- per iteration
    one allreduce of X^T r with the e-step's dual sums and the stop flag (n_weights
    + 3 doubles), one of ||X d||^2 (the step length, 1 double) and one allgather of
    the residual norms, the loss, and the certificate's tmax (7 doubles per rank);
    the al_trace diagnostics stay local.  Algorithm 1 (S.exact) replaces the step
    length's allreduce by cgls's (csrc/cgls.pxd, distributed there: one allreduce of
    n_weights + 3 doubles per CGLS iteration, one for the start residual and one
    for each true-residual check).  Per iteration k: R.f_trace = P(beta_k),
    R.mu_trace = mu_k, R.gap_trace = P(beta_k) - (best D so far) and, if R.al_trace is
    not NULL, four numbers: AL before the e-step, after it, after the w-step (all at
    lam_(k-1), mu_k) and ||lam_k - lam_(k-1)||^2 (eq. 27).  Returns a status.  Once
    W.stop is stopped (Ctrl-C, an exception in the callback, a stop request) it
    returns at once; the caller raises."""
    cdef int64_t nw = E.X.n_weights
    cdef int64_t nreg = nw - 1 if S.free_intercept else nw
    cdef int it, dist = comm_active(E.cm)
    cdef double* al = R.al_trace
    cdef Operator A = csr_operator(E.X, E.rows, E.n)  # the w-step's CGLS operator (exact;
                                                      # and the distributed products)
    cdef Iterate I
    R.n_matvec = 0
    R.cg_iter = 0
    R.dual = -INFINITY
    R.grad_norm = INFINITY
    R.primal_res = INFINITY
    R.dual_res = INFINITY
    I.it = 0
    I.status = MAX_ITER
    I.mu = S.mu0
    I.f_prev = INFINITY
    I.phi_prev = INFINITY
    I.gb = 0.0
    I.f = primal(E, S, beta, nreg, W.m)
    while I.it < S.max_iter:
        if stop_poll(W.stop, E.n * W.stop.per_row) and not dist:
            break                               # distributed: at the allreduce of step 2a
        it = I.it
        I.inv_mu = 1.0 / I.mu
        if al != NULL:
            al[4 * it] = aug_lagrangian(E, S, W, beta, nreg, I.mu)
        e_step(E, S, W, &I)
        if al != NULL:
            al[4 * it + 1] = aug_lagrangian(E, S, W, beta, nreg, I.mu)
        if gradient_step_2a(E, &A, S, W, R, beta, nreg, &I):
            break                               # some rank was stopped: all leave
        if w_step(E, &A, S, W, R, beta, nreg, &I):
            break
        if al != NULL:
            al[4 * it + 2] = aug_lagrangian(E, S, W, beta, nreg, I.mu)
        multipliers(E, W, &I)
        if al != NULL:
            al[4 * it + 3] = I.mu * I.mu * I.rr
        I.it += 1
        if S.refresh > 0 and I.it % S.refresh == 0:
            matvec(E.X, E.rows, E.n, beta, W.m)
            R.n_matvec += 1
        if measure(E, S, W, R, beta, nreg, &I) or stop_rules(E, S, W, R, beta, nreg, &I,
                                                             callback):
            break
        I.f_prev = I.f
        next_mu(E, S, W, beta, nreg, &I)
    R.n_iter = I.it
    R.mu = I.mu
    R.f = I.f
    return I.status


cdef void alm_start(const Examples* E, Settings* S, Work* W, const double* beta,
                    int64_t* counts) noexcept nogil:
    """Before the iterations: diag(X^T X) (W.colsq), the class counts (counts[0:2]),
    the automatic mu0 when S.mu0 <= 0 (MU0_SCALE / sum_k ||x_k||^2), the gradient
    rule's threshold, and the margins W.m = X beta with the feasible start e = y - m."""
    cdef int64_t k, j, nw = E.X.n_weights, npos = 0, nneg = 0
    cdef double tr = 0.0
    for k in range(E.n):
        W.ones[k] = 1.0
        if E.y[k] > 0.0:
            npos += 1
        else:
            nneg += 1
    col_sq_sums(E.X, E.rows, E.n, W.ones, W.colsq)
    if comm_active(E.cm):                       # diag(X^T X) and the counts: one allreduce
        memcpy(W.pk, W.colsq, nw * sizeof(double))
        W.pk[nw] = npos
        W.pk[nw + 1] = nneg
        comm_sum(E.cm, W.pk, nw + 2)
        memcpy(W.colsq, W.pk, nw * sizeof(double))
        npos = <int64_t>W.pk[nw]
        nneg = <int64_t>W.pk[nw + 1]
    for j in range(nw):
        tr += W.colsq[j]
    if not S.mu0 > 0.0:
        S.mu0 = _MU0_SCALE / tr if tr > 0.0 else 1.0
    if S.mu0 > S.mu_max:
        S.mu0 = S.mu_max
    if S.stop == STOP_GRADIENT:                 # ||grad P(0)||, LIBLINEAR's relative form
        primal_gradient(E, S, W.grad, 0, W.m, W.u, W.wa)
        S.grad_stop = S.tol * (<double>max(min(npos, nneg), 1)) / (npos + nneg) * nrm(W.wa, nw)
    matvec(E.X, E.rows, E.n, beta, W.m)
    for k in range(E.n):
        W.e[k] = E.y[k] - W.m[k]                # feasible start for e (used by the AL trace)
    counts[0] = npos
    counts[1] = nneg


cdef void alm_finish(const Examples* E, const Settings* S, Work* W, Result* R,
                     const double* beta) noexcept nogil:
    """After the iterations: the margins afresh, P exactly, and the certificate of the
    last alpha."""
    cdef double Dfin
    matvec(E.X, E.rows, E.n, beta, W.m)
    R.f = primal(E, S, beta, E.X.n_weights - 1 if S.free_intercept else E.X.n_weights, W.m)
    R.n_matvec += 2
    if R.n_iter > 0:
        Dfin = dual_value(E, S, W.alpha, W.ay, W.wa, W.pk)
        if Dfin > R.dual:
            R.dual = Dfin


# ---------------------------------------------------------------- Python entries

# the settings of alm_solve: the solver catalog's option names (linsvm/problem/catalog.py)
# and those the Python layer adds (C, tol, exact, refresh, guard); the catalog's values
STOP_RULES = ("objective", "gradient", "gap")       # stop, in the order of STOP_*
MU_RULES = ("geometric", "eq29", "balance")         # mu_rule, in the order of MU_*
SETTINGS = frozenset(("C", "tol", "p", "exact", "free_intercept", "precondition", "mu0",
                      "mu_max", "mu_rule", "mu_growth", "stop", "max_iter", "cg_tol",
                      "cg_max_iter", "refresh", "guard", "n_threads"))



cdef int fill_settings(Settings* S, dict settings) except -1:
    """S from alm_solve's keywords (every name of SETTINGS; cg_tol and cg_max_iter only
    with exact), checked."""
    cdef bint exact = settings.get("exact", False)
    missing = SETTINGS - set(settings) - (frozenset() if exact else {"cg_tol", "cg_max_iter"})
    if missing or not set(settings) <= SETTINGS:
        raise TypeError(f"alm_solve: settings missing {sorted(missing)}, unknown "
                        f"{sorted(set(settings) - SETTINGS)}")
    if settings["stop"] not in STOP_RULES or settings["mu_rule"] not in MU_RULES:
        raise ValueError(f"stop must be one of {STOP_RULES}, mu_rule one of {MU_RULES}")
    S.C = settings["C"]
    S.tol = settings["tol"]
    S.p = settings["p"]
    S.kind = loss_kind(S.p)
    S.exact = exact
    S.free_intercept = settings["free_intercept"]
    S.precondition = settings["precondition"]
    S.mu0 = 0.0 if settings["mu0"] is None else settings["mu0"]
    S.mu_max = settings["mu_max"]
    S.mu_rule = MU_RULES.index(settings["mu_rule"])
    S.mu_growth = settings["mu_growth"]
    S.stop = STOP_RULES.index(settings["stop"])
    S.max_iter = settings["max_iter"]
    S.cg_tol = settings.get("cg_tol", 0.0)
    S.cg_max_iter = settings.get("cg_max_iter", 0)
    S.refresh = settings["refresh"]
    S.guard = settings["guard"]
    S.grad_stop = 0.0
    if not (S.p >= 1.0 and S.C > 0.0 and S.mu_growth >= 1.0 and S.max_iter >= 0
            and S.tol >= 0.0):
        raise ValueError("invalid settings")
    if S.stop == STOP_GRADIENT and S.kind == 1:
        raise ValueError("the gradient stopping rule needs p > 1")
    return 0


def alm_solve(DataView data, const double[::1] y, const double[::1] c, double[::1] beta,
              double[::1] lam, *, object callback=None, object comm=None, bint record_al=False,
              **settings):
    """Run SVM-ALM (Algorithm 2, or 1 with exact=True) over the rows of `data` from beta
    and lam, both updated in place.

    y = +-1 and c >= 0 finite per position of the view, len(y) == len(c) == len(lam) ==
    data.n >= 1, len(beta) == data.n_weights, data.bias > 0 if free_intercept (the
    intercept is then the bias column's weight, and the caller builds the view with
    bias 1).  settings: the keywords of SETTINGS -- the catalog's options p,
    free_intercept, precondition, mu0 (None or <= 0: automatic), mu_max, mu_rule
    ("geometric", "eq29", "balance"), mu_growth >= 1, stop ("objective", "gradient"
    (p > 1), "gap"), max_iter, n_threads (0: all), cg_tol and cg_max_iter (with exact);
    and C > 0, tol >= 0, exact, refresh (X beta recomputed every this many iterations)
    and guard (the objective rule's bound on the certified gap).

    callback(it, f, mu, primal res, dual res, f - dual) is called at iterations 1, 10,
    20, ... (and at convergence); a true value returned stops the solve with status 3
    (the caller hands the problem to another solver).

    Returns a dict: status (0 converged, 1 iteration cap, 2 breakdown, 3 handed over), n_iter,
    n_matvec, cg_iter, f = P(beta), dual (a lower bound on min P; -inf if none),
    gap = f - dual, mu0, mu (final), primal_res, dual_res, grad_norm, alpha (the
    dual point of the last iteration), traces f_trace, mu_trace, gap_trace and,
    with record_al, al_trace (n_iter x 4; see alm_core); seconds (of the solve).

    comm: None (serial) or a linsvm.runtime.collective.Collective: then the view's rows,
    y, c and lam are this rank's block (possibly empty), beta is replicated and returned
    the same on every rank, and every sum over rows is reduced over the ranks (see
    alm_core).  alpha and margins are this rank's rows.
    """
    cdef int64_t n = data.n, nw = beta.shape[0]
    cdef int status
    cdef int64_t counts[2]
    cdef Settings S
    cdef Work W
    cdef Result R
    cdef Stop ST
    cdef Examples E
    cdef Comm CM = comm_from(comm)
    cdef int dist = comm_active(&CM)
    cdef int64_t nv = max(n, 1)
    fill_settings(&S, settings)
    stop_init(&ST, data.nnz, data.n_rows)
    W.stop = &ST
    if (n < 1 and not dist) or y.shape[0] != n or c.shape[0] != n or lam.shape[0] != n:
        raise ValueError("rows, y, c and lam must have the same length >= 1")
    if nw != data.n_weights or (S.free_intercept and not data.bias > 0):
        raise ValueError("beta has the wrong length for n_features and bias")
    vec_n = np.zeros((10, nv), dtype=np.float64)
    vec_w = np.zeros((7, nw), dtype=np.float64)
    pack = np.zeros(nw + 8 + 8 * CM.size if dist else 1, dtype=np.float64)   # distributed only
    cap = max(S.max_iter, 1)
    traces = np.full((3, cap), np.nan)
    al = np.full((cap, 4), np.nan) if record_al else np.zeros((1, 4))
    cdef double[:, ::1] VN = vec_n, VW = vec_w, TR = traces, AL = al
    cdef double[::1] PK = pack
    cdef CSR X
    scratch_arr = data.kernel_csr(entry_threads(settings["n_threads"]), 0, &X)
    cdef void* cb = <void*>callback if callback is not None else NULL
    W.m = &VN[0, 0]; W.e = &VN[1, 0]; W.r = &VN[2, 0]; W.q = &VN[3, 0]; W.u = &VN[4, 0]
    W.v = &VN[5, 0]; W.alpha = &VN[6, 0]; W.ay = &VN[7, 0]; W.ones = &VN[8, 0]
    W.lam = &lam[0] if n > 0 else &VN[9, 0]      # (row 9 is free)
    W.pk = &PK[0] if dist else NULL
    W.gat = &PK[nw + 8] if dist else NULL
    W.g = &VW[0, 0]; W.d = &VW[1, 0]; W.wa = &VW[2, 0]; W.grad = &VW[3, 0]; W.cgs = &VW[4, 0]
    W.colsq = &VW[5, 0]; W.dinv = &VW[6, 0]
    R.f_trace = &TR[0, 0]; R.mu_trace = &TR[1, 0]; R.gap_trace = &TR[2, 0]
    R.al_trace = &AL[0, 0] if record_al else NULL
    E.X = &X
    E.rows = data.row_list()
    E.n = n
    E.y = &y[0] if n > 0 else W.ones
    E.c = &c[0] if n > 0 else W.ones
    E.cm = &CM
    cdef double t0 = monotonic_seconds()
    with nogil:
        alm_start(&E, &S, &W, &beta[0], counts)
        status = alm_core(&E, &beta[0], &S, &W, &R, cb)
        if not ST.stopped:
            alm_finish(&E, &S, &W, &R, &beta[0])
    stop_raise(&ST)                             # Ctrl-C: the work arrays go as it unwinds
    it = R.n_iter
    out = dict(status=status, n_iter=it, n_matvec=int(R.n_matvec), cg_iter=int(R.cg_iter),
               f=float(R.f), dual=float(R.dual), gap=float(R.f - R.dual), mu0=float(S.mu0),
               mu=float(R.mu), primal_res=float(R.primal_res), dual_res=float(R.dual_res),
               grad_norm=float(R.grad_norm), grad_stop=float(S.grad_stop),
               alpha=vec_n[6, :n].copy(), margins=vec_n[0, :n].copy(),
               f_trace=traces[0, :it].copy(), mu_trace=traces[1, :it].copy(),
               gap_trace=traces[2, :it].copy(), seconds=monotonic_seconds() - t0)
    if record_al:
        out["al_trace"] = al[:it].copy()
    return out
