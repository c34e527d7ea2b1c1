# CGLS for weighted, regularized least squares over a linear operator
# (csrc/cgls.pxd; shared by every solver that needs a least-squares step: mfn's
# binary steps, mfn-ord's steps of eq. 26, alm-exact's w-step).
#
# Problem (Keerthi & DeCoste 2005, eq. 11, with per-term weights c_j >= 0):
#
#     min_beta  lam/2 ||beta||^2 + 1/2 sum_j c_j ((A beta)_j - tt[j])^2
#
# i.e. the normal equations (lam I + A' C A) beta = A' C tt, where A is an Operator
# (below): the rows of a CSR matrix (A beta = X[rows] beta, csr_operator) or any
# other map given by its two products A p and A' u (mfn-ord's (w, b) -> x_k . w - b_s).
# The caller passes z = tt - A beta, the residual at the start (tt itself is not read).
# This is CGLS in the form of Frommer & Maass (1999, Alg. 3) as written in the paper's
# Section 4.3 and Appendix A, step 4, seeded from the incoming beta.  Rows are scaled by sqrt(c_j)
# implicitly, so with all c_j = 1 it is exactly the paper's algorithm:
#
#     z = tt - A beta,  r = A'Cz - lam beta,  p = r,  phi1 = ||r||^2
#     repeat:  q = A p;  gamma = phi1 / (q'Cq + lam ||p||^2)
#              beta += gamma p;  z -= gamma q;  r = A'Cz - lam beta
#              stop if ||r||^2 <= eps^2 z'Cz          (eq. 13, "optimality")
#              p = r + (||r||^2 / phi1_old) p
#
# With a diagonal preconditioner (minv != NULL: minv_j approximates
# 1 / (lam + sum_j c_j A_jl^2)) it is preconditioned CG on the same normal
# equations, kept in the CGLS arrangement: the residual is recomputed as
# A'Cz - lam beta from z each iteration (not updated by H p), and the stopping
# rule is eq. 13 on that true residual, so the tolerance keeps its meaning:
#
#     s = minv * r,  p = s,  rho = r's
#     repeat:  q = A p;  gamma = rho / (q'Cq + lam ||p||^2);  beta += gamma p
#              z -= gamma q;  r = A'Cz - lam beta;  stop if eq. 13 holds
#              s = minv * r;  p = s + (r's / rho_old) p
#
# With minv = NULL this is exactly the unpreconditioned algorithm above.  With
# jacobi != 0, minv is not an input: cgls fills it, in the pass that forms the
# start residual, with the damped Jacobi preconditioner of these rows (an operator
# with apply_t_sq: CSR rows)
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
#
# qtol > 0 adds the quadratic-model truncation rule of Nash & Sofer that Galli & Lin
# (IEEE TNNLS 2022, "A study on truncated Newton methods for linear classification",
# Sec. IV) recommend for Newton-CG: with Q_i the value of the quadratic model
# Q(d) = -r_0'd + 1/2 d'Hd at the i-th iterate (H = lam I + A'CA, d = beta - beta_0),
# the iteration stops, without setting *optimal, once
#
#     i (Q_{i-1} - Q_i) <= cgtol |Q_i|,    cgtol = qtol, or min(qtol, ||r_0||_{M^-1}^(1/2))
#                                          with qadapt (their superlinear choice)
#
# CG lowers Q by gamma rho / 2 at each step (rho = r's, gamma = rho / p'Hp), so
# Q_i = -1/2 sum_k gamma_k rho_k is known from the recurrence's own numbers: the rule
# costs no pass and no dot product, and every rank of a distributed solve takes it on
# the same reduced numbers.
#
# qguard != 0 makes the quadratic-model rule a guard on the forcing term instead of a
# stop of its own: the iteration then stops at ||r|| <= eta ||r_0|| only once the rule
# above holds too (it never holds at i = 1, since Q_0 = 0).  The forcing term alone can
# end a Newton step after one iteration when the gradient is dominated by a single
# direction -- on data with 1-2% positives, the bias and the mean of the negatives --
# and such steps make almost no progress on the rest (the finite Newton driver's
# default, csrc/_mfn.pyx).
#
# grad_rr > 0 with cert_rr: a caller whose gradient test (||r_0||^2 <= grad_rr) holds where
# its stop_rr test does not (a duality gap still to certify, csrc/_logistic.pyx) gets a step
# solved to ||r||^2 <= cert_rr, by that test alone: the forcing term and the quadratic-model
# rule give way to it (Newton dual points certify by the final residual, not by Q).
# Two products (A p, A'u) per iteration and no copy of any row.  Returns the number
# of iterations; *optimal is set when eq. 13 holds.
#
# fused != 0 (linsvm's default for the binary MFN family; a measured departure;
# operators with `normal`, i.e. CSR rows; ignored for others):
# one pass over the rows per iteration instead of two.  normal_matvec gives
# q = X p and h = X'C q together, each row scattered while it is still in cache,
# and the residual is updated by the recurrence r -= gamma (h + lam p) (CG on
# the normal equations, as LIBLINEAR's Newton-CG does) instead of being
# recomputed from z.  Eq. 13 still decides on the true residual: when the
# recurrence says it holds, r = A'Cz - lam beta is recomputed (one more pass) and
# the iteration goes on from that r if eq. 13 does not hold for it.  With
# verify = 0 that check is left to the caller: *optimal then means that eq. 13
# holds for the recurrence's residual (the MFN driver checks the true residual
# only when it is about to stop, not after every Newton step).
#
# stop_rr > 0: a gradient test at entry (0: none).  The entry residual r_0 = A'Cz - lam beta is the
# negative gradient of the outer objective when CGLS computes a Newton step; if
# ||r_0||^2 <= stop_rr the iteration does not start and *optimal is set to 2 (the
# caller's point is accepted as it is).  rr0 != NULL receives ||r_0||^2.
#
# xd != NULL (n doubles) and dsum != NULL (n_weights doubles) receive the step the
# iteration took and its image on these rows, accumulated as it goes:
# dsum = sum gamma_k p_k and xd = sum gamma_k q_k = A dsum, so a caller that
# needs X d for the step d need not form it again for these rows (nor take d as a
# difference of two nearby points, which loses its low digits).
#
# nreg (linsvm's free intercept, LIBLINEAR's -R): only the first nreg weights are
# regularized, lam I above becoming Lam = diag(lam, ..., lam, 0, ..., 0) with nreg
# entries lam (nreg < 0: all nw, the problem above bit for bit).  Everything reads
# the same with Lam for lam I: r = A'Cz - Lam beta, gamma = rho / (q'Cq + p'Lam p),
# minv = 1 / (Lam_jj + jw diag(A'CA)_jj) (1 / lam where both are 0: a free weight no
# active term touches, whose residual is then 0).  Lam is only positive semidefinite;
# CG on the normal equations still converges as long as A'CA is positive definite on
# the free weights' span, i.e. some active term touches the bias feature.
#
# stop != NULL: each iteration polls it (csrc/interrupt.pxd); once it is stopped the
# iteration ends at once, *optimal unset, and the caller must leave its own loops.
#
# comm (csrc/comm.pxd; NULL or the serial record: the serial iteration above, bit for
# bit): a distributed solve over row blocks.  The terms (rows of A: z, q, u, c, xd) are
# this rank's; beta, r, p, s, minv and h are replicated, the same bits on every rank.
# Every sum over the terms is completed by an allreduce, and every decision (gamma,
# eq. 13, the forcing term, the gradient test) is taken on reduced numbers, so every
# rank makes the same ones.  One allreduce per iteration, of nw + 3 doubles: the
# iteration always runs in the recurrence arrangement (as `fused`), h = A'Cq
# (A.normal when fused and available, else A.apply then A.apply_t of Cq: two passes,
# still one allreduce) packed with the local q'Cq, q'Cz and z'Cz (z before the step):
#
#     [h | q'Cq | q'Cz | z'Cz]  ->  allreduce  ->  gamma;  z'Cz after the step =
#     z'Cz - 2 gamma q'Cz + gamma^2 q'Cq  (clipped at 0: the test is then stricter)
#
# so h must hold nw + 3 doubles.  The start residual takes one allreduce of r (and one
# of diag(A'CA) with jacobi); a true-residual check of eq. 13 (verify) one more.  As
# the recurrence is what stops a distributed iteration, a caller with verify = 0 must
# check eq. 13 on the true residual itself (as the MFN driver does, binary_eq13).
#
# split (csrc/wsplit.pxd; with comm, dsum and xd): the weight-split arrangement.  Each
# weight has one owner; a rank updates only its owned entries of the step (dsum), r, s
# and p, and holds p on the weights its rows touch (T_r).  An iteration is the same
# recurrence on the same reduced numbers:
#
#     q = A p (local; p on T_r);  h = A'Cq (local, on T_r);  h on the owned entries
#     summed over the ranks in rank order (split_reduce: only entries of weights
#     another rank touches travel);  [q'Cq | q'Cz | z'Cz | p'Lam p] -> allreduce;
#     owners: dsum += gamma p, r -= gamma (h + Lam p), s = minv r;
#     [r'r | r's] -> allreduce;  the tests;  owners: p = s + (r's / rho) p;
#     p on T_r from the owners (split_scatter)
#
# so the d-sized allreduce becomes two sparse exchanges and two allreduces of a few
# doubles.  beta is not touched during the iterations: at the end dsum is gathered on
# every rank (split_gather, once per solve) and beta += dsum, the same bits everywhere
# (the outer loop keeps replicated weights); or, split.outer (the caller's Newton loop
# keeps its vectors valid only on the owned weights and T_r, split.mine), dsum is
# scattered to T_r and beta += dsum there.  The start residual and the Jacobi diagonal
# are reduced the same sparse way.

