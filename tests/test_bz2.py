"""Tests of compressed input: the optional fast readers (indexed_bzip2 for
bzip2 files, ISA-L for gzip) against the standard-library fallback, and the
strict reading of concatenated streams (trailing data is an error).

Every test that compares runs both readers: the `reader` fixture runs a test
once with the fast readers (skipped when the fast-io extra is absent) and once
with them switched off, so CI covers both paths.
"""
import bz2
import gzip
import io
import lzma
import os
import random
import sys
import threading

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm.io import compressed as data_mod
from linsvm.io.svmlight import dump_svmlight, load_svmlight, iter_svmlight
from linsvm.errors import DataError

from conftest import shared_file


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
    """Lines full of long runs of one byte (bzip2's run-length stage)."""
    rnd = random.Random(seed)
    lines = []
    for i in range(n_rows):
        k = rnd.choice([1, 3, 4, 5, 6, 250, 251, 254, 255, 256, 259, 260, 509, 510, 1000])
        sep = rnd.choice([" ", "\t"]) * k
        lines.append(f"{i % 3 - 1}{sep}{rnd.randint(1, 5)}:1{sep}9:{'7' * rnd.choice([1, 4, 9])}")
        if rnd.random() < 0.1:
            lines.append("#" + "x" * rnd.choice([4, 255, 256, 3000]))
    return ("\n".join(lines) + "\n").encode()


FAST = data_mod._fast_bzip2() is not None and data_mod._fast_gzip() is not None


@pytest.fixture(params=["fast", "stdlib"])
def reader(request, monkeypatch):
    """Run the test with the fast-io readers, then with the standard library only."""
    if request.param == "fast":
        if not FAST:
            pytest.skip("the fast-io extra (indexed_bzip2, isal) is not installed")
    else:
        monkeypatch.setattr(data_mod, "_indexed_bzip2", None)
        monkeypatch.setattr(data_mod, "_igzip", None)
    return request.param


def outcome(fn):
    try:
        return "ok", fn()
    except DataError as e:
        return "error", str(e)


def load_file(tmp_path, blob, name="d.bz2", **kw):
    path = tmp_path / name
    path.write_bytes(blob)
    return outcome(lambda: load_svmlight(path, **kw))


# ---------------------------------------------------------------------------
# multi-stream files and block sizes: one verdict whatever the threads, load or library
# ---------------------------------------------------------------------------

def test_bzip2_results_do_not_depend_on_threads_or_load(tmp_path, monkeypatch):
    """Two streams, the second's header digit (1) too small for its level-9
    blocks: main read 60,000 rows when the load average let it use two
    threads, and failed (or read 30,000) serially.  Now the load and the CPU
    count play no part, nor whether indexed_bzip2 is installed: one answer."""
    text = b"".join(b"%d 1:%d\n" % (i % 2, i + 1) for i in range(30000))
    good = bz2.compress(text, 9)
    blob = good + b"BZh1" + good[4:]
    results = set()
    for cpus, load in ((1, 0.0), (2, 0.0), (2, 50.0), (64, 0.0)):
        monkeypatch.setattr(os, "cpu_count", lambda c=cpus: c)
        monkeypatch.setattr(os, "getloadavg", lambda v=load: (v, v, v))
        kind, res = load_file(tmp_path, blob)
        results.add((kind, res if kind == "error" else res[0].shape[0]))
    assert len(results) == 1
    kind, res = results.pop()
    # never a silent half, and one verdict whatever is installed:
    # libbz2's, which refuses the second stream's blocks
    assert kind == "error" and "bad bzip2 data" in res


def test_bzip2_level_digit_too_small_without_fast_io(tmp_path, monkeypatch):
    """libbz2 refuses blocks larger than the header digit allows, in any stream."""
    monkeypatch.setattr(data_mod, "_indexed_bzip2", None)
    good = bz2.compress(b"".join(b"%d 1:%d\n" % (i % 2, i + 1) for i in range(30000)), 9)
    kind, msg = load_file(tmp_path, good + b"BZh1" + good[4:])
    assert kind == "error" and "bad bzip2 data" in msg


