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
* turns a warm start (a Model or a weight array) into per-column start points.
"""
from __future__ import annotations

import math
import time

import numpy as np

from ._kernels import binary_targets, scan_labels
from .errors import DataError, ParameterError
from .memory import check_solve
from .model import Model
from .problem import CSRBuffers, check_positive, n_weights
from .solvers import get_solver


def class_order(y, labels=None):
    """Return the class labels of y in LIBLINEAR's order (see module docstring).
    labels: y's distinct values in order of first appearance, if already known."""
    classes = labels
    if classes is None and isinstance(y, np.ndarray) and y.dtype == np.float64 and y.ndim == 1:
        classes, _ = scan_labels(np.ascontiguousarray(y))   # one pass; None: many labels
    if classes is None:
        labels, first = np.unique(y, return_index=True)
        classes = labels[np.argsort(first, kind="stable")]
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


_DEFAULT_OPTIONS: dict = {}     # solver name -> its checked defaults (options are immutable values)


def _check_options(info, options):
    """Fill solver options with defaults, coerce their types and check their ranges."""
    if not options and info.name in _DEFAULT_OPTIONS:
        return dict(_DEFAULT_OPTIONS[info.name])
    out = _checked_options(info, options)
    if not options:
        _DEFAULT_OPTIONS[info.name] = dict(out)
    return out


def _checked_options(info, options):
    unknown = set(options) - set(info.options)
    if unknown:
        valid = ", ".join(sorted(info.options)) or "none"
        raise ParameterError(f"solver {info.name!r} has no option {sorted(unknown)[0]!r} (valid: {valid})")
    out = {}
    for name, opt in info.options.items():
        value = options.get(name, opt.default)
        if value is not None:
            try:
                value = opt.type(value)
            except (TypeError, ValueError):
                raise ParameterError(f"option {name} must be {opt.type.__name__}, got {value!r}") from None
            if opt.type in (int, float):
                if not math.isfinite(value) or (opt.low is not None and value < opt.low) or (
                        opt.high is not None and value > opt.high):
                    raise ParameterError(f"option {name}={value!r} is out of range [{opt.low}, {opt.high}]")
        out[name] = value
    return out


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


