# mfn's losses as implementations of the finite Newton driver's interface
# (csrc/newton_driver.pxd): binary terms of a piecewise quadratic loss (mfn, ls,
# mfn-huber, mfn-l1's stages) and the ordinal terms of eq. 25 (mfn-ord).  csrc/_mfn.pyx's
# block comment has the problem, the loss record (a, tm, hi, lo) and the algorithm;
# csrc/mfn_terms.pxd the loss and the terms seen through the margins, csrc/line_search.pxd
# the exact line search.  Inline: cimported, not compiled on its own.
#
# Binary terms: zone 1 is the active set (CGLS over its CSR rows, weights a c, residual
# t tm - y); zone 2 enters the Newton model through the shift q of eq. 23, so CGLS solves
# for beta~ = beta - q.  The damped Jacobi diagonal is kept from one step to the next and
# updated by the rows that entered or left zone 1 (MfnState.diag_update).  With a weight
# split of the Newton loop (Split.outer) beta and the step are valid on this rank's weights.
# Ordinal terms (eq. 26): CGLS over the operator (w, b) -> x_k . w - b_s of the zone-1
# (example, threshold) pairs, with its own Jacobi diagonal; the Newton loop stays
# replicated (NewtonWork.cg_split splits CGLS alone).

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.string cimport memcpy, memset
from libc.math cimport fmax, sqrt, INFINITY
from csr cimport CSR, RowCopy, gather_rows, total_nnz, sq_norm_row, dot, axpy_row_sq
from csr_passes cimport matvec, rmatvec, col_sq_sums
from chunked cimport CHUNK_ENTRIES, n_chunks, chunk_sums, dot_chunked
from cgls cimport Operator, CglsSettings, CglsWork, csr_operator
from mfn_terms cimport Loss, Terms, zone, loss_slope, mismatch_term, term_at, term_out
from line_search cimport Breakpoint, exact_line_search
from comm cimport Comm, comm_active, comm_sum, comm_sum1
from wsplit cimport Split, split_reduce, split_scatter, split_dot
from newton_driver cimport NewtonLoss, NewtonWork, reverse_both, copy_weights, image_on_rows


ctypedef struct OrdAct:
    # The zone-1 terms of an ordinal problem, grouped by example.
    const int64_t* rows            # row of each active example (n_ex)
    const int64_t* ptr             # its terms are ptr[e] .. ptr[e + 1] - 1
    const int32_t* s               # threshold of each term
    int64_t n_ex
    int64_t n_terms
    int64_t nw                     # weights before the thresholds in beta
    int64_t nb
    double* xw                     # scratch: x_k . p_w per active example (n_ex)
    double* U                      # scratch: summed term weights per active example (n_ex)


# MfnState.in1's bits per example.
cdef enum:
    IN_ZONE1 = 1
    MOVED = 2


ctypedef struct MfnState:
    # mfn's loss record and terms (T.y and T.dy are the driver's margins y, dy; an
    # ordinal T.b lies inside beta, T.db inside the step W.p) and its per-step lists.
    Loss L
    Terms T
    double gap_stop                # the gradient test's certified gap (0: off)
    int diag_update                # keep the Jacobi diagonal across steps (binary)
    int64_t* act_rows              # rows of the zone-1 examples (binary: m, then the
                                   # others' from position n_act on)
    int64_t* act_pos               # binary: their positions k, the same way (m)
    int64_t* lin_rows              # binary, a loss with zone 2: rows of the zone-2 examples
    double* lin_u                  # and c kappa t / lam for them (NULL without zone 2)
    double* shift                  # binary: q of eq. 23 (nbeta)
    int shifted                    # binary: the last step solved for beta~ = beta - shift
    uint8_t* in1                   # binary: per example IN_ZONE1 (in the last step's zone 1)
                                   # and MOVED (its membership changed at that step)
    int have_diag                  # W.diag and in1 describe the last step's zone 1
    int64_t* ex_ptr                # ordinal: first zone-1 term of each active example (m + 1)
    int32_t* act_s                 # ordinal: threshold of each zone-1 term
    double* xw                     # ordinal operator scratch (m + 1)
    double* U                      # ordinal operator scratch (m + 1)
    double* cg_xd                  # ordinal split CGLS: the step's image on the terms
    OrdAct O                       # ordinal: the last step's operator context
    Breakpoint* bp                 # the line search's breakpoints (n_bp)
    int64_t n_bp
    RowCopy* copy                  # binary: zone 1's rows copied contiguous for CGLS when
                                   # they are few (binary_active), or NULL: never
    CSR copy_csr                   # that copy as a CSR