@pytest.mark.parametrize("tail", [b"\0", b"garbage", b"BZh9", b"BZh" + b"\x31\x41\x59\x26\x53\x59" * 3,
                                  b"\x1f\x8b"])
def test_trailing_garbage_after_bz2_is_an_error(tmp_path, reader, tail):
    blob = bz2.compress(random_text(300, seed=1), 9)
    kind, msg = load_file(tmp_path, blob + tail)
    assert kind == "error" and msg.startswith(f"{tmp_path / 'd.bz2'}: bad bzip2 data"), msg
    kind, msg = outcome(lambda: load_svmlight(io.BytesIO(blob + tail)))
    assert kind == "error" and "bad bzip2 data" in msg
    with pytest.raises(DataError, match="bad bzip2 data"):
        list(iter_svmlight(io.BytesIO(blob + tail)))


@pytest.mark.parametrize("tail", [b"\0", b"\0\0\0", b"garbage", b"\xfd7zXZ"])
def test_trailing_garbage_after_xz_is_an_error(tail):
    blob = lzma.compress(random_text(300, seed=2))
    with pytest.raises(DataError, match="bad xz data"):
        load_svmlight(io.BytesIO(blob + tail))


def test_xz_stream_padding_and_concatenation_are_accepted():
    text = random_text(300, seed=3)
    a, b = lzma.compress(text[:5000]), lzma.compress(text[5000:])
    want = load_svmlight(io.BytesIO(text))
    for blob in (a + b, a + b"\0" * 4 + b, a + b + b"\0" * 8):
        assert same_result(load_svmlight(io.BytesIO(blob)), want)


# ---------------------------------------------------------------------------
# both readers give the rows of the text
# ---------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("level, n_rows", [(1, 3000), (9, 16000)])
def test_random_text_many_blocks(tmp_path, reader, level, n_rows):
    text = random_text(n_rows, seed=level)
    kind, res = load_file(tmp_path, bz2.compress(text, level))
    assert kind == "ok" and same_result(res, load_svmlight(io.BytesIO(text)))


@pytest.mark.slow
def test_qid_and_long_runs(tmp_path, reader):
    for text, kw in ((random_text(3000, seed=7, qid=True), {"with_qid": True}),
                     (runs_text(20000, seed=1), {})):
        kind, res = load_file(tmp_path, bz2.compress(text, 1), **kw)
        assert kind == "ok" and same_result(res, load_svmlight(io.BytesIO(text), **kw))


@pytest.mark.slow
def test_concatenated_streams_of_different_levels(tmp_path, reader):
    text = random_text(4000, seed=3)
    cuts = [0, 150001, 150001, 400007, len(text)]          # mid-line, and an empty stream
    levels = [1, 5, 2, 9]
    blob = b"".join(bz2.compress(text[a:b], lvl) for a, b, lvl in zip(cuts, cuts[1:], levels))
    want = load_svmlight(io.BytesIO(text))
    for tail in (b"", bz2.compress(b""), bz2.compress(b"") * 3):
        kind, res = load_file(tmp_path, blob + tail)
        assert kind == "ok" and same_result(res, want)


def test_empty_streams(tmp_path, reader):
    for blob in (bz2.compress(b""), bz2.compress(b"") * 2):
        kind, (X, y) = load_file(tmp_path, blob)
        assert X.shape == (0, 0) and y.shape == (0,)


def test_stdin_and_file_objects(monkeypatch, reader):
    text = random_text(3000, seed=4)
    blob = bz2.compress(text, 1)
    want = load_svmlight(io.BytesIO(text))

    class FakeStdin:
        buffer = io.BytesIO(blob)

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    assert same_result(load_svmlight("-"), want)
    assert same_result(load_svmlight(io.BytesIO(blob)), want)


def test_threads_are_cleaned_up(tmp_path, reader):
    blob = bz2.compress(random_text(3000, seed=6), 1)
    before = threading.active_count()
    load_file(tmp_path, blob)
    load_file(tmp_path, blob[:-3])
    assert threading.active_count() == before


