"""k-fold cross-validation over grids of C (and p), with warm-started C paths.

The folds are linsvm.fit.folds's: stratified by class (whole queries with qid
data), a deterministic function of the labels and the seed, the serial ones on
any number of MPI ranks.  Along an ascending C grid each fold warm-starts from
its own previous solution (beta-seeding for the primal solvers, Keerthi & DeCoste
2005 Sec. 4.1 and Table 1; alpha-seeding for the dual ones, which hand their dual
variables over in memory); `warm_start=False` turns it off so the saving can be
measured.  The grid runs one point at a time, each reported as soon as all its
folds are done (a run stopped early has reported the points before); the folds of a
point run in parallel threads (the solver cores release the GIL);
every fold's computation is independent and its kernels run serially unless
`n_threads` is given, so the results are identical for any n_jobs; Ctrl-C stops
the folds running in the worker threads too (linsvm.runtime.interrupt).  With
parallel folds a fold's one-vs-rest columns run serially (no nested thread
pools).  The folds' warnings are merged: one warning per grid point and kind of
message, with the number of folds that gave it (not one per fold).
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import DataError, NoExamplesError, ParameterError
from ..problem.catalog import get_solver
from ..problem.csr import CSRBuffers
from ..problem.kinds import KINDS, METRICS, PERCENT_METRICS
from ..problem.labels import class_order
from ..runtime.collective import agreed, collective_of
from ..runtime.interrupt import Cancelled, run_in_threads
from ..runtime.threads import resolve_jobs
from .folds import make_folds
from .inputs import agree_inputs
from .reporting import collecting_warnings, group_warnings, report_warnings
from .training import train

__all__ = ["cross_validate", "CVResult", "CVPoint", "parse_grid", "make_folds", "METRICS",
           "PERCENT_METRICS", "UNCHANGED_NORM"]

UNCHANGED_NORM = 1e-15              # weights closer than this have not moved (LIBLINEAR's -C)


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


@dataclass
class CVPoint:
    """Cross-validation result at one grid point."""

    C: float
    p: float | None
    scores: list                      # metric per fold
    seconds: float                    # training time summed over folds
    n_iter: int                       # solver iterations summed over folds
    # with keep_predictions: every example's (this rank's) out-of-fold prediction
    predictions: object = None

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


def _score(kind, model, X, test_rows, y_test, metric, qid_test, coll=None):
    """(the fold's metric on its test rows of X, this rank's predictions of them); distributed
    (coll), those are this rank's test rows and the metric is that of all ranks' test
    rows: accuracy from the summed counts of correct predictions, the others on every
    rank's scores gathered in rank order (the serial order of the test rows)."""
    # the test rows read in place (a mapped file's too); an overflow on one rank: all
    scores = agreed(coll, model.decision_function, X, rows=test_rows)
    local = model.predict_from_scores(scores)
    if coll is not None:
        if metric == "accuracy":
            hits = coll.comm.allgather((int(np.count_nonzero(y_test == local)), y_test.shape[0]))
            n = sum(t for _, t in hits)
            return (sum(h for h, _ in hits) / n if n else float("nan")), local
        parts = coll.comm.allgather((y_test, scores, qid_test))
        y_test = np.concatenate([p[0] for p in parts])
        scores = np.concatenate([p[1] for p in parts])
        qid_test = None if qid_test is None else np.concatenate([p[2] for p in parts])
    pred = model.predict_from_scores(scores) if coll is not None else local
    return kind.metric_value(metric, model.classes_, y_test, pred, scores, qid_test), local


def _merge_fold_warnings(per_fold, C, p):
    """One warning per kind of message at a grid point, not one per fold: the
    first fold's message (its numbers), with the number of folds that gave the
    same message up to its numbers.  per_fold: each fold's (message,
    is_convergence) records."""
    where = f"C={C:g}" + (f" p={p:g}" if p is not None else "")
    return [(f"cross-validation at {where}, {len(folds)} of {len(per_fold)} folds: {message}"
             + (" (first such fold shown)" if len(folds) > 1 else ""), convergence)
            for (message, convergence), folds in group_warnings(per_fold)]


def _check_xy(X, y):
    """X as CSRBuffers and y as float64, one label per row."""
    Xb = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    y = np.asarray(y, dtype=np.float64)
    if y.shape != (Xb.n_rows,):
        raise DataError(f"y has {y.size} labels for {Xb.n_rows} examples")
    return Xb, y


def _check_labels(kind, Xb, y, coll, allow_many):
    """The kind's label rules (Kind.classes_from) on the whole data set, before any fold:
    a fold's training rows would meet them too, but name their first row at fault
    instead of the data's (linsvm.problem.labels.LabelError)."""
    labels, n_rows = None, Xb.n_rows
    if coll is not None:
        labels, n_rows = agree_inputs(coll, Xb, y, None, kind)
    elif n_rows == 0:
        raise NoExamplesError("no training examples")
    kind.classes_from(y, labels, n_rows, allow_many)