# The operator.  Its products are called once or twice per iteration through
# function pointers (never per row: each product is one pass over the rows, in
# csr.pxd's kernels or the caller's), so one CGLS serves every operator at the cost
# of an indirect call per product.  An Operator maps nw weights to n terms:
#     apply(A, p, q)            q = A p                         (n doubles out)
#     apply_t(A, u, r)          r = A' u                        (nw doubles out)
#     normal(A, p, c, q, u, h)  q = A p and h = A'C q in one pass; returns q'Cq
#                               (u: n doubles of scratch; NULL: no fused iterations)
#     apply_t_sq(A, u, c, r, d) r = A' u and d = diag(A'CA) in one pass
#                               (NULL: no built-in Jacobi preconditioner)
# X, rows: the CSR rows of csr_operator; ctx: anything else an operator needs.
# poll_rows: rows a product reads (stop polling's measure of work).

from libc.stdint cimport int64_t
from libc.string cimport memset
from libc.math cimport fmax, fmin, sqrt
from csr cimport CSR, matvec, rmatvec, rmatvec_col_sq, normal_matvec, dot, scatter_blocks
from interrupt cimport Stop, stop_poll
from comm cimport Comm, comm_active, comm_sum
from wsplit cimport Split, split_reduce, split_scatter, split_gather, split_dot


