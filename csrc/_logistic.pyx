# L2-regularized logistic regression: binary (LIBLINEAR -s 0 and -s 7's problem) and
# multinomial (softmax), by truncated Newton over the shared CGLS (csrc/cgls.pxd), and
# the binary dual by coordinate descent with an inner Newton step (Yu, Huang & Lin 2011).
#
# The Python entries of linsvm._logistic.  What they run is in the files they include:
#   csrc/logistic_loss.pxd     the problems (block comment), and the loss model: f and g
#                              term by term, each Newton step's weighted least squares, the
#                              line search's values along a step, the dual point of the scores
#   csrc/logistic_softmax.pxd  the multinomial products and the operator of softmax's steps
#   csrc/logistic_newton.pxd   truncated Newton as a loss of the one Newton driver
#                              (csrc/newton_driver.pxd): each step's CGLS tests, the line
#                              search, the stopping tests and the certificate (block comment)
#   csrc/logistic_dual.pxd     lr-dual's coordinate descent (block comment)
#
# Every entry takes the examples as one linsvm._data.DataView, whose rows (any subset, in
# any order) are the solve's; t / codes and the costs are per position in those rows.  The
# Newton entries take their settings as keywords by the names of logistic_newton.pxd's
# Params, the catalog's where the setting is an option.  The entries allocate every array;
# nothing in the nogil code allocates or raises.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset
from libc.math cimport exp, log, fabs, sqrt, isfinite
import numpy as np
cimport numpy as cnp

cnp.import_array()
from csr cimport (vdot, CSR, dot, dot_row, axpy_row, sq_norm_row, entry_threads, row_start,
                  row_stop)
from csr_passes cimport rmatvec
from linsvm._data cimport DataView
from cgls cimport Operator
from interrupt cimport Stop, stop_init, stop_raise
from comm cimport Comm, comm_from, comm_active, comm_sum1
from wsplit cimport Split, split_from
from logistic_softmax cimport mm_scratch_doubles
from logistic_loss cimport (Model, BINARY, MULTINOMIAL, CONVERGED, _sig_minus, _logloss,
                            model_eval, model_setup, model_scores, model_loss_grad,
                            model_dual_terms, model_operator)
from newton_driver cimport NewtonWork
from logistic_newton cimport Params, LrState, Result, lr_drive, certificate
from logistic_dual cimport DualVar, DualRun, DUAL_TRACE, lrdual_core



# ------------------------------------------------------------------ set-up of the entries

# the Newton entries' settings: Params' fields (regularize_bias may be left out: True)
NEWTON_SETTINGS = ("max_iter", "cg_max_iter", "cg_tol", "forcing", "precondition",
                   "jacobi_weight", "n_threads", "regularize_bias", "gstop", "gap_stop",
                   "ls_tol", "ls_max")


cdef int _read_params(Params* P, dict settings) except -1:
    """Fill P from a Newton entry's keywords, each by its field's name; TypeError for a
    missing or unknown one, ValueError for a value out of range."""
    s = dict(regularize_bias=True)
    s.update(settings)
    unknown = sorted(set(s) - set(NEWTON_SETTINGS))
    missing = [name for name in NEWTON_SETTINGS if name not in s]
    if unknown or missing:
        raise TypeError(f"Newton settings: unknown {unknown}, missing {missing}")
    P.max_iter = s["max_iter"]
    P.cg_max_iter = s["cg_max_iter"]
    P.cg_tol = s["cg_tol"]
    P.forcing = s["forcing"]
    P.precondition = 1 if s["precondition"] else 0
    P.jacobi_weight = s["jacobi_weight"]
    P.n_threads = s["n_threads"]
    P.regularize_bias = 1 if s["regularize_bias"] else 0
    P.gstop = s["gstop"]
    P.gap_stop = s["gap_stop"]
    P.ls_tol = s["ls_tol"]
    P.ls_max = s["ls_max"]
    if not (0.0 <= P.gstop < 1.0 and P.gap_stop >= 0.0 and P.forcing >= 0.0
            and P.cg_tol >= 0.0 and 0.0 < P.jacobi_weight <= 1.0 and 0.0 < P.ls_tol < 1.0
            and P.ls_max >= 1 and P.max_iter >= 0 and P.cg_max_iter >= 1):
        raise ValueError("invalid solver settings")
    return 0


cdef class _Terms:
    """One entry call's model, kept alive together: the CSR view of the data with its
    scatter scratch, the loss model M over it with its arrays, the collective and the
    weight split."""
    cdef DataView data
    cdef CSR X
    cdef Model M
    cdef Comm CM
    cdef Split SP
    cdef list keep


