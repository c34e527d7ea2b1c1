"""One-vs-rest on several threads (train(n_jobs=), linsvm-train -j): the same
weights bit for bit for every number of threads, and Ctrl-C stops dealing
columns."""
import threading
import time

import numpy as np
import pytest

import linsvm
from linsvm.cli import train_cmd
from linsvm.fit.ovr import one_vs_rest as _one_vs_rest
from linsvm.runtime.threads import resolve_jobs as _resolve_jobs

from conftest import invoke, random_problem, shared_file


@pytest.fixture(scope="module")
def seven_classes():
    return random_problem(n_samples=700, n_features=40, density=0.2, n_classes=7, seed=11)


@pytest.mark.parametrize("solver,opts", [("mfn", {}), ("dcd", {}), ("dcd", {"loss": "l2"}),
                                         ("alm", {}), ("mfn-l1", {})])
def test_weights_identical_for_any_number_of_jobs(seven_classes, solver, opts):
    X, y = seven_classes
    models = [linsvm.train(X, y, solver=solver, n_jobs=j, **opts) for j in (1, 2, 3)]
    assert models[0].weights.shape == (41, 7)
    for m in models[1:]:
        assert np.array_equal(m.weights, models[0].weights)
        assert m.stats["objective"] == models[0].stats["objective"]


@pytest.mark.slow
@pytest.mark.data
def test_sector_weights_identical_for_one_and_two_jobs():
    from linsvm.io.svmlight import load_svmlight

    X, y = load_svmlight(str(shared_file("multiclass/sector.scale.bz2")))
    X, y = X[:2000], y[:2000]           # over 90 of the 105 classes, a fifth of the time
    a = linsvm.train(X, y, solver="dcd", n_jobs=1)
    b = linsvm.train(X, y, solver="dcd", n_jobs=2)
    assert a.weights.shape[1] == len(np.unique(y)) > 90 and np.array_equal(a.weights, b.weights)


def test_cli_jobs_option_gives_the_same_model(tmp_path, seven_classes):
    X, y = seven_classes
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    for j in (1, 3):
        result = invoke(train_cmd, data, tmp_path / f"m{j}", "-s", "mfn", "-j", j)
        assert result.exit_code == 0
    def without_time(path):
        return [line for line in path.read_text().splitlines() if not line.startswith("stat seconds")]

    assert without_time(tmp_path / "m1") == without_time(tmp_path / "m3")
    lines = result.stderr.splitlines()           # -j 3: every progress line names its class
    body = [line for line in lines if "mfn iter" in line]
    assert body and all(line.startswith("class ") for line in body)


def test_bad_n_jobs_is_a_parameter_error(seven_classes):
    X, y = seven_classes
    with pytest.raises(linsvm.ParameterError, match="n_jobs"):
        linsvm.train(X, y, n_jobs=-1)


def test_default_jobs_never_exceed_columns_or_cores():
    import os

    assert 1 <= _resolve_jobs(None, 3) <= min(3, os.cpu_count())
    assert _resolve_jobs(5, 3) == 3 and _resolve_jobs(2, 9) == 2


def test_interrupt_stops_dealing_columns():
    # a KeyboardInterrupt in one column (standing for Ctrl-C) ends the run
    # without starting the columns after it
    started = []
    lock = threading.Lock()

    def fit_column(j, log):
        with lock:
            started.append(j)
        if j == 1:
            raise KeyboardInterrupt
        time.sleep(0.2)
        return np.zeros(2), {}

    W = np.empty((2, 20))
    with pytest.raises(KeyboardInterrupt):
        _one_vs_rest(fit_column, np.arange(20.0), W, 2, None)
    assert len(started) <= 3


def test_worker_error_reaches_the_caller():
    def fit_column(j, log):
        if j == 4:
            raise linsvm.DataError("bad column")
        return np.full(2, float(j)), {"objective": 0.0}

    W = np.empty((2, 6))
    with pytest.raises(linsvm.DataError, match="bad column"):
        _one_vs_rest(fit_column, np.arange(6.0), W, 3, None)


@pytest.mark.slow
def test_ctrl_c_stops_the_columns_running_in_worker_threads(python_sigint):
    """Ctrl-C reaches only the main thread: the columns' solves running in the worker
    threads must be stopped too (linsvm.runtime.interrupt), and joined, before train() raises,
    so that nothing goes on computing in the background."""
    import os
    import signal

    from linsvm.io.synth import make_text_classification

    X, y = make_text_classification(n_samples=8000, n_features=3000, n_classes=6, noise=0.4, seed=2)
    # noisy labels and a large C: each column takes several seconds (about 50 s for all six)
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            linsvm.train(X, y, solver="dcd", C=1000.0, tol=1e-14, max_iter=100000, n_jobs=2)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 20.0
    assert not [th for th in threading.enumerate() if th.name.startswith("linsvm-ovr")]


@pytest.mark.slow
def test_ctrl_c_stops_parallel_cross_validation_folds(python_sigint):
    """cross_validate(n_jobs=2) runs its folds in worker threads: Ctrl-C must stop the
    folds' running solves, start no further grid point or fold, and join the workers
    before it raises (the thread pool used to wait for every fold to finish)."""
    import os
    import signal

    from linsvm.cv import cross_validate
    from linsvm.io.synth import make_text_classification

    X, y = make_text_classification(n_samples=4000, n_features=2000, noise=0.4, seed=3)
    before = set(threading.enumerate())
    timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt):
            cross_validate(X, y, solver="dcd", Cs=[100.0, 1000.0], n_folds=4, n_jobs=2,
                           tol=1e-14, max_iter=100000)
    finally:
        timer.cancel()
    assert time.perf_counter() - t0 < 5.0          # each fold's dcd solve takes ~10 s
    assert not [th for th in set(threading.enumerate()) - before if th.is_alive()]
