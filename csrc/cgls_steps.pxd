# The pieces of one iteration of csrc/cgls.pxd's CGLS (cgls_solve, whose block comment
# has the mathematics): its state, the start, the step length, the move, the
# true-residual check, the stopping tests and the next direction, each in the
# serial, allreduce and weight-split arrangements, and the fixed-chunk passes over the
# weights the first two share.  Inline: cimported, not compiled on its own.

from libc.stdint cimport int64_t
from libc.string cimport memset
from chunked cimport CHUNK_ENTRIES, n_chunks, chunk_sums
from libc.math cimport fmax, fmin, sqrt
from comm cimport comm_sum
from wsplit cimport Split, split_reduce, split_scatter, split_gather, split_dot
from cgls_operator cimport Operator, CglsSettings, CglsWork, residual, residual_split


cdef enum:
    CG_SERIAL = 0                  # the arrangement of cgls_solve (block comment)
    CG_ALLREDUCE = 1
    CG_SPLIT = 2


ctypedef struct CgState:
    # The state of one cgls_solve.
    int mode
    int fused                      # products in one pass (A.normal)
    int recur                      # r by the recurrence (not recomputed from z)
    int qguard
    int64_t nr                     # regularized weights
    int64_t n_upd                  # weights a rank updates (stop polling's measure)
    double* s                      # minv r, or r itself without a preconditioner
    double rho                     # r's
    double rr                      # r'r
    double zcz                     # z'Cz after the step
    double zl                      # this rank's z'Cz (distributed)
    double rs                      # r's after the step (the split: the owners' step)
    double pp                      # p'p over the regularized weights (not the split)
    int n_threads                  # the vector passes' threads (not the split)
    double forcing                 # the forcing term's threshold on r'r
    double cgtol                   # the quadratic-model rule's tolerance
    double qsum                    # -2 Q_it (cg_stops)


# ------------------------------------------------------------------ the tests

cdef inline int cg_entry_tests(double rr, double rho, double* rr0, const CglsSettings* S,
                             CgState* G, int* optimal) noexcept nogil:
    """The tests on a CGLS's entry residual (block comment): rr0 <- rr = ||r_0||^2; the
    caller's threshold (rr <= stop_rr: optimal = 2, return 1, no iteration); else the
    forcing threshold eta^2 rr, optimal = 1 for a zero residual, the adaptive
    quadratic-model tolerance min(qtol, ||r_0||_{M^-1}^(1/2)) (rho = r_0'M^-1 r_0), and
    the certifying step's threshold."""
    G.rr = rr
    G.rho = rho
    G.qsum = 0.0
    G.cgtol = S.forcing_guard
    G.qguard = S.qguard
    if rr0 != NULL:
        rr0[0] = rr
    if S.stop_rr > 0.0 and rr <= S.stop_rr:
        optimal[0] = 2
        return 1
    G.forcing = S.forcing * S.forcing * rr
    optimal[0] = 1 if rr == 0.0 else 0
    if S.qadapt and G.cgtol > 0.0:
        G.cgtol = fmin(G.cgtol, sqrt(sqrt(rho)))
    if S.grad_rr > 0.0 and rr <= S.grad_rr:     # the certifying step
        G.forcing = S.cert_rr
        G.cgtol = 0.0
        G.qguard = 0
    return 0


cdef inline int cg_stops(CgState* G, double eps, double gamma, int it,
                         int* optimal) noexcept nogil:
    """CGLS's stopping tests after an iteration (block comment): eq. 13
    (rr <= eps^2 z'Cz: optimal), the forcing term, and the quadratic-model rule on the
    running sum qsum (-2 Q_it, updated here) -- with qguard, as the forcing term's guard
    only.  1: stop."""
    cdef int quad
    if G.rr <= eps * eps * G.zcz:
        optimal[0] = 1
        return 1
    G.qsum += gamma * G.rho
    quad = G.cgtol > 0.0 and it * gamma * G.rho <= G.cgtol * G.qsum
    if G.rr <= G.forcing:
        return 1 if (quad or not G.qguard) else 0
    return 1 if (quad and not G.qguard) else 0


