"""The L1-regularized solvers end to end: `linsvm-train -s 5 / -s 6` (cdn,
glmnet) with the common options, one-vs-rest, warm starts, model files in both formats
against LIBLINEAR, scikit-learn's LinearSVC(penalty="l1").

What is checked, never against the code's own output alone:
* the command line trains what linsvm.train trains with the same options (the solvers
  themselves are checked against scipy and LIBLINEAR in tests/test_l1.py);
* -v against folds trained here, one-vs-rest columns against binary solves of each class;
* warm starts (an L1 model, or an L2 model: accepted, the math is sound) reach the cold
  start's optimum, certified by the subgradient conditions computed here with numpy;
* LIBLINEAR's `predict` (the peer build) reads our models and predicts our labels, and we
  read liblinear-official's -s 5 / -s 6 models and predict its labels;
* scikit-learn's own LinearSVC(penalty="l1", dual=False) (its bundled LIBLINEAR) at a
  tight tolerance gives the weights of linsvm's LinearSVC(penalty="l1").
"""
import subprocess

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.cli import predict_cmd, train_cmd
from linsvm.cv import make_folds
from linsvm.io.svmlight import dump_svmlight, load_svmlight
from linsvm.problem.catalog import penalty_of, solver_for_penalty

from conftest import augmented, invoke, liblinear_tool, random_problem

CODES = [("5", "cdn"), ("6", "glmnet")]


def load(path):
    return linsvm.load_model(str(path))


@pytest.fixture
def files(tmp_path):
    X, y = random_problem(n_samples=200, n_features=30, density=0.3, seed=5)
    train, test = tmp_path / "b.svm", tmp_path / "b.t.svm"
    dump_svmlight(X[:150], y[:150], train)
    dump_svmlight(X[150:], y[150:], test)
    return tmp_path, train, test


def max_violation(model, X, y, C, loss):
    """max_j |S_j| of ||w||_1 + C sum loss at the model's weights (bias 1), S the
    minimum-norm subgradient, computed here with numpy."""
    Xa = augmented(X, dense=True)
    w = model.weights[:, 0]
    t = np.where(y == model.classes_[0], 1.0, -1.0)
    z = t * (Xa @ w)
    if loss == "l2":
        g = Xa.T @ (t * (-2.0 * C * np.maximum(0.0, 1.0 - z)))
    else:
        g = Xa.T @ (t * (-C / (1.0 + np.exp(z))))
    s = np.where(w > 0, g + 1.0, np.where(w < 0, g - 1.0,
                                          np.sign(g) * np.maximum(0.0, np.abs(g) - 1.0)))
    return float(np.abs(s).max())


# ------------------------------------------------------------------ options and summary

@pytest.mark.parametrize("code,name", CODES)
def test_codes_and_names_take_every_common_option(files, code, name):
    """-s 5 / -s cdn (-s 6 / glmnet) with -c -e -B -w -W: the same model as linsvm.train
    with those options; the summary says how many weights are non-zero; the model file
    records the penalty."""
    tmp, train, _ = files
    X, y = load_svmlight(train)
    weights = np.linspace(0.5, 1.5, y.shape[0])
    (tmp / "w.txt").write_text("\n".join(str(float(v)) for v in weights))
    opts = ["-c", "0.7", "-e", "1e-5", "-B", "2", "-w1", "2.5", "-W", tmp / "w.txt"]
    r = invoke(train_cmd, "-s", code, *opts, train, tmp / "a")
    assert r.exit_code == 0, r.output
    assert invoke(train_cmd, "-q", "-s", name, *opts, train, tmp / "b").exit_code == 0
    a, b = load(tmp / "a"), load(tmp / "b")
    assert a.solver == name and a.params["penalty"] == "l1" and penalty_of(a.solver) == "l1"
    np.testing.assert_array_equal(a.weights, b.weights)
    ref = linsvm.train(X, y, solver=name, C=0.7, tol=1e-5, bias=2.0, class_weight={1.0: 2.5},
                       sample_weight=weights)
    np.testing.assert_array_equal(a.weights, ref.weights)
    k = int(np.count_nonzero(a.weights))
    summary = [line for line in r.stderr.splitlines() if line.startswith(f"{name}: objective")]
    assert len(summary) == 1 and f"nnz = {k} of {a.weights.size}" in summary[0]
    assert 0 < k < a.weights.size        # C = 0.7 on 30 noisy features: a sparse model