cdef object _model_arrays(_Terms T, int kind, int64_t k, const double* t, const int32_t* y,
                          const double[::1] c, double C):
    """Allocate the per-term arrays of T.M (kept alive in T.keep) and U = C c: the scores,
    the step's image, the CGLS weights and residual, and e (binary) or P and lse
    (multinomial)."""
    cdef Model* M = &T.M
    cdef int64_t i, m = T.data.n, mk = max(m * k, 1), me = max(m, 1)
    U_arr = np.empty(me)
    fbuf = np.zeros(4 * mk + (me if kind == BINARY else mk + me))
    T.keep.extend([U_arr, fbuf])
    cdef double[::1] Uv = U_arr
    cdef double* F = <double*>cnp.PyArray_DATA(fbuf)
    for i in range(m):
        Uv[i] = C * c[i]
    M.kind = kind
    M.m = m
    M.k = k
    M.nbeta = T.data.n_weights * k
    M.nreg = M.nbeta
    M.t = t
    M.y = y
    M.U = &Uv[0]
    M.o = F
    M.xi = F + mk
    M.cc = F + 2 * mk
    M.z = F + 3 * mk
    M.e = M.P = M.lse = NULL
    if kind == BINARY:
        M.e = F + 4 * mk
    else:
        M.P = F + 4 * mk
        M.lse = F + 5 * mk
    M.op.k = k
    M.op.P = M.P
    M.op.S = NULL
    M.op.scratch = NULL
    M.op.scratch2 = NULL


cdef _Terms _terms(DataView data, t, codes, int64_t n_classes, const double[::1] c, double C,
                   int64_t nbeta, int n_threads, object comm):
    """The model of binary labels t (+-1) or, with codes given, of multinomial class codes in
    [0, n_classes), per position of data's rows, with costs c and C; beta must have nbeta
    entries.  The kernels get n_threads threads (0: all) and the scatter scratch they need;
    comm: None or the Collective of a distributed solve.  ValueError for inconsistent
    inputs."""
    cdef _Terms T = _Terms()
    cdef int kind = BINARY if codes is None else MULTINOMIAL
    cdef int64_t m = data.n, k = 1 if kind == BINARY else n_classes
    cdef const double[::1] tv
    cdef const int32_t[::1] yv
    cdef const double* tp = NULL
    cdef const int32_t* yp = NULL
    T.data = data
    T.keep = []
    if kind == BINARY:
        if t is None:
            raise ValueError("binary labels t or class codes are needed")
        labels = np.ascontiguousarray(t, dtype=np.float64)
        if labels.ndim != 1 or labels.shape[0] != m:
            raise ValueError("labels and rows differ in length")
    else:
        if k < 2:
            raise ValueError("softmax needs at least two classes")
        labels = np.ascontiguousarray(codes, dtype=np.int32)
        if labels.ndim != 1 or labels.shape[0] != m:
            raise ValueError("class codes and rows differ in length")
        if m and (labels.min() < 0 or labels.max() >= k):
            raise ValueError(f"class codes must lie in [0, {k})")
    if nbeta != data.n_weights * k:
        raise ValueError(f"beta has {nbeta} entries, expected {data.n_weights * k}")
    if c.shape[0] != m:
        raise ValueError("costs and rows differ in length")
    if not (C > 0 and isfinite(C)):
        raise ValueError("C must be > 0 and finite")
    T.keep.append(labels)
    if kind == BINARY and m:
        tv = labels
        tp = &tv[0]
    elif m:
        yv = labels
        yp = &yv[0]
    T.keep.append(data.kernel_csr(entry_threads(n_threads), 0, &T.X))
    _model_arrays(T, kind, k, tp, yp, c, C)
    T.M.X = &T.X
    T.M.rows = data.row_list()
    T.CM = comm_from(comm)
    T.M.comm = &T.CM
    T.M.split = NULL
    return T


cdef object _soft_scratch(_Terms T, bint blocks):
    """The scratch of softmax's operator: M_i' u per term and, with blocks, the block
    accumulators of its scatters (sized whatever the thread count: mm_rmatvec)."""
    cdef Model* M = &T.M
    cdef int64_t n = mm_scratch_doubles(&T.X, M.k)
    opS = np.zeros(max(M.m * M.k, 1))
    T.keep.append(opS)
    M.op.S = <double*>cnp.PyArray_DATA(opS)
    if blocks and n > 0:
        mscratch = np.zeros(2 * n)
        T.keep.append(mscratch)
        M.op.scratch = <double*>cnp.PyArray_DATA(mscratch)
        M.op.scratch2 = M.op.scratch + n


