"""Property-based tests of the model loader on mutated model files.

Valid files of every kind (binary, multiclass, ordinal, a LIBLINEAR bias-0
model) in every format (linsvm text, linsvm binary, LIBLINEAR) are mutated by
random byte flips, truncations, insertions, deletions and token swaps.  The
loader must either refuse the file with a ModelError (one line, naming the
file) or return a model whose weights, classes and bias are exactly what the
mutated file says, as an independent, deliberately simple reader below sees
it.  Models whose weights are near or beyond overflow predict decision values
equal to the exact ones, or stop with one line naming the model and the first
example that overflows.  Bounded by the hypothesis profile in conftest.py (about 150 examples per
test by default; `--hypothesis-profile=long` for long runs).
"""
import re
import zlib

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, strategies as st  # noqa: E402

from linsvm.errors import ModelError  # noqa: E402
from linsvm.model.model import Model, _loads  # noqa: E402


def _models():
    rng = np.random.default_rng(7)
    W = rng.normal(size=(6, 1)) * 10.0 ** rng.integers(-5, 5, size=(6, 1))
    out = {
        "binary": Model(solver="mfn", classes=[1, -1], weights=W, bias=1.0,
                        params={"C": 1.0, "loss": "l2"}, stats={"objective": 1.25, "n_iter": 3}),
        "multiclass": Model(solver="sdm-cs", classes=[3, 1, 2], weights=rng.normal(size=(5, 3)), bias=-1,
                            params={"C": 2.0}),
        "ordinal": Model(solver="mfn-ord", classes=[1, 2, 3], weights=rng.normal(size=(4, 1)), bias=0.5,
                         params={"C": 1.0}, thresholds=[-0.5, 0.75]),
        "bias0": Model(solver="liblinear:L2R_L2LOSS_SVC", classes=[1, 2], weights=rng.normal(size=(4, 1)),
                       bias=0.0, params={"bias": 0.0}, n_features=3),
    }
    # with probability sigmoids (version 3, probA/probB lines; not exportable to LIBLINEAR)
    out["binary-proba"] = out["binary"].with_probability([[-1.7, 0.03125]])
    out["multiclass-proba"] = out["multiclass"].with_probability(rng.normal(size=(3, 2)))
    return out


def _files():
    import os
    import tempfile

    files = []
    with tempfile.TemporaryDirectory() as d:
        for name, m in _models().items():
            for fmt in ("linsvm-text", "linsvm-binary", "liblinear"):
                if fmt == "liblinear" and (m.kind == "ordinal" or m.probability_ is not None):
                    continue
                path = os.path.join(d, f"{name}.{fmt}")
                m.save(path, format=fmt)
                with open(path, "rb") as fh:
                    files.append((f"{name}.{fmt}", fh.read()))
    return files


FILES = _files()


# ------------------------------------------------------------------ an independent simple reader

def _floats(tokens):
    return [float(t) for t in tokens]


def reference_weights(data: bytes):
    """(weights, classes, bias) as the file's own text says, read naively; None if this
    simple reader cannot make sense of the file (then only 'no crash' is checked)."""
    try:
        if data.split(None, 1)[:1] == [b"solver_type"]:
            found = re.search(rb"\n[ \t\r]*w[ \t\r]*\n", data)
            head, body = data[:found.start()], data[found.end():]
            keys = dict(line.split(None, 1) for line in head.decode().split("\n") if line.strip())
            rows = [_floats(line.split()) for line in body.decode().split("\n")[:-1]]
            labels = _floats(keys["label"].split())
            return np.array(rows, dtype=np.float64), labels, float(keys["bias"])
        found = re.search(rb"\n[ \t]*weights[ \t]", data)
        text_end = found.start()
        head = data[:text_end].decode()
        keys = {}
        for line in head.split("\n")[1:]:
            parts = line.split(None, 1)
            if parts:
                keys.setdefault(parts[0], parts[1] if len(parts) > 1 else "")
        nl = data.index(b"\n", text_end + 1)
        wline = data[text_end + 1:nl].decode().split()
        n_rows, n_cols = int(wline[1]), int(keys["n_columns"])
        if len(wline) > 2:
            raw = data[nl + 1:nl + 1 + 8 * n_rows * n_cols]
            W = np.frombuffer(raw, dtype="<f8").reshape(n_rows, n_cols)
        else:
            lines = data[nl + 1:].decode().split("\n")[:n_rows]
            W = np.array([_floats(line.split()) for line in lines], dtype=np.float64).reshape(n_rows, n_cols)
        return W, _floats(keys["classes"].split()), float(keys["bias"])
    except (ValueError, KeyError, IndexError, UnicodeDecodeError, AttributeError):
        return None


