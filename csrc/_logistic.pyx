# L2-regularized logistic regression: binary (LIBLINEAR -s 0 and -s 7's problem) and
# multinomial (softmax), by truncated Newton over the shared CGLS (csrc/cgls.pxd), and
# the binary dual by coordinate descent with an inner Newton step (Yu, Huang & Lin 2011).
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
# CGLS runs with eq. 13 off (eps 0: its ||z||_C scale means nothing here); it stops by its
# forcing term (||r|| <= eta ||g||), or by the quadratic-model rule of Galli & Lin (cgls.pxd,
# qtol), or at the cap.  It hands back the step d and its image A d accumulated as it goes
# (dsum, xd): for the binary problem A d = X d, and for the multinomial one M_i (X d)_i differs
# from (X d)_i by a constant across the classes of each row, which the softmax loss does not
# see, so the line search needs no pass over the data.
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
# That bound is loose by H's conditioning (a9a, C = 1: 3% certified where f - f* is 6e-4), and
# a better dual point comes with each Newton step (binary problem): linearize
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
# one such constraint per class; linsvm.solvers.logistic builds its feasible point (a shift
# of every row's scores by one vector, chosen so that the constraints hold).
#
# Distributed over row blocks (csrc/comm.pxd): each rank holds its block of the examples and
# the same w.  CGLS takes one allreduce of nbeta + 3 doubles per iteration (cgls.pxd); each
# line-search trial one of 2 doubles; f, phi'(0), the certificate's sums and ||g(0)|| one each
# per use.  Every decision is taken on reduced numbers, so every rank keeps the same w.
#
# Inputs are addressed through `rows`; t / codes and the costs are per position in rows.
# The Python entries allocate every array; nothing in the nogil code allocates or raises.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset
from libc.math cimport exp, log, log1p, fabs, fmax, fmin, sqrt, isfinite, INFINITY, NAN
from cython.parallel cimport prange, parallel, threadid
import numpy as np
cimport numpy as cnp

cnp.import_array()
from csr cimport (vdot, CSR, make_csr, check_rows, matvec, rmatvec, dot, dot_row,
                 axpy_row, sq_norm_row, blocks_for, entry_threads, dot_row_span, axpy_row_span,
                 LINSVM_PREFETCH)
from cgls cimport Operator, csr_operator, cgls
from mfn_shared cimport entry_csr
from rng cimport shuffle
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise, stop_request
from comm cimport Comm, comm_from, comm_active, comm_sum, comm_sum1
from wsplit cimport Split, split_from
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC

cdef enum:
    CONVERGED = 0                  # the gradient test and the gap test hold
    MAX_ITER = 1                   # the Newton iteration cap
    NO_DESCENT = 2                 # f no longer decreases at machine precision

cdef enum:
    BINARY = 0
    MULTINOMIAL = 1

cdef enum:
    SCATTER_MAX = 64               # csr.pxd's cap on row blocks (SCATTER_MAX_BLOCKS)

cdef double S_FLOOR = 1e-100       # floor of s_i (p_{i,y_i}) in the CGLS weights (block comment)


cdef inline double _seconds() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + 1e-9 * ts.tv_nsec


# ------------------------------------------------------------------ the loss, row by row

cdef inline double _sig_minus(double mm, double e) noexcept nogil:
    """sigma(-mm), given e = exp(-|mm|) (no cancellation on either side)."""
    return e / (1.0 + e) if mm >= 0.0 else 1.0 / (1.0 + e)


cdef inline double _logloss(double mm, double e) noexcept nogil:
    """l(mm) = log(1 + exp(-mm)), given e = exp(-|mm|)."""
    return log1p(e) + (-mm if mm < 0.0 else 0.0)


# ------------------------------------------------------------------ multinomial products

cdef inline void _row_scores(const CSR* X, int64_t i, const double* W, int64_t k,
                             double* out) noexcept nogil:
    """out[0:k] = W' x_i (W row-major n_weights x k; the bias feature included)."""
    cdef const int32_t* ind = X.indices
    cdef const double* val = X.data
    cdef int64_t p, l
    cdef const double* wr
    cdef double v
    for l in range(k):
        out[l] = 0.0
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = val[p]
        wr = W + <int64_t>ind[p] * k
        for l in range(k):
            out[l] += v * wr[l]
    if X.bias > 0:
        wr = W + X.n_features * k
        for l in range(k):
            out[l] += X.bias * wr[l]


cdef inline void _row_scatter(const CSR* X, int64_t i, const double* s, int64_t k,
                              double* out) noexcept nogil:
    """out[j, :] += x_ij s[0:k] for the features j of row i (the bias feature included)."""
    cdef const int32_t* ind = X.indices
    cdef const double* val = X.data
    cdef int64_t p, l
    cdef double* orow
    cdef double v
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = val[p]
        orow = out + <int64_t>ind[p] * k
        for l in range(k):
            orow[l] += v * s[l]
    if X.bias > 0:
        orow = out + X.n_features * k
        for l in range(k):
            orow[l] += X.bias * s[l]


cdef inline void _row_scatter_sq(const CSR* X, int64_t i, const double* s, int64_t k,
                                 double* out) noexcept nogil:
    """out[j, :] += x_ij^2 s[0:k] (the bias feature included)."""
    cdef const int32_t* ind = X.indices
    cdef const double* val = X.data
    cdef int64_t p, l
    cdef double* orow
    cdef double v
    for p in range(X.indptr[i], X.indptr[i + 1]):
        v = val[p] * val[p]
        orow = out + <int64_t>ind[p] * k
        for l in range(k):
            orow[l] += v * s[l]
    if X.bias > 0:
        orow = out + X.n_features * k
        for l in range(k):
            orow[l] += X.bias * X.bias * s[l]


cdef void mm_matvec(const CSR* X, const int64_t* rows, int64_t m, const double* W, int64_t k,
                    double* out) noexcept nogil:
    """out[i, :] = W' x_{rows[i]} for i < m (row-parallel with X.n_threads)."""
    cdef int64_t i
    if X.n_threads > 1 and m > 256:
        for i in prange(m, schedule="static", num_threads=X.n_threads):
            _row_scores(X, rows[i], W, k, out + i * k)
    else:
        for i in range(m):
            _row_scores(X, rows[i], W, k, out + i * k)


cdef inline void _mm_rows(const CSR* X, const int64_t* rows, int64_t lo, int64_t hi,
                          const double* S, int64_t k, double* acc, int squared) noexcept nogil:
    """acc = sum_{lo <= i < hi} x_{rows[i]} S[i, :]' (squared: x^2), overwritten, in row order."""
    cdef int64_t i
    memset(acc, 0, X.n_weights * k * sizeof(double))
    for i in range(lo, hi):
        if squared:
            _row_scatter_sq(X, rows[i], S + i * k, k, acc)
        else:
            _row_scatter(X, rows[i], S + i * k, k, acc)


cdef inline int mm_blocks(const CSR* X, int64_t m, int64_t k) noexcept nogil:
    """Row blocks of a multinomial scatter over m of X's rows: csr.pxd's rule (blocks_for)
    for n_weights k accumulators, from the data's shape alone (never the thread count)."""
    if m <= 0 or X.n_rows <= 0:
        return 1
    return blocks_for((<double>(X.indptr[X.n_rows] - X.indptr[0]) / X.n_rows) * m,
                      X.n_weights * k, 12.0, m)     # <= SCATTER_MAX (csr.pxd's cap)