# ------------------------------------------------------------------ the Newton entries

cdef dict _solve(_Terms T, double[::1] beta, const Params* P, object callback):
    """Allocate the work arrays, run lr_drive from beta (updated in place) and certify its
    result (see lr_solve)."""
    cdef Model* M = &T.M
    cdef int64_t m = M.m, k = M.k, nb = M.nbeta, mk = max(m * k, 1), j
    cdef int cold = 1
    cdef double g0sq = -1.0
    cdef NewtonWork W
    cdef LrState L
    cdef Result R
    cdef Stop S
    wv = np.zeros(8 * max(nb, 1) + 3)
    tm = np.zeros(2 * mk)
    trace_arr = np.zeros(max(P.max_iter, 1))
    cdef double* trace = <double*>cnp.PyArray_DATA(trace_arr)
    cdef double* WV = <double*>cnp.PyArray_DATA(wv)
    cdef double* TM = <double*>cnp.PyArray_DATA(tm)
    W.X = M.X
    W.rows = M.rows
    W.m = m * k                              # the terms
    W.nbeta = nb
    W.nreg = M.nreg
    W.lam = 1.0
    W.y = M.o
    W.dy = NULL
    W.z = M.z
    W.cc = M.cc
    W.xd = M.xi
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
    W.ytry = W.q        # the scores kept over a line search: CGLS's q is spent by then
    stop_init(&S, T.data.nnz, T.data.n_rows)
    W.stop = &S
    W.comm = M.comm
    W.split = NULL                           # the Newton loop replicated
    W.cg_split = M.split
    L.M = M
    L.P = P
    L.callback = <void*>callback if callback is not None else NULL
    R.status = CONVERGED
    R.n_iter = 0
    R.cg_iter = 0
    R.ls_trials = 0
    R.f = 0.0
    R.gsq = 0.0
    R.dual = 0.0
    for j in range(nb):
        if beta[j] != 0.0:
            cold = 0
            break
    with nogil:
        if cold:
            memset(M.o, 0, m * k * sizeof(double))
        else:
            model_scores(M, &beta[0])
            if P.gstop > 0.0:                # ||g(0)||^2 for the gradient test: the scores 0
                memcpy(W.ytry, M.o, m * k * sizeof(double))
                memset(M.o, 0, m * k * sizeof(double))
                model_eval(M)
                model_loss_grad(M, W.u, W.r)
                g0sq = dot(W.r, W.r, nb)
                memcpy(M.o, W.ytry, m * k * sizeof(double))
        lr_drive(&L, &W, &beta[0], g0sq, trace, &R)
        if not S.stopped:
            certificate(&L, &W, &beta[0], &R)
    stop_raise(&S)                            # Ctrl-C: the work arrays go as it unwinds
    return dict(status=R.status, n_iter=R.n_iter, cg_iter=int(R.cg_iter),
                ls_trials=int(R.ls_trials), f=float(R.f), dual=float(R.dual),
                grad_norm=float(sqrt(R.gsq)), trace=trace_arr[:R.n_iter].copy())


def lr_solve(DataView data, *, t, const double[::1] c, double C, double[::1] beta,
             object callback=None, object comm=None, object split=None, **settings):
    """Minimize f(w) = 1/2 ||w||^2 + C sum_k c_k log(1 + exp(-t_k x_k.w)) over the rows of
    `data` by truncated Newton (logistic_newton.pxd), updating beta in place (its values are
    the warm start; zeros: cold).  t: the labels +-1, c: the costs, per position.

    Settings (keywords, all needed but regularize_bias): stop at ||g(w)|| <= gstop ||g(0)||
    and 1/2 ||g(w)||^2 <= gap_stop f(w) (both at once; gstop 0: the gap test alone), or at
    max_iter Newton steps, or with no descent left.  CGLS per step: forcing term `forcing`,
    Galli & Lin's quadratic-model rule at cg_tol in its adaptive form, at most cg_max_iter
    iterations, the damped Jacobi preconditioner (precondition) of weight jacobi_weight.
    Line search: stop at |phi'| <= ls_tol |phi'(0)|, at most ls_max trials.  n_threads:
    the kernels' threads (0: all).  regularize_bias False (with a bias feature): the bias
    weight leaves ||w||^2 (a free intercept); the gap test is then the caller's (dual is D at
    the balanced dual point, free_bias_dual).

    callback(it, f, cg_it, step, ||g at the step's start||) after each step.  comm: None or
    the Collective of a distributed solve (data, t, c this rank's block; every rank gets the
    same beta).  split: None, or this rank's linsvm.runtime.wsplit.WeightSplit (with comm):
    CGLS in the weight-split arrangement (cgls.pxd).

    Returns a dict: status (0 converged, 1 iteration cap, 2 no descent), n_iter, cg_iter,
    ls_trials, f (at beta), dual (D at the dual point built from beta), grad_norm
    (||g(beta)||), trace (f per iteration)."""
    cdef Params P
    _read_params(&P, settings)
    cdef _Terms T = _terms(data, t, None, 1, c, C, beta.shape[0], P.n_threads, comm)
    if not P.regularize_bias and data.bias > 0:
        T.M.nreg = T.M.nbeta - 1             # the bias weight, last, is free
    if split is not None and comm_active(&T.CM):
        if split.n_weights != data.n_weights:
            raise ValueError("the weight split is for another number of weights")
        T.SP = split_from(split, &T.CM)
        T.M.split = &T.SP
    return _solve(T, beta, &P, callback)


