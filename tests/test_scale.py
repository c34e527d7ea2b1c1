"""`linsvm scale`: svm-scale's output and parameter files, byte for byte.

The comparisons run LIBSVM's svm-scale itself: $LINSVM_SVM_SCALE, else `svm-scale` on
PATH, else the peer build at /work/peers/liblinear/svm-scale; without one they skip.
Everything else (an independent NumPy reference of svm-scale's rules, parameter file
round trips, streaming, stdin and compressed input, bad input) needs no svm-scale.
"""
import bz2
import gzip
import lzma
import math
import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import linsvm
from linsvm.io import scale as scale_mod
from linsvm.cli import cli
from linsvm.cli import scale_cmd
from linsvm.errors import DataError, ParameterError
from linsvm.io.scale import ScaleParams, format_params, read_params, scale_file, write_params

from conftest import child_env, invoke, shared_file


def _find_svm_scale():
    env = os.environ.get("LINSVM_SVM_SCALE")
    if env:
        return env
    found = shutil.which("svm-scale")
    if found:
        return found
    peer = "/work/peers/liblinear/svm-scale"
    return peer if os.access(peer, os.X_OK) else None


SVM_SCALE = _find_svm_scale()
needs_svm_scale = pytest.mark.skipif(SVM_SCALE is None, reason="svm-scale not found "
                                     "(set LINSVM_SVM_SCALE)")


def svm_scale(args, cwd):
    """svm-scale's (stdout bytes, stderr text, exit status)."""
    r = subprocess.run([SVM_SCALE, *map(str, args)], cwd=cwd, capture_output=True, timeout=120)
    return r.stdout, r.stderr.decode("ascii", "replace"), r.returncode


def ours(data, tmp_path, *, lower=None, upper=None, y_limits=None, save=None, restore=None):
    """linsvm's scaled bytes (through scale_file into a file) and its notes."""
    out = tmp_path / "ours.out"
    res = scale_file(str(data), str(out), lower=lower, upper=upper, y_limits=y_limits,
                     save=save, restore=restore)
    return out.read_bytes(), res


def options(lower=None, upper=None, y_limits=None):
    args = []
    if lower is not None:
        args += ["-l", repr(lower)]
    if upper is not None:
        args += ["-u", repr(upper)]
    if y_limits is not None:
        args += ["-y", repr(y_limits[0]), repr(y_limits[1])]
    return args


def compare(tmp_path, data, *, lower=None, upper=None, y_limits=None, restore=None, save=True):
    """Both programs on `data`: the same output, the same parameter file."""
    kw = dict(lower=lower, upper=upper, y_limits=y_limits)
    args = options(**kw)
    if restore is not None:
        theirs, err, rc = svm_scale(args + ["-r", restore, data], tmp_path)
        assert rc == 0, err
        mine, _ = ours(data, tmp_path, restore=str(restore), **kw)
        assert mine == theirs
        return mine
    ps_theirs, ps_ours = tmp_path / "theirs.param", tmp_path / "ours.param"
    theirs, err, rc = svm_scale(args + (["-s", ps_theirs] if save else []) + [data], tmp_path)
    assert rc == 0, err
    mine, _ = ours(data, tmp_path, save=str(ps_ours) if save else None, **kw)
    assert mine == theirs
    if save:
        assert ps_ours.read_bytes() == ps_theirs.read_bytes()
    return mine


def write_text(tmp_path, text, name="data.svm"):
    path = tmp_path / name
    path.write_bytes(text.encode("ascii") if isinstance(text, str) else text)
    return path


# A file that exercises every rule: a constant feature (2), a feature stored only as
# explicit zeros (3), negative values, -0, a label 0.1 (%.17g), values whose %g needs
# an exponent, an empty row, a feature present in one row only (7).
RULES = ("1 1:0.5 2:3 3:0 4:-2 6:1e-5\n"
         "-1 1:-0.25 2:3 4:7.5 5:-0 6:123456789\n"
         "0.1 2:3 3:0 5:2 7:1\n"
         "-0\n"
         "2 1:1 2:3 4:-2 5:-3.25 6:0.001\n")


# ------------------------------------------------------------------ against svm-scale

@needs_svm_scale
@pytest.mark.parametrize("kw", [
    {}, {"lower": 0.0}, {"lower": 0.0, "upper": 2.0}, {"lower": -3.0, "upper": -1.0},
    {"y_limits": (-1.0, 1.0)}, {"lower": -0.5, "upper": 0.25, "y_limits": (0.0, 10.0)},
    {"lower": 1.0, "upper": 5.0}])
def test_rules_file_matches_svm_scale(tmp_path, kw):
    compare(tmp_path, write_text(tmp_path, RULES), **kw)