cdef void mm_rmatvec(const CSR* X, const int64_t* rows, int64_t m, const double* S, int64_t k,
                     double* out, double* scratch, int squared=0) noexcept nogil:
    """out = sum_i x_{rows[i]} S[i, :]' (n_weights x k, overwritten; squared: x^2), as csr.pxd's
    scatter: K = mm_blocks row blocks (scratch: (K - 1) n_weights k doubles, sized for all of
    X's rows by mm_scratch_doubles; NULL: one block), each accumulated in row order, the
    threads sharing out whole blocks, summed in block order -- the same bits for every
    thread count."""
    cdef int64_t j, nwk = X.n_weights * k
    cdef int K = mm_blocks(X, m, k) if scratch != NULL else 1
    cdef int T = X.n_threads if X.n_threads < K else K
    cdef int64_t b
    if K <= 1:
        _mm_rows(X, rows, 0, m, S, k, out, squared)
        return
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            _mm_rows(X, rows, b * m // K, (b + 1) * m // K, S, k,
                     out if b == 0 else scratch + (b - 1) * nwk, squared)
    else:
        for b in range(K):
            _mm_rows(X, rows, b * m // K, (b + 1) * m // K, S, k,
                     out if b == 0 else scratch + (b - 1) * nwk, squared)
    for b in range(1, K):
        for j in range(nwk):
            out[j] += scratch[(b - 1) * nwk + j]


cdef int64_t mm_scratch_doubles(const CSR* X, int64_t k) noexcept nogil:
    """Doubles of scratch mm_rmatvec needs on any of X's rows: (K - 1) n_weights k."""
    return (mm_blocks(X, X.n_rows, k) - 1) * X.n_weights * k


# ------------------------------------------------------------------ the multinomial operator
#
# For cgls.pxd: A W = [M_i (X W)_i]_i, M_i = I - 1 p_i' (terms (i, l), i-major), so that
# A'CA = sum_i x_i x_i' (x) M_i' diag(c_i) M_i; with c_il = U_i p_il that is the Hessian block
# U_i (diag(p_i) - p_i p_i').  M_i' u = u - p_i (1'u).

ctypedef struct SoftOp:
    const double* P                # m x k probabilities at the Newton point
    int64_t k
    double* S                      # m x k scratch (M_i' u per row)
    double* scratch                # block accumulators of mm_rmatvec, or NULL
    double* scratch2               # as many more, for soft_apply_t_sq's second sum


cdef inline void _apply_M(const double* p, const double* v, int64_t k, double* out) noexcept nogil:
    """out = M v = v - (p.v) 1."""
    cdef int64_t l
    cdef double pv = 0.0
    for l in range(k):
        pv += p[l] * v[l]
    for l in range(k):
        out[l] = v[l] - pv


cdef inline void _apply_Mt(const double* p, const double* u, int64_t k, double* out) noexcept nogil:
    """out = M' u = u - p (1'u)."""
    cdef int64_t l
    cdef double su = 0.0
    for l in range(k):
        su += u[l]
    for l in range(k):
        out[l] = u[l] - p[l] * su


cdef void soft_apply(const Operator* A, const double* V, double* out) noexcept nogil:
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, k = O.k, m = A.poll_rows
    mm_matvec(A.X, A.rows, m, V, k, out)
    for i in range(m):
        _apply_M(O.P + i * k, out + i * k, k, out + i * k)


cdef void soft_apply_t(const Operator* A, const double* u, double* out) noexcept nogil:
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, k = O.k, m = A.poll_rows
    for i in range(m):
        _apply_Mt(O.P + i * k, u + i * k, k, O.S + i * k)
    mm_rmatvec(A.X, A.rows, m, O.S, k, out, O.scratch)


cdef inline double _soft_normal_rows(const Operator* A, const double* V, const double* c,
                                     double* q, double* u, double* S, int64_t lo, int64_t hi,
                                     double* acc) noexcept nogil:
    """soft_normal on rows lo..hi-1, in row order: q, u and acc = their part of A'Cq
    (overwritten), each row scattered while it is in cache; returns their part of q'Cq."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, l, k = O.k
    cdef double qcq = 0.0
    cdef double* qi
    cdef double* si
    memset(acc, 0, A.nw * sizeof(double))
    for i in range(lo, hi):
        qi = q + i * k
        si = S + i * k
        _row_scores(A.X, A.rows[i], V, k, qi)
        _apply_M(O.P + i * k, qi, k, qi)
        for l in range(k):
            u[i * k + l] = c[i * k + l] * qi[l]
            qcq += u[i * k + l] * qi[l]
        _apply_Mt(O.P + i * k, u + i * k, k, si)
        _row_scatter(A.X, A.rows[i], si, k, acc)
    return qcq


cdef inline void _sum_block_accs(double* out, const double* scratch, int K,
                                 int64_t nwk) noexcept nogil:
    """out += scratch block 1 + ... + block K-1, in block order."""
    cdef int b
    cdef int64_t j
    for b in range(1, K):
        for j in range(nwk):
            out[j] += scratch[(b - 1) * nwk + j]


cdef double soft_normal(const Operator* A, const double* V, const double* c, double* q,
                        double* u, double* h) noexcept nogil:
    """q = A V and h = A'C q in one pass over the rows (each row scattered while it is in
    cache), in mm_blocks row blocks summed in block order (threads share out whole blocks:
    the same bits for every thread count); returns q'Cq."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t m = A.poll_rows, nwk = A.nw
    cdef int K = mm_blocks(A.X, m, O.k) if O.scratch != NULL else 1
    cdef int T = A.X.n_threads if A.X.n_threads < K else K
    cdef int64_t b
    cdef double qcq = 0.0
    cdef double parts[SCATTER_MAX]
    if K <= 1:
        return _soft_normal_rows(A, V, c, q, u, O.S, 0, m, h)
    if K > SCATTER_MAX:
        K = SCATTER_MAX
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            parts[b] = _soft_normal_rows(A, V, c, q, u, O.S, b * m // K, (b + 1) * m // K,
                                         h if b == 0 else O.scratch + (b - 1) * nwk)
    else:
        for b in range(K):
            parts[b] = _soft_normal_rows(A, V, c, q, u, O.S, b * m // K, (b + 1) * m // K,
                                         h if b == 0 else O.scratch + (b - 1) * nwk)
    _sum_block_accs(h, O.scratch, K, nwk)
    for b in range(K):
        qcq += parts[b]
    return qcq


