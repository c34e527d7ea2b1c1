"""Tests of linsvm.model: the Model object, its native format and LIBLINEAR interoperability."""
import math
import os
import stat

import numpy as np
import pytest
from conftest import invoke, shared_file
import scipy.sparse as sp

from linsvm.errors import DataError, ModelError, ParameterError
from linsvm.model.model import Model, _loads, load_model
from linsvm.io.svmlight import load_svmlight
from linsvm.io.synth import make_text_classification

try:
    from liblinear import liblinearutil
except ImportError:          # liblinear-official is an optional test dependency
    liblinearutil = None

needs_liblinear = pytest.mark.skipif(liblinearutil is None, reason="liblinear-official not installed")



# --------------------------------------------------------------------------- helpers

def bits(a):
    """The raw bits of a float64 array (distinguishes -0.0 from 0.0)."""
    return np.ascontiguousarray(a, dtype=np.float64).view(np.uint64)


def assert_same_model(a, b):
    """Every field of a and b equal, floats bit for bit."""
    assert a.solver == b.solver
    assert a.kind == b.kind
    assert a.n_features_ == b.n_features_
    assert bits(np.array([a.bias])) == bits(np.array([b.bias]))
    np.testing.assert_array_equal(bits(a.classes_), bits(b.classes_))
    assert a.weights.shape == b.weights.shape
    np.testing.assert_array_equal(bits(a.weights), bits(b.weights))
    if a.thresholds_ is None:
        assert b.thresholds_ is None
    else:
        np.testing.assert_array_equal(bits(a.thresholds_), bits(b.thresholds_))
    for da, db in ((a.params, b.params), (a.stats, b.stats)):
        assert list(da) == list(db)
        for k in da:
            va, vb = da[k], db[k]
            assert type(va) is type(vb), k
            if isinstance(va, float):
                assert bits(np.array([va])) == bits(np.array([vb])), k
            else:
                assert va == vb, k


def nasty_weights(rng, n_rows, n_cols):
    """Random weights mixing tiny, huge, subnormal, integral and signed-zero values."""
    W = rng.normal(size=(n_rows, n_cols)) * 10.0 ** rng.integers(-300, 300, size=(n_rows, n_cols))
    special = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
                        -1.7976931348623157e308, 1.0, -3.0, 0.1, 1e16, 123456789012345678.0,
                        1 / 3, 2.0 ** -1074 * 3])
    flat = W.reshape(-1)
    flat[: min(special.size, flat.size)] = special[: flat.size]
    return W


ALL_TYPES_PARAMS = {
    "C": 0.1, "bias": 1.0, "tol": 1e-6, "loss": "l2", "p": 1.5, "seed": 0, "max_iter": None,
    "shrinking": True, "verbose": False, "big": 2**70, "neg": -7, "tiny": 5e-324, "negzero": -0.0,
    "inf_opt": math.inf, "note": 'spaces, "quotes", back\\slash,\ttab\nnewline and unicode \u00e9\u2603',
    "empty": "", "dotted.name-x": 3.0,
}


def make_models(rng):
    """A model of every kind, with and without bias, with weights that stress the float format."""
    out = {}
    out["binary-bias"] = Model(solver="mfn", classes=[1, -1], weights=nasty_weights(rng, 9, 1), bias=1.0,
                               params=ALL_TYPES_PARAMS,
                               stats={"objective": 12345.678901234567, "n_iter": 7, "seconds": 0.0123,
                                      "gap": math.nan, "kkt": -math.inf})
    out["binary-nobias"] = Model(solver="dcd", classes=[-1, 1], weights=nasty_weights(rng, 8, 1), bias=-1,
                                 params={"C": 2.0, "bias": -1, "loss": "l1"})
    out["multi3-bias"] = Model(solver="sdm-cs", classes=[3, 1, 2], weights=nasty_weights(rng, 6, 3), bias=0.5,
                               params={"C": 1.0, "bias": 0.5}, stats={"objective": 1.5, "n_iter": 100})
    out["multi3-nobias"] = Model(solver="mfn", classes=[0.5, -2.25, 7], weights=nasty_weights(rng, 5, 3),
                                 bias=-1, params={})
    W = nasty_weights(rng, 4, 2)
    W[-1] = [-0.0, 1e300]        # 2 * -1.8e308 in the bias row would make every score infinite
    out["multi2-cols2"] = Model(solver="sdm-ww", classes=[4, 9], weights=W, bias=2.0, params={"C": 1.0})
    out["ordinal"] = Model(solver="mfn-ord", classes=[1, 2, 3, 4], weights=nasty_weights(rng, 7, 1), bias=-1,
                           params={"C": 1.0}, stats={"n_iter": 3},
                           thresholds=[-1.5, -0.0, 2.5])
    out["empty-features"] = Model(solver="mfn", classes=[1, -1], weights=np.zeros((1, 1)), bias=1.0, params={})
    return out


MODEL_NAMES = ["binary-bias", "binary-nobias", "multi3-bias", "multi3-nobias", "multi2-cols2", "ordinal",
               "empty-features"]


@pytest.fixture
def models():
    return make_models(np.random.default_rng(12345))


def native_text(model, tmp_path, name="m.model", format="linsvm"):
    path = tmp_path / name
    model.save(path, format=format)
    return path.read_bytes()


# --------------------------------------------------------------------------- native format

@pytest.mark.parametrize("name", MODEL_NAMES)
def test_native_round_trip_is_bit_exact(models, tmp_path, name):
    m = models[name]
    path = tmp_path / "a.model"
    m.save(path)
    m2 = load_model(path)
    assert_same_model(m, m2)
    # save -> load -> save is byte-identical
    m2.save(tmp_path / "b.model")
    assert (tmp_path / "a.model").read_bytes() == (tmp_path / "b.model").read_bytes()


def test_native_example_text(tmp_path):
    m = Model(solver="mfn", classes=[1, -1], weights=[[0.5], [-1.25], [0.0], [0.125]], bias=1.0,
              params={"C": 1.0, "bias": 1.0, "loss": "l2", "seed": 0, "max_iter": None},
              stats={"objective": 12.345678901234567, "n_iter": 7})
    assert native_text(m, tmp_path).decode() == (
        "linsvm_model 2\nsolver mfn\nkind binary\nn_features 3\nbias 1\nclasses 1 -1\nn_columns 1\n"
        "param C float 1\nparam bias float 1\nparam loss str \"l2\"\nparam seed int 0\nparam max_iter none\n"
        "stat objective float 12.345678901234567\nstat n_iter int 7\n"
        "weights 4\n0.5\n-1.25\n0\n0.125\nend\n")


def test_numpy_scalars_in_params_and_stats_become_python_types(tmp_path):
    m = Model(solver="mfn", classes=np.array([1, -1], dtype=np.int32), weights=np.ones((2, 1), np.float32),
              bias=np.float64(1.0), params={"C": np.float32(0.5), "seed": np.int64(3), "flag": np.bool_(True)},
              stats={"n_iter": np.int32(4)})
    assert m.params == {"C": 0.5, "seed": 3, "flag": True}
    assert type(m.params["seed"]) is int and type(m.params["flag"]) is bool
    assert_same_model(m, load_model(_save(m, tmp_path)))


def _save(m, tmp_path, name="m.model", format="linsvm"):
    path = tmp_path / name
    m.save(path, format=format)
    return path


def test_header_lines_in_any_order_are_accepted(models, tmp_path):
    m = models["ordinal"]
    lines = native_text(m, tmp_path).decode().split("\n")
    w = lines.index(next(x for x in lines if x.startswith("weights")))
    header = lines[1:w]
    shuffled = "\n".join([lines[0]] + header[::-1] + lines[w:])
    assert_same_model(m, _loads(shuffled.encode(), "x"))


def test_crlf_line_ends_are_accepted(models, tmp_path):
    m = models["multi3-bias"]
    text = native_text(m, tmp_path).replace(b"\n", b"\r\n")
    assert_same_model(m, _loads(text, "x"))


# --------------------------------------------------------------------------- atomic save

def _listing(d):
    return sorted(p.name for p in d.iterdir())


def test_save_failure_mid_write_leaves_old_file_and_no_temp(models, tmp_path, monkeypatch):
    target = tmp_path / "m.model"
    target.write_text("old contents\n")
    before = _listing(tmp_path)
    m = models["multi3-bias"]
    original = Model._linsvm_chunks

    def failing(self, *args):
        gen = original(self, *args)
        yield next(gen)
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Model, "_linsvm_chunks", failing)
    with pytest.raises(RuntimeError, match="disk on fire"):
        m.save(target)
    assert target.read_text() == "old contents\n"
    assert _listing(tmp_path) == before


