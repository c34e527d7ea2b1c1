"""SVMperf: 1-slack cutting-plane training (Joachims, KDD 2006, Algorithms 1 and 2).

`perf` (kind binary) minimizes linsvm's L1-SVM objective, LIBLINEAR -s 3 for the
same -c and -B,

    F(w) = 1/2 ||w||^2 + C sum_k q_k max(0, 1 - t_k w.x_k)            (q_k: cost factors)

through the paper's structural form OP2 with one shared slack,

    min 1/2 ||w||^2 + Cp xi   s.t.  w.x_c >= b_c - xi  for all c in {0,1}^n,
    x_c = (1/n) sum_k c_k q_k t_k x_k,  b_c = (1/n) sum_k c_k q_k,

so the paper's C is Cp = C n (OP1 divides the slacks by n; Theorem 1:
xi = (1/n) sum_k q_k xi_k).  `perf-ord` (kind ordinal) minimizes Herbrich's
pairwise ordinal-regression SVM (OP4; on two levels its loss is 1 - ROC area)

    F(w) = 1/2 ||w||^2 + (C n / m) sum_{(i,j) in P} q_i q_j max(0, 1 - w.(x_i - x_j)),

P = pairs with level_i > level_j (within one query when qids are given, the
svm_rank convention), m = sum_P q_i q_j and n = sum_k q_k (with unit costs:
the number of examples and of pairs; integer costs act as repeated examples),
through OP5 with Cp = C n.

Both run the cutting-plane loop of csrc/_perf.pyx over the problem's data view: solve
the dual of the working-set QP (OP3 on W) by a small dense active-set solver (SMO as
its fallback), warm started from the previous alphas, the Gram matrix growing by one
row per iteration; find the
most violated constraint at the new w in one pass over the data (Alg. 2: sort
the scores of each query and count pairs with a Fenwick tree over the levels,
O(n log n) per iteration); stop when xi' <= xi + eps (line 9), eps = -e,
default 0.001 as in the paper.  xi' is the weighted average hinge loss (per
example, resp. per pair) at w, xi the one the working set certifies.

What a run certifies (Theorem 3/5): (w, xi + eps) is feasible for OP2/OP5 and
the working-set objective 1/2||w||^2 + Cp xi (`objective_ws`) is not above the
optimum; stats["objective"] is the true objective F(w) = 1/2||w||^2 + Cp xi',
and F(w) - F* <= F(w) - dual_objective <= Cp (eps + QP tolerance).

Thresholds of `perf-ord` (OP5 learns only w): boundary r (between levels r-1
and r) is the 1-D threshold on the training scores with the least weighted
number of training examples on the wrong side, placed in the middle of the
score gap of its minimizing range; the thresholds are then made ascending by
a running maximum.  When the minimizers are already ascending (the usual
case) they minimize the training mean absolute rank error, which counts the
crossed boundaries.  With qids the rule uses all training scores together.
A bias feature (-B) cancels in every pair difference, so `perf-ord` trains
without it and stores a bias weight of 0; the thresholds carry the offset.

Warm starts: a model trained by the same solver in this process hands over
its working set (constraint vectors, G, b, alphas); if the data, labels,
costs, qids and bias are unchanged (checked by a digest) the constraints are
reused, valid for any C, with the alphas scaled by C_new / C_old.  Any other
start vector places only the first cut (Algorithm 1 starts at w = 0).
`--seed` is accepted and ignored: the algorithm makes no random choice.

Distributed (SolverInfo.distributed = "rows"): on P MPI ranks each rank holds a block
of the examples; n, m, sum q_k and so Cp are those of the union.  The most violated
constraint is a sum over examples: each rank forms its part of x_c, b_c and xi'
and one allreduce of n_weights + 3 doubles (with a stop flag) gives the cut to
every rank; the working-set QP is then solved on every rank alike (the same input
gives the same answer), so the ranks hold the same w throughout.  perf-ord needs
the scores sorted within each query: when every qid lies on one rank (checked
collectively from the ranks' qid sets once) each rank counts its own queries and
the cut's allreduce is all; when a query is split across ranks, or without qids
(one ranking of all examples) on more than one rank, every rank gathers all
ranks' scores each cut (an allgather of max-block-size doubles per rank: O(n)
doubles received per rank and iteration) and repeats the O(n log n) count over all
examples; the codes, costs and qids are gathered once.  The thresholds use all
ranks' final scores (one gather).  Warm starts compare a digest of all ranks' data.
"""
from __future__ import annotations

