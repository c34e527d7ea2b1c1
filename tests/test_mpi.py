"""linsvm.distributed under a real MPI launcher: `mpiexec -n 2` and `-n 3`.

Needs the `mpi` extra (mpi4py and an MPI; `pip install ".[mpi]"` brings
MPICH's wheel with its mpiexec); skipped with a reason without it.  Each rank
of a small script reads its share of a file and saves its rows, or its error
message; the test compares them with the serial reader, as
tests/test_distributed.py does with simulated ranks.
"""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from conftest import child_env, mpiexec, shared_file
from linsvm.io.svmlight import load_svmlight_buffers
from linsvm.distributed import byte_ranges
from linsvm.errors import DataError

SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    from mpi4py import MPI
    from linsvm.distributed import read_svmlight_share
    from linsvm.errors import DataError

    path, out, with_qid = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    comm = MPI.COMM_WORLD
    try:
        s = read_svmlight_share(path, comm, with_qid=with_qid)
    except DataError as e:
        with open(f"{out}/err{comm.rank}.txt", "w") as fh:
            fh.write(str(e))
        sys.exit(1)
    np.savez(f"{out}/rank{comm.rank}.npz", indptr=s.X.indptr, indices=s.X.indices,
             data=s.X.data, y=s.y, qid=s.qid if with_qid else np.zeros(0, np.int64),
             labels=s.labels, meta=np.array([s.row_offset, s.n_rows_total, s.n_features,
                                             s.first_line, s.n_ranks]))
""")

TEXT = (b"# comment\n"
        b"1 qid:1 1:0.5 3:-2 10:1e-3\r\n"
        b"\n"
        b"-1 qid:1 2:1 4:7.25   # trailing\n"
        b"2 qid:2 " + b" ".join(b"%d:%d" % (k, k) for k in range(1, 25)) + b"\n"
        b"# another\r\n"
        b"-0 qid:2 6:-0\n"
        b"7 qid:3\n"
        b"-1 qid:3 7:1\r\n"
        b"5 qid:3 12:0.1")




def _run(tmp_path, text, n_ranks, with_qid=True, path=None):
    exe = mpiexec()
    if path is None:
        path = tmp_path / "d.svm"
        path.write_bytes(text)
    script = tmp_path / "read_share.py"
    script.write_text(SCRIPT)
    out = tmp_path / f"out{n_ranks}"
    out.mkdir()
    proc = subprocess.run([exe, "-n", str(n_ranks), sys.executable, str(script), str(path),
                           str(out), "1" if with_qid else "0"],
                          capture_output=True, text=True, timeout=120, env=child_env())
    return str(path), out, proc


@pytest.mark.mpi
@pytest.mark.parametrize("n_ranks", [2, 3])
def test_mpiexec_shares_equal_serial(tmp_path, n_ranks):
    path, out, proc = _run(tmp_path, TEXT, n_ranks)
    assert proc.returncode == 0, proc.stderr
    X, y, qid = load_svmlight_buffers(path, with_qid=True)
    ranks = [np.load(out / f"rank{r}.npz") for r in range(n_ranks)]
    assert sum(r["y"].shape[0] > 0 for r in ranks) >= 2, "the split left one rank all rows"
    nnz = np.cumsum([0] + [r["data"].shape[0] for r in ranks[:-1]])
    indptr = np.concatenate([[0]] + [r["indptr"][1:] + o for r, o in zip(ranks, nnz)])
    assert np.array_equal(indptr, X.indptr)
    for name, ref in (("indices", X.indices), ("data", X.data), ("y", y), ("qid", qid)):
        got = np.concatenate([r[name] for r in ranks])
        assert got.dtype == ref.dtype
        assert np.array_equal(got.view(np.uint8), ref.view(np.uint8)), name
    offsets = np.cumsum([0] + [r["y"].shape[0] for r in ranks[:-1]])
    _, first = np.unique(y, return_index=True)
    for r, off in zip(ranks, offsets):
        assert r["meta"].tolist()[:3] == [off, X.n_rows, X.n_features]
        assert r["meta"][4] == n_ranks
        assert np.array_equal(r["labels"], y[np.sort(first)])


@pytest.mark.mpi
@pytest.mark.parametrize("n_ranks", [2, 3])
def test_mpiexec_error_on_one_rank_reaches_every_rank(tmp_path, n_ranks):
    """A bad line near the end (on the last rank only): every rank exits
    non-zero with the serial reader's message, global line number and all."""
    text = TEXT.replace(b"-1 qid:3 7:1", b"-1 qid:3 7:1 3:1")
    path, out, proc = _run(tmp_path, text, n_ranks)
    assert proc.returncode != 0
    with pytest.raises(DataError) as ref:
        load_svmlight_buffers(path, with_qid=True)
    assert ":9: indices not increasing" in str(ref.value)
    bad_at = text.index(b"-1 qid:3 7:1 3:1")
    assert byte_ranges(len(text), n_ranks)[-1][0] <= bad_at      # the last rank's line
    for r in range(n_ranks):
        assert (out / f"err{r}.txt").read_text() == str(ref.value)
        assert not (out / f"rank{r}.npz").exists()


@pytest.mark.mpi
def test_mpiexec_qid_pattern_broken_on_a_later_rank(tmp_path):
    text = TEXT.replace(b"5 qid:3 12:0.1", b"5 12:0.1")
    path, out, proc = _run(tmp_path, text, 3)
    assert proc.returncode != 0
    with pytest.raises(DataError) as ref:
        load_svmlight_buffers(path, with_qid=True)
    for r in range(3):
        assert (out / f"err{r}.txt").read_text() == str(ref.value)


@pytest.mark.mpi
@pytest.mark.data
def test_mpiexec_w8a_three_ranks(tmp_path):
    path, out, proc = _run(tmp_path, None, 3, with_qid=False, path=shared_file("binary/w8a"))
    assert proc.returncode == 0, proc.stderr
    X, y = load_svmlight_buffers(path)
    ranks = [np.load(out / f"rank{r}.npz") for r in range(3)]
    assert all(r["y"].shape[0] > 0 for r in ranks)
    for name, ref in (("indices", X.indices), ("data", X.data), ("y", y)):
        got = np.concatenate([r[name] for r in ranks])
        assert np.array_equal(got.view(np.uint8), ref.view(np.uint8)), name
    assert {tuple(r["meta"].tolist()[1:3]) for r in ranks} == {(X.n_rows, X.n_features)}
    assert all(r["labels"].tolist() == [-1.0, 1.0] for r in ranks)
