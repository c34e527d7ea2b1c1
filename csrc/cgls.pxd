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
# Two sparse mat-vecs per iteration and no copy of any row.  Returns the number
# of iterations; *optimal is set when eq. 13 holds.

from libc.stdint cimport int64_t
from csr cimport CSR, matvec, rmatvec, dot


cdef inline int cgls(const CSR* X, const int64_t* rows, int64_t n, const double* tt,
                     const double* c, double lam, double* beta, double* z, int z_given,
                     double* q, double* u, double* r, double* p, double eps, int max_iter,
                     int* optimal) noexcept nogil:
    """Run CGLS from beta (in/out); z (n) holds tt - X beta on entry if z_given,
    and the final residual on exit; q, u (n) and r, p (n_weights) are scratch."""
    cdef int64_t j, nw = X.n_weights
    cdef int it = 0
    cdef double phi1, phi1_old, phi2, phi3, phi4, gamma, omega
    if not z_given:
        matvec(X, rows, n, beta, z)
        for j in range(n):
            z[j] = tt[j] - z[j]
    for j in range(n):
        u[j] = c[j] * z[j]
    # r = X'Cz - lam beta
    rmatvec(X, rows, n, u, r)
    for j in range(nw):
        r[j] -= lam * beta[j]
        p[j] = r[j]
    phi1 = dot(r, r, nw)
    phi2 = phi1
    optimal[0] = 1 if phi1 == 0.0 else 0
    while not optimal[0] and it < max_iter:
        it += 1
        matvec(X, rows, n, p, q)
        phi3 = 0.0
        for j in range(n):
            phi3 += c[j] * q[j] * q[j]
        gamma = phi1 / (phi3 + lam * phi2)
        for j in range(nw):
            beta[j] += gamma * p[j]
        phi4 = 0.0
        for j in range(n):
            z[j] -= gamma * q[j]
            u[j] = c[j] * z[j]
            phi4 += u[j] * z[j]
        rmatvec(X, rows, n, u, r)
        for j in range(nw):
            r[j] -= lam * beta[j]
        phi1_old = phi1
        phi1 = dot(r, r, nw)
        if phi1 <= eps * eps * phi4:
            optimal[0] = 1
            break
        omega = phi1 / phi1_old
        for j in range(nw):
            p[j] = r[j] + omega * p[j]
        phi2 = dot(p, p, nw)
    return it
