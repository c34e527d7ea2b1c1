"""Checks and conversions of a model's pieces: params and stats values, probability
sigmoids, float arrays, and the error for a decision value that overflows."""
from __future__ import annotations

import numbers

import numpy as np

from ..errors import DataError, ModelError
from ..problem.csr import entry_values
from ..problem.kinds import get_kind
from .tokens import NAME_RE

__all__ = ["clean_values", "check_probability", "check_offset", "as_float_array", "ScoreOverflowError",
           "overflow_error"]

# Value types stored as they are (exact types: a numpy scalar is converted below).
_PLAIN_TYPES = frozenset((type(None), bool, int, float, str))
# Names already checked against NAME_RE (a training run checks the same few dozen).
_CHECKED_NAMES: set = set()


def clean_values(values, what: str) -> dict:
    """Copy a params/stats mapping, normalizing numpy scalars to Python types.

    Allowed values: None, bool, int, float, str; names must match
    ``[A-Za-z_][A-Za-z0-9_.-]*`` (one token in the file).
    """
    if values is None:
        return {}
    if not hasattr(values, "items"):
        raise ModelError(f"{what} must be a dict, got {type(values).__name__}")
    out = {}
    for name, v in values.items():
        if name not in _CHECKED_NAMES or type(name) is not str:
            if not isinstance(name, str) or not NAME_RE.match(name):
                raise ModelError(f"bad {what} name {name!r} (expected letters, digits, '_', '.', '-')")
            if len(_CHECKED_NAMES) < 4096:
                _CHECKED_NAMES.add(name)
        if type(v) in _PLAIN_TYPES or isinstance(v, (bool, str)):
            pass
        elif isinstance(v, np.bool_):
            v = bool(v)
        elif isinstance(v, numbers.Integral):
            v = int(v)
        elif isinstance(v, numbers.Real):
            v = float(v)
        else:
            raise ModelError(f"{what} {name!r} has unsupported type {type(v).__name__} "
                             "(allowed: str, int, float, bool, None)")
        out[name] = v
    return out




def check_probability(probability, kind, k):
    """Platt sigmoids as a fresh (n_sigmoids, 2) float64 array (1 row for 2 classes,
    k rows for k > 2), or None; ModelError when they do not fit the model."""
    if probability is None:
        return None
    if not get_kind(kind).classifier:
        raise ModelError(f"{get_kind(kind).noun} has no class probabilities (no probability sigmoids)")
    P = as_float_array(probability, "probability")
    if k < 2:
        raise ModelError(f"a model with {k} class has no class probabilities (no probability sigmoids)")
    n = 1 if k == 2 else k
    if P.shape != (n, 2):
        raise ModelError(f"probability must have shape ({n}, 2) for a model with {k} classes, "
                         f"got {P.shape}")
    if not np.isfinite(P).all():
        raise ModelError("probability sigmoids must be finite")
    return P


def check_offset(offset) -> float:
    """A model's offset (the constant added to its decision values) as a finite float,
    or ModelError."""
    try:
        v = float(offset)
    except (TypeError, ValueError):
        raise ModelError(f"offset must be a number, got {offset!r}") from None
    if not np.isfinite(v):
        raise ModelError(f"offset must be finite, got {offset!r}")
    return v


def as_float_array(values, what) -> np.ndarray:
    """A fresh C-contiguous float64 copy of `values`, or ModelError."""
    if values is None:
        raise ModelError(f"{what} missing")
    try:
        return np.array(values, dtype=np.float64, order="C")
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{what} must be numbers: {exc}") from None


class ScoreOverflowError(DataError):
    """A decision value is not finite; `row` (0-based) and `column` locate the first one,
    `detail` says why, and `model_at_fault` whether the model's weights are the larger
    factor of the products that overflowed (else the example's features are)."""

    def __init__(self, row, column, detail, model_at_fault=True):
        super().__init__(f"row {row}: {detail}")
        self.row = row
        self.column = column
        self.detail = detail
        self.model_at_fault = model_at_fault


def _row_entries(X, row, width):
    """(column indices, values) of row `row` of X (CSRBuffers, a scipy sparse matrix or
    a dense array) among its first `width` columns."""
    if hasattr(X, "indptr") and not hasattr(X, "toarray"):        # CSRBuffers
        a, b = int(X.indptr[row]), int(X.indptr[row + 1])
        idx, vals = np.asarray(X.indices[a:b]), entry_values(X, a, b)
    elif hasattr(X, "toarray"):
        r = X[row].tocsr()
        idx, vals = r.indices, np.asarray(r.data, dtype=np.float64)
    else:
        dense = np.asarray(X[row], dtype=np.float64).reshape(-1)
        idx = np.flatnonzero(dense)
        vals = dense[idx]
    keep = idx < width
    return idx[keep], vals[keep]


def overflow_error(scores, X, W, bias_row=None, bias=0.0) -> ScoreOverflowError:
    """The error for the first non-finite entry of `scores` (rows of X; W: the weights of
    the model's features (n_features, k); the bias row and the bias value when the model
    has a bias term): the largest magnitudes of the column's weights and of the row's
    features (the bias value among them), whose products, or their sum, overflowed."""
    S = scores.reshape(scores.shape[0], -1)
    row, col = (int(v) for v in np.argwhere(~np.isfinite(S))[0])
    W = np.asarray(W).reshape(W.shape[0], -1)
    try:
        idx, vals = _row_entries(X, row, W.shape[0])
    except (TypeError, ValueError, IndexError):
        idx, vals = np.zeros(0, dtype=np.int64), np.zeros(0)
    what = "" if S.shape[1] == 1 else f" of column {col + 1}"
    value = f"the decision value{what} is {float(S[row, col])!r}, not finite"
    if not np.isfinite(vals).all():
        return ScoreOverflowError(row, col, f"{value}: the example has a non-finite feature value",
                                  model_at_fault=False)
    nonzero = vals != 0
    w_max = float(np.abs(W[idx[nonzero], col]).max()) if nonzero.any() else 0.0
    x_max = float(np.abs(vals).max()) if vals.size else 0.0
    if bias_row is not None:
        w_max = max(w_max, float(np.abs(np.reshape(bias_row, -1)[col])))
        x_max = max(x_max, float(bias))
    return ScoreOverflowError(row, col, f"{value}: the model's weights (up to {w_max:.4g} in "
                                        f"magnitude) times the example's features (up to "
                                        f"{x_max:.4g}) overflow the largest double",
                              model_at_fault=w_max >= x_max)
