"""`linsvm convert` and the parse-once cache: text -> binary -> text is the canonical text
dump_svmlight writes; every command gives the same results on a binary file as on its
text; --cache converts once, maps the copy while the text is unchanged, rebuilds a stale
or damaged copy, and is safe for concurrent runs; errors are one line and leave nothing."""
import gzip
import io
import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.cli import convert_cmd, cv_cmd, predict_cmd, renumber_cmd, scale_cmd, train_cmd
from linsvm.errors import DataError
from linsvm.io import cache as cache_mod
from linsvm.io.binfile import open_binary
from linsvm.io.convert import convert
from linsvm.liblinearutil import svm_read_problem

from conftest import assert_one_line_error, child_env, invoke, random_problem

# a text file with what the canonical text drops: comments, blank lines, CRLF, '+1', '1e0'
MESSY = (b"# a comment\n+1 qid:2 1:0.5 3:1e0\r\n\n-1 qid:2 2:-0.25  7:3 # tail\n"
         b"   \n2 qid:5\n1 qid:5 3:1.25e-300\n")


def canonical(path, with_qid):
    """What dump_svmlight writes for the data loaded from `path` (the reference)."""
    out = io.BytesIO()
    if with_qid:
        X, y, qid = linsvm.load_svmlight(str(path), with_qid=True)
        linsvm.dump_svmlight(X, y, out, qid=qid)
    else:
        X, y = linsvm.load_svmlight(str(path))
        linsvm.dump_svmlight(X, y, out)
    return out.getvalue()


def model_lines(path):
    """A model file without its timing line (the one line two equal trainings differ in)."""
    return [ln for ln in open(path).read().splitlines() if not ln.startswith("stat seconds")]


