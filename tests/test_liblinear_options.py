"""docs/liblinear.md's option tables against the option parser, the solver catalog and
LIBLINEAR's own usage text (when a built LIBLINEAR is at hand: LINSVM_LIBLINEAR_DIR,
default ../peers/liblinear beside the repository's parent, else skipped)."""
import os
import re
import subprocess
from pathlib import Path

import pytest

from linsvm.cli import predict_cmd, train_cmd
from linsvm.problem.catalog import liblinear_code

from conftest import invoke

DOCS = Path(__file__).resolve().parent.parent / "docs"

# LIBLINEAR 2.50's train options, multi-core LIBLINEAR's -m and the initial-model -i
# of LIBLINEAR's train() interface; predict's options.
TRAIN_LETTERS = set("scpneBRwvCmiq")
PREDICT_LETTERS = set("bq")
CODES = {0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13, 21}


def _table(section):
    """The rows (lists of cells) of the first table under the heading `section`."""
    text = (DOCS / "liblinear.md").read_text(encoding="utf-8")
    body = text.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    return [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", row.strip("|"))]
            for row in rows[2:]]


def _letter(cell):
    """'`-wi weight`' -> 'w'; '`-s type`' -> 's'."""
    return re.match(r"`-(\w)", cell).group(1)


def _flags(cell):
    """The flags a linsvm cell names: '`-wi WEIGHT` (or `-w i:WEIGHT`)' -> ['-w', '-w']."""
    return [re.match(r"-\w", code).group(0) for code in re.findall(r"`([^`]+)`", cell)]


def _parser_flags(command):
    return {opt for p in command.params for opt in getattr(p, "opts", []) if opt.startswith("-")}


def _peer():
    root = os.environ.get("LINSVM_LIBLINEAR_DIR",
                          str(Path(__file__).resolve().parents[2] / "peers" / "liblinear"))
    train = Path(root) / "train"
    return Path(root) if train.exists() and os.access(train, os.X_OK) else None


def _usage_letters(program):
    out = subprocess.run([str(program)], capture_output=True, text=True, timeout=30)
    return {m.group(1) for m in re.finditer(r"^-(\w)\b", out.stdout + out.stderr, re.M)}


def test_train_table_has_a_row_for_every_liblinear_option():
    letters = [_letter(row[0]) for row in _table("`train` → `linsvm-train`")]
    assert len(letters) == len(set(letters))
    assert set(letters) == TRAIN_LETTERS


def test_predict_table_has_a_row_for_every_liblinear_option():
    letters = [_letter(row[0]) for row in _table("`predict` → `linsvm-predict`")]
    assert set(letters) == PREDICT_LETTERS


@pytest.mark.parametrize("section, command", [("`train` → `linsvm-train`", train_cmd),
                                              ("`predict` → `linsvm-predict`", predict_cmd)])
def test_every_flag_in_the_tables_is_one_the_parser_takes(section, command):
    have = _parser_flags(command)           # -p and -n are solver options of train
    for row in _table(section):
        flags = _flags(row[1])
        assert flags and set(flags) <= have, row
        assert _letter(row[0]) == flags[0][1], row      # the same letter as LIBLINEAR's


def test_a_liblinear_command_line_parses():
    """The train options of a LIBLINEAR command line (each once) parse with their
    LIBLINEAR values."""
    ctx = train_cmd.make_context("train", ["-s", "2", "-c", "4", "-e", "0.05", "-B", "1", "-R",
                                           "-w1", "2", "-w-1", "0.5", "-v", "5", "-C", "-m", "2",
                                           "-q", "data.svm"])
    p = ctx.params
    assert p["C"] == 4 and p["tol"] == 0.05 and p["bias"] == 1 and p["n_folds"] == 5
    assert p["find_C"] and p["quiet"]
    ctx = predict_cmd.make_context("predict", ["-b", "1", "-q", "t", "m", "o"])
    assert ctx.params["probability"] == 1 and ctx.params["quiet"]


def test_code_table_matches_the_catalog():
    rows = _table("`-s` codes")
    codes = {int(row[0]) for row in rows}
    assert codes == CODES
    for row in rows:
        cell = re.fullmatch(r"`([\w-]+)(?: --loss (\w+))?`", row[2])
        assert cell, row
        name, loss = cell.groups()
        got_name, implied = liblinear_code(int(row[0]))
        assert got_name == name, row
        assert implied.get("loss") == loss, row


