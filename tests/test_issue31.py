"""Regression tests of issue 31, "Hardening, round two": one test (or a few) per item,
each named after its item, each failing on the code before the fix.

1. an output that is one of the command's inputs, or another of its outputs, is refused
   before any work (renumber, synth, cv --output-model, train, predict);
2. Ctrl-C at any moment of start-up: `interrupted`, exit 130, no traceback;
3. a label a kind's rules refuse names the file and line of the first such row;
4. a model whose weights overflow: one line naming the model and the example, no
   NumPy warning;
5. one verdict for a damaged .bz2 whatever readers are installed;
6. `linsvm synth` checks memory before allocating;
7. --help says that the thread count changes the iterates;
8. the interrupt tests pass when the runner ignores SIGINT.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import child_env

import linsvm
from linsvm.problem.catalog import SOLVERS


def run_cli(*args, cwd=None, stdin=None, env=None):
    """`python -m linsvm ARGS` as a user runs it: (exit status, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-m", "linsvm", *map(str, args)], cwd=cwd,
                       input=stdin, capture_output=True, env=env or child_env(), timeout=300)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def one_error_line(err, prog="linsvm"):
    """The single line a failed command printed (no traceback, no warning)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog} ") and ": error: " in lines[0], err
    return lines[0]


# ------------------------------------------------------------------ item 7: --n-threads help

def test_item7_n_threads_help_says_the_model_does_not_depend_on_the_count():
    """w8a with -s alm took 450 iterations on one thread and 443 on two.  The scatters now
    sum fixed row blocks in block order, so the models are the same bit for bit
    (tests/test_threads_identical.py), and every solver's --n-threads help says so."""
    with_threads = [name for name, info in SOLVERS.items() if "n_threads" in info.options]
    assert {"mfn", "alm", "alm-exact", "perf"} <= set(with_threads)
    for name in with_threads:
        text = " ".join(SOLVERS[name].options["n_threads"].help.split())
        assert "same bit for bit for every count" in text, (name, text)
    status, out, _ = run_cli("train", "--help")
    assert status == 0 and "same bit for bit for every count" in " ".join(out.split())
    for name in ("mfn", "alm", "perf"):
        status, out, _ = run_cli("train", "--help-solver", name)
        assert status == 0 and "same bit for bit" in " ".join(out.split()), name


# ------------------------------------------------------------------ item 6: synth's memory

def _limit_address_space(limit):
    def set_limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return set_limit


def test_item6_synth_checks_memory_before_allocating(tmp_path):
    """`linsvm synth --n-features 2147483647` tried the allocation and printed "out of
    memory (Unable to allocate 16.0 GiB ...)"; now it is refused before anything is
    allocated, in one line that says how much it needs and how much there is, as train's
    memory check does.  (The child's address space is capped at 6 GiB, so that the
    check has a limit to find whatever memory the machine has.)"""
    out = tmp_path / "big.svm"
    r = subprocess.run([sys.executable, "-m", "linsvm", "synth", "--n-features", "2147483647",
                        str(out), str(tmp_path / "big.t")], capture_output=True, text=True,
                       env=child_env(), timeout=300, preexec_fn=_limit_address_space(6 << 30))
    line = one_error_line(r.stderr)
    assert r.returncode == 1
    assert "needs about" in line and "is available (RLIMIT_AS)" in line, line
    assert "Unable to allocate" not in line and "out of memory" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # the Python function checks the same way, before drawing anything
    from linsvm.io.synth import make_text_classification, memory_needed
    assert memory_needed(20000, 2147483647) > 16 << 30
    assert memory_needed(100, 50) < 1 << 20
    X, y = make_text_classification(n_samples=100, n_features=50, seed=1)
    assert X.shape == (100, 50)


# ------------------------------------------------------------------ item 1: outputs vs inputs

DATA = b"1 1:0.5 3:1\n-1 2:1 4:0.25\n1 1:1 4:2\n-1 3:0.5\n"


def _files(directory):
    """{name: bytes} of a directory, symlinks as their target."""
    return {p.name: (os.readlink(p) if p.is_symlink() else
                     "<dir>" if p.is_dir() else p.read_bytes())
            for p in sorted(directory.iterdir())}


