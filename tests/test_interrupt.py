"""Ctrl-C stops every solver family's compiled loops (csrc/interrupt.pxd).

Regression tests for Ctrl-C being swallowed: it was printed as "Exception ignored in:
'linsvm._mfn.newton_core'" and training either ran to its end or wrote an unconverged
model (iterations = 0) over the old one, exit 0; with -q the solve ran to its end.  Now
every command prints `interrupted` and exits 130 within moments, the old model file is
untouched and no temporary is left.

The problems are small (4000 rows) but set to run far longer than the tests wait: C =
1e4, -e 1e-15 and an iteration cap of 1e5 keep every solver busy for minutes, so a test
that passed only because the solve happened to finish is impossible; the tests give a
stopped solve 60 s to exit (it takes well under a second) and fail rather than hang.
"""
import os
import queue
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import linsvm
from linsvm.io.svmlight import dump_svmlight
from linsvm.runtime.interrupt import stop_running_solves
from linsvm.io.synth import make_text_classification

from conftest import default_sigint

OLD_MODEL = b"the previous model, which an interrupted run must leave as it is\n"
ENDLESS = ["-c", "10000", "-e", "1e-15", "--max-iter", "100000"]
GRACE = 60.0           # seconds a stopped solve may take to exit (it takes < 1 s)


@pytest.fixture(scope="module")
def problem():
    """Three classes (one-vs-rest for binary solvers, three ranks for ordinal ones)."""
    return make_text_classification(n_samples=4000, n_features=5000, n_classes=3, noise=0.3,
                                    seed=3)


@pytest.fixture(scope="module")
def data_file(problem, tmp_path_factory):
    path = tmp_path_factory.mktemp("interrupt") / "train.svm"
    dump_svmlight(*problem, str(path))
    return path


# `python -m linsvm ARGS` through its entry module, saying "ready" on stderr once its
# modules are imported (Ctrl-C during start-up is test_issue31.py's item 2)
READY = ("import sys; from linsvm.__main__ import main; sys.stderr.write('ready\\n'); "
         "sys.stderr.flush(); sys.argv[0] = 'linsvm'; main()")


@pytest.fixture
def children():
    """Kills whatever child a failed test left running."""
    procs = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _start(children, args, cwd, stdin=subprocess.DEVNULL):
    """The command in a child process whose stderr lines arrive on a queue (None at EOF),
    the first being "ready"."""
    proc = subprocess.Popen([sys.executable, "-c", READY, *map(str, args)], cwd=cwd,
                            stdin=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, preexec_fn=default_sigint)     # whatever the runner's
    children.append(proc)
    lines = queue.Queue()

    def pump():
        for line in proc.stderr:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return proc, lines


def _interrupt(proc, lines, seen, delay):
    """SIGINT after `delay` s; returns the exit status and everything printed on stderr."""
    time.sleep(delay)
    assert proc.poll() is None, "the command ended before it was interrupted:\n" + "".join(seen)
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=GRACE)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        pytest.fail(f"still running {GRACE:g} s after Ctrl-C:\n" + "".join(seen))
    while (line := lines.get(timeout=GRACE)) is not None:
        seen.append(line)
    return proc.returncode, "".join(seen)


def _wait_for_lines(lines, n):
    """The first n lines of stderr (the solve has begun once its first progress line is out)."""
    seen = []
    while len(seen) < n:
        line = lines.get(timeout=GRACE)
        assert line is not None, "the command ended early:\n" + "".join(seen)
        seen.append(line)
    return seen


def _assert_interrupted(status, err, directory, kept=()):
    assert status == 130, err
    assert err.rstrip().splitlines()[-1] == "interrupted", err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    for path in kept:
        assert path.read_bytes() == OLD_MODEL
    assert not [p.name for p in directory.iterdir() if p.name.startswith(".") and "tmp" in p.name]


FAMILIES = ["mfn", "mfn-huber", "mfn-l1", "mfn-ord", "dcd", "sdm-cs", "sdm-ww", "alm",
            "alm-exact", "perf", "perf-ord"]