cdef struct Operator

ctypedef void (*op_map)(const Operator* A, const double* x, double* out) noexcept nogil
ctypedef double (*op_normal)(const Operator* A, const double* p, const double* c, double* q,
                             double* u, double* h) noexcept nogil
ctypedef void (*op_map_sq)(const Operator* A, const double* u, const double* c, double* r,
                           double* diag) noexcept nogil

cdef struct Operator:
    int64_t n                      # terms (rows of A)
    int64_t nw                     # weights (columns of A)
    int64_t poll_rows              # CSR rows one product reads
    op_map apply                   # q = A p
    op_map apply_t                 # r = A' u
    op_normal normal               # q = A p, h = A'C q, returns q'Cq; or NULL
    op_map_sq apply_t_sq           # r = A' u, diag = diag(A'CA); or NULL
    const CSR* X
    const int64_t* rows
    const void* ctx


cdef inline void _csr_apply(const Operator* A, const double* p, double* q) noexcept nogil:
    matvec(A.X, A.rows, A.n, p, q)


cdef inline void _csr_apply_t(const Operator* A, const double* u, double* r) noexcept nogil:
    rmatvec(A.X, A.rows, A.n, u, r)


cdef inline double _csr_normal(const Operator* A, const double* p, const double* c, double* q,
                               double* u, double* h) noexcept nogil:
    return normal_matvec(A.X, A.rows, A.n, p, c, q, u, h)


