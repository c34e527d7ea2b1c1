"""Probability outputs end to end: `linsvm-train -b 1`, the model file
(version 3, probA/probB lines), `linsvm-predict -b 1` (LIBSVM's layout) and the
agreement of the command line with linsvm.sklearn.LinearSVC(probability=True)."""
import numpy as np
import pytest

import linsvm
from linsvm.cli import predict_cmd, train_cmd
from linsvm.errors import ModelError, ParameterError
from linsvm.model.model import _loads, load_model
from linsvm.fit.calibration import calibrate, out_of_fold_decision_values
from linsvm.model.sigmoid import fit_multiclass, fit_sigmoid

from conftest import assert_one_line_error, invoke, random_problem


def bits(a):
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


@pytest.fixture(params=["binary", "multiclass"])
def problem(request, tmp_path):
    if request.param == "binary":
        X, y = random_problem(n_samples=150, n_features=10, seed=3)
    else:
        X, y = random_problem(n_samples=180, n_features=10, n_classes=3, seed=4)
    train_file = tmp_path / "train.svm"
    linsvm.dump_svmlight(X, y, str(train_file))
    return tmp_path, train_file, X, y


def read_proba_output(path):
    lines = path.read_text().splitlines()
    head = lines[0].split()
    assert head[0] == "labels"
    rows = [line.split() for line in lines[1:]]
    labels = np.array([float(r[0]) for r in rows])
    P = np.array([[float(v) for v in r[1:]] for r in rows])
    return np.array([float(v) for v in head[1:]]), labels, P


# ------------------------------------------------------------------ the library function

def test_calibrate_fits_the_sigmoids_of_the_out_of_fold_values(problem):
    """calibrate = out_of_fold_decision_values + fit_sigmoid / fit_multiclass, in model order."""
    _, _, X, y = problem
    model = linsvm.train(X, y, C=0.5, seed=2)
    cal = calibrate(model, X, y, C=0.5, seed=2)
    np.testing.assert_array_equal(cal.weights, model.weights)
    _, S = out_of_fold_decision_values(X, y, n_folds=5, seed=2, classes=model.classes_, init=model, C=0.5)
    assert not np.isnan(S).any()
    if S.ndim == 1:
        expect = [fit_sigmoid(S, y == model.classes_[0])]
    else:
        expect = fit_multiclass(S, np.searchsorted(model.classes_, y) if np.all(np.diff(model.classes_) > 0)
                                else np.array([list(model.classes_).index(v) for v in y]))
    np.testing.assert_array_equal(cal.probability_, np.asarray(expect))
    P = cal.predict_proba(X)
    assert P.shape == (y.shape[0], model.classes_.shape[0])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # the probability of the true class is higher, on average, than the others'
    true = P[np.arange(y.shape[0]), [list(model.classes_).index(v) for v in y]]
    assert true.mean() > 1.0 / model.classes_.shape[0] + 0.1


def test_binary_predict_proba_is_the_sigmoid_of_the_positive_class(problem):
    _, _, X, y = problem
    if np.unique(y).shape[0] != 2:
        pytest.skip("binary only")
    cal = calibrate(linsvm.train(X, y), X, y)
    A, B = cal.probability_[0]
    f = cal.decision_function(X)
    P = cal.predict_proba(X)
    np.testing.assert_allclose(P[:, 0], 1.0 / (1.0 + np.exp(A * f + B)), rtol=1e-14)
    assert A < 0            # a larger score of classes_[0] means a larger probability of it


def test_ordinal_and_unknown_uses_are_refused():
    X, y = random_problem(n_samples=60, n_features=5, n_classes=3, seed=5)
    ordinal = linsvm.train(X, y, solver="mfn-ord")
    with pytest.raises(ParameterError, match="ordinal model has no class probabilities"):
        calibrate(ordinal, X, y, solver="mfn-ord")
    with pytest.raises(ModelError, match="ordinal model has no class probabilities"):
        ordinal.with_probability([[1.0, 0.0]])
    model = linsvm.train(X, y)
    with pytest.raises(ModelError, match="no probability sigmoids"):
        model.predict_proba(X)
    with pytest.raises(ModelError, match=r"shape \(3, 2\)"):
        model.with_probability([[1.0, 0.0]])
    with pytest.raises(ModelError, match="finite"):
        model.with_probability([[np.nan, 0.0]] * 3)


# ------------------------------------------------------------------ the model file

