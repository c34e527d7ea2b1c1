"""Folds: which examples each fold holds out, and one runner for every fold loop.

Folds are row lists into the one validated copy of X (no fold is copied for
training).  They are stratified by class for classification and ordinal data,
and grouped by query (a whole qid in one fold) for ranking data with qids; the
assignment is a deterministic function of the labels and the seed, and on
several MPI ranks it is the serial assignment of the union of the ranks' rows.
`run_folds` trains and evaluates every fold, in parallel threads or not, for
cross-validation (linsvm.fit.cv) and for the out-of-fold decision values of
probability calibration (linsvm.fit.calibration).
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError, ParameterError
from ..runtime.collective import collective_of
from ..runtime.interrupt import run_in_threads

__all__ = ["make_folds", "run_folds"]


def make_folds(y, n_folds, seed=0, qid=None, comm=None):
    """Fold number (0..n_folds-1) of every example.

    Without qid: stratified, each class's examples (in a seeded random order)
    dealt round-robin to the folds, the starting fold rotating between classes
    so fold sizes stay balanced.  With qid: whole queries dealt to folds in a
    seeded random order.

    comm: an MPI communicator (or linsvm.runtime.collective.Collective) when y (and qid)
    are this rank's block of the examples, the union of the blocks in rank order
    being the data set; the folds returned are this rank's rows' folds in the
    serial assignment of the union, so they do not depend on the number of ranks.
    The ranks exchange only per-class counts (or the distinct qids); each draws
    the same permutation of every class's rows (transient memory of 8 bytes per
    example of the class, on every rank) and keeps the part for its own rows.
    """
    y = np.asarray(y)
    if n_folds < 2:
        raise ParameterError(f"the number of folds must be >= 2, got {n_folds}")
    coll = collective_of(comm)
    gather = (lambda obj: [obj]) if coll is None else coll.comm.allgather
    rng = np.random.default_rng(seed)
    fold = np.empty(y.shape[0], dtype=np.int64)
    if qid is not None:
        qid = np.asarray(qid)
        queries = np.unique(np.concatenate(gather(np.unique(qid))))
        if queries.shape[0] < n_folds:
            raise DataError(f"{queries.shape[0]} queries cannot fill {n_folds} folds")
        order = rng.permutation(queries.shape[0])
        of_query = np.empty(queries.shape[0], dtype=np.int64)
        of_query[order] = np.arange(queries.shape[0]) % n_folds
        fold[:] = of_query[np.searchsorted(queries, qid)]
        return fold
    local_labels, local_counts = np.unique(y, return_counts=True)
    reports = gather((local_labels.astype(np.float64), local_counts.astype(np.int64)))
    labels = np.unique(np.concatenate([lab for lab, _ in reports]))
    counts = np.zeros((len(reports), labels.shape[0]), dtype=np.int64)   # rank x class
    for r, (lab, cnt) in enumerate(reports):
        counts[r, np.searchsorted(labels, lab)] = cnt
    n = int(counts.sum())
    if n < n_folds:
        raise DataError(f"{n} examples cannot fill {n_folds} folds")
    rank = 0 if coll is None else coll.rank
    start = 0
    for j, label in enumerate(labels):
        n_class = int(counts[:, j].sum())
        off = int(counts[:rank, j].sum())           # the class's rows on lower ranks
        idx = np.flatnonzero(y == label)            # its rows here: class positions off + i
        perm = rng.permutation(n_class)             # the serial deal: position k gets perm[k]
        mine = np.flatnonzero((perm >= off) & (perm < off + idx.shape[0]))
        fold[idx[perm[mine] - off]] = (start + mine) % n_folds
        start = (start + n_class) % n_folds
    return fold


def run_folds(fold_of, n_folds, run_fold, jobs=1, cancel=None):
    """[run_fold(f, train_rows, test_rows) for every fold f], the rows being positions
    with fold_of != f and == f, on `jobs` threads (linsvm.runtime.interrupt
    .run_in_threads: results in fold order whatever `jobs`; the first error stops the
    others, Ctrl-C stops the solves running in the workers; `cancel`, a
    threading.Event, is set then for run_fold to check between its solves)."""
    def one(f):
        return run_fold(f, np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f))
    return run_in_threads(one, n_folds, jobs, cancel)
