"""k-fold cross-validation over grids of C (and p), with warm-started C paths.

Folds are row lists into the one validated copy of X (no fold is copied for
training).  They are stratified by class for classification and ordinal data,
and grouped by query (a whole qid in one fold) for ranking data with qids;
the assignment is a deterministic function of the labels and the seed.

Along an ascending C grid each fold warm-starts from its own previous solution
(beta-seeding for the primal solvers, Keerthi & DeCoste 2005 Sec. 4.1 and
Table 1; alpha-seeding for the dual ones, which hand their dual variables over
in memory); `warm_start=False` turns it off so the saving can be measured.
Folds run in parallel threads (the solver cores release the GIL); every fold's
computation is independent and its kernels run serially unless `n_threads` is
given, so the results are identical for any n_jobs; Ctrl-C stops the folds
running in the worker threads too (linsvm.interrupt).  With parallel folds a
fold's one-vs-rest columns run serially (no nested thread pools).  The folds'
warnings are merged: one warning per grid point and kind of message, with the
number of folds that gave it (not one per fold).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from . import metrics
from .errors import DataError, ParameterError
from .collective import agreed, collective_of
from .interrupt import Cancelled, run_in_threads
from .problem import CSRBuffers
from .solvers import get_solver
from .train import _group_warnings, _report_warnings, class_order, collecting_warnings, train

METRICS = {
    # name: (kinds it applies to, higher is better)
    "accuracy": (("binary", "multiclass", "ordinal"), True),
    "prbep": (("binary",), True),
    "roc": (("binary",), True),
    "f1": (("binary",), True),
    "mae": (("ordinal",), False),
    "pairwise": (("ordinal",), True),
}
PERCENT_METRICS = ("accuracy", "prbep", "f1", "pairwise")   # fractions people read as percentages


def parse_grid(text, what="C"):
    """A grid from `a,b,c` (a list) or `lo:hi:step` (an arithmetic range, inclusive)."""
    text = str(text).strip()
    try:
        if ":" in text:
            parts = [float(v) for v in text.split(":")]
            if len(parts) != 3 or parts[2] <= 0 or parts[1] < parts[0]:
                raise ValueError
            lo, hi, step = parts
            n = int(np.floor((hi - lo) / step + 1e-9)) + 1
            return [round(lo + i * step, 12) for i in range(n)]
        values = [float(v) for v in text.split(",") if v.strip()]
        if not values:
            raise ValueError
        return values
    except ValueError:
        raise ParameterError(f"bad {what} grid {text!r}: use a,b,c or lo:hi:step") from None


def make_folds(y, n_folds, seed=0, qid=None, comm=None):
    """Fold number (0..n_folds-1) of every example.

    Without qid: stratified, each class's examples (in a seeded random order)
    dealt round-robin to the folds, the starting fold rotating between classes
    so fold sizes stay balanced.  With qid: whole queries dealt to folds in a
    seeded random order.

    comm: an MPI communicator (or linsvm.collective.Collective) when y (and qid)
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


@dataclass
class CVPoint:
    """Cross-validation result at one grid point."""

    C: float
    p: float | None
    scores: list                      # metric per fold
    seconds: float                    # training time summed over folds
    n_iter: int                       # solver iterations summed over folds

    @property
    def mean(self):
        return float(np.mean(self.scores))

    @property
    def std(self):
        return float(np.std(self.scores))


@dataclass
class CVResult:
    """All grid points, the metric, and the best point."""

    metric: str
    higher_is_better: bool
    points: list = field(default_factory=list)

    @property
    def best(self):
        """Best mean metric; ties go to the smaller C (then the smaller p); an
        undefined (nan) mean is never best unless every mean is."""
        key = (lambda pt: (np.isnan(pt.mean), -pt.mean if self.higher_is_better else pt.mean,
                           pt.C, pt.p or 0.0))
        return min(self.points, key=key)


