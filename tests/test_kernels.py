"""The shared CSR kernels (csrc/csr.pxd) against scipy, serial and threaded."""
import numpy as np
import pytest
import scipy.sparse as sp

from linsvm import _kernels


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
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, n, bias, rows)
    np.testing.assert_allclose(_kernels.csr_matvec(*args, w, n_threads), Xa @ w, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(_kernels.csr_rmatvec(*args, u, n_threads), Xa.T @ u, rtol=1e-12, atol=1e-12)


def test_rmatvec_is_reproducible_for_a_thread_count():
    X = sp.random(20000, 50, density=0.2, format="csr", random_state=3)
    rows = np.arange(20000, dtype=np.int64)
    u = np.random.default_rng(1).standard_normal(20000)
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, 50, 1.0, rows, u, 2)
    assert _kernels.csr_rmatvec(*args).tobytes() == _kernels.csr_rmatvec(*args).tobytes()


def test_empty_row_list():
    X = sp.random(10, 4, density=0.5, format="csr", random_state=0)
    rows = np.empty(0, dtype=np.int64)
    args = (X.indptr.astype(np.int64), X.indices.astype(np.int32), X.data, 4, 1.0, rows)
    assert _kernels.csr_matvec(*args, np.ones(5)).shape == (0,)
    np.testing.assert_array_equal(_kernels.csr_rmatvec(*args, np.empty(0)), np.zeros(5))
