"""Every rank's rows on every rank: the serial finish of a distributed dual solve.

CoCoA+ (linsvm.solvers.cocoa) suits few weight columns; with many classes its rounds
move a dense classes x features W and gain little each (SECTOR, 105 classes: hundreds
of rounds of 46 MB).  When its rounds stop paying, sdm-cs and sdm-ww finish serially:
every rank receives every rank's rows, labels, costs and dual variables (one allgather
of pickled arrays, about 12 bytes per non-zero), and runs the serial solver from those
alphas (alpha-seeding) on the union of the blocks in rank order.  The serial program is
deterministic, so every rank ends with the same weights bit for bit without a
broadcast, and keeps its own rows' share of the final alphas as its state.

The price is memory: every rank must hold the whole data set once more.  `fits`
decides before anything is sent; where any rank cannot, the solve keeps its rounds and
says so.
"""
from __future__ import annotations

import numpy as np

from ..problem.csr import CSRBuffers, to_scipy
from ..problem.problem import Problem
from ..runtime.collective import gather_objects
from ..runtime.memory import available


def fits(problem, extra_bytes=0):
    """Whether every rank can hold every rank's rows (CSR at 12 bytes per non-zero plus
    a row pointer, label and cost per row) and `extra_bytes` more: one max allreduce."""
    nnz, rows = problem.comm.sum_scalars(_local_nnz(problem), float(problem.n_rows))
    need = 12.0 * nnz + 24.0 * rows + float(extra_bytes)
    room, _ = available()
    short = 0.0 if room is None or room >= 2.0 * need else 1.0
    return problem.comm.max(np.array([short]))[0] == 0.0


def total_nnz(problem):
    """The non-zeros of every rank's rows: one allreduce."""
    return problem.comm.sum_scalars(_local_nnz(problem))[0]


def _local_nnz(problem):
    X, rows = problem.X, problem.rows
    return float(X.indptr[rows + 1].sum() - X.indptr[rows].sum()) if rows.size else 0.0


def gather_rows(problem, extras):
    """The union of every rank's block as one serial Problem (multi-class, or binary when
    the problem is: rows in rank order), the offsets of each rank's rows in it, and the
    rank-ordered list of every rank's `extras` (any picklable per-rank object, e.g. its
    dual variables)."""
    X = problem.X
    binary = problem.codes is None
    local = to_scipy(X)[problem.rows] if problem.n_rows else None
    mine = (np.diff(local.indptr) if local is not None else np.zeros(0, dtype=np.int64),
            local.indices if local is not None else np.zeros(0, dtype=np.int32),
            local.data if local is not None else np.zeros(0),
            problem.t if binary else problem.codes, problem.cost, extras)
    payload = sum(a.nbytes for a in mine[:5]) + sum(getattr(a, "nbytes", 0) for a in extras)
    parts = gather_objects(problem.comm, mine, payload)
    counts = np.concatenate([p[0] for p in parts]).astype(np.int64)
    indptr = np.zeros(counts.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    indices = np.ascontiguousarray(np.concatenate([p[1] for p in parts]), dtype=np.int32)
    data = np.ascontiguousarray(np.concatenate([p[2] for p in parts]), dtype=np.float64)
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