def softmax_solve(DataView data, *, codes, int64_t n_classes, const double[::1] c, double C,
                  double[::1] beta, object callback=None, object comm=None, **settings):
    """Minimize f(W) = 1/2 ||W||_F^2 + C sum_k c_k [log sum_l exp(w_l.x_k) - w_{y_k}.x_k] by
    truncated Newton over all n_classes columns at once, W = beta as an n_weights x n_classes
    row-major array updated in place; codes: the class index of each position, in
    [0, n_classes).  Settings and result as lr_solve's; regularize_bias False (with a bias
    feature): the bias row leaves ||W||_F^2, and dual is NaN (the caller certifies)."""
    cdef Params P
    _read_params(&P, settings)
    cdef _Terms T = _terms(data, None, codes, n_classes, c, C, beta.shape[0], P.n_threads, comm)
    _soft_scratch(T, 1)
    if not P.regularize_bias and data.bias > 0:
        T.M.nreg = T.M.nbeta - T.M.k         # the bias row, last (k weights), is free
    return _solve(T, beta, &P, callback)


def objective(DataView data, *, t=None, codes=None, int64_t n_classes=1, const double[::1] c,
              double C, const double[::1] beta, int n_threads=1, object comm=None):
    """(f, grad, D, x_alpha) at beta, from the kernels the solvers use: f the binary (t given)
    or multinomial (codes given; beta n_weights x n_classes row-major) objective, its gradient,
    D the dual value at the dual point built from beta (logistic_newton.pxd, Certificate) and
    x_alpha that dual point (binary: alpha_k = C c_k sigma(-t_k x_k.beta); multinomial: the
    m x k probabilities).  comm: f, grad and D over every rank (x_alpha this rank's)."""
    cdef _Terms T = _terms(data, t, codes, n_classes, c, C, beta.shape[0], n_threads, comm)
    cdef Model* M = &T.M
    cdef int64_t m = M.m, k = M.k, nb = M.nbeta, j, i
    cdef double F, D
    g_arr = np.zeros(nb)
    u_arr = np.zeros(max(m * k, 1))
    wv = np.zeros(nb)
    cdef double[::1] g = g_arr, u = u_arr, wa = wv
    with nogil:
        model_scores(M, &beta[0])
        F = 0.5 * dot(&beta[0], &beta[0], nb) + comm_sum1(M.comm, model_eval(M))
        model_loss_grad(M, &u[0], &g[0])
        for j in range(nb):
            g[j] += beta[j]
            wa[j] = beta[j] - g[j]
        D = -0.5 * dot(&wa[0], &wa[0], nb) + comm_sum1(M.comm, model_dual_terms(M))
    if M.kind == BINARY:
        alpha = np.array([C * c[i] * _sig_minus(M.t[i] * M.o[i], M.e[i]) for i in range(m)])
    else:
        alpha = np.array(<double[:max(m * k, 1)]>M.P)[:m * k].reshape(m, k).copy()
    return float(F), g_arr, float(D), alpha


