# The loss model of csrc/_logistic.pyx's truncated Newton (csrc/logistic_newton.pxd's lr_loss):
# the binary and the multinomial logistic loss term by term at the current scores, the
# weights and residual of each Newton step's least-squares problem, the line search's
# values along a step, and the dual point built from the scores.
#
# Problems (LIBLINEAR's scaling; x_i includes the bias feature; U_i = C c_i with c_i the
# example's cost factor, class weight x sample weight):
#
#   binary       f(w) = 1/2 ||w||^2 + sum_i U_i l(m_i),   m_i = t_i w.x_i,  t_i = +-1,
#                l(m) = log(1 + exp(-m)),  l'(m) = -sigma(-m),  l''(m) = sigma(m) sigma(-m)
#   multinomial  f(W) = 1/2 sum_j ||w_j||^2 + sum_i U_i [lse(o_i) - o_{i,y_i}],
#                o_i = W'x_i (k scores; W is n_weights x k, row-major), lse = log sum exp,
#                gradient W + X'(U (P - Y)), P_i = softmax(o_i), Y_i the one-hot y_i,
#                Hessian block of example i: U_i x_i x_i' (x) (diag(p_i) - p_i p_i')
#
# Truncated Newton (Lin, Weng & Keerthi 2008; Galli & Lin 2022).  Each Newton step solves
# H d = -g approximately by CG.  H = I + A'CA is a regularized weighted least-squares
# normal matrix (IRLS), so the step is CGLS (cgls.pxd) on
#
#     min_beta 1/2 ||beta||^2 + 1/2 sum_terms cc_j ((A beta)_j - tt_j)^2,   seeded at beta = w,
#
# whose gradient at beta = w must be g and whose Hessian must be H:
#   binary       A = X, terms = examples, cc_i = U_i s_i (1 - s_i) with s_i = sigma(m_i), and
#                the working residual z_i = tt_i - x_i.w = t_i / s_i  (cc_i z_i = U_i sigma(-m_i) t_i)
#   multinomial  terms = (example, class); A maps W to M_i (X W)_i with M_i = I - 1 p_i'
#                (M_i' diag(p_i) M_i = diag(p_i) - p_i p_i'), cc_im = U_i p_im, and
#                z_im = [m = y_i] / p_im - 1  (M_i'(cc_i z_i) = U_i (Y_i - p_i))
# A term whose s_i (multinomial: p_{i,y_i}) is below S_FLOOR = 1e-100 takes S_FLOOR in cc and
# z: the products cc z, hence the gradient, stay exact and the Hessian weight changes by less
# than 1e-100 U_i, while z stays finite (t_i / s_i would overflow past m_i ~ -709).
# Each step's CGLS tests and the line search along it are lr_loss's (logistic_newton.pxd).

from libc.stdint cimport int32_t, int64_t
from libc.math cimport exp, log, log1p, fabs, fmax, INFINITY
from csr cimport CSR
from csr_passes cimport matvec, rmatvec
from cgls cimport Operator, csr_operator
from comm cimport Comm, comm_sum
from wsplit cimport Split
from logistic_softmax cimport SoftOp, mm_matvec, mm_rmatvec, soft_operator

cdef enum:
    BINARY = 0
    MULTINOMIAL = 1

cdef enum:
    CONVERGED = 0                  # the solve's stopping test holds
    MAX_ITER = 1                   # the iteration (or loop) cap
    NO_DESCENT = 2                 # f no longer decreases at machine precision

cdef extern from *:
    """
    #define LINSVM_LOGISTIC_S_FLOOR 1e-100
    """
    # the floor of s_i (p_{i,y_i}) in the CGLS weights (above)
    const double S_FLOOR "LINSVM_LOGISTIC_S_FLOOR"


# ------------------------------------------------------------------ the loss, row by row

cdef inline double _sig_minus(double mm, double e) noexcept nogil:
    """sigma(-mm), given e = exp(-|mm|) (no cancellation on either side)."""
    return e / (1.0 + e) if mm >= 0.0 else 1.0 / (1.0 + e)


cdef inline double _logloss(double mm, double e) noexcept nogil:
    """l(mm) = log(1 + exp(-mm)), given e = exp(-|mm|)."""
    return log1p(e) + (-mm if mm < 0.0 else 0.0)


