# svr's squared eps-insensitive loss as an implementation of the finite Newton driver's
# interface (csrc/newton_driver.pxd; csrc/_svr.pyx's block comment has the problem).
# Inline: cimported, not compiled on its own.
#
# With e_k = x_k . beta - y_k the loss of example k is 1/2 c_k max(0, |e_k| - p)^2: zones
# above the tube (e_k > p), below it (e_k < -p) and inside.  The active examples are those
# outside the tube, least-squares terms with target tt_k = y_k + p above and y_k - p below
# (weights c_k, residual z_k = tt_k - x_k . beta).  For the exact line search each example
# is two L2-SVM terms with one knee each (csrc/line_search.pxd's exact_line_search):
#
#     below: t = +1, v = x.beta - (y_k - p) + 1    (o = t v < 1 iff e_k < -p)
#     above: t = -1, v = x.beta - (y_k + p) - 1    (o = t v < 1 iff e_k > p),
#
# each with loss 1/2 (1 - o)^2 for o < 1: exactly the example's loss.

from libc.stdint cimport int8_t, int64_t
from libc.string cimport memcpy
from libc.math cimport fabs, sqrt, INFINITY
from csr cimport CSR, dot, sq_norm_row
from csr_passes cimport rmatvec
from cgls cimport CglsSettings, CglsWork, csr_operator
from mfn_terms cimport Loss, Terms, make_loss
from line_search cimport Breakpoint, exact_line_search
from comm cimport comm_active, comm_sum, comm_sum1
from newton_driver cimport NewtonLoss, NewtonWork, reverse_both, image_on_rows


ctypedef struct SvrState:
    # The examples' targets, costs and tube, and the per-step lists.
    const double* yt               # targets
    const double* c                # costs
    double p                       # tube half-width
    int8_t* zone_of                # -1 below, +1 above, 0 inside, at the step's beta
    int64_t* act_rows              # rows of the active examples, then the others' (m)
    int64_t* act_pos               # their positions k, the same way (m)
    double* tv                     # the line search's two terms per example (2 m each)
    double* tdv
    double* tt
    double* tc
    Breakpoint* bp                 # 2 per example


cdef inline double tube_slope(double e, double p) noexcept nogil:
    """l'(e) of l(e) = 1/2 max(0, |e| - p)^2."""
    if e > p:
        return e - p
    if e < -p:
        return e + p
    return 0.0


cdef inline double svr_value(NewtonLoss* NL, NewtonWork* W, const double* beta,
                             const double* pred) noexcept nogil:
    """f(beta) = lam/2 ||beta||_Lam^2 + 1/2 sum_k c_k max(0, |e_k| - p)^2 from the margins
    pred (comm: the loss sum reduced)."""
    cdef SvrState* S = <SvrState*>NL.state
    cdef int64_t k
    cdef double q2 = 0.0, e
    for k in range(W.m):
        e = tube_slope(pred[k] - S.yt[k], S.p)
        q2 += S.c[k] * e * e
    if comm_active(W.comm):
        q2 = comm_sum1(W.comm, q2)
    return 0.5 * W.lam * dot(beta, beta, W.nreg) + 0.5 * q2


cdef inline double grad0_sq(SvrState* S, NewtonWork* W, double b0) noexcept nogil:
    """||grad f(beta_0)||^2 = ||sum_k c_k l'(b0 - y_k) x_k||^2 at the reference point
    beta_0 whose every prediction is b0: 0 (beta = 0), or with a free bias the
    intercept-only model, the weighted mean target (the bias weight is not regularized,
    so lam beta_0 adds nothing).  Uses W.u and W.r as scratch."""
    cdef int64_t k
    for k in range(W.m):
        W.u[k] = S.c[k] * tube_slope(b0 - S.yt[k], S.p)
    rmatvec(W.X, W.rows, W.m, W.u, W.r)
    comm_sum(W.comm, W.r, W.X.n_weights)
    return dot(W.r, W.r, W.X.n_weights)