@pytest.mark.parametrize("exc", [KeyboardInterrupt, OSError])
def test_save_failure_at_rename_or_fsync_leaves_old_file(models, tmp_path, monkeypatch, exc):
    target = tmp_path / "m.model"
    target.write_text("old contents\n")
    before = _listing(tmp_path)

    def boom(*args, **kwargs):
        raise exc("interrupted")

    monkeypatch.setattr("linsvm.model.model.os.replace" if exc is OSError else "linsvm.model.model.os.fsync", boom)
    with pytest.raises(exc):
        models["binary-bias"].save(target)
    assert target.read_text() == "old contents\n"
    assert _listing(tmp_path) == before


def test_export_refusal_creates_nothing(models, tmp_path):
    with pytest.raises(ModelError, match="ordinal models cannot be written in LIBLINEAR format"):
        models["ordinal"].save(tmp_path / "m.model", format="liblinear")
    with pytest.raises(ModelError, match="class label 0.5 is not a 32-bit integer"):
        models["multi3-nobias"].save(tmp_path / "m.model", format="liblinear")
    with pytest.raises(ParameterError, match="unknown model format"):
        models["binary-bias"].save(tmp_path / "m.model", format="svmlight")
    assert _listing(tmp_path) == []


def test_save_into_missing_directory_raises_oserror(models, tmp_path):
    with pytest.raises(FileNotFoundError):
        models["binary-bias"].save(tmp_path / "no" / "such" / "dir" / "m.model")


def test_saved_file_permissions(models, tmp_path):
    old = os.umask(0o027)
    try:
        path = _save(models["binary-bias"], tmp_path)
    finally:
        os.umask(old)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    path.chmod(0o604)
    models["binary-bias"].save(path)          # overwriting keeps the existing mode
    assert stat.S_IMODE(path.stat().st_mode) == 0o604


def test_save_overwrites_and_accepts_str_paths(models, tmp_path):
    path = str(tmp_path / "m.model")
    models["binary-bias"].save(path)
    models["multi3-bias"].save(path)
    assert_same_model(models["multi3-bias"], load_model(path))
    assert _listing(tmp_path) == ["m.model"]


# --------------------------------------------------------------------------- corrupt files

BASE = (
    "linsvm_model 1\n"          # 1
    "solver mfn\n"              # 2
    "kind binary\n"             # 3
    "n_features 3\n"            # 4
    "bias 1\n"                  # 5
    "classes 1 -1\n"            # 6
    "n_columns 1\n"             # 7
    "param C float 1\n"         # 8
    "param bias float 1\n"      # 9
    "stat n_iter int 7\n"       # 10
    "weights 4\n"               # 11
    "0.5\n"                     # 12
    "-1.25\n"                   # 13
    "0\n"                       # 14
    "0.125\n"                   # 15
    "end\n"                     # 16
)


def test_base_text_is_valid():
    m = _loads(BASE, "f.model")
    assert m.kind == "binary" and m.n_features_ == 3 and m.stats == {"n_iter": 7}


def _edit(old, new, count=1):
    assert old in BASE
    return BASE.replace(old, new, count)


def _v3(lines, version=3):
    """BASE as a version-3 file with `lines` after 'n_columns 1' (line 7)."""
    return BASE.replace("linsvm_model 1\n", f"linsvm_model {version}\n").replace(
        "n_columns 1\n", "n_columns 1\n" + lines)


def test_a_version_3_file_with_sigmoids_loads_them_exactly():
    m = _loads(_v3("probA -2.3269063471917932\nprobB 0.13998538124663176\n"), "f.model")
    assert m.probability_.tolist() == [[-2.3269063471917932, 0.13998538124663176]]
    assert _loads(_v3(""), "f.model").probability_ is None     # version 3 without them: fine


CORRUPT = [
    # (text, message regex); every message starts with "f.model:" and names the line where there is one
    ("", r"^f\.model: empty file"),
    ("+1 3:0.5 7:1\n-1 2:1\n", r"^f\.model:1: not a linsvm or LIBLINEAR model file .*SVM-light"),
    ("hello world\n", r"^f\.model:1: not a linsvm or LIBLINEAR model file"),
    ("\n", r"^f\.model:1: not a linsvm or LIBLINEAR model file \(the first line is blank\)"),
    (_edit("linsvm_model 1\n", "linsvm_model 5\n"), r"^f\.model:1: unsupported linsvm model format version 5"),
    (_edit("linsvm_model 1\n", "linsvm_model 4\n"), r"^f\.model:11: a version 4 model has binary weights"),
    (_edit("linsvm_model 1\n", "linsvm_model\n"), r"^f\.model:1: bad first line"),
    (_edit("linsvm_model 1\n", "linsvm_model one\n"), r"^f\.model:1: bad first line"),
    (_edit("kind binary\n", "kind binary\ncolor blue\n"), r"^f\.model:4: unknown key 'color'"),
    (_edit("kind binary\n", "kind binary\nsolver ls\n"), r"^f\.model:4: duplicate 'solver' line \(first on line 2\)"),
    (_edit("stat n_iter int 7\n", "stat n_iter int 7\nparam C float 2\n"),
     r"^f\.model:11: duplicate param 'C' \(first on line 8\)"),
    (_edit("stat n_iter int 7\n", "stat n_iter int 7\nstat n_iter int 8\n"), r"^f\.model:11: duplicate stat 'n_iter'"),
    (_edit("param C float 1\n", "param C double 1\n"), r"^f\.model:8: param C: unknown value type 'double'"),
    (_edit("param C float 1\n", "param C float one\n"), r"^f\.model:8: param C: bad float value 'one'"),
    (_edit("param C float 1\n", "param C float 1 2\n"), r"^f\.model:8: param C: type 'float' takes exactly one"),
    (_edit("param C float 1\n", "param C int 1.5\n"), r"^f\.model:8: param C: bad int value"),
    (_edit("param C float 1\n", "param C bool yes\n"), r"^f\.model:8: param C: bad bool value 'yes'"),
    (_edit("param C float 1\n", "param C str l2\n"), r"^f\.model:8: param C: bad str value"),
    (_edit("param C float 1\n", "param C none 1\n"), r"^f\.model:8: param C: type 'none' takes no value"),
    (_edit("param C float 1\n", "param C float\n"), r"^f\.model:8: param C: type 'float' needs a value"),
    (_edit("param C float 1\n", "param C\n"), r"^f\.model:8: 'param' needs a name and a type"),
    (_edit("param C float 1\n", "param C% float 1\n"), r"^f\.model:8: bad param name"),
    (_edit("param bias float 1\n", "param bias float 2\n"), r"^f\.model: params\['bias'\] = 2.0 disagrees"),
    (_edit("kind binary\n", ""), r"^f\.model:10: the header has no 'kind' line"),
    (_edit("classes 1 -1\n", ""), r"^f\.model:10: the header has no 'classes' line"),
    (_edit("n_features 3\n", ""), r"^f\.model:10: the header has no 'n_features' line"),
    (_edit("kind binary\n", "kind tertiary\n"), r"^f\.model:3: unknown model kind 'tertiary'"),
    (_edit("kind binary\n", "kind\n"), r"^f\.model:3: 'kind' takes exactly one value"),
    (_edit("solver mfn\n", "solver mfn ls\n"), r"^f\.model:2: 'solver' takes exactly one value"),
    (_edit("n_features 3\n", "n_features -3\n"), r"^f\.model:4: bad n_features '-3'"),
    (_edit("n_features 3\n", "n_features 3.0\n"), r"^f\.model:4: bad n_features '3.0'"),
    (_edit("n_columns 1\n", "n_columns 0\n"), r"^f\.model:7: bad n_columns '0'"),
    (_edit("bias 1\n", "bias nan\n"), r"^f\.model:5: bad bias 'nan'"),
    (_edit("bias 1\n", "bias inf\n"), r"^f\.model:5: bad bias 'inf'"),
    (_edit("classes 1 -1\n", "classes 1 x\n"), r"^f\.model:6: bad value 'x' in 'classes'"),
    (_edit("classes 1 -1\n", "classes 1 1\n"), r"^f\.model:6: duplicate class label"),
    (_edit("classes 1 -1\n", "classes\n"), r"^f\.model:6: 'classes' needs at least one value"),
    (_edit("classes 1 -1\n", "classes 1 -1 2\n"), r"^f\.model: a binary model needs 2 classes and 1 weight column"),
    (_edit("n_columns 1\n", "n_columns 2\n"), r"^f\.model:12: weight row has 1 values, expected 2"),
    (_edit("kind binary\n", "kind multiclass\n"), r"^f\.model: a multiclass model needs one weight column per class"),
    (_edit("kind binary\n", "kind ordinal\n"), r"^f\.model:11: an ordinal model needs a 'thresholds' line"),
    (_edit("kind binary\n", "kind binary\nthresholds 0\n"), r"^f\.model:4: only ordinal models have thresholds"),
    (_edit("kind binary\n", "kind\tbinary\n\n"), r"^f\.model:4: blank line in the header"),
    (_edit("weights 4\n", "weights 5\n"), r"^f\.model:11: weights has 5 rows but n_features 3 and bias 1 need 4"),
    (_edit("weights 4\n", "weights 3\n"), r"^f\.model:11: weights has 3 rows"),
    (_edit("weights 4\n", "weights four\n"), r"^f\.model:11: bad weights 'four'"),
    (_edit("bias 1\n", "bias -1\n"), r"^f\.model:11: weights has 4 rows but n_features 3 and bias -1 need 3"),
    (_edit("-1.25\n", "-1.25 2\n"), r"^f\.model:13: weight row has 2 values, expected 1"),
    (_edit("-1.25\n", "\n"), r"^f\.model:13: weight row has 0 values, expected 1"),
    (_edit("-1.25\n", "abc\n"), r"^f\.model:13: weight 'abc' is not a number"),
    (_edit("-1.25\n", "1_000\n"), r"^f\.model:13: weight '1_000' is not a number"),
    (_edit("-1.25\n", "1.2.3\n"), r"^f\.model:13: weight '1.2.3' is not a number"),
    (_edit("-1.25\n", "0x1p3\n"), r"^f\.model:13: weight '0x1p3' is not a number"),
    (_edit("-1.25\n", "nan\n"), r"^f\.model:13: weight 'nan' is not finite"),
    (_edit("-1.25\n", "-inf\n"), r"^f\.model:13: weight '-inf' is not finite"),
    (_edit("-1.25\n", "Infinity\n"), r"^f\.model:13: weight 'Infinity' is not finite"),
    (_edit("-1.25\n", "1e999\n"), r"^f\.model:13: weight '1e999' out of range"),
    (_edit("end\n", ""), r"^f\.model: truncated file: expected 4 weight rows after line 11 and an 'end' line"),
    (_edit("0.125\nend\n", "0.125\n0.5\nend\n"), r"^f\.model:16: expected 'end' after the 4 weight rows, found '0.5'"),
    (_edit("end\n", "END\n"), r"^f\.model:16: expected 'end'"),
    (BASE + "extra\n", r"^f\.model:17: unexpected content after 'end'"),
    (BASE + "\n", r"^f\.model:17: unexpected content after 'end'"),
    (BASE[:-1], r"^f\.model:16: truncated file \(the last line has no newline\)"),
    (BASE.split("weights")[0], r"^f\.model: truncated file: the header has no 'weights' line"),
    # probability sigmoids (version 3; lines 8 and 9 after _v3)
    (_v3("probA -2\nprobB 0.5\n", version=2), r"^f\.model:8: probability sigmoids need model format version 3 \(this file says 2\)"),
    (_v3("probA -2\nprobB 0.5\n", version=1), r"^f\.model:8: probability sigmoids need model format version 3"),
    (_v3("probA -2\n"), r"^f\.model:8: 'probA' without a 'probB' line"),
    (_v3("probB 0.5\n"), r"^f\.model:8: 'probB' without a 'probA' line"),
    (_v3("probA -2 1\nprobB 0.5\n"), r"^f\.model:8: 'probA' has 2 values but a model with 2 classes needs 1"),
    (_v3("probA -2\nprobB\n"), r"^f\.model:9: 'probB' needs at least one value"),
    (_v3("probA -2\nprobB nan\n"), r"^f\.model:9: bad value 'nan' in 'probB' \(expected a finite number\)"),
    (_v3("probA 1e999\nprobB 0.5\n"), r"^f\.model:8: bad value '1e999' in 'probA'"),
    (_v3("probA -2\nprobB x\n"), r"^f\.model:9: bad value 'x' in 'probB'"),
    (_v3("probA -2\nprobB 0.5\nprobA -2\n"), r"^f\.model:10: duplicate 'probA' line \(first on line 8\)"),
    (_v3("probA -2\nprobB 0.5\n").replace("kind binary\n", "kind ordinal\nthresholds 0\n")
     .replace("solver mfn\n", "solver mfn-ord\n"), r"^f\.model:9: an ordinal model has no probability sigmoids"),
]