def run_here(*args, cwd):
    """`linsvm ARGS` in this process (click's runner) from directory `cwd`: (exit
    status, stdout, stderr); faster than run_cli for the many refusals below."""
    from click.testing import CliRunner
    from linsvm.cli import cli

    here = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, [str(a) for a in args], prog_name="linsvm",
                               catch_exceptions=False)
    finally:
        os.chdir(here)
    return r.exit_code, r.stdout, r.stderr


def _refused(tmp_path, args, expect):
    """The command fails with one line saying `expect`, and no file changes."""
    before = _files(tmp_path)
    status, _, err = run_here(*args, cwd=tmp_path)
    line = one_error_line(err)
    assert status != 0 and expect in line, (args, err)
    assert _files(tmp_path) == before, args


@pytest.fixture
def data_dir(tmp_path):
    (tmp_path / "h.txt").write_bytes(DATA)
    os.symlink("h.txt", tmp_path / "h.link")
    os.link(tmp_path / "h.txt", tmp_path / "h.hard")
    return tmp_path


def test_item1_renumber_never_writes_over_its_input_or_its_other_output(data_dir):
    """`linsvm renumber h.txt out.txt h.txt` exited 0 and replaced the data with the
    feature map; `renumber hs hs hs.map` overwrote its input; `renumber hs x.out x.out`
    left only the map.  Each is refused, before reading, and nothing changes."""
    d = data_dir
    absolute = str(d / "h.txt")
    for args in (["h.txt", "out.txt", "h.txt"], ["h.txt", "out.txt", "h.link"],
                 ["h.txt", "out.txt", "h.hard"], ["h.txt", "out.txt", absolute],
                 ["h.txt", "h.txt", "h.map"], ["h.link", "./h.txt", "h.map"],
                 ["h.txt", "h.hard", "h.map"]):
        _refused(d, ["renumber", *args], "it is the input file")
    (d / "sub").mkdir()
    for args in (["h.txt", "x.out", "x.out"], ["h.txt", "x.out", "./x.out"],
                 ["h.txt", "x.out", str(d / "x.out")], ["h.txt", "sub/../x.out", "x.out"]):
        _refused(d, ["renumber", *args], "it is the same file as the output file")
    os.symlink("x.out", d / "x.link")          # a dangling symlink to the other output
    _refused(d, ["renumber", "h.txt", "x.out", "x.link"], "same file as the output file")
    # --apply reads the map: the output may not be the map
    assert run_here("renumber", "h.txt", "r.txt", "r.map", cwd=d)[0] == 0
    _refused(d, ["renumber", "--apply", "h.txt", "r.map", "r.map"], "it is the input file 'r.map'")
    # checked before reading: a broken input still gets the path error
    (d / "bad.txt").write_bytes(b"not svmlight\n")
    _refused(d, ["renumber", "bad.txt", "bad.txt", "m"], "it is the input file")
    # what is allowed still works, '-' included
    status, out, _ = run_cli("renumber", "h.txt", "-", "m2", cwd=d)
    assert status == 0 and out == DATA.decode() and (d / "m2").is_file()


def test_item1_synth_two_outputs_must_differ(data_dir):
    d = data_dir
    for args in (["s.txt", "s.txt"], ["s.txt", "./s.txt"], ["h.txt", "h.link"],
                 ["h.txt", "h.hard"], ["s.txt", str(d / "s.txt")]):
        _refused(d, ["synth", "--n-samples", "40", "--n-features", "20", *args],
                 "it is the same file as the training file")
    status, _, _ = run_here("synth", "--n-samples", "40", "--n-features", "20", "a.txt", "b.txt",
                            cwd=d)
    assert status == 0 and (d / "a.txt").stat().st_size and (d / "b.txt").stat().st_size