cdef inline void svr_active(NewtonLoss* NL, NewtonWork* W, const double* beta,
                            CglsSettings* CS, CglsWork* C) noexcept nogil:
    """The Newton model at beta: the examples outside the tube, with their targets;
    CGLS seeded at beta.  act_rows / act_pos list them first and the others after them
    (in the order of k: filled from the end, then turned), one array of m for both."""
    cdef SvrState* S = <SvrState*>NL.state
    cdef int64_t k, n_act = 0, n_off = 0, m = W.m
    cdef double e, tgt
    for k in range(m):
        e = W.y[k] - S.yt[k]
        if S.c[k] > 0.0 and e > S.p:
            S.zone_of[k] = 1
            tgt = S.yt[k] + S.p
        elif S.c[k] > 0.0 and e < -S.p:
            S.zone_of[k] = -1
            tgt = S.yt[k] - S.p
        else:
            S.zone_of[k] = 0
            n_off += 1
            S.act_rows[m - n_off] = W.rows[k]
            S.act_pos[m - n_off] = k
            continue
        S.act_rows[n_act] = W.rows[k]
        S.act_pos[n_act] = k
        W.cc[n_act] = S.c[k]
        W.z[n_act] = tgt - W.y[k]
        n_act += 1
    reverse_both(S.act_rows, S.act_pos, n_act, m)     # the others in the order of k
    memcpy(W.beta_bar, beta, W.nbeta * sizeof(double))
    W.A = csr_operator(W.X, S.act_rows, n_act)


cdef inline void svr_image(NewtonLoss* NL, NewtonWork* W, const double* beta) noexcept nogil:
    """d and dy = X d of the last step (newton_driver.pxd, image_on_rows)."""
    cdef SvrState* S = <SvrState*>NL.state
    image_on_rows(W, S.act_pos, S.act_rows + W.A.n, S.act_pos + W.A.n)


cdef inline double svr_mismatch(NewtonLoss* NL, NewtonWork* W) noexcept nogil:
    """sum over the examples whose zone at beta_bar differs from the step's of
    c_k |l'(e_k) - l'_model(e_k)| ||x_k|| (e_k at beta_bar)."""
    cdef SvrState* S = <SvrState*>NL.state
    cdef int64_t k
    cdef double e, model, total = 0.0
    for k in range(W.m):
        if S.c[k] <= 0.0:
            continue
        e = W.y[k] + W.dy[k] - S.yt[k]
        if S.zone_of[k] > 0:
            model = e - S.p
        elif S.zone_of[k] < 0:
            model = e + S.p
        else:
            model = 0.0
        if tube_slope(e, S.p) != model:
            total += S.c[k] * fabs(tube_slope(e, S.p) - model) * sqrt(sq_norm_row(W.X, W.rows[k]))
    return total


cdef inline double svr_line_search(NewtonLoss* NL, NewtonWork* W,
                                   const double* beta) noexcept nogil:
    """The exact line search along W.p from beta (block comment): two L2-SVM terms per
    example for line_search.pxd's exact_line_search."""
    cdef SvrState* S = <SvrState*>NL.state
    cdef int64_t k
    cdef Terms T
    cdef Loss L = make_loss(1.0, 1.0, 1.0, -INFINITY)
    for k in range(W.m):
        S.tt[2 * k] = 1.0
        S.tv[2 * k] = W.y[k] - (S.yt[k] - S.p) + 1.0
        S.tt[2 * k + 1] = -1.0
        S.tv[2 * k + 1] = W.y[k] - (S.yt[k] + S.p) - 1.0
        S.tdv[2 * k] = W.dy[k]
        S.tdv[2 * k + 1] = W.dy[k]
        S.tc[2 * k] = S.c[k]
        S.tc[2 * k + 1] = S.c[k]
    T.m = 2 * W.m
    T.nb = 0
    T.per = 1
    T.t = S.tt
    T.code = NULL
    T.c = S.tc
    T.y = S.tv
    T.dy = S.tdv
    T.b = NULL
    T.db = NULL
    return exact_line_search(&L, W.lam, beta, W.p, W.nreg, &T, S.bp, max(2 * W.m, 1), W.comm,
                             NULL, W.X.n_threads)


cdef inline NewtonLoss svr_loss(SvrState* S) noexcept nogil:
    """The driver's interface to svr's loss."""
    cdef NewtonLoss NL
    NL.state = S
    NL.smooth = 0
    NL.value = svr_value
    NL.active = svr_active
    NL.after_cgls = NULL
    NL.step_image = svr_image
    NL.mismatch = svr_mismatch
    NL.cg_point = NULL
    NL.line_search = svr_line_search
    NL.certified_rr = NULL
    NL.gradient_test = NULL
    NL.accept = NULL
    NL.move = NULL
    return NL
