# One-class SVM (Schoelkopf et al. 2001) for linear models by dual coordinate descent with
# two-variable updates (Chou, Lin & Lin, "Dual coordinate-descent methods for linear
# one-class SVM and SVDD", SDM 2020: the method LIBLINEAR -s 21 follows).
#
# Primal (nu in (0, 1], n examples x_k, no bias feature):
#
#     min_{w, rho, xi}  1/2 ||w||^2 - rho + 1/(nu n) sum_k xi_k,
#                       w.x_k >= rho - xi_k,  xi_k >= 0;     decision value w.x - rho.
#
# Its dual, scaled by nu n as in the paper (a_k = nu n alpha_k; w_a = sum_k a_k x_k is
# nu n times the primal w, and so is rho):
#
#     min_a  f(a) = 1/2 a'Q a = 1/2 ||w_a||^2,   0 <= a_k <= 1,   sum_k a_k = nu n.
#
# Gradient G_k = w_a.x_k.  Optimality (the KKT conditions with the equality's multiplier
# rho): max_{k in I_up} -G_k <= min_{k in I_low} -G_k, I_up = {a_k < 1}, I_low = {a_k > 0}.
# A coordinate step must keep sum a fixed, so each step moves a pair (i, j), i in I_up,
# j in I_low, with -G_i > -G_j (a violating pair): a_i += d, a_j -= d with
#     d = (G_j - G_i) / (Q_ii + Q_jj - 2 Q_ij)         (the exact minimizer along the pair)
# clipped to d <= min(1 - a_i, a_j).  The paper's two-level scheme: an outer iteration
# computes G over the active examples (one pass), measures the violation
# M_up - m_low (M_up = max_{I_up} -G, m_low = min_{I_low} -G) and stops below eps;
# shrinks examples that cannot move (a_k = 1 with -G_k > M_up, a_k = 0 with -G_k < m_low);
# then takes the k = max(active / 10, 1) largest -G of I_up and the k smallest of I_low
# (selection, then a sort of those k) and updates the pairs (i-th largest, i-th
# smallest) in turn with fresh gradients, each update O(nnz of the two rows).  When the
# shrunk problem is optimal the next iteration runs over all examples.
#
# rho: the KKT multiplier: the mean of G_k over the free a_k (0 < a_k < 1), else the
# midpoint of [max_{a_k = 1} G_k, min_{a_k = 0} G_k].
#
# Certificate: with w = w_a / (nu n), rho' = rho / (nu n),
#     P = 1/2 ||w||^2 - rho' + 1/(nu n) sum_k max(0, rho' - w.x_k),   D = -1/2 ||w||^2,
# D <= P* <= P (weak duality; a is feasible by construction), so (P - D) / |P| bounds
# the relative suboptimality of the returned (w, rho).
#
# Inputs are addressed through `rows`.  The core is serial and allocation-free.

from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport qsort
from libc.math cimport fabs, INFINITY
import numpy as np
cimport numpy as cnp

cnp.import_array()
from csr cimport vdot, CSR, dot_row, axpy_row, sq_norm_row
from linsvm._data cimport DataView
from interrupt cimport Stop, stop_init, stop_poll, stop_keep, stop_raise

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1


ctypedef struct Node:
    double v
    int64_t k


cdef int _cmp_node(const void* a, const void* b) noexcept nogil:
    cdef double x = (<const Node*>a).v, y = (<const Node*>b).v
    return -1 if x < y else (1 if x > y else 0)


cdef void _select(Node* a, int64_t lo, int64_t hi, int64_t kth) noexcept nogil:
    """Partially order a[lo:hi] so that a[kth] holds the value of rank kth and everything
    before it is <= it, everything after >= it (quickselect, median of three)."""
    cdef int64_t i, j, mid
    cdef double pv
    cdef Node tmp
    while hi - lo > 1:
        mid = lo + (hi - lo) // 2
        # median of three to a[mid]
        if a[mid].v < a[lo].v:
            tmp = a[mid]; a[mid] = a[lo]; a[lo] = tmp
        if a[hi - 1].v < a[lo].v:
            tmp = a[hi - 1]; a[hi - 1] = a[lo]; a[lo] = tmp
        if a[hi - 1].v < a[mid].v:
            tmp = a[hi - 1]; a[hi - 1] = a[mid]; a[mid] = tmp
        pv = a[mid].v
        i = lo
        j = hi - 1
        while i <= j:
            while a[i].v < pv:
                i += 1
            while a[j].v > pv:
                j -= 1
            if i <= j:
                tmp = a[i]; a[i] = a[j]; a[j] = tmp
                i += 1
                j -= 1
        if kth <= j:
            hi = j + 1
        elif kth >= i:
            lo = i
        else:
            return


