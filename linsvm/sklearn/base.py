"""What linsvm's scikit-learn estimators share: input validation, the options for
linsvm.train, progress lines (`verbose`), warnings attributed to the caller of fit,
warm starts, and linear predictions from `coef_` / `intercept_`.

Predictions follow the attributes, as in scikit-learn's linear models: every
estimator scores ``X @ coef_.T + intercept_`` from its own `coef_` and `intercept_`,
so a user who edits them (or calls `sparsify`, which stores `coef_` as a scipy CSR
matrix) sees the change in decision_function, predict, predict_proba and score.
`model_` is the linsvm.Model as trained (its statistics, warnings, probability
sigmoids) carrying the user's labels: the estimators train on class codes (-1/+1,
0..k-1, ranks 0..k-1), and `user_labelled` puts classes_ in their place, so that
``model_.save(path)`` writes a model linsvm-predict prints the user's labels from.
Labels that are not numbers (strings) cannot be held by a model file: model_ then
keeps the codes.  Warm starts continue from the coded model the solver returned.
"""
from __future__ import annotations

import numbers
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.utils import check_random_state
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, _check_y, check_is_fitted

from .. import _kernels
from .._data import DataView
from ..errors import warn as emit_warning
from ..fit.reporting import collecting_warnings
from ..fit.training import train
from ..model.model import Model
from ..model.values import overflow_error
from ..problem.csr import CSRBuffers
from ..problem.catalog import SOLVERS, get_solver

try:                                     # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _sk_validate_data
except ImportError:                      # pragma: no cover - older scikit-learn
    def _sk_validate_data(estimator, X="no_validation", y="no_validation", reset=True, **kw):
        return estimator._validate_data(X, y, reset=reset, **kw)


def validate_data(estimator, X="no_validation", y="no_validation", reset=True, **kw):
    """scikit-learn's validate_data, which also takes linsvm's own CSRBuffers as X (any
    value layout: a binary data file's rows, say), passed on as it is, unconverted: its
    width is checked against n_features_in_ (or sets it), y is checked as scikit-learn
    checks it, one label per row."""
    if not isinstance(X, CSRBuffers):
        return _sk_validate_data(estimator, X, y, reset=reset, **kw)
    if reset:
        estimator.n_features_in_ = X.n_features
        if hasattr(estimator, "feature_names_in_"):
            del estimator.feature_names_in_
    elif X.n_features != estimator.n_features_in_:
        raise ValueError(f"X has {X.n_features} features, but {type(estimator).__name__} is "
                         f"expecting {estimator.n_features_in_} features as input.")
    if isinstance(y, str) and y == "no_validation":
        return X
    y = _check_y(y, y_numeric=kw.get("y_numeric", False), estimator=estimator)
    if y.shape[0] != X.n_rows:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: "
                         f"[{X.n_rows}, {y.shape[0]}]")
    return X, y

__all__ = ["ACCEPT_SPARSE", "LinsvmEstimator", "LinearPredictorMixin", "as_csr", "check_sample_weight",
           "reemit", "seed_of", "stderr_log", "user_labelled", "validate_data"]

ACCEPT_SPARSE = ("csr", "csc", "coo")


def seed_of(random_state):
    """linsvm's integer seed from scikit-learn's random_state (None: 0)."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def as_csr(X):
    """X as CSR when it is sparse in another format; dense X unchanged."""
    return X.tocsr() if sp.issparse(X) and X.format != "csr" else X


def check_sample_weight(sample_weight, X):
    """scikit-learn's checked float64 sample weights, or None."""
    return None if sample_weight is None else _check_sample_weight(sample_weight, X, dtype=np.float64)


def stderr_log(line):
    """`verbose > 0`: one progress line to stderr, as linsvm-train prints it."""
    print(line, file=sys.stderr, flush=True)


def reemit(sink, prefix=""):
    """Emit collected (message, is_convergence) records as warnings attributed to
    the caller of the estimator's fit (fit -> helper -> reemit)."""
    seen = set()
    for message, convergence in sink:
        if (message, convergence) in seen:
            continue
        seen.add((message, convergence))
        emit_warning(prefix + message, convergence, stacklevel=4)


