"""Property-based tests of the input side (hypothesis).

* The SVM-light parser against `reference_parse`, a small pure-Python reader
  of the format written here from the format's rules (data.py's docstring),
  not from the parser: the same rows bit for bit, or an error on the same line.
* The streaming reader (`iter_svmlight`) against `load_svmlight`.
* The compressed readers against the standard library's decompressors:
  random payloads in one or more gzip / bzip2 / xz streams, truncated, or
  followed by other bytes.
* Labels a solver's kind refuses after reading (not integers, huge, negative
  zeros, more classes than look like classes) against the rules as the docs
  state them: the error names the file and line of the first row at fault.
* Output paths against inputs and each other (by name, relative or absolute,
  symlink, hard link, dangling symlink, '-'): refused before any work exactly
  when they name the same file.

The default profile (tests/conftest.py) keeps each test to ~150 examples;
`pytest --hypothesis-profile=long` (tools/fuzz.sh) runs many more.
"""
import bz2
import gzip
import io
import lzma
import os
import re
import tempfile

import numpy as np
import pytest
from conftest import invoke, one_error_line, run_here

pytest.importorskip("hypothesis")       # in the test extra; skip cleanly without it
from hypothesis import assume, example, given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from linsvm.io import compressed as data_mod
from linsvm.io.binfile import MAGIC as BINARY_MAGIC
from linsvm.io.svmlight import iter_svmlight, load_svmlight
from linsvm.errors import DataError

# ---------------------------------------------------------------------------
# an independent reader of the format
# ---------------------------------------------------------------------------

_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_INDEX = re.compile(r"\d+\Z")
_QID = re.compile(r"qid:([+-]?\d+)\Z")


class RefError(Exception):
    def __init__(self, line):
        super().__init__(line)
        self.line = line


def _number(text, line):
    if not _NUMBER.match(text):
        raise RefError(line)
    v = float(text)
    if not np.isfinite(v):
        raise RefError(line)
    return v


def reference_parse(raw, with_qid):
    """Rows of SVM-light bytes: (labels, qids, [(indices, values)], has_qid
    per row); RefError(line) at the first bad line."""
    rows = []
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    first_kind = None                   # (has qid, line) of the first row
    for k, bline in enumerate(lines, start=1):
        if bline.endswith(b"\r"):
            bline = bline[:-1]
        bline = bline.split(b"#", 1)[0]
        try:
            line = bline.decode("ascii")
        except UnicodeDecodeError:
            raise RefError(k) from None
        if "\r" in line:
            raise RefError(k)
        tokens = [t for t in re.split(r"[ \t]+", line) if t]
        if not tokens:
            continue
        label = _number(tokens[0], k)
        qid, rest = None, tokens[1:]
        if rest and rest[0].startswith("qid:"):
            m = _QID.match(rest[0])
            if not m or not -2**63 <= int(m.group(1)) < 2**63:
                raise RefError(k)
            qid, rest = int(m.group(1)), rest[1:]
        idx, val, prev = [], [], 0
        for tok in rest:
            if ":" not in tok:
                raise RefError(k)
            i_text, v_text = tok.split(":", 1)
            if not _INDEX.match(i_text):
                raise RefError(k)
            i = int(i_text)
            if not prev < i <= 2**31 - 1:
                raise RefError(k)
            idx.append(i - 1)
            val.append(_number(v_text, k))
            prev = i
        if with_qid:
            if first_kind is None:
                first_kind = qid is not None
            elif (qid is not None) != first_kind:
                raise RefError(k)
        rows.append((label, qid or 0, idx, val))
    return rows


def parse_outcome(raw, with_qid):
    try:
        return "ok", reference_parse(raw, with_qid)
    except RefError as e:
        return "error", e.line


def linsvm_outcome(raw, with_qid):
    try:
        res = load_svmlight(io.BytesIO(raw), with_qid=with_qid)
        return "ok", res if with_qid else res + (None,)
    except DataError as e:
        m = re.match(r"<file>:(\d+): ", str(e))
        assert m, f"error without a line number: {e}"
        return "error", int(m.group(1))


