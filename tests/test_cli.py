"""The command line: exit codes, one-line errors, atomic outputs, pipelines."""
import os
import subprocess
import sys

import numpy as np
import pytest

import linsvm
from linsvm.cli import cli, cv_cmd, predict_cmd, train_cmd

from conftest import assert_one_line_error, invoke, random_problem


@pytest.fixture
def files(tmp_path):
    X, y = random_problem(n_samples=120, n_features=10, seed=1)
    train_file = tmp_path / "train.svm"
    linsvm.dump_svmlight(X, y, str(train_file))
    return tmp_path, train_file, X, y


def test_train_then_predict_round_trip(files):
    tmp, train_file, X, y = files
    model_file = tmp / "m.model"
    result = invoke(train_cmd, "-s", "mfn", "-c", "2", "-q", train_file, model_file)
    assert result.exit_code == 0 and result.stderr == ""
    model = linsvm.load_model(str(model_file))
    ref = linsvm.train(X, y, C=2.0)
    np.testing.assert_array_equal(model.weights, ref.weights)
    out = tmp / "pred.txt"
    result = invoke(predict_cmd, train_file, model_file, out)
    assert result.exit_code == 0
    pred = np.loadtxt(out)
    np.testing.assert_array_equal(pred, ref.predict(X))
    correct = int(np.sum(pred == y))
    assert f"Accuracy = {100 * correct / y.size:g}% ({correct}/{y.size})" in result.stderr


def test_default_model_name_is_training_file_plus_model(files, monkeypatch):
    tmp, train_file, X, y = files
    monkeypatch.chdir(tmp)
    assert invoke(train_cmd, "-q", train_file).exit_code == 0
    assert (tmp / "train.svm.model").is_file()


def test_decision_values_and_stdout(files):
    tmp, train_file, X, y = files
    model_file = tmp / "m.model"
    invoke(train_cmd, "-q", train_file, model_file)
    result = invoke(predict_cmd, "--decision-values", "-q", train_file, model_file, "-")
    values = np.array([float(v) for v in result.stdout.split()])
    np.testing.assert_allclose(values, linsvm.load_model(str(model_file)).decision_function(X), rtol=1e-15)


def test_liblinear_model_format_written_and_read(files):
    tmp, train_file, X, y = files
    model_file = tmp / "ll.model"
    assert invoke(train_cmd, "-q", "--model-format", "liblinear", train_file, model_file).exit_code == 0
    assert model_file.read_text().startswith("solver_type")
    assert invoke(predict_cmd, "-q", train_file, model_file, tmp / "p").exit_code == 0


def test_multiclass_and_class_weights(tmp_path):
    X, y = random_problem(n_samples=150, n_features=8, n_classes=3, seed=2)
    f = tmp_path / "mc.svm"
    linsvm.dump_svmlight(X, y, str(f))
    result = invoke(train_cmd, "-q", "-w", "2:5", f, tmp_path / "mc.model")
    assert result.exit_code == 0
    model = linsvm.load_model(str(tmp_path / "mc.model"))
    ref = linsvm.train(X, y, class_weight={2.0: 5.0})
    np.testing.assert_array_equal(model.weights, ref.weights)
    assert model.weights.shape[1] == 3


def test_instance_weights_file(files):
    tmp, train_file, X, y = files
    w = np.linspace(0.5, 2.0, y.size)
    wf = tmp / "w.txt"
    np.savetxt(wf, w)
    assert invoke(train_cmd, "-q", "-W", wf, train_file, tmp / "m").exit_code == 0
    ref = linsvm.train(X, y, sample_weight=np.loadtxt(wf))
    np.testing.assert_array_equal(linsvm.load_model(str(tmp / "m")).weights, ref.weights)
    np.savetxt(wf, w[:-1])
    assert_one_line_error(invoke(train_cmd, "-q", "-W", wf, train_file, tmp / "m2"), "instance weights")
    assert not (tmp / "m2").exists()