# ------------------------------------------------------------------ the model seen by the driver

ctypedef struct Model:
    int kind                       # BINARY or MULTINOMIAL
    const CSR* X
    const int64_t* rows
    int64_t m                      # examples of this rank
    int64_t k                      # scores per example (1: binary)
    int64_t nbeta                  # weights: n_weights * k
    int64_t nreg                   # the first nreg weights are regularized (binary with a free
                                   # bias: nbeta - 1; else nbeta)
    const double* t                # binary labels +-1
    const int32_t* y               # multinomial class codes
    const double* U                # U_i = C c_i
    double* o                      # m k scores (binary: x_i.w)
    double* xi                     # m k image of the step (cgls' xd)
    double* e                      # binary: exp(-|m_i|) at the current (or trial) point
    double* P                      # multinomial: m k probabilities at the current (or trial) point
    double* lse                    # multinomial: log-sum-exp of each row there
    double* cc                     # m k CGLS weights
    double* z                      # m k CGLS residual
    SoftOp op
    const Comm* comm
    const Split* split             # binary: CGLS in the weight-split arrangement, or NULL


cdef inline double model_eval(Model* M) noexcept nogil:
    """This rank's loss sum at the scores M.o; fills e (binary) or P, lse (multinomial)."""
    cdef int64_t i, l, k = M.k
    cdef double s = 0.0, mm, mx, z
    cdef double* oi
    cdef double* pi
    if M.kind == BINARY:
        for i in range(M.m):
            mm = M.t[i] * M.o[i]
            M.e[i] = exp(-fabs(mm))
            s += M.U[i] * _logloss(mm, M.e[i])
        return s
    for i in range(M.m):
        oi = M.o + i * k
        pi = M.P + i * k
        mx = oi[0]
        for l in range(1, k):
            mx = fmax(mx, oi[l])
        z = 0.0
        for l in range(k):
            pi[l] = exp(oi[l] - mx)
            z += pi[l]
        for l in range(k):
            pi[l] /= z
        M.lse[i] = mx + log(z)
        s += M.U[i] * (M.lse[i] - oi[M.y[i]])
    return s


cdef inline void model_setup(Model* M) noexcept nogil:
    """The CGLS weights cc and residual z of the Newton model at the current point (block
    comment), from e or P."""
    cdef int64_t i, l, k = M.k
    cdef double mm, e, s, sb, sf, py
    if M.kind == BINARY:
        for i in range(M.m):
            mm = M.t[i] * M.o[i]
            e = M.e[i]
            sb = _sig_minus(mm, e)
            s = 1.0 / (1.0 + e) if mm >= 0.0 else e / (1.0 + e)
            sf = s if s > S_FLOOR else S_FLOOR
            M.cc[i] = M.U[i] * sf * sb
            M.z[i] = M.t[i] / sf
        return
    for i in range(M.m):
        for l in range(k):
            M.cc[i * k + l] = M.U[i] * M.P[i * k + l]
            M.z[i * k + l] = -1.0
        py = M.P[i * k + M.y[i]]
        if py < S_FLOOR:
            py = S_FLOOR
        M.cc[i * k + M.y[i]] = M.U[i] * py
        M.z[i * k + M.y[i]] = (1.0 - M.P[i * k + M.y[i]]) / py


cdef inline double model_slope0(const Model* M) noexcept nogil:
    """This rank's loss part of phi'(0) along the step whose image is M.xi."""
    cdef int64_t i, l, k = M.k
    cdef double s = 0.0, mm, a
    if M.kind == BINARY:
        for i in range(M.m):
            mm = M.t[i] * M.o[i]
            s -= M.U[i] * _sig_minus(mm, M.e[i]) * M.t[i] * M.xi[i]
        return s
    for i in range(M.m):
        a = -M.xi[i * k + M.y[i]]
        for l in range(k):
            a += M.P[i * k + l] * M.xi[i * k + l]
        s += M.U[i] * a
    return s


