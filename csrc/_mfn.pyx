# L2-SVM-MFN: the modified finite Newton method of Keerthi & DeCoste (JMLR 2005).
#
# Problem (the paper's eq. 2, with per-example weights c_k >= 0):
#
#     min_beta f(beta) = lam/2 ||beta||^2 + 1/2 sum_{k in I(beta)} c_k d_k(beta)^2
#
#     d_k = y_k - t_k,  y_k = x_k . beta (x_k includes the bias feature),
#     t_k in {-1, +1},  I(beta) = {k : t_k y_k < 1}.
#
# linsvm's objective  1/2||w||^2 + C sum_k c_k max(0, 1 - t_k y_k)^2  (LIBLINEAR -s 2)
# is 2C f(beta) with lam = 1/(2C): the paper's C is 2C (DESIGN.md).  The
# Python layer (linsvm/solvers/mfn.py) does that mapping.
#
# Algorithm (Section 3 and Appendix A):
#   1. start from beta (0, or a warm start; y = X beta)
#   3. I = I(beta); beta_bar = argmin f_I by CGLS seeded at beta (cgls.pxd);
#      heuristic 1: at most 10 CGLS iterations on the first call from a cold start
#   5. dy = X (beta_bar - beta), ybar = y + dy; stop if CGLS met eq. 13 and the active set is
#      consistent at beta_bar.  Appendix A asks t ybar <= 1 + tol on I and
#      >= 1 - tol off I with tol = 1e-8; at a loose eps that never holds for the
#      examples sitting at the margin (w8a: 50 Newton iterations and the cap),
#      so linsvm accepts the examples that break it when the gradient they add,
#      sum c_k |1 - t_k ybar_k| ||x_k||, is within the CGLS tolerance
#      eps ||z||_C.  Then ||grad f(beta_bar)|| <= 2 eps ||z||_C: the answer is
#      as accurate as eq. 13 asks of the least-squares step;
#      heuristic 2: first converge with eps = 1e-2, then with eps.  Appendix A
#      drops it for warm starts (ini = 1); linsvm keeps it there too, because on
#      C paths it cut CGLS iterations (w8a, 13 C values: 5991 -> 3776)
#   6. exact line search on beta + delta (beta_bar - beta): the slope phi'(delta)
#      is piecewise linear with breakpoints delta_k (eq. 14-15); walk the sorted
#      breakpoints updating the end values l, r (eq. 16-18) until it crosses 0
#   7. beta += delta* (beta_bar - beta), y likewise, and back to 3.
#
# Inputs are addressed through `rows` (training rows, a fold or a random subset;
# heuristic 3 is a first solve on a subset); t and c are per position in rows.
# Cost per outer iteration: the CGLS mat-vecs over the active rows only, one
# full X.beta_bar, and an O(m log m) sort of breakpoints.

from libc.stdint cimport int32_t, int64_t
from libc.string cimport memcpy
from libc.math cimport fabs, sqrt
import numpy as np
from csr cimport CSR, make_csr, matvec, rmatvec, col_sq_sums, sq_norm_row, dot
from cgls cimport cgls

# Status codes returned to Python.
cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    NO_DESCENT = 2

cdef double ACTIVE_TOL = 1e-8      # Appendix A, footnote 17

ctypedef struct Breakpoint:
    double delta
    int64_t k


cdef double primal(double lam, const double* beta, int64_t nw, const double* y,
                   const double* t, const double* c, int64_t m) noexcept nogil:
    """f(beta) = lam/2 ||beta||^2 + 1/2 sum_{t y < 1} c (y - t)^2  (eq. 2)."""
    cdef int64_t k
    cdef double s = 0.0, d
    for k in range(m):
        if t[k] * y[k] < 1.0:
            d = y[k] - t[k]
            s += c[k] * d * d
    return 0.5 * lam * dot(beta, beta, nw) + 0.5 * s


cdef inline void _cross(const Breakpoint* bp, int64_t a, int64_t b, const double* y,
                        const double* dy, const double* t, const double* c,
                        double* ls, double* rs) noexcept nogil:
    """Update the end values l, r of phi''s line for crossing breakpoints bp[a:b]
    (eq. 18): an example in I(beta) leaves (s = -1), one outside enters (s = +1)."""
    cdef int64_t j, k
    cdef double s
    for j in range(a, b):
        k = bp[j].k
        s = -c[k] if t[k] * y[k] < 1.0 else c[k]
        ls[0] += s * (y[k] - t[k]) * dy[k]
        rs[0] += s * (y[k] - t[k] + dy[k]) * dy[k]


