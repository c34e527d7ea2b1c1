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
# LIBLINEAR's); nreg = n_weights - 1 (free_b): the last weight is the paper's
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
# The best bound seen is kept.  With a free intercept the dual also needs sum alpha_k y_k = 0 (= -mu g_b): alpha
# is then rescaled on the heavier class and X^T(alpha y) recomputed (one mat-vec,
# only when the gap is needed).
#
# Stopping rules (stop): 0 the paper's Section 4 rule, |P_k - P_(k-1)| <= tol |P_k|,
# guarded (a departure): it also needs P - D <= guard |P| (the Python layer uses
# 10%), because alone it stopped on unscaled data at true gaps above 100%;
# 1 the gradient rule of Algorithms 1-2, ||grad P|| <= tol max(min(n+, n-), 1)/n
# ||grad P(0)|| (LIBLINEAR's form; p > 1; one more mat-vec per iteration);
# 2 the duality gap, P - D <= tol |P|.  Always: the iteration cap.
#
# mu schedule (mu_rule), always non-decreasing and capped at mu_max:
# 0 geometric, mu <- growth mu (the paper's experiments);  1 eq. 29 (above),
# at most geometric;  2 residual balancing (a departure): mu <- growth mu when
# the relative primal residual ||X beta + e - y|| / max(||X beta||, ||e||, ||y||)
# exceeds the relative dual residual mu ||g|| / max(||rho beta||, ||X^T lamhat||).

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy, memset
from libc.math cimport fabs, sqrt, pow, fmin, fmax, INFINITY
import numpy as np
from csr cimport (CSR, make_csr, check_rows, matvec, rmatvec, col_sq_sums, dot,
                 scratch_doubles)
from cgls cimport Operator, csr_operator, cgls
from alm_steps cimport e_update, loss_kind
from comm cimport Comm, comm_from, comm_active, comm_sum, comm_sum1, comm_max, comm_allgather


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


from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    BREAKDOWN = 2          # the objective became non-finite
    HANDED_OVER = 3        # the callback asked to stop: the caller finishes another way

cdef enum:
    STOP_OBJECTIVE = 0
    STOP_GRADIENT = 1
    STOP_GAP = 2

cdef enum:
    MU_GEOMETRIC = 0
    MU_EQ29 = 1
    MU_BALANCE = 2


# ---------------------------------------------------------------- the e-step and the w-step
#
# lp_root, e_update (eq. 10-13), grad_G, step_along (eq. 16-18) and set_precond live in
# csrc/alm_steps.pxd (shared with the test entries of csrc/_testing.pyx).

cdef inline double loss(double u, double p, int kind) noexcept nogil:
    """(u)_+^p."""
    if u <= 0.0:
        return 0.0
    if kind == 1:
        return u
    if kind == 2:
        return u * u
    return pow(u, p)


cdef inline double conj(double a, double Cc, double p, int kind) noexcept nogil:
    """C_k l*(a / C_k) for the loss l(u) = u_+^p, a in the dual domain (a >= 0,
    a <= C_k when p = 1): 0 for p = 1, (p-1) C_k (a / (p C_k))^(p/(p-1)) else."""
    if kind == 1 or a <= 0.0:
        return 0.0
    if kind == 2:
        return a * a / (4.0 * Cc)
    return (p - 1.0) * Cc * pow(a / (p * Cc), p / (p - 1.0))


cdef double loss_sum(const double* m, const double* y, const double* c, int64_t n, double p,
                     int kind) noexcept nogil:
    """sum_k c_k (1 - y_k m_k)_+^p over this rank's rows."""
    cdef int64_t k
    cdef double s = 0.0
    for k in range(n):
        if c[k] > 0.0:
            s += c[k] * loss(1.0 - y[k] * m[k], p, kind)
    return s


cdef double primal(const double* beta, int64_t nreg, const double* m, const double* y,
                   const double* c, int64_t n, double C, double p, int kind) noexcept nogil:
    """P(beta) from the margins m = X beta (eq. 4)."""
    cdef int64_t k
    cdef double s = 0.0
    for k in range(n):
        if c[k] > 0.0:
            s += c[k] * loss(1.0 - y[k] * m[k], p, kind)
    return 0.5 * dot(beta, beta, nreg) + C * s


cdef double primal_comm(const double* beta, int64_t nreg, const double* m, const double* y,
                        const double* c, int64_t n, double C, double p, int kind,
                        const Comm* cm) noexcept nogil:
    """primal() with the loss summed over the ranks (primal() itself when serial)."""
    if not comm_active(cm):
        return primal(beta, nreg, m, y, c, n, C, p, kind)
    return 0.5 * dot(beta, beta, nreg) + C * comm_sum1(cm, loss_sum(m, y, c, n, p, kind))