def _score(model, X_test, y_test, metric, qid_test, coll=None):
    """The fold's metric on its test rows; distributed (coll), those are this rank's
    test rows and the metric is that of all ranks' test rows: accuracy from the
    summed counts of correct predictions, the others on every rank's scores
    gathered in rank order (the serial order of the test rows)."""
    scores = agreed(coll, model.decision_function, X_test)   # an overflow on one rank: all
    if coll is not None:
        if metric == "accuracy":
            pred = model.predict_from_scores(scores)
            hits = coll.comm.allgather((int(np.count_nonzero(y_test == pred)), y_test.shape[0]))
            n = sum(t for _, t in hits)
            return sum(h for h, _ in hits) / n if n else float("nan")
        parts = coll.comm.allgather((y_test, scores, qid_test))
        y_test = np.concatenate([p[0] for p in parts])
        scores = np.concatenate([p[1] for p in parts])
        qid_test = None if qid_test is None else np.concatenate([p[2] for p in parts])
    pred = model.predict_from_scores(scores)
    if metric == "accuracy":
        return metrics.accuracy(y_test, pred)
    if metric in ("prbep", "roc", "f1"):
        pos = metrics.positive_class(model.classes_)
        if metric == "f1":
            return metrics.precision_recall_f1(y_test, pred, pos)[2]
        s = metrics.positive_scores(model.classes_, scores, pos)
        return (metrics.prbep if metric == "prbep" else metrics.roc_area)(y_test == pos, s)
    if metric == "mae":
        return metrics.rank_mae(model.classes_, y_test, pred)
    return metrics.pairwise_accuracy(y_test, scores, qid_test)


def _merge_fold_warnings(per_fold, C, p):
    """One warning per kind of message at a grid point, not one per fold: the
    first fold's message (its numbers), with the number of folds that gave the
    same message up to its numbers.  per_fold: each fold's (message,
    is_convergence) records."""
    where = f"C={C:g}" + (f" p={p:g}" if p is not None else "")
    return [(f"cross-validation at {where}, {len(folds)} of {len(per_fold)} folds: {message}"
             + (" (first such fold shown)" if len(folds) > 1 else ""), convergence)
            for (message, convergence), folds in _group_warnings(per_fold)]


def _check_xy(X, y):
    """X as CSRBuffers and y as float64, one label per row."""
    Xb = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (Xb.n_rows,):
        raise DataError(f"y has {y.size} labels for {Xb.n_rows} examples")
    return Xb, y


def _n_classes(y, coll):
    """The number of distinct labels of y (over all ranks when distributed)."""
    if coll is None:
        return class_order(y).shape[0]
    return np.unique(np.concatenate(coll.comm.allgather(np.unique(y)))).shape[0]


