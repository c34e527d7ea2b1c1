"""The kinds of problems (linsvm.problem.kinds): label rules, targets, model shapes,
prediction rules and metrics, each against values worked out by hand."""
import numpy as np
import pytest

from linsvm.errors import DataError, ModelError
from linsvm.problem.kinds import (BINARY, KINDS, MULTICLASS, ONECLASS, ORDINAL, REGRESSION, get_kind,
                                  metric_value, model_kind)


def test_classifier_classes_follow_liblinears_order():
    y = np.array([3.0, 1.0, 3.0, 2.0])
    assert BINARY.classes_from(y).tolist() == [3.0, 1.0, 2.0]          # first appearance
    assert BINARY.classes_from(np.array([-1.0, 1.0, -1.0])).tolist() == [1.0, -1.0]


def test_classifier_refuses_regression_like_labels_unless_allowed():
    y = np.array([0.5, 1.0, 2.0])
    with pytest.raises(DataError, match="not an integer"):
        BINARY.classes_from(y)
    assert BINARY.classes_from(y, allow_many=True).tolist() == [0.5, 1.0, 2.0]


def test_one_class_is_refused():
    with pytest.raises(DataError, match="only one class"):
        MULTICLASS.classes_from(np.array([2.0, 2.0]))


@pytest.mark.parametrize("y", [np.array(["a", "b"] * 3), [object()] * 6])
def test_labels_that_are_not_numbers_are_a_data_error(y):
    import scipy.sparse as sp
    import linsvm
    with pytest.raises(DataError, match="labels must be numbers"):
        linsvm.train(sp.identity(6, format="csr"), y)


def test_ordinal_levels_are_sorted_integer_ranks():
    assert ORDINAL.classes_from(np.array([3.0, 1.0, 2.0, 1.0])).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(DataError, match="integer ranks"):
        ORDINAL.classes_from(np.array([1.5, 2.0]))
    t = ORDINAL.targets(np.array([3.0, 1.0, 2.0]), np.array([1.0, 2.0, 3.0]))
    assert t["codes"].tolist() == [2, 0, 1] and t["n_classes"] == 3


def test_labels_merged_over_ranks():
    # rank 0 saw 2, 5; rank 1 saw 5, 1, 2: the union in first-appearance order
    assert BINARY.merge_labels([[2.0, 5.0], [5.0, 1.0, 2.0]]).tolist() == [2.0, 5.0, 1.0]
    assert ORDINAL.merge_labels([[4.0, 2.0], [3.0]]).tolist() == [2.0, 3.0, 4.0]


def test_prediction_rules():
    s = np.array([0.5, -0.1, 0.0])
    assert BINARY.predict(s, np.array([7.0, 9.0]), None).tolist() == [7.0, 9.0, 9.0]
    S = np.array([[0.1, 0.3, 0.3], [2.0, 1.0, 0.0]])
    assert MULTICLASS.predict(S, np.array([1.0, 2.0, 3.0]), None).tolist() == [2.0, 1.0]
    # thresholds -1, 1: scores below -1 (or equal) -> level 1, in (-1, 1] -> 2, above -> 3
    levels = ORDINAL.predict(np.array([-2.0, -1.0, 0.0, 1.0, 5.0]), np.array([1.0, 2.0, 3.0]),
                             np.array([-1.0, 1.0]))
    assert levels.tolist() == [1.0, 1.0, 2.0, 2.0, 3.0]


def test_model_shapes():
    BINARY.check_model(2, 1, None)
    with pytest.raises(ModelError, match="2 classes and 1 weight column"):
        BINARY.check_model(3, 1, None)
    with pytest.raises(ModelError, match="one weight column per class"):
        MULTICLASS.check_model(3, 2, None)
    with pytest.raises(ModelError, match="needs thresholds"):
        ORDINAL.check_model(3, 1, None)
    with pytest.raises(ModelError, match="ascending"):
        ORDINAL.check_model(3, 1, np.array([1.0, 0.0]))
    with pytest.raises(ModelError, match="only ordinal models have thresholds"):
        MULTICLASS.check_model(2, 2, np.array([0.0]))


def test_metrics_by_kind():
    assert model_kind("binary", 2) is BINARY and model_kind("binary", 3) is MULTICLASS
    assert model_kind("multiclass", 2) is MULTICLASS
    assert BINARY.metrics[0] == "accuracy" and ORDINAL.metrics[0] == "mae"
    assert MULTICLASS.metric_kind(2) is BINARY and ORDINAL.metric_kind(0) is ORDINAL
    y = np.array([1.0, 1.0, -1.0, -1.0])
    pred = np.array([1.0, -1.0, -1.0, -1.0])
    scores = np.array([2.0, -0.5, -1.0, -3.0])
    classes = np.array([1.0, -1.0])
    assert metric_value("accuracy", classes, y, pred, scores) == 0.75
    assert metric_value("roc", classes, y, pred, scores) == 1.0       # every positive above
    assert metric_value("f1", classes, y, pred, scores) == pytest.approx(2 / 3)


def test_kinds_by_name():
    assert set(KINDS) == {"binary", "multiclass", "ordinal", "regression", "oneclass"}
    assert get_kind("ordinal") is ORDINAL and not ORDINAL.classifier and not ORDINAL.liblinear
    with pytest.raises(ModelError, match="unknown model kind"):
        get_kind("nonsense")


def test_regression_has_real_targets_and_liblinears_measures():
    y = np.array([2.5, -1.0, 2000.0])
    assert REGRESSION.classes_from(y).size == 0 and not REGRESSION.has_classes
    assert REGRESSION.targets(y, None)["t"].tolist() == y.tolist()
    assert REGRESSION.predict(np.array([0.5, -3.0]), np.zeros(0), None).tolist() == [0.5, -3.0]
    REGRESSION.check_model(0, 1, None)
    with pytest.raises(ModelError):
        REGRESSION.check_model(2, 1, None)
    y, pred = np.array([1.0, 2.0, 4.0]), np.array([1.5, 2.0, 3.0])
    m = REGRESSION.measures(np.zeros(0), y, pred, pred)
    assert m["mse"] == pytest.approx((0.25 + 0 + 1) / 3) and m["mae"] == pytest.approx(0.5)
    r = np.corrcoef(y, pred)[0, 1]
    assert m["scc"] == pytest.approx(r * r)
    assert REGRESSION.report_lines(0, 3, m, np.zeros(0))[0].startswith("Mean squared error = ")
    assert REGRESSION.cv_lines(None, y, pred)[1].startswith("Cross Validation Squared correlation")
    assert not REGRESSION.stratified and not REGRESSION.weighs_classes
    assert REGRESSION.metric_value("mae", None, y, pred, pred) == pytest.approx(0.5)


def test_one_class_ignores_labels_and_predicts_plus_minus_one():
    assert ONECLASS.classes_from(np.array([3.0, 3.0, 7.0])).tolist() == [1.0, -1.0]
    assert ONECLASS.targets(np.zeros(3), None) == {}
    assert ONECLASS.predict(np.array([0.1, 0.0, -2.0]), np.array([1.0, -1.0]), None).tolist() \
        == [1.0, -1.0, -1.0]                 # LIBLINEAR: +1 only for a score > 0
    assert not ONECLASS.classifier and not ONECLASS.weighs_classes