@needs_svm_scale
@pytest.mark.parametrize("name", ["binary/heart_scale", "binary/australian", "binary/a1a"])
@pytest.mark.parametrize("kw", [{}, {"lower": 0.0}, {"lower": 0.0, "upper": 1.0, "y_limits": (0.0, 1.0)},
                                {"lower": -0.5, "upper": 3.0}])
def test_shared_data_sets_match_svm_scale(tmp_path, name, kw):
    compare(tmp_path, shared_file(name), **kw)


@needs_svm_scale
@pytest.mark.parametrize("y", [False, True])
def test_parameter_files_cross_over(tmp_path, y):
    """svm-scale reads linsvm's -s file and linsvm reads svm-scale's, on test data
    with features the training data lacks (a1a.t: 10 of them) and without some it has."""
    train, test = shared_file("binary/a1a"), shared_file("binary/a1a.t")
    kw = {"lower": 0.0, "y_limits": (-2.0, 2.0) if y else None}
    compare(tmp_path, train, **kw)          # writes theirs.param and ours.param (equal)
    theirs, err, rc = svm_scale(["-r", tmp_path / "ours.param", test], tmp_path)
    assert rc == 0
    assert "was not seen in the scaling factor file" in err
    mine, res = ours(test, tmp_path, restore=str(tmp_path / "theirs.param"))
    assert mine == theirs
    assert any("have no range" in n and "10 feature(s)" in n for n in res.notes)


@needs_svm_scale
def test_restore_file_rules_match_svm_scale(tmp_path):
    """A hand-made parameter file: features beyond the data's largest index (written as
    scaled zeros), features the data has but the file lacks (left out), a feature
    listed with min == max (left out), a y section, lower/upper of its own."""
    data = write_text(tmp_path, RULES)
    params = write_text(tmp_path, "y\n-5 5\n-1 2\nx\n0 3\n1 -1 1\n2 3 3\n4 -2 8\n9 -1 4\n12 0 5\n",
                        "hand.param")
    compare(tmp_path, data, restore=params)
    # -l/-u/-y given with -r: svm-scale uses the file's; so does linsvm, with notes
    compare(tmp_path, data, restore=params, lower=0.0, upper=9.0, y_limits=(0.0, 1.0))
    _, res = ours(data, tmp_path, restore=str(params), lower=0.0, upper=9.0, y_limits=(0.0, 1.0))
    assert any("-l/-u are overridden" in n for n in res.notes)
    assert any("-y is overridden" in n for n in res.notes)
    # without a y section, -y scales the labels with the data's range
    nox = write_text(tmp_path, "x\n-1 1\n1 -1 1\n4 -2 8\n", "nox.param")
    compare(tmp_path, data, restore=nox, y_limits=(0.0, 1.0))
    compare(tmp_path, data, restore=nox)


@needs_svm_scale
def test_restore_with_fewer_features_than_the_data(tmp_path):
    """Decision: svm-scale's behaviour (the missing features are left out), plus one
    note naming how many and which (svm-scale prints a warning per feature)."""
    train = write_text(tmp_path, "1 1:1 2:2\n-1 1:3 2:5\n", "train.svm")
    test = write_text(tmp_path, "1 1:2 2:2 3:4 5:1\n-1 1:0 3:1 4:2 5:1\n", "test.svm")
    ours(train, tmp_path, save=str(tmp_path / "p"))
    mine = compare(tmp_path, test, restore=tmp_path / "p")
    assert mine == b"1 2:-1 \n-1 1:-2 2:-2.33333 \n"
    _, res = ours(test, tmp_path, restore=str(tmp_path / "p"))
    assert res.notes == [f"2 feature(s) of the data vary but have no range in {tmp_path / 'p'} "
                         "(index 3, 4): they are left out (svm-scale scales them to 0)"]


@needs_svm_scale
def test_empty_and_degenerate_inputs_match_svm_scale(tmp_path):
    for i, text in enumerate(["", "1\n", "1\n-1\n", "3 1:5\n3 1:5\n", "1 2:1\n", "-0 1:-0\n0 1:0\n",
                              "0 1:-0\n-0 1:0\n1 1:-0 2:-0\n-0\n"]):
        d = tmp_path / f"d{i}"
        d.mkdir()
        data = write_text(d, text)
        compare(d, data)
        compare(d, data, y_limits=(0.0, 1.0))
        compare(d, data, lower=0.0)


