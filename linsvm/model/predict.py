"""Streaming prediction of a test file with a model, and the measures of it.

`predict_file` reads SVM-light test data in blocks of rows
(`linsvm.io.svmlight.iter_svmlight_buffers`), so that memory does not grow with the file,
writes one predicted label per line (or the decision values) and returns a
`PredictionResult`: the counts, and the measures of the model's kind
(`linsvm.problem.kinds.report`: for binary models precision, recall, F1, PRBEP,
ROC area and the best-F1 threshold of the positive class; for ordinal ones mean
absolute error, exact-rank and pairwise accuracy and Kendall tau of ranks).  `report_lines`
formats them as the lines ``linsvm-predict`` prints to stderr, `note_lines`
as its notes on test data that does not match the model.  The command line is
`predict_file` plus printing::

    from linsvm import load_model
    from linsvm.model.predict import predict_file, report_lines

    result = predict_file("test.svm", load_model("train.model"), "test.pred")
    print("\\n".join(report_lines(result)))
"""
from __future__ import annotations

import math
import os
from typing import NamedTuple

import numpy as np

from ..errors import DataError, ModelError, ParameterError
from ..io.atomic import atomic_output
from ..io.svmlight import iter_svmlight_buffers
from ..problem.kinds import get_kind, report
from ..problem.labels import format_label
from .model import Model, ScoreOverflowError, load_model

__all__ = ["predict_file", "PredictionResult", "Kept", "report_lines", "note_lines", "default_chunk_rows"]

MAX_CHUNK_ROWS = 65536
MIN_CHUNK_ROWS = 256
MAX_CHUNK_SCORES = 1 << 22      # a chunk's scores: rows x columns doubles, 32 MB


