"""The value layouts of CSRBuffers (float64, float32, pattern) through the one data view.

A float32 matrix must train and predict exactly as the float64 matrix holding the same
(float32-rounded) values, and a pattern exactly as its values stored as 1.0: the kernels
widen a float32 exactly, x * 1.0 == x, and every sum runs in one order whatever the
layout.  The references here are the float64 layout (the path every other test checks
against scipy and the certificates) and scipy itself; nothing is compared with values
the layouts' own code produced.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm import _kernels, _testing
from linsvm._data import DataView
from linsvm.cv import cross_validate
from linsvm.errors import DataError
from linsvm.problem.catalog import SOLVERS
from linsvm.problem.csr import (CSRBuffers, max_abs_value, row_sq_norms, take_rows, to_scipy,
                                with_layout)


def _matrix(seed, n=90, d=25, density=0.2):
    """A random CSR matrix with some empty rows and a range of row lengths (values
    standard normal, float64)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=density, format="csr", random_state=rng,
                  data_rvs=rng.standard_normal)
    scale = rng.uniform(0.3, 2.0, n)                      # rows of unlike scale
    scale[[3, 40]] = 0.0                                  # and empty rows
    X = (sp.diags(scale) @ X).tocsr()
    X.eliminate_zeros()
    X.sort_indices()
    return X


def _zero_one(seed):
    X = _matrix(seed)
    X.data[:] = 1.0
    return X


def _rounded(seed):
    """float64 values that float32 holds exactly, so that the float32 layout of them
    holds the same numbers."""
    X = _matrix(seed)
    X.data = X.data.astype(np.float32).astype(np.float64)
    return X


def _labels(kind, X, seed):
    """Labels of `kind` from a noisy linear score of X."""
    rng = np.random.default_rng(seed + 100)
    score = X @ rng.standard_normal(X.shape[1]) + 0.3 * rng.standard_normal(X.shape[0])
    if kind in ("binary", "oneclass"):
        return np.where(score > np.median(score), 1.0, -1.0)
    if kind == "multiclass":
        return np.digitize(score, np.quantile(score, [0.33, 0.66])).astype(np.float64) + 1.0
    if kind == "ordinal":
        return np.digitize(score, np.quantile(score, [0.25, 0.5, 0.75])).astype(np.float64) + 1.0
    return score                                           # regression


