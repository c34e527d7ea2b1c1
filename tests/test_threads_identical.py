"""Results that do not depend on the thread count (csr.pxd: the scatter X'u sums fixed
row blocks in a fixed order, whatever the number of threads).

The kernels are compared bit for bit across thread counts and against scipy in value;
the Newton-type solvers, whose every weight passes through that scatter, must then give
the same model bit for bit at -m 1 and -m 2."""
from functools import partial

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm import _testing
from linsvm._data import DataView
from linsvm.problem.csr import CSRBuffers

from conftest import augmented

THREADS = (1, 2, 3, 8)


def _matrix(n, d, density, seed):
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    X.data = X.data * 2.0 - 1.0
    return X


# (n, d, density): many row blocks; a few (n just above two blocks); one block (short).
SHAPES = [(6000, 80, 0.2), (200, 30, 0.6), (90, 400, 0.05)]


@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("shape", SHAPES)
def test_scatter_is_bitwise_the_same_for_every_thread_count(shape, bias):
    X = _matrix(*shape, seed=1)
    rng = np.random.default_rng(2)
    rows = rng.permutation(X.shape[0])[: 2 * X.shape[0] // 3].astype(np.int64)
    u = rng.standard_normal(rows.size)
    V = DataView(CSRBuffers(X), bias, rows)
    Xa = X[rows]
    if bias > 0:
        Xa = sp.hstack([Xa, np.ones((rows.size, 1))]).tocsr()
    outs = [_testing.csr_rmatvec(V, u, t) for t in THREADS]
    np.testing.assert_allclose(outs[0], Xa.T @ u, rtol=1e-11, atol=1e-11)
    for t, out in zip(THREADS[1:], outs[1:]):
        assert out.tobytes() == outs[0].tobytes(), f"{t} threads differ from 1"


@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("shape", SHAPES)
def test_fused_normal_matvec_is_bitwise_the_same_for_every_thread_count(shape, unit):
    X = _matrix(*shape, seed=3)
    if unit:
        X.data[:] = 1.0
    rng = np.random.default_rng(4)
    rows = np.arange(X.shape[0], dtype=np.int64)
    p = rng.standard_normal(X.shape[1] + 1)
    c = rng.uniform(0.0, 2.0, X.shape[0])
    args = (DataView(CSRBuffers(X), 1.0, rows), p, c)
    Xa = augmented(X)
    q_ref = Xa @ p
    outs = [_testing.csr_normal_matvec(*args, n_threads=t, pattern=unit) for t in THREADS]
    q, h, qcq = outs[0]
    np.testing.assert_allclose(q, q_ref, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(h, Xa.T @ (c * q_ref), rtol=1e-10, atol=1e-10)
    assert qcq == pytest.approx(q_ref @ (c * q_ref), rel=1e-11)
    for t, (q_t, h_t, qcq_t) in zip(THREADS[1:], outs[1:]):
        assert q_t.tobytes() == q.tobytes() and h_t.tobytes() == h.tobytes(), f"{t} threads"
        assert qcq_t == qcq, f"{t} threads: q'Cq differs"


def _classification(n=4000, d=60, seed=5):
    X = _matrix(n, d, 0.25, seed)
    w = np.random.default_rng(seed).standard_normal(d)
    score = X @ w
    return X, np.where(score > np.median(score), 1.0, -1.0), score


def _fit(solver, X, y, n_threads):
    return linsvm.train(X, y, solver=solver, C=1.0, n_threads=n_threads)


THREADED = ["mfn", "ls", "mfn-huber", "mfn-l1", "mfn-ord", "alm", "alm-exact", "perf", "perf-ord",
            "svr", "lr", "softmax", "cdn", "glmnet"]


@pytest.mark.slow
@pytest.mark.parametrize("solver", THREADED)
def test_models_are_bitwise_the_same_on_one_and_two_threads(solver):
    """Every solver with --n-threads (the registry's option) is covered."""
    X, y, score = _classification()
    if solver == "svr":
        y = score
    elif solver.endswith("-ord") or solver == "softmax":
        y = 1.0 + np.searchsorted(np.quantile(score, [0.3, 0.7]), score)    # levels 1..3
    one = _fit(solver, X, y, n_threads=1)
    two = _fit(solver, X, y, n_threads=2)
    assert one.weights.tobytes() == two.weights.tobytes()
    assert one.stats["n_iter"] == two.stats["n_iter"]
    if solver.endswith("-ord"):
        assert np.asarray(one.thresholds_).tobytes() == np.asarray(two.thresholds_).tobytes()


def test_every_threaded_solver_is_covered():
    from linsvm.problem.catalog import SOLVERS
    assert {name for name, info in SOLVERS.items() if "n_threads" in info.options} <= set(THREADED)


def test_one_vs_rest_spends_m_threads_on_its_columns():
    """-m N > 1 without -j on more than two classes runs N columns at once, one kernel thread
    each (each column's log line then carries its class), and the model is the one of
    -m 1, bit for bit; -m N with -j 1 keeps the columns in turn, N kernel threads each."""
    rng = np.random.default_rng(3)
    X = _matrix(600, 40, 0.2, 3)
    y = 1.0 + rng.integers(0, 4, size=600)
    logs = {}
    models = {}
    for key, opts in {"m1": dict(n_threads=1, n_jobs=1), "m2": dict(n_threads=2),
                      "m2j1": dict(n_threads=2, n_jobs=1)}.items():
        lines = []
        models[key] = linsvm.train(X, y, solver="mfn", C=1.0, log=lines.append, **opts)
        logs[key] = lines
    assert any(ln.startswith("class 1: ") for ln in logs["m2"])
    assert "class 1 vs rest" in logs["m2j1"] and "class 1 vs rest" in logs["m1"]
    assert models["m1"].weights.tobytes() == models["m2"].weights.tobytes()
    assert models["m1"].weights.tobytes() == models["m2j1"].weights.tobytes()


def test_an_active_subset_scatters_in_two_blocks_when_the_scratch_holds_one():
    """csr_passes.pxd: a subset whose rule gives one block takes a second one when the
    whole matrix's scratch holds it and the subset carries z >= n_weights / 2 -- so its
    scatter runs on two threads -- with the same bits for every thread count; a matrix
    too sparse for any scratch keeps one block (no memory is added)."""
    X = _matrix(4000, 500, 0.04, seed=12)
    rng = np.random.default_rng(13)
    rows = np.sort(rng.permutation(X.shape[0])[:300]).astype(np.int64)
    V = DataView(CSRBuffers(X), 1.0, rows)
    z = X[rows].nnz
    assert 1 + 12 * z / (192 * V.n_weights) < 2 and 2 * z >= V.n_weights
    assert _testing.csr_scatter_blocks(V, rows.size) == 2
    u = rng.standard_normal(rows.size)
    p = rng.standard_normal(V.n_weights)
    c = rng.uniform(0.0, 2.0, rows.size)
    Xa = augmented(X[rows])
    outs = [_testing.csr_rmatvec(V, u, t) for t in THREADS]
    fused = [_testing.csr_normal_matvec(V, p, c, n_threads=t) for t in THREADS]
    np.testing.assert_allclose(outs[0], Xa.T @ u, rtol=1e-11, atol=1e-11)
    np.testing.assert_allclose(fused[0][1], Xa.T @ (c * (Xa @ p)), rtol=1e-10, atol=1e-10)
    for t, out, (q, h, qcq) in zip(THREADS[1:], outs[1:], fused[1:]):
        assert out.tobytes() == outs[0].tobytes(), f"{t} threads differ from 1"
        assert h.tobytes() == fused[0][1].tobytes() and qcq == fused[0][2], f"{t} threads"
    cols = np.sort(rng.choice(20000, size=(4000, 20)), axis=1).ravel()   # density 0.001
    sparse = sp.csr_matrix((rng.uniform(-1.0, 1.0, cols.size), cols,
                            np.arange(0, cols.size + 1, 20)), shape=(4000, 20000))
    sparse.sum_duplicates()
    wide = DataView(CSRBuffers(sparse), 1.0, np.arange(4000, dtype=np.int64))
    assert _testing.csr_scatter_blocks(wide, 4000) == 1


@pytest.mark.parametrize("solver", ["mfn", "lr"])
@pytest.mark.parametrize("n, d, per_row", [(3000, 70000, 20), (70000, 40, 8)])
def test_newton_passes_over_long_vectors_are_the_same_on_every_thread_count(solver, n, d,
                                                                            per_row):
    """chunked.pxd: from 65,536 entries the passes over the weights (CGLS's move, s = minv r,
    the direction and their sums; ||w||^2) and over the examples (the line search's pass
    over the terms, the trial margins, the loss's sum) run in fixed chunks shared out among
    the threads: the model is the same bit for bit at 1, 2 and 3 threads, and it is the
    optimum (the gradient of the primal objective at it is small against its value at
    w = 0)."""
    rng = np.random.default_rng(21)
    cols = np.sort(rng.choice(d, size=(n, per_row)), axis=1).ravel()
    X = sp.csr_matrix((rng.uniform(-1.0, 1.0, n * per_row), cols,
                       np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    w_true = rng.standard_normal(d)
    y = np.where(X @ w_true > 0, 1.0, -1.0)
    models = [linsvm.train(X, y, solver=solver, C=1.0, tol=1e-6, n_threads=t) for t in (1, 2, 3)]
    for t, m in zip((2, 3), models[1:]):
        assert m.weights.tobytes() == models[0].weights.tobytes(), f"{t} threads"
    Xa = augmented(X)
    w = models[0].weights.ravel()
    t = y if models[0].classes_[0] == 1.0 else -y
    m = t * (Xa @ w)
    if solver == "mfn":             # 1/2 w'w + C sum max(0, 1 - m)^2
        grad = w - 2.0 * Xa.T @ (t * np.maximum(0.0, 1.0 - m))
        grad0 = -2.0 * Xa.T @ t
    else:                           # 1/2 w'w + C sum log(1 + exp(-m))
        grad = w - Xa.T @ (t / (1.0 + np.exp(m)))
        grad0 = -0.5 * Xa.T @ t
    assert np.linalg.norm(grad) <= 1e-4 * np.linalg.norm(grad0)


@pytest.mark.parametrize("layout", ["float64", "float32", "pattern", "row_scale"])
def test_a_contiguous_copy_of_few_active_rows_changes_nothing_but_speed(layout, monkeypatch):
    """csrc/mfn_losses.pxd: a Newton step whose zone 1 holds at most a quarter of the rows
    runs CGLS over a contiguous copy of them (csr.pxd, gather_rows).  On imbalanced data
    (3% positives: zone 1 is a few percent of the rows) mfn and mfn-l1 end at the model
    of the rows read in place, in each value layout, and the same on 1, 2 and 3 threads
    (mfn-l1 at -e 0.1: 150 CGLS iterations where its default takes 1,500, each ending at
    a barrier, which take seconds on threads sharing two cores with another test)."""
    import linsvm.solvers.mfn as mfn_module
    rng = np.random.default_rng(5)
    n, d, per_row = 6000, 3000, 12
    cols = np.sort(rng.choice(d, size=(n, per_row)), axis=1).ravel()
    vals = np.ones(n * per_row) if layout == "pattern" else rng.uniform(0.1, 1.0, n * per_row)
    X = sp.csr_matrix((vals, cols, np.arange(0, n * per_row + 1, per_row)), shape=(n, d))
    X.sum_duplicates()
    if layout == "pattern":
        X.data[:] = 1.0
    elif layout == "row_scale":                 # one value per row: unit rows of 0/1 terms
        X.data[:] = np.repeat(1.0 / np.sqrt(np.diff(X.indptr)), np.diff(X.indptr))
    elif layout == "float32":
        X = X.astype(np.float32)
    w_true = rng.standard_normal(d)
    score = X @ w_true
    y = np.where(score > np.quantile(score, 0.97), 1.0, -1.0)
    for solver in ("mfn", "mfn-l1"):
        tol = None if solver == "mfn" else 0.1
        copied = [linsvm.train(X, y, solver=solver, C=1.0, tol=tol, n_threads=t)
                  for t in (1, 2, 3)]
        for t, m in zip((2, 3), copied[1:]):
            assert m.weights.tobytes() == copied[0].weights.tobytes(), (solver, t)
        with monkeypatch.context() as mp:
            mp.setattr(mfn_module, "Newton", partial(mfn_module.Newton, compact_rows=False))
            in_place = linsvm.train(X, y, solver=solver, C=1.0, tol=tol, n_threads=1)
        assert in_place.stats["n_iter"] == copied[0].stats["n_iter"], solver
        np.testing.assert_allclose(copied[0].weights, in_place.weights, rtol=0, atol=1e-12)