def check_load(data: bytes):
    """The property: a ModelError naming the file, or exactly what the file says."""
    try:
        m = _loads(data, "fuzz.model")
    except ModelError as exc:
        msg = str(exc)
        assert msg.startswith("fuzz.model"), msg
        assert "\n" not in msg, msg
        return None
    assert np.isfinite(m.weights).all()
    ref = reference_weights(data)
    assert ref is not None, "the loader accepted a file the simple reader cannot read"
    W, classes, bias = ref
    assert m.weights.shape == W.shape
    np.testing.assert_array_equal(m.weights.view(np.uint64), np.ascontiguousarray(W).view(np.uint64))
    np.testing.assert_array_equal(m.classes_, classes)
    assert m.bias == bias
    proba = reference_probability(data)
    if proba is None:
        assert m.probability_ is None
    else:
        np.testing.assert_array_equal(m.probability_, proba)
    return m


def reference_probability(data: bytes):
    """The (n, 2) array of a linsvm file's probA / probB lines as its text says, or None."""
    head = data.split(b"\nweights", 1)[0].decode("utf-8", "replace").split("\n")
    found = {}
    for line in head:
        parts = line.split()
        if parts and parts[0] in ("probA", "probB"):
            found[parts[0]] = _floats(parts[1:])
    return np.column_stack([found["probA"], found["probB"]]) if found else None


@st.composite
def mutated(draw):
    name, data = draw(st.sampled_from(FILES))
    data = bytearray(data)
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "digit", "token"]))
        pos = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[pos:]
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from([b" ", b"\n", b"0", b"-", b"e", b".", b"1e308",
                                                  b"nan", b"\r", b"\x00", b"end\n", b"9" * 30]))
        elif op == "delete":
            del data[pos:pos + draw(st.integers(1, 8))]
        elif op == "digit":
            digits = [i for i, c in enumerate(data) if 48 <= c <= 57]
            if digits:
                data[draw(st.sampled_from(digits))] = draw(st.integers(48, 57))
        elif op == "token":       # replace a whole header value or weight by another number
            spans = [m.span() for m in re.finditer(rb"-?[0-9][0-9.e+-]*", bytes(data))]
            if spans:
                a, b = draw(st.sampled_from(spans))
                data[a:b] = draw(st.sampled_from([b"0", b"-1", b"1e308", b"-1e308", b"3", b"1000000"]))
    return name, bytes(data)


@given(mutated())
def test_mutated_model_files_fail_cleanly_or_load_what_they_say(case):
    name, data = case
    check_load(data)


@given(st.sampled_from(FILES), st.data())
def test_every_byte_flip_of_a_binary_weight_section_is_caught(file, data):
    name, raw = file
    if b"binary float64-le" not in raw:
        return
    start = raw.index(b"\n", raw.index(b"\nweights ") + 1) + 1
    end = len(raw) - len(b"\nend\n")
    pos = data.draw(st.integers(start, end - 1))
    bad = bytearray(raw)
    bad[pos] ^= 1 << data.draw(st.integers(0, 7))
    with pytest.raises(ModelError, match="corrupt (header or )?binary weights"):
        _loads(bytes(bad), "fuzz.model")


def test_the_unmutated_files_load_and_agree_with_the_simple_reader():
    for name, data in FILES:
        assert check_load(data) is not None, name
    # and the crc in a binary header is the crc of the header lines before it (version 4)
    # followed by the bytes that follow
    for name, data in FILES:
        m = re.search(rb"crc32:([0-9a-f]{8})\n", data)
        if m:
            W = reference_weights(data)[0]
            header = data[:data.index(b"\nweights ") + 1] if data.startswith(b"linsvm_model 4\n") else b""
            assert int(m.group(1), 16) == zlib.crc32(np.ascontiguousarray(W, dtype="<f8").tobytes(),
                                                     zlib.crc32(header))


