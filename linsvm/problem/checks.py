"""Checks of what the solver cores index unchecked, and of positive parameters.

The compiled cores run without bounds checks; every row list, cost factor,
label and class code they read is checked here, once, when a
`linsvm.problem.Problem` is built (or by the caller who builds one itself).
"""
from __future__ import annotations

import numpy as np

from .._data import DataView
from .._kernels import max_row_sq_norm
from ..errors import DataError, NoExamplesError
from .csr import entry_values


def n_weights(n_features, bias):
    """Length of a weight vector: the features plus one for the bias feature."""
    return n_features + (1 if bias > 0 else 0)


def check_rows_and_costs(X, rows, cost):
    """The row list and per-position cost factors every solver core indexes unchecked:
    returns (rows as contiguous int64, cost as contiguous float64) after checking that
    rows is 1-D with every entry in [0, X.n_rows), cost has one finite value >= 0 per
    row, and there is at least one example."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    n = rows.shape[0]
    if rows.ndim != 1 or cost.shape != (n,):
        raise DataError(f"rows and cost factors must be 1-D of one length ({n}, {cost.shape})")
    if n == 0:
        raise NoExamplesError("no training examples")
    if rows.min() < 0 or rows.max() >= X.n_rows:
        raise DataError(f"row numbers must be in [0, {X.n_rows})")
    if not np.all(np.isfinite(cost)) or np.any(cost < 0):
        raise DataError("cost factors must be finite and >= 0")
    return rows, cost


def check_binary_targets(t, n):
    """Labels t per position: n values, each +1 or -1; returns contiguous float64."""
    t = np.ascontiguousarray(t, dtype=np.float64)
    if t.shape != (n,):
        raise DataError(f"{t.size} labels for {n} examples")
    if not np.all(np.abs(t) == 1.0):
        raise DataError("binary labels must be +1 or -1")
    return t


def check_codes(codes, n, n_classes, what="class codes"):
    """Class or rank indices per position: n values in [0, n_classes); contiguous int32."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    if codes.shape != (n,):
        raise DataError(f"{codes.size} {what} for {n} examples")
    if n and (codes.min() < 0 or codes.max() >= n_classes):
        raise DataError(f"{what} must be in [0, {n_classes})")
    return codes


def max_row_norm(X, rows, bias):
    """The largest Euclidean norm of an example x_r (r in rows, x with the bias feature when
    bias > 0) of CSRBuffers X.  Every solver forms squared norms x.x and sums of products
    of that size; a row whose ||x||^2 overflows double precision leaves nothing to solve
    (the Hessian, the dual's curvature and the certificates become inf or nan), so it is
    refused: DataError naming the example (1-based, in X) and the cause."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    top, bad = max_row_sq_norm(DataView(X, float(bias), rows))
    if bad < 0:
        return float(np.sqrt(top))
    if bias > 0 and not np.isfinite(bias * bias):
        raise DataError(f"the bias feature's value {bias:g} (-B) overflows double precision "
                        "when squared: use a smaller -B")
    r = int(rows[bad])
    values = np.abs(entry_values(X, int(X.indptr[r]), int(X.indptr[r + 1])))
    raise OverflowingRowError(
        f"example {r + 1}: its squared norm overflows double precision (feature values up "
        f"to {values.max():.3g}; no solver can train on such values): rescale the features, "
        "e.g. with linsvm scale", row=r)


class OverflowingRowError(DataError):
    """An example whose squared norm overflows double precision (max_row_norm); row: its
    row number in X (0-based), so that a command can name the file and line it came from."""

    def __init__(self, message, row):
        super().__init__(message)
        self.row = row