def _n_classes(y, coll):
    """The number of distinct labels of y (over all ranks when distributed)."""
    if coll is None:
        return class_order(y).shape[0]
    return np.unique(np.concatenate(coll.comm.allgather(np.unique(y)))).shape[0]


def _check_metric(kind, metric, y, coll):
    """(metric, higher is better) for a solver of `kind` (a Kind) on labels y: metric
    None is the kind's default; ParameterError when it does not apply."""
    if metric is None:
        metric = kind.metrics[0]
    if metric not in METRICS:
        raise ParameterError(f"unknown metric {metric!r} (choose from {', '.join(METRICS)})")
    applies = kind.metric_kind(_n_classes(y, coll) if kind.classifier else 0)
    if metric not in applies.metrics:
        raise ParameterError(f"metric {metric!r} does not apply to {applies.name} models")
    return metric, METRICS[metric]


def cross_validate(X, y, solver="mfn", Cs=(1.0,), ps=None, n_folds=5, seed=0, n_jobs=1,
                   warm_start=True, metric=None, qid=None, log=None, progress=None, comm=None,
                   keep_predictions=False, on_point=None, stop_unchanged=0, **train_options):
    """k-fold cross-validation of `solver` at every C in Cs (and p in ps for solvers
    with a `p` option).  Returns a CVResult; `train_options` go to linsvm.train
    (bias, tol, class_weight, sample_weight, allow_many_classes, solver options).
    Metrics: accuracy, prbep, roc, f1 (binary: of metrics.positive_class), mae, pairwise
    (ordinal), mse, scc, mae (regression); linsvm.problem.kinds says which apply to which
    solver.  keep_predictions: each CVPoint also holds every example's out-of-fold
    prediction (this rank's examples, in the order of y).  n_jobs: folds
    run on this many threads (0 or None: the free cores; linsvm.runtime.threads).
    progress(done, total): called (possibly from worker threads) after each
    trained model, total = folds x grid points.

    The grid is computed point by point, LIBLINEAR's order: the largest p first, along
    it C ascending, every fold of a point (in parallel) before the next point, each
    fold warm-started from its model at the point before (a p's path starts cold).  As
    each point is complete, log(line) receives its line and on_point(CVPoint) the point
    (both in the caller's thread), so that what is computed is reported before the grid
    ends; the result lists the points p ascending, C ascending.

    stop_unchanged = k > 0 (LIBLINEAR's -C rule): a C path ends after k points in a row
    at which no fold's weights moved (`_advanced`; a path's first point counts as
    unmoved, and a point whose models are all zero starts the count again).

    comm: an MPI communicator (mpi4py's MPI.COMM_WORLD) to cross-validate on several
    ranks: every rank calls cross_validate with the same arguments except X, y (and
    qid, sample_weight), its own block of the examples (possibly none), the data set
    being the union of the blocks in rank order.  Every fold is the serial fold of
    the union (make_folds: a row's fold does not depend on the number of ranks),
    each fold's model is trained on all ranks (linsvm.train(comm=comm); the solver
    must run distributed), its metric is that of all test rows, and every rank
    returns the same CVResult -- the serial one, for solvers that are exact over row
    blocks ("rows"); n_jobs is then 1 (the folds' collectives run in one order), and
    on_point is called on every rank alike."""
    info = get_solver(solver)
    coll = collective_of(comm)
    grid_option = "p" if "p" in info.options else "epsilon"     # svr's tube: LIBLINEAR's -p
    if ps is not None and grid_option not in info.options:
        raise ParameterError(f"solver {solver!r} has no p to search over")
    Xb, y = agreed(coll, _check_xy, X, y)
    kind = KINDS[info.kind]
    _check_labels(kind, Xb, y, coll, train_options.get("allow_many_classes", False))
    metric, higher = _check_metric(kind, metric, y, coll)
    Cs = sorted(float(c) for c in Cs)
    ps_list = [None] if ps is None else sorted(float(p) for p in ps)
    if "n_threads" in info.options and "n_threads" not in train_options:
        train_options["n_threads"] = 1          # identical results for any n_jobs
    strata = y if kind.stratified else np.zeros(y.shape[0])      # one stratum: random folds
    fold_of = make_folds(strata, n_folds, seed, qid if kind.uses_qid else None, comm=coll)
    jobs = 1 if coll is not None else resolve_jobs(n_jobs, n_folds, nnz=Xb.nnz)  # MPI: 1
    column_jobs = 1 if jobs > 1 else None       # parallel folds: one-vs-rest columns serial
    rows = [(np.flatnonzero(fold_of != f), np.flatnonzero(fold_of == f)) for f in range(n_folds)]
    total = n_folds * len(Cs) * len(ps_list)
    done = [0]
    lock = threading.Lock()
    cancelled = threading.Event()       # Ctrl-C, or an error in another fold: no further fold
    prev = [None] * n_folds             # each fold's model at the point before

    def run_fold(f, C, p):
        train_rows, test_rows = rows[f]
        opts = dict(train_options)
        if p is not None:
            opts[grid_option] = p
        if cancelled.is_set():
            raise Cancelled
        t0 = time.perf_counter()
        with collecting_warnings() as records:   # merged per grid point below
            model = train(Xb, y, solver=solver, C=C, seed=seed, rows=train_rows, qid=qid,
                          init=prev[f] if warm_start else None, n_jobs=column_jobs,
                          comm=comm if coll is not None else None, **opts)
        seconds = time.perf_counter() - t0
        q_test = None if qid is None else np.asarray(qid)[test_rows]
        value, pred = _score(kind, model, Xb, test_rows, y[test_rows], metric, q_test, coll)
        if progress is not None:
            with lock:
                done[0] += 1
                progress(done[0], total)
        return model, (value, seconds, model.stats.get("n_iter", 0), records,
                       (test_rows, pred) if keep_predictions else None)

    per_point = {}
    for p in reversed(ps_list):         # LIBLINEAR's order: the largest p first
        prev[:] = [None] * n_folds
        unmoved = 0                     # points in a row at which no fold's weights moved
        for C in Cs:
            if stop_unchanged and unmoved >= stop_unchanged:
                break
            outs = run_in_threads(lambda f, C=C, p=p: run_fold(f, C, p), n_folds, jobs,
                                  cancelled)
            unmoved = 0 if _advanced(prev, outs) else unmoved + 1
            prev[:] = [model for model, _ in outs]
            vals = [v for _, v in outs]
            pt = _point(C, p, vals, y.shape[0])
            per_point[(C, p)] = (pt, [v[3] for v in vals])
            if log is not None:
                log(_point_line(pt, metric))
            if on_point is not None:
                on_point(pt)
    return _result(per_point, metric, higher, Cs, ps_list)