cdef inline void _csr_apply_t_sq(const Operator* A, const double* u, const double* c, double* r,
                                 double* diag) noexcept nogil:
    rmatvec_col_sq(A.X, A.rows, A.n, u, c, r, diag)


cdef inline Operator csr_operator(const CSR* X, const int64_t* rows, int64_t n) noexcept nogil:
    """The operator beta -> X[rows] beta of the n CSR rows `rows` (fused and Jacobi
    capable)."""
    cdef Operator A
    A.n = n
    A.nw = X.n_weights
    A.poll_rows = n
    A.apply = _csr_apply
    A.apply_t = _csr_apply_t
    A.normal = _csr_normal
    A.apply_t_sq = _csr_apply_t_sq
    A.X = X
    A.rows = rows
    A.ctx = NULL
    return A


cdef inline void residual(const Operator* A, const double* c, const double* z, double lam,
                          const double* beta, double* u, double* r, double* minv,
                          double* diag=NULL, double jw=1.0, const Comm* comm=NULL,
                          int64_t nreg=-1) noexcept nogil:
    """r = A'Cz - lam beta (u = C z: n doubles of scratch); nreg >= 0: lam on the first
    nreg weights only (block comment).  With minv != NULL (A must
    have apply_t_sq), also minv = 1 / (lam + jw diag(A'CA)) from the same pass over the
    rows, and (diag != NULL) diag = diag(A'CA).  comm: A'Cz (and diag) summed over the
    ranks (one allreduce each; nothing when serial)."""
    cdef int64_t j, nr = A.nw if nreg < 0 else nreg
    for j in range(A.n):
        u[j] = c[j] * z[j]
    if minv != NULL:
        if diag == NULL:
            diag = minv
        A.apply_t_sq(A, u, c, r, diag)
        comm_sum(comm, diag, A.nw)
        for j in range(nr):
            minv[j] = 1.0 / (lam + jw * diag[j])
        for j in range(nr, A.nw):
            minv[j] = 1.0 / (jw * diag[j]) if diag[j] > 0.0 else 1.0 / lam
    else:
        A.apply_t(A, u, r)
    comm_sum(comm, r, A.nw)
    for j in range(nr):
        r[j] -= lam * beta[j]


cdef inline double _next_direction(const double* r, double* s, double* p, const double* minv,
                                  double rho, int64_t nw) noexcept nogil:
    """The next search direction of (preconditioned) CG: s = minv * r (s is r itself
    without a preconditioner), p = s + (r's / rho) p; returns the new rho = r's."""
    cdef int64_t j
    cdef double rho_new, omega
    if minv != NULL:
        for j in range(nw):
            s[j] = minv[j] * r[j]
    rho_new = dot(r, s, nw)
    omega = rho_new / rho
    for j in range(nw):
        p[j] = s[j] + omega * p[j]
    return rho_new


cdef inline int _entry_tests(double rr, double rho, double* rr0, double stop_rr, double eta,
                             int qadapt, double* forcing, double* cgtol,
                             int* optimal) noexcept nogil:
    """The tests on a CGLS's entry residual (block comment): rr0 <- rr = ||r_0||^2; the
    caller's threshold (rr <= stop_rr: optimal = 2, return 1, no iteration); else the
    forcing threshold eta^2 rr, optimal = 1 for a zero residual, and the adaptive
    quadratic-model tolerance min(qtol, ||r_0||_{M^-1}^(1/2)) (rho = r_0'M^-1 r_0)."""
    if rr0 != NULL:
        rr0[0] = rr
    if stop_rr > 0.0 and rr <= stop_rr:
        optimal[0] = 2
        return 1
    forcing[0] = eta * eta * rr
    optimal[0] = 1 if rr == 0.0 else 0
    if qadapt and cgtol[0] > 0.0:
        cgtol[0] = fmin(cgtol[0], sqrt(sqrt(rho)))
    return 0


