"""Tests of linsvm.io.svmlight: the SVM-light reader and writer."""
import bz2
import gzip
import io
import lzma
import os
import pathlib
import random
import re
import sys

import numpy as np
import pytest
from conftest import data_dir, shared_file
import scipy.sparse as sp

from linsvm import _svmlight
from linsvm.io import compressed
from linsvm.io import svmlight as data_mod
from linsvm.io.svmlight import dump_svmlight, iter_svmlight, load_svmlight
from linsvm.errors import DataError, ParameterError

REPO = pathlib.Path(__file__).resolve().parents[1]


def write(tmp_path, content, name="in.svm"):
    path = tmp_path / name
    path.write_bytes(content)
    return path


def load_bytes(tmp_path, content, **kw):
    return load_svmlight(write(tmp_path, content), **kw)


def dense(X):
    return X.toarray()


def same_bits(a, b):
    """Equal shape, dtype and every bit (so -0.0 != 0.0 and NaN payloads count)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return a.tobytes() == b.tobytes()


def same_csr(A, B):
    A = sp.csr_matrix(A)
    B = sp.csr_matrix(B)
    return (A.shape == B.shape
            and np.array_equal(A.indptr, B.indptr)
            and np.array_equal(A.indices, B.indices)
            and same_bits(A.data, B.data))


# ---------------------------------------------------------------------------
# well-formed input
# ---------------------------------------------------------------------------

def test_basic_rows_and_layout(tmp_path):
    X, y = load_bytes(tmp_path, b"1 1:0.5 3:2\n-1 2:-1.25\n+1\n2.5 3:1e0\n")
    assert isinstance(X, sp.csr_matrix)
    assert X.dtype == np.float64 and y.dtype == np.float64
    assert X.shape == (4, 3)
    np.testing.assert_array_equal(y, [1, -1, 1, 2.5])
    np.testing.assert_array_equal(dense(X), [[0.5, 0, 2], [0, -1.25, 0], [0, 0, 0], [0, 0, 1]])
    np.testing.assert_array_equal(X.indptr, [0, 2, 3, 3, 4])
    np.testing.assert_array_equal(X.indices, [0, 2, 1, 2])


def test_comments_blank_lines_tabs_crlf_no_final_newline(tmp_path):
    content = (b"# header comment\r\n"
               b"\r\n"
               b"  1\t2:3   4:5 # trailing comment 9:9\r\n"
               b"\t\n"
               b"   # indented comment\n"
               b"-1 1:1#comment glued to a value\n"
               b"2 qid:7\t\t1:2")                      # no final newline
    X, y = load_bytes(tmp_path, content)
    np.testing.assert_array_equal(y, [1, -1, 2])
    np.testing.assert_array_equal(dense(X), [[0, 3, 0, 5], [1, 0, 0, 0], [2, 0, 0, 0]])


def test_crlf_cut_before_its_lf_at_end_of_input(tmp_path):
    X, y = load_bytes(tmp_path, b"1 1:1\r\n2 2:2\r")
    np.testing.assert_array_equal(dense(X), [[1, 0], [0, 2]])


def test_label_only_rows_and_explicit_zeros_are_kept(tmp_path):
    X, y = load_bytes(tmp_path, b"1\n-1 2:0 5:0.0\n3 1:-0\n")
    assert X.shape == (3, 5)
    assert X.nnz == 3                                   # explicit zeros are stored
    np.testing.assert_array_equal(X.indptr, [0, 0, 2, 3])
    assert np.signbit(X.data[2])                        # -0 stays negative zero


def test_empty_input(tmp_path):
    for content in (b"", b"\n\n", b"# only a comment\n", b"   \r\n# c"):
        X, y = load_bytes(tmp_path, content)
        assert X.shape == (0, 0) and y.shape == (0,)
    X, y, q = load_bytes(tmp_path, b"", n_features=7, with_qid=True)
    assert X.shape == (0, 7) and q.shape == (0,) and q.dtype == np.int64


def test_n_features(tmp_path):
    path = write(tmp_path, b"1 2:1\n-1 3:1\n")
    assert load_svmlight(path)[0].shape == (2, 3)
    assert load_svmlight(path, n_features=10)[0].shape == (2, 10)
    assert load_svmlight(path, n_features=3)[0].shape == (2, 3)
    want = rf"^{re.escape(str(path))}:2: feature index 3 > n_features=2$"
    with pytest.raises(DataError, match=want):
        load_svmlight(path, n_features=2)
    for bad in (-1, 1.5, "3", True):
        with pytest.raises(ParameterError):
            load_svmlight(path, n_features=bad)


def test_largest_int32_index_is_accepted(tmp_path):
    X, _ = load_bytes(tmp_path, b"1 2147483647:1\n")
    assert X.shape == (1, 2147483647)
    assert X.indices[0] == 2147483646


def test_leading_zeros_in_index(tmp_path):
    X, _ = load_bytes(tmp_path, b"1 007:1 0010:2\n")
    np.testing.assert_array_equal(X.indices, [6, 9])


def test_arrays_are_owned_writable_numpy(tmp_path):
    X, y = load_bytes(tmp_path, b"1 1:1 2:2\n-1 3:3\n")
    assert X.data.flags.writeable and y.flags.writeable
    X.data *= 2
    y[0] = 5
    assert X.sum() == 12 and y[0] == 5
    assert X.indices.dtype == np.int32


# ---------------------------------------------------------------------------
# qid
# ---------------------------------------------------------------------------

def test_qid_parsed(tmp_path):
    content = b"3 qid:1 1:1\n2 qid:1 2:1\n1 qid:-5 1:0.5\n1 qid:9223372036854775807\n"
    X, y, q = load_bytes(tmp_path, content, with_qid=True)
    assert q.dtype == np.int64
    np.testing.assert_array_equal(q, [1, 1, -5, 9223372036854775807])
    np.testing.assert_array_equal(y, [3, 2, 1, 1])
    assert X.shape == (4, 2)


def test_qid_dropped_without_with_qid(tmp_path):
    X, y = load_bytes(tmp_path, b"3 qid:1 1:1\n2 2:1\n")      # mixed is fine when not asked
    assert X.shape == (2, 2)


def test_no_qid_anywhere_gives_zeros(tmp_path):
    _, _, q = load_bytes(tmp_path, b"1 1:1\n2 2:2\n", with_qid=True)
    np.testing.assert_array_equal(q, [0, 0])


@pytest.mark.parametrize("content, line, what", [
    (b"1 qid:1 1:1\n# c\n2 2:1\n", 3, "row has no qid, but earlier rows do (first at line 1)"),
    (b"\n1 1:1\n2 qid:4 2:1\n", 3, "row has a qid, but earlier rows do not (first at line 2)"),
])
def test_mixed_qid_is_an_error(tmp_path, content, line, what):
    path = write(tmp_path, content)
    with pytest.raises(DataError) as ei:
        load_svmlight(path, with_qid=True)
    assert str(ei.value) == f"{path}:{line}: {what}"


# ---------------------------------------------------------------------------
# malformed input: one line, FILE:LINE: what
# ---------------------------------------------------------------------------

ERRORS = [
    # (content, line, expected text after "FILE:LINE: ")
    (b"1 0:1\n", 1, "feature index 0 is not >= 1"),
    (b"1 1:1\n-1 00:1\n", 2, "feature index 0 is not >= 1"),
    (b"1 -3:1\n", 1, "feature index -3 is not >= 1"),
    (b"1 1:1\n\n2:3 4:1\n", 3, "missing label (line starts with '2:3')"),
    (b"qid:1 1:1\n", 1, "missing label (line starts with 'qid:1')"),
    (b"1 1:1\n2 3:1\n3 4:1\n4 abc\n5 1:1\n", 4, "token 'abc' has no ':' (want <index>:<value>)"),
    (b"1 1:1 5\n", 1, "token '5' has no ':' (want <index>:<value>)"),
    (b"1 9:1 7:2\n", 1, "indices not increasing (7 after 9)"),
    (b"1 3:1 3:2\n", 1, "indices not increasing (3 after 3)"),
    (b"1 3000000000:1\n", 1, "feature index 3000000000 beyond int32 (max 2147483647)"),
    (b"1 2147483648:1\n", 1, "feature index 2147483648 beyond int32 (max 2147483647)"),
    (b"1 99999999999999999999999:1\n", 1,
     "feature index 99999999999999999999999 beyond int32 (max 2147483647)"),
    (b"1 1:x1\n", 1, "non-numeric value 'x1'"),
    (b"1 1:1.2.3\n", 1, "non-numeric value '1.2.3'"),
    (b"1 1:1e\n", 1, "non-numeric value '1e'"),
    (b"1 1:1e+\n", 1, "non-numeric value '1e+'"),
    (b"1 1:--1\n", 1, "non-numeric value '--1'"),
    (b"1 1:0x10\n", 1, "non-numeric value '0x10'"),
    (b"1 1:.\n", 1, "non-numeric value '.'"),
    (b"1 1:-\n", 1, "non-numeric value '-'"),
    (b"1 1:1_000\n", 1, "non-numeric value '1_000'"),
    (b"1 1:1,5\n", 1, "non-numeric value '1,5'"),
    (b"1 1:2:3\n", 1, "non-numeric value '2:3'"),
    (b"1 1:nan\n", 1, "non-finite value 'nan'"),
    (b"1 1:-inf\n", 1, "non-finite value '-inf'"),
    (b"1 1:Infinity\n", 1, "non-finite value 'Infinity'"),
    (b"1 1:1e999\n", 1, "non-finite value '1e999'"),
    (b"1 1:-1e309\n", 1, "non-finite value '-1e309'"),
    (b"1 1:\n", 1, "missing value after ':' in '1:'"),
    (b"1 1: 2:3\n", 1, "missing value after ':' in '1:'"),
    (b"1 :3\n", 1, "missing feature index in ':3'"),
    (b"1 a:3\n", 1, "bad feature index in 'a:3'"),
    (b"1 1.5:3\n", 1, "bad feature index in '1.5:3'"),
    (b"1 +2:3\n", 1, "bad feature index in '+2:3'"),
    (b"foo 1:1\n", 1, "bad label 'foo'"),
    (b"1x 1:1\n", 1, "bad label '1x'"),
    (b"\xef\xbb\xbf1 1:1\n", 1, "bad label '\\ufeff1'"),            # a BOM is not guessed away
    (b"nan 1:1\n", 1, "bad label 'nan' (not finite)"),
    (b"1e400 1:1\n", 1, "bad label '1e400' (not finite)"),
    (b"1 qid:x 1:1\n", 1, "bad qid 'qid:x' (want qid:<integer>)"),
    (b"1 qid: 1:1\n", 1, "bad qid 'qid:' (want qid:<integer>)"),
    (b"1 qid:1.5 1:1\n", 1, "bad qid 'qid:1.5' (want qid:<integer>)"),
    (b"1 qid:9223372036854775808\n", 1, "bad qid 'qid:9223372036854775808' (want qid:<integer>)"),
    (b"1 1:1 qid:3\n", 1, "'qid:3': qid must come right after the label"),
    (b"1 1:1\r2:3\n", 1, "carriage return (\\r) inside a line"),
    (b"1 1:1\r\r\n", 1, "carriage return (\\r) inside a line"),
    # line numbering: comments, blank lines, CRLF, unterminated last line
    (b"# c\n\n1 1:1\r\n\r\n-1 0:1", 5, "feature index 0 is not >= 1"),
    (b"1 1:1\n" * 999 + b"1 1:oops\n", 1000, "non-numeric value 'oops'"),
]


@pytest.mark.parametrize("content, line, what", ERRORS)
def test_error_messages(tmp_path, content, line, what):
    path = write(tmp_path, content)
    with pytest.raises(DataError) as ei:
        load_svmlight(path)
    msg = str(ei.value)
    assert msg == f"{path}:{line}: {what}"
    assert "\n" not in msg
    assert isinstance(ei.value, ValueError)


@pytest.mark.parametrize("content, line, what", ERRORS[::5])
def test_error_messages_while_streaming(tmp_path, content, line, what):
    path = write(tmp_path, content)
    with pytest.raises(DataError) as ei:
        for _ in iter_svmlight(path, chunk_rows=1):
            pass
    assert str(ei.value) == f"{path}:{line}: {what}"


def test_long_token_is_truncated_in_message(tmp_path):
    path = write(tmp_path, b"1 1:1 " + b"y" * 5000 + b"\n")
    with pytest.raises(DataError) as ei:
        load_svmlight(path)
    msg = str(ei.value)
    assert msg.startswith(f"{path}:1: token 'yyyy")
    assert "...'" in msg and len(msg) < len(str(path)) + 120


def test_control_bytes_are_escaped_in_message(tmp_path):
    path = write(tmp_path, b"1 1:\x00\x07\xff\n")
    with pytest.raises(DataError) as ei:
        load_svmlight(path)
    assert str(ei.value) == f"{path}:1: non-numeric value '\\x00\\x07\\xff'"


def test_missing_file_is_a_data_error(tmp_path):
    path = tmp_path / "nope.svm"
    with pytest.raises(DataError, match=re.escape(str(path))):
        load_svmlight(path)


# ---------------------------------------------------------------------------
# exact number parsing
# ---------------------------------------------------------------------------

TRICKY = [
    "0", "-0", "+0", "0.0", "-0.0", "0e0", "0e-999", "-0e999", "00000.00000",
    "1", "+1", "-1", "1.", ".5", "-.5", "+.5", "1e0", "1E0", "1e+0", "1e-0",
    "0.1", "0.2", "0.3", "1.1", "2.5", "1e-300", "1e300", "1e308", "1.7976931348623157e308",
    "2.2250738585072014e-308", "2.2250738585072011e-308", "4.9406564584124654e-324",
    "5e-324", "2.4703282292062328e-324", "2.4703282292062327e-324", "1e-400",
    "123456789012345678", "12345678901234567890123", "9007199254740993",
    "9007199254740992", "9007199254740991", "18014398509481985",
    "0.1000000000000000055511151231257827021181583404541015625",
    "0.30000000000000004", "0.3000000000000000444089209850062616169452667236328125",
    "3.141592653589793238462643383279502884197", "2.718281828459045",
    "1e22", "1e23", "1e-22", "1e-23", "9007199254740991e22", "9007199254740993e-22",
    "123e30", "1234567e25", "8.98846567431158e307", "1.0000000000000002",
    "0.000001", "1e-7", "100000000000000000000000", "7.0e-10", "0.0000000000000000000000001",
    "4.35", "8.41", "-0.659091", "0.000292", "1.585000", "1213.000000",
    "1" + "0" * 30, "0." + "0" * 40 + "1", "1." + "0" * 60, "9" * 40, "0." + "9" * 40,
    "123456789e-30", "1.5e-45", "3.4028234663852886e38", "6.02214076e23",
    "9007199254740992.5", "9007199254740993.0000000000000000001",
]


def test_numbers_match_python_float(tmp_path):
    content = "".join(f"{t} 1:{t}\n" for t in TRICKY).encode()
    X, y = load_bytes(tmp_path, content)
    expected = np.array([float(t) for t in TRICKY])
    assert same_bits(y, expected)
    # explicit zeros are stored, so every row has exactly one entry
    assert same_bits(X.data, expected)


def test_random_numbers_match_python_float(tmp_path):
    rng = random.Random(20240601)

    def digits(n):
        return "".join(rng.choice("0123456789") for _ in range(n))

    tokens = []
    while len(tokens) < 4000:
        t = rng.choice(["", "-", "+"])
        shape = rng.random()
        if shape < 0.3:
            t += digits(rng.randint(1, 25))
        elif shape < 0.7:
            t += digits(rng.randint(0, 20)) + "." + digits(rng.randint(1, 25))
        else:
            t += digits(rng.randint(1, 3)) + "." + digits(rng.randint(0, 18))
        if rng.random() < 0.6:
            t += rng.choice("eE") + rng.choice(["", "-", "+"]) + str(rng.randint(0, 330))
        if np.isfinite(float(t)):
            tokens.append(t)
    content = "".join(f"0 7:{t}\n" for t in tokens).encode()
    X, _ = load_bytes(tmp_path, content)
    assert same_bits(X.data, np.array([float(t) for t in tokens]))


def _near_ties(rng, count):
    """Decimal strings of 19 significant digits at or next to the midpoint of two adjacent
    doubles (where a conversion that rounds in the wrong place shows), and exact ties
    (2k + 1) 2**(e - 1) short enough to be written with at most 19 digits."""
    from decimal import Decimal, localcontext
    out = []
    with localcontext() as ctx:
        ctx.prec = 80
        while len(out) < count:
            x = rng.random() * 10.0 ** rng.randint(-26, 18)
            mid = (Decimal(x) + Decimal(float(np.nextafter(x, np.inf)))) / 2
            mant, exp = f"{mid:.18e}".split("e")
            last = int(mant[-1])
            out += [f"{mant}e{exp}", f"{mant[:-1]}{(last + 1) % 10}e{exp}",
                    f"{mant[:-1]}{(last + 9) % 10}e{exp}"]
            tie = format((Decimal(2 * rng.randrange(2**52, 2**53) + 1)
                          * Decimal(2) ** rng.randint(-12, 8)).normalize(), "f")
            if len(tie.replace(".", "").strip("0")) <= 19:
                out.append(tie)
    return out


def test_long_mantissas_match_python_float_at_and_near_ties(tmp_path):
    # The exact integer path (csrc/_svmlight.pyx, lsvm_decimal_to_double) takes the
    # 16-19 digit mantissas scaled by 10**q, |q| <= 27, that repr() prints; it must give
    # float()'s double, rounding ties to even, for every one of them.
    rng = random.Random(20261127)
    tokens = [repr(rng.random() * 10.0 ** rng.randint(-27, 19)) for _ in range(3000)]
    tokens += _near_ties(rng, 3000)
    tokens += [str(rng.randrange(10**18, 2**64)) + rng.choice(["", "e-27", "e27", "e-5"])
               for _ in range(500)]
    tokens += ["18446744073709551615", "1844674407370955161.5e-27", "9999999999999999999e27",
               "0.1000000000000000055511151231257827", "1.000000000000000111022302462515654"]
    content = "".join(f"0 7:{t}\n" for t in tokens).encode()
    X, _ = load_bytes(tmp_path, content)
    assert same_bits(X.data, np.array([float(t) for t in tokens]))


# ---------------------------------------------------------------------------
# sources: compression by magic bytes, stdin, file objects, chunking
# ---------------------------------------------------------------------------

PLAIN = b"1 qid:3 1:0.5 4:2\n# comment\n-1 qid:3 2:1e-3\n2 qid:4"


@pytest.mark.parametrize("compress, name", [
    (gzip.compress, "data.txt"),
    (bz2.compress, "data.gz"),            # names lie on purpose
    (lzma.compress, "data.bz2"),
    (lambda b: b, "data.xz"),
])
def test_compression_detected_by_magic(tmp_path, compress, name):
    path = write(tmp_path, compress(PLAIN), name)
    X, y, q = load_svmlight(path, with_qid=True)
    assert same_csr(X, sp.csr_matrix([[0.5, 0, 0, 2], [0, 1e-3, 0, 0], [0, 0, 0, 0]]))
    np.testing.assert_array_equal(y, [1, -1, 2])
    np.testing.assert_array_equal(q, [3, 3, 4])


def test_multi_member_gzip(tmp_path):
    path = write(tmp_path, gzip.compress(b"1 1:1\n2 2") + gzip.compress(b":2\n"), "x")
    X, y = load_svmlight(path)
    np.testing.assert_array_equal(dense(X), [[1, 0], [0, 2]])


@pytest.mark.parametrize("compress, kind", [
    (gzip.compress, "gzip"), (bz2.compress, "bzip2"), (lzma.compress, "xz")])
def test_corrupt_or_truncated_compressed_data(tmp_path, compress, kind):
    blob = compress(b"1 1:1\n" * 1000)
    path = write(tmp_path, blob[: len(blob) // 2], "t")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: bad {kind} data"):
        load_svmlight(path)
    bad = bytearray(blob)
    bad[len(bad) // 2] ^= 0xFF
    bad[len(bad) // 2 + 1] ^= 0xFF
    path = write(tmp_path, bytes(bad), "c")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: "):
        load_svmlight(path)


def test_errors_in_compressed_input_have_line_numbers(tmp_path):
    path = write(tmp_path, gzip.compress(b"1 1:1\n\n1 1:1 1:2\n"), "z.svm")
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}:3: indices not increasing"):
        load_svmlight(path)


class _FakeStdin:
    def __init__(self, data):
        self.buffer = io.BytesIO(data)


@pytest.mark.parametrize("compress", [lambda b: b, gzip.compress, bz2.compress, lzma.compress])
def test_stdin(monkeypatch, compress):
    monkeypatch.setattr(sys, "stdin", _FakeStdin(compress(PLAIN)))
    X, y = load_svmlight("-")
    np.testing.assert_array_equal(y, [1, -1, 2])
    assert X.shape == (3, 4)


def test_stdin_error_is_named_stdin(monkeypatch):
    monkeypatch.setattr(sys, "stdin", _FakeStdin(b"1 1:1\n1 x\n"))
    with pytest.raises(DataError, match=r"^<stdin>:2: token 'x' has no ':'"):
        load_svmlight("-")


def test_binary_file_objects(tmp_path):
    X, y = load_svmlight(io.BytesIO(PLAIN))
    assert X.shape == (3, 4)
    path = write(tmp_path, gzip.compress(PLAIN))
    with open(path, "rb") as fh:
        X2, y2 = load_svmlight(fh)
        assert not fh.closed                             # the caller's object stays open
    assert same_csr(X, X2) and same_bits(y, y2)
    bad = write(tmp_path, b"1 1:1\n1 0:1\n", "bad.svm")
    with open(bad, "rb") as fh, pytest.raises(DataError, match=rf"^{re.escape(str(bad))}:2: "):
        load_svmlight(fh)                                 # named by the file object's name
    with pytest.raises(DataError, match=r"^<file>:1: "):
        load_svmlight(io.BytesIO(b"1 0:1"))


class _Trickle(io.RawIOBase):
    """A stream that returns at most `step` bytes per read (a slow pipe)."""

    def __init__(self, data, step):
        self._data = data
        self._pos = 0
        self._step = step

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self._step, len(self._data) - self._pos)
        b[:n] = self._data[self._pos:self._pos + n]
        self._pos += n
        return n


def _reference_text(n_rows=300, seed=3):
    rng = random.Random(seed)
    lines = []
    for i in range(n_rows):
        idx = sorted(rng.sample(range(1, 60), rng.randint(0, 8)))
        feats = " ".join(f"{j}:{rng.choice(['1', '-0.5', '2.25e-3', '17', '0.1'])}" for j in idx)
        sep = rng.choice([" ", "\t", "  "])
        end = rng.choice(["\n", "\r\n", " # c: 1:2\n"])
        lines.append(f"{rng.choice(['1', '-1', '+1', '2.5'])}{sep}{feats}{end}")
        if rng.random() < 0.1:
            lines.append(rng.choice(["\n", "# comment 3:4\n", "\r\n"]))
    return "".join(lines).encode()


@pytest.mark.parametrize("step", [1, 2, 3, 7, 64, 1000])
def test_lines_split_across_chunks(step):
    text = _reference_text()
    X, y = load_svmlight(io.BytesIO(text))
    X2, y2 = load_svmlight(io.BufferedReader(_Trickle(text, step), buffer_size=step))
    assert same_csr(X, X2) and same_bits(y, y2)


def test_parser_fed_byte_by_byte():
    text = _reference_text() + b"3 5:5"            # unterminated last line
    whole = load_svmlight(io.BytesIO(text))
    p = _svmlight.Parser(False, None)
    for i in range(len(text)):
        p.feed(text[i:i + 1])
        assert p.parse() == 0
    p.end()
    assert p.parse() == 0
    indptr, indices, data, labels, qid, max_index = p.take()
    assert qid is None
    X = sp.csr_matrix((data, indices, indptr), shape=(len(labels), max_index))
    assert same_csr(whole[0], X) and same_bits(whole[1], labels)


def test_small_read_buffer(tmp_path, monkeypatch):
    text = _reference_text(2000)
    path = write(tmp_path, text)
    X, y = load_svmlight(path)
    monkeypatch.setattr(compressed, "CHUNK_BYTES", 4096)
    X2, y2 = load_svmlight(path)                      # plain file, carry between reads
    X3, y3 = load_svmlight(write(tmp_path, gzip.compress(text), "g"))
    assert same_csr(X, X2) and same_bits(y, y2)
    assert same_csr(X, X3) and same_bits(y, y3)


# ---------------------------------------------------------------------------
# iter_svmlight
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("chunk_rows", [1, 7, 100, 299, 300, 301, 10**6])
def test_iter_chunks_concatenate_to_load(tmp_path, chunk_rows):
    text = _reference_text(300)
    path = write(tmp_path, text)
    X, y = load_svmlight(path)
    blocks = list(iter_svmlight(path, chunk_rows=chunk_rows))
    assert [b[0].shape[0] for b in blocks[:-1]] == [chunk_rows] * (len(blocks) - 1)
    assert 1 <= blocks[-1][0].shape[0] <= chunk_rows
    width = max(b[0].shape[1] for b in blocks)
    assert width == X.shape[1]
    for Xb, _ in blocks:                              # each block: its own max index
        assert Xb.shape[1] == (Xb.indices.max() + 1 if Xb.nnz else 0)
    Xc = sp.vstack([sp.csr_matrix((b[0].data, b[0].indices, b[0].indptr),
                                  shape=(b[0].shape[0], width)) for b in blocks]).tocsr()
    assert same_csr(X, Xc)
    assert same_bits(y, np.concatenate([b[1] for b in blocks]))


def test_iter_with_qid_and_small_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(compressed, "CHUNK_BYTES", 4096)
    lines = b"".join(b"%d qid:%d 1:%d 3:0.5\n" % (i % 3, i // 10, i) for i in range(5000))
    path = write(tmp_path, lines)
    X, y, q = load_svmlight(path, with_qid=True)
    blocks = list(iter_svmlight(path, chunk_rows=333, with_qid=True))
    assert same_bits(np.concatenate([b[2] for b in blocks]), q)
    assert same_bits(np.concatenate([b[1] for b in blocks]), y)
    assert sum(b[0].nnz for b in blocks) == X.nnz == 10000


def test_iter_empty_and_arguments(tmp_path):
    path = write(tmp_path, b"# nothing\n")
    assert list(iter_svmlight(path)) == []
    for bad in (0, -1, 2.5, True):
        with pytest.raises(ParameterError):
            iter_svmlight(path, chunk_rows=bad)


def test_iter_error_line_is_global(tmp_path):
    path = write(tmp_path, b"1 1:1\n" * 2500 + b"\n1 2:1 1:1\n")
    got = []
    want = rf"^{re.escape(str(path))}:2502: indices not increasing \(1 after 2\)$"
    with pytest.raises(DataError, match=want):
        for Xb, yb in iter_svmlight(path, chunk_rows=1000):
            got.append(Xb.shape[0])
    assert got == [1000, 1000]


# ---------------------------------------------------------------------------
# dump_svmlight
# ---------------------------------------------------------------------------

def _random_matrix(rng, n_rows, n_cols, density):
    X = sp.random(n_rows, n_cols, density=density, format="csr", random_state=rng)
    kind = rng.integers(0, 5, size=X.nnz)
    bits = rng.integers(0, 2**64, size=X.nnz, dtype=np.uint64).view(np.float64)
    bits[~np.isfinite(bits)] = 3.0
    vals = np.where(kind == 0, bits, 0.0)                               # any double
    vals = np.where(kind == 1, rng.standard_normal(X.nnz), vals)
    vals = np.where(kind == 2, rng.integers(-1000, 1000, X.nnz).astype(float), vals)
    tiny = rng.integers(1, 2**52, X.nnz).view(np.float64)               # denormals
    vals = np.where(kind == 3, tiny * rng.choice([-1, 1], X.nnz), vals)
    huge = 10.0 ** rng.uniform(250, 308, X.nnz) * rng.choice([-1, 1], X.nnz)
    vals = np.where(kind == 4, huge, vals)
    X.data = vals
    if X.nnz > 4:                                     # zeros stored on purpose
        X.data[:2] = [0.0, -0.0]
    return X


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_round_trip_bit_exact(tmp_path, seed):
    rng = np.random.default_rng(seed)
    n_rows, n_cols = 400, 300
    X = _random_matrix(rng, n_rows, n_cols, 0.05)
    y = rng.integers(-5, 6, n_rows).astype(float)
    y[::3] = rng.standard_normal(len(y[::3])) * 10.0 ** rng.integers(-300, 300, len(y[::3]))
    y[1] = -0.0
    qid = rng.integers(-2**62, 2**62, n_rows)
    path = tmp_path / "rt.svm"
    dump_svmlight(X, y, path, qid=qid, comment="round trip\nsecond line")
    X2, y2, q2 = load_svmlight(path, n_features=n_cols, with_qid=True)
    assert same_csr(X, X2)
    assert same_bits(y, y2)
    assert same_bits(qid.astype(np.int64), q2)
    X3, y3 = load_svmlight(path, n_features=n_cols)      # qid dropped
    assert same_csr(X, X3)


def test_dump_format_exactly(tmp_path):
    X = sp.csr_matrix(np.array([[0.5, 0, 2.0, 0], [0, 0, 0, 0], [0, 1e-300, 0, 1e22]]))
    path = tmp_path / "f.svm"
    dump_svmlight(X, [1.0, -1.0, 2.5], path, comment="made by a test")
    assert path.read_bytes() == (b"# made by a test\n"
                                 b"1 1:0.5 3:2\n"
                                 b"-1\n"
                                 b"2.5 2:1e-300 4:1e+22\n")
    out = io.BytesIO()
    dump_svmlight(X, [3, 0, 1], out, qid=[7, 7, 8])
    assert out.getvalue() == b"3 qid:7 1:0.5 3:2\n0 qid:7\n1 qid:8 2:1e-300 4:1e+22\n"


def test_dump_numbers_are_shortest_repr():
    vals = [0.1, 1 / 3, 2.0**-1074, 1.7976931348623157e308, 123456789.125, 1e16, 2.0**53,
            2.0**53 - 1, -2.0**52, 1e-5, 0.0001, 5e-324]
    X = sp.csr_matrix(np.array([vals]))
    out = io.BytesIO()
    dump_svmlight(X, [0], out)
    fields = out.getvalue().split()[1:]
    want = []
    for i, v in enumerate(vals):
        r = repr(v)
        want.append(f"{i + 1}:{r[:-2] if r.endswith('.0') else r}".encode())
    assert fields == want


def test_dump_dense_sparse_formats_and_unsorted(tmp_path):
    D = np.array([[0, 1.5, 0], [-2, 0, 3]])
    y = np.array([1, -1])
    outs = []
    for X in (D, D.tolist(), sp.coo_matrix(D), sp.csc_matrix(D), sp.csr_array(D)):
        b = io.BytesIO()
        dump_svmlight(X, y, b)
        outs.append(b.getvalue())
    assert len(set(outs)) == 1
    # unsorted indices and duplicates: summed and sorted, caller's matrix untouched
    U = sp.csr_matrix((np.array([3.0, 1.0, 2.0]), np.array([2, 0, 2]), np.array([0, 3])),
                      shape=(1, 3))
    before = (U.data.copy(), U.indices.copy())
    b = io.BytesIO()
    dump_svmlight(U, [1], b)
    assert b.getvalue() == b"1 1:1 3:5\n"
    assert np.array_equal(U.data, before[0]) and np.array_equal(U.indices, before[1])


def test_dump_to_text_file_and_stdout(tmp_path, monkeypatch):
    X = sp.csr_matrix([[1.0, 0.25]])
    s = io.StringIO()
    dump_svmlight(X, [2], s)
    assert s.getvalue() == "2 1:1 2:0.25\n"

    class FakeStdout:
        buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", FakeStdout)
    dump_svmlight(X, [2], "-")
    assert FakeStdout.buffer.getvalue() == b"2 1:1 2:0.25\n"


def _leftovers(directory, keep):
    return sorted(p.name for p in directory.iterdir() if p.name not in keep)


@pytest.mark.parametrize("X, y, qid, what", [
    (sp.csr_matrix([[1.0]]), [np.nan], None, "label nan of row 0 is not finite"),
    (sp.csr_matrix([[1.0], [2.0]]), [1, np.inf], None, "label inf of row 1 is not finite"),
    (sp.csr_matrix(np.array([[1.0, 0], [0, np.nan]])), [1, 1], None,
     "value nan at row 1, column 1 is not finite"),
    (sp.csr_matrix([[1.0]]), [1, 2], None, "y has shape (2,)"),
    (sp.csr_matrix([[1.0]]), [1], [1.5], "qid must hold integers"),
    (sp.csr_matrix([[1.0]]), [1], [1, 2], "qid has shape (2,)"),
])
def test_dump_rejects_bad_input_before_writing(tmp_path, X, y, qid, what):
    path = tmp_path / "out.svm"
    with pytest.raises(DataError, match=re.escape(what)):
        dump_svmlight(X, y, path, qid=qid)
    assert _leftovers(tmp_path, set()) == []                  # nothing at all was written
    path.write_bytes(b"old\n")
    with pytest.raises(DataError):
        dump_svmlight(X, y, path, qid=qid)
    assert path.read_bytes() == b"old\n"


def test_dump_is_atomic_when_writing_fails_midway(tmp_path, monkeypatch):
    rng = np.random.default_rng(5)
    X = _random_matrix(rng, 200, 50, 0.2)
    y = np.ones(200)
    path = tmp_path / "out.svm"
    path.write_bytes(b"previous content\n")
    monkeypatch.setattr(data_mod, "_WRITE_NNZ", 50)            # many blocks
    real = _svmlight.format_rows
    calls = []

    def failing(*args):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(*args)

    monkeypatch.setattr(_svmlight, "format_rows", failing)
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: cannot write: No space left"):
        dump_svmlight(X, y, path)
    assert len(calls) == 3                                    # it did fail midway
    assert path.read_bytes() == b"previous content\n"
    assert _leftovers(tmp_path, {"out.svm"}) == []

    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(_svmlight, "format_rows", interrupted)
    with pytest.raises(KeyboardInterrupt):
        dump_svmlight(X, y, path)
    assert _leftovers(tmp_path, {"out.svm"}) == []

    monkeypatch.setattr(_svmlight, "format_rows", real)
    dump_svmlight(X, y, path)
    assert same_csr(load_svmlight(path, n_features=50)[0], X)


def test_dump_to_device_and_through_symlink(tmp_path):
    X = sp.csr_matrix([[1.0]])
    dump_svmlight(X, [1], os.devnull)                 # written in place, not replaced
    assert not os.path.isfile(os.devnull)
    target = tmp_path / "real.svm"
    target.write_bytes(b"old\n")
    link = tmp_path / "link.svm"
    link.symlink_to(target)
    dump_svmlight(X, [1], link)
    assert link.is_symlink() and target.read_bytes() == b"1 1:1\n"
    assert _leftovers(tmp_path, {"real.svm", "link.svm"}) == []


def test_dump_empty(tmp_path):
    path = tmp_path / "e.svm"
    dump_svmlight(sp.csr_matrix((0, 5)), [], path)
    assert path.read_bytes() == b""
    X, y = load_svmlight(path, n_features=5)
    assert X.shape == (0, 5)


def test_dump_large_index(tmp_path):
    X = sp.csr_matrix((np.array([1.0]), np.array([2147483646]), np.array([0, 1])),
                      shape=(1, 2147483647))
    out = io.BytesIO()
    dump_svmlight(X, [1], out)
    assert out.getvalue() == b"1 2147483647:1\n"


# ---------------------------------------------------------------------------
# agreement with scikit-learn on the real data sets
# ---------------------------------------------------------------------------

def _real_files():
    manifest = data_dir() / "MANIFEST.tsv"
    if not manifest.exists():
        return []
    rows = []
    lines = manifest.read_text().splitlines()
    header = lines[0].split("\t")
    for line in lines[1:]:
        rec = dict(zip(header, line.split("\t")))
        if rec.get("file", "").endswith((".tar.xz", ".tar.gz")):
            continue
        rows.append(rec)
    return rows


REAL = [r for r in _real_files()
        if r["file"].startswith("binary/") or r["file"] in (
            "multiclass/sector.t.scale.bz2", "ordinal/abalone_10bins.test.1",
            "ordinal/housing_5bins.train.1")]


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.skipif(not REAL, reason="no data sets under $LINSVM_DATA")
@pytest.mark.parametrize("rec", REAL, ids=[r["file"] for r in REAL])
def test_agrees_with_sklearn_on_real_data(rec):
    sk = pytest.importorskip("sklearn.datasets")
    path = shared_file(rec["file"])
    X, y = load_svmlight(path)
    Xs, ys = sk.load_svmlight_file(str(path), zero_based=False)
    assert X.shape == Xs.shape
    # MANIFEST counts non-zero values; explicit zeros in the file are stored entries
    assert X.shape[0] == int(rec["rows"]) and np.count_nonzero(X.data) == int(rec["nnz"])
    assert X.shape[1] == int(rec["features"])
    assert np.array_equal(X.indptr, Xs.indptr) and np.array_equal(X.indices, Xs.indices)
    assert same_bits(X.data, Xs.data.astype(np.float64))
    assert same_bits(y, ys.astype(np.float64))


class _Zeros(io.RawIOBase):
    """An endless stream of NUL bytes (what /dev/zero gives): no newline, ever."""

    def readable(self):
        return True

    def readinto(self, b):
        b[:] = bytes(len(b))
        return len(b)


def test_a_stream_of_nul_bytes_is_not_text_rather_than_out_of_memory(tmp_path):
    """/dev/zero (or a disk image) has no newline: its first line grew until memory ran
    out.  A line of over a megabyte holding a NUL is refused as not text, naming the
    byte, for the whole, the streamed and the compressed reader."""
    with pytest.raises(DataError, match=r"^<file>: byte 1 is a NUL, in a line of over 1 MiB: "
                                        r"not SVM-light text"):
        load_svmlight(_Zeros())
    with pytest.raises(DataError, match="is a NUL"):
        list(iter_svmlight(_Zeros(), chunk_rows=10))
    path = tmp_path / "zeros.gz"
    path.write_bytes(gzip.compress(b"1 1:1\n" + bytes(3 << 20)))
    with pytest.raises(DataError, match=rf"^{re.escape(str(path))}: byte \d+ of the decompressed data is a NUL"):
        load_svmlight(path)
    # a NUL in a short line stays the parser's error, with its line
    path = tmp_path / "short.svm"
    path.write_bytes(b"1 1:1\n2 1:\x00\n")
    with pytest.raises(DataError, match=r":2: non-numeric value"):
        load_svmlight(path)


def test_out_of_memory_hints_renumber_only_where_it_helps(tmp_path, monkeypatch):
    """The hint to renumber sparse, large feature indices goes with a MemoryError of a
    command that holds weight vectors: not with one of parsing, nor from renumber."""
    from click.testing import CliRunner
    from linsvm.cli import cli, train_cmd
    from linsvm.cli import run_tools, run_train
    data = tmp_path / "d.svm"
    data.write_text("1 1:1\n-1 2:1\n")

    def oom(text):
        def fail(*args, **kwargs):
            raise MemoryError(text)
        return fail

    monkeypatch.setattr(run_tools, "load_svmlight", oom(""))
    r = CliRunner().invoke(cli, ["renumber", str(data), str(tmp_path / "o"), str(tmp_path / "map")],
                           prog_name="linsvm")
    assert r.exit_code == 1 and r.stderr.strip() == "linsvm renumber: error: out of memory", r.stderr
    monkeypatch.setattr(run_train, "load_training", oom("out of memory while parsing"))
    r = CliRunner().invoke(train_cmd, ["-q", str(data), str(tmp_path / "m")])
    assert r.exit_code == 1 and "renumber" not in r.stderr and "does not fit in memory" in r.stderr
    monkeypatch.setattr(run_train, "load_training", oom(""))
    r = CliRunner().invoke(train_cmd, ["-q", str(data), str(tmp_path / "m")])
    assert r.exit_code == 1 and "'linsvm renumber' makes the weight vectors shorter" in r.stderr
