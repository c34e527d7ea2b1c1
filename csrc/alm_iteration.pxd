# Steps 1, 3 and 5 of an SVM-ALM iteration (csrc/_alm.pyx, whose block comment numbers
# the steps and has the paper's equations): the e-step (eq. 10-13) with the dual point
# of the certificate, the multiplier update (eq. 9) and what follows from it (P,
# the residuals, the traces), the next mu; and the collectives of a distributed
# iteration.  Steps 2 (the gradient and the w-step) and 4 (the stopping rules and the
# callback) are _alm.pyx's.

from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libc.math cimport fabs, sqrt, fmin, fmax, INFINITY
from csr cimport dot
from cgls cimport Operator
from comm cimport Comm, comm_active, comm_sum, comm_allgather
from alm_steps cimport e_update
from alm_state cimport (Examples, Settings, Work, Iterate, Result, BREAKDOWN, STOP_OBJECTIVE,
                        STOP_GAP, MU_GEOMETRIC, MU_EQ29)
from alm_certificate cimport loss, conj, loss_sum, primal, scaled_dual, dual_value


cdef inline void e_step(const Examples* E, const Settings* S, Work* W, Iterate* I) noexcept nogil:
    """Step 1: e (eq. 10-13), r = X beta - z and alpha = -y mu r (clipped to the dual
    domain), with the certificate's sums asum, qsum and tmax of this rank's rows."""
    cdef int64_t k
    cdef const double* y = E.y
    cdef const double* c = E.c
    cdef double mu = I.mu, inv_mu = I.inv_mu, C = S.C, p = S.p, t, a
    cdef double asum = 0.0, qsum = 0.0, tmax = INFINITY
    cdef int kind = S.kind
    for k in range(E.n):
        t = y[k] - W.m[k] - W.lam[k] * inv_mu
        W.e[k] = e_update(t, y[k], C * c[k] * inv_mu, p, kind, W.e[k])
        W.r[k] = W.m[k] - y[k] + W.e[k] + W.lam[k] * inv_mu
        a = -y[k] * mu * W.r[k]
        if a < 0.0:                         # rounding: eq. 10 makes alpha >= 0
            a = 0.0
        elif kind == 1 and a > C * c[k]:    # and <= C c_k for p = 1
            a = C * c[k]
        W.alpha[k] = a
        if a > 0.0:
            asum += a
            qsum += conj(a, C * c[k], p, kind)
            if kind == 1:
                tmax = fmin(tmax, C * c[k] / a)
    I.asum = asum
    I.qsum = qsum
    I.tmax = tmax