import hashlib
from typing import NamedTuple

import numpy as np

from .. import _perf
from .._data import DataView
from .._kernels import vdot
from ..errors import DataError, ParameterError
from ..problem.registry import FitResult
from ..runtime.collective import gather_objects
from ..runtime.threads import resolve_threads
from .gaps import GAP_GUARD, relative_gap

_STATUS = {0: "converged", 1: "iteration cap"}


def _digest(*arrays):
    """A digest of the training problem: a working set is reused only on the same one."""
    h = hashlib.blake2b(digest_size=20)
    for a in arrays:
        if isinstance(a, np.ndarray):
            a = np.ascontiguousarray(a)
            h.update(f"{a.dtype.str}{a.shape}".encode())
            h.update(memoryview(a).cast("B"))
        else:
            h.update(repr(a).encode())
        h.update(b"|")
    return h.hexdigest()


def _start_vector(w0, nw):
    """A finite start vector of length nw, or None for w = 0."""
    if w0 is None:
        return None
    w0 = np.array(w0, dtype=np.float64).reshape(-1)
    if w0.shape[0] != nw or not np.all(np.isfinite(w0)):
        raise ParameterError(f"the start vector must be finite with {nw} entries")
    return w0 if np.any(w0 != 0.0) else None


def _global_digest(coll, digest):
    """The digest of the whole distributed problem: every rank's own, in rank order
    (the same on every rank, so that all ranks take a warm start or none)."""
    return digest if coll is None else _digest(*gather_objects(coll, digest))


def _reuse_state(state, digest, Cp, max_constraints, log, name):
    """The working set of a previous run on the same problem, its alphas rescaled to Cp
    (and reduced to max_constraints), or None."""
    if not isinstance(state, dict) or state.get("solver") != name:
        return None
    if state.get("digest") != digest:
        if log is not None:
            log(f"{name}: the warm-start working set is from other data; starting a new one")
        return None
    # V: the constraints' rows (as the core returned them), read in place, not stacked
    V = list(state["V"])
    G, b, alpha = (np.array(state[key], dtype=np.float64) for key in ("G", "b", "alpha"))
    alpha *= Cp / state["Cp"]
    if b.shape[0] > max_constraints:            # drop the inactive ones, then merge
        on = alpha > 0
        V = [v for v, keep in zip(V, on) if keep]
        G, b, alpha = G[np.ix_(on, on)], b[on], alpha[on]
        if b.shape[0] > max_constraints:
            A = alpha.sum()
            v = sum(a * row for a, row in zip(alpha, V)) / A
            V, b, alpha = [v], np.array([alpha @ b / A]), np.array([A])
            G = np.array([[v @ v]])
    if log is not None:
        log(f"{name}: warm start from {b.shape[0]} constraints (alphas scaled by "
            f"{Cp / state['Cp']:.6g})")
    return V, G, b, alpha