def same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def check_against_reference(raw, with_qid):
    want = parse_outcome(raw, with_qid)
    got = linsvm_outcome(raw, with_qid)
    assert got[0] == want[0], (raw, want, got)
    if want[0] == "error":
        assert got[1] == want[1], (raw, want, got)
        return
    X, y, qid = got[1]
    rows = want[1]
    assert same_bits(y, np.array([r[0] for r in rows], dtype=np.float64))
    assert same_bits(np.diff(X.indptr), np.array([len(r[2]) for r in rows], dtype=np.int64)
                     .astype(X.indptr.dtype))
    assert same_bits(X.indices, np.array([i for r in rows for i in r[2]], dtype=X.indices.dtype))
    assert same_bits(X.data, np.array([v for r in rows for v in r[3]], dtype=np.float64))
    assert X.shape[1] == max([i + 1 for r in rows for i in r[2]], default=0)
    if with_qid:
        assert same_bits(qid, np.array([r[1] for r in rows], dtype=np.int64))


# ---------------------------------------------------------------------------
# strategies: mostly valid lines, with mutations
# ---------------------------------------------------------------------------

_DIGITS = st.text("0123456789", min_size=1, max_size=4)
_GOOD_NUMBER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.integers(-10**6, 10**6).map(str),
    st.builds(lambda s, a, b, e: f"{s}{a}.{b}{e}", st.sampled_from(["", "+", "-"]), _DIGITS,
              st.sampled_from(["", "5", "25"]), st.sampled_from(["", "e5", "E-3", "e-400"])),
    st.sampled_from(["-0", "+.5", "5.", "1e308", "4.9e-324", "1e-400"]),
)
_BAD_NUMBER = st.sampled_from(["1e", "e5", "1.2.3", "--1", "nan", "inf", "0x10", "1_0", ".", "",
                               "2e308", "1e+400"])
_SEP = st.sampled_from([" ", "\t", "  ", " \t"])


def _mostly(draw, good, bad):
    """good, or bad about one time in forty."""
    return draw(bad) if draw(st.integers(0, 39)) == 0 else draw(good)


@st.composite
def data_line(draw, qid="some"):
    parts = [_mostly(draw, _GOOD_NUMBER, _BAD_NUMBER)]
    if qid == "all" or qid == "some" and draw(st.integers(0, 3)) == 0:
        parts.append("qid:" + _mostly(draw, st.integers(-2**63, 2**63 - 1).map(str),
                                      st.sampled_from(["", "+3", "03", "9223372036854775808", "x"])))
    index = 0
    for _ in range(draw(st.integers(0, 5))):
        index += _mostly(draw, st.integers(1, 5) | st.integers(1, 2**20),
                         st.integers(-1, 0) | st.integers(2**30, 2**31))
        idx = _mostly(draw, st.sampled_from([str(index), "0" + str(index)]),
                      st.sampled_from(["+" + str(index), "", "x", " "]))
        parts.append(f"{idx}:{_mostly(draw, _GOOD_NUMBER, _BAD_NUMBER)}")
    line = "".join(p + draw(_SEP) for p in parts[:-1]) + parts[-1]
    if draw(st.booleans()):
        line = draw(st.sampled_from(["", " ", "\t"])) + line
    if draw(st.integers(0, 4)) == 0:
        line += draw(st.sampled_from(["#", " # c", "#x\ry", " #qid:1 1:2"]))
    return line


_NOISE = st.text(" \t:#.+-0123456789eEqid\rx\x00\x0b\xe9", max_size=12)


@st.composite
def svmlight_text(draw):
    lines = []
    qid = draw(st.sampled_from(["none", "all", "some"]))
    for _ in range(draw(st.integers(0, 8))):
        kind = draw(st.integers(0, 19))
        if kind == 0:
            lines.append(draw(st.sampled_from(["", " ", "\t", "#", "# comment", " #"])))
        elif kind == 1:
            lines.append(draw(_NOISE))
        elif kind == 2:                 # a valid line with a few characters changed
            line = list(draw(data_line(qid)))
            for _ in range(draw(st.integers(1, 3))):
                if line:
                    line[draw(st.integers(0, len(line) - 1))] = draw(_NOISE.filter(bool))[0]
            lines.append("".join(line))
        else:
            lines.append(draw(data_line(qid)))
    ends = draw(st.sampled_from(["\n", "\r\n", "mixed"]))
    out = ""
    for line in lines:
        out += line + (ends if ends != "mixed" else draw(st.sampled_from(["\n", "\r\n"])))
    if out and draw(st.booleans()):
        out = out[:-1] if out.endswith("\n") else out      # no final line end (maybe a lone \r)
    return out.encode("latin-1")


