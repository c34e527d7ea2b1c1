# newGLMNET, the Newton method of csrc/_l1.pyx's `-s glmnet` (its block comment has the
# method: Yuan, Ho & Lin, JMLR 2012): the per-row terms of a Newton iteration, the
# gradient with outer shrinking, the inner coordinate descent on the quadratic model,
# the line search, and the Newton iterations.  Everything here is inline: this file is
# cimported, not compiled on its own.

from libc.stdint cimport int64_t, uint64_t
from libc.math cimport fabs, exp, INFINITY
from libc.string cimport memset
from cython.parallel cimport prange
from rng cimport shuffle
from interrupt cimport Stop, stop_poll, stop_keep
from clock cimport monotonic_seconds
from l1_shared cimport (L1Settings, Sweep, CONVERGED, MAX_ITER, STALLED, NU, SIGMA, STEP_BOUND,
                        subgrad, reg_abs, can_shrink, newton_step, logistic_loss,
                        trace_row)
from l1_columns cimport (CSC, ROW_BLOCK, n_blocks, col_shift, grad_and_curvature,
                         col_model_grad)


cdef struct GlmWork:
    # The state of a newGLMNET solve over the column copy A (per row: n doubles each;
    # per weight: n_cols doubles each)
    const double* a     # per row: a_k = C c_k
    double* w           # the weights
    double* u           # per weight: w + d, the inner solve's point
    double* z           # per row: z_k = z_k(w)
    double* ez          # per row: exp(z_k)
    double* lk          # per row: log(1 + exp(-z_k))
    double* Dk          # per row: D_kk
    double* gk          # per row: the loss derivative a_k (tau_k - 1)
    double* Xd          # per row: x_k.d with the label folded in
    double* ez_new      # per row: exp(z) and the loss at the line search's trial
    double* lk_new
    double* grad        # per weight: g = grad L(w)
    double* hdiag       # per weight: H_jj (nu added on the working set)
    int64_t* index      # index[0:n_total]: the features taking part; the working set first
    int64_t* qindex     # the inner solve's active features
    int64_t n_total
    int64_t free        # the free bias column, or -1
    double f            # f(w)
    double* part        # one double per block of a column or of the rows
    double* trace       # one row of TRACE_COLS per Newton iteration


cdef struct GlmStep:
    # The line search's answer
    double lam          # the step length
    double reg_change   # ||w + lam d||_1 - ||w||_1 over the working set
    double dloss        # L(w + lam d) - L(w)
    int accepted


cdef struct GlmOut:
    int n_iter
    int status
    int64_t n_active
    int64_t inner_total        # inner sweeps over all Newton iterations
    int64_t ls_trials          # line-search trials over all Newton iterations
    double last_norm           # ||S(w)||_1 at the last iterate checked
    double inner_eps
    double grad_inf            # ||grad L||_inf at the last iterate checked
    int grad_at_w              # 1: that iterate is the returned w


cdef inline double start_norm(const CSC* A, const double* a, double factor,
                              int64_t free) noexcept nogil:
    """||S(0)||_1: at w = 0 every margin is 0, so g_j(0) = -factor sum_k a_k v_kj
    (factor 2 for the squared hinge, 1/2 for the logistic loss; free: the free column)."""
    cdef int64_t j, p
    cdef double s, total = 0.0
    for j in range(A.n_cols):
        s = 0.0
        for p in range(A.colptr[j], A.colptr[j + 1]):
            s += a[A.row[p]] * A.val[p]
        total += subgrad(-factor * s, 0.0, j == free)
    return total


cdef inline double _trial_span(const double* a, const double* z, const double* Xd,
                               const double* lk, double lam, double* ez_new, double* lk_new,
                               int64_t k0, int64_t k1) noexcept nogil:
    """trial_loss_change over the rows k0:k1."""
    cdef int64_t k
    cdef double dloss = 0.0, zn, ezn
    for k in range(k0, k1):
        if Xd[k] != 0.0:
            zn = z[k] + lam * Xd[k]
            ezn = exp(zn)
            ez_new[k] = ezn
            lk_new[k] = logistic_loss(zn, ezn)
            dloss += a[k] * (lk_new[k] - lk[k])
    return dloss


