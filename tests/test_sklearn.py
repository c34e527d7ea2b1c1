"""linsvm.sklearn: scikit-learn's estimator checks, meta-estimators, the CLI's weights,
label mapping, warm starts, probabilities and warnings."""
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from sklearn.base import clone                                    # noqa: E402
from sklearn.exceptions import ConvergenceWarning as SkConvergenceWarning  # noqa: E402
from sklearn.linear_model import LogisticRegression               # noqa: E402
from sklearn.metrics import log_loss                              # noqa: E402
from sklearn.model_selection import GridSearchCV, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline                        # noqa: E402
from sklearn.preprocessing import StandardScaler                  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import linsvm                                                     # noqa: E402
from linsvm.sklearn import LinearSVC, OrdinalSVM, RankSVM         # noqa: E402

from conftest import child_env                                    # noqa: E402

# scikit-learn asks that fitting with integer sample weights equal fitting on repeated
# rows to rtol 1e-7: a solver that stops at its tolerance meets that only when the
# tolerance is far below the default (mfn-ord passes at tol=1e-10, sdm-cs does not at
# 1e-6: dual coordinate descent converges slowly near the end).
_TOLERANCE = ("the solver stops at its stopping tolerance; repeated rows and integer "
              "weights give the same optimum, but the two solves stop at different points "
              "farther apart than rtol 1e-7")
_ORDINAL_SCORE = ("an ordinal model has one latent score per row, not one per class: "
                  "decision_function is (n,) for any number of ranks")


def _expected_failed_checks(est):
    if isinstance(est, OrdinalSVM):
        return {"check_sample_weight_equivalence_on_dense_data": _TOLERANCE,
                "check_sample_weight_equivalence_on_sparse_data": _TOLERANCE,
                "check_classifiers_classes": _ORDINAL_SCORE,
                "check_classifiers_train": _ORDINAL_SCORE}
    if isinstance(est, LinearSVC) and est.probability:
        folds = ("probability=True fits the sigmoid on 5-fold out-of-fold scores; repeated "
                 "rows fall into other folds than weighted ones, so the sigmoids differ")
        return {"check_sample_weight_equivalence_on_dense_data": folds,
                "check_sample_weight_equivalence_on_sparse_data": folds,
                "check_classifiers_train": "predict follows the SVM's decision values (as "
                "scikit-learn's SVC(probability=True)); the sigmoid's B moves p = 0.5 away "
                "from f = 0, so argmax(predict_proba) can differ on rows near the boundary"}
    if isinstance(est, LinearSVC) and est.solver == "sdm-cs":
        return {"check_sample_weight_equivalence_on_dense_data": _TOLERANCE,
                "check_sample_weight_equivalence_on_sparse_data": _TOLERANCE}
    return {}


