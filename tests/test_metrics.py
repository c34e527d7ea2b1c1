"""Evaluation measures against brute force and scikit-learn / scipy."""
import itertools

import numpy as np
import pytest
from scipy.stats import kendalltau

from linsvm.problem import kinds, metrics


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
    r = kinds.report("ordinal", classes, y, pred, np.array([0.0, 1.0, 2.0, 3.0]))
    assert r["mae"] == pytest.approx((1 + 0 + 2 + 0) / 4)
    assert r["accuracy"] == pytest.approx(0.5)


def test_rank_mae_keeps_one_unit_when_a_label_is_not_a_training_rank():
    classes = np.array([1.0, 5.0, 10.0])
    # labels 1, 5, 10 are positions 0, 1, 2; 7 lies 2/5 of the way from 5 to 10
    assert metrics.rank_mae(classes, [1, 5, 10], [5, 5, 10]) == pytest.approx(1 / 3)
    assert metrics.rank_mae(classes, [1, 5, 7], [5, 5, 10]) == pytest.approx((1 + 0 + 0.6) / 3)


def brute_best_f1(pos, scores):
    """Largest F1 of "positive when score > t" over every t (each distinct score as the
    lowest one called positive), by sklearn."""
    from sklearn.metrics import f1_score
    return max(f1_score(pos, scores >= c) for c in np.unique(scores))


@pytest.mark.parametrize("seed", range(6))
def test_best_f1_threshold_matches_brute_force_with_ties(seed):
    from sklearn.metrics import f1_score
    rng = np.random.default_rng(seed)
    pos = rng.random(80) < 0.2
    pos[0] = True
    scores = np.round(rng.standard_normal(80) + 1.2 * pos, 1)      # many ties
    f1, t = metrics.best_f1_threshold(pos, scores)
    assert f1 == pytest.approx(brute_best_f1(pos, scores))
    assert f1_score(pos, scores > t) == pytest.approx(f1)           # the threshold gives it
    assert not np.any(scores == t)                                   # never on a score


def test_best_f1_threshold_all_positive_and_undefined():
    f1, t = metrics.best_f1_threshold([True, True], [0.3, -0.2])
    assert f1 == 1.0 and t < -0.2
    assert np.isnan(metrics.best_f1_threshold([False, False], [0.3, -0.2])[0])


def test_positive_class_is_1_when_present():
    assert metrics.positive_class([0.0, 1.0]) == 1.0
    assert metrics.positive_class([1.0, 0.0]) == 1.0
    assert metrics.positive_class([-1.0, 1.0]) == 1.0
    assert metrics.positive_class([3.0, 2.0]) == 3.0
    np.testing.assert_array_equal(metrics.positive_scores([0.0, 1.0], [2.0, -1.0], 1.0), [-2.0, 1.0])


def test_binary_report_is_about_class_1_for_01_models_with_class_0_first():
    from sklearn.metrics import f1_score, roc_auc_score
    rng = np.random.default_rng(5)
    y = (rng.random(100) < 0.3).astype(float)
    scores = rng.standard_normal(100) - y            # the model's column scores class 0
    pred = np.where(scores > 0, 0.0, 1.0)
    r = kinds.report("binary", np.array([0.0, 1.0]), y, pred, scores)
    assert r["positive"] == 1.0
    assert r["f1"] == pytest.approx(f1_score(y == 1, pred == 1))
    assert r["roc_area"] == pytest.approx(roc_auc_score(y == 1, -scores))


def test_f1_is_zero_not_nan_when_nothing_is_predicted_positive():
    p, r, f = metrics.precision_recall_f1([1, -1, 1], [-1, -1, -1], 1)
    assert np.isnan(p) and r == 0.0 and f == 0.0
    assert np.isnan(metrics.precision_recall_f1([-1, -1], [-1, -1], 1)[2])


@pytest.mark.parametrize("seed", range(5))
def test_roc_area_counts_ordered_pairs_with_ties_as_halves(seed):
    """The mid-rank statistic against the definition, pair by pair (scores drawn from
    few values, so that ties are common)."""
    rng = np.random.default_rng(seed)
    pos = rng.random(40) < 0.3
    scores = rng.integers(0, 6, size=40).astype(float)
    p, q = scores[pos], scores[~pos]
    brute = (np.sum(p[:, None] > q[None, :]) + 0.5 * np.sum(p[:, None] == q[None, :])) / (p.size * q.size)
    assert metrics.roc_area(pos, scores) == pytest.approx(brute, rel=1e-12)
    assert np.isnan(metrics.roc_area(np.zeros(5, bool), np.arange(5.0)))
