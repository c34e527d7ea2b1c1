"""Regression and one-class models end to end: the command line, both model
formats with LIBLINEAR on the other side, the measures against scikit-learn's, -v's
lines against folds trained here, and the bad inputs that must stop in one line."""
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.cli import predict_cmd, train_cmd
from linsvm.cv import make_folds
from linsvm.io.svmlight import dump_svmlight, load_svmlight

from conftest import child_env, invoke


def _regression_data(n=240, d=12, offset=1000.0, seed=0):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.4, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k))
    w = rng.standard_normal(d)
    y = offset + X @ w + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.fixture
def files(tmp_path):
    X, y = _regression_data()
    train, test = tmp_path / "r.svm", tmp_path / "r.t.svm"
    dump_svmlight(X[:180], y[:180], train)
    dump_svmlight(X[180:], y[180:], test)
    return tmp_path, train, test


def test_predict_prints_liblinears_regression_lines_with_sklearns_values(files):
    from sklearn.metrics import mean_absolute_error, mean_squared_error

    tmp, train, test = files
    assert invoke(train_cmd, "-q", "-s", "11", train, tmp / "m").exit_code == 0
    r = invoke(predict_cmd, test, tmp / "m", tmp / "p")
    assert r.exit_code == 0
    lines = r.stderr.strip().splitlines()
    assert [ln.split(" = ")[0] for ln in lines] == [
        "Mean squared error", "Squared correlation coefficient", "Mean absolute error"]
    pred = np.array([float(v) for v in (tmp / "p").read_text().split()])
    _, y = load_svmlight(test)
    mse, scc, mae = (float(ln.split(" = ")[1].split()[0]) for ln in lines)
    assert mse == pytest.approx(mean_squared_error(y, pred), rel=1e-5)
    assert mae == pytest.approx(mean_absolute_error(y, pred), rel=1e-5)
    assert scc == pytest.approx(np.corrcoef(y, pred)[0, 1] ** 2, rel=1e-5)
    model = linsvm.load_model(tmp / "m")
    X, _ = load_svmlight(test, n_features=model.n_features_)
    assert np.array_equal(pred, model.predict(X))          # written in full precision


def _test_mse(tmp, name, test):
    model = linsvm.load_model(tmp / name)
    X, y = load_svmlight(test, n_features=model.n_features_)
    return np.mean((model.predict(X) - y) ** 2)


@pytest.mark.parametrize("args", [["-s", "svr", "--regularize-bias"], ["-s", "11"],
                                  ["-s", "12"], ["-s", "13"], ["-s", "11", "-B", "-1"]])
def test_a_model_held_back_by_its_bias_says_so_in_one_line(files, args):
    """With the bias weight regularized (LIBLINEAR's -s 11/12/13) targets around 1000
    are out of reach at C = 0.1 (180 examples: the bias weight costs more than the
    misfit), and without a bias feature at any C: the model predicts worse than the
    targets' mean, and one warning says so and what frees it; svr's default (a free
    intercept) fits them."""
    tmp, train, test = files
    _, y = load_svmlight(test)
    base = np.mean((y - y.mean()) ** 2)
    assert invoke(train_cmd, "-q", "-s", "svr", "-c", "0.1", train, tmp / "free").exit_code == 0
    held = invoke(train_cmd, "-q", *args, "-c", "0.1", train, tmp / "held")
    assert held.exit_code == 0 and "fits its training targets worse than their mean" in held.stderr
    assert held.stderr.count("\n") == 1
    fix = "give -B 1" if "-B" in args else (
        "-R frees it" if args[1] in ("svr", "11") else "--center-targets")
    assert fix in held.stderr
    assert _test_mse(tmp, "free", test) < 0.2 * base < _test_mse(tmp, "held", test)


