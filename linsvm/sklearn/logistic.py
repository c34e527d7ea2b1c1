"""scikit-learn's LogisticRegression over linsvm's logistic solvers (linsvm.sklearn
re-exports it: ``from linsvm.sklearn import LogisticRegression``).

The objective is scikit-learn's, in linsvm's scaling:

    penalty="l2"  1/2 ||w||^2 + C sum_i c_i log(1 + exp(-y_i w.x_i))        (lr, -s 0)
    multinomial   1/2 sum_m ||w_m||^2 + C sum_i c_i [log sum_m exp(w_m.x_i) - w_{y_i}.x_i]

x including the constant feature of value intercept_scaling when fit_intercept
(intercept_ = intercept_scaling x its weight), c_i = class weight x sample weight.  By
default (regularize_intercept=False) the intercept's weight is left out of the
regularizer, as scikit-learn's default solvers (lbfgs, newton-cg, sag, saga) leave it;
regularize_intercept=True penalizes it like the others, as scikit-learn's
solver="liblinear" (and LIBLINEAR without -R) does, and is what lr-dual solves.
multi_class "ovr" (binary problems, and one-vs-rest beyond two classes: lr or lr-dual) or
"multinomial" (softmax, all classes jointly; "auto": multinomial beyond two classes, as
scikit-learn's default).  penalty="l1" runs the solver "glmnet" (LIBLINEAR -s 6) when the
catalog has it.

Predictions follow coef_ and intercept_ (a user who edits them sees it):
decision_function = X coef_' + intercept_, predict_proba its logistic link
(linsvm.model.logistic_proba: sigma for two classes, LIBLINEAR's normalised one-vs-rest
sigmoids, or the softmax).  model_ is the linsvm.Model trained, carrying the
user's labels (linsvm.sklearn.base.user_labelled).
"""
from __future__ import annotations

import numbers
import sys

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight

from ..errors import ParameterError
from ..errors import warn as emit_warning
from ..fit.reporting import collecting_warnings
from ..fit.training import train
from ..model.logistic_proba import logistic_proba
from ..problem.catalog import SOLVERS
from .base import LinearPredictorMixin, binary_or_multiclass_index, user_labelled, validate_data

__all__ = ["LogisticRegression"]

_ACCEPT_SPARSE = ("csr", "csc", "coo")
L1_SOLVER = "glmnet"                     # LIBLINEAR -s 6's solver, when registered