@pytest.mark.subprocess
def test_tables_cover_liblinears_own_usage():
    peer = _peer()
    if peer is None:
        pytest.skip("no built LIBLINEAR (LINSVM_LIBLINEAR_DIR)")
    assert _usage_letters(peer / "train") <= TRAIN_LETTERS
    assert _usage_letters(peer / "predict") <= PREDICT_LETTERS
    out = subprocess.run([str(peer / "train")], capture_output=True, text=True, timeout=30)
    usage_codes = {int(m.group(1)) for m in re.finditer(r"^\s+(\d+) -- ", out.stdout, re.M)}
    assert usage_codes == CODES


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["2", "svr"])
def test_a_huge_e_stops_at_once_as_liblinear_does(tmp_path, solver):
    """LIBLINEAR takes any -e > 0; `-e 1e9` makes its Newton solvers stop at their first
    test.  mfn's and svr's gradient test then has a factor above 1, which their kernels
    once refused with a traceback; now the first iterate passes and the model is written."""
    import numpy as np

    import linsvm
    rng = np.random.default_rng(0)
    lines = [f"{1 if rng.random() < 0.5 else -1} 1:{rng.random():.3f} 2:{rng.random():.3f}"
             for _ in range(60)]
    (tmp_path / "d.svm").write_text("\n".join(lines) + "\n")
    model = tmp_path / "m"
    res = invoke(train_cmd, "-s", solver, "-e", "1e9", "-q", str(tmp_path / "d.svm"), str(model))
    assert res.exit_code == 0, res.output
    assert np.all(np.isfinite(linsvm.load_model(str(model)).weights))


def _svm_file(path, labels, rng):
    lines = [f"{y} 1:{rng.random():.3f} 2:{rng.random():.3f} 3:{rng.random():.3f}" for y in labels]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


@pytest.mark.parametrize("code, labels", [("1", "binary"), ("3", "binary"), ("7", "binary"),
                                          ("4", "three"), ("12", "real"), ("13", "real"),
                                          ("21", "binary")])
def test_m_with_a_code_that_runs_on_one_thread_trains_as_without_it(tmp_path, code, labels):
    """Multi-core LIBLINEAR takes -m with every -s and uses it where it has threads; so a
    script that passes -m 2 to -s 1 (its default) must train here too: the same model as
    without -m, and a note that the solver runs on one thread."""
    import numpy as np
    rng = np.random.default_rng(int(code))
    ys = {"binary": rng.choice([-1, 1], 80), "three": rng.choice([1, 2, 3], 80),
          "real": np.round(rng.normal(size=80), 3)}[labels]
    data = _svm_file(tmp_path / "d.svm", ys, rng)
    plain = invoke(train_cmd, "-s", code, "-q", data, str(tmp_path / "plain"))
    with_m = invoke(train_cmd, "-s", code, "-m", "2", data, str(tmp_path / "m2"))
    assert plain.exit_code == 0 and with_m.exit_code == 0, with_m.output
    assert "runs on one thread" in with_m.stderr
    import linsvm
    a, b = linsvm.load_model(str(tmp_path / "plain")), linsvm.load_model(str(tmp_path / "m2"))
    assert a.weights.tobytes() == b.weights.tobytes()
    assert np.array_equal(a.classes_, b.classes_)


@pytest.mark.parametrize("jobs, expect", [([], 2), (["-j", "1"], 1)])
def test_m_gives_a_one_vs_rest_run_of_dcd_its_column_threads(tmp_path, monkeypatch, jobs, expect):
    """dcd has no threads of its own; -m N then sets the columns' threads of a one-vs-rest
    run (as -j N), unless -j is given."""
    import numpy as np

    import linsvm.cli.run_train as run_train
    seen = []
    real = run_train.train

    def spy(*args, **kwargs):
        seen.append(kwargs["n_jobs"])
        return real(*args, **kwargs)
    monkeypatch.setattr(run_train, "train", spy)
    rng = np.random.default_rng(3)
    data = _svm_file(tmp_path / "d.svm", rng.choice([1, 2, 3], 90), rng)
    res = invoke(train_cmd, "-s", "1", "-m", "2", *jobs, data, str(tmp_path / "m"))
    assert res.exit_code == 0, res.output
    assert seen == [expect]
    assert f"-j {expect}" in res.stderr


def test_m_in_cv_with_a_code_on_one_thread_is_noted_and_ignored(tmp_path):
    import numpy as np

    from linsvm.cli import cv_cmd
    rng = np.random.default_rng(5)
    data = _svm_file(tmp_path / "d.svm", rng.choice([-1, 1], 60), rng)
    plain = invoke(cv_cmd, "-s", "3", "-v", "3", data)
    with_m = invoke(cv_cmd, "-s", "3", "-v", "3", "-m", "2", data)
    assert plain.exit_code == 0 and with_m.exit_code == 0, with_m.output
    assert "-m is ignored" in with_m.stderr
    def accuracy(out):     # the table's row less its seconds and iterations
        return out.stdout.splitlines()[-1].split()[:3]
    assert accuracy(with_m) == accuracy(plain)


