"""linsvm.distributed: byte ranges and reading one file's share on each rank.

Without MPI: the ranks are simulated in this process, either sequentially
(each rank's local read, then every rank's agreement on all the reports; this
covers every split position of a small file cheaply) or as threads talking
through a communicator with mpi4py's lowercase API (the public function's
real collective path).  The reference is the serial reader,
load_svmlight_buffers: the union of the ranks' rows must equal its result bit
for bit, and every rank's error its error message.  tests/test_mpiexec.py runs the
same under mpiexec.
"""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import shared_file
from fakempi import comms, run_ranks
from linsvm.io import plain_share as distributed
from linsvm.io.svmlight import load_svmlight_buffers
from linsvm.distributed import byte_ranges, read_svmlight_share
from linsvm.errors import DataError, ParameterError
from linsvm.problem.labels import class_order


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def run_threads(path, n_ranks, **kw):
    """read_svmlight_share on n_ranks threads (tests/fakempi.py); each rank's LocalShare
    or exception."""
    return run_ranks(lambda comm: read_svmlight_share(path, comm, **kw), n_ranks, timeout=60)


def run_sequential(path, n_ranks, n_features=None, with_qid=False, labels=True):
    """The same as run_threads, without threads: every rank's local read,
    then every rank's agreement over all the reports."""
    local = [distributed._read_local(path, r, n_ranks, n_features, with_qid, labels)
             for r in range(n_ranks)]
    reports = [rep for _, rep, _ in local]
    out = []
    for r, (parts, _, fault) in enumerate(local):
        try:
            out.append(distributed._agree(path, parts, reports, r, n_features, with_qid,
                                          labels, fault))
        except Exception as e:      # noqa: BLE001
            out.append(e)
    return out


def serial(path, n_features=None, with_qid=False):
    """The serial reader's (X, y, qid) or its error message."""
    try:
        return load_svmlight_buffers(path, n_features=n_features, with_qid=True) \
            if with_qid else load_svmlight_buffers(path, n_features=n_features) + (None,)
    except DataError as e:
        return str(e)


def first_appearance(y):
    _, first = np.unique(y, return_index=True)
    return y[np.sort(first)]


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def assert_same_as_serial(shares, path, n_features=None, with_qid=False):
    """The union of the shares is the serial result bit for bit, and the ranks
    agree on the counts, offsets, width and labels."""
    ref = serial(path, n_features, with_qid)
    assert not isinstance(ref, str), ref
    X, y, qid = ref
    for s in shares:
        assert not isinstance(s, Exception), s
    P = len(shares)
    assert [s.rank for s in shares] == list(range(P))
    assert all(s.n_ranks == P for s in shares)
    assert all(s.n_rows_total == X.n_rows for s in shares)
    assert all(s.n_features == X.n_features == s.X.n_features for s in shares)
    offsets = np.cumsum([0] + [s.X.n_rows for s in shares[:-1]])
    assert [s.row_offset for s in shares] == offsets.tolist()
    lines = np.cumsum([1] + [s.n_lines for s in shares[:-1]])
    assert [s.first_line for s in shares] == lines.tolist()
    nnz = np.cumsum([0] + [s.X.nnz for s in shares[:-1]])
    indptr = np.concatenate([[0]] + [s.X.indptr[1:] + o for s, o in zip(shares, nnz)])
    assert np.array_equal(indptr, X.indptr)
    assert indptr.dtype == X.indptr.dtype
    for name in ("indices", "data"):
        got = np.concatenate([getattr(s.X, name) for s in shares])
        assert got.dtype == getattr(X, name).dtype
        assert np.array_equal(bits(got), bits(getattr(X, name)))
    assert np.array_equal(bits(np.concatenate([s.y for s in shares])), bits(y))
    if with_qid:
        assert np.array_equal(np.concatenate([s.qid for s in shares]), qid)
    else:
        assert all(s.qid is None for s in shares)
    want = first_appearance(y)
    for s in shares:
        assert np.array_equal(bits(s.labels), bits(want))
        if y.shape[0]:
            assert np.array_equal(class_order(y, labels=s.labels), class_order(y))


def assert_same_error(results, path, n_features=None, with_qid=False):
    ref = serial(path, n_features, with_qid)
    assert isinstance(ref, str), "the serial reader accepts this file"
    for r in results:
        assert isinstance(r, DataError), r
        assert str(r) == ref
        assert "\n" not in str(r)


def write(tmp_path, text, name="d.svm"):
    path = tmp_path / name
    path.write_bytes(text)
    return str(path)


