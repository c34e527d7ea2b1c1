"""scikit-learn estimators over linsvm.train (scikit-learn is an optional extra).

    from linsvm.sklearn import LinearSVC, OrdinalSVM, RankSVM

* `LinearSVC`: any binary or multi-class solver of linsvm.solvers.SOLVERS
  (`solver="mfn"` by default; binary solvers run one-vs-rest beyond two
  classes); `probability=True` fits Platt sigmoids on out-of-fold decision
  values during fit (linsvm.probability) and gives predict_proba.
* `OrdinalSVM`: the ordinal solvers (mfn-ord, perf-ord); predict returns one of
  the ranks (classes_, sorted), `thresholds_` the cut points on the score.
* `RankSVM`: perf-ord with query groups (`fit(X, y, groups=qid)`: pairs only
  within a group); predict returns the ranking score.

Differences from scikit-learn's LinearSVC: the objective is LIBLINEAR's, in
linsvm's one scaling, with the bias feature (`bias`, LIBLINEAR's -B) appended
to every example and regularized like the other weights (scikit-learn's
`intercept_scaling` plays the same role); `tol=None` means the solver's own
default; `max_iter=None` the solver's own cap; `random_state=None` means
linsvm's fixed seed 0 (results are reproducible by default).

Labels are mapped to integer codes for linsvm.train and back: classes_ is
sorted, and in the binary case the model is trained with classes_[1] as the
positive class, so decision_function > 0 predicts classes_[1].
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted

from .errors import warn as _warn
from .fit.calibration import calibrate
from .fit.reporting import collecting_warnings
from .fit.training import train
from .problem.catalog import SOLVERS, get_solver
from .sklearn_logistic import LogisticRegression

try:                                     # scikit-learn >= 1.6
    from sklearn.utils.validation import validate_data as _validate_data
except ImportError:                      # pragma: no cover - older scikit-learn
    def _validate_data(estimator, X="no_validation", y="no_validation", reset=True, **kw):
        return estimator._validate_data(X, y, reset=reset, **kw)

__all__ = ["LinearSVC", "LogisticRegression", "OrdinalSVM", "RankSVM"]

_ACCEPT_SPARSE = ("csr", "csc", "coo")


def _seed(random_state):
    """linsvm's integer seed from scikit-learn's random_state (None: 0)."""
    if random_state is None:
        return 0
    if isinstance(random_state, numbers.Integral):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def _as_csr(X):
    return X.tocsr() if sp.issparse(X) and X.format != "csr" else X


class _LinsvmEstimator(BaseEstimator):
    """What the three estimators share: options for linsvm.train, warnings, warm starts."""

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
                    seed=_seed(self.random_state), n_jobs=self.n_jobs, **opts)

    def _train(self, X, y, **kw):
        """linsvm.train with its warnings re-emitted here, attributed to the caller
        of fit (stacklevel: fit -> _train)."""
        with collecting_warnings() as sink:
            model = train(X, y, **kw)
        _reemit(sink)
        return model

    def _fit_inputs(self, X, y, sample_weight):
        """Validated X (CSR when sparse), the sorted distinct labels of y, each row's
        index into them, and the sample weights (or None)."""
        X, y = _validate_data(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                              order="C")
        X = _as_csr(X)
        check_classification_targets(y)
        classes, index = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"{type(self).__name__} needs samples of at least 2 classes; "
                             f"got one class ({classes[0]!r})")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        return X, classes, index, sample_weight

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

    def _set_linear(self, model):
        """model_, coef_ (1, d), intercept_ (1,) and n_iter_ of a one-column model."""
        self.model_ = model
        self.coef_ = np.array(model.coef_, dtype=np.float64).reshape(1, -1)
        self.intercept_ = np.array(model.intercept_, dtype=np.float64).reshape(1)
        self.n_iter_ = int(model.n_iter or 0)

    def _warm_model(self, n_features):
        model = getattr(self, "model_", None)
        if self.warm_start and model is not None and getattr(self, "n_features_in_", None) == n_features:
            return model
        return None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags


def _reemit(sink, prefix=""):
    """Emit collected (message, is_convergence) records as warnings attributed to
    the caller of the estimator's fit (fit -> helper -> _reemit)."""
    seen = set()
    for message, convergence in sink:
        if (message, convergence) in seen:
            continue
        seen.add((message, convergence))
        _warn(prefix + message, convergence, stacklevel=4)