@pytest.mark.parametrize("name", ["cdn", "glmnet"])
def test_cross_validation_is_the_folds_trained_here(files, name):
    tmp, train, _ = files
    r = invoke(train_cmd, "-q", "-s", name, "-v", "4", train)
    assert r.exit_code == 0, r.output
    X, y = load_svmlight(train)
    fold = make_folds(y, 4, seed=0)
    pred = np.empty_like(y)
    for f in range(4):
        model = linsvm.train(X, y, solver=name, rows=np.flatnonzero(fold != f))
        pred[fold == f] = model.predict(X[fold == f])
    acc = float(r.stdout.split("Cross Validation Accuracy = ")[1].split("%")[0])
    assert acc == pytest.approx(100.0 * np.mean(pred == y), abs=1e-4)


def test_parameter_search_runs_for_both(files):
    tmp, train, _ = files
    for name in ("cdn", "glmnet"):
        r = invoke(train_cmd, "-s", name, "-C", "-v", "3", train)
        assert r.exit_code == 0, r.output
        assert r.stdout.strip().splitlines()[-1].startswith("Best C = ")


@pytest.mark.parametrize("code,name", CODES)
def test_one_vs_rest_columns_are_binary_solves(tmp_path, code, name):
    X, y = random_problem(n_samples=240, n_features=15, n_classes=3, seed=2)
    dump_svmlight(X, y, tmp_path / "m.svm")
    r = invoke(train_cmd, "-q", "-s", code, "-e", "1e-6", tmp_path / "m.svm", tmp_path / "m")
    assert r.exit_code == 0, r.output
    model = load(tmp_path / "m")
    assert model.kind == "multiclass" and model.weights.shape == (16, 3)
    for j, c in enumerate(model.classes_):
        t = np.where(y == c, 1.0, -1.0)
        col = linsvm.train(X, t, solver=name, tol=1e-6)
        sign = 1.0 if col.classes_[0] == 1.0 else -1.0
        np.testing.assert_allclose(model.weights[:, j], sign * col.weights[:, 0], atol=1e-12)
        assert max_violation(col, X, t, 1.0, "l2" if name == "cdn" else "lr") < 1e-3


# ------------------------------------------------------------------ warm starts

@pytest.mark.parametrize("name,loss", [("cdn", "l2"), ("glmnet", "lr")])
def test_warm_starts_from_l1_and_l2_models_reach_the_cold_optimum(files, name, loss):
    """-i with an L1 model (the same solver at another C, or a LIBLINEAR-format copy) and
    with an L2 model (mfn): accepted, since the problem is convex and the stopping target
    is the cold start's (docs/l1.md); each ends at the optimum, certified here by the
    subgradient conditions, with the cold start's zero pattern."""
    tmp, train, _ = files
    X, y = load_svmlight(train)
    tight = ["-e", "1e-9", "--max-iter", "100000" if name == "cdn" else "1000"]
    assert invoke(train_cmd, "-q", "-s", name, "-c", "0.5", train, tmp / "half").exit_code == 0
    assert invoke(train_cmd, "-q", "-s", name, "-c", "0.5", "--model-format", "liblinear", train,
                  tmp / "half.ll").exit_code == 0
    assert invoke(train_cmd, "-q", "-s", "mfn", "-c", "2", train, tmp / "l2").exit_code == 0
    assert invoke(train_cmd, "-q", "-s", name, "-c", "2", *tight, train, tmp / "cold").exit_code == 0
    cold = load(tmp / "cold")
    assert max_violation(cold, X, y, 2.0, loss) < 1e-6
    for start in ("half", "half.ll", "l2"):
        r = invoke(train_cmd, "-q", "-s", name, "-c", "2", *tight, "-i", tmp / start, train,
                   tmp / "warm")
        assert r.exit_code == 0 and r.stderr == "", (start, r.output)
        warm = load(tmp / "warm")
        again = linsvm.train(X, y, solver=name, C=2.0, init=load(tmp / start))
        assert again.column_stats[0]["warm_start"] == "weights"
        assert max_violation(warm, X, y, 2.0, loss) < 1e-6, start
        np.testing.assert_array_equal(warm.weights != 0, cold.weights != 0)
        assert warm.objective == pytest.approx(cold.objective, rel=1e-9)


@pytest.mark.parametrize("make,message", [
    (lambda X, y: linsvm.train(X, np.where(y > 0, 1.0, np.arange(y.shape[0]) % 2 + 2.0),
                               solver="cdn"), "different number of weight columns"),
    (lambda X, y: linsvm.train(X, np.where(y > 0, 7.0, 9.0), solver="glmnet"),
     "different class labels"),
    (lambda X, y: linsvm.train(X, np.asarray(X.sum(axis=1)).ravel(), solver="svr"),
     "different class labels"),
])
def test_warm_starts_that_do_not_fit_stop_in_one_line(files, make, message):
    tmp, train, _ = files
    X, y = load_svmlight(train)
    make(X, y).save(str(tmp / "other"))
    r = invoke(train_cmd, "-q", "-s", "6", "-i", tmp / "other", train, tmp / "m")
    assert r.exit_code == 1 and message in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp / "m").exists()