# ------------------------------------------------------------------ the objective

ctypedef struct _LossTerms:
    const Loss* L
    const Terms* T


cdef inline void _q2_span(const void* ctx, int64_t c, int64_t lo, int64_t hi,
                          double* out) noexcept nogil:
    """out = sum over the binary terms lo:hi in zone 1 of a c (v - t tm)^2, in order (no
    zone 2; a chunk_fn over ctx's loss and terms)."""
    cdef const Loss* L = (<const _LossTerms*>ctx).L
    cdef const Terms* T = (<const _LossTerms*>ctx).T
    cdef int64_t k
    cdef double q2 = 0.0, v, t, d, a = L.a, tm = L.tm, knee = L.hi
    for k in range(lo, hi):
        v = T.y[k]
        t = T.t[k]
        if t * v < knee:
            d = v - t * tm
            q2 += a * T.c[k] * d * d
    out[0] = q2


cdef inline double primal(const Loss* L, double lam, const double* beta, int64_t nbeta,
                          const Terms* T, const Comm* comm, const Split* split,
                          int n_threads=1) noexcept nogil:
    """f(beta) = lam/2 ||beta||^2 + sum_j c_j l(o_j)  (eq. 2, 19, 25), from the margins
    (comm: this rank's terms, the loss sums reduced; split: beta valid on this rank's
    weights, ||beta||^2 summed over the owned ones and reduced with the loss).  Binary
    terms without a zone 2 and ||beta||^2 are summed in csrc/chunked.pxd's chunks, on
    n_threads threads: the same bits for every thread count."""
    cdef int64_t k, s
    cdef double q2 = 0.0, lin = 0.0, v, t, o, d
    cdef double red[3]
    cdef int zn
    cdef _LossTerms LT
    if split != NULL:
        return _primal_split(L, lam, beta, nbeta, T, comm, split)
    if T.nb == 0 and L.lo == -INFINITY:      # binary terms, no zone 2: the same sums, fewer tests
        LT.L = L
        LT.T = T
        chunk_sums(_q2_span, &LT, T.m, n_chunks(T.m, CHUNK_ENTRIES), 1, n_threads, &q2)
        if comm_active(comm):
            q2 = comm_sum1(comm, q2)
        return 0.5 * lam * dot_chunked(beta, beta, nbeta, n_threads) + 0.5 * q2
    for k in range(T.m):
        for s in range(T.per):
            term_out(T, k, s, &v, &t)
            o = t * v
            zn = zone(L, o)
            if zn == 1:
                d = v - t * L.tm
                q2 += L.a * T.c[k] * d * d
            elif zn == 2:
                lin += T.c[k] * (L.kappa * (L.lo - o) + L.lin0)
    if comm_active(comm):
        red[0] = q2
        red[1] = lin
        comm_sum(comm, red, 2)
        q2 = red[0]
        lin = red[1]
    return 0.5 * lam * dot(beta, beta, nbeta) + 0.5 * q2 + lin


cdef inline double _primal_split(const Loss* L, double lam, const double* beta, int64_t nbeta,
                                 const Terms* T, const Comm* comm,
                                 const Split* split) noexcept nogil:
    """primal() of binary terms with a weight split: one allreduce of the loss's two
    sums and this rank's part of ||beta||^2 (its owned weights)."""
    cdef int64_t k
    cdef double v, t, o
    cdef double red[3]
    cdef int zn
    red[0] = 0.0
    red[1] = 0.0
    red[2] = split_dot(split, beta, beta, nbeta)
    for k in range(T.m):
        v = T.y[k]
        t = T.t[k]
        o = t * v
        zn = zone(L, o)
        if zn == 1:
            red[0] += L.a * T.c[k] * (v - t * L.tm) * (v - t * L.tm)
        elif zn == 2:
            red[1] += T.c[k] * (L.kappa * (L.lo - o) + L.lin0)
    comm_sum(comm, red, 3)
    return 0.5 * lam * red[2] + 0.5 * red[0] + red[1]


