# Python entries that only the tests use: thin wrappers around cdef kernels of the
# compiled cores, so that tests can check each piece against an independent reference
# (scipy, brute force, the paper's formulas).  Production never imports this module.
# The kernels themselves are not copied here: they are cimported from the .pxd files
# the cores share (csr.pxd, csr_passes.pxd, mfn_shared.pxd, sdm_sub.pxd, alm_steps.pxd).

from libc.stdint cimport int32_t, int64_t
from libc.math cimport INFINITY
import numpy as np
cimport numpy as cnp

cnp.import_array()
from csr cimport CSR, entry_threads
from csr_passes cimport matvec, rmatvec, normal_matvec, col_sq_sums, scatter_blocks
from linsvm._data cimport DataView
from mfn_shared cimport (Breakpoint, Loss, Terms, make_loss, loss_value, loss_slope,
                         mismatch_term, exact_line_search, check_codes, _loss_from, dual_kkt)
from sdm_sub cimport sub_iter_cap
from linsvm._sdm cimport cs_subproblem, ww_subproblem
from alm_steps cimport e_update, loss_kind
from linsvm._alm cimport grad_G, step_along, set_precond
from comm cimport Comm, comm_from, comm_sum, comm_max, comm_sum1, comm_allgather


# ------------------------------------------------------------------ collectives (comm.pxd)

def comm_roundtrip(coll, double[::1] values):
    """Through comm.pxd, without the GIL: (sum over the ranks of values, their maximum,
    the sum of values[0] alone, every rank's values gathered) for the Collective coll
    (None: serial)."""
    cdef Comm C = comm_from(coll)
    cdef int64_t n = values.shape[0]
    s_arr = np.array(values, dtype=np.float64)
    m_arr = np.array(values, dtype=np.float64)
    g_arr = np.zeros(C.size * n, dtype=np.float64)
    cdef double[::1] s = s_arr, m = m_arr, g = g_arr
    cdef double one
    with nogil:
        comm_sum(&C, &s[0], n)
        comm_max(&C, &m[0], n)
        one = comm_sum1(&C, values[0])
        comm_allgather(&C, &values[0], n, &g[0])
    return s_arr, m_arr, one, g_arr.reshape(C.size, n)


# ------------------------------------------------------- CSR kernels (csr.pxd, csr_passes.pxd)

cdef object _positions(DataView data):
    """The view's row numbers as int64 (every row in order when it has none)."""
    if data.rows_array is not None:
        return data.rows_array
    return np.arange(data.n, dtype=np.int64)


cdef object _scatter_entry(DataView data, const double[::1] u, int n_threads, bint pattern,
                           bint squared):
    """X[rows].T @ u (squared: of X's entries squared), the bias coordinate last."""
    cdef CSR X
    scratch = data.kernel_csr(n_threads, pattern, &X)
    cdef const int64_t[::1] rows = _positions(data)
    if u.shape[0] != rows.shape[0]:
        raise ValueError("u must have one entry per position")
    out = np.empty(data.n_weights, dtype=np.float64)
    cdef double[::1] o = out
    cdef const int64_t* rp = &rows[0] if rows.shape[0] else NULL
    cdef const double* up = &u[0] if rows.shape[0] else NULL
    with nogil:
        if squared:
            col_sq_sums(&X, rp, rows.shape[0], up, &o[0])
        else:
            rmatvec(&X, rp, rows.shape[0], up, &o[0])
    return out


def csr_rmatvec(DataView data, const double[::1] u, int n_threads=1, bint pattern=False):
    """Return X[rows].T @ u over the view's rows (with the bias coordinate last when the
    view has the bias feature)."""
    return _scatter_entry(data, u, n_threads, pattern, 0)


def csr_col_sq_sums(DataView data, const double[::1] u, int n_threads=1, bint pattern=False):
    """Return out_j = sum_k u[k] X[rows[k], j]^2 (csr_passes.pxd col_sq_sums: the Jacobi diagonal),
    the bias coordinate last when the view has the bias feature."""
    return _scatter_entry(data, u, n_threads, pattern, 1)


def csr_scatter_blocks(DataView data, int64_t n):
    """K, the row blocks of a scatter over n of the view's rows with the scratch every
    core gives it (csr_passes.pxd's scatter_blocks): the data's shape decides, never
    the thread count."""
    cdef CSR X
    scratch = data.kernel_csr(1, False, &X)
    return scatter_blocks(&X, n)


