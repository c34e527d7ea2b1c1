# SVMperf: the 1-slack cutting-plane solvers of Joachims, "Training Linear SVMs in
# Linear Time" (KDD 2006), Algorithm 1 (classification, OP2) and Algorithm 2
# (ordinal regression / ROC area, OP5).
#
# Problem (the paper's structural form, one slack xi shared by all constraints):
#
#     min_{w, xi >= 0}  1/2 w.w + Cp xi
#     s.t.  w.x_c >= b_c - xi   for every constraint c,
#
# Classification (OP2, per-example costs q_k >= 0, labels t_k = +-1, n examples):
#     c in {0,1}^n,  x_c = (1/n) sum_k c_k q_k t_k x_k,  b_c = (1/n) sum_k c_k q_k.
# Ordinal regression (OP5, pairs P = {(i, j): same query, level_i > level_j},
# pair weight v_ij = q_i q_j, m = sum_P v_ij), in the condensed form of Alg. 2:
#     x_c = (1/m) sum_k (c+_k - c-_k) x_k,  b_c = (1/(2m)) sum_k (c+_k + c-_k),
#     c+_i = q_i sum_{j: (i,j) in P, c_ij = 1} q_j,  c-_j = q_j sum_{i: (i,j) in P, c_ij = 1} q_i.
# linsvm's -c C maps to Cp = C n (classification) and Cp = C sum_k q_k (ordinal):
# then Cp xi' = C sum_k q_k max(0, 1 - t_k w.x_k), resp. (C n / m) sum_P v_ij hinge_ij.
#
# Algorithm 1 / 2 (the loop of perf_core):
#   4: (w, xi) = optimum over the working set W, solved in the dual (OP3 on W):
#          max_a  b.a - 1/2 a' G a   s.t.  a >= 0, sum a <= Cp,   G_ij = x_ci . x_cj,
#      w = sum_j a_j x_cj, xi = max(0, max_j (b_j - w.x_cj)), by a primal active-set
#      method with Newton steps on the free set (qp_active; SMO, qp_smo, as its
#      fallback), warm started from the previous alphas, solved to KKT violation
#      qp_tol (then b.a - 1/2 a'Ga is a certified lower bound on the optimum and
#      F(w) minus it bounds F(w) - F*).  The Gram matrices are near-singular, where
#      SMO alone needs many steps per cut (docs/solvers.md, perf).
#   5-7: the most violated constraint at w (one pass over the data):
#      classification: c_k = [t_k w.x_k < 1]                               (oracle_binary)
#      ordinal: c_ij = [w.x_i - w.x_j < 1], counted by sorting the scores
#      of each query and two sweeps with a Fenwick tree over the levels    (ordinal_counts)
#      xi' = b_c - w.x_c  (the average weighted hinge loss at w)
#   9: stop when xi' <= xi + eps; otherwise add c to W (its vector x_c stored
#      dense, one new row and column of G) and go back to 4.
#      Guarded (a departure, linsvm/solvers/perf.py): the stop also needs the duality
#      gap F(w) - D = 1/2 w.w + Cp xi' - (b.a - 1/2 a'Ga) <= gap_guard F(w), so the
#      returned objective is certified within gap_guard of the optimum whatever eps
#      is in absolute terms (gap_guard = 0: the paper's rule alone).
#
# The constraint store (V: one dense row of n_weights per constraint, G, b,
# alpha) lives in buffers the Python wrapper allocates; when they are full the
# core returns NEED_ROOM and the wrapper re-enters with more rows (16, a quarter
# past 64; the rows are separate, so none is copied, and a removed constraint's
# row is reused; the re-entry does not solve the solved QP again, so when constraints go does not
# depend on how the store grew).  A constraint whose alpha stayed 0 for
# `inactive_iters` QP solutions is removed (it does not change the current
# optimum, so the QP value still grows by the Lemma 2 amount per cut); few of the
# cuts are ever active at once.  Once the store holds soft_rows rows (as many as
# the data's non-zeros take, linsvm/solvers/perf.py), a full store first removes
# those inactive for SOFT_AGE solutions and grows only if none is.  At the
# cap max_constraints, constraints with alpha = 0 are dropped, or, when every
# one is active, all are merged into their alpha-weighted average (a valid
# inequality implied by OP2/OP5 that leaves the current optimum unchanged), so
# Theorem 3's guarantee and Lemma 2's monotone progress still hold.
#
# Cost per iteration: one pass over the non-zeros (s n), the sort (n log n, Alg. 2),
# the sweeps (n log R), and O(|W| n_weights) for w and the new row of G.
#
# Where the code is: the most violated constraint in csrc/perf_oracle.pxd, the
# working-set QP in csrc/perf_qp.pxd, the working set and the repeat loop (perf_core)
# in csrc/perf_cuts.pxd; this file holds the Python entries.