class LinearSVC(ClassifierMixin, _LinsvmEstimator):
    """Linear SVM classifier trained by a linsvm solver.

    Parameters
    ----------
    C : float, default 1.0
        Cost of the loss (LIBLINEAR's -c).
    solver : str, default "mfn"
        A binary solver (one-vs-rest beyond two classes) or multi-class solver
        (sdm-cs, sdm-ww) of linsvm.solvers.SOLVERS.
    tol : float or None
        The solver's stopping tolerance (-e); None: the solver's default.
    bias : float, default 1.0
        Value of the constant feature appended to every example (-B); <= 0: none.
    class_weight : dict, "balanced" or None
        {label: weight} scaling C for that class; "balanced": n / (k n_j).
    max_iter : int or None
        The solver's iteration cap (its max_iter option); None: its default.
    warm_start : bool, default False
        Start from the previous fit's solution (beta-seeding; alpha-seeding for
        the dual solvers), e.g. along a C path.
    random_state : int, RandomState or None
        Seed for solvers and folds with random choices (None: linsvm's seed 0).
    n_jobs : int or None
        Threads for one-vs-rest columns (None: the free cores).
    solver_options : dict or None
        Further options of the solver, as linsvm.train takes them.
    probability : bool, default False
        Fit Platt sigmoids on out-of-fold decision values (5 folds) during fit,
        enabling predict_proba and predict_log_proba (fit costs about 5 more trainings).

    Attributes
    ----------
    classes_, coef_ ((1, d) or (k, d)), intercept_, n_iter_, n_features_in_,
    model_ (the linsvm.Model; with probability=True it carries the sigmoids, as a
    ``linsvm-train -b 1`` model does), prob_params_ ((1, 2) or (k, 2)).
    """

    _solver_kinds = ("binary", "multiclass")

    def __init__(self, C=1.0, *, solver="mfn", tol=None, bias=1.0, class_weight=None,
                 max_iter=None, warm_start=False, random_state=None, n_jobs=None,
                 solver_options=None, probability=False):
        self.C = C
        self.solver = solver
        self.tol = tol
        self.bias = bias
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.solver_options = solver_options
        self.probability = probability

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features), dense or sparse, labels y, and
        optional per-sample weights; returns self."""
        X, classes, y_idx, sample_weight = self._fit_inputs(X, y, sample_weight)
        opts = self._train_options()
        binary = classes.shape[0] == 2
        # codes: binary -1 / +1 (linsvm puts +1 first: score > 0 means classes[1]);
        # multi-class 0..k-1 (column order mapped below)
        codes = (2.0 * y_idx - 1.0) if binary else y_idx.astype(np.float64)
        cw = self._class_weight_by_code(classes, (lambda i: 2.0 * i - 1.0) if binary else float)
        init = self._warm_model(X.shape[1])
        if init is not None and not np.array_equal(getattr(self, "classes_", None), classes):
            init = None
        model = self._train(X, codes, class_weight=cw, sample_weight=sample_weight, init=init,
                            allow_many_classes=True, **opts)
        self.classes_ = classes
        self.model_ = model
        if binary and model.weights.shape[1] == 2:   # a multi-class solver: one column per class
            pos, neg = (1, 0) if model.classes_[1] == 1.0 else (0, 1)
            self._order, self._sign, self._pair = None, 1.0, (pos, neg)
            self.coef_ = np.array(model.coef_[pos] - model.coef_[neg], dtype=np.float64).reshape(1, -1)
            self.intercept_ = np.array([model.intercept_[pos] - model.intercept_[neg]], dtype=np.float64)
        elif binary:
            sign = 1.0 if model.classes_[0] == 1.0 else -1.0
            self._order, self._sign, self._pair = None, sign, None
            self.coef_ = sign * np.array(model.coef_, dtype=np.float64).reshape(1, -1)
            self.intercept_ = sign * np.array(model.intercept_, dtype=np.float64).reshape(1)
        else:
            order = np.array([int(np.flatnonzero(model.classes_ == j)[0])
                              for j in range(classes.shape[0])])
            self._order, self._sign, self._pair = order, 1.0, None
            self.coef_ = np.array(model.coef_, dtype=np.float64)[order]
            self.intercept_ = np.array(model.intercept_, dtype=np.float64)[order]
        self.n_iter_ = int(model.n_iter or 0)
        if self.probability:
            self._fit_probability(X, codes, sample_weight, cw, opts, model)
        return self

    def _fit_probability(self, X, codes, sample_weight, cw, opts, model):
        """Platt sigmoids on out-of-fold decision values: linsvm.fit.calibration.calibrate,
        the function ``linsvm-train -b 1`` calls, so both give the same
        probabilities.  model_ becomes the calibrated Model (its probability_
        in model order); prob_params_ holds the sigmoids in this estimator's
        order: (1, 2) for two classes (the probability of classes_[0] in model
        terms, see Model), else (k, 2) by classes_."""
        with collecting_warnings() as sink:
            model = calibrate(model, X, codes, n_folds=5, sample_weight=sample_weight,
                                          class_weight=cw, allow_many_classes=True, **opts)
        _reemit(sink, "probability folds: ")
        self.model_ = model
        P = np.array(model.probability_)
        self.prob_params_ = P if self._order is None else P[self._order]
        # columns of model_.predict_proba (model order) for classes_: code -1/+1 or 0..k-1
        codes_of = (2.0 * np.arange(self.classes_.shape[0]) - 1.0 if self.classes_.shape[0] == 2
                    else np.arange(self.classes_.shape[0], dtype=np.float64))
        self._proba_columns = np.array([int(np.flatnonzero(model.classes_ == c)[0]) for c in codes_of])

    def decision_function(self, X):
        """Scores: (n,) positive for classes_[1] with two classes, else (n, k)."""
        check_is_fitted(self)
        X = _validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        return self._scores(self.model_.decision_function(_as_csr(X)))

    def _scores(self, s):
        """The model's decision values in this estimator's convention (see decision_function)."""
        if self._pair is not None:
            return s[:, self._pair[0]] - s[:, self._pair[1]]
        if self._order is None:
            return self._sign * s
        return s[:, self._order]

    def predict(self, X):
        """Predicted labels (values of classes_)."""
        s = self.decision_function(X)
        if s.ndim == 1:
            return self.classes_[(s > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]

    def _has_probability(self):
        if not self.probability:
            raise AttributeError("predict_proba is available when probability=True")
        return True

    @available_if(_has_probability)
    def predict_proba(self, X):
        """Class probabilities (n, k), columns in the order of classes_ (Platt
        sigmoids fitted on out-of-fold decision values; linsvm.probability)."""
        check_is_fitted(self, "prob_params_")
        X = _validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        return self.model_.predict_proba(_as_csr(X))[:, self._proba_columns]

    @available_if(_has_probability)
    def predict_log_proba(self, X):
        """Logarithm of predict_proba."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class OrdinalSVM(ClassifierMixin, _LinsvmEstimator):
    """Ordinal regression (ranks): one weight vector and ascending thresholds.

    solver: "mfn-ord" (default) or "perf-ord"; other parameters as LinearSVC's.
    classes_ holds the sorted distinct labels (ranks, in order); predict returns
    classes_[r], r = the number of thresholds_ strictly below the score;
    decision_function the one latent score per row.
    """

    _solver_kinds = ("ordinal",)

    def __init__(self, C=1.0, *, solver="mfn-ord", tol=None, bias=1.0, class_weight=None,
                 max_iter=None, warm_start=False, random_state=None, n_jobs=None,
                 solver_options=None):
        self.C = C
        self.solver = solver
        self.tol = tol
        self.bias = bias
        self.class_weight = class_weight
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.solver_options = solver_options

    def fit(self, X, y, sample_weight=None):
        """Fit on X and ordered labels y (any sortable values; their sorted order is
        the rank order); returns self."""
        X, classes, ranks, sample_weight = self._fit_inputs(X, y, sample_weight)
        cw = self._class_weight_by_code(classes, float)
        init = self._warm_model(X.shape[1])
        if init is not None and init.classes_.shape[0] != classes.shape[0]:
            init = None
        model = self._train(X, ranks.astype(np.float64), class_weight=cw,
                            sample_weight=sample_weight, init=init, **self._train_options())
        self.classes_ = classes
        self._set_linear(model)
        self.thresholds_ = np.array(model.thresholds_, dtype=np.float64)
        return self

    def decision_function(self, X):
        """The latent score (n,); rank r where thresholds_[r-1] < score <= thresholds_[r]."""
        check_is_fitted(self)
        X = _validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        return self.model_.decision_function(_as_csr(X))

    def predict(self, X):
        """Predicted ranks (values of classes_)."""
        s = self.decision_function(X)
        return self.classes_[np.searchsorted(self.thresholds_, s, side="left")]