# ---------------------------------------------------------------------------
# weight magnitudes near and beyond overflow
# ---------------------------------------------------------------------------

_MAGNITUDES = [0.0, 1e-300, 1.0, 3.5, 1e150, 1e300, 8.9e307, 1e308, 1.7976931348623157e308]
_DBL_MAX = 1.7976931348623157e308


@st.composite
def overflow_case(draw):
    """A binary model whose weights are drawn from magnitudes near and beyond overflow,
    its bias value, and a few test rows whose features are too: (W, bias, rows)."""
    n = draw(st.integers(1, 4))
    signed = st.builds(lambda m, s: m * s, st.sampled_from(_MAGNITUDES), st.sampled_from([1.0, -1.0]))
    bias = draw(st.sampled_from([-1.0, 0.5, 1.0, 2.0]))
    W = np.array(draw(st.lists(signed, min_size=n + (bias > 0), max_size=n + (bias > 0))))
    feature = st.builds(lambda m, s: m * s, st.sampled_from([1.0, 0.5, 10.0, 1e10, 1e300]),
                        st.sampled_from([1.0, -1.0]))
    rows = draw(st.lists(st.dictionaries(st.integers(1, n), feature, max_size=n),
                         min_size=1, max_size=5))
    return W.reshape(-1, 1), bias, rows


def _exact_score(W, bias, row):
    """The exact decision value and the exact sum of its terms' magnitudes (fractions)."""
    from fractions import Fraction
    terms = [Fraction(W[j - 1, 0]) * Fraction(v) for j, v in row.items()]
    if bias > 0:
        terms.append(Fraction(W[-1, 0]) * Fraction(bias))
    return sum(terms, Fraction(0)), sum((abs(t) for t in terms), Fraction(0))


@pytest.mark.slow
@given(overflow_case(), st.sampled_from(["linsvm-text", "linsvm-binary", "liblinear"]))
def test_overflowing_decision_values_are_one_error_naming_model_and_example(case, fmt):
    """Whatever the weights' and features' magnitudes, predict_file (what linsvm-predict
    runs) either writes decision values equal to the exact ones, or stops with one line
    naming the model and the first example whose decision value overflows -- never a
    NumPy warning.  A row whose terms' magnitudes sum below the largest double cannot
    overflow in any order of summation; one whose exact value exceeds it must."""
    import os
    import tempfile
    import warnings
    from fractions import Fraction

    from linsvm.errors import DataError
    from linsvm.model.predict import predict_file
    W, bias, rows = case
    model = Model(solver="mfn", classes=[1, -1], weights=W, bias=bias, params={}) \
        if not (bias > 0 and not np.isfinite(W[-1, 0] * bias)) else None
    if model is None:           # refused at construction (bias x its weight overflows)
        return
    must_be_finite = []
    must_overflow = []
    for row in rows:
        exact, bound = _exact_score(W, bias, row)
        must_be_finite.append(bound < Fraction(_DBL_MAX) * Fraction(9, 10))
        must_overflow.append(abs(exact) > Fraction(_DBL_MAX) * Fraction(101, 100))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "m.model")
        model.save(path, format=fmt)
        test = os.path.join(d, "t.svm")
        with open(test, "w") as fh:
            fh.write("".join("1" + "".join(f" {j}:{v!r}" for j, v in sorted(r.items())) + "\n"
                             for r in rows))
        out = os.path.join(d, "p.txt")
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            try:
                predict_file(test, path, out, decision_values=True, measures=False)
                error = None
            except (ModelError, DataError) as exc:
                error = str(exc)
        if error is None:
            assert not any(must_overflow)
            values = [float(v) for v in open(out).read().split()]
            for row, v, finite in zip(rows, values, must_be_finite):
                if finite:          # rounding: a few ulps of the largest term
                    exact, bound = _exact_score(W, bias, row)
                    assert abs(Fraction(v) - exact) <= bound * Fraction(1, 10 ** 15), (v, exact)
            return
        assert "\n" not in error and not os.path.exists(out)
        found = re.search(r"example (\d+)", error)
        assert found and (path in error and f"{test}" in error), error
        k = int(found.group(1)) - 1
        assert not must_be_finite[k] and not any(must_overflow[:k]), (error, must_be_finite)