# ------------------------------------------------------------------ the passes over the weights
#
# The vector work of an iteration (the move, s = minv r, the next direction and the sums
# r'r, r's, p'p) runs as one or two passes over the weights in the fixed chunks of
# csrc/chunked.pxd (by nw alone, sums added in chunk order), on the operator's CSR's
# threads: every thread count gives the same bits.

cdef enum:
    VEC_MOVE = 0                   # the kinds of pass (_vec_span)
    VEC_SUMS = 1
    VEC_START = 2
    VEC_DIRECTION = 3


ctypedef struct VecPass:
    int kind
    int64_t nw
    int64_t nr                     # regularized weights (the first nr)
    double gamma                   # VEC_MOVE's step
    double lam
    double omega                   # VEC_DIRECTION's p = s + omega p
    double* beta
    double* s                      # minv r, or r itself without a preconditioner
    CglsWork* W


cdef inline VecPass vec_of(int kind, int64_t nw, const CgState* G, CglsWork* W) noexcept nogil:
    """A pass of `kind` over the nw weights of this iteration's vectors (no step yet)."""
    cdef VecPass P
    P.kind = kind
    P.nw = nw
    P.nr = G.nr
    P.gamma = 0.0
    P.lam = 0.0
    P.omega = 0.0
    P.beta = NULL
    P.s = G.s
    P.W = W
    return P


cdef inline void _vec_span(const void* ctx, int64_t c, int64_t lo, int64_t hi,
                           double* out) noexcept nogil:
    """The pass P = ctx over the weights lo:hi (a chunk_fn), its two sums into out:
    VEC_MOVE: beta (and dsum) += gamma p, r -= gamma (h + Lam p), then as VEC_SUMS;
    VEC_SUMS: s = minv r, out = (r'r, r's); VEC_START: p = s, out = (p'p over the
    regularized weights, 0); VEC_DIRECTION: p = s + omega p, out as VEC_START."""
    cdef const VecPass* P = <const VecPass*>ctx
    cdef CglsWork* W = P.W
    cdef double* r = W.r
    cdef double* p = W.p
    cdef const double* minv = W.minv
    cdef double* s = P.s
    cdef double a = 0.0, b = 0.0, g = P.gamma, lam = P.lam, om = P.omega
    cdef int64_t j, nr = P.nr if P.nr < hi else hi
    if P.kind == VEC_MOVE:
        for j in range(lo, hi):
            P.beta[j] += g * p[j]
        if W.xd != NULL:                    # the step, as it is taken
            for j in range(lo, hi):
                W.dsum[j] += g * p[j]
        for j in range(lo, nr):
            r[j] -= g * (W.h[j] + lam * p[j])
        for j in range(nr if nr > lo else lo, hi):
            r[j] -= g * W.h[j]
    if P.kind == VEC_MOVE or P.kind == VEC_SUMS:
        if minv == NULL:
            for j in range(lo, hi):
                a += r[j] * r[j]
            b = a
        else:
            for j in range(lo, hi):
                s[j] = minv[j] * r[j]
                a += r[j] * r[j]
                b += r[j] * s[j]
    elif P.kind == VEC_START:
        for j in range(lo, hi):
            p[j] = s[j]
        for j in range(lo, nr):
            a += p[j] * p[j]
    else:
        for j in range(lo, nr):
            p[j] = s[j] + om * p[j]
            a += p[j] * p[j]
        for j in range(nr if nr > lo else lo, hi):
            p[j] = s[j] + om * p[j]
    out[0] = a
    out[1] = b


cdef inline void vec_pass(const VecPass* P, int n_threads, double* sums) noexcept nogil:
    """Run P over every weight in csrc/chunked.pxd's chunks, its two sums into sums[0:2]."""
    chunk_sums(_vec_span, P, P.nw, n_chunks(P.nw, CHUNK_ENTRIES), 2, n_threads, sums)