@pytest.fixture
def text(tmp_path):
    X, y = random_problem(n_samples=150, n_features=25, seed=3)
    path = tmp_path / "train.svm"
    linsvm.dump_svmlight(X, y, str(path))
    return path


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """An empty cache directory as LINSVM_CACHE would name it, not set (--cache uses it)."""
    d = tmp_path / "cache"
    monkeypatch.delenv("LINSVM_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(cache_mod, "cache_directory", lambda: str(d))
    return d


# ------------------------------------------------------------------ convert

@pytest.mark.parametrize("packing", ["plain", "gzip", "stdin"])
def test_text_to_binary_to_text_is_the_canonical_text(tmp_path, packing):
    src = tmp_path / "messy.svm"
    src.write_bytes(MESSY)
    arg, stdin = str(src), None
    if packing == "gzip":
        arg = str(tmp_path / "messy.svm.gz")
        open(arg, "wb").write(gzip.compress(MESSY))
    elif packing == "stdin":
        arg, stdin = "-", MESSY
    r = invoke(convert_cmd, arg, tmp_path / "m.lsvm", input=stdin)
    assert r.exit_code == 0, r.output
    assert "4 examples, 7 features, 5 non-zeros, values float64, qid ->" in r.stderr
    r = invoke(convert_cmd, "--to", "svmlight", tmp_path / "m.lsvm", "-")
    assert r.exit_code == 0 and r.stdout_bytes == canonical(src, with_qid=True)
    r = invoke(convert_cmd, "--to", "svmlight", arg, tmp_path / "direct.svm", input=stdin)
    assert (tmp_path / "direct.svm").read_bytes() == canonical(src, with_qid=True)


def test_binary_to_binary_changes_the_layout_and_keeps_the_rest(tmp_path, text):
    assert invoke(convert_cmd, "-q", text, tmp_path / "a.lsvm").exit_code == 0
    assert invoke(convert_cmd, "-q", "--values", "float32", tmp_path / "a.lsvm",
                  tmp_path / "b.lsvm").exit_code == 0
    X, y = linsvm.load_svmlight(str(text))
    b = open_binary(tmp_path / "b.lsvm")
    assert b.layout == "float32"
    assert np.array_equal(np.asarray(b.X.data, np.float64),      # float32 or float64 alike
                          X.data.astype(np.float32).astype(np.float64))
    assert np.array_equal(b.X.indices, X.indices) and np.array_equal(b.y, y)


def test_values_pattern_refuses_a_value_other_than_1_naming_its_line(tmp_path):
    src = tmp_path / "p.svm"
    src.write_bytes(b"1 1:1 2:1\n# comment\n\n-1 3:1\n1 1:1 4:0.5\n")
    r = invoke(convert_cmd, "--values", "pattern", src, tmp_path / "p.lsvm")
    assert_one_line_error(r, f"{src}:5: value 0.5 of feature 4 is not 1")
    assert not (tmp_path / "p.lsvm").exists()
    r = invoke(convert_cmd, "-q", "--values", "pattern", tmp_path / "p.svm", tmp_path / "q.lsvm",
               catch_exceptions=False)
    assert r.exit_code == 1
    src.write_bytes(b"1 1:1 2:1\n-1 3:1\n")
    assert invoke(convert_cmd, "-q", src, tmp_path / "p.lsvm").exit_code == 0
    assert open_binary(tmp_path / "p.lsvm").layout == "pattern"


def test_instance_weights_are_stored_and_their_count_checked(tmp_path, text):
    n = linsvm.load_svmlight(str(text))[1].shape[0]
    w = np.random.default_rng(0).uniform(0.1, 2, n)
    wfile = tmp_path / "w.txt"
    wfile.write_text("\n".join(map(repr, w.tolist())) + "\n")
    assert invoke(convert_cmd, "-q", "-W", wfile, text, tmp_path / "w.lsvm").exit_code == 0
    assert np.array_equal(open_binary(tmp_path / "w.lsvm").weights, w)
    wfile.write_text(" ".join(map(repr, w[:-1].tolist())))
    r = invoke(convert_cmd, "-W", wfile, text, tmp_path / "short.lsvm")
    assert_one_line_error(r, f"{wfile}: {n - 1} instance weights for {n} training examples")
    assert not (tmp_path / "short.lsvm").exists()


def test_usage_errors_are_one_line(tmp_path, text):
    for args, needle, code in (
            ((text, "-"), "cannot go to standard output", 2),
            (("--to", "svmlight", "-W", text, text, tmp_path / "o.svm"), "no place for instance", 2),
            (("--to", "svmlight", "--values", "pattern", text, tmp_path / "o.svm"),
             "is for binary output", 2),
            ((text, text), "it is the input file", 1)):
        assert_one_line_error(invoke(convert_cmd, *args), needle, code=code)


def test_bad_text_and_ctrl_c_leave_nothing(tmp_path, text):
    bad = tmp_path / "bad.svm"
    bad.write_bytes(text.read_bytes() + b"1 3:1 2:1\n")
    n_lines = text.read_bytes().count(b"\n") + 1
    before = sorted(os.listdir(tmp_path))
    assert_one_line_error(invoke(convert_cmd, bad, tmp_path / "o.lsvm"), f"bad.svm:{n_lines}:")
    assert sorted(os.listdir(tmp_path)) == before

    def interrupt(rows):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        convert(str(text), str(tmp_path / "o.lsvm"), progress=interrupt)
    with pytest.raises(KeyboardInterrupt):
        convert(str(text), str(tmp_path / "o.svm"), to="svmlight", progress=interrupt)
    assert sorted(os.listdir(tmp_path)) == before


# ------------------------------------------------------------------ the commands on binary files

@pytest.mark.parametrize("values", ["auto", "float32"])
def test_training_on_the_binary_file_gives_the_model_of_its_text(tmp_path, text, values):
    assert invoke(convert_cmd, "-q", "--values", values, text, tmp_path / "t.lsvm").exit_code == 0
    ref = text
    if values == "float32":             # the reference: the text of the rounded values
        X, y = linsvm.load_svmlight(str(text))
        X.data = X.data.astype(np.float32).astype(np.float64)
        ref = tmp_path / "rounded.svm"
        linsvm.dump_svmlight(X, y, str(ref))
    for solver in ("mfn", "dcd"):
        assert invoke(train_cmd, "-q", "-s", solver, ref, tmp_path / "a.model").exit_code == 0
        assert invoke(train_cmd, "-q", "-s", solver, tmp_path / "t.lsvm",
                      tmp_path / "b.model").exit_code == 0
        assert model_lines(tmp_path / "a.model") == model_lines(tmp_path / "b.model")


def test_pattern_data_trains_as_its_text(tmp_path):
    X, y = random_problem(n_samples=120, n_features=30, seed=5)
    X.data[:] = 1.0
    src = tmp_path / "bin.svm"
    linsvm.dump_svmlight(X, y, str(src))
    assert invoke(convert_cmd, "-q", src, tmp_path / "p.lsvm").exit_code == 0
    assert open_binary(tmp_path / "p.lsvm").layout == "pattern"
    for data, out in ((src, "a.model"), (tmp_path / "p.lsvm", "b.model")):
        assert invoke(train_cmd, "-q", data, tmp_path / out).exit_code == 0
    assert model_lines(tmp_path / "a.model") == model_lines(tmp_path / "b.model")


def test_stored_weights_train_as_w_and_w_replaces_them(tmp_path, text):
    n = linsvm.load_svmlight(str(text))[1].shape[0]
    w, w2 = (tmp_path / "w1", tmp_path / "w2")
    w.write_text(" ".join(map(repr, np.random.default_rng(1).uniform(0.1, 3, n).tolist())))
    w2.write_text(" ".join(map(repr, np.random.default_rng(2).uniform(0.1, 3, n).tolist())))
    assert invoke(convert_cmd, "-q", "-W", w, text, tmp_path / "w.lsvm").exit_code == 0
    invoke(train_cmd, "-q", "-W", w, text, tmp_path / "a.model")
    invoke(train_cmd, "-q", tmp_path / "w.lsvm", tmp_path / "b.model")
    assert model_lines(tmp_path / "a.model") == model_lines(tmp_path / "b.model")
    invoke(train_cmd, "-q", "-W", w2, text, tmp_path / "c.model")
    r = invoke(train_cmd, "-W", w2, tmp_path / "w.lsvm", tmp_path / "d.model")
    assert f"note: -W {w2} replaces the instance weights stored in" in r.stderr
    assert model_lines(tmp_path / "c.model") == model_lines(tmp_path / "d.model")


def test_predict_cv_scale_and_liblinearutil_on_a_binary_file_as_on_its_text(tmp_path, text):
    binary = tmp_path / "t.lsvm"
    assert invoke(convert_cmd, "-q", text, binary).exit_code == 0
    invoke(train_cmd, "-q", text, tmp_path / "m")
    outs = []
    for data, out in ((text, "a.pred"), (binary, "b.pred")):
        r = invoke(predict_cmd, "--decision-values", data, tmp_path / "m", tmp_path / out)
        assert r.exit_code == 0
        outs.append((r.stderr, (tmp_path / out).read_bytes()))
    assert outs[0] == outs[1]
    cvs = [invoke(train_cmd, "-q", "-v", "3", data).stdout for data in (text, binary)]
    assert cvs[0] == cvs[1] and "Cross Validation Accuracy" in cvs[0]
    tables = [invoke(cv_cmd, "-q", "-c", "0.5,2", "--format", "json", data).stdout
              for data in (text, binary)]
    strip = lambda s: [ln for ln in s.splitlines() if "seconds" not in ln]     # noqa: E731
    assert strip(tables[0]) == strip(tables[1])
    scaled = [invoke(scale_cmd, "-l", "0", data).stdout for data in (text, binary)]
    assert scaled[0] == scaled[1] and scaled[0]
    renumbered = [invoke(renumber_cmd, data, "-", tmp_path / f"{k}.map").stdout
                  for k, data in enumerate((text, binary))]
    assert renumbered[0] == renumbered[1] and renumbered[0]
    assert (tmp_path / "0.map").read_bytes() == (tmp_path / "1.map").read_bytes()
    ya, xa = svm_read_problem(str(text))
    yb, xb = svm_read_problem(str(binary))
    assert ya == yb and xa == xb


def test_a_bad_label_in_a_binary_file_names_the_example(tmp_path):
    src = tmp_path / "r.svm"
    src.write_bytes(b"1 1:1\n-1 2:1\n0.5 1:2\n1 3:1\n")
    invoke(convert_cmd, "-q", src, tmp_path / "r.lsvm")
    r = invoke(train_cmd, "-q", tmp_path / "r.lsvm", tmp_path / "m")
    assert_one_line_error(r, f"{tmp_path / 'r.lsvm'}: example 3: label 0.5")


# ------------------------------------------------------------------ the cache

def cache_files(d):
    return sorted(p for p in os.listdir(d) if p.endswith(".lsvm")) if d.exists() else []


def test_cache_converts_once_then_maps_the_copy(tmp_path, text, cache_dir):
    r1 = invoke(train_cmd, "--cache", text, tmp_path / "a.model")
    assert "note: caching" in r1.stderr
    (copy,) = cache_files(cache_dir)
    st = os.stat(cache_dir / copy)
    r2 = invoke(train_cmd, "--cache", text, tmp_path / "b.model")
    assert "caching" not in r2.stderr and "converting" not in r2.stderr
    st2 = os.stat(cache_dir / copy)
    assert (st2.st_ino, st2.st_mtime_ns) == (st.st_ino, st.st_mtime_ns)
    invoke(train_cmd, "-q", text, tmp_path / "c.model")
    assert model_lines(tmp_path / "a.model") == model_lines(tmp_path / "b.model") == \
        model_lines(tmp_path / "c.model")
    assert open_binary(cache_dir / copy).source.path == os.fsencode(os.path.realpath(text))


def test_the_environment_variable_turns_caching_on_and_no_cache_off(tmp_path, text,
                                                                     monkeypatch):
    d = tmp_path / "envcache"
    monkeypatch.setenv("LINSVM_CACHE", str(d))
    invoke(train_cmd, "--no-cache", "-q", text, tmp_path / "a.model")
    assert cache_files(d) == []
    r = invoke(predict_cmd, text, tmp_path / "a.model", tmp_path / "p")
    assert "note: caching" in r.stderr and len(cache_files(d)) == 1


def test_a_stale_copy_is_rebuilt(tmp_path, text, cache_dir):
    invoke(train_cmd, "-q", "--cache", text, tmp_path / "a.model")
    (copy,) = cache_files(cache_dir)
    ino = os.stat(cache_dir / copy).st_ino
    X, y = random_problem(n_samples=90, n_features=25, seed=9)
    linsvm.dump_svmlight(X, y, str(text))
    st = os.stat(text)
    os.utime(text, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))       # a new modification time
    r = invoke(train_cmd, "--cache", text, tmp_path / "b.model")
    assert "changed since it was cached: converting it again" in r.stderr
    assert "read 90 examples" in r.stderr and os.stat(cache_dir / copy).st_ino != ino