cdef double aug_lagrangian(const double* beta, int64_t nreg, const double* m, const double* e,
                           const double* lam, const double* y, const double* c, int64_t n,
                           double C, double p, int kind, double mu) noexcept nogil:
    """AL(beta, e, lam, mu) of eq. 7 (for the Lemma 3 / eq. 27 diagnostics)."""
    cdef int64_t k
    cdef double s = 0.0, rl = 0.0, rr = 0.0, r
    for k in range(n):
        if c[k] > 0.0:
            s += c[k] * loss(y[k] * e[k], p, kind)
        r = m[k] + e[k] - y[k]
        rl += lam[k] * r
        rr += r * r
    return 0.5 * dot(beta, beta, nreg) + C * s + rl + 0.5 * mu * rr


# ---------------------------------------------------------------- certificates

cdef double scaled_dual(double S, double Q, double ww, double tmax, double p,
                        int kind) noexcept nogil:
    """max over 0 <= t <= tmax of D(t alpha) = t S - t^q Q - t^2/2 ww, where S = sum
    alpha, Q = sum C_k l*(alpha_k / C_k) (l* is homogeneous of degree q = p/(p-1)),
    ww = ||X^T(alpha y)||^2; tmax keeps t alpha <= C c for p = 1 (else inf).
    Scaling a dual feasible alpha keeps it feasible, so any t gives a bound; the
    best t makes the certificate much tighter early on (the multipliers of the
    ALM carry the right pattern before the right scale)."""
    cdef double t, lo, hi, q, dd
    cdef int it
    if not (S > 0.0):
        return 0.0                         # alpha = 0: D(0) = 0
    if kind == 1:
        t = S / ww if ww > 0.0 else tmax
        t = fmin(t, tmax)
        return t * S - 0.5 * t * t * ww
    if kind == 2:                          # l*(a) = a^2 / (4 C): Q t^2
        t = S / (2.0 * Q + ww)
        return t * S - t * t * (Q + 0.5 * ww)
    q = p / (p - 1.0)                      # D'(t) = S - q Q t^(q-1) - ww t, decreasing
    hi = S / ww if ww > 0.0 else INFINITY
    if Q > 0.0:
        hi = fmin(hi, pow(S / (q * Q), 1.0 / (q - 1.0)))
    if not (hi < INFINITY):
        return 0.0
    lo = 0.0
    for it in range(200):
        t = 0.5 * (lo + hi)
        dd = S - q * Q * pow(t, q - 1.0) - ww * t
        if dd > 0.0:
            lo = t
        else:
            hi = t
        if hi - lo <= 1e-15 * hi:
            break
    t = 0.5 * (lo + hi)
    return t * S - pow(t, q) * Q - 0.5 * t * t * ww


cdef double dual_value(const CSR* X, const int64_t* rows, int64_t n, const double* y,
                       const double* c, const double* alpha, double* ay, double* wa,
                       double C, double p, int kind, int free_b, const Comm* cm,
                       double* pk) noexcept nogil:
    """max_t D(t alpha) (see scaled_dual), with one mat-vec for X^T(alpha y).  With
    a free intercept alpha is first scaled down on the heavier class so that
    sum alpha y = 0 (still dual feasible), which the bound needs.  Distributed (cm
    active; pk: n_weights + 2 doubles of scratch): the class sums, X^T(alpha y), S
    and Q summed over the ranks and tmax minimized, in 2 allreduces (3 with a free
    intercept)."""
    cdef int64_t k, nw = X.n_weights
    cdef double sp = 0.0, sn = 0.0, fp = 1.0, fn = 1.0, a, S = 0.0, Q = 0.0, tmax = INFINITY
    if free_b:
        for k in range(n):
            if y[k] > 0.0:
                sp += alpha[k]
            else:
                sn += alpha[k]
        if comm_active(cm):
            pk[0] = sp
            pk[1] = sn
            comm_sum(cm, pk, 2)
            sp = pk[0]
            sn = pk[1]
        if sp > sn:
            fp = sn / sp
        elif sn > sp:
            fn = sp / sn
    for k in range(n):
        a = alpha[k] * (fp if y[k] > 0.0 else fn)
        ay[k] = a * y[k]
        if a > 0.0:
            S += a
            Q += conj(a, C * c[k], p, kind)
            if kind == 1:
                tmax = fmin(tmax, C * c[k] / a)
    rmatvec(X, rows, n, ay, wa)
    if comm_active(cm):
        memcpy(pk, wa, nw * sizeof(double))
        pk[nw] = S
        pk[nw + 1] = Q
        comm_sum(cm, pk, nw + 2)
        memcpy(wa, pk, nw * sizeof(double))
        S = pk[nw]
        Q = pk[nw + 1]
        if kind == 1:
            pk[0] = -tmax
            comm_max(cm, pk, 1)
            tmax = -pk[0]
    return scaled_dual(S, Q, dot(wa, wa, nw - 1 if free_b else nw), tmax, p, kind)