cdef inline void residual_sums(CglsWork* W, CgState* G, int64_t nw) noexcept nogil:
    """After r changed (not the split): s = minv r, G.rr = r'r and G.rs = r's (vec_pass)."""
    cdef VecPass P = vec_of(VEC_SUMS, nw, G, W)
    cdef double sums[2]
    vec_pass(&P, G.n_threads, sums)
    G.rr = sums[0]
    G.rs = sums[1]


# ------------------------------------------------------------------ the iteration's pieces

cdef inline int cg_start(const Operator* A, const double* c, double lam, const double* beta,
                       const CglsSettings* S, CglsWork* W, CgState* G, int* optimal,
                       double* rr0) noexcept nogil:
    """The start residual r_0 = A'Cz - Lam beta (and the Jacobi minv), s = minv r_0,
    p = s, and the entry tests (1: no iteration)."""
    cdef int64_t i, j, nw = A.nw
    cdef double* minv = W.minv if S.jacobi else NULL
    cdef double red[2]
    cdef double sums[2]
    cdef VecPass P
    G.s = W.s if W.minv != NULL else W.r
    if G.mode == CG_SPLIT:
        residual_split(A, c, W.z, lam, beta, W.u, W.r, minv, W.diag, S.jacobi_weight,
                       S.split, G.nr)
        for i in range(S.split.n_mine):
            W.h[S.split.mine[i]] = 0.0
        for i in range(S.split.n_own):
            j = S.split.own[i]
            if W.minv != NULL:
                G.s[j] = W.minv[j] * W.r[j]
            W.p[j] = G.s[j]
            W.dsum[j] = 0.0
        red[0] = split_dot(S.split, W.r, W.r, nw)
        red[1] = split_dot(S.split, W.r, G.s, nw)
        comm_sum(S.comm, red, 2)
        return cg_entry_tests(red[0], red[1], rr0, S, G, optimal)
    residual(A, c, W.z, lam, beta, W.u, W.r, minv, W.diag, S.jacobi_weight, S.comm, G.nr)
    residual_sums(W, G, nw)
    P = vec_of(VEC_START, nw, G, W)
    vec_pass(&P, G.n_threads, sums)
    G.pp = sums[0]
    return cg_entry_tests(G.rr, G.rs, rr0, S, G, optimal)


cdef inline void cg_prepare(const Operator* A, const double* c, const CglsSettings* S,
                          CglsWork* W, CgState* G) noexcept nogil:
    """Before the first iteration: z'Cz on this rank (distributed), the step's
    accumulators cleared, p on T_r (split)."""
    cdef int64_t j
    G.zl = 0.0
    if G.mode != CG_SERIAL:
        for j in range(A.n):
            G.zl += c[j] * W.z[j] * W.z[j]
    if W.xd != NULL:
        memset(W.xd, 0, A.n * sizeof(double))
        if G.mode != CG_SPLIT:
            memset(W.dsum, 0, A.nw * sizeof(double))
    if G.mode == CG_SPLIT:
        split_scatter(S.split, W.p)


cdef inline double cg_products(const Operator* A, const double* c, CglsWork* W, int fused,
                             double* qcz) noexcept nogil:
    """One iteration's products: q = A p and h = A'C q (fused: in one pass, A.normal;
    else apply, then apply_t of u = C q); returns q'Cq and sets qcz = q'Cz."""
    cdef int64_t j
    cdef double qcq = 0.0, s = 0.0
    if fused:
        qcq = A.normal(A, W.p, c, W.q, W.u, W.h)
    else:
        A.apply(A, W.p, W.q)
        for j in range(A.n):
            W.u[j] = c[j] * W.q[j]
            qcq += W.u[j] * W.q[j]
        A.apply_t(A, W.u, W.h)
    for j in range(A.n):
        s += c[j] * W.q[j] * W.z[j]
    qcz[0] = s
    return qcq