@needs_svm_scale
def test_extreme_values_match_svm_scale(tmp_path):
    """Denormals, huge values and labels whose ranges do not overflow: svm-scale's bytes.
    (Ranges that overflow are refused: test_overflowing_scaling_is_refused_naming_the_feature.)"""
    text = ("1e308 1:8e307 2:5e-324 3:-1e308\n"
            "-1e307 1:-8e307 2:-5e-324 3:-5e307 4:1e-310\n"
            "0 2:1e-320\n")
    data = write_text(tmp_path, text)
    for kw in ({}, {"y_limits": (-1.0, 1.0)}, {"lower": 0.0, "upper": 1e-300}):
        compare(tmp_path, data, **kw)


# A random sparse SVM-light file (what both programs read alike: no comments, no blank
# lines, indices increasing) and random limits; numbers as text in several spellings.
_values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False, width=64).map(repr),
    st.integers(-5, 5).map(str),
    st.sampled_from(["0", "-0", "0.0", "+1", "1e-5", "-2.5e3", "0.1", ".5", "3."]),
)


@st.composite
def sparse_files(draw, max_rows=12, max_index=9):
    rows = []
    for _ in range(draw(st.integers(0, max_rows))):
        label = draw(st.one_of(st.sampled_from(["1", "-1", "0", "-0", "+1", "2", "0.1"]), _values))
        idx = sorted(draw(st.sets(st.integers(1, max_index), max_size=max_index)))
        rows.append(" ".join([label] + [f"{j}:{draw(_values)}" for j in idx]) + "\n")
    return "".join(rows)


_limits = st.one_of(st.none(), st.tuples(st.integers(-4, 4), st.integers(1, 5)).map(
    lambda t: (float(t[0]), float(t[0] + t[1]))))


@needs_svm_scale
@settings(max_examples=100, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(text=sparse_files(), xl=_limits, yl=_limits)
def test_random_sparse_files_match_svm_scale(tmp_path, text, xl, yl):
    data = write_text(tmp_path, text)
    lower, upper = xl if xl is not None else (None, None)
    theirs, _, _ = svm_scale(options(lower=lower, upper=upper, y_limits=yl) + [data], tmp_path)
    if re.search(rb"inf|nan", theirs, re.I) or range_overflows(text, yl is not None):
        # refused exactly where svm-scale writes inf or nan, or a range is too wide
        with pytest.raises(DataError, match="overflows"):
            ours(data, tmp_path, lower=lower, upper=upper, y_limits=yl)
        return
    mine = compare(tmp_path, data, lower=lower, upper=upper, y_limits=yl)
    # and restoring the saved file on the same data gives the same output again
    again = compare(tmp_path, data, restore=tmp_path / "theirs.param")
    assert again == mine


# ------------------------------------------------------------------ an independent reference

def range_overflows(text, with_labels):
    """Whether a feature's range (absent = 0), or with_labels the labels' range, is wider
    than the largest double: max - min overflows (an independent dense computation)."""
    rows = [line.split() for line in text.splitlines() if line.strip()]
    if not rows:
        return False
    d = max([int(t.split(":")[0]) for r in rows for t in r[1:]], default=0)
    X = np.zeros((len(rows), d + 1))
    for i, r in enumerate(rows):
        for t in r[1:]:
            j, v = t.split(":")
            X[i, int(j)] = float(v)
    y = np.array([float(r[0]) for r in rows])
    with np.errstate(over="ignore"):
        wide = bool(np.any(X.max(axis=0) - X.min(axis=0) == np.inf))
        return wide or (with_labels and y.max() - y.min() == np.inf)


def reference_scale(text, lower=-1.0, upper=1.0, y_limits=None):
    """svm-scale's rules restated densely with NumPy and Python's %-formatting:
    ranges over every row (absent = 0), constant features left out, the ends mapped
    exactly, zeros not written.  (Signs of zero ranges do not matter here.)"""
    rows = [line.split() for line in text.splitlines() if line.strip()]
    if not rows:
        return b""
    d = max([int(t.split(":")[0]) for r in rows for t in r[1:]], default=0)
    X = np.zeros((len(rows), d + 1))
    y = np.array([float(r[0]) for r in rows])
    for i, r in enumerate(rows):
        for t in r[1:]:
            j, v = t.split(":")
            X[i, int(j)] = float(v)
    lo, hi = X.min(axis=0), X.max(axis=0)
    out = []
    for i in range(len(rows)):
        t = y[i]
        if y_limits is not None:
            ymin, ymax = y.min(), y.max()
            t = y_limits[0] if t == ymin else y_limits[1] if t == ymax else \
                y_limits[0] + (y_limits[1] - y_limits[0]) * (t - ymin) / (ymax - ymin)
        parts = ["%.17g " % t]
        for j in range(1, d + 1):
            if lo[j] == hi[j]:
                continue
            v = X[i, j]
            v = lower if v == lo[j] else upper if v == hi[j] else \
                lower + (upper - lower) * (v - lo[j]) / (hi[j] - lo[j])
            if v != 0:
                parts.append("%d:%g " % (j, v))
        out.append("".join(parts) + "\n")
    return "".join(out).encode("ascii")


_moderate = st.one_of(st.integers(-50, 50).map(str),
                      st.floats(-1e6, 1e6, allow_nan=False).map(repr),
                      st.sampled_from(["0", "-0", "0.5", "1e-3"]))


@st.composite
def moderate_files(draw):
    rows = []
    for _ in range(draw(st.integers(0, 10))):
        idx = sorted(draw(st.sets(st.integers(1, 8), max_size=8)))
        rows.append(" ".join([draw(_moderate)] + [f"{j}:{draw(_moderate)}" for j in idx]) + "\n")
    return "".join(rows)


@pytest.mark.slow
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=moderate_files(), xl=_limits, yl=_limits)
def test_random_files_match_the_reference(tmp_path, text, xl, yl):
    data = write_text(tmp_path, text)
    lower, upper = xl if xl is not None else (-1.0, 1.0)
    mine, _ = ours(data, tmp_path, lower=lower, upper=upper, y_limits=yl)
    assert mine == reference_scale(text, lower, upper, yl)