cdef double exact_line_search(double lam, const double* beta, const double* d, int64_t nw,
                              const double* y, const double* dy, const double* t,
                              const double* c, int64_t m, Breakpoint* bp) noexcept nogil:
    """Minimize phi(delta) = f(beta + delta d) over delta >= 0 (Section 4.4), d = beta_bar - beta.

    Works on the margins y = X beta and dy = X d (computed once per Newton step
    from d itself, not as X beta_bar - X beta: at tight tolerances that
    difference of O(1) numbers loses the digits the slope lives in).
    phi' is continuous, increasing and piecewise linear.  On each piece, l and r
    are the values its line takes at delta = 0 and delta = 1 (eq. 16-17);
    crossing breakpoint delta_k = (t_k - y_k) / dy_k (eq. 14-15) adds or removes
    example k's term (eq. 18).  The paper sorts the breakpoints and walks them
    from the left; since only the piece holding the root matters, this finds it
    by selection instead (expected O(#breakpoints), no sort): split the
    breakpoints around a pivot, cross those left of it, and keep the side where
    phi' changes sign.  The answer is the walk's.  Returns delta* (0 if d is not
    a descent direction).
    """
    cdef int64_t k, j, nb = 0, a, b, lt, gt, i
    cdef double ls = 0.0, rs = 0.0, pivot, d0, d1, d2, l2, r2
    cdef Breakpoint tmp
    for j in range(nw):
        ls += beta[j] * d[j]
        rs += (beta[j] + d[j]) * d[j]
    ls *= lam
    rs *= lam
    for k in range(m):
        if t[k] * y[k] < 1.0:
            ls += c[k] * (y[k] - t[k]) * dy[k]
            rs += c[k] * (y[k] - t[k] + dy[k]) * dy[k]
            if t[k] * dy[k] > 0.0:           # Delta_1: k leaves I at delta_k
                bp[nb].delta = (t[k] - y[k]) / dy[k]
                bp[nb].k = k
                nb += 1
        elif t[k] * dy[k] < 0.0:             # Delta_2: k enters I at delta_k
            bp[nb].delta = (t[k] - y[k]) / dy[k]
            bp[nb].k = k
            nb += 1
    if ls >= 0.0:
        return 0.0
    a = 0
    b = nb
    while a < b:
        # pivot: median of three; 3-way partition of bp[a:b] into < pivot, == pivot, > pivot
        d0 = bp[a].delta
        d1 = bp[a + (b - a) // 2].delta
        d2 = bp[b - 1].delta
        pivot = max(min(d0, d1), min(max(d0, d1), d2))
        lt = a
        i = a
        gt = b
        while i < gt:
            if bp[i].delta < pivot:
                tmp = bp[i]; bp[i] = bp[lt]; bp[lt] = tmp
                lt += 1
                i += 1
            elif bp[i].delta > pivot:
                gt -= 1
                tmp = bp[i]; bp[i] = bp[gt]; bp[gt] = tmp
            else:
                i += 1
        l2 = ls
        r2 = rs
        _cross(bp, a, lt, y, dy, t, c, &l2, &r2)
        if l2 + pivot * (r2 - l2) >= 0.0:    # phi'(pivot) >= 0: the root is left of the pivot
            b = lt
        else:                                # right of it: cross everything up to the pivot
            ls = l2
            rs = r2
            _cross(bp, lt, gt, y, dy, t, c, &ls, &rs)
            a = gt
    if rs - ls <= 0.0:
        return 0.0
    return -ls / (rs - ls)


cdef int mfn_core(const CSR* X, const int64_t* rows, int64_t m, const double* t,
                  const double* c, double lam, double* beta, double eps, int warm,
                  int heuristic1, int heuristic2, int precondition, double eta,
                  int max_iter, int cg_max_iter,
                  double* y, double* dy, double* z, double* q, double* u,
                  int64_t* act_rows, double* tt, double* cc, double* beta_bar,
                  double* r, double* p, double* sv, double* minv, const double* xnorm, Breakpoint* bp,
                  int* n_iter, int64_t* cg_total,
                  double* trace, void* callback) noexcept nogil:
    """Algorithm L2-SVM-MFN (Appendix A) from beta (in/out); returns a status code.

    y (m) holds X beta on entry.  trace[it] receives f after outer iteration it.
    """
    cdef int64_t k, j, n_act, nw = X.n_weights
    cdef int it = 0, cg_it, cg_cap, optimal, status, refreshed = 0
    cdef int need_second = heuristic2 and eps < 1e-2
    cdef double eps_cur = 1e-2 if need_second else eps
    cdef double F = primal(lam, beta, nw, y, t, c, m), delta, mismatch, zcz, ty
    cg_total[0] = 0
    while True:
        if it >= max_iter:
            status = MAX_ITER
            break
        it += 1
        # step 3: CGLS on the active rows, seeded at beta, residual z = t - y
        n_act = 0
        for k in range(m):
            if t[k] * y[k] < 1.0:
                act_rows[n_act] = rows[k]
                tt[n_act] = t[k]
                cc[n_act] = c[k]
                z[n_act] = t[k] - y[k]
                n_act += 1
        memcpy(beta_bar, beta, nw * sizeof(double))
        cg_cap = 10 if (heuristic1 and not warm and it == 1) else cg_max_iter
        if precondition:                   # minv = 1 / diag(lam I + X_I' C X_I)
            col_sq_sums(X, act_rows, n_act, cc, minv)
            for j in range(nw):
                minv[j] = 1.0 / (lam + minv[j])
        cg_it = cgls(X, act_rows, n_act, tt, cc, lam, beta_bar, z, 1, q, u, r, p, sv,
                     minv if precondition else NULL, eps_cur, eta, cg_cap, &optimal)
        cg_total[0] += cg_it
        # step 5: outputs at beta_bar (dy = X d, d = beta_bar - beta, one mat-vec);
        # converged if the active set did not move
        for j in range(nw):
            p[j] = beta_bar[j] - beta[j]
        matvec(X, rows, m, p, dy)
        if optimal:
            mismatch = 0.0
            for k in range(m):
                ty = t[k] * (y[k] + dy[k])
                if t[k] * y[k] < 1.0:
                    if ty > 1.0 + ACTIVE_TOL:
                        mismatch += c[k] * (ty - 1.0) * xnorm[k]
                elif ty < 1.0 - ACTIVE_TOL:
                    mismatch += c[k] * (1.0 - ty) * xnorm[k]
            zcz = 0.0
            for j in range(n_act):
                zcz += cc[j] * z[j] * z[j]
            if mismatch * mismatch <= eps_cur * eps_cur * zcz:
                memcpy(beta, beta_bar, nw * sizeof(double))
                for k in range(m):
                    y[k] += dy[k]
                F = primal(lam, beta, nw, y, t, c, m)
                trace[it - 1] = F
                if callback != NULL:
                    with gil:
                        (<object>callback)(it, F, n_act, cg_it)
                if need_second:            # step 8: second round at the final eps
                    need_second = 0
                    eps_cur = eps
                    continue
                status = CONVERGED
                break
        # steps 6-7: exact line search, then move
        delta = exact_line_search(lam, beta, p, nw, y, dy, t, c, m, bp)
        if delta <= 0.0:
            # y is updated incrementally (step 7); at a tight eps its drift from
            # X beta (~1e-14) can exceed the slope of a short step.  Recompute it
            # once and retry before declaring that no descent is left.
            if not refreshed:
                matvec(X, rows, m, beta, y)
                F = primal(lam, beta, nw, y, t, c, m)
                refreshed = 1
                continue
            trace[it - 1] = F
            status = NO_DESCENT
            break
        refreshed = 0
        for j in range(nw):
            beta[j] += delta * p[j]
        for k in range(m):
            y[k] += delta * dy[k]
        F = primal(lam, beta, nw, y, t, c, m)
        trace[it - 1] = F
        if callback != NULL:
            with gil:
                (<object>callback)(it, F, n_act, cg_it)
    n_iter[0] = it
    return status


def _n_threads(int n_threads):
    from ._kernels import max_threads
    return max_threads() if n_threads <= 0 else n_threads


def mfn_solve(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
              int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] t,
              const double[::1] c, double lam, double[::1] beta, double eps=1e-6,
              bint warm=False, bint heuristic1=True, bint heuristic2=True,
              bint precondition=True, double eta=0.0, int max_iter=50,
              int cg_max_iter=5000, int n_threads=0, object callback=None):
    """Solve the paper's eq. 2 by L2-SVM-MFN, updating `beta` in place.

    Buffers must be validated by the caller (indices in [0, n_features), rows in
    [0, n_rows), len(t) == len(c) == len(rows), len(beta) == n_features + (bias > 0)).
    Returns a dict: status (0 converged, 1 iteration cap, 2 no descent),
    n_iter, cg_iter, f (eq. 2 at the result), n_active, trace (f per iteration),
    and the margins y = X[rows] beta.
    """
    cdef int64_t m = rows.shape[0], nw = beta.shape[0]
    cdef int T = _n_threads(n_threads)
    cdef int status, n_iter = 0
    cdef int64_t cg_total = 0, k, n_active = 0
    y_arr = np.empty(m, dtype=np.float64)
    work = np.empty((7, m), dtype=np.float64)
    wvec = np.empty((5, nw), dtype=np.float64)
    act = np.empty(m, dtype=np.int64)
    trace_arr = np.zeros(max(max_iter, 1), dtype=np.float64)
    bp_arr = np.empty(2 * m, dtype=np.float64)       # m Breakpoint structs (16 bytes each)
    scratch_arr = np.empty(T * nw if T > 1 else 1, dtype=np.float64)
    cdef double[::1] yv = y_arr, trace = trace_arr, bpv = bp_arr, sv = scratch_arr
    cdef double[:, ::1] W = work, V = wvec
    cdef int64_t[::1] actv = act
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, T, &sv[0] if T > 1 else NULL)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef const int64_t* rp = &rows[0] if m > 0 else NULL
    cdef const double* tp = &t[0] if m > 0 else NULL
    cdef const double* cp = &c[0] if m > 0 else NULL
    cdef double* yp = &yv[0] if m > 0 else NULL
    cdef double* wp = &W[0, 0] if m > 0 else NULL
    with nogil:
        for k in range(m):
            wp[6 * m + k] = sqrt(sq_norm_row(&X, rp[k]))
        matvec(&X, rp, m, &beta[0], yp)
        status = mfn_core(&X, rp, m, tp, cp, lam, &beta[0], eps, warm, heuristic1, heuristic2,
                          precondition, eta, max_iter, cg_max_iter, yp, wp + m, wp + 2 * m, wp + 3 * m, wp + 4 * m,
                          &actv[0] if m > 0 else NULL, wp + 5 * m, wp, &V[0, 0], &V[1, 0], &V[2, 0],
                          &V[3, 0], &V[4, 0], wp + 6 * m,
                          <Breakpoint*>(&bpv[0] if m > 0 else NULL), &n_iter, &cg_total,
                          &trace[0], cb)
        for k in range(m):
            if tp[k] * yp[k] < 1.0:
                n_active += 1
    return dict(status=status, n_iter=n_iter, cg_iter=cg_total,
                f=float(primal(lam, &beta[0], nw, yp, tp, cp, m)), n_active=n_active,
                trace=trace_arr[:n_iter].copy(), y=y_arr)