@pytest.mark.parametrize("solver", FAMILIES)
def test_ctrl_c_stops_training_and_keeps_the_old_model(solver, data_file, tmp_path, children):
    """With progress printed: the signal mostly lands in the progress callback, whose
    KeyboardInterrupt used to be printed and ignored."""
    model = tmp_path / "m.model"
    model.write_bytes(OLD_MODEL)
    proc, lines = _start(children, ["train", "-s", solver, *ENDLESS, data_file, model], tmp_path)
    seen = _wait_for_lines(lines, 3)        # ready, "read ... examples", the first iteration
    status, err = _interrupt(proc, lines, seen, 0.3)
    _assert_interrupted(status, err, tmp_path, kept=[model])


@pytest.mark.parametrize("solver", ["mfn", "sdm-cs", "dcd"])
def test_ctrl_c_stops_a_quiet_solve(solver, data_file, tmp_path, children):
    """With -q there is no callback: the compiled loops' own signal checks must stop it
    (the solve used to run to its end, which here is minutes away)."""
    model = tmp_path / "m.model"
    model.write_bytes(OLD_MODEL)
    proc, lines = _start(children, ["train", "-q", "-s", solver, *ENDLESS, data_file, model],
                         tmp_path)
    seen = _wait_for_lines(lines, 1)        # ready: reading the data (0.1 s), then the solve
    status, err = _interrupt(proc, lines, seen, 1.0)
    _assert_interrupted(status, err, tmp_path, kept=[model])


def test_ctrl_c_stops_cross_validation(data_file, tmp_path, children):
    proc, lines = _start(children, ["cv", "-s", "mfn", *ENDLESS, "-v", "3", data_file], tmp_path)
    seen = _wait_for_lines(lines, 1)        # ready; then "read ... examples", and the folds
    status, err = _interrupt(proc, lines, seen, 1.0)
    _assert_interrupted(status, err, tmp_path)


def test_ctrl_c_stops_prediction_and_keeps_the_old_output(problem, tmp_path, children):
    """Predicting a stream that is still arriving (a pipe kept open): the output file
    written so far is a temporary that must go, the old output stays."""
    X, y = problem
    model_file = tmp_path / "m.model"
    linsvm.train(X[:200], y[:200], solver="mfn").save(model_file)
    out = tmp_path / "pred.txt"
    out.write_bytes(OLD_MODEL)
    r, w = os.pipe()
    try:
        proc, lines = _start(children, ["predict", "-", model_file, out], tmp_path, stdin=r)
        os.close(r)
        with os.fdopen(w, "wb", closefd=False) as feed:
            dump_svmlight(X[:500], y[:500], feed)
            feed.flush()
        seen = _wait_for_lines(lines, 1)
        status, err = _interrupt(proc, lines, seen, 0.5)
    finally:
        os.close(w)
    _assert_interrupted(status, err, tmp_path, kept=[out])


def _sigint_after(delay):
    timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


@pytest.mark.parametrize("solver", ["mfn", "sdm-cs"])
def test_train_raises_keyboard_interrupt(solver, problem):
    """linsvm.train in this process, SIGINT from a timer thread: KeyboardInterrupt from the
    solve, long before the solve would end."""
    X, y = problem
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = _sigint_after(0.5)
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            linsvm.train(X, y, solver=solver, C=1e4, tol=1e-15, max_iter=10 ** 5)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < GRACE


@pytest.mark.parametrize("solver", ["mfn", "sdm-cs", "dcd", "alm", "perf"])
def test_stop_running_solves_stops_a_solve_in_another_thread(solver, problem):
    """Signals reach the main thread only; stop_running_solves() is how the main thread
    stops solves in workers, each of which then raises KeyboardInterrupt in its thread."""
    X, y = problem
    outcome = []
    started = threading.Event()

    def log(line):
        started.set()

    def work():
        try:
            linsvm.train(X, y, solver=solver, C=1e4, tol=1e-15, max_iter=10 ** 5, log=log)
            outcome.append("finished")
        except KeyboardInterrupt:
            outcome.append("interrupted")
        except BaseException as exc:      # reported below
            outcome.append(repr(exc))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    assert started.wait(GRACE), "the solve never reported progress"
    time.sleep(0.2)
    stop_running_solves()
    worker.join(GRACE)
    assert not worker.is_alive(), "the solve went on after stop_running_solves()"
    assert outcome == ["interrupted"]
    # solves begun after the request run normally (nothing to reset)
    model = linsvm.train(X[:300], y[:300], solver=solver, C=1.0)
    assert np.isfinite(model.weights).all()