@pytest.mark.slow
@given(svmlight_text(), st.booleans())
@example(b"1 1:1\r#c\n", False)
@example(b"1 qid:1\n\n2 3:4\n", True)
@example(b"1 2147483647:1 2147483648:1\n", False)
def test_parser_matches_reference_reader(raw, with_qid):
    check_against_reference(raw, with_qid)


# ---------------------------------------------------------------------------
# the streaming reader gives load_svmlight's rows and errors
# ---------------------------------------------------------------------------

@pytest.mark.slow
@given(svmlight_text(), st.integers(1, 4))
def test_iter_svmlight_matches_load_svmlight(raw, chunk_rows):
    try:
        want = ("ok", load_svmlight(io.BytesIO(raw), with_qid=True))
    except DataError as e:
        want = ("error", str(e))
    blocks = []
    try:
        for block in iter_svmlight(io.BytesIO(raw), chunk_rows=chunk_rows, with_qid=True):
            blocks.append(block)
        got = ("ok", None)
    except DataError as e:
        got = ("error", str(e))
    assert got[0] == want[0] or want[0] == "error" and "qid" in want[1], (raw, want, got)
    if got[0] == "error":
        assert got[1] == want[1]
        return
    if want[0] == "error":              # with_qid: a mix of rows with and without qid,
        return                          # which iter_svmlight does not check across blocks
    X, y, qid = want[1]
    assert all(b[0].shape[0] == chunk_rows for b in blocks[:-1])
    assert sum(b[0].shape[0] for b in blocks) == X.shape[0]
    r = 0
    for Xb, yb, qb in blocks:
        n = Xb.shape[0]
        Xw = X[r:r + n]
        assert same_bits(yb, y[r:r + n]) and same_bits(qb, qid[r:r + n])
        assert same_bits(Xb.indices, Xw.indices.astype(Xb.indices.dtype))
        assert same_bits(Xb.data, Xw.data)
        assert same_bits(np.diff(Xb.indptr), np.diff(Xw.indptr).astype(Xb.indptr.dtype))
        r += n


# ---------------------------------------------------------------------------
# compressed input against the standard library
# ---------------------------------------------------------------------------

_FORMATS = {
    "gzip": (lambda b, lvl: gzip.compress(b, compresslevel=lvl, mtime=0), b"\x1f\x8b"),
    "bzip2": (lambda b, lvl: bz2.compress(b, lvl), b"BZh"),
    "xz": (lambda b, lvl: lzma.compress(b, preset=lvl % 4), b"\xfd7zXZ\x00"),
}


def read_decompressed(source):
    """All decompressed bytes of a source, through linsvm's input layer."""
    with data_mod.Input(source) as src:
        return b"".join(bytes(buf[:n]) for buf, n in src.chunks())


def garbage_is_allowed(kind, tail):
    if not tail:
        return True
    if kind == "gzip":
        return tail.strip(b"\0") == b""
    if kind == "xz":
        return tail.strip(b"\0") == b"" and len(tail) % 4 == 0
    return False


@pytest.mark.slow
@given(st.sampled_from(sorted(_FORMATS)),
       st.lists(st.binary(max_size=3000) | st.sampled_from([b"", b"1 1:1\n" * 400]),
                min_size=1, max_size=3),
       st.integers(1, 9), st.one_of(st.none(), st.floats(0, 1)),
       st.one_of(st.just(b""), st.binary(min_size=1, max_size=12),
                 st.sampled_from([b"\0" * 4, b"\0\0\0", b"\0" * 8])),
       st.booleans())