# Which of LIBLINEAR 2.50's train options each -s code reads, from its train.c and
# linear.cpp: -p only the SVR codes' loss, -n only the one-class solver, -wLABEL only the
# classifiers' weighted_C (train() skips it for regression and one-class), -c every code
# but the one-class solver (nu takes its place).  Every other pair is parsed and ignored.
LIBLINEAR_READS = {"-p": {11, 12, 13}, "-n": {21}, "-w": CODES - {11, 12, 13, 21},
                   "-c": CODES - {21}}
NO_EFFECT = sorted((code, opt) for opt, used in LIBLINEAR_READS.items()
                   for code in CODES - used)
_OPTION_ARGS = {"-p": ["-p", "0.3"], "-n": ["-n", "0.2"], "-w": ["-w1", "2"], "-c": ["-c", "4"]}


def test_the_catalog_knows_what_liblinear_ignores_for_each_code():
    from linsvm.problem.catalog import liblinear_no_effect
    for code in CODES:
        expect = [opt for opt in ("-c", "-p", "-n", "-w") if (code, opt) in NO_EFFECT]
        assert list(liblinear_no_effect(code)) == expect, code


def _data_for(tmp_path, code):
    import numpy as np
    rng = np.random.default_rng(code)
    if code in (11, 12, 13):
        ys = np.round(rng.normal(size=60), 3)
    elif code == 4:
        ys = rng.choice([1, 2, 3], 60)
    else:
        ys = rng.choice([-1, 1], 60)
    return _svm_file(tmp_path / "d.svm", ys, rng)


@pytest.mark.parametrize("code, option", NO_EFFECT)
def test_an_option_liblinear_ignores_for_the_code_is_noted_and_ignored(tmp_path, code, option):
    """`train -s 3 -p 0.3` and the like run in LIBLINEAR (it parses every option for every
    code): here too, with one note that the option has no effect, exit 0, and the model
    trained without the option; -q silences the note."""
    import numpy as np

    import linsvm
    data = _data_for(tmp_path, code)
    plain = invoke(train_cmd, "-s", str(code), "-q", data, str(tmp_path / "plain"))
    given = invoke(train_cmd, "-s", str(code), *_OPTION_ARGS[option], data,
                   str(tmp_path / "given"))
    quiet = invoke(train_cmd, "-s", str(code), "-q", *_OPTION_ARGS[option], data,
                   str(tmp_path / "quiet"))
    assert plain.exit_code == 0 and given.exit_code == 0 and quiet.exit_code == 0, given.output
    notes = [ln for ln in given.stderr.splitlines() if ln.startswith("note:")]
    assert notes == [f"note: {option} has no effect with -s {code} (LIBLINEAR ignores it too)"]
    assert quiet.stderr == ""
    a, b = linsvm.load_model(str(tmp_path / "plain")), linsvm.load_model(str(tmp_path / "given"))
    assert a.weights.tobytes() == b.weights.tobytes() and a.offset_ == b.offset_
    assert a.params == b.params and np.array_equal(a.classes_, b.classes_)


def test_several_ignored_options_make_one_note(tmp_path):
    data = _data_for(tmp_path, 11)
    r = invoke(train_cmd, "-s", "11", "-n", "0.3", "-w1", "2", data, str(tmp_path / "m"))
    assert r.exit_code == 0, r.output
    assert [ln for ln in r.stderr.splitlines() if ln.startswith("note:")] == [
        "note: -n, -w have no effect with -s 11 (LIBLINEAR ignores them too)"]


@pytest.mark.parametrize("args, message", [
    (["-s", "dcd", "-p", "0.3"], "-p does not apply to solver 'dcd'"),
    (["-s", "lr", "-n", "0.2"], "-n does not apply to solver 'lr'"),
    (["-s", "svr", "-w1", "2"], "class weights (-w) are for classifiers"),
    (["-s", "oneclass", "-w1", "2"], "class weights (-w) are for classifiers"),
    (["-s", "3", "--epsilon", "0.3"], "-p (--epsilon) does not apply to solver 'dcd'"),
])
def test_a_solver_named_not_numbered_still_refuses_what_does_not_apply(tmp_path, args, message):
    data = _data_for(tmp_path, 11 if "svr" in args else 1)
    r = invoke(train_cmd, "-q", *args, data, str(tmp_path / "m"))
    assert r.exit_code != 0 and message in r.stderr, r.stderr
    assert not (tmp_path / "m").exists()


def test_cv_notes_and_ignores_the_options_liblinear_ignores(tmp_path):
    from linsvm.cli import cv_cmd
    data = _data_for(tmp_path, 21)
    plain = invoke(cv_cmd, "-s", "21", "-v", "3", data)
    given = invoke(cv_cmd, "-s", "21", "-v", "3", "-w1", "2", data)
    assert plain.exit_code == 0 and given.exit_code == 0, given.output
    assert "note: -w has no effect with -s 21 (LIBLINEAR ignores it too)" in given.stderr
    assert given.stdout.splitlines()[-1] == plain.stdout.splitlines()[-1]


