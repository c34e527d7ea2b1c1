"""Warm starts: another model's weights laid out for this problem.

A warm start (`init`: a Model or a weight array) seeds a solve: beta-seeding for
the primal solvers (Keerthi & DeCoste 2005, Sec. 4.1), a start for the others.
The model may have other features (shared ones are copied, the rest start at 0),
another bias value (the bias weight is rescaled so that bias * w_bias is
unchanged) and its classes in another order (its columns are re-laid in this
problem's class order: `columns_in_order`, also used by cross-validation folds and
calibration).
"""
from __future__ import annotations

import numpy as np

from .._data import DataView
from .._kernels import all_finite, csr_matvec
from ..errors import ParameterError
from ..model.model import Model
from ..problem.checks import n_weights

__all__ = ["align_weights", "columns_in_order", "warm_starts", "start_of", "check_start"]


def align_weights(W0, n_features0, bias0, n_features, bias):
    """Weights of another model (rows: its features, then its bias row if bias0 > 0)
    re-laid for this problem: shared features copied, the others 0, the bias
    weight rescaled so that bias * w_bias is unchanged."""
    W = np.zeros((n_weights(n_features, bias), W0.shape[1]))
    k = min(n_features, n_features0)
    W[:k] = W0[:k]
    if bias > 0 and bias0 > 0:
        W[n_features] = W0[n_features0] * bias0 / bias
    return W


def columns_in_order(model, classes):
    """model's weight columns in the class order `classes` (the same labels): a
    one-column model is negated when its positive class is not classes[0]."""
    W = np.asarray(model.weights, dtype=np.float64)
    if W.shape[1] == 1:
        return W if model.classes_[0] == classes[0] else -W
    order = [int(np.flatnonzero(model.classes_ == c)[0]) for c in classes]
    return W[:, order]


def warm_starts(init, classes, n_features, bias, n_columns):
    """Per-column start vectors (binary and one-vs-rest solves) from a Model or an
    array of shape (n_weights, n_columns), or Nones."""
    if init is None:
        return [None] * n_columns
    nw = n_weights(n_features, bias)
    if isinstance(init, Model):
        if init.kind == "ordinal" or init.weights.shape[1] != n_columns:
            raise ParameterError("the initial model has a different number of weight columns")
        if not np.array_equal(np.sort(init.classes_), np.sort(classes)):
            raise ParameterError("the initial model was trained on different class labels")
        W = align_weights(columns_in_order(init, classes), init.n_features_, init.bias,
                          n_features, bias)
        return [W[:, j].copy() for j in range(n_columns)]
    W = np.asarray(init, dtype=np.float64)
    if W.ndim == 1:
        W = W[:, None]
    if W.shape != (nw, n_columns) or not np.all(np.isfinite(W)):
        raise ParameterError(f"initial weights must be a finite array of shape ({nw}, {n_columns}), got {W.shape}")
    return [W[:, j].copy() for j in range(n_columns)]


def start_of(kind, init, classes, n_features, bias):
    """The warm start of a multi-class (n_weights x n_classes), ordinal ((w0,
    thresholds0)), regression or one-class (n_weights) solve from `init` (a Model of the
    same kind, or a weight array for all but ordinal ones), or None."""
    if init is None:
        return None
    if kind == "multiclass":
        return np.column_stack(warm_starts(init, classes, n_features, bias, classes.shape[0]))
    if kind in ("regression", "oneclass"):
        if isinstance(init, Model) and init.kind != kind:
            raise ParameterError(f"a {kind} solver warm-starts from a {kind} model, not a "
                                 f"{init.kind} one")
        if isinstance(init, Model):
            return align_weights(init.weights, init.n_features_, init.bias, n_features, bias)[:, 0]
        return warm_starts(init, classes, n_features, bias, 1)[0]
    if not isinstance(init, Model) or init.kind != "ordinal":
        raise ParameterError("an ordinal solver warm-starts only from an ordinal model")
    if not np.array_equal(init.classes_, classes):
        raise ParameterError("the initial model was trained on different ranks")
    w0 = align_weights(init.weights, init.n_features_, init.bias, n_features, bias)
    return (w0[:, 0], np.asarray(init.thresholds_, dtype=np.float64))


def check_start(init, Xb, rows, bias):
    """ParameterError, in one line naming the model (its file when it was loaded from
    one), when a warm start's decision value on a training example is not finite: a
    model whose weights overflow on this data would start the solve
    from inf or nan.  `init`: a Model (or anything else, which is left to warm_starts'
    checks); Xb, rows: the training data and the rows the solve uses."""
    if not isinstance(init, Model):
        return
    W = align_weights(init.weights, init.n_features_, init.bias, Xb.n_features, bias)
    view = DataView(Xb, bias, rows)
    for j in range(W.shape[1]):
        margins = csr_matvec(view, np.ascontiguousarray(W[:, j]))
        if not all_finite(margins):
            k = int(np.flatnonzero(~np.isfinite(margins))[0])
            name = init.source or "the initial model"
            column = "" if W.shape[1] == 1 else f" (column {j + 1})"
            raise ParameterError(f"{name}: its weights overflow the decision value{column} of "
                                 f"training example {int(rows[k]) + 1} ({float(margins[k])!r}): "
                                 "it cannot start a solve; train without it")
