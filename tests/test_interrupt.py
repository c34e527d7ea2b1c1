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
# modules are imported (Ctrl-C during start-up: the last section of this file)
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


@pytest.mark.slow
@pytest.mark.subprocess
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


@pytest.mark.slow
@pytest.mark.subprocess
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


@pytest.mark.slow
@pytest.mark.subprocess
def test_ctrl_c_stops_cross_validation(data_file, tmp_path, children):
    proc, lines = _start(children, ["cv", "-s", "mfn", *ENDLESS, "-v", "3", data_file], tmp_path)
    seen = _wait_for_lines(lines, 1)        # ready; then "read ... examples", and the folds
    status, err = _interrupt(proc, lines, seen, 1.0)
    _assert_interrupted(status, err, tmp_path)


@pytest.mark.slow
@pytest.mark.subprocess
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


@pytest.mark.slow
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


# ------------------------------------------------------------------ Ctrl-C during start-up

# A sitecustomize that sends this process SIGINT when the module $SIGINT_AT is about to be
# imported (the moment named, not a random one).  It is imported by the interpreter's
# start-up, before any of linsvm: the child starts with SIGINT blocked, so a signal sent
# before linsvm's first instruction waits for that instruction, which unblocks it.
SIGINT_HOOK = '''
import os, signal, sys

class _SigintAt:
    def find_spec(self, name, path=None, target=None):
        if name == os.environ.get("SIGINT_AT"):
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None

sys.meta_path.insert(0, _SigintAt())
'''

# Modules each command imports in this order on its way to reading standard input: the
# package (before linsvm.runtime.sigint has run), the command-line toolkit, the command
# index, NumPy, and the parser's compiled core, the last before the read.
START_UP = ["linsvm", "click", "linsvm.cli.commands", "numpy", "linsvm._svmlight"]


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


def _startup_cases(tmp_path):
    """{entry: command} for every entry point, each reading standard input for ever."""
    model = tmp_path / "m.model"
    linsvm.train(np.array([[1.0], [-1.0]]), np.array([1.0, -1.0])).save(model)
    scripts = _console_scripts(tmp_path)
    args = {"linsvm": ["train", "-", "out.model"], "linsvm-train": ["-", "out.model"],
            "linsvm-predict": ["-", str(model), "p.txt"], "linsvm-cv": ["-"]}
    cases = {name: [sys.executable, str(scripts[name]), *a] for name, a in args.items()}
    cases["python -m linsvm"] = [sys.executable, "-m", "linsvm", "train", "-", "out.model"]
    return cases


@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_during_start_up_prints_interrupted_and_exits_130(tmp_path):
    """SIGINT while the modules load printed a 32-38 line KeyboardInterrupt traceback and
    the process died of the signal.  Every entry point prints `interrupted` and exits 130
    from its first instruction on: SIGINT is sent as each named module of START_UP is
    imported (the console scripts share one stub, so they get the middle moments only),
    to a command that would otherwise wait for its standard input for ever -- a moment
    that never comes leaves the command waiting, and the test fails."""
    from conftest import child_env, default_sigint_blocked
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(SIGINT_HOOK)
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(hook), env["PYTHONPATH"]])
    runs = []
    for entry, command in _startup_cases(tmp_path).items():
        moments = START_UP if entry in ("linsvm-train", "python -m linsvm") else START_UP[1:4:2]
        for module in moments:
            proc = subprocess.Popen(command, cwd=tmp_path, env=dict(env, SIGINT_AT=module),
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.PIPE, preexec_fn=default_sigint_blocked)
            runs.append((entry, module, proc))
    failures = []
    for entry, module, proc in runs:
        try:
            _, err = proc.communicate(timeout=GRACE)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
            err = b"(still running: the moment never came) " + err
        text = err.decode(errors="replace")
        if proc.returncode != 130 or text != "interrupted\n":
            failures.append(f"{entry}, SIGINT importing {module}: exit {proc.returncode}, "
                            f"stderr {text[-300:]!r}")
    assert failures == []
    assert not (tmp_path / "out.model").exists() and not (tmp_path / "p.txt").exists()