from libc.stdint cimport int32_t, int64_t
import numpy as np
from csr cimport CSR, entry_threads
from linsvm._data cimport DataView
from interrupt cimport Stop, stop_init, stop_raise
from comm cimport Comm, comm_from
from perf_oracle cimport BINARY, ORDINAL, Item, Oracle, RADIX_PASSES, RADIX_SIZE, oracle
from perf_qp cimport QPWork, qp_active, qp_smo
from perf_cuts cimport NEED_ROOM, PerfSettings, Cuts, Result, perf_core

# The settings keywords of perf_solve (PerfSettings; the catalog's option names, and the
# solve's Cp, eps, gap_guard and qp_max_iter); gap_guard may be left out (0).
_SETTINGS = ("Cp", "eps", "gap_guard", "max_constraints", "max_iter", "inactive_iters",
             "soft_rows", "qp_tol", "qp_max_iter", "n_threads")


# --------------------------------------------------------------------------- #
# Python entry points (inputs validated by linsvm/solvers/perf.py)
# --------------------------------------------------------------------------- #


cdef class _OracleData:
    """Owns the numpy buffers behind an Oracle struct."""
    cdef Oracle O
    cdef Comm C
    cdef object keep
    cdef public object s, u, cplus, cminus

    def __cinit__(self):
        self.keep = []


cdef _OracleData _make_oracle(const int64_t* rows, int64_t n, const double[::1] t,
                              const double[::1] q, double scale, object queries,
                              int64_t n_scores=0):
    """The Oracle over n positions, rows their row numbers (NULL for the gathered oracle
    of a distributed solve, which only counts); queries None: classification, t the
    labels; else (level, perm, gptr, glevels), the queries of ordinal regression (see
    linsvm/solvers/perf.py), t unused.  Score buffer: max(n, n_scores) doubles."""
    cdef _OracleData od = _OracleData()
    cdef int kind = BINARY if queries is None else ORDINAL
    cdef double[::1] sv, uv
    if q.shape[0] != n or (kind == BINARY and t.shape[0] != n):
        raise ValueError("t and q must have one entry per position")
    od.s = np.zeros(max(n, n_scores, 1))
    od.u = np.zeros(max(n, 1))
    sv = od.s
    uv = od.u
    od.O.kind = kind
    od.O.rows = rows
    od.O.n = n
    od.O.t = &t[0] if (kind == BINARY and n > 0) else NULL
    od.O.q = &q[0] if n > 0 else NULL
    od.O.scale = scale
    od.O.s = &sv[0]
    od.O.u = &uv[0]
    od.O.comm = NULL
    od.O.pk = NULL
    od.O.flag = 0.0
    od.O.glob = NULL
    od.O.offset = 0
    od.O.pad = 0
    od.O.per_rank = NULL
    od.O.gat = NULL
    od.keep.extend([t, q])
    if kind == ORDINAL:
        _ordinal_oracle(od, n, queries)
    return od