def csr_normal_matvec(DataView data, const double[::1] p, const double[::1] c, int n_threads=1,
                      bint pattern=False):
    """Return (q, h, q'Cq) with q = X[rows] @ p and h = X[rows].T @ (c * q): the fused
    pass of the CGLS iterations (csr_passes.pxd normal_matvec); lengths are the caller's."""
    cdef CSR X
    scratch = data.kernel_csr(n_threads, pattern, &X)
    cdef const int64_t[::1] rows = _positions(data)
    cdef int64_t n = rows.shape[0]
    q_arr = np.zeros(max(n, 1))
    u_arr = np.zeros(max(n, 1))
    h_arr = np.empty(data.n_weights)
    cdef double[::1] q = q_arr, u = u_arr, h = h_arr
    cdef double qcq
    with nogil:
        qcq = normal_matvec(&X, &rows[0] if n else NULL, n, &p[0], &c[0] if n else NULL,
                            &q[0], &u[0], &h[0])
    return q_arr[:n], h_arr, qcq


# ------------------------------------------------------------------ the mfn family (csrc/_mfn.pyx)

def mfn_dual_kkt(DataView data, const double[::1] t, const double[::1] c, double lam,
                 const double[::1] y, int n_threads=0):
    """Maximum dual KKT violation of the dual solution recovered from y = X beta (Section 4.7)
    over the view's rows.

    alpha_k = -c_k t_k d_k / lam on I(beta), 0 elsewhere;  beta_hat = sum alpha_k t_k x_k;
    xi_k = lam alpha_k / c_k;  g_k = t_k (x_k . beta_hat) + xi_k - 1;  the violation is
    max( max_{alpha_k > 0} |g_k|, max_{alpha_k = 0} max(0, -g_k) ).  Examples with c_k = 0
    carry no constraint and are skipped.
    """
    cdef int64_t m = data.n
    if m == 0:
        return 0.0
    if t.shape[0] != m or c.shape[0] != m or y.shape[0] != m:
        raise ValueError("inconsistent lengths")
    cdef CSR X
    scratch = data.kernel_csr(entry_threads(n_threads), False, &X)
    cdef const int64_t[::1] rows = _positions(data)
    alpha_t = np.zeros(m, dtype=np.float64)
    yhat_arr = np.empty(m, dtype=np.float64)
    beta_hat_arr = np.empty(data.n_weights, dtype=np.float64)
    cdef double[::1] at = alpha_t, yhat = yhat_arr, bh = beta_hat_arr
    cdef double viol
    with nogil:
        viol = dual_kkt(&X, &rows[0], m, &t[0], &c[0], lam, &y[0], &at[0], &yhat[0], &bh[0])
    return viol


def loss_eval(loss, const double[::1] o):
    """(l(o), l'(o)) per unit cost, elementwise, from the kernels' own loss functions."""
    cdef Loss L = _loss_from(loss)
    cdef int64_t n = o.shape[0], k
    val_arr = np.empty(n)
    der_arr = np.empty(n)
    cdef double[::1] val = val_arr, der = der_arr
    for k in range(n):
        val[k] = loss_value(&L, o[k])
        der[k] = loss_slope(&L, o[k])
    return val_arr, der_arr


def loss_mismatch(loss, const int32_t[::1] zones, const double[::1] o):
    """The consistency test's per-term measure |l'(o) - l'_zone(o)| (0 within 1e-8 of the
    zone), elementwise, for terms assumed in `zones` (0, 1, 2) and now at margin o."""
    cdef Loss L = _loss_from(loss)
    cdef int64_t n = o.shape[0], k
    if zones.shape[0] != n:
        raise ValueError("inconsistent lengths")
    if n and (np.asarray(zones).min() < 0 or np.asarray(zones).max() > 2):
        raise ValueError("zones must be 0, 1 or 2")
    out_arr = np.empty(n)
    cdef double[::1] out = out_arr
    for k in range(n):
        out[k] = mismatch_term(&L, zones[k], o[k])
    return out_arr