@pytest.mark.subprocess
def test_python_dash_m_keeps_status_130_after_an_interrupt_inside_exec(tmp_path):
    """CPython run with -m ends by SIGINT (status -2) when a KeyboardInterrupt ever left
    an exec()'d string, even one the program caught (a Ctrl-C while dataclasses build
    their methods during `python -m linsvm`'s imports).  run_module_main keeps the
    status the command chose."""
    from conftest import child_env
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


def test_an_interrupt_wrapped_by_python_is_still_interrupted(capsys):
    """A Ctrl-C that lands while a class is being created (NumPy's finfo, as a command
    imports NumPy late) reaches the command as a RuntimeError ("Error calling
    __set_name__") whose cause is the KeyboardInterrupt: still one line `interrupted` and
    exit 130, not a 57-line traceback; any other RuntimeError passes through."""
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


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_swallowed_interrupt_still_ends_the_command(tmp_path):
    """A Ctrl-C whose KeyboardInterrupt something swallows on its way (an `except
    Exception` around an import that met it as a RuntimeError) left the command running,
    waiting on its standard input for ever.  The handler inside a command arms a
    watchdog: `interrupted` and exit 130 once the grace period is over."""
    import textwrap

    from conftest import child_env
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
    t0 = time.monotonic()
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=60, env=child_env(), preexec_fn=default_sigint)
    assert proc.returncode == 130 and proc.stderr == "interrupted\n", proc.stderr
    assert proc.stdout == "ready\n" and time.monotonic() - t0 < 30


@pytest.mark.subprocess
@pytest.mark.slow
def test_interrupt_tests_pass_when_the_runner_ignores_sigint():
    """`nohup pytest -q tests &` (a shell script's background job) starts the runner with
    SIGINT ignored; every child inherited SIG_IGN and every Ctrl-C test waited and failed.
    The children start with SIGINT's default disposition (conftest.default_sigint) and the
    in-process tests install Python's handler (conftest.python_sigint): a few of each kind
    pass under a runner started with signal.SIG_IGN."""
    from conftest import REPO, child_env
    here = os.path.abspath(__file__)
    ovr = str(REPO / "tests" / "test_ovr_parallel.py")
    nodes = [f"{here}::test_ctrl_c_stops_a_quiet_solve[mfn]",
             f"{here}::test_a_swallowed_interrupt_still_ends_the_command",
             f"{ovr}::test_ctrl_c_stops_the_columns_running_in_worker_threads"]
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", "0",
                        *nodes],
                       cwd=REPO, env=child_env(), capture_output=True, text=True, timeout=600,
                       preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert "3 passed" in r.stdout


# ------------------------------------------------------------------ the other families, stopped alike
# The tests above stop mfn, sdm-cs, dcd, alm and perf; these stop the L1 solvers (cdn,
# glmnet), logistic regression (lr, softmax, lr-dual), the one-class solver and the
# regression solvers (svr, svr-dual) in the same two ways, each on a problem it solves
# for minutes at these settings.

_BUSY_PROBLEMS = {}


def _busy_problem(kind):
    """(X, y) of a problem kind: "binary", "three classes", "one class" or "regression",
    made once per run."""
    if kind not in _BUSY_PROBLEMS:
        _BUSY_PROBLEMS[kind] = _make_busy_problem(kind)
    return _BUSY_PROBLEMS[kind]


def _make_busy_problem(kind):
    from linsvm.io.synth import make_text_regression
    if kind == "binary":
        return make_text_classification(n_samples=4000, n_features=5000, noise=0.3, seed=3)
    if kind == "the interrupt set":         # the module's problem: 4000 rows, three classes
        return make_text_classification(n_samples=4000, n_features=5000, n_classes=3,
                                        noise=0.3, seed=3)
    if kind == "three classes":
        return make_text_classification(n_samples=3000, n_features=3000, n_classes=3,
                                        noise=0.3, seed=3)
    if kind == "one class":
        # the one-class solve of a smaller set ends before a stop request reaches it
        X, _ = make_text_classification(n_samples=60000, n_features=5000, avg_length=40, seed=2)
        return X, np.ones(X.shape[0])
    # svr's Newton solve of this set converges in about a second: the stop goes as soon as
    # the first progress line shows the solve is in its loop
    return make_text_regression(n_samples=60000, n_features=5000, avg_length=40, seed=1)