def test_rules_file_against_the_reference(tmp_path):
    mine, res = ours(write_text(tmp_path, RULES), tmp_path)
    assert mine == reference_scale(RULES)
    # feature 2 (constant 3 where stored, absent in two rows) is not constant: 0 and 3
    assert b" 2:" in mine
    # nnz grew (default -l -1 on sparse data): the note says so and names -l 0
    assert res.nnz_out > res.nnz_in
    assert any("-l 0" in n for n in res.notes)


def test_hand_checked_values(tmp_path):
    """Values worked out by hand: feature 1 ranges over [-2, 6] (a row without it is 0;
    2 is the middle, scaled to 0 and not written)."""
    data = write_text(tmp_path, "1 1:-2\n2 1:6\n3 1:2\n4\n")
    mine, _ = ours(data, tmp_path)
    assert mine == b"1 1:-1 \n2 1:1 \n3 \n4 1:-0.5 \n"
    mine, _ = ours(data, tmp_path, lower=0.0, upper=8.0, y_limits=(0.0, 3.0))
    assert mine == b"0 \n1 1:8 \n2 1:4 \n3 1:2 \n"


# ------------------------------------------------------------------ the parameter file

def test_parameter_file_round_trip_is_exact(tmp_path):
    rng = np.random.default_rng(5)
    fmin = np.concatenate([[0.0], rng.standard_normal(40) * 10.0 ** rng.integers(-300, 300, 40)])
    fmax = fmin + np.abs(rng.standard_normal(41))
    fmin[[3, 7]] = fmax[[3, 7]]                 # zero range: not listed
    fmax[0] = fmin[0] = 0.0
    p = ScaleParams(-0.5, 2.0 ** 0.5, fmin, fmax, (0.1, 1.0 / 3.0, -7.25, 1e22))
    write_params(tmp_path / "p", p)
    q = read_params(tmp_path / "p")
    assert (q.lower, q.upper, q.y) == (p.lower, p.upper, p.y)
    listed = p.listed()
    assert 3 not in listed and 7 not in listed
    np.testing.assert_array_equal(q.listed(), listed)
    np.testing.assert_array_equal(q.feature_min[listed], fmin[listed])
    np.testing.assert_array_equal(q.feature_max[listed], fmax[listed])
    assert format_params(q) == (tmp_path / "p").read_bytes()


def test_parameter_file_text(tmp_path):
    data = write_text(tmp_path, "0.1 1:0.1 3:-2\n5 1:0.2 2:7 4:-2\n")
    ours(data, tmp_path, lower=0.0, y_limits=(-1.0, 1.0), save=str(tmp_path / "p"))
    assert (tmp_path / "p").read_text() == (
        "y\n-1 1\n0.10000000000000001 5\nx\n0 1\n"
        "1 0.10000000000000001 0.20000000000000001\n2 0 7\n3 -2 0\n4 -2 0\n")


def test_saved_then_restored_on_the_same_data_is_the_same_output(tmp_path):
    data = write_text(tmp_path, RULES)
    a, _ = ours(data, tmp_path, lower=0.0, y_limits=(1.0, 2.0), save=str(tmp_path / "p"))
    b, _ = ours(data, tmp_path, restore=str(tmp_path / "p"))
    assert a == b