cdef inline double mfn_value(NewtonLoss* NL, NewtonWork* W, const double* beta,
                             const double* y) noexcept nogil:
    """The driver's f at beta with margins y (the thresholds inside beta)."""
    cdef MfnState* M = <MfnState*>NL.state
    cdef Terms T2 = M.T
    T2.y = <double*>y
    if T2.nb > 0:
        T2.b = beta + W.X.n_weights
    return primal(&M.L, W.lam, beta, W.nreg, &T2, W.comm, W.split, W.X.n_threads)


cdef inline double mfn_mismatch(NewtonLoss* NL, NewtonWork* W) noexcept nogil:
    """sum over terms whose zone at beta_bar (v + dv) differs from their zone at beta of
    c |l'(o) - l'_model(o)| ||x_term||: a bound on the gradient the zone changes add.
    ||x_term|| is ||x_k|| for binary terms, sqrt(||x_k||^2 + 1) for ordinal ones (the
    threshold's coefficient), computed only for the few terms that moved."""
    cdef MfnState* M = <MfnState*>NL.state
    cdef const Terms* T = &M.T
    cdef int64_t k, s
    cdef double v, dv, t, mm, total = 0.0
    for k in range(T.m):
        for s in range(T.per):
            term_at(T, k, s, &v, &dv, &t)
            mm = mismatch_term(&M.L, zone(&M.L, t * v), t * (v + dv))
            if mm != 0.0:
                total += T.c[k] * mm * sqrt(sq_norm_row(W.X, W.rows[k])
                                            + (1.0 if T.nb > 0 else 0.0))
    return total


cdef inline double mfn_line_search(NewtonLoss* NL, NewtonWork* W,
                                   const double* beta) noexcept nogil:
    """The exact line search along d = W.p (csrc/line_search.pxd)."""
    cdef MfnState* M = <MfnState*>NL.state
    return exact_line_search(&M.L, W.lam, beta, W.p, W.nreg, &M.T, M.bp, M.n_bp, W.comm,
                             W.split, W.X.n_threads)


# ------------------------------------------------------------------ the terms

cdef inline void set_terms(MfnState* M, NewtonWork* W, const double* t, const int32_t* codes,
                           int64_t nb, const double* c, double* beta) noexcept nogil:
    """M.T: the terms seen through the driver's margins (csrc/mfn_terms.pxd): binary (t,
    nb = 0) or ordinal (codes, nb thresholds inside beta, their step inside W.p)."""
    cdef int64_t m = W.m, nw = W.X.n_weights
    M.T.m = m
    M.T.nb = nb
    M.T.per = nb if nb > 0 else 1
    M.T.t = t if (nb == 0 and m > 0) else NULL
    M.T.code = codes if (nb > 0 and m > 0) else NULL
    M.T.c = c if m > 0 else NULL
    M.T.y = W.y if m > 0 else NULL
    M.T.dy = W.dy
    M.T.b = beta + nw if nb > 0 else NULL
    M.T.db = W.p + nw if nb > 0 else NULL       # the step d lives in W.p


cdef inline void zone_counts(const Loss* L, const Terms* T, int64_t* counts,
                             const Comm* comm) noexcept nogil:
    """Number of terms in zones 0, 1, 2 at beta (comm: over every rank's terms)."""
    cdef int64_t k, s
    cdef double v, t
    cdef double red[3]
    counts[0] = 0
    counts[1] = 0
    counts[2] = 0
    for k in range(T.m):
        for s in range(T.per):
            term_out(T, k, s, &v, &t)
            counts[zone(L, t * v)] += 1
    if comm_active(comm):
        for k in range(3):
            red[k] = <double>counts[k]
        comm_sum(comm, red, 3)
        for k in range(3):
            counts[k] = <int64_t>red[k]


