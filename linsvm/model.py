"""The trained model: decision values, predictions, and two text file formats.

A linear model scores an example ``x`` (a row of the data, features numbered
from 0 here, from 1 in files) with one column ``w`` of the weight matrix::

    score(x) = sum_j x[j] * w[j]   (+ bias * w[n_features]   when bias > 0)

which is LIBLINEAR's convention: with ``-B b > 0`` every example carries an
extra constant feature of value ``b`` whose weight is stored as the last row
and regularized like the others.  Three kinds of model use the scores:

* ``binary``     one column; ``classes_[0]`` (the positive class) where the
                 score is > 0, ``classes_[1]`` otherwise.
* ``multiclass`` one column per class (one-vs-rest, Crammer-Singer or
                 Weston-Watkins); the class of the largest score, the first
                 one on ties.
* ``ordinal``    one column and ``n_levels - 1`` ascending thresholds; level
                 ``classes_[r]`` with ``r`` = number of thresholds strictly
                 below the score.

Files
-----
``Model.save(path)`` writes the linsvm format, version 2, a self-describing
text file (all floats are written in their shortest exact form, Python's
``repr`` in the C locale, with an integral ``.0`` dropped, so they read back
bit for bit)::

    linsvm_model 2
    solver mfn
    kind binary
    n_features 3
    bias 1
    classes 1 -1
    n_columns 1
    param C float 1
    param bias float 1
    param loss str "l2"
    param seed int 0
    param max_iter none
    stat objective float 12.345678901234567
    stat n_iter int 7
    weights 4
    0.5
    -1.25
    0
    0.125
    end

* Line 1 is ``linsvm_model <version>``.  Header lines follow in any order,
  each at most once: ``solver NAME`` (a registered solver or
  ``liblinear:<solver_type>``), ``kind binary|multiclass|ordinal`` (ordinal
  exactly for the ordinal solvers), ``n_features N``, ``bias B``, ``classes C1
  C2 ...`` (model order), ``n_columns K``, and for ordinal models only
  ``thresholds T1 ... T(k-1)``.
* ``param NAME TYPE [VALUE]`` and ``stat NAME TYPE [VALUE]`` (any number, names
  unique within their group) record the training options and statistics with
  their Python type: ``float`` / ``int`` (decimal), ``bool`` (``true`` /
  ``false``), ``str`` (a JSON string literal) or ``none`` (no value).
* ``weights R`` starts the matrix: R lines of K numbers separated by single
  spaces, row j holding the weights of feature j + 1 (file numbering) in
  every column; the bias row last.  R = n_features + 1 when bias > 0,
  n_features when bias < 0, and either when bias = 0 (LIBLINEAR's ``-B 0``
  keeps a row for its always-zero bias feature).
* Or, binary weights: ``weights R binary float64-le crc32:XXXXXXXX``, then
  exactly R * K * 8 bytes (the matrix in row-major order, IEEE 754 doubles,
  little-endian; the crc32 of those bytes in hex) and a newline.  8 bytes per
  weight: LIBLINEAR's file size or less, read without parsing.
* ``end`` closes the file; nothing may follow it.

``format="linsvm"`` writes text weights for models of at most
BINARY_MIN_ENTRIES (2**20) weights and binary ones above;
``"linsvm-text"`` and ``"linsvm-binary"`` force one form.  Version 1 files
(text weights, bias 0 without a row) are still read; version 2 added the
binary form and bias 0 with a row.

``Model.save(path, format="liblinear")`` writes LIBLINEAR's own format
(readable by LIBLINEAR's ``predict`` and ``liblinearutil.load_model``), and
``load_model`` reads both formats, telling them apart by the first line.

Saving is atomic (`linsvm.atomic`): the file is written to an unnamed
(O_TMPFILE) or hidden temporary file in the target's directory, flushed,
fsync'ed and renamed over the target; on any failure nothing is left behind
and an existing target is untouched.

Loading streams: the file is read in chunks of a megabyte, text rows are
parsed by a compiled parser straight into the preallocated weight array and
binary rows read into it, so the peak is the weights plus the buffer.

Loading validates every field and raises ``ModelError("FILE:LINE: ...")``
(``FILE: ...`` when the problem is not on one line) for a corrupt, truncated,
inconsistent or foreign file.  A file that cannot be opened or read raises the
``OSError`` that ``open`` raised (``FileNotFoundError``, ``PermissionError``,
...), unchanged, as ``open`` itself and ``sklearn.datasets.load_svmlight_file``
do; the command line reports both as one-line errors.
"""
from __future__ import annotations

import io
import json
import math
import numbers
import os
import re
import sys
import zlib

import numpy as np
import scipy.sparse as sp

from . import _svmlight
from ._kernels import all_finite
from .atomic import atomic_output
from .errors import DataError, ModelError, ParameterError

__all__ = ["Model", "load_model", "FORMAT_VERSION", "KINDS", "MODEL_FORMATS", "check_model_format"]

FORMAT_MAGIC = "linsvm_model"
FORMAT_VERSION = 2                  # written; 2 added binary weights, bias 0 with a bias row
READ_VERSIONS = (1, 2)              # read
# What Model.save(format=...) and --model-format accept.  "linsvm" chooses text
# weights up to BINARY_MIN_ENTRIES weights and binary ones from there on.
MODEL_FORMATS = ("linsvm", "linsvm-text", "linsvm-binary", "liblinear")
BINARY_MIN_ENTRIES = 1 << 20
_READ_BYTES = 1 << 20               # chunk size of the loader
_MAX_HEADER_LINE = 1 << 26          # a longer line without a newline is not a model header
KINDS = ("binary", "multiclass", "ordinal")

# LIBLINEAR 2.50 solver_type names.  Classification models share one prediction
# rule; the others (regression, one-class) are not linsvm models.
LIBLINEAR_CLASSIFIERS = (
    "L2R_LR", "L2R_L2LOSS_SVC_DUAL", "L2R_L2LOSS_SVC", "L2R_L1LOSS_SVC_DUAL",
    "MCSVM_CS", "L1R_L2LOSS_SVC", "L1R_LR", "L2R_LR_DUAL",
)
LIBLINEAR_OTHERS = ("L2R_L2LOSS_SVR", "L2R_L2LOSS_SVR_DUAL", "L2R_L1LOSS_SVR_DUAL", "ONECLASS_SVM")

# Rows written per chunk when saving (bounds the size of the strings built).
_CHUNK_ROWS = 4096
_CHUNK_ENTRIES = 1 << 16            # weights per chunk of text (wide models: fewer rows)

_NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
_TOKEN_RE = re.compile(r"[!-~]+\Z")                       # printable ASCII, no space
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_DEC_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_SPECIAL_RE = re.compile(r"(?:[+-]?inf|nan)\Z")          # what repr() writes for non-finite
_HEADER_BAD_CHAR_RE = re.compile(r"[^\t -~]")              # header lines: printable ASCII and tabs
_INTEGRAL_SUFFIX_RE = re.compile(r"\.0(?=[ \n])")          # the ".0" repr puts on integral floats