# Where linsvm's solver for a code has its own default problem, the code gives LIBLINEAR's:
# -s 11 regularizes the bias weight (svr frees it), -s 12/13 leave the targets as they are
# (svr-dual centres them).  Every other code's solver defaults to LIBLINEAR's problem.
LIBLINEAR_PROBLEM = {11: {"regularize_bias": True}, 12: {"center_targets": False},
                     13: {"center_targets": False}}


@pytest.mark.parametrize("code", sorted(CODES))
def test_a_code_trains_liblinears_problem_by_default(tmp_path, code):
    """The model's params say which problem was solved: LIBLINEAR's for the code, the
    solver's own improvement one option away (and named in the summary line)."""
    import linsvm
    from linsvm.problem.catalog import SOLVERS, liblinear_code
    data = _data_for(tmp_path, code)
    r = invoke(train_cmd, "-s", str(code), data, str(tmp_path / "m"))
    assert r.exit_code == 0, r.output
    params = linsvm.load_model(str(tmp_path / "m")).params
    name, _ = liblinear_code(code)
    info = SOLVERS[name]
    for key in ("regularize_bias", "center_targets"):
        if key in info.options:
            expect = LIBLINEAR_PROBLEM.get(code, {}).get(key, info.options[key].default)
            assert params[key] == expect, (code, key)
            if key == "regularize_bias" and code not in LIBLINEAR_PROBLEM:
                assert expect is True       # LIBLINEAR regularizes the bias without -R
    summary = r.stderr.strip().splitlines()[-1]
    assert ("LIBLINEAR's -s" in summary) == (code in LIBLINEAR_PROBLEM), summary
    if code == 11:
        assert summary.endswith("(LIBLINEAR's -s 11 problem; svr's default: -R)")
    elif code in (12, 13):
        assert summary.endswith(f"(LIBLINEAR's -s {code} problem; svr-dual's default: "
                                "--center-targets)")


@pytest.mark.parametrize("args, key, value", [
    (["-s", "11", "-R"], "regularize_bias", False),
    (["-s", "11", "--no-regularize-bias"], "regularize_bias", False),
    (["-s", "12", "--center-targets"], "center_targets", True),
    (["-s", "13", "--center-targets"], "center_targets", True),
    (["-s", "svr"], "regularize_bias", False),
    (["-s", "svr-dual"], "center_targets", True),
])
def test_linsvms_improvement_stays_one_option_away(tmp_path, args, key, value):
    import linsvm
    data = _data_for(tmp_path, 11)
    r = invoke(train_cmd, *args, data, str(tmp_path / "m"))
    assert r.exit_code == 0, r.output
    assert linsvm.load_model(str(tmp_path / "m")).params[key] is value
    assert "LIBLINEAR's -s" not in r.stderr.strip().splitlines()[-1]


def test_with_no_bias_feature_the_summary_does_not_offer_a_free_one(tmp_path):
    data = _data_for(tmp_path, 11)
    r = invoke(train_cmd, "-s", "11", "-B", "-1", data, str(tmp_path / "m"))
    assert r.exit_code == 0, r.output
    assert "LIBLINEAR's -s" not in r.stderr.strip().splitlines()[-1]


def test_a_weight_for_a_label_the_data_lacks_is_warned_about_and_dropped_with_a_code(tmp_path):
    """LIBLINEAR's train warns 'class label 5 specified in weight is not found' and trains
    on; with -s CODE so does linsvm (the model is the one without that weight), while a
    solver named, not numbered, refuses it."""
    import linsvm
    data = _data_for(tmp_path, 1)
    both = invoke(train_cmd, "-s", "1", "-w5", "2", "-w1", "3", data, str(tmp_path / "both"))
    one = invoke(train_cmd, "-s", "1", "-q", "-w1", "3", data, str(tmp_path / "one"))
    assert both.exit_code == 0 and one.exit_code == 0, both.output
    warnings = [ln for ln in both.stderr.splitlines() if ln.startswith("warning:")]
    assert warnings == ["warning: class label 5 specified in weight is not found (-w ignores "
                        "it, as LIBLINEAR does)"]
    a, b = linsvm.load_model(str(tmp_path / "both")), linsvm.load_model(str(tmp_path / "one"))
    assert a.weights.tobytes() == b.weights.tobytes() and a.params == b.params
    named = invoke(train_cmd, "-q", "-s", "dcd", "-w5", "2", data, str(tmp_path / "m"))
    assert named.exit_code == 1 and "label 5, which is not in the training data" in named.stderr