@pytest.mark.parametrize("text,message", CORRUPT)
def test_corrupt_native_files_are_rejected_with_a_located_message(text, message):
    with pytest.raises(ModelError, match=message):
        _loads(text.encode(), "f.model")


def test_non_utf8_file_is_rejected(tmp_path):
    path = tmp_path / "bin.model"
    path.write_bytes(b"linsvm_model 1\n\xff\xfe\x00garbage")
    with pytest.raises(ModelError, match=r"bin\.model: not a model file \(not text"):
        load_model(path)


def test_gzip_file_is_rejected_as_foreign(tmp_path, models):
    import gzip
    path = tmp_path / "m.model.gz"
    path.write_bytes(gzip.compress(native_text(models["binary-bias"], tmp_path)))
    with pytest.raises(ModelError, match=r"m\.model\.gz: not a model file \(not text"):
        load_model(path)


def test_missing_file_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_model(tmp_path / "nope.model")


LIBLINEAR_EXPORTABLE = [n for n in MODEL_NAMES if n not in ("ordinal", "multi3-nobias")]


@pytest.mark.parametrize("name,format", [(n, "linsvm") for n in MODEL_NAMES]
                         + [(n, "liblinear") for n in LIBLINEAR_EXPORTABLE])
def test_every_truncation_fails(models, tmp_path, name, format):
    """Every proper prefix of a model file (each one loses information) is refused."""
    m = models[name]
    data = native_text(m, tmp_path, format=format)
    assert_same_model_or_equivalent(m, _loads(data, "x"), format)
    for cut in range(len(data)):
        with pytest.raises(ModelError):
            _loads(data[:cut], "x")


def assert_same_model_or_equivalent(m, m2, format):
    if format == "linsvm":
        assert_same_model(m, m2)
    else:
        np.testing.assert_array_equal(bits(m.weights), bits(m2.weights))
        np.testing.assert_array_equal(m.classes_, m2.classes_)


LIBLINEAR_BASE = (
    "solver_type L2R_L2LOSS_SVC\n"   # 1
    "nr_class 3\n"                   # 2
    "label 3 1 2\n"                  # 3
    "nr_feature 2\n"                 # 4
    "bias 1\n"                       # 5
    "w\n"                            # 6
    "0.5 -1 2 \n"                    # 7
    "0.25 0 -0.125 \n"               # 8
    "1 2 3 \n"                       # 9
)


def _ll_edit(old, new):
    assert old in LIBLINEAR_BASE
    return LIBLINEAR_BASE.replace(old, new, 1)


LIBLINEAR_CORRUPT = [
    (_ll_edit("solver_type L2R_L2LOSS_SVC\n", "solver_type L2R_FANCY\n"), r"^f:1: unknown LIBLINEAR solver_type"),
    (_ll_edit("solver_type L2R_L2LOSS_SVC\n", "solver_type L2R_L2LOSS_SVR\n"),
     r"^f:2: a LIBLINEAR L2R_L2LOSS_SVR model has nr_class 2"),     # read, and checked
    (_ll_edit("bias 1\n", "bias 1\nrho 0.5\n"), r"^f:6: 'rho' belongs to one-class models"),
    (_ll_edit("label 3 1 2\n", "label 3 1\n"), r"^f:3: 'label' lists 2 classes but nr_class is 3"),
    (_ll_edit("label 3 1 2\n", "label 3 1 1.5\n"), r"^f:3: 'label' needs integer class labels"),
    (_ll_edit("label 3 1 2\n", "label 3 1 3\n"), r"^f:3: duplicate class label"),
    (_ll_edit("label 3 1 2\n", ""), r"^f:5: the LIBLINEAR header has no 'label' line"),
    (_ll_edit("nr_class 3\n", "nr_class 3\nnr_class 3\n"), r"^f:3: duplicate 'nr_class' line \(first on line 2\)"),
    (_ll_edit("nr_class 3\n", "nr_class 0\n"), r"^f:2: bad nr_class '0'"),
    (_ll_edit("nr_feature 2\n", "nr_feature x\n"), r"^f:4: bad nr_feature 'x'"),
    (_ll_edit("nr_feature 2\n", "nr_feature 2\nfoo 1\n"), r"^f:5: unknown key 'foo'"),
    (_ll_edit("w\n", "w 3\n"), r"^f:6: 'w' takes no value"),
    (_ll_edit("w\n", ""), r"^f:6: a number where a header key belongs \(no 'w' line before the weights\?\)"),
    (LIBLINEAR_BASE.split("w\n")[0], r"^f: truncated file: the LIBLINEAR header has no 'w' line"),
    (_ll_edit("1 2 3 \n", ""), r"^f: truncated file: expected 3 weight rows after 'w' on line 6, found 2"),
    (LIBLINEAR_BASE + "4 5 6 \n", r"^f:10: unexpected content after the 3 weight rows"),
    (_ll_edit("0.25 0 -0.125 \n", "0.25 0 \n"), r"^f:8: weight row has 2 values, expected 3"),
    (_ll_edit("0.25 0 -0.125 \n", "0.25 0 nan \n"), r"^f:8: weight 'nan' is not finite"),
    (_ll_edit("0.25 0 -0.125 \n", "0.25 0 x \n"), r"^f:8: weight 'x' is not a number"),
    (_ll_edit("nr_class 3\n", "nr_class 2\n"), r"^f:3: 'label' lists 3 classes but nr_class is 2"),
    (LIBLINEAR_BASE[:-1], r"^f:9: truncated file"),
]