def _advanced(prev, outs):
    """Whether a point moves its C path on (stop_unchanged): some fold's weights moved
    from its model at the point before (prev), or every fold's feature weights are all
    zero -- an L1-regularized model is exactly 0 below the C of its first non-zero
    weight, so its weights stay put there and then move (the rule alone ended `-s 5 -C`
    among those constant models, at the majority class's accuracy)."""
    models = [model for model, _ in outs]
    return (any(_moved(before, model) for before, model in zip(prev, models))
            or not any(np.any(model.coef_) for model in models))


def _moved(before, model):
    """Whether a fold's weights moved from its model at the point before (none: not):
    ||W_C - W_C'|| > UNCHANGED_NORM.  Once warm starts meet the stop at once, larger C
    give the same models, so a path of unmoved points can end (stop_unchanged)."""
    if before is None:
        return False
    a, b = before.weights, model.weights
    return a.shape != b.shape or float(np.linalg.norm(a - b)) > UNCHANGED_NORM


def _point(C, p, vals, n):
    """The CVPoint of the folds' results (run_fold's) at (C, p)."""
    return CVPoint(C=C, p=p, scores=[v[0] for v in vals], seconds=float(sum(v[1] for v in vals)),
                   n_iter=int(sum(v[2] for v in vals)), predictions=_out_of_fold(vals, n))


def _point_line(pt, metric):
    """The progress line of one grid point: `C=1 p=0.1: accuracy 84.1% +- 2.3%`."""
    k, unit = (100, "%") if metric in PERCENT_METRICS else (1, "")
    value = "n/a (undefined in a fold)" if np.isnan(pt.mean) else \
        f"{k * pt.mean:.6g}{unit} +- {k * pt.std:.3g}{unit}"
    return f"C={pt.C:g}" + (f" p={pt.p:g}" if pt.p is not None else "") + f": {metric} {value}"


def _out_of_fold(vals, n):
    """Every example's out-of-fold prediction from the folds' (test rows, predictions),
    or None when they were not kept."""
    if vals[0][4] is None:
        return None
    out = np.empty(n, dtype=np.result_type(*[v[4][1].dtype for v in vals]))
    for rows, pred in (v[4] for v in vals):
        out[rows] = pred
    return out


def _result(per_point, metric, higher, Cs, ps_list):
    """The CVResult of the grid's points (p ascending, C ascending), each point's
    warnings (per_point: (CVPoint, its folds' warning records)) reported, merged over
    its folds."""
    result = CVResult(metric=metric, higher_is_better=higher)
    for p in ps_list:
        for C in Cs:
            if (C, p) not in per_point:         # after a stop_unchanged stop
                continue
            pt, records = per_point[(C, p)]
            result.points.append(pt)
            report_warnings(_merge_fold_warnings(records, C, p), stacklevel=4)
    return result
