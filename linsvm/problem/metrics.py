"""Evaluation measures for linear models, computed from labels and decision values.

Binary:      accuracy, precision / recall / F1 of the positive class, PRBEP
             (precision at the recall-precision break-even point, Joachims 2006
             Sec. 4), ROC area, and the decision threshold with the best F1.  The
             positive class is 1 when the labels include 1 (labels 0/1 and -1/+1
             alike), else the model's first class (positive_class).
Multi-class: accuracy.
Ordinal and ranking: mean absolute error of the ranks, exact-rank accuracy,
             pairwise ordering accuracy (fraction of pairs with different true
             ranks that the scores order correctly, score ties counting one
             half; on two ranks it is the ROC area), Kendall's tau-b; with
             query ids the pairwise measures are taken within each query and
             averaged over queries that have at least one such pair.
All take plain arrays; none reads files.
"""
from __future__ import annotations

import numpy as np


def accuracy(y_true, y_pred):
    """Fraction of examples with y_pred == y_true."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    return float(np.mean(y_true == y_pred)) if y_true.size else float("nan")


def precision_recall_f1(y_true, y_pred, positive):
    """Precision, recall and F1 = 2 TP / (predicted + true positives) of class
    `positive`; precision is nan with no positive prediction, recall with no
    positive example, F1 only with neither (it is 0 when TP = 0 otherwise)."""
    y_true, y_pred = np.asarray(y_true), np.asarray(y_pred)
    tp = np.count_nonzero((y_pred == positive) & (y_true == positive))
    n_pred, n_true = np.count_nonzero(y_pred == positive), np.count_nonzero(y_true == positive)
    p = tp / n_pred if n_pred else float("nan")
    r = tp / n_true if n_true else float("nan")
    f = 2 * tp / (n_pred + n_true) if n_pred + n_true else float("nan")
    return float(p), float(r), float(f)


def positive_class(classes):
    """The class the binary measures call positive: 1 (= +1) when it is one of the
    two classes, else classes[0] (the class of decision values > 0)."""
    classes = np.asarray(classes, dtype=np.float64)
    return 1.0 if 1.0 in classes.tolist() else float(classes[0])


def positive_scores(classes, scores, positive):
    """Decision values oriented so that higher means `positive` (the model's
    column scores classes[0] against classes[1])."""
    scores = np.asarray(scores, dtype=np.float64)
    return scores if positive == classes[0] else -scores


def best_f1_threshold(is_positive, scores):
    """(best F1, threshold t): the largest F1 of the rule "positive when score > t"
    over every t, with t halfway between two consecutive distinct scores (or 1
    below the lowest score when every example is called positive).  F1 of a cut
    calling the k highest scores positive is 2 TP / (k + P).  (nan, nan) when
    there is no positive example."""
    pos = np.asarray(is_positive, dtype=bool)
    s = np.asarray(scores, dtype=np.float64)
    n_pos = int(np.count_nonzero(pos))
    if n_pos == 0:
        return float("nan"), float("nan")
    order = np.argsort(-s, kind="stable")
    s_sorted, tp = s[order], np.cumsum(pos[order])
    last = np.flatnonzero(np.append(s_sorted[1:] != s_sorted[:-1], True))   # ends of tie groups
    k = last + 1
    f1 = 2.0 * tp[last] / (k + n_pos)
    best = int(np.argmax(f1))
    i = last[best]
    t = 0.5 * (s_sorted[i] + s_sorted[i + 1]) if i + 1 < s.size else s_sorted[i] - 1.0
    return float(f1[best]), float(t)


def prbep(is_positive, scores):
    """Precision/recall break-even point: with k = number of positives, the fraction
    of positives among the k highest scores (then precision = recall).  Examples
    tied with the k-th score share the remaining places in proportion."""
    pos = np.asarray(is_positive, dtype=bool)
    s = np.asarray(scores, dtype=np.float64)
    k = int(np.count_nonzero(pos))
    if k == 0 or k == s.size:
        return float("nan")
    kth = np.sort(s)[::-1][k - 1]
    above = s > kth
    tied = s == kth
    places = k - int(np.count_nonzero(above))
    hits = np.count_nonzero(pos & above) + places * np.count_nonzero(pos & tied) / np.count_nonzero(tied)
    return float(hits / k)


def _pairs_ordered(levels, scores):
    """(correctly ordered pairs + 1/2 score ties, pairs with different levels), in
    O(n log n) whatever the number of levels.

    From Kendall's tau-b (scipy, O(n log n)) = (P - Q) / sqrt((n0 - n1)(n0 - n2)),
    n0 all pairs, n1 pairs tied in level, n2 pairs tied in score; the pairs with
    different levels number N = n0 - n1 = P + Q + T, T those tied in score only
    (= n2 - n3, n3 tied in both).  So P = ((P - Q) + (N - T)) / 2.
    """
    from scipy.stats import kendalltau

    levels = np.asarray(levels, dtype=np.float64)
    scores = np.asarray(scores, dtype=np.float64)

    def tied(*cols):
        _, counts = np.unique(np.column_stack(cols), axis=0, return_counts=True)
        return float(np.sum(counts * (counts - 1)) / 2)
    n = levels.shape[0]
    n0 = n * (n - 1) / 2
    n1, n2, n3 = tied(levels), tied(scores), tied(levels, scores)
    N = n0 - n1
    if N == 0:
        return 0.0, 0
    T = n2 - n3
    if n0 - n2 == 0:                       # every score equal: all pairs tied
        return 0.5 * N, int(round(N))
    p_minus_q = kendalltau(levels, scores).statistic * np.sqrt((n0 - n1) * (n0 - n2))
    P = (p_minus_q + (N - T)) / 2
    return float(P + 0.5 * T), int(round(N))


def pairwise_accuracy(levels, scores, qid=None):
    """Fraction of pairs with different true levels ordered correctly by the scores
    (ties in score count 1/2).  With qid: per query, averaged over queries with pairs."""
    if qid is None:
        good, total = _pairs_ordered(levels, scores)
        return good / total if total else float("nan")
    vals = [pairwise_accuracy(np.asarray(levels)[m], np.asarray(scores)[m])
            for m in _query_masks(qid)]
    vals = [v for v in vals if not np.isnan(v)]
    return float(np.mean(vals)) if vals else float("nan")


def roc_area(is_positive, scores):
    """Area under the ROC curve (score ties count 1/2): the pairwise accuracy on two
    levels, by the Mann-Whitney statistic on mid-ranks, (R+ - P(P+1)/2) / (P N), R+ the
    sum of the positives' ranks among all scores, tied scores sharing the mean of their
    ranks; nan without a positive or a negative example."""
    pos = np.asarray(is_positive, dtype=bool).reshape(-1)
    s = np.asarray(scores, dtype=np.float64).reshape(-1)
    n, n_pos = pos.shape[0], int(np.count_nonzero(pos))
    if n_pos == 0 or n_pos == n:
        return float("nan")
    order = np.argsort(s, kind="stable")
    sorted_s = s[order]
    starts = np.flatnonzero(np.r_[True, sorted_s[1:] != sorted_s[:-1]])
    ends = np.r_[starts[1:], n]
    ranks = np.repeat((starts + ends + 1) / 2.0, ends - starts)     # 1-based mid-ranks
    r_pos = float(np.sum(ranks[pos[order]]))
    return (r_pos - n_pos * (n_pos + 1) / 2.0) / (n_pos * (n - n_pos))


def kendall_tau(levels, scores, qid=None):
    """Kendall's tau-b between true levels and scores (per query and averaged with qid)."""
    from scipy.stats import kendalltau

    if qid is None:
        if np.unique(levels).size < 2:
            return float("nan")
        return float(kendalltau(levels, scores).statistic)
    vals = [kendall_tau(np.asarray(levels)[m], np.asarray(scores)[m]) for m in _query_masks(qid)]
    vals = [v for v in vals if not np.isnan(v)]
    return float(np.mean(vals)) if vals else float("nan")