class RankSVM(_LinsvmEstimator):
    """Ranking SVM: perf-ord with query groups (Joachims' ranking SVM by cutting planes).

    fit(X, y, groups=None): y relevance levels (any sortable values; higher
    ranks higher), groups the query of each row (pairs are formed only within
    a query; None: one query).  predict returns the ranking score (n,);
    score(X, y, groups) the fraction of correctly ordered pairs within queries.
    """

    _solver_kinds = ("ordinal",)

    def __init__(self, C=1.0, *, tol=None, bias=1.0, max_iter=None, warm_start=False,
                 random_state=None, n_jobs=None, solver_options=None):
        self.C = C
        self.tol = tol
        self.bias = bias
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.solver_options = solver_options

    solver = "perf-ord"                 # fixed; not a parameter

    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit on X, relevance levels y and query groups; returns self."""
        X, y = _validate_data(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                              order="C", y_numeric=True)
        X = _as_csr(X)
        levels, ranks = np.unique(y, return_inverse=True)
        if levels.shape[0] < 2:
            raise ValueError("RankSVM needs at least two distinct relevance levels in y; got one class "
                             f"(level {levels[0]!r})")
        qid = None
        if groups is not None:
            groups = np.asarray(groups)
            if groups.shape != (X.shape[0],):
                raise ValueError(f"groups has shape {groups.shape}, expected ({X.shape[0]},)")
            qid = np.unique(groups, return_inverse=True)[1].astype(np.int64)
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        init = self._warm_model(X.shape[1])
        if init is not None and init.classes_.shape[0] != levels.shape[0]:
            init = None
        model = self._train(X, ranks.astype(np.float64), qid=qid, sample_weight=sample_weight,
                            init=init, class_weight=None, **self._train_options())
        self._set_linear(model)
        return self

    def predict(self, X):
        """The ranking score of every row (higher: ranked higher)."""
        check_is_fitted(self)
        X = _validate_data(self, X, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64, reset=False)
        return self.model_.decision_function(_as_csr(X))

    def score(self, X, y, groups=None):
        """Fraction of pairs with different y within a group that the scores order
        correctly (ties in score count half)."""
        s = self.predict(X)
        y = np.asarray(y)
        groups = np.zeros(y.shape[0]) if groups is None else np.asarray(groups)
        good = total = 0.0
        for g in np.unique(groups):
            idx = np.flatnonzero(groups == g)
            dy = np.sign(y[idx][:, None] - y[idx][None, :])
            ds = np.sign(s[idx][:, None] - s[idx][None, :])
            pairs = dy > 0
            total += pairs.sum()
            good += (ds[pairs] > 0).sum() + 0.5 * (ds[pairs] == 0).sum()
        return float(good / total) if total else 1.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags
