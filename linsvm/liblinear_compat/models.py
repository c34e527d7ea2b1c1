"""liblinearutil's `model`, `predict`, `save_model` and `load_model` over linsvm's Model.

A `model` holds a linsvm.model.Model (`linsvm_model`) and LIBLINEAR's view of it: its
solver code, nr_class, nr_feature, bias, label, the weight matrix as LIBLINEAR's file
stores it (nr_feature rows, and a bias row when bias >= 0, by nr_w columns: 1 for two
classes, nr_class otherwise and always for -s 4) and the one-class rho.  The methods
answer as LIBLINEAR's get_* functions do (README of its python/ directory): feature
indices from 1, label indices from 0, 0 outside the ranges; a two-class model's
second label gets the negated column; regression and one-class models ignore the
label index and report labels [0, 0].  Files are LIBLINEAR model files
(linsvm.model.format_liblinear); load_model also reads linsvm's model files of models
that LIBLINEAR's format can hold.
"""
from __future__ import annotations

import sys

import numpy as np

from ..errors import DataError, ParameterError
from ..model import format_liblinear
from ..model.model import Model
from ..model.model import load_model as load_linsvm_model
from .data import as_csr, as_labels, evaluations
from .options import (ONECLASS_CODE, PROBABILITY_CODES, REGRESSION_CODES, parameter,
                      solver_names)

__all__ = ["model", "predict", "save_model", "load_model", "with_zero_bias_row"]

_CODE_OF_TYPE = {name: code for code, name in format_liblinear.SOLVER_TYPES.items()}


def _error(text):
    """LIBLINEAR's message for a get_* call that does not apply (on stderr, as its own)."""
    print(f"ERROR: {text}", file=sys.stderr)


class model:
    """A trained LIBLINEAR model (module notes).  Made by train() and load_model();
    `model(linsvm_model)` wraps a linsvm Model, ModelError when LIBLINEAR's format
    cannot describe it (an ordinal or softmax model, labels that are not integers)."""

    def __init__(self, linsvm_model, param=None):
        solver_type, labels = format_liblinear.layout(linsvm_model)
        code = _CODE_OF_TYPE[solver_type]
        self.linsvm_model = linsvm_model
        self.param = parameter() if param is None else param
        self.param.solver_type = solver_names(code)
        self.nr_class = 2 if labels is None else len(labels)
        self.label = [0] * self.nr_class if labels is None else list(labels)
        self.nr_feature = linsvm_model.n_features_
        has_bias_row = linsvm_model.weights.shape[0] == self.nr_feature + 1
        self.bias = linsvm_model.bias if has_bias_row else -1.0
        W = np.array(linsvm_model.weights, dtype=np.float64)
        self.rho = 0.0
        if code == ONECLASS_CODE:
            self.rho = -linsvm_model.offset_
        elif linsvm_model.offset_ != 0:          # layout checked: there is a bias feature
            W[-1] += linsvm_model.offset_ / linsvm_model.bias
        self._W = W
        self.w = W.ravel().tolist()              # LIBLINEAR's order: feature-major

    def _code(self):
        return int(self.param.solver_type)

    def get_nr_feature(self):
        """The number of features (the bias feature not counted)."""
        return self.nr_feature

    def get_nr_class(self):
        """The number of classes (2 for regression and one-class models)."""
        return self.nr_class

    def get_labels(self):
        """The class labels in the model's order (int); [0, 0] without classes."""
        return list(self.label)

    def _w_value(self, row, label_idx):
        """LIBLINEAR's get_w_value: the weight of 0-based row `row` for label label_idx."""
        if row < 0 or row >= self._W.shape[0]:
            return 0.0
        if self.is_regression_model() or self.is_oneclass_model():
            return float(self._W[row, 0])
        if label_idx < 0 or label_idx >= self.nr_class:
            return 0.0
        if self._W.shape[1] == 1:                # two classes, one column
            return float(self._W[row, 0] if label_idx == 0 else -self._W[row, 0])
        return float(self._W[row, label_idx])

    def get_decfun_coef(self, feat_idx, label_idx=0):
        """W[label_idx, feat_idx]: feature index from 1 (0 outside 1..nr_feature)."""
        if feat_idx < 1 or feat_idx > self.nr_feature:
            return 0.0
        return self._w_value(feat_idx - 1, label_idx)

    def get_decfun_bias(self, label_idx=0):
        """b of class label_idx: bias times its bias weight (0 without a bias feature);
        one-class models have none (LIBLINEAR's error message, 0)."""
        if self.is_oneclass_model():
            _error("get_decfun_bias can not be called for a one-class SVM model")
            return 0.0
        if self.bias <= 0:
            return 0.0
        return self.bias * self._w_value(self.nr_feature, label_idx)

    def get_decfun_rho(self):
        """A one-class model's rho (decision w.x - rho); others: error message, 0."""
        if not self.is_oneclass_model():
            _error("get_decfun_rho can be called only for a one-class SVM model")
            return 0.0
        return float(self.rho)

    def get_decfun(self, label_idx=0):
        """(w, b) of class label_idx, w a list of nr_feature floats; one-class: (w, -rho)."""
        w = [self._w_value(j, label_idx) for j in range(self.nr_feature)]
        if self.is_oneclass_model():
            return w, -float(self.rho)
        return w, self.get_decfun_bias(label_idx)

    def is_probability_model(self):
        """True for logistic regression models (-s 0, 6, 7): predict -b 1 applies."""
        return self._code() in PROBABILITY_CODES

    def is_regression_model(self):
        """True for support vector regression models (-s 11, 12, 13)."""
        return self._code() in REGRESSION_CODES

    def is_oneclass_model(self):
        """True for one-class SVM models (-s 21)."""
        return self._code() == ONECLASS_CODE

    def __repr__(self):
        return (f"model(solver_type={self.param.solver_type.name}, nr_class={self.nr_class}, "
                f"nr_feature={self.nr_feature}, bias={self.bias:g})")