@pytest.mark.parametrize("fmt", ["linsvm", "linsvm-text", "linsvm-binary"])
def test_a_probability_model_round_trips_bit_for_bit(problem, fmt):
    tmp, _, X, y = problem
    cal = calibrate(linsvm.train(X, y), X, y)
    path = tmp / "m.model"
    cal.save(path, format=fmt)
    # binary weights: version 4, whose checksum covers the header too
    assert path.read_bytes().startswith(b"linsvm_model 4\n" if fmt == "linsvm-binary" else b"linsvm_model 3\n")
    back = load_model(path)
    np.testing.assert_array_equal(bits(back.probability_), bits(cal.probability_))
    np.testing.assert_array_equal(bits(back.weights), bits(cal.weights))
    np.testing.assert_array_equal(bits(back.predict_proba(X)), bits(cal.predict_proba(X)))
    back.save(tmp / "again.model", format=fmt)
    assert (tmp / "again.model").read_bytes() == path.read_bytes()


def test_models_without_sigmoids_stay_version_2(problem):
    tmp, _, X, y = problem
    model = linsvm.train(X, y)
    model.save(tmp / "a.model")
    cal = calibrate(model, X, y)
    cal.with_probability(None).save(tmp / "b.model")
    assert (tmp / "a.model").read_bytes().startswith(b"linsvm_model 2\n")
    assert (tmp / "a.model").read_bytes() == (tmp / "b.model").read_bytes()


def test_old_version_2_and_1_files_still_read(problem):
    tmp, _, X, y = problem
    model = linsvm.train(X, y)
    model.save(tmp / "m.model", format="linsvm-text")
    data = (tmp / "m.model").read_bytes()
    for version in (b"1", b"2"):
        m = _loads(data.replace(b"linsvm_model 2\n", b"linsvm_model " + version + b"\n", 1), "x")
        assert m.probability_ is None
        np.testing.assert_array_equal(m.weights, model.weights)


def test_liblinear_export_of_a_probability_model_is_refused(problem):
    tmp, _, X, y = problem
    cal = calibrate(linsvm.train(X, y), X, y)
    with pytest.raises(ModelError, match="LIBLINEAR's model format has no place for probability"):
        cal.save(tmp / "m.liblinear", format="liblinear")
    assert not (tmp / "m.liblinear").exists()
    cal.with_probability(None).save(tmp / "m.liblinear", format="liblinear")     # the way out


# ------------------------------------------------------------------ the command line

def test_cli_train_b1_then_predict_b1_writes_libsvm_probability_output(problem):
    tmp, train_file, X, y = problem
    model_file, out = tmp / "m.model", tmp / "out.txt"
    result = invoke(train_cmd, "-b", "1", "-q", train_file, model_file)
    assert result.exit_code == 0, result.output
    model = load_model(model_file)
    assert model.probability_ is not None
    result = invoke(predict_cmd, "-b", "1", train_file, model_file, out)
    assert result.exit_code == 0, result.output
    labels, pred, P = read_proba_output(out)
    np.testing.assert_array_equal(labels, model.classes_)            # the model's order
    assert P.shape == (y.shape[0], labels.shape[0])
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(pred, labels[np.argmax(P, axis=1)])  # label = argmax, as LIBSVM
    # the written probabilities are predict_proba's, exactly (repr reads back bit for bit)
    np.testing.assert_array_equal(bits(P), bits(model.predict_proba(X)))
    correct = int(np.sum(pred == y))
    assert f"Accuracy = {100 * correct / y.size:g}% ({correct}/{y.size})" in result.stderr


def test_cli_predict_b1_streams_in_chunks_with_the_same_output(problem):
    tmp, train_file, X, y = problem
    model_file = tmp / "m.model"
    assert invoke(train_cmd, "--probability", "1", "-q", train_file, model_file).exit_code == 0
    assert invoke(predict_cmd, "-b", "1", "-q", train_file, model_file, tmp / "a").exit_code == 0
    assert invoke(predict_cmd, "-b", "1", "-q", "--chunk-rows", "7", train_file, model_file, tmp / "b").exit_code == 0
    assert (tmp / "a").read_bytes() == (tmp / "b").read_bytes()


def test_cli_and_estimator_give_the_same_probabilities(problem):
    """linsvm-train -b 1 and LinearSVC(probability=True) call the same calibrate on
    the same data: same sigmoids, same probabilities per class."""
    pytest.importorskip("sklearn")
    from linsvm.sklearn import LinearSVC

    tmp, train_file, X, y = problem
    model_file = tmp / "m.model"
    assert invoke(train_cmd, "-b", "1", "-c", "0.5", "-q", train_file, model_file).exit_code == 0
    model = load_model(model_file)
    est = LinearSVC(C=0.5, probability=True).fit(X, y)
    P_cli = model.predict_proba(X)[:, [list(model.classes_).index(c) for c in est.classes_]]
    np.testing.assert_allclose(est.predict_proba(X), P_cli, rtol=1e-9, atol=1e-12)


