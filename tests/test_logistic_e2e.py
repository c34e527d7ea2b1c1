"""Logistic regression end to end: the command line, probabilities without
calibration, model files both ways (LIBLINEAR's `predict -b 1` reads ours), bad inputs,
and linsvm.sklearn.LogisticRegression.

Every expected probability is computed here from the model's weights with numpy
(sigma, LIBLINEAR's one-vs-rest normalisation, the softmax), or taken from LIBLINEAR's
own `predict` (skipped without a LIBLINEAR build: conftest.liblinear_tool) and
scikit-learn's lbfgs LogisticRegression.
"""
import subprocess

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import linsvm
from linsvm.cli import predict_cmd, train_cmd
from linsvm.errors import ModelError, ParameterError
from linsvm.io.synth import make_text_classification
from linsvm.model.predict import predict_file
from conftest import augmented, invoke, liblinear_tool, random_problem

peer = liblinear_tool


def sigma(f):
    return np.exp(-np.logaddexp(0.0, -f))


def read_proba(path):
    """(header labels, predicted labels, probabilities) of a `-b 1` output file."""
    lines = open(path).read().split("\n")
    head = [float(v) for v in lines[0].split()[1:]]
    rows = np.array([[float(v) for v in line.split()] for line in lines[1:] if line])
    return np.array(head), rows[:, 0], rows[:, 1:]


def scores(model, X):
    """Decision values from the weights, written out here: X w + bias w_bias."""
    W = np.asarray(model.weights)
    S = X @ W[:model.n_features_] + (model.bias * W[-1] if model.bias > 0 else 0.0)
    return np.asarray(S)


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lr")
    X, y = random_problem(n_samples=150, n_features=8, seed=4)
    path = tmp / "train.svm"
    linsvm.dump_svmlight(X, y, str(path))
    return tmp, path, X, y


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("lr3")
    X, y = make_text_classification(n_samples=300, n_features=120, n_classes=3, avg_length=15,
                                    noise=0.1, seed=7)
    path = tmp / "train3.svm"
    linsvm.dump_svmlight(X, y, str(path))
    return tmp, path, X, y


# ------------------------------------------------------------------ probabilities

def test_binary_lr_probabilities_are_sigma_of_the_score(binary):
    tmp, path, X, y = binary
    assert invoke(train_cmd, "-q", "-s", "0", path, tmp / "m").exit_code == 0
    r = invoke(predict_cmd, "-b", "1", path, tmp / "m", tmp / "out")
    assert r.exit_code == 0, r.output
    model = linsvm.load_model(tmp / "m")
    head, pred, P = read_proba(tmp / "out")
    f = scores(model, X)[:, 0]
    np.testing.assert_array_equal(head, model.classes_)
    np.testing.assert_allclose(P[:, 0], sigma(f), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-14)
    np.testing.assert_array_equal(pred, np.where(f > 0, model.classes_[0], model.classes_[1]))
    np.testing.assert_allclose(model.predict_proba(X), P, rtol=1e-14)


def test_one_vs_rest_probabilities_are_liblinears_normalisation(three):
    tmp, path, X, y = three
    for code in ("0", "7"):
        assert invoke(train_cmd, "-q", "-s", code, path, tmp / "m").exit_code == 0
        assert invoke(predict_cmd, "-b", "1", path, tmp / "m", tmp / "out").exit_code == 0
        model = linsvm.load_model(tmp / "m")
        assert model.kind == "multiclass" and model.weights.shape[1] == 3
        head, pred, P = read_proba(tmp / "out")
        S = scores(model, X)
        expect = sigma(S) / sigma(S).sum(axis=1, keepdims=True)
        np.testing.assert_allclose(P, expect, rtol=1e-12)
        np.testing.assert_array_equal(pred, model.classes_[np.argmax(S, axis=1)])


def test_softmax_probabilities_match_sklearn_lbfgs(three):
    """softmax at a tight -e against scikit-learn's multinomial lbfgs on the same objective
    (the bias an explicit, regularized column of ones)."""
    from sklearn.linear_model import LogisticRegression
    tmp, path, X, y = three
    C = 0.5
    model = linsvm.train(X, y, solver="softmax", C=C, tol=1e-10)
    Xa = augmented(X)
    ref = LogisticRegression(C=C, fit_intercept=False, tol=1e-12, max_iter=10000).fit(Xa, y)
    order = [int(np.flatnonzero(ref.classes_ == c)[0]) for c in model.classes_]
    np.testing.assert_allclose(model.predict_proba(X), ref.predict_proba(Xa)[:, order],
                               atol=1e-6)
    S = scores(model, X)
    E = np.exp(S - S.max(axis=1, keepdims=True))
    np.testing.assert_allclose(model.predict_proba(X), E / E.sum(axis=1, keepdims=True),
                               rtol=1e-12)


