"""Kinds of problems: what the labels must look like, what a model predicts and
which measures apply, in one object per kind.

A linear model scores an example with one column of weights (or several); its
kind says what becomes of the scores:

* ``binary``     one column; ``classes[0]`` (the positive class) where the score
                 is > 0, ``classes[1]`` otherwise.
* ``multiclass`` one column per class (one-vs-rest, Crammer-Singer, Weston-Watkins);
                 the class of the largest score, the first one on ties.
* ``ordinal``    one column and ``n_levels - 1`` ascending thresholds; level
                 ``classes[r]``, r the number of thresholds strictly below the score.
* ``regression`` one column, no classes; the prediction is the score itself.
* ``oneclass``   one column (its score w.x - rho); +1 where it is > 0, else -1.

Every solver declares the kind it solves (SolverInfo.kind, a key of KINDS); a
binary solver given more than two classes runs one-vs-rest and its model is
multiclass (linsvm.fit.ovr).  A Kind knows, for its models and training data:

* `classes_from`: the model's classes from the training labels (the label rules:
  a classifier's labels must look like classes, in LIBLINEAR's order; ordinal
  levels are integer ranks, sorted) and `merge_labels` for the ranks of an MPI job;
* `targets`: what a solver's Problem holds besides rows and costs;
* `check_model`: the shape a model of the kind has (columns, thresholds);
* `predict`: labels from scores;
* `metrics` (cross-validation, the first the default), `measures` and `describe`:
  what linsvm-predict reports;
* `classifier` (class probabilities apply) and `liblinear` (LIBLINEAR's model file
  can hold it).

Adding a kind is one subclass here, its entry in KINDS, and its solvers
(docs/design.md, "Adding a kind").
"""
from __future__ import annotations

import numpy as np

from ..errors import ModelError
from . import metrics
from .metric_names import METRICS, PERCENT_METRICS
from .labels import (LabelError, check_class_like, class_codes, class_order,
                     class_order_raw, first_non_integer, format_label, merge_first_appearance)

__all__ = ["Kind", "KINDS", "BINARY", "MULTICLASS", "ORDINAL", "REGRESSION", "ONECLASS",
           "get_kind", "model_kind",
           "METRICS", "PERCENT_METRICS", "report",
           "metric_value"]



def _pct(v):
    """A fraction as a percentage to 4 digits, or n/a when undefined (nan)."""
    return "n/a" if np.isnan(v) else f"{100 * v:.4g}%"


def _num(v):
    """A number to 6 digits, or n/a when undefined (nan)."""
    return "n/a" if np.isnan(v) else f"{v:.6g}"


def _exact_list(values):
    """Floats in their shortest exact form (repr without an integral '.0')."""
    return " ".join(r[:-2] if r.endswith(".0") else r for r in map(repr, map(float, values)))