cdef inline double cg_gamma(const Operator* A, const double* c, double lam,
                          const CglsSettings* S, CglsWork* W, CgState* G) noexcept nogil:
    """The step length gamma = rho / (q'Cq + p'Lam p) after the products, on reduced
    numbers when distributed, which also give z'Cz after the step (block comment)."""
    cdef int64_t j, nw = A.nw
    cdef double qcq, qcz, gamma
    cdef double red[4]
    if G.mode == CG_SERIAL:
        if G.fused:
            qcq = A.normal(A, W.p, c, W.q, W.u, W.h)    # q = A p, h = A'C q
        else:
            A.apply(A, W.p, W.q)
            qcq = 0.0
            for j in range(A.n):
                qcq += c[j] * W.q[j] * W.q[j]
        return G.rho / (qcq + lam * G.pp)
    qcq = cg_products(A, c, W, G.fused, &qcz)
    if G.mode == CG_SPLIT:                          # h on T_r, summed at the owners
        split_reduce(S.split, W.h)
        red[0] = qcq
        red[1] = qcz
        red[2] = G.zl
        red[3] = split_dot(S.split, W.p, W.p, G.nr)
        comm_sum(S.comm, red, 4)
        gamma = G.rho / (red[0] + lam * red[3])
        G.zcz = fmax(red[2] - 2.0 * gamma * red[1] + gamma * gamma * red[0], 0.0)
        return gamma
    W.h[nw] = qcq
    W.h[nw + 1] = qcz
    W.h[nw + 2] = G.zl
    comm_sum(S.comm, W.h, nw + 3)
    qcq = W.h[nw]
    qcz = W.h[nw + 1]
    gamma = G.rho / (qcq + lam * G.pp)
    # z'Cz after the step, from the reduced numbers (block comment)
    G.zcz = fmax(W.h[nw + 2] - 2.0 * gamma * qcz + gamma * gamma * qcq, 0.0)
    return gamma


cdef inline void cg_move_split(const Operator* A, const double* c, double lam, double gamma,
                             const CglsSettings* S, CglsWork* W, CgState* G) noexcept nogil:
    """The split's step (block comment): z, xd; the owners' dsum += gamma p,
    r -= gamma (h + Lam p), s = minv r; r'r and r's reduced."""
    cdef int64_t i, j
    cdef const Split* P = S.split
    cdef double red[2]
    cdef double rr = 0.0, rs = 0.0
    G.zl = 0.0
    for j in range(A.n):
        W.z[j] -= gamma * W.q[j]
        G.zl += c[j] * W.z[j] * W.z[j]
        W.xd[j] += gamma * W.q[j]
    for i in range(P.n_own):
        j = P.own[i]
        W.dsum[j] += gamma * W.p[j]
        W.r[j] -= gamma * (W.h[j] + lam * W.p[j]) if j < G.nr else gamma * W.h[j]
        if W.minv != NULL:
            G.s[j] = W.minv[j] * W.r[j]
        rr += W.r[j] * W.r[j]
        rs += W.r[j] * G.s[j]
    for i in range(P.n_mine):
        W.h[P.mine[i]] = 0.0
    red[0] = rr
    red[1] = rs
    comm_sum(S.comm, red, 2)
    G.rr = red[0]
    G.rs = red[1]


cdef inline void cg_move(const Operator* A, const double* c, double lam, double* beta,
                       double gamma, const CglsSettings* S, CglsWork* W, CgState* G) noexcept nogil:
    """beta += gamma p, z -= gamma q (the step and its image accumulated in dsum, xd),
    and the residual r after the step: by the recurrence r -= gamma (h + Lam p), or
    recomputed from z (serial, two passes); s = minv r, G.rr = r'r, G.rs = r's.  With
    the recurrence, one pass over the weights does all of it."""
    cdef int64_t j, nw = A.nw
    cdef double zcz = 0.0
    cdef double sums[2]
    cdef VecPass P
    if G.mode == CG_SPLIT:
        cg_move_split(A, c, lam, gamma, S, W, G)
        return
    for j in range(A.n):
        W.z[j] -= gamma * W.q[j]
        zcz += c[j] * W.z[j] * W.z[j]
        if W.xd != NULL:                    # and its image on these rows
            W.xd[j] += gamma * W.q[j]
    if G.mode == CG_SERIAL:
        G.zcz = zcz
    else:
        G.zl = zcz
    if not G.recur:
        for j in range(nw):
            beta[j] += gamma * W.p[j]
            if W.xd != NULL:                # the step, as it is taken
                W.dsum[j] += gamma * W.p[j]
        residual(A, c, W.z, lam, beta, W.u, W.r, NULL, NULL, 1.0, NULL, G.nr)
        residual_sums(W, G, nw)
        return
    # the step, r = A'Cz - lam beta by the recurrence, s = minv r, r'r and r's: one pass
    P = vec_of(VEC_MOVE, nw, G, W)
    P.gamma = gamma
    P.lam = lam
    P.beta = beta
    vec_pass(&P, G.n_threads, sums)
    G.rr = sums[0]
    G.rs = sums[1]