def test_a_damaged_copy_is_rebuilt_never_trusted(tmp_path, text, cache_dir):
    invoke(train_cmd, "-q", "--cache", text, tmp_path / "a.model")
    (copy,) = cache_files(cache_dir)
    raw = bytearray((cache_dir / copy).read_bytes())
    raw[-3] ^= 0x40
    (cache_dir / copy).write_bytes(bytes(raw))
    r = invoke(train_cmd, "--cache", text, tmp_path / "b.model")
    assert "the cached copy of" in r.stderr and "is damaged" in r.stderr
    assert model_lines(tmp_path / "a.model") == model_lines(tmp_path / "b.model")
    open_binary(cache_dir / copy)                       # whole again


def test_stdin_and_binary_files_are_never_cached(tmp_path, text, cache_dir):
    invoke(train_cmd, "-q", "--cache", "-", tmp_path / "a.model", input=text.read_bytes())
    invoke(convert_cmd, "-q", text, tmp_path / "t.lsvm")
    invoke(train_cmd, "-q", "--cache", tmp_path / "t.lsvm", tmp_path / "b.model")
    assert cache_files(cache_dir) == []


def test_concurrent_users_of_one_cache_convert_once(tmp_path, text):
    d = str(tmp_path / "shared")
    notes, results, barrier = [], [], threading.Barrier(4)

    def run():
        barrier.wait()
        data = cache_mod.cached(str(text), d, note=notes.append)
        results.append(data.n_rows)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [150] * 4
    assert len([n for n in notes if n.startswith("caching")]) == 1, notes


