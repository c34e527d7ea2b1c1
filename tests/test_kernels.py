"""The shared CSR kernels (csrc/csr.pxd) against scipy, serial and threaded."""
import platform

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm import _kernels, _testing
from linsvm._data import DataView
from linsvm.problem.csr import CSRBuffers


def view(X, bias, rows=None):
    """The cores' view of scipy matrix X's rows (every row for None) with the bias feature."""
    return DataView(CSRBuffers(X), bias, rows)


@pytest.mark.parametrize("n_threads", [1, 2, 3])
@pytest.mark.parametrize("bias", [-1.0, 0.5])
@pytest.mark.parametrize("shape,density", [((3000, 40), 0.3), ((500, 5000), 0.01), ((50, 7), 0.5)])
def test_matvec_and_rmatvec_match_scipy(n_threads, bias, shape, density):
    rng = np.random.default_rng(0)
    X = sp.random(*shape, density=density, format="csr", random_state=1)
    keep = np.ones(shape[0])
    keep[3] = 0.0                         # an empty row
    X = (sp.diags(keep) @ X).tocsr()
    X.eliminate_zeros()
    assert X.indptr[3] == X.indptr[4]
    n = shape[1]
    nw = n + (1 if bias > 0 else 0)
    rows = rng.permutation(shape[0])[: shape[0] // 2 + 1].astype(np.int64)
    Xa = X[rows]
    if bias > 0:
        Xa = sp.hstack([Xa, np.full((rows.size, 1), bias)]).tocsr()
    w = rng.standard_normal(nw)
    u = rng.standard_normal(rows.size)
    u[::5] = 0.0                          # skipped rows
    V = view(X, bias, rows)
    np.testing.assert_allclose(_kernels.csr_matvec(V, w, n_threads), Xa @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_testing.csr_rmatvec(V, u, n_threads), Xa.T @ u, rtol=1e-12, atol=1e-12)


def test_rmatvec_is_reproducible_for_a_thread_count():
    X = sp.random(20000, 50, density=0.2, format="csr", random_state=3)
    rows = np.arange(20000, dtype=np.int64)
    u = np.random.default_rng(1).standard_normal(20000)
    args = (view(X, 1.0, rows), u, 2)
    assert _testing.csr_rmatvec(*args).tobytes() == _testing.csr_rmatvec(*args).tobytes()


def test_empty_row_list():
    X = sp.random(10, 4, density=0.5, format="csr", random_state=0)
    rows = np.empty(0, dtype=np.int64)
    V = view(X, 1.0, rows)
    assert _kernels.csr_matvec(V, np.ones(5)).shape == (0,)
    np.testing.assert_array_equal(_testing.csr_rmatvec(V, np.empty(0)), np.zeros(5))


def _ragged(n_rows, n_cols, seed, unit):
    """Rows of every length 0..9 (all remainders of the 4-way split dot), 0/1 or real values."""
    rng = np.random.default_rng(seed)
    lengths = np.arange(n_rows) % 10
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    indices = np.concatenate([np.sort(rng.choice(n_cols, size=k, replace=False)) for k in lengths]).astype(np.int32)
    data = np.ones(indices.size) if unit else rng.standard_normal(indices.size)
    return sp.csr_matrix((data, indices, indptr), shape=(n_rows, n_cols))


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("bias", [-1.0, 0.5])
@pytest.mark.parametrize("unit", [False, True])
def test_normal_matvec_is_x_then_xt_c(n_threads, bias, unit):
    # the fused CGLS pass: q = X p, h = X'(c q), q'Cq, against scipy
    X = _ragged(700, 40, 2, unit)
    rng = np.random.default_rng(5)
    rows = rng.permutation(700)[:600].astype(np.int64)
    nw = 40 + (1 if bias > 0 else 0)
    Xa = X[rows]
    if bias > 0:
        Xa = sp.hstack([Xa, np.full((rows.size, 1), bias)]).tocsr()
    p = rng.standard_normal(nw)
    c = rng.uniform(0.0, 2.0, rows.size)
    c[::7] = 0.0                          # rows with no weight scatter nothing
    q, h, qcq = _testing.csr_normal_matvec(view(X, bias, rows), p, c, n_threads=n_threads,
                                           pattern=unit)
    np.testing.assert_allclose(q, Xa @ p, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, Xa.T @ (c * (Xa @ p)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qcq, np.sum(c * (Xa @ p) ** 2), rtol=1e-12)


@pytest.mark.parametrize("bias", [-1.0, 1.0])
def test_index_only_kernels_equal_the_general_ones_bit_for_bit(bias):
    # on 0/1 data, reading only the indices must give exactly the same numbers
    X = _ragged(500, 30, 3, unit=True)
    rows = np.arange(500, dtype=np.int64)
    rng = np.random.default_rng(0)
    nw = 30 + (1 if bias > 0 else 0)
    w, u = rng.standard_normal(nw), rng.standard_normal(500)
    V = view(X, bias, rows)
    assert _kernels.csr_matvec(V, w, pattern=True).tobytes() == _kernels.csr_matvec(V, w).tobytes()
    assert _testing.csr_rmatvec(V, u, pattern=True).tobytes() == _testing.csr_rmatvec(V, u).tobytes()
    # one value that is not 1.0 turns the index-only path off for the whole matrix
    X.data[17] = 2.0
    V = view(X, bias, rows)
    np.testing.assert_allclose(_kernels.csr_matvec(V, w, pattern=True),
                               (X @ w[:30]) + (bias * w[30] if bias > 0 else 0.0), rtol=1e-13)


def test_check_csr_finds_the_first_problem():
    ip = np.array([0, 1, 2], dtype=np.int64)
    ind = np.array([0, 2], dtype=np.int32)
    assert _kernels.check_csr(ip, ind, np.array([1.0, 2.0]), 3) == (0, -1)
    assert _kernels.check_csr(np.array([0, 2, 1, 2], dtype=np.int64), np.array([0, 1], dtype=np.int32),
                              np.array([1.0, 2.0]), 3)[0] == 1
    assert _kernels.check_csr(ip, ind, np.array([1.0, 2.0]), 2) == (2, 1)
    assert _kernels.check_csr(ip, np.array([-1, 0], dtype=np.int32), np.array([1.0, 2.0]), 3) == (2, 0)
    for bad in (np.nan, np.inf, -np.inf):
        assert _kernels.check_csr(ip, ind, np.array([1.0, bad]), 3) == (3, 1)


def test_scan_labels_is_first_appearance_order_and_finds_non_finite():
    rng = np.random.default_rng(4)
    for k in (1, 2, 5, 64, 65, 300):
        y = rng.integers(0, k, 2000).astype(np.float64) * 0.5 - 3.0
        labels, bad = _kernels.scan_labels(y, 64)
        values, first = np.unique(y, return_index=True)
        expect = values[np.argsort(first)]
        if expect.size > 64:
            assert labels is None and bad == -1       # too many: the caller sorts
        else:
            np.testing.assert_array_equal(labels, expect)
        y[1500] = np.nan
        assert _kernels.scan_labels(y, 64) == (None, 1500)
    assert _kernels.scan_labels(np.array([0.0, -0.0, 1.0]))[0].tolist() == [0.0, 1.0]


def test_csr_buffers_name_what_is_wrong():
    from linsvm.errors import DataError
    from linsvm.problem import CSRBuffers
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 0.0]]))
    bad = X.copy()
    bad.data[2] = np.inf
    with pytest.raises(DataError, match=r"^X: non-finite value in row 3$"):
        CSRBuffers(bad)
    bad = sp.csr_matrix((np.ones(2), np.array([0, 5]), np.array([0, 1, 2])), shape=(2, 6))
    bad._shape = (2, 2)                   # a matrix whose indices exceed its declared width
    with pytest.raises(DataError, match=r"column index out of range \[0, 2\)"):
        CSRBuffers(bad)
    assert CSRBuffers(X).n_rows == 3


