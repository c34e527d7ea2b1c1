"""linsvm's classifiers and rankers for scikit-learn: LinearSVC, OrdinalSVM, RankSVM.

* `LinearSVC`: any binary or multi-class solver of linsvm.problem.catalog.SOLVERS
  (`solver="mfn"` by default; binary solvers run one-vs-rest beyond two
  classes); `probability=True` fits Platt sigmoids on out-of-fold decision
  values during fit (linsvm.fit.calibration) and gives predict_proba.
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
positive class, so decision_function > 0 predicts classes_[1].  model_ carries
the user's labels again (linsvm.sklearn.base.user_labelled): its saved file
predicts them on the command line.  Predictions
follow coef_ and intercept_ (linsvm.sklearn.base).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import ClassifierMixin
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted

from ..fit.calibration import calibrate
from ..fit.reporting import collecting_warnings
from .base import (ACCEPT_SPARSE, LinearPredictorMixin, LinsvmEstimator, as_csr,
                   binary_or_multiclass_index, check_sample_weight, reemit, validate_data)
from ..problem.catalog import solver_for_penalty

__all__ = ["LinearSVC", "OrdinalSVM", "RankSVM"]


class LinearSVC(ClassifierMixin, LinearPredictorMixin, LinsvmEstimator):
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
    verbose : int, default 0
        > 0: the solver's progress lines and a summary line on stderr, as
        linsvm-train prints them.
    penalty : "l1", "l2" or None, default None
        None: the solver's.  "l1" with the default solver trains cdn, scikit-learn's
        LinearSVC(penalty="l1", loss="squared_hinge", dual=False) problem; otherwise
        the solver must have this penalty (docs/l1.md).

    Attributes
    ----------
    classes_, coef_ ((1, d) or (k, d)), intercept_, n_iter_, n_features_in_,
    model_ (the linsvm.Model; with probability=True it carries the sigmoids, as a
    ``linsvm-train -b 1`` model does), prob_params_ ((1, 2) or (k, 2)).
    """

    _solver_kinds = ("binary", "multiclass")

    def __init__(self, C=1.0, *, solver="mfn", tol=None, bias=1.0, class_weight=None,
                 max_iter=None, warm_start=False, random_state=None, n_jobs=None,
                 solver_options=None, probability=False, verbose=0, penalty=None):
        self.penalty = penalty
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
        self.verbose = verbose

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features), dense or sparse, labels y, and
        optional per-sample weights; returns self."""
        X, classes, y_idx, sample_weight = self._fit_inputs(X, y, sample_weight)
        opts = self._train_options()
        opts["solver"] = solver_for_penalty(opts["solver"], self.penalty)
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
        self._keep_model(model, classes, binary_or_multiclass_index(classes.shape[0]))
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
        reemit(sink, "probability folds: ")
        self._keep_model(model, self.classes_, binary_or_multiclass_index(self.classes_.shape[0]))
        P = np.array(model.probability_)
        self.prob_params_ = P if self._order is None else P[self._order]
        # columns of model_.predict_proba (model order) for classes_: code -1/+1 or 0..k-1
        codes_of = (2.0 * np.arange(self.classes_.shape[0]) - 1.0 if self.classes_.shape[0] == 2
                    else np.arange(self.classes_.shape[0], dtype=np.float64))
        self._proba_columns = np.array([int(np.flatnonzero(model.classes_ == c)[0]) for c in codes_of])

    def decision_function(self, X):
        """Scores X @ coef_.T + intercept_: (n,) positive for classes_[1] with two
        classes, else (n, k)."""
        s = self._linear_scores(X)
        return s[:, 0] if s.shape[1] == 1 else s

    def _model_scores(self, s):
        """Decision values of this estimator as model_'s columns score them (the
        inverse of the mapping fit makes): what model_'s sigmoids take."""
        if self._pair is not None:          # model_ scores f = column pos - column neg
            return s if self._pair[0] == 0 else -s
        if self._order is None:
            return self._sign * s
        out = np.empty_like(s)
        out[:, self._order] = s
        return out

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
        sigmoids fitted on out-of-fold decision values; linsvm.fit.calibration)."""
        check_is_fitted(self, "prob_params_")
        scores = self._model_scores(self.decision_function(X))
        return self.model_.proba_from_scores(scores)[:, self._proba_columns]

    @available_if(_has_probability)
    def predict_log_proba(self, X):
        """Logarithm of predict_proba."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))


class OrdinalSVM(ClassifierMixin, LinearPredictorMixin, LinsvmEstimator):
    """Ordinal regression (ranks): one weight vector and ascending thresholds.

    solver: "mfn-ord" (default) or "perf-ord"; other parameters (verbose too) as
    LinearSVC's.
    classes_ holds the sorted distinct labels (ranks, in order); predict returns
    classes_[r], r = the number of thresholds_ strictly below the score;
    decision_function the one latent score per row.
    """

    _solver_kinds = ("ordinal",)

    def __init__(self, C=1.0, *, solver="mfn-ord", tol=None, bias=1.0, class_weight=None,
                 max_iter=None, warm_start=False, random_state=None, n_jobs=None,
                 solver_options=None, verbose=0):
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
        self.verbose = verbose

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
        self._set_linear(model, classes)
        self.thresholds_ = np.array(model.thresholds_, dtype=np.float64)
        return self

    def decision_function(self, X):
        """The latent score X @ coef_[0] + intercept_[0] (n,); rank r where
        thresholds_[r-1] < score <= thresholds_[r]."""
        return self._linear_scores(X)[:, 0]

    def predict(self, X):
        """Predicted ranks (values of classes_)."""
        s = self.decision_function(X)
        return self.classes_[np.searchsorted(self.thresholds_, s, side="left")]


class RankSVM(LinearPredictorMixin, LinsvmEstimator):
    """Ranking SVM: perf-ord with query groups (Joachims' ranking SVM by cutting planes).

    fit(X, y, groups=None): y relevance levels (any sortable values; higher
    ranks higher), groups the query of each row (pairs are formed only within
    a query; None: one query); other parameters (verbose too) as LinearSVC's.
    predict returns the ranking score (n,);
    score(X, y, groups) the fraction of correctly ordered pairs within queries.
    """

    _solver_kinds = ("ordinal",)

    def __init__(self, C=1.0, *, tol=None, bias=1.0, max_iter=None, warm_start=False,
                 random_state=None, n_jobs=None, solver_options=None, verbose=0):
        self.C = C
        self.tol = tol
        self.bias = bias
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.solver_options = solver_options
        self.verbose = verbose

    solver = "perf-ord"                 # fixed; not a parameter

    def fit(self, X, y, groups=None, sample_weight=None):
        """Fit on X, relevance levels y and query groups; returns self."""
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=np.float64,
                             order="C", y_numeric=True)
        X = as_csr(X)
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
        sample_weight = check_sample_weight(sample_weight, X)
        init = self._warm_model(X.shape[1])
        if init is not None and init.classes_.shape[0] != levels.shape[0]:
            init = None
        model = self._train(X, ranks.astype(np.float64), qid=qid, sample_weight=sample_weight,
                            init=init, class_weight=None, **self._train_options())
        self._set_linear(model, levels)
        return self

    def predict(self, X):
        """The ranking score X @ coef_[0] + intercept_[0] of every row (higher: ranked
        higher)."""
        return self._linear_scores(X)[:, 0]

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
