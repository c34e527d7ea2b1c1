"""`linsvm.train`: labels, classes, weights and warm starts around the solvers.

Every solver minimizes its objective in linsvm's one scaling (DESIGN.md): -c is
LIBLINEAR's C and -B LIBLINEAR's bias feature.  This module

* orders the classes as LIBLINEAR does: by first appearance, except that the
  label set {-1, +1} puts +1 first; for two classes the positive class
  (t = +1, decision > 0) is classes[0];
* runs one-vs-rest over a binary solver when there are more than two classes
  (one weight column per class; in column j the examples of class j get the
  class weight of j and all others cost 1, as LIBLINEAR does);
* forms each example's cost factor = sample weight x class weight;
* turns a warm start (a Model or a weight array) into per-column start points;
* trains the one-vs-rest columns on n_jobs threads (_one_vs_rest: the same
  weights for every n_jobs; one kernel thread per column unless n_threads is
  given);
* emits the solvers' warnings (linsvm.ConvergenceWarning when a solve did not
  certify its accuracy, else linsvm.LinsvmWarning), or hands them to
  collecting_warnings() (the command line, cross-validation folds).
"""
from __future__ import annotations

import contextlib
import contextvars
import math
import os
import re
import time
from dataclasses import replace
from types import MappingProxyType

import numpy as np

from ._kernels import binary_targets, scan_labels
from .errors import DataError, LinsvmError, ParameterError
from .errors import warn as _warn
from .collective import agreed, collective_of
from .interrupt import run_in_threads
from .memory import check_solve
from .model import Model
from .problem import CSRBuffers, Problem, check_positive, n_weights
from .solvers import get_solver, make_params


def class_order(y, labels=None):
    """Return the class labels of y in LIBLINEAR's order (see module docstring).
    labels: y's distinct values in order of first appearance, if already known."""
    classes = labels
    if classes is None and isinstance(y, np.ndarray) and y.dtype == np.float64 and y.ndim == 1:
        classes, _ = scan_labels(np.ascontiguousarray(y))   # one pass; None: many labels
    if classes is None:
        classes = class_order_raw(y)
    if classes.shape[0] == 2 and set(classes.tolist()) == {-1.0, 1.0}:
        classes = np.array([1.0, -1.0])
    return classes


def _check_labels(y, n_rows):
    """y as contiguous float64, one finite label per row of X, and its distinct
    labels in order of first appearance (None when there are many), from one scan."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise DataError(f"y has shape {y.shape}, expected ({n_rows},): one label per row of X")
    labels, bad = scan_labels(y)
    if bad >= 0:
        raise DataError(f"label of example {bad + 1} is not finite")
    return y, labels


# A classifier's labels must look like classes (rule stated in `linsvm-train --help`):
MAX_CLASSES_FEW_ROWS = 100      # more classes than this ...
MIN_ROWS_PER_CLASS = 10         # ... with fewer training rows per class on average: not classes


def check_class_like(classes, n_rows):
    """Refuse labels that are not class-like for a classifier (DataError): a label
    that is not an integer (real-valued targets: regression data), or more than
    MAX_CLASSES_FEW_ROWS classes with fewer than MIN_ROWS_PER_CLASS training rows
    per class on average.  train(allow_many_classes=True) skips this check."""
    values = classes.tolist()                  # a handful: plain floats are cheapest
    frac = [v for v in values if not v.is_integer()]
    if frac:
        raise DataError(f"label {frac[0]:.17g} is not an integer ({classes.shape[0]} distinct labels): "
                        "this looks like regression data, not classes; to train one class per "
                        "distinct value anyway, allow it (--allow-many-classes)")
    k = classes.shape[0]
    if k > MAX_CLASSES_FEW_ROWS and n_rows < MIN_ROWS_PER_CLASS * k:
        raise DataError(f"{k} distinct labels among {n_rows} training examples (fewer than "
                        f"{MIN_ROWS_PER_CLASS} per class): these do not look like classes; to train "
                        "one class per distinct value anyway, allow it (--allow-many-classes)")


def balanced_class_weight(y, classes, coll=None):
    """scikit-learn's "balanced" rule: weight of class j = n_samples / (n_classes * n_j),
    n_j its number of examples in y (over every rank's y with a Collective coll); a dict
    label -> weight in the order of classes."""
    labels, n_of = np.unique(y, return_counts=True)
    count = dict(zip(labels.tolist(), n_of.tolist()))     # a rank may lack some classes
    counts = np.array([count.get(c, 0) for c in classes.tolist()], dtype=np.float64)
    if coll is not None:
        coll.sum(counts)
    n, k = counts.sum(), classes.shape[0]
    return {float(c): float(n / (k * m)) for c, m in zip(classes.tolist(), counts.tolist())}


def _unit_costs(n):
    """n cost factors of 1 (np.empty + fill: cheaper than np.ones on the small-problem path)."""
    out = np.empty(n)
    out.fill(1.0)
    return out


def _cost_factors(y, classes, sample_weight, class_weight):
    """Per-example base cost (sample weights) and per-class weights (class_weight)."""
    m = y.shape[0]
    if sample_weight is None:
        base = _unit_costs(m)
    else:
        base = np.asarray(sample_weight, dtype=np.float64)
        if base.ndim != 1 or base.shape[0] != m:
            raise DataError(f"sample_weight has {base.size} values for {m} examples")
        if not np.all(np.isfinite(base)) or np.any(base < 0):
            raise DataError(f"sample weight of example {int(np.flatnonzero(~(base >= 0) | ~np.isfinite(base))[0]) + 1} is not a finite number >= 0")
    cw = _unit_costs(classes.shape[0])
    for label, weight in (class_weight or {}).items():
        hit = np.flatnonzero(classes == float(label))
        if hit.size == 0:
            raise ParameterError(f"class weight given for label {label:g}, which is not in the training data")
        cw[hit[0]] = check_positive(f"weight of class {label:g}", weight)
    return base, cw


def _align_weights(W0, n_features0, bias0, n_features, bias):
    """Weights of another model (rows: its features, then its bias row if bias0 > 0)
    re-laid for this problem: shared features copied, the others 0, the bias
    weight rescaled so that bias * w_bias is unchanged."""
    W = np.zeros((n_weights(n_features, bias), W0.shape[1]))
    k = min(n_features, n_features0)
    W[:k] = W0[:k]
    if bias > 0 and bias0 > 0:
        W[n_features] = W0[n_features0] * bias0 / bias
    return W


def _merge_stats(col_stats, seconds):
    """The model's statistics from those of its solves (one per weight column):
    objective, n_iter, cg_iter and n_active summed, kkt_violation the largest;
    a single solve also keeps every other number it reports."""
    if len(col_stats) == 1:
        st = col_stats[0]
        stats = {"objective": float(st["objective"]), "n_iter": int(st["n_iter"]), "seconds": seconds}
        for key, value in st.items():
            if key not in stats and not key.startswith("_") and isinstance(value, (int, float)) \
                    and not isinstance(value, bool):
                stats[key] = float(value) if key == "kkt_violation" else value
        return stats
    stats = {"objective": float(sum(s["objective"] for s in col_stats)),
             "n_iter": int(sum(s["n_iter"] for s in col_stats)),
             "seconds": seconds}
    for key in ("cg_iter", "n_active"):
        if all(key in s for s in col_stats):
            stats[key] = int(sum(s[key] for s in col_stats))
    if all("kkt_violation" in s for s in col_stats):
        stats["kkt_violation"] = float(max(s["kkt_violation"] for s in col_stats))
    return stats


def _warm_starts(init, classes, n_features, bias, n_columns):
    """Per-column start vectors from a Model or an array, or Nones."""
    if init is None:
        return [None] * n_columns
    nw = n_weights(n_features, bias)
    if isinstance(init, Model):
        if init.kind == "ordinal" or init.weights.shape[1] != n_columns:
            raise ParameterError("the initial model has a different number of weight columns")
        if not np.array_equal(np.sort(init.classes_), np.sort(classes)):
            raise ParameterError("the initial model was trained on different class labels")
        # reorder columns to this problem's class order
        if n_columns > 1:
            order = [int(np.flatnonzero(init.classes_ == c)[0]) for c in classes]
            W0 = init.weights[:, order]
        else:
            W0 = init.weights if init.classes_[0] == classes[0] else -init.weights
        W = _align_weights(W0, init.n_features_, init.bias, n_features, bias)
        return [W[:, j].copy() for j in range(n_columns)]
    W = np.asarray(init, dtype=np.float64)
    if W.ndim == 1:
        W = W[:, None]
    if W.shape != (nw, n_columns) or not np.all(np.isfinite(W)):
        raise ParameterError(f"initial weights must be a finite array of shape ({nw}, {n_columns}), got {W.shape}")
    return [W[:, j].copy() for j in range(n_columns)]


# ---------------------------------------------------------------- warnings

_SINK = contextvars.ContextVar("linsvm_warning_sink", default=None)


@contextlib.contextmanager
def collecting_warnings():
    """Within this block (in this thread or task), train() and cross_validate()
    append their warnings to the yielded list as (message, is_convergence) pairs
    instead of emitting them: the command line prints them as one line each,
    and cross-validation folds hand theirs to the main thread, which merges
    them.  A worker thread starts with no sink (it emits, unless it opens one)."""
    sink = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


def _warning_records(results):
    """Per solve (weight column), its warnings as (message, is_convergence) pairs: a
    FitResult's warning is about its accuracy when it did not converge."""
    return [[(r.warning, not r.converged)] if r.warning is not None else [] for r in results]


def _group_warnings(per_unit):
    """Group the records of several units (columns, folds) by message up to its
    numbers: [((first message, is_convergence), [units that gave it])], in order
    of first appearance."""
    groups = {}
    for unit, records in enumerate(per_unit):
        for message, convergence in records:
            key = re.sub(r"[-+]?\d[\d.eE+-]*", "#", message)
            group = groups.setdefault(key, [(message, convergence), []])
            if not group[1] or group[1][-1] != unit:
                group[1].append(unit)
    return list(groups.values())


def _merge_column_warnings(per_column, classes):
    """One warning per kind of message of a one-vs-rest run, not one per column
    (105 columns capped would be 105 lines): the first column's message, with
    the number of columns and their classes."""
    out = []
    for (message, convergence), cols in _group_warnings(per_column):
        if len(cols) == 1:
            out.append((f"class {classes[cols[0]]:g} vs rest: {message}", convergence))
            continue
        names = ", ".join(f"{classes[j]:g}" for j in cols[:8]) + (", ..." if len(cols) > 8 else "")
        out.append((f"{len(cols)} of {len(per_column)} one-vs-rest columns (classes {names}): "
                    f"{message} (shown for class {classes[cols[0]]:g})", convergence))
    return out


def _report_warnings(records):
    """Emit (message, is_convergence) records with warnings.warn, attributed to the
    caller of train(), or append them to the sink of collecting_warnings()."""
    sink = _SINK.get()
    if sink is not None:
        sink.extend(records)
        return
    for message, convergence in records:
        _warn(message, convergence, stacklevel=3)


# ---------------------------------------------------------------- parallel one-vs-rest

def _resolve_jobs(n_jobs, n_columns, inner_threads=1):
    """Threads for the columns of a one-vs-rest run: n_jobs if given (> 0), else
    the free cores: os.cpu_count() less the 1-minute load average (rounded to the
    nearest core), at least 1, divided by the kernel threads each column uses
    (inner_threads; 1 unless --n-threads was given).  Never more than the columns."""
    if n_jobs is not None and not isinstance(n_jobs, (int, np.integer)) or (n_jobs or 0) < 0:
        raise ParameterError(f"n_jobs must be an integer >= 0 (0: the free cores), got {n_jobs!r}")
    if n_jobs:
        return int(min(n_jobs, n_columns))
    cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    free = max(1, int(math.floor(cpus - load + 0.5)))
    return int(max(1, min(n_columns, free // max(1, int(inner_threads or 1)))))


def _one_vs_rest(fit_column, classes, W, jobs, log):
    """Run fit_column(j, log_j) -> (beta, result) for every column j on `jobs`
    threads (linsvm.interrupt.run_in_threads); fills W[:, j] and returns the results
    in column order.

    Each column's solve reads only shared inputs and its own start, state and
    seed, and its kernels run with a fixed thread count (train() sets one kernel
    thread per column unless --n-threads is given), so the weights are the same
    bit for bit whatever `jobs` is and whichever thread runs a column.  Progress
    lines of a column are prefixed `class L: ` when jobs > 1 (one line each,
    interleaved between columns); with one job each column is announced by
    `class L vs rest`.  Ctrl-C stops dealing columns and stops the running solves.
    """
    def column_log(j):
        if log is None:
            return None
        if jobs <= 1:
            return log
        prefix = f"class {classes[j]:g}: "
        return lambda line: log(prefix + line)

    def run(j):
        if log is not None and jobs <= 1:
            log(f"class {classes[j]:g} vs rest")
        beta, result = fit_column(j, column_log(j))
        W[:, j] = beta
        return result

    return run_in_threads(run, len(classes), jobs)


def train(X, y, solver="mfn", C=1.0, bias=1.0, tol=None, class_weight=None, sample_weight=None,
          init=None, seed=0, log=None, qid=None, rows=None, allow_many_classes=False,
          n_jobs=None, comm=None, **solver_options):
    """Train a linear SVM and return a `Model`.

    X: scipy sparse matrix or 2-D array (n_samples x n_features), or a
    linsvm.problem.CSRBuffers of one (validated once, for repeated calls); y: labels
    (for ordinal solvers: integer ranks, ordered by value).
    solver: a name from linsvm.solvers.SOLVERS; C > 0: cost (LIBLINEAR's -c);
    bias: value of the constant feature appended to every example (> 0), or
    <= 0 for none (LIBLINEAR's -B; its weight is regularized like the others);
    tol: the solver's stopping tolerance (-e; None: the solver's default);
    class_weight: {label: weight} scaling C for that class (-w), or "balanced":
    n_samples / (n_classes * n_j) for class j (scikit-learn's rule, -w balanced);
    sample_weight: one weight >= 0 per example scaling its loss (-W);
    init: a Model or a weight array (n_weights x n_columns) to warm-start from
    (a Model trained by the same solver in this process also hands over its
    solver state, e.g. dual variables, for alpha-seeding);
    seed: for solvers with random choices; log: a function taking progress
    lines (None: silent); qid: query ids for ranking solvers (pairs only
    within a query); rows: train on these rows of X only (y, sample_weight
    and qid stay full-length; cross-validation folds use this to avoid copying
    X); allow_many_classes: skip the check that a classifier's labels look like
    classes (integers, and not more than 100 classes with under 10 rows each on
    average; see check_class_like); n_jobs: threads for the columns of a one-vs-rest
    run (None or 0: the free cores, see _resolve_jobs; the weights are the same for
    every value); comm: an MPI communicator (mpi4py's MPI.COMM_WORLD, or a
    linsvm.collective.Collective) to train on several ranks at once: every rank calls
    train with the same arguments except X, y (and sample_weight, qid, rows), which
    are its own block of the examples (possibly none), and every rank gets the same
    model -- that of the union of the blocks, in rank order (see _agree_inputs); a
    communicator of one rank, or None, is the serial program; solver_options: see
    `linsvm-train --help`.

    A solve that stops without certifying its stated accuracy (iteration cap,
    stall) emits a linsvm.ConvergenceWarning naming the solver, the measure
    reached and the tolerance; other notes (a warm start ignored) a
    linsvm.LinsvmWarning.  The messages are also in model.warnings.
    """
    info = get_solver(solver)
    if info.kind not in ("binary", "multiclass", "ordinal"):
        raise ParameterError(f"solver {info.name!r} ({info.kind}) is not yet available from "
                             f"train() or the command line; call linsvm.solvers.get_solver("
                             f"{info.name!r}).fit on a Problem")
    coll = collective_of(comm)
    if coll is not None:
        refuse_serial_only(info)
        info = replace(info, fit=_ending_the_job_on_error(info.fit, coll, info.name))
    params = make_params(info, C=C, tol=tol, seed=seed, options=solver_options)
    bias = float(bias)
    if not math.isfinite(bias):
        raise ParameterError(f"bias must be finite, got {bias!r}")
    bias = bias if bias > 0 else -1.0
    if n_jobs is not None:
        _resolve_jobs(n_jobs, 1)        # checks it
    Xb, y, labels, qid, rows, sample_weight = agreed(
        coll, _local_inputs, X, y, qid, rows, sample_weight, coll is not None)
    n_total = Xb.n_rows                 # the rows of X (all ranks': class_like's measure)
    if coll is not None:
        labels, n_total = _agree_inputs(coll, Xb, y, labels, info.kind)
    if info.kind == "ordinal":
        classes = np.unique(y) if labels is None else np.sort(labels)
        if not np.all(classes == np.round(classes)):
            raise DataError("ordinal labels must be integer ranks")
    else:
        classes = class_order(y, labels)
        if not allow_many_classes:          # on all rows of X: a CV fold decides as the whole set
            check_class_like(classes, n_total)
    if classes.shape[0] < 2:
        raise DataError(f"only one class (label {classes[0]:g}) in the training data; need at least two")
    balanced = isinstance(class_weight, str)
    if balanced:
        if class_weight != "balanced":
            raise ParameterError(f"class_weight must be a dict or 'balanced', got {class_weight!r}")
        class_weight = balanced_class_weight(y, classes, coll)
    unweighted = sample_weight is None and not class_weight
    if unweighted and info.kind == "binary":    # no class-weight table to build
        base, cw = _unit_costs(y.shape[0]), None
    else:
        base, cw = _cost_factors(y, classes, sample_weight, class_weight)
    state = getattr(init, "solver_state_", None) if getattr(init, "solver", None) == info.name else None
    nw = n_weights(Xb.n_features, bias)
    agreed(coll, check_solve, info, Xb, rows.shape[0], nw, classes.shape[0], params.options,
           log)                         # before allocating
    t0 = time.perf_counter()
    if info.kind == "binary":
        W, results = _fit_binary(info, params, Xb, rows, y, classes, base, cw, bias, init, state,
                                 n_jobs, log, coll)
        kind = "binary" if W.shape[1] == 1 else "multiclass"
    else:
        codes = np.searchsorted(classes, y).astype(np.int32) if info.kind == "ordinal" \
            else _class_codes(y, classes)
        # rows and costs checked above, codes in range by construction: no second scan
        problem = Problem(Xb, rows, base * cw[codes], bias, codes=codes,
                          n_classes=classes.shape[0], qid=qid if info.kind == "ordinal" else None,
                          comm=coll)
        start = _start_of(info.kind, init, classes, Xb.n_features, bias)
        res = info.fit(problem, params, start, state, log)
        W = np.asarray(res.weights, dtype=np.float64).reshape(nw, -1)
        results = [res]
        kind = info.kind
    seconds = time.perf_counter() - t0

    col_stats = [dict(r.stats, warning=r.warning) if r.warning is not None else r.stats
                 for r in results]
    stats = _merge_stats(col_stats, seconds)
    if coll is not None:
        stats.update(coll.stats())
    per_column = _warning_records(results)
    if kind == "multiclass" and info.kind == "binary":       # one-vs-rest
        model_warnings = [f"class {classes[j]:g} vs rest: {msg}"
                          for j, recs in enumerate(per_column) for msg, _ in recs]
        records = _merge_column_warnings(per_column, classes)
    else:
        records = [rec for recs in per_column for rec in recs]
        model_warnings = [msg for msg, _ in records]
    model_params = {"C": params.C, "bias": bias, "tol": params.tol, "seed": params.seed,
                    "loss": info.loss}
    model_params.update((k, v) for k, v in params.options.items()
                        if coll is not None or k not in info.distributed_options)
    if class_weight:
        model_params["class_weight"] = ("balanced " if balanced else "") + \
            " ".join(f"{float(k):g}:{float(v):g}" for k, v in class_weight.items())
    model = Model._from_training(solver=info.name, classes=classes, weights=W, bias=bias,
                                 params=model_params, stats=stats, kind=kind,
                                 thresholds=results[0].thresholds if kind == "ordinal" else None)
    model.warnings = model_warnings     # every column's own message
    model.column_stats = col_stats
    states = [r.state for r in results]
    model.solver_state_ = states if info.kind == "binary" else states[0]
    _report_warnings(records)
    return model


def _ending_the_job_on_error(fit, coll, name):
    """`fit` for a distributed solve: an exception on this rank (other than Ctrl-C, which
    the launcher brings to every rank) ends the whole MPI job (Collective.abort), since
    the other ranks may be waiting for this one in a collective it will never reach."""
    def fit_or_abort(problem, params, start, state, log):
        try:
            return fit(problem, params, start, state, log)
        except KeyboardInterrupt:
            raise
        except Exception as exc:       # noqa: BLE001 - any fault on one rank ends the job
            what = str(exc) if isinstance(exc, LinsvmError) else f"{type(exc).__name__}: {exc}"
            coll.abort(f"{name} failed: {what}")
    return fit_or_abort


def refuse_serial_only(info):
    """The one-line ParameterError for a solver that does not run on several MPI ranks
    (SolverInfo.distributed None), naming what to use; nothing for the others."""
    if info.distributed is None:
        raise ParameterError(f"solver {info.name} does not run on several MPI ranks; "
                             f"{info.serial_only or 'use mfn (or run it without mpiexec)'}")


def _local_inputs(X, y, qid, rows, sample_weight, distributed):
    """train()'s checks of its array arguments: (Xb, y, labels, qid, rows, sample_weight),
    y checked against X and labels its distinct values in first-appearance order (None
    when many, or for a subset of rows), rows and the per-row arrays taken to the subset.
    A distributed rank may hold no rows."""
    Xb = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    if Xb.n_rows == 0 and not distributed:
        raise DataError("no training examples")
    y, labels = _check_labels(y, Xb.n_rows)
    if qid is not None:
        qid = np.asarray(qid)
        if qid.shape != (Xb.n_rows,):
            raise DataError(f"qid has {qid.size} values for {Xb.n_rows} examples")
        qid = qid.astype(np.int64)
    if rows is None:
        rows = np.arange(Xb.n_rows, dtype=np.int64)
    else:
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        if rows.ndim != 1 or (rows.size == 0 and not distributed) or \
                (rows.size and (rows.min() < 0 or rows.max() >= Xb.n_rows)):
            raise ParameterError(f"rows must be a non-empty list of row numbers in [0, {Xb.n_rows})")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (Xb.n_rows,):
                raise DataError(f"sample_weight has {sample_weight.size} values for {Xb.n_rows} examples")
            sample_weight = sample_weight[rows]
        y = y[rows]
        labels = None                   # those of the full y; the subset may lack some
        qid = None if qid is None else qid[rows]
    return Xb, y, labels, qid, rows, sample_weight


def _agree_inputs(coll, Xb, y, labels, kind):
    """What the ranks of a distributed train() must agree on, in one allgather: the
    width of X (the same on every rank, else a DataError on all), some training
    examples over all ranks, and the distinct labels of the union of the blocks in
    rank order -- its first-appearance order (the serial order of classes) for
    classifiers, the sorted union for ordinal solvers.  Returns (labels, total rows
    of X over the ranks)."""
    if labels is None:
        labels = class_order_raw(y)
    reports = coll.comm.allgather((Xb.n_features, Xb.n_rows, y.shape[0], labels.tolist()))
    widths = [r[0] for r in reports]
    if len(set(widths)) > 1:
        raise DataError("the ranks' X differ in width: " + ", ".join(
            f"rank {r}: {w} columns" for r, w in enumerate(widths)))
    if sum(r[2] for r in reports) == 0:
        raise DataError("no training examples on any MPI rank")
    merged = {}
    for r in reports:
        for v in r[3]:
            merged.setdefault(v, None)
    return np.array(list(merged), dtype=np.float64), sum(r[1] for r in reports)


def class_order_raw(y):
    """y's distinct values in order of first appearance (class_order without LIBLINEAR's
    {-1, +1} rule)."""
    values, first = np.unique(y, return_index=True)
    return values[np.argsort(first, kind="stable")]


def _class_codes(y, classes):
    """int32 index of each label of y in classes."""
    codes = np.empty(y.shape[0], dtype=np.int32)
    for j, label in enumerate(classes):
        codes[y == label] = j
    return codes


def _start_of(kind, init, classes, n_features, bias):
    """The warm start of a multi-class (n_weights x n_classes) or ordinal ((w0,
    thresholds0)) solve from `init` (a Model, or for multi-class a weight array), or None."""
    if init is None:
        return None
    if kind == "multiclass":
        return np.column_stack(_warm_starts(init, classes, n_features, bias, classes.shape[0]))
    if not isinstance(init, Model) or init.kind != "ordinal":
        raise ParameterError("an ordinal solver warm-starts only from an ordinal model")
    if not np.array_equal(init.classes_, classes):
        raise ParameterError("the initial model was trained on different ranks")
    w0 = _align_weights(init.weights, init.n_features_, init.bias, n_features, bias)
    return (w0[:, 0], np.asarray(init.thresholds_, dtype=np.float64))


def _fit_binary(info, params, Xb, rows, y, classes, base, cw, bias, init, state, n_jobs, log,
                coll=None):
    """A binary solver on two classes (one column: classes[0] is t = +1) or one-vs-rest
    on more (column j: class j against the rest, on _one_vs_rest's threads).  Returns
    (W, the FitResults in column order)."""
    n_columns = 1 if classes.shape[0] == 2 else classes.shape[0]
    starts = _warm_starts(init, classes, Xb.n_features, bias, n_columns)
    states = state if isinstance(state, list) and len(state) == n_columns else [None] * n_columns
    if n_columns > 1 and "n_threads" in info.options and not params["n_threads"]:
        # one-vs-rest: columns are the parallel unit (_one_vs_rest), one kernel thread each
        params = replace(params, options=MappingProxyType(dict(params.options, n_threads=1)))
    base_problem = Problem(Xb, rows, base, bias, comm=coll)   # rows, costs checked (train())

    def fit_column(j, log_j):
        t = binary_targets(y, classes[j])
        if cw is None:
            cost = base                     # all ones
        elif n_columns == 1:
            cost = base * np.where(t > 0, cw[0], cw[1])
        else:
            cost = base * np.where(t > 0, cw[j], 1.0)
        res = info.fit(base_problem.binary_column(t, cost), params, starts[j], states[j], log_j)
        return res.weights, res

    nw = n_weights(Xb.n_features, bias)
    if n_columns == 1:
        beta, res = fit_column(0, log)
        W = np.ascontiguousarray(beta, dtype=np.float64)   # handed over (linsvm.solvers), not copied
        return (W if W.base is None else W.copy()).reshape(nw, 1), [res]
    W = np.empty((nw, n_columns))
    jobs = _resolve_jobs(n_jobs, n_columns, params["n_threads"] if "n_threads" in info.options else 1)
    if coll is not None:
        jobs = 1            # every rank must run the columns' collectives in one order
    return W, _one_vs_rest(fit_column, classes, W, jobs, log)