def test_item1_train_cv_predict_refuse_every_input_as_output(data_dir):
    """train: the training data, -W and -i; cv --output-model; predict: the test data and
    the model; by name, symlink, hard link, relative or absolute path."""
    d = data_dir
    assert run_here("train", "-q", "h.txt", "m.model", cwd=d)[0] == 0
    os.link(d / "m.model", d / "m.hard")
    (d / "w.txt").write_bytes(b"1\n1\n1\n1\n")
    for args in (["train", "h.txt", "h.hard"], ["train", "-b", "1", "h.txt", "h.link"],
                 ["train", "h.txt", str(d / "h.txt")], ["train", "-W", "w.txt", "h.txt", "w.txt"],
                 ["train", "-i", "m.model", "h.txt", "m.model"],
                 ["train", "-i", "m.model", "h.txt", "m.hard"],
                 ["cv", "h.txt", "--output-model", "h.hard"],
                 ["cv", "-W", "w.txt", "h.txt", "--output-model", "./w.txt"],
                 ["predict", "h.txt", "m.model", "m.hard"], ["predict", "h.txt", "m.model", "h.link"]):
        _refused(d, args, "it is the input file")


def test_item1_scale_and_plot_outputs_are_neither_inputs_nor_each_other(data_dir):
    """linsvm scale's -o and -s, and linsvm-cv's --plot, are checked as every output is:
    not the data (-r's parameter file too), not each other, by any name."""
    d = data_dir
    assert run_here("scale", "-s", "p.txt", "h.txt", cwd=d)[0] == 0
    os.symlink("p.txt", d / "p.link")
    for args in (["scale", "-o", "h.link", "h.txt"], ["scale", "-s", "h.hard", "h.txt"],
                 ["scale", "-r", "p.txt", "-o", "p.link", "h.txt"]):
        _refused(d, args, "it is the input file")
    for args in (["scale", "-s", "q.txt", "-o", "./q.txt", "h.txt"],
                 ["scale", "-s", "p.txt", "-o", "p.link", "h.txt"]):
        _refused(d, args, "is also the output file (-o)")
    pytest.importorskip("matplotlib")
    _refused(d, ["cv", "h.txt", "--plot", "x.png", "--output-model", str(d / "x.png")],
             "is also the --output-model file")
    os.symlink("h.txt", d / "h.png")
    _refused(d, ["cv", "h.txt", "--plot", "h.png"], "it is the input file")


# ------------------------------------------------------------------ item 4: overflowing weights

def _overflow_models(directory):
    """(file, test data, example) triples: models whose decision value overflows on an
    example, in the three places it can -- adding the bias term, a weight times a
    feature, the sum of finite products -- saved in every format (binary weights with
    their crc32)."""
    from linsvm.model.model import Model
    cases = {
        # w = (1, 1), bias weight 1e308: x = (1e308/2 .. ) plus the bias term overflows
        "bias": (np.array([[1.0], [1.0], [1e308]]), b"1 1:1\n-1 1:1 2:1e308\n", 2),
        # one product: 1e308 * 10
        "product": (np.array([[1e308], [-1.0], [0.5]]), b"1 2:1\n1 1:10\n", 2),
        # all +-1e308 (the model): each product is finite, their sum is not
        "sum": (np.where(np.arange(14) % 2 == 0, 1e308, -1e308).reshape(-1, 1),
                b"1 1:1 3:1 5:0.5\n-1 2:1\n", 1),
    }
    out = []
    for name, (W, data, example) in cases.items():
        test = directory / f"{name}.svm"
        test.write_bytes(data)
        model = Model(solver="mfn", classes=[1, -1], weights=W, bias=1.0, params={})
        for fmt in ("linsvm-text", "linsvm-binary", "liblinear"):
            path = directory / f"{name}.{fmt}.model"
            model.save(path, format=fmt)
            out.append((path, test, example))
    return out


def test_item4_overflowing_model_is_one_line_naming_the_model(tmp_path):
    """All +-1e308 weights loaded (text, LIBLINEAR, binary with a valid crc32), then predict
    printed NumPy's `RuntimeWarning: overflow encountered in add` with a source line and an
    error naming the test file as if the data were at fault."""
    for model, test, example in _overflow_models(tmp_path):
        out = tmp_path / "p.txt"
        status, _, err = run_cli("predict", test.name, model.name, out.name, cwd=tmp_path)
        line = one_error_line(err)
        assert status == 1 and "RuntimeWarning" not in err, err
        assert line.startswith(f"linsvm predict: error: {model.name}: example {example} of "
                               f"{test.name}: the decision value is "), line
        assert "the model's weights (up to 1e+308 in magnitude)" in line, line
        assert not out.exists()