cdef void primal_gradient(const CSR* X, const int64_t* rows, int64_t n, const double* beta,
                          int64_t nreg, const double* m, const double* y, const double* c,
                          double C, double p, double* u, double* grad,
                          const Comm* cm) noexcept nogil:
    """grad P(beta) = rho*beta - C p X^T(c y (1 - y m)_+^(p-1))  (p > 1; the X^T
    product summed over the ranks)."""
    cdef int64_t k, j
    cdef double v
    for k in range(n):
        v = 1.0 - y[k] * m[k]
        if v > 0.0 and c[k] > 0.0:
            u[k] = -C * p * c[k] * y[k] * (v if p == 2.0 else pow(v, p - 1.0))
        else:
            u[k] = 0.0
    rmatvec(X, rows, n, u, grad)
    comm_sum(cm, grad, X.n_weights)
    for j in range(nreg):
        grad[j] += beta[j]


cdef inline double nrm(const double* a, int64_t n) noexcept nogil:
    return sqrt(dot(a, a, n))


# ---------------------------------------------------------------- the solver

ctypedef struct Work:
    double* m          # n: margins X beta
    double* e          # n: the auxiliary e of eq. 5
    double* lam        # n: multipliers
    double* r          # n: X beta - z (cgls: its residual)
    double* q          # n: X d (cgls scratch)
    double* u          # n: scratch (gradient rule, cgls)
    double* v          # n: the w-step's targets z (cgls takes the residual z - X beta)
    double* alpha      # n: the dual point of the certificate
    double* ay         # n: alpha y
    double* ones       # n: cgls weights
    double* g          # nw: gradient of G (eq. 16)
    double* d          # nw: step direction
    double* wa         # nw: X^T(alpha y); cgls scratch
    double* grad       # nw: grad P; cgls scratch
    double* cgs        # nw: cgls scratch
    double* colsq      # nw: diag(X^T X)
    double* dinv       # nw: preconditioner
    double* pk         # nw + 8: the packed allreduce of a distributed solve
    double* gat        # 8 per rank: the gathered scalars of a distributed solve
    Stop* stop         # polled each iteration and by cgls (csrc/interrupt.pxd)


ctypedef struct Settings:
    double C
    double p
    int kind           # 1: p = 1, 2: p = 2, 0: other p
    int exact
    int free_b
    int precondition
    double mu0
    double mu_max
    int mu_rule
    double growth
    int stop
    double tol
    int max_iter
    double cg_tol
    int cg_max_iter
    int refresh
    double guard       # the objective rule also needs P - D <= guard |P|
    double grad_stop   # the gradient rule's threshold on ||grad P||


ctypedef struct Result:
    int n_iter
    int64_t n_matvec
    int64_t cg_iter
    double f
    double dual        # best D(alpha) seen (-inf if none)
    double mu
    double primal_res  # ||X beta + e - y|| / max(||X beta||, ||e||, ||y||)
    double dual_res    # mu ||g|| / max(||rho beta||, ||X^T lamhat||)
    double grad_norm


cdef int dist_grad(const Operator* A, const double* beta, int64_t nreg, double inv_mu,
                   Work* W, double asum, double qsum, const Comm* cm) noexcept nogil:
    """Step 2a of a distributed iteration: W.g = X^T r + 1/mu rho*beta with X^T r, the
    e-step's dual sums asum, qsum (their sums left in W.pk[nw], W.pk[nw + 1]) and the
    ranks' stop flags summed in one allreduce of n_weights + 3 doubles.  Returns 1
    (W.stop set) if any rank stopped.  (The products go through A's pointers, as
    cgls's do: no new call sites of the csr kernels, whose inlining into the serial
    path gcc decides over the whole module.)"""
    cdef int64_t j, nw = A.nw
    A.apply_t(A, W.r, W.pk)                     # X^T r
    W.pk[nw] = asum
    W.pk[nw + 1] = qsum
    W.pk[nw + 2] = W.stop.stopped
    comm_sum(cm, W.pk, nw + 3)
    if W.pk[nw + 2] > 0.0:
        W.stop.stopped = 1
        return 1
    memcpy(W.g, W.pk, nw * sizeof(double))
    for j in range(nreg):
        W.g[j] += inv_mu * beta[j]
    return 0