def loss_line_search(double lam, const double[::1] beta, const double[::1] d, const double[::1] y,
                     const double[::1] dy, const double[::1] t, const double[::1] c, loss,
                     comm=None, int n_threads=1):
    """argmin over delta >= 0 of lam/2 ||beta + delta d||^2 + sum_k c_k l(t_k (y_k + delta dy_k))
    by the kernels' exact line search (binary terms; comm: a Collective, the terms being
    this rank's, or None; n_threads: the threads of a serial search's chunked passes)."""
    cdef Loss L = _loss_from(loss)
    cdef Comm C = comm_from(comm)
    cdef int64_t m = y.shape[0]
    if d.shape[0] != beta.shape[0] or dy.shape[0] != m or t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    bp_arr = np.empty(4 * m + 2, dtype=np.float64)
    y_arr = np.array(y, dtype=np.float64)
    dy_arr = np.array(dy, dtype=np.float64)
    cdef double[::1] bpv = bp_arr, yv = y_arr, dyv = dy_arr
    cdef Terms T
    T.m = m
    T.nb = 0
    T.per = 1
    T.t = &t[0] if m else NULL
    T.code = NULL
    T.c = &c[0] if m else NULL
    T.y = &yv[0] if m else NULL
    T.dy = &dyv[0] if m else NULL
    T.b = NULL
    T.db = NULL
    return exact_line_search(&L, lam, &beta[0], &d[0], beta.shape[0], &T, <Breakpoint*>&bpv[0],
                             2 * m + 1, &C, NULL, n_threads)


def ordinal_line_search(double lam, const double[::1] beta, const double[::1] d,
                        const double[::1] y, const double[::1] dy, const int32_t[::1] codes,
                        const double[::1] c, int64_t n_thresholds, comm=None):
    """argmin over delta >= 0 of eq. 25 on the ray beta + delta d, beta = (w, b), given the
    example scores y = X w and their steps dy = X d_w (the kernels' ordinal line search;
    comm as for loss_line_search)."""
    cdef Loss L = make_loss(1.0, 1.0, 1.0, -INFINITY)
    cdef Comm C = comm_from(comm)
    cdef int64_t m = y.shape[0], nbeta = beta.shape[0]
    if (d.shape[0] != nbeta or dy.shape[0] != m or codes.shape[0] != m or c.shape[0] != m
            or n_thresholds < 1 or nbeta <= n_thresholds):
        raise ValueError("inconsistent lengths")
    check_codes(&codes[0] if m else NULL, m, n_thresholds)
    bp_arr = np.empty(2 * m * n_thresholds + 2, dtype=np.float64)
    y_arr = np.array(y, dtype=np.float64)
    dy_arr = np.array(dy, dtype=np.float64)
    cdef double[::1] bpv = bp_arr, yv = y_arr, dyv = dy_arr
    cdef int64_t nw = nbeta - n_thresholds
    cdef Terms T
    T.m = m
    T.nb = n_thresholds
    T.per = n_thresholds
    T.t = NULL
    T.code = &codes[0] if m else NULL
    T.c = &c[0] if m else NULL
    T.y = &yv[0] if m else NULL
    T.dy = &dyv[0] if m else NULL
    T.b = &beta[nw]
    T.db = &d[nw]
    return exact_line_search(&L, lam, &beta[0], &d[0], nbeta, &T, <Breakpoint*>&bpv[0],
                             m * n_thresholds + 1, &C)


def line_search(double lam, const double[::1] beta, const double[::1] beta_bar,
                const double[::1] y, const double[::1] ybar, const double[::1] t,
                const double[::1] c):
    """Python entry to the L2-SVM line search (for tests): argmin over delta >= 0 of
    f(beta + delta (beta_bar - beta)) given the margins y = X beta, ybar = X beta_bar."""
    cdef int64_t m = y.shape[0]
    if beta.shape[0] != beta_bar.shape[0] or ybar.shape[0] != m or t.shape[0] != m or c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    d = np.asarray(beta_bar) - np.asarray(beta)
    dy = np.asarray(ybar) - np.asarray(y)
    return loss_line_search(lam, beta, d, y, dy, t, c, (1.0, 1.0, 1.0, -INFINITY))


# ------------------------------------------------------------------ sdm sub-problems (csrc/_sdm.pyx)

def cs_subproblem_solve(double A, const double[::1] g, const double[::1] b, start=None,
                        int max_it=0):
    """Solve the Crammer-Singer sub-problem (10) on its own (for tests):
    min_d 1/2 A ||d||^2 + g.d  s.t.  d <= b, sum(d) = 0, with A > 0, b >= 0.
    start: optional bool array, the initial working set (honoured where b = 0).
    Returns (d, at_bound (bool array), iterations or -1)."""
    cdef int64_t n = g.shape[0]
    if b.shape[0] != n or n == 0:
        raise ValueError("g and b must be non-empty and of the same length")
    if not (A > 0.0) or not np.all(np.asarray(b) >= 0.0):
        raise ValueError("need A > 0 and b >= 0")
    d_arr = np.zeros(n, dtype=np.float64)
    f_arr = np.zeros(n, dtype=np.int8) if start is None else np.array(start, dtype=bool).astype(np.int8)
    if f_arr.shape[0] != n:
        raise ValueError("start must have one entry per variable")
    cdef double[::1] d = d_arr
    cdef signed char[::1] fl = f_arr
    cdef int r = cs_subproblem(n, A, &g[0], &b[0], &d[0], <char*>&fl[0],
                               max_it if max_it > 0 else sub_iter_cap(n))
    return d_arr, f_arr.astype(bool), r


