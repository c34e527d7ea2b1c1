"""The command line for people:
LIBLINEAR's -s codes and -w forms, the invoked name in errors, imbalanced data, the
positive class, labels that are not classes, notes instead of silence, grouped help,
readable progress."""
import os
import re
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import linsvm
from linsvm import cli
from linsvm.cli import console, run_cv
from linsvm.cli import cv_cmd, predict_cmd, synth_cmd, train_cmd
from linsvm.solvers import SOLVERS, liblinear_code

from conftest import invoke, random_problem, run_here


def write(tmp_path, name, X, y):
    path = tmp_path / name
    linsvm.dump_svmlight(X, y, str(path))
    return path


@pytest.fixture
def binary(tmp_path):
    X, y = random_problem(n_samples=120, n_features=10, seed=1)
    return tmp_path, write(tmp_path, "train.svm", X, y), X, y


def imbalanced(n=400, share=0.97, seed=3):
    """0/1 labels, `share` of them 0, the minority shifted so that it is learnable."""
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < share, 0.0, 1.0)
    y[0] = 0.0
    y[1] = 1.0
    X = rng.standard_normal((n, 6)) + 1.5 * y[:, None] * np.array([1, -1, 1, 0, 0, 0])
    return X, y


# ------------------------------------------------------------------ LIBLINEAR's -s codes

def test_liblinear_code_2_trains_mfn(binary):
    tmp, f, X, y = binary
    assert invoke(train_cmd, "-q", "-s", "2", f, tmp / "a").exit_code == 0
    assert invoke(train_cmd, "-q", "-s", "mfn", f, tmp / "b").exit_code == 0
    a, b = linsvm.load_model(str(tmp / "a")), linsvm.load_model(str(tmp / "b"))
    assert a.solver == "mfn"
    np.testing.assert_array_equal(a.weights, b.weights)


@pytest.mark.parametrize("code,solver,loss", [("1", "dcd", "l2"), ("3", "dcd", "l1"), ("4", "sdm-cs", None),
                                              ("0", "lr", None), ("7", "lr-dual", None)])
def test_liblinear_codes_1_3_4_train_the_same_problem(binary, code, solver, loss):
    tmp, f, X, y = binary
    assert invoke(train_cmd, "-q", "-s", code, f, tmp / "m").exit_code == 0
    model = linsvm.load_model(str(tmp / "m"))
    assert model.solver == solver
    if loss:
        assert model.params["loss"] == loss
        ref = linsvm.train(X, y, solver="dcd", loss=loss)
        np.testing.assert_array_equal(model.weights, ref.weights)


def test_code_1_with_conflicting_loss_is_a_usage_error(binary):
    tmp, f, X, y = binary
    r = invoke(train_cmd, "-q", "-s", "1", "--loss", "l1", f, tmp / "m")
    assert r.exit_code == 2 and "contradicts --loss l1" in r.stderr
    assert not (tmp / "m").exists()
    assert invoke(train_cmd, "-q", "-s", "1", "--loss", "l2", f, tmp / "m").exit_code == 0


def test_a_code_liblinear_does_not_have_lists_the_codes(binary):
    tmp, f, X, y = binary
    r = invoke(train_cmd, "-s", "9", f, tmp / "m")
    assert r.exit_code == 2
    [line] = r.stderr.splitlines()              # one line, no usage block
    assert "-s 9 is not a LIBLINEAR solver code" in line
    assert "0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21" in line
    assert not (tmp / "m").exists()


def test_code_mapping_lives_in_the_registry():
    seen = {}
    for info in SOLVERS.values():
        for code, liblinear in info.liblinear_codes.items():
            assert code not in seen, f"code {code} claimed twice"
            seen[code] = info.name
            implied = liblinear.implied
            assert liblinear_code(code) == (info.name, implied)
            for option, value in implied.items():
                assert value in info.options[option].choices
    assert seen == {0: "lr", 1: "dcd", 2: "mfn", 3: "dcd", 4: "sdm-cs", 5: "cdn", 6: "glmnet",
                    7: "lr-dual", 11: "svr",
                    12: "svr-dual", 13: "svr-dual", 21: "oneclass"}
    with pytest.raises(linsvm.ParameterError, match="not a LIBLINEAR solver code"):
        liblinear_code(8)