cdef inline int all_zero(const double* v, int64_t n) noexcept nogil:
    """1 if every one of the n entries of v is 0 (a cold start), else 0."""
    cdef int64_t j
    for j in range(n):
        if v[j] != 0.0:
            return 0
    return 1


cdef inline double grad_at_zero_sq(const CSR* X, const int64_t* rows, const Terms* T,
                                   const Loss* L, double* u, double* g,
                                   const Comm* comm) noexcept nogil:
    """||grad f(0)||^2 for binary terms: grad f(0) = sum_k c_k l'(0) t_k x_k (u: m doubles,
    g: n_weights doubles of scratch; comm: the sum over every rank's terms)."""
    cdef int64_t k
    cdef double s = loss_slope(L, 0.0)
    for k in range(T.m):
        u[k] = T.c[k] * s * T.t[k]
    rmatvec(X, rows, T.m, u, g)
    comm_sum(comm, g, X.n_weights)
    return dot(g, g, X.n_weights)


# ------------------------------------------------------------------ binary terms

cdef inline void _binary_shift(MfnState* M, NewtonWork* W, int64_t n_lin) noexcept nogil:
    """Eq. 23: beta_bar -= q = (1/lam) sum_{zone 2} c kappa t x (reduced; with a split
    of the Newton loop, on this rank's weights)."""
    cdef int64_t j, nw = W.X.n_weights
    rmatvec(W.X, M.lin_rows, n_lin, M.lin_u, M.shift)
    if W.split != NULL:                       # q on this rank's weights
        split_reduce(W.split, M.shift)
        split_scatter(W.split, M.shift)
        for j in range(W.split.n_mine):
            W.beta_bar[W.split.mine[j]] -= M.shift[W.split.mine[j]]
    else:
        comm_sum(W.comm, M.shift, nw)
        for j in range(nw):
            W.beta_bar[j] -= M.shift[j]


cdef inline void _kept_diagonal(MfnState* M, NewtonWork* W, int64_t n_chg, int64_t n_act,
                                CglsSettings* S) noexcept nogil:
    """The damped Jacobi preconditioner 1 / (lam + jw diag(X_1' C X_1)) kept across
    Newton steps: when fewer than a quarter of the zone-1 examples entered or left zone 1
    since the last step (n_chg of them, marked MOVED in in1), diag is updated by their rows
    alone (+- c x_k^2, in the order of k) instead of being summed again over all of zone 1
    (S.jacobi then off).  It only preconditions, so rounding in diag changes the CGLS path
    at rounding level and never what eq. 13 accepts.  Distributed, the diagonal is summed
    afresh at every step (a rank's update would only know its own rows)."""
    cdef int64_t j, k, nw = W.X.n_weights
    cdef const Loss* L = &M.L
    cdef int keep = (M.diag_update and M.have_diag and 4 * n_chg < n_act
                     and not comm_active(W.comm) and W.nreg == nw)
    if keep:
        for k in range(W.m):                  # rows in and out of zone 1
            if M.in1[k] & MOVED:
                axpy_row_sq(W.X, W.rows[k], L.a * M.T.c[k] if M.in1[k] & IN_ZONE1
                            else -L.a * M.T.c[k], W.diag)
        for j in range(nw):
            W.minv[j] = 1.0 / (W.lam + S.jacobi_weight * fmax(W.diag[j], 0.0))
        S.jacobi = 0                          # else CGLS sums diag over zone 1 again
    M.have_diag = 1


cdef enum:
    COPY_SHARE = 4                 # copy zone 1's rows when they are at most 1/4 of them
                                   # (and of their entries)