AWKWARD = (b"# header comment\n"
           b"1 1:0.5 3:-2 10:1e-3\r\n"
           b"\n"
           b"-1 2:1 4:7.25   # trailing comment\n"
           b"   \t\n"
           b"2 1:1 2:2 3:3 4:4 5:5 6:6 7:7 8:8 9:9 11:11 12:12 13:13 14:14 15:15 16:16\n"
           b"# another\r\n"
           b"-0 6:-0\n"
           b"3\n"
           b"1 7:1\r\n"
           b"2 12:0.1")                                  # no final line end

QIDS = (b"3 qid:1 1:1 2:2\n"
        b"# c\n"
        b"1 qid:1 2:1\r\n"
        b"\n"
        b"2 qid:7 1:-1 4:0.25\n"
        b"0 qid:-3 5:1\n"
        b"1 qid:7 3:3\n")


# ---------------------------------------------------------------------------
# byte_ranges
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("size", [0, 1, 2, 5, 7, 100, 10**12 + 3])
@pytest.mark.parametrize("n_parts", [1, 2, 3, 5, 8])
def test_byte_ranges_cover_in_order_and_even(size, n_parts):
    ranges = byte_ranges(size, n_parts)
    assert len(ranges) == n_parts
    assert ranges[0][0] == 0 and ranges[-1][1] == size
    for (a, b), (c, _) in zip(ranges, ranges[1:]):
        assert b == c
    lengths = [b - a for a, b in ranges]
    assert min(lengths) >= 0 and max(lengths) - min(lengths) <= 1
    assert sum(lengths) == size


@pytest.mark.parametrize("args", [(-1, 2), (10, 0), (10, -1), (1.5, 2), (10, True), ("9", 2)])
def test_byte_ranges_rejects_bad_arguments(args):
    with pytest.raises(ParameterError):
        byte_ranges(*args)


# ---------------------------------------------------------------------------
# the union of the shares is the serial result
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_ranks", [1, 2, 3, 4, 5])
def test_threads_awkward_file_equals_serial(tmp_path, n_ranks):
    path = write(tmp_path, AWKWARD)
    assert_same_as_serial(run_threads(path, n_ranks), path)


@pytest.mark.parametrize("n_ranks", [1, 2, 3, 4, 5])
def test_threads_qid_file_equals_serial(tmp_path, n_ranks):
    path = write(tmp_path, QIDS)
    assert_same_as_serial(run_threads(path, n_ranks, with_qid=True), path, with_qid=True)
    assert_same_as_serial(run_threads(path, n_ranks), path)


@pytest.mark.parametrize("text", [AWKWARD, QIDS, AWKWARD + b"\n", b"\n\n1 1:1\n\n",
                                  b"1 1:1\r\n-1 2:2\r\n"])
def test_every_split_position_equals_serial(tmp_path, text):
    """With P up to the file's size every byte offset is some rank's start:
    lines straddling a split, CRLF split between CR and LF, ranks with no
    line start, comment and blank lines at the edges."""
    path = write(tmp_path, text)
    for n_ranks in list(range(1, 12)) + [len(text) - 1, len(text), len(text) + 3]:
        assert_same_as_serial(run_sequential(path, n_ranks), path)
        if b"qid" in text:
            assert_same_as_serial(run_sequential(path, n_ranks, with_qid=True), path,
                                  with_qid=True)


def test_straddling_line_belongs_to_the_rank_where_it_starts(tmp_path):
    text = b"1 " + b" ".join(b"%d:1" % k for k in range(1, 40)) + b"\n-1 1:2\n"
    path = write(tmp_path, text)
    s0, s1 = run_threads(path, 2)
    assert byte_ranges(len(text), 2)[1][0] < text.index(b"\n")     # it does straddle
    assert s0.y.tolist() == [1.0] and s1.y.tolist() == [-1.0]
    assert s0.X.nnz == 39 and s1.row_offset == 1 and s1.first_line == 2


def test_rank_without_a_line_start_has_no_rows(tmp_path):
    long = b"1 " + b" ".join(b"%d:1" % k for k in range(1, 60)) + b"\n"
    path = write(tmp_path, long + b"2 3:1\n")
    shares = run_threads(path, 3)
    assert [s.X.n_rows for s in shares] == [1, 0, 1]
    assert shares[1].X.n_features == 59 and shares[1].n_lines == 0
    assert shares[1].X.indptr.tolist() == [0]
    assert_same_as_serial(shares, path)


@pytest.mark.parametrize("text", [b"", b"1\n", b"1 1:1", b"# only\n"])
def test_file_smaller_than_the_number_of_ranks(tmp_path, text):
    path = write(tmp_path, text)
    assert_same_as_serial(run_threads(path, 5), path)
    assert_same_as_serial(run_sequential(path, 9), path)