@pytest.mark.parametrize("text,line,what", [
    ("", 1, "empty parameter file"),
    ("z\n0 1\n", 1, "expected 'x'"),
    ("x\n", 1, "ends where 'lower upper'"),
    ("x\n0\n", 2, "expected 'lower upper', got 1 field"),
    ("x\n1 0\n", 2, "lower 1 is not below upper 0"),
    ("x\n0 1\n1 0\n", 3, "expected 'index min max'"),
    ("x\n0 1\n1 0 abc\n", 3, "expected a number, got 'abc'"),
    ("x\n0 1\n1 0 1e999\n", 3, "out of range"),
    ("x\n0 1\n1 0 nan\n", 3, "expected a number"),
    ("x\n0 1\n2 0 1\n2 0 1\n", 4, "not above the previous one"),
    ("x\n0 1\n0 0 1\n", 3, "feature index 0: feature indices start at 1"),
    ("x\n0 1\n1.5 0 1\n", 3, "expected a feature index"),
    ("x\n0 1\n3 2 1\n", 3, "min 2 is above max 1"),
    ("x\n0 1\n3000000000 0 1\n", 3, "is above 2147483647"),
    ("y\n1 0\n0 1\nx\n0 1\n", 2, "y_lower 1 is not below y_upper 0"),
    ("y\n0 1\nx\n0 1\n", 3, "expected 'y_min y_max'"),
    ("y\n0 1\n0 1\n0 1\n", 4, "expected 'x' on a line"),
])
def test_malformed_parameter_files(tmp_path, text, line, what):
    p = write_text(tmp_path, text, "bad.param")
    with pytest.raises(DataError) as exc:
        read_params(p)
    msg = str(exc.value)
    assert msg.startswith(f"{p}:{line}: "), msg
    assert what in msg, msg
    assert "\n" not in msg


def test_parameter_file_blank_lines_and_crlf_are_accepted(tmp_path):
    p = write_text(tmp_path, "x\r\n-1 1\r\n\r\n1 0 2\r\n\n", "p")
    q = read_params(p)
    assert q.lower == -1.0 and q.n_features == 1 and q.feature_max[1] == 2.0


# ------------------------------------------------------------------ input and output

def test_chunks_and_small_buffers_give_the_same_text(tmp_path, monkeypatch):
    """Streaming: rows in chunks of 3 and output in tiny buffers change nothing."""
    data = write_text(tmp_path, RULES * 7)
    whole, _ = ours(data, tmp_path, lower=-0.5, y_limits=(0.0, 1.0), save=str(tmp_path / "p1"))
    monkeypatch.setattr(scale_mod, "_CHUNK_ROWS", 3)
    monkeypatch.setattr(scale_mod, "_OUT_BYTES", 1)
    pieces, _ = ours(data, tmp_path, lower=-0.5, y_limits=(0.0, 1.0), save=str(tmp_path / "p2"))
    assert pieces == whole
    assert (tmp_path / "p1").read_bytes() == (tmp_path / "p2").read_bytes()


def test_zero_signs_across_chunks(tmp_path, monkeypatch):
    """The sign of a zero min/max is the last zero's (svm-scale's fold), also when the
    rows come in chunks: the parameter file shows it."""
    monkeypatch.setattr(scale_mod, "_CHUNK_ROWS", 2)
    cases = {  # rows of feature 1 (None: absent) -> "min max" of feature 1
        (-1.0, "-0"): "-1 -0", ("-0", -1.0): "-1 -0", ("-0", None): "0 0",
        ("-0", "-0", 2.0): "-0 2", (None, "-0", 2.0): "-0 2", ("-0", None, 2.0): "0 2",
        ("0", "-0", "-0", 3.0, None, "-0"): "-0 3",
    }
    for k, (vals, want) in enumerate(cases.items()):
        rows = "".join(f"1 1:{v}\n" if v is not None else "1\n" for v in vals)
        data = write_text(tmp_path, rows, f"z{k}.svm")
        ours(data, tmp_path, save=str(tmp_path / "p"))
        if SVM_SCALE is not None:
            svm_scale(["-s", tmp_path / "theirs.param", data], tmp_path)
            assert (tmp_path / "theirs.param").read_bytes() == (tmp_path / "p").read_bytes()
        lines = (tmp_path / "p").read_text().splitlines()
        feature1 = [line for line in lines if line.startswith("1 ")]
        if want == "0 0":
            assert feature1 == [], vals
        else:
            assert feature1 == [f"1 {want}"], vals