cdef struct Work:
    # The state of the two-level dual coordinate descent (n examples)
    double* a           # the scaled dual variables, 0 <= a_k <= 1
    double* w           # w_a = sum_k a_k x_k
    const double* QD    # Q_kk = ||x_k||^2
    double* G           # G_k = w_a.x_k, on the active examples
    int64_t* index      # index[0:active]: the active examples
    Node* up            # n nodes: I_up's -G, then the kk largest at the end
    Node* low           # n nodes: I_low's -G, the kk smallest first
    double* dense       # n_weights doubles of zeros (kept zero): a row made dense


cdef double _gradient(const CSR* X, const int64_t* rows, Work* W, int64_t active,
                      double* Mup) noexcept nogil:
    """G_k = w_a.x_k over the active examples, M_up = max_{I_up} -G in Mup; returns
    m_low = min_{I_low} -G."""
    cdef int64_t s, k
    cdef double mlow = INFINITY
    Mup[0] = -INFINITY
    for s in range(active):
        k = W.index[s]
        W.G[k] = dot_row(X, rows[k], W.w)
        if W.a[k] < 1.0 and -W.G[k] > Mup[0]:
            Mup[0] = -W.G[k]
        if W.a[k] > 0.0 and -W.G[k] < mlow:
            mlow = -W.G[k]
    return mlow


cdef int64_t _shrink(Work* W, int64_t active, double Mup, double mlow) noexcept nogil:
    """Shrink the examples that cannot move (a_k = 1 with -G_k > M_up, a_k = 0 with
    -G_k < m_low) out of index[0:active]; returns the examples left."""
    cdef int64_t s = 0, k, tmp
    while s < active:
        k = W.index[s]
        if (W.a[k] >= 1.0 and -W.G[k] > Mup) or (W.a[k] <= 0.0 and -W.G[k] < mlow):
            active -= 1
            tmp = W.index[s]; W.index[s] = W.index[active]; W.index[active] = tmp
            continue
        s += 1
    return active


cdef int64_t _select_pairs(Work* W, int64_t active, int64_t* n_up_out) noexcept nogil:
    """The kk = max(active / 10, 1) largest -G of I_up at up[n_up - kk:] and the kk
    smallest of I_low at low[:kk], each sorted (kk also at most |I_up| and |I_low|);
    returns kk, |I_up| in n_up_out."""
    cdef int64_t s, k, n_up = 0, n_low = 0, kk
    for s in range(active):
        k = W.index[s]
        if W.a[k] < 1.0:
            W.up[n_up].v = -W.G[k]
            W.up[n_up].k = k
            n_up += 1
        if W.a[k] > 0.0:
            W.low[n_low].v = -W.G[k]
            W.low[n_low].k = k
            n_low += 1
    kk = active // 10
    if kk < 1:
        kk = 1
    if kk > n_up:
        kk = n_up
    if kk > n_low:
        kk = n_low
    if kk > 0:
        if kk < n_up:
            _select(W.up, 0, n_up, n_up - kk)
        qsort(&W.up[n_up - kk], kk, sizeof(Node), _cmp_node)
        if kk < n_low:
            _select(W.low, 0, n_low, kk - 1)
        qsort(W.low, kk, sizeof(Node), _cmp_node)
    n_up_out[0] = n_up
    return kk