cdef inline int _stops(double rr, double zcz, double eps, double forcing, double gamma,
                       double rho, int it, double cgtol, int qguard, double* qsum,
                       int* optimal) noexcept nogil:
    """CGLS's stopping tests after an iteration (block comment): eq. 13
    (rr <= eps^2 z'Cz: optimal), the forcing term, and the quadratic-model rule on the
    running sum qsum (-2 Q_it, updated here) -- with qguard, as the forcing term's guard
    only.  1: stop."""
    cdef int quad
    if rr <= eps * eps * zcz:
        optimal[0] = 1
        return 1
    qsum[0] += gamma * rho
    quad = cgtol > 0.0 and it * gamma * rho <= cgtol * qsum[0]
    if rr <= forcing:
        return 1 if (quad or not qguard) else 0
    return 1 if (quad and not qguard) else 0


cdef inline double _products(const Operator* A, const double* p, const double* c,
                            const double* z, double* q, double* u, double* h, int64_t n,
                            int fused, double* qcz) noexcept nogil:
    """One CGLS iteration's products: q = A p and h = A'C q (fused: in one pass, A.normal;
    else apply, then apply_t of u = C q); returns q'Cq and sets qcz = q'Cz."""
    cdef int64_t j
    cdef double qcq = 0.0, s = 0.0
    if fused:
        qcq = A.normal(A, p, c, q, u, h)
    else:
        A.apply(A, p, q)
        for j in range(n):
            u[j] = c[j] * q[j]
            qcq += u[j] * q[j]
        A.apply_t(A, u, h)
    for j in range(n):
        s += c[j] * q[j] * z[j]
    qcz[0] = s
    return qcq


cdef inline int _cgls_dist(const Operator* A, const double* c, double lam, double* beta,
                           double* z, double* q, double* u, double* r, double* p, double* s,
                           double* minv, double eps, double forcing, int max_iter, int* optimal,
                           Stop* stop, int fused, double* h, double* dsum, double* xd,
                           int verify, double rho, const Comm* comm,
                           int64_t nr, double cgtol=0.0, int qguard=0) noexcept nogil:
    """cgls's iterations when distributed (block comment): r, p, s, rho from cgls's start
    (r reduced); one allreduce of [h | q'Cq | q'Cz | z'Cz] per iteration; lam on the
    first nr weights.  cgtol > 0: the quadratic-model rule (block comment; qguard: as the
    forcing term's guard)."""
    cdef int64_t j, n = A.n, nw = A.nw
    cdef int it = 0
    cdef double pp, qcq, qcz, zcz, zl = 0.0, gamma, rr, qsum = 0.0
    for j in range(n):
        zl += c[j] * z[j] * z[j]
    if xd != NULL:
        memset(xd, 0, n * sizeof(double))
        memset(dsum, 0, nw * sizeof(double))
    while not optimal[0] and it < max_iter:
        if stop != NULL and stop_poll(stop, A.poll_rows * stop.per_row + n + nw):
            break
        it += 1
        qcq = _products(A, p, c, z, q, u, h, n, fused, &qcz)
        h[nw] = qcq
        h[nw + 1] = qcz
        h[nw + 2] = zl
        comm_sum(comm, h, nw + 3)
        qcq = h[nw]
        qcz = h[nw + 1]
        pp = dot(p, p, nr)
        gamma = rho / (qcq + lam * pp)
        # z'Cz after the step, from the reduced numbers (block comment)
        zcz = fmax(h[nw + 2] - 2.0 * gamma * qcz + gamma * gamma * qcq, 0.0)
        for j in range(nw):
            beta[j] += gamma * p[j]
            if xd != NULL:
                dsum[j] += gamma * p[j]
        zl = 0.0
        for j in range(n):
            z[j] -= gamma * q[j]
            zl += c[j] * z[j] * z[j]
            if xd != NULL:
                xd[j] += gamma * q[j]
        for j in range(nr):                     # r = A'Cz - lam beta, by recurrence
            r[j] -= gamma * (h[j] + lam * p[j])
        for j in range(nr, nw):
            r[j] -= gamma * h[j]
        rr = dot(r, r, nw)
        if verify and rr <= eps * eps * zcz:
            # eq. 13 decides on the true residual (and on the exact z'Cz: one allreduce)
            for j in range(n):
                u[j] = c[j] * z[j]
            A.apply_t(A, u, h)
            h[nw] = zl
            comm_sum(comm, h, nw + 1)
            for j in range(nw):
                r[j] = h[j] - (lam * beta[j] if j < nr else 0.0)
            zcz = h[nw]
            rr = dot(r, r, nw)
        if _stops(rr, zcz, eps, forcing, gamma, rho, it, cgtol, qguard, &qsum, optimal):
            break
        rho = _next_direction(r, s, p, minv, rho, nw)
    return it


