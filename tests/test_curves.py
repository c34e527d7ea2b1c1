"""linsvm.problem.curves: the points of the ROC, precision-recall and reliability curves,
against scikit-learn's roc_curve, precision_recall_curve and calibration_curve on the
same labels and scores (ties included)."""
import numpy as np
import pytest

from linsvm.problem import curves

sklearn_metrics = pytest.importorskip("sklearn.metrics")
sklearn_calibration = pytest.importorskip("sklearn.calibration")


def labels_and_scores(seed, n=300, tied=True):
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.35
    s = rng.standard_normal(n) + 1.2 * y
    return y, (np.round(s, 1) if tied else s)


@pytest.mark.parametrize("seed, tied", [(0, True), (1, False), (2, True)])
def test_roc_points_are_sklearns(seed, tied):
    y, s = labels_and_scores(seed, tied=tied)
    roc = curves.roc_points(y, s)
    fpr, tpr, thresholds = sklearn_metrics.roc_curve(y, s, drop_intermediate=False)
    np.testing.assert_allclose(roc.x, fpr, rtol=0, atol=1e-15)
    np.testing.assert_allclose(roc.y, tpr, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(roc.thresholds, thresholds)
    # the trapezoids under the points are the ROC area
    assert np.trapezoid(roc.y, roc.x) == pytest.approx(sklearn_metrics.roc_auc_score(y, s),
                                                       rel=1e-12)


@pytest.mark.parametrize("seed, tied", [(0, True), (3, False)])
def test_pr_points_are_sklearns(seed, tied):
    """scikit-learn lists the points by increasing threshold and appends (recall 0,
    precision 1); ours run from the highest threshold down."""
    y, s = labels_and_scores(seed, tied=tied)
    pr = curves.pr_points(y, s)
    precision, recall, thresholds = sklearn_metrics.precision_recall_curve(y, s)
    np.testing.assert_allclose(pr.y, precision[:-1][::-1], rtol=0, atol=1e-15)
    np.testing.assert_allclose(pr.x, recall[:-1][::-1], rtol=0, atol=1e-15)
    np.testing.assert_array_equal(pr.thresholds, thresholds[::-1])


def test_operating_point_is_the_confusion_matrix():
    y, s = labels_and_scores(4)
    pred = s > 0.3
    (tn, fp), (fn, tp) = sklearn_metrics.confusion_matrix(y, pred)
    point = curves.operating_point(y, pred)
    assert point.fpr == fp / (fp + tn) and point.tpr == tp / (tp + fn)
    assert point.precision == sklearn_metrics.precision_score(y, pred)
    assert point.recall == sklearn_metrics.recall_score(y, pred)
    # the model's threshold is one of the curves' points
    roc = curves.roc_points(y, s)
    k = int(np.flatnonzero(roc.thresholds > 0.3)[-1])
    assert (roc.x[k], roc.y[k]) == (point.fpr, point.tpr)


def test_reliability_bins_are_sklearns_calibration_curve():
    rng = np.random.default_rng(5)
    p = np.r_[rng.random(400), 0.0, 0.1, 0.2, 0.5, 1.0, 1.0]        # edges belong below
    y = rng.random(p.size) < p
    rel = curves.reliability_bins(y, p, n_bins=10)
    observed, predicted = sklearn_calibration.calibration_curve(y, p, n_bins=10,
                                                                strategy="uniform")
    np.testing.assert_allclose(rel.observed, observed, rtol=1e-15)
    np.testing.assert_allclose(rel.predicted, predicted, rtol=1e-15)
    assert rel.counts.sum() == p.size
    # by hand: bin i holds (i/10, (i+1)/10], bin 0 also 0: 0.1 is in bin 0, 1.0 in bin 9
    per_bin = dict(zip(rel.index.tolist(), rel.counts.tolist()))
    by_hand = np.bincount(np.clip(np.ceil(p * 10).astype(int) - 1, 0, 9), minlength=10)
    assert per_bin == {i: int(c) for i, c in enumerate(by_hand) if c}


def test_empty_bins_are_left_out():
    rel = curves.reliability_bins([True, False, True], [0.05, 0.07, 0.95])
    assert rel.index.tolist() == [0, 9] and rel.counts.tolist() == [2, 1]
    assert rel.observed.tolist() == [0.5, 1.0]


def test_one_class_makes_the_other_rate_nan():
    roc = curves.roc_points([True, True], [0.2, 0.1])
    assert np.isnan(roc.x).all() and roc.y.tolist() == [0.0, 0.5, 1.0]
    pr = curves.pr_points([False, False], [0.2, 0.1])
    assert np.isnan(pr.x).all() and pr.y.tolist() == [0.0, 0.0]


def test_bad_inputs_raise():
    with pytest.raises(ValueError, match="one length"):
        curves.roc_points([True, False], [0.1])
    with pytest.raises(ValueError, match="non-empty"):
        curves.pr_points([], [])
    with pytest.raises(ValueError, match="finite"):
        curves.roc_points([True, False], [np.nan, 1.0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        curves.reliability_bins([True], [1.5])