def _store_rows(view, nnz):
    """How many constraint rows (n_weights doubles each) the working set holds before it lets
    go of the long-inactive ones rather than grow: as many as the bytes of the data's nnz
    non-zeros (the whole problem's, so the same on every rank), at least 32."""
    b = view.buffers
    per_entry = b.indices.itemsize + (0 if b.data is None else b.data.itemsize)
    return max(32, int(nnz * per_entry) // (8 * max(view.n_weights, 1)))


# Cap on the working-set QP's iterations per cutting-plane step (not a user option).
_QP_MAX_ITER = 100000


class _Solve(NamedTuple):
    """One cutting-plane solve as _run hands it to the core (_perf.perf_solve)."""

    name: str                   # "perf" or "perf-ord"
    view: DataView              # the rows (perf-ord: without the bias feature)
    t: np.ndarray | None        # perf: the labels +-1; perf-ord: None
    q: np.ndarray               # the cost factors
    scale: float                # 1/n (perf) or 1/m (perf-ord)
    Cp: float                   # the paper's C
    tol: float                  # -e
    queries: tuple | None = None    # perf-ord: (level, perm, gptr, glevels), _query_layout
    comm: object = None         # a Collective (a distributed solve) or None
    glob: tuple | None = None   # perf-ord with queries split over ranks: _ordinal_layout
    nnz: int = 0                # the non-zeros of the whole problem (all ranks')


def _run(solve, w0, state, digest, log, opts):
    """Call the compiled loop on `solve` (a _Solve) and turn its result into (FitResult,
    the core's result)."""
    name, Cp, tol = solve.name, solve.Cp, solve.tol
    nw_core = solve.view.n_weights
    ws = _reuse_state(state, digest, Cp, opts["max_constraints"], log, name)
    if ws is not None:
        w0 = None
    trace = []

    def callback(it, xi, xi_p, k, obj_ws, dual):
        trace.append((it, xi, xi_p, obj_ws))
        if log is not None:
            log(f"{name} iter {it:4d}  xi' {xi_p:.8g}  xi {xi:.8g}  constraints {k:4d}  "
                f"objective(W) {obj_ws:.10g}")

    res = _perf.perf_solve(
        solve.view, t=solve.t, q=solve.q, scale=solve.scale, queries=solve.queries, w0=w0,
        working_set=ws, callback=callback, comm=solve.comm, glob=solve.glob, Cp=Cp, eps=tol,
        gap_guard=GAP_GUARD, max_constraints=opts["max_constraints"], max_iter=opts["max_iter"],
        inactive_iters=opts["inactive_iters"], soft_rows=_store_rows(solve.view, solve.nnz),
        qp_tol=opts["qp_tol"], qp_max_iter=_QP_MAX_ITER,
        n_threads=resolve_threads(opts["n_threads"], solve.view.nnz))
    w = res["w"]
    assert w.shape[0] == nw_core
    ww = vdot(w, w)
    xi, xi_p = res["xi"], res["xi_prime"]
    stats = {
        "objective": 0.5 * ww + Cp * xi_p,
        "objective_ws": 0.5 * ww + Cp * xi,
        "dual_objective": res["dual"],
        "xi": xi,
        "xi_prime": xi_p,
        "C_paper": Cp,
        "n_iter": res["n_iter"],
        "n_constraints": int(res["b"].shape[0]),
        "n_active_constraints": int(np.count_nonzero(res["alpha"] > 0)),
        "qp_iter": res["qp_iter"],
        "qp_smo_steps": res["qp_smo_steps"],
        "n_removed_inactive": res["n_removed"],
        "qp_violation": res["qp_violation"],
        "status": _STATUS[res["status"]],
        "trace": trace,
    }
    warnings = []
    stats["rel_gap"] = relative_gap(stats["objective"], res["dual"])
    if res["status"] == 1:
        warnings.append(
            f"{name} stopped at the iteration cap (max_iter={opts['max_iter']}) with xi' = {xi_p:.6g} "
            f"(xi + eps = {xi + tol:.6g}) and a relative duality gap of {stats['rel_gap']:.3g} "
            f"(the stop needs <= {GAP_GUARD:g}): raise --max-iter or loosen -e")
    if res["n_dropped"] or res["n_merges"]:
        warnings.append(
            f"{name} reached max_constraints={opts['max_constraints']}: "
            f"{res['n_dropped']} inactive constraints dropped, {res['n_merges']} times all active "
            "ones merged into one; the answer keeps its eps guarantee but convergence can slow: "
            "raise --max-constraints (each constraint holds a dense vector of "
            f"{nw_core} doubles)")
    if res["qp_violation"] > 0.1 * tol:
        warnings.append(
            f"{name}: the last working-set QP stopped at KKT violation {res['qp_violation']:.3g} "
            f"(> eps/10): xi and the lower bound dual_objective are approximate")
    if log is not None:
        log(f"{name}: {res['n_iter']} iterations, xi = {xi:.10g}, xi' = {xi_p:.10g} "
            f"(eps {tol:g}), {stats['n_constraints']} constraints "
            f"({stats['n_active_constraints']} active), objective(W) = {stats['objective_ws']:.10g}, "
            f"objective = {stats['objective']:.10g}, {_STATUS[res['status']]}")
    state = {"solver": name, "digest": digest, "Cp": Cp, "V": res["V"], "G": res["G"],
             "b": res["b"], "alpha": res["alpha"]}
    return FitResult(w, stats, warning="; ".join(warnings) or None,
                     converged=not (res["status"] == 1 or res["qp_violation"] > 0.1 * tol),
                     state=state), res


def fit_perf(problem, params, start, state, log):
    """Train a binary L1-SVM by Algorithm 1 (1-slack cutting planes on OP2).

    See linsvm.solvers for the contract and this module's docstring for the
    mapping Cp = C n.  stats: objective F(beta) (linsvm's scaling), objective_ws
    (1/2||w||^2 + Cp xi, the paper's relaxed objective, <= the optimum),
    dual_objective (<= the optimum), xi, xi_prime, n_iter, n_constraints,
    n_active_constraints, qp_iter, qp_smo_steps, n_removed_inactive, qp_violation,
    status and trace; the state is the working set, for warm starts.
    """
    X, rows, t, cost, bias = problem.X, problem.rows, problem.t, problem.cost, problem.bias
    coll = problem.comm
    n, nnz = problem.n_rows, problem.view.nnz
    if coll is not None:                        # the examples of all ranks
        n, nnz = (int(v) for v in coll.sum_scalars(float(n), float(nnz)))
    nw = problem.n_weights
    w0 = _start_vector(start, nw)
    Cp = params.C * n
    digest = _digest("perf", X.indptr, X.indices, X.data, X.n_features, float(bias), rows, t, cost)
    solve = _Solve("perf", problem.view, t, cost, 1.0 / n, Cp, params.tol, comm=coll, nnz=nnz)
    result, _ = _run(solve, w0, state, _global_digest(coll, digest), log, params.options)
    return result


def _query_layout(codes, qid, n):
    """Queries as the core wants them: perm (positions grouped by query, stable),
    gptr (group boundaries in perm), glevels (levels per group) and the level of
    each position within its group (0..glevels-1, in the order of the ranks)."""
    if qid is None:
        g = np.zeros(n, dtype=np.int64)
    else:
        _, g = np.unique(qid, return_inverse=True)
        g = g.astype(np.int64).reshape(-1)
    if n == 0:                                  # a distributed rank without examples
        return (np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64),
                np.zeros(0, dtype=np.int32), np.zeros(0, dtype=np.int32), g)
    n_groups = int(g.max()) + 1
    perm = np.argsort(g, kind="stable").astype(np.int64)
    gptr = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(np.bincount(g, minlength=n_groups), out=gptr[1:])
    R = int(codes.max()) + 1
    keys, local = np.unique(g * R + codes.astype(np.int64), return_inverse=True)
    key_group = keys // R
    first = np.searchsorted(key_group, np.arange(n_groups))
    level = (local.reshape(-1) - first[g]).astype(np.int32)
    glevels = np.bincount(key_group, minlength=n_groups).astype(np.int32)
    return perm, gptr, glevels, level, g