def test_given_n_features_is_the_width_everywhere(tmp_path):
    path = write(tmp_path, AWKWARD)
    shares = run_threads(path, 3, n_features=40)
    assert_same_as_serial(shares, path, n_features=40)
    assert {s.X.n_features for s in shares} == {40}


def test_labels_false_skips_the_label_gather(tmp_path):
    path = write(tmp_path, AWKWARD)
    assert all(s.labels is None for s in run_threads(path, 3, labels=False))


def test_class_labels_on_one_rank_only_keep_the_serial_order(tmp_path):
    """Labels 5 and 7 appear only on the last rank, 2 first appears on rank 1,
    then again on rank 0's ... order is by global first row, not rank order."""
    lines = [b"-1 1:1\n"] * 4 + [b"2 1:1\n"] * 4 + [b"-1 2:1\n"] * 4 + [b"7 1:1\n", b"5 1:1\n"]
    path = write(tmp_path, b"".join(lines))
    for n_ranks in range(1, 6):
        shares = run_threads(path, n_ranks)
        assert_same_as_serial(shares, path)
        assert shares[0].labels.tolist() == [-1.0, 2.0, 7.0, 5.0]


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(pieces=st.lists(st.sampled_from([
    b"1 1:1 2:2\n", b"-1 3:0.5\r\n", b"2 7:1e-3 9:-4\n", b"\n", b"# comment line\n", b"\r\n",
    b"  \t\n", b"0\n", b"-0 1:-0\n", b"3 2:1  # note\n", b"1 " + b" ".join(
        b"%d:%d" % (k, k) for k in range(1, 30)) + b"\n"]), max_size=25),
    tail=st.sampled_from([b"", b"5 4:4", b"# end"]), n_ranks=st.integers(1, 7))
def test_random_files_equal_serial(tmp_path_factory, pieces, tail, n_ranks):
    path = write(tmp_path_factory.mktemp("h"), b"".join(pieces) + tail)
    assert_same_as_serial(run_sequential(path, n_ranks), path)


# ---------------------------------------------------------------------------
# errors: the same one-line message on every rank, naming the global line
# ---------------------------------------------------------------------------

GOOD = [b"1 1:1 2:2\n", b"# c\n", b"-1 3:1\r\n", b"\n", b"2 1:5 4:1\n", b"1 2:1\n",
        b"-1 1:1 5:2\n", b"1 6:1\n"]
BAD = [b"1 2:1 1:1\n", b"x 1:1\n", b"1 1:nan\n", b"1 a\n", b"1 0:1\n", b"1 1:1\rx\n"]


@pytest.mark.slow
@pytest.mark.parametrize("bad", BAD)
def test_error_on_one_rank_same_message_everywhere(tmp_path, bad):
    for where in range(len(GOOD) + 1):
        path = write(tmp_path, b"".join(GOOD[:where] + [bad] + GOOD[where:]))
        for n_ranks in (1, 2, 3, 5):
            assert_same_error(run_threads(path, n_ranks), path)
        for n_ranks in (7, 20, 60):
            assert_same_error(run_sequential(path, n_ranks), path)


def test_first_of_two_errors_wins_across_ranks(tmp_path):
    path = write(tmp_path, b"".join(GOOD[:3] + [BAD[1]] + GOOD[3:] + [BAD[0]] + GOOD))
    for n_ranks in range(1, 6):
        res = run_threads(path, n_ranks)
        assert_same_error(res, path)
        assert ":4: " in str(res[0])


def test_index_beyond_given_n_features_on_one_rank(tmp_path):
    path = write(tmp_path, b"".join(GOOD))
    for n_ranks in (1, 2, 3, 4):
        assert_same_error(run_threads(path, n_ranks, n_features=5), path, n_features=5)


QID_GOOD = [b"1 qid:1 1:1\n", b"# c\n", b"2 qid:1 2:1\n", b"\n", b"1 qid:2 1:1\n",
            b"3 qid:2 3:1\n", b"1 qid:3 1:1\n"]


@pytest.mark.slow
@pytest.mark.parametrize("odd", [b"1 1:1\n", b"2 2:1 3:1\r\n"])
def test_qid_pattern_is_judged_over_the_whole_file(tmp_path, odd):
    """A row without qid among rows with one (and the reverse): the serial
    reader's message, which names the file's first row, from every rank --
    also when the odd row is the first row of its rank, or the only one."""
    plain = [odd.replace(b"qid:", b"")]
    with_q = [line for line in QID_GOOD]
    without = [line.replace(b"qid:1 ", b"").replace(b"qid:2 ", b"").replace(b"qid:3 ", b"")
               for line in QID_GOOD]
    odd_q = [b"4 qid:9 1:1\n"]
    for rows, extra in ((with_q, plain), (without, odd_q)):
        for where in range(len(rows) + 1):
            path = write(tmp_path, b"".join(rows[:where] + extra + rows[where:]))
            for n_ranks in (1, 2, 3, 5):
                assert_same_error(run_threads(path, n_ranks, with_qid=True), path,
                                  with_qid=True)
            for n_ranks in (8, 30, 70):
                assert_same_error(run_sequential(path, n_ranks, with_qid=True), path,
                                  with_qid=True)