def test_an_unwritable_cache_is_a_note_and_the_text_is_read(tmp_path, text, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(cache_mod, "cache_directory", lambda: str(blocker / "cache"))
    r = invoke(train_cmd, "--cache", text, tmp_path / "a.model")
    assert r.exit_code == 0 and "note: cannot use the cache" in r.stderr


def test_bad_text_under_cache_is_the_parsers_error_and_leaves_no_copy(tmp_path, cache_dir):
    bad = tmp_path / "bad.svm"
    bad.write_bytes(b"1 1:1\n1 2:x\n")
    r = invoke(train_cmd, "-q", "--cache", bad, tmp_path / "m")
    assert_one_line_error(r, f"{bad}:2:")
    assert cache_files(cache_dir) == []


@pytest.mark.subprocess
@pytest.mark.slow
def test_two_processes_on_one_cache_both_succeed_with_one_conversion(tmp_path, text):
    env = child_env(LINSVM_CACHE=str(tmp_path / "c"))
    cmd = [sys.executable, "-m", "linsvm", "train", "--cache", str(text)]
    procs = [subprocess.Popen(cmd + [str(tmp_path / f"{k}.model")], env=env,
                              stderr=subprocess.PIPE, text=True) for k in range(2)]
    errs = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], errs
    assert sum(e.count("note: caching") for e in errs) == 1, errs
    assert model_lines(tmp_path / "0.model") == model_lines(tmp_path / "1.model")