def test_item4_no_numpy_warning_from_the_python_api(tmp_path):
    import warnings

    from linsvm.model import ScoreOverflowError
    from linsvm.io.svmlight import load_svmlight
    for model, test, example in _overflow_models(tmp_path):
        m = linsvm.load_model(model)
        X, _ = load_svmlight(test)
        for x in (X, X.toarray()):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with pytest.raises(ScoreOverflowError) as info:
                    m.decision_function(x)
            assert info.value.row == example - 1 and info.value.model_at_fault
        assert m.source == str(model)


def test_item4_warm_start_from_an_overflowing_model_is_refused(tmp_path):
    """-i from such a model started the solve from inf: mfn failed with "weights must be
    finite", alm wrote an unusable model and exited 0."""
    model, test, _ = _overflow_models(tmp_path)[-3]          # the "sum" model, text format
    for solver in ("mfn", "alm", "dcd"):
        status, _, err = run_cli("train", "-q", "-s", solver, "-i", model.name, test.name, "o.model",
                                 cwd=tmp_path)
        line = one_error_line(err)
        assert status == 1 and f"error: {model.name}: its weights overflow the decision value of " \
            "training example 1" in line, err
        assert not (tmp_path / "o.model").exists()


# ------------------------------------------------------------------ item 2: Ctrl-C at start-up

def _console_scripts(directory):
    """The console scripts of pyproject.toml's [project.scripts], written as pip writes
    them (import the entry module, call the function), as {name: path}."""
    import tomllib

    from conftest import REPO
    with open(REPO / "pyproject.toml", "rb") as fh:
        scripts = tomllib.load(fh)["project"]["scripts"]
    out = {}
    for name, target in scripts.items():
        module, function = target.split(":")
        path = directory / name
        path.write_text(f"import re\nimport sys\nfrom {module} import {function}\n"
                        "if __name__ == '__main__':\n"
                        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
                        f"    sys.exit({function}())\n")
        out[name] = path
    return out


STARTUP_MOMENTS = 8      # SIGINTs per entry point, one in each eighth of the first 0.9 s


@pytest.mark.parametrize("entry", ["linsvm", "linsvm-train", "linsvm-predict", "linsvm-cv",
                                   "python -m linsvm"])
def test_item2_ctrl_c_at_any_moment_of_start_up_prints_interrupted_and_exits_130(entry, tmp_path):
    """SIGINT in the first ~0.4 s, while the modules load, printed a 32-38 line
    KeyboardInterrupt traceback and the process died of the signal (-2).  Now every entry
    point prints `interrupted` and exits 130 from its first instruction on: SIGINT is sent
    at random moments of the first 0.9 s to a command that would otherwise wait for its
    standard input for ever (so start-up, option parsing, the imports of the command's
    body and the body itself are all hit).  The child starts with SIGINT blocked
    (conftest.default_sigint_blocked): a signal sent during the interpreter's own
    start-up -- site-packages' .pth files, before any of linsvm runs -- waits for the
    entry point's first instruction, which unblocks it, so that every moment tests
    linsvm's code and none the interpreter's."""
    import random
    import signal
    import time

    from conftest import default_sigint_blocked
    model = tmp_path / "m.model"
    linsvm.train(np.array([[1.0], [-1.0]]), np.array([1.0, -1.0])).save(model)
    scripts = _console_scripts(tmp_path)
    args = {"linsvm": ["train", "-", "out.model"], "linsvm-train": ["-", "out.model"],
            "linsvm-predict": ["-", str(model), "p.txt"], "linsvm-cv": ["-"],
            "python -m linsvm": ["train", "-", "out.model"]}[entry]
    command = ([sys.executable, "-m", "linsvm"] if entry.startswith("python") else
               [sys.executable, str(scripts[entry])]) + args
    rng = random.Random(f"issue 31 item 2 {entry}")
    failures = []
    for k in range(STARTUP_MOMENTS):
        delay = rng.uniform(k, k + 1) * 0.9 / STARTUP_MOMENTS
        proc = subprocess.Popen(command, cwd=tmp_path, env=child_env(), stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                preexec_fn=default_sigint_blocked)
        try:
            time.sleep(delay)
            assert proc.poll() is None, "the command ended by itself"
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=60)           # standard input stays open: only SIGINT ends it
            err = proc.stderr.read()
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            err = b"(no exit within 60 s of SIGINT) " + proc.stderr.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pipe in (proc.stdin, proc.stdout, proc.stderr):
                pipe.close()
        text = err.decode(errors="replace")
        if proc.returncode != 130 or text != "interrupted\n":
            failures.append(f"SIGINT after {delay:.3f} s: exit {proc.returncode}, stderr "
                            f"{len(text.splitlines())} lines: {text[-300:]!r}")
    assert failures == []
    assert not (tmp_path / "out.model").exists() and not (tmp_path / "p.txt").exists()