@pytest.mark.parametrize("text,message", LIBLINEAR_CORRUPT)
def test_corrupt_liblinear_files_are_rejected(text, message):
    with pytest.raises(ModelError, match=message):
        _loads(text.encode(), "f")


def test_liblinear_text_reading():
    m = _loads(LIBLINEAR_BASE, "f")
    assert m.solver == "liblinear:L2R_L2LOSS_SVC" and m.kind == "multiclass"
    assert m.params == {"bias": 1.0} and m.stats == {}
    np.testing.assert_array_equal(m.classes_, [3, 1, 2])
    np.testing.assert_array_equal(m.weights, [[0.5, -1, 2], [0.25, 0, -0.125], [1, 2, 3]])
    # two classes: one column, except for Crammer-Singer
    two = "solver_type L2R_LR\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n0.5 \n"
    m = _loads(two, "f")
    assert m.kind == "binary" and m.weights.shape == (1, 1) and m.bias == -1
    cs = "solver_type MCSVM_CS\nnr_class 2\nlabel 1 -1\nnr_feature 1\nbias -1\nw\n0.5 -0.5 \n"
    m = _loads(cs, "f")
    assert m.kind == "multiclass" and m.weights.shape == (1, 2)
    # a bias of exactly 0 is LIBLINEAR's always-zero feature: its row is kept
    b0 = "solver_type L2R_L2LOSS_SVC\nnr_class 1\nlabel 7\nnr_feature 2\nbias 0\nw\n0.5 \n1.5 \n-3 \n"
    m = _loads(b0, "f")
    assert m.n_features_ == 2 and m.bias == 0 and m.weights.shape == (3, 1)
    np.testing.assert_array_equal(m.predict(np.ones((2, 5))), [7, 7])


# --------------------------------------------------------------------------- construction

@pytest.mark.parametrize("kwargs,message", [
    (dict(solver="a b"), "bad solver name"),
    (dict(solver=""), "bad solver name"),
    (dict(classes=[]), "at least one class"),
    (dict(classes=[1, 1]), "distinct"),
    (dict(classes=[1, np.nan]), "finite"),
    (dict(classes=["a", "b"]), "classes must be numbers"),
    (dict(weights=np.ones(3)), "2-D"),
    (dict(weights=np.ones((3, 0))), "2-D"),
    (dict(weights=[[1.0], [np.inf], [0.0]]), "finite"),
    (dict(bias=np.nan), "bias must be a finite number"),
    (dict(bias="1"), "bias must be a finite number"),
    (dict(bias=True), "bias must be a finite number"),
    (dict(weights=np.ones((0, 1))), "needs a bias row"),
    (dict(kind="tertiary"), "unknown model kind"),
    (dict(classes=[1, 2, 3], kind="binary"), "binary model needs 2 classes"),
    (dict(kind="multiclass"), "one weight column per class"),
    (dict(kind="ordinal"), "needs thresholds"),
    (dict(kind="ordinal", thresholds=[1, 2]), "needs 1 thresholds"),
    (dict(kind="ordinal", classes=[1, 2, 3], thresholds=[2, 1]), "ascending"),
    (dict(kind="ordinal", thresholds=[np.inf]), "finite"),
    (dict(thresholds=[0.0], kind="binary"), "only ordinal models have thresholds"),
    (dict(params={"C": [1, 2]}), "unsupported type list"),
    (dict(params={"a b": 1}), "bad param name"),
    (dict(params={"bias": 2.0}), "disagrees"),
    (dict(params=[("C", 1)]), "param must be a dict"),
    (dict(stats={"x": object()}), "unsupported type object"),
])
def test_model_construction_is_validated(kwargs, message):
    base = dict(solver="mfn", classes=[1, -1], weights=np.ones((3, 1)), bias=1.0, params={"bias": 1.0})
    base.update(kwargs)
    with pytest.raises(ModelError, match=message):
        Model(**base)


def test_kind_inference_and_properties():
    W = np.arange(8.0).reshape(4, 2)
    m = Model(solver="sdm-cs", classes=[5, 6], weights=W, bias=2.0, params={},
              stats={"objective": 1.5, "n_iter": 3})
    assert m.kind == "multiclass" and m.n_features_ == 3
    np.testing.assert_array_equal(m.coef_, W[:3].T)
    np.testing.assert_array_equal(m.intercept_, 2.0 * W[3])
    assert m.objective == 1.5 and m.n_iter == 3
    assert m.classes_.dtype == np.float64 and m.thresholds_ is None
    assert not m.weights.flags.writeable and not m.coef_.flags.writeable
    W[0, 0] = 99                               # the model holds its own copy
    assert m.weights[0, 0] == 0
    p = m.params
    p["C"] = 3                                 # params/stats are copies
    assert m.params == {}
    m = Model(solver="mfn", classes=[1, -1], weights=np.ones((2, 1)), bias=-1, params={})
    assert m.kind == "binary" and m.n_features_ == 2 and m.objective is None and m.n_iter is None
    np.testing.assert_array_equal(m.intercept_, [0.0])
    m = Model(solver="mfn-ord", classes=[1, 2, 3], weights=np.ones((2, 1)), bias=-1, params={},
              thresholds=[0, 1])
    assert m.kind == "ordinal"
    assert "mfn-ord" in repr(m) and "ordinal" in repr(m)


# --------------------------------------------------------------------------- prediction

def test_binary_prediction_by_hand():
    # w = (1, -2), bias 0.5 with weight 2 -> intercept 1
    m = Model(solver="mfn", classes=[7, 3], weights=[[1.0], [-2.0], [2.0]], bias=0.5, params={})
    X = np.array([[0, 0], [1, 1], [0, 0.5], [2, 0], [-1, 0]])
    np.testing.assert_array_equal(m.decision_function(X), [1, 0, 0, 3, 0])
    # score > 0 -> classes_[0]; score == 0 -> classes_[1]
    np.testing.assert_array_equal(m.predict(X), [7, 3, 3, 7, 3])
    assert m.decision_function(X).shape == (5,)


def test_multiclass_prediction_by_hand():
    W = np.array([[1.0, 0.0, 1.0], [0.0, 1.0, 1.0]])
    m = Model(solver="sdm-ww", classes=[10, 20, 30], weights=W, bias=-1, params={})
    X = np.array([[1, 0], [0, 1], [2, 2], [0, 0], [-1, -1]])
    S = m.decision_function(X)
    assert S.shape == (5, 3)
    np.testing.assert_array_equal(S, X @ W)
    # argmax, first column on ties: [1,0,1] -> 10; [0,1,1] -> 20; [2,2,4] -> 30; [0,0,0] -> 10; [-1,-1,-2] -> 10
    np.testing.assert_array_equal(m.predict(X), [10, 20, 30, 10, 10])


def test_predict_from_scores_matches_predict_and_checks_shapes():
    rng = np.random.default_rng(4)
    X = rng.normal(size=(30, 4))
    for m in (Model(solver="mfn", classes=[1, -1], weights=rng.normal(size=(5, 1)), bias=1.0, params={}),
              Model(solver="mfn", classes=[1, 2, 3], weights=rng.normal(size=(4, 3)), bias=-1, params={}),
              Model(solver="mfn-ord", classes=[1, 2, 3], weights=rng.normal(size=(4, 1)), bias=-1, params={},
                    thresholds=[-0.5, 0.5])):
        s = m.decision_function(X)
        np.testing.assert_array_equal(m.predict_from_scores(s), m.predict(X))
        if s.ndim == 1:
            np.testing.assert_array_equal(m.predict_from_scores(s[:, None]), m.predict(X))
            bad = np.ones((30, 2))
        else:
            bad = np.ones(30)
        with pytest.raises(ValueError, match="scores must have shape"):
            m.predict_from_scores(bad)


