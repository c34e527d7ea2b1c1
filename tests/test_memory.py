"""Memory by feature index: estimates, refusals, renumbering."""
import os
import subprocess
import sys
import tracemalloc
import warnings

import numpy as np
import pytest

import linsvm
import scipy.sparse as sp

from linsvm import cli
from linsvm.runtime import memory
from linsvm.io.features import read_feature_map, renumber_features, write_feature_map
from linsvm.io.svmlight import dump_svmlight, load_svmlight
from linsvm.errors import DataError
from linsvm.problem import CSRBuffers, n_weights
from linsvm.solvers import SOLVERS
from linsvm import train

from conftest import child_env, invoke, random_problem, wide_sparse_problem

_LIMITED = r"""
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from linsvm.cli import main
sys.argv = ["linsvm"] + sys.argv[1:]
main()
"""


def run_limited(args, limit=3 << 29):
    """`linsvm ARGS` in a subprocess whose address space is capped at `limit` bytes."""
    env = child_env(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")   # no per-core buffers at import
    return subprocess.run([sys.executable, "-c", _LIMITED.format(limit=limit)] + args,
                          capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.subprocess
@pytest.mark.parametrize("solver", ["mfn", "sdm-cs", "perf"])
def test_memory_by_feature_index_is_one_line_error(tmp_path, solver):
    """`1 2147483647:1` made every solver allocate 16-256 GiB: a traceback
    ("Unable to allocate ...") under a memory limit.  Now one line naming the
    largest index and the remedy, exit status 1, nothing written."""
    data = tmp_path / "huge.svm"
    data.write_text("1 2147483647:1\n-1 1:1\n2 3:1\n" if solver == "sdm-cs" else
                    "1 2147483647:1\n-1 1:1\n")
    model = tmp_path / "m"
    r = run_limited(["train", "-q", "-s", solver, str(data), str(model)])
    assert r.returncode == 1, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    assert lines[0].startswith("linsvm train: error: training -s " + solver)   # python -m linsvm train
    assert "2147483647" in lines[0] and "linsvm renumber" in lines[0]
    assert "RLIMIT_AS" in lines[0] or "MemAvailable" in lines[0]     # whichever is smaller
    assert not model.exists() and os.listdir(tmp_path) == ["huge.svm"]


@pytest.mark.subprocess
def test_available_sees_rlimit_as():
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30));"
            "from linsvm.runtime import memory; print(*memory.available())")
    env = child_env(OPENBLAS_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True).stdout.split()
    assert int(out[0]) < 1 << 30                # the cap, less what Python already maps
    assert out[1] in ("RLIMIT_AS", "MemAvailable", "cgroup")  # RLIMIT_AS unless memory is tighter


def test_memory_error_is_one_line_at_the_cli(tmp_path, monkeypatch):
    """A MemoryError that slips past the estimate (or comes from elsewhere)
    ends as one line, exit status 1."""
    data = tmp_path / "d.svm"
    X, y = random_problem(20, 5)
    dump_svmlight(X, y, str(data))

    def boom(*a, **k):
        raise MemoryError("Unable to allocate 16.0 GiB for an array with shape (2147483648,)")

    import importlib

    monkeypatch.setattr(importlib.import_module("linsvm.cli.run_train"), "train", boom)
    r = invoke(cli.cli, "train", "-q", str(data), str(tmp_path / "m"))
    assert r.exit_code == 1
    assert r.output.count("\n") == 1 and "out of memory (Unable to allocate 16.0 GiB" in r.output
    assert "renumber" in r.output and "Traceback" not in r.output


def test_refusal_names_distinct_features(monkeypatch):
    monkeypatch.setattr(memory, "available", lambda: (1 << 20, "MemAvailable"))
    X = sp.csr_matrix((np.ones(3), np.array([4, 9, 999_999]), np.array([0, 2, 3])),
                      shape=(2, 1_000_000))
    with pytest.raises(DataError) as e:
        train(X, [1, -1], solver="mfn")
    msg = str(e.value)
    assert "largest feature index, 1000000" in msg and "use 3 distinct features" in msg
    assert "1.0 MiB is available (MemAvailable)" in msg


def test_slow_but_fitting_run_says_why():
    X = sp.csr_matrix((np.ones(2), np.array([0, (1 << 21) - 1]), np.array([0, 1, 2])),
                      shape=(2, 1 << 21))
    lines = []
    train(X, [1, -1], solver="dcd", log=lines.append)
    assert any(line.startswith("note: 2097152 features but 2 non-zeros") for line in lines)