def with_zero_bias_row(m):
    """linsvm Model `m` (trained without a bias feature) as LIBLINEAR's -B 0 model: an
    inert bias feature of value 0 whose weight row is 0 (LIBLINEAR's weight for a
    feature that is 0 in every instance)."""
    W = np.vstack([m.weights, np.zeros((1, m.weights.shape[1]))])
    return Model(solver=m.solver, classes=m.classes_, weights=W, bias=0.0,
                 params=dict(m.params, bias=0.0), stats=m.stats, kind=m.kind,
                 n_features=m.n_features_, offset=m.offset_)


def _predict_options(options):
    """(probability, quiet) from predict's option string (-b 0|1, -q)."""
    argv = options.split() if isinstance(options, str) else [str(t) for t in options]
    probability, quiet, i = 0, False, 0
    while i < len(argv):
        if argv[i] == "-b":
            if i + 1 >= len(argv):
                raise ParameterError("Wrong options: -b needs a value (0 or 1)")
            try:
                probability = int(argv[i + 1])
            except ValueError:
                raise ParameterError(f"Wrong options: -b needs an integer, got "
                                     f"{argv[i + 1]!r}") from None
            i += 2
        elif argv[i] == "-q":
            quiet = True
            i += 1
        else:
            raise ParameterError(f"Wrong options: {argv[i]!r} is not a predict option (-b, -q)")
    return probability, quiet


def predict(y, x, m, options=""):
    """(p_labels, (ACC, MSE, SCC), p_vals) of model m on instances x (any form
    liblinearutil takes) with true labels y ([] when unknown: zeros are scored).

    p_labels: the predicted labels (floats); p_vals: per instance, the decision values
    (one for a model of at most two classes, else one per class in label order) or,
    with -b 1, the class probabilities of a logistic model (-s 0, 6, 7; others refuse
    -b 1, as LIBLINEAR does).  Features beyond the model's are ignored; the bias
    feature is the model's.  Prints the accuracy (or MSE and SCC for regression)
    unless -q."""
    probability, quiet = _predict_options(options)
    X, _ = as_csr(x)
    n = X.shape[0]
    truth = as_labels(y)
    if truth.size == 0:
        truth = np.zeros(n)
    elif truth.size != n:
        raise DataError(f"len(y) != len(x): {truth.size} labels for {n} instances")
    M = m.linsvm_model
    scores = M.decision_function(X)
    if m.nr_class == 2 and scores.ndim == 2:    # -s 4 on two classes: LIBLINEAR's sign rule
        labels = np.where(scores[:, 0] > 0, float(m.label[0]), float(m.label[1]))
    else:
        labels = M.predict_from_scores(scores)
    if probability:
        if not m.is_probability_model():
            raise ParameterError("probability output (-b 1) is only supported for logistic "
                                 "regression (-s 0, 6, 7)")
        values = M.proba_from_scores(scores)
    else:
        values = scores.reshape(n, -1)[:, :1] if m.nr_class <= 2 else scores.reshape(n, -1)
    p_labels = labels.astype(np.float64).tolist()
    if n == 0:
        metrics = (0.0, 0.0, float("nan"))
    else:
        metrics = evaluations(truth, p_labels)
    if not quiet:
        if m.is_regression_model():
            print(f"Mean squared error = {metrics[1]:g} (regression)")
            print(f"Squared correlation coefficient = {metrics[2]:g} (regression)")
        else:
            correct = int(round(n * metrics[0] / 100))
            print(f"Accuracy = {metrics[0]:g}% ({correct}/{n}) (classification)")
    return p_labels, metrics, np.asarray(values, dtype=np.float64).tolist()


def save_model(model_file_name, m):
    """Write model m to model_file_name as a LIBLINEAR model file (atomically)."""
    m.linsvm_model.save(model_file_name, format="liblinear")


def load_model(model_file_name):
    """The model of a LIBLINEAR model file (or of a linsvm model file LIBLINEAR's format
    can hold); OSError when it cannot be read, ModelError naming the line when it is
    not a valid model."""
    return model(load_linsvm_model(model_file_name))