cdef inline void cg_verify(const Operator* A, const double* c, double lam, const double* beta,
                         const CglsSettings* S, CglsWork* W, CgState* G) noexcept nogil:
    """Eq. 13 decides on the true residual A'Cz - Lam beta, not the recurrence's: r, s,
    r'r and r's (and distributed z'Cz exactly) recomputed from z."""
    cdef int64_t i, j, nw = A.nw
    cdef const Split* P = S.split
    cdef double red[3]
    if G.mode == CG_SERIAL:
        residual(A, c, W.z, lam, beta, W.u, W.r, NULL, NULL, 1.0, NULL, G.nr)
        residual_sums(W, G, nw)
        return
    for j in range(A.n):
        W.u[j] = c[j] * W.z[j]
    A.apply_t(A, W.u, W.h)
    if G.mode == CG_ALLREDUCE:
        W.h[nw] = G.zl
        comm_sum(S.comm, W.h, nw + 1)
        for j in range(nw):
            W.r[j] = W.h[j] - (lam * beta[j] if j < G.nr else 0.0)
        G.zcz = W.h[nw]
        residual_sums(W, G, nw)
        return
    split_reduce(P, W.h)                    # the split: A'Cz - Lam (beta + dsum)
    for i in range(P.n_own):
        j = P.own[i]
        W.r[j] = W.h[j] - (lam * (beta[j] + W.dsum[j]) if j < G.nr else 0.0)
        if W.minv != NULL:
            G.s[j] = W.minv[j] * W.r[j]
    for i in range(P.n_mine):
        W.h[P.mine[i]] = 0.0
    red[0] = split_dot(P, W.r, W.r, nw)
    red[1] = split_dot(P, W.r, G.s, nw)
    red[2] = G.zl
    comm_sum(S.comm, red, 3)
    G.rr = red[0]
    G.rs = red[1]
    G.zcz = red[2]


cdef inline void cg_direction(const CglsSettings* S, CglsWork* W, CgState* G,
                            int64_t nw) noexcept nogil:
    """The next search direction of (preconditioned) CG from the s = minv r and r's of
    the move: p = s + (r's / rho) p, rho = r's, and p'p over the regularized weights
    in the same pass for the next step length (split: p then on T_r from the owners)."""
    cdef int64_t i, j
    cdef double omega
    cdef double sums[2]
    cdef VecPass P
    if G.mode == CG_SPLIT:
        omega = G.rs / G.rho
        G.rho = G.rs
        for i in range(S.split.n_own):
            j = S.split.own[i]
            W.p[j] = G.s[j] + omega * W.p[j]
        split_scatter(S.split, W.p)
        return
    P = vec_of(VEC_DIRECTION, nw, G, W)
    P.omega = G.rs / G.rho
    vec_pass(&P, G.n_threads, sums)
    G.rho = G.rs
    G.pp = sums[0]


cdef inline void cg_finish_split(double* beta, const CglsSettings* S, CglsWork* W,
                               int64_t nw) noexcept nogil:
    """The split's step into beta (block comment): gathered on every rank, or with
    split.outer scattered to T_r and added there."""
    cdef int64_t i, j
    cdef const Split* P = S.split
    if P.outer:                             # the step where this rank's rows need it
        split_scatter(P, W.dsum)
        for i in range(P.n_mine):
            j = P.mine[i]
            beta[j] += W.dsum[j]
        return
    split_gather(P, W.dsum)
    for j in range(nw):
        beta[j] += W.dsum[j]