def test_extreme_scores_give_the_limits_not_nan():
    from linsvm.model.logistic_proba import logistic_proba
    S = np.array([[-1000.0, -2000.0, -1000.0], [800.0, 0.0, -800.0]])
    P = logistic_proba(S, "ovr")
    assert np.isfinite(P).all() and np.allclose(P.sum(axis=1), 1.0)
    np.testing.assert_allclose(P[0], [0.5, 0.0, 0.5])
    np.testing.assert_allclose(logistic_proba(S, "softmax")[1], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(logistic_proba(np.array([-800.0, 800.0]), "binary"),
                               [[0.0, 1.0], [1.0, 0.0]])


def test_b1_on_an_svm_model_is_refused(binary):
    tmp, path, X, y = binary
    assert invoke(train_cmd, "-q", "-s", "mfn", path, tmp / "svm").exit_code == 0
    r = invoke(predict_cmd, "-b", "1", path, tmp / "svm", tmp / "out")
    assert r.exit_code == 1 and "no probability sigmoids" in r.output
    model = linsvm.load_model(tmp / "svm")
    with pytest.raises(ModelError, match="no probability sigmoids"):
        model.predict_proba(X)
    with pytest.raises(ModelError, match="no probability sigmoids"):
        predict_file(str(path), model, None, probability=True)


def test_training_b1_with_lr_fits_no_sigmoids(binary):
    tmp, path, X, y = binary
    r = invoke(train_cmd, "-s", "lr", "-b", "1", "--model-format", "liblinear", path, tmp / "mb")
    assert r.exit_code == 0 and "no sigmoids are fitted" in r.output
    model = linsvm.load_model(tmp / "mb")
    assert model.probability_ is None and model.solver == "liblinear:L2R_LR"
    np.testing.assert_allclose(model.predict_proba(X)[:, 0], sigma(scores(model, X)[:, 0]),
                               rtol=1e-12)


# ------------------------------------------------------------------ model files

def test_linsvm_format_records_kind_loss_and_penalty(binary):
    tmp, path, X, y = binary
    assert invoke(train_cmd, "-q", "-s", "7", path, tmp / "m7").exit_code == 0
    text = open(tmp / "m7").read()
    assert "solver lr-dual\nkind binary\n" in text
    assert 'param loss str "logistic"' in text and 'param penalty str "l2"' in text


@pytest.mark.subprocess
@pytest.mark.parametrize("code,solver_type", [("0", "L2R_LR"), ("7", "L2R_LR_DUAL")])
def test_liblinear_predict_reads_our_models(binary, three, code, solver_type):
    """LIBLINEAR's predict -b 1 on our LIBLINEAR-format file: the same labels and, to its
    %g output, the same probabilities, on two and on three classes."""
    predict = peer("predict")
    for tmp, path, X, y in (binary, three):
        model_file = tmp / f"ll{code}"
        assert invoke(train_cmd, "-q", "-s", code, "--model-format", "liblinear", path,
                      model_file).exit_code == 0
        assert open(model_file).readline().split() == ["solver_type", solver_type]
        assert invoke(predict_cmd, "-b", "1", path, model_file, tmp / "ours").exit_code == 0
        subprocess.run([predict, "-b", "1", path, model_file, tmp / "theirs"], check=True,
                       capture_output=True)
        h1, p1, P1 = read_proba(tmp / "ours")
        h2, p2, P2 = read_proba(tmp / "theirs")
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_allclose(P1, P2, rtol=1e-5, atol=1e-6)


@pytest.mark.subprocess
def test_we_read_liblinears_lr_models(binary, three):
    train, predict = peer("train"), peer("predict")
    for tmp, path, X, y in (binary, three):
        subprocess.run([train, "-q", "-s", "0", "-B", "1", path, tmp / "theirs.model"],
                       check=True)
        subprocess.run([predict, "-b", "1", path, tmp / "theirs.model", tmp / "theirs"],
                       check=True, capture_output=True)
        assert invoke(predict_cmd, "-b", "1", path, tmp / "theirs.model", tmp / "ours").exit_code == 0
        h1, p1, P1 = read_proba(tmp / "ours")
        h2, p2, P2 = read_proba(tmp / "theirs")
        np.testing.assert_array_equal(h1, h2)
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_allclose(P1, P2, rtol=1e-5, atol=1e-6)


def test_softmax_in_liblinear_format_is_refused_before_training(three):
    tmp, path, X, y = three
    r = invoke(train_cmd, "-q", "-s", "softmax", "--model-format", "liblinear", path, tmp / "sx")
    assert r.exit_code == 1 and "softmax models cannot be written in LIBLINEAR format" in r.output
    assert not (tmp / "sx").exists()
    model = linsvm.train(X, y, solver="softmax")
    with pytest.raises(ModelError, match="no multinomial logistic regression"):
        model.save(tmp / "sx", format="liblinear")
    model.save(tmp / "sx")                          # linsvm's format keeps it, probabilities too
    again = linsvm.load_model(tmp / "sx")
    np.testing.assert_array_equal(again.predict_proba(X), model.predict_proba(X))


# ------------------------------------------------------------------ the command line

def test_command_line_options_reach_the_solver(binary, tmp_path):
    """-c -e -B -w -W -i -m on -s 0 train what linsvm.train trains with the same settings."""
    tmp, path, X, y = binary
    weights = tmp_path / "w.txt"
    sw = np.linspace(0.5, 2.0, y.shape[0])
    np.savetxt(weights, sw)
    args = ["-q", "-s", "0", "-c", "3", "-e", "1e-6", "-B", "2", "-w-1", "2.5", "-W", weights,
            "-m", "2", path, tmp_path / "m"]
    assert invoke(train_cmd, *args).exit_code == 0
    ref = linsvm.train(X, y, solver="lr", C=3.0, tol=1e-6, bias=2.0, class_weight={-1: 2.5},
                       sample_weight=sw, n_threads=1)
    model = linsvm.load_model(tmp_path / "m")
    np.testing.assert_array_equal(model.weights, ref.weights)   # threads: the same bits
    assert invoke(train_cmd, *args[:-2], "-i", tmp_path / "m", path, tmp_path / "warm").exit_code == 0
    warm = linsvm.load_model(tmp_path / "warm")
    assert warm.stats["n_iter"] <= 1
    r = invoke(train_cmd, "-s", "0", "-v", "3", "-q", path)
    assert r.exit_code == 0 and "Cross Validation Accuracy" in r.output


def test_labels_that_are_not_classes_are_refused(tmp_path):
    X, _ = random_problem(n_samples=40, n_features=4, seed=2)
    y = np.where(np.arange(40) % 2 == 0, 0.5, 1.5)
    path = tmp_path / "real.svm"
    linsvm.dump_svmlight(X, y, str(path))
    for solver in ("lr", "lr-dual", "softmax"):
        r = invoke(train_cmd, "-q", "-s", solver, path, tmp_path / "m")
        assert r.exit_code != 0 and "not an integer" in r.output, solver


def test_iteration_cap_is_a_convergence_warning(binary):
    tmp, path, X, y = binary
    with pytest.warns(linsvm.ConvergenceWarning, match="lr stopped at the iteration cap"):
        linsvm.train(X, y, solver="lr", C=100.0, max_iter=1, tol=1e-10)


# ------------------------------------------------------------------ scikit-learn

def _lr_reference(X, y, C, bias):
    """min 1/2||w||^2 + C sum log(1 + exp(-t x.w)), x with the bias column, by L-BFGS-B."""
    Xa = np.hstack([X, np.full((X.shape[0], 1), bias)])
    t = np.where(y == y.max(), 1.0, -1.0)

    def f(w):
        m = t * (Xa @ w)
        s = np.exp(-np.logaddexp(0.0, m))
        return 0.5 * w @ w + C * np.sum(np.logaddexp(0.0, -m)), w - C * Xa.T @ (s * t)
    return so.minimize(f, np.zeros(Xa.shape[1]), jac=True, method="L-BFGS-B",
                       options={"gtol": 1e-11, "ftol": 1e-16, "maxiter": 5000}).x


def test_sklearn_binary_matches_the_objective_and_follows_coef():
    from linsvm.sklearn import LogisticRegression
    X, y = random_problem(n_samples=120, n_features=6, seed=9)
    X = np.asarray(X.todense()) if sp.issparse(X) else np.asarray(X)
    labels = np.where(y > 0, "yes", "no")
    est = LogisticRegression(C=2.0, tol=1e-10, intercept_scaling=1.5,
                             regularize_intercept=True).fit(X, labels)
    w = _lr_reference(X, y, 2.0, 1.5)
    np.testing.assert_allclose(est.coef_[0], w[:-1], atol=1e-6)
    np.testing.assert_allclose(est.intercept_, [1.5 * w[-1]], atol=1e-6)
    d = X @ w[:-1] + 1.5 * w[-1]
    np.testing.assert_allclose(est.decision_function(X), d, atol=1e-5)
    np.testing.assert_allclose(est.predict_proba(X)[:, 1], sigma(d), atol=1e-6)
    np.testing.assert_allclose(np.exp(est.predict_log_proba(X)), est.predict_proba(X))
    np.testing.assert_array_equal(est.predict(X), np.where(d > 0, "yes", "no"))
    est.coef_ = -est.coef_                       # predictions follow the edited coefficients
    est.intercept_ = -est.intercept_
    np.testing.assert_array_equal(est.predict(X), np.where(d > 0, "no", "yes"))


@pytest.mark.parametrize("n_classes", [2, 3])
def test_sklearn_default_is_scikit_learns_objective(n_classes):
    """The default (regularize_intercept=False) is scikit-learn's LogisticRegression with its
    unpenalized intercept: the same probabilities and coefficients as its lbfgs solve, binary
    (lr -R) and multinomial (softmax, free intercepts); lr-dual has no such form and says so."""
    from sklearn.linear_model import LogisticRegression as SkLR
    from linsvm.sklearn import LogisticRegression
    X, y = make_text_classification(n_samples=240, n_features=60, n_classes=n_classes,
                                    avg_length=10, seed=6)
    y = y.astype(int)
    X = X * 3.0                                  # margins away from 0: the intercepts matter
    ours = LogisticRegression(C=0.5, tol=1e-10).fit(X, y)
    ref = SkLR(C=0.5, tol=1e-12, max_iter=10000).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-6)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    with pytest.raises(ParameterError, match="regularize_intercept=True"):
        LogisticRegression(solver="lr-dual", multi_class="ovr").fit(X, y)