@pytest.mark.parametrize("code,name", CODES)
def test_iteration_cap_without_a_certificate_is_one_warning_line(files, code, name):
    """The ConvergenceWarning rule on the command line: a solve cut by --max-iter whose
    duality gap is above 1% prints one `warning:` line naming the cap and the gap, and
    still writes its model."""
    tmp, train, _ = files
    r = invoke(train_cmd, "-q", "-s", code, "-c", "50", "-e", "1e-12", "--max-iter", "1", train,
               tmp / "m")
    assert r.exit_code == 0, r.output
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: {name} stopped at the iteration cap")
    gap = float(lines[0].split("relative duality gap ")[1].split()[0])
    assert gap > 0.01 and (tmp / "m").exists()
    r = invoke(train_cmd, "-q", "-s", code, "-e", "1e-9", "--max-iter", "100000", train, tmp / "m")
    assert r.exit_code == 0 and r.stderr == "", r.output
    assert load(tmp / "m").stats["gap"] <= 0.01


@pytest.mark.parametrize("args,message", [
    (["-s", "5", "-R", "-B", "0"], "adds no bias feature: give -B > 0"),
    (["-s", "6", "--n-threads", "2000"], "--n-threads = 2000 is out of range [0, 1024]"),
    (["-s", "5", "--inner-max-iter", "3"], "--inner-max-iter does not apply to solver 'cdn'"),
    (["-s", "6", "--max-iter", "0"], "--max-iter = 0 is out of range"),
    (["-s", "5", "-e", "0"], "tolerance must be > 0"),
    (["-s", "6", "-c", "-1"], "C must be > 0"),
    (["-s", "cdn", "-p", "0.2"], "-p does not apply to solver 'cdn'"),     # -s 5: ignored
])
def test_bad_requests_stop_in_one_line(files, args, message):
    tmp, train, _ = files
    r = invoke(train_cmd, "-q", *args, train, tmp / "bad.model")
    assert r.exit_code in (1, 2) and message in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp / "bad.model").exists()


@pytest.mark.parametrize("rows,message", [
    ("1.5 1:1\n2.5 2:1\n0.5 1:2\n", "is not an integer"),
    ("1 1:1\n1 2:1\n", "only one class"),
])
def test_labels_that_are_not_classes_stop_in_one_line(tmp_path, rows, message):
    (tmp_path / "d").write_text(rows)
    for code in ("5", "6"):
        r = invoke(train_cmd, "-q", "-s", code, tmp_path / "d", tmp_path / "bad.model")
        assert r.exit_code == 1 and message in r.stderr, r.stderr
        assert r.stderr.count("\n") == 1 and not (tmp_path / "bad.model").exists()


# ------------------------------------------------------------------ model files

@pytest.mark.subprocess
@pytest.mark.parametrize("code,name,solver_type", [("5", "cdn", "L1R_L2LOSS_SVC"),
                                                   ("6", "glmnet", "L1R_LR")])
@pytest.mark.parametrize("classes", [2, 3])
def test_liblinears_predict_reads_our_models(tmp_path, code, name, solver_type, classes):
    """--model-format liblinear names LIBLINEAR's type; the peer's `predict` gives our
    labels; both formats keep the exact zeros."""
    X, y = random_problem(n_samples=200, n_features=40, density=0.2, n_classes=classes, seed=7)
    dump_svmlight(X, y, tmp_path / "d")
    assert invoke(train_cmd, "-q", "-s", code, "-c", "0.3", "--model-format", "liblinear",
                  tmp_path / "d", tmp_path / "ll").exit_code == 0
    assert invoke(train_cmd, "-q", "-s", code, "-c", "0.3", tmp_path / "d", tmp_path / "ours").exit_code == 0
    head = (tmp_path / "ll").read_text().splitlines()
    assert head[0] == f"solver_type {solver_type}"
    ours, ll = load(tmp_path / "ours"), load(tmp_path / "ll")
    assert ll.solver == f"liblinear:{solver_type}" and penalty_of(ll.solver) == "l1"
    np.testing.assert_array_equal(ours.weights, ll.weights)
    zeros = int(np.count_nonzero(ours.weights == 0))
    assert zeros > 0 and int(np.count_nonzero(ll.weights == 0)) == zeros
    assert invoke(predict_cmd, tmp_path / "d", tmp_path / "ours", tmp_path / "p").exit_code == 0
    mine = np.loadtxt(tmp_path / "p")
    np.testing.assert_array_equal(mine, ours.predict(X))
    subprocess.run([liblinear_tool("predict"), tmp_path / "d", tmp_path / "ll", tmp_path / "q"],
                   check=True, capture_output=True)
    np.testing.assert_array_equal(np.loadtxt(tmp_path / "q"), mine)


