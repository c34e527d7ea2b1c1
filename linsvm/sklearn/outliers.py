"""OneClassSVM: the linear one-class SVM for scikit-learn, by linsvm's oneclass
(dual coordinate descent, LIBLINEAR -s 21; linsvm.solvers.oneclass).

The problem (Schoelkopf et al.'s nu-formulation, n training examples, no labels):

    min_{w, rho, xi}  1/2 ||w||^2 - rho + 1/(nu n) sum_i xi_i,   w.x_i >= rho - xi_i,  xi_i >= 0,

with w and rho reported, as by LIBLINEAR and by LIBSVM (scikit-learn's
OneClassSVM(kernel="linear")), in the dual's scale 0 <= a_i <= 1, sum a_i = nu n, that
is nu n times the w and rho above.  scikit-learn's conventions: decision_function =
w.x - rho (> 0: inlier), predict +1 / -1, score_samples = w.x, offset_ = rho, and
intercept_ = -rho.  No intercept feature and no sample weights (LIBLINEAR's -s 21 has
neither).
"""
from __future__ import annotations

import numpy as np
from sklearn.base import OutlierMixin

from .base import ACCEPT_SPARSE, LinearPredictorMixin, LinsvmEstimator, as_csr, validate_data

__all__ = ["OneClassSVM"]


class OneClassSVM(OutlierMixin, LinearPredictorMixin, LinsvmEstimator):
    """Linear one-class SVM (novelty detection) by linsvm's oneclass solver.

    Parameters
    ----------
    nu : float in (0, 1], default 0.5
        Upper bound on the fraction of training outliers and lower bound on the
        fraction of support vectors (LIBLINEAR's -n).
    tol : float or None
        The stopping tolerance (-e; the maximal violation in the dual, LIBLINEAR's
        rule); None: linsvm's default 0.01.
    max_iter : int or None
        Cap on outer iterations; None: the default 1000.
    warm_start : bool, default False
        Start from the previous fit's dual variables (same nu, same examples).
    solver_options : dict or None
        Further options of the solver, as linsvm.train takes them.
    verbose : int, default 0
        > 0: the solver's progress lines and a summary line on stderr.

    Attributes
    ----------
    coef_ ((1, n_features)), intercept_ ((1,), -rho), offset_ (rho, follows
    intercept_), n_iter_, n_features_in_, model_ (the linsvm.Model as trained;
    its stats hold outlier_fraction and sv_fraction, the nu property measured).
    """

    def __init__(self, *, nu=0.5, tol=None, max_iter=None, warm_start=False,
                 solver_options=None, verbose=0):
        self.nu = nu
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.solver_options = solver_options
        self.verbose = verbose

    def fit(self, X, y=None):
        """Fit on X (n_samples, n_features), dense or sparse; y is ignored.  Returns self."""
        X = as_csr(validate_data(self, X, accept_sparse=ACCEPT_SPARSE, dtype=np.float64,
                                 order="C"))
        opts = dict(self.solver_options or {})
        opts["nu"] = self.nu
        if self.max_iter is not None:
            opts["max_iter"] = self.max_iter
        init = self._warm_model(X.shape[1])
        model = self._train(X, np.ones(X.shape[0]), solver="oneclass", tol=self.tol,
                            init=init, **opts)
        self._set_linear(model)
        return self

    @property
    def offset_(self):
        """rho: decision_function = score_samples - offset_ (scikit-learn's relation);
        it follows intercept_ (= -rho)."""
        return float(-np.asarray(self.intercept_).reshape(-1)[0])

    def decision_function(self, X):
        """w.x - rho (n,): positive for inliers, negative for outliers."""
        return self._linear_scores(X)[:, 0]

    def score_samples(self, X):
        """The raw score w.x (n,), decision_function + offset_."""
        return self.decision_function(X) + self.offset_

    def predict(self, X):
        """+1 for inliers (decision value >= 0, scikit-learn's rule for outlier
        detectors; linsvm-predict and LIBLINEAR say -1 at exactly 0), -1 for outliers."""
        return np.where(self.decision_function(X) >= 0, 1, -1).astype(np.intp)