def test_warm_start_option(files):
    tmp, train_file, X, y = files
    invoke(train_cmd, "-q", "-c", "1", train_file, tmp / "a")
    result = invoke(train_cmd, "-q", "-c", "2", "-e", "1e-11", "-i", tmp / "a", train_file, tmp / "b")
    assert result.exit_code == 0
    np.testing.assert_allclose(linsvm.load_model(str(tmp / "b")).weights,
                               linsvm.train(X, y, C=2.0, tol=1e-11).weights, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("content,needle", [
    (b"1 1:0.5\nfoo 2:1\n", ":2:"),
    (b"1 1:0.5 3:1 2:1\n", ":1:"),
    (b"1 0:1\n", ":1:"),
    (b"1 1:nan\n", ":1:"),
    (b"", "no training examples"),
    (b"1 1:1\n1 2:1\n", "one class"),
])
def test_bad_training_data_is_one_line_error_and_no_model(tmp_path, content, needle):
    f = tmp_path / "bad.svm"
    f.write_bytes(content)
    result = invoke(train_cmd, "-q", f, tmp_path / "out.model")
    assert_one_line_error(result, needle)
    assert not (tmp_path / "out.model").exists()


@pytest.mark.parametrize("command,args", [
    (train_cmd, ["-v", "5"]),
    (train_cmd, ["-C"]),
    (train_cmd, ["-s", "mfn-ord", "-v", "3"]),
    (train_cmd, ["-s", "11"]),
    (cv_cmd, []),
    (cv_cmd, ["-s", "sdm-cs"]),
    (cv_cmd, ["-s", "mfn-ord"]),
])
def test_an_empty_training_file_is_a_one_line_error_naming_it(tmp_path, command, args):
    # every kind and mode meets the same check: the classifiers' label rules used to
    # index the first class of none (an IndexError traceback in cross-validation)
    f = tmp_path / "empty.svm"
    f.write_bytes(b"")
    out = [tmp_path / "out.model"] if command is train_cmd else []
    result = invoke(command, "-q", *args, f, *out)
    assert_one_line_error(result, "empty.svm: no training examples")
    assert not (tmp_path / "out.model").exists()


def test_cross_validate_on_no_rows_raises_a_data_error():
    import scipy.sparse as sp
    from linsvm.fit.cv import cross_validate
    with pytest.raises(linsvm.DataError, match="no training examples"):
        cross_validate(sp.csr_matrix((0, 3)), np.zeros(0), Cs=[1.0], solver="mfn")


def test_missing_file_and_corrupt_model(files):
    tmp, train_file, X, y = files
    assert_one_line_error(invoke(train_cmd, "-q", tmp / "nope.svm", tmp / "m"), "nope.svm")
    bad = tmp / "bad.model"
    bad.write_text("linsvm_model 1\nsolver mfn\n")
    assert_one_line_error(invoke(predict_cmd, train_file, bad, tmp / "p"), "bad.model")
    assert not (tmp / "p").exists()


@pytest.mark.parametrize("args,needle", [
    (["-c", "0"], "C must be > 0"),
    (["-c", "-1"], "C must be > 0"),
    (["-e", "0"], "tolerance"),
    (["--max-iter", "0"], "--max-iter = 0 is out of range"),
    (["--subset", "1.5"], "--subset"),
])
def test_out_of_range_options(files, args, needle):
    tmp, train_file, X, y = files
    result = invoke(train_cmd, "-q", *args, train_file, tmp / "m")
    assert_one_line_error(result, needle)
    assert not (tmp / "m").exists()


def test_usage_errors_exit_2(files):
    tmp, train_file, X, y = files
    assert invoke(train_cmd, "-s", "nosuch", train_file).exit_code == 2
    assert invoke(train_cmd, "-w", "2x5", train_file).exit_code == 2
    assert invoke(train_cmd, "-c", "abc", train_file).exit_code == 2
    assert invoke(predict_cmd, train_file).exit_code == 2


def test_help_lists_every_solver_with_objective_and_tolerance():
    text = invoke(train_cmd, "--help").output
    for name, info in linsvm.solvers.SOLVERS.items():
        assert name in text
        assert info.objective.split()[0] in text
        assert f"default {info.default_tol:g}" in text


@pytest.mark.slow
@pytest.mark.subprocess
def test_group_version_and_python_m(files):
    # run from tmp: from the repository root `-m linsvm` would find the uncompiled sources
    assert linsvm.__version__ in invoke(cli, "--version").output
    tmp, train_file, X, y = files
    proc = subprocess.run([sys.executable, "-m", "linsvm", "train", "-q", str(train_file), str(tmp / "pm.model")],
                          capture_output=True, text=True, cwd=tmp)
    assert proc.returncode == 0, proc.stderr
    proc = subprocess.run([sys.executable, "-m", "linsvm", "predict", str(train_file), str(tmp / "nope.model"), "-"],
                          capture_output=True, text=True, cwd=tmp)
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


def test_predict_reads_stdin_and_streams_in_chunks(files):
    tmp, train_file, X, y = files
    model_file = tmp / "m.model"
    invoke(train_cmd, "-q", train_file, model_file)
    data = train_file.read_bytes()
    result = invoke(predict_cmd, "-q", "--chunk-rows", "7", "-", model_file, "-", input=data)
    assert result.exit_code == 0
    np.testing.assert_array_equal(np.array(result.stdout.split(), dtype=float),
                                  linsvm.load_model(str(model_file)).predict(X))


def test_predict_ignores_features_beyond_the_model(files):
    tmp, train_file, X, y = files
    model_file = tmp / "m.model"
    invoke(train_cmd, "-q", train_file, model_file)
    wide = tmp / "wide.svm"
    wide.write_bytes(b"".join(line.rstrip(b"\n") + b" 999:5\n" for line in train_file.read_bytes().splitlines(True)))
    a = invoke(predict_cmd, "-q", "--decision-values", wide, model_file, "-").stdout
    b = invoke(predict_cmd, "-q", "--decision-values", train_file, model_file, "-").stdout
    assert a == b


def test_predict_reports_binary_measures(files):
    from sklearn.metrics import f1_score, roc_auc_score
    tmp, train_file, X, y = files
    model_file = tmp / "m.model"
    invoke(train_cmd, "-q", train_file, model_file)
    result = invoke(predict_cmd, train_file, model_file, tmp / "p")
    lines = result.stderr.splitlines()
    assert lines[0].startswith("Accuracy = ")
    model = linsvm.load_model(str(model_file))
    scores = model.decision_function(X)
    pos = model.classes_[0]
    auc = roc_auc_score(y == pos, scores)
    f1 = f1_score(y == pos, model.predict(X) == pos)
    assert f"ROC area = {auc:.6g}" in lines[1]
    assert f"F1 = {100 * f1:.4g}%" in lines[1]


def test_predict_writes_into_a_fifo_without_replacing_it(files):
    # regression: the atomic temp+rename once replaced /dev/null with a regular file
    import stat
    import threading
    tmp, train_file, X, y = files
    model_file = tmp / "m.model"
    invoke(train_cmd, "-q", train_file, model_file)
    fifo = tmp / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    result = invoke(predict_cmd, "-q", train_file, model_file, fifo)
    reader.join(timeout=30)
    assert result.exit_code == 0
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert len(got[0].split()) == y.size


# the objective at the optimum of four examples without features, labels 1 -1 1 -1, C = 1:
# every decision value is 0 there (no features; the bias weight is 0 by symmetry), so each
# solver's objective is its loss at 0 summed over the rows
_LOG2 = float(np.log(2.0))
_NO_FEATURE_OPTIMUM = {"21": 0.0, "11": 4 * 0.9 ** 2, "12": 4 * 0.9 ** 2, "13": 4 * 0.9,
                       "softmax": 4 * _LOG2, "0": 4 * _LOG2, "7": 4 * _LOG2, "6": 4 * _LOG2,
                       "4": 4.0, "sdm-ww": 4.0, "mfn-ord": 4.0, "perf-ord": 4.0, "mfn": 4.0,
                       "ls": 4.0, "1": 4.0, "3": 4.0, "5": 4.0, "alm": 4.0}


@pytest.mark.parametrize("bias", [None, "-1"])
@pytest.mark.parametrize("solver", sorted(_NO_FEATURE_OPTIMUM))
def test_data_without_features_trains_the_bias_only_model(tmp_path, solver, bias):
    data = tmp_path / "z.svm"
    data.write_text("1\n-1\n1\n-1\n")
    model_file, out = tmp_path / "m", tmp_path / "out"
    args = ["-q", "-s", solver] + ([] if bias is None else ["-B", bias])
    if solver == "21" and bias is None:
        args += ["-B", "-1"]            # oneclass takes no bias feature
    result = invoke(train_cmd, *args + [data, model_file])
    assert result.exit_code == 0, result.output
    model = linsvm.load_model(str(model_file))
    assert model.n_features_ == 0
    # the dual solvers stop within their certified gap (well under 1e-3 here)
    rtol = 1e-3 if solver in ("1", "3", "12", "13", "4", "sdm-ww", "7") else 1e-7
    np.testing.assert_allclose(model.objective, _NO_FEATURE_OPTIMUM[solver], rtol=rtol, atol=1e-12)
    result = invoke(predict_cmd, *[data, model_file, out])
    assert result.exit_code == 0, result.output
    if solver in ("21", "11", "12", "13") and bias == "-1":     # LIBLINEAR's model of this data
        from liblinear.liblinearutil import predict, problem, train as ll_train

        ll = ll_train(problem([1, -1, 1, -1], [{}, {}, {}, {}]), f"-s {solver} -q")
        expected = predict([1, -1, 1, -1], [{}, {}, {}, {}], ll, "-q")[0]
        np.testing.assert_array_equal(np.loadtxt(out), expected)