def test_one_class_multiclass_model_predicts_its_class():
    m = Model(solver="liblinear:L2R_L2LOSS_SVC", classes=[4], weights=[[1.0]], bias=-1, params={})
    np.testing.assert_array_equal(m.predict(np.array([[1.0], [-1.0]])), [4, 4])


def test_ordinal_prediction_by_hand():
    m = Model(solver="mfn-ord", classes=[1, 2, 3, 4], weights=[[1.0]], bias=-1, params={},
              thresholds=[-1.0, 0.0, 0.0])
    X = np.array([[-5.0], [-1.0], [-0.5], [0.0], [1e-300], [7.0]])
    # rank = number of thresholds strictly below the score
    np.testing.assert_array_equal(m.predict(X), [1, 1, 2, 2, 4, 4])
    assert m.decision_function(X).shape == (6,)


def test_ordinal_nan_score_gets_lowest_level():
    m = Model(solver="mfn-ord", classes=[1, 2], weights=[[1.0]], bias=-1, params={}, thresholds=[0.0])
    np.testing.assert_array_equal(m.predict_from_scores(np.array([np.nan, 1.0])), [1, 2])
    # predict itself never labels a row whose score is not finite
    with pytest.raises(DataError, match="row 0: the decision value is nan"):
        m.predict(np.array([[np.nan], [1.0]]))


@pytest.mark.parametrize("bias", [1.0, -1.0])
@pytest.mark.parametrize("n_columns", [1, 3])
def test_decision_function_ignores_extra_features_and_accepts_narrow_x(bias, n_columns):
    rng = np.random.default_rng(0)
    n_features = 6
    W = rng.normal(size=(n_features + (bias > 0), n_columns))
    classes = [1, -1] if n_columns == 1 else [1, 2, 3]
    m = Model(solver="mfn", classes=classes, weights=W, bias=bias, params={})
    X = sp.random(20, 10, density=0.4, random_state=1, format="csr")
    D = X.toarray()

    def expected(Dx):
        k = min(Dx.shape[1], n_features)
        s = Dx[:, :k] @ W[:k]
        if bias > 0:
            s = s + bias * W[-1]
        return s[:, 0] if n_columns == 1 else s

    for width in (10, 6, 4, 0):
        want = expected(D[:, :width])
        Xw = X[:, :width]
        for variant in (Xw, Xw.tocsc(), sp.csr_array(Xw), Xw.tocoo(), D[:, :width]):
            np.testing.assert_allclose(m.decision_function(variant), want, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(m.decision_function(D[:, :width].astype(np.float32)),
                                   expected(D[:, :width].astype(np.float32).astype(np.float64)), rtol=1e-12, atol=1e-12)
    # wider X whose extra columns are empty: no copy path, same answer
    Xe = sp.csr_matrix((X[:, :6].data, X[:, :6].indices, X[:, :6].indptr), shape=(20, 50))
    np.testing.assert_allclose(m.decision_function(Xe), expected(D[:, :6]), rtol=1e-12, atol=1e-12)
    # integer sparse data
    Xi = sp.csr_matrix(np.rint(D * 3).astype(np.int64))
    np.testing.assert_allclose(m.decision_function(Xi), expected(np.rint(D * 3)), rtol=1e-12, atol=1e-12)


def test_decision_function_rejects_bad_shapes():
    m = Model(solver="mfn", classes=[1, -1], weights=np.ones((2, 1)), bias=-1, params={})
    with pytest.raises(ValueError, match="2-D"):
        m.decision_function(np.ones(3))
    with pytest.raises(ValueError, match="numeric"):
        m.decision_function(np.array([["a", "b"]]))
    assert m.decision_function(sp.csr_matrix((0, 5))).shape == (0,)


# --------------------------------------------------------------------------- LIBLINEAR interoperability

def _liblinear_predict(path, X):
    """Labels and decision values of liblinear's own predict on X, for the model file at path."""
    lm = liblinearutil.load_model(str(path))
    assert lm is not None, f"liblinear could not load {path}"
    labels, _, values = liblinearutil.predict(np.zeros(X.shape[0]), sp.csr_matrix(X), lm, "-q")
    return np.array(labels), np.array(values)


def _compare_with_liblinear(model, path, X):
    labels, values = _liblinear_predict(path, X)
    ours = model.decision_function(X).reshape(X.shape[0], -1)
    if ours.shape[1] == 2 and values.shape[1] == 1:
        # liblinearutil.predict reports only the first of a two-class Crammer-Singer model's two values
        ours = ours[:, :1]
    np.testing.assert_allclose(ours, values, rtol=0, atol=1e-12 * max(1.0, np.abs(values).max()))
    np.testing.assert_array_equal(model.predict(X), labels)


@pytest.fixture(scope="module")
def text_data():
    X, y = make_text_classification(n_samples=1500, n_features=2000, n_classes=2, seed=3)
    X3, y3 = make_text_classification(n_samples=1500, n_features=2000, n_classes=3, seed=4)
    return X, y, X3, y3


LIBLINEAR_RUNS = [
    ("binary", "-s 2 -c 1 -q"), ("binary", "-s 2 -c 1 -B 1 -q"), ("binary", "-s 2 -c 1 -B 2.5 -q"),
    ("binary", "-s 4 -c 1 -q"), ("binary", "-s 4 -c 1 -B 1 -q"),
    ("binary", "-s 1 -c 1 -q"), ("binary", "-s 3 -c 1 -B 1 -q"), ("binary", "-s 0 -c 1 -q"),
    ("multi3", "-s 2 -c 1 -q"), ("multi3", "-s 2 -c 1 -B 1 -q"), ("multi3", "-s 4 -c 1 -B 1 -q"),
    ("binary", "-s 2 -c 1 -B 0 -q"),
]


@needs_liblinear
@pytest.mark.parametrize("data,options", LIBLINEAR_RUNS)
def test_reading_liblinear_models_gives_liblinear_predictions(text_data, tmp_path, data, options):
    X, y, X3, y3 = text_data
    if data == "multi3":
        X, y = X3, y3
    half = X.shape[0] // 2
    lm = liblinearutil.train(y[:half], X[:half], options)
    path = tmp_path / "ll.model"
    liblinearutil.save_model(str(path), lm)
    m = load_model(path)
    assert m.solver.startswith("liblinear:")
    assert m.kind == ("binary" if data == "binary" and "-s 4" not in options else "multiclass")
    # test rows (all columns, so wider than the model when the training half lacks some words)
    _compare_with_liblinear(m, path, X[half:])
    # writing it back in LIBLINEAR format reproduces liblinear's file byte for byte (bias 0 is dropped)
    if "-B 0" not in options:
        m.save(tmp_path / "again.model", format="liblinear")
        assert (tmp_path / "again.model").read_bytes() == path.read_bytes()
    # and through the native format nothing is lost
    m.save(tmp_path / "native.model")
    assert_same_model(m, load_model(tmp_path / "native.model"))


def _real(rel):
    return shared_file(rel)


@pytest.mark.slow
@pytest.mark.data
@needs_liblinear
@pytest.mark.parametrize("train,test,n_features,options", [
    ("binary/a9a", "binary/a9a.t", 123, "-s 2 -c 1 -B 1 -q"),
    ("binary/a9a", "binary/a9a.t", 123, "-s 4 -c 1 -q"),
    # 105 classes: the first half of sector's test split trains, the second half is predicted
    ("multiclass/sector.t.scale.bz2", None, None, "-s 1 -c 1 -e 0.1 -q"),
])
def test_reading_liblinear_models_on_real_data(tmp_path, train, test, n_features, options):
    X, y = load_svmlight(_real(train), n_features=n_features)
    if test is None:
        half = X.shape[0] // 2
        X, y, Xt = X[:half], y[:half], X[half:]
    else:
        Xt, _ = load_svmlight(_real(test), n_features=n_features)
    lm = liblinearutil.train(y, X, options)
    path = tmp_path / "ll.model"
    liblinearutil.save_model(str(path), lm)
    m = load_model(path)
    _compare_with_liblinear(m, path, Xt)
    m.save(tmp_path / "again.model", format="liblinear")
    assert (tmp_path / "again.model").read_bytes() == path.read_bytes()


@needs_liblinear
@pytest.mark.parametrize("n_classes,n_columns,bias,solver,params,solver_type", [
    (2, 1, 1.0, "mfn", {"C": 1.0, "bias": 1.0}, "L2R_L2LOSS_SVC"),
    (2, 1, -1, "mfn", {"C": 1.0, "bias": -1}, "L2R_L2LOSS_SVC"),
    (2, 1, 0.0, "dcd", {"loss": "l1"}, "L2R_L1LOSS_SVC_DUAL"),
    (2, 1, 3.5, "dcd", {"loss": "l2"}, "L2R_L2LOSS_SVC_DUAL"),
    (2, 1, -1, "sdm-cs", {}, "L2R_L2LOSS_SVC"),           # one column: not storable as MCSVM_CS
    (3, 3, 1.0, "mfn", {}, "L2R_L2LOSS_SVC"),
    (3, 3, -1, "sdm-ww", {}, "L2R_L2LOSS_SVC"),
    (3, 3, 1.0, "sdm-cs", {}, "MCSVM_CS"),
    (5, 5, -1, "sdm-cs", {}, "MCSVM_CS"),
    (2, 2, 1.0, "sdm-cs", {}, "MCSVM_CS"),
    (2, 2, -1, "sdm-ww", {}, "MCSVM_CS"),                 # two columns for two classes: only MCSVM_CS
    (1, 1, -1, "mfn", {}, "L2R_L2LOSS_SVC"),
])
def test_written_liblinear_models_predict_the_same_in_liblinear(tmp_path, n_classes, n_columns, bias, solver,
                                                                 params, solver_type):
    rng = np.random.default_rng(n_classes * 100 + n_columns * 10 + int(bias > 0))
    n_features = 40
    W = rng.normal(size=(n_features + (bias > 0), n_columns))
    if n_columns == 2:       # a two-class multi-class solution has w_1 = -w_0 (see _liblinear_layout)
        W[:, 1] = -W[:, 0]
    classes = rng.permutation(np.arange(-3, 3))[:n_classes]
    m = Model(solver=solver, classes=classes, weights=W, bias=bias, params=params)
    path = tmp_path / "ours.model"
    m.save(path, format="liblinear")
    assert path.read_text().startswith(f"solver_type {solver_type}\nnr_class {n_classes}\n")
    X = sp.random(300, 60, density=0.2, random_state=int(rng.integers(1 << 30)), format="csr")  # wider than the model
    _compare_with_liblinear(m, path, X)
    back = load_model(path)
    np.testing.assert_array_equal(bits(back.weights), bits(m.weights))
    np.testing.assert_array_equal(back.classes_, m.classes_)


@needs_liblinear
@pytest.mark.parametrize("name", LIBLINEAR_EXPORTABLE)
def test_liblinear_reads_our_weights_bit_for_bit(models, tmp_path, name):
    """LIBLINEAR's own reader (C strtod of '%.17g') recovers every extreme weight exactly."""
    m = models[name]
    path = _save(m, tmp_path, format="liblinear")
    lm = liblinearutil.load_model(str(path))
    assert lm is not None
    assert lm.nr_class == m.classes_.size and lm.nr_feature == m.n_features_
    assert lm.bias == (m.bias if m.bias > 0 else -1)
    np.testing.assert_array_equal([lm.label[i] for i in range(lm.nr_class)], m.classes_)
    theirs = np.array([lm.w[i] for i in range(m.weights.size)])
    np.testing.assert_array_equal(bits(theirs), bits(m.weights.ravel()))


def test_save_into_a_fifo_writes_in_place(tmp_path):
    # regression: renaming a temporary file over /dev/null replaced the device
    import stat
    import threading
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    model = Model(solver="mfn", classes=[1, -1], weights=np.ones((3, 1)), bias=1.0, params={"C": 1.0})
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo).read()))
    reader.start()
    model.save(fifo)
    reader.join(timeout=30)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    assert got[0].startswith("linsvm_model 2")