@pytest.mark.parametrize("code", [5, 6])
def test_we_read_liblinears_l1_models(tmp_path, code):
    ll = pytest.importorskip("liblinear.liblinearutil", reason="liblinear-official not installed")
    X, y = random_problem(n_samples=200, n_features=40, density=0.2, n_classes=3, seed=8)
    lm = ll.train(y[:150], sp.csr_matrix(X[:150]), f"-s {code} -c 0.5 -B 1 -q")
    ll.save_model(str(tmp_path / "ll.model"), lm)
    ours = load(tmp_path / "ll.model")
    assert penalty_of(ours.solver) == "l1" and np.count_nonzero(ours.weights == 0) > 0
    labels, _, values = ll.predict(y[150:], sp.csr_matrix(X[150:]), lm, "-q")
    np.testing.assert_array_equal(ours.predict(X[150:]), labels)
    np.testing.assert_allclose(ours.decision_function(X[150:]), values, rtol=0, atol=1e-12)


def test_glmnet_probabilities_are_the_logistic_model(files):
    """predict -b 1 of a glmnet model: P(+1 | x) = 1 / (1 + exp(-w.x)) without
    calibration, through the `SolverInfo.probabilities` hook of branch `logistic`."""
    tmp, train, test = files
    assert invoke(train_cmd, "-q", "-s", "6", train, tmp / "m").exit_code == 0
    r = invoke(predict_cmd, "-b", "1", test, tmp / "m", tmp / "p")
    if r.exit_code != 0 and "no probability sigmoids" in r.stderr:
        pytest.skip("the logistic probability hook (SolverInfo.probabilities, branch "
                    "logistic) is not merged yet: -b 1 needs calibrated sigmoids here")
    assert r.exit_code == 0, r.output
    model = load(tmp / "m")
    X, _ = load_svmlight(test, n_features=model.n_features_)
    lines = (tmp / "p").read_text().splitlines()
    assert lines[0].split()[1:] == [f"{c:g}" for c in model.classes_]
    p_first = np.array([float(line.split()[1]) for line in lines[1:]])
    np.testing.assert_allclose(p_first, 1.0 / (1.0 + np.exp(-model.decision_function(X))),
                               rtol=1e-6)


# ------------------------------------------------------------------ scikit-learn

def test_sklearn_linearsvc_penalty_l1_is_cdn_and_matches_sklearn():
    pytest.importorskip("sklearn")
    from sklearn.svm import LinearSVC as SkLinearSVC

    from linsvm.sklearn import LinearSVC

    X, y = random_problem(n_samples=150, n_features=20, density=0.4, seed=9)
    ours = LinearSVC(penalty="l1", C=0.5, tol=1e-10, max_iter=100000).fit(X, y)
    assert ours.model_.solver == "cdn"
    ref = SkLinearSVC(penalty="l1", loss="squared_hinge", dual=False, C=0.5, tol=1e-10,
                      max_iter=100000, intercept_scaling=1.0).fit(X, y)
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5)
    np.testing.assert_array_equal(ours.coef_ == 0, ref.coef_ == 0)
    assert LinearSVC(penalty="l1", solver="glmnet").fit(X, y).model_.solver == "glmnet"
    assert LinearSVC(solver="cdn").fit(X, y).model_.solver == "cdn"
    with pytest.raises(ValueError, match="L2-regularized but penalty='l1'"):
        LinearSVC(penalty="l1", solver="dcd").fit(X, y)
    with pytest.raises(ValueError, match="L1-regularized but penalty='l2'"):
        LinearSVC(penalty="l2", solver="cdn").fit(X, y)


def test_solver_for_penalty():
    assert solver_for_penalty("mfn", None) == "mfn"
    assert solver_for_penalty("mfn", "l1") == "cdn"
    assert solver_for_penalty("glmnet", "l1") == "glmnet"
    assert solver_for_penalty("dcd", "l2") == "dcd"
    with pytest.raises(ValueError, match="penalty must be"):
        solver_for_penalty("mfn", "elasticnet")