cdef inline void model_trial(Model* M, double tau, double* gh) noexcept nogil:
    """gh[0] += this rank's loss part of phi'(tau), gh[1] += of phi''(tau); the per-term values
    at tau are kept (e; P and lse) for model_accept."""
    cdef int64_t i, l, k = M.k
    cdef double g = 0.0, h = 0.0, mm, d, e, inv, mx, zs, a, b, v
    cdef double* pi
    if M.kind == BINARY:
        for i in range(M.m):
            d = M.t[i] * M.xi[i]
            mm = M.t[i] * M.o[i] + tau * d
            e = exp(-fabs(mm))
            M.e[i] = e
            inv = 1.0 / (1.0 + e)
            g -= M.U[i] * (e * inv if mm >= 0.0 else inv) * d
            h += M.U[i] * e * inv * inv * d * d
        gh[0] += g
        gh[1] += h
        return
    for i in range(M.m):
        pi = M.P + i * k
        mx = -INFINITY
        for l in range(k):
            v = M.o[i * k + l] + tau * M.xi[i * k + l]
            pi[l] = v
            mx = fmax(mx, v)
        zs = 0.0
        for l in range(k):
            pi[l] = exp(pi[l] - mx)
            zs += pi[l]
        M.lse[i] = mx + log(zs)
        a = 0.0
        b = 0.0
        for l in range(k):
            pi[l] /= zs
            v = M.xi[i * k + l]
            a += pi[l] * v
            b += pi[l] * v * v
        g += M.U[i] * (a - M.xi[i * k + M.y[i]])
        h += M.U[i] * (b - a * a)
    gh[0] += g
    gh[1] += h


cdef inline double model_accept(Model* M, double tau) noexcept nogil:
    """Move the scores by tau along the step (o += tau xi) and return this rank's loss sum
    there, from the values model_trial kept at tau."""
    cdef int64_t i, k = M.k
    cdef double s = 0.0
    if M.kind == BINARY:
        for i in range(M.m):
            M.o[i] += tau * M.xi[i]
            s += M.U[i] * _logloss(M.t[i] * M.o[i], M.e[i])
        return s
    for i in range(M.m * k):
        M.o[i] += tau * M.xi[i]
    for i in range(M.m):
        s += M.U[i] * (M.lse[i] - M.o[i * k + M.y[i]])
    return s


cdef inline void model_scores(Model* M, const double* beta) noexcept nogil:
    """M.o = the scores of beta, from scratch."""
    if M.kind == BINARY:
        matvec(M.X, M.rows, M.m, beta, M.o)
    else:
        mm_matvec(M.X, M.rows, M.m, beta, M.k, M.o)


cdef inline void model_loss_grad(Model* M, double* u, double* g) noexcept nogil:
    """g = the loss part of the gradient at the current point, over every rank (one
    allreduce): binary sum_i U_i l'(m_i) t_i x_i, multinomial X'(U (P - Y)); u: m k scratch."""
    cdef int64_t i, l, k = M.k
    cdef double mm
    if M.kind == BINARY:
        for i in range(M.m):
            mm = M.t[i] * M.o[i]
            u[i] = -M.U[i] * _sig_minus(mm, M.e[i]) * M.t[i]
        rmatvec(M.X, M.rows, M.m, u, g)
    else:
        for i in range(M.m):
            for l in range(k):
                u[i * k + l] = M.U[i] * M.P[i * k + l]
            u[i * k + M.y[i]] -= M.U[i]
        mm_rmatvec(M.X, M.rows, M.m, u, k, g, M.op.scratch)
    comm_sum(M.comm, g, M.nbeta)


cdef inline double model_dual_terms(const Model* M) noexcept nogil:
    """This rank's separable part of D at the dual point built from the current point:
    binary sum_i U_i (l(m_i) + m_i sigma(-m_i)), multinomial -sum_i U_i sum_l p_il log p_il."""
    cdef int64_t i, l, k = M.k
    cdef double s = 0.0, mm, p, ent
    if M.kind == BINARY:
        for i in range(M.m):
            mm = M.t[i] * M.o[i]
            s += M.U[i] * (_logloss(mm, M.e[i]) + mm * _sig_minus(mm, M.e[i]))
        return s
    for i in range(M.m):
        ent = 0.0
        for l in range(k):
            p = M.P[i * k + l]
            if p > 0.0:
                ent -= p * log(p)
        s += M.U[i] * ent
    return s


cdef inline Operator model_operator(Model* M) noexcept nogil:
    if M.kind == BINARY:
        return csr_operator(M.X, M.rows, M.m)
    M.op.P = M.P
    return soft_operator(M.X, M.rows, M.m, &M.op)