def test_item2_python_dash_m_keeps_status_130_after_an_interrupt_inside_exec(tmp_path):
    """CPython run with -m ends by SIGINT (status -2) when a KeyboardInterrupt ever left
    an exec()'d string, even one the program caught -- a Ctrl-C while dataclasses build
    their methods during `python -m linsvm`'s imports made the start-up test above fail
    about once in a hundred.  run_module_main keeps the status the command chose."""
    package = tmp_path / "interrupted_in_exec"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "__main__.py").write_text(
        "from linsvm.runtime import sigint\n"
        "def main():\n"
        "    try:\n"
        "        exec('raise KeyboardInterrupt')\n"
        "    except KeyboardInterrupt:\n"
        "        raise SystemExit(sigint.EXIT_INTERRUPTED)\n"
        "sigint.run_module_main(main)\n")
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env.get("PYTHONPATH", "")])
    proc = subprocess.run([sys.executable, "-m", "interrupted_in_exec"], cwd=tmp_path, env=env,
                          capture_output=True)
    assert proc.returncode == 130, proc.stderr


# ------------------------------------------------------------------ item 8: a runner ignoring SIGINT

def test_item8_interrupt_tests_pass_when_the_runner_ignores_sigint():
    """`nohup pytest -q tests &` (a shell script's background job) starts the runner with
    SIGINT ignored; every child inherited SIG_IGN and every Ctrl-C test waited a minute
    and failed.  The children now start with SIGINT's default disposition
    (conftest.default_sigint) and the in-process ones install Python's handler
    (conftest.python_sigint): the interrupt tests, item 2's and the threaded Ctrl-C tests
    of test_ovr_parallel.py pass under a runner started with signal.SIG_IGN.  Of item 2's
    entries it runs one console script and `python -m linsvm` (the console scripts share
    one stub, and each entry costs about 4 s)."""
    import signal

    from conftest import REPO
    here = os.path.abspath(__file__)
    item2 = f"{here}::test_item2_ctrl_c_at_any_moment_of_start_up_prints_interrupted_and_exits_130"
    nodes = [str(REPO / "tests" / "test_interrupt.py"),
             f"{item2}[linsvm-train]", f"{item2}[python -m linsvm]",
             f"{here}::test_item2_a_swallowed_interrupt_still_ends_the_command",
             str(REPO / "tests" / "test_ovr_parallel.py") + "::test_ctrl_c_stops_the_columns_running_"
             "in_worker_threads",
             str(REPO / "tests" / "test_ovr_parallel.py") + "::test_ctrl_c_stops_parallel_cross_"
             "validation_folds"]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *nodes],
                       cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=3600,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout and "failed" not in r.stdout


# ------------------------------------------------------------------ item 5: one verdict per .bz2