def hessian_product(DataView data, *, t=None, codes=None, int64_t n_classes=1,
                    const double[::1] c, double C, const double[::1] beta, const double[::1] v,
                    int n_threads=1):
    """(H v, diag(H)) at beta through the CGLS operator and weights the solver builds:
    H v = v + A'C A v and diag(H) = 1 + diag(A'CA) (binary or multinomial as `objective`)."""
    cdef _Terms T = _terms(data, t, codes, n_classes, c, C, beta.shape[0], n_threads, None)
    cdef Model* M = &T.M
    cdef int64_t nb = M.nbeta, mk = max(M.m * M.k, 1), j
    cdef Operator A
    if v.shape[0] != nb:
        raise ValueError("v has the wrong length")
    _soft_scratch(T, 0)
    hv_arr = np.zeros(nb)
    dg_arr = np.zeros(nb)
    r_arr = np.zeros(nb)
    q_arr = np.zeros(mk)
    u_arr = np.zeros(mk)
    cdef double[::1] hv = hv_arr, dg = dg_arr, r = r_arr, q = q_arr, u = u_arr
    with nogil:
        model_scores(M, &beta[0])
        model_eval(M)
        model_setup(M)
        A = model_operator(M)
        A.normal(&A, &v[0], M.cc, &q[0], &u[0], &hv[0])
        A.apply_t_sq(&A, &u[0], M.cc, &r[0], &dg[0])
        for j in range(nb):
            hv[j] += v[j]
            dg[j] += 1.0
    return hv_arr, dg_arr


# ------------------------------------------------------------------ lr-dual

def lrdual_solve(DataView data, *, const double[::1] t, const double[::1] c, double C,
                 double[::1] alpha, double[::1] alpha_c, double eps, uint64_t seed,
                 int max_iter, object callback=None):
    """Solve the binary L2-LR dual over the rows of `data` by coordinate descent
    (logistic_dual.pxd) from alpha (A) and alpha_c (B = C c - alpha), both updated in place:
    every pair with C c_k > 0 must have A, B > 0 and A + B = C c_k to rounding (the caller
    builds them; zero-cost examples are set to 0 here).  Loops until the largest |g'_i(0)|
    of a loop is <= eps, at most max_iter (0: no loop, only the certificate), in permutations
    seeded by seed; callback(loop, max violation, inner steps) after each loop.

    Returns a dict: w = w(alpha), status (0: the loop's max |g'_i| <= eps, 1: the loop cap),
    n_iter (loops), newton_iter (inner steps), violation (the last loop's max |g'_i(0)|),
    primal (f(w)), dual (D(alpha), logistic_newton.pxd's Certificate, the maximization
    form), dual_w (D at the dual point built from w), trace (loop, violation, seconds, inner
    steps)."""
    cdef int64_t m = data.n, nw = data.n_weights, i, n = 0
    cdef int status = CONVERGED
    cdef double P = 0.0, Dsep = 0.0, Dw = 0.0, mm, e, Ui, ww
    cdef DualRun R
    cdef Stop S
    if t.shape[0] != m or c.shape[0] != m or alpha.shape[0] != m or alpha_c.shape[0] != m:
        raise ValueError("inconsistent lengths")
    if not (C > 0 and isfinite(C)) or max_iter < 0 or not eps > 0:
        raise ValueError("invalid solver settings")
    for i in range(m):
        if c[i] > 0 and not (alpha[i] > 0 and alpha_c[i] > 0 and isfinite(alpha[i] + alpha_c[i])):
            raise ValueError("alpha and C c - alpha must be > 0 for every example with a cost")
    cdef const int64_t* rows = data.row_list()
    cdef CSR X = data.csr(1, NULL)
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
    R.eps = eps
    R.max_iter = max_iter
    R.rng = seed
    R.trace = &tr[0, 0]
    R.callback = <void*>callback if callback is not None else NULL
    R.stop = &S
    R.n_iter = 0
    R.n_newton = 0
    R.gmax = 0.0
    stop_init(&S, data.nnz, data.n_rows)
    with nogil:
        for i in range(m):
            Uv[i] = C * c[i]
            V[i].U = Uv[i]
            V[i].t = t[i]
            V[i].A = alpha[i]
            V[i].B = alpha_c[i]
            V[i].lo = row_start(&X, rows[i])
            V[i].hi = row_stop(&X, rows[i])
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
            status = lrdual_core(&X, V, &w[0], &idx[0], n, &R)
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
            rmatvec(&X, rows, m, &uu[0], &g[0])     # w_alpha(w)
    stop_raise(&S)
    ww = vdot(w_arr, w_arr)
    return dict(w=w_arr, status=status, n_iter=R.n_iter, newton_iter=int(R.n_newton),
                violation=float(R.gmax), primal=float(0.5 * ww + P),
                dual=float(-0.5 * ww + Dsep), dual_w=float(-0.5 * vdot(g_arr, g_arr) + Dw),
                trace=trace_arr[:R.n_iter].copy())