def _weighted_pairs(codes, cost, g, n_levels):
    """m = sum over pairs (same group, different level) of cost_i cost_j, exactly
    for integer costs: sum_r W_r * (sum_{r' < r} W_r') per group."""
    if g.shape[0] == 0:
        return 0.0
    n_groups = int(g.max()) + 1
    Wgr = np.zeros((n_groups, n_levels))
    np.add.at(Wgr, (g, codes), cost)
    below = np.cumsum(Wgr, axis=1) - Wgr
    return float(np.sum(Wgr * below))


def thresholds_from_scores(scores, codes, cost, n_levels):
    """The perf-ord threshold rule (module docstring): per boundary r = 1..n_levels-1,
    the cut of the sorted training scores with the least weighted number of
    examples on the wrong side (codes < r above it or codes >= r below it), in
    the middle of the score gap of the first minimizing run of cuts (+-1 beyond
    the extreme scores); then a running maximum makes them ascending.  The weighted
    counts per cut are sums over the sorted examples in a few arrays reused for every
    boundary (the rule runs beside the model's data: its memory is per row)."""
    order = np.argsort(scores, kind="stable")
    s = scores[order]
    c = codes[order]
    q = cost[order]
    del order
    n = s.shape[0]
    # cut p puts sorted examples 0..p-1 below the threshold; only cuts between distinct scores
    valid = np.ones(n + 1, dtype=bool)
    valid[1:n] = s[1:] > s[:-1]

    def lo(p):                                      # score just below cut p
        return s[p - 1] if p > 0 else s[0] - 1.0

    def hi(p):                                      # score just above cut p
        return s[p] if p < n else s[-1] + 1.0

    err, below, part = np.empty(n + 1), np.empty(n + 1), np.empty(n)
    out = np.empty(n_levels - 1)
    for r in range(1, n_levels):
        part.fill(0.0)
        np.copyto(part, q, where=c >= r)
        err[0] = 0.0
        np.cumsum(part, out=err[1:])                # below cut p but >= r
        part.fill(0.0)
        np.copyto(part, q, where=c < r)
        below[0] = 0.0
        np.cumsum(part, out=below[1:])
        np.subtract(np.sum(part), below, out=below)     # above cut p but < r
        err += below
        err[~valid] = np.inf
        best = np.min(err)
        p1 = int(np.flatnonzero(err == best)[0])
        # the run of minimizing cuts from p1 (cuts between tied scores do not break it)
        stop = np.flatnonzero((err[p1:] != best) & valid[p1:])
        p2 = p1 + (int(stop[0]) if stop.size else n + 1 - p1) - 1
        p2 = p1 + int(np.flatnonzero(valid[p1:p2 + 1])[-1])
        theta = lo(p1) + 0.5 * (hi(p2) - lo(p1))
        out[r - 1] = theta if theta < hi(p2) else lo(p1)      # strictly below the score above
    return np.maximum.accumulate(out)