cdef void _update_pair(const CSR* X, const int64_t* rows, Work* W, int64_t i,
                       int64_t j) noexcept nogil:
    """The two-variable step on the pair (i, j) with fresh gradients: a_i += d, a_j -= d
    by the exact minimizer along the pair, clipped to the box, if the pair violates
    in either orientation; w follows."""
    cdef double Gi, Gj, Qij, quad, d, room
    cdef int64_t tmp
    Gi = dot_row(X, rows[i], W.w)
    Gj = dot_row(X, rows[j], W.w)
    if not (W.a[i] < 1.0 and W.a[j] > 0.0 and Gi + 1e-12 < Gj):
        # the pair is not violating in this orientation; try the other one
        if W.a[j] < 1.0 and W.a[i] > 0.0 and Gj + 1e-12 < Gi:
            tmp = i; i = j; j = tmp
            Qij = Gi; Gi = Gj; Gj = Qij
        else:
            return
    # Q_ij = x_i . x_j through the dense copy of x_i
    axpy_row(X, rows[i], 1.0, W.dense)
    Qij = dot_row(X, rows[j], W.dense)
    axpy_row(X, rows[i], -1.0, W.dense)
    quad = W.QD[i] + W.QD[j] - 2.0 * Qij
    if quad <= 0.0:
        quad = 1e-12
    d = (Gj - Gi) / quad
    room = 1.0 - W.a[i]
    if W.a[j] < room:
        room = W.a[j]
    if d > room:
        d = room
    if d <= 0.0:
        return
    W.a[i] += d
    W.a[j] -= d
    if room == d:                     # land exactly on the bound
        if 1.0 - W.a[i] < 1e-15 * (1.0 + W.a[i]):
            W.a[i] = 1.0
        if W.a[j] < 1e-15:
            W.a[j] = 0.0
    axpy_row(X, rows[i], d, W.w)      # w += d (x_i - x_j)
    axpy_row(X, rows[j], -d, W.w)


cdef int oneclass_core(const CSR* X, const int64_t* rows, int64_t n, Work* W, double eps,
                       int max_iter, int* n_iter, double* viol, void* callback,
                       Stop* stop) noexcept nogil:
    """The two-level dual coordinate descent of the block comment from W.a (W.w = sum a x
    on entry).  Returns CONVERGED or MAX_ITER; viol: the last measured M_up - m_low."""
    cdef int64_t active = n, s, n_up, kk
    cdef double Mup, mlow
    cdef int it = 0, status = MAX_ITER
    viol[0] = INFINITY
    while it < max_iter:
        mlow = _gradient(X, rows, W, active, &Mup)
        viol[0] = Mup - mlow
        if stop_poll(stop, active * stop.per_row):
            break
        if Mup - mlow < eps:
            if active == n:
                status = CONVERGED
                break
            active = n                        # optimal on the shrunk set: check all
            continue
        active = _shrink(W, active, Mup, mlow)
        kk = _select_pairs(W, active, &n_up)
        for s in range(kk):
            if W.up[n_up - 1 - s].k != W.low[s].k:
                _update_pair(X, rows, W, W.up[n_up - 1 - s].k, W.low[s].k)
        it += 1
        if callback != NULL:
            with gil:
                try:
                    (<object>callback)(it, viol[0], active)
                except BaseException as e:
                    stop_keep(stop, e)
    n_iter[0] = it
    return status


cdef double _rho(const CSR* X, const int64_t* rows, int64_t n, Work* W) noexcept nogil:
    """G_k = w_a.x_k for every example and rho, the KKT multiplier (block comment): the
    mean of G over the free a_k, else the midpoint of [max_{a_k = 1} G, min_{a_k = 0} G]
    (or the one end there is)."""
    cdef int64_t k, n_free = 0
    cdef double lb = -INFINITY, ub = INFINITY, sum_free = 0.0
    for k in range(n):
        W.G[k] = dot_row(X, rows[k], W.w)
        if W.a[k] >= 1.0:
            if W.G[k] > lb:
                lb = W.G[k]
        elif W.a[k] <= 0.0:
            if W.G[k] < ub:
                ub = W.G[k]
        else:
            n_free += 1
            sum_free += W.G[k]
    if n_free > 0:
        return sum_free / n_free
    if lb > -INFINITY and ub < INFINITY:
        return 0.5 * (lb + ub)
    return lb if lb > -INFINITY else ub