cdef double dist_scalars(int64_t n, const double* y, const double* c, const Settings* S,
                         Work* W, double rr, double ee, double yy, double mm, double tmax,
                         double asum, double qsum, double sumsq, const Comm* cm) noexcept nogil:
    """Step 3 of a distributed iteration: W.pk[0:7] <- the ranks' sums of rr, ee, yy,
    mm, the loss at the margins W.m, eq. 29's loss at e (0 unless that rule), and the
    maximum of -tmax, from one allgather of 7 doubles per rank, added in rank order
    alike on every rank.  Returns the certificate D of step 2a (scaled_dual), which
    needs the reduced tmax."""
    cdef int64_t k
    cdef int j, rk
    W.pk[0] = rr
    W.pk[1] = ee
    W.pk[2] = yy
    W.pk[3] = mm
    W.pk[4] = loss_sum(W.m, y, c, n, S.p, S.kind)
    W.pk[5] = 0.0
    if S.mu_rule == MU_EQ29:
        for k in range(n):
            if c[k] > 0.0:
                W.pk[5] += S.C * c[k] * loss(y[k] * W.e[k], S.p, S.kind)
    W.pk[6] = -tmax
    comm_allgather(cm, W.pk, 7, W.gat)
    for j in range(6):
        W.pk[j] = 0.0
    W.pk[6] = -INFINITY
    for rk in range(cm.size):
        for j in range(6):
            W.pk[j] += W.gat[7 * rk + j]
        W.pk[6] = fmax(W.pk[6], W.gat[7 * rk + 6])
    return scaled_dual(asum, qsum, sumsq, -W.pk[6], S.p, S.kind)