cdef inline void _soft_sq_rows(const Operator* A, const double* u, const double* c,
                               int64_t lo, int64_t hi, double* r, double* diag) noexcept nogil:
    """soft_apply_t_sq on rows lo..hi-1 in row order (r, diag overwritten with their parts)."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t i, k = O.k
    cdef double* sd
    memset(r, 0, A.nw * sizeof(double))
    memset(diag, 0, A.nw * sizeof(double))
    for i in range(lo, hi):
        sd = O.S + i * k
        _apply_Mt(O.P + i * k, u + i * k, k, sd)
        _row_scatter(A.X, A.rows[i], sd, k, r)
        _diag_weights(O.P + i * k, c + i * k, k, sd)
        _row_scatter_sq(A.X, A.rows[i], sd, k, diag)


cdef void soft_apply_t_sq(const Operator* A, const double* u, const double* c, double* r,
                          double* diag) noexcept nogil:
    """r = A'u and diag = diag(A'CA): for weight (j, l), sum_i x_ij^2 sum_a c_ia (M_i)_al^2 =
    sum_i x_ij^2 [c_il (1 - p_il)^2 + p_il^2 (sum_a c_ia - c_il)]; one pass, both scatters
    while the row is in cache, in mm_blocks row blocks as soft_normal."""
    cdef const SoftOp* O = <const SoftOp*>A.ctx
    cdef int64_t m = A.poll_rows, nwk = A.nw
    cdef int K = mm_blocks(A.X, m, O.k) if O.scratch != NULL else 1
    cdef int T = A.X.n_threads if A.X.n_threads < K else K
    cdef int64_t b
    if K <= 1:
        _soft_sq_rows(A, u, c, 0, m, r, diag)
        return
    if K > SCATTER_MAX:
        K = SCATTER_MAX
    if T > 1:
        for b in prange(K, schedule="static", num_threads=T):
            _soft_sq_rows(A, u, c, b * m // K, (b + 1) * m // K,
                          r if b == 0 else O.scratch + (b - 1) * nwk,
                          diag if b == 0 else O.scratch2 + (b - 1) * nwk)
    else:
        for b in range(K):
            _soft_sq_rows(A, u, c, b * m // K, (b + 1) * m // K,
                          r if b == 0 else O.scratch + (b - 1) * nwk,
                          diag if b == 0 else O.scratch2 + (b - 1) * nwk)
    _sum_block_accs(r, O.scratch, K, nwk)
    _sum_block_accs(diag, O.scratch2, K, nwk)


cdef inline void _diag_weights(const double* p, const double* c, int64_t k,
                               double* out) noexcept nogil:
    """out_l = sum_a c_a (M)_al^2 = c_l (1 - p_l)^2 + p_l^2 (sum_a c_a - c_l) for one row."""
    cdef int64_t l
    cdef double cs = 0.0
    for l in range(k):
        cs += c[l]
    for l in range(k):
        out[l] = c[l] * (1.0 - p[l]) * (1.0 - p[l]) + p[l] * p[l] * (cs - c[l])


cdef Operator soft_operator(const CSR* X, const int64_t* rows, int64_t m, SoftOp* O) noexcept nogil:
    cdef Operator A
    A.n = m * O.k
    A.nw = X.n_weights * O.k
    A.poll_rows = m
    A.apply = soft_apply
    A.apply_t = soft_apply_t
    A.normal = soft_normal
    A.apply_t_sq = soft_apply_t_sq
    A.X = X
    A.rows = rows
    A.ctx = O
    return A


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


cdef double model_eval(Model* M) noexcept nogil:
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


cdef void model_setup(Model* M) noexcept nogil:
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


cdef double model_slope0(const Model* M) noexcept nogil:
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


cdef void model_trial(Model* M, double tau, double* gh) noexcept nogil:
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


cdef double model_accept(Model* M, double tau) noexcept nogil:
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


cdef void model_scores(Model* M, const double* beta) noexcept nogil:
    """M.o = the scores of beta, from scratch."""
    if M.kind == BINARY:
        matvec(M.X, M.rows, M.m, beta, M.o)
    else:
        mm_matvec(M.X, M.rows, M.m, beta, M.k, M.o)


cdef void model_loss_grad(Model* M, double* u, double* g) noexcept nogil:
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


cdef double model_dual_terms(const Model* M) noexcept nogil:
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


cdef Operator model_operator(Model* M) noexcept nogil:
    if M.kind == BINARY:
        return csr_operator(M.X, M.rows, M.m)
    M.op.P = M.P
    return soft_operator(M.X, M.rows, M.m, &M.op)


# ------------------------------------------------------------------ the Newton driver

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
    double dual_step               # the best D of a Newton step's dual point (-inf: none yet)
    int dual_at_beta               # free bias: dual_step holds the balanced D of the final beta


ctypedef struct Params:
    double gstop                   # the gradient test's factor (0: off)
    double g0sq                    # ||g(0)||^2 if known at entry (warm start), else -1
    double gap_stop                # the gap test: 1/2 ||g||^2 <= gap_stop f
    double eta                     # CGLS forcing term (0: off)
    double qtol                    # the quadratic-model rule's tolerance (0: off)
    int qadapt                     # its adaptive form min(qtol, ||g||_{M^-1}^(1/2))
    int precondition
    double jw                      # damped Jacobi weight (cgls.pxd)
    double ls_tol                  # line search: |phi'(tau)| <= ls_tol |phi'(0)|
    int ls_max                     # line search: trials per Newton step
    int max_iter
    int cg_max_iter


cdef double line_search(Model* M, double wd, double dd, double phi0, double ls_tol, int ls_max,
                        int* n_trials) noexcept nogil:
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


cdef double step_dual_terms(const Model* M, double* au, int balance) noexcept nogil:
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


cdef double step_dual(Model* M, const double* beta, Work* W, double F, double gap_stop,
                      double grad_rr, double* ent) noexcept nogil:
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


cdef double step_dual_exact(Model* M, Work* W, double ent) noexcept nogil:
    """D at the dual point held in W.u (alpha t) with entropy terms ent: one pass for
    w_alpha = sum_i alpha_i t_i x_i, one allreduce; ||.||^2 over the regularized weights."""
    rmatvec(M.X, M.rows, M.m, W.u, W.sv)
    comm_sum(M.comm, W.sv, M.nbeta)
    return -0.5 * dot(W.sv, W.sv, M.nreg) + ent


cdef int newton_core(Model* M, double* beta, Work* W, const Params* P, int* n_iter,
                     int64_t* cg_total, int64_t* ls_total, double* F_out, double* gsq_out,
                     int* have_grad, double* trace, void* callback) noexcept nogil:
    """Truncated Newton from beta (in/out) with M.o = its scores; returns a status code.
    On exit F_out = f(beta), and with have_grad set, W.r = -g(beta) (the last CGLS's entry
    residual) and gsq_out = ||g(beta)||^2.  trace[it] = f after iteration it.  Once W.stop is
    stopped it returns at once (beta meaningless; the caller raises)."""
    cdef int64_t j, nb = M.nbeta
    cdef int it = 0, cg_it, optimal, status = MAX_ITER, refreshed = 0, n_ls = 0, stalled = 0
    cdef double F, Fnew, rr0 = 0.0, stop_rr, thr, wd, dd, phi0, tau, dest, ent = 0.0, cert_rr
    cdef Operator A
    cdef int64_t nr = M.nreg
    cdef int certify = 0
    # the Newton step's dual point (block comment): binary, not split
    cdef int by_step = M.kind == BINARY and M.split == NULL and P.gap_stop > 0.0
    W.dual_step = -INFINITY
    W.dual_at_beta = 0
    F = 0.5 * dot(beta, beta, nr) + comm_sum1(M.comm, model_eval(M))
    # the gradient test's threshold on ||g||^2 (-1: not known before the first CGLS of a
    # cold start, whose entry residual is -g(0); +inf: no gradient test)
    if P.gstop <= 0.0:
        stop_rr = INFINITY
    else:
        stop_rr = P.gstop * P.gstop * P.g0sq if P.g0sq >= 0.0 else -1.0
    have_grad[0] = 0
    cg_total[0] = 0
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
        if stop_rr < 0.0:
            thr = 0.0
        elif nr < nb or F - W.dual_step <= P.gap_stop * F:
            thr = stop_rr
        else:
            thr = fmin(stop_rr, 2.0 * P.gap_stop * F)
        # where the gradient test holds but the gap does not, CGLS solves the step to the
        # residual at which its dual point certifies (with room for the second-order terms)
        cert_rr = P.gap_stop * F if by_step and (thr < stop_rr < INFINITY or certify) else 0.0
        A = model_operator(M)
        cg_it = cgls(&A, M.cc, 1.0, W.beta_bar, M.z, W.q, W.u, W.r, W.p, W.sv,
                     W.minv if P.precondition else NULL, 0.0, P.eta,
                     P.cg_max_iter if it < P.max_iter and not stalled else 0, &optimal, W.stop, 1,
                     W.h, P.precondition, W.dsum, M.xi, 0, W.diag, P.jw,
                     0.0 if certify else thr, &rr0, M.comm, nr, P.qtol, P.qadapt, M.split, 0,
                     (INFINITY if certify else stop_rr) if cert_rr > 0.0 else 0.0, cert_rr)
        certify = 0
        if W.stop.stopped:
            break
        gsq_out[0] = rr0
        if (optimal == 2 and by_step and nr < nb and F - W.dual_step > P.gap_stop * F
                and it < P.max_iter and not stalled):
            # a free bias: the gradient test holds; the balanced dual point of beta, else
            # this Newton model again, its step solved to certify
            W.dual_step = fmax(W.dual_step, free_bias_dual(M, W))
            if F - W.dual_step > P.gap_stop * F:
                certify = 1
                continue
            W.dual_at_beta = 1
        if optimal == 2 or rr0 == 0.0:       # the gradient and gap tests hold at beta
            have_grad[0] = 1
            status = CONVERGED
            break
        if stop_rr < 0.0:                   # a cold start: this residual was -g(0)
            stop_rr = P.gstop * P.gstop * rr0
        if it >= P.max_iter or stalled:     # W.r = -g(beta): CGLS ran no iteration
            have_grad[0] = 1
            status = MAX_ITER if not stalled else NO_DESCENT
            break
        it += 1
        cg_total[0] += cg_it
        dest = -INFINITY                    # this step's dual point, until one certifies
        if by_step and F - W.dual_step > P.gap_stop * F:
            # (a certifying step: whatever the gradient test, its point is the one wanted)
            dest = step_dual(M, beta, W, F, P.gap_stop,
                             INFINITY if cert_rr > 0.0 or stop_rr < 0.0 else stop_rr, &ent)
        # line search along d = dsum, whose image CGLS accumulated in M.xi
        wd = dot(beta, W.dsum, nr)
        dd = dot(W.dsum, W.dsum, nr)
        phi0 = wd + comm_sum1(M.comm, model_slope0(M))
        Fnew = F
        tau = 0.0
        if phi0 < 0.0:
            memcpy(W.ytry, M.o, M.m * M.k * sizeof(double))
            tau = line_search(M, wd, dd, phi0, P.ls_tol, P.ls_max, &n_ls)
            Fnew = comm_sum1(M.comm, model_accept(M, tau))
            for j in range(nb):
                W.beta_bar[j] = beta[j] + tau * W.dsum[j]
            Fnew += 0.5 * dot(W.beta_bar, W.beta_bar, nr)
        if not (phi0 < 0.0 and Fnew <= F):
            if phi0 < 0.0:                  # undo the step
                memcpy(M.o, W.ytry, M.m * M.k * sizeof(double))
            # the scores drift from X beta as steps add up; recompute them once and retry,
            # else only the tests are left
            model_scores(M, beta)
            F = 0.5 * dot(beta, beta, nr) + comm_sum1(M.comm, model_eval(M))
            trace[it - 1] = F
            if refreshed:
                stalled = 1
            refreshed = 1
            it -= 1
            continue
        refreshed = 0
        memcpy(beta, W.beta_bar, nb * sizeof(double))
        if F - Fnew <= 1e-14 * fabs(Fnew):  # no progress left at machine precision
            stalled = 1
        F = Fnew
        if Fnew - dest <= P.gap_stop * Fnew:  # the estimate certifies: D exactly, one pass
            W.dual_step = fmax(W.dual_step, step_dual_exact(M, W, ent))
        trace[it - 1] = F
        if callback != NULL:
            with gil:
                try:
                    (<object>callback)(it, F, cg_it, tau, sqrt(rr0))
                except BaseException as e:
                    stop_keep(W.stop, e)
    n_iter[0] = it
    ls_total[0] = n_ls
    F_out[0] = F
    return status


cdef void certificate(Model* M, const double* beta, double F, Work* W, int have_grad,
                      double* gsq, double* D) noexcept nogil:
    """D at the dual point built from beta, or at the best Newton step's (block comment),
    and ||g(beta)||^2; W.r holds -g(beta) when have_grad, else g is summed here (one pass,
    one allreduce).  With a free bias (M.nreg < M.nbeta) the dual point is balanced first
    (free_bias_dual)."""
    cdef int64_t j, nb = M.nbeta, nr = M.nreg
    if not have_grad:
        model_loss_grad(M, W.u, W.r)         # the loss part of g ...
        for j in range(nb):
            W.r[j] = -((beta[j] if j < nr else 0.0) + W.r[j])      # ... and r = -g
    gsq[0] = dot(W.r, W.r, nb)
    if nr < nb:                              # multinomial: the caller's (NaN here)
        if M.kind != BINARY:
            D[0] = NAN
        elif W.dual_at_beta:                 # the driver's check at beta has it already
            D[0] = W.dual_step
        else:
            D[0] = fmax(free_bias_dual(M, W), W.dual_step)
        return
    for j in range(nb):                      # w_alpha = w - g = w + r
        W.sv[j] = beta[j] + W.r[j]
    D[0] = -0.5 * dot(W.sv, W.sv, nb) + comm_sum1(M.comm, model_dual_terms(M))
    D[0] = fmax(D[0], W.dual_step)            # or a Newton step's dual point, if better


cdef double free_bias_dual(Model* M, Work* W) noexcept nogil:
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


# ------------------------------------------------------------------ Python entries

def request_stop():
    """Make every solve of this module running now, in any thread, stop and raise
    KeyboardInterrupt (csrc/interrupt.pxd; linsvm.interrupt.stop_running_solves)."""
    stop_request()


cdef object _check_common(const int64_t[::1] indptr, const int64_t[::1] rows, const double[::1] c,
                          double C, int64_t nbeta, int64_t expected):
    if nbeta != expected:
        raise ValueError(f"beta has {nbeta} entries, expected {expected}")
    if c.shape[0] != rows.shape[0]:
        raise ValueError("costs and rows differ in length")
    if not (C > 0 and isfinite(C)):
        raise ValueError("C must be > 0 and finite")
    check_rows(rows, indptr.shape[0] - 1)


cdef object _model_arrays(Model* M, int kind, int64_t m, int64_t k, int64_t nw, const double* t,
                          const int32_t* y, const double[::1] c, double C, list keep):
    """Allocate the per-term arrays of M (kept alive in `keep`) and U = C c."""
    cdef int64_t i, mk = max(m * k, 1)
    U_arr = np.empty(max(m, 1))
    fbuf = np.zeros(5 * mk + 2 * max(m, 1))
    keep.extend([U_arr, fbuf])
    cdef double[::1] Uv = U_arr
    cdef double* F = <double*>cnp.PyArray_DATA(fbuf)
    for i in range(m):
        Uv[i] = C * c[i]
    M.kind = kind
    M.m = m
    M.k = k
    M.nbeta = nw * k
    M.nreg = nw * k
    M.t = t
    M.y = y
    M.U = &Uv[0]
    M.o = F
    M.xi = F + mk
    M.P = F + 2 * mk
    M.cc = F + 3 * mk
    M.z = F + 4 * mk
    M.e = F + 5 * mk
    M.lse = F + 5 * mk + max(m, 1)
    M.op.k = k
    M.op.P = M.P
    M.op.S = NULL
    M.op.scratch = NULL
    M.op.scratch2 = NULL


cdef object _solve(int kind, const int64_t[::1] indptr, const int32_t[::1] indices,
                   const double[::1] data, int64_t n_features, double bias,
                   const int64_t[::1] rows, const double* t, const int32_t* y, int64_t k,
                   const double[::1] c, double C, double[::1] beta, double gstop,
                   double gap_stop, double eta, double qtol, bint qadapt, bint precondition,
                   double jacobi_weight, double ls_tol, int ls_max, int max_iter,
                   int cg_max_iter, int n_threads, object callback, object comm,
                   bint regularize_bias=True, object split=None):
    """Allocate the work arrays, run newton_core and certify its result (see lr_solve)."""
    cdef int64_t m = rows.shape[0], nw = n_features + (1 if bias > 0 else 0)
    cdef int64_t nb = nw * k, mk = max(m * k, 1), j
    cdef int T = entry_threads(n_threads)
    cdef int status = CONVERGED, n_iter = 0, have_grad = 0
    cdef int64_t cg_total = 0, ls_total = 0
    cdef double F = 0.0, gsq = 0.0, D = 0.0
    cdef list keep = []
    _check_common(indptr, rows, c, C, beta.shape[0], nb)
    if not (0.0 <= gstop < 1.0 and gap_stop >= 0.0 and eta >= 0.0 and qtol >= 0.0
            and 0.0 < jacobi_weight <= 1.0 and 0.0 < ls_tol < 1.0 and ls_max >= 1
            and max_iter >= 0 and cg_max_iter >= 1):
        raise ValueError("invalid solver settings")
    cdef CSR X
    scratch = entry_csr(indptr, indices, data, n_features, bias, rows, n_threads, &X)
    cdef Model M
    _model_arrays(&M, kind, m, k, nw, t, y, c, C, keep)
    M.X = &X
    M.rows = &rows[0] if m > 0 else NULL
    if not regularize_bias and bias > 0:
        M.nreg = nb - k                      # the bias row, last (k weights), is free
    cdef Comm CM = comm_from(comm)
    M.comm = &CM
    cdef Split SP
    M.split = NULL
    if split is not None and comm_active(&CM) and kind == BINARY:
        if split.n_weights != nw:
            raise ValueError("the weight split is for another number of weights")
        SP = split_from(split, &CM)
        M.split = &SP
    mscratch = None
    if kind == MULTINOMIAL:
        opS = np.zeros(mk)
        keep.append(opS)
        M.op.S = <double*>cnp.PyArray_DATA(opS)
        if mm_scratch_doubles(&X, k) > 0:      # whatever T is (mm_rmatvec)
            mscratch = np.zeros(2 * mm_scratch_doubles(&X, k))
            M.op.scratch = <double*>cnp.PyArray_DATA(mscratch)
            M.op.scratch2 = M.op.scratch + mm_scratch_doubles(&X, k)
    wv = np.zeros(8 * max(nb, 1) + 3)
    tm = np.zeros(3 * mk)
    trace_arr = np.zeros(max(max_iter, 1))
    cdef double* WV = <double*>cnp.PyArray_DATA(wv)
    cdef double* TM = <double*>cnp.PyArray_DATA(tm)
    cdef double[::1] trace = trace_arr
    cdef Work W
    W.beta_bar = WV
    W.r = WV + nb
    W.p = WV + 2 * nb
    W.sv = WV + 3 * nb
    W.minv = WV + 4 * nb
    W.diag = WV + 5 * nb
    W.dsum = WV + 6 * nb
    W.h = WV + 7 * nb                        # nb + 3: a distributed CGLS's pack
    W.q = TM
    W.u = TM + mk
    W.ytry = TM + 2 * mk
    cdef Params P
    P.gstop = gstop
    P.g0sq = -1.0
    P.gap_stop = gap_stop
    P.eta = eta
    P.qtol = qtol
    P.qadapt = qadapt
    P.precondition = precondition
    P.jw = jacobi_weight
    P.ls_tol = ls_tol
    P.ls_max = ls_max
    P.max_iter = max_iter
    P.cg_max_iter = cg_max_iter
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop S
    stop_init(&S, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    W.stop = &S
    cdef int cold = 1
    for j in range(nb):
        if beta[j] != 0.0:
            cold = 0
            break
    with nogil:
        if cold:
            memset(M.o, 0, m * k * sizeof(double))
        else:
            model_scores(&M, &beta[0])
            if gstop > 0.0:                  # ||g(0)||^2 for the gradient test: the scores 0
                memcpy(W.ytry, M.o, m * k * sizeof(double))
                memset(M.o, 0, m * k * sizeof(double))
                model_eval(&M)
                model_loss_grad(&M, W.u, W.r)
                P.g0sq = dot(W.r, W.r, nb)
                memcpy(M.o, W.ytry, m * k * sizeof(double))
        status = newton_core(&M, &beta[0], &W, &P, &n_iter, &cg_total, &ls_total, &F, &gsq,
                             &have_grad, &trace[0], cb)
        if not S.stopped:
            certificate(&M, &beta[0], F, &W, have_grad, &gsq, &D)
    stop_raise(&S)                            # Ctrl-C: the work arrays go as it unwinds
    return dict(status=status, n_iter=n_iter, cg_iter=int(cg_total), ls_trials=int(ls_total),
                f=float(F), dual=float(D), grad_norm=float(sqrt(gsq)),
                trace=trace_arr[:n_iter].copy())


def lr_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
             int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] t,
             const double[::1] c, double C, double[::1] beta, double gstop, double gap_stop,
             double eta, double qtol, bint qadapt, bint precondition, double jacobi_weight,
             double ls_tol, int ls_max, int max_iter, int cg_max_iter, int n_threads,
             object callback, object comm=None, bint regularize_bias=True,
             object split=None):
    """Minimize f(w) = 1/2 ||w||^2 + C sum_k c_k log(1 + exp(-t_k x_k.w)) by truncated Newton
    (block comment), updating beta in place (its values are the warm start; zeros: cold).
    regularize_bias False (bias > 0): the bias weight leaves ||w||^2 (a free intercept); the
    gap test is then the caller's (dual is D at the balanced dual point, free_bias_dual).

    Stop: ||g(w)|| <= gstop ||g(0)|| and 1/2 ||g(w)||^2 <= gap_stop f(w) (both at once;
    gstop 0: the gap test alone), or max_iter Newton steps, or no descent left.  CGLS per
    step: forcing term eta, quadratic rule qtol (adaptive with qadapt), at most cg_max_iter
    iterations, damped Jacobi preconditioner of weight jacobi_weight.  Line search: stop at
    |phi'| <= ls_tol |phi'(0)|, at most ls_max trials.  callback(it, f, cg_it, step,
    ||g at the step's start||) after each step.  comm: None or the Collective of a
    distributed solve (rows, t, c this rank's block; every rank gets the same beta).
    split: None, or this rank's linsvm.runtime.wsplit.WeightSplit (with comm): CGLS in
    the weight-split arrangement (cgls.pxd).

    Indices must lie in [0, n_features) (the caller validates the CSR buffers); rows and
    lengths are checked here.  Returns a dict: status (0 converged, 1 iteration cap, 2 no
    descent), n_iter, cg_iter, ls_trials, f (at beta), dual (D at the dual point built from
    beta), grad_norm (||g(beta)||), trace (f per iteration)."""
    if t.shape[0] != rows.shape[0]:
        raise ValueError("labels and rows differ in length")
    return _solve(BINARY, indptr, indices, data, n_features, bias, rows,
                  &t[0] if t.shape[0] else NULL, NULL, 1, c, C, beta, gstop, gap_stop, eta, qtol,
                  qadapt, precondition, jacobi_weight, ls_tol, ls_max, max_iter, cg_max_iter,
                  n_threads, callback, comm, regularize_bias, split)


def softmax_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices,
                  const double[::1] data, int64_t n_features, double bias,
                  const int64_t[::1] rows, const int32_t[::1] codes, int64_t n_classes,
                  const double[::1] c, double C, double[::1] beta, double gstop,
                  double gap_stop, double eta, double qtol, bint qadapt, bint precondition,
                  double jacobi_weight, double ls_tol, int ls_max, int max_iter,
                  int cg_max_iter, int n_threads, object callback, object comm=None,
                  bint regularize_bias=True):
    """Minimize f(W) = 1/2 ||W||_F^2 + C sum_k c_k [log sum_l exp(w_l.x_k) - w_{y_k}.x_k] by
    truncated Newton over all n_classes columns at once (block comment), W = beta as an
    n_weights x n_classes row-major array updated in place; codes: class index of each row,
    in [0, n_classes).  Settings and result as lr_solve; regularize_bias False (bias > 0):
    the bias row leaves ||W||_F^2, and dual is NaN (the caller certifies)."""
    cdef int64_t i, m = rows.shape[0]
    if codes.shape[0] != m:
        raise ValueError("class codes and rows differ in length")
    if n_classes < 2:
        raise ValueError("softmax needs at least two classes")
    for i in range(m):
        if codes[i] < 0 or codes[i] >= n_classes:
            raise ValueError(f"class codes must lie in [0, {n_classes})")
    return _solve(MULTINOMIAL, indptr, indices, data, n_features, bias, rows, NULL,
                  &codes[0] if m else NULL, n_classes, c, C, beta, gstop, gap_stop, eta, qtol,
                  qadapt, precondition, jacobi_weight, ls_tol, ls_max, max_iter, cg_max_iter,
                  n_threads, callback, comm, regularize_bias)


def objective(*, const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              int64_t n_features, double bias, const int64_t[::1] rows, t=None, codes=None,
              int64_t n_classes=1, const double[::1] c, double C, const double[::1] beta,
              int n_threads=1, object comm=None):
    """(f, grad, D, x_alpha) at beta, from the kernels the solvers use: f the binary (t given)
    or multinomial (codes given; beta n_weights x n_classes row-major) objective, its gradient,
    D the dual value at the dual point built from beta (block comment) and x_alpha that dual
    point (binary: alpha_k = C c_k sigma(-t_k x_k.beta); multinomial: the m x k probabilities).
    comm: f, grad and D over every rank (x_alpha this rank's)."""
    cdef int64_t m = rows.shape[0], nw = n_features + (1 if bias > 0 else 0), k, j, i
    cdef int kind = BINARY if codes is None else MULTINOMIAL
    cdef const double[::1] tv
    cdef const int32_t[::1] cv
    cdef double F, gsq = 0.0, D = 0.0
    cdef list keep = []
    cdef Model M
    cdef CSR X
    cdef Comm CM = comm_from(comm)
    k = 1 if kind == BINARY else n_classes
    t_arr = np.ascontiguousarray(t if t is not None else np.zeros(0), dtype=np.float64)
    c_arr = np.ascontiguousarray(codes if codes is not None else np.zeros(0, np.int32),
                                 dtype=np.int32)
    tv = t_arr
    cv = c_arr
    if kind == BINARY and tv.shape[0] != m or kind == MULTINOMIAL and (cv.shape[0] != m or k < 2):
        raise ValueError("inconsistent lengths")
    if kind == MULTINOMIAL and m and (c_arr.min() < 0 or c_arr.max() >= k):
        raise ValueError("class codes out of range")
    _check_common(indptr, rows, c, C, beta.shape[0], nw * k)
    scratch = entry_csr(indptr, indices, data, n_features, bias, rows, n_threads, &X)
    _model_arrays(&M, kind, m, k, nw, &tv[0] if kind == BINARY and m else NULL,
                  &cv[0] if kind == MULTINOMIAL and m else NULL, c, C, keep)
    M.X = &X
    M.rows = &rows[0] if m else NULL
    M.comm = &CM
    g_arr = np.zeros(nw * k)
    u_arr = np.zeros(max(m * k, 1))
    wv = np.zeros(nw * k)
    cdef double[::1] g = g_arr, u = u_arr, wa = wv
    with nogil:
        model_scores(&M, &beta[0])
        F = 0.5 * dot(&beta[0], &beta[0], nw * k) + comm_sum1(&CM, model_eval(&M))
        model_loss_grad(&M, &u[0], &g[0])
        for j in range(nw * k):
            g[j] += beta[j]
            wa[j] = beta[j] - g[j]
        D = -0.5 * dot(&wa[0], &wa[0], nw * k) + comm_sum1(&CM, model_dual_terms(&M))
    if kind == BINARY:
        alpha = np.array([C * c[i] * _sig_minus(tv[i] * M.o[i], M.e[i]) for i in range(m)])
    else:
        alpha = np.array(<double[:max(m * k, 1)]>M.P)[:m * k].reshape(m, k).copy()
    return float(F), g_arr, float(D), alpha


def hessian_product(*, const int64_t[::1] indptr, const int32_t[::1] indices,
                    const double[::1] data, int64_t n_features, double bias,
                    const int64_t[::1] rows, t=None, codes=None, int64_t n_classes=1,
                    const double[::1] c, double C, const double[::1] beta,
                    const double[::1] v, int n_threads=1):
    """(H v, diag(H)) at beta through the CGLS operator and weights the solver builds:
    H v = v + A'C A v and diag(H) = 1 + diag(A'CA) (binary or multinomial as `objective`)."""
    cdef int64_t m = rows.shape[0], nw = n_features + (1 if bias > 0 else 0), k, j
    cdef int kind = BINARY if codes is None else MULTINOMIAL
    cdef const double[::1] tv
    cdef const int32_t[::1] cv
    cdef list keep = []
    cdef Model M
    cdef CSR X
    cdef Operator A
    k = 1 if kind == BINARY else n_classes
    t_arr = np.ascontiguousarray(t if t is not None else np.zeros(0), dtype=np.float64)
    c_arr = np.ascontiguousarray(codes if codes is not None else np.zeros(0, np.int32),
                                 dtype=np.int32)
    tv = t_arr
    cv = c_arr
    if kind == BINARY and tv.shape[0] != m or kind == MULTINOMIAL and (cv.shape[0] != m or k < 2):
        raise ValueError("inconsistent lengths")
    if kind == MULTINOMIAL and m and (c_arr.min() < 0 or c_arr.max() >= k):
        raise ValueError("class codes out of range")
    _check_common(indptr, rows, c, C, beta.shape[0], nw * k)
    if v.shape[0] != nw * k:
        raise ValueError("v has the wrong length")
    scratch = entry_csr(indptr, indices, data, n_features, bias, rows, n_threads, &X)
    _model_arrays(&M, kind, m, k, nw, &tv[0] if kind == BINARY and m else NULL,
                  &cv[0] if kind == MULTINOMIAL and m else NULL, c, C, keep)
    M.X = &X
    M.rows = &rows[0] if m else NULL
    cdef Comm CM = comm_from(None)
    M.comm = &CM
    opS = np.zeros(max(m * k, 1))
    M.op.S = <double*>cnp.PyArray_DATA(opS)
    hv_arr = np.zeros(nw * k)
    dg_arr = np.zeros(nw * k)
    r_arr = np.zeros(nw * k)
    q_arr = np.zeros(max(m * k, 1))
    u_arr = np.zeros(max(m * k, 1))
    cdef double[::1] hv = hv_arr, dg = dg_arr, r = r_arr, q = q_arr, u = u_arr
    with nogil:
        model_scores(&M, &beta[0])
        model_eval(&M)
        model_setup(&M)
        A = model_operator(&M)
        A.normal(&A, &v[0], M.cc, &q[0], &u[0], &hv[0])
        A.apply_t_sq(&A, &u[0], M.cc, &r[0], &dg[0])
        for j in range(nw * k):
            hv[j] += v[j]
            dg[j] += 1.0
    return hv_arr, dg_arr


# ------------------------------------------------------------------ lr-dual
#
# Dual coordinate descent for binary L2-regularized logistic regression (Yu, Huang & Lin,
# "Dual coordinate descent methods for logistic regression and maximum entropy models",
# Machine Learning 85, 2011: Sec. 3, Algorithms 3-4; LIBLINEAR -s 7's problem).  In their
# minimization form the dual of f is
#
#     min_alpha  1/2 alpha'Q alpha + sum_i [alpha_i log alpha_i + (U_i - alpha_i) log(U_i - alpha_i)]
#     s.t. 0 <= alpha_i <= U_i,     Q_ij = t_i t_j x_i.x_j,     w(alpha) = sum_i alpha_i t_i x_i
#
# (its negative plus sum_i U_i log U_i is D of the first block comment).  The entropy's slope is
# infinite at both ends of the box, so the optimum and every iterate lie inside it.  With
# A_i = alpha_i and B_i = U_i - alpha_i, coordinate i's sub-problem in its step z is
#
#     g(z) = (A_i + z) log(A_i + z) + (B_i - z) log(B_i - z) + Q_ii z^2 / 2 + G_i z,  G_i = t_i w.x_i
#     g'(z) = Q_ii z + G_i + log((A_i + z) / (B_i - z)),    -A_i < z < B_i.
#
# Both A_i and B_i are stored and each is updated by its own formula (Sec. 3.2 of the paper:
# taking U_i - alpha_i when alpha_i is near U_i loses the digits the log needs).  At the
# midpoint z_m = (B_i - A_i)/2 the log vanishes, so g'(z_m) = Q_ii z_m + G_i says on which
# half the root lies: if g'(z_m) >= 0 the new alpha_i is <= U_i/2 and the sub-problem is
# solved for v = alpha_i + z, else for v = U_i - alpha_i - z; in either case Newton on
#
#     h(v) = Q_ii (v - v_old) + s G_i + log(v / (U_i - v)),   v in (0, U_i/2],   s = +-1,
#
# an increasing function, concave on (0, U_i/2], so from a point left of its root Newton's
# iterates rise monotonically to it; a Newton point <= 0 is replaced by XI v (XI = 0.1, the
# paper's Algorithm 4 safeguard).  It starts at min(v_old, U_i/2) and stops at |h(v)| <=
# delta (at most INNER_MAX steps).  delta = min(1e-2, 0.01 max(eps, Gmax_prev)) with Gmax_prev
# the previous loop's measure: loose while the loop's violation is large, a hundredth of it
# at the end.  (Measured: with 0.1 instead of 0.01 the loops were the same but the gap at the
# stop was 1.4-11x larger -- each coordinate left at |g'| ~ delta adds ~ delta^2 U_i / 8 to
# it -- for the same time: a9a, ijcnn1, w8a at C = 1.)
#
# Loops visit the examples in a fresh random permutation (seeded SplitMix64, csrc/rng.pxd).
# Stop (LIBLINEAR -s 7's "dual maximal violation", default -e 0.1): the largest |g'_i(0)|,
# each measured when the loop visits i, is <= eps over a whole loop.  A coordinate whose
# |g'_i(0)| <= delta is left as it is (no update of w).  Examples with U_i = 0 have no dual
# variable and are skipped.

cdef enum:
    INNER_MAX = 100                # Newton steps per coordinate

cdef double XI = 0.1               # the inner Newton safeguard (Algorithm 4's xi)
cdef int DUAL_TRACE = 4            # loop, max violation, seconds, inner Newton steps


ctypedef struct DualVar:
    # everything a visit of example i reads, in one cache line (the loop visits the examples
    # in random order, so each array read apart would be a cache miss of its own)
    double A                       # alpha_i
    double B                       # U_i - alpha_i
    double L                       # log(A / B)
    double U                       # C c_i
    double QD                      # ||x_i||^2
    double t                       # label +-1
    int64_t lo                     # the row's non-zeros: [lo, hi) of X's indices and data
    int64_t hi


cdef int lrdual_core(const CSR* X, DualVar* V, double* w, int64_t* index, int64_t n, double eps,
                     uint64_t* rng, int max_iter, int* n_iter, int64_t* n_newton,
                     double* gmax_out, double* trace, void* callback, Stop* stop) noexcept nogil:
    """Dual coordinate descent (block comment) over the examples index[0:n] of V from their
    (A, B), with w = w(alpha) on entry; returns CONVERGED or MAX_ITER.  trace gets one row per
    loop.  Each loop polls stop; once stopped the solve returns and the caller raises."""
    cdef int it = 0, status = MAX_ITER, j
    cdef int64_t s, newton = 0
    cdef double Gmax, G, gp, a, u, vold, v, vn, sgn, h, z, delta, prev = INFINITY
    cdef double t0 = _seconds()
    cdef DualVar* d
    while it < max_iter:
        delta = fmin(1e-2, 0.01 * fmax(eps, prev))
        shuffle(rng, index, n)
        Gmax = 0.0
        for s in range(n):
            # the visits go in random order: ask for the next examples' data ahead of use
            if s + 2 < n:
                LINSVM_PREFETCH(&V[index[s + 2]])
            if s + 1 < n:
                d = &V[index[s + 1]]
                LINSVM_PREFETCH(&X.indices[d.lo])
                LINSVM_PREFETCH(&X.data[d.lo])
            d = &V[index[s]]
            G = d.t * dot_row_span(X, d.lo, d.hi, w)
            gp = G + d.L                              # g'_i(0)
            if fabs(gp) > Gmax:
                Gmax = fabs(gp)
            if fabs(gp) <= delta:
                continue
            a = d.QD
            u = d.U
            if a * 0.5 * (d.B - d.A) + G >= 0.0:     # the new alpha_i is <= U_i / 2
                vold = d.A
                sgn = 1.0
            else:                                     # the new U_i - alpha_i is < U_i / 2
                vold = d.B
                sgn = -1.0
            v = fmin(vold, 0.5 * u)
            for j in range(INNER_MAX):
                h = a * (v - vold) + sgn * G + log(v / (u - v))
                if fabs(h) <= delta:
                    break
                vn = v - h / (a + u / (v * (u - v)))
                v = vn if vn > 0.0 else XI * v
                newton += 1
            if sgn > 0.0:
                z = v - d.A
                d.A = v
                d.B = u - v
            else:
                z = d.B - v
                d.B = v
                d.A = u - v
            d.L = log(d.A / d.B)
            if z != 0.0:
                axpy_row_span(X, d.lo, d.hi, z * d.t, w)
        it += 1
        prev = Gmax
        trace[(it - 1) * DUAL_TRACE + 0] = it
        trace[(it - 1) * DUAL_TRACE + 1] = Gmax
        trace[(it - 1) * DUAL_TRACE + 2] = _seconds() - t0
        trace[(it - 1) * DUAL_TRACE + 3] = <double>newton
        if callback != NULL:
            with gil:
                try:
                    (<object>callback)(it, Gmax, newton)
                except BaseException as e:
                    stop_keep(stop, e)
        if stop_poll(stop, n * stop.per_row):
            break
        if Gmax <= eps:
            status = CONVERGED
            break
    n_iter[0] = it
    n_newton[0] = newton
    gmax_out[0] = prev if it > 0 else 0.0
    return status


def lrdual_solve(*, const int64_t[::1] indptr, const int32_t[::1] indices,
                 const double[::1] data, int64_t n_features, double bias,
                 const int64_t[::1] rows, const double[::1] t, const double[::1] c, double C,
                 double[::1] alpha, double[::1] alpha_c, double eps, uint64_t seed,
                 int max_iter, object callback):
    """Solve the binary L2-LR dual by coordinate descent (block comment above) from alpha
    (A) and alpha_c (B = C c - alpha), both updated in place: every pair with C c_k > 0 must
    have A, B > 0 and A + B = C c_k to rounding (the caller builds them; zero-cost examples
    are set to 0 here).  max_iter 0: no loop, only the certificate.

    Returns a dict: w = w(alpha), status (0: the loop's max |g'_i| <= eps, 1: the loop cap),
    n_iter (loops), newton_iter (inner steps), violation (the last loop's max |g'_i(0)|),
    primal (f(w)), dual (D(alpha) of the first block comment, the maximization form),
    dual_w (D at the dual point built from w), trace (loop, violation, seconds, inner steps)."""
    cdef int64_t m = rows.shape[0], nw = n_features + (1 if bias > 0 else 0), i, n = 0
    cdef int status = CONVERGED, n_iter = 0
    cdef int64_t n_newton = 0
    cdef double gmax = 0.0, P = 0.0, Dsep = 0.0, Dw = 0.0, mm, e, Ui, ww
    cdef uint64_t rng = seed
    if t.shape[0] != m or c.shape[0] != m or alpha.shape[0] != m or alpha_c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    if not (C > 0 and isfinite(C)) or max_iter < 0 or not eps > 0:
        raise ValueError("invalid solver settings")
    check_rows(rows, indptr.shape[0] - 1)
    for i in range(m):
        if c[i] > 0 and not (alpha[i] > 0 and alpha_c[i] > 0 and isfinite(alpha[i] + alpha_c[i])):
            raise ValueError("alpha and C c - alpha must be > 0 for every example with a cost")
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, 1, NULL)
    U_arr = np.empty(max(m, 1))
    idx_arr = np.empty(max(m, 1), dtype=np.int64)
    var_arr = np.empty(max(m, 1) * sizeof(DualVar), dtype=np.uint8)
    w_arr = np.zeros(nw)
    u_arr = np.zeros(max(m, 1))
    g_arr = np.zeros(nw)
    trace_arr = np.zeros((max(max_iter, 1), DUAL_TRACE))
    cdef double[::1] Uv = U_arr, w = w_arr, uu = u_arr, g = g_arr
    cdef int64_t[::1] idx = idx_arr
    cdef double[:, ::1] tr = trace_arr
    cdef DualVar* V = <DualVar*>cnp.PyArray_DATA(var_arr)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop S
    stop_init(&S, indptr[indptr.shape[0] - 1], indptr.shape[0] - 1)
    with nogil:
        for i in range(m):
            Uv[i] = C * c[i]
            V[i].U = Uv[i]
            V[i].t = t[i]
            V[i].A = alpha[i]
            V[i].B = alpha_c[i]
            V[i].lo = indptr[rows[i]]
            V[i].hi = indptr[rows[i] + 1]
            if c[i] <= 0.0:
                alpha[i] = 0.0
                alpha_c[i] = 0.0
                continue
            V[i].L = log(alpha[i] / alpha_c[i])
            V[i].QD = sq_norm_row(&X, rows[i])
            idx[n] = i
            n += 1
            axpy_row(&X, rows[i], alpha[i] * t[i], &w[0])
        if n > 0 and max_iter > 0:
            status = lrdual_core(&X, V, &w[0], &idx[0], n, eps, &rng, max_iter, &n_iter,
                                 &n_newton, &gmax, &tr[0, 0], cb, &S)
            for i in range(m):
                if c[i] > 0.0:
                    alpha[i] = V[i].A
                    alpha_c[i] = V[i].B
        # the certificate: f(w), D(alpha), and D at alpha(w) = U sigma(-m) (one more pass)
        for i in range(m if not S.stopped else 0):
            Ui = Uv[i]
            if Ui <= 0.0:
                uu[i] = 0.0
                continue
            mm = t[i] * dot_row(&X, rows[i], &w[0])
            e = exp(-fabs(mm))
            P += Ui * _logloss(mm, e)
            Dsep -= alpha[i] * log(alpha[i]) + alpha_c[i] * log(alpha_c[i]) - Ui * log(Ui)
            Dw += Ui * (_logloss(mm, e) + mm * _sig_minus(mm, e))
            uu[i] = Ui * _sig_minus(mm, e) * t[i]
        if not S.stopped and m > 0:
            rmatvec(&X, &rows[0], m, &uu[0], &g[0])     # w_alpha(w)
    stop_raise(&S)
    ww = vdot(w_arr, w_arr)
    return dict(w=w_arr, status=status, n_iter=n_iter, newton_iter=int(n_newton),
                violation=float(gmax), primal=float(0.5 * ww + P), dual=float(-0.5 * ww + Dsep),
                dual_w=float(-0.5 * vdot(g_arr, g_arr) + Dw),
                trace=trace_arr[:n_iter].copy())