@pytest.mark.parametrize("kind", ["gzip", "bzip2", "xz"])
def test_compressed_input_is_read_twice(tmp_path, kind):
    plain = write_text(tmp_path, RULES)
    packed = tmp_path / "data.packed"
    compress = {"gzip": gzip.compress, "bzip2": bz2.compress, "xz": lzma.compress}[kind]
    packed.write_bytes(compress(RULES.encode()))
    a, _ = ours(plain, tmp_path, save=str(tmp_path / "pa"))
    b, _ = ours(packed, tmp_path, save=str(tmp_path / "pb"))
    assert a == b
    assert (tmp_path / "pa").read_bytes() == (tmp_path / "pb").read_bytes()


def _run_module(args, **kw):
    return subprocess.run([sys.executable, "-m", "linsvm", "scale", *map(str, args)],
                          capture_output=True, env=child_env(), timeout=120, **kw)


@pytest.mark.slow
@pytest.mark.subprocess
@pytest.mark.parametrize("packed", [False, True])
def test_stdin_is_spooled(tmp_path, packed):
    """'-' reads standard input once, keeping a copy for the second pass (compressed
    bytes as they came)."""
    body = RULES.encode()
    want, _ = ours(write_text(tmp_path, RULES), tmp_path, lower=0.0)
    r = _run_module(["-l", "0", "-"], input=gzip.compress(body) if packed else body)
    assert r.returncode == 0, r.stderr
    assert r.stdout == want


@pytest.mark.subprocess
def test_fifo_input_is_spooled(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    want, _ = ours(write_text(tmp_path, RULES), tmp_path)
    proc = subprocess.Popen([sys.executable, "-c",
                             f"open({str(fifo)!r}, 'wb').write({RULES.encode()!r})"])
    got, _ = ours(fifo, tmp_path)
    proc.wait(timeout=60)
    assert got == want


def test_qids_are_kept(tmp_path):
    data = write_text(tmp_path, "3 qid:1 1:1 2:5\n1 qid:1 1:3\n2 qid:7 2:1\n")
    mine, _ = ours(data, tmp_path, lower=0.0)
    assert mine == b"3 qid:1 1:0.333333 2:1 \n1 qid:1 1:1 \n2 qid:7 2:0.2 \n"
    X, y, qid = linsvm.load_svmlight(str(tmp_path / "ours.out"), with_qid=True)
    assert qid.tolist() == [1, 1, 7]


def test_comments_and_blank_lines_are_skipped(tmp_path):
    plain, _ = ours(write_text(tmp_path, "1 1:2\n-1 1:4\n", "a"), tmp_path)
    commented, _ = ours(write_text(tmp_path, "# head\n\n1 1:2 # x\n\n-1 1:4\n", "b"), tmp_path)
    assert commented == plain


# ------------------------------------------------------------------ the command

def test_command_writes_stdout_and_files(tmp_path):
    data = write_text(tmp_path, RULES)
    want, _ = ours(data, tmp_path, lower=0.0, upper=2.0, y_limits=(-1.0, 1.0))
    r = invoke(cli, "scale", "-l", "0", "-u", "2", "-y", "-1", "1", "-s", tmp_path / "p", data,
               prog_name="linsvm")
    assert r.exit_code == 0, r.output
    assert r.stdout_bytes == want
    r = invoke(cli, "scale", "-r", tmp_path / "p", "-o", tmp_path / "o", data,
               prog_name="linsvm")
    assert r.exit_code == 0 and r.stdout_bytes == b""
    assert (tmp_path / "o").read_bytes() == want


def test_command_notes_go_to_stderr_and_quiet_silences_them(tmp_path):
    data = write_text(tmp_path, RULES)
    r = invoke(cli, "scale", data, prog_name="linsvm")
    assert r.exit_code == 0
    notes = r.stderr.splitlines()
    assert len(notes) == 1 and notes[0].startswith("linsvm scale: note: the output has more non-zeros")
    assert "-l 0" in notes[0]
    r = invoke(cli, "scale", "-q", data, prog_name="linsvm")
    assert r.exit_code == 0 and r.stderr == ""
    assert invoke(cli, "scale", "-l", "0", data, prog_name="linsvm").stderr == ""


@pytest.mark.parametrize("args,code,what", [
    (["-l", "1", "-u", "1"], 2, "inconsistent limits"),
    (["-l", "2"], 2, "lower 2 (-l) must be below upper 1"),
    (["-y", "1", "0"], 2, "y_lower 1 must be below y_upper 0"),
    (["-l", "nan"], 2, "-l must be a finite number"),
    (["-s", "P", "-r", "P"], 2, "cannot use -s and -r together"),
    (["-r", "no-such-file"], 1, "no-such-file: cannot open the parameter file"),
])
def test_command_usage_errors(tmp_path, args, code, what):
    data = write_text(tmp_path, RULES)
    args = [str(tmp_path / a) if a in ("P", "no-such-file") else a for a in args]
    r = invoke(cli, "scale", *args, "-o", tmp_path / "out", data, prog_name="linsvm")
    assert r.exit_code == code
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("linsvm scale: error: ") and what in lines[0], r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("text,line,what", [
    ("1 1:2\n-1 1:abc\n", 2, "abc"),
    ("1 1:2\n1 3:1 2:1\n", 2, ""),
    ("1 1:2\n\n-1 0:1\n", 3, ""),
    ("x 1:2\n", 1, "x"),
    ("1 1:inf\n", 1, "inf"),
])
def test_malformed_data_is_one_line_with_file_and_line(tmp_path, text, line, what):
    """Nothing is written: the output file keeps its old contents, no -s file appears,
    and standard output stays empty (the first pass reads everything)."""
    data = write_text(tmp_path, text)
    (tmp_path / "out").write_bytes(b"old")
    r = invoke(cli, "scale", "-s", tmp_path / "p", "-o", tmp_path / "out", data,
               prog_name="linsvm")
    assert r.exit_code == 1
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"linsvm scale: error: {data}:{line}: ")
    assert what in lines[0]
    assert (tmp_path / "out").read_bytes() == b"old"
    assert not (tmp_path / "p").exists()
    r = invoke(cli, "scale", data, prog_name="linsvm")
    assert r.exit_code == 1 and r.stdout_bytes == b""