def train(X, y, solver="mfn", C=1.0, bias=1.0, tol=None, class_weight=None, sample_weight=None,
          init=None, seed=0, log=None, qid=None, rows=None, **solver_options):
    """Train a linear SVM and return a `Model`.

    X: scipy sparse matrix or 2-D array (n_samples x n_features), or a
    linsvm.problem.CSRBuffers of one (validated once, for repeated calls); y: labels
    (for ordinal solvers: integer ranks, ordered by value).
    solver: a name from linsvm.solvers.SOLVERS; C > 0: cost (LIBLINEAR's -c);
    bias: value of the constant feature appended to every example (> 0), or
    <= 0 for none (LIBLINEAR's -B; its weight is regularized like the others);
    tol: the solver's stopping tolerance (-e; None: the solver's default);
    class_weight: {label: weight} scaling C for that class (-w);
    sample_weight: one weight >= 0 per example scaling its loss (-W);
    init: a Model or a weight array (n_weights x n_columns) to warm-start from
    (a Model trained by the same solver in this process also hands over its
    solver state, e.g. dual variables, for alpha-seeding);
    seed: for solvers with random choices; log: a function taking progress
    lines (None: silent); qid: query ids for ranking solvers (pairs only
    within a query); rows: train on these rows of X only (y, sample_weight
    and qid stay full-length; cross-validation folds use this to avoid copying
    X); solver_options: see `linsvm-train --help`.
    """
    info = get_solver(solver)
    C = check_positive("C", C)
    bias = float(bias)
    if not math.isfinite(bias):
        raise ParameterError(f"bias must be finite, got {bias!r}")
    bias = bias if bias > 0 else -1.0
    tol = info.default_tol if tol is None else check_positive("tolerance", tol)
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ParameterError(f"seed must be an integer, got {seed!r}") from None
    opts = _check_options(info, solver_options)
    Xb = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    if Xb.n_rows == 0:
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
        if rows.ndim != 1 or rows.size == 0 or rows.min() < 0 or rows.max() >= Xb.n_rows:
            raise ParameterError(f"rows must be a non-empty list of row numbers in [0, {Xb.n_rows})")
        if sample_weight is not None:
            sample_weight = np.asarray(sample_weight, dtype=np.float64)
            if sample_weight.shape != (Xb.n_rows,):
                raise DataError(f"sample_weight has {sample_weight.size} values for {Xb.n_rows} examples")
            sample_weight = sample_weight[rows]
        y = y[rows]
        labels = None                   # those of the full y; the subset may lack some
        qid = None if qid is None else qid[rows]
    if info.kind == "ordinal":
        classes = np.unique(y)
        if not np.all(classes == np.round(classes)):
            raise DataError("ordinal labels must be integer ranks")
    else:
        classes = class_order(y, labels)
    if classes.shape[0] < 2:
        raise DataError(f"only one class (label {classes[0]:g}) in the training data; need at least two")
    unweighted = sample_weight is None and not class_weight
    if unweighted and info.kind == "binary":    # no class-weight table to build
        base = _unit_costs(y.shape[0])
    else:
        base, cw = _cost_factors(y, classes, sample_weight, class_weight)
    state = getattr(init, "solver_state_", None) if getattr(init, "solver", None) == info.name else None
    nw = n_weights(Xb.n_features, bias)
    check_solve(info, Xb, rows.shape[0], nw, classes.shape[0], opts, log)   # before allocating
    thresholds = None
    t0 = time.perf_counter()

    if info.kind == "ordinal":
        codes = np.searchsorted(classes, y).astype(np.int32)
        cost = base * cw[codes]
        start = None
        if init is not None:
            if not isinstance(init, Model) or init.kind != "ordinal":
                raise ParameterError("an ordinal solver warm-starts only from an ordinal model")
            if not np.array_equal(init.classes_, classes):
                raise ParameterError("the initial model was trained on different ranks")
            w0 = _align_weights(init.weights, init.n_features_, init.bias, Xb.n_features, bias)
            start = (w0[:, 0], np.asarray(init.thresholds_, dtype=np.float64))
        w, thresholds, st = info.fit(Xb, rows, codes, classes.shape[0], cost, C, bias, tol, start,
                                     seed, log, qid=qid, state=state, **opts)
        W = np.asarray(w, dtype=np.float64).reshape(nw, 1)
        col_stats = [st]
        kind = "ordinal"
    elif info.kind == "multiclass":
        codes = np.empty(y.shape[0], dtype=np.int32)
        for j, label in enumerate(classes):
            codes[y == label] = j
        cost = base * cw[codes]
        n_columns = classes.shape[0]
        W0 = None
        if init is not None:
            W0 = np.column_stack(_warm_starts(init, classes, Xb.n_features, bias, n_columns))
        W, st = info.fit(Xb, rows, codes, n_columns, cost, C, bias, tol, W0, seed, log,
                         state=state, **opts)
        W = np.asarray(W, dtype=np.float64).reshape(nw, n_columns)
        col_stats = [st]
        kind = "multiclass"
    else:
        n_columns = 1 if classes.shape[0] == 2 else classes.shape[0]
        starts = _warm_starts(init, classes, Xb.n_features, bias, n_columns)
        states = state if isinstance(state, list) and len(state) == n_columns else [None] * n_columns
        W = None if n_columns == 1 else np.empty((nw, n_columns))
        col_stats = []
        for j in range(n_columns):
            t = binary_targets(y, classes[j])
            if unweighted:
                cost = base                     # all ones
            elif n_columns == 1:
                cost = base * np.where(t > 0, cw[0], cw[1])
            else:
                cost = base * np.where(t > 0, cw[j], 1.0)
            if log is not None and n_columns > 1:
                log(f"class {classes[j]:g} vs rest")
            beta, st = info.fit(Xb, rows, t, cost, C, bias, tol, starts[j], seed, log,
                                state=states[j], **opts)
            if n_columns == 1:                  # handed over (linsvm.solvers), not copied
                W = np.ascontiguousarray(beta, dtype=np.float64)
                W = (W if W.base is None else W.copy()).reshape(nw, 1)
            else:
                W[:, j] = beta
            col_stats.append(st)
        kind = "binary" if n_columns == 1 else "multiclass"
    seconds = time.perf_counter() - t0

    stats = _merge_stats(col_stats, seconds)
    warnings = [s["warning"] for s in col_stats if "warning" in s]
    solver_state = [s.pop("_state", None) for s in col_stats]
    params = {"C": C, "bias": bias, "tol": tol, "seed": seed, "loss": info.loss}
    params.update(opts)
    if class_weight:
        params["class_weight"] = " ".join(f"{float(k):g}:{float(v):g}" for k, v in class_weight.items())
    model = Model._from_training(solver=info.name, classes=classes, weights=W, bias=bias,
                                 params=params, stats=stats, kind=kind, thresholds=thresholds)
    model.warnings = warnings
    model.column_stats = col_stats
    model.solver_state_ = solver_state if kind == "binary" or info.kind == "binary" else solver_state[0]
    return model