def test_compressed_readers_match_stdlib(kind, payloads, level, cut, tail, as_file):
    compress, magic = _FORMATS[kind]
    # a stream that holds a binary data file is refused as such (tests/test_binfile.py)
    assume(not b"".join(payloads).startswith(BINARY_MAGIC))
    streams = [compress(p, level) for p in payloads]
    blob = b"".join(streams)
    bounds = np.cumsum([len(s) for s in streams]).tolist()
    if cut is not None:                 # truncate somewhere past the first magic
        at = 6 + int(cut * (len(blob) - 6))
        blob, tail = blob[:at], b""
        whole = [i for i, b in enumerate(bounds) if b == at]
        want = b"".join(payloads[:whole[0] + 1]) if whole else None
    else:
        assume(not tail.startswith(magic[:len(tail)]) or not tail)
        want = b"".join(payloads) if garbage_is_allowed(kind, tail) else None
        blob += tail
    if as_file:
        fd, path = tempfile.mkstemp(suffix=".dat")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(blob)
            got = _outcome(lambda: read_decompressed(path))
        finally:
            os.unlink(path)
    else:
        got = _outcome(lambda: read_decompressed(io.BytesIO(blob)))
    if want is None:
        assert got[0] == "error" and f"bad {kind} data" in got[1], got
    else:
        assert got == ("ok", want)


def _outcome(fn):
    try:
        return "ok", fn()
    except DataError as e:
        return "error", str(e)


@pytest.mark.parametrize("kind", sorted(_FORMATS))
def test_fuzz_helpers_see_a_trailing_byte(kind):
    """The property above would pass vacuously if every blob were an error."""
    blob = _FORMATS[kind][0](b"1 1:1\n", 6)
    assert read_decompressed(io.BytesIO(blob)) == b"1 1:1\n"
    with pytest.raises(DataError):
        read_decompressed(io.BytesIO(blob + b"x"))


# ---------------------------------------------------------------------------
# labels a kind refuses name their file and line
# ---------------------------------------------------------------------------

_CLASS_LABEL = st.one_of(
    st.integers(-3, 3).map(float),                                      # classes
    st.sampled_from([0.0, -0.0, 1e300, -1e300, 2.0 ** 53, 2.0 ** 53 + 2, 1e16, 2.0 ** 63]),
    st.sampled_from([0.5, -2.25, 1e-300, 3.000000001, 1e15 + 0.5]),      # not integers
)


@st.composite
def labelled_file(draw):
    """(labels in file order, their line numbers, the file's bytes): rows `LABEL 1:1`
    between blank and comment lines; some label sets hold more than 100 classes with
    fewer than 10 rows each."""
    if draw(st.integers(0, 4)) == 0:                                # ids, not classes
        k = draw(st.integers(95, 130))
        labels = [float(v) for v in draw(st.permutations(range(k)))]
        labels += draw(st.lists(st.sampled_from(labels), max_size=30))
        if draw(st.booleans()):
            labels[draw(st.integers(0, len(labels) - 1))] = draw(_CLASS_LABEL)
    else:
        labels = draw(st.lists(_CLASS_LABEL, min_size=1, max_size=12))
    text, lines, line = [], [], 0
    for v in labels:
        for _ in range(draw(st.integers(0, 2)) if draw(st.integers(0, 3)) == 0 else 0):
            text.append(draw(st.sampled_from(["", "# c", " ", "#1 1:1"])))
            line += 1
        text.append(f"{v!r} 1:1")
        line += 1
        lines.append(line)
    return labels, lines, ("\n".join(text) + "\n").encode()


def _expected_label_error(labels, lines, kind):
    """(line or None, what) of the error the label rules must give, from the rules as
    docs/train.md states them, or None: the first label that is not an integer; for a
    classifier, more than 100 classes with fewer than 10 rows per class (at the first
    row of the 101st); one class (no line)."""
    frac = [i for i, v in enumerate(labels) if not v.is_integer()]
    if frac:
        return lines[frac[0]], "is not an integer"
    first = {}
    for i, v in enumerate(labels):
        first.setdefault(v, i)          # -0.0 and 0.0 are one label: equal, equal hashes
    if kind != "ordinal" and len(first) > 100 and len(labels) < 10 * len(first):
        return lines[sorted(first.values())[100]], "distinct labels among"
    if len(first) < 2:
        return None, "only one class"
    return None