def ww_subproblem_solve(double A, const double[::1] g, const double[::1] lo,
                        const double[::1] hi, start=None, int max_it=0):
    """Solve the Weston-Watkins sub-problem (21) on its own (for tests):
    min_d 1/2 A ||d||^2 + 1/2 A (sum d)^2 + g.d  s.t.  lo <= d <= hi, with A > 0,
    lo <= 0 <= hi.  start: optional int array, the initial working set (0 free,
    1 at lo where lo = 0, 2 at hi where hi = 0).  Returns (d, flags (0 free,
    1 at lo, 2 at hi), iterations or -1)."""
    cdef int64_t n = g.shape[0]
    if lo.shape[0] != n or hi.shape[0] != n or n == 0:
        raise ValueError("g, lo and hi must be non-empty and of the same length")
    if not (A > 0.0) or not (np.all(np.asarray(lo) <= 0.0) and np.all(np.asarray(hi) >= 0.0)):
        raise ValueError("need A > 0 and lo <= 0 <= hi")
    d_arr = np.zeros(n, dtype=np.float64)
    f_arr = np.zeros(n, dtype=np.int8) if start is None else np.array(start, dtype=np.int8)
    if f_arr.shape[0] != n:
        raise ValueError("start must have one entry per variable")
    cdef double[::1] d = d_arr
    cdef signed char[::1] fl = f_arr
    cdef int r = ww_subproblem(n, A, &g[0], &lo[0], &hi[0], &d[0], <char*>&fl[0],
                               max_it if max_it > 0 else sub_iter_cap(n))
    return d_arr, f_arr, r


# ------------------------------------------------------------------ SVM-ALM steps (csrc/_alm.pyx)

def e_step(const double[::1] t, const double[::1] y, const double[::1] gamma, double p):
    """argmin_e gamma_k (y_k e)_+^p + 1/2 (e - t_k)^2 for each k (eq. 10-13), as the
    solver computes it (y = +-1, gamma >= 0, p >= 1)."""
    cdef int64_t n = t.shape[0], k
    cdef int kind = loss_kind(p)
    if y.shape[0] != n or gamma.shape[0] != n or not p >= 1.0:
        raise ValueError("t, y and gamma must have the same length; p >= 1")
    out = np.empty(n, dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        for k in range(n):
            o[k] = e_update(t[k], y[k], gamma[k], p, kind, 0.0)
    return out


def gradient_step(DataView data, const double[::1] z, double[::1] beta, double mu,
                  bint free_b=False, bint precondition=False):
    """One w-step of Algorithm 2 on G(beta) = 1/mu ||beta||_rho^2 + ||X beta - z||^2
    (eq. 16-18) over the view's rows, updating beta in place; returns (s, d) with
    beta_new = beta - s d (d = g, or D^-1 g with the Jacobi preconditioner)."""
    cdef int64_t n = data.n, nw = beta.shape[0], k
    cdef int64_t nreg = nw - 1 if free_b else nw
    if n < 1 or z.shape[0] != n or nw != data.n_weights or not mu > 0.0:
        raise ValueError("inconsistent arguments")
    cdef CSR X = data.csr(1, NULL)
    cdef const int64_t[::1] rows = _positions(data)
    vec_n = np.zeros((3, n), dtype=np.float64)
    vec_w = np.zeros((4, nw), dtype=np.float64)
    cdef double[:, ::1] VN = vec_n, VW = vec_w
    cdef double s
    with nogil:
        matvec(&X, &rows[0], n, &beta[0], &VN[0, 0])
        for k in range(n):
            VN[1, k] = VN[0, k] - z[k]
            VN[2, k] = 1.0
        grad_G(&X, &rows[0], n, &beta[0], nreg, &VN[1, 0], 1.0 / mu, &VW[0, 0])
        col_sq_sums(&X, &rows[0], n, &VN[2, 0], &VW[2, 0])
        set_precond(&VW[2, 0], nw, nreg, 1.0 / mu, &VW[3, 0])
        s = step_along(&X, &rows[0], n, &beta[0], nreg, &VN[0, 0], &VW[0, 0], 1.0 / mu,
                       &VW[3, 0] if precondition else NULL, &VW[1, 0], &VN[1, 0])
    return s, vec_w[1].copy()