def _query_masks(qid):
    qid = np.asarray(qid)
    for q in np.unique(qid):
        yield qid == q


def rank_mae(classes, y_true, y_pred):
    """Mean absolute error in rank positions (the ranks as consecutive integers,
    Chu & Keerthi's convention): a label equal to the r-th rank is r; a label
    between two ranks is placed between their positions by linear interpolation
    (beyond the ends, one position per gap to the nearest rank's neighbour)."""
    classes = np.asarray(classes, dtype=np.float64)
    pos = np.arange(classes.shape[0], dtype=np.float64)

    def position(v):
        v = np.asarray(v, dtype=np.float64)
        p = np.interp(v, classes, pos)
        if classes.shape[0] > 1:
            lo_gap, hi_gap = classes[1] - classes[0], classes[-1] - classes[-2]
            p = np.where(v < classes[0], (v - classes[0]) / lo_gap, p)
            p = np.where(v > classes[-1], pos[-1] + (v - classes[-1]) / hi_gap, p)
        return p
    return float(np.mean(np.abs(position(y_pred) - position(y_true))))


def regression_measures(y_true, y_pred):
    """(mean squared error, squared correlation coefficient) of real predictions, as
    LIBLINEAR's predict prints them for regression models: MSE = sum (v - y)^2 / l and
    SCC = (l S_vy - S_v S_y)^2 / ((l S_vv - S_v^2)(l S_yy - S_y^2)) with S_v = sum v,
    S_vy = sum v y, ... (nan when either side is constant)."""
    y = np.asarray(y_true, dtype=np.float64).ravel()
    v = np.asarray(y_pred, dtype=np.float64).ravel()
    if y.shape != v.shape or y.size == 0:
        raise ValueError("regression_measures needs two non-empty arrays of one length")
    n = float(y.size)
    mse = float(np.mean((v - y) ** 2))
    sv, sy = float(v.sum()), float(y.sum())
    num = (n * float(v @ y) - sv * sy) ** 2
    den = (n * float(v @ v) - sv * sv) * (n * float(y @ y) - sy * sy)
    return mse, (num / den if den > 0 else float("nan"))