@pytest.mark.slow
@given(labelled_file(), st.sampled_from(["mfn", "mfn-ord"]))
@example(([0.0, -0.0], [1, 2], b"0.0 1:1\n-0.0 1:1\n"), "mfn")
def test_label_errors_name_the_first_offending_line(case, solver):
    """What linsvm-train meets after reading (linsvm.cli.runs: the labels of the file,
    checked by the solver's kind) is one error naming FILE:LINE of the first row at
    fault, or FILE alone when no row is (one class) -- for labels that are not
    integers, huge ones, negative zeros and more classes than look like classes."""
    from linsvm.cli.runs import labels_located, load_training
    from linsvm.problem.catalog import SOLVERS
    from linsvm.problem.kinds import KINDS
    labels, lines, raw = case
    kind = SOLVERS[solver].kind
    expect = _expected_label_error(labels, lines, kind)
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "labels.svm")
        with open(path, "wb") as fh:
            fh.write(raw)
        data = load_training(path, solver, None)
        np.testing.assert_array_equal(data.y, labels)
        try:
            with labels_located(data):
                KINDS[kind].classes_from(data.y, None, data.n_rows, False)
            got = None
        except DataError as exc:
            got = str(exc)
    if expect is None:
        assert got is None, got
        return
    line, what = expect
    assert got is not None and what in got, (expect, got)
    assert got.startswith(f"{path}:{line}: " if line is not None else f"{path}: "), (expect, got)


# ---------------------------------------------------------------------------
# outputs that are inputs, or each other
# ---------------------------------------------------------------------------

# (how a path is written, the file it names): A and B exist (la is a symlink to a, ha a
# hard link), C and D do not (dl is a dangling symlink to c); "-" is standard output
_PATHS = [("a", "A"), ("./a", "A"), ("sub/../a", "A"), ("ABS/a", "A"), ("la", "A"), ("ha", "A"),
          ("sub/la2", "A"), ("b", "B"), ("ABS/b", "B"), ("c", "C"), ("./c", "C"), ("dl", "C"),
          ("ABS/c", "C"), ("sub/../c", "C"), ("d", "D"), ("-", "-")]


def _path_universe(d):
    os.mkdir(os.path.join(d, "sub"))
    for name in ("a", "b"):
        with open(os.path.join(d, name), "wb") as fh:
            fh.write(b"1 1:1 5:2\n-1 3:1\n" if name == "a" else b"2 2:1\n-1 7:1\n")
    os.symlink("a", os.path.join(d, "la"))
    os.symlink("../a", os.path.join(d, "sub", "la2"))
    os.link(os.path.join(d, "a"), os.path.join(d, "ha"))
    os.symlink("c", os.path.join(d, "dl"))


def _snapshot(d):
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            out[p] = os.readlink(p) if os.path.islink(p) else open(p, "rb").read()
    return out


@pytest.mark.slow
@given(st.sampled_from(_PATHS), st.sampled_from(_PATHS), st.sampled_from(_PATHS[:-1]))
def test_outputs_that_are_inputs_or_each_other_are_refused_before_any_work(out, map_, inp):
    """`linsvm renumber IN OUT MAP` (whose OUT may be '-'): refused, with nothing
    changed, exactly when an output is the input file (an existing file, by any name:
    relative or absolute, through a symlink or a hard link), the two outputs are the
    same file (existing or not, through a dangling symlink too), or MAP is '-'; the
    same answer from check_outputs directly."""

    from linsvm.cli import cli
    from linsvm.errors import ParameterError
    from linsvm.io.atomic import check_outputs
    (o, oid), (m, mid), (i, iid) = out, map_, inp
    same_input = iid in ("A", "B") and iid in (oid, mid)
    expect_refused = m == "-" or same_input or oid == mid
    with tempfile.TemporaryDirectory() as d:
        _path_universe(d)
        o, m, i = (p.replace("ABS", d) for p in (o, m, i))
        here = os.getcwd()
        os.chdir(d)
        try:
            before = _snapshot(d)
            try:
                check_outputs([(o, "output file", True), (m, "feature map", False)], inputs=(i,))
                refused = False
            except ParameterError:
                refused = True
            assert refused == expect_refused, (o, m, i)
            assert _snapshot(d) == before
            if iid not in ("A", "B"):           # an input that is not there: reading fails
                return
            r = invoke(cli, "renumber", i, o, m, prog_name="linsvm")
        finally:
            os.chdir(here)
        if expect_refused:
            assert r.exit_code == 2 or r.exit_code == 1, r.output
            lines = r.stderr.strip().splitlines()
            assert len(lines) == 1 and "error: " in lines[0], r.stderr
            assert _snapshot(d) == before
        else:
            assert r.exit_code == 0, r.stderr