def _bz2_verdicts(path, **kw):
    """{reader: outcome} of loading `path` with indexed_bzip2 (when installed) and with
    the standard library alone."""
    from linsvm.errors import DataError
    from linsvm.io import compressed
    from linsvm.io.svmlight import load_svmlight
    out = {}
    saved = compressed._fast_bzip2()
    for reader in ("fast", "stdlib"):
        if reader == "fast" and saved is None:
            continue
        compressed._indexed_bzip2 = saved if reader == "fast" else None
        try:
            X, y = load_svmlight(path, **kw)
            out[reader] = ("ok", X.shape, X.data.tobytes(), y.tobytes())
        except DataError as exc:
            out[reader] = ("error", str(exc))
        finally:
            compressed._indexed_bzip2 = saved
    return out


def _text(n_rows, seed):
    rng = np.random.default_rng(seed)
    return b"".join(b"%d %d:%.6f %d:%.3f\n" % (i % 2 * 2 - 1, 1 + i % 7, rng.random(),
                                                 9 + i % 5, rng.random())
                    for i in range(n_rows))


def test_item5_a_damaged_bz2_gets_one_verdict_whatever_is_installed(tmp_path):
    """A .bz2 whose header's level digit understates its blocks was read (36,471 rows) with
    the fast-io extra and refused by the standard library and `bzip2 -t`.  Now it is
    refused by both, with the same message; so is a later stream whose digit understates
    its blocks and a stream whose combined CRC is wrong (indexed_bzip2 checks neither)."""
    import bz2
    text = _text(40000, seed=5)
    good = bz2.compress(text, 9)
    assert len(good) > 4 and good[:4] == b"BZh9"
    second = bz2.compress(text[:300000], 9)
    bad_crc = bytearray(good)
    bad_crc[-2] ^= 0x10                     # in the stream's CRC after its end marker
    cases = {"digit": b"BZh1" + good[4:], "second stream": good + b"BZh3" + second[4:],
             "stream crc": bytes(bad_crc)}
    for name, blob in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.bz2"
        path.write_bytes(blob)
        verdicts = _bz2_verdicts(path)
        assert set(verdicts) == ({"fast", "stdlib"} if "fast" in verdicts else {"stdlib"})
        assert {v[0] for v in verdicts.values()} == {"error"}, (name, verdicts)
        assert len({v[1] for v in verdicts.values()}) == 1, (name, verdicts)
        assert verdicts["stdlib"][1] == f"{path}: bad bzip2 data: Invalid data stream"