cdef inline void binary_active(NewtonLoss* NL, NewtonWork* W, const double* beta,
                               CglsSettings* S, CglsWork* C) noexcept nogil:
    """The Newton model of binary terms at beta (eq. 11 / eq. 23): zone 1's rows, weights
    a c and residual t tm - y; CGLS seeded at beta - q.  CGLS hands back the step d
    (W.dsum) and X_1 d (W.xd) and, with S.jacobi, builds minv (and W.diag) itself.
    act_rows / act_pos list zone 1 first, the other examples after it (in the order of k:
    they are filled from the end, then turned), one array of m for both.
    Distributed: this rank's examples; the shift is formed by every rank whenever the
    loss has a zone 2, as another rank may have terms there."""
    cdef MfnState* M = <MfnState*>NL.state
    cdef const Terms* T = &M.T
    cdef const Loss* L = &M.L
    cdef int64_t k, n_act = 0, n_lin = 0, n_off = 0, n_chg = 0, m = T.m
    cdef double o
    cdef int zn
    cdef uint8_t was
    for k in range(m):
        o = T.t[k] * T.y[k]
        zn = zone(L, o)
        was = M.in1[k] & IN_ZONE1
        if (zn == 1) != was:
            M.in1[k] = (IN_ZONE1 if zn == 1 else 0) | MOVED
            n_chg += 1
        else:
            M.in1[k] = was
        if zn == 1:
            M.act_rows[n_act] = W.rows[k]
            M.act_pos[n_act] = k
            W.cc[n_act] = L.a * T.c[k]
            W.z[n_act] = T.t[k] * L.tm - T.y[k]
            n_act += 1
            continue
        n_off += 1
        M.act_rows[m - n_off] = W.rows[k]
        M.act_pos[m - n_off] = k
        if zn == 2:
            M.lin_rows[n_lin] = W.rows[k]
            M.lin_u[n_lin] = T.c[k] * L.kappa * T.t[k] / W.lam
            n_lin += 1
    reverse_both(M.act_rows, M.act_pos, n_act, m)     # the others in the order of k
    copy_weights(W.beta_bar, beta, W.X.n_weights, W.split)
    M.shifted = n_lin > 0 or (comm_active(W.comm) and L.lo > -INFINITY)
    if M.shifted:                             # eq. 23: solve for beta~ = beta - q
        _binary_shift(M, W, n_lin)
    if S.jacobi:
        _kept_diagonal(M, W, n_chg, n_act, S)
    W.A = csr_operator(W.X, M.act_rows, n_act)
    # few active rows lie scattered over X: CGLS passes over them several times, so
    # they are copied contiguous once (csr.pxd, gather_rows) when they are at most a
    # quarter of the examples and hold at most a quarter of their average entries (the
    # bound linsvm/solvers/mfn_spec.py states for its memory); not with a weight split,
    # whose CGLS keeps the rank's rows as they are
    if (M.copy != NULL and W.cg_split == NULL and 0 < n_act and COPY_SHARE * n_act <= m
            and gather_rows(W.X, M.act_rows, n_act,
                            total_nnz(W.X) / W.X.n_rows * m / COPY_SHARE,
                            M.copy, &M.copy_csr) == 0):
        W.A = csr_operator(&M.copy_csr, M.copy.iota, n_act)


cdef inline void binary_unshift(NewtonLoss* NL, NewtonWork* W,
                                const double* beta) noexcept nogil:
    """beta_bar = beta~ + q after CGLS (eq. 23)."""
    cdef MfnState* M = <MfnState*>NL.state
    cdef int64_t j
    if M.shifted and W.split != NULL:
        for j in range(W.split.n_mine):
            W.beta_bar[W.split.mine[j]] += M.shift[W.split.mine[j]]
    elif M.shifted:
        for j in range(W.X.n_weights):
            W.beta_bar[j] += M.shift[j]


cdef inline void binary_image(NewtonLoss* NL, NewtonWork* W, const double* beta) noexcept nogil:
    """d and dy = X d of the last binary step (newton_driver.pxd, image_on_rows)."""
    cdef MfnState* M = <MfnState*>NL.state
    image_on_rows(W, M.act_pos, M.act_rows + W.A.n, M.act_pos + W.A.n)