def _train(X, y, solver, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                   # caps on tiny problems: both alike
        return linsvm.train(X, y, solver=solver, C=1.0, **kw)


SOLVER_NAMES = sorted(SOLVERS)


@pytest.mark.parametrize("solver", SOLVER_NAMES)
def test_pattern_trains_the_model_of_its_ones(solver):
    """A pattern (no values stored) gives the weights and decision values of the same
    0/1 matrix stored as float64, bit for bit, for every solver of the catalog."""
    kind = SOLVERS[solver].kind
    X = _zero_one(1)
    y = _labels(kind, X, 1)
    X64 = CSRBuffers(X)
    Xp = with_layout(X64, "pattern")
    assert Xp.layout == "pattern" and Xp.data is None
    m64, mp = _train(X64, y, solver), _train(Xp, y, solver)
    assert np.array_equal(m64.weights, mp.weights)
    assert m64.offset_ == mp.offset_
    assert np.array_equal(m64.decision_function(X64), mp.decision_function(Xp))
    assert np.array_equal(mp.decision_function(Xp), mp.decision_function(X))   # scipy's


@pytest.mark.parametrize("solver", SOLVER_NAMES)
def test_float32_trains_the_model_of_its_values_widened(solver):
    """float32 values give the weights and decision values of the float64 matrix holding
    the same values, bit for bit, for every solver of the catalog."""
    kind = SOLVERS[solver].kind
    X = _rounded(2)
    y = _labels(kind, X, 2)
    X64 = CSRBuffers(X)
    X32 = with_layout(X64, "float32")
    assert X32.layout == "float32" and X32.data.dtype == np.float32
    m64, m32 = _train(X64, y, solver), _train(X32, y, solver)
    assert np.array_equal(m64.weights, m32.weights)
    assert m64.offset_ == m32.offset_
    assert np.array_equal(m64.decision_function(X64), m32.decision_function(X32))
    assert np.array_equal(m32.decision_function(X32), m32.decision_function(X))   # scipy's


@pytest.mark.parametrize("solver", ["mfn", "sdm-cs", "svr", "lr", "softmax"])
def test_compact_layouts_on_read_only_buffers_with_threads(solver):
    """Read-only arrays (as a memory map gives them) train without a copy or a write,
    and two threads give the one-thread bits in each layout."""
    kind = SOLVERS[solver].kind
    X = _zero_one(3)
    y = _labels(kind, X, 3)
    X64 = CSRBuffers(X)
    opts = {"n_threads": 2} if "n_threads" in SOLVERS[solver].options else {}
    ref = _train(X64, y, solver)
    for layout in ("pattern", "float32"):
        Xl = with_layout(X64, layout)
        for a in (Xl.indptr, Xl.indices, Xl.data):
            if a is not None:
                a.setflags(write=False)
        assert np.array_equal(_train(Xl, y, solver, **opts).weights, ref.weights), layout


def test_rows_with_one_value_read_as_row_scales_in_float32():
    """mfn reads rows whose stored values are one number each through row scales: float32
    rows of that kind give the float64 weights too."""
    X = _zero_one(4)
    X = (sp.diags(np.linspace(0.25, 2.0, X.shape[0])) @ X).tocsr()
    X.data = X.data.astype(np.float32).astype(np.float64)
    y = _labels("binary", X, 4)
    X64 = CSRBuffers(X)
    m64 = _train(X64, y, "mfn")
    assert np.array_equal(_train(with_layout(X64, "float32"), y, "mfn").weights, m64.weights)


def test_cross_validation_is_the_same_in_every_layout():
    """cv trains on row lists and scores the test rows of the layout it is given: the
    same accuracy and predictions as the float64 matrix."""
    X = CSRBuffers(_zero_one(5))
    y = _labels("binary", to_scipy(X), 5)
    ref = cross_validate(X, y, solver="mfn", Cs=[0.5, 2.0], n_folds=3, keep_predictions=True)
    got = cross_validate(with_layout(X, "pattern"), y, solver="mfn", Cs=[0.5, 2.0], n_folds=3,
                         keep_predictions=True)
    for a, b in zip(ref.points, got.points):
        assert np.array_equal(np.asarray(a.predictions), np.asarray(b.predictions))
        assert a.scores == b.scores


def test_scores_of_rows_read_in_place_are_those_of_the_rows_taken(monkeypatch):
    """decision_function(X, rows=...) scores the rows in place, in the order given, as
    the copy take_rows(X, rows) is scored; cross-validation scores its test rows that way,
    so a fold never copies its test rows out of the (possibly mapped) buffers."""
    X = with_layout(CSRBuffers(_rounded(8)), "float32")
    y = _labels("multiclass", to_scipy(X), 8)
    model = _train(X, y, "sdm-cs", bias=1.0)
    rows = np.array([7, 3, 3, 60, 0, 89], dtype=np.int64)
    assert np.array_equal(model.decision_function(X, rows=rows),
                          model.decision_function(take_rows(X, rows)))
    assert np.array_equal(model.decision_function(to_scipy(X), rows=rows),
                          model.decision_function(take_rows(X, rows)))
    copied = []
    monkeypatch.setattr(CSRBuffers, "trusted", classmethod(
        lambda cls, *a, **k: copied.append(1) or pytest.fail("cv copied rows")))
    cross_validate(X, y, solver="sdm-cs", Cs=[1.0], n_folds=3)
    assert not copied


# ------------------------------------------------------------------ the kernels

def _views(X64, bias, rows):
    return {layout: DataView(with_layout(X64, layout), bias, rows)
            for layout in ("float64", "float32", "pattern")
            if layout != "pattern" or X64.data is None or np.all(X64.data == 1.0)}


@pytest.mark.parametrize("zero_one", [True, False])
def test_kernels_give_the_float64_bits_in_every_layout(zero_one):
    """matvec, the blocked scatter, the fused normal mat-vec, the squared column sums,
    the scores and the row norms: each layout gives the float64 layout's bits, and the
    float64 layout agrees with scipy."""
    rng = np.random.default_rng(6)
    A = sp.random(700, 40, density=0.1, format="csr", random_state=rng)   # several blocks
    A.data = np.ones(A.nnz) if zero_one else \
        rng.standard_normal(A.nnz).astype(np.float32).astype(np.float64)
    X64 = CSRBuffers(A)
    rows = rng.permutation(700)[:650].astype(np.int64)
    w = rng.standard_normal(41)
    u = rng.standard_normal(650)
    c = rng.uniform(0.0, 2.0, 650)
    views = _views(X64, 1.0, rows)
    assert len(views) == (3 if zero_one else 2)
    ref = None
    for layout, v in views.items():
        got = []
        for threads in (1, 2):
            for pattern in (False, True):
                got.append(_kernels.csr_matvec(v, w, threads, pattern))
                got.append(_testing.csr_rmatvec(v, u, threads, pattern))
                got.append(_testing.csr_col_sq_sums(v, c, threads, pattern))
                got.extend(_testing.csr_normal_matvec(v, w, c, threads, pattern))
        got.append(_kernels.csr_scores(v, np.ascontiguousarray(np.c_[w, -w])))
        got.append(_kernels.csr_transposed_scores(v, np.ascontiguousarray(np.c_[u, u])))
        got.append(np.array(_kernels.max_row_sq_norm(v)))
        if ref is None:
            ref = got
            Xa = sp.hstack([A, sp.csr_matrix(np.ones((700, 1)))]).tocsr()[rows]
            assert np.allclose(got[0], Xa @ w)
            assert np.allclose(got[1], Xa.T @ u)
            assert np.allclose(got[2], Xa.multiply(Xa).T @ c)
        else:
            for k, (a, b) in enumerate(zip(ref, got)):
                assert np.array_equal(a, b), (layout, k)


def test_row_sq_norms_in_every_layout():
    A = _rounded(7)
    X64 = CSRBuffers(A)
    expect = np.asarray(A.multiply(A).sum(axis=1)).ravel()
    assert np.allclose(row_sq_norms(X64), expect)
    assert np.array_equal(row_sq_norms(with_layout(X64, "float32")), row_sq_norms(X64))
    B = CSRBuffers(_zero_one(7))
    assert np.array_equal(row_sq_norms(with_layout(B, "pattern")), row_sq_norms(B))
    assert np.array_equal(row_sq_norms(with_layout(B, "pattern")), np.diff(B.indptr))


# ------------------------------------------------------------------ CSRBuffers

def test_with_layout_round_trips():
    A = _matrix(8)
    X64 = CSRBuffers(A)
    X32 = with_layout(X64, "float32")
    assert X32.indptr is X64.indptr and X32.indices is X64.indices       # shared
    assert np.array_equal(X32.data, A.data.astype(np.float32))
    back = with_layout(X32, "float64")
    assert back.data.dtype == np.float64
    assert np.array_equal(back.data, A.data.astype(np.float32).astype(np.float64))
    rel = np.abs(back.data - A.data) / np.abs(A.data)
    assert rel.max() <= 2.0 ** -24
    assert with_layout(X64, "float64") is X64

    Z = CSRBuffers(_zero_one(8))
    P = with_layout(Z, "pattern")
    assert P.data is None and P.layout == "pattern" and P.nnz == Z.nnz
    assert np.array_equal(with_layout(P, "float64").data, np.ones(Z.nnz))
    assert np.array_equal(with_layout(P, "float32").data, np.ones(Z.nnz, dtype=np.float32))
    assert with_layout(with_layout(P, "float32"), "pattern").data is None
    assert P.nbytes == Z.indptr.nbytes + Z.indices.nbytes


def test_with_layout_refuses_what_the_layout_cannot_hold():
    A = _zero_one(9)
    r = 17
    A.data[A.indptr[r] + 1 if A.indptr[r + 1] - A.indptr[r] > 1 else A.indptr[r]] = 0.5
    with pytest.raises(DataError, match=f"row {r + 1} has 0.5"):
        with_layout(CSRBuffers(A), "pattern")
    B = _matrix(9)
    B.data[B.indptr[r]] = 1e39
    with pytest.raises(DataError, match=f"row {r + 1} has the value 1e\\+39, beyond float32"):
        with_layout(CSRBuffers(B), "float32")
    with pytest.raises(ValueError, match="layout must be one of"):
        with_layout(CSRBuffers(B), "float16")


@pytest.mark.parametrize("layout", ["float64", "float32", "pattern"])
def test_to_scipy_and_take_rows_in_every_layout(layout):
    A = _zero_one(10) if layout == "pattern" else _rounded(10)
    X = with_layout(CSRBuffers(A), layout)
    S = to_scipy(X)
    assert S.shape == A.shape
    assert np.array_equal(S.toarray(), A.toarray())
    if layout != "pattern":
        assert np.shares_memory(S.data, X.data)           # the values shared, not copied
    rows = np.array([5, 3, 40, 5, 89], dtype=np.int64)    # repeats and an empty row
    T = take_rows(X, rows)
    assert isinstance(T, CSRBuffers) and T.layout == layout
    assert np.array_equal(to_scipy(T).toarray(), A.toarray()[rows])
    assert take_rows(X, np.zeros(0, dtype=np.int64)).n_rows == 0
    mask = np.zeros(A.shape[0], dtype=bool)
    mask[[2, 7]] = True
    assert np.array_equal(to_scipy(take_rows(X, mask)).toarray(), A.toarray()[mask])
    with pytest.raises(IndexError):
        take_rows(X, [A.shape[0]])
    assert np.array_equal(take_rows(A, rows).toarray(), A.toarray()[rows])   # scipy stays scipy
    assert max_abs_value(X) == np.abs(A.data).max()


def test_trusted_takes_the_three_layouts_and_checks_their_dtypes():
    A = _matrix(11)
    ip, ix = A.indptr.astype(np.int64), A.indices.astype(np.int32)
    for data, layout in ((A.data, "float64"), (A.data.astype(np.float32), "float32"),
                         (None, "pattern")):
        X = CSRBuffers.trusted(ip, ix, data, A.shape[1], A.shape[1])
        assert X.layout == layout and X.nnz == A.nnz
        assert X.data is data
    with pytest.raises(ValueError, match="float64 or float32"):
        CSRBuffers.trusted(ip, ix, A.data.astype(np.float16), A.shape[1], A.shape[1])
    with pytest.raises(ValueError, match="inconsistent"):
        CSRBuffers.trusted(ip, ix, A.data[:-1].astype(np.float32), A.shape[1], A.shape[1])


def test_check_csr_reads_float32_values_and_names_the_row_of_a_nan():
    A = _matrix(12)
    ip, ix = A.indptr.astype(np.int64), A.indices.astype(np.int32)
    v = A.data.astype(np.float32)
    assert _kernels.check_csr(ip, ix, v, A.shape[1]) == (0, -1)
    assert _kernels.check_csr(ip, ix, None, A.shape[1]) == (0, -1)
    r = 22
    k = int(A.indptr[r])
    v[k] = np.nan
    assert _kernels.check_csr(ip, ix, v, A.shape[1]) == (3, k)
    with pytest.raises(DataError, match=f"non-finite value in row {r + 1}"):
        CSRBuffers.checked(ip, ix, v, A.shape[1], what="data.bin")
    v[k] = np.inf
    assert _kernels.check_csr(ip, ix, v, A.shape[1]) == (3, k)
    bad = ix.copy()
    bad[5] = A.shape[1]
    with pytest.raises(DataError, match="column index out of range"):
        CSRBuffers.checked(ip, bad, None, A.shape[1])
    X = CSRBuffers.checked(ip, ix, None, A.shape[1])
    assert X.layout == "pattern"


# ------------------------------------------------------------------ scikit-learn

@pytest.mark.parametrize("name,kind", [("LinearSVC", "multiclass"), ("LogisticRegression", "binary"),
                                       ("LinearSVR", "regression"), ("OneClassSVM", "oneclass"),
                                       ("OrdinalSVM", "ordinal"), ("RankSVM", "ordinal")])
def test_estimators_take_csr_buffers_of_every_layout(name, kind):
    """The scikit-learn estimators fit and predict on a CSRBuffers as it is (a pattern:
    no ones made) with the coefficients and predictions of its scipy matrix."""
    import linsvm.sklearn as estimators

    X = _zero_one(13)
    y = _labels(kind, X, 13)
    ref = getattr(estimators, name)().fit(X, y)
    for layout in ("pattern", "float32"):
        Xl = with_layout(CSRBuffers(X), layout)
        got = getattr(estimators, name)().fit(Xl, y)
        assert got.n_features_in_ == X.shape[1]
        assert np.array_equal(got.coef_, ref.coef_), layout
        assert np.array_equal(got.predict(Xl), ref.predict(X)), layout
        assert np.array_equal(ref.predict(Xl), ref.predict(X)), layout
    narrow = CSRBuffers(X[:, :10])
    with pytest.raises(ValueError, match="X has 10 features"):
        ref.predict(narrow)
    if kind != "oneclass":                                 # which ignores y
        with pytest.raises(ValueError, match="inconsistent numbers of samples"):
            getattr(estimators, name)().fit(CSRBuffers(X), y[:-1])