def test_save_through_a_symlink_keeps_the_link(tmp_path):
    target = tmp_path / "real.model"
    link = tmp_path / "link.model"
    model = Model(solver="mfn", classes=[1, -1], weights=np.ones((3, 1)), bias=1.0, params={"C": 1.0})
    model.save(target)
    link.symlink_to(target)
    model.save(link)
    assert link.is_symlink() and load_model(link).weights.shape == (3, 1)


def test_model_from_training_equals_the_checked_constructor():
    from linsvm.model import Model
    args = dict(solver="mfn", classes=np.array([1.0, -1.0]), weights=np.array([[0.5], [-2.0], [0.25]]),
                bias=1.0, params={"C": 1.0, "bias": 1.0, "loss": "l2"},
                stats={"objective": np.float64(3.5), "n_iter": np.int64(4)}, kind="binary")
    fast, full = Model._from_training(**args), Model(**args)
    for name in ("solver", "kind", "bias", "n_features_", "params", "stats"):
        assert getattr(fast, name) == getattr(full, name)
    assert type(fast.stats["n_iter"]) is int and type(fast.stats["objective"]) is float
    np.testing.assert_array_equal(fast.weights, full.weights)
    np.testing.assert_array_equal(fast.classes_, full.classes_)
    assert not fast.weights.flags.writeable and not fast.classes_.flags.writeable
    bad = dict(args, weights=np.array([[0.5], [np.nan], [0.25]]))
    with pytest.raises(ModelError, match="weights must be finite"):
        Model._from_training(**bad)


# --------------------------------------------------------------------------- format 2: binary
# weights, streaming, bias rows kept, unknown solvers refused, overflowing weights refused

def _binary_file(model, tmp_path):
    path = tmp_path / "b.model"
    model.save(path, format="linsvm-binary")
    return path.read_bytes()


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("format", ["linsvm-text", "linsvm-binary"])
def test_both_linsvm_weight_forms_round_trip_bit_for_bit(models, tmp_path, name, format):
    m = models[name]
    path = tmp_path / "m.model"
    m.save(path, format=format)
    assert_same_model(m, load_model(path))
    assert (b"binary float64-le" in path.read_bytes()) == (format == "linsvm-binary")


def test_binary_weights_are_the_default_above_the_threshold(models, tmp_path, monkeypatch):
    import linsvm.model.format_linsvm as model_mod
    m = models["multi3-bias"]                         # 18 weights
    monkeypatch.setattr(model_mod, "BINARY_MIN_ENTRIES", 18)
    assert b"binary" not in native_text(m, tmp_path)
    monkeypatch.setattr(model_mod, "BINARY_MIN_ENTRIES", 17)
    data = native_text(m, tmp_path)
    assert b"weights 6 binary float64-le crc32:" in data
    # the file is the header, 8 bytes per weight and "\nend\n": LIBLINEAR's size or less
    header = data[:data.index(b"\n", data.index(b"\nweights ") + 1) + 1]
    assert len(data) == len(header) + 8 * 18 + len(b"\nend\n")
    assert_same_model(m, _loads(data, "x"))


def test_binary_weights_read_back_bit_for_bit_with_special_values(tmp_path):
    W = np.array([[0.0, -0.0], [5e-324, -5e-324], [1.7976931348623157e308, -2.2250738585072014e-308],
                  [1 / 3, 1e16]])
    m = Model(solver="sdm-cs", classes=[1, 2], weights=W, bias=-1, params={})
    m2 = _loads(_binary_file(m, tmp_path), "x")
    np.testing.assert_array_equal(bits(m2.weights), bits(W))


def test_every_truncation_of_a_binary_model_fails(models, tmp_path):
    data = _binary_file(models["multi3-bias"], tmp_path)
    for cut in range(len(data)):
        with pytest.raises(ModelError):
            _loads(data[:cut], "x")


@pytest.mark.parametrize("edit,message", [
    (lambda d, s: d[:s] + bytes([d[s] ^ 1]) + d[s + 1:], r"^x: corrupt header or binary weights \(their crc32"),
    (lambda d, s: d[:-5] + b"\nEND\n", r"^x:\d+: expected 'end'"),
    (lambda d, s: d[:-5] + b"end\n", r"^x: truncated or corrupt file: a newline must follow"),
    (lambda d, s: d + b"x\n", r"^x:\d+: unexpected content after 'end'"),
    (lambda d, s: d[:s] + d[s + 8:], r"^x: (corrupt|truncated)"),
    (lambda d, s: d.replace(b"linsvm_model 4", b"linsvm_model 1"), r"^x:\d+: binary weights need model format version 2"),
    (lambda d, s: d.replace(b"float64-le", b"float32-le"), r"^x:\d+: bad weights line"),
    (lambda d, s: d.replace(b"crc32:", b"crc33:"), r"^x:\d+: bad weights line"),
])
def test_corrupt_binary_weights_are_a_one_line_error(models, tmp_path, edit, message):
    data = _binary_file(models["multi3-bias"], tmp_path)
    start = data.index(b"\n", data.index(b"\nweights ") + 1) + 1
    with pytest.raises(ModelError, match=message) as info:
        _loads(edit(data, start + 3), "x")
    assert "\n" not in str(info.value)