def fit_perf_ord(problem, params, start, state, log):
    """Train a pairwise ordinal-regression / ranking SVM by Algorithm 2 on OP5.

    See linsvm.solvers for the contract and this module's docstring for the
    objective, the mapping Cp = C sum_k q_k, qids and the threshold rule.
    problem.qid[k] is the query of example rows[k].  The weights include a bias
    weight of 0 when bias > 0; stats as for fit_perf plus n_pairs (m) and n_queries.
    """
    X, rows, codes, cost, bias = problem.X, problem.rows, problem.codes, problem.cost, problem.bias
    n, n_levels, qid = problem.n_rows, problem.n_classes, problem.qid
    coll = problem.comm
    perm, gptr, glevels, level, g = _query_layout(codes, qid, n)
    glob, nnz = None, problem.view.nnz
    if coll is None:
        m = _weighted_pairs(codes, cost, g, n_levels)
        n_eff = float(np.sum(cost))
        n_queries = int(gptr.shape[0] - 1)
    else:
        glob, m, n_eff, n_queries, everyone, nnz = _ordinal_layout(coll, codes, cost, qid, g,
                                                                   gptr, n_levels, nnz)
    del g                                       # the query of each row: not the solve's
    if not m > 0:
        raise DataError("no pair of examples with different ranks"
                        + (" within a query" if qid is not None else "")
                        + " (and positive weight): nothing to rank")
    Cp = params.C * n_eff
    nw = problem.n_weights
    nf = X.n_features
    w0 = None
    if start is not None:
        s0 = np.asarray(start[0], dtype=np.float64).reshape(-1)
        if s0.shape[0] not in (nf, nw):
            raise ParameterError(f"the start vector must have {nw} entries, got {s0.shape[0]}")
        w0 = _start_vector(s0[:nf], nf)        # the bias weight cancels in pairs
    digest = _digest("perf-ord", X.indptr, X.indices, X.data, X.n_features, rows, codes, cost,
                     qid if qid is not None else "noqid")
    # a bias feature cancels in every pair difference: the core's view has none
    view = problem.view if bias <= 0 else DataView(X, -1.0, rows)
    solve = _Solve("perf-ord", view, None, cost, 1.0 / m, Cp, params.tol,
                   queries=(level, perm, gptr, glevels), comm=coll, glob=glob, nnz=nnz)
    result, res = _run(solve, w0, state, _global_digest(coll, digest), log, params.options)
    if coll is None:
        result.thresholds = thresholds_from_scores(res["scores"], codes, cost, n_levels)
    else:                                       # on all training scores, in rank order
        scores = np.concatenate(gather_objects(coll, res["scores"]))
        if everyone is None:
            everyone = [np.concatenate(a) for a in zip(*gather_objects(coll, (codes, cost)))]
        result.thresholds = thresholds_from_scores(scores, everyone[0], everyone[1], n_levels)
    result.stats["n_pairs"] = m
    result.stats["n_queries"] = n_queries
    if bias > 0:
        result.weights = np.concatenate([result.weights, [0.0]])
    return result


