"""The data view every compiled core reads (linsvm._data.DataView): built once from the
CSR buffers, the bias and the row numbers, which it checks; shared by the problems over
the same examples."""
import numpy as np
import pytest
import scipy.sparse as sp

from linsvm._data import DataView
from linsvm._oneclass import oneclass_solve
from linsvm.problem.csr import CSRBuffers
from linsvm.problem.problem import Problem


def _buffers(n_rows=7, n_features=5, seed=0):
    return CSRBuffers(sp.random(n_rows, n_features, density=0.5, format="csr",
                                random_state=seed))


def test_view_reports_the_rows_it_carries():
    B = _buffers()
    v = DataView(B, 1.0, np.array([4, 0, 4]))
    assert (v.n, v.n_rows, v.n_features, v.n_weights, v.bias) == (3, 7, 5, 6, 1.0)
    assert v.nnz == B.indptr[-1]
    assert v.rows_array.tolist() == [4, 0, 4]
    whole = DataView(B)
    assert (whole.n, whole.n_weights, whole.rows_array) == (7, 5, None)


@pytest.mark.parametrize("rows", [[7], [-1], [0, 9, 2]])
def test_row_numbers_outside_the_matrix_are_refused(rows):
    with pytest.raises(ValueError, match=r"row numbers must lie in \[0, 7\)"):
        DataView(_buffers(), 1.0, np.array(rows))


def test_rows_must_be_one_dimensional():
    with pytest.raises(ValueError, match="1-D"):
        DataView(_buffers(), 1.0, np.zeros((2, 2), dtype=np.int64))


def test_a_core_that_needs_rows_refuses_a_view_without_them():
    with pytest.raises(ValueError, match="row number"):
        oneclass_solve(DataView(_buffers()), nu=0.5, a=np.zeros(7), init=True, eps=0.1,
                       max_iter=10, callback=None)


def test_a_core_refuses_a_view_with_a_feature_it_has_no_weight_for():
    with pytest.raises(ValueError, match="bias"):
        oneclass_solve(DataView(_buffers(), 1.0, np.arange(7)), nu=0.5, a=np.zeros(7),
                       init=True, eps=0.1, max_iter=10, callback=None)


def test_problem_builds_its_view_once_and_its_columns_share_it():
    B = _buffers()
    rows = np.arange(7, dtype=np.int64)
    p = Problem.binary(B, rows, np.where(rows % 2, 1.0, -1.0), np.ones(7), 1.0)
    v = p.view
    assert p.view is v and v.n == 7 and v.bias == 1.0
    column = p.binary_column(-p.t, p.cost)
    assert column.view is v
    assert p.subset(np.array([0, 2])).view.n == 2


def test_the_view_keeps_its_buffers_alive():
    rows = np.array([1, 2])
    v = DataView(_buffers(), -1.0, rows)
    del rows
    import gc
    gc.collect()
    assert v.rows_array.tolist() == [1, 2] and v.buffers.n_rows == 7
