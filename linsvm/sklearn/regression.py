"""LinearSVR: linear support vector regression for scikit-learn, by linsvm's svr
(primal finite Newton, LIBLINEAR -s 11) and svr-dual (dual coordinate descent,
-s 12 / -s 13).

The problem, in LIBLINEAR's scaling (x includes the constant feature of value
`intercept_scaling` when fit_intercept), c_i the sample weights, p = `epsilon`:

    loss="epsilon_insensitive":          1/2 ||w||^2 + C sum_i c_i max(0, |y_i - w.x_i| - p)
    loss="squared_epsilon_insensitive":  1/2 ||w||^2 + C sum_i c_i max(0, |y_i - w.x_i| - p)^2

which is scikit-learn's LinearSVR objective when regularize_intercept=True.  By
default (regularize_intercept=False) the intercept is not pulled towards zero, so
targets far from zero are fitted (calendar-year targets, say): svr leaves
the bias weight out of ||w||^2 (an exact free intercept, LIBLINEAR's -R), svr-dual
solves for the targets minus their weighted mean (its center_targets) and adds the
mean back in intercept_.
"""
from __future__ import annotations

import numpy as np
from sklearn.base import RegressorMixin

from .base import (ACCEPT_SPARSE, LinearPredictorMixin, LinsvmEstimator, as_csr,
                   check_sample_weight, seed_of, validate_data)

__all__ = ["LinearSVR"]

LOSSES = ("epsilon_insensitive", "squared_epsilon_insensitive")


class LinearSVR(RegressorMixin, LinearPredictorMixin, LinsvmEstimator):
    """Linear support vector regression (linsvm's svr / svr-dual).

    Parameters
    ----------
    epsilon : float, default 0.0
        Half-width p of the tube (LIBLINEAR's -p): deviations |y - w.x| below it
        cost nothing.  scikit-learn's default (LIBLINEAR's is 0.1).
    tol : float or None
        The solver's stopping tolerance (-e); None: its default (svr 1e-4, svr-dual 0.1).
    C : float, default 1.0
        Cost of the loss (-c).
    loss : {"epsilon_insensitive", "squared_epsilon_insensitive"}
        The absolute (svr-dual --loss l1, LIBLINEAR -s 13) or squared (svr, -s 11;
        svr-dual --loss l2, -s 12) deviation outside the tube.
    fit_intercept : bool, default True
        Append a constant feature of value intercept_scaling (-B); False: no intercept.
    intercept_scaling : float, default 1.0
        The value of that feature (-B).  Only matters with regularize_intercept=True
        (then, as in scikit-learn, a larger value lessens the pull on the intercept).
    dual : "auto", True or False
        The squared loss: False (and "auto") solves the primal by svr's finite Newton
        method, True the dual by svr-dual.  The absolute loss has the dual only.
    regularize_intercept : bool, default False
        True: the intercept's weight is regularized like the others (scikit-learn's
        and LIBLINEAR's objective); False: it is free (module docstring).
    max_iter : int or None
        The solver's iteration cap (svr: Newton steps, default 50; svr-dual: loops
        over the examples, default 1000); None: its default.
    warm_start : bool, default False
        Start from the previous fit (beta-seeding for svr, alpha-seeding for svr-dual).
    random_state : int, RandomState or None
        Seed for the order svr-dual visits the examples (None: linsvm's seed 0).
    solver_options : dict or None
        Further options of the solver (e.g. n_threads, gtol), as linsvm.train takes them.
    verbose : int, default 0
        > 0: the solver's progress lines and a summary line on stderr.

    Attributes
    ----------
    coef_ ((n_features,), as scikit-learn's LinearSVR), intercept_ ((1,)), n_iter_,
    n_features_in_, model_ (the linsvm.Model as trained).  predict returns
    X @ coef_ + intercept_; score is R^2.
    """

    _coef_ndim = 1

    def __init__(self, *, epsilon=0.0, tol=None, C=1.0, loss="epsilon_insensitive",
                 fit_intercept=True, intercept_scaling=1.0, dual="auto",
                 regularize_intercept=False, max_iter=None, warm_start=False,
                 random_state=None, solver_options=None, verbose=0):
        self.epsilon = epsilon
        self.tol = tol
        self.C = C
        self.loss = loss
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.dual = dual
        self.regularize_intercept = regularize_intercept
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state
        self.solver_options = solver_options
        self.verbose = verbose

    def _solver(self):
        """(solver name, its options) for loss, dual and the intercept settings."""
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {', '.join(LOSSES)}; got {self.loss!r}")
        if self.dual not in ("auto", True, False):
            raise ValueError(f"dual must be 'auto', True or False; got {self.dual!r}")
        free = self.fit_intercept and not self.regularize_intercept
        if self.loss == "epsilon_insensitive":
            if self.dual is False:
                raise ValueError("Unsupported set of arguments: loss='epsilon_insensitive' is "
                                 "solved by its dual only (LIBLINEAR -s 13); use dual=True or "
                                 "'auto', Parameters: loss='epsilon_insensitive', dual=False")
            return "svr-dual", {"loss": "l1", "center_targets": free}
        if self.dual is True:
            return "svr-dual", {"loss": "l2", "center_targets": free}
        return "svr", {"regularize_bias": not free}

    def _bias(self):
        if not self.fit_intercept:
            return -1.0
        scale = self.intercept_scaling
        if not np.isfinite(scale) or scale <= 0:
            raise ValueError(f"intercept_scaling must be a finite number > 0 with fit_intercept; "
                             f"got {scale!r}")
        return float(scale)

    def fit(self, X, y, sample_weight=None):
        """Fit on X (n_samples, n_features), dense or sparse, real targets y and
        optional per-sample weights (scaling each example's loss); returns self."""
        X, y = validate_data(self, X, y, accept_sparse=ACCEPT_SPARSE, dtype=np.float64,
                             order="C", y_numeric=True)
        X = as_csr(X)
        sample_weight = check_sample_weight(sample_weight, X)
        solver, opts = self._solver()
        opts.update(self.solver_options or {})
        opts["epsilon"] = self.epsilon
        if self.max_iter is not None:
            opts["max_iter"] = self.max_iter
        init = self._warm_model(X.shape[1])
        if init is not None and init.solver != solver:
            init = None
        model = self._train(X, np.asarray(y, dtype=np.float64), solver=solver, C=self.C,
                            bias=self._bias(), tol=self.tol, seed=seed_of(self.random_state),
                            sample_weight=sample_weight, init=init, **opts)
        self._trained_model = self.model_ = model
        self.coef_ = np.array(model.coef_[0], dtype=np.float64)
        self.intercept_ = np.array(model.intercept_, dtype=np.float64).reshape(1)
        self.n_iter_ = int(model.n_iter or 0)
        return self

    def predict(self, X):
        """X @ coef_ + intercept_ (n,)."""
        return self._linear_scores(X)