def test_truncated_and_corrupt(tmp_path, reader):
    blob = bz2.compress(random_text(3000, seed=9), 1)
    for cut in (4, len(blob) // 2, len(blob) - 11, len(blob) - 1):
        kind, msg = load_file(tmp_path, blob[:cut])
        assert kind == "error" and msg.startswith(f"{tmp_path / 'd.bz2'}: bad bzip2 data"), (cut, msg)
    for pos in (len(blob) // 3, len(blob) - 6):             # a block, the combined CRC
        bad = bytearray(blob)
        bad[pos] ^= 0x5A
        kind, msg = load_file(tmp_path, bytes(bad))
        assert kind == "error" and "bad bzip2 data" in msg, (pos, msg)


def test_parse_errors_name_the_line(tmp_path, reader):
    text = random_text(3000, seed=2).splitlines(keepends=True)
    text[2500] = b"1 5:1 3:1\n"
    kind, msg = load_file(tmp_path, bz2.compress(b"".join(text), 1))
    assert (kind, msg) == ("error", f"{tmp_path / 'd.bz2'}:2501: indices not increasing (3 after 5)")


@pytest.mark.parametrize("tail", [b"", b"\0\0", b"junk", b"\x1f\x8b"])
def test_gzip_readers_agree(tmp_path, monkeypatch, tail):
    text = random_text(2000, seed=5)
    blob = gzip.compress(text[:7000]) + gzip.compress(text[7000:]) + tail
    got = {}
    for name in ("fast", "stdlib"):
        if name == "fast" and not FAST:
            continue
        if name == "stdlib":
            monkeypatch.setattr(data_mod, "_igzip", None)
        got[name] = outcome(lambda: load_svmlight(io.BytesIO(blob)))
    kinds = {k for k, _ in got.values()}
    assert kinds == ({"ok"} if tail in (b"", b"\0\0") else {"error"})
    if "ok" in kinds:
        want = load_svmlight(io.BytesIO(text))
        assert all(same_result(r, want) for _, r in got.values())


@pytest.mark.slow
@pytest.mark.data
def test_sector_fast_equals_stdlib(monkeypatch):
    if not FAST:
        pytest.skip("the fast-io extra is not installed")
    path = shared_file("multiclass/sector.scale.bz2")
    got = load_svmlight(path)
    monkeypatch.setattr(data_mod, "_indexed_bzip2", None)
    assert same_result(got, load_svmlight(path))


# one verdict per damaged .bz2, whatever readers are installed

def _bz2_verdicts(path, **kw):
    """{reader: outcome} of loading `path` with indexed_bzip2 (when installed) and with
    the standard library alone."""
    from linsvm.errors import DataError
    from linsvm.io import compressed
    from linsvm.io.svmlight import load_svmlight
    out = {}
    saved = compressed._fast_bzip2()
    for reader in ("fast", "stdlib"):
        if reader == "fast" and saved is None:
            continue
        compressed._indexed_bzip2 = saved if reader == "fast" else None
        try:
            X, y = load_svmlight(path, **kw)
            out[reader] = ("ok", X.shape, X.data.tobytes(), y.tobytes())
        except DataError as exc:
            out[reader] = ("error", str(exc))
        finally:
            compressed._indexed_bzip2 = saved
    return out


def _text(n_rows, seed):
    rng = np.random.default_rng(seed)
    return b"".join(b"%d %d:%.6f %d:%.3f\n" % (i % 2 * 2 - 1, 1 + i % 7, rng.random(),
                                                 9 + i % 5, rng.random())
                    for i in range(n_rows))


@pytest.mark.slow
def test_a_damaged_bz2_gets_one_verdict_whatever_is_installed(tmp_path):
    """A .bz2 whose header's level digit understates its blocks was read (36,471 rows) with
    the fast-io extra and refused by the standard library and `bzip2 -t`.  Now it is
    refused by both, with the same message; so is a later stream whose digit understates
    its blocks and a stream whose combined CRC is wrong (indexed_bzip2 checks neither)."""
    import bz2
    text = _text(40000, seed=5)
    good = bz2.compress(text, 9)
    assert len(good) > 4 and good[:4] == b"BZh9"
    second = bz2.compress(text[:300000], 9)
    bad_crc = bytearray(good)
    bad_crc[-2] ^= 0x10                     # in the stream's CRC after its end marker
    cases = {"digit": b"BZh1" + good[4:], "second stream": good + b"BZh3" + second[4:],
             "stream crc": bytes(bad_crc)}
    for name, blob in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.bz2"
        path.write_bytes(blob)
        verdicts = _bz2_verdicts(path)
        assert set(verdicts) == ({"fast", "stdlib"} if "fast" in verdicts else {"stdlib"})
        assert {v[0] for v in verdicts.values()} == {"error"}, (name, verdicts)
        assert len({v[1] for v in verdicts.values()}) == 1, (name, verdicts)
        assert verdicts["stdlib"][1] == f"{path}: bad bzip2 data: Invalid data stream"


def test_sound_files_read_the_same_by_both_readers(tmp_path):
    """Files libbz2 accepts are read alike, the fast path kept for level-9 streams: a
    later stream of a lower level (read again by the standard library) and many level-9
    streams (pbzip2's layout, no second reading)."""
    import bz2

    from linsvm.io import compressed
    text = _text(30000, seed=6)
    cut = text.index(b"\n", len(text) // 2) + 1
    checks = []
    spy = compressed.Input._strict_check
    compressed.Input._strict_check = lambda self: (checks.append(self.name), spy(self))[1]
    try:
        for name, blob in (("levels", bz2.compress(text[:cut], 9) + bz2.compress(text[cut:], 2)),
                           ("pbzip2", b"".join(bz2.compress(text[k:k + 200000], 9)
                                               for k in range(0, len(text), 200000)))):
            path = tmp_path / f"{name}.bz2"
            path.write_bytes(blob)
            verdicts = _bz2_verdicts(path)
            assert {v[0] for v in verdicts.values()} == {"ok"}, verdicts
            assert len(set(verdicts.values())) == 1
            assert verdicts["stdlib"][1] == (30000, 13)
    finally:
        compressed.Input._strict_check = spy
    if compressed._fast_bzip2() is not None:
        assert checks == [str(tmp_path / "levels.bz2")]       # pbzip2's: read once


@pytest.mark.slow
def test_a_fast_reader_failure_is_judged_by_the_standard_library(tmp_path, monkeypatch):
    """When indexed_bzip2 fails part-way (it refuses randomised blocks, which libbz2 reads),
    the standard library goes on from there: the rows of a sound file, all of them."""
    import bz2

    from linsvm.io import compressed
    if compressed._fast_bzip2() is None:
        pytest.skip("the fast-io extra (indexed_bzip2) is not installed")
    real_open = compressed._fast_bzip2().open

    class FailsPartWay:
        def __init__(self, stream):
            self.stream, self.left = stream, 700000

        def readinto(self, b):
            if self.left <= 0:
                raise ValueError("[BZip2 block header] deprecated isRandomized bit is not supported")
            n = self.stream.readinto(memoryview(b)[:min(len(b), self.left)])
            self.left -= n
            return n

        def close(self):
            self.stream.close()

    class FakeModule:
        @staticmethod
        def open(*args, **kwargs):
            return FailsPartWay(real_open(*args, **kwargs))

    text = _text(40000, seed=7)
    path = tmp_path / "d.bz2"
    path.write_bytes(bz2.compress(text, 9))
    want = _bz2_verdicts(path)["stdlib"]
    monkeypatch.setattr(compressed, "_indexed_bzip2", FakeModule)
    assert _bz2_verdicts(path)["fast"] == want


# ------------------------------------------------------------------ labels name file:line

LABELS = (b"# a header comment\n\n1 1:1\n2 2:1\n# a comment\n1 1:0.5\n\n"
          b"3 1:1 2:1\n0.25 1:1\n2 2:2\n0.75 1:3\n")          # 0.25 is on line 9