def test_a_regularized_bias_of_the_size_needed_is_fine_at_the_optimum(files):
    """LIBLINEAR's -s 11 problem with targets around 1000 and C large enough: the bias
    weight is about 1000, the model as good as the free intercept's (both solved to a
    tight -e), and nothing is said about the bias."""
    tmp, train, test = files
    r = invoke(train_cmd, "-q", "-s", "11", "-c", "1000", "-e", "1e-6", train, tmp / "reg")
    assert r.exit_code == 0 and r.stderr == "", r.stderr
    assert invoke(train_cmd, "-q", "-s", "svr", "-c", "1000", "-e", "1e-6", train,
                  tmp / "free").exit_code == 0
    assert linsvm.load_model(tmp / "reg").weights[-1, 0] == pytest.approx(1000, rel=0.01)
    assert _test_mse(tmp, "reg", test) < 1.5 * _test_mse(tmp, "free", test)


def test_a_shifted_fit_says_so(files):
    """The other symptom: better than the mean, but every prediction too low by more than
    the residuals' spread (a regularized bias at C = 10 on 180 examples near 1000)."""
    tmp, train, test = files
    r = invoke(train_cmd, "-q", "-s", "11", "-c", "10", train, tmp / "m")
    assert r.exit_code == 0 and "too low on average, more than the residuals' spread" in r.stderr


@pytest.mark.parametrize("solver", ["svr", "svr-dual"])
def test_cross_validation_lines_are_the_pooled_out_of_fold_measures(files, solver):
    """-v prints LIBLINEAR's two lines; their values recomputed from folds trained here
    (make_folds with the same seed, a random deal for regression)."""
    tmp, train, _ = files
    r = invoke(train_cmd, "-q", "-s", solver, "-v", "4", train)
    assert r.exit_code == 0, r.output
    mse_line, scc_line = r.stdout.strip().splitlines()
    assert mse_line.startswith("Cross Validation Mean squared error = ")
    assert scc_line.startswith("Cross Validation Squared correlation coefficient = ")
    X, y = load_svmlight(train)
    fold = make_folds(np.zeros(y.shape[0]), 4, seed=0)
    pred = np.empty_like(y)
    for f in range(4):
        model = linsvm.train(X, y, solver=solver, rows=np.flatnonzero(fold != f))
        pred[fold == f] = model.predict(X[fold == f])
    assert float(mse_line.split(" = ")[1]) == pytest.approx(np.mean((pred - y) ** 2), rel=1e-5)
    assert float(scc_line.split(" = ")[1]) == pytest.approx(np.corrcoef(pred, y)[0, 1] ** 2, rel=1e-5)




def _liblinearutil():
    return pytest.importorskip("liblinear.liblinearutil", reason="liblinear-official not installed")


@pytest.mark.parametrize("args", [["-s", "11"], ["-s", "12"], ["-s", "13"], ["-s", "13", "-B", "-1"],
                                  ["-s", "svr-dual"], ["-s", "svr-dual", "-B", "-1"],
                                  ["-s", "21", "-n", "0.2"]])