def test_malformed_restore_file_writes_nothing(tmp_path):
    data = write_text(tmp_path, RULES)
    bad = write_text(tmp_path, "x\n0 1\n1 0\n", "bad.param")
    r = invoke(cli, "scale", "-r", bad, "-o", tmp_path / "out", data, prog_name="linsvm")
    assert r.exit_code == 1
    assert r.stderr.strip() == f"linsvm scale: error: {bad}:3: expected 'index min max', got 2 field(s)"
    assert not (tmp_path / "out").exists()


def test_missing_data_file(tmp_path):
    r = invoke(cli, "scale", tmp_path / "none.svm", prog_name="linsvm")
    assert r.exit_code == 1
    assert r.stderr.startswith(f"linsvm scale: error: {tmp_path / 'none.svm'}: cannot open")


def test_library_errors_are_parameter_and_data_errors(tmp_path):
    data = write_text(tmp_path, RULES)
    with pytest.raises(ParameterError):
        scale_file(str(data), str(tmp_path / "o"), lower=1.0, upper=0.0)
    with pytest.raises(ParameterError):
        scale_file(str(data), str(tmp_path / "o"), save="a", restore="b")
    with pytest.raises(DataError):
        scale_file(str(tmp_path / "missing"), str(tmp_path / "o"))
    assert not (tmp_path / "o").exists()


def test_help_names_the_options():
    r = invoke(cli, "scale", "--help", prog_name="linsvm")
    assert r.exit_code == 0
    for opt in ("-l", "-u", "-y", "-s", "-r", "-o"):
        assert f"{opt}, --" in r.stdout
    assert isinstance(scale_cmd.name, str) and scale_cmd.name == "scale"


def test_scaled_output_trains(tmp_path):
    """The output is SVM-light that linsvm reads back (no trailing-space trouble)."""
    data = write_text(tmp_path, RULES)
    out, _ = ours(data, tmp_path, lower=0.0)
    X, y = linsvm.load_svmlight(str(tmp_path / "ours.out"))
    assert X.shape[0] == 5 and math.isclose(float(X.max()), 1.0)


# ------------------------------------------------------------------ overflow, y-only files

@pytest.mark.parametrize("text,kw,what", [
    ("1 1:-1.7e308\n-1 1:1.7e308\n", {}, "feature 1: its range [-1.7e+308, 1.7e+308] is wider"),
    ("1 1:-1.7e308\n-1 1:1e308\n1 2:1\n", {}, "feature 1: its range"),
    ("1 2:1 3:0\n-1 3:1e308\n1 3:1.7e308\n", {}, "feature 3: scaling its value 1e+308 from its "
                                                "range [0, 1.7e+308] to [-1, 1] overflows"),
    ("1e308 1:1\n-1e308 1:2\n", {"y_limits": (0.0, 1.0)}, "labels: their range"),
])
def test_overflowing_scaling_is_refused_naming_the_feature(tmp_path, text, kw, what):
    """svm-scale writes nan (a range wider than the doubles) or inf (a value whose line
    overflows); linsvm refuses in one line naming the feature, writes nothing (the old
    output file is left as it was) and exits 1."""
    data = write_text(tmp_path, text)
    (tmp_path / "out").write_bytes(b"old")
    args = options(**kw)
    r = invoke(cli, "scale", *[*args, "-o", tmp_path / "out", data], prog_name="linsvm")
    assert r.exit_code == 1 and r.stdout_bytes == b""
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"linsvm scale: error: {data}: ") and what in lines[0], \
        r.stderr
    assert (tmp_path / "out").read_bytes() == b"old"
    r = invoke(cli, "scale", *[*args, data], prog_name="linsvm")
    assert r.exit_code == 1 and r.stdout_bytes == b""