cdef int alm_core(const CSR* X, const int64_t* rows, int64_t n, const double* y,
                  const double* c, double* beta, const Settings* S, Work* W,
                  double* f_trace, double* mu_trace, double* gap_trace, double* al_trace,
                  Result* R, void* callback, const Comm* cm) noexcept nogil:
    """Algorithm 2 (or 1 if S.exact) from beta (in/out) with W.m = X beta, W.lam
    and W.e given.  Distributed (cm active): the rows are this
    rank's block and every sum over rows is reduced over the ranks -- per iteration
    one allreduce of X^T r with the e-step's dual sums and the stop flag (n_weights
    + 3 doubles), one of ||X d||^2 (the step length, 1 double) and one allgather of
    the residual norms, the loss, and the certificate's tmax (7 doubles per rank);
    the al_trace diagnostics stay local.  Algorithm 1 (S.exact) replaces the step
    length's allreduce by cgls's (csrc/cgls.pxd, distributed there: one allreduce of
    n_weights + 3 doubles per CGLS iteration, one for the start residual and one
    for each true-residual check).  Per iteration k: f_trace = P(beta_k),
    mu_trace = mu_k, gap_trace = P(beta_k) - (best D so far) and, if al_trace is not NULL, four
    numbers: AL before the e-step, after it, after the w-step (all at
    lam_(k-1), mu_k) and ||lam_k - lam_(k-1)||^2 (eq. 27).  Returns a status.  Once
    W.stop is stopped (Ctrl-C, an exception in the callback, a stop request) it
    returns at once; the caller raises."""
    cdef int64_t k, j, nw = X.n_weights
    cdef int64_t nreg = nw - 1 if S.free_b else nw
    cdef int it = 0, status = MAX_ITER, kind = S.kind, cg_it, optimal
    cdef double mu = S.mu0, inv_mu, gam, t, a, f, f_prev = INFINITY, asum, qsum, tmax, sumsq, gb
    cdef double rr, ee, yy, mm, ldiff, pres, dres, fe, bound, phi_prev = INFINITY
    cdef double b_prev = 0.0, Dk
    cdef int dist = comm_active(cm)
    cdef Operator A = csr_operator(X, rows, n)        # the w-step's CGLS operator (exact;
                                                      # and the distributed products)
    R.n_matvec = 0
    R.cg_iter = 0
    R.dual = -INFINITY
    R.grad_norm = INFINITY
    R.primal_res = INFINITY
    R.dual_res = INFINITY
    f = primal_comm(beta, nreg, W.m, y, c, n, S.C, S.p, kind, cm)
    while it < S.max_iter:
        if stop_poll(W.stop, n * W.stop.per_row) and not dist:
            break                               # distributed: at the allreduce below
        inv_mu = 1.0 / mu
        if al_trace != NULL:
            al_trace[4 * it] = aug_lagrangian(beta, nreg, W.m, W.e, W.lam, y, c, n, S.C, S.p, kind, mu)
        # 1. e-step (eq. 10-13), r = X beta - z, alpha = -y mu r
        asum = 0.0
        qsum = 0.0
        tmax = INFINITY
        for k in range(n):
            t = y[k] - W.m[k] - W.lam[k] * inv_mu
            W.e[k] = e_update(t, y[k], S.C * c[k] * inv_mu, S.p, kind, W.e[k])
            W.r[k] = W.m[k] - y[k] + W.e[k] + W.lam[k] * inv_mu
            a = -y[k] * mu * W.r[k]
            if a < 0.0:                         # rounding: eq. 10 makes alpha >= 0
                a = 0.0
            elif kind == 1 and a > S.C * c[k]:  # and <= C c_k for p = 1
                a = S.C * c[k]
            W.alpha[k] = a
            if a > 0.0:
                asum += a
                qsum += conj(a, S.C * c[k], S.p, kind)
                if kind == 1:
                    tmax = fmin(tmax, S.C * c[k] / a)
        if al_trace != NULL:
            al_trace[4 * it + 1] = aug_lagrangian(beta, nreg, W.m, W.e, W.lam, y, c, n, S.C, S.p, kind, mu)
        # 2a. gradient of G at the old beta; certificate D(alpha) and dual residual from it
        if dist:                                # X^T r, asum, qsum, stop: one allreduce
            if dist_grad(&A, beta, nreg, inv_mu, W, asum, qsum, cm):
                break                           # some rank was stopped: all leave
            asum = W.pk[nw]
            qsum = W.pk[nw + 1]
        else:
            grad_G(X, rows, n, beta, nreg, W.r, inv_mu, W.g)
        R.n_matvec += 1
        sumsq = 0.0
        for j in range(nreg):                   # X^T(alpha y) = rho*beta - mu g
            a = beta[j] - mu * W.g[j]
            sumsq += a * a
        dres = mu * nrm(W.g, nw) / fmax(fmax(nrm(beta, nreg), sqrt(sumsq)), 1e-300)
        if not dist:                            # distributed: after step 3 (tmax reduced)
            Dk = scaled_dual(asum, qsum, sumsq, tmax, S.p, kind)
            if S.free_b:
                gb = Dk      # not a bound (sum alpha y = -mu g_b need not vanish): see step 4
            elif Dk > R.dual:
                R.dual = Dk
        # 2b. w-step
        if S.precondition:
            if S.exact:                         # cgls: minv = 1 / diag(1/mu I + X^T X)
                set_precond(W.colsq, nw, nw, inv_mu, W.dinv)
            else:
                set_precond(W.colsq, nw, nreg, inv_mu, W.dinv)
        if S.exact:
            # CGLS on eq. 15 from beta; targets z = y - e - lam/mu (minus b_prev with
            # a free intercept: the proximal form, see the block comment)
            if S.free_b:
                b_prev = beta[nw - 1]
                beta[nw - 1] = 0.0
            for k in range(n):
                W.v[k] = y[k] - W.e[k] - W.lam[k] * inv_mu - b_prev
                W.r[k] = -W.r[k]                # cgls residual targets - X beta = z - m
            # distributed: cgls over the row blocks (csrc/cgls.pxd: one allreduce of
            # nw + 3 doubles per CGLS iteration, in W.pk); it polls no stop record there
            # (a rank must not leave alone): the stop flag travels with step 2a's allreduce
            cg_it = cgls(&A, W.ones, inv_mu, beta, W.r, W.q, W.u, W.wa, W.grad, W.cgs,
                         W.dinv if S.precondition else NULL, S.cg_tol, 0.0, S.cg_max_iter,
                         &optimal, NULL if dist else W.stop, 0, W.pk if dist else NULL,
                         0, NULL, NULL, 1, NULL, 1.0, 0.0, NULL, cm)
            if W.stop.stopped and not dist:
                break
            R.cg_iter += cg_it
            R.n_matvec += 2 * cg_it + 1
            for k in range(n):
                W.m[k] = W.v[k] - W.r[k] + b_prev
            if S.free_b:
                beta[nw - 1] += b_prev
        else:
            step_along(X, rows, n, beta, nreg, W.m, W.g, inv_mu,
                       W.dinv if S.precondition else NULL, W.d, W.q, cm)
            R.n_matvec += 1
        if al_trace != NULL:
            al_trace[4 * it + 2] = aug_lagrangian(beta, nreg, W.m, W.e, W.lam, y, c, n, S.C, S.p, kind, mu)
        # 3. multipliers (eq. 9) and residuals
        rr = 0.0
        ee = 0.0
        yy = 0.0
        mm = 0.0
        for k in range(n):
            t = W.m[k] + W.e[k] - y[k]
            rr += t * t
            ee += W.e[k] * W.e[k]
            yy += y[k] * y[k]
            mm += W.m[k] * W.m[k]
            W.lam[k] += mu * t
        if al_trace != NULL:
            al_trace[4 * it + 3] = mu * mu * rr
        it += 1
        if S.refresh > 0 and it % S.refresh == 0:
            matvec(X, rows, n, beta, W.m)
            R.n_matvec += 1
        if dist:
            Dk = dist_scalars(n, y, c, S, W, rr, ee, yy, mm, tmax, asum, qsum, sumsq, cm)
            rr = W.pk[0]
            ee = W.pk[1]
            yy = W.pk[2]
            mm = W.pk[3]
            f = 0.5 * dot(beta, beta, nreg) + S.C * W.pk[4]
            if S.free_b:
                gb = Dk
            elif Dk > R.dual:
                R.dual = Dk
        else:
            f = primal(beta, nreg, W.m, y, c, n, S.C, S.p, kind)
        pres = sqrt(rr) / fmax(fmax(sqrt(mm), sqrt(ee)), fmax(sqrt(yy), 1e-300))
        R.primal_res = pres
        R.dual_res = dres
        if not (fabs(f) < INFINITY):
            f_trace[it - 1] = f
            mu_trace[it - 1] = mu
            gap_trace[it - 1] = INFINITY
            status = BREAKDOWN
            break
        if S.free_b and ((S.stop == STOP_GAP and f - gb <= S.tol * fabs(f)) or (
                S.stop == STOP_OBJECTIVE and f - gb <= S.guard * fabs(f)
                and fabs(f - f_prev) <= S.tol * fabs(f))):
            # the free intercept's dual needs sum alpha y = 0: rebalance alpha
            # (one mat-vec), only when the unbalanced value says a test could pass
            Dk = dual_value(X, rows, n, y, c, W.alpha, W.ay, W.wa, S.C, S.p, kind, 1, cm, W.pk)
            R.n_matvec += 1
            if Dk > R.dual:
                R.dual = Dk
        f_trace[it - 1] = f
        mu_trace[it - 1] = mu
        gap_trace[it - 1] = f - R.dual
        # 4. stopping rules
        if S.stop == STOP_OBJECTIVE:
            if fabs(f - f_prev) <= S.tol * fabs(f) and f - R.dual <= S.guard * fabs(f):
                status = CONVERGED
        elif S.stop == STOP_GRADIENT:
            primal_gradient(X, rows, n, beta, nreg, W.m, y, c, S.C, S.p, W.u, W.grad, cm)
            R.n_matvec += 1
            R.grad_norm = nrm(W.grad, nw)
            if R.grad_norm <= S.grad_stop:
                status = CONVERGED
        elif f - R.dual <= S.tol * fabs(f):
            status = CONVERGED
        if callback != NULL and (it == 1 or it % 10 == 0 or status == CONVERGED):
            with gil:                           # every 10th iteration: the GIL seldom
                try:
                    if (<object>callback)(it, f, mu, pres, dres, f - R.dual) \
                            and status != CONVERGED:
                        status = HANDED_OVER    # the same answer on every rank
                except BaseException as e:
                    stop_keep(W.stop, e)
        if status == CONVERGED or status == HANDED_OVER:
            break
        f_prev = f
        # 5. the next mu: non-decreasing, capped
        if S.mu_rule == MU_GEOMETRIC:
            mu = fmin(S.growth * mu, S.mu_max)
        elif S.mu_rule == MU_EQ29:
            fe = 0.5 * dot(beta, beta, nreg)
            if dist:
                fe += W.pk[5]                   # summed over the ranks in step 3
            else:
                for k in range(n):
                    if c[k] > 0.0:
                        fe += S.C * c[k] * loss(y[k] * W.e[k], S.p, kind)
            bound = 2.0 * (phi_prev - fe) / rr if rr > 0.0 else INFINITY
            phi_prev = fe + 0.5 * mu * rr
            mu = fmax(mu, fmin(fmin(S.growth * mu, S.mu_max), bound))
        elif pres > dres:
            mu = fmin(S.growth * mu, S.mu_max)
    R.n_iter = it
    R.mu = mu
    R.f = f
    return status