class Kind:
    """One kind of problem (module notes).  Subclasses set the attributes and
    override what differs; the defaults are a classifier's."""

    name = ""
    classifier = True           # labels are classes; class probabilities apply
    liblinear = True            # LIBLINEAR's model format can hold such a model
    liblinear_note = ""         # else why not
    metrics = ("accuracy",)     # cross-validation metrics, the first the default
    what = "classes"            # what the labels are called in messages
    noun = "a model"            # "a binary model", for messages
    has_measures = False        # linsvm-predict reports measures beyond accuracy (measures)
    uses_qid = False            # its data's query ids matter (ranking)
    has_classes = True          # the labels are among the model's classes (else real values)
    stratified = True           # cross-validation folds are stratified by label
    weighs_classes = True       # class weights (-w) apply
    uses_C = True               # its objectives have a cost C (-c; -C searches it)

    def __repr__(self):
        return f"<kind {self.name}>"

    # ------------------------------------------------------------- training labels
    def classes_from(self, y, labels=None, n_rows=None, allow_many=False):
        """The model's classes from training labels y (labels: y's distinct values in
        first-appearance order when known; n_rows: the examples the class-likeness
        rule counts; allow_many: skip that rule): LIBLINEAR's order, at least two."""
        classes = class_order(y, labels)
        if not allow_many:
            check_class_like(classes, y.shape[0] if n_rows is None else n_rows)
        return _at_least_two(classes)

    def merge_labels(self, lists):
        """The distinct labels of several ranks' blocks (each in first-appearance
        order, in rank order): those of the union, as classes_from expects them."""
        return merge_first_appearance(lists)

    def targets(self, y, classes):
        """What a Problem of this kind holds per position besides rows and costs:
        keyword arguments of linsvm.problem.Problem (class codes here)."""
        return {"codes": class_codes(y, classes), "n_classes": classes.shape[0]}

    # ------------------------------------------------------------- models
    def check_model(self, k, n_columns, thresholds):
        """Raise ModelError unless a model of this kind may have k classes, n_columns
        weight columns and these thresholds (None or an array)."""
        if thresholds is not None:
            raise ModelError(f"only ordinal models have thresholds (this one is {self.name})")

    def predict(self, scores, classes, thresholds):
        """Labels (values of classes) for decision values `scores` ((n,) for one
        column, (n, k) otherwise)."""
        raise NotImplementedError

    def metric_kind(self, n_classes):
        """The kind whose cross-validation metrics apply to this kind's solvers on
        n_classes classes (a classifier's on two classes: binary's)."""
        return self

    def measures(self, classes, y, pred, scores, qid=None):
        """The measures linsvm-predict reports beyond accuracy, as an ordered dict
        (nan where undefined); empty for kinds without any."""
        return {}

    def describe(self, m, classes, per_query=False):
        """The lines linsvm-predict prints for measures `m` (after the accuracy line)."""
        return []

    def report_lines(self, n_correct, n_total, m, classes, per_query=False):
        """What linsvm-predict prints of n_total predictions: LIBLINEAR's accuracy line,
        then the kind's measures (m: `measures` plus accuracy, or None)."""
        lines = [f"Accuracy = {100.0 * n_correct / n_total:g}% ({n_correct}/{n_total})"]
        return lines + (self.describe(m, classes, per_query) if m is not None else [])

    def metric_value(self, metric, classes, y, pred, scores, qid=None):
        """Cross-validation metric `metric` of predictions `pred` and decision values
        `scores` against labels y (module function metric_value)."""
        return metric_value(metric, classes, y, pred, scores, qid)

    def cv_lines(self, classes, y, pred):
        """LIBLINEAR's lines for -v from every example's out-of-fold prediction (pooled
        over the folds, as LIBLINEAR's train -v counts them)."""
        n = y.shape[0]
        value = 100.0 * np.count_nonzero(pred == y) / n if n else float("nan")
        return [f"Cross Validation Accuracy = {value:g}%"]


class Classifier(Kind):
    """What binary and multiclass share: class labels in LIBLINEAR's order."""

    def metric_kind(self, n_classes):
        return BINARY if n_classes == 2 else MULTICLASS


def _at_least_two(classes):
    if classes.shape[0] < 2:
        raise LabelError(f"only one class (label {classes[0]:g}) in the training data; need at "
                         "least two")
    return classes


class Binary(Classifier):
    """Two classes, one column: classes[0] where the score is > 0."""

    name = "binary"
    noun = "a binary model"
    has_measures = True
    metrics = ("accuracy", "prbep", "roc", "f1")

    def check_model(self, k, n_columns, thresholds):
        if k != 2 or n_columns != 1:
            raise ModelError(f"a binary model needs 2 classes and 1 weight column, "
                             f"got {k} classes and {n_columns} columns")
        super().check_model(k, n_columns, thresholds)

    def predict(self, scores, classes, thresholds):
        return np.where(scores > 0, classes[0], classes[1])

    def measures(self, classes, y, pred, scores, qid=None):
        """Precision, recall, F1, PRBEP and ROC area of the positive class
        (metrics.positive_class) and the decision threshold of the best F1, on the
        positive-oriented scores."""
        pos = metrics.positive_class(classes)
        s = metrics.positive_scores(classes, scores, pos)
        out = {"positive": pos}
        out["precision"], out["recall"], out["f1"] = metrics.precision_recall_f1(y, pred, pos)
        out["prbep"] = metrics.prbep(y == pos, s)
        out["roc_area"] = metrics.roc_area(y == pos, s)
        out["best_f1"], out["best_f1_threshold"] = metrics.best_f1_threshold(y == pos, s)
        return out

    def describe(self, m, classes, per_query=False):
        pos = format_label(m["positive"])
        lines = [f"Positive class {pos}: Precision = {_pct(m['precision'])}, "
                 f"Recall = {_pct(m['recall'])}, F1 = {_pct(m['f1'])}, "
                 f"PRBEP = {_pct(m['prbep'])}, ROC area = {_num(m['roc_area'])}"]
        if not np.isnan(m["best_f1"]):
            t = m["best_f1_threshold"]
            rule = f"> {t:.6g}" if m["positive"] == classes[0] else f"< {-t:.6g}"
            lines.append(f"Best F1 = {_pct(m['best_f1'])} when {pos} is predicted for decision "
                         f"values {rule} (the model's threshold is 0)")
        return lines


