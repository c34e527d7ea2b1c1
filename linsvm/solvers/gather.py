"""Every rank's rows on rank 0: the serial finish of a distributed dual solve.

CoCoA+ (linsvm.solvers.cocoa) suits few weight columns; with many classes its rounds
move a dense classes x features W and gain little each (SECTOR, 105 classes: hundreds
of rounds of 46 MB).  When its rounds stop paying, sdm-cs, sdm-ww and dcd's hinge
finish serially (`finish_on_root`): rank 0 receives every rank's rows, labels, costs
and dual variables (one gather of pickled arrays, about 12 bytes per non-zero), runs
the serial solver from those alphas (alpha-seeding) on the union of the blocks in rank
order, and sends every rank the result and its own rows' share of the final alphas
(its state).  The other ranks wait off the CPU meanwhile (Collective.await_root): with
more ranks than cores on a machine, ranks that all ran the same serial solve, or
waited for it by MPI's polling, would take rank 0's core from it.

The price is memory: rank 0 must hold the whole data set once more.  `fits` decides
before anything is sent; where it cannot, the solve keeps its rounds and says so.
"""
from __future__ import annotations

import numpy as np

from ..problem.csr import CSRBuffers, take_rows
from ..problem.problem import Problem
from ..problem.registry import FitResult
from ..runtime.collective import from_root, gather_objects
from ..runtime.memory import available


def fits(problem, extra_bytes=0):
    """Whether rank 0 can hold every rank's rows (CSR at 12 bytes per non-zero plus a
    row pointer, label and cost per row) and `extra_bytes` more, twice over: every
    rank gets rank 0's answer (one sum allreduce and one broadcast)."""
    coll = problem.comm
    nnz, rows = coll.sum_scalars(_local_nnz(problem), float(problem.n_rows))
    need = 12.0 * nnz + 24.0 * rows + float(extra_bytes)
    room, _ = available()
    short = np.array([0.0 if room is None or room >= 2.0 * need else 1.0])
    return coll.bcast(short)[0] == 0.0


def total_nnz(problem):
    """The non-zeros of every rank's rows: one allreduce."""
    return problem.comm.sum_scalars(_local_nnz(problem))[0]


def _local_nnz(problem):
    X, rows = problem.X, problem.rows
    return float(X.indptr[rows + 1].sum() - X.indptr[rows].sum()) if rows.size else 0.0


def finish_on_root(problem, extras, solve, share):
    """The serial finish (module notes) on rank 0; every rank calls it.

    extras: this rank's picklable per-rank state (its dual variables).  solve(whole,
    parts): the serial FitResult on `whole`, the union of the blocks (gather_rows),
    from `parts`, every rank's extras in rank order.  share(result, lo, hi): the part
    of result's state that belongs to the rows lo:hi of `whole`.  Returns (the
    FitResult without its state, this rank's share) on every rank.  A failure on rank
    0 ends the job (Collective.abort): the others are waiting for it."""
    coll = problem.comm
    gathered = gather_rows(problem, extras)
    result = shares = None
    if coll.rank == 0:
        whole, offsets, parts = gathered
        try:
            res = solve(whole, parts)
            shares = [share(res, int(offsets[r]), int(offsets[r + 1]))
                      for r in range(coll.size)]
        except BaseException as exc:        # noqa: BLE001 - the other ranks are waiting
            coll.abort(f"the serial finish failed: {type(exc).__name__}: {exc}")
        result = FitResult(res.weights, res.stats, res.thresholds, res.offset, res.warning,
                           res.converged)
        del gathered, whole, parts, res
    coll.await_root()
    return from_root(coll, result, shares)


def _block_rows(X, rows):
    """The rows `rows` of the CSR buffers X, in that order: (non-zeros per row, their
    column indices, their values in X's layout: None for a pattern)."""
    B = take_rows(X, rows)
    return np.diff(B.indptr), B.indices, B.data


def _values(parts, nnz):
    """The ranks' values concatenated in rank order: None when every rank's rows are a
    pattern, else float32 when every rank's are, else float64 (a pattern's ones made)."""
    values = [p[2] for p in parts]
    if all(v is None for v in values):
        return None
    dtype = np.float32 if all(v is not None and v.dtype == np.float32 for v in values) \
        else np.float64
    out = np.empty(nnz, dtype=dtype)
    at = 0
    for p, v in zip(parts, values):
        k = p[1].shape[0]
        out[at:at + k] = 1.0 if v is None else v
        at += k
    return out


def gather_rows(problem, extras):
    """On rank 0: the union of every rank's block as one serial Problem (multi-class, or
    binary when the problem is: rows in rank order), the offsets of each rank's rows in
    it, and the rank-ordered list of every rank's `extras` (any picklable per-rank
    object, e.g. its dual variables).  None on the other ranks."""
    X = problem.X
    binary = problem.codes is None
    mine = _block_rows(X, problem.rows) + (problem.t if binary else problem.codes,
                                           problem.cost, extras)
    payload = sum(getattr(a, "nbytes", 0) for a in mine[:5]) + \
        sum(getattr(a, "nbytes", 0) for a in extras)
    parts = gather_objects(problem.comm, mine, payload, root=0)
    if parts is None:
        return None
    counts = np.concatenate([p[0] for p in parts]).astype(np.int64)
    indptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.ascontiguousarray(np.concatenate([p[1] for p in parts]), dtype=np.int32)
    data = _values(parts, indices.shape[0])
    # the buffers are the ranks' own checked rows, concatenated: trusted as they are
    Xall = CSRBuffers.trusted(indptr, indices, data, X.n_features, X.n_features)
    labels = np.concatenate([p[3] for p in parts])
    cost = np.ascontiguousarray(np.concatenate([p[4] for p in parts]), dtype=np.float64)
    offsets = np.zeros(len(parts) + 1, dtype=np.int64)
    np.cumsum([p[3].shape[0] for p in parts], out=offsets[1:])
    rows = np.arange(labels.shape[0], dtype=np.int64)
    if binary:
        whole = Problem.binary(Xall, rows, np.ascontiguousarray(labels, dtype=np.float64), cost,
                               problem.bias)
    else:
        whole = Problem(Xall, rows, cost, problem.bias,
                        codes=np.ascontiguousarray(labels, dtype=np.int32),
                        n_classes=problem.n_classes)
    return whole, offsets, [p[5] for p in parts]
