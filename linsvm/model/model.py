"""The trained model: decision values, predictions, saving and loading.

A linear model scores an example ``x`` (a row of the data, features numbered
from 0 here, from 1 in files) with one column ``w`` of the weight matrix::

    score(x) = sum_j x[j] * w[j]   (+ bias * w[n_features]   when bias > 0)

which is LIBLINEAR's convention: with ``-B b > 0`` every example carries an
extra constant feature of value ``b`` whose weight is stored as the last row
and regularized like the others.  The model's kind (linsvm.problem.kinds:
binary, multiclass, ordinal) says what its scores predict and what shape it has.

Files
-----
``Model.save(path, format=...)`` and `load_model` are the entry points; the
formats live in their own modules:

* `linsvm.model.format_linsvm`: linsvm's format (the default; version 2, a
  self-describing header, then the weights as text or as raw float64, read
  back bit for bit; version 3 for models with probability sigmoids, which
  add ``probA`` / ``probB`` header lines; versions 1 to 3 are read);
* `linsvm.model.format_liblinear`: LIBLINEAR's own format (readable by LIBLINEAR's
  ``predict`` and ``liblinearutil.load_model``; the solver_type written is
  derived from the solver catalog's LIBLINEAR codes);
* `linsvm.model.tokens`: what both share (number tokens, the chunked reader).

``load_model`` reads both formats, telling them apart by the first line.

Saving is atomic (`linsvm.io.atomic`, the one writer of every file linsvm
writes): the file is written to an unnamed (O_TMPFILE) or hidden temporary
file in the target's directory, flushed, fsync'ed and renamed over the
target; on any failure nothing is left behind and an existing target is
untouched.

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
import math
import numbers
import os
import sys

import numpy as np

from .. import _kernels
from .._data import DataView
from ..errors import DataError, ModelError, ParameterError
from ..io.atomic import atomic_output
from ..problem.csr import CSRBuffers, take_rows
from ..problem.kinds import KINDS, get_kind
from . import format_liblinear, format_linsvm, sigmoid
from .logistic_proba import logistic_link, logistic_proba
from .format_linsvm import FORMAT_MAGIC, FORMAT_VERSION
from .format_linsvm import known_solver as _known_solver
from .format_linsvm import solver_choices as _solver_choices
from .format_linsvm import solver_kinds as _solver_kinds
from .formats import MODEL_FORMATS
from .tokens import TOKEN_RE, Stream, fmt_float, fmt_list, parse_float
from .values import (ScoreOverflowError, as_float_array, check_offset, check_probability,
                     clean_values, overflow_error)

__all__ = ["Model", "load_model", "FORMAT_VERSION", "KINDS", "MODEL_FORMATS", "check_model_format",
           "ScoreOverflowError"]


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
    kind : {"binary", "multiclass", "ordinal", "regression", "oneclass"}, optional
        Inferred when omitted: ordinal if `thresholds` is given, binary for two
        classes and one column, multiclass otherwise (a regression model, with no
        classes, must say so).
    thresholds : sequence of float, optional
        Ordinal models only: ``len(classes) - 1`` finite, non-decreasing values.
    probability : array of shape (n_sigmoids, 2), optional
        Platt sigmoids (A, B) for `predict_proba` (`linsvm.model.sigmoid`; fitted by
        `linsvm.fit.calibration.calibrate`): one row for a two-class model, the
        probability of ``classes_[0]`` being ``1 / (1 + exp(A f + B))`` with f
        the score of ``classes_[0]`` (column 0 minus column 1 for a two-column
        model); for k > 2 classes one row per class column, the k sigmoids of a
        row normalised to sum to 1.  Finite; not for ordinal models.
    n_features : int, optional
        Default ``n_rows - (1 if bias > 0 else 0)``.  Given, it says whether
        the last row is a bias row; that is how a model with ``bias == 0`` and
        a bias row (LIBLINEAR's ``-B 0``: a constant feature of value 0) is
        built.  With ``bias > 0`` it must be ``n_rows - 1``, with ``bias < 0``
        ``n_rows``.
    offset : float, optional
        A constant added to every decision value: -rho for a one-class model
        (LIBLINEAR's rho), the mean target a regression solver subtracted
        (svr-dual's centering); 0 otherwise.

    Weights whose size makes every prediction overflow are refused: the
    bias row's contribution ``bias * w`` must be finite (the rest of a score
    depends on the example; `decision_function` reports those that overflow).

    Raises ``ModelError`` when the pieces are inconsistent.

    A model read by `load_model` has ``source``, the file's name (else None), which
    errors about the model (decision values that overflow, a warm start that
    cannot be used) name.
    """

    source = None           # the file a loaded model came from, for messages

    def __init__(self, *, solver, classes, weights, bias, params, stats=None,
                 kind=None, thresholds=None, n_features=None, probability=None, offset=0.0,
                 _copy=True):
        if not isinstance(solver, str) or not TOKEN_RE.match(solver):
            raise ModelError(f"bad solver name {solver!r} (one token of printable ASCII expected)")
        if not _known_solver(solver):
            raise ModelError(f"unknown solver {solver!r} ({_solver_choices()})")
        classes = as_float_array(classes, "classes").reshape(-1)
        if classes.size == 0 and kind != "regression":
            raise ModelError("a model needs at least one class")
        if not np.isfinite(classes).all():
            raise ModelError("class labels must be finite")
        if len(set(classes.tolist())) != classes.size:
            raise ModelError(f"class labels must be distinct, got {fmt_list(classes)}")
        if _copy:
            W = as_float_array(weights, "weights")
        else:           # the loader's fresh array: no second copy of a large model
            W = weights
        if W.ndim != 2 or W.shape[1] < 1:
            raise ModelError(f"weights must be a 2-D array (n_rows, n_columns >= 1), got shape {W.shape}")
        if not _kernels.all_finite(np.ascontiguousarray(W)):
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
                                 f"{fmt_float(bias)} need {' or '.join(map(str, allowed))}")
        has_bias_row = W.shape[0] == n_features + 1
        if has_bias_row and bias != 0:
            with np.errstate(over="ignore", invalid="ignore"):
                over = ~np.isfinite(bias * W[-1])
            if over.any():
                j = int(np.argmax(over))
                raise ModelError(f"bias {fmt_float(bias)} times the bias weight {fmt_float(W[-1, j])} of "
                                 f"column {j + 1} overflows: every decision value would be infinite")
        n_columns = W.shape[1]
        k = classes.size
        if thresholds is not None:
            thresholds = as_float_array(thresholds, "thresholds").reshape(-1)
        if kind is None:
            kind = ("ordinal" if thresholds is not None
                    else "binary" if (k == 2 and n_columns == 1) else "multiclass")
        get_kind(kind).check_model(k, n_columns, thresholds)
        if kind not in _solver_kinds(solver):
            raise ModelError(f"solver {solver} makes {' or '.join(_solver_kinds(solver))} models, not {kind}")
        params = clean_values(params, "param")
        stats = clean_values(stats, "stat")
        pb = params.get("bias")
        if isinstance(pb, (int, float)) and not isinstance(pb, bool) and float(pb) != bias:
            raise ModelError(f"params['bias'] = {pb!r} disagrees with the model's bias {fmt_float(bias)}")

        probability = check_probability(probability, kind, k)
        offset = check_offset(offset)
        self._set(solver, kind, classes, W, bias, thresholds, params, stats, n_features, probability,
                  offset)

    def _set(self, solver, kind, classes, W, bias, thresholds, params, stats, n_features=None,
             probability=None, offset=0.0):
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
        if probability is not None:
            probability.flags.writeable = False
        self._probability = probability
        self._offset = offset

    @classmethod
    def _from_training(cls, *, solver, classes, weights, bias, params, stats, kind,
                       thresholds=None, offset=0.0):
        """The model train() returns, from pieces it has already checked and that
        nothing else holds: solver is a registered name, classes a fresh float64
        array of distinct finite labels in model order, weights a fresh contiguous
        (n_weights, n_columns) float64 array of the right shape for kind, bias a
        float, params a fresh dict of checked options (plain Python values); all
        are kept without copies.  Only what a solver produced is checked again
        here: the weights must be finite (otherwise the full constructor raises its
        error) and stats are normalized as in __init__."""
        if thresholds is not None or offset != 0 or not _kernels.all_finite(weights):
            return cls(solver=solver, classes=classes, weights=weights, bias=bias,
                       params=params, stats=stats, kind=kind, thresholds=thresholds, offset=offset)
        self = cls.__new__(cls)
        self._set(solver, kind, classes, weights, bias, None, params, clean_values(stats, "stat"))
        return self

    # ----------------------------------------------------------------- properties
    @property
    def solver(self) -> str:
        """Name of the solver that trained the model."""
        return self._solver

    @property
    def kind(self) -> str:
        """``"binary"``, ``"multiclass"``, ``"ordinal"``, ``"regression"`` or ``"oneclass"``."""
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
        """(n_columns,) array: ``bias * weights[-1]`` when bias > 0, else zeros, plus the
        offset."""
        out = self._bias * self._weights[-1] if self._bias > 0 else np.zeros(self._weights.shape[1])
        return out + self._offset if self._offset != 0 else out

    @property
    def offset_(self) -> float:
        """The constant added to every decision value (one-class: -rho; see the class
        docstring); 0.0 for most models."""
        return self._offset

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
    def probability_(self) -> np.ndarray | None:
        """Read-only (n_sigmoids, 2) array of Platt sigmoids (A, B) (see the class
        docstring), or None for a model without probabilities."""
        return self._probability

    def with_probability(self, probability) -> "Model":
        """A copy of this model (sharing its read-only arrays) carrying the sigmoids
        `probability` ((n_sigmoids, 2), see the class docstring), or none with None."""
        probability = check_probability(probability, self._kind, self._classes.size)
        new = type(self).__new__(type(self))
        new._set(self._solver, self._kind, self._classes, self._weights, self._bias, self._thresholds,
                 dict(self._params), dict(self._stats), self._n_features, probability, self._offset)
        return new

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
                f"n_features={self._n_features}, classes=[{fmt_list(self._classes, ', ')}], "
                f"bias={fmt_float(self._bias)})")

    # ----------------------------------------------------------------- prediction
    def decision_function(self, X, rows=None) -> np.ndarray:
        """Scores ``X @ W[:n_features] + bias * W[-1]`` (bias term only when bias > 0).

        `X` is a scipy sparse matrix/array, a dense 2-D array of shape
        (n_samples, m), or a linsvm.problem.csr.CSRBuffers (scored by a compiled
        kernel, the same values as scipy's product, without importing scipy).  Features beyond the model's width (column index >=
        n_features_) are ignored, and a narrower X simply has no value for the
        remaining features.  Returns shape (n_samples,) for a one-column model
        (binary, ordinal) and (n_samples, n_columns) otherwise.

        A decision value that is not finite (a product of a weight and a feature,
        their sum or the bias term overflows the largest double) raises
        `ScoreOverflowError` (a DataError) naming the first such row (`row`
        attribute, 0-based) and the largest weight and feature involved, instead
        of handing on ``inf``/``nan`` scores that would label the row anyway; NumPy
        warns of nothing.

        `rows` (row numbers): the scores of ``X[rows]``, a CSRBuffers's read in place.
        """
        W = self._weights
        n = self._n_features
        one = W.shape[1] == 1
        if rows is not None and not isinstance(X, CSRBuffers):
            return self.decision_function(X[np.asarray(rows)])
        if isinstance(X, CSRBuffers):
            scores = _kernels.csr_scores(DataView(X, max(self._bias, 0.0), rows), W)
            scores = scores[:, 0] if one else scores
            if self._offset != 0:
                with np.errstate(all="ignore"):     # an overflow is reported below, in one line
                    scores = scores + self._offset
            if not _kernels.all_finite(scores.reshape(-1)):
                raise overflow_error(scores, X if rows is None else take_rows(X, rows), W[:n],
                                     W[-1] if self._bias > 0 else None, self._bias)
            return scores
        sp = _scipy_sparse(X)
        if sp is not None:
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
            with np.errstate(all="ignore"):         # an overflow is reported below, in one line
                scores = np.asarray(X @ Wm, dtype=np.float64)
        else:
            X = np.asarray(X)
            if X.ndim != 2:
                raise DataError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}")
            if not (np.issubdtype(X.dtype, np.number) or X.dtype == np.bool_):
                raise DataError(f"X must be numeric, got dtype {X.dtype}")
            m = min(X.shape[1], n)
            Wm = W[:m, 0] if one else W[:m]
            with np.errstate(all="ignore"):         # an overflow is reported below, in one line
                scores = X[:, :m].astype(np.float64, copy=False) @ Wm
        if self._bias > 0:
            with np.errstate(all="ignore"):
                scores = scores + (W[-1, 0] if one else W[-1]) * self._bias
        if self._offset != 0:
            with np.errstate(all="ignore"):
                scores = scores + self._offset
        if not _kernels.all_finite(scores.reshape(-1)):
            raise overflow_error(scores, X, W[:m], W[-1] if self._bias > 0 else None, self._bias)
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
        return get_kind(self._kind).predict(s, self._classes, self._thresholds)

    def predict_proba(self, X) -> np.ndarray:
        """Class probabilities (n_samples, len(classes_)), columns in the order of
        classes_, rows summing to 1: from the Platt sigmoids of `probability_`, else from a
        logistic model's own link (`link_`); ModelError when it has neither."""
        return self.proba_from_scores(self.decision_function(X))

    @property
    def link_(self):
        """A logistic model's link ("binary", "ovr", "softmax"; logistic_proba), or None."""
        return logistic_link(self._solver, self._kind, self._weights.shape[1])

    def proba_from_scores(self, scores) -> np.ndarray:
        """`predict_proba` for decision values as `decision_function` returns them."""
        if self._probability is None and self.link_ is not None:
            return logistic_proba(scores, self.link_)
        if self._probability is None:
            raise ModelError("this model has no probability sigmoids (train it with -b 1 / "
                             "--probability, or linsvm.fit.calibrate)")
        s = np.asarray(scores, dtype=np.float64)
        with np.errstate(over="ignore"):    # huge scores: A f + B is +-inf, a probability 0 or 1
            if self._classes.size == 2:
                f = s[:, 0] - s[:, 1] if (s.ndim == 2 and s.shape[1] == 2) else s.reshape(-1)
                A, B = self._probability[0]
                p0 = sigmoid.sigmoid_proba(f, A, B)
                return np.column_stack([p0, 1.0 - p0])
            return sigmoid.multiclass_proba(s, self._probability)

    # ----------------------------------------------------------------- saving
    def save(self, path, format: str = "linsvm") -> None:
        """Write the model to `path` atomically.

        `format` is one of `MODEL_FORMATS`: ``"linsvm"`` (the native format,
        lossless: every field and float reads back exactly; its weights are text
        for models of at most BINARY_MIN_ENTRIES = 2**20 weights and binary
        float64 above, the size of LIBLINEAR's file or smaller),
        ``"linsvm-text"`` and ``"linsvm-binary"`` (the native format with text
        or binary weights whatever the size) or ``"liblinear"`` (LIBLINEAR's
        model file, for its ``predict``; see `linsvm.model.format_liblinear.layout` for
        the mapping; ordinal models and non-integer labels cannot be exported and
        raise ModelError before anything is written).  `path` ``"-"`` writes
        standard output.  The file is written through `linsvm.io.atomic`: a
        temporary file in the same directory, fsync'ed and renamed over `path`;
        on failure nothing is left behind and an existing `path` is untouched.
        OSError propagates, naming `path`.
        """
        check_model_format(format, kind=self._kind, classes=self._classes,
                           probability=self._probability is not None)
        if format == "liblinear":
            chunks = format_liblinear.chunks(self, *format_liblinear.layout(self))
        else:
            chunks = self._linsvm_chunks(format_linsvm.binary_weights(format, self._weights.size))
        with atomic_output(path, stdout_ok=True) as fh:
            for chunk in chunks:
                fh.write(chunk.encode("ascii") if isinstance(chunk, str) else chunk)

    def _linsvm_chunks(self, binary=False):
        """The model in linsvm's format, in pieces (`linsvm.model.format_linsvm.chunks`)."""
        return format_linsvm.chunks(self, binary)