def test_sklearn_multinomial_and_ovr():
    from sklearn.linear_model import LogisticRegression as SkLR
    from linsvm.sklearn import LogisticRegression
    X, y = make_text_classification(n_samples=240, n_features=60, n_classes=3, avg_length=10,
                                    seed=5)
    y = np.array(["a", "b", "c"])[y.astype(int) % 3]
    Xa = augmented(X)
    est = LogisticRegression(C=1.0, tol=1e-10, fit_intercept=False).fit(Xa, y)
    assert est.model_.solver == "softmax" and est.coef_.shape == (3, 61)
    ref = SkLR(C=1.0, fit_intercept=False, tol=1e-12, max_iter=10000).fit(Xa, y)
    np.testing.assert_allclose(est.predict_proba(Xa), ref.predict_proba(Xa), atol=1e-6)
    ovr = LogisticRegression(multi_class="ovr", solver="lr-dual", class_weight={"a": 2.0},
                             warm_start=True, random_state=3,
                             regularize_intercept=True).fit(X, y)
    assert ovr.model_.solver == "lr-dual" and ovr.n_iter_.shape == (3,)
    S = ovr.decision_function(X)
    np.testing.assert_allclose(ovr.predict_proba(X), sigma(S) / sigma(S).sum(1, keepdims=True),
                               rtol=1e-12)
    ovr.fit(X, y)                                # warm: from the previous duals
    assert all(s.get("warm_start") == "alpha" for s in ovr.model_.column_stats)


def test_sklearn_bad_parameters():
    from linsvm.sklearn import LogisticRegression
    X, y = random_problem(n_samples=30, n_features=3, seed=1)
    if "glmnet" not in linsvm.solvers.SOLVERS:
        with pytest.raises(ParameterError, match="glmnet"):
            LogisticRegression(penalty="l1").fit(X, y)
    with pytest.raises(ParameterError, match="penalty"):
        LogisticRegression(penalty="elasticnet").fit(X, y)
    with pytest.raises(ParameterError, match="not a logistic regression solver"):
        LogisticRegression(solver="mfn").fit(X, y)
    with pytest.raises(ParameterError, match="multi_class"):
        LogisticRegression(multi_class="crammer").fit(X, y)
    with pytest.raises(ValueError, match="not in y"):
        LogisticRegression(class_weight={7: 2.0}).fit(X, y)


@pytest.mark.slow
def test_sklearn_estimator_checks_pass():
    """scikit-learn's own estimator checks on LogisticRegression (all of them)."""
    from sklearn.utils.estimator_checks import check_estimator
    from linsvm.sklearn import LogisticRegression
    results = check_estimator(LogisticRegression(), on_fail=None)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert len(results) > 30 and failed == []