class LogisticRegression(ClassifierMixin, LinearPredictorMixin, BaseEstimator):
    """L2- (or L1-) regularized logistic regression by linsvm's solvers (module notes).

    Parameters
    ----------
    penalty : {"l2", "l1"}, default "l2"
    C : float, default 1.0
        LIBLINEAR's -c: the weight of the loss sum.
    tol : float or None
        The solver's -e; None: its own default.
    fit_intercept : bool, default True
        Append a constant feature of value intercept_scaling (LIBLINEAR's -B).
    intercept_scaling : float, default 1.0
    regularize_intercept : bool, default False
        Penalize the intercept's weight like the others (scikit-learn's liblinear solver,
        LIBLINEAR's default); False: scikit-learn's default objective (-R).  lr-dual has
        only the penalized form.
    class_weight : dict, "balanced" or None
    random_state : int, RandomState or None
        Seed of lr-dual's random order (None: linsvm's 0).
    solver : str or None
        A linsvm solver of a logistic loss: "lr" (default for ovr), "lr-dual" (ovr only),
        "softmax" (multinomial); None picks by penalty and multi_class.
    max_iter : int or None
        The solver's iteration cap; None: its own default.
    multi_class : {"auto", "ovr", "multinomial"}, default "auto"
    verbose : int, default 0
        > 0: the solver's progress lines on standard error.
    warm_start : bool, default False
        Start from the previous fit's coefficients (and lr-dual's dual variables).
    n_jobs : int or None
        Threads for one-vs-rest columns (None: the free cores).

    Attributes
    ----------
    classes_, coef_ ((1, d) or (k, d)), intercept_ ((1,) or (k,)), n_iter_ ((1,) or (k,)),
    n_features_in_, model_.
    """

    def __init__(self, penalty="l2", *, C=1.0, tol=None, fit_intercept=True,
                 intercept_scaling=1.0, regularize_intercept=False, class_weight=None,
                 random_state=None, solver=None, max_iter=None, multi_class="auto", verbose=0,
                 warm_start=False, n_jobs=None):
        self.penalty = penalty
        self.C = C
        self.tol = tol
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.regularize_intercept = regularize_intercept
        self.class_weight = class_weight
        self.random_state = random_state
        self.solver = solver
        self.max_iter = max_iter
        self.multi_class = multi_class
        self.verbose = verbose
        self.warm_start = warm_start
        self.n_jobs = n_jobs

    # ------------------------------------------------------------- settings
    def _solver_name(self, n_classes):
        """The linsvm solver this fit runs, from solver, penalty and multi_class."""
        if self.multi_class not in ("auto", "ovr", "multinomial"):
            raise ParameterError(f"multi_class must be 'auto', 'ovr' or 'multinomial', got "
                                 f"{self.multi_class!r}")
        multinomial = self.multi_class == "multinomial" or (self.multi_class == "auto"
                                                            and n_classes > 2)
        if self.penalty == "l1":
            if L1_SOLVER not in SOLVERS:
                raise ParameterError("penalty='l1' needs the solver glmnet (LIBLINEAR -s 6), "
                                     "which this linsvm does not have; use penalty='l2'")
            if multinomial and n_classes > 2 and self.multi_class == "multinomial":
                raise ParameterError("penalty='l1' is one-vs-rest only; use multi_class='ovr'")
            return self.solver or L1_SOLVER
        if self.penalty != "l2":
            raise ParameterError(f"penalty must be 'l2' or 'l1', got {self.penalty!r}")
        name = self.solver or ("softmax" if multinomial else "lr")
        info = SOLVERS.get(name)
        if info is None or info.loss != "logistic":
            names = sorted(n for n, i in SOLVERS.items() if i.loss == "logistic")
            raise ParameterError(f"solver {name!r} is not a logistic regression solver; choose "
                                 f"one of: {', '.join(names)}")
        if multinomial and info.kind != "multiclass" and self.multi_class == "multinomial":
            raise ParameterError(f"multi_class='multinomial' needs solver 'softmax', not {name!r}")
        if self.multi_class == "ovr" and info.kind == "multiclass":
            raise ParameterError(f"multi_class='ovr' needs a binary solver (lr, lr-dual), not "
                                 f"{name!r}")
        return name

    def _options(self, name):
        if isinstance(self.C, bool) or not isinstance(self.C, numbers.Real) or not self.C > 0:
            raise ParameterError(f"C must be a positive number, got {self.C!r}")
        if self.fit_intercept and not self.intercept_scaling > 0:
            raise ParameterError(f"intercept_scaling must be > 0, got {self.intercept_scaling!r}")
        opts = {}
        if self.fit_intercept and not self.regularize_intercept:
            if "regularize_bias" not in SOLVERS[name].options:
                raise ParameterError(f"solver {name!r} penalizes the intercept: pass "
                                     "regularize_intercept=True, or use solver 'lr'")
            opts["regularize_bias"] = False
        if self.max_iter is not None:
            opts["max_iter"] = self.max_iter
        seed = self.random_state
        if seed is None:
            seed = 0
        elif not isinstance(seed, numbers.Integral):
            seed = int(check_random_state(seed).randint(np.iinfo(np.int32).max))
        log = (lambda line: print(line, file=sys.stderr)) if self.verbose else None
        return dict(solver=name, C=float(self.C), tol=self.tol, seed=int(seed), n_jobs=self.n_jobs,
                    bias=float(self.intercept_scaling) if self.fit_intercept else -1.0,
                    log=log, **opts)

    # ------------------------------------------------------------- fit
    def fit(self, X, y, sample_weight=None):
        """Fit on X (dense or sparse), labels y and optional per-sample weights."""
        X, y = validate_data(self, X, y, accept_sparse=_ACCEPT_SPARSE, dtype=np.float64,
                             order="C")
        if sp.issparse(X) and X.format != "csr":
            X = X.tocsr()
        check_classification_targets(y)
        classes, index = np.unique(y, return_inverse=True)
        if classes.shape[0] < 2:
            raise ValueError(f"LogisticRegression needs samples of at least 2 classes; got one "
                             f"class ({classes[0]!r})")
        if sample_weight is not None:
            sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64)
        k = classes.shape[0]
        name = self._solver_name(k)
        opts = self._options(name)
        # codes: two classes -1 / +1 (classes_[1] the positive class), else 0..k-1
        code_of = (lambda i: 2.0 * i - 1.0) if k == 2 else float
        codes = (2.0 * index - 1.0) if k == 2 else index.astype(np.float64)
        init = None
        previous = getattr(self, "_trained_model", None)
        if (self.warm_start and previous is not None and previous.solver == name
                and np.array_equal(getattr(self, "classes_", None), classes)
                and getattr(self, "n_features_in_", X.shape[1]) == X.shape[1]):
            init = previous
        with collecting_warnings() as sink:
            model = train(X, codes, class_weight=self._class_weight(classes, code_of),
                          sample_weight=sample_weight, init=init, allow_many_classes=True,
                          **opts)
        for message, convergence in dict.fromkeys(sink):
            emit_warning(message, convergence, stacklevel=2)
        self.classes_, self._trained_model = classes, model
        self.model_ = user_labelled(model, classes, binary_or_multiclass_index(k))
        self._set_coefficients(model, k)
        return self

    def _class_weight(self, classes, code_of):
        cw = self.class_weight
        if isinstance(cw, dict):
            index = {c: i for i, c in enumerate(classes.tolist())}
            unknown = [label for label in cw if label not in index]
            if unknown:
                raise ValueError(f"class_weight names label {unknown[0]!r}, which is not in y "
                                 f"(classes: {classes.tolist()})")
            return {code_of(index[label]): weight for label, weight in cw.items()}
        if cw is not None and cw != "balanced":
            raise ValueError(f"class_weight must be a dict, 'balanced' or None, got {cw!r}")
        return cw

    def _set_coefficients(self, model, k):
        """coef_, intercept_, n_iter_ and the link in this estimator's class order."""
        coef = np.array(model.coef_, dtype=np.float64)
        icpt = np.array(model.intercept_, dtype=np.float64).reshape(-1)
        codes = 2.0 * np.arange(k) - 1.0 if k == 2 else np.arange(k, dtype=np.float64)
        order = np.array([int(np.flatnonzero(model.classes_ == c)[0]) for c in codes])
        self.n_iter_ = np.array([int(s.get("n_iter", 0)) for s in model.column_stats])
        if coef.shape[0] == 1:                  # one column: the score of model.classes_[0]
            sign = 1.0 if model.classes_[0] == 1.0 else -1.0
            self.coef_, self.intercept_, self._link = sign * coef, sign * icpt, "binary"
        elif k == 2:                            # softmax on two classes: both columns
            pos, neg = order[1], order[0]
            self.coef_ = (coef[pos] - coef[neg]).reshape(1, -1)
            self.intercept_ = np.array([icpt[pos] - icpt[neg]])
            self._link = "binary"               # softmax of two scores: sigma of their difference
        else:
            self.coef_, self.intercept_ = coef[order], icpt[order]
            self._link = model.link_
            self.n_iter_ = self.n_iter_[order] if self.n_iter_.shape[0] == k else self.n_iter_

    # ------------------------------------------------------------- prediction
    def decision_function(self, X):
        """X coef_' + intercept_: (n,) for two classes (positive for classes_[1]),
        else (n, k)."""
        scores = self._linear_scores(X)        # with sparsify() / densify() (linsvm.sklearn.base)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predicted labels (values of classes_)."""
        s = self.decision_function(X)
        if s.ndim == 1:
            return self.classes_[(s > 0).astype(np.intp)]
        return self.classes_[np.argmax(s, axis=1)]

    def predict_proba(self, X):
        """Class probabilities (n, k), columns in the order of classes_, from the
        decision values by the model's logistic link (module notes)."""
        s = self.decision_function(X)
        if s.ndim == 1:                         # the score of classes_[1]
            return logistic_proba(-s, "binary")
        return logistic_proba(s, self._link)

    def predict_log_proba(self, X):
        """Logarithm of predict_proba."""
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