cdef int _ordinal_oracle(_OracleData od, int64_t n, object queries) except -1:
    """The query layout and the scratch of Algorithm 2's counts in od's Oracle."""
    cdef int64_t n_groups = 0, maxR = 1, g
    cdef const int32_t[::1] lv
    cdef const int64_t[::1] pv, gv
    cdef const int32_t[::1] glv
    cdef double[::1] cpv, cmv, fv, itv
    cdef int64_t[::1] ctv
    level, perm, gptr, glevels = queries
    lv = level
    pv = perm
    gv = gptr
    glv = glevels
    n_groups = glv.shape[0]
    for g in range(n_groups):
        if glv[g] > maxR:
            maxR = glv[g]
    od.cplus = np.zeros(max(n, 1))
    od.cminus = np.zeros(max(n, 1))
    fen = np.zeros(maxR + 1)
    items = np.zeros(4 * max(n, 1))          # 2n Item structs (16 bytes each)
    counts = np.zeros(RADIX_PASSES * RADIX_SIZE, dtype=np.int64)
    cpv = od.cplus
    cmv = od.cminus
    fv = fen
    itv = items
    od.O.level = &lv[0] if n > 0 else NULL
    od.O.perm = &pv[0] if n > 0 else NULL
    od.O.gptr = &gv[0]
    od.O.glevels = &glv[0] if n_groups > 0 else NULL
    od.O.n_groups = n_groups
    od.O.items = <Item*>&itv[0]
    od.O.items2 = (<Item*>&itv[0]) + max(n, 1)
    ctv = counts
    od.O.counts = &ctv[0]
    od.O.fen = &fv[0]
    od.O.cplus = &cpv[0]
    od.O.cminus = &cmv[0]
    od.keep.extend([level, perm, gptr, glevels, fen, items, counts])
    return 0


cdef int _distribute(_OracleData od, object comm, int64_t nw, object glob) except -1:
    """Make od's oracle distributed over comm (a Collective): the packed allreduce
    buffer and, for glob = (q, level, perm, gptr, glevels, per_rank) of all ranks'
    positions in rank order, the gathered oracle of ordinal_counts (perf_solve)."""
    cdef _OracleData god
    cdef double[::1] pkv, gatv
    cdef const int64_t[::1] prv
    cdef int64_t rk
    od.C = comm_from(comm)
    od.O.comm = &od.C
    pk = np.zeros(nw + 3)
    pkv = pk
    od.O.pk = &pkv[0]
    od.keep.append(pk)
    if glob is None:
        return 0
    q_all, level_all, perm_all, gptr_all, glevels_all, per_rank = glob
    per_rank = np.ascontiguousarray(per_rank, dtype=np.int64)
    if per_rank.shape[0] != od.C.size or per_rank[od.C.rank] != od.O.n:
        raise ValueError("per_rank must hold every rank's number of positions")
    n_all = int(per_rank.sum())
    god = _make_oracle(NULL, n_all, None, q_all, od.O.scale,
                       (level_all, perm_all, gptr_all, glevels_all))
    prv = per_rank
    od.O.pad = max(int(per_rank.max()), 1)
    od.O.offset = 0
    for rk in range(od.C.rank):
        od.O.offset += prv[rk]
    od.O.per_rank = &prv[0]
    gat = np.zeros(od.C.size * od.O.pad)
    gatv = gat
    od.O.gat = &gatv[0]
    od.O.glob = &god.O
    od.keep.extend([god, per_rank, gat])
    return 0


def most_violated(DataView data, const double[::1] w, *, const double[::1] t,
                  const double[::1] q, double scale, queries=None, int n_threads=1):
    """The oracle the solver calls (Alg. 1 lines 5-7 / Alg. 2 lines 5-22) at w over the
    view's rows, for tests.

    queries None (classification): t = labels +-1 per row, scale = 1/n.  Otherwise
    (ordinal) queries = (level, perm, gptr, glevels) as linsvm/solvers/perf.py lays them
    out, t unused (None), scale = 1/m.  q: the cost factors per row.  Returns
    dict(xi_prime, x_c, b_c, scores, u) and for ordinal regression also cplus, cminus.
    """
    cdef int64_t nw = data.n_weights, n = data.n
    if w.shape[0] != nw:
        raise ValueError("w has the wrong length")
    cdef CSR X
    scratch = data.kernel_csr(entry_threads(n_threads), 0, &X)
    cdef _OracleData od = _make_oracle(data.row_list(), n, t, q, scale,
                                       queries)
    xc_arr = np.zeros(max(nw, 1))
    cdef double[::1] xcv = xc_arr
    cdef double rhs = 0.0, xi
    with nogil:
        xi = oracle(&X, &od.O, &w[0] if nw > 0 else NULL, &xcv[0], &rhs)
    out = dict(xi_prime=xi, x_c=xc_arr[:nw], b_c=rhs, scores=od.s[:n].copy(), u=od.u[:n].copy())
    if queries is not None:
        out["cplus"] = od.cplus[:n].copy()
        out["cminus"] = od.cminus[:n].copy()
    return out


def qp_solve(G, b, double Cp, alpha0=None, double tol=1e-12, int64_t max_iter=100000,
             str method="active"):
    """Solve max_a b.a - 1/2 a'Ga s.t. a >= 0, sum a <= Cp with the solver's QP code (tests).

    method: "active" (qp_active, what the solver uses) or "smo" (qp_smo, its fallback).
    Returns (alpha, dict(iterations, smo_steps, violation, dual, grad)).
    """
    Garr = np.ascontiguousarray(G, dtype=np.float64)
    barr = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
    cdef int64_t k = barr.shape[0], ld = k + 1
    if Garr.shape != (k, k) or not np.all(np.isfinite(Garr)) or not np.all(np.isfinite(barr)):
        raise ValueError("G must be a finite k x k matrix for k = len(b)")
    if not (Cp > 0):
        raise ValueError("Cp must be > 0")
    alpha = np.zeros(ld)
    if alpha0 is not None:
        a0 = np.asarray(alpha0, dtype=np.float64).reshape(-1)
        if a0.shape[0] != k:
            raise ValueError("alpha0 must have len(b) entries")
        alpha[:k] = a0
    grad = np.zeros(ld)
    Gp = np.zeros((ld, ld))
    Gp[:k, :k] = Garr
    bp = np.zeros(ld)
    bp[:k] = barr
    H = np.zeros((ld + 1) * (ld + 1))
    F = np.zeros(ld + 1, dtype=np.int64)
    pv = np.zeros(ld + 1)
    yv = np.zeros(ld + 1)
    cdef double[:, ::1] Gv = Gp
    cdef double[::1] bv = bp, av = alpha, gv = grad, Hv = H, pvv = pv, yvv = yv
    cdef int64_t[::1] Fv = F
    cdef QPWork Q
    Q.H = &Hv[0]
    Q.F = &Fv[0]
    Q.p = &pvv[0]
    Q.y = &yvv[0]
    cdef double viol = 0.0
    cdef int64_t it = 0, smo = 0
    cdef bint active = method == "active"
    if method not in ("active", "smo"):
        raise ValueError("method must be 'active' or 'smo'")
    with nogil:
        if active:
            it = qp_active(&Gv[0, 0], ld, &bv[0], k, Cp, &av[0], &gv[0], &Q, tol, max_iter,
                           &viol, &smo)
        else:
            smo = qp_smo(&Gv[0, 0], ld, &bv[0], k, Cp, &av[0], &gv[0], tol, max_iter, &viol)
    a = alpha[:k].copy()
    dual = float(barr @ a - 0.5 * a @ Garr @ a)
    return a, dict(iterations=int(it), smo_steps=int(smo), violation=float(viol), dual=dual,
                   grad=grad[:k].copy())


cdef int _read_settings(PerfSettings* s, dict given) except -1:
    """Fill s once from perf_solve's settings keywords: exactly _SETTINGS, gap_guard
    optional (0)."""
    unknown = sorted(set(given) - set(_SETTINGS))
    if unknown:
        raise TypeError(f"unknown settings: {', '.join(unknown)}")
    kw = {"gap_guard": 0.0, **given}
    missing = [name for name in _SETTINGS if name not in kw]
    if missing:
        raise TypeError(f"missing settings: {', '.join(missing)}")
    s.Cp = kw["Cp"]
    s.eps = kw["eps"]
    s.gap_guard = kw["gap_guard"]
    s.max_constraints = kw["max_constraints"]
    s.max_iter = kw["max_iter"]
    s.inactive_iters = kw["inactive_iters"]
    s.soft_rows = kw["soft_rows"]
    s.qp_tol = kw["qp_tol"]
    s.qp_max_iter = kw["qp_max_iter"]
    s.n_threads = kw["n_threads"]
    return 0


cdef class _Store:
    """perf_core's constraint store: one numpy row of nw doubles per constraint the working
    set ever held at once (rows freed by removal are reused, so a removed constraint costs
    no memory), the table of row pointers the core permutes, G (ld x ld), b, alpha, the
    QP's gradient and the ages (all kept across NEED_ROOM), and the QP's work arrays.  The
    wrapper allocates it and grows it when the core returns NEED_ROOM (by a few rows: the
    rows already held are neither copied nor moved); the core never allocates."""
    cdef list rows                 # the row arrays, in allocation order (they own the memory)
    cdef object ptr, spare         # ld row addresses: the core's W.V (its order) and scratch
    cdef object G, b, alpha, grad, age, work
    cdef int64_t ld, nw
    cdef readonly int64_t k0       # constraints of the warm start

    def __cinit__(self, working_set, int64_t max_constraints, int64_t nw):
        """working_set: None or (V, G, b, alpha) of k0 <= max_constraints constraints, V a
        sequence of k0 rows of nw values (copied: the caller's rows stay as they are)."""
        self.k0 = 0
        if working_set is not None:
            V0, G0, b0, alpha0 = working_set
            self.k0 = np.shape(b0)[0]
        if self.k0 > max_constraints:
            raise ValueError("the warm-start working set is larger than max_constraints")
        k0 = self.k0
        self.nw = nw
        self.rows = []
        self.ptr = np.zeros(0, dtype=np.uintp)
        self.ld = 0
        self.G = np.zeros((0, 0))
        self.b = np.zeros(0)
        self.alpha = np.zeros(0)
        self.grad = np.zeros(0)
        self.age = np.zeros(0, dtype=np.int64)
        self.grow(0, max_constraints, min(max_constraints, max(16, k0 + 16)))
        if k0 > 0:
            for j in range(k0):
                self.rows[j][:nw] = V0[j]
            self.G[:k0, :k0] = G0
            self.b[:k0] = b0
            self.alpha[:k0] = alpha0

    cdef int attach(self, Cuts* W, QPWork* Q) except -1:
        """Point W and Q at the store and at fresh work arrays."""
        cdef int64_t ld = self.ld
        keep = np.zeros(ld, dtype=np.int64)
        H = np.zeros((ld + 1) * (ld + 1))
        F = np.zeros(ld + 1, dtype=np.int64)
        pw = np.zeros(ld + 1)
        yw = np.zeros(ld + 1)
        cdef double[:, ::1] Gv = self.G
        cdef double[::1] bv = self.b, av = self.alpha, gv = self.grad, Hv = H, pvv = pw, yvv = yw
        cdef int64_t[::1] agev = self.age, kv = keep, Fv = F
        cdef size_t[::1] pv = self.ptr, sv = self.spare
        W.V = <double**>&pv[0]
        W.spare = <double**>&sv[0]
        W.G = &Gv[0, 0]
        W.b = &bv[0]
        W.alpha = &av[0]
        W.grad = &gv[0]
        W.age = &agev[0]
        W.keep = &kv[0]
        W.ld = ld
        Q.H = &Hv[0]
        Q.F = &Fv[0]
        Q.p = &pvv[0]
        Q.y = &yvv[0]
        self.work = (keep, H, F, pw, yw)
        return 0

    def grow(self, int64_t k, int64_t max_constraints, new_ld=None):
        """Room for new_ld (default min(max_constraints, ld + max(16, ld / 4))) constraints,
        the first k kept: new rows are added behind the table's, no row is copied."""
        cdef int64_t old = self.ld, ld
        ld = min(max_constraints, old + max(16, old // 4)) if new_ld is None else new_ld
        cdef double[::1] r
        ptr = np.zeros(ld, dtype=np.uintp)
        ptr[:old] = self.ptr
        for j in range(old, ld):
            row = np.empty(max(self.nw, 1))    # written whole by the cut that takes it
            r = row
            ptr[j] = <size_t>&r[0]
            self.rows.append(row)
        G2 = np.zeros((ld, ld))
        G2[:k, :k] = self.G[:k, :k]
        self.ptr, self.spare, self.G, self.ld = ptr, np.zeros(ld, dtype=np.uintp), G2, ld
        self.b = np.concatenate([self.b, np.zeros(ld - old)])
        self.alpha = np.concatenate([self.alpha, np.zeros(ld - old)])
        self.grad = np.concatenate([self.grad, np.zeros(ld - old)])
        self.age = np.concatenate([self.age, np.zeros(ld - old, dtype=np.int64)])

    def working_set(self, int64_t k):
        """The first k constraints: dict(V, G, b, alpha), V the list of their rows (the
        store's own, not copies: the store is not used after this), the rest copies."""
        cdef double[::1] r
        by_address = {}
        for row in self.rows:
            r = row
            by_address[<size_t>&r[0]] = row
        V = [by_address[int(a)][:self.nw] for a in self.ptr[:k]]
        return dict(V=V, G=self.G[:k, :k].copy(), b=self.b[:k].copy(),
                    alpha=self.alpha[:k].copy())


# Constraints inactive for this many QP solutions go first once the store's rows would
# outgrow the data (the soft_rows setting), before it grows (at most --inactive-iters).
SOFT_AGE = 10


cdef void _start_run(Cuts* W, Result* res, int64_t k0, const PerfSettings* s) noexcept:
    """The counters of a run from k0 constraints, and the working set's limits."""
    res.n_iter = 0
    res.qp_iter = 0
    res.qp_smo = 0
    res.xi = 0.0
    res.xi_prime = 0.0
    res.qp_viol = 0.0
    res.dual = 0.0
    W.k = k0
    W.hard_cap = s.max_constraints
    W.max_age = s.inactive_iters
    W.soft_age = min(s.inactive_iters, SOFT_AGE)
    W.soft_rows = s.soft_rows
    W.n_removed = 0
    W.n_dropped = 0
    W.n_merges = 0
    W.resumed = 0


def perf_solve(DataView data, *, const double[::1] t, const double[::1] q, double scale,
               object queries, object w0, object working_set, object callback,
               object comm=None, object glob=None, **settings):
    """Run Algorithm 1 (queries None) or 2 (queries the ordinal layout, t unused) over the
    view's rows, from the working set (V, G, b, alpha) or, without one, from w0 (None:
    w = 0; only the first cut goes there).  t, q, scale and queries as most_violated's.

    settings, keywords filling PerfSettings: Cp (the paper's C), eps (line 9's stop,
    xi' <= xi + eps), gap_guard (default 0; when > 0 the stop also needs a relative
    duality gap (F(w) - dual) / F(w) <= gap_guard, the block comment), max_constraints,
    max_iter, inactive_iters, soft_rows (a full store of that many rows or more first
    removes the constraints inactive for SOFT_AGE solutions, before it grows), qp_tol,
    qp_max_iter (the working-set QP's tolerance and
    iteration cap) and n_threads (0: every OpenMP thread).

    Inputs are validated by the caller (linsvm/solvers/perf.py).
    comm: None (serial) or a linsvm.runtime.collective.Collective: the view's rows, t, q
    (and the query layout) are then this rank's block, possibly empty, scale and Cp
    global, the working set replicated; each cut is one allreduce of n_weights + 3
    doubles (x_c, b_c, xi' and a stop flag) and the working-set QP is solved alike on
    every rank.  glob (queries split over ranks): (q, level, perm, gptr, glevels,
    per_rank) of all positions in rank order; each cut then also gathers every rank's
    scores (see _distribute).  The scores returned are this rank's.
    Returns a dict: status (0 converged, 1 iteration cap), w, n_iter, qp_iter,
    qp_smo_steps, xi, xi_prime, qp_violation, dual, scores (at w), the
    working set V, G, b, alpha (k rows), n_removed, n_dropped, n_merges.
    """
    cdef PerfSettings s
    _read_settings(&s, settings)
    if s.max_constraints < 2:
        raise ValueError("max_constraints must be >= 2")
    cdef int64_t nw = data.n_weights, n = data.n
    cdef int status
    cdef CSR X
    scratch = data.kernel_csr(entry_threads(s.n_threads), 0, &X)
    cdef _OracleData od = _make_oracle(data.row_list(), n, t, q, scale,
                                       queries, 0 if glob is None else max(np.max(glob[5]), 1))
    if comm is not None:
        _distribute(od, comm, nw, glob)
    cdef _Store store = _Store(working_set, s.max_constraints, nw)
    w = np.zeros(max(nw, 1))
    xc = np.zeros(max(nw, 1))
    w0_arr = None if w0 is None else np.ascontiguousarray(w0, dtype=np.float64)
    if w0_arr is not None and w0_arr.shape[0] != nw:
        raise ValueError("w0 has the wrong length")
    cdef double[::1] wv = w, xcv = xc
    cdef double[::1] w0v
    cdef const double* w0p = NULL
    if w0_arr is not None and nw > 0:
        w0v = w0_arr
        w0p = &w0v[0]
    cdef Cuts W
    cdef QPWork Q
    cdef Result res
    _start_run(&W, &res, store.k0, &s)
    cdef void* cb = <void*>callback if callback is not None else NULL
    cdef Stop S
    stop_init(&S, data.nnz, data.n_rows)
    while True:
        store.attach(&W, &Q)
        with nogil:
            status = perf_core(&X, &od.O, &W, &Q, &s, &wv[0], w0p, &xcv[0], &res, cb, &S)
        stop_raise(&S)                      # Ctrl-C: the work arrays go as it unwinds
        if status != NEED_ROOM:
            break
        store.grow(W.k, s.max_constraints)  # the wrapper allocates; the core never does
    # the scores at w: the oracle's own buffer (no second row-length copy beside it) unless
    # it holds every rank's
    scores = od.s[:n] if od.s.shape[0] == max(n, 1) else od.s[:n].copy()
    return dict(status=status, w=w[:nw].copy(), n_iter=int(res.n_iter), qp_iter=int(res.qp_iter),
                qp_smo_steps=int(res.qp_smo), xi=float(res.xi), xi_prime=float(res.xi_prime),
                qp_violation=float(res.qp_viol), dual=float(res.dual), scores=scores,
                **store.working_set(W.k), n_removed=int(W.n_removed),
                n_dropped=int(W.n_dropped), n_merges=int(W.n_merges))