# solver: (problem kind, train's options, pause between the first progress line and the stop)
_BUSY = {
    **{name: ("the interrupt set", dict(C=1e4, tol=1e-15, max_iter=10 ** 5), 0.2)
       for name in ("mfn", "sdm-cs", "dcd", "alm", "perf")},
    "cdn": ("binary", dict(C=1e4, tol=1e-15, max_iter=10 ** 6), 0.2),
    "glmnet": ("binary", dict(C=1e4, tol=1e-15, max_iter=10 ** 6), 0.2),
    "lr": ("three classes", dict(C=1e6, tol=1e-300, max_iter=10 ** 5, n_jobs=1), 0.0),
    "softmax": ("three classes", dict(C=1e6, tol=1e-300, max_iter=10 ** 5, n_jobs=1), 0.0),
    "lr-dual": ("three classes", dict(C=1e6, tol=1e-15, max_iter=10 ** 6, n_jobs=1,
                                      primal_fallback=False), 0.0),
    "oneclass": ("one class", dict(tol=1e-15, max_iter=10 ** 6), 0.1),
    "svr": ("regression", dict(C=1e4, tol=1e-15, max_iter=10 ** 6, cg_max_iter=10 ** 6,
                               gtol=0.0), 0.0),
    "svr-dual": ("regression", dict(C=1e4, tol=1e-15, max_iter=10 ** 6, loss="l1"), 0.0),
}


def _solver_line(line):
    """A progress line of the solver itself, not one-vs-rest's "class 1 vs rest" written
    before a column's solve starts (a stop request meets only a solve running then)."""
    return not line.startswith("class ")


@pytest.mark.slow
@pytest.mark.parametrize("solver", list(_BUSY))
def test_stop_running_solves_stops_a_solve_in_another_thread(solver):
    """Signals reach the main thread only: stop_running_solves() is how it stops solves in
    workers.  A solve of each family running in a worker thread raises KeyboardInterrupt
    there, soon; a solve begun afterwards runs normally (nothing to reset)."""
    kind, options, pause = _BUSY[solver]
    X, y = _busy_problem(kind)
    outcome, started = [], threading.Event()

    def work():
        try:
            linsvm.train(X, y, solver=solver, log=lambda line: _solver_line(line) and started.set(),
                         **options)
            outcome.append("finished")
        except KeyboardInterrupt:
            outcome.append("interrupted")
        except BaseException as exc:       # reported below
            outcome.append(repr(exc))

    worker = threading.Thread(target=work, daemon=True)
    worker.start()
    assert started.wait(GRACE), "the solve never reported progress"
    time.sleep(pause)
    stop_running_solves()
    worker.join(GRACE)
    assert not worker.is_alive(), "the solve went on after stop_running_solves()"
    assert outcome == ["interrupted"]
    model = linsvm.train(X[:300], y[:300], solver=solver)       # later solves run normally
    assert np.isfinite(model.weights).all()


@pytest.mark.slow
@pytest.mark.parametrize("solver,after_first_line", [("cdn", False), ("glmnet", False),
                                                     ("lr", True)])
def test_train_of_other_families_raises_keyboard_interrupt(solver, after_first_line,
                                                           python_sigint):
    """linsvm.train in this process, SIGINT from a timer thread: KeyboardInterrupt from the
    solve, long before it would end.  A silent solve (no log) is sent it 0.5 s in: only the
    compiled loop runs then, so only its own check can see it; a logging solve 0.1 s after
    its first progress line, inside the solve whatever its imports cost."""
    kind, options, _ = _BUSY[solver]
    X, y = _busy_problem(kind)
    timer = threading.Timer(0.1 if after_first_line else 0.5, os.kill,
                            (os.getpid(), signal.SIGINT))
    lines = []

    def on_progress(line):
        if _solver_line(line):
            if not lines:
                timer.start()
            lines.append(line)

    if not after_first_line:
        timer.start()
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            linsvm.train(X, y, solver=solver, log=on_progress if after_first_line else None,
                         **options)
    finally:
        timer.cancel()
    assert time.monotonic() - t0 < GRACE