cdef inline double trial_loss_change(const GlmWork* W, int64_t n, double lam,
                                     int T) noexcept nogil:
    """sum_k a_k (loss(z_k + lam Xd_k) - loss(z_k)) over the rows with Xd_k != 0, their
    new exp(z) and loss in ez_new, lk_new: by blocks of ROW_BLOCK rows on T threads
    (csrc/_l1.pyx: threads)."""
    cdef int64_t nb = n_blocks(n, ROW_BLOCK), b
    cdef double dloss = 0.0
    cdef double* part = W.part
    if nb <= 1:
        return _trial_span(W.a, W.z, W.Xd, W.lk, lam, W.ez_new, W.lk_new, 0, n)
    for b in prange(nb, schedule="static", num_threads=T):
        part[b] = _trial_span(W.a, W.z, W.Xd, W.lk, lam, W.ez_new, W.lk_new, b * ROW_BLOCK,
                              min(n, (b + 1) * ROW_BLOCK))
    for b in range(nb):
        dloss += part[b]
    return dloss


cdef inline void glm_row_terms(const CSC* A, GlmWork* W) noexcept nogil:
    """Per row: the loss derivative a_k (tau_k - 1) and D_kk = a_k tau_k (1 - tau_k)."""
    cdef int64_t k, n = A.n_rows
    cdef const double* a = W.a
    cdef const double* ez = W.ez
    cdef double* gk = W.gk
    cdef double* Dk = W.Dk
    cdef double ezk, pk, tk
    for k in prange(n, schedule="static", num_threads=A.n_threads):
        ezk = ez[k]
        pk = 1.0 / (1.0 + ezk)              # 1 - tau_k
        tk = ezk * pk if ezk < 1e300 else 1.0
        gk[k] = -a[k] * pk
        Dk[k] = a[k] * tk * pk


cdef inline void glm_outer(const CSC* A, GlmWork* W, const L1Settings* s, double M_old,
                           Sweep* sw, Stop* stop) noexcept nogil:
    """The gradient and Hessian diagonal on every feature (on the threads), |S_j| and the
    outer shrinking against M_old: this iteration's working set J is index[0:sw.n_active];
    sw also gets the largest |S_j| of J, ||S||_1 over J and ||g||_inf over every feature
    visited.  Stops early once the Stop record says so."""
    cdef int64_t n_active = W.n_total, i = 0, j
    cdef double n_ex = <double>A.n_rows
    cdef double M_new = 0.0, norm1 = 0.0, gmax = 0.0, g, h, v, wj
    cdef bint is_free
    cdef int64_t tmp
    grad_and_curvature(A, W.index, W.n_total, W.gk, W.Dk, W.grad, W.hdiag)
    while i < n_active:
        j = W.index[i]
        g = W.grad[j]
        h = W.hdiag[j]
        if fabs(g) > gmax:
            gmax = fabs(g)
        wj = W.w[j]
        is_free = j == W.free
        if can_shrink(g, wj, s.shrinking, is_free, M_old, n_ex):
            n_active -= 1
            tmp = W.index[i]; W.index[i] = W.index[n_active]; W.index[n_active] = tmp
            continue
        v = subgrad(g, wj, is_free)
        if v > M_new:
            M_new = v
        norm1 += v
        W.hdiag[j] = h + NU
        i += 1
        if stop_poll(stop, A.colptr[j + 1] - A.colptr[j] + 1):
            break
    sw.M_new = M_new
    sw.norm1 = norm1
    sw.grad_inf = gmax
    sw.n_active = n_active