cdef inline const double* binary_cg_point(NewtonLoss* NL, NewtonWork* W) noexcept nogil:
    """beta~ = beta_bar - shift, the point the last binary step's CGLS solved for."""
    cdef MfnState* M = <MfnState*>NL.state
    cdef int64_t j
    if not M.shifted:
        return W.beta_bar
    for j in range(W.X.n_weights):
        W.sv[j] = W.beta_bar[j] - M.shift[j]
    return W.sv


cdef inline double binary_certified_rr(NewtonLoss* NL, NewtonWork* W, double f) noexcept nogil:
    """f - f* <= ||grad f||^2 / (2 lam) (f is lam-strongly convex when every weight is
    regularized), so ||grad f||^2 <= 2 gap_stop lam f certifies a relative gap of
    gap_stop; INFINITY without that bound."""
    cdef MfnState* M = <MfnState*>NL.state
    if M.gap_stop > 0.0 and W.nreg == W.nbeta:
        return 2.0 * M.gap_stop * W.lam * f
    return INFINITY


cdef inline NewtonLoss binary_loss(MfnState* M) noexcept nogil:
    """The driver's interface to mfn's binary terms."""
    cdef NewtonLoss NL
    NL.state = M
    NL.smooth = 0
    NL.value = mfn_value
    NL.active = binary_active
    NL.after_cgls = binary_unshift
    NL.step_image = binary_image
    NL.mismatch = mfn_mismatch
    NL.cg_point = binary_cg_point
    NL.line_search = mfn_line_search
    NL.certified_rr = binary_certified_rr
    NL.gradient_test = NULL
    NL.accept = NULL
    NL.move = NULL
    return NL


# ------------------------------------------------------------------ ordinal terms (eq. 26)

cdef inline void ord_apply(const Operator* A, const double* p, double* out) noexcept nogil:
    """out_j = x_k . p_w - p_b[s]  for the active terms j = (k, s): one mat-vec over the
    active examples, whatever their number of terms."""
    cdef const OrdAct* O = <const OrdAct*>A.ctx
    cdef int64_t e, j
    matvec(A.X, O.rows, O.n_ex, p, O.xw)
    for e in range(O.n_ex):
        for j in range(O.ptr[e], O.ptr[e + 1]):
            out[j] = O.xw[e] - p[O.nw + O.s[j]]


cdef inline void ord_apply_t(const Operator* A, const double* u, double* out) noexcept nogil:
    """out = A' u: out_w = sum_k (sum_{j of k} u_j) x_k (one scatter),
    out_b[s] = -sum_{j: s_j = s} u_j."""
    cdef const OrdAct* O = <const OrdAct*>A.ctx
    cdef int64_t e, j
    cdef double acc
    for e in range(O.n_ex):
        acc = 0.0
        for j in range(O.ptr[e], O.ptr[e + 1]):
            acc += u[j]
        O.U[e] = acc
    rmatvec(A.X, O.rows, O.n_ex, O.U, out)
    memset(out + O.nw, 0, O.nb * sizeof(double))
    for j in range(O.n_terms):
        out[O.nw + O.s[j]] -= u[j]


cdef inline Operator ordinal_operator(const CSR* X, const OrdAct* O) noexcept nogil:
    """The operator of eq. 26 on the active terms of O, (w, b) -> x_k . w - b_s, for
    cgls.pxd: applied in O(nnz of the active examples + number of active terms).  It
    has no fused pass and no built-in Jacobi diagonal (ordinal_active forms minv)."""
    cdef Operator A
    A.n = O.n_terms
    A.nw = O.nw + O.nb
    A.poll_rows = O.n_ex
    A.apply = ord_apply
    A.apply_t = ord_apply_t
    A.normal = NULL
    A.apply_t_sq = NULL
    A.X = X
    A.rows = O.rows
    A.ctx = O
    return A