cdef inline void _residual_split(const Operator* A, const double* c, const double* z, double lam,
                                 const double* beta, double* u, double* r, double* minv,
                                 double* diag, double jw, const Split* S,
                                 int64_t nr) noexcept nogil:
    """residual's split form (block comment): r = A'Cz - Lam beta, and with minv != NULL
    the Jacobi minv, valid on this rank's owned weights."""
    cdef int64_t i, j
    for j in range(A.n):
        u[j] = c[j] * z[j]
    if minv != NULL:
        if diag == NULL:
            diag = minv
        A.apply_t_sq(A, u, c, r, diag)
        split_reduce(S, diag)
        for i in range(S.n_own):
            j = S.own[i]
            if j < nr:
                minv[j] = 1.0 / (lam + jw * diag[j])
            else:
                minv[j] = 1.0 / (jw * diag[j]) if diag[j] > 0.0 else 1.0 / lam
    else:
        A.apply_t(A, u, r)
    split_reduce(S, r)
    for i in range(S.n_own):
        j = S.own[i]
        if j < nr:
            r[j] -= lam * beta[j]


cdef inline void _split_update(const Split* S, double gamma, double lam, const double* h,
                               double* dsum, double* r, double* s, const double* p,
                               const double* minv, int64_t nr, double* red) noexcept nogil:
    """The owners' step (block comment): dsum += gamma p, r -= gamma (h + Lam p),
    s = minv r; red[0:2] = this rank's parts of r'r and r's."""
    cdef int64_t i, j
    cdef double rr = 0.0, rs = 0.0
    for i in range(S.n_own):
        j = S.own[i]
        dsum[j] += gamma * p[j]
        r[j] -= gamma * (h[j] + lam * p[j]) if j < nr else gamma * h[j]
        if minv != NULL:
            s[j] = minv[j] * r[j]
        rr += r[j] * r[j]
        rs += r[j] * s[j]
    red[0] = rr
    red[1] = rs


