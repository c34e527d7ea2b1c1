"""The points of the curves `linsvm-predict --plot` draws, from labels and scores.

Binary models: the ROC curve (false against true positive rate) and the
precision-recall curve of the rule "positive when score >= t", one point per distinct
score t, from the highest down; the operating point of given predictions; the
reliability diagram of probability estimates (observed frequency of the positive
class against the mean predicted probability, in equal-width bins).  All take plain
arrays and return arrays; none draws (linsvm.cli.plot_curves does).

With P positives and N negatives, the examples sorted by decreasing score and the
tie groups of equal scores kept together, the cut after a group calling the k
highest-scored examples positive has TP(k) true positives and FP(k) = k - TP(k) false
ones: TPR = TP / P, FPR = FP / N, precision = TP / k, recall = TPR.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Curve", "roc_points", "pr_points", "operating_point", "reliability_bins",
           "Reliability"]


class Curve(NamedTuple):
    """x and y of a curve's points, and the score threshold t of each (the rule is
    score >= t; +inf for the point that calls nothing positive)."""

    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray


def _cuts(is_positive, scores):
    """(TP, FP, thresholds) at the end of each tie group of the scores sorted
    decreasingly; ValueError for arrays of different lengths, non-finite scores, or
    no example."""
    pos = np.asarray(is_positive, dtype=bool).reshape(-1)
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    if pos.shape != s.shape or s.size == 0:
        raise ValueError("labels and scores must be two non-empty arrays of one length")
    if not np.isfinite(s).all():
        raise ValueError("scores must be finite")
    order = np.argsort(-s, kind="stable")
    s_sorted, tp = s[order], np.cumsum(pos[order])
    last = np.flatnonzero(np.append(s_sorted[1:] != s_sorted[:-1], True))
    tp = tp[last].astype(np.float64)
    fp = (last + 1) - tp
    return tp, fp, s_sorted[last]


def roc_points(is_positive, scores) -> Curve:
    """The ROC curve: x the false positive rate, y the true positive rate, starting at
    (0, 0) (threshold +inf) and ending at (1, 1), one point per distinct score.  A rate
    whose class has no example is nan."""
    tp, fp, t = _cuts(is_positive, scores)
    n_pos, n_neg = tp[-1], fp[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        tpr = np.r_[0.0, tp] / n_pos if n_pos else np.full(tp.size + 1, np.nan)
        fpr = np.r_[0.0, fp] / n_neg if n_neg else np.full(fp.size + 1, np.nan)
    return Curve(fpr, tpr, np.r_[np.inf, t])


def pr_points(is_positive, scores) -> Curve:
    """The precision-recall curve: x the recall, y the precision, one point per distinct
    score from the highest down (recall increasing to 1).  Without a positive example
    the recall is nan."""
    tp, fp, t = _cuts(is_positive, scores)
    n_pos = tp[-1]
    precision = tp / (tp + fp)
    recall = tp / n_pos if n_pos else np.full(tp.size, np.nan)
    return Curve(recall, precision, t)


class OperatingPoint(NamedTuple):
    """What given predictions score: false and true positive rates, precision and
    recall (nan where undefined)."""

    fpr: float
    tpr: float
    precision: float
    recall: float


def operating_point(is_positive, predicted_positive) -> OperatingPoint:
    """The point the predictions `predicted_positive` (booleans) make on both curves:
    FPR = FP / N, TPR = recall = TP / P, precision = TP / (TP + FP)."""
    pos = np.asarray(is_positive, dtype=bool).reshape(-1)
    pred = np.asarray(predicted_positive, dtype=bool).reshape(-1)
    tp = np.count_nonzero(pos & pred)
    fp = np.count_nonzero(~pos & pred)
    n_pos, n_neg = np.count_nonzero(pos), np.count_nonzero(~pos)
    tpr = tp / n_pos if n_pos else float("nan")
    return OperatingPoint(fp / n_neg if n_neg else float("nan"), tpr,
                          tp / (tp + fp) if tp + fp else float("nan"), tpr)


class Reliability(NamedTuple):
    """A reliability diagram's bins that hold examples: mean predicted probability,
    observed fraction of positives, number of examples and index (0-based) of each, and
    the edges of all the bins."""

    predicted: np.ndarray
    observed: np.ndarray
    counts: np.ndarray
    index: np.ndarray
    edges: np.ndarray


def reliability_bins(is_positive, probability, n_bins=10) -> Reliability:
    """Probabilities of the positive class in `n_bins` equal-width bins of [0, 1]: bin 0
    holds [0, 1/n], bin i > 0 holds (i/n, (i+1)/n]; per bin that holds an example, the
    mean probability and the fraction of its examples that are positive.  A calibrated
    model's points lie on the diagonal.  ValueError for a probability outside [0, 1]."""
    pos = np.asarray(is_positive, dtype=bool).reshape(-1)
    p = np.asarray(probability, dtype=np.float64).reshape(-1)
    if pos.shape != p.shape or p.size == 0:
        raise ValueError("labels and probabilities must be two non-empty arrays of one length")
    if not ((p >= 0) & (p <= 1)).all():
        raise ValueError("probabilities must lie in [0, 1]")
    edges = np.linspace(0.0, 1.0, n_bins + 1)
    bins = np.searchsorted(edges[1:-1], p, side="left")
    counts = np.bincount(bins, minlength=n_bins)
    sums = np.bincount(bins, weights=p, minlength=n_bins)
    hits = np.bincount(bins, weights=pos.astype(np.float64), minlength=n_bins)
    full = counts > 0
    return Reliability(sums[full] / counts[full], hits[full] / counts[full], counts[full],
                       np.flatnonzero(full), edges)