# a label the kind refuses names its file and line

LABELS = (b"# a header comment\n\n1 1:1\n2 2:1\n# a comment\n1 1:0.5\n\n"
          b"3 1:1 2:1\n0.25 1:1\n2 2:2\n0.75 1:3\n")          # 0.25 is on line 9


def _label_files(d):
    import gzip
    (d / "frac.svm").write_bytes(LABELS)
    (d / "frac.svm.gz").write_bytes(gzip.compress(LABELS))
    (d / "head.svm").write_bytes(b"1 1:1\n2 1:2\n3 2:1\n")
    many = b"# ids, not classes\n" + b"".join(b"%d 1:1\n" % i for i in range(150))
    (d / "many.svm").write_bytes(many)                 # label 100 is on line 102
    (d / "one.svm").write_bytes(b"1 1:1\n# c\n1 2:1\n")


def test_a_label_the_kind_refuses_names_its_file_and_line(tmp_path):
    """`linsvm-train: error: label 0.25 is not an integer (3 distinct labels)...` named no
    file or line.  Now every label rule met after reading names FILE:LINE of the first
    row at fault, counting blank and comment lines as the parser does: for train and cv,
    plain and compressed files, standard input and shards."""
    d = tmp_path
    _label_files(d)
    frac = ("label 0.25 is not an integer (5 distinct labels): this looks like regression "
            "data, not classes")
    cases = [
        (["train", "frac.svm", "m"], None, f"frac.svm:9: {frac}"),
        (["train", "frac.svm.gz", "m"], None, f"frac.svm.gz:9: {frac}"),
        (["train", "-", "m"], LABELS, f"<stdin>:9: {frac}"),
        (["train", "-v", "2", "frac.svm"], None, f"frac.svm:9: {frac}"),
        (["cv", "frac.svm"], None, f"frac.svm:9: {frac}"),
        (["cv", "-v", "2", "-c", "1,2", "frac.svm"], None, f"frac.svm:9: {frac}"),
        (["train", "--shards", "head.svm,frac.svm", "m"], None,
         "frac.svm:9: label 0.25 is not an integer (5 distinct labels)"),
        (["train", "-s", "mfn-ord", "frac.svm", "m"], None,
         "frac.svm:9: rank 0.25 is not an integer: ordinal labels must be integer ranks"),
        (["cv", "-s", "perf-ord", "frac.svm"], None, "frac.svm:9: rank 0.25 is not an integer"),
        (["train", "many.svm", "m"], None,
         "many.svm:102: 150 distinct labels among 150 training examples (fewer than 10 per "
         "class; label 100 is the 101st): these do not look like classes"),
        (["train", "one.svm", "m"], None, "one.svm: only one class (label 1) in the training data"),
    ]
    for args, stdin, expect in cases:
        status, _, err = run_here(*args, cwd=d, input=stdin)
        line = one_error_line("\n".join(x for x in err.splitlines() if not x.startswith("read ")))
        assert status == 1 and f"error: {expect}" in line, (args, err)
        assert not (d / "m").exists()


def test_no_memory_for_places_in_the_normal_path(tmp_path):
    """Where each row is costs nothing for a file without blank or comment lines (the
    parser notes only rows that follow such lines), and one note per such run."""
    from linsvm.io.places import RowPlaces
    from linsvm.io.svmlight import load_svmlight_buffers
    (tmp_path / "plain.svm").write_bytes(b"".join(b"%d 1:1\n" % (i % 2) for i in range(1000)))
    places = RowPlaces()
    load_svmlight_buffers(tmp_path / "plain.svm", places=places)
    seg = places._segments[0]
    assert seg.gap_rows.size == 0 and places.where(999) == f"{tmp_path / 'plain.svm'}:1000"
    _label_files(tmp_path)
    places = RowPlaces()
    X, y = load_svmlight_buffers(tmp_path / "frac.svm", places=places)
    assert places._segments[0].gap_rows.tolist() == [0, 2, 3]
    lines = [places.place(r)[1] for r in range(y.size)]
    assert lines == [3, 4, 6, 8, 9, 10, 11]
    assert [places.slice(2, 5).place(r)[1] for r in range(3)] == [6, 8, 9]