cdef inline void _ordinal_jacobi(MfnState* M, NewtonWork* W, double jw) noexcept nogil:
    """minv = 1 / (lam + jw diag(A' C A)) of the ordinal operator (reduced when
    distributed; with a CGLS split summed at the owners, valid there)."""
    cdef OrdAct* O = &M.O
    cdef int64_t k, j, nw = O.nw, nbeta = O.nw + O.nb
    cdef double w_sum
    for k in range(O.n_ex):
        w_sum = 0.0
        for j in range(M.ex_ptr[k], M.ex_ptr[k + 1]):
            w_sum += W.cc[j]
        M.U[k] = w_sum
    col_sq_sums(W.X, M.act_rows, O.n_ex, M.U, W.minv)
    memset(W.minv + nw, 0, O.nb * sizeof(double))
    for j in range(O.n_terms):
        W.minv[nw + M.act_s[j]] += W.cc[j]
    if W.cg_split != NULL:
        split_reduce(W.cg_split, W.minv)
        for k in range(W.cg_split.n_own):
            j = W.cg_split.own[k]
            W.minv[j] = 1.0 / (W.lam + jw * W.minv[j])
    else:
        comm_sum(W.comm, W.minv, nbeta)
        for j in range(nbeta):
            W.minv[j] = 1.0 / (W.lam + jw * W.minv[j])


cdef inline void ordinal_active(NewtonLoss* NL, NewtonWork* W, const double* beta,
                                CglsSettings* S, CglsWork* C) noexcept nogil:
    """The Newton model of eq. 26 at beta (the zone-1 terms kept), CGLS over the ordinal
    operator seeded at beta, checking eq. 13 on the true residual itself.  Ordinal
    losses have no zone 2 (checked by the Python entry).  With W.cg_split, CGLS in the
    split arrangement: the step in dsum, its image in cg_xd, beta_bar gathered on every
    rank at the end (both NULL without one)."""
    cdef MfnState* M = <MfnState*>NL.state
    cdef const Terms* T = &M.T
    cdef int64_t k, s, n_act = 0, n_ex = 0, start, nw = W.X.n_weights
    cdef double v, t
    for k in range(T.m):
        start = n_act
        for s in range(T.nb):
            term_out(T, k, s, &v, &t)
            if zone(&M.L, t * v) == 1:
                M.act_s[n_act] = <int32_t>s
                W.cc[n_act] = M.L.a * T.c[k]
                W.z[n_act] = t * M.L.tm - v
                n_act += 1
        if n_act > start:
            M.act_rows[n_ex] = W.rows[k]
            M.ex_ptr[n_ex] = start
            n_ex += 1
    M.ex_ptr[n_ex] = n_act
    M.O.rows = M.act_rows
    M.O.ptr = M.ex_ptr
    M.O.s = M.act_s
    M.O.n_ex = n_ex
    M.O.n_terms = n_act
    M.O.nw = nw
    M.O.nb = T.nb
    M.O.xw = M.xw
    M.O.U = M.U
    W.A = ordinal_operator(W.X, &M.O)
    memcpy(W.beta_bar, beta, W.nbeta * sizeof(double))
    if S.jacobi:
        _ordinal_jacobi(M, W, S.jacobi_weight)
    S.jacobi = 0
    S.fused_cg = 0
    S.verify = 1
    S.jacobi_weight = 1.0
    C.diag = NULL
    C.dsum = W.dsum if W.cg_split != NULL else NULL
    C.xd = M.cg_xd


cdef inline void ordinal_image(NewtonLoss* NL, NewtonWork* W, const double* beta) noexcept nogil:
    """d = beta_bar - beta (the thresholds' step in W.p[nw:], T.db) and dy = X d_w: one
    mat-vec over every example."""
    cdef int64_t j
    for j in range(W.nbeta):
        W.p[j] = W.beta_bar[j] - beta[j]
    matvec(W.X, W.rows, W.m, W.p, W.dy)


cdef inline NewtonLoss ordinal_loss(MfnState* M) noexcept nogil:
    """The driver's interface to mfn-ord's terms."""
    cdef NewtonLoss NL
    NL.state = M
    NL.smooth = 0
    NL.value = mfn_value
    NL.active = ordinal_active
    NL.after_cgls = NULL
    NL.step_image = ordinal_image
    NL.mismatch = mfn_mismatch
    NL.cg_point = NULL
    NL.line_search = mfn_line_search
    NL.certified_rr = NULL
    NL.gradient_test = NULL
    NL.accept = NULL
    NL.move = NULL
    return NL
