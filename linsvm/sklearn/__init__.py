"""scikit-learn estimators over linsvm.train (scikit-learn is an optional extra).

    from linsvm.sklearn import LinearSVC, LinearSVR, OneClassSVM, OrdinalSVM, RankSVM

* `LinearSVC`: any binary or multi-class solver (linsvm.sklearn.classifiers);
* `OrdinalSVM`, `RankSVM`: ordinal regression and ranking (classifiers);
* `LogisticRegression`: logistic regression, lr / lr-dual / softmax, or glmnet for
  penalty "l1" (linsvm.sklearn.logistic);
* `LinearSVR`: support vector regression, svr / svr-dual (linsvm.sklearn.regression);
* `OneClassSVM`: linear one-class SVM for novelty detection, oneclass
  (linsvm.sklearn.outliers).

Every estimator predicts from its coef_ and intercept_ (a user who edits them sees
the change), has sparsify() / densify() and a verbose parameter
(linsvm.sklearn.base).  docs/python.md maps their parameters to linsvm's options.
"""
from .classifiers import LinearSVC, OrdinalSVM, RankSVM
from .logistic import LogisticRegression
from .outliers import OneClassSVM
from .regression import LinearSVR

__all__ = ["LinearSVC", "LinearSVR", "LogisticRegression", "OneClassSVM", "OrdinalSVM", "RankSVM"]
