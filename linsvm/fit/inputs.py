"""train()'s inputs, checked once: the data arrays, the cost factors, and on several
MPI ranks what the ranks must agree on.

Each example's cost factor c_i is its sample weight times its class's weight
(LIBLINEAR's -W and -w); `class_weight="balanced"` is scikit-learn's rule
n_samples / (n_classes n_j), counted over every rank's examples.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError, NoExamplesError, ParameterError
from ..problem.csr import CSRBuffers
from ..problem.labels import (balanced_class_weight, check_labels, class_counts,
                              class_order_raw)
from ..problem.registry import check_positive

__all__ = ["local_inputs", "agree_inputs", "unit_costs", "cost_factors", "class_weights"]


def local_inputs(X, y, qid, rows, sample_weight, distributed):
    """train()'s checks of its array arguments: (Xb, y, labels, qid, rows, sample_weight),
    y checked against X and labels its distinct values in first-appearance order (None
    when many, or for a subset of rows), rows and the per-row arrays taken to the subset.
    A distributed rank may hold no rows."""
    Xb = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    if Xb.n_rows == 0 and not distributed:
        raise NoExamplesError("no training examples")
    y, labels = check_labels(y, Xb.n_rows)
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


def agree_inputs(coll, Xb, y, labels, kind):
    """What the ranks of a distributed train() must agree on, in one allgather: the
    width of X (the same on every rank, else a DataError on all), some training
    examples over all ranks, and the distinct labels of the union of the blocks in
    rank order, merged as `kind` (linsvm.problem.kinds) merges them.  Returns (labels,
    total rows of X over the ranks)."""
    if labels is None:
        labels = class_order_raw(y)
    reports = coll.comm.allgather((Xb.n_features, Xb.n_rows, y.shape[0], labels.tolist()))
    widths = [r[0] for r in reports]
    if len(set(widths)) > 1:
        raise DataError("the ranks' X differ in width: " + ", ".join(
            f"rank {r}: {w} columns" for r, w in enumerate(widths)))
    if sum(r[2] for r in reports) == 0:
        raise NoExamplesError("no training examples on any MPI rank")
    return kind.merge_labels([r[3] for r in reports]), sum(r[1] for r in reports)


def unit_costs(n):
    """n cost factors of 1 (np.empty + fill: cheaper than np.ones on the small-problem path)."""
    out = np.empty(n)
    out.fill(1.0)
    return out


def class_weights(class_weight, y, classes, coll=None):
    """(weights as a dict label -> weight or None, balanced?) from train()'s class_weight:
    a dict, None, or "balanced" (counted over every rank with a Collective coll)."""
    if not isinstance(class_weight, str):
        return class_weight, False
    if class_weight != "balanced":
        raise ParameterError(f"class_weight must be a dict or 'balanced', got {class_weight!r}")
    counts = class_counts(y, classes)
    if coll is not None:
        coll.sum(counts)
    return balanced_class_weight(counts, classes), True


def cost_factors(y, classes, sample_weight, class_weight):
    """Per-example base cost (sample weights) and per-class weights (class_weight)."""
    m = y.shape[0]
    if sample_weight is None:
        base = unit_costs(m)
    else:
        base = np.asarray(sample_weight, dtype=np.float64)
        if base.ndim != 1 or base.shape[0] != m:
            raise DataError(f"sample_weight has {base.size} values for {m} examples")
        if not np.all(np.isfinite(base)) or np.any(base < 0):
            raise DataError(f"sample weight of example {int(np.flatnonzero(~(base >= 0) | ~np.isfinite(base))[0]) + 1} is not a finite number >= 0")
    cw = unit_costs(classes.shape[0])
    for label, weight in (class_weight or {}).items():
        hit = np.flatnonzero(classes == float(label))
        if hit.size == 0:
            raise ParameterError(f"class weight given for label {label:g}, which is not in the training data")
        cw[hit[0]] = check_positive(f"weight of class {label:g}", weight)
    return base, cw