def _scipy_sparse(X):
    """scipy.sparse when X is one of its matrices, else None; scipy is not imported for
    this (a caller holding a scipy matrix has imported it already)."""
    sp = sys.modules.get("scipy.sparse")
    return sp if sp is not None and sp.issparse(X) else None


def check_model_format(format, *, kind=None, classes=None, solver=None, probability=False) -> None:
    """Raise if a model of this `kind` (or trained by `solver`) with these `classes`
    cannot be written in `format`; what is not given is not checked.

    An unknown format raises ParameterError; LIBLINEAR's format cannot hold an
    ordinal model (no thresholds) or labels that are not 32-bit integers
    (ModelError), nor probability sigmoids (`probability` true; ModelError: LIBLINEAR's
    SVM models have no probability section, and dropping the sigmoids silently would
    lose what -b 1 asked for).  The command line calls it before training.
    """
    if format not in MODEL_FORMATS:
        raise ParameterError(f"unknown model format {format!r} (expected one of {', '.join(MODEL_FORMATS)})")
    if format != "liblinear":
        return
    format_liblinear.check_solver(solver)
    if probability:
        raise ModelError("LIBLINEAR's model format has no place for probability sigmoids (-b 1): "
                         "save in linsvm's format, or drop them with model.with_probability(None)")
    if kind is None and solver is not None and _known_solver(solver):
        kinds = _solver_kinds(solver)
        kind = kinds[0] if len(kinds) == 1 else None
    format_liblinear.int_labels(kind, classes)


