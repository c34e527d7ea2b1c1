"""Past 2**31 non-zeros: every offset over the entries is 64-bit, and the conversions a
large matrix goes through cost no more than the int32 indices the cores need.

The cores are run on small problems through linsvm._data.offset_view, a data view whose
entry positions all lie 2**31 + 12345 further on (its row pointers shifted up, its index
and value pointers shifted down by as much), so an entry position narrowed to 32 bits
anywhere reads outside the arrays; every solver of the catalog and the whole-matrix
kernels must give on it, bit for bit, what they give on the plain view."""
import importlib
import sys
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm import _data, _kernels, _l1, _testing
from linsvm.errors import DataError
from linsvm.fit.search import start_C
from linsvm.problem.catalog import SOLVERS
from linsvm.problem.csr import CSRBuffers, row_sq_norms

OFFSET = (1 << 31) + 12345

# every module that builds a data view (the solvers' set-up, prediction, the checks)
_VIEW_MODULES = ["linsvm.problem.problem", "linsvm.problem.checks", "linsvm.problem.csr",
                 "linsvm.model.model", "linsvm.fit.warm", "linsvm.fit.finite",
                 "linsvm.solvers.handover", "linsvm.solvers.alm", "linsvm.solvers.perf"]


@pytest.fixture
def offset_views(monkeypatch):
    """Make every DataView the package builds an offset view."""
    for name in _VIEW_MODULES:
        importlib.import_module(name)
    patched, made, real = [], [], _data.DataView

    def view(X, bias=-1.0, rows=None):
        made.append(_data.offset_view(X, bias, rows))
        return made[-1]
    for name, module in list(sys.modules.items()):
        if name.startswith("linsvm.") and name != "linsvm._data" \
                and getattr(module, "DataView", None) is real:
            monkeypatch.setattr(module, "DataView", view)
            patched.append(name)
    assert set(_VIEW_MODULES) <= set(patched)
    return made


def _matrix(n=600, d=40, density=0.2, seed=3, values="real"):
    X = sp.random(n, d, density=density, format="csr", random_state=seed)
    if values == "unit":
        X.data[:] = 1.0
    elif values == "row":                       # one value per row: the row-scale path
        X.data = np.repeat(np.linspace(0.5, 2.0, n), np.diff(X.indptr))
    else:
        X.data = X.data * 2.0 - 1.0
    return X


def _targets(kind, X, seed=3):
    score = X @ np.random.default_rng(seed).standard_normal(X.shape[1])
    if kind in ("binary", "oneclass"):
        return np.where(score > np.median(score), 1.0, -1.0)
    if kind == "regression":
        return score
    return 1.0 + np.searchsorted(np.quantile(score, [0.3, 0.7]), score)   # 3 classes / levels


def test_the_offset_view_reads_the_same_entries_past_2_31():
    B = CSRBuffers(_matrix())
    v = _data.offset_view(B, 1.0, np.arange(B.n_rows))
    assert v.nnz == B.nnz and v.n == B.n_rows
    w = np.linspace(-1, 1, 41)
    assert _kernels.csr_matvec(v, w).tobytes() == \
        _kernels.csr_matvec(_data.DataView(B, 1.0, np.arange(B.n_rows)), w).tobytes()
    with pytest.raises(ValueError, match="offset"):
        _data.offset_view(B, 1.0, None, -1)


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_every_solver_gives_the_same_model_past_2_31_entry_offsets(solver, offset_views,
                                                                   monkeypatch):
    info = SOLVERS[solver]
    X = _matrix(values="unit" if solver in ("mfn", "dcd", "cdn") else "real")
    y = _targets(info.kind, X)
    B = CSRBuffers(X)
    options = {"n_threads": 2} if "n_threads" in info.options else {}
    shifted = linsvm.train(B, y, solver=solver, **options)
    scores = shifted.decision_function(B)
    assert offset_views                         # the solve and the scores read offset views
    monkeypatch.undo()                          # the plain views from here on
    plain = linsvm.train(B, y, solver=solver, **options)
    assert shifted.weights.tobytes() == plain.weights.tobytes()
    assert scores.tobytes() == plain.decision_function(B).tobytes()
    assert shifted.stats.get("n_iter") == plain.stats.get("n_iter")


@pytest.mark.parametrize("values", ["real", "unit", "row"])
def test_whole_matrix_kernels_read_the_same_entries_past_2_31(values):
    B = CSRBuffers(_matrix(n=3000, d=60, values=values))
    rows = np.random.default_rng(1).permutation(B.n_rows)[:2500]
    rng = np.random.default_rng(2)
    w, u, c = rng.standard_normal(61), rng.standard_normal(rows.size), rng.random(rows.size)
    W, M = rng.standard_normal((61, 3)), rng.standard_normal((rows.size, 3))

    def results(view):
        out = [_kernels.csr_matvec(view, w, n_threads=2, pattern=True),
               _kernels.csr_matvec(view, w), _kernels.max_row_sq_norm(view)[0],
               _kernels.row_sq_norms(view), _kernels.csr_scores(view, W),
               _kernels.csr_transposed_scores(view, M), _l1.column_copy_nnz(view)]
        for t in (1, 2):
            for pattern in (False, True):
                out += [_testing.csr_rmatvec(view, u, n_threads=t, pattern=pattern),
                        _testing.csr_col_sq_sums(view, u, n_threads=t, pattern=pattern),
                        *_testing.csr_normal_matvec(view, w, c, n_threads=t, pattern=pattern)]
        return [np.asarray(a).tobytes() for a in out]

    plain = results(_data.DataView(B, 1.0, rows))
    assert results(_data.offset_view(B, 1.0, rows)) == plain