def user_labelled(model, classes, index_of_code):
    """`model` (trained on class codes) with classes_[m] = classes[index_of_code(code m)]
    for each of its codes, in the model's order; weights, thresholds, sigmoids, offset,
    options and statistics unchanged, so every prediction is the same label the
    estimator predicts.  The model itself when the labels are not finite, distinct
    numbers (a model file holds only those)."""
    classes = np.asarray(classes)
    if classes.dtype.kind not in "biuf":
        return model
    labels = np.array([classes[index_of_code(c)] for c in model.classes_.tolist()],
                      dtype=np.float64)
    if not np.isfinite(labels).all() or np.unique(labels).shape[0] != labels.shape[0]:
        return model
    return Model(solver=model.solver, classes=labels, weights=model.weights, bias=model.bias,
                 params=model.params, stats=model.stats, kind=model.kind,
                 thresholds=model.thresholds_, n_features=model.n_features_,
                 probability=model.probability_, offset=model.offset_)


def binary_or_multiclass_index(n_classes):
    """The index into classes_ of a class code: -1 / +1 for two classes, else 0..k-1."""
    if n_classes == 2:
        return lambda code: int(code > 0)
    return int


class LinsvmEstimator(BaseEstimator):
    """What every estimator shares: options for linsvm.train, warnings, warm starts,
    verbose progress.  Subclasses set _solver_kinds (the solver kinds they take)."""

    _solver_kinds: tuple = ()

    def _train_options(self):
        info = get_solver(self.solver)
        if info.kind not in self._solver_kinds:
            names = sorted(n for n, i in SOLVERS.items() if i.kind in self._solver_kinds)
            raise ValueError(f"solver {self.solver!r} is a {info.kind} solver; "
                             f"{type(self).__name__} takes one of: {', '.join(names)}")
        opts = dict(self.solver_options or {})
        if self.max_iter is not None:
            if "max_iter" not in info.options:
                raise ValueError(f"solver {self.solver!r} has no iteration cap (max_iter)")
            opts["max_iter"] = self.max_iter
        return dict(solver=self.solver, C=self.C, bias=self.bias, tol=self.tol,
                    seed=seed_of(self.random_state), n_jobs=self.n_jobs, **opts)

    def _log(self):
        """The log function for linsvm.train: stderr when verbose > 0, else None."""
        verbose = getattr(self, "verbose", 0)
        if not isinstance(verbose, (numbers.Integral, bool, np.bool_)) or verbose < 0:
            raise ValueError(f"verbose must be an integer >= 0, got {verbose!r}")
        return stderr_log if verbose else None

    def _train(self, X, y, **kw):
        """linsvm.train with its warnings re-emitted here, attributed to the caller
        of fit (stacklevel: fit -> _train), and with verbose > 0 the solver's progress
        lines and linsvm-train's summary line on stderr."""
        log = self._log()
        with collecting_warnings() as sink:
            model = train(X, y, log=log, **kw)
        if log is not None:
            st = model.stats
            log(f"{model.solver}: objective = {st['objective']:.10g}, iterations = {st['n_iter']}, "
                f"time = {st['seconds']:.3f}s")
        reemit(sink)
        return model

    def _fit_inputs(self, X, y, sample_weight):
        """Validated X (CSR when sparse), the sorted distinct labels of y, each row's
        index into them, and the sample weights (or None)."""
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=np.float64,
                             order="C")
        X = as_csr(X)
        check_classification_targets(y)
        classes, index = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"got one class ({classes[0]!r})")
        return X, classes, index, check_sample_weight(sample_weight, X)

    def _class_weight_by_code(self, classes, code_of):
        """self.class_weight with the user's labels replaced by the codes linsvm.train
        sees (code_of(i) for classes[i]); "balanced" and None pass through."""
        cw = self.class_weight
        if isinstance(cw, dict):
            index = {c: i for i, c in enumerate(classes.tolist())}
            out = {}
            for label, weight in cw.items():
                if label not in index:
                    raise ValueError(f"class_weight names label {label!r}, which is not in y "
                                     f"(classes: {classes.tolist()})")
                out[code_of(index[label])] = weight
            return out
        if cw is not None and cw != "balanced":
            raise ValueError(f"class_weight must be a dict, 'balanced' or None, got {cw!r}")
        return cw

    def _keep_model(self, model, classes, index_of_code):
        """model_ = the model with the user's labels (user_labelled); the coded model
        as trained (with its solver state) is kept for warm starts."""
        self._trained_model = model
        self.model_ = user_labelled(model, classes, index_of_code)

    def _set_linear(self, model, classes=None):
        """model_ (with the labels `classes` for rank codes 0..k-1), coef_ (1, d),
        intercept_ (1,) and n_iter_ of a one-column model."""
        if classes is None:
            self._trained_model = self.model_ = model
        else:
            self._keep_model(model, classes, int)
        self.coef_ = np.array(model.coef_, dtype=np.float64).reshape(1, -1)
        self.intercept_ = np.array(model.intercept_, dtype=np.float64).reshape(1)
        self.n_iter_ = int(model.n_iter or 0)

    def _warm_model(self, n_features):
        """The previous fit's model to start from (warm_start), or None.  It is the
        model as trained (in codes, with its solver state), whatever became of coef_
        since."""
        model = getattr(self, "_trained_model", None)
        if self.warm_start and model is not None and getattr(self, "n_features_in_", None) == n_features:
            return model
        return None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