def test_help_shows_codes_beside_the_names():
    text = invoke(train_cmd, "--help").output
    assert "LIBLINEAR -s 1 (= --loss l2), -s 3 (= --loss l1)" in text
    assert "LIBLINEAR -s 2" in text and "LIBLINEAR -s 4" in text
    assert "LIBLINEAR -s 5" in text and "LIBLINEAR -s 6" in text
    assert "LIBLINEAR -s 0" in text and "LIBLINEAR -s 7" in text
    assert "not solved by linsvm" not in text            # every LIBLINEAR code is solved


# ------------------------------------------------------------------ the invoked name

@pytest.mark.subprocess
@pytest.mark.parametrize("entry,argv0,prog", [
    ("train_main", "linsvm-train", "linsvm-train"),
    ("predict_main", "linsvm-predict", "linsvm-predict"),
    ("cv_main", "linsvm-cv", "linsvm-cv"),
])
def test_errors_name_the_invoked_command(binary, entry, argv0, prog):
    tmp, f, X, y = binary
    args = {"train_main": [str(tmp / "nope.svm"), str(tmp / "m")],
            "predict_main": [str(f), str(tmp / "nope.model"), "-"],
            "cv_main": [str(tmp / "nope.svm")]}[entry]
    code = f"import sys; sys.argv = {[argv0] + args!r}; from linsvm.cli import {entry}; {entry}()"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp)
    assert proc.returncode == 1
    assert proc.stderr.startswith(f"{prog}: error: "), proc.stderr
    assert proc.stderr.count("\n") == 1


@pytest.mark.subprocess
def test_python_m_errors_say_linsvm_train(binary):
    tmp, f, X, y = binary
    proc = subprocess.run([sys.executable, "-m", "linsvm", "train", "-q", str(tmp / "nope.svm")],
                          capture_output=True, text=True, cwd=tmp)
    assert proc.returncode == 1 and proc.stderr.startswith("linsvm train: error: "), proc.stderr


# ------------------------------------------------------------------ imbalanced data

def test_balanced_class_weight_is_scikit_learns_rule():
    from sklearn.utils.class_weight import compute_class_weight
    X, y = imbalanced()
    classes = np.unique(y)
    ref = dict(zip(classes.tolist(), compute_class_weight("balanced", classes=classes, y=y)))
    a = linsvm.train(X, y, class_weight="balanced")
    b = linsvm.train(X, y, class_weight=ref)
    np.testing.assert_array_equal(a.weights, b.weights)
    assert a.params["class_weight"].startswith("balanced ")
    with pytest.raises(linsvm.ParameterError):
        linsvm.train(X, y, class_weight="even")


def test_cli_w_balanced_and_liblinear_glued_w_form(tmp_path):
    X, y = imbalanced()
    y = np.where(y == 0, -1.0, 1.0)
    f = write(tmp_path, "d.svm", X, y)
    assert invoke(train_cmd, "-q", "-w", "balanced", f, tmp_path / "bal").exit_code == 0
    np.testing.assert_array_equal(linsvm.load_model(str(tmp_path / "bal")).weights,
                                  linsvm.train(X, y, class_weight="balanced").weights)
    # LIBLINEAR's -wi weight: -w1 2 -w-1 0.5, the same as -w 1:2 -w -1:0.5
    assert invoke(train_cmd, "-q", "-w1", "2", "-w-1", "0.5", f, tmp_path / "glued").exit_code == 0
    np.testing.assert_array_equal(linsvm.load_model(str(tmp_path / "glued")).weights,
                                  linsvm.train(X, y, class_weight={1: 2.0, -1: 0.5}).weights)
    r = invoke(train_cmd, "-q", "-w", "balanced", "-w", "1:2", f, tmp_path / "x")
    assert r.exit_code == 2 and not (tmp_path / "x").exists()


def test_imbalanced_training_data_gets_one_note(tmp_path):
    X, y = imbalanced(share=0.97)
    f = write(tmp_path, "d.svm", X, y)
    r = invoke(train_cmd, f, tmp_path / "m")
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 1 and "class 0 holds" in notes[0] and "-w balanced" in notes[0]
    assert "note:" not in invoke(train_cmd, "-q", f, tmp_path / "m").stderr
    assert "note:" not in invoke(train_cmd, "-w", "balanced", f, tmp_path / "m").stderr
    Xb, yb = random_problem(n_samples=100, seed=2)
    assert "note:" not in invoke(train_cmd, write(tmp_path, "b.svm", Xb, yb), tmp_path / "m").stderr