def test_item5_sound_files_read_the_same_by_both_readers(tmp_path):
    """Files libbz2 accepts are read alike, the fast path kept for level-9 streams: a
    later stream of a lower level (read again by the standard library) and many level-9
    streams (pbzip2's layout, no second reading)."""
    import bz2

    from linsvm.io import compressed
    text = _text(30000, seed=6)
    cut = text.index(b"\n", len(text) // 2) + 1
    checks = []
    spy = compressed.Input._strict_check
    compressed.Input._strict_check = lambda self: (checks.append(self.name), spy(self))[1]
    try:
        for name, blob in (("levels", bz2.compress(text[:cut], 9) + bz2.compress(text[cut:], 2)),
                           ("pbzip2", b"".join(bz2.compress(text[k:k + 200000], 9)
                                               for k in range(0, len(text), 200000)))):
            path = tmp_path / f"{name}.bz2"
            path.write_bytes(blob)
            verdicts = _bz2_verdicts(path)
            assert {v[0] for v in verdicts.values()} == {"ok"}, verdicts
            assert len(set(verdicts.values())) == 1
            assert verdicts["stdlib"][1] == (30000, 13)
    finally:
        compressed.Input._strict_check = spy
    if compressed._fast_bzip2() is not None:
        assert checks == [str(tmp_path / "levels.bz2")]       # pbzip2's: read once


def test_item5_a_fast_reader_failure_is_judged_by_the_standard_library(tmp_path, monkeypatch):
    """When indexed_bzip2 fails part-way (it refuses randomised blocks, which libbz2 reads),
    the standard library goes on from there: the rows of a sound file, all of them."""
    import bz2

    from linsvm.io import compressed
    if compressed._fast_bzip2() is None:
        pytest.skip("the fast-io extra (indexed_bzip2) is not installed")
    real_open = compressed._fast_bzip2().open

    class FailsPartWay:
        def __init__(self, stream):
            self.stream, self.left = stream, 700000

        def readinto(self, b):
            if self.left <= 0:
                raise ValueError("[BZip2 block header] deprecated isRandomized bit is not supported")
            n = self.stream.readinto(memoryview(b)[:min(len(b), self.left)])
            self.left -= n
            return n

        def close(self):
            self.stream.close()

    class FakeModule:
        @staticmethod
        def open(*args, **kwargs):
            return FailsPartWay(real_open(*args, **kwargs))

    text = _text(40000, seed=7)
    path = tmp_path / "d.bz2"
    path.write_bytes(bz2.compress(text, 9))
    want = _bz2_verdicts(path)["stdlib"]
    monkeypatch.setattr(compressed, "_indexed_bzip2", FakeModule)
    assert _bz2_verdicts(path)["fast"] == want


# ------------------------------------------------------------------ item 3: labels name file:line

LABELS = (b"# a header comment\n\n1 1:1\n2 2:1\n# a comment\n1 1:0.5\n\n"
          b"3 1:1 2:1\n0.25 1:1\n2 2:2\n0.75 1:3\n")          # 0.25 is on line 9


def _label_files(d):
    import gzip
    (d / "frac.svm").write_bytes(LABELS)
    (d / "frac.svm.gz").write_bytes(gzip.compress(LABELS))
    (d / "head.svm").write_bytes(b"1 1:1\n2 1:2\n3 2:1\n")
    many = b"# ids, not classes\n" + b"".join(b"%d 1:1\n" % i for i in range(150))
    (d / "many.svm").write_bytes(many)                 # label 100 is on line 102
    (d / "one.svm").write_bytes(b"1 1:1\n# c\n1 2:1\n")


def test_item3_a_label_the_kind_refuses_names_its_file_and_line(tmp_path):
    """`linsvm-train: error: label 0.25 is not an integer (3 distinct labels)...` named no
    file or line.  Now every label rule met after reading names FILE:LINE of the first
    row at fault, counting blank and comment lines as the parser does: for train and cv,
    plain and compressed files, standard input and shards."""
    d = tmp_path
    _label_files(d)
    frac = ("label 0.25 is not an integer (5 distinct labels): this looks like regression "
            "data, not classes")
    cases = [
        (["train", "frac.svm", "m"], None, f"frac.svm:9: {frac}"),
        (["train", "frac.svm.gz", "m"], None, f"frac.svm.gz:9: {frac}"),
        (["train", "-", "m"], LABELS, f"<stdin>:9: {frac}"),
        (["train", "-v", "2", "frac.svm"], None, f"frac.svm:9: {frac}"),
        (["cv", "frac.svm"], None, f"frac.svm:9: {frac}"),
        (["cv", "-v", "2", "-c", "1,2", "frac.svm"], None, f"frac.svm:9: {frac}"),
        (["train", "--shards", "head.svm,frac.svm", "m"], None,
         "frac.svm:9: label 0.25 is not an integer (5 distinct labels)"),
        (["train", "-s", "mfn-ord", "frac.svm", "m"], None,
         "frac.svm:9: rank 0.25 is not an integer: ordinal labels must be integer ranks"),
        (["cv", "-s", "perf-ord", "frac.svm"], None, "frac.svm:9: rank 0.25 is not an integer"),
        (["train", "many.svm", "m"], None,
         "many.svm:102: 150 distinct labels among 150 training examples (fewer than 10 per "
         "class; label 100 is the 101st): these do not look like classes"),
        (["train", "one.svm", "m"], None, "one.svm: only one class (label 1) in the training data"),
    ]
    for args, stdin, expect in cases:
        status, _, err = run_cli(*args, cwd=d, stdin=stdin)
        line = one_error_line("\n".join(x for x in err.splitlines() if not x.startswith("read ")))
        assert status == 1 and f"error: {expect}" in line, (args, err)
        assert not (d / "m").exists()


def test_item3_no_memory_for_places_in_the_normal_path(tmp_path):
    """Where each row is costs nothing for a file without blank or comment lines (the
    parser notes only rows that follow such lines), and one note per such run."""
    from linsvm.io.places import RowPlaces
    from linsvm.io.svmlight import load_svmlight_buffers
    (tmp_path / "plain.svm").write_bytes(b"".join(b"%d 1:1\n" % (i % 2) for i in range(1000)))
    places = RowPlaces()
    load_svmlight_buffers(tmp_path / "plain.svm", places=places)
    seg = places._segments[0]
    assert seg.gap_rows.size == 0 and places.where(999) == f"{tmp_path / 'plain.svm'}:1000"
    _label_files(tmp_path)
    places = RowPlaces()
    X, y = load_svmlight_buffers(tmp_path / "frac.svm", places=places)
    assert places._segments[0].gap_rows.tolist() == [0, 2, 3]
    lines = [places.place(r)[1] for r in range(y.size)]
    assert lines == [3, 4, 6, 8, 9, 10, 11]
    assert [places.slice(2, 5).place(r)[1] for r in range(3)] == [6, 8, 9]


def test_item3_under_mpi_the_line_is_the_files(tmp_path):
    """On two MPI ranks (each its share of the plain file, or rank 0 scattering a
    compressed one), every rank raises the error with the file's own line."""
    from conftest import mpiexec
    exe = mpiexec()
    _label_files(tmp_path)
    for name in ("frac.svm", "frac.svm.gz"):
        r = subprocess.run([exe, "-n", "2", sys.executable, "-m", "linsvm", "train", "-q", name, "m"],
                           cwd=tmp_path, env=child_env(), capture_output=True, timeout=300)
        err = [x for x in r.stderr.decode().splitlines()
               if x.strip() and not x.startswith("note:")]
        assert r.returncode != 0 and len(err) == 1, r.stderr
        assert err[0].startswith(f"linsvm train: error: {name}:9: label 0.25 is not an integer"), err


def test_item2_an_interrupt_wrapped_by_python_is_still_interrupted(capsys):
    """A Ctrl-C that lands while NumPy's finfo class is being created (a command imports
    NumPy late) reaches the command as a RuntimeError ("Error calling __set_name__"),
    the KeyboardInterrupt its cause: still one line `interrupted` and exit 130, not a
    57-line traceback (seen once under load in the start-up test above)."""
    from linsvm.cli.failures import serial_errors

    class Raises:
        def __set_name__(self, owner, name):
            raise KeyboardInterrupt

    @serial_errors
    def body():
        class Late:                 # what an import in progress does
            attr = Raises()
        return Late

    with pytest.raises(SystemExit) as info:
        body()
    assert info.value.code == 130
    assert capsys.readouterr().err == "interrupted\n"

    @serial_errors
    def other():
        raise RuntimeError("not an interrupt")

    with pytest.raises(RuntimeError, match="not an interrupt"):
        other()


def test_item2_a_swallowed_interrupt_still_ends_the_command(tmp_path):
    """A Ctrl-C whose KeyboardInterrupt something swallows on its way (an `except
    Exception` around an import that met it as a RuntimeError) used to leave the command
    running -- waiting on its standard input for ever.  The handler inside a command arms
    a watchdog: `interrupted` and exit 130 once the grace period is over."""
    import textwrap
    import time

    script = tmp_path / "swallow.py"
    script.write_text(textwrap.dedent("""
        import os, signal, sys, time
        from linsvm.runtime import sigint
        sigint.arrange()
        sigint.CLEANUP_GRACE = 0.5
        with sigint.in_command():
            try:
                os.kill(os.getpid(), signal.SIGINT)
                time.sleep(5)
            except BaseException:
                pass                    # swallowed
            print("ready", flush=True)
            time.sleep(60)              # what a command waiting on stdin does
    """))
    from conftest import default_sigint
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, env=child_env(), preexec_fn=default_sigint)
    assert proc.returncode == 130 and proc.stderr == "interrupted\n", proc.stderr
    assert proc.stdout == "ready\n" and time.monotonic() - t0 < 30