def default_chunk_rows(n_columns: int) -> int:
    """Rows read and predicted at a time for a model of `n_columns` weight columns:
    65536, fewer for many classes so that a chunk's scores stay within 2^22 numbers."""
    return max(MIN_CHUNK_ROWS, min(MAX_CHUNK_ROWS, MAX_CHUNK_SCORES // n_columns))


class Kept(NamedTuple):
    """Every example's label, prediction and decision values (as decision_function
    returns them), and its probabilities ((n, n_classes); None without probability
    output), in the order of the test data: what `predict_file(..., keep=True)` keeps."""

    y: np.ndarray
    pred: np.ndarray
    scores: np.ndarray
    proba: np.ndarray | None


class PredictionResult(NamedTuple):
    """What `predict_file` found.

    source: the test data's name (``"-"`` for standard input); kind, classes,
    n_features: the model's; n_total, n_correct: examples predicted and those
    whose label equals the prediction; width: the largest feature index of
    the test data; n_unknown and unknown: the number of examples whose label is
    not one of the model's classes, and up to a few of those labels, sorted
    (counted only with ``measures=True``); measures: `linsvm.problem.kinds.report`'s
    dict for binary and ordinal models with ``measures=True``, else None;
    per_query: whether the ordinal measures are per qid (the data has several);
    kept: with ``keep=True``, every example's label, prediction, scores and
    probabilities (a `Kept`), else None.
    """

    source: str
    kind: str
    classes: np.ndarray
    n_features: int
    n_total: int
    n_correct: int
    width: int
    n_unknown: int
    unknown: tuple
    measures: dict | None
    per_query: bool
    kept: Kept | None = None

    @property
    def accuracy(self) -> float:
        """n_correct / n_total (nan without examples)."""
        return self.n_correct / self.n_total if self.n_total else math.nan


def _source_name(test_source) -> str:
    if isinstance(test_source, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(test_source))
    return str(getattr(test_source, "name", None) or getattr(test_source, "path", "<input>"))


def predict_file(test_source, model, out, decision_values=False, chunk_rows=None, measures=True,
                 progress=None, probability=False, model_name=None, keep=False,
                 name=None) -> PredictionResult:
    """Predict the SVM-light data `test_source` (a path, ``"-"`` for standard input; a
    binary data file too, or an open linsvm.io.binfile.BinaryData) with `model` (a
    Model, or the path of a model file) and write the predictions.  `name`: the test
    data's name in the result and in messages (default: `test_source`'s).

    `out`: a path (``"-"`` is standard output), written atomically (`linsvm.io.atomic`:
    on any error nothing is left and an existing file is untouched); a binary file
    object; or None (measures only).  One label per line, or with
    `decision_values` one line of decision values per example (one per weight
    column, ``repr`` form, space separated).  `chunk_rows`: rows read and
    predicted at a time (default `default_chunk_rows`).  With `measures`
    (default) the labels the model does not know are counted and, for binary and
    ordinal models, every label, prediction and score is kept for the measures
    (memory grows with the file then; without `measures` it does not).
    `progress(rows)` is called after each block.  With `keep`, the result also holds
    every example's label, prediction, scores and probabilities (`PredictionResult.kept`;
    memory grows with the file), with or without `measures`.

    With `probability` (the model must have probability sigmoids or be a logistic
    regression model, `Model.predict_proba`)
    the output is LIBSVM's ``svm-predict -b 1`` layout: a first line ``labels L1 L2 ...``
    (the model's classes_ in order), then per example the predicted label, which is
    the class of the largest probability (the first on ties, as LIBSVM; a logistic
    model's label is its prediction from the scores, as LIBLINEAR's), and one
    probability per class in the header's order, space separated, each in its
    shortest exact form (``repr``; LIBSVM prints ``%g``, which reads the same way
    to 6 digits).  The counts and measures then use that label.  It cannot be
    combined with `decision_values` (ParameterError).

    Bad data raise DataError naming the file and line; a decision value that
    overflows raises one error naming the model (`model_name`, or the file `model`
    was loaded from: Model.source) and the example: ModelError ``MODEL: example N of SOURCE: ...``
    when the model's weights are the larger factor of the products that overflowed,
    else DataError ``SOURCE: example N: ... (model MODEL)``; a file that cannot be
    read or written, OSError.
    """
    if not isinstance(model, Model):
        model = load_model(model)
    model_name = model_name or model.source
    if probability:
        if decision_values:
            raise ParameterError("probabilities (-b 1) and decision values cannot be written together")
        if model.probability_ is None and model.link_ is None:
            raise ModelError("the model has no probability sigmoids: train it with -b 1 "
                             "(linsvm-train) or linsvm.fit.calibration.calibrate")
    if chunk_rows is None:
        chunk_rows = default_chunk_rows(model.weights.shape[1])
    source = name if name is not None else _source_name(test_source)
    label_text = {float(c): format_label(c) for c in model.classes_}
    tally = _Tally(model, measures, keep)

    def run(fh):
        if probability and fh is not None:
            fh.write(("labels " + " ".join(label_text[float(c)] for c in model.classes_) + "\n")
                     .encode("ascii"))
        for X, y, qid in iter_svmlight_buffers(test_source, chunk_rows=chunk_rows, with_qid=True):
            tally.see(X, y)
            try:
                scores = model.decision_function(X)
            except ScoreOverflowError as exc:
                raise _overflow(exc, source, tally.n_total + exc.row + 1, model_name) from None
            P = model.proba_from_scores(scores) if probability else None
            # a logistic model labels by its scores, as LIBLINEAR's predict -b 1 does
            pred = model.classes_[np.argmax(P, axis=1)] if probability and \
                model.link_ is None else model.predict_from_scores(scores)
            if fh is not None:
                fh.write(_lines(label_text, pred, scores, P, decision_values))
            tally.add(y, qid, pred, scores, P)
            if progress is not None:
                progress(tally.n_total)

    if out is None or hasattr(out, "write"):
        run(out)
    else:
        with atomic_output(out, stdout_ok=True) as fh:
            run(fh)
    return tally.result(source)


def _overflow(exc, source, example, model_name):
    """The one-line error for a decision value that overflowed (ScoreOverflowError exc)
    on `example` (1-based) of the test data: about the model when its weights are the
    larger factor, else about the data; naming both."""
    where = "standard input" if source == "-" else source
    model_name = model_name or "the model"
    if exc.model_at_fault:
        return ModelError(f"{model_name}: example {example} of {where}: {exc.detail}")
    return DataError(f"{where}: example {example}: {exc.detail} (model {model_name})")


def _lines(label_text, pred, scores, P, decision_values):
    """One block of predict_file's output: per example its probabilities (P not None),
    its decision values, or its label."""
    if P is not None:
        text = "".join(label_text[v] + " " + " ".join(map(repr, row)) + "\n"
                       for v, row in zip(pred.tolist(), P.tolist()))
    elif decision_values:
        S = scores.reshape(scores.shape[0], -1)
        text = "".join(" ".join(map(repr, row.tolist())) + "\n" for row in S)
    else:
        labels = [label_text[v] for v in pred.tolist()] if label_text else \
            [repr(v) for v in pred.tolist()]       # a regression model: values in full
        text = "\n".join(labels) + ("\n" if labels else "")
    return text.encode("ascii")


class _Tally:
    """What predict_file counts over its blocks: examples, correct predictions, the
    widest feature index, labels the model does not know (with measures), and for
    the measures of the model's kind every label, prediction, score and qid."""

    def __init__(self, model, measures, keep_all=False):
        self.model, self.measures, self.keep_all = model, measures, keep_all
        # the measures need every score; so does keep
        self.keep = keep_all or (measures and get_kind(model.kind).has_measures)
        self.ys, self.preds, self.scores, self.qids, self.probas = [], [], [], [], []
        self.n_total = self.n_correct = self.n_unknown = self.width = 0
        self.unknown = set()

    def see(self, X, y):
        """A block read: its width and, with measures, the labels the model does not know."""
        self.width = max(self.width, X.n_features)
        if self.measures and get_kind(self.model.kind).has_classes:
            known = np.isin(y, self.model.classes_)
            if not known.all():
                self.n_unknown += int(np.count_nonzero(~known))
                if len(self.unknown) < 5:
                    self.unknown.update(np.unique(y[~known])[:5].tolist())

    def add(self, y, qid, pred, scores, proba=None):
        """A block predicted (proba: its probabilities, or None)."""
        self.n_total += y.shape[0]
        self.n_correct += int(np.count_nonzero(pred == y))
        if self.keep:
            self.ys.append(y)
            self.preds.append(pred)
            self.scores.append(scores)
            self.qids.append(qid)
            if proba is not None and self.keep_all:
                self.probas.append(proba)

    def result(self, source):
        """The PredictionResult of the blocks seen."""
        model = self.model
        measures, per_query, kept = None, False, None
        if self.keep_all:
            k = model.classes_.size
            cols = model.weights.shape[1]
            kept = Kept(_joined(self.ys, (0,)), _joined(self.preds, (0,)),
                        _joined(self.scores, (0,) if cols == 1 else (0, cols)),
                        _joined(self.probas, (0, k)) if self.probas else None)
        if self.measures and self.keep and self.n_total and get_kind(model.kind).has_measures:
            qid = np.concatenate(self.qids)
            per_query = bool(qid.size and np.any(qid != qid[0]))
            measures = report(model.kind, model.classes_, np.concatenate(self.ys),
                              np.concatenate(self.preds), np.concatenate(self.scores),
                              qid=qid if per_query else None)
        return PredictionResult(source=source, kind=model.kind, classes=model.classes_,
                                n_features=model.n_features_, n_total=self.n_total,
                                n_correct=self.n_correct, width=self.width,
                                n_unknown=self.n_unknown, unknown=tuple(sorted(self.unknown)),
                                measures=measures, per_query=per_query, kept=kept)


def _joined(blocks, empty_shape):
    """The blocks concatenated (float64), or an empty array of that shape for none."""
    return np.concatenate(blocks) if blocks else np.zeros(empty_shape)


def report_lines(result: PredictionResult) -> list:
    """The lines ``linsvm-predict`` prints to stderr for `result`: ``Accuracy = x% (a/b)``,
    then the lines of the model kind's measures (Kind.describe: for binary models
    precision, recall, F1, PRBEP and ROC area of the positive class and the best F1's
    threshold, for ordinal models the rank measures); undefined measures print as n/a.  Without examples, one line saying so."""
    if not result.n_total:
        return [f"{'stdin' if result.source == '-' else result.source}: 0 examples, nothing to predict"]
    return get_kind(result.kind).report_lines(result.n_correct, result.n_total, result.measures,
                                              result.classes, result.per_query)


def note_lines(result: PredictionResult) -> list:
    """Remarks on test data that does not match the model (``linsvm-predict`` prints
    each as ``note: ...``): its features beyond the model's, and labels the model does
    not know (they count as errors).  None without examples.  Test data whose indices
    stop short of the model's width is not remarked on: held-out rows often lack the
    training set's last features, which then count as 0 (docs/predict.md)."""
    if not result.n_total:
        return []
    notes = []
    n, width = result.n_features, result.width
    if width > n:
        notes.append(f"the test data has feature indices up to {width}, the model only 1..{n}: "
                     f"features above {n} are ignored")
    if result.n_unknown:
        unknown = result.unknown
        shown = ", ".join(format_label(v) for v in unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        what = get_kind(result.kind).what
        notes.append(f"{result.n_unknown} of {result.n_total} test examples have labels that are not "
                     f"among the model's {what} ({shown}); they count as errors")
    return notes