def test_cv_metric_f1_is_the_positive_classs_f1_per_fold(tmp_path):
    from sklearn.metrics import f1_score
    X, y = imbalanced(share=0.8)
    from linsvm.cv import cross_validate, make_folds
    res = cross_validate(X, y, Cs=[1.0], n_folds=3, metric="f1")
    fold = make_folds(y, 3)
    expected = []
    for k in range(3):
        model = linsvm.train(X[fold != k], y[fold != k], n_threads=1)
        expected.append(f1_score(y[fold == k] == 1, model.predict(X[fold == k]) == 1))
    np.testing.assert_allclose(res.points[0].scores, expected)
    r = invoke(cv_cmd, "-q", "--metric", "f1", "-c", "1", "-v", "3", "--format", "tsv",
               write(tmp_path, "d.svm", X, y))
    assert r.exit_code == 0
    assert float(r.stdout.splitlines()[1].split("\t")[2]) == pytest.approx(np.mean(expected))


def _summary(stderr):
    return {m.group(1): m.group(2) for m in re.finditer(r"([A-Za-z0-9 ]+?) = ([^,\s]+)", stderr)}


@pytest.mark.slow
def test_predict_reports_the_best_f1_threshold(tmp_path):
    from sklearn.metrics import f1_score
    X, y = imbalanced(share=0.9)
    f = write(tmp_path, "d.svm", X, y)
    invoke(train_cmd, "-q", f, tmp_path / "m")
    model = linsvm.load_model(str(tmp_path / "m"))
    r = invoke(predict_cmd, f, tmp_path / "m", tmp_path / "p")
    m = re.search(r"Best F1 = ([0-9.]+)% when 1 is predicted for decision values ([<>]) (\S+) ", r.stderr)
    assert m, r.stderr
    s = model.decision_function(X)
    t = float(m.group(3))
    called = s > t if m.group(2) == ">" else s < t
    assert 100 * f1_score(y == 1, called) == pytest.approx(float(m.group(1)), abs=0.01)
    # no threshold does better (brute force over every cut)
    cuts = np.unique(s)
    best = max(max(f1_score(y == 1, s >= c), f1_score(y == 1, s <= c)) for c in cuts)
    assert 100 * best == pytest.approx(float(m.group(1)), abs=0.01)


# ------------------------------------------------------------------ the positive class

def test_positive_class_is_1_for_01_labels_whose_first_row_is_0(tmp_path):
    from sklearn.metrics import f1_score, precision_score, recall_score
    X, y = imbalanced(share=0.7)
    assert y[0] == 0
    f = write(tmp_path, "d.svm", X, y)
    invoke(train_cmd, "-q", f, tmp_path / "m")
    model = linsvm.load_model(str(tmp_path / "m"))
    assert model.classes_.tolist() == [0.0, 1.0]            # LIBLINEAR's column order is kept
    r = invoke(predict_cmd, f, tmp_path / "m", tmp_path / "p")
    line = r.stderr.splitlines()[1]
    assert line.startswith("Positive class 1: ")
    pred = model.predict(X)
    assert f"F1 = {100 * f1_score(y == 1, pred == 1):.4g}%" in line
    assert f"Precision = {100 * precision_score(y == 1, pred == 1):.4g}%" in line
    assert f"Recall = {100 * recall_score(y == 1, pred == 1):.4g}%" in line


# ------------------------------------------------------------------ silent surprises

def test_real_valued_labels_are_refused_unless_allowed(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 4))
    y = np.round(X @ np.array([1.0, 2.0, 0.5, -1.0]), 2) + 0.001      # regression targets
    f = write(tmp_path, "reg.svm", X, y)
    r = invoke(train_cmd, "-q", f, tmp_path / "m")
    assert r.exit_code == 1 and "not an integer" in r.stderr and "--allow-many-classes" in r.stderr
    assert r.stderr.count("\n") == 1 and not (tmp_path / "m").exists()
    with pytest.raises(linsvm.DataError, match="regression"):
        linsvm.train(X, y)
    r = invoke(train_cmd, "-q", "--allow-many-classes", "-s", "dcd", "--max-iter", "2", f, tmp_path / "m")
    assert r.exit_code == 0
    r = invoke(cv_cmd, "-q", "-v", "2", f)
    assert r.exit_code == 1 and "--allow-many-classes" in r.stderr