def test_cli_b1_errors_are_one_line(problem):
    tmp, train_file, X, y = problem
    plain, out = tmp / "plain.model", tmp / "out.txt"
    assert invoke(train_cmd, "-q", train_file, plain).exit_code == 0
    # a model without sigmoids: one line, nothing written
    assert_one_line_error(invoke(predict_cmd, "-b", "1", train_file, plain, out), "no probability sigmoids",
                          "-b 1")
    assert not out.exists()
    # with --decision-values
    assert_one_line_error(invoke(predict_cmd, "-b", "1", "--decision-values", train_file, plain, out),
                          "--decision-values", code=2)
    assert not out.exists()
    # ordinal solvers
    assert_one_line_error(invoke(train_cmd, "-b", "1", "-s", "mfn-ord", train_file, tmp / "o.model"),
                          "ordinal", code=2)
    assert not (tmp / "o.model").exists()
    # LIBLINEAR's format, before training
    assert_one_line_error(invoke(train_cmd, "-b", "1", "--model-format", "liblinear", train_file,
                                 tmp / "l.model"), "LIBLINEAR's model format")
    assert not (tmp / "l.model").exists()
    # -v
    assert_one_line_error(invoke(train_cmd, "-b", "1", "-v", "3", train_file), "-v", code=2)
    # out of range
    result = invoke(train_cmd, "-b", "2", train_file, tmp / "x.model")
    assert result.exit_code == 2 and not (tmp / "x.model").exists()


def test_help_says_what_b1_costs():
    text = " ".join(invoke(train_cmd, "--help").output.split())
    assert "-b, --probability" in text and "about 5 more trainings" in text
    text = " ".join(invoke(predict_cmd, "--help").output.split())
    assert "-b, --probability" in text and "'labels L1 L2 ...'" in text


def test_predict_b1_label_is_the_argmax_not_the_sign_of_the_decision_value(tmp_path):
    """Regression: with -b 1 the label must follow the probabilities (LIBSVM), which
    differ from the sign of f when B != 0: here P(classes_[0]) > 1/2 only for f > 3."""
    model = linsvm.Model(solver="mfn", classes=[1, -1], weights=[[1.0]], bias=-1,
                         params={}).with_probability([[-1.0, 3.0]])
    model.save(tmp_path / "m.model")
    xs = np.array([-1.0, 1.0, 2.0, 2.9, 3.1, 5.0])
    (tmp_path / "t.svm").write_text("".join(f"1 1:{x!r}\n" for x in xs.tolist()))
    out = tmp_path / "out"
    result = invoke(predict_cmd, "-b", "1", tmp_path / "t.svm", tmp_path / "m.model", out)
    assert result.exit_code == 0, result.output
    labels, pred, P = read_proba_output(out)
    np.testing.assert_array_equal(pred, np.where(xs > 3, 1.0, -1.0))
    np.testing.assert_allclose(P[:, 0], 1.0 / (1.0 + np.exp(-xs + 3.0)), rtol=1e-15)
    assert "Accuracy = 33.3333% (2/6)" in result.stderr     # counted with that label
    plain = tmp_path / "plain"
    assert invoke(predict_cmd, "-q", tmp_path / "t.svm", tmp_path / "m.model", plain).exit_code == 0
    np.testing.assert_array_equal(np.loadtxt(plain), np.where(xs > 0, 1.0, -1.0))


def test_cli_b1_passes_instance_and_class_weights_to_calibrate(tmp_path):
    X, y = random_problem(n_samples=150, n_features=10, seed=6)
    train_file = tmp_path / "train.svm"
    linsvm.dump_svmlight(X, y, str(train_file))
    w = np.random.default_rng(0).uniform(0.2, 3.0, y.shape[0])
    (tmp_path / "w.txt").write_text("\n".join(map(repr, w.tolist())) + "\n")
    result = invoke(train_cmd, "-b", "1", "-q", "-W", tmp_path / "w.txt", "-w", "1:2", "--seed", "3",
                    train_file, tmp_path / "m.model")
    assert result.exit_code == 0, result.output
    got = load_model(tmp_path / "m.model")
    opts = dict(C=1.0, class_weight={1.0: 2.0}, sample_weight=w, seed=3)
    expect = calibrate(linsvm.train(X, y, **opts), X, y, **opts)
    np.testing.assert_array_equal(got.probability_, expect.probability_)
    unweighted = calibrate(linsvm.train(X, y, seed=3), X, y, seed=3)
    assert not np.array_equal(got.probability_, unweighted.probability_)