# --------------------------------------------------------------------------- #
# Value formatting and parsing helpers
# --------------------------------------------------------------------------- #

def _fmt_float(v: float) -> str:
    """Shortest exact decimal form of `v` (repr), without an integral '.0'."""
    s = repr(float(v))
    return s[:-2] if s.endswith(".0") else s


def _parse_float(tok: str, *, finite: bool = True) -> float | None:
    """Return the float of a strict decimal token (or inf/nan when not `finite`), else None."""
    if _DEC_RE.match(tok):
        v = float(tok)
        if finite and not math.isfinite(v):
            return None
        return v
    if not finite and _SPECIAL_RE.match(tok):
        return float(tok)
    return None


def _parse_int(tok: str) -> int | None:
    """Return the int of a strict decimal integer token, else None."""
    return int(tok) if _INT_RE.match(tok) else None


# Value types stored as they are (exact types: a numpy scalar is converted below).
_PLAIN_TYPES = frozenset((type(None), bool, int, float, str))
# Names already checked against _NAME_RE (a training run checks the same few dozen).
_CHECKED_NAMES: set = set()


def _clean_values(values, what: str) -> dict:
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
            if not isinstance(name, str) or not _NAME_RE.match(name):
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


def _fmt_typed(v) -> str:
    """Encode a params/stats value as 'TYPE [VALUE]' (see the module docstring)."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "bool true" if v else "bool false"
    if isinstance(v, int):
        return f"int {v}"
    if isinstance(v, float):
        return f"float {_fmt_float(v)}"
    return "str " + json.dumps(v, ensure_ascii=True)


def _parse_typed(typ: str, rest: str | None):
    """Decode 'TYPE [VALUE]'; return (value, None) or (None, error message)."""
    if typ == "none":
        return (None, None) if rest is None else (None, "type 'none' takes no value")
    if rest is None:
        return None, f"type {typ!r} needs a value"
    if typ == "str":
        try:
            v = json.loads(rest)
        except ValueError:
            v = None
        if not isinstance(v, str):
            return None, f"bad str value {rest.strip()!r} (expected a JSON string in double quotes)"
        return v, None
    tokens = rest.split()
    if len(tokens) != 1:
        return None, f"type {typ!r} takes exactly one value"
    tok = tokens[0]
    if typ == "float":
        v = _parse_float(tok, finite=False)
        return (v, None) if v is not None else (None, f"bad float value {tok!r}")
    if typ == "int":
        v = _parse_int(tok)
        return (v, None) if v is not None else (None, f"bad int value {tok!r}")
    if typ == "bool":
        if tok in ("true", "false"):
            return tok == "true", None
        return None, f"bad bool value {tok!r} (expected true or false)"
    return None, f"unknown value type {typ!r} (expected float, int, bool, str or none)"


# --------------------------------------------------------------------------- #
# The model
# --------------------------------------------------------------------------- #

class Model:
    """A trained linear model (binary, multi-class or ordinal).

    Parameters
    ----------
    solver : str
        Name of the solver that produced it (``mfn``, ``sdm-cs``, ...; models
        read from LIBLINEAR files have ``liblinear:<solver_type>``).  One token
        of printable ASCII.
    classes : sequence of float
        Class labels in model order: for binary models ``classes[0]`` is the
        positive class (score > 0); for multi-class models column m scores
        ``classes[m]``; for ordinal models the levels from lowest to highest.
        Finite and distinct.
    weights : array of shape (n_rows, n_columns)
        ``n_rows = n_features + (1 if bias > 0 else 0)``; the last row is the
        weight of the constant feature of value ``bias`` when bias > 0.
        ``n_columns`` is 1 for binary and ordinal models, ``len(classes)`` for
        multi-class ones.  Finite.  Copied and stored read-only.
    bias : float
        LIBLINEAR's ``-B``: > 0 adds the constant feature; <= 0 (e.g. -1) none.
    params : dict
        Objective and solver options (C, bias, tol, loss, p, seed, ...); values
        str, int, float, bool or None.  If it holds a numeric ``bias`` it must
        equal `bias`.
    stats : dict, optional
        Training statistics (objective, n_iter, seconds, ...), same value types.
    kind : {"binary", "multiclass", "ordinal"}, optional
        Inferred when omitted: ordinal if `thresholds` is given, binary for two
        classes and one column, multiclass otherwise.
    thresholds : sequence of float, optional
        Ordinal models only: ``len(classes) - 1`` finite, non-decreasing values.
    n_features : int, optional
        Default ``n_rows - (1 if bias > 0 else 0)``.  Given, it says whether
        the last row is a bias row; that is how a model with ``bias == 0`` and
        a bias row (LIBLINEAR's ``-B 0``: a constant feature of value 0) is
        built.  With ``bias > 0`` it must be ``n_rows - 1``, with ``bias < 0``
        ``n_rows``.

    Weights whose size makes every prediction overflow are refused: the
    bias row's contribution ``bias * w`` must be finite (the rest of a score
    depends on the example; `decision_function` reports those that overflow).

    Raises ``ModelError`` when the pieces are inconsistent.
    """

    def __init__(self, *, solver, classes, weights, bias, params, stats=None,
                 kind=None, thresholds=None, n_features=None, _copy=True):
        if not isinstance(solver, str) or not _TOKEN_RE.match(solver):
            raise ModelError(f"bad solver name {solver!r} (one token of printable ASCII expected)")
        if not _known_solver(solver):
            raise ModelError(f"unknown solver {solver!r} ({_solver_choices()})")
        classes = _as_float_array(classes, "classes").reshape(-1)
        if classes.size == 0:
            raise ModelError("a model needs at least one class")
        if not np.isfinite(classes).all():
            raise ModelError("class labels must be finite")
        if len(set(classes.tolist())) != classes.size:
            raise ModelError(f"class labels must be distinct, got {_fmt_list(classes)}")
        if _copy:
            W = _as_float_array(weights, "weights")
        else:           # the loader's fresh array: no second copy of a large model
            W = weights
        if W.ndim != 2 or W.shape[1] < 1:
            raise ModelError(f"weights must be a 2-D array (n_rows, n_columns >= 1), got shape {W.shape}")
        if not all_finite(np.ascontiguousarray(W)):
            raise ModelError("weights must be finite (found inf or nan)")
        if isinstance(bias, (bool, np.bool_)) or not isinstance(bias, numbers.Real) \
                or not math.isfinite(float(bias)):
            raise ModelError(f"bias must be a finite number, got {bias!r}")
        bias = float(bias)
        if n_features is None:
            n_features = W.shape[0] - (1 if bias > 0 else 0)
            if n_features < 0:
                raise ModelError("a model with bias > 0 needs a bias row in its weights (got 0 rows)")
        else:
            if isinstance(n_features, (bool, np.bool_)) or not isinstance(n_features, numbers.Integral) \
                    or n_features < 0:
                raise ModelError(f"n_features must be an integer >= 0, got {n_features!r}")
            n_features = int(n_features)
            allowed = [n_features + 1] if bias > 0 else [n_features] if bias < 0 else [n_features, n_features + 1]
            if W.shape[0] not in allowed:
                raise ModelError(f"weights have {W.shape[0]} rows but n_features {n_features} and bias "
                                 f"{_fmt_float(bias)} need {' or '.join(map(str, allowed))}")
        has_bias_row = W.shape[0] == n_features + 1
        if has_bias_row and bias != 0:
            with np.errstate(over="ignore", invalid="ignore"):
                over = ~np.isfinite(bias * W[-1])
            if over.any():
                j = int(np.argmax(over))
                raise ModelError(f"bias {_fmt_float(bias)} times the bias weight {_fmt_float(W[-1, j])} of "
                                 f"column {j + 1} overflows: every decision value would be infinite")
        n_columns = W.shape[1]
        k = classes.size
        if thresholds is not None:
            thresholds = _as_float_array(thresholds, "thresholds").reshape(-1)
        if kind is None:
            kind = ("ordinal" if thresholds is not None
                    else "binary" if (k == 2 and n_columns == 1) else "multiclass")
        if kind not in KINDS:
            raise ModelError(f"unknown model kind {kind!r} (expected one of {', '.join(KINDS)})")
        if kind == "binary":
            if k != 2 or n_columns != 1:
                raise ModelError(f"a binary model needs 2 classes and 1 weight column, "
                                 f"got {k} classes and {n_columns} columns")
        elif kind == "multiclass":
            if n_columns != k:
                raise ModelError(f"a multiclass model needs one weight column per class, "
                                 f"got {k} classes and {n_columns} columns")
        else:
            if k < 2 or n_columns != 1:
                raise ModelError(f"an ordinal model needs at least 2 levels and 1 weight column, "
                                 f"got {k} levels and {n_columns} columns")
            if thresholds is None:
                raise ModelError("an ordinal model needs thresholds")
            if thresholds.size != k - 1:
                raise ModelError(f"an ordinal model with {k} levels needs {k - 1} thresholds, "
                                 f"got {thresholds.size}")
            if not np.isfinite(thresholds).all():
                raise ModelError("thresholds must be finite")
            if (np.diff(thresholds) < 0).any():
                raise ModelError(f"thresholds must be ascending, got {_fmt_list(thresholds)}")
        if kind != "ordinal" and thresholds is not None:
            raise ModelError(f"only ordinal models have thresholds (this one is {kind})")
        if kind not in _solver_kinds(solver):
            raise ModelError(f"solver {solver} makes {' or '.join(_solver_kinds(solver))} models, not {kind}")
        params = _clean_values(params, "param")
        stats = _clean_values(stats, "stat")
        pb = params.get("bias")
        if isinstance(pb, (int, float)) and not isinstance(pb, bool) and float(pb) != bias:
            raise ModelError(f"params['bias'] = {pb!r} disagrees with the model's bias {_fmt_float(bias)}")

        self._set(solver, kind, classes, W, bias, thresholds, params, stats, n_features)

    def _set(self, solver, kind, classes, W, bias, thresholds, params, stats, n_features=None):
        """Store checked pieces; the arrays become read-only."""
        W.flags.writeable = False
        classes.flags.writeable = False
        if thresholds is not None:
            thresholds.flags.writeable = False
        self._solver = solver
        self._kind = kind
        self._classes = classes
        self._weights = W
        self._bias = bias
        self._n_features = W.shape[0] - (1 if bias > 0 else 0) if n_features is None else n_features
        self._has_bias_row = W.shape[0] == self._n_features + 1
        self._thresholds = thresholds
        self._params = params
        self._stats = stats

    @classmethod
    def _from_training(cls, *, solver, classes, weights, bias, params, stats, kind,
                       thresholds=None):
        """The model train() returns, from pieces it has already checked and that
        nothing else holds: solver is a registered name, classes a fresh float64
        array of distinct finite labels in model order, weights a fresh contiguous
        (n_weights, n_columns) float64 array of the right shape for kind, bias a
        float, params a fresh dict of checked options (plain Python values); all
        are kept without copies.  Only what a solver produced is checked again
        here: the weights must be finite (otherwise the full constructor raises its
        error) and stats are normalized as in __init__."""
        if thresholds is not None or not all_finite(weights):
            return cls(solver=solver, classes=classes, weights=weights, bias=bias,
                       params=params, stats=stats, kind=kind, thresholds=thresholds)
        self = cls.__new__(cls)
        self._set(solver, kind, classes, weights, bias, None, params, _clean_values(stats, "stat"))
        return self

    # ----------------------------------------------------------------- properties
    @property
    def solver(self) -> str:
        """Name of the solver that trained the model."""
        return self._solver

    @property
    def kind(self) -> str:
        """``"binary"``, ``"multiclass"`` or ``"ordinal"``."""
        return self._kind

    @property
    def weights(self) -> np.ndarray:
        """Read-only (n_rows, n_columns) weight matrix, bias row last when bias > 0."""
        return self._weights

    @property
    def coef_(self) -> np.ndarray:
        """Read-only view (n_columns, n_features) of the feature weights (no bias row)."""
        return self._weights[:self._n_features].T

    @property
    def intercept_(self) -> np.ndarray:
        """(n_columns,) array: ``bias * weights[-1]`` when bias > 0, else zeros."""
        if self._bias > 0:
            return self._bias * self._weights[-1]
        return np.zeros(self._weights.shape[1])

    @property
    def classes_(self) -> np.ndarray:
        """Read-only float64 array of the class labels, in model order."""
        return self._classes

    @property
    def n_features_(self) -> int:
        """Number of features the model has weights for (the bias excluded)."""
        return self._n_features

    @property
    def bias(self) -> float:
        """Value of the constant bias feature; <= 0 means the model has none."""
        return self._bias

    @property
    def thresholds_(self) -> np.ndarray | None:
        """Ordinal models: read-only ascending array of len(classes_) - 1; else None."""
        return self._thresholds

    @property
    def params(self) -> dict:
        """A copy of the training options (C, bias, tol, loss, p, seed, ...)."""
        return dict(self._params)

    @property
    def stats(self) -> dict:
        """A copy of the training statistics (objective, n_iter, seconds, ...)."""
        return dict(self._stats)

    @property
    def objective(self):
        """Final objective value reported by the solver, or None."""
        return self._stats.get("objective")

    @property
    def n_iter(self):
        """Number of solver iterations reported, or None."""
        return self._stats.get("n_iter")

    def __repr__(self) -> str:
        return (f"Model(solver={self._solver!r}, kind={self._kind!r}, "
                f"n_features={self._n_features}, classes=[{_fmt_list(self._classes, ', ')}], "
                f"bias={_fmt_float(self._bias)})")

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X) -> np.ndarray:
        """Scores ``X @ W[:n_features] + bias * W[-1]`` (bias term only when bias > 0).

        `X` is a scipy sparse matrix/array or a dense 2-D array of shape
        (n_samples, m).  Features beyond the model's width (column index >=
        n_features_) are ignored, and a narrower X simply has no value for the
        remaining features.  Returns shape (n_samples,) for a one-column model
        (binary, ordinal) and (n_samples, n_columns) otherwise.

        A decision value that is not finite (the products of large weights and
        features overflow the largest double) raises `ScoreOverflowError` (a
        DataError) naming the first such row (`row` attribute, 0-based), instead
        of handing on ``inf``/``nan`` scores that would label the row anyway.
        """
        W = self._weights
        n = self._n_features
        one = W.shape[1] == 1
        if sp.issparse(X):
            if X.ndim != 2:
                raise DataError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
            if X.format != "csr":
                X = X.tocsr()
            m = X.shape[1]
            if m > n:
                # Drop columns >= n; when none is used just narrow the shape (no copy).
                if X.nnz and int(X.indices.max()) >= n:
                    X = X[:, :n]
                else:
                    X = sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n))
                m = n
            Wm = W[:m, 0] if one else W[:m]
            scores = np.asarray(X @ Wm, dtype=np.float64)
        else:
            X = np.asarray(X)
            if X.ndim != 2:
                raise DataError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
            if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
                raise DataError(f"X must be numeric, got dtype {X.dtype}")
            m = min(X.shape[1], n)
            Wm = W[:m, 0] if one else W[:m]
            scores = X[:, :m].astype(np.float64, copy=False) @ Wm
        if self._bias > 0:
            scores = scores + (W[-1, 0] if one else W[-1]) * self._bias
        if not all_finite(scores.reshape(-1)):
            raise _overflow_error(scores, X)
        return scores

    def predict(self, X) -> np.ndarray:
        """Predicted labels (float64, values of classes_) for the rows of X.

        binary: ``classes_[0]`` where the score is > 0, else ``classes_[1]``;
        multiclass: ``classes_[argmax]`` (the first column on ties); ordinal:
        ``classes_[r]``, r = number of thresholds strictly below the score.
        """
        return self.predict_from_scores(self.decision_function(X))

    def predict_from_scores(self, scores) -> np.ndarray:
        """Labels for decision values as `decision_function` returns them.

        `scores` has shape (n,) for a one-column model (an (n, 1) array is
        accepted too) and (n, n_columns) otherwise; the rules are `predict`'s.
        """
        s = np.asarray(scores, dtype=np.float64)
        n_columns = self._weights.shape[1]
        if n_columns == 1 and s.ndim == 2 and s.shape[1] == 1:
            s = s[:, 0]
        if (n_columns == 1 and s.ndim != 1) or (n_columns > 1 and (s.ndim != 2 or s.shape[1] != n_columns)):
            want = "(n,)" if n_columns == 1 else f"(n, {n_columns})"
            raise DataError(f"scores must have shape {want} for this model, got {s.shape}")
        c = self._classes
        if self._kind == "binary":
            return np.where(s > 0, c[0], c[1])
        if self._kind == "multiclass":
            if s.ndim == 1:   # a one-class model
                return np.full(s.shape[0], c[0])
            return c[np.argmax(s, axis=1)]
        r = np.searchsorted(self._thresholds, s, side="left")
        r[np.isnan(s)] = 0
        return c[r]

    # ----------------------------------------------------------------- saving
    def save(self, path, format: str = "linsvm") -> None:
        """Write the model to `path` atomically.

        `format` is one of `MODEL_FORMATS`: ``"linsvm"`` (the native format,
        lossless: every field and float reads back exactly; its weights are text
        for models of at most BINARY_MIN_ENTRIES = 2**20 weights and binary
        float64 above, the size of LIBLINEAR's file or smaller),
        ``"linsvm-text"`` and ``"linsvm-binary"`` (the native format with text
        or binary weights whatever the size) or ``"liblinear"`` (LIBLINEAR's
        model file, for its ``predict``; see `_liblinear_layout` for the
        mapping; ordinal models and non-integer labels cannot be exported and
        raise ModelError before anything is written).  `path` ``"-"`` writes
        standard output.  The file is written through `linsvm.atomic`: a
        temporary file in the same directory, fsync'ed and renamed over `path`;
        on failure nothing is left behind and an existing `path` is untouched.
        OSError propagates, naming `path`.
        """
        check_model_format(format, kind=self._kind, classes=self._classes)
        if format == "liblinear":
            chunks = self._liblinear_chunks(*self._liblinear_layout())
        else:
            binary = format == "linsvm-binary" or (
                format == "linsvm" and self._weights.size > BINARY_MIN_ENTRIES)
            chunks = self._linsvm_chunks(binary)
        with atomic_output(path, stdout_ok=True) as fh:
            for chunk in chunks:
                fh.write(chunk.encode("ascii") if isinstance(chunk, str) else chunk)

    def _linsvm_chunks(self, binary=False):
        """Yield the native (version 2) text of the model, in pieces (str; with
        `binary`, the weights as one little-endian float64 memoryview)."""
        head = [
            f"{FORMAT_MAGIC} {FORMAT_VERSION}",
            f"solver {self._solver}",
            f"kind {self._kind}",
            f"n_features {self._n_features}",
            f"bias {_fmt_float(self._bias)}",
            f"classes {_fmt_list(self._classes)}",
            f"n_columns {self._weights.shape[1]}",
        ]
        if self._thresholds is not None:
            head.append(f"thresholds {_fmt_list(self._thresholds)}")
        head += [f"param {k} {_fmt_typed(v)}" for k, v in self._params.items()]
        head += [f"stat {k} {_fmt_typed(v)}" for k, v in self._stats.items()]
        if binary:
            W = self._weights if sys.byteorder == "little" else self._weights.byteswap()
            raw = memoryview(np.ascontiguousarray(W)).cast("B")
            head.append(f"weights {self._weights.shape[0]} binary float64-le crc32:{zlib.crc32(raw):08x}")
            yield "\n".join(head) + "\n"
            yield raw
            yield "\nend\n"
            return
        head.append(f"weights {self._weights.shape[0]}")
        yield "\n".join(head) + "\n"
        row = " ".join(["%r"] * self._weights.shape[1]) + "\n"
        for chunk in _row_chunks(self._weights):
            text = (row * chunk.shape[0]) % tuple(chunk.ravel().tolist())
            yield _INTEGRAL_SUFFIX_RE.sub("", text)
        yield "end\n"

    def _liblinear_layout(self):
        """Return (solver_type, labels) for LIBLINEAR export, or raise ModelError.

        LIBLINEAR stores nr_w columns: 1 for two classes, nr_class otherwise,
        except MCSVM_CS which always stores nr_class.  So a one-column model is
        written with a non-CS type, a two-class two-column model as MCSVM_CS
        (the only layout that keeps both columns; LIBLINEAR then predicts by the
        sign of the first column, which equals the argmax when, as for every
        Crammer-Singer or Weston-Watkins solution, w_1 = -w_0), and k >= 3
        columns with the mapped type: dcd with loss l1 -> L2R_L1LOSS_SVC_DUAL,
        dcd l2 -> L2R_L2LOSS_SVC_DUAL, sdm-cs -> MCSVM_CS, a model read from a
        LIBLINEAR file -> its own type, anything else -> L2R_L2LOSS_SVC (the
        type does not change LIBLINEAR's prediction).
        """
        if self._kind == "ordinal":
            raise ModelError("ordinal models cannot be written in LIBLINEAR format "
                             "(LIBLINEAR has no thresholds); use the linsvm format")
        labels = []
        for c in self._classes:
            if c != math.floor(c) or not (-2**31 <= c < 2**31):
                raise ModelError(f"cannot write LIBLINEAR format: class label {_fmt_float(c)} "
                                 "is not a 32-bit integer (LIBLINEAR labels are int)")
            labels.append(int(c))
        solver = self._solver
        loss = str(self._params.get("loss", "")).lower()
        if solver.startswith("liblinear:") and solver[10:] in LIBLINEAR_CLASSIFIERS:
            name = solver[10:]
        elif solver == "dcd" and loss in ("l1", "hinge"):
            name = "L2R_L1LOSS_SVC_DUAL"
        elif solver == "dcd" and loss in ("l2", "squared_hinge"):
            name = "L2R_L2LOSS_SVC_DUAL"
        elif solver == "sdm-cs":
            name = "MCSVM_CS"
        else:
            name = "L2R_L2LOSS_SVC"
        k, n_columns = len(labels), self._weights.shape[1]
        if n_columns == 1 and k == 2 and name == "MCSVM_CS":
            name = "L2R_L2LOSS_SVC"
        elif n_columns == 2 and k == 2:
            name = "MCSVM_CS"
        return name, labels

    def _liblinear_chunks(self, solver_type, labels):
        """Yield the model as LIBLINEAR writes it ('%.17g' values, each followed by a space)."""
        bias = self._bias if self._has_bias_row else -1.0    # LIBLINEAR: bias >= 0 has a row
        yield (f"solver_type {solver_type}\n"
               f"nr_class {len(labels)}\n"
               f"label {' '.join(str(c) for c in labels)}\n"
               f"nr_feature {self._n_features}\n"
               f"bias {'%.17g' % bias}\n"
               "w\n")
        row = "%.17g " * self._weights.shape[1] + "\n"
        for chunk in _row_chunks(self._weights):
            yield (row * chunk.shape[0]) % tuple(chunk.ravel().tolist())


def _as_float_array(values, what) -> np.ndarray:
    """A fresh C-contiguous float64 copy of `values`, or ModelError."""
    if values is None:
        raise ModelError(f"{what} missing")
    try:
        return np.array(values, dtype=np.float64, order="C")
    except (TypeError, ValueError) as exc:
        raise ModelError(f"{what} must be numbers: {exc}") from None


def _fmt_list(values, sep=" ") -> str:
    return sep.join(_fmt_float(v) for v in values)


def _row_chunks(W):
    step = max(1, min(_CHUNK_ROWS, _CHUNK_ENTRIES // max(1, W.shape[1])))
    for start in range(0, W.shape[0], step):
        yield W[start:start + step]


class ScoreOverflowError(DataError):
    """A decision value is not finite; `row` (0-based) and `column` locate the first one."""

    def __init__(self, row, column, detail):
        super().__init__(f"row {row}: {detail}")
        self.row = row
        self.column = column
        self.detail = detail


def _overflow_error(scores, X) -> ScoreOverflowError:
    """The error for the first non-finite entry of `scores` (rows of X)."""
    S = scores.reshape(scores.shape[0], -1)
    row, col = (int(v) for v in np.argwhere(~np.isfinite(S))[0])
    try:
        xrow = X[row].toarray() if sp.issparse(X) else np.asarray(X[row], dtype=np.float64)
        x_finite = bool(np.isfinite(xrow).all())
    except (TypeError, ValueError):
        x_finite = True
    what = "" if S.shape[1] == 1 else f" of column {col + 1}"
    cause = ("the products of the model's weights and the example's features overflow the largest "
             "double (weights too large)" if x_finite else "the example has a non-finite feature value")
    return ScoreOverflowError(row, col, f"the decision value{what} is {float(S[row, col])!r}, "
                                        f"not finite: {cause}")


def check_model_format(format, *, kind=None, classes=None, solver=None) -> None:
    """Raise if a model of this `kind` (or trained by `solver`) with these `classes`
    cannot be written in `format`; what is not given is not checked.

    An unknown format raises ParameterError; LIBLINEAR's format cannot hold an
    ordinal model (no thresholds) or labels that are not 32-bit integers
    (ModelError).  The command line calls it before training.
    """
    if format not in MODEL_FORMATS:
        raise ParameterError(f"unknown model format {format!r} (expected one of {', '.join(MODEL_FORMATS)})")
    if format != "liblinear":
        return
    if kind is None and solver is not None and _known_solver(solver):
        kinds = _solver_kinds(solver)
        kind = kinds[0] if len(kinds) == 1 else None
    if kind == "ordinal":
        raise ModelError("ordinal models cannot be written in LIBLINEAR format "
                         "(LIBLINEAR has no thresholds); use the linsvm format")
    for c in ([] if classes is None else np.asarray(classes, dtype=np.float64).reshape(-1).tolist()):
        if c != math.floor(c) or not (-2**31 <= c < 2**31):
            raise ModelError(f"cannot write LIBLINEAR format: class label {_fmt_float(c)} "
                             "is not a 32-bit integer (LIBLINEAR labels are int)")


def _known_solver(name) -> bool:
    """True for a registered solver name or ``liblinear:<classifier solver_type>``."""
    from .solvers import SOLVERS

    if name in SOLVERS:
        return True
    return isinstance(name, str) and name.startswith("liblinear:") and name[10:] in LIBLINEAR_CLASSIFIERS


def _solver_kinds(name) -> tuple:
    """The model kinds solver `name` produces."""
    from .solvers import SOLVERS

    info = SOLVERS.get(name)
    if info is not None and info.kind == "ordinal":
        return ("ordinal",)
    return ("binary", "multiclass")


def _solver_choices() -> str:
    from .solvers import SOLVERS

    return f"expected one of {', '.join(SOLVERS)} or liblinear:<LIBLINEAR solver_type>"


# --------------------------------------------------------------------------- #
# Loading
# --------------------------------------------------------------------------- #

def load_model(path) -> Model:
    """Read a model file in linsvm (versions 1 and 2, text or binary weights) or LIBLINEAR format.

    The format is recognised by the first line (``linsvm_model <version>`` or
    LIBLINEAR's ``solver_type <NAME>``).  The file is read in chunks straight
    into the weight array, so loading needs the weights plus a buffer of about
    a megabyte, whatever the file's size.  Every field is validated; problems
    raise ``ModelError("FILE:LINE: what is wrong")``.  A LIBLINEAR file gives a
    Model with solver ``liblinear:<solver_type>``, params ``{"bias": b}``, no
    stats, kind binary (two classes, one column) or multiclass; LIBLINEAR's
    rule that ``bias >= 0`` means a bias feature is kept, so a ``bias 0`` file
    keeps its (inert) bias row.  OSError from opening/reading the file
    propagates.
    """
    path = os.fspath(path)
    with open(path, "rb") as fh:
        return _load_stream(fh, os.fsdecode(path))


def _loads(data, source: str = "<string>") -> Model:
    """Parse the bytes (or str) of a model file; `source` names it in errors."""
    if isinstance(data, str):
        data = data.encode("utf-8")
    return _load_stream(io.BytesIO(data), source)


def _load_stream(fh, source: str) -> Model:
    stream = _Stream(fh, source)
    line = stream.readline()
    if line is None:
        raise ModelError(f"{source}: empty file (not a model)")
    first = stream.text(line).split()
    if first[:1] == [FORMAT_MAGIC]:
        parser = _LinsvmParser
    elif first[:1] == ["solver_type"]:
        parser = _LiblinearParser
    else:
        raise ModelError(f"{source}:1: {_describe_foreign(first)}")
    stream.unread_first()
    return parser(stream, source).parse()


def _describe_foreign(tokens) -> str:
    """Message for a file whose first line is neither format's."""
    if not tokens:
        return "not a linsvm or LIBLINEAR model file (the first line is blank)"
    shown = " ".join(tokens)
    if len(shown) > 40:
        shown = shown[:40] + "..."
    hint = ""
    if len(tokens) >= 2 and ":" in tokens[1] and _parse_float(tokens[0]) is not None:
        hint = "; it looks like an SVM-light/LIBSVM data file"
    return (f"not a linsvm or LIBLINEAR model file (first line {shown!r}{hint}; a linsvm model "
            f"starts with '{FORMAT_MAGIC} {FORMAT_VERSION}', a LIBLINEAR model with 'solver_type')")


class _Stream:
    """A model file read in chunks: header lines, dense text rows, raw bytes.

    Keeps one buffer of about _READ_BYTES (more only for a longer line) and
    counts lines for error messages (`lineno` = lines consumed so far).
    """

    def __init__(self, fh, source):
        self.fh = fh
        self.source = source
        self.buf = b""
        self.pos = 0
        self.eof = False
        self.lineno = 0
        self.offset = 0          # file offset of buf[0]
        self.partial = False
        self.line_offset = 0

    def _more(self) -> bool:
        """Append the next chunk to the buffer (dropping what was consumed); False at EOF."""
        if self.eof:
            return False
        data = self.fh.read(_READ_BYTES)
        if not data:
            self.eof = True
            return False
        self.offset += self.pos
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def readline(self):
        """The next line without its newline (bytes), or None at the end of the file.

        A last line without a newline is returned too; `self.partial` tells.
        """
        while True:
            nl = self.buf.find(b"\n", self.pos)
            if nl >= 0:
                break
            if len(self.buf) - self.pos > _MAX_HEADER_LINE:
                raise ModelError(f"{self.source}:{self.lineno + 1}: line longer than "
                                 f"{_MAX_HEADER_LINE} bytes (not a model file?)")
            if not self._more():
                if self.pos >= len(self.buf):
                    return None
                line = self.buf[self.pos:]
                self.line_offset = self.offset + self.pos
                self.pos = len(self.buf)
                self.lineno += 1
                self.partial = True
                return line
        line = self.buf[self.pos:nl]
        self.line_offset = self.offset + self.pos
        self.pos = nl + 1
        self.lineno += 1
        self.partial = False
        return line

    def unread_first(self):
        """Put back the first line (read to recognise the format); it is still in the buffer,
        which _more only trims by what was consumed, and nothing was before it."""
        assert self.lineno == 1 and self.offset == 0
        self.lineno = 0
        self.pos = 0

    def text(self, line: bytes) -> str:
        """Decode a header line (UTF-8), or raise 'not a model file (not text...)'."""
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelError(f"{self.source}: not a model file (not text: undecodable byte at "
                             f"offset {self.line_offset + exc.start})") from None

    def text_rows(self, out: np.ndarray, n_rows: int, n_cols: int, truncated):
        """Parse the next n_rows lines as rows of n_cols numbers into out (flat, C order).

        `truncated()` returns the error for a file that ends too early.
        """
        done = 0
        while done < n_rows:
            end = self.buf.rfind(b"\n", self.pos) + 1
            if end > self.pos:
                rows, pos, status, col = _svmlight.parse_dense_rows(
                    self.buf, self.pos, end, n_cols, out, done, n_rows - done)
                if status:
                    self._row_error(pos, rows, status, col, n_cols)
                self.pos = pos
                self.lineno += rows
                done += rows
                if done == n_rows:
                    break
            if not self._more():
                if self.pos < len(self.buf):        # a last row without its newline
                    raise ModelError(f"{self.source}:{self.lineno + 1}: truncated file "
                                     "(the last line has no newline)")
                raise truncated()

    def _row_error(self, pos, rows, status, col, n_cols):
        nl = self.buf.find(b"\n", pos)
        line = self.buf[pos:nl].decode("utf-8", "replace")
        where = f"{self.source}:{self.lineno + rows + 1}"
        tokens = line.split()
        if status in (3, 4):
            raise ModelError(f"{where}: weight row has {len(tokens)} values, expected {n_cols}")
        tok = tokens[col - 1] if col - 1 < len(tokens) else line.strip()
        if len(tok) > 40:
            tok = tok[:40] + "..."
        if status == 2:
            raise ModelError(f"{where}: weight {tok!r} out of range (overflows to infinity)")
        if tok.lower().lstrip("+-") in ("inf", "infinity", "nan"):
            raise ModelError(f"{where}: weight {tok!r} is not finite")
        raise ModelError(f"{where}: weight {tok!r} is not a number")

    def read_into(self, view: memoryview) -> int:
        """Fill the byte view from the file; return the number of bytes read (short at EOF)."""
        n = len(view)
        have = min(n, len(self.buf) - self.pos)
        view[:have] = self.buf[self.pos:self.pos + have]
        self.pos += have
        got = have
        while got < n:
            k = self.fh.readinto(view[got:])
            if not k:
                self.eof = True
                break
            got += k
        if got > have:
            # the buffer is exhausted; continue reading after the raw bytes
            self.offset += len(self.buf) + (got - have)
            self.buf, self.pos = b"", 0
        return got


class _Parser:
    """Shared pieces of the two readers: errors with locations, header values, weights."""

    def __init__(self, stream: _Stream, source):
        self.stream = stream
        self.source = source

    def error(self, i: int, msg: str) -> ModelError:
        """ModelError located at 0-based line index `i`."""
        return ModelError(f"{self.source}:{i + 1}: {msg}")

    def file_error(self, msg: str) -> ModelError:
        return ModelError(f"{self.source}: {msg}")

    def header_line(self, what_missing):
        """(0-based index, str) of the next header line; errors for EOF and truncation."""
        s = self.stream
        line = s.readline()
        if line is None:
            raise self.file_error(what_missing(s.lineno))
        text = s.text(line)
        if s.partial:
            raise self.error(s.lineno - 1, "truncated file (the last line has no newline)")
        bad = _HEADER_BAD_CHAR_RE.search(text[:-1] if text.endswith("\r") else text)
        if bad:
            raise self.error(s.lineno - 1, f"character {bad.group()!r} in a header line (the header is "
                                           "printable ASCII; tokens are separated by spaces or tabs)")
        return s.lineno - 1, text

    def build(self, **fields) -> Model:
        """Construct the Model; its consistency errors get the file name."""
        try:
            return Model(**fields, _copy=False)
        except ModelError as exc:
            raise self.file_error(str(exc)) from None

    def one_token(self, i, toks, what):
        if len(toks) != 2:
            raise self.error(i, f"'{toks[0]}' takes exactly one value ({what}), got {len(toks) - 1}")
        return toks[1]

    def count(self, i, toks, what, minimum):
        tok = self.one_token(i, toks, what)
        v = _parse_int(tok)
        if v is None or v < minimum:
            raise self.error(i, f"bad {toks[0]} {tok!r} (expected {what})")
        return v

    def number(self, i, toks, what):
        tok = self.one_token(i, toks, what)
        v = _parse_float(tok)
        if v is None:
            raise self.error(i, f"bad {toks[0]} {tok!r} (expected {what})")
        return v

    def allocate(self, n_rows, n_columns) -> np.ndarray:
        """The (n_rows, n_columns) weight array, or a located error if it cannot exist."""
        try:
            return np.empty((n_rows, n_columns), dtype=np.float64)
        except (MemoryError, ValueError) as exc:
            raise self.file_error(f"cannot hold {n_rows} x {n_columns} weights "
                                  f"({8.0 * n_rows * n_columns / 2**30:.3g} GiB): "
                                  f"{'out of memory' if isinstance(exc, MemoryError) else exc}") from None


class _LinsvmParser(_Parser):
    """Reader of the native format (see the module docstring)."""

    SINGLE_KEYS = ("solver", "kind", "n_features", "bias", "classes", "n_columns", "thresholds")
    REQUIRED = ("solver", "kind", "n_features", "bias", "classes", "n_columns")

    def parse(self) -> Model:
        i, line = self.header_line(lambda n: "empty file (not a model)")
        magic = line.split()
        if len(magic) != 2 or _parse_int(magic[1]) is None:
            raise self.error(0, f"bad first line {line.strip()!r} "
                                f"(expected '{FORMAT_MAGIC} {FORMAT_VERSION}')")
        version = int(magic[1])
        if version not in READ_VERSIONS:
            raise self.error(0, f"unsupported linsvm model format version {magic[1]} "
                                f"(this linsvm reads versions {', '.join(map(str, READ_VERSIONS))})")
        seen = {}
        values = {}
        params, stats = {}, {}
        group_line = {"param": {}, "stat": {}}
        while True:
            i, line = self.header_line(
                lambda n: f"truncated file: the header has no 'weights' line (file ends after line {n})")
            toks = line.split()
            if not toks:
                raise self.error(i, "blank line in the header")
            key = toks[0]
            if key == "weights":
                break
            if key in ("param", "stat"):
                parts = line.split(None, 3)
                if len(parts) < 3:
                    raise self.error(i, f"'{key}' needs a name and a type: '{key} NAME TYPE [VALUE]'")
                name, typ = parts[1], parts[2]
                if not _NAME_RE.match(name):
                    raise self.error(i, f"bad {key} name {name!r}")
                if name in group_line[key]:
                    raise self.error(i, f"duplicate {key} {name!r} (first on line {group_line[key][name] + 1})")
                value, msg = _parse_typed(typ, parts[3] if len(parts) > 3 else None)
                if msg:
                    raise self.error(i, f"{key} {name}: {msg}")
                group_line[key][name] = i
                (params if key == "param" else stats)[name] = value
            elif key in self.SINGLE_KEYS:
                if key in seen:
                    raise self.error(i, f"duplicate '{key}' line (first on line {seen[key] + 1})")
                seen[key] = i
                values[key] = self.header_value(i, toks)
            else:
                raise self.error(i, f"unknown key {key!r} in the model header")

        for key in self.REQUIRED:
            if key not in values:
                raise self.error(i, f"the header has no '{key}' line")
        kind = values["kind"]
        if (kind == "ordinal") != ("thresholds" in values):
            if kind == "ordinal":
                raise self.error(i, "an ordinal model needs a 'thresholds' line in the header")
            raise self.error(seen["thresholds"], f"only ordinal models have thresholds (this one is {kind})")
        solver = values["solver"]
        if not _known_solver(solver):
            raise self.error(seen["solver"], f"unknown solver {solver!r} ({_solver_choices()})")
        expected_kinds = _solver_kinds(solver)
        if kind not in expected_kinds:
            raise self.error(seen["kind"], f"solver {solver} makes {' or '.join(expected_kinds)} models, "
                                           f"not {kind}")
        toks = line.split()
        binary = len(toks) > 2
        if binary:
            n_rows, crc = self.binary_header(i, toks, version)
        else:
            n_rows = self.count(i, toks, "the number of weight rows", 0)
        bias = values["bias"]
        n_features = values["n_features"]
        expect = [n_features + 1] if bias > 0 else [n_features] if bias < 0 else [n_features, n_features + 1]
        if n_rows not in expect:
            need = " or ".join(map(str, expect))
            raise self.error(i, f"weights has {n_rows} rows but n_features {n_features} and bias "
                                f"{_fmt_float(bias)} need {need}")
        n_columns = values["n_columns"]
        W = self.allocate(n_rows, n_columns)
        if binary:
            self.binary_rows(i, W, crc)
        else:
            self.stream.text_rows(W.reshape(-1), n_rows, n_columns, lambda: self.file_error(
                f"truncated file: expected {n_rows} weight rows after line {i + 1} and an 'end' line, "
                f"the file ends after line {self.stream.lineno}"))
        s = self.stream
        end_line = s.readline()
        if end_line is None:
            raise self.file_error(f"truncated file: expected {n_rows} weight rows after line {i + 1} "
                                  f"and an 'end' line, the file ends after line {s.lineno}")
        if end_line.split() != [b"end"]:
            shown = end_line.decode("utf-8", "replace").strip()[:40]
            raise self.error(s.lineno - 1, f"expected 'end' after the {n_rows} weight rows, found {shown!r}")
        if s.partial:
            raise self.error(s.lineno - 1, "truncated file (the last line has no newline)")
        if s.readline() is not None:
            raise self.error(s.lineno - 1, "unexpected content after 'end'")
        return self.build(solver=solver, classes=values["classes"], weights=W, bias=bias,
                          params=params, stats=stats, kind=kind, thresholds=values.get("thresholds"),
                          n_features=n_features)

    def binary_header(self, i, toks, version):
        """(n_rows, crc32) of 'weights R binary float64-le crc32:XXXXXXXX', or a located error."""
        if version < 2:
            raise self.error(i, f"binary weights need model format version 2 (this file says {version})")
        if len(toks) != 5 or toks[2] != "binary" or toks[3] != "float64-le" \
                or not re.fullmatch(r"crc32:[0-9a-f]{8}", toks[4]):
            raise self.error(i, "bad weights line (expected 'weights ROWS' or "
                                "'weights ROWS binary float64-le crc32:XXXXXXXX')")
        n_rows = _parse_int(toks[1])
        if n_rows is None or n_rows < 0:
            raise self.error(i, f"bad weights {toks[1]!r} (expected the number of weight rows)")
        return n_rows, int(toks[4][6:], 16)

    def binary_rows(self, i, W, crc):
        """Read the raw little-endian float64 weights after line i+1 into W and check them."""
        s = self.stream
        raw = W.reshape(-1).view(np.uint8)
        n = raw.size
        got = s.read_into(memoryview(raw))
        if got < n:
            raise self.file_error(f"truncated file: the binary weights after line {i + 1} need {n} bytes, "
                                  f"the file has {got}")
        actual = zlib.crc32(memoryview(raw))
        if actual != crc:
            raise self.file_error(f"corrupt binary weights after line {i + 1} (crc32 {actual:08x}, "
                                  f"the header says {crc:08x})")
        if sys.byteorder != "little":
            W.byteswap(inplace=True)
        bad = ~np.isfinite(W)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise self.file_error(f"binary weights after line {i + 1}: row {r + 1}, column {c + 1} "
                                  "is not finite")
        sep = s.readline()
        if sep != b"" or s.partial:
            raise self.file_error(f"truncated or corrupt file: a newline must follow the {n} bytes "
                                  f"of binary weights after line {i + 1}")
        s.lineno = i + 2                    # the raw bytes and their newline count as one line

    def header_value(self, i, toks):
        """Parse the value of a single-valued header key."""
        key = toks[0]
        if key == "solver":
            tok = self.one_token(i, toks, "a solver name")
            if not _TOKEN_RE.match(tok):
                raise self.error(i, f"bad solver name {tok!r}")
            return tok
        if key == "kind":
            tok = self.one_token(i, toks, " or ".join(KINDS))
            if tok not in KINDS:
                raise self.error(i, f"unknown model kind {tok!r} (expected {', '.join(KINDS)})")
            return tok
        if key == "n_features":
            return self.count(i, toks, "an integer >= 0", 0)
        if key == "n_columns":
            return self.count(i, toks, "an integer >= 1", 1)
        if key == "bias":
            return self.number(i, toks, "a finite number")
        # classes, thresholds: lists of finite numbers
        if len(toks) < 2:
            raise self.error(i, f"'{key}' needs at least one value")
        out = []
        for tok in toks[1:]:
            v = _parse_float(tok)
            if v is None:
                raise self.error(i, f"bad value {tok!r} in '{key}' (expected a finite number)")
            out.append(v)
        if key == "classes" and len(set(out)) != len(out):
            raise self.error(i, "duplicate class label in 'classes'")
        if key == "thresholds" and any(b < a for a, b in zip(out, out[1:])):
            raise self.error(i, "thresholds must be ascending")
        return out


class _LiblinearParser(_Parser):
    """Reader of LIBLINEAR's model files (header keys, then 'w' and one row per feature)."""

    REQUIRED = ("solver_type", "nr_class", "label", "nr_feature", "bias")

    def parse(self) -> Model:
        seen = {}
        values = {}
        while True:
            i, line = self.header_line(
                lambda n: f"truncated file: the LIBLINEAR header has no 'w' line (file ends after line {n})")
            toks = line.split()
            if not toks:
                raise self.error(i, "blank line in the header")
            key = toks[0]
            if key == "w":
                if len(toks) != 1:
                    raise self.error(i, "'w' takes no value")
                break
            if key in seen:
                raise self.error(i, f"duplicate '{key}' line (first on line {seen[key] + 1})")
            seen[key] = i
            if key == "solver_type":
                name = self.one_token(i, toks, "a LIBLINEAR solver name")
                if name in LIBLINEAR_OTHERS:
                    raise self.error(i, f"LIBLINEAR {name} is a regression or one-class model; "
                                        "linsvm reads classification models only")
                if name not in LIBLINEAR_CLASSIFIERS:
                    raise self.error(i, f"unknown LIBLINEAR solver_type {name!r}")
                values[key] = name
            elif key == "nr_class":
                values[key] = self.count(i, toks, "an integer >= 1", 1)
            elif key == "nr_feature":
                values[key] = self.count(i, toks, "an integer >= 0", 0)
            elif key == "bias":
                values[key] = self.number(i, toks, "a finite number")
            elif key == "label":
                labels = [_parse_int(t) for t in toks[1:]]
                if not labels or None in labels:
                    raise self.error(i, "'label' needs integer class labels")
                if len(set(labels)) != len(labels):
                    raise self.error(i, "duplicate class label in 'label'")
                values[key] = labels
            elif key == "rho":
                raise self.error(i, "'rho' belongs to one-class models, which linsvm does not read")
            elif _parse_float(key, finite=False) is not None:
                raise self.error(i, "a number where a header key belongs (no 'w' line before the weights?)")
            else:
                raise self.error(i, f"unknown key {key!r} in the LIBLINEAR model header")

        for key in self.REQUIRED:
            if key not in values:
                raise self.error(i, f"the LIBLINEAR header has no '{key}' line")
        k = values["nr_class"]
        labels = values["label"]
        if len(labels) != k:
            raise self.error(seen["label"], f"'label' lists {len(labels)} classes but nr_class is {k}")
        name = values["solver_type"]
        n_columns = 1 if (k == 2 and name != "MCSVM_CS") else k
        bias = values["bias"]
        n_features = values["nr_feature"]
        n_rows = n_features + (1 if bias >= 0 else 0)       # LIBLINEAR: bias >= 0 adds a feature
        W = self.allocate(n_rows, n_columns)
        s = self.stream
        s.text_rows(W.reshape(-1), n_rows, n_columns, lambda: self.file_error(
            f"truncated file: expected {n_rows} weight rows after 'w' on line {i + 1}, "
            f"found {s.lineno - i - 1}"))
        if s.readline() is not None:
            raise self.error(s.lineno - 1, f"unexpected content after the {n_rows} weight rows")
        return self.build(solver=f"liblinear:{name}", classes=labels, weights=W, bias=bias,
                          params={"bias": bias}, stats={}, n_features=n_features,
                          kind="binary" if (k == 2 and n_columns == 1) else "multiclass")