class Multiclass(Classifier):
    """One column per class: the class of the largest score (the first on ties)."""

    name = "multiclass"
    noun = "a multiclass model"

    def check_model(self, k, n_columns, thresholds):
        if n_columns != k:
            raise ModelError(f"a multiclass model needs one weight column per class, "
                             f"got {k} classes and {n_columns} columns")
        super().check_model(k, n_columns, thresholds)

    def predict(self, scores, classes, thresholds):
        if scores.ndim == 1:        # a one-class model
            return np.full(scores.shape[0], classes[0])
        return classes[np.argmax(scores, axis=1)]


class Ordinal(Kind):
    """Ordered levels, one column and ascending thresholds on its score."""

    name = "ordinal"
    noun = "an ordinal model"
    has_measures = True
    uses_qid = True
    classifier = False
    liblinear = False
    liblinear_note = "LIBLINEAR has no thresholds"
    metrics = ("mae", "accuracy", "pairwise")
    what = "ranks"

    def classes_from(self, y, labels=None, n_rows=None, allow_many=False):
        """The distinct integer ranks of y, sorted (LabelError, naming the first
        non-integer in order of appearance, for a rank that is not an integer)."""
        classes = np.unique(y) if labels is None else np.sort(labels)
        if not np.all(classes == np.round(classes)):
            frac = first_non_integer(class_order_raw(y) if labels is None else labels)
            raise LabelError(f"rank {frac:.17g} is not an integer: ordinal labels must be "
                             "integer ranks", frac)
        return _at_least_two(classes)

    def merge_labels(self, lists):
        return np.unique(np.concatenate([np.asarray(v, dtype=np.float64) for v in lists]
                                        or [np.zeros(0)]))

    def targets(self, y, classes):
        return {"codes": np.searchsorted(classes, y).astype(np.int32),
                "n_classes": classes.shape[0]}

    def check_model(self, k, n_columns, thresholds):
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
            raise ModelError(f"thresholds must be ascending, got {_exact_list(thresholds)}")

    def predict(self, scores, classes, thresholds):
        r = np.searchsorted(thresholds, scores, side="left")
        r[np.isnan(scores)] = 0
        return classes[r]

    def measures(self, classes, y, pred, scores, qid=None):
        """Mean absolute rank error, pairwise accuracy and Kendall's tau (per query
        with qid)."""
        return {"mae": metrics.rank_mae(classes, y, pred),
                "pairwise_accuracy": metrics.pairwise_accuracy(y, scores, qid),
                "kendall_tau": metrics.kendall_tau(y, scores, qid)}

    def cv_lines(self, classes, y, pred):
        return [f"Cross Validation Mean absolute error = {metrics.rank_mae(classes, y, pred):g}"]

    def describe(self, m, classes, per_query=False):
        two = classes.shape[0] == 2
        return [f"Mean absolute error = {_num(m['mae'])}, Exact-rank accuracy = "
                f"{_pct(m['accuracy'])}, Pairwise accuracy = "
                f"{_pct(m['pairwise_accuracy'])}" + (" (= ROC area)" if two else "") +
                f", Kendall tau = {_num(m['kendall_tau'])}" + (" (per query)" if per_query else "")]


class Regression(Kind):
    """Real-valued targets, one column: the prediction is the decision value."""

    name = "regression"
    noun = "a regression model"
    classifier = False
    has_classes = False
    has_measures = True
    stratified = False
    weighs_classes = False
    metrics = ("mse", "scc", "mae")
    what = "targets"

    def classes_from(self, y, labels=None, n_rows=None, allow_many=False):
        """No classes: any finite real target (checked when read) is one."""
        return np.zeros(0)

    def merge_labels(self, lists):
        return np.zeros(0)

    def targets(self, y, classes):
        return {"t": np.ascontiguousarray(y, dtype=np.float64)}

    def check_model(self, k, n_columns, thresholds):
        if k != 0 or n_columns != 1:
            raise ModelError(f"a regression model has no classes and 1 weight column, "
                             f"got {k} classes and {n_columns} columns")
        super().check_model(k, n_columns, thresholds)

    def predict(self, scores, classes, thresholds):
        return np.array(scores, dtype=np.float64)

    def metric_value(self, metric, classes, y, pred, scores, qid=None):
        """mse: mean squared error; scc: squared correlation coefficient (LIBLINEAR's);
        mae: mean absolute error."""
        if y.shape[0] == 0:
            return float("nan")
        if metric == "mae":
            return float(np.mean(np.abs(pred - y)))
        mse, scc = metrics.regression_measures(y, pred)
        return mse if metric == "mse" else scc

    def measures(self, classes, y, pred, scores, qid=None):
        """Mean squared error and squared correlation coefficient as LIBLINEAR's predict
        prints them, and the mean absolute error."""
        mse, scc = metrics.regression_measures(y, pred)
        return {"mse": mse, "scc": scc, "mae": float(np.mean(np.abs(pred - y)))}

    def report_lines(self, n_correct, n_total, m, classes, per_query=False):
        """LIBLINEAR's two lines (mean squared error, squared correlation coefficient)
        and the mean absolute error; no accuracy; an undefined measure prints as n/a."""
        if m is None:
            return []
        return [f"Mean squared error = {_num(m['mse'])} (regression)",
                f"Squared correlation coefficient = {_num(m['scc'])} (regression)",
                f"Mean absolute error = {_num(m['mae'])} (regression)"]

    def cv_lines(self, classes, y, pred):
        """LIBLINEAR's two cross-validation lines; a measure that is undefined (the
        squared correlation of constant predictions) prints as n/a."""
        mse, scc = metrics.regression_measures(y, pred) if y.shape[0] else (np.nan, np.nan)
        return [f"Cross Validation Mean squared error = {_num(mse)}",
                f"Cross Validation Squared correlation coefficient = {_num(scc)}"]