cdef inline int _cgls_split(const Operator* A, const double* c, double lam, double* beta,
                            double* z, double* q, double* u, double* r, double* p, double* s,
                            double* minv, double eps, double eta, int max_iter, int* optimal,
                            Stop* stop, int jacobi, double* h, double* dsum, double* xd,
                            int verify, double* diag, double jw, double stop_rr, double* rr0,
                            const Comm* comm, int64_t nr, double qtol, int qadapt,
                            int qguard, const Split* S) noexcept nogil:
    """cgls in the weight-split arrangement (block comment); the same arguments."""
    cdef int64_t i, j, n = A.n, nw = A.nw
    cdef int it = 0
    cdef double red[4]
    cdef double rho, rr, qcq, qcz, zcz, zl = 0.0, gamma, forcing, cgtol = qtol, qsum = 0.0
    cdef CSR Xn
    cdef Operator An
    if minv == NULL:
        s = r
    _residual_split(A, c, z, lam, beta, u, r, minv if jacobi else NULL, diag, jw, S, nr)
    if A.X != NULL and scatter_blocks(A.X, n) == 1:
        # the iterations' X'Cq into an h kept zero on this rank's weights (cleared there
        # after each use) instead of a clear of all d entries per product (csr.pxd)
        Xn = A.X[0]
        Xn.no_clear = 1
        An = A[0]
        An.X = &Xn
        A = &An
    for i in range(S.n_mine):
        h[S.mine[i]] = 0.0
    for i in range(S.n_own):
        j = S.own[i]
        if minv != NULL:
            s[j] = minv[j] * r[j]
        p[j] = s[j]
        dsum[j] = 0.0
    red[0] = split_dot(S, r, r, nw)
    red[1] = split_dot(S, r, s, nw)
    comm_sum(comm, red, 2)
    rr = red[0]
    rho = red[1]
    if _entry_tests(rr, rho, rr0, stop_rr, eta, qadapt, &forcing, &cgtol, optimal):
        return 0
    for j in range(n):
        zl += c[j] * z[j] * z[j]
    memset(xd, 0, n * sizeof(double))
    split_scatter(S, p)
    while not optimal[0] and it < max_iter:
        if stop != NULL and stop_poll(stop, A.poll_rows * stop.per_row + n + S.n_own):
            return it                           # the caller raises: no gather
        it += 1
        qcq = _products(A, p, c, z, q, u, h, n, A.normal != NULL, &qcz)    # h on T_r
        split_reduce(S, h)
        red[0] = qcq
        red[1] = qcz
        red[2] = zl
        red[3] = split_dot(S, p, p, nr)
        comm_sum(comm, red, 4)
        gamma = rho / (red[0] + lam * red[3])
        zcz = fmax(red[2] - 2.0 * gamma * red[1] + gamma * gamma * red[0], 0.0)
        zl = 0.0
        for j in range(n):
            z[j] -= gamma * q[j]
            zl += c[j] * z[j] * z[j]
            xd[j] += gamma * q[j]
        _split_update(S, gamma, lam, h, dsum, r, s, p, minv, nr, red)
        for i in range(S.n_mine):
            h[S.mine[i]] = 0.0
        comm_sum(comm, red, 2)
        rr = red[0]
        if verify and rr <= eps * eps * zcz:
            # eq. 13 decides on the true residual A'Cz - Lam (beta + dsum)
            for j in range(n):
                u[j] = c[j] * z[j]
            A.apply_t(A, u, h)
            split_reduce(S, h)
            for i in range(S.n_own):
                j = S.own[i]
                r[j] = h[j] - (lam * (beta[j] + dsum[j]) if j < nr else 0.0)
                if minv != NULL:
                    s[j] = minv[j] * r[j]
            for i in range(S.n_mine):
                h[S.mine[i]] = 0.0
            red[0] = split_dot(S, r, r, nw)
            red[1] = split_dot(S, r, s, nw)
            red[2] = zl
            comm_sum(comm, red, 3)
            rr = red[0]
            zcz = red[2]
        if _stops(rr, zcz, eps, forcing, gamma, rho, it, cgtol, qguard, &qsum, optimal):
            break
        gamma = red[1] / rho                    # omega of _next_direction
        rho = red[1]
        for i in range(S.n_own):
            j = S.own[i]
            p[j] = s[j] + gamma * p[j]
        split_scatter(S, p)
    if S.outer:                                 # the step where this rank's rows need it
        split_scatter(S, dsum)
        for i in range(S.n_mine):
            j = S.mine[i]
            beta[j] += dsum[j]
        return it
    split_gather(S, dsum)
    for j in range(nw):
        beta[j] += dsum[j]
    return it