cdef inline double glm_inner_sweep(const CSC* A, GlmWork* W, const L1Settings* s,
                                   int64_t* q_active, double qM_old, double* qM_new,
                                   Stop* stop) noexcept nogil:
    """One inner sweep over qindex[0:q_active] in its order: for each feature, dq/dd_j, the
    inner shrinking against qM_old, the closed-form step of the one-variable model on
    u_j (bounded by STEP_BOUND) and the update of Xd.  Returns the sweep's sum of
    violations, its largest in qM_new."""
    cdef int64_t n_q = q_active[0], i = 0, j, p0, p1, tmp
    cdef double n_ex = <double>A.n_rows
    cdef double M_new = 0.0, norm1 = 0.0, g, h, v, uj, step
    cdef bint is_free
    while i < n_q:
        j = W.qindex[i]
        p0 = A.colptr[j]
        p1 = A.colptr[j + 1]
        # dq/dd_j = g_j + sum_k D_kk v_kj Xd_k + nu d_j
        g = col_model_grad(A, p0, p1, W.Dk, W.Xd, W.part)
        uj = W.u[j]
        g += W.grad[j] + NU * (uj - W.w[j])
        h = W.hdiag[j]
        is_free = j == W.free
        if can_shrink(g, uj, s.shrinking, is_free, qM_old, n_ex):
            n_q -= 1
            tmp = W.qindex[i]; W.qindex[i] = W.qindex[n_q]; W.qindex[n_q] = tmp
            continue
        v = subgrad(g, uj, is_free)
        if v > M_new:
            M_new = v
        norm1 += v
        i += 1
        step = -g / h if is_free else newton_step(g, h, uj)
        if step == -uj and not is_free:
            W.u[j] = 0.0
        else:
            if step > STEP_BOUND:
                step = STEP_BOUND
            elif step < -STEP_BOUND:
                step = -STEP_BOUND
            if step == 0.0:
                continue
            W.u[j] = uj + step
        step = W.u[j] - uj
        col_shift(A, p0, p1, W.Xd, 1, -step)     # Xd_k += step v_kj
        if stop_poll(stop, p1 - p0 + 1):
            break
    q_active[0] = n_q
    qM_new[0] = M_new
    return norm1


cdef inline int glm_inner(const CSC* A, GlmWork* W, const L1Settings* s, int64_t n_active,
                          double inner_tol, uint64_t* rng, Stop* stop) noexcept nogil:
    """The inner coordinate descent on q(d) over the working set index[0:n_active], from
    d = 0 (u = w, Xd = 0), each sweep in an order drawn from rng, until a sweep's sum of
    violations is <= inner_tol over the whole working set, or inner_max_iter sweeps.
    Returns the sweeps taken."""
    cdef int64_t i, j, q_active = n_active
    cdef double qM_old = INFINITY, qM_new = 0.0, qnorm1
    cdef int it_in = 0
    for i in range(n_active):
        j = W.index[i]
        W.u[j] = W.w[j]
        W.qindex[i] = j
    memset(W.Xd, 0, A.n_rows * sizeof(double))
    while it_in < s.inner_max_iter:
        shuffle(rng, W.qindex, q_active)
        qnorm1 = glm_inner_sweep(A, W, s, &q_active, qM_old, &qM_new, stop)
        it_in += 1
        if stop.stopped:
            break
        if qnorm1 <= inner_tol:
            if q_active == n_active:
                break
            q_active = n_active
            qM_old = INFINITY
            continue
        qM_old = qM_new
    return it_in


cdef inline void glm_line_search(const CSC* A, GlmWork* W, const L1Settings* s,
                                 int64_t n_active, GlmStep* st, int64_t* ls_total,
                                 Stop* stop) noexcept nogil:
    """The line search on f(w + lam d), d = u - w over the working set: the first
    lam = 1, 1/2, ... with f(w + lam d) - f(w) <= sigma lam (g.d + ||w + d||_1 - ||w||_1),
    at most max_linesearch trials (csrc/_l1.pyx); each trial's exp(z) and loss are left
    in ez_new, lk_new."""
    cdef int64_t i, j
    cdef double delta = 0.0, lam = 1.0, reg_change = 0.0, dloss = 0.0
    cdef const double* u = W.u
    cdef const double* w = W.w
    cdef int m
    for i in range(n_active):
        j = W.index[i]
        delta += W.grad[j] * (u[j] - w[j]) + reg_abs(u[j], j == W.free) - reg_abs(w[j], j == W.free)
    st.accepted = 0
    for m in range(s.max_linesearch):
        ls_total[0] += 1
        reg_change = 0.0
        for i in range(n_active):
            j = W.index[i]
            if j == W.free:
                continue
            if lam == 1.0:
                reg_change += fabs(u[j]) - fabs(w[j])
            else:
                reg_change += fabs(w[j] + lam * (u[j] - w[j])) - fabs(w[j])
        dloss = trial_loss_change(W, A.n_rows, lam, A.n_threads)
        if reg_change + dloss <= SIGMA * lam * delta:
            st.accepted = 1
            break
        lam *= 0.5
        if stop_poll(stop, A.n_rows):
            break
    st.lam = lam
    st.reg_change = reg_change
    st.dloss = dloss