def _ordinal_layout(coll, codes, cost, qid, g, gptr, n_levels, nnz):
    """How a distributed perf-ord finds its cuts: (glob, m, n_eff, n_queries, everyone, the
    non-zeros of all ranks from this rank's nnz).

    When every query lies whole on one rank (checked collectively from each rank's
    set of qids; without qids, when at most one rank holds examples) each rank counts
    its own queries' pairs: glob is None and the only per-cut communication is the
    allreduce of the cut.  Otherwise (a query split over ranks, or no qids: one
    global ranking) every rank gathers the codes, costs and qids of all ranks once
    (O(n) values) and, per cut, every rank's scores -- an allgather of
    max-rank-size doubles from each rank, so O(n) doubles received per rank and
    iteration, and the O(n log n) sort of all scores repeated on every rank; glob
    is then the layout of all positions in rank order (_perf.perf_solve) and
    everyone = (codes, cost) of all positions.  Memory: every rank then also holds
    about 100 bytes per example of all ranks (scores, gathered scores, sort items,
    c+/c-, the layout), so this mode needs the per-example arrays of all ranks to
    fit one host (the rows themselves stay distributed).  m, n_eff = sum of costs
    and the number of queries are those of the union of the blocks."""
    n = codes.shape[0]
    local = np.unique(qid) if qid is not None else (np.zeros(min(n, 1), dtype=np.int64))
    sets = gather_objects(coll, (qid is not None, local))
    if len({has for has, s in sets if s.shape[0]}) > 1:        # ranks with examples
        raise DataError("some MPI ranks have qids and others not")
    seen = np.concatenate([s for _, s in sets])
    if np.unique(seen).shape[0] == seen.shape[0]:           # every query on one rank
        m_local = _weighted_pairs(codes, cost, g, n_levels)
        m, n_eff, n_queries, nnz = coll.sum_scalars(m_local, float(np.sum(cost)),
                                                    float(gptr.shape[0] - 1), float(nnz))
        return None, m, n_eff, int(n_queries), None, int(nnz)
    parts = gather_objects(coll, (codes, cost, qid, nnz))
    per_rank = np.array([p[0].shape[0] for p in parts], dtype=np.int64)
    codes_all = np.concatenate([p[0] for p in parts])
    cost_all = np.ascontiguousarray(np.concatenate([p[1] for p in parts]), dtype=np.float64)
    qid_all = None
    if any(p[2] is not None for p in parts):
        qid_all = np.concatenate([np.zeros(0, dtype=np.int64) if p[2] is None else p[2]
                                  for p in parts])
    perm_a, gptr_a, glevels_a, level_a, g_a = _query_layout(codes_all, qid_all, codes_all.shape[0])
    m = _weighted_pairs(codes_all, cost_all, g_a, n_levels)
    glob = (cost_all, level_a, perm_a, gptr_a, glevels_a, per_rank)
    return (glob, m, float(np.sum(cost_all)), int(gptr_a.shape[0] - 1), (codes_all, cost_all),
            sum(p[3] for p in parts))