@pytest.mark.slow
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_estimate_covers_the_solve(solver):
    """The estimate is an upper bound of what the solve allocates (tracemalloc
    sees numpy's arrays) and not wildly above it, on a problem whose memory is
    dominated by the weight length, as in the cases it must refuse."""
    info = SOLVERS[solver]
    d = 1 << 18
    rng = np.random.default_rng(0)
    n = 40
    cols = rng.integers(0, d, 4 * n)
    X = sp.csr_matrix((rng.standard_normal(4 * n), cols, np.arange(0, 4 * n + 1, 4)),
                      shape=(n, d))
    X.sort_indices()
    y = np.tile([1.0, 2.0, 3.0], n)[:n] if info.kind != "binary" else np.tile([1.0, -1.0], n // 2)
    Xb = CSRBuffers(X)
    est = info.memory(n, n_weights(d, 1.0), len(set(y)), Xb.nnz, {})
    linsvm.ConvergenceWarning    # made on first use (imports scikit-learn): not the solve's memory
    if info.kind in ("regression", "oneclass"):      # not in train() yet: the fit contract
        from linsvm.problem import Problem
        from linsvm.solvers import make_params
        prob = Problem(Xb, np.arange(n, dtype=np.int64), np.ones(n),
                       -1.0 if info.kind == "oneclass" else 1.0,
                       t=y if info.kind == "regression" else None)
        params = make_params(info, options={"max_iter": 3})
    tracemalloc.start()
    try:
        if info.kind in ("regression", "oneclass"):
            info.fit(prob, params, None, None, None)
        else:
            train(Xb, y, solver=solver, max_iter=3) if "max_iter" in info.options else train(Xb, y, solver=solver)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= est <= 8 * max(peak, 8 * d), (peak, est)


@pytest.mark.parametrize("solver", ["mfn", "lr"])
def test_one_vs_rest_holds_each_column_once(solver):
    """One-vs-rest keeps every column's weights once, in the model's matrix: on a problem
    whose memory is its weights (40 classes, 2^16 features, few rows, one column at a
    time), the peak is the matrix plus one column's solve (its estimate), not two
    matrices (each column's result used to keep its own copy)."""
    info = SOLVERS[solver]
    n, d, k = 400, 1 << 16, 40
    rng = np.random.default_rng(1)
    cols = rng.integers(0, d, 4 * n)
    X = sp.csr_matrix((rng.random(4 * n), cols, np.arange(0, 4 * n + 1, 4)), shape=(n, d))
    X.sum_duplicates()
    y = np.arange(n) % k + 1.0
    Xb = CSRBuffers(X)
    nw = n_weights(d, 1.0)
    matrix = 8 * nw * k
    column = info.memory(n, nw, 2, Xb.nnz, {})
    linsvm.ConvergenceWarning    # made on first use (imports scikit-learn): not the solve's memory
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            train(Xb, y, solver=solver, n_jobs=1, max_iter=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= matrix + column + 8 * nw, (peak / (8 * nw), matrix / (8 * nw), column / (8 * nw))


@pytest.mark.parametrize("solver", ["perf", "perf-ord"])
def test_cutting_planes_hold_each_constraint_once(solver):
    """The cutting-plane working set holds one row of n_weights per constraint it ever held
    at once, and about 16 rows of room: on a problem whose memory is its cuts (2^16
    features, few rows), the peak is at most k_max + 16 rows of the weights' length plus a
    few vectors (w, the new cut, the model).  The store used to be one matrix that doubled
    (the old and the new one at once) and was copied whole into the result at the end."""
    n, d = 300, 1 << 16
    X, s = wide_sparse_problem(n, d, 4, seed=3)
    if solver == "perf-ord":
        y = np.digitize(s, np.quantile(s, [1 / 3, 2 / 3])) + 1.0
    else:
        y = np.where(s > np.median(s), 1.0, -1.0)
    Xb, row = CSRBuffers(X), 8 * n_weights(d, 1.0)
    lines = []
    linsvm.ConvergenceWarning    # made on first use (imports scikit-learn): not the solve's memory
    tracemalloc.start()
    try:
        train(Xb, y, solver=solver, C=1.0, log=lines.append)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    held = [int(line.split("constraints")[1].split()[0]) for line in lines if " iter " in line]
    assert max(held) >= 16                    # past the first 16 rows: the store grew
    assert peak <= (max(held) + 16 + 6) * row, (peak / row, max(held))


# The factor within which a streaming solver's estimate must hold its per-row peak:
# est <= ROW_FACTOR peak (not far above it) and peak <= ROW_SLACK est (an upper bound, up
# to the small temporaries no estimate lists).
ROW_FACTOR, ROW_SLACK = 1.25, 1.05


def _row_problem(kind, n=60_000, d=1000, per_row=20, seed=0):
    """A problem whose memory is its rows': n rows of per_row non-zeros over d features,
    with labels of `kind` (binary, three classes or levels, or real targets)."""
    rng = np.random.default_rng(seed)
    cols = np.sort(rng.choice(d, size=(n, per_row)), axis=1)
    X = sp.csr_matrix((rng.standard_normal(n * per_row), cols.ravel(),
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    s = X @ rng.standard_normal(d)
    if kind == "binary":
        y = np.where(s > 0, 1.0, -1.0)
    elif kind in ("multiclass", "ordinal"):
        y = np.digitize(s, np.quantile(s, [1 / 3, 2 / 3])) + 1.0
    else:
        y = s + 0.1 * rng.standard_normal(n)
    return CSRBuffers(X), y


# the streaming solvers whose solve here runs longer than a quick test may (a hand-over to
# mfn-l1, its continuation stages)
_LONG_ROW_SOLVES = {"alm", "alm-exact", "mfn-l1"}


@pytest.mark.parametrize("solver", [
    pytest.param(n, marks=pytest.mark.slow) if n in _LONG_ROW_SOLVES else n
    for n in sorted(n for n, i in SOLVERS.items() if i.streams)])
def test_streaming_estimate_matches_the_per_row_peak(solver):
    """The solvers that read the rows in passes hold per row only what their estimate
    lists (SolverInfo.memory: the solve's arrays and the labels train() builds), so that
    short rows do not outweigh the data: on a problem whose memory is its rows', the
    estimate plus train()'s row list and costs (16 bytes a row, made before its check) is
    within ROW_FACTOR of the peak tracemalloc sees during train(), and not below it."""
    info = SOLVERS[solver]
    Xb, y = _row_problem(info.kind)
    n, k = Xb.n_rows, len(set(y))
    est = info.memory(n, n_weights(Xb.n_features, 1.0), k, Xb.nnz, {}) + 16 * n
    linsvm.ConvergenceWarning    # made on first use (imports scikit-learn): not the solve's memory
    tracemalloc.start()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")         # three iterations: not converged
            train(Xb, y, solver=solver, max_iter=3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= ROW_SLACK * est and est <= ROW_FACTOR * peak, (peak / n, est / n)


# ---------------------------------------------------------------------------
# linsvm renumber
# ---------------------------------------------------------------------------

@pytest.mark.slow
def test_renumber_trains_the_same_model(tmp_path):
    """Training on renumbered data and predicting through the same map gives
    the decision values of the original model (unused features weigh 0)."""
    rng = np.random.default_rng(1)
    X, y = random_problem(80, 12, seed=2)
    spread = np.sort(rng.choice(np.arange(50, 5_000_000), 12, replace=False))
    big = sp.csr_matrix((X.data, spread[X.indices], X.indptr), shape=(80, int(spread[-1]) + 1))
    src, test = tmp_path / "train.svm", tmp_path / "test.svm"
    dump_svmlight(big[:60], y[:60], str(src))
    extra = big[60:].tolil()
    extra[:, 7] = 1.0                                   # a feature training never saw
    dump_svmlight(extra.tocsr(), y[60:], str(test))
    for args in (["renumber", str(src), str(tmp_path / "train.rn"), str(tmp_path / "map")],
                 ["renumber", "--apply", str(test), str(tmp_path / "test.rn"), str(tmp_path / "map")]):
        r = invoke(cli.cli, *args)
        assert r.exit_code == 0, r.output
    fmap = read_feature_map(tmp_path / "map")
    Xtr, ytr = load_svmlight(src)
    assert np.array_equal(fmap, np.unique(Xtr.indices) + 1)
    Xr, yr = load_svmlight(tmp_path / "train.rn")
    assert Xr.shape[1] == fmap.shape[0] <= 12
    m_big = train(Xtr, ytr, solver="mfn", tol=1e-10)
    m_small = train(Xr, yr, solver="mfn", tol=1e-10)
    Xte, _ = load_svmlight(test)
    Xte_r, _ = load_svmlight(tmp_path / "test.rn", n_features=fmap.shape[0])
    np.testing.assert_allclose(m_small.decision_function(Xte_r), m_big.decision_function(Xte),
                               rtol=1e-7, atol=1e-9)


def test_renumber_features_keeps_values_and_order():
    X = sp.csr_matrix(np.array([[0, 2.0, 0, 0, 3.0], [0, 0, 0, 0, 0], [1.0, 0, 0, 0, -1.0]]))
    Xr, fmap = renumber_features(X)
    assert fmap.tolist() == [1, 2, 5]
    assert np.array_equal(Xr.toarray(), X.toarray()[:, [0, 1, 4]])
    Xa, _ = renumber_features(X, np.array([2, 5, 9]))
    assert np.array_equal(Xa.toarray(), X.toarray()[:, [1, 4, 4]] * [1, 1, 0])


@pytest.mark.parametrize("body, line", [(b"", 1), (b"# other\n1\n", 1), (b"3\n2\n", 3),
                                       (b"1\nx\n", 3), (b"0\n", 2), (b"2147483648\n", 2)])
def test_bad_feature_map_names_the_line(tmp_path, body, line):
    path = tmp_path / "map"
    path.write_bytes(body if body.startswith(b"# other") or not body else
                     b"# linsvm feature map: line k holds the original index of feature k\n" + body)
    with pytest.raises(DataError, match=rf"^{path}:{line}: "):
        read_feature_map(path)


def test_feature_map_round_trip(tmp_path):
    fmap = np.array([3, 17, 2147483647])
    write_feature_map(tmp_path / "m", fmap)
    assert np.array_equal(read_feature_map(tmp_path / "m"), fmap)
