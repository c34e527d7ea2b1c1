"""Labels and classes: checks, LIBLINEAR's class order, codes, class weights.

A classifier's classes follow LIBLINEAR's order: by first appearance in the
training labels, except that the label set {-1, +1} puts +1 first; for two
classes the positive class (t = +1, decision > 0) is classes[0].  Ordinal
levels are sorted by value.  On several MPI ranks the first-appearance order is
that of the union of the ranks' blocks in rank order (`merge_first_appearance`),
which is the serial order of the whole data set.
"""
from __future__ import annotations

import numpy as np

from .._kernels import scan_labels
from ..errors import DataError

# A classifier's labels must look like classes (rule stated in `linsvm-train --help`):
MAX_CLASSES_FEW_ROWS = 100      # more classes than this ...
MIN_ROWS_PER_CLASS = 10         # ... with fewer training rows per class on average: not classes


class LabelError(DataError):
    """Labels that a kind's rules refuse (linsvm.problem.kinds), found once the data
    are read.  `label`: the label whose first row is at fault -- the first label of
    the data, in order of first appearance, that breaks the rule -- or None when no
    row is (one class), so that whoever read the data can name that row's file and
    line (linsvm.io.places)."""

    def __init__(self, message, label=None):
        super().__init__(message)
        self.label = None if label is None else float(label)


def first_non_integer(values):
    """The first of `values` (floats, e.g. labels in order of first appearance) that is
    not an integer, or None."""
    return next((v for v in np.asarray(values, dtype=np.float64).tolist()
                 if not v.is_integer()), None)


def format_label(v) -> str:
    """A label as linsvm writes it: the shortest text that reads back as the same
    double, integers without '.0'."""
    v = float(v)
    return str(int(v)) if v.is_integer() and abs(v) < 1e16 else repr(v)


def class_order_raw(y):
    """y's distinct values in order of first appearance (class_order without LIBLINEAR's
    {-1, +1} rule)."""
    values, first = np.unique(y, return_index=True)
    return values[np.argsort(first, kind="stable")]


def distinct(y):
    """y's distinct values in order of first appearance, from one compiled scan when
    there are few (np.unique otherwise: it sorts, and costs NumPy's masked-array module
    on first use)."""
    y = np.ascontiguousarray(y, dtype=np.float64)
    labels, _ = scan_labels(y)
    return class_order_raw(y) if labels is None else labels


def distinct_counts(y):
    """(y's distinct values in order of first appearance, the number of each)."""
    labels = distinct(y)
    if labels.shape[0] > 64:
        values, counts = np.unique(y, return_counts=True)
        return values, counts
    return labels, np.array([np.count_nonzero(y == v) for v in labels.tolist()], dtype=np.int64)


def class_order(y, labels=None):
    """The class labels of y in LIBLINEAR's order (module notes).  labels: y's
    distinct values in order of first appearance, if already known."""
    classes = labels
    if classes is None and isinstance(y, np.ndarray) and y.dtype == np.float64 and y.ndim == 1:
        classes, _ = scan_labels(np.ascontiguousarray(y))   # one pass; None: many labels
    if classes is None:
        classes = class_order_raw(y)
    if classes.shape[0] == 2 and set(classes.tolist()) == {-1.0, 1.0}:
        classes = np.array([1.0, -1.0])
    return classes


def merge_first_appearance(lists):
    """The distinct values of several label lists (each in first-appearance order,
    e.g. one per MPI rank in rank order), in order of first appearance over the
    lists in turn: the first-appearance order of their concatenation."""
    merged = {}
    for values in lists:
        for v in values:
            merged.setdefault(float(v), None)
    return np.array(list(merged), dtype=np.float64)


def check_labels(y, n_rows):
    """y as contiguous float64, one finite label per row of X, and its distinct
    labels in order of first appearance (None when there are many), from one scan.
    Labels are numbers (linsvm.sklearn's estimators encode any others)."""
    try:
        y = np.ascontiguousarray(y, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise DataError(f"labels must be numbers ({exc})") from None
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise DataError(f"y has shape {y.shape}, expected ({n_rows},): one label per row of X")
    labels, bad = scan_labels(y)
    if bad >= 0:
        raise DataError(f"label of example {bad + 1} is not finite")
    return y, labels


def check_class_like(classes, n_rows):
    """Refuse labels that are not class-like for a classifier (LabelError, a
    DataError): a label that is not an integer (real-valued targets: regression
    data), or more than MAX_CLASSES_FEW_ROWS classes with fewer than
    MIN_ROWS_PER_CLASS training rows per class on average.  `classes` in order of
    first appearance (the error's label is then the first row's at fault: the first
    non-integer, or the first label beyond MAX_CLASSES_FEW_ROWS).
    train(allow_many_classes=True) skips this check."""
    frac = first_non_integer(classes)
    if frac is not None:
        raise LabelError(f"label {frac:.17g} is not an integer ({classes.shape[0]} distinct labels): "
                         "this looks like regression data, not classes: use a regression solver "
                         "(-s svr = LIBLINEAR -s 11, or svr-dual = -s 12 / -s 13); to train one "
                         "class per distinct value anyway, allow it (--allow-many-classes)", frac)
    k = classes.shape[0]
    if k > MAX_CLASSES_FEW_ROWS and n_rows < MIN_ROWS_PER_CLASS * k:
        extra = classes[MAX_CLASSES_FEW_ROWS]
        raise LabelError(f"{k} distinct labels among {n_rows} training examples (fewer than "
                         f"{MIN_ROWS_PER_CLASS} per class; label {format_label(extra)} is the "
                         f"{MAX_CLASSES_FEW_ROWS + 1}st): these do not look like classes; to train "
                         "one class per distinct value anyway, allow it (--allow-many-classes)",
                         extra)


def class_codes(y, classes):
    """int32 index of each label of y in classes (every label must be one of them)."""
    codes = np.empty(y.shape[0], dtype=np.int32)
    for j, label in enumerate(classes):
        codes[y == label] = j
    return codes


def class_counts(y, classes):
    """The number of examples of each class of `classes` in y (float64; a class absent
    from y counts 0)."""
    labels, n_of = np.unique(y, return_counts=True)
    count = dict(zip(labels.tolist(), n_of.tolist()))
    return np.array([count.get(c, 0) for c in classes.tolist()], dtype=np.float64)


def balanced_class_weight(counts, classes):
    """scikit-learn's "balanced" rule from per-class counts (class_counts, summed over
    the ranks when distributed): weight of class j = n_samples / (n_classes * n_j); a
    dict label -> weight in the order of classes."""
    n, k = counts.sum(), classes.shape[0]
    return {float(c): float(n / (k * m)) for c, m in zip(classes.tolist(), counts.tolist())}
