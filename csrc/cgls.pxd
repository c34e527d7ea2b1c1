# CGLS for weighted, regularized least squares over a list of CSR rows
# (csrc/cgls.pxd; shared by every solver that needs a least-squares step).
#
# Problem (Keerthi & DeCoste 2005, eq. 11, with per-example weights c_j >= 0):
#
#     min_beta  lam/2 ||beta||^2 + 1/2 sum_j c_j (x_{rows[j]} . beta - tt[j])^2
#
# i.e. the normal equations (lam I + X' C X) beta = X' C tt.  This is CGLS in the
# form of Frommer & Maass (1999, Alg. 3) as written in the paper's Section 4.3 and
# Appendix A, step 4, seeded from the incoming beta.  Rows are scaled by sqrt(c_j)
# implicitly, so with all c_j = 1 it is exactly the paper's algorithm:
#
#     z = tt - X beta,  r = X'Cz - lam beta,  p = r,  phi1 = ||r||^2
#     repeat:  q = X p;  gamma = phi1 / (q'Cq + lam ||p||^2)
#              beta += gamma p;  z -= gamma q;  r = X'Cz - lam beta
#              stop if ||r||^2 <= eps^2 z'Cz          (eq. 13, "optimality")
#              p = r + (||r||^2 / phi1_old) p
#
# With a diagonal preconditioner (minv != NULL: minv_j approximates
# 1 / (lam + sum_j c_j X_jl^2)) it is preconditioned CG on the same normal
# equations, kept in the CGLS arrangement: the residual is recomputed as
# X'Cz - lam beta from z each iteration (not updated by H p), and the stopping
# rule is eq. 13 on that true residual, so the tolerance keeps its meaning:
#
#     s = minv * r,  p = s,  rho = r's
#     repeat:  q = X p;  gamma = rho / (q'Cq + lam ||p||^2);  beta += gamma p
#              z -= gamma q;  r = X'Cz - lam beta;  stop if eq. 13 holds
#              s = minv * r;  p = s + (r's / rho_old) p
#
# With minv = NULL this is exactly the unpreconditioned algorithm above.  With
# jacobi != 0, minv is not an input: cgls fills it, in the pass that forms the
# start residual, with the damped Jacobi preconditioner of these rows
#
#     minv = 1 / (lam + jw diag(X'CX)),   0 < jw <= 1,
#
# jw = 1 being plain Jacobi, 1 / diag(lam I + X'CX).  In LIBLINEAR's scaling
# (H = I + 2C X'CX) this is M = (1 - jw) I + jw diag(H), the mix of the Jacobi
# diagonal with the identity proposed by Hsia, Chiang & Lin (ACML 2018, PMLR 95,
# "Preconditioned conjugate gradient methods in truncated Newton frameworks for
# large-scale linear classification") because plain Jacobi can leave the system
# worse conditioned than no preconditioner at all.
#
# eta > 0 adds an inexact-Newton forcing term: the iteration also stops, without
# setting *optimal, once ||r|| <= eta ||r_0||, r_0 the residual at entry (the
# negative gradient of the outer objective when CGLS computes a Newton step).
# Eq. 13 alone decides *optimal.
# Two sparse mat-vecs per iteration and no copy of any row.  Returns the number
# of iterations; *optimal is set when eq. 13 holds.
#
# fused != 0 (linsvm's default for the binary MFN family; a measured departure):
# one pass over the rows per iteration instead of two.  normal_matvec gives
# q = X p and h = X'C q together, each row scattered while it is still in cache,
# and the residual is updated by the recurrence r -= gamma (h + lam p) (CG on
# the normal equations, as LIBLINEAR's Newton-CG does) instead of being
# recomputed from z.  Eq. 13 still decides on the true residual: when the
# recurrence says it holds, r = X'Cz - lam beta is recomputed (one more pass) and
# the iteration goes on from that r if eq. 13 does not hold for it.  With
# verify = 0 that check is left to the caller: *optimal then means that eq. 13
# holds for the recurrence's residual (the MFN driver checks the true residual
# only when it is about to stop, not after every Newton step).
#
# stop_rr > 0: a gradient test at entry (0: none).  The entry residual r_0 = X'Cz - lam beta is the
# negative gradient of the outer objective when CGLS computes a Newton step; if
# ||r_0||^2 <= stop_rr the iteration does not start and *optimal is set to 2 (the
# caller's point is accepted as it is).  rr0 != NULL receives ||r_0||^2.
#
# xd != NULL (n doubles) and dsum != NULL (n_weights doubles) receive the step the
# iteration took and its image on these rows, accumulated as it goes:
# dsum = sum gamma_k p_k and xd = sum gamma_k q_k = X[rows] dsum, so a caller that
# needs X d for the step d need not form it again for these rows (nor take d as a
# difference of two nearby points, which loses its low digits).
#
# stop != NULL: each iteration polls it (csrc/interrupt.pxd); once it is stopped the
# iteration ends at once, *optimal unset, and the caller must leave its own loops.

from libc.stdint cimport int64_t
from libc.string cimport memset
from csr cimport CSR, matvec, rmatvec, rmatvec_col_sq, normal_matvec, dot
from interrupt cimport Stop, stop_poll