def test_limits_whose_width_overflows_are_a_usage_error(tmp_path):
    data = write_text(tmp_path, RULES)
    for args in (["-l", "-1e308", "-u", "1e308"], ["-y", "-1e308", "1e308"]):
        r = invoke(cli, "scale", *[*args, data], prog_name="linsvm")
        assert r.exit_code == 2 and "too far apart" in r.stderr and r.stdout_bytes == b"", r.stderr
    for text, line in (("x\n-1e308 1e308\n1 0 1\n", 2), ("x\n-1 1\n1 -1.7e308 1.7e308\n", 3),
                       ("y\n-1e308 1e308\n0 1\nx\n-1 1\n", 2), ("y\n0 1\n-1e308 1e308\n", 3)):
        bad = write_text(tmp_path, text, "bad.range")
        r = invoke(cli, "scale", *["-r", bad, data], prog_name="linsvm")
        assert r.exit_code == 1 and r.stderr.startswith(f"linsvm scale: error: {bad}:{line}: "), r.stderr
        assert "overflows" in r.stderr and len(r.stderr.splitlines()) == 1


def test_ends_of_a_huge_range_scale_exactly_and_values_between_are_checked_one_by_one(tmp_path):
    """Range [0, 1.7e308]: its ends are written as exactly -1 and 1, so a feature whose
    values are only its ends scales as in svm-scale although 2 * 1.7e308 overflows; so
    does a value far enough from the top; 1e308 in between is refused (the one more
    pass finds it)."""
    data = write_text(tmp_path, "1 1:1.7e308\n1\n")
    out, _ = ours(data, tmp_path)
    assert out == b"1 1:1 \n1 1:-1 \n"
    data = write_text(tmp_path, "1 1:1.7e308\n1\n2 1:1\n")
    out, _ = ours(data, tmp_path)
    assert out == b"1 1:1 \n1 1:-1 \n2 1:-1 \n"      # -1 + 2 * 1 / 1.7e308 rounds to -1
    data = write_text(tmp_path, "1 1:1.7e308\n1\n2 1:1e308\n")
    with pytest.raises(DataError, match=r"feature 1: scaling its value 1e\+308 from its range"):
        ours(data, tmp_path)
    # a restored range that the data's values lie beyond
    rng = write_text(tmp_path, "x\n-1 1\n1 0 1\n", "r.range")
    with pytest.raises(DataError, match=r"feature 1: scaling its values \[0, 1e\+308\] from its range \[0, 1\]"):
        ours(write_text(tmp_path, "1 1:1e308\n-1\n"), tmp_path, restore=str(rng))


def test_a_range_file_with_only_a_y_section_is_read_as_svm_scale_reads_it(tmp_path):
    """svm-scale's x section is optional: a file of a y section alone scales the labels
    with its y parameters and the features as without a file (the data's own ranges,
    -l/-u or their defaults)."""
    text = "1 1:0.5 2:3\n-1 1:-0.25 3:1\n1 2:1 3:-2\n"
    data = write_text(tmp_path, text)
    rng = write_text(tmp_path, "y\n0 1\n-1 1\n", "y.range")
    for lower in (-1.0, 0.0):
        out, res = ours(data, tmp_path, lower=lower, restore=str(rng))
        assert out == reference_scale(text, lower, 1.0, (0.0, 1.0))
        assert not any("overridden" in n or "no range" in n for n in res.notes)
    # the file's label range, not the data's: labels 1 2 3 over the file's [1, 5] -> 0 .25 .5
    data = write_text(tmp_path, "1 1:1\n2 1:2\n3 1:3\n")
    rng = write_text(tmp_path, "y\n0 1\n1 5\n", "y.range")
    out, _ = ours(data, tmp_path, restore=str(rng))
    assert out == b"0 1:-1 \n0.25 \n0.5 1:1 \n"
    params = read_params(rng)
    assert not params.has_x and format_params(params) == b"y\n0 1\n1 5\n"


@needs_svm_scale
def test_a_y_only_range_file_matches_svm_scale(tmp_path):
    data = write_text(tmp_path, RULES)
    rng = write_text(tmp_path, "y\n0 1\n-1 1\n", "y.range")
    compare(tmp_path, data, restore=rng)
    compare(tmp_path, data, lower=0.0, restore=rng)