def test_many_classes_with_few_rows_each_are_refused():
    from linsvm.problem.labels import check_class_like
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 3))
    y = np.arange(300) % 150 + 1.0                      # 150 classes of 2 rows
    with pytest.raises(linsvm.DataError, match="150 distinct labels among 300"):
        linsvm.train(X, y)
    check_class_like(np.arange(101.0), 1010)            # 10 per class: fine
    with pytest.raises(linsvm.DataError):
        check_class_like(np.arange(101.0), 1009)
    check_class_like(np.arange(100.0), 100)             # up to 100 classes: fine
    check_class_like(np.array([1.0, 2.0, 3.0]), 3)      # one example per class is allowed


def test_predict_notes_width_and_unknown_labels_once(tmp_path, binary):
    tmp, f, X, y = binary
    invoke(train_cmd, "-q", f, tmp / "m")
    wide = tmp / "wide.svm"
    lines = f.read_bytes().splitlines(True)
    wide.write_bytes(b"".join([b"7 3:1 40:2\n"] + lines + [b"7 1:1\n"]))
    r = invoke(predict_cmd, "--chunk-rows", "5", wide, tmp / "m", tmp / "p")
    notes = [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert len(notes) == 2, r.stderr
    assert "up to 40" in notes[0] and "only 1..10" in notes[0]
    assert "2 of 122 test examples" in notes[1] and "(7)" in notes[1]
    narrow = tmp / "narrow.svm"
    narrow.write_bytes(b"1 1:1\n-1 2:1\n")
    r = invoke(predict_cmd, narrow, tmp / "m", tmp / "p")
    # held-out data whose indices stop short of the model's: normal, nothing to note
    assert r.exit_code == 0 and not [ln for ln in r.stderr.splitlines() if ln.startswith("note:")]
    assert "note:" not in invoke(predict_cmd, "-q", wide, tmp / "m", tmp / "p").stderr


def test_metrics_never_print_nan(tmp_path, binary):
    tmp, f, X, y = binary
    invoke(train_cmd, "-q", f, tmp / "m")
    one = tmp / "one.svm"
    one.write_bytes(b"".join(ln for ln in f.read_bytes().splitlines(True) if ln.startswith(b"-1")))
    r = invoke(predict_cmd, one, tmp / "m", tmp / "p")
    assert r.exit_code == 0
    assert "nan" not in r.stderr.lower() and "n/a" in r.stderr


def test_regression_measures_never_print_nan(tmp_path):
    # rows without features and no bias: every prediction is 0, so the squared
    # correlation coefficient is 0/0 (LIBLINEAR prints nan)
    f = tmp_path / "flat.svm"
    f.write_bytes(b"1\n-1\n2\n-2\n")
    cv = invoke(train_cmd, "-q", "-s", "11", "-B", "-1", "-v", "2", f)
    assert cv.exit_code == 0 and "Squared correlation coefficient = n/a" in cv.stdout
    invoke(train_cmd, "-q", "-s", "11", "-B", "-1", f, tmp_path / "m")
    r = invoke(predict_cmd, f, tmp_path / "m", tmp_path / "p")
    assert r.exit_code == 0
    assert "nan" not in (r.stdout + r.stderr).lower() and "n/a" in r.stdout + r.stderr


def test_empty_test_file_says_0_examples(tmp_path, binary):
    tmp, f, X, y = binary
    invoke(train_cmd, "-q", f, tmp / "m")
    empty = tmp / "empty.svm"
    empty.write_bytes(b"")
    r = invoke(predict_cmd, empty, tmp / "m", tmp / "p")
    assert r.exit_code == 0 and "0 examples" in r.stderr
    assert (tmp / "p").read_text() == ""


def test_cv_table_prints_accuracy_as_a_percentage(binary):
    tmp, f, X, y = binary
    table = invoke(cv_cmd, "-q", "-c", "1", "-v", "3", f).stdout.splitlines()
    tsv = invoke(cv_cmd, "-q", "-c", "1", "-v", "3", "--format", "tsv", f).stdout.splitlines()
    mean = float(tsv[1].split("\t")[2])
    assert table[1].split()[1] == f"{100 * mean:.6g}%"
    assert table[-1].endswith(f"accuracy = {100 * mean:.6g}%")


def test_cv_warns_when_the_best_c_is_at_the_edge_of_the_grid(binary, monkeypatch):
    from linsvm.cv import CVPoint, CVResult
    res = CVResult(metric="accuracy", higher_is_better=True,
                   points=[CVPoint(C=c, p=None, scores=[s], seconds=0.0, n_iter=1)
                           for c, s in [(0.1, 0.5), (1.0, 0.7), (10.0, 0.9)]])
    assert "largest" in run_cv._edge_warning(res, [0.1, 1.0, 10.0])
    res.points[0].scores = [0.95]
    assert "smallest" in run_cv._edge_warning(res, [0.1, 1.0, 10.0])
    res.points[1].scores = [0.99]
    assert run_cv._edge_warning(res, [0.1, 1.0, 10.0]) is None
    flat = CVResult(metric="accuracy", higher_is_better=True,
                    points=[CVPoint(C=c, p=None, scores=[0.5], seconds=0.0, n_iter=1) for c in (1.0, 2.0)])
    assert run_cv._edge_warning(flat, [1.0, 2.0]) is None
    import linsvm.cli.runs as cv_module       # the cross_validate the command calls
    tmp, f, X, y = binary
    got = {}

    def fake(X, y, Cs, **kw):                  # the real grid, made-up scores rising with C
        got["Cs"] = Cs
        return CVResult(metric="accuracy", higher_is_better=True,
                        points=[CVPoint(C=c, p=None, scores=[0.5 + 0.01 * i], seconds=0.0, n_iter=1)
                                for i, c in enumerate(Cs)])
    monkeypatch.setattr(cv_module, "cross_validate", fake)
    r = invoke(cv_cmd, "-q", "--log2c", "-2:3:1", "-v", "3", f)
    assert r.exit_code == 0 and len(got["Cs"]) == 6
    assert "warning: the best C = 8 is the largest C of the grid" in r.stderr
    assert "warning" not in invoke(cv_cmd, "-q", "-c", "2", "-v", "3", f).stderr


# ------------------------------------------------------------------ help

def test_choice_options_are_click_choices_and_checked_by_train(binary):
    tmp, f, X, y = binary
    for flag, bad in (("--loss", "l3"), ("--stop", "never"), ("--mu-rule", "fast"), ("--subproblem", "some")):
        r = invoke(train_cmd, flag, bad, f, tmp / "m")
        assert r.exit_code == 2 and f"'{bad}' is not one of" in r.stderr
    with pytest.raises(linsvm.ParameterError, match="choose one of l1, l2"):
        linsvm.train(X, y, solver="dcd", loss="l3")
    assert "--loss [l1|l2]" in invoke(train_cmd, "--help").output


def test_option_errors_use_flags_not_python_names(binary):
    tmp, f, X, y = binary
    r = invoke(train_cmd, "-q", "-s", "sdm-cs", "--tau0", "1", f, tmp / "m")
    assert r.exit_code == 1
    assert "--tau0 does not apply to solver 'sdm-cs'" in r.stderr and "--effort-cap" in r.stderr
    assert "effort_cap" not in r.stderr


def test_help_groups_solver_options_by_solver():
    text = invoke(train_cmd, "--help").output
    sections = re.split(r"\n(?=\S[^\n]*:\n)", text)
    general = next(s for s in sections if s.startswith("Options:"))
    assert "--cost" in general and "--subproblem" not in general and "--heuristic1" not in general
    sdm = next(s for s in sections if s.startswith("Options of sdm-cs, sdm-ww:"))
    assert "--subproblem" in sdm and "--cooling" in sdm
    mfn = next(s for s in sections if s.startswith("Options of mfn, ls, mfn-huber, mfn-l1, mfn-ord:"))
    assert "--subset" in mfn and "--loss" not in mfn
    shared = next(s for s in sections if s.startswith("Options of several solvers:"))
    assert "--max-iter" in shared and "--heuristic1" in shared     # mfn family and svr
    assert "Options of sdm-cs, sdm-ww:" in invoke(cv_cmd, "--help").output


def test_help_solver_describes_one_solver():
    r = invoke(train_cmd, "--help-solver", "dcd")
    assert r.exit_code == 0
    assert r.output.startswith("dcd (binary): ") and "--loss [l1|l2]" in r.output
    assert "--heuristic1" not in r.output and "LIBLINEAR -s 1" in r.output
    assert invoke(train_cmd, "--help-solver", "2").output.startswith("mfn (binary)")
    assert invoke(train_cmd, "--help-solver", "nosuch").exit_code == 2


def test_synth_help_describes_every_option():
    for param in synth_cmd.params:
        if param.param_type_name == "option":
            assert param.help, param.name


# ------------------------------------------------------------------ progress

def test_summary_prints_counts_as_integers(binary, monkeypatch):
    import linsvm.cli.run_train      # the train the command calls
    train_module = sys.modules["linsvm.cli.run_train"]
    real = train_module.train

    def big(*args, **kw):
        model = real(*args, **kw)
        model._stats["n_active"] = 1288690
        model._stats["cg_iter"] = 12345678
        return model
    monkeypatch.setattr(train_module, "train", big)
    tmp, f, X, y = binary
    r = invoke(train_cmd, f, tmp / "m")
    assert "n_active = 1288690," in r.stderr and "cg_iter = 12345678," in r.stderr


def test_cv_prints_the_read_line_as_train_does(binary):
    """linsvm-cv says what it read in train's words: the counts of the data, taken from
    the data itself (rows, largest index, stored non-zeros), not from the command."""
    tmp, f, X, y = binary
    n_rows, width = X.shape[0], int(X.indices.max()) + 1
    expect = re.compile(rf"^read {n_rows} examples, {width} features, {X.nnz} non-zeros "
                        r"in \d+\.\d{3}s$")
    lines = {}
    for name, command, args in [("train", train_cmd, [f, tmp / "m"]),
                                ("cv", cv_cmd, ["-c", "1", "-v", "2", f])]:
        r = invoke(command, *args)
        assert r.exit_code == 0, r.output
        lines[name] = [line for line in r.stderr.splitlines() if line.startswith("read ")]
        assert len(lines[name]) == 1 and expect.match(lines[name][0]), (name, r.stderr)
    assert "read " not in invoke(cv_cmd, *["-q", "-c", "1", "-v", "2", f]).stderr


@pytest.fixture
def terminal(monkeypatch):
    monkeypatch.setattr(console, "stderr_is_tty", lambda: True)
    monkeypatch.setattr(console, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(console, "PROGRESS_EVERY", 0.0)


def test_progress_shows_on_a_terminal(binary, terminal):
    tmp, f, X, y = binary
    r = invoke(train_cmd, f, tmp / "m")
    assert f"\rreading {f}: 120 rows" in r.stderr
    r = invoke(cv_cmd, "-c", "1,2", "-v", "3", f)
    assert "\rcross-validation: 6/6 models trained" in r.stderr
    assert "\r" not in invoke(train_cmd, "-q", f, tmp / "m").stderr
    assert "\r" not in invoke(cv_cmd, "-q", "-v", "3", f).stderr


def test_no_progress_when_stderr_is_not_a_terminal(binary, monkeypatch):
    monkeypatch.setattr(console, "PROGRESS_DELAY", 0.0)
    monkeypatch.setattr(console, "PROGRESS_EVERY", 0.0)
    tmp, f, X, y = binary
    assert not console.stderr_is_tty()          # CliRunner's stderr is not a terminal
    assert "\r" not in invoke(train_cmd, f, tmp / "m").stderr
    assert "\r" not in invoke(cv_cmd, "-v", "3", f).stderr


@pytest.mark.slow
@pytest.mark.subprocess
def test_progress_on_a_real_pty(binary):
    pty = pytest.importorskip("pty")
    tmp, f, X, y = binary
    code = ("import sys; import linsvm.cli.console as c; c.PROGRESS_DELAY = 0; c.PROGRESS_EVERY = 0; "
            f"sys.argv = ['linsvm-train', {str(f)!r}, {str(tmp / 'm')!r}]; "
            "import linsvm.cli; linsvm.cli.train_main()")
    master, slave = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", code], stderr=slave, stdout=subprocess.DEVNULL, cwd=tmp)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    proc.wait()
    os.close(master)
    assert proc.returncode == 0
    assert b"\rreading " in out and b"120 rows" in out


@pytest.mark.slow
def test_class_like_rule_judges_cv_folds_by_the_whole_data(tmp_path):
    # 101 classes of 10 rows pass; a 5-fold training part (8 rows per class) must pass too
    rng = np.random.default_rng(4)
    y = np.repeat(np.arange(101.0), 10)
    X = rng.standard_normal((y.size, 3))
    from linsvm.cv import cross_validate
    res = cross_validate(X, y, solver="dcd", Cs=[1.0], n_folds=5, max_iter=1)
    assert len(res.points[0].scores) == 5


def test_alm_mu0_above_mu_max_names_flags(binary):
    tmp, f, X, y = binary
    r = invoke(train_cmd, "-q", "-s", "alm", "--mu0", "10", "--mu-max", "1", f, tmp / "m")
    assert r.exit_code == 1 and "--mu0 10 exceeds --mu-max 1" in r.stderr


def test_cv_never_prints_nan_when_a_fold_has_no_positive(tmp_path):
    import json
    rng = np.random.default_rng(6)
    X = rng.standard_normal((30, 4))
    y = -np.ones(30)
    y[[3, 17]] = 1.0                                  # 2 positives, 3 folds: one fold has none
    f = write(tmp_path, "d.svm", X, y)
    for fmt in ("table", "tsv", "json"):
        r = invoke(cv_cmd, "--metric", "prbep", "-c", "0.5,1", "-v", "3", "--format", fmt, f)
        assert r.exit_code == 0, r.output
        assert "nan" not in r.output.lower()
        if fmt == "json":
            assert json.loads(r.stdout)["points"][0]["mean"] is None
    assert "n/a" in invoke(cv_cmd, "--metric", "prbep", "-c", "1", "-v", "3", f).stdout


def test_n_threads_help_says_the_model_does_not_depend_on_the_count():
    """w8a with -s alm took 450 iterations on one thread and 443 on two.  The scatters now
    sum fixed row blocks in block order, so the models are the same bit for bit
    (tests/test_threads_identical.py), and every solver's --n-threads help says so."""
    with_threads = [name for name, info in SOLVERS.items() if "n_threads" in info.options]
    assert {"mfn", "alm", "alm-exact", "perf"} <= set(with_threads)
    for name in with_threads:
        text = " ".join(SOLVERS[name].options["n_threads"].help.split())
        assert "same bit for bit for every count" in text, (name, text)
    status, out, _ = run_here("train", "--help", cwd=".")
    assert status == 0 and "same bit for bit for every count" in " ".join(out.split())
    for name in ("mfn", "alm", "perf"):
        status, out, _ = run_here("train", "--help-solver", name, cwd=".")
        assert status == 0 and "same bit for bit" in " ".join(out.split()), name


# ------------------------------------------------ answers that are not finite, and why

def _one_error_line(r):
    assert r.exit_code == 1, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "Traceback" not in r.output, r.stderr
    return lines[0]


@pytest.mark.parametrize("solver", ["ls", "mfn-l1", "oneclass"])
def test_an_example_whose_squared_norm_overflows_is_refused_naming_its_line(tmp_path, solver):
    """Feature values of 1e155 square to inf: the example is refused before any solve, in
    one line naming FILE:LINE of the first such example and what to do."""
    X, y = random_problem(n_samples=60, n_features=8, seed=3)
    X = X.tolil()
    X[0, :] = 0.0
    X = X.tocsr()
    f = write(tmp_path, "big.svm", X * 1e155, y)
    first = int(np.flatnonzero(np.diff((X * 1e155).indptr))[0])      # row 0 is empty
    line = _one_error_line(invoke(train_cmd, *["-q", "-s", solver, f, tmp_path / "m"]))
    assert f"error: {f}:{first + 1}: example {first + 1}: its squared norm overflows" in line, line
    assert "feature values up to" in line and "e+155" in line and "linsvm scale" in line
    assert not (tmp_path / "m").exists()


def test_an_extreme_instance_weight_or_c_is_named_as_the_cause(tmp_path):
    X, y = random_problem(n_samples=60, n_features=8, seed=3)
    f = write(tmp_path, "d.svm", X, y)
    weights = tmp_path / "w.txt"
    weights.write_text("1e308\n" + "1\n" * 59)
    line = _one_error_line(invoke(train_cmd, *["-q", "-W", weights, f, tmp_path / "m"]))
    assert "mfn: the weights of the solution are not finite" in line
    assert "an example cost (class x instance weight) of 1e+308" in line
    assert "weights nearer 1" in line and "feature values" not in line
    line = _one_error_line(invoke(train_cmd, *["-q", "-s", "11", "-c", "5e-324", f, tmp_path / "m"]))
    assert "svr: the weights of the solution are not finite" in line
    assert "C = 4.94066e-324" in line and "use a C nearer 1" in line
    assert not (tmp_path / "m").exists()


def test_one_class_on_huge_values_is_one_line_without_a_numpy_warning(tmp_path):
    import warnings

    X, y = random_problem(n_samples=60, n_features=8, seed=3)
    f = write(tmp_path, "huge.svm", X * 1e300, y)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        line = _one_error_line(invoke(train_cmd, *["-q", "-s", "oneclass", f, tmp_path / "m"]))
    assert not [w for w in seen if issubclass(w.category, RuntimeWarning)], [str(w.message) for w in seen]
    assert f"error: {f}:1: example 1: its squared norm overflows" in line, line
    assert "feature values up to" in line and "e+300" in line


def test_the_python_api_raises_the_same_data_error_for_a_non_finite_answer():
    X, y = random_problem(n_samples=60, n_features=8, seed=3)
    with pytest.raises(linsvm.DataError, match=r"^example 1: its squared norm overflows"):
        linsvm.train(X * 1e155, y, solver="ls")
    with pytest.raises(linsvm.DataError, match=r"^mfn: the weights of the solution are not finite"):
        linsvm.train(X, y, sample_weight=np.r_[1e308, np.ones(59)])


def test_an_infinite_option_value_is_refused_as_not_finite(tmp_path):
    X, y = random_problem(n_samples=30, n_features=4, seed=3)
    f = write(tmp_path, "d.svm", X, y)
    for value in ("inf", "nan"):
        line = _one_error_line(invoke(train_cmd, *["-q", "-s", "11", "-p", value, f, tmp_path / "m"]))
        assert line.endswith(f"-p (--epsilon) = {value} must be a finite number"), line
    with pytest.raises(linsvm.ParameterError, match="epsilon = inf must be a finite number"):
        linsvm.train(X, y, solver="svr", epsilon=float("inf"))


def test_mpi_refusals_say_what_to_run_instead_without_repeating_themselves():
    def refusal(name):
        with pytest.raises(linsvm.ParameterError) as err:
            SOLVERS[name].refuse_distributed()
        return str(err.value)

    text = refusal("oneclass")
    assert text.count("oneclass") == 1 and "without mpiexec" in text, text
    text = refusal("svr-dual")
    # -s 11 (svr) is -s 12's problem; -s 13's loss has no distributed solver
    assert "squared loss (-s 12, --loss l2) use svr" in text, text
    assert "(-s 13, --loss l1) has no distributed solver" in text, text


@pytest.mark.parametrize("command, args", [
    (train_cmd, ["--no-such-option", "x"]), (train_cmd, []), (predict_cmd, ["a"]),
    (cv_cmd, ["-c", "1", "--log2c", "0:1:1", "x"]), (train_cmd, ["-c", "abc", "x"]),
    (synth_cmd, ["--no-such-option"]), (cli.scale_cmd, []), (cli.renumber_cmd, []),
    (cli.cli, ["no-such-command"]), (cli.cli, ["train", "--no-such-option", "x"])])
def test_usage_errors_are_one_line_with_the_help_hint(command, args):
    r = CliRunner().invoke(command, args, prog_name="prog")
    assert r.exit_code == 2, r.output
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, r.stderr
    assert re.fullmatch(r"prog( \w+)?: error: .+ \(try 'prog( \w+)? --help'\)", lines[0]), lines[0]
    assert "Usage:" not in r.stderr and "Traceback" not in r.output