def test_binary_targets_and_all_finite_agree_with_numpy():
    rng = np.random.default_rng(8)
    y = rng.integers(0, 3, 500).astype(np.float64) - 1.0
    for positive in (-1.0, 0.0, 1.0, 7.0):
        np.testing.assert_array_equal(_kernels.binary_targets(y, positive),
                                      np.where(y == positive, 1.0, -1.0))
    W = rng.standard_normal((40, 3))
    assert _kernels.all_finite(W) and _kernels.all_finite(np.empty((0, 2)))
    for bad in (np.nan, np.inf, -np.inf):
        V = W.copy()
        V[39, 2] = bad
        assert not _kernels.all_finite(V)


def _unit_rows(X):
    """X's pattern with every row scaled to unit length: one value per row."""
    X = X.copy()
    counts = np.diff(X.indptr)
    X.data = np.repeat(1.0 / np.sqrt(np.maximum(counts, 1)), counts)
    return X


@pytest.mark.parametrize("bias", [-1.0, 1.0])
@pytest.mark.parametrize("n_threads", [1, 2])
def test_row_scaled_kernels_match_scipy(bias, n_threads):
    """Rows with one value each (binary terms scaled to unit rows, an empty row among them)
    take the index-only path with one scale per row (csr.pxd row_scale): the same numbers
    as scipy's to rounding, for every kernel of a CGLS iteration."""
    X = _unit_rows(_ragged(600, 40, 4, unit=True))
    X.data[X.indptr[5]:X.indptr[6]] = 0.0                       # a row of explicit zeros
    rows = np.arange(600, dtype=np.int64)
    rng = np.random.default_rng(1)
    nw = 40 + (1 if bias > 0 else 0)
    w, u, c = rng.standard_normal(nw), rng.standard_normal(600), rng.random(600)
    Xa = sp.hstack([X, np.full((600, 1), bias)]).tocsr() if bias > 0 else X
    V = view(X, bias, rows)
    np.testing.assert_allclose(_testing.csr_rmatvec(V, u, n_threads=n_threads, pattern=True),
                               Xa.T @ u, rtol=1e-13, atol=1e-13)
    q, h, qcq = _testing.csr_normal_matvec(V, w, c, n_threads=n_threads, pattern=True)
    np.testing.assert_allclose(q, Xa @ w, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(h, Xa.T @ (c * (Xa @ w)), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(qcq, np.sum(c * (Xa @ w) ** 2), rtol=1e-12)
    np.testing.assert_allclose(_testing.csr_col_sq_sums(V, c, n_threads=n_threads, pattern=True),
                               Xa.multiply(Xa).T @ c, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("bias", [-1.0, 0.5])
def test_multi_column_scores_and_their_transpose_match_scipy(bias):
    """csr_scores (every row, or a subset of rows, repeated rows included; columns past
    the model's width ignored), csr_transposed_scores (the same subset) and
    max_row_sq_norm against scipy."""
    rng = np.random.default_rng(4)
    X = sp.random(300, 60, density=0.1, format="csr", random_state=5)
    width, k = 50, 3                                  # columns 50..59 lie past the model
    Xw = X[:, :width]
    Xa = X
    if bias > 0:
        Xw = sp.hstack([Xw, np.full((300, 1), bias)]).tocsr()
        Xa = sp.hstack([X, np.full((300, 1), bias)]).tocsr()
    W = rng.standard_normal((Xw.shape[1], k))
    np.testing.assert_allclose(_kernels.csr_scores(view(X, bias), W), Xw @ W,
                               rtol=1e-12, atol=1e-12)
    rows = np.concatenate([rng.permutation(300)[:120], [7, 7]]).astype(np.int64)
    np.testing.assert_allclose(_kernels.csr_scores(view(X, bias, rows), W),
                               Xw[rows] @ W, rtol=1e-12, atol=1e-12)
    M = rng.standard_normal((rows.size, k))
    np.testing.assert_allclose(_kernels.csr_transposed_scores(view(X, bias, rows), M),
                               Xa[rows].T @ M, rtol=1e-12, atol=1e-12)
    norms = np.asarray(Xa[rows].multiply(Xa[rows]).sum(1)).ravel()
    top, bad = _kernels.max_row_sq_norm(view(X, bias, rows))
    assert bad == -1 and top == pytest.approx(norms.max(), rel=1e-13)


def test_vdot_sums_in_index_order_on_one_thread():
    """The solvers' Python-layer dot product (numpy's BLAS would split the sum by the
    machine's cores): bit for bit the left-to-right sum, whatever the length."""
    from linsvm._kernels import vdot
    rng = np.random.default_rng(7)
    for n in (0, 1, 7, 100_003):
        a = rng.normal(size=n) * np.exp(rng.normal(scale=8, size=n))   # rounding matters
        b = rng.normal(size=n)
        want = 0.0
        for x, y in zip(a.tolist(), b.tolist()):
            want += x * y
        if platform.machine() in ("x86_64", "AMD64"):      # no fused multiply-adds
            assert vdot(a, b) == want
        else:
            assert abs(vdot(a, b) - want) <= 1e-12 * float(np.abs(a * b).sum())
    with pytest.raises(ValueError, match="lengths 3 and 2"):
        vdot(np.ones(3), np.ones(2))