# ---------------------------------------------------------------- Python entries

def _n_threads(int n_threads):
    from ._kernels import max_threads
    return max_threads() if n_threads <= 0 else n_threads


# mu0 <= 0 asks for MU0_SCALE / sum_k ||x_k||^2 (see linsvm/solvers/alm.py)
cdef double _MU0_SCALE = 10.0
MU0_SCALE = _MU0_SCALE


def request_stop():
    """Make every solve of this module running now, in any thread, stop and raise
    KeyboardInterrupt (csrc/interrupt.pxd; linsvm.interrupt.stop_running_solves)."""
    stop_request()


def alm_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] y,
              const double[::1] c, double[::1] beta, double[::1] lam, double C, double p,
              bint exact, bint free_b, bint precondition, double mu0, double mu_max, int mu_rule,
              double growth, int stop, double tol, int max_iter, double cg_tol, int cg_max_iter,
              int refresh, double guard, int n_threads, object callback, bint record_al,
              object comm=None):
    """Run SVM-ALM (Algorithm 2, or 1 with exact=True) from beta and lam, both
    updated in place.

    Buffers must be validated by the caller: indices in [0, n_features), rows
    in [0, n_rows), y = +-1 and c >= 0 finite with len(y) == len(c) == len(rows)
    == len(lam) >= 1, len(beta) == n_features + (bias > 0), bias > 0 if free_b
    (the intercept is then the bias column's weight, and the caller passes
    bias = 1), p >= 1, C > 0, mu_max >= mu0 (mu0 <= 0: automatic), growth >= 1.
    stop: 0 objective change, 1 gradient (p > 1), 2 duality gap; mu_rule:
    0 geometric, 1 eq. 29, 2 residual balancing.

    callback(it, f, mu, primal res, dual res, f - dual) is called at iterations 1, 10,
    20, ... (and at convergence); a true value returned stops the solve with status 3
    (the caller hands the problem to another solver).

    Returns a dict: status (0 converged, 1 iteration cap, 2 breakdown, 3 handed over), n_iter,
    n_matvec, cg_iter, f = P(beta), dual (a lower bound on min P; -inf if none),
    gap = f - dual, mu0, mu (final), primal_res, dual_res, grad_norm, alpha (the
    dual point of the last iteration), traces f_trace, mu_trace, gap_trace and,
    with record_al, al_trace (n_iter x 4; see alm_core).

    comm: None (serial) or a linsvm.collective.Collective: then rows, y, c and lam
    are this rank's block (possibly empty), beta is replicated and returned the
    same on every rank, and every sum over rows is reduced over the ranks (see
    alm_core).  alpha and margins are this rank's rows.
    """
    cdef int64_t n = rows.shape[0], nw = beta.shape[0], k, j
    cdef int T = _n_threads(n_threads)
    cdef int status, kind = loss_kind(p)
    cdef int64_t npos = 0, nneg = 0
    cdef double tr = 0.0, g0 = 0.0, Dfin
    cdef Settings S
    cdef Work W
    cdef Result R
    cdef Stop ST
    cdef Comm CM = comm_from(comm)
    cdef int dist = comm_active(&CM)
    cdef int64_t nv = max(n, 1)
    cdef const int64_t* rp
    cdef const double* yp
    cdef const double* cp
    stop_init(&ST, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    W.stop = &ST
    if (n < 1 and not dist) or y.shape[0] != n or c.shape[0] != n or lam.shape[0] != n:
        raise ValueError("rows, y, c and lam must have the same length >= 1")
    if nw != n_features + (1 if bias > 0 else 0) or (free_b and not bias > 0):
        raise ValueError("beta has the wrong length for n_features and bias")
    if not (p >= 1.0 and C > 0.0 and growth >= 1.0 and max_iter >= 0 and tol >= 0.0):
        raise ValueError("invalid settings")
    if stop == STOP_GRADIENT and kind == 1:
        raise ValueError("the gradient stopping rule needs p > 1")
    check_rows(rows, indptr.shape[0] - 1)
    vec_n = np.zeros((10, nv), dtype=np.float64)
    vec_w = np.zeros((7, nw), dtype=np.float64)
    pack = np.zeros(nw + 8 + 8 * CM.size if dist else 1, dtype=np.float64)   # distributed only
    cap = max(max_iter, 1)
    traces = np.full((3, cap), np.nan)
    al = np.full((cap, 4), np.nan) if record_al else np.zeros((1, 4))
    scratch_arr = np.empty(max(scratch_doubles(indptr, n_features, bias), 1), dtype=np.float64)
    cdef double[:, ::1] VN = vec_n, VW = vec_w, TR = traces, AL = al
    cdef double[::1] sv = scratch_arr, PK = pack
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, T, &sv[0])
    cdef void* cb = <void*>callback if callback is not None else NULL
    W.m = &VN[0, 0]; W.e = &VN[1, 0]; W.r = &VN[2, 0]; W.q = &VN[3, 0]; W.u = &VN[4, 0]
    W.v = &VN[5, 0]; W.alpha = &VN[6, 0]; W.ay = &VN[7, 0]; W.ones = &VN[8, 0]
    W.lam = &lam[0] if n > 0 else &VN[9, 0]      # (row 9 is free)
    W.pk = &PK[0] if dist else NULL
    W.gat = &PK[nw + 8] if dist else NULL
    rp = &rows[0] if n > 0 else NULL
    yp = &y[0] if n > 0 else W.ones
    cp = &c[0] if n > 0 else W.ones
    W.g = &VW[0, 0]; W.d = &VW[1, 0]; W.wa = &VW[2, 0]; W.grad = &VW[3, 0]; W.cgs = &VW[4, 0]
    W.colsq = &VW[5, 0]; W.dinv = &VW[6, 0]
    S.C = C; S.p = p; S.kind = kind; S.exact = exact; S.free_b = free_b
    S.precondition = precondition; S.mu_max = mu_max; S.mu_rule = mu_rule; S.growth = growth
    S.stop = stop; S.tol = tol; S.max_iter = max_iter; S.cg_tol = cg_tol
    S.cg_max_iter = cg_max_iter; S.refresh = refresh; S.grad_stop = 0.0; S.guard = guard
    with nogil:
        for k in range(n):
            W.ones[k] = 1.0
            if y[k] > 0.0:
                npos += 1
            else:
                nneg += 1
        col_sq_sums(&X, rp, n, W.ones, W.colsq)
        if dist:                                # diag(X^T X) and the counts: one allreduce
            memcpy(W.pk, W.colsq, nw * sizeof(double))
            W.pk[nw] = npos
            W.pk[nw + 1] = nneg
            comm_sum(&CM, W.pk, nw + 2)
            memcpy(W.colsq, W.pk, nw * sizeof(double))
            npos = <int64_t>W.pk[nw]
            nneg = <int64_t>W.pk[nw + 1]
        for j in range(nw):
            tr += W.colsq[j]
        S.mu0 = mu0 if mu0 > 0.0 else (_MU0_SCALE / tr if tr > 0.0 else 1.0)
        if S.mu0 > S.mu_max:
            S.mu0 = S.mu_max
        if stop == STOP_GRADIENT:              # ||grad P(0)||, LIBLINEAR's relative form
            primal_gradient(&X, rp, n, W.grad, 0, W.m, yp, cp, C, p, W.u, W.wa, &CM)
            g0 = nrm(W.wa, nw)
            S.grad_stop = tol * (<double>max(min(npos, nneg), 1)) / (npos + nneg) * g0
        matvec(&X, rp, n, &beta[0], W.m)
        for k in range(n):
            W.e[k] = y[k] - W.m[k]             # feasible start for e (used by the AL trace)
        status = alm_core(&X, rp, n, yp, cp, &beta[0], &S, &W,
                          &TR[0, 0], &TR[1, 0], &TR[2, 0], &AL[0, 0] if record_al else NULL,
                          &R, cb, &CM)
        # final: margins afresh, P exactly, and the certificate of the last alpha
        if not ST.stopped:
            matvec(&X, rp, n, &beta[0], W.m)
            R.f = primal_comm(&beta[0], nw - 1 if free_b else nw, W.m, yp, cp, n, C, p, kind, &CM)
            R.n_matvec += 2
            if R.n_iter > 0:
                Dfin = dual_value(&X, rp, n, yp, cp, W.alpha, W.ay, W.wa, C, p, kind,
                                  free_b, &CM, W.pk)
                if Dfin > R.dual:
                    R.dual = Dfin
    stop_raise(&ST)                             # Ctrl-C: the work arrays go as it unwinds
    it = R.n_iter
    out = dict(status=status, n_iter=it, n_matvec=int(R.n_matvec), cg_iter=int(R.cg_iter),
               f=float(R.f), dual=float(R.dual), gap=float(R.f - R.dual), mu0=float(S.mu0),
               mu=float(R.mu), primal_res=float(R.primal_res), dual_res=float(R.dual_res),
               grad_norm=float(R.grad_norm), grad_stop=float(S.grad_stop),
               alpha=vec_n[6, :n].copy(), margins=vec_n[0, :n].copy(),
               f_trace=traces[0, :it].copy(), mu_trace=traces[1, :it].copy(),
               gap_trace=traces[2, :it].copy())
    if record_al:
        out["al_trace"] = al[:it].copy()
    return out