def test_non_finite_binary_weights_with_a_valid_crc_are_refused(tmp_path):
    import zlib
    m = Model(solver="mfn", classes=[1, -1], weights=[[1.0], [2.0]], bias=-1, params={})
    data = _binary_file(m, tmp_path)
    raw = np.array([[1.0], [np.inf]]).astype("<f8").tobytes()
    header = data[:data.index(b"weights ")]
    head = data[:data.index(b"crc32:")] + f"crc32:{zlib.crc32(raw, zlib.crc32(header)):08x}\n".encode()
    with pytest.raises(ModelError, match=r"row 2, column 1 is not finite"):
        _loads(head + raw + b"\nend\n", "x")


@pytest.mark.slow
@pytest.mark.parametrize("format", ["linsvm-text", "linsvm-binary", "liblinear"])
def test_loading_streams_into_the_weight_array(tmp_path, format):
    """Loading once held the whole file, its decoded text, its lines and one Python float
    per weight, several times the weights' size.  Now the peak of traced
    allocations is the weight array plus a read buffer of about a megabyte."""
    import tracemalloc
    rng = np.random.default_rng(1)
    W = rng.standard_normal((20000, 30))                       # 4.8 MB of weights, ~13 MB of text
    m = Model(solver="mfn", classes=np.arange(30) + 1.0, weights=W, bias=1.0, params={})
    path = tmp_path / "m.model"
    m.save(path, format=format)
    tracemalloc.start()
    try:
        m2 = load_model(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(bits(m2.weights), bits(W))
    assert peak < W.nbytes + 4 * 2**20, (peak, W.nbytes, path.stat().st_size)


def test_loading_with_a_tiny_read_buffer_gives_the_same_model(models, tmp_path, monkeypatch):
    import linsvm.model.tokens as model_mod
    monkeypatch.setattr(model_mod, "_READ_BYTES", 7)
    for name in MODEL_NAMES:
        for format in ("linsvm-text", "linsvm-binary"):
            m = models[name]
            path = tmp_path / "m.model"
            m.save(path, format=format)
            assert_same_model(m, load_model(path))


def test_version_1_files_still_load(models, tmp_path):
    m = models["multi3-bias"]
    data = native_text(m, tmp_path, format="linsvm-text").replace(b"linsvm_model 2\n", b"linsvm_model 1\n", 1)
    assert_same_model(m, _loads(data, "x"))


def test_unknown_solver_in_a_model_file_is_refused():
    """A model file's solver name must be a registered solver, not any token."""
    with pytest.raises(ModelError, match=r"^f\.model:2: unknown solver 'svm-magic'"):
        _loads(_edit("solver mfn\n", "solver svm-magic\n"), "f.model")
    with pytest.raises(ModelError, match="unknown solver 'liblinear:L2R_MAGIC'"):
        _loads(_edit("solver mfn\n", "solver liblinear:L2R_MAGIC\n"), "f.model")
    with pytest.raises(ModelError, match="unknown solver"):
        Model(solver="svm-magic", classes=[1, -1], weights=[[1.0]], bias=-1, params={})


def test_ordinal_kind_needs_an_ordinal_solver():
    with pytest.raises(ModelError, match="solver mfn makes binary or multiclass models, not ordinal"):
        Model(solver="mfn", classes=[1, 2], weights=[[1.0]], bias=-1, params={}, thresholds=[0.0])
    with pytest.raises(ModelError, match="solver mfn-ord makes ordinal models, not binary"):
        Model(solver="mfn-ord", classes=[1, 2], weights=[[1.0]], bias=-1, params={}, kind="binary")


def test_liblinear_bias_0_keeps_its_bias_row(tmp_path):
    """LIBLINEAR's `bias 0` (bias >= 0: a bias feature of value 0) lost its
    row on loading, so the model could not be written back as it was; it keeps it now."""
    text = "solver_type L2R_L2LOSS_SVC\nnr_class 2\nlabel 1 -1\nnr_feature 2\nbias 0\nw\n0.5 \n-1 \n0.25 \n"
    m = _loads(text, "f")
    assert m.bias == 0 and m.n_features_ == 2 and m.weights.shape == (3, 1)
    np.testing.assert_array_equal(m.weights[:, 0], [0.5, -1, 0.25])
    path = tmp_path / "back.model"
    m.save(path, format="liblinear")
    assert path.read_text() == text.replace("0.5 \n-1 \n0.25 \n", "0.5 \n-1 \n0.25 \n")
    for format in ("linsvm-text", "linsvm-binary"):
        m.save(path, format=format)
        m2 = load_model(path)
        assert m2.weights.shape == (3, 1) and m2.n_features_ == 2 and m2.bias == 0
    np.testing.assert_array_equal(m.decision_function(np.array([[2.0, 1.0]])), [0.0])


def test_weights_that_overflow_every_score_are_refused_at_loading():
    """The certain case of overflow: bias * bias weight beyond the largest double makes
    every decision value infinite, whatever the example."""
    text = _edit("bias 1\n", "bias 2\n").replace("param bias float 1\n", "").replace("0.125\n", "1e308\n")
    with pytest.raises(ModelError, match=r"^f\.model: bias 2 times the bias weight 1e\+308 of column 1 overflows"):
        _loads(text, "f.model")
    _loads(text.replace("bias 2\n", "bias 1\n"), "f.model")        # 1e308 itself is fine


def test_overflowing_decision_values_are_an_error_naming_the_row():
    """Weights of 1e308 and -1e308 loaded, then predicted nan scores and labelled the
    rows; now such a row is an error that names it."""
    from linsvm.model import ScoreOverflowError
    m = Model(solver="mfn", classes=[1, -1], weights=[[1e308], [-1e308]], bias=-1, params={})
    X = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [10.0, 10.0], [1.0, 1.0]]))
    with pytest.raises(ScoreOverflowError, match=r"^row 2: the decision value is nan, not finite: "
                                                 r"the model's weights \(up to 1e\+308 in magnitude\) "
                                                 r"times the example's features \(up to 10\)") as info:
        m.predict(X)
    assert info.value.row == 2 and isinstance(info.value, DataError)
    np.testing.assert_array_equal(m.predict(X[[0, 1, 3]]), [1, -1, -1])


def test_predict_with_overflowing_weights_is_an_error_naming_the_example(tmp_path):

    from linsvm.cli import predict_cmd
    model = tmp_path / "m.model"
    Model(solver="mfn", classes=[1, -1], weights=[[1e308], [-1e308]], bias=-1, params={}).save(model)
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n-1 2:1\n1 1:10 2:10\n")
    out = tmp_path / "p.txt"
    r = invoke(predict_cmd, str(test), str(model), str(out))
    assert r.exit_code == 1
    lines = r.output.strip().splitlines()
    # the model is at fault (its weights are the larger factor) and named
    assert len(lines) == 1 and lines[0].endswith(
        f"error: {model}: example 3 of {test}: the decision value is nan, not finite: the "
        "model's weights (up to 1e+308 in magnitude) times the example's features (up to 10) "
        "overflow the largest double")
    assert not out.exists()


SOLVER_KINDS = ["mfn", "ls", "mfn-huber", "mfn-l1", "dcd", "alm", "alm-exact", "perf", "sdm-cs", "sdm-ww",
                "mfn-ord", "perf-ord", "cdn", "glmnet", "lr", "lr-dual", "softmax"]


@pytest.mark.parametrize("solver", SOLVER_KINDS)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_trained_models_of_every_solver_round_trip_in_every_format(tmp_path, solver, n_classes):
    import linsvm
    from linsvm.solvers import SOLVERS
    from conftest import random_problem

    # every classifying solver (regression and one-class models are not stored yet)
    assert set(SOLVER_KINDS) == {n for n, i in SOLVERS.items()
                                 if i.kind in ("binary", "multiclass", "ordinal")}
    X, y = random_problem(n_samples=40, n_features=6, n_classes=n_classes, seed=3)
    if SOLVERS[solver].kind == "ordinal":
        y = np.where(y > 0, 2.0, 1.0) if n_classes == 2 else y
    model = linsvm.train(X, y, solver=solver, C=1.0)
    # LIBLINEAR has no thresholds and no multinomial logistic model (softmax)
    formats = ["linsvm", "linsvm-text", "linsvm-binary"] + (
        [] if model.kind == "ordinal" or solver == "softmax" else ["liblinear"])
    for format in formats:
        path = tmp_path / f"m.{format}"
        model.save(path, format=format)
        back = load_model(path)
        if format == "liblinear":
            np.testing.assert_array_equal(bits(back.weights), bits(model.weights))
            np.testing.assert_array_equal(back.classes_, model.classes_)
        else:
            assert_same_model(model, back)
        np.testing.assert_array_equal(back.predict(X), model.predict(X))
        if SOLVERS[solver].loss == "logistic":      # probabilities from the scores, both formats
            np.testing.assert_array_equal(back.predict_proba(X), model.predict_proba(X))