def test_liblinears_predict_reads_our_models(files, args):
    """Saved in LIBLINEAR's format, LIBLINEAR (liblinear-official) predicts what we do
    (svr-dual's centering, its default by name, not with -s 12/13, goes into the bias
    weight; without a bias the save refuses)."""
    ll = _liblinearutil()
    tmp, train, test = files
    r = invoke(train_cmd, "-q", *args, "--model-format", "liblinear", train, tmp / "m")
    if args == ["-s", "svr-dual", "-B", "-1"]:
        assert r.exit_code == 1 and "no place for this model's offset" in r.stderr
        return
    assert r.exit_code == 0, r.output
    ours = linsvm.load_model(tmp / "m")
    X, y = load_svmlight(test, n_features=ours.n_features_)
    theirs = ll.load_model(str(tmp / "m"))
    labels, _, values = ll.predict(y, X, theirs, "-q")
    if args[1] == "21":
        assert np.array_equal(np.array(labels), ours.predict(X))
    else:
        assert np.allclose(np.array(labels), ours.predict(X), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("code,extra", [(11, "-p 0.2"), (21, "-n 0.3")])
def test_we_read_liblinears_models(files, code, extra):
    ll = _liblinearutil()
    tmp, train, test = files
    y, x = ll.svm_read_problem(str(train))
    lm = ll.train(y, x, f"-s {code} {extra} -q")
    ll.save_model(str(tmp / "ll.model"), lm)
    ours = linsvm.load_model(tmp / "ll.model")
    assert ours.kind == ("regression" if code == 11 else "oneclass")
    yt, xt = ll.svm_read_problem(str(test))
    labels, _, _ = ll.predict(yt, xt, lm, "-q")
    X, _ = load_svmlight(test, n_features=ours.n_features_)
    assert np.allclose(ours.predict(X), labels, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("args,message", [
    (["-s", "oneclass", "-w1", "2"], "class weights (-w) are for classifiers"),
    (["-s", "21", "-B", "1"], "no bias feature"),
    (["-s", "21", "-n", "0"], "-n = 0.0 is out of range"),
    (["-s", "21", "-n", "1.5"], "-n = 1.5 is out of range"),
    (["-s", "11", "-p", "-0.5"], "-p (--epsilon) = -0.5 is out of range"),
    (["-s", "11", "-b", "1"], "no class probabilities"),
    (["-s", "svr", "-w1", "2"], "class weights (-w) are for classifiers"),
    (["-s", "3", "-R"], "-R: dcd has no free intercept"),
    (["-s", "2"], "use a regression solver (-s svr"),
])
def test_bad_regression_and_one_class_requests_stop_in_one_line(files, args, message):
    tmp, train, _ = files
    r = invoke(train_cmd, "-q", *args, train, tmp / "bad.model")
    assert r.exit_code in (1, 2) and message in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp / "bad.model").exists()


def test_predict_b1_on_a_regression_model_stops_in_one_line(files):
    tmp, train, test = files
    assert invoke(train_cmd, "-q", "-s", "11", train, tmp / "m").exit_code == 0
    r = invoke(predict_cmd, "-b", "1", test, tmp / "m", tmp / "p")
    assert r.exit_code == 1 and "no probability sigmoids" in r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp / "p").exists()


def test_one_class_ignores_labels_and_keeps_nu(tmp_path):
    """The labels of the file do not matter (LIBLINEAR ignores them); at most about nu of
    the training rows fall outside (decision value <= 0)."""
    rng = np.random.default_rng(3)
    X = sp.csr_matrix(np.abs(rng.standard_normal((400, 5))))
    for labels, name in ((np.ones(400), "a"), (rng.integers(0, 7, 400).astype(float), "b")):
        dump_svmlight(X, labels, tmp_path / f"{name}.svm")
        assert invoke(train_cmd, "-q", "-s", "21", "-n", "0.1", "-e", "1e-6", tmp_path / f"{name}.svm",
                      tmp_path / f"{name}.m").exit_code == 0
    a, b = linsvm.load_model(tmp_path / "a.m"), linsvm.load_model(tmp_path / "b.m")
    assert np.array_equal(a.weights, b.weights) and a.offset_ == b.offset_
    outside = np.mean(a.decision_function(X) <= 0)
    assert outside <= 0.1 + 1e-9


@pytest.mark.slow
@pytest.mark.subprocess
def test_synth_regression_round_trip(tmp_path):
    out = subprocess.run([sys.executable, "-m", "linsvm", "synth", "--regression", "--n-samples", "300",
                          "--n-features", "200", "--target-offset", "7", str(tmp_path / "s.svm")],
                         capture_output=True, text=True, env=child_env())
    assert out.returncode == 0, out.stderr
    _, y = load_svmlight(tmp_path / "s.svm")
    assert y.shape == (300,) and abs(y.mean() - 7) < 1 and not np.all(y == np.round(y))
