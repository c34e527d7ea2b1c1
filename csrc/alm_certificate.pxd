# The objective, the augmented Lagrangian and the dual certificate of SVM-ALM
# (csrc/_alm.pyx, whose block comment derives them from the paper's eq. 4-7): P(beta)
# from the margins, AL of eq. 7 for the eq. 27 diagnostics, the best scaled dual value
# D(t alpha) of the multipliers' dual point, and grad P for the gradient stopping rule.
# Every sum over rows is this rank's, then reduced over the ranks (E.cm) where the
# caller needs the whole.

from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libc.math cimport sqrt, pow, fmin, INFINITY
from csr cimport dot
from csr_passes cimport rmatvec
from comm cimport comm_active, comm_sum, comm_sum1, comm_max
from alm_state cimport Examples, Settings, Work


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


cdef inline double nrm(const double* a, int64_t n) noexcept nogil:
    return sqrt(dot(a, a, n))


cdef inline double loss_sum(const double* m, const double* y, const double* c, int64_t n,
                            double p, int kind) noexcept nogil:
    """sum_k c_k (1 - y_k m_k)_+^p over this rank's rows."""
    cdef int64_t k
    cdef double s = 0.0
    for k in range(n):
        if c[k] > 0.0:
            s += c[k] * loss(1.0 - y[k] * m[k], p, kind)
    return s


cdef inline double primal(const Examples* E, const Settings* S, const double* beta,
                          int64_t nreg, const double* m) noexcept nogil:
    """P(beta) from the margins m = X beta (eq. 4), the loss summed over the ranks."""
    cdef double s = loss_sum(m, E.y, E.c, E.n, S.p, S.kind)
    if comm_active(E.cm):
        s = comm_sum1(E.cm, s)
    return 0.5 * dot(beta, beta, nreg) + S.C * s


cdef inline double aug_lagrangian(const Examples* E, const Settings* S, const Work* W,
                                  const double* beta, int64_t nreg, double mu) noexcept nogil:
    """AL(beta, e, lam, mu) of eq. 7 at W.m = X beta, W.e and W.lam (this rank's rows:
    the Lemma 3 / eq. 27 diagnostics)."""
    cdef int64_t k
    cdef const double* y = E.y
    cdef const double* c = E.c
    cdef double s = 0.0, rl = 0.0, rr = 0.0, r
    for k in range(E.n):
        if c[k] > 0.0:
            s += c[k] * loss(y[k] * W.e[k], S.p, S.kind)
        r = W.m[k] + W.e[k] - y[k]
        rl += W.lam[k] * r
        rr += r * r
    return 0.5 * dot(beta, beta, nreg) + S.C * s + rl + 0.5 * mu * rr


cdef inline double scaled_dual(double S, double Q, double ww, double tmax, double p,
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


cdef inline double dual_value(const Examples* E, const Settings* S, const double* alpha,
                              double* ay, double* wa, double* pk) noexcept nogil:
    """max_t D(t alpha) (see scaled_dual), with one mat-vec for X^T(alpha y).  With
    a free intercept alpha is first scaled down on the heavier class so that
    sum alpha y = 0 (still dual feasible), which the bound needs.  Distributed (E.cm
    active; pk: n_weights + 2 doubles of scratch): the class sums, X^T(alpha y), S
    and Q summed over the ranks and tmax minimized, in 2 allreduces (3 with a free
    intercept)."""
    cdef int64_t k, n = E.n, nw = E.X.n_weights
    cdef const double* y = E.y
    cdef const double* c = E.c
    cdef double C = S.C, p = S.p
    cdef int kind = S.kind
    cdef double sp = 0.0, sn = 0.0, fp = 1.0, fn = 1.0, a, Ssum = 0.0, Q = 0.0, tmax = INFINITY
    if S.free_intercept:
        for k in range(n):
            if y[k] > 0.0:
                sp += alpha[k]
            else:
                sn += alpha[k]
        if comm_active(E.cm):
            pk[0] = sp
            pk[1] = sn
            comm_sum(E.cm, pk, 2)
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
            Ssum += a
            Q += conj(a, C * c[k], p, kind)
            if kind == 1:
                tmax = fmin(tmax, C * c[k] / a)
    rmatvec(E.X, E.rows, n, ay, wa)
    if comm_active(E.cm):
        memcpy(pk, wa, nw * sizeof(double))
        pk[nw] = Ssum
        pk[nw + 1] = Q
        comm_sum(E.cm, pk, nw + 2)
        memcpy(wa, pk, nw * sizeof(double))
        Ssum = pk[nw]
        Q = pk[nw + 1]
        if kind == 1:
            pk[0] = -tmax
            comm_max(E.cm, pk, 1)
            tmax = -pk[0]
    return scaled_dual(Ssum, Q, dot(wa, wa, nw - 1 if S.free_intercept else nw), tmax, p, kind)


cdef inline void primal_gradient(const Examples* E, const Settings* S, const double* beta,
                                 int64_t nreg, const double* m, double* u,
                                 double* grad) noexcept nogil:
    """grad P(beta) = rho*beta - C p X^T(c y (1 - y m)_+^(p-1))  (p > 1; the X^T
    product summed over the ranks)."""
    cdef int64_t k, j
    cdef const double* y = E.y
    cdef const double* c = E.c
    cdef double v, C = S.C, p = S.p
    for k in range(E.n):
        v = 1.0 - y[k] * m[k]
        if v > 0.0 and c[k] > 0.0:
            u[k] = -C * p * c[k] * y[k] * (v if p == 2.0 else pow(v, p - 1.0))
        else:
            u[k] = 0.0
    rmatvec(E.X, E.rows, E.n, u, grad)
    comm_sum(E.cm, grad, E.X.n_weights)
    for j in range(nreg):
        grad[j] += beta[j]