def mfn_dual_kkt(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                 int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] t,
                 const double[::1] c, double lam, const double[::1] y, int n_threads=0):
    """Maximum dual KKT violation of the dual solution recovered from y = X beta (Section 4.7).

    alpha_k = -c_k t_k d_k / lam on I(beta), 0 elsewhere;  beta_hat = sum alpha_k t_k x_k;
    xi_k = lam alpha_k / c_k;  g_k = t_k (x_k . beta_hat) + xi_k - 1;  the violation is
    max( max_{alpha_k > 0} |g_k|, max_{alpha_k = 0} max(0, -g_k) ).  Examples with c_k = 0
    carry no constraint and are skipped.
    """
    cdef int64_t m = rows.shape[0], k
    cdef int T = _n_threads(n_threads)
    cdef int64_t nw = n_features + (1 if bias > 0 else 0)
    if m == 0:
        return 0.0
    scratch_arr = np.empty(T * nw if T > 1 else 1, dtype=np.float64)
    cdef double[::1] sv = scratch_arr
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, T, &sv[0] if T > 1 else NULL)
    alpha_t = np.zeros(m, dtype=np.float64)
    yhat_arr = np.empty(m, dtype=np.float64)
    beta_hat_arr = np.empty(nw, dtype=np.float64)
    cdef double[::1] at = alpha_t, yhat = yhat_arr, bh = beta_hat_arr
    cdef double viol = 0.0, g, alpha
    with nogil:
        for k in range(m):
            if t[k] * y[k] < 1.0 and c[k] > 0.0:
                at[k] = -c[k] * (y[k] - t[k]) / lam          # alpha_k t_k
        rmatvec(&X, &rows[0], m, &at[0], &bh[0])
        matvec(&X, &rows[0], m, &bh[0], &yhat[0])
        for k in range(m):
            if c[k] <= 0.0:
                continue
            alpha = at[k] * t[k]
            if alpha > 0.0:
                g = t[k] * yhat[k] + lam * alpha / c[k] - 1.0
                viol = max(viol, fabs(g))
            else:
                g = t[k] * yhat[k] - 1.0
                viol = max(viol, -g)
    return viol


def line_search(double lam, const double[::1] beta, const double[::1] beta_bar,
                const double[::1] y, const double[::1] ybar, const double[::1] t,
                const double[::1] c):
    """Python entry to exact_line_search (for tests): argmin over delta >= 0 of
    f(beta + delta (beta_bar - beta)) given the margins y = X beta, ybar = X beta_bar."""
    cdef int64_t m = y.shape[0]
    if beta.shape[0] != beta_bar.shape[0] or ybar.shape[0] != m or t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    d = np.asarray(beta_bar) - np.asarray(beta)
    dy = np.asarray(ybar) - np.asarray(y)
    bp_arr = np.empty(2 * m + 2, dtype=np.float64)
    cdef double[::1] bpv = bp_arr, dv = d, dyv = dy
    return exact_line_search(lam, &beta[0], &dv[0], beta.shape[0], &y[0], &dyv[0],
                             &t[0], &c[0], m, <Breakpoint*>&bpv[0])