@parametrize_with_checks([LinearSVC(), LinearSVC(solver="sdm-cs"), LinearSVC(probability=True),
                          OrdinalSVM(), RankSVM()],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ---------------------------------------------------------------- data

def binary_data(n=300, d=8, seed=0, sparse=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = (X @ rng.normal(size=d) + 0.5 * rng.normal(size=n) > 0).astype(int)
    return (sp.csr_matrix(X) if sparse else X), y


def multiclass_data(n=300, d=6, k=3, seed=1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    y = np.argmax(X @ rng.normal(size=(d, k)) + 0.5 * rng.normal(size=(n, k)), axis=1)
    return X, y


# ---------------------------------------------------------------- conventions

def test_binary_decision_is_positive_for_classes_1_whatever_the_label_order():
    X, y = binary_data()
    for labels in (np.array(["no", "yes"]), np.array([5, -3]), np.array([1, -1])):
        yl = labels[y]
        for first in (0, 1):                    # which class appears first in y
            idx = np.argsort(y != first, kind="stable")
            est = LinearSVC().fit(X[idx], yl[idx])
            np.testing.assert_array_equal(est.classes_, np.sort(labels))
            s = est.decision_function(X)
            assert s.shape == (X.shape[0],)
            pred = est.predict(X)
            np.testing.assert_array_equal(pred, np.where(s > 0, est.classes_[1], est.classes_[0]))
            # the positive side is classes_[1]: it agrees with the labels on most rows
            assert np.mean(pred == yl) > 0.9
            np.testing.assert_allclose(s, X @ est.coef_[0] + est.intercept_[0], rtol=1e-10, atol=1e-12)
            assert est.coef_.shape == (1, X.shape[1]) and est.intercept_.shape == (1,)


def test_string_labels_multiclass_round_trip():
    X, y = multiclass_data()
    names = np.array(["cat", "dog", "emu"])
    est = LinearSVC().fit(X, names[y])
    np.testing.assert_array_equal(est.classes_, names)
    assert est.coef_.shape == (3, X.shape[1]) and est.intercept_.shape == (3,)
    S = est.decision_function(X)
    np.testing.assert_allclose(S, X @ est.coef_.T + est.intercept_, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), names[np.argmax(S, axis=1)])
    # column j scores classes_[j]: the same as a model trained on integer codes
    ref = linsvm.train(X, y.astype(float), solver="mfn")
    for j in range(3):
        m = int(np.flatnonzero(ref.classes_ == j)[0])
        np.testing.assert_allclose(est.coef_[j], ref.coef_[m], rtol=1e-10, atol=1e-12)


def test_class_weight_dict_uses_the_users_labels_and_balanced_matches_train():
    X, y = binary_data(n=200)
    y = np.where(np.arange(200) < 170, 0, y)                # imbalanced
    labels = np.array(["a", "b"])[y]
    est = LinearSVC(class_weight={"b": 3.0}).fit(X, labels)
    ref = linsvm.train(X, np.where(y == 1, 1.0, -1.0), class_weight={1: 3.0})
    np.testing.assert_allclose(est.coef_[0], ref.coef_[0], rtol=1e-10, atol=1e-12)
    bal = LinearSVC(class_weight="balanced").fit(X, labels)
    refb = linsvm.train(X, np.where(y == 1, 1.0, -1.0), class_weight="balanced")
    np.testing.assert_allclose(bal.coef_[0], refb.coef_[0], rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="label 'c'"):
        LinearSVC(class_weight={"c": 2.0}).fit(X, labels)


def test_sparse_and_dense_input_give_the_same_model():
    X, y = binary_data()
    a = LinearSVC(C=0.3).fit(X, y)
    for fmt in ("csr", "csc", "coo"):
        b = LinearSVC(C=0.3).fit(sp.csr_matrix(X).asformat(fmt), y)
        np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(sp.csc_matrix(X)),
                                   rtol=1e-9, atol=1e-12)


def test_sample_weight_zero_equals_dropping_rows():
    X, y = binary_data(n=200)
    w = np.ones(200)
    w[::3] = 0.0
    a = LinearSVC(tol=1e-10).fit(X, y, sample_weight=w)
    b = LinearSVC(tol=1e-10).fit(X[w > 0], y[w > 0])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)


def test_every_classifier_solver_fits_binary_and_multiclass():
    from linsvm.solvers import SOLVERS

    Xb, yb = binary_data(n=120)
    Xm, ym = multiclass_data(n=120)
    for name, info in SOLVERS.items():
        if info.kind not in ("binary", "multiclass"):
            with pytest.raises(ValueError, match=f"{info.kind} solver"):
                LinearSVC(solver=name).fit(Xb, yb)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            eb = LinearSVC(solver=name).fit(Xb, yb)
            em = LinearSVC(solver=name).fit(Xm, ym)
        assert np.mean(eb.predict(Xb) == yb) > 0.85, name
        assert np.mean(em.predict(Xm) == ym) > 0.7, name
        assert em.coef_.shape == (3, Xm.shape[1])


def test_max_iter_reaches_the_solver_and_convergence_warning_reaches_the_caller():
    X, y = binary_data(n=400, d=30)
    with pytest.warns(SkConvergenceWarning) as rec:
        # the dual method alone: with its hand-over (default) the cap finishes with mfn-l1
        est = LinearSVC(solver="dcd", max_iter=1, tol=1e-12, C=100.0,
                        solver_options={"primal_fallback": False}).fit(X, y)
    assert est.model_.params["max_iter"] == 1
    hits = [r for r in rec if issubclass(r.category, linsvm.ConvergenceWarning)]
    assert hits and all(r.filename == __file__ for r in hits)   # attributed to the caller of fit
    assert "dcd" in str(hits[0].message)


# ---------------------------------------------------------------- meta-estimators