cdef inline int cgls(const Operator* A, const double* c, double lam, double* beta, double* z,
                     double* q, double* u, double* r, double* p, double* s, double* minv,
                     double eps, double eta, int max_iter, int* optimal, Stop* stop,
                     int fused=0, double* h=NULL, int jacobi=0, double* dsum=NULL,
                     double* xd=NULL, int verify=1, double* diag=NULL, double jw=1.0,
                     double stop_rr=0.0, double* rr0=NULL, const Comm* comm=NULL,
                     int64_t nreg=-1, double qtol=0.0, int qadapt=0,
                     const Split* split=NULL, int qguard=0, double grad_rr=0.0,
                     double cert_rr=0.0) noexcept nogil:
    """Run (preconditioned) CGLS from beta (in/out); z (n) holds tt - A beta on entry
    and the final residual on exit; q, u (n) and r, p, s (nw) are scratch (s unused
    without minv); h (nw) is scratch for fused (A.normal needed, else ignored).
    jacobi (A.apply_t_sq needed): minv (nw, not NULL) is an output, the (damped, jw)
    Jacobi preconditioner, and so is diag(A'CA) if diag != NULL (for a caller that
    updates it as rows come and go); without jacobi, minv is an input or NULL.
    dsum, xd (both or neither): the step and its image (block comment); verify: see
    the block comment on fused; stop_rr, rr0: the gradient test at entry (block comment);
    stop: polled once per iteration, or NULL.  comm: a distributed solve (block comment;
    h then holds nw + 3 doubles and is required).  nreg: lam on the first nreg weights
    only (< 0: all; block comment).  qtol, qadapt: the quadratic-model truncation rule
    (block comment; qtol 0: off); qguard: that rule only guards the forcing term.
    grad_rr, cert_rr: the certifying step (block comment; not with split).
    split: the weight-split arrangement (block comment; with comm, h, dsum and xd; beta
    then changes only at the end)."""
    cdef int64_t j, n = A.n, nw = A.nw, nr = nw if nreg < 0 else nreg
    cdef int it = 0
    cdef double rho, pp, qcq, zcz, gamma, rr, forcing, cgtol = qtol, qsum = 0.0
    cdef int dist = comm_active(comm)
    if dist and split != NULL and h != NULL and dsum != NULL and xd != NULL:
        return _cgls_split(A, c, lam, beta, z, q, u, r, p, s, minv, eps, eta, max_iter,
                           optimal, stop, jacobi, h, dsum, xd, verify, diag, jw, stop_rr, rr0,
                           comm, nr, qtol, qadapt, qguard, split)
    residual(A, c, z, lam, beta, u, r, minv if jacobi else NULL, diag, jw, comm, nr)
    if minv != NULL:
        for j in range(nw):
            s[j] = minv[j] * r[j]
    else:
        s = r
    for j in range(nw):
        p[j] = s[j]
    rho = dot(r, s, nw)
    rr = dot(r, r, nw)
    if _entry_tests(rr, rho, rr0, stop_rr, eta, qadapt, &forcing, &cgtol, optimal):
        return 0
    if grad_rr > 0.0 and rr <= grad_rr:         # the certifying step
        forcing = cert_rr
        cgtol = 0.0
        qguard = 0
    if h == NULL or A.normal == NULL:
        fused = 0
    if dist:
        return _cgls_dist(A, c, lam, beta, z, q, u, r, p, s, minv, eps, forcing, max_iter,
                          optimal, stop, fused, h, dsum, xd, verify, rho, comm, nr, cgtol,
                          qguard)
    if xd != NULL:
        memset(xd, 0, n * sizeof(double))
        memset(dsum, 0, nw * sizeof(double))
    while not optimal[0] and it < max_iter:
        if stop != NULL and stop_poll(stop, A.poll_rows * stop.per_row + n + nw):
            break
        it += 1
        if fused:
            qcq = A.normal(A, p, c, q, u, h)    # q = A p, h = A'C q
        else:
            A.apply(A, p, q)
            qcq = 0.0
            for j in range(n):
                qcq += c[j] * q[j] * q[j]
        pp = dot(p, p, nr)
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
            for j in range(nr):                 # r = A'Cz - lam beta, by recurrence
                r[j] -= gamma * (h[j] + lam * p[j])
            for j in range(nr, nw):
                r[j] -= gamma * h[j]
        else:
            residual(A, c, z, lam, beta, u, r, NULL, NULL, 1.0, NULL, nr)
        rr = dot(r, r, nw)
        if fused and verify and rr <= eps * eps * zcz:
            # eq. 13 decides on the true residual, not the recurrence's
            residual(A, c, z, lam, beta, u, r, NULL, NULL, 1.0, NULL, nr)
            rr = dot(r, r, nw)
        if _stops(rr, zcz, eps, forcing, gamma, rho, it, cgtol, qguard, &qsum, optimal):
            break
        rho = _next_direction(r, s, p, minv, rho, nw)
    return it