def cross_validate(X, y, solver="mfn", Cs=(1.0,), ps=None, n_folds=5, seed=0, n_jobs=1,
                   warm_start=True, metric=None, qid=None, log=None, progress=None, comm=None,
                   **train_options):
    """k-fold cross-validation of `solver` at every C in Cs (and p in ps for solvers
    with a `p` option).  Returns a CVResult; `train_options` go to linsvm.train
    (bias, tol, class_weight, sample_weight, allow_many_classes, solver options).
    Metrics: accuracy, prbep, roc, f1 (binary: of metrics.positive_class), mae, pairwise (ordinal).
    progress(done, total): called (possibly from worker threads) after each
    trained model, total = folds x grid points.

    comm: an MPI communicator (mpi4py's MPI.COMM_WORLD) to cross-validate on several
    ranks: every rank calls cross_validate with the same arguments except X, y (and
    qid, sample_weight), its own block of the examples (possibly none), the data set
    being the union of the blocks in rank order.  Every fold is the serial fold of
    the union (make_folds: a row's fold does not depend on the number of ranks),
    each fold's model is trained on all ranks (linsvm.train(comm=comm); the solver
    must run distributed), its metric is that of all test rows, and every rank
    returns the same CVResult -- the serial one, for solvers that are exact over row
    blocks ("rows"); n_jobs is then 1 (the folds' collectives run in one order).
    None, or one rank: the serial program."""
    info = get_solver(solver)
    kind = info.kind
    coll = collective_of(comm)
    if ps is not None and "p" not in info.options:
        raise ParameterError(f"solver {solver!r} has no p to search over")
    Xb, y = agreed(coll, _check_xy, X, y)
    if metric is None:
        metric = "mae" if kind == "ordinal" else "accuracy"
    if metric not in METRICS:
        raise ParameterError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    kinds, higher = METRICS[metric]
    is_binary = kind in ("binary", "multiclass") and _n_classes(y, coll) == 2
    model_kind = "ordinal" if kind == "ordinal" else ("binary" if is_binary else "multiclass")
    if model_kind not in kinds:
        raise ParameterError(f"metric {metric!r} does not apply to {model_kind} models")
    Cs = sorted(float(c) for c in Cs)
    ps_list = [None] if ps is None else sorted(float(p) for p in ps)
    if "n_threads" in info.options and "n_threads" not in train_options:
        train_options["n_threads"] = 1          # identical results for any n_jobs
    fold_of = make_folds(y, n_folds, seed, qid if kind == "ordinal" else None, comm=coll)
    from scipy.sparse import csr_matrix
    Xcsr = csr_matrix((Xb.data, Xb.indices, Xb.indptr), shape=(Xb.n_rows, Xb.n_features))

    total = n_folds * len(Cs) * len(ps_list)
    done = [0]
    lock = threading.Lock()
    cancelled = threading.Event()       # Ctrl-C, or an error in another fold: no further grid point

    def run_fold(f):
        train_rows = np.flatnonzero(fold_of != f)
        test_rows = np.flatnonzero(fold_of == f)
        X_test, y_test = Xcsr[test_rows], y[test_rows]
        q_test = None if qid is None else np.asarray(qid)[test_rows]
        out = {}
        for p in ps_list:
            prev = None
            for C in Cs:
                opts = dict(train_options)
                if p is not None:
                    opts["p"] = p
                if cancelled.is_set():
                    raise Cancelled
                t0 = time.perf_counter()
                with collecting_warnings() as records:   # merged per grid point below
                    model = train(Xb, y, solver=solver, C=C, seed=seed, rows=train_rows, qid=qid,
                                  init=prev if warm_start else None, n_jobs=column_jobs,
                                  comm=comm if coll is not None else None, **opts)
                seconds = time.perf_counter() - t0
                prev = model
                out[(C, p)] = (_score(model, X_test, y_test, metric, q_test, coll), seconds,
                               model.stats.get("n_iter", 0), records)
                if progress is not None:
                    with lock:
                        done[0] += 1
                        progress(done[0], total)
        return out

    if n_jobs is None or n_jobs < 1:
        raise ParameterError(f"n_jobs must be >= 1, got {n_jobs}")
    if coll is not None:
        n_jobs = 1      # every rank must run the folds' collectives in one order
    column_jobs = 1 if n_jobs > 1 else None     # parallel folds: one-vs-rest columns serial
    per_fold = run_in_threads(run_fold, n_folds, n_jobs, cancelled)
    result = CVResult(metric=metric, higher_is_better=higher)
    for p in ps_list:
        for C in Cs:
            vals = [pf[(C, p)] for pf in per_fold]
            result.points.append(CVPoint(C=C, p=p, scores=[v[0] for v in vals],
                                         seconds=float(sum(v[1] for v in vals)),
                                         n_iter=int(sum(v[2] for v in vals))))
            _report_warnings(_merge_fold_warnings([v[3] for v in vals], C, p))
            if log is not None:
                pt = result.points[-1]
                k, unit = (100, "%") if metric in PERCENT_METRICS else (1, "")
                value = "n/a (undefined in a fold)" if np.isnan(pt.mean) else \
                    f"{k * pt.mean:.6g}{unit} +- {k * pt.std:.3g}{unit}"
                log(f"C={C:g}" + (f" p={p:g}" if p is not None else "") + f": {metric} {value}")
    return result