@needs_liblinear
def test_liblinear_reads_a_bias_0_model_as_we_do(tmp_path):
    """A `bias 0` model written back in LIBLINEAR's format is the one LIBLINEAR trained:
    LIBLINEAR's own loader sees the bias row and predicts what linsvm predicts."""
    X, y = make_text_classification(n_samples=300, n_features=50, n_classes=3, seed=1)
    prob = liblinearutil.problem(y.tolist(), X)
    ll = liblinearutil.train(prob, liblinearutil.parameter("-s 2 -c 1 -B 0 -q"))
    src = tmp_path / "ll.model"
    liblinearutil.save_model(str(src), ll)
    m = load_model(src)
    assert m.bias == 0 and m.weights.shape == (m.n_features_ + 1, 3)
    back = tmp_path / "back.model"
    m.save(back, format="liblinear")
    ll2 = liblinearutil.load_model(str(back))
    assert ll2.bias == 0 and ll2.get_nr_feature() == m.n_features_
    labels, _, _ = liblinearutil.predict(y.tolist(), X, ll2, "-q")
    np.testing.assert_array_equal(labels, m.predict(X))


# --------------------------------------------------------------------------- header checksum

def _prediction_models():
    """Binary-weight candidates whose header lines change predictions: an ordinal model
    (thresholds), a one-class model (offset), a regression model (offset repeated by
    stat y_offset), a multi-class one with probability sigmoids (classes, probA, probB)."""
    rng = np.random.default_rng(7)
    return {
        "ordinal": Model(solver="mfn-ord", classes=[1, 2, 3, 4], weights=rng.normal(size=(6, 1)),
                         bias=1.0, params={"C": 1.0}, thresholds=[-1.5, 0.25, 2.5]),
        "oneclass": Model(solver="oneclass", classes=[1, -1], weights=rng.normal(size=(5, 1)),
                          bias=-1, params={}, kind="oneclass", offset=-0.75),
        "regression": Model(solver="svr-dual", classes=[], weights=rng.normal(size=(6, 1)), bias=1.0,
                            params={}, kind="regression", offset=8.25, stats={"y_offset": 8.25}),
        "multi3-proba": Model(solver="mfn", classes=[3, 1, 2], weights=rng.normal(size=(6, 3)), bias=1.0,
                              params={}).with_probability([[-1.5, 0.25], [-2.0, 0.0], [-0.5, 1.0]]),
    }


@pytest.mark.parametrize("name", ["ordinal", "oneclass", "regression", "multi3-proba"])
def test_a_flipped_bit_in_a_binary_models_header_is_refused(tmp_path, name):
    """Every single-bit flip of every byte of the lines that change predictions (offset,
    classes, thresholds, bias, kind, n_features, probA, probB) of a binary-weight model:
    loading refuses it in one line, or (never seen with the header checksum) predicts
    exactly as the original."""
    model = _prediction_models()[name]
    data = _binary_file(model, tmp_path)
    assert data.startswith(b"linsvm_model 4\n")
    X = np.random.default_rng(1).normal(size=(20, model.n_features_))
    expected = model.decision_function(X)
    keys = (b"offset ", b"classes ", b"thresholds ", b"bias ", b"kind ", b"n_features ", b"probA ", b"probB ")
    spans, pos = [], 0
    for line in data[:data.index(b"\nweights ")].split(b"\n"):
        if line.startswith(keys):
            spans.append((pos, pos + len(line) + 1))
        pos += len(line) + 1
    assert len(spans) >= 5
    refused = 0
    for start, stop in spans:
        for i in range(start, stop):
            for bit in range(8):
                bad = bytearray(data)
                bad[i] ^= 1 << bit
                try:
                    m = _loads(bytes(bad), "x")
                except ModelError as exc:
                    assert "\n" not in str(exc)
                    refused += 1
                    continue
                np.testing.assert_array_equal(m.decision_function(X), expected)
                np.testing.assert_array_equal(m.classes_, model.classes_)
    assert refused == 8 * sum(stop - start for start, stop in spans)


def _as_older_binary(data, version):
    """A version 4 binary file rewritten as the older binary form of `version` (2 or 3):
    its crc32 covers only the weight bytes."""
    import zlib
    head, rest = data.split(b"\nweights ", 1)
    weights_line, raw = rest.split(b"\n", 1)
    raw = raw[:-len(b"\nend\n")]
    old_line = weights_line[:weights_line.index(b"crc32:")] + f"crc32:{zlib.crc32(raw):08x}".encode()
    head = head.replace(b"linsvm_model 4", f"linsvm_model {version}".encode(), 1)
    return head + b"\nweights " + old_line + b"\n" + raw + b"\nend\n"


@pytest.mark.parametrize("name,version", [("ordinal", 2), ("oneclass", 2), ("multi3-proba", 3)])
def test_older_binary_models_with_a_weights_only_checksum_still_load(tmp_path, name, version):
    model = _prediction_models()[name]
    old = _as_older_binary(_binary_file(model, tmp_path), version)
    assert_same_model(model, _loads(old, "x"))


def test_text_models_keep_their_versions(tmp_path):
    """Only binary weights moved to version 4: text models are written as before."""
    models = _prediction_models()
    for name, version in (("ordinal", b"2"), ("oneclass", b"2"), ("multi3-proba", b"3")):
        data = native_text(models[name], tmp_path, format="linsvm-text")
        assert data.startswith(b"linsvm_model " + version + b"\n"), name


@pytest.mark.parametrize("format", ["linsvm-text", "linsvm-binary"])
def test_an_offset_that_disagrees_with_stat_y_offset_is_refused(tmp_path, format):
    """A regression model's offset is its stat y_offset: a changed digit in the offset
    line (text files have no checksum), or a missing offset line, is refused."""
    model = _prediction_models()["regression"]
    data = native_text(model, tmp_path, format=format)
    assert b"\noffset 8.25\n" in data and b"\nstat y_offset float 8.25\n" in data
    edited = data.replace(b"\noffset 8.25\n", b"\noffset 8.75\n")
    if format == "linsvm-binary":       # re-seal it: the check is not the checksum's
        edited = _reseal(edited)
    with pytest.raises(ModelError, match=r"^x:\d+: offset 8\.75 differs from its 'stat y_offset' 8\.25$"):
        _loads(edited, "x")
    dropped = data.replace(b"\noffset 8.25\n", b"\n")
    if format == "linsvm-binary":
        dropped = _reseal(dropped)
    with pytest.raises(ModelError, match=r"^x: no 'offset' line, but 'stat y_offset' is 8\.25$"):
        _loads(dropped, "x")
    assert_same_model(model, _loads(data, "x"))


def _reseal(data):
    """A version 4 binary file with its crc32 recomputed over its (edited) header."""
    import zlib
    head, rest = data.split(b"\nweights ", 1)
    weights_line, raw = rest.split(b"\n", 1)
    raw = raw[:-len(b"\nend\n")]
    crc = zlib.crc32(raw, zlib.crc32(head + b"\n"))
    line = weights_line[:weights_line.index(b"crc32:")] + f"crc32:{crc:08x}".encode()
    return head + b"\nweights " + line + b"\n" + raw + b"\nend\n"


@needs_liblinear
@pytest.mark.parametrize("options,kind", [("-s 11 -B 1", "regression"), ("-s 12", "regression"),
                                          ("-s 13 -B 1", "regression"), ("-s 21", "oneclass")])
def test_liblinear_regression_and_one_class_files_are_read_and_predict_as_liblinear(tmp_path, options,
                                                                                       kind):
    """LIBLINEAR's regression and one-class model files (docs/model-format.md): read,
    with decision values and predictions equal to liblinear's own predict on held-out rows."""
    rng = np.random.default_rng(5)
    X = sp.random(300, 15, density=0.4, random_state=5, format="csr")
    y = X @ rng.normal(size=15) + 0.1 * rng.normal(size=300)
    lm = liblinearutil.train(y[:200], X[:200], options + " -q")
    path = tmp_path / "ll.model"
    liblinearutil.save_model(str(path), lm)
    m = load_model(path)
    assert m.kind == kind and m.solver.startswith("liblinear:")
    labels, values = _liblinear_predict(path, X[200:])
    np.testing.assert_allclose(m.decision_function(X[200:]).reshape(-1), values.reshape(-1),
                               rtol=0, atol=1e-12 * max(1.0, np.abs(values).max()))
    np.testing.assert_array_equal(m.predict(X[200:]), labels)