def test_pipeline_grid_search_cross_val_score_and_clone():
    X, y = binary_data(n=200)
    pipe = make_pipeline(StandardScaler(), LinearSVC())
    scores = cross_val_score(pipe, X, y, cv=3)
    assert scores.shape == (3,) and scores.min() > 0.8
    grid = GridSearchCV(LinearSVC(), {"C": [0.01, 1.0], "solver": ["mfn", "dcd"]}, cv=3).fit(X, y)
    assert grid.best_params_["C"] in (0.01, 1.0) and grid.best_score_ > 0.8
    est = LinearSVC(C=2.0, solver_options={"heuristic2": False}, probability=True)
    c = clone(est)
    assert c.get_params() == est.get_params() and c is not est
    assert not hasattr(c, "coef_")
    Xo, yo = multiclass_data(n=150, k=4)
    assert np.mean(cross_val_score(OrdinalSVM(), Xo, yo, cv=3)) > 0.3


@pytest.mark.subprocess
def test_estimator_and_command_line_give_the_same_weights(tmp_path):
    X, y = binary_data(n=150, d=6, sparse=True)
    yl = np.where(y == 1, 1.0, -1.0)
    path = tmp_path / "train.svm"
    linsvm.dump_svmlight(X, yl, str(path))
    model_path = tmp_path / "train.model"
    proc = subprocess.run([sys.executable, "-m", "linsvm", "train", "-q", "-s", "mfn", "-c", "0.5",
                           str(path), str(model_path)], env=child_env(), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    cli = linsvm.load_model(str(model_path))
    est = LinearSVC(C=0.5).fit(X, yl)
    sign = 1.0 if cli.classes_[0] == est.classes_[1] else -1.0
    np.testing.assert_allclose(est.coef_[0], sign * cli.coef_[0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(est.intercept_[0], sign * cli.intercept_[0], rtol=1e-12, atol=1e-14)


# ---------------------------------------------------------------- warm start

@pytest.mark.parametrize("solver, tol, options", [("mfn", 1e-6, None),
                                                  ("dcd", 1e-3, {"loss": "l2"})])
def test_warm_start_reduces_iterations_along_a_c_path(solver, tol, options):
    X, y = binary_data(n=500, d=10, seed=3)
    Cs = [0.01, 0.03, 0.1, 0.3, 1.0]
    warm = LinearSVC(solver=solver, warm_start=True, tol=tol, solver_options=options)
    cold_iters = warm_iters = 0
    for C in Cs:
        warm.set_params(C=C).fit(X, y)
        cold = LinearSVC(solver=solver, C=C, tol=tol, solver_options=options).fit(X, y)
        warm_iters += warm.n_iter_
        cold_iters += cold.n_iter_
        # the same optimum, to the solvers' tolerance
        np.testing.assert_allclose(warm.model_.objective, cold.model_.objective, rtol=1e-6)
    assert warm_iters < cold_iters


# ---------------------------------------------------------------- probabilities

def test_predict_proba_sums_to_one_and_beats_a_constant_predictor():
    X, y = binary_data(n=400, seed=4)
    rng = np.random.default_rng(0)
    flip = rng.random(400) < 0.15               # label noise: probabilities are not 0/1
    y = np.where(flip, 1 - y, y)
    Xt, yt, Xs, ys = X[:250], y[:250], X[250:], y[250:]
    est = LinearSVC(probability=True).fit(Xt, np.array(["neg", "pos"])[yt])
    P = est.predict_proba(Xs)
    assert P.shape == (150, 2)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(est.predict_log_proba(Xs), np.log(P))
    # column 1 is classes_[1] = "pos" and rises with the decision value
    s = est.decision_function(Xs)
    assert np.all(np.diff(P[np.argsort(s), 1]) >= -1e-15)
    constant = np.tile([1 - yt.mean(), yt.mean()], (150, 1))
    assert log_loss(ys, P) < log_loss(ys, constant) - 0.1
    # and close to a logistic regression's on this data
    lr = LogisticRegression().fit(Xt, yt).predict_proba(Xs)
    assert log_loss(ys, P) < log_loss(ys, lr) + 0.05
    assert not hasattr(LinearSVC(), "predict_proba")


def test_predict_proba_multiclass_with_a_multiclass_solver():
    X, y = multiclass_data(n=300, k=4)
    Xt, yt, Xs, ys = X[:200], y[:200], X[200:], y[200:]
    for solver in ("mfn", "sdm-cs"):
        est = LinearSVC(solver=solver, probability=True).fit(Xt, yt)
        P = est.predict_proba(Xs)
        assert P.shape == (100, 4)
        np.testing.assert_allclose(P.sum(axis=1), 1.0)
        prior = np.bincount(yt, minlength=4) / 200
        assert log_loss(ys, P, labels=range(4)) < log_loss(ys, np.tile(prior, (100, 1)), labels=range(4))


def test_binary_multiclass_solver_decision_is_the_column_difference():
    X, y = binary_data(n=200)
    est = LinearSVC(solver="sdm-cs", probability=True).fit(X, y)
    s = est.decision_function(X)
    assert s.shape == (200,)
    np.testing.assert_allclose(s, X @ est.coef_[0] + est.intercept_[0], rtol=1e-9, atol=1e-12)
    assert np.mean(est.predict(X) == y) > 0.9
    assert np.mean((est.predict_proba(X)[:, 1] > 0.5) == (s > 0)) > 0.95


# ---------------------------------------------------------------- ordinal and ranking

def test_ordinal_svm_predicts_ranks_from_thresholds():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(300, 5))
    z = X @ np.array([1.0, -2.0, 0.5, 0.0, 1.0]) + 0.3 * rng.normal(size=300)
    y = np.digitize(z, [-1.5, 0.0, 1.5]) * 10          # ranks 0, 10, 20, 30
    for solver in ("mfn-ord", "perf-ord"):
        est = OrdinalSVM(solver=solver).fit(X, y)
        np.testing.assert_array_equal(est.classes_, [0, 10, 20, 30])
        assert est.thresholds_.shape == (3,) and np.all(np.diff(est.thresholds_) >= 0)
        s = est.decision_function(X)
        np.testing.assert_array_equal(est.predict(X), est.classes_[np.searchsorted(est.thresholds_, s)])
        assert np.mean(est.predict(X) == y) > 0.8


def test_rank_svm_uses_groups():
    rng = np.random.default_rng(6)
    n_q, per_q = 20, 10
    X = rng.normal(size=(n_q * per_q, 4))
    groups = np.repeat(np.arange(n_q), per_q)
    # each query has its own offset in y: only within-query order is learnable
    y = X @ np.array([1.0, 0.5, 0.0, -1.0]) + 0.1 * rng.normal(size=n_q * per_q) + 5 * groups
    y = np.round(y, 1)
    est = RankSVM(C=1.0).fit(X, y, groups=groups)
    assert est.score(X, y, groups) > 0.9
    # without groups the query offsets dominate the pairs, and within-query order is worse
    flat = RankSVM(C=1.0).fit(X, y)
    assert est.score(X, y, groups) > flat.score(X, y, groups)
    with pytest.raises(ValueError, match="groups"):
        RankSVM().fit(X, y, groups=groups[:-1])


def test_predict_proba_with_a_class_too_small_for_every_fold():
    # a class with 2 examples: 3 of the 5 folds train without it and cannot score it;
    # those rows take the full model's score, and the probabilities stay finite
    X, y = multiclass_data(n=200, k=3)
    y = y.copy()
    y[:2] = 3
    est = LinearSVC(probability=True).fit(X, y)
    P = est.predict_proba(X)
    assert P.shape == (200, 4) and np.isfinite(P).all()
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    assert np.isfinite(est.prob_params_).all()
    # binary, a class of one example: its fold trains on one class and is skipped
    Xb, yb = binary_data(n=100)
    yb = np.zeros(100, dtype=int)
    yb[0] = 1
    Pb = LinearSVC(probability=True).fit(Xb, yb).predict_proba(Xb)
    assert np.isfinite(Pb).all() and Pb[:, 1].mean() < 0.2


def test_warm_start_ordinal_continues_from_the_previous_fit():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(300, 5))
    y = np.digitize(X @ np.array([1.0, -1.0, 0.5, 0.2, 0.0]) + 0.3 * rng.normal(size=300), [-1, 0, 1])
    warm = OrdinalSVM(warm_start=True, tol=1e-8)
    warm_iters = cold_iters = 0
    for C in (0.1, 0.3, 1.0):
        warm.set_params(C=C).fit(X, y)
        cold = OrdinalSVM(C=C, tol=1e-8).fit(X, y)
        np.testing.assert_allclose(warm.model_.objective, cold.model_.objective, rtol=1e-7)
        warm_iters += warm.n_iter_
        cold_iters += cold.n_iter_
    assert warm_iters < cold_iters


# ---------------------------------------------------------------- saved models

def _three_ways(X):
    return np.digitize(X[:, 0] - 0.5 * X[:, 1], [-0.5, 0.5])


@pytest.mark.parametrize("labels", [(3, 7), (0, 1), (5, 9, 11), (-1, 2, 40)])
@pytest.mark.parametrize("make", [lambda: LinearSVC(), lambda: LinearSVC(solver="sdm-cs"),
                                  lambda: LinearSVC(probability=True),
                                  lambda: linsvm.sklearn.LogisticRegression(), lambda: OrdinalSVM()],
                         ids=["linearsvc", "sdm-cs", "probability", "logistic", "ordinal"])
def test_saved_model_predicts_the_users_labels_on_the_command_line(tmp_path, make, labels):
    from linsvm.cli import predict_cmd
    from click.testing import CliRunner

    rng = np.random.default_rng(4)
    X = rng.normal(size=(90, 4))
    ranks = _three_ways(X) if len(labels) == 3 else (X[:, 0] > 0).astype(int)
    y = np.asarray(labels)[ranks]
    est = make().fit(X, y)
    model_path, data_path, out = tmp_path / "m", tmp_path / "t.svm", tmp_path / "out"
    est.model_.save(str(model_path))
    linsvm.dump_svmlight(X, np.zeros(X.shape[0]), str(data_path))
    result = CliRunner().invoke(predict_cmd, [str(data_path), str(model_path), str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    np.testing.assert_array_equal(np.loadtxt(out), est.predict(X).astype(np.float64))
    assert sorted(linsvm.load_model(str(model_path)).classes_.tolist()) == sorted(map(float, labels))


def test_saved_probability_model_gives_the_estimators_probabilities(tmp_path):
    from linsvm.cli import predict_cmd
    from click.testing import CliRunner

    rng = np.random.default_rng(5)
    X = rng.normal(size=(120, 3))
    y = np.array([5, 9, 11])[_three_ways(X)]
    est = LinearSVC(probability=True).fit(X, y)
    model_path, data_path, out = tmp_path / "m", tmp_path / "t.svm", tmp_path / "out"
    est.model_.save(str(model_path))
    linsvm.dump_svmlight(X, y, str(data_path))
    result = CliRunner().invoke(predict_cmd, ["-b", "1", str(data_path), str(model_path), str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    header = lines[0].split()
    assert header[0] == "labels"
    columns = [header[1:].index(f"{c:g}") for c in est.classes_]
    table = np.loadtxt(lines[1:])
    P = est.predict_proba(X)
    np.testing.assert_allclose(table[:, 1:][:, columns], P, rtol=1e-12, atol=1e-15)
    np.testing.assert_array_equal(table[:, 0], est.classes_[np.argmax(P, axis=1)])


def test_string_labels_keep_working_and_warm_start_still_continues():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(80, 3))
    y = np.where(X[:, 0] > 0, "yes", "no")
    est = LinearSVC().fit(X, y)
    assert list(est.predict(X[:3])) == list(np.where(X[:3, 0] > 0, "yes", "no"))
    y_num = np.where(X[:, 0] > 0, 7, 3)
    warm = LinearSVC(warm_start=True, tol=1e-8).fit(X, y_num)
    assert warm.model_.classes_.tolist() in ([7.0, 3.0], [3.0, 7.0])
    first = warm.n_iter_
    warm.fit(X, y_num)
    assert warm.n_iter_ < first


def test_saved_rank_svm_model_predicts_the_users_relevance_levels(tmp_path):
    from linsvm.cli import predict_cmd
    from click.testing import CliRunner

    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 3))
    y = np.array([2, 5, 9])[_three_ways(X)]
    est = RankSVM().fit(X, y)
    model_path, data_path, out = tmp_path / "m", tmp_path / "t.svm", tmp_path / "out"
    est.model_.save(str(model_path))
    linsvm.dump_svmlight(X, y, str(data_path))
    result = CliRunner().invoke(predict_cmd, [str(data_path), str(model_path), str(out)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    predicted = np.loadtxt(out)
    assert set(predicted.tolist()) <= {2.0, 5.0, 9.0}
    # the levels follow the ranking score: a higher score never gets a lower level
    order = np.argsort(est.predict(X), kind="stable")
    assert np.all(np.diff(predicted[order]) >= 0)
