"""Evaluation measures against brute force and scikit-learn / scipy."""
import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau

from linsvm import metrics


def brute_pairwise(levels, scores):
    good = total = 0.0
    for i, j in itertools.combinations(range(len(levels)), 2):
        if levels[i] == levels[j]:
            continue
        total += 1
        lo, hi = (i, j) if levels[i] < levels[j] else (j, i)
        good += 1.0 if scores[lo] < scores[hi] else 0.5 if scores[lo] == scores[hi] else 0.0
    return good / total


@pytest.mark.parametrize("seed", range(5))
def test_pairwise_accuracy_matches_brute_force_with_ties(seed):
    rng = np.random.default_rng(seed)
    levels = rng.integers(1, 5, size=60)
    scores = np.round(rng.standard_normal(60), 1)      # many score ties
    assert metrics.pairwise_accuracy(levels, scores) == pytest.approx(brute_pairwise(levels, scores))


def test_pairwise_accuracy_per_query():
    rng = np.random.default_rng(1)
    levels = rng.integers(0, 3, size=50)
    scores = rng.standard_normal(50)
    qid = np.repeat([7, 3, 9], [20, 20, 10])
    expected = np.mean([brute_pairwise(levels[qid == q], scores[qid == q]) for q in (3, 7, 9)])
    assert metrics.pairwise_accuracy(levels, scores, qid) == pytest.approx(expected)


def test_roc_area_matches_sklearn():
    from sklearn.metrics import roc_auc_score
    rng = np.random.default_rng(2)
    pos = rng.random(200) < 0.3
    scores = np.round(rng.standard_normal(200) + pos, 1)
    assert metrics.roc_area(pos, scores) == pytest.approx(roc_auc_score(pos, scores))


def test_prbep_is_precision_at_k_positives():
    pos = np.array([1, 0, 1, 1, 0, 0, 0, 1], dtype=bool)
    scores = np.array([0.9, 0.8, 0.7, 0.1, 0.6, -1.0, -2.0, 0.05])
    # top 4 scores: 0.9(+) 0.8(-) 0.7(+) 0.6(-) -> 2 of 4 positives
    assert metrics.prbep(pos, scores) == pytest.approx(0.5)
    # a tie across the cut: two examples share the last place, one positive
    scores2 = np.array([0.9, 0.8, 0.7, 0.5, 0.5, -1.0, -2.0, -3.0])
    assert metrics.prbep(pos, scores2) == pytest.approx((2 + 0.5) / 4)


def test_precision_recall_f1_and_accuracy():
    y = np.array([1, 1, -1, -1, 1])
    p = np.array([1, -1, 1, -1, 1])
    prec, rec, f1 = metrics.precision_recall_f1(y, p, 1)
    assert (prec, rec) == pytest.approx((2 / 3, 2 / 3)) and f1 == pytest.approx(2 / 3)
    assert metrics.accuracy(y, p) == pytest.approx(0.6)


def test_kendall_tau_matches_scipy():
    rng = np.random.default_rng(3)
    levels = rng.integers(1, 6, size=80)
    scores = levels + rng.standard_normal(80)
    assert metrics.kendall_tau(levels, scores) == pytest.approx(kendalltau(levels, scores).statistic)


def test_ordinal_report_mae_uses_rank_positions():
    classes = np.array([1.0, 5.0, 10.0])
    y = np.array([1.0, 5.0, 10.0, 10.0])
    pred = np.array([5.0, 5.0, 1.0, 10.0])
    r = metrics.report("ordinal", classes, y, pred, np.array([0.0, 1.0, 2.0, 3.0]))
    assert r["mae"] == pytest.approx((1 + 0 + 2 + 0) / 4)
    assert r["accuracy"] == pytest.approx(0.5)


def test_rank_mae_keeps_one_unit_when_a_label_is_not_a_training_rank():
    classes = np.array([1.0, 5.0, 10.0])
    # labels 1, 5, 10 are positions 0, 1, 2; 7 lies 2/5 of the way from 5 to 10
    assert metrics.rank_mae(classes, [1, 5, 10], [5, 5, 10]) == pytest.approx(1 / 3)
    assert metrics.rank_mae(classes, [1, 5, 7], [5, 5, 10]) == pytest.approx((1 + 0 + 0.6) / 3)
