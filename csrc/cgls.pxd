# CGLS for weighted, regularized least squares over a linear operator
# (csrc/cgls.pxd; shared by every solver that needs a least-squares step: the finite
# Newton steps of mfn's family and svr, mfn-ord's steps of eq. 26, lr's Newton steps,
# alm-exact's w-step).  One iteration, cgls_solve, for the serial, allreduce and
# weight-split arrangements below; its settings (CglsSettings) and work arrays
# (CglsWork) are records, the arrangement follows from settings.comm and .split.
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
# jacobi set, minv is not an input: cgls_solve fills it, in the pass that forms the
# start residual, with the damped Jacobi preconditioner of these rows (an operator
# with apply_t_sq: CSR rows), jw = jacobi_weight:
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
# forcing = eta > 0 adds an inexact-Newton forcing term: the iteration also stops, without
# setting *optimal, once ||r|| <= eta ||r_0||, r_0 the residual at entry (the
# negative gradient of the outer objective when CGLS computes a Newton step).
# Eq. 13 alone decides *optimal.
#
# forcing_guard = qtol > 0 adds the quadratic-model truncation rule of Nash & Sofer that Galli & Lin
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
# default, csrc/newton_driver.pxd).
#
# grad_rr > 0 with cert_rr: a caller whose gradient test (||r_0||^2 <= grad_rr) holds where
# its stop_rr test does not (a duality gap still to certify, csrc/_logistic.pyx) gets a step
# solved to ||r||^2 <= cert_rr, by that test alone: the forcing term and the quadratic-model
# rule give way to it (Newton dual points certify by the final residual, not by Q).
# Two products (A p, A'u) per iteration and no copy of any row.  Returns the number
# of iterations; *optimal is set when eq. 13 holds.
#
# fused_cg (linsvm's default for the binary MFN family, a departure from the paper's
# two-pass iteration; operators with `normal`, i.e. CSR rows; ignored for others):
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
# W.xd != NULL (n doubles) and W.dsum != NULL (n_weights doubles) receive the step the
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
# check eq. 13 on the true residual itself (as the finite Newton driver does: true_eq13
# in csrc/newton_driver.pxd).
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

from libc.stdint cimport int64_t
from csr cimport CSR
from csr_passes cimport scatter_blocks
from interrupt cimport Stop, stop_poll
from comm cimport Comm, comm_active
from wsplit cimport Split
from cgls_operator cimport (Operator, CglsSettings, CglsWork, csr_operator, residual,
                            residual_split)
from cgls_steps cimport (CG_SERIAL, CG_ALLREDUCE, CG_SPLIT, CgState, cg_start, cg_prepare,
                         cg_gamma, cg_move, cg_verify, cg_stops, cg_direction,
                         cg_finish_split)


cdef inline int cgls_solve(const Operator* A, const double* c, double lam, double* beta,
                           const CglsSettings* S, CglsWork* W, int* optimal,
                           double* rr0) noexcept nogil:
    """Run (preconditioned) CGLS from beta (in/out) with the term weights c and the
    regularization lam (block comment), in the arrangement S.comm and S.split give:
    serial, allreduce (W.h then holds nw + 3 doubles), or the weight split (with W.h,
    W.dsum and W.xd; beta then changes only at the end).  W: the residual z on entry
    and exit, scratch, and the optional outputs (the Jacobi minv and diag with
    S.jacobi, the step dsum and its image xd).  Returns the iterations; *optimal: 1 when
    eq. 13 holds, 2 when the gradient test at entry held (no iteration); rr0 != NULL
    receives ||r_0||^2.  Once S.stop is stopped it returns at once, *optimal unset."""
    cdef int it = 0
    cdef double gamma
    cdef CgState G
    cdef CSR Xn
    cdef Operator An
    G.mode = CG_SERIAL
    if comm_active(S.comm):
        G.mode = CG_ALLREDUCE
        if S.split != NULL and W.h != NULL and W.dsum != NULL and W.xd != NULL:
            G.mode = CG_SPLIT
    G.nr = A.nw if S.nreg < 0 else S.nreg
    G.zcz = 0.0
    G.rs = 0.0
    G.pp = 0.0
    G.n_upd = S.split.n_own if G.mode == CG_SPLIT else A.nw
    G.n_threads = A.X.n_threads if A.X != NULL else 1
    if cg_start(A, c, lam, beta, S, W, &G, optimal, rr0):
        return 0
    if G.mode == CG_SPLIT:
        G.fused = A.normal != NULL
        if A.X != NULL and scatter_blocks(A.X, A.n) == 1:
            # the iterations' X'Cq into an h kept zero on this rank's weights (cleared
            # there after each use) instead of a clear of all d entries per product
            Xn = A.X[0]
            Xn.no_clear = 1
            An = A[0]
            An.X = &Xn
            A = &An
    else:
        G.fused = S.fused_cg and W.h != NULL and A.normal != NULL
    G.recur = G.fused or G.mode != CG_SERIAL
    cg_prepare(A, c, S, W, &G)
    while not optimal[0] and it < S.cg_max_iter:
        if S.stop != NULL and stop_poll(S.stop, A.poll_rows * S.stop.per_row + A.n + G.n_upd):
            return it                       # the caller raises (the split: no gather)
        it += 1
        gamma = cg_gamma(A, c, lam, S, W, &G)
        cg_move(A, c, lam, beta, gamma, S, W, &G)
        if S.verify and G.recur and G.rr <= S.eps * S.eps * G.zcz:
            cg_verify(A, c, lam, beta, S, W, &G)
        if cg_stops(&G, S.eps, gamma, it, optimal):
            break
        cg_direction(S, W, &G, A.nw)
    if G.mode == CG_SPLIT:
        cg_finish_split(beta, S, W, A.nw)
    return it


cdef inline CglsSettings cgls_settings(double eps, double forcing, double forcing_guard,
                                       int cg_max_iter, Stop* stop,
                                       const Comm* comm) noexcept nogil:
    """Settings with eq. 13 at eps, the forcing term and its quadratic-model guard (a
    guard only, adaptive: the finite Newton drivers' arrangement), cg_max_iter, polling
    stop, over comm; everything else off (no preconditioner, not fused, verify, no
    gradient test, every weight regularized, no split): the caller sets what it uses."""
    cdef CglsSettings S
    S.eps = eps
    S.forcing = forcing
    S.forcing_guard = forcing_guard
    S.qadapt = forcing_guard > 0.0
    S.qguard = forcing_guard > 0.0
    S.cg_max_iter = cg_max_iter
    S.fused_cg = 0
    S.jacobi = 0
    S.jacobi_weight = 1.0
    S.verify = 1
    S.stop_rr = 0.0
    S.grad_rr = 0.0
    S.cert_rr = 0.0
    S.nreg = -1
    S.stop = stop
    S.comm = comm
    S.split = NULL
    return S