class OneClass(Kind):
    """Novelty detection: labels are ignored in training; the model predicts +1 (an
    inlier, decision value > 0) or -1."""

    name = "oneclass"
    noun = "a one-class model"
    classifier = False
    stratified = False
    weighs_classes = False
    uses_C = False              # nu (-n) bounds the outliers; no C in the objective
    what = "labels (+1 / -1)"

    def classes_from(self, y, labels=None, n_rows=None, allow_many=False):
        """The two labels a one-class model predicts, +1 and -1, whatever y holds."""
        return np.array([1.0, -1.0])

    def merge_labels(self, lists):
        return np.array([1.0, -1.0])

    def targets(self, y, classes):
        return {}

    def check_model(self, k, n_columns, thresholds):
        if k != 2 or n_columns != 1:
            raise ModelError(f"a one-class model has the classes 1, -1 and 1 weight column, "
                             f"got {k} classes and {n_columns} columns")
        super().check_model(k, n_columns, thresholds)

    def predict(self, scores, classes, thresholds):
        return np.where(scores > 0, classes[0], classes[1])


BINARY, MULTICLASS, ORDINAL = Binary(), Multiclass(), Ordinal()
REGRESSION, ONECLASS = Regression(), OneClass()
KINDS = {k.name: k for k in (BINARY, MULTICLASS, ORDINAL, REGRESSION, ONECLASS)}


def get_kind(name):
    """The Kind called `name` (ModelError for an unknown one)."""
    kind = KINDS.get(name)
    if kind is None:
        raise ModelError(f"unknown model kind {name!r} (expected one of {', '.join(KINDS)})")
    return kind


def metric_value(metric, classes, y, pred, scores, qid=None):
    """Cross-validation metric `metric` (a key of METRICS) of predictions `pred` and
    decision values `scores` against labels y, for a model with these classes:
    accuracy; prbep, roc, f1 of the positive class (metrics.positive_class); mae
    (mean absolute rank error); pairwise (ordering accuracy, within qids when given)."""
    if metric == "accuracy":
        return metrics.accuracy(y, pred)
    if metric in ("prbep", "roc", "f1"):
        pos = metrics.positive_class(classes)
        if metric == "f1":
            return metrics.precision_recall_f1(y, pred, pos)[2]
        s = metrics.positive_scores(classes, scores, pos)
        return (metrics.prbep if metric == "prbep" else metrics.roc_area)(y == pos, s)
    if metric == "mae":
        return metrics.rank_mae(classes, y, pred)
    if metric == "pairwise":
        return metrics.pairwise_accuracy(y, scores, qid)
    raise ValueError(f"unknown metric {metric!r}")


def report(kind, classes, y_true, y_pred, scores, qid=None):
    """The measures that apply to a model of `kind` (a name): accuracy, then the
    kind's own (Kind.measures), as an ordered dict name -> value (nan where undefined)."""
    y_true = np.asarray(y_true, dtype=np.float64)
    out = {"accuracy": metrics.accuracy(y_true, y_pred)}
    out.update(get_kind(kind).measures(classes, y_true, y_pred, scores, qid))
    return out


def model_kind(solver_kind, n_classes):
    """The kind of the model a solver of `solver_kind` trains on n_classes classes: a
    binary solver's model is multiclass (one-vs-rest) beyond two classes."""
    if solver_kind == "binary" and n_classes > 2:
        return MULTICLASS
    return KINDS[solver_kind]