class LinearPredictorMixin:
    """Scores from coef_ and intercept_ (module docstring), and sparsify / densify.

    coef_ is (k, d), or (d,) for an estimator whose _coef_ndim is 1 (LinearSVR, as in
    scikit-learn); sparsify makes it a (k, d) / (1, d) CSR matrix, densify restores
    the dense array of the original shape."""

    _coef_ndim = 2

    def _linear_scores(self, X):
        """X @ coef_.T + intercept_ after scikit-learn's checks of X: (n, k) for a 2-D
        coef_, (n,) for a 1-D one.  A score that is not finite raises linsvm's
        ScoreOverflowError (a DataError naming the row), as linsvm.Model does."""
        check_is_fitted(self)
        X = as_csr(validate_data(self, X, accept_sparse=ACCEPT_SPARSE, dtype=np.float64,
                                 reset=False))
        coef = self.coef_
        with np.errstate(all="ignore"):     # an overflow is reported below, in one line
            if isinstance(X, CSRBuffers):   # its own kernel reads every layout, unconverted
                W = coef.toarray() if sp.issparse(coef) else np.asarray(coef, dtype=np.float64)
                W = np.ascontiguousarray(W.reshape(-1, X.n_features).T)
                S = _kernels.csr_scores(DataView(X, 0.0), W) + self.intercept_
            else:
                S = np.asarray(safe_sparse_dot(X, coef.T, dense_output=True)) + self.intercept_
        if self._coef_ndim == 1:
            S = S.reshape(-1)
        if not np.isfinite(S).all():
            W = coef.toarray() if sp.issparse(coef) else np.asarray(coef)
            raise overflow_error(S, X, W.reshape(-1, X.shape[1]).T,
                                 np.asarray(self.intercept_).reshape(-1), 1.0)
        return S

    def sparsify(self):
        """Store coef_ as a scipy.sparse CSR matrix ((k, d); (1, d) for a 1-D coef_),
        which saves memory and time when most weights are zero (e.g. an L1 model);
        predictions are unchanged.  Returns self."""
        check_is_fitted(self, "coef_")
        if not sp.issparse(self.coef_):
            self.coef_ = sp.csr_matrix(np.atleast_2d(self.coef_))
        return self

    def densify(self):
        """Store coef_ as a dense array again (the inverse of sparsify; the default
        format).  Returns self."""
        check_is_fitted(self, "coef_")
        if sp.issparse(self.coef_):
            dense = self.coef_.toarray()
            self.coef_ = dense.reshape(-1) if self._coef_ndim == 1 else dense
        return self