cdef inline int dist_grad(const Operator* A, const double* beta, int64_t nreg, double inv_mu,
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


cdef inline void multipliers(const Examples* E, Work* W, Iterate* I) noexcept nogil:
    """Step 3: lam += mu (X beta + e - y) (eq. 9), with this rank's squared norms of the
    residual, e, y and X beta."""
    cdef int64_t k
    cdef const double* y = E.y
    cdef double mu = I.mu, t, rr = 0.0, ee = 0.0, yy = 0.0, mm = 0.0
    for k in range(E.n):
        t = W.m[k] + W.e[k] - y[k]
        rr += t * t
        ee += W.e[k] * W.e[k]
        yy += y[k] * y[k]
        mm += W.m[k] * W.m[k]
        W.lam[k] += mu * t
    I.rr = rr
    I.ee = ee
    I.yy = yy
    I.mm = mm


cdef inline double dist_scalars(const Examples* E, const Settings* S, Work* W,
                         const Iterate* I) noexcept nogil:
    """Step 3 of a distributed iteration: W.pk[0:7] <- the ranks' sums of rr, ee, yy,
    mm, the loss at the margins W.m, eq. 29's loss at e (0 unless that rule), and the
    maximum of -tmax, from one allgather of 7 doubles per rank, added in rank order
    alike on every rank.  Returns the certificate D of step 2a (scaled_dual), which
    needs the reduced tmax."""
    cdef int64_t k
    cdef int j, rk
    cdef const double* y = E.y
    cdef const double* c = E.c
    W.pk[0] = I.rr
    W.pk[1] = I.ee
    W.pk[2] = I.yy
    W.pk[3] = I.mm
    W.pk[4] = loss_sum(W.m, y, c, E.n, S.p, S.kind)
    W.pk[5] = 0.0
    if S.mu_rule == MU_EQ29:
        for k in range(E.n):
            if c[k] > 0.0:
                W.pk[5] += S.C * c[k] * loss(y[k] * W.e[k], S.p, S.kind)
    W.pk[6] = -I.tmax
    comm_allgather(E.cm, W.pk, 7, W.gat)
    for j in range(6):
        W.pk[j] = 0.0
    W.pk[6] = -INFINITY
    for rk in range(E.cm.size):
        for j in range(6):
            W.pk[j] += W.gat[7 * rk + j]
        W.pk[6] = fmax(W.pk[6], W.gat[7 * rk + 6])
    return scaled_dual(I.asum, I.qsum, I.sumsq, -W.pk[6], S.p, S.kind)


cdef inline int measure(const Examples* E, const Settings* S, Work* W, Result* R,
                 const double* beta, int64_t nreg, Iterate* I) noexcept nogil:
    """After step 3: P(beta), the residuals, the certificate of a distributed or
    free-intercept solve, and the traces of iteration I.it.  Returns 1 (status
    BREAKDOWN) when P is not finite."""
    cdef double Dk, f
    cdef int it = I.it
    if comm_active(E.cm):
        Dk = dist_scalars(E, S, W, I)
        I.rr = W.pk[0]
        I.ee = W.pk[1]
        I.yy = W.pk[2]
        I.mm = W.pk[3]
        f = 0.5 * dot(beta, beta, nreg) + S.C * W.pk[4]
        if S.free_intercept:
            I.gb = Dk
        elif Dk > R.dual:
            R.dual = Dk
    else:
        f = primal(E, S, beta, nreg, W.m)
    I.f = f
    I.pres = sqrt(I.rr) / fmax(fmax(sqrt(I.mm), sqrt(I.ee)), fmax(sqrt(I.yy), 1e-300))
    R.primal_res = I.pres
    R.dual_res = I.dres
    if not (fabs(f) < INFINITY):
        R.f_trace[it - 1] = f
        R.mu_trace[it - 1] = I.mu
        R.gap_trace[it - 1] = INFINITY
        I.status = BREAKDOWN
        return 1
    if S.free_intercept and ((S.stop == STOP_GAP and f - I.gb <= S.tol * fabs(f)) or (
            S.stop == STOP_OBJECTIVE and f - I.gb <= S.guard * fabs(f)
            and fabs(f - I.f_prev) <= S.tol * fabs(f))):
        # the free intercept's dual needs sum alpha y = 0: rebalance alpha
        # (one mat-vec), only when the unbalanced value says a test could pass
        Dk = dual_value(E, S, W.alpha, W.ay, W.wa, W.pk)
        R.n_matvec += 1
        if Dk > R.dual:
            R.dual = Dk
    R.f_trace[it - 1] = f
    R.mu_trace[it - 1] = I.mu
    R.gap_trace[it - 1] = f - R.dual
    return 0


cdef inline void next_mu(const Examples* E, const Settings* S, const Work* W, const double* beta,
                  int64_t nreg, Iterate* I) noexcept nogil:
    """Step 5: the next mu by S.mu_rule, non-decreasing, capped at mu_max."""
    cdef int64_t k
    cdef const double* y = E.y
    cdef const double* c = E.c
    cdef double mu = I.mu, fe, bound
    if S.mu_rule == MU_GEOMETRIC:
        mu = fmin(S.mu_growth * mu, S.mu_max)
    elif S.mu_rule == MU_EQ29:
        fe = 0.5 * dot(beta, beta, nreg)
        if comm_active(E.cm):
            fe += W.pk[5]                       # summed over the ranks in step 3
        else:
            for k in range(E.n):
                if c[k] > 0.0:
                    fe += S.C * c[k] * loss(y[k] * W.e[k], S.p, S.kind)
        bound = 2.0 * (I.phi_prev - fe) / I.rr if I.rr > 0.0 else INFINITY
        I.phi_prev = fe + 0.5 * mu * I.rr
        mu = fmax(mu, fmin(fmin(S.mu_growth * mu, S.mu_max), bound))
    elif I.pres > I.dres:
        mu = fmin(S.mu_growth * mu, S.mu_max)
    I.mu = mu