# ---------------------------------------------------------------- the scipy path


def _wide(X):
    """X with int64 indices and row pointers, as scipy keeps them past 2**31 non-zeros."""
    X = X.copy()
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    return X


def test_int64_indices_are_narrowed_in_the_checking_pass_and_the_rest_shared():
    X = _wide(_matrix())
    B = CSRBuffers(X)
    assert B.indices.dtype == np.int32 and B.indices.tolist() == X.indices.tolist()
    assert np.shares_memory(B.data, X.data) and np.shares_memory(B.indptr, X.indptr)
    ref = CSRBuffers(_matrix())
    assert B.indices.tobytes() == ref.indices.tobytes() and B.data.tobytes() == ref.data.tobytes()


@pytest.mark.parametrize("bad", [40, -1, 2**32 + 3, -(2**32) + 5])
def test_an_int64_index_outside_the_columns_is_refused_not_wrapped(bad):
    """A cast to int32 before the check took 2**32 + 3 for column 3."""
    X = _wide(_matrix())
    X.indices[7] = bad
    with pytest.raises(DataError, match=r"column index out of range \[0, 40\)"):
        CSRBuffers(X)


def test_the_conversion_of_int64_indices_costs_only_their_int32_copy():
    X = _wide(_matrix(n=20000, d=400, density=0.05))
    tracemalloc.start()
    try:
        B = CSRBuffers(X)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert B.nnz == X.nnz > 300000
    assert peak <= 4 * X.nnz + 64 * 1024


def _numpy_sq_norms(X):
    X = sp.csr_matrix(X)
    return np.asarray(X.multiply(X).sum(axis=1)).ravel()


@pytest.mark.parametrize("values", ["real", "unit", "row"])
def test_row_sq_norms_agree_with_the_numpy_formula(values):
    X = _matrix(n=500, d=30, density=0.1, values=values)
    X = sp.vstack([X, sp.csr_matrix((3, 30))], format="csr")       # empty rows at the end
    ref = _numpy_sq_norms(X)
    for M in (X, CSRBuffers(X), _wide(X)):
        np.testing.assert_allclose(row_sq_norms(M), ref, rtol=1e-13, atol=0)
    rows = np.array([502, 0, 7, 7, 501], dtype=np.int64)
    np.testing.assert_allclose(row_sq_norms(X, rows), ref[rows], rtol=1e-13, atol=0)
    assert row_sq_norms(sp.csr_matrix((0, 4))).shape == (0,)


def test_row_sq_norms_overflow_to_inf_and_allocate_only_the_output():
    X = sp.csr_matrix(np.array([[1e200, 1.0], [0.0, 3.0]]))
    assert row_sq_norms(X).tolist() == [np.inf, 9.0]
    B = CSRBuffers(_matrix(n=20000, d=400, density=0.05))
    tracemalloc.start()
    try:
        sq = row_sq_norms(B)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak <= sq.nbytes + 16 * 1024 < 2 * B.nnz


def test_start_C_agrees_with_the_numpy_formula():
    """-C's first C from the largest squared row norm (LIBLINEAR's calc_start_C)."""
    X = _matrix(n=300, d=50, density=0.1)
    for bias, squared in ((1.0, False), (-1.0, True)):
        top = (_numpy_sq_norms(X) + (bias * bias if bias > 0 else 0.0)).max()
        expect = 2.0 ** np.floor(-np.log2(2 if squared else 1) - np.log2(300) - np.log2(top))
        assert start_C(X, bias, squared=squared) == expect
        assert start_C(CSRBuffers(_wide(X)), bias, squared=squared) == expect


# ---------------------------------------------------------------- the L1 solvers' bound


@pytest.mark.parametrize("solver", ["cdn", "glmnet"])
def test_l1_solvers_refuse_more_examples_than_int32_positions_number(solver, monkeypatch):
    """The column copy numbers the examples with int32 (its entry offsets are int64):
    beyond 2**31 - 1 examples the solve is refused in one line, before any copy."""
    from linsvm.solvers import l1
    monkeypatch.setattr(l1, "MAX_EXAMPLES", 99)
    X = _matrix(n=100, d=10)
    with pytest.raises(DataError, match=rf"-s {solver} takes at most 99 examples .*not 100") as e:
        linsvm.train(X, _targets("binary", X), solver=solver)
    assert "\n" not in str(e.value)
    assert linsvm.train(X[:99], _targets("binary", X)[:99], solver=solver).weights.shape == (11, 1)
