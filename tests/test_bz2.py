"""Tests of block-parallel bzip2 reading (linsvm._bzip2, linsvm._bz2blocks).

The parallel path must give exactly what the serial path gives: the same CSR
arrays bit for bit, and on bad input the same DataError.  Tests that check the
parallel path force it (two threads, and a serial path that fails if called),
so a silent fallback cannot make them pass.
"""
import bz2
import io
import random
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm import _bz2blocks, _bzip2
from linsvm import data as data_mod
from linsvm.data import dump_svmlight, load_svmlight
from linsvm.errors import DataError

from conftest import shared_file

BLOCK_MAGIC = 0x314159265359
EOS_MAGIC = 0x177245385090


def same_bits(a, b):
    a = np.asarray(a)
    b = np.asarray(b)
    return a.shape == b.shape and a.dtype == b.dtype and a.tobytes() == b.tobytes()


def same_result(r1, r2):
    (X1, *rest1), (X2, *rest2) = r1, r2
    return (X1.shape == X2.shape and same_bits(X1.indptr, X2.indptr)
            and same_bits(X1.indices, X2.indices) and same_bits(X1.data, X2.data)
            and all(same_bits(a, b) for a, b in zip(rest1, rest2)))


def random_text(n_rows, seed, qid=False):
    """SVM-light text of a random sparse matrix (awkward numbers included)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_rows, 300, density=0.05, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k) * 10.0 ** rng.integers(-5, 5, k))
    y = rng.integers(-3, 4, n_rows).astype(float)
    q = rng.integers(0, 50, n_rows) if qid else None
    out = io.BytesIO()
    dump_svmlight(X, y, out, qid=q)
    return out.getvalue()


def runs_text(n_rows, seed):
    """Lines full of long runs of one byte: bzip2's run-length stage (RLE1) turns
    runs of 4..255 into 5 bytes, so block boundaries fall inside runs."""
    rnd = random.Random(seed)
    lines = []
    for i in range(n_rows):
        k = rnd.choice([1, 3, 4, 5, 6, 250, 251, 254, 255, 256, 259, 260, 509, 510, 1000])
        sep = rnd.choice([" ", "\t"]) * k
        lines.append(f"{i % 3 - 1}{sep}{rnd.randint(1, 5)}:1{sep}9:{'7' * rnd.choice([1, 4, 9])}")
        if rnd.random() < 0.1:
            lines.append("#" + "x" * rnd.choice([4, 255, 256, 3000]))
        if rnd.random() < 0.05:
            lines.append("")
    return ("\n".join(lines) + "\n").encode()


def force_parallel(monkeypatch):
    """Two decompression threads, and the serial reader made to fail if used
    for bzip2 input."""
    monkeypatch.setattr(_bzip2, "n_threads", lambda: 2)
    serial = data_mod._parse_serial

    def no_serial(src, *args):
        assert src.sniff() != "bzip2", "the serial path was used"
        return serial(src, *args)

    monkeypatch.setattr(data_mod, "_parse_serial", no_serial)


@pytest.fixture
def parallel_only(monkeypatch):
    force_parallel(monkeypatch)


def serial_load(monkeypatch, source, **kw):
    """load_svmlight with one thread, i.e. the serial reader of old."""
    with monkeypatch.context() as m:
        m.setattr(_bzip2, "n_threads", lambda: 1)
        return load_svmlight(source, **kw)


def check_parallel(tmp_path, blob, text, min_blocks, **kw):
    """blob splits into >= min_blocks blocks that decompress to text, and
    load_svmlight of blob (parallel path) equals load_svmlight of text."""
    blocks = _bzip2.split(blob)
    assert blocks is not None and len(blocks) >= min_blocks
    pieces = [b"".join(d) for d, _ in _bzip2.inflate_blocks(blob, blocks, 2)]
    assert b"".join(pieces) == bz2.decompress(blob) == text
    path = tmp_path / "in.bz2"
    path.write_bytes(blob)
    plain = tmp_path / "in.svm"
    plain.write_bytes(text)
    assert same_result(load_svmlight(path, **kw), load_svmlight(plain, **kw))


# ---------------------------------------------------------------------------
# the bit scanner
# ---------------------------------------------------------------------------

def slow_magics(buf):
    """Every (bit offset, kind) of a magic in buf, one bit offset at a time."""
    n_bits = 8 * len(buf)
    big = int.from_bytes(buf, "big")
    found = []
    for pos in range(n_bits - 47):
        v = (big >> (n_bits - 48 - pos)) & 0xFFFFFFFFFFFF
        if v == BLOCK_MAGIC:
            found.append((pos, _bz2blocks.BLOCK))
        elif v == EOS_MAGIC:
            found.append((pos, _bz2blocks.EOS))
    return found


def plant(buf, pos, magic):
    """buf (bytearray) with the 48 bits of magic written at bit offset pos."""
    n_bits = 8 * len(buf)
    big = int.from_bytes(buf, "big")
    shift = n_bits - 48 - pos
    big = (big & ~(0xFFFFFFFFFFFF << shift)) | (magic << shift)
    return bytearray(big.to_bytes(len(buf), "big"))


@pytest.mark.parametrize("seed", range(4))
def test_scanner_matches_slow_scanner(seed):
    rnd = random.Random(seed)
    buf = bytearray(rnd.randbytes(3000))
    n_bits = 8 * len(buf)
    # each magic at every bit offset within a byte, the first and last possible
    # places, and two magics back to back
    places = [(0, BLOCK_MAGIC), (n_bits - 48, EOS_MAGIC), (800, BLOCK_MAGIC), (848, EOS_MAGIC)]
    for s in range(8):
        places.append((8 * (120 + 20 * s + rnd.randrange(10)) + s, BLOCK_MAGIC))
        places.append((8 * (400 + 20 * s + rnd.randrange(10)) + s, EOS_MAGIC))
    for pos, magic in places:
        buf = plant(buf, pos, magic)
    want = slow_magics(bytes(buf))
    assert len(want) >= len(places)
    assert _bz2blocks.find_magics(bytes(buf)) == want
    assert {p % 8 for p, _ in want} == set(range(8))
    for cut in (len(buf) - 1, len(buf) - 6, 7, 6, 1, 0):     # magics cut off at the end
        assert _bz2blocks.find_magics(bytes(buf[:cut])) == slow_magics(bytes(buf[:cut]))


def test_scanner_on_bytes_full_of_candidates():
    # bytes equal to the filter values everywhere: every position is checked in full
    values = bytes(sorted({(m >> (32 + s)) & 0xFF for m in (BLOCK_MAGIC, EOS_MAGIC)
                           for s in range(8)}))
    rnd = random.Random(5)
    buf = bytes(rnd.choice(values) for _ in range(2000))
    assert _bz2blocks.find_magics(buf) == slow_magics(buf)


def one_block_stream(blob_bits, block):
    """A bzip2 stream of one block, built bit by bit in Python from the
    bitstring of the input."""
    start, end, level, crc = block
    bits = blob_bits[start:end] + format(EOS_MAGIC, "048b") + format(crc, "032b")
    bits += "0" * (-len(bits) % 8)
    return b"BZh%d" % level + int(bits, 2).to_bytes(len(bits) // 8, "big")


def test_read_bits():
    buf = bytes([0b10110011, 0b01010101, 0xFF])
    assert _bz2blocks.read_bits(buf, 0, 8) == 0b10110011
    assert _bz2blocks.read_bits(buf, 3, 9) == 0b100110101
    assert _bz2blocks.read_bits(buf, 20, 4) == 0xF
    with pytest.raises(ValueError):
        _bz2blocks.read_bits(buf, 20, 5)


def bitstring(buf):
    return "".join(f"{c:08b}" for c in buf)


def test_append_bits():
    rnd = random.Random(3)
    buf = rnd.randbytes(300)
    bits = bitstring(buf)
    for _ in range(300):
        start = rnd.randrange(0, 2400)
        end = rnd.randrange(start, 2401)
        n_carry = rnd.randrange(8)
        carry = rnd.getrandbits(n_carry) if n_carry else 0
        data, c2, n2 = _bz2blocks.append_bits(buf, start, end, carry, n_carry)
        want = (format(carry, f"0{n_carry}b") if n_carry else "") + bits[start:end]
        assert bitstring(data) + (format(c2, f"0{n2}b") if n2 else "") == want
        assert 0 <= n2 < 8 and len(data) == len(want) // 8
    with pytest.raises(ValueError):
        _bz2blocks.append_bits(buf, 0, 2401, 0, 0)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_inflate_blocks_in_order(threads):
    text = random_text(3000, seed=8)
    blob = bz2.compress(text, 1) + bz2.compress(text[:1000], 9) + bz2.compress(text, 2)
    blocks = _bzip2.split(blob)
    pieces = [(b"".join(d), e) for d, e in _bzip2.inflate_blocks(blob, blocks, threads)]
    assert [e for _, e in pieces] == [b[1] for b in blocks]
    assert b"".join(d for d, _ in pieces) == bz2.decompress(blob)
    # each piece is exactly its block: a one-block stream of it gives the same
    blob_bits = bitstring(blob)
    for (data, _), block in zip(pieces, blocks):
        assert bz2.decompress(one_block_stream(blob_bits, block)) == data


@pytest.mark.parametrize("threads", [1, 2])
def test_inflate_blocks_checks_each_streams_end(threads):
    text = random_text(3000, seed=8)
    blob = bz2.compress(text, 1)
    blocks = _bzip2.split(blob)
    start, end, level, crc = blocks[-1]
    blocks[-1] = (start, end, level, crc ^ 1)      # the thread's combined CRC is then wrong
    got = []
    with pytest.raises(_bzip2.BadBlock):
        for parts, _ in _bzip2.inflate_blocks(blob, blocks, threads):
            got.append(b"".join(parts))
    assert b"".join(got) == text                    # raised after the last block


# ---------------------------------------------------------------------------
# round trips through the parallel path
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("level, n_rows, min_blocks", [(1, 3000, 4), (9, 16000, 2)])
def test_random_text_many_blocks(tmp_path, parallel_only, level, n_rows, min_blocks):
    text = random_text(n_rows, seed=level)
    check_parallel(tmp_path, bz2.compress(text, level), text, min_blocks)


def test_qid_many_blocks(tmp_path, parallel_only):
    text = random_text(3000, seed=7, qid=True)
    check_parallel(tmp_path, bz2.compress(text, 1), text, 4, with_qid=True)


def test_long_runs(tmp_path, parallel_only):
    text = runs_text(30000, seed=1)
    check_parallel(tmp_path, bz2.compress(text, 1), text, 3)


def test_concatenated_streams_of_different_levels(tmp_path, parallel_only):
    text = random_text(4000, seed=3)
    cuts = [0, 150001, 150001, 400007, len(text)]          # mid-line, and an empty stream
    levels = [1, 5, 2, 9]
    blob = b"".join(bz2.compress(text[a:b], lvl)
                    for a, b, lvl in zip(cuts, cuts[1:], levels))
    blocks = _bzip2.split(blob)
    assert {lvl for _, _, lvl, _ in blocks} == {1, 2, 9}
    check_parallel(tmp_path, blob, text, 5)


def test_empty_stream(tmp_path, monkeypatch):
    monkeypatch.setattr(_bzip2, "n_threads", lambda: 2)
    blob = bz2.compress(b"")
    assert _bzip2.split(blob) == []
    path = tmp_path / "e.bz2"
    path.write_bytes(blob)
    X, y = load_svmlight(path)
    assert X.shape == (0, 0) and y.shape == (0,)
    assert _bzip2.split(blob + bz2.compress(b"", 3)) == []


def test_exactly_one_block(tmp_path, monkeypatch):
    monkeypatch.setattr(_bzip2, "n_threads", lambda: 2)
    text = random_text(200, seed=11)
    blob = bz2.compress(text, 9)
    blocks = _bzip2.split(blob)
    assert len(blocks) == 1
    start, end, level, crc = blocks[0]
    assert start == 32 and level == 9
    # laid into a new stream, the only block gives back the original stream
    assert b"BZh9" + one_block_stream(bitstring(blob), blocks[0])[4:] == blob
    path = tmp_path / "one.bz2"
    path.write_bytes(blob)
    assert same_result(load_svmlight(path), load_svmlight(io.BytesIO(text)))


def test_stdin_and_file_objects(tmp_path, monkeypatch, parallel_only):
    text = random_text(3000, seed=4)
    blob = bz2.compress(text, 1)
    want = load_svmlight(io.BytesIO(text))

    class FakeStdin:
        buffer = io.BytesIO(blob)

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    assert same_result(load_svmlight("-"), want)
    assert same_result(load_svmlight(io.BytesIO(blob)), want)


def test_threads_are_cleaned_up(tmp_path, parallel_only):
    text = random_text(3000, seed=6)
    before = threading.active_count()
    load_svmlight(io.BytesIO(bz2.compress(text, 1)))
    assert threading.active_count() == before


# ---------------------------------------------------------------------------
# bad input: exactly the serial reader's behaviour
# ---------------------------------------------------------------------------

def outcome(fn):
    try:
        return "ok", fn()
    except DataError as e:
        return "error", str(e)


def assert_same_as_serial(monkeypatch, path, **kw):
    monkeypatch.setattr(_bzip2, "n_threads", lambda: 2)
    threads = threading.active_count()
    got = outcome(lambda: load_svmlight(path, **kw))
    assert threading.active_count() == threads
    want = outcome(lambda: serial_load(monkeypatch, path, **kw))
    assert got[0] == want[0]
    if got[0] == "ok":
        assert same_result(got[1], want[1])
    else:
        assert got[1] == want[1]
    return got


def five_blocks():
    text = random_text(3000, seed=9)
    blob = bz2.compress(text, 1)
    blocks = _bzip2.split(blob)
    assert len(blocks) >= 5
    return text, blob, blocks


def test_truncated(tmp_path, monkeypatch):
    text, blob, blocks = five_blocks()
    eos = blocks[-1][1]
    for cut in (len(blob) // 2, blocks[3][0] // 8 + 2, eos // 8, eos // 8 + 8, len(blob) - 1):
        path = tmp_path / f"t{cut}.bz2"
        path.write_bytes(blob[:cut])
        kind, msg = assert_same_as_serial(monkeypatch, path)
        assert kind == "error" and msg.startswith(f"{path}: bad bzip2 data")


def test_corrupt_block(tmp_path, monkeypatch):
    text, blob, blocks = five_blocks()
    for k in (1, 3):
        bad = bytearray(blob)
        mid = (blocks[k][0] + blocks[k][1]) // 16
        bad[mid] ^= 0x5A
        path = tmp_path / f"c{k}.bz2"
        path.write_bytes(bytes(bad))
        kind, msg = assert_same_as_serial(monkeypatch, path)
        assert kind == "error" and msg.startswith(f"{path}: bad bzip2 data")


def test_wrong_crcs(tmp_path, monkeypatch):
    text, blob, blocks = five_blocks()
    # a block CRC, then the stream's combined CRC
    for bit in (blocks[2][0] + 48 + 5, blocks[-1][1] + 48 + 5):
        bad = bytearray(blob)
        bad[bit // 8] ^= 0x80 >> (bit % 8)
        path = tmp_path / f"crc{bit}.bz2"
        path.write_bytes(bytes(bad))
        assert _bzip2.split(bytes(bad)) is None or bit < blocks[-1][1]
        kind, msg = assert_same_as_serial(monkeypatch, path)
        assert kind == "error" and msg.startswith(f"{path}: bad bzip2 data")


def test_trailing_bytes(tmp_path, monkeypatch):
    text, blob, blocks = five_blocks()
    for tail in (b"\0", b"garbage", b"BZh9", b"BZh" + b"\x31\x41\x59\x26\x53\x59" * 3):
        assert _bzip2.split(blob + tail) is None
        path = tmp_path / "tail.bz2"
        path.write_bytes(blob + tail)
        assert_same_as_serial(monkeypatch, path)


def test_parse_errors_keep_serial_messages(tmp_path, monkeypatch):
    text = random_text(3000, seed=2).splitlines(keepends=True)
    text[2500] = b"1 5:1 3:1\n"                       # in a late block
    blob = bz2.compress(b"".join(text), 1)
    assert len(_bzip2.split(blob)) >= 4
    path = tmp_path / "p.bz2"
    path.write_bytes(blob)
    kind, msg = assert_same_as_serial(monkeypatch, path)
    assert kind == "error" and msg == f"{path}:2501: indices not increasing (3 after 5)"
    kind, msg = assert_same_as_serial(monkeypatch, path, n_features=4)
    assert kind == "error" and msg.startswith(f"{path}:")
    # a parse error in an early block and a corrupt later block
    blocks = _bzip2.split(blob)
    text[10] = b"1 x\n"
    blob = bytearray(bz2.compress(b"".join(text), 1))
    blocks = _bzip2.split(bytes(blob))
    blob[(blocks[3][0] + blocks[3][1]) // 16] ^= 0x5A
    path.write_bytes(bytes(blob))
    assert_same_as_serial(monkeypatch, path)


def test_bad_split_falls_back(tmp_path, monkeypatch):
    """A chance magic would cut a block short: its re-framed stream does not
    decompress, and the reader starts again serially with the right result."""
    text, blob, blocks = five_blocks()
    start, end, level, crc = blocks[2]
    wrong = blocks[:2] + [(start, start + 8000, level, crc), (start + 8000, end, level, crc)] \
        + blocks[3:]
    with pytest.raises(_bzip2.BadBlock):
        list(_bzip2.inflate_blocks(blob, wrong, 2))
    monkeypatch.setattr(_bzip2, "split", lambda b: wrong)
    monkeypatch.setattr(_bzip2, "n_threads", lambda: 2)
    used = []
    serial = data_mod._parse_serial
    monkeypatch.setattr(data_mod, "_parse_serial", lambda *a: used.append(1) or serial(*a))
    assert same_result(load_svmlight(io.BytesIO(blob)), load_svmlight(io.BytesIO(text)))
    assert used


# ---------------------------------------------------------------------------
# the largest shared data set
# ---------------------------------------------------------------------------

def test_sector_parallel_equals_serial(monkeypatch):
    path = shared_file("multiclass/sector.scale.bz2")
    blob = path.read_bytes()
    assert len(_bzip2.split(blob)) > 1
    want = serial_load(monkeypatch, path)
    force_parallel(monkeypatch)
    assert same_result(load_svmlight(path), want)


@pytest.mark.parametrize("cpus, load, want", [
    (1, 0.0, 1), (None, 0.0, 1), (2, 0.2, 2), (2, 1.4, 2), (2, 1.6, 1), (2, 3.0, 1), (8, 3.0, 2)])
def test_n_threads(monkeypatch, cpus, load, want):
    monkeypatch.setattr(_bzip2.os, "cpu_count", lambda: cpus)
    monkeypatch.setattr(_bzip2.os, "getloadavg", lambda: (load, load, load))
    assert _bzip2.n_threads() == want
