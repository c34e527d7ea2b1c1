"""Tests of linsvm.io.synth.make_text_classification."""
import numpy as np
import pytest
import scipy.sparse as sp

from linsvm.errors import ParameterError
from linsvm.io.synth import make_text_classification


@pytest.fixture(scope="module")
def default_data():
    return make_text_classification(n_samples=20000, n_features=20000, seed=0)


def test_shapes_dtypes_and_canonical_csr(default_data):
    X, y = default_data
    assert sp.issparse(X) and X.format == "csr"
    assert X.shape == (20000, 20000) and y.shape == (20000,)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.has_canonical_format                  # sorted indices, no duplicates
    assert not (X.data == 0).any()                 # no explicit zeros
    assert X.indices.min() >= 0 and X.indices.max() < X.shape[1]
    assert X.indptr[0] == 0 and X.indptr[-1] == X.nnz and (np.diff(X.indptr) >= 1).all()
    assert np.isfinite(X.data).all() and (X.data > 0).all()


def test_rows_have_unit_norm(default_data):
    X, _ = default_data
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    np.testing.assert_allclose(norms, 1.0, rtol=1e-12)


@pytest.mark.parametrize("avg_length", [10, 80, 300])
def test_sparsity_follows_avg_length(avg_length):
    X, _ = make_text_classification(n_samples=3000, n_features=20000, avg_length=avg_length, seed=1)
    per_row = X.nnz / X.shape[0]
    # distinct words per document: fewer than the tokens (frequent words repeat), but most of them
    assert 0.5 * avg_length < per_row <= 1.05 * avg_length
    lengths = np.diff(X.indptr)
    assert lengths.std() > 0.2 * lengths.mean()     # lengths vary from document to document


def test_word_frequencies_are_heavy_tailed(default_data):
    X, _ = default_data
    df = np.sort(np.bincount(X.indices, minlength=X.shape[1]))[::-1]
    # a few "stop words" occur in most documents, most words are rare
    assert df[0] > 0.5 * X.shape[0]
    assert np.median(df) < 0.01 * X.shape[0]
    # the document-frequency curve decays like a power law (Zipf) in its middle ranks
    slope = np.log(df[1000] / df[20]) / np.log(1000 / 20)
    assert -1.6 < slope < -0.5


def test_labels_values_and_balance(default_data):
    _, y = default_data
    values, counts = np.unique(y, return_counts=True)
    np.testing.assert_array_equal(values, [-1, 1])
    assert abs(counts[0] / y.size - 0.5) < 0.03
    X, y = make_text_classification(n_samples=6000, n_features=3000, n_classes=5, seed=2)
    values, counts = np.unique(y, return_counts=True)
    np.testing.assert_array_equal(values, [1, 2, 3, 4, 5])
    assert (np.abs(counts / y.size - 0.2) < 0.03).all()


def test_deterministic_given_seed():
    a = make_text_classification(n_samples=500, n_features=800, n_classes=3, seed=7)
    b = make_text_classification(n_samples=500, n_features=800, n_classes=3, seed=7)
    c = make_text_classification(n_samples=500, n_features=800, n_classes=3, seed=8)
    for u, v in ((a[0].data, b[0].data), (a[0].indices, b[0].indices), (a[0].indptr, b[0].indptr), (a[1], b[1])):
        np.testing.assert_array_equal(u, v)
    assert a[0].nnz != c[0].nnz or not np.array_equal(a[0].indices, c[0].indices)


def test_noise_flips_exactly_the_requested_fraction():
    # the flips are drawn last, so the same seed gives the same documents
    X0, y0 = make_text_classification(n_samples=4000, n_features=2000, n_classes=3, noise=0.0, seed=5)
    X1, y1 = make_text_classification(n_samples=4000, n_features=2000, n_classes=3, noise=0.05, seed=5)
    assert (X0 != X1).nnz == 0
    assert (y0 != y1).sum() == 200


def _held_out_accuracy(X, y):
    from sklearn.svm import LinearSVC
    n = X.shape[0] * 3 // 4
    clf = LinearSVC(C=1.0).fit(X[:n], y[:n])
    return (clf.predict(X[n:]) == y[n:]).mean()


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classes_are_learnable_by_a_linear_model(n_classes):
    X, y = make_text_classification(n_samples=8000, n_features=10000, n_classes=n_classes, noise=0.05, seed=3)
    acc = _held_out_accuracy(X, y)
    assert acc > 0.8
    assert acc < 0.97          # 5% label noise bounds what any classifier can reach


def test_tiny_inputs():
    X, y = make_text_classification(n_samples=1, n_features=10, avg_length=1, seed=0)
    assert X.shape == (1, 10) and X.nnz >= 1 and y.shape == (1,)
    X, y = make_text_classification(n_samples=50, n_features=10, n_classes=4, noise=0.5, seed=0)
    assert X.shape == (50, 10) and set(np.unique(y)) <= {1.0, 2.0, 3.0, 4.0}


@pytest.mark.parametrize("kwargs", [
    dict(n_samples=0), dict(n_samples=2.5), dict(n_features=5), dict(n_classes=1), dict(n_classes=True),
    dict(avg_length=0), dict(avg_length=float("nan")), dict(noise=1.0), dict(noise=-0.1),
])
def test_bad_parameters_raise_parameter_error(kwargs):
    with pytest.raises(ParameterError):
        make_text_classification(**kwargs)


def _limit_address_space(limit):
    def set_limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return set_limit


@pytest.mark.slow
@pytest.mark.subprocess
def test_synth_checks_memory_before_allocating(tmp_path):
    """`linsvm synth --n-features 2147483647` tried the allocation and printed "out of
    memory (Unable to allocate 16.0 GiB ...)"; now it is refused before anything is
    allocated, in one line that says how much it needs and how much there is, as train's
    memory check does.  (The child's address space is capped at 6 GiB, so that the
    check has a limit to find whatever memory the machine has.)"""
    import subprocess
    import sys

    from conftest import child_env, one_error_line
    out = tmp_path / "big.svm"
    r = subprocess.run([sys.executable, "-m", "linsvm", "synth", "--n-features", "2147483647",
                        str(out), str(tmp_path / "big.t")], capture_output=True, text=True,
                       env=child_env(), timeout=300, preexec_fn=_limit_address_space(6 << 30))
    line = one_error_line(r.stderr)
    assert r.returncode == 1
    assert "needs about" in line and "is available (RLIMIT_AS)" in line, line
    assert "Unable to allocate" not in line and "out of memory" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # the Python function checks the same way, before drawing anything
    from linsvm.io.synth import make_text_classification, memory_needed
    assert memory_needed(20000, 2147483647) > 16 << 30
    assert memory_needed(100, 50) < 1 << 20
    X, y = make_text_classification(n_samples=100, n_features=50, seed=1)
    assert X.shape == (100, 50)