def oneclass_solve(DataView data, *, double nu, double[::1] a, bint init, double eps,
                   int max_iter, object callback):
    """Solve the scaled one-class dual (block comment) over the rows of `data` (a view
    without the bias feature) from a (updated in place; init:
    start from LIBLINEAR's point instead, a_k = 1 for the first floor(nu n) examples and
    the remainder on the next).  a must be feasible when not init (0 <= a <= 1,
    sum a = nu n; checked).  Returns a dict: w (= w_a, nu n times the primal w), rho
    (likewise scaled), status (0 converged, 1 cap), n_iter, violation (M_up - m_low),
    primal, dual (P and D of the block comment, unscaled nu-form), n_sv (a > 0),
    n_bound (a = 1), n_outliers (w.x_k < rho - violation: closer than the final violation
    the solve cannot tell a tie from an outlier), G (w_a.x_k per position)."""
    cdef int64_t n = data.n, k, nfl, n_sv = 0, n_bound = 0, n_out = 0
    cdef int64_t nw = data.n_features
    cdef int status = CONVERGED, n_iter = 0
    cdef double viol = 0.0, s, rho = 0.0, scale
    cdef double hinge = 0.0
    if not (0.0 < nu <= 1.0):
        raise ValueError("nu must lie in (0, 1]")
    if a.shape[0] != n:
        raise ValueError("a must have one entry per example")
    if n == 0:
        raise ValueError("one-class training needs at least one example")
    if data.bias > 0:
        raise ValueError("the one-class dual has no bias feature: build the view without one")
    cdef const int64_t* rows = data.row_list()
    if init:
        nfl = <int64_t>(nu * n)
        for k in range(n):
            a[k] = 1.0 if k < nfl else 0.0
        if nfl < n:
            a[nfl] = nu * n - nfl
    else:
        s = 0.0
        for k in range(n):
            if not (0.0 <= a[k] <= 1.0):
                raise ValueError("a must lie in [0, 1]")
            s += a[k]
        if fabs(s - nu * n) > 1e-9 * n:
            raise ValueError(f"sum a = {s!r} differs from nu n = {nu * n!r}")
    w_arr = np.zeros(nw, dtype=np.float64)
    dense_arr = np.zeros(nw, dtype=np.float64)
    QD_arr = np.empty(n, dtype=np.float64)
    G_arr = np.zeros(n, dtype=np.float64)
    idx_arr = np.arange(n, dtype=np.int64)
    nodes = np.empty(4 * n, dtype=np.float64)          # two Node arrays of n (16 bytes)
    cdef double[::1] w = w_arr, QD = QD_arr, G = G_arr, dense = dense_arr
    cdef int64_t[::1] index = idx_arr
    cdef Node* up = <Node*>cnp.PyArray_DATA(nodes)
    cdef Node* low = up + n
    cdef CSR X = data.csr(1, NULL)
    cdef Work W
    W.a = &a[0]
    W.w = &w[0]
    W.QD = &QD[0]
    W.G = &G[0]
    W.index = &index[0]
    W.up = up
    W.low = low
    W.dense = &dense[0]
    cdef Stop ST
    cdef void* cb = <void*>callback if callback is not None else NULL
    stop_init(&ST, data.nnz, data.n_rows)
    with nogil:
        for k in range(n):
            QD[k] = sq_norm_row(&X, rows[k])
            if a[k] != 0.0:
                axpy_row(&X, rows[k], a[k], &w[0])
        if max_iter > 0:
            status = oneclass_core(&X, rows, n, &W, eps, max_iter, &n_iter, &viol, cb, &ST)
        rho = _rho(&X, rows, n, &W)
    stop_raise(&ST)
    scale = nu * n
    for k in range(n):
        if a[k] > 0.0:
            n_sv += 1
            if a[k] >= 1.0:
                n_bound += 1
        if G[k] < rho:
            hinge += rho - G[k]
            if G[k] < rho - (viol if viol > 0.0 else 0.0):
                n_out += 1
    ww = vdot(w_arr, w_arr)
    # P and D in the nu-form (w = w_a / (nu n), rho' = rho / (nu n))
    primal = (0.5 * ww - scale * rho + hinge) / (scale * scale)
    dual = -0.5 * ww / (scale * scale)
    return dict(w=w_arr, rho=rho, status=status, n_iter=n_iter, violation=viol,
                primal=primal, dual=dual, n_sv=int(n_sv), n_bound=int(n_bound),
                n_outliers=int(n_out), G=G_arr)