# --------------------------------------------------------------------------- #
# Loading
# --------------------------------------------------------------------------- #

def load_model(path) -> Model:
    """Read a model file in linsvm (versions 1 to 3, text or binary weights) or LIBLINEAR format.

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
    """Read a model from the binary file object `fh`, telling the formats apart by the
    first line; `source` names the file in errors."""
    stream = Stream(fh, source)
    line = stream.readline()
    if line is None:
        raise ModelError(f"{source}: empty file (not a model)")
    first = stream.text(line).split()
    if first[:1] == [FORMAT_MAGIC]:
        parser = format_linsvm._LinsvmParser
    elif first[:1] == ["solver_type"]:
        parser = format_liblinear._LiblinearParser
    else:
        raise ModelError(f"{source}:1: {_describe_foreign(first)}")
    stream.unread_first()
    fields = parser(stream, source).parse()
    try:
        model = Model(**fields, _copy=False)    # the parser's fresh array: no second copy
    except ModelError as exc:                   # its consistency errors get the file name
        raise ModelError(f"{source}: {exc}") from None
    model.source = source
    return model


def _describe_foreign(tokens) -> str:
    """Message for a file whose first line is neither format's."""
    if not tokens:
        return "not a linsvm or LIBLINEAR model file (the first line is blank)"
    shown = " ".join(tokens)
    if len(shown) > 40:
        shown = shown[:40] + "..."
    hint = ""
    if len(tokens) >= 2 and ":" in tokens[1] and parse_float(tokens[0]) is not None:
        hint = "; it looks like an SVM-light/LIBSVM data file"
    return (f"not a linsvm or LIBLINEAR model file (first line {shown!r}{hint}; a linsvm model "
            f"starts with '{FORMAT_MAGIC} {FORMAT_VERSION}', a LIBLINEAR model with 'solver_type')")

