"""linsvm's binary data file (linsvm.io.binfile, binwrite, binformat): what the writer
stores reads back as the arrays it was given, in every layout; the reader refuses a
truncated, damaged, newer or hand-made file in one line before any array leaves it; text
is never taken for binary; the readers of linsvm.io.svmlight and the MPI share map it."""
import gzip
import importlib.util
import io
import lzma
import bz2
import os
import struct
import sys
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm.errors import DataError, ParameterError
from linsvm.io import binformat, checksum
from linsvm.io.binary_share import read_binary_share
from linsvm.io.binfile import BinaryWriter, NotStorableError, is_binary, open_binary
from linsvm.io.svmlight import iter_svmlight_buffers, load_svmlight_buffers
from fakempi import run_ranks


def sample(n_rows=40, n_features=15, seed=0, unit=False, empty_rows=True):
    """A random CSR matrix (scipy, canonical) with some empty rows, labels, qids, weights."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, n_features, density=0.3, format="csr", random_state=rng,
                  data_rvs=lambda k: np.ones(k) if unit else rng.standard_normal(k) * 10)
    if empty_rows and n_rows > 4:
        X = sp.csr_matrix(X.multiply(np.where(np.arange(n_rows) % 5 == 2, 0, 1)[:, None]))
        X.eliminate_zeros()
    X.sort_indices()
    y = rng.choice([-1.0, 1.0, 2.5], n_rows)
    qid = rng.integers(-3, 1000, n_rows)
    w = rng.uniform(0, 3, n_rows)
    return X, y, qid, w


def write(path, X, y, qid=None, w=None, values="auto", n_features=None, cuts=(0.3, 0.7)):
    """X, y (qid, w) through BinaryWriter in several blocks (one of them empty)."""
    n = X.shape[0]
    edges = sorted({0, n, *(int(c * n) for c in cuts)})
    with BinaryWriter(path, values=values, n_features=n_features, with_qid=qid is not None,
                      with_weights=w is not None) as out:
        out.append(np.zeros(1, np.int64), np.zeros(0, np.int32), None, np.zeros(0),
                   qid=None if qid is None else np.zeros(0, np.int64),
                   weights=None if w is None else np.zeros(0))
        for a, b in zip(edges[:-1], edges[1:]):
            B = X[a:b]
            out.append(B.indptr, B.indices, B.data, y[a:b],
                       qid=None if qid is None else qid[a:b], weights=None if w is None else w[a:b])
    return str(path)


def values_read(X):
    """The values a CSRBuffers gives the solvers, as float64 (a pattern's: ones), whatever
    layout it keeps them in."""
    return np.ones(X.indices.shape[0]) if X.data is None else np.asarray(X.data, np.float64)


def stored_values(X, values):
    """The values the reader must give back for a file of layout `values`: numpy's own
    rounding to float32, ones for a pattern."""
    if values == "float32":
        return X.data.astype(np.float32).astype(np.float64)
    if values == "pattern":
        return np.ones(X.nnz)
    return X.data


@pytest.mark.parametrize("values", ["float64", "float32", "pattern", "auto"])
@pytest.mark.parametrize("extras", [False, True], ids=["plain", "qid+weights"])
def test_round_trip_every_layout(tmp_path, values, extras):
    X, y, qid, w = sample(unit=values == "pattern")
    path = write(tmp_path / "d.lsvm", X, y, qid if extras else None, w if extras else None,
                 values=values)
    with open_binary(path) as data:
        assert data.layout == ("float64" if values == "auto" else values)
        assert (data.n_rows, data.n_features, data.nnz) == (X.shape[0], X.shape[1] if
                                                            X.indices.max() == X.shape[1] - 1
                                                            else X.indices.max() + 1, X.nnz)
        assert np.array_equal(data.X.indptr, X.indptr)
        assert np.array_equal(data.X.indices, X.indices)
        assert np.array_equal(values_read(data.X), stored_values(X, values))
        assert np.array_equal(data.y, y)
        if extras:
            assert np.array_equal(data.qid, qid) and np.array_equal(data.weights, w)
        else:
            assert data.qid is None and data.weights is None


def test_auto_is_a_pattern_for_0_1_data_and_stores_no_values(tmp_path):
    X, y, _, _ = sample(n_rows=200, unit=True)
    auto = write(tmp_path / "a.lsvm", X, y)
    full = write(tmp_path / "f.lsvm", X, y, values="float64")
    data = open_binary(auto)
    assert data.layout == "pattern" and data.values is None
    assert np.array_equal(values_read(data.X), np.ones(X.nnz))
    # the values section alone makes the difference: 8 bytes per entry, page-aligned
    gap = os.path.getsize(full) - os.path.getsize(auto)
    assert binformat.aligned(8 * X.nnz) <= gap + binformat.ALIGN


def test_auto_meeting_a_late_value_other_than_1_stores_the_ones_before_it(tmp_path):
    X, y, _, _ = sample(n_rows=60, unit=True)
    X = X.copy()
    X.data[-1] = 0.5                    # only the last block has a value other than 1
    data = open_binary(write(tmp_path / "d.lsvm", X, y))
    assert data.layout == "float64"
    assert np.array_equal(values_read(data.X), X.data)


def test_zero_rows_empty_rows_and_trailing_empty_columns(tmp_path):
    data = open_binary(write(tmp_path / "z.lsvm", sp.csr_matrix((0, 0)), np.zeros(0)))
    assert (data.n_rows, data.nnz, data.n_features) == (0, 0, 0)
    assert data.X.indptr.tolist() == [0]
    X = sp.csr_matrix(np.array([[0, 0, 0, 0], [1.5, 0, 0, 0], [0, 0, 0, 0]]))
    path = write(tmp_path / "t.lsvm", X, np.array([1.0, -1.0, 1.0]), n_features=9)
    data = open_binary(path)
    assert (data.n_features, data.max_index) == (9, 1)
    assert data.X.indptr.tolist() == [0, 0, 1, 1]
    A, y = linsvm.load_svmlight(path)
    assert A.shape == (3, 9) and np.array_equal(A.toarray()[:, :4], X.toarray())


def test_load_svmlight_and_its_streaming_readers_take_the_file(tmp_path):
    X, y, qid, _ = sample(n_rows=50)
    path = write(tmp_path / "d.lsvm", X, y, qid)
    A, b, q = linsvm.load_svmlight(path, with_qid=True)
    assert A.shape == X.shape and (A != X).nnz == 0
    assert np.array_equal(b, y) and np.array_equal(q, qid)
    B, b = load_svmlight_buffers(path, n_features=X.shape[1] + 5)
    assert B.n_features == X.shape[1] + 5 and np.array_equal(B.indices, X.indices)
    blocks = list(iter_svmlight_buffers(path, chunk_rows=7, with_qid=True))
    assert sum(Xb.n_rows for Xb, _, _ in blocks) == 50
    assert np.array_equal(np.concatenate([Xb.indices for Xb, _, _ in blocks]), X.indices)
    assert np.array_equal(np.concatenate([qb for _, _, qb in blocks]), qid)
    with pytest.raises(DataError, match=r"feature index 15 > n_features=3$"):
        linsvm.load_svmlight(path, n_features=3)


def test_the_arrays_are_read_only_views_of_the_map(tmp_path):
    X, y, _, _ = sample()
    data = open_binary(write(tmp_path / "d.lsvm", X, y, values="float64"))
    for a in (data.X.indptr, data.X.indices, data.X.data, data.y):
        assert not a.flags.writeable and not a.flags.owndata


# ------------------------------------------------------------------ refused in one line

@pytest.fixture
def good(tmp_path):
    """A valid file with every section (float64 values, qid, weights): its path."""
    X, y, qid, w = sample(n_rows=30)
    return write(tmp_path / "g.lsvm", X, y, qid, w, values="float64")


def refused(path, *needles):
    with pytest.raises(DataError) as info:
        open_binary(path)
    text = str(info.value)
    assert "\n" not in text and text.startswith(str(path)), text
    for needle in needles:
        assert needle in text, text
    return text


def header_of(path):
    raw = open(path, "rb").read()
    size = binformat.header_length(raw[:binformat.FIXED_BYTES], path, len(raw))
    return raw, binformat.parse_header(raw[:size], path, len(raw))


def test_a_truncated_file_is_refused(good, tmp_path):
    raw = open(good, "rb").read()
    _, h = header_of(good)
    for cut in (3, 50, 200, binformat.ALIGN + 10, len(raw) // 2, len(raw) - 1):
        p = tmp_path / "cut.lsvm"
        p.write_bytes(raw[:cut])
        refused(p, "truncated" if cut > 8 else "magic")
    p.write_bytes(raw + b"\0")
    refused(p, "after the end of its last section")


def test_a_flipped_byte_in_any_section_is_refused(good, tmp_path):
    raw, h = header_of(good)
    assert sorted(s.kind for s in h.sections) == [1, 2, 3, 4, 5, 6]
    for s in h.sections:
        for at in (s.offset, s.offset + s.nbytes // 2, s.offset + s.nbytes - 1):
            bad = bytearray(raw)
            bad[at] ^= 0x10
            p = tmp_path / "flip.lsvm"
            p.write_bytes(bytes(bad))
            refused(p, "damaged", f"the {binformat.SECTION_NAMES[s.kind]} section")


def test_the_sections_checksum_is_zlibs_crc32_whichever_implementation_runs():
    # The reader and writer take ISA-L's CRC-32 when the fast-io extra is installed; a
    # file is only portable if it is zlib's function, chained over chunks of any size.
    rng = np.random.default_rng(7)
    data = rng.integers(0, 256, size=3 * (1 << 20) + 13, dtype=np.uint8)
    for cuts in ([], [1], [5, 4096, 4099, 1 << 20], list(range(0, data.size, 65537))):
        crc, start = 0, 0
        for stop in cuts + [data.size]:
            crc = checksum.crc32(data[start:stop], crc)
            start = stop
        assert crc == zlib.crc32(data.tobytes())
    assert checksum.crc32(b"", 12345) == 12345
    assert checksum.implementation() == ("isal" if importlib.util.find_spec("isal") else "zlib")


def test_a_flipped_byte_in_every_word_of_the_header_is_refused(good, tmp_path):
    raw = open(good, "rb").read()
    size = struct.unpack_from("<I", raw, 12)[0]
    for at in [*range(0, size, 4), size - 1]:
        bad = bytearray(raw)
        bad[at] ^= 0x04
        p = tmp_path / "flip.lsvm"
        p.write_bytes(bytes(bad))
        if at < 8:                      # the magic: not a binary file at all
            assert not is_binary(str(p))
        refused(p)


def _rewrite_header(raw, **changes):
    """raw with header fields changed (binformat's layout, written out here) and the
    header CRC made right again."""
    b = bytearray(raw)
    fields = {"version": (8, "<I")}
    for name, value in changes.items():
        at, fmt = fields[name]
        struct.pack_into(fmt, b, at, value)
    size = struct.unpack_from("<I", b, 12)[0]
    struct.pack_into("<I", b, size - 4, zlib.crc32(bytes(b[:size - 4])))
    return bytes(b)


def test_a_newer_format_is_named(good, tmp_path):
    p = tmp_path / "new.lsvm"
    p.write_bytes(_rewrite_header(open(good, "rb").read(), version=2))
    assert refused(p) == f"{p}: written by a newer linsvm (format 2); this linsvm reads format 1"


def test_garbage_after_the_magic_is_refused(tmp_path):
    rng = np.random.default_rng(1)
    p = tmp_path / "junk.lsvm"
    for n in (8, 100, 5000):
        p.write_bytes(binformat.MAGIC + rng.bytes(n))
        refused(p)


def _with_section(raw, h, kind, fill):
    """raw with section `kind` replaced by fill(its array) and every CRC made right."""
    b = bytearray(raw)
    s = h.section(kind)
    dtype = binformat.section_dtype(kind, h.layout)
    a = np.frombuffer(raw, dtype, s.nbytes // dtype.itemsize, s.offset).copy()
    fill(a)
    b[s.offset:s.offset + s.nbytes] = a.tobytes()
    sections = tuple(x._replace(crc=zlib.crc32(a)) if x.kind == kind else x for x in h.sections)
    head = binformat.pack_header(h._replace(sections=sections))
    b[:len(head)] = head
    return bytes(b)


@pytest.mark.parametrize("kind, fill, needle", [
    (binformat.INDICES, lambda a: a.__setitem__(3, 10 ** 6), "outside [0, "),
    (binformat.INDICES, lambda a: a.__setitem__(0, -1), "outside [0, "),
    (binformat.INDPTR, lambda a: a.__setitem__(5, a[4] - 1), "row pointers of row"),
    (binformat.INDPTR, lambda a: a.__setitem__(0, 1), "first row pointer"),
    (binformat.VALUES, lambda a: a.__setitem__(2, np.nan), "is not finite"),
    (binformat.VALUES, lambda a: a.__setitem__(7, -np.inf), "is not finite"),
    (binformat.LABELS, lambda a: a.__setitem__(1, np.inf), "label inf"),
    (binformat.WEIGHTS, lambda a: a.__setitem__(4, np.nan), "instance weight nan"),
])
def test_a_file_whose_checksums_hold_but_whose_contents_do_not_is_refused(good, tmp_path, kind,
                                                                          fill, needle):
    raw, h = header_of(good)
    p = tmp_path / "made.lsvm"
    p.write_bytes(_with_section(raw, h, kind, fill))
    refused(p, needle, "not a file linsvm wrote")


def test_a_largest_index_that_disagrees_with_the_header_is_refused(good, tmp_path):
    raw, h = header_of(good)
    p = tmp_path / "wide.lsvm"
    head = binformat.pack_header(h._replace(max_index=h.max_index - 1))
    p.write_bytes(head + raw[len(head):])
    refused(p, "largest feature index")


def test_text_and_compressed_text_are_never_taken_for_binary(tmp_path):
    texts = [b"", b"1 1:2\n", b"\x89", binformat.MAGIC[:7], b"-1 qid:3 5:1e-3 # \x89LSV\r\n\x1a\n",
             b"# " + binformat.MAGIC + b"\n1 1:1\n"]
    for k, t in enumerate(texts):
        for name, packed in (("plain", t), ("gz", gzip.compress(t)), ("bz2", bz2.compress(t)),
                             ("xz", lzma.compress(t))):
            p = tmp_path / f"t{k}.{name}"
            p.write_bytes(packed)
            assert not is_binary(str(p)) and not is_binary(packed)
    assert not is_binary(str(tmp_path / "missing")) and not is_binary("-")
    assert not is_binary(str(tmp_path))         # a directory


def test_a_binary_file_on_standard_input_is_refused(good, monkeypatch):
    class Stdin:
        buffer = io.BytesIO(open(good, "rb").read())

    monkeypatch.setattr(sys, "stdin", Stdin())
    with pytest.raises(DataError, match=r"^<stdin>: a linsvm binary data file cannot be read "
                                        r"from standard input"):
        linsvm.load_svmlight("-")


def test_a_compressed_binary_file_is_refused(good, tmp_path):
    p = tmp_path / "g.lsvm.gz"
    p.write_bytes(gzip.compress(open(good, "rb").read()))
    with pytest.raises(DataError, match="gzip-compressed linsvm binary data file: decompress"):
        linsvm.load_svmlight(str(p))


# ------------------------------------------------------------------ the writer's refusals

def _leftovers(directory):
    return sorted(os.listdir(directory))


@pytest.mark.parametrize("values, data, exc, needle", [
    ("pattern", [1.0, 0.5, 1.0], NotStorableError, "row 2: value 0.5 of feature 4 is not 1"),
    ("float32", [1.0, 1e39, 1.0], NotStorableError, "beyond float32's range"),
    ("float64", [1.0, np.nan, 1.0], DataError, "row 2: value nan is not finite"),
])
def test_the_writer_refuses_what_its_layout_cannot_store(tmp_path, values, data, exc, needle):
    with pytest.raises(exc, match=needle):
        with BinaryWriter(tmp_path / "o.lsvm", values=values) as out:
            out.append([0, 1, 2, 3], [0, 3, 1], data, [1.0, 1.0, -1.0])
    assert _leftovers(tmp_path) == []


def test_the_writer_refuses_bad_indices(tmp_path):
    for kwargs, indices, needle in (({"n_features": 3}, [0, 3], "feature index 4 beyond the 3"),
                                    ({}, [2, 1], "must increase within a row")):
        with pytest.raises(DataError, match=needle):
            with BinaryWriter(tmp_path / "o.lsvm", **kwargs) as out:
                out.append([0, 2], indices, None, [1.0])
    with pytest.raises(ParameterError):
        BinaryWriter(tmp_path / "o.lsvm", values="float16")
    with pytest.raises(ParameterError, match="cannot write a binary data file to '-'"):
        BinaryWriter("-")
    assert _leftovers(tmp_path) == []


def test_ctrl_c_while_writing_leaves_nothing_and_keeps_the_old_file(tmp_path):
    target = tmp_path / "o.lsvm"
    target.write_bytes(b"old")
    X, y, _, _ = sample()
    with pytest.raises(KeyboardInterrupt):
        with BinaryWriter(target) as out:
            out.append(X.indptr, X.indices, X.data, y)
            raise KeyboardInterrupt
    assert target.read_bytes() == b"old" and _leftovers(tmp_path) == ["o.lsvm"]


# ------------------------------------------------------------------ MPI ranks map their share

@pytest.mark.parametrize("n_ranks", [1, 3, 7])
def test_the_ranks_shares_of_a_binary_file_are_its_rows(tmp_path, n_ranks):
    X, y, qid, w = sample(n_rows=23)
    path = write(tmp_path / "d.lsvm", X, y, qid, w)
    shares = run_ranks(lambda comm: read_binary_share(path, comm, with_qid=True), n_ranks)
    assert [s.row_offset for s in shares] == np.cumsum([0] + [s.X.n_rows for s in
                                                               shares[:-1]]).tolist()
    indptr = np.concatenate([[0]] + [s.X.indptr[1:] + s.X.indptr[0] + X.indptr[s.row_offset]
                                     for s in shares])
    assert np.array_equal(indptr, X.indptr)
    for name, ref in (("y", y), ("qid", qid), ("weights", w)):
        assert np.array_equal(np.concatenate([getattr(s, name) for s in shares]), ref)
    assert np.array_equal(np.concatenate([s.X.indices for s in shares]), X.indices)
    assert all(s.n_rows_total == 23 and s.n_features == X.shape[1] for s in shares)
    # rows split by their entries: no share holds much more than its part
    cost = [s.X.nnz + s.X.n_rows for s in shares]
    assert max(cost) <= (X.nnz + 23) / n_ranks + X.getnnz(axis=1).max() + 1
    last = shares[-1]
    assert last.places.where(last.X.n_rows - 1) == f"{path}: example 23"


def test_every_rank_raises_the_same_error_for_a_damaged_file(good, tmp_path):
    raw = bytearray(open(good, "rb").read())
    raw[-1] ^= 1
    p = tmp_path / "bad.lsvm"
    p.write_bytes(bytes(raw))
    results = run_ranks(lambda comm: read_binary_share(str(p), comm), 3)
    assert all(isinstance(r, DataError) for r in results)
    assert len({str(r) for r in results}) == 1


def test_a_pipe_is_read_as_the_stream_it_is(tmp_path, good):
    """A named pipe (as `<(zcat data.gz)` gives) is never peeked at for the magic bytes,
    which would take them from its reader: text through it reads whole, and a binary
    file through it is refused in one line."""
    import threading

    fifo = str(tmp_path / "pipe")
    for payload, check in ((b"1 1:2\n-1 3:4\n", "text"), (open(good, "rb").read(), "binary")):
        os.mkfifo(fifo)
        feeder = threading.Thread(target=lambda: open(fifo, "wb").write(payload))
        feeder.start()
        try:
            if check == "text":
                X, y = linsvm.load_svmlight(fifo)
                assert X.toarray().tolist() == [[2, 0, 0], [0, 0, 4]] and y.tolist() == [1, -1]
            else:
                with pytest.raises(DataError, match="a linsvm binary data file, which is read "
                                                    "by its path"):
                    linsvm.load_svmlight(fifo)
        finally:
            feeder.join(timeout=10)
            os.unlink(fifo)