cdef inline void glm_step(const CSC* A, GlmWork* W, int64_t n_active,
                          const GlmStep* st) noexcept nogil:
    """w += lam d on the working set, and z, exp(z) and the loss on the rows that moved."""
    cdef int64_t i, j, k, n = A.n_rows
    cdef double lam = st.lam
    cdef double* w = W.w
    cdef const double* u = W.u
    cdef double* z = W.z
    cdef double* ez = W.ez
    cdef double* lk = W.lk
    cdef const double* Xd = W.Xd
    cdef const double* ez_new = W.ez_new
    cdef const double* lk_new = W.lk_new
    for i in range(n_active):
        j = W.index[i]
        if lam == 1.0:
            w[j] = u[j]
        else:
            w[j] = w[j] + lam * (u[j] - w[j])
    for k in prange(n, schedule="static", num_threads=A.n_threads):
        if Xd[k] != 0.0:
            z[k] = z[k] + lam * Xd[k]
            ez[k] = ez_new[k]
            lk[k] = lk_new[k]
    W.f += st.reg_change + st.dloss


cdef inline void glm_report(GlmWork* W, int it, double norm1, int64_t n_active, double seconds,
                            int it_in, double lam, void* callback, Stop* stop) noexcept nogil:
    """Newton iteration it's trace row, and the callback (it, f(w), ||S||_1 at the start of
    the iteration, working-set size, inner sweeps, step length)."""
    trace_row(W.trace, it, W.f, norm1, n_active, seconds, it_in)
    if callback != NULL:
        with gil:
            try:
                (<object>callback)(it, W.f, norm1, n_active, it_in, lam)
            except BaseException as e:
                stop_keep(stop, e)


cdef inline int glmnet_core(const CSC* A, GlmWork* W, const L1Settings* s, double eps_abs,
                            double ref, uint64_t* rng, GlmOut* out, void* callback,
                            Stop* stop) noexcept nogil:
    """newGLMNET Newton iterations (csrc/_l1.pyx) from W.w with z = z(w), ez = exp(z),
    lk = log(1 + exp(-z)) per row and W.f = f(w).

    ref = ||S(0)||_1 scales the inner tolerance; the solve stops once ||S(w)||_1 <=
    eps_abs.  Returns CONVERGED, MAX_ITER or STALLED (no step passed the line search);
    stops early (MAX_ITER, stop.stopped set) once the Stop record says so.  W.trace gets
    one row per Newton iteration."""
    cdef int64_t n_active = W.n_total, inner_total = 0, ls_total = 0
    cdef double M_old = INFINITY, norm1, inner_eps = 1.0, t0 = monotonic_seconds()
    cdef Sweep sw
    cdef int it = 0, status = MAX_ITER, it_in
    cdef GlmStep st
    while it < s.max_iter:
        glm_row_terms(A, W)
        glm_outer(A, W, s, M_old, &sw, stop)
        n_active = sw.n_active
        norm1 = sw.norm1
        if stop.stopped or stop_poll(stop, A.n_rows):
            break
        out.last_norm = norm1
        out.grad_inf = sw.grad_inf
        out.grad_at_w = 1
        if norm1 <= eps_abs:
            status = CONVERGED
            break
        M_old = sw.M_new
        it_in = glm_inner(A, W, s, n_active, inner_eps * ref, rng, stop)
        inner_total += it_in
        if stop.stopped:
            break
        if it_in <= 1:
            inner_eps *= 0.25
        glm_line_search(A, W, s, n_active, &st, &ls_total, stop)
        if stop.stopped:
            break
        if not st.accepted:
            status = STALLED
            break
        glm_step(A, W, n_active, &st)
        out.grad_at_w = 0
        it += 1
        glm_report(W, it, norm1, n_active, monotonic_seconds() - t0, it_in, st.lam, callback, stop)
        if stop.stopped:
            break
    out.n_iter = it
    out.status = status
    out.n_active = n_active
    out.inner_total = inner_total
    out.ls_trials = ls_total
    out.inner_eps = inner_eps
    return status