cdef inline void residual(const CSR* X, const int64_t* rows, int64_t n, const double* c,
                          const double* z, double lam, const double* beta, double* u, double* r,
                          double* minv, double* diag=NULL, double jw=1.0) noexcept nogil:
    """r = X'Cz - lam beta (u = C z: n doubles of scratch).  With minv != NULL, also
    minv = 1 / (lam + jw diag(X'CX)) from the same pass over the rows, and
    (diag != NULL) diag = diag(X'CX)."""
    cdef int64_t j
    for j in range(n):
        u[j] = c[j] * z[j]
    if minv != NULL:
        if diag == NULL:
            diag = minv
        rmatvec_col_sq(X, rows, n, u, c, r, diag)
        for j in range(X.n_weights):
            minv[j] = 1.0 / (lam + jw * diag[j])
    else:
        rmatvec(X, rows, n, u, r)
    for j in range(X.n_weights):
        r[j] -= lam * beta[j]


cdef inline int cgls(const CSR* X, const int64_t* rows, int64_t n, const double* tt,
                     const double* c, double lam, double* beta, double* z, int z_given,
                     double* q, double* u, double* r, double* p, double* s, double* minv,
                     double eps, double eta, int max_iter, int* optimal, int fused=0,
                     double* h=NULL, int jacobi=0, double* dsum=NULL, double* xd=NULL,
                     int verify=1, double* diag=NULL, double jw=1.0, double stop_rr=0.0,
                     double* rr0=NULL, Stop* stop=NULL) noexcept nogil:
    """Run (preconditioned) CGLS from beta (in/out); z (n) holds tt - X beta on entry
    if z_given, and the final residual on exit; q, u (n) and r, p, s (n_weights)
    are scratch (s unused without minv); h (n_weights) is scratch for fused.
    jacobi: minv (n_weights, not NULL) is an output, the (damped, jw) Jacobi
    preconditioner, and so is diag(X'CX) if diag != NULL (for a caller that updates
    it as rows come and go).
    dsum, xd (both or neither): the step and its image (block comment); verify: see
    the block comment on fused; stop_rr, rr0: the gradient test at entry (block comment);
    stop: polled once per iteration, or NULL."""
    cdef int64_t j, nw = X.n_weights
    cdef int it = 0
    cdef double rho, rho_old, pp, qcq, zcz, gamma, omega, rr, forcing
    if not z_given:
        matvec(X, rows, n, beta, z)
        for j in range(n):
            z[j] = tt[j] - z[j]
    residual(X, rows, n, c, z, lam, beta, u, r, minv if jacobi else NULL, diag, jw)
    if minv != NULL:
        for j in range(nw):
            s[j] = minv[j] * r[j]
    else:
        s = r
    for j in range(nw):
        p[j] = s[j]
    rho = dot(r, s, nw)
    rr = dot(r, r, nw)
    if rr0 != NULL:
        rr0[0] = rr
    if stop_rr > 0.0 and rr <= stop_rr:
        optimal[0] = 2
        return 0
    forcing = eta * eta * rr
    optimal[0] = 1 if rr == 0.0 else 0
    if h == NULL:
        fused = 0
    if xd != NULL:
        memset(xd, 0, n * sizeof(double))
        memset(dsum, 0, nw * sizeof(double))
    while not optimal[0] and it < max_iter:
        if stop != NULL and stop_poll(stop, n * stop.per_row + nw):
            break
        it += 1
        if fused:
            qcq = normal_matvec(X, rows, n, p, c, q, u, h)     # q = X p, h = X'C q
        else:
            matvec(X, rows, n, p, q)
            qcq = 0.0
            for j in range(n):
                qcq += c[j] * q[j] * q[j]
        pp = dot(p, p, nw)
        gamma = rho / (qcq + lam * pp)
        for j in range(nw):
            beta[j] += gamma * p[j]
            if xd != NULL:                      # the step, as it is taken
                dsum[j] += gamma * p[j]
        zcz = 0.0
        for j in range(n):
            z[j] -= gamma * q[j]
            zcz += c[j] * z[j] * z[j]
            if xd != NULL:                      # and its image on these rows
                xd[j] += gamma * q[j]
        if fused:
            for j in range(nw):                 # r = X'Cz - lam beta, by recurrence
                r[j] -= gamma * (h[j] + lam * p[j])
        else:
            residual(X, rows, n, c, z, lam, beta, u, r, NULL)
        rr = dot(r, r, nw)
        if fused and verify and rr <= eps * eps * zcz:
            # eq. 13 decides on the true residual, not the recurrence's
            residual(X, rows, n, c, z, lam, beta, u, r, NULL)
            rr = dot(r, r, nw)
        if rr <= eps * eps * zcz:
            optimal[0] = 1
            break
        if rr <= forcing:
            break
        if minv != NULL:
            for j in range(nw):
                s[j] = minv[j] * r[j]
        rho_old = rho
        rho = dot(r, s, nw)
        omega = rho / rho_old
        for j in range(nw):
            p[j] = s[j] + omega * p[j]
    return it