def test_qid_error_and_syntax_error_on_the_same_rank(tmp_path):
    """The rank's first row breaks the qid pattern and a later line of the same
    rank is malformed: the qid error comes first, as in the serial reader."""
    text = b"1 qid:1 1:1\n" + b"2 2:1\n" + b"1 x\n" + b"1 qid:1 1:1\n"
    path = write(tmp_path, text)
    for n_ranks in range(1, len(text) + 1):
        assert_same_error(run_sequential(path, n_ranks, with_qid=True), path, with_qid=True)


def test_missing_file_same_error_everywhere(tmp_path):
    path = str(tmp_path / "absent.svm")
    res = run_threads(path, 3)
    assert all(isinstance(r, DataError) for r in res)
    assert len({str(r) for r in res}) == 1 and "cannot open" in str(res[0])
    assert str(res[0]) == serial(path)


@pytest.mark.parametrize("kind", ["gzip", "bz2", "xz"])
def test_compressed_file_refused_on_every_rank(tmp_path, kind):
    import bz2
    import gzip
    import lzma
    pack = {"gzip": gzip.compress, "bz2": bz2.compress, "xz": lzma.compress}[kind]
    path = write(tmp_path, pack(AWKWARD), "d.svm.z")
    res = run_threads(path, 3)
    assert all(isinstance(r, DataError) for r in res)
    assert len({str(r) for r in res}) == 1
    assert "compressed" in str(res[0]) and "\n" not in str(res[0])


def test_directory_refused_on_every_rank(tmp_path):
    res = run_threads(str(tmp_path), 2)
    assert all(isinstance(r, DataError) for r in res)
    assert len({str(r) for r in res}) == 1


def test_fault_on_one_rank_leaves_no_rank_waiting(tmp_path, monkeypatch):
    """An unexpected exception (not bad input) on rank 1: rank 1 raises it, the
    others a DataError naming it, and nobody hangs in the collective."""
    path = write(tmp_path, AWKWARD)
    real = distributed._parse_share

    def flaky(path, rank, *args):
        if rank == 1:
            raise MemoryError("simulated")
        return real(path, rank, *args)

    monkeypatch.setattr(distributed, "_parse_share", flaky)
    res = run_threads(path, 3)
    assert isinstance(res[1], MemoryError)
    for r in (res[0], res[2]):
        assert isinstance(r, DataError)
        assert str(r) == f"{path}: rank 1: MemoryError: simulated"


def test_bad_n_features_is_a_parameter_error(tmp_path):
    path = write(tmp_path, AWKWARD)
    comm = comms(1)[0]
    for bad in (-1, 2.5, True):
        with pytest.raises(ParameterError):
            read_svmlight_share(path, comm, n_features=bad)


@pytest.mark.data
@pytest.mark.parametrize("name,n_ranks", [("binary/w8a", 4), ("ordinal/abalone_10bins.train.1", 3),
                                          ("binary/a9a", 5)])
def test_shared_data_sets_equal_serial(name, n_ranks):
    path = str(shared_file(name))
    assert_same_as_serial(run_threads(path, n_ranks), path)


def test_chunked_share_equals_serial(tmp_path, monkeypatch):
    """Shares longer than one read (here 64 bytes), so the size hint and the
    reads after the first run."""
    monkeypatch.setattr(distributed, "_CHUNK_BYTES", 64)
    text = b"".join(b"%d %d:1 %d:0.5\n" % (k % 3, k % 7 + 1, k % 7 + 9) for k in range(300))
    path = write(tmp_path, AWKWARD.replace(b"2 12:0.1", b"2 12:0.1\n") + text)
    for n_ranks in (1, 2, 3, 5):
        assert_same_as_serial(run_threads(path, n_ranks), path)
        assert_same_as_serial(run_threads(path, n_ranks, with_qid=False, n_features=30),
                              path, n_features=30)


@pytest.mark.slow
@pytest.mark.subprocess
def test_nothing_in_linsvm_imports_mpi4py():
    import subprocess
    import sys

    from conftest import child_env
    code = ("import sys, linsvm, linsvm.cli, linsvm.distributed; "
            "print('mpi4py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=child_env(), check=True)
    assert out.stdout.strip() == "False"
