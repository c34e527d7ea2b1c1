"""The data path from the SVM-light parser to the solvers.

load_svmlight_buffers hands the parser's own arrays to CSRBuffers.trusted:
no copy, no int32 round trip of indptr, no second pass of check_csr.  These
tests fail if the buffers were copied or converted, if the trusted path
scanned again, or if it let through anything a solver core indexes unchecked
(an index outside [0, n_features), a decreasing indptr, a non-finite value).
"""
import bz2
import gzip
import io
import lzma
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm import _kernels, _svmlight, cli as cli_mod
from linsvm.io import svmlight as data_mod
from linsvm.problem import csr as problem_mod
from linsvm.io.svmlight import load_svmlight, load_svmlight_buffers
from linsvm.errors import DataError
from linsvm.model import load_model
from linsvm.problem import CSRBuffers
from linsvm import train

from conftest import invoke

TEXT = b"1 1:0.5 3:2\n-1 2:1e-3 7:-4.25\n# comment\n\n+1\n-1 qid:3 1:1e300 2:-0\n"
COMPRESS = {"plain": lambda b: b, "gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}


def _write(tmp_path, content, name="in.svm"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _owned_by_parser(a):
    """True if array a is a view of a block the parser allocated (an _Owned)."""
    base = a.base
    return isinstance(getattr(base, "obj", base), _svmlight._Owned)


def test_buffers_are_the_parsers_arrays_not_copies(tmp_path, monkeypatch):
    taken = []
    parse = data_mod._parse_serial

    def spy(*args, **kw):
        taken.append(parse(*args, **kw))
        return taken[-1]
    monkeypatch.setattr(data_mod, "_parse_serial", spy)
    X, y = load_svmlight_buffers(_write(tmp_path, TEXT))
    (indptr, indices, data, labels, _, max_index), _gaps = taken[0]
    assert X.indptr is indptr and X.indices is indices and X.data is data and y is labels
    for a in (X.indptr, X.indices, X.data, y):
        assert _owned_by_parser(a) and not a.flags.owndata
    assert X.indptr.dtype == np.int64 and X.indices.dtype == np.int32
    assert X.data.dtype == np.float64
    assert (X.n_rows, X.n_features, X.nnz) == (4, 7, 6) and max_index == 7


def test_trusted_path_does_not_scan_again(tmp_path, monkeypatch):
    def no_second_scan(*args):
        raise AssertionError("check_csr called on the parser's buffers")
    monkeypatch.setattr(problem_mod, "check_csr", no_second_scan)
    X, _ = load_svmlight_buffers(_write(tmp_path, TEXT))
    assert X.nnz == 6
    with pytest.raises(AssertionError):         # the checking constructor does scan
        CSRBuffers(load_svmlight(_write(tmp_path, TEXT))[0])


@pytest.mark.parametrize("kind", sorted(COMPRESS))
@pytest.mark.parametrize("n_features", [None, 7, 12])
def test_same_buffers_as_the_checked_path(tmp_path, kind, n_features):
    path = _write(tmp_path, COMPRESS[kind](TEXT))
    X, y, qid = load_svmlight_buffers(path, n_features=n_features, with_qid=False) + (None,)
    ref, y_ref = load_svmlight(path, n_features=n_features)
    R = CSRBuffers(ref)
    assert (X.n_rows, X.n_features) == (R.n_rows, R.n_features) == ref.shape
    for a, b in ((X.indptr, R.indptr), (X.indices, R.indices), (X.data, R.data), (y, y_ref)):
        assert _same(a, b)
    assert _kernels.check_csr(*X.args()) == (0, -1)


def test_stdin_and_qid(tmp_path, monkeypatch):
    data = b"2 qid:1 1:1 4:2\n1 qid:1 2:3\n3 qid:2 3:1\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(data))))
    X, y, qid = load_svmlight_buffers("-", with_qid=True)
    ref, y_ref, q_ref = load_svmlight(_write(tmp_path, data), with_qid=True)
    assert _same(X.indptr, CSRBuffers(ref).indptr) and _same(X.indices, ref.indices)
    assert _same(y, y_ref) and _same(qid, q_ref) and X.n_features == 4


def test_empty_input_gives_zero_rows(tmp_path):
    X, y = load_svmlight_buffers(_write(tmp_path, b"# nothing\n"))
    assert (X.n_rows, X.n_features, X.nnz) == (0, 0, 0)
    assert X.indptr.tolist() == [0] and y.shape == (0,)


# Everything a core indexes unchecked must be refused by the parser on this path.
BAD = [
    (b"1 1:1 4:1\n", {"n_features": 3}, "feature index 4 > n_features=3"),
    (b"1 0:1\n", {}, "feature index 0 is not >= 1"),
    (b"1 -2:1\n", {}, "feature index -2 is not >= 1"),
    (b"1 2:1 2:1\n", {}, "indices not increasing (2 after 2)"),
    (b"1 3:1 2:1\n", {}, "indices not increasing (2 after 3)"),
    (b"1 2147483648:1\n", {}, "beyond int32"),
    (b"1 1:nan\n", {}, "non-finite value 'nan'"),
    (b"1 1:-inf\n", {}, "non-finite value '-inf'"),
    (b"1 1:1e999\n", {}, "non-finite value '1e999'"),
    (b"inf 1:1\n", {}, "bad label 'inf' (not finite)"),
    (b"1e400 1:1\n", {}, "bad label '1e400' (not finite)"),
]


@pytest.mark.parametrize("kind", ["plain", "gzip"])
@pytest.mark.parametrize("content, kw, needle", BAD)
def test_trusted_path_refuses_what_a_core_would_index_unchecked(tmp_path, kind, content, kw,
                                                                 needle):
    path = _write(tmp_path, COMPRESS[kind](b"1 1:1\n" + content))
    with pytest.raises(DataError) as got:
        load_svmlight_buffers(path, **kw)
    with pytest.raises(DataError) as ref:
        load_svmlight(path, **kw)
    assert str(got.value) == str(ref.value)     # same message as the scipy path
    assert needle in str(got.value) and ":2:" in str(got.value)


def test_n_features_beyond_int32_is_a_data_error(tmp_path):
    path = _write(tmp_path, TEXT)
    with pytest.raises(DataError, match="more than int32 indices allow"):
        load_svmlight_buffers(path, n_features=2**31)
    X, _ = load_svmlight_buffers(path, n_features=2**31 - 1)
    assert X.n_features == 2**31 - 1


def _parts():
    return (np.array([0, 2, 3], dtype=np.int64), np.array([0, 2, 1], dtype=np.int32),
            np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("change, n_features, bound", [
    (None, 2, 3),                   # an index may reach 2 >= n_features
    (None, 2**31, 3),               # columns beyond int32
    (None, 3, -1),
    ("indptr_int32", 3, 3),         # the round trip this path exists to avoid
    ("indices_int64", 3, 3),
    ("data_float16", 3, 3),         # float64, float32 and None (a pattern) are the layouts
    ("strided", 3, 3),
    ("strided_float32", 3, 3),
    ("indptr_end", 3, 3),
    ("indptr_start", 3, 3),
    ("short_indices", 3, 3),
    ("list", 3, 3),
])
def test_trusted_checks_what_costs_o1(change, n_features, bound):
    indptr, indices, data = _parts()
    if change == "indptr_int32":
        indptr = indptr.astype(np.int32)
    elif change == "indices_int64":
        indices = indices.astype(np.int64)
    elif change == "data_float16":
        data = data.astype(np.float16)
    elif change == "strided":
        data = np.repeat(data, 2)[::2]
    elif change == "strided_float32":
        data = np.repeat(data.astype(np.float32), 2)[::2]
    elif change == "indptr_end":
        indptr = np.array([0, 2, 2], dtype=np.int64)
    elif change == "indptr_start":
        indptr = np.array([1, 2, 3], dtype=np.int64)
    elif change == "short_indices":
        indices = indices[:2]
    elif change == "list":
        indptr = [0, 2, 3]
    with pytest.raises(ValueError, match="CSRBuffers.trusted"):
        CSRBuffers.trusted(indptr, indices, data, n_features, bound)
    X = CSRBuffers.trusted(*_parts(), 3, 3)
    assert X.n_rows == 2 and X.n_features == 3 and X.nnz == 3


def test_random_files_agree_with_the_checked_path(tmp_path):
    """Random SVM-light text (bounded: 40 files): the trusted buffers equal the
    checked ones bit for bit and pass check_csr."""
    rng = np.random.default_rng(16)
    for trial in range(40):
        n_rows, width = int(rng.integers(0, 30)), int(rng.integers(1, 50))
        lines = []
        for _ in range(n_rows):
            cols = np.sort(rng.choice(width, size=int(rng.integers(0, width + 1)), replace=False))
            vals = rng.standard_normal(cols.size) * 10.0 ** rng.integers(-300, 300, cols.size)
            lines.append(f"{rng.integers(-1, 2)} " + " ".join(
                f"{c + 1}:{float(v)!r}" for c, v in zip(cols, vals)))
        path = _write(tmp_path, ("\n".join(lines) + "\n").encode(), f"r{trial}.svm")
        n_features = None if trial % 2 else width
        X, y = load_svmlight_buffers(path, n_features=n_features)
        R = CSRBuffers(load_svmlight(path, n_features=n_features)[0])
        assert (X.n_rows, X.n_features) == (R.n_rows, R.n_features)
        assert _same(X.indptr, R.indptr) and _same(X.indices, R.indices) and _same(X.data, R.data)
        assert _kernels.check_csr(*X.args()) == (0, -1)


@pytest.mark.parametrize("solver", ["dcd", "mfn", "mfn-ord"])
def test_cli_model_same_as_python_train_on_scipy_matrix(tmp_path, solver):
    """The CLI trains on the parser's buffers; the weights must be those of
    train() on load_svmlight's scipy matrix, bit for bit."""
    rng = np.random.default_rng(3)
    X = sp.random(80, 25, density=0.2, random_state=4, format="csr")
    y = np.where(X @ rng.standard_normal(25) + 0.1 * rng.standard_normal(80) > 0, 1.0, -1.0)
    path = tmp_path / "train.svm"
    data_mod.dump_svmlight(X, y, path)
    out = tmp_path / "m.model"
    res = invoke(cli_mod.train_cmd, "-s", solver, "-q", str(path), str(out))
    assert res.exit_code == 0, res.output
    Xs, ys = load_svmlight(path)
    ref = train(Xs, ys, solver=solver)
    got = load_model(out)
    assert _same(np.asarray(got.weights, dtype=np.float64), np.asarray(ref.weights, dtype=np.float64))


def test_cli_trains_from_compressed_stdin_as_from_the_file(tmp_path):
    """'-' and compressed input go through the same trusted path: same model."""
    X = sp.random(60, 12, density=0.3, random_state=7, format="csr")
    y = np.where(np.arange(60) % 3 == 0, 1.0, -1.0)
    path = tmp_path / "train.svm"
    data_mod.dump_svmlight(X, y, path)
    a, b = tmp_path / "a.model", tmp_path / "b.model"
    r1 = invoke(cli_mod.train_cmd, "-q", str(path), str(a))
    r2 = invoke(cli_mod.train_cmd, "-q", "-", str(b), input=bz2.compress(path.read_bytes()))
    assert r1.exit_code == 0 and r2.exit_code == 0, (r1.output, r2.output)
    assert _same(np.asarray(load_model(a).weights), np.asarray(load_model(b).weights))
    bad = invoke(cli_mod.train_cmd, "-q", "-", str(tmp_path / "c.model"),
                 input=gzip.compress(b"1 1:1\n-1 2:nan\n"))
    assert bad.exit_code != 0 and "<stdin>:2: non-finite value 'nan'" in bad.output
    assert not (tmp_path / "c.model").exists()
