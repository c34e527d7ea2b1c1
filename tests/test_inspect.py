"""`linsvm inspect MODEL`: the header in words and the largest weights per column, named
through a vocabulary or a feature map; the JSON form checked against the weights of the
model loaded independently (NumPy's argsort), on linsvm files (text and binary weights)
and LIBLINEAR's, for binary, multi-class, regression and one-class models."""
import json
import re

import numpy as np
import pytest
import scipy.sparse as sp
from click.testing import CliRunner

import linsvm
from linsvm.cli import cli, inspect_cmd
from linsvm.fit.calibration import calibrate

from conftest import assert_one_line_error, random_problem


def run(args, command=inspect_cmd):
    return CliRunner().invoke(command, [str(a) for a in args], catch_exceptions=False)


def inspect_json(*args):
    r = run(["--format", "json", *args])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def expected_top(w, k):
    """The k largest positive weights (largest first) and the k most negative (most
    negative first) of the vector w, 1-based features, by a full argsort."""
    order = np.argsort(-w, kind="stable")
    pos = [int(i) + 1 for i in order if w[i] > 0][:k]
    order = np.argsort(w, kind="stable")
    neg = [int(i) + 1 for i in order if w[i] < 0][:k]
    return pos, neg


def check_columns(doc, model, k, names=None):
    """Every column of the JSON against the model's own weights (bias row left out)."""
    W = np.asarray(model.weights)[:model.n_features_]
    assert doc["top"] == k and len(doc["columns"]) == W.shape[1]
    for j, col in enumerate(doc["columns"]):
        pos, neg = expected_top(W[:, j], k)
        assert [e["feature"] for e in col["positive"]] == pos
        assert [e["feature"] for e in col["negative"]] == neg
        for e in col["positive"] + col["negative"]:
            assert e["weight"] == W[e["feature"] - 1, j]
            assert e["name"] == (None if names is None else names[e["feature"] - 1])
        assert col["column"] == j + 1
        assert col["intercept"] == pytest.approx(model.intercept_[j], abs=0, rel=1e-15)


@pytest.fixture
def binary(tmp_path):
    X, y = random_problem(n_samples=150, n_features=40, seed=3)
    return tmp_path, X, y


@pytest.mark.parametrize("fmt", ["linsvm-text", "linsvm-binary", "liblinear"])
def test_binary_model_top_weights_match_argsort(binary, fmt):
    tmp, X, y = binary
    model = linsvm.train(X, y, solver="mfn", C=0.5)
    path = tmp / "m.model"
    model.save(path, format=fmt)
    loaded = linsvm.load_model(path)
    doc = inspect_json("--top", 5, path)
    check_columns(doc, loaded, 5)
    assert doc["schema"] == 1 and doc["kind"] == "binary" and doc["problem"] == "binary classification"
    assert doc["classes"] == [float(c) for c in model.classes_]
    assert doc["n_features"] == 40 and doc["n_columns"] == 1 and doc["bias"] == 1.0
    assert doc["nonzero_weights"] == int(np.count_nonzero(model.weights[:40]))
    if fmt == "liblinear":
        assert doc["format"] == "liblinear" and doc["format_version"] is None
        assert doc["solver"] == "liblinear:L2R_L2LOSS_SVC" and doc["liblinear_code"] == 2
        assert doc["same_problem_as"] == "mfn" and doc["C"] is None and doc["objective"] is None
    else:
        # text weights: version 2; binary weights are sealed, their crc32 over the header too
        assert doc["format"] == "linsvm"
        assert doc["format_version"] == {"linsvm-text": 2, "linsvm-binary": 4}[fmt]
        assert doc["weights_storage"] == fmt.split("-")[1]
        assert doc["solver"] == "mfn" and doc["C"] == 0.5
        assert doc["objective"] == model.stats["objective"]
        assert doc["n_iter"] == model.stats["n_iter"] and doc["seconds"] == model.stats["seconds"]
        assert doc["params"]["loss"] == "l2"


def test_multiclass_model_every_column_and_the_certified_gap(tmp_path):
    """sdm-cs records primal and dual objectives: the gap inspect reports bounds the
    relative suboptimality measured against a much tighter solve of the same problem."""
    X, y = random_problem(n_samples=200, n_features=30, n_classes=4, seed=5)
    model = linsvm.train(X, y, solver="sdm-cs", C=1.0, tol=0.5)
    tight = linsvm.train(X, y, solver="sdm-cs", C=1.0, tol=1e-6)
    path = tmp_path / "m.model"
    model.save(path)
    doc = inspect_json("-k", 4, path)
    check_columns(doc, model, 4)
    assert [c["class"] for c in doc["columns"]] == [float(c) for c in model.classes_]
    P, P_star = model.stats["objective"], tight.stats["objective"]
    assert doc["certified_gap"] is not None
    assert -1e-9 <= (P - P_star) / P <= doc["certified_gap"]
    assert doc["dual_objective"] == model.stats["dual_objective"]


def test_a_model_written_by_liblinear_itself(tmp_path):
    """A file liblinear-official wrote (-s 4 on three classes, -B 1): the listed weights
    are its get_decfun coefficients, ranked."""
    ll = pytest.importorskip("liblinear.liblinearutil")
    X, y = random_problem(n_samples=200, n_features=25, n_classes=3, seed=8)
    m = ll.train(y, X, "-s 4 -c 1 -B 1 -q")
    path = str(tmp_path / "ll.model")
    ll.save_model(path, m)
    doc = inspect_json("--top", 3, path)
    assert doc["solver"] == "liblinear:MCSVM_CS" and doc["liblinear_code"] == 4
    assert doc["same_problem_as"] == "sdm-cs" and doc["n_features"] == 25
    labels = m.get_labels()
    assert doc["classes"] == [float(c) for c in labels]
    for j, col in enumerate(doc["columns"]):
        w, b = m.get_decfun(j)          # the j-th label's column
        pos, neg = expected_top(np.array(w), 3)
        assert [e["feature"] for e in col["positive"]] == pos
        assert [e["feature"] for e in col["negative"]] == neg
        assert col["intercept"] == pytest.approx(b, rel=1e-15)


@pytest.mark.parametrize("fmt", ["linsvm", "liblinear"])
def test_regression_and_one_class_models(tmp_path, fmt):
    rng = np.random.default_rng(2)
    X = sp.random(120, 15, density=0.5, format="csr", random_state=rng)
    y = X @ rng.standard_normal(15) + 0.1 * rng.standard_normal(120)
    for solver, kind, problem in [("svr", "regression", "regression"),
                                  ("oneclass", "oneclass", "one-class (novelty detection)")]:
        model = linsvm.train(X, y, solver=solver)
        path = tmp_path / f"{solver}.model"
        model.save(path, format=fmt)
        doc = inspect_json("--top", 6, path)
        check_columns(doc, linsvm.load_model(path), 6)
        assert doc["kind"] == kind and doc["problem"] == problem
        text = run(["--top", "2", path]).stdout
        if kind == "oneclass":
            assert doc["offset"] == pytest.approx(model.offset_, rel=1e-15)
            assert "rho:" in text and "inliers (+1)" in text
        else:
            assert doc["classes"] == [] and "larger targets" in text


def test_ordinal_model_thresholds_and_probability_sources(tmp_path):
    """An ordinal model lists its thresholds; -b 1 sigmoids, a logistic model's own
    link and a one-vs-rest multi-class model are said so."""
    rng = np.random.default_rng(7)
    X = sp.random(150, 10, density=0.5, format="csr", random_state=rng)
    s = X @ rng.standard_normal(10)
    ranks = np.digitize(s, np.quantile(s, [0.3, 0.6])) + 1.0
    ordinal = linsvm.train(X, ranks, solver="mfn-ord")
    ordinal.save(tmp_path / "o.model")
    doc = inspect_json("-k", 3, tmp_path / "o.model")
    check_columns(doc, ordinal, 3)
    assert doc["thresholds"] == ordinal.thresholds_.tolist() and doc["classes"] == [1.0, 2.0, 3.0]
    assert doc["columns"][0]["positive_favours"] == "higher ranks"
    Xb, yb = random_problem(n_samples=120, n_features=8, seed=9)
    calibrated = calibrate(linsvm.train(Xb, yb), Xb, yb)
    calibrated.save(tmp_path / "b.model")
    assert inspect_json(tmp_path / "b.model")["probability"] == "sigmoids"
    linsvm.train(Xb, yb, solver="lr").save(tmp_path / "lr.model")
    assert inspect_json(tmp_path / "lr.model")["probability"] == "logistic"
    assert inspect_json(tmp_path / "o.model")["probability"] is None
    Xm, ym = random_problem(n_samples=120, n_features=8, n_classes=3, seed=9)
    linsvm.train(Xm, ym, solver="dcd").save(tmp_path / "ovr.model")
    assert inspect_json(tmp_path / "ovr.model")["problem"].endswith("one-vs-rest (a binary "
                                                                   "model per class)")


def test_vocabulary_names_the_features(binary):
    tmp, X, y = binary
    path = tmp / "m.model"
    model = linsvm.train(X, y)
    model.save(path)
    names = [f"word{i}_é" for i in range(1, 46)]          # more names than features: fine
    vocab = tmp / "vocab.txt"
    vocab.write_text("".join(f"{n}\r\n" if i % 2 else f"{n}\n" for i, n in enumerate(names)),
                     encoding="utf-8")
    doc = inspect_json("--features", vocab, path)
    check_columns(doc, model, 10, names)
    assert doc["feature_names"] == {"file": str(vocab), "form": "vocabulary", "count": 45}
    text = run(["--features", vocab, "-k", "1", path]).stdout
    top = doc["columns"][0]["positive"][0]
    assert re.search(rf"feature {top['feature']} +{names[top['feature'] - 1]}$", text, re.M)


def test_feature_map_of_renumber_names_features_by_their_original_index(tmp_path):
    """Data with large sparse indices, renumbered by `linsvm renumber`, trained: the map
    names each model feature by the index it had in the original file."""
    rng = np.random.default_rng(4)
    original = np.sort(rng.choice(np.arange(1, 10**6), size=20, replace=False))
    X, y = random_problem(n_samples=100, n_features=20, seed=6)
    wide = sp.csr_matrix((X.data, original[X.indices] - 1, X.indptr), shape=(100, 10**6))
    src, out, fmap = tmp_path / "wide.svm", tmp_path / "rn.svm", tmp_path / "f.map"
    linsvm.dump_svmlight(wide, y, str(src))
    assert run(["renumber", src, out, fmap], command=cli).exit_code == 0
    model_path = tmp_path / "rn.model"
    assert run(["train", "-q", out, model_path], command=cli).exit_code == 0
    model = linsvm.load_model(model_path)
    used = np.unique(original[X.indices])      # the original indices, in increasing order
    doc = inspect_json("--features", fmap, model_path)
    check_columns(doc, model, 10, [str(v) for v in used])
    assert doc["feature_names"]["form"] == "map"


def test_text_header_in_words(binary):
    tmp, X, y = binary
    model = linsvm.train(X, y, solver="dcd", loss="l1", C=2.0)
    path = tmp / "m.model"
    model.save(path)
    lines = run(["-k", "0", path]).stdout.splitlines()
    fields = dict(line.split(":", 1) for line in lines)
    fields = {k: v.strip() for k, v in fields.items()}
    assert fields["solver"] == "dcd" and fields["C"] == "2"
    assert fields["problem"] == "binary classification"
    assert fields["classes"].startswith(" ".join(f"{c:g}" for c in model.classes_))
    assert "loss l1" in fields["options"]
    assert fields["objective"] == f"{model.stats['objective']:.10g}"
    P, D = model.stats["objective"], model.stats["dual_objective"]
    assert fields["certified gap"].startswith(f"{(P - D) / P:.3g} ")
    assert fields["iterations"] == str(model.stats["n_iter"])
    assert fields["training time"] == f"{model.stats['seconds']:.3f}s"
    assert fields["model"].endswith("(linsvm format version 2, text weights)")
    assert "column 1" not in "\n".join(lines)          # --top 0: the header only


def test_group_lists_inspect_and_help_names_its_options():
    r = run(["--help"], command=cli)
    assert "inspect" in r.stdout
    r = run(["inspect", "--help"], command=cli)
    assert r.exit_code == 0
    for option in ("--top", "--features", "--format", "MODEL_FILE"):
        assert option in r.stdout


# ------------------------------------------------------------------ errors: one line each

@pytest.fixture
def model_file(binary):
    tmp, X, y = binary
    path = tmp / "m.model"
    linsvm.train(X, y).save(path)
    return path


def test_blank_vocabulary_line_is_refused_naming_file_and_line(model_file, tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_text("alpha\nbeta\n  \ngamma\n")
    assert_one_line_error(run(["--features", vocab, model_file]), f"{vocab}:3:", "blank line")


def test_vocabulary_that_is_not_utf8_is_refused(model_file, tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_bytes(b"alpha\n\xff\xfe\n")
    assert_one_line_error(run(["--features", vocab, model_file]), f"{vocab}:2:", "UTF-8")


def test_malformed_feature_map_is_refused_naming_file_and_line(model_file, tmp_path):
    fmap = tmp_path / "f.map"
    fmap.write_text("# linsvm feature map: line k holds the original index of feature k\n"
                    "3\n9\n7\n")
    assert_one_line_error(run(["--features", fmap, model_file]), f"{fmap}:4:")


def test_vocabulary_shorter_than_the_model_is_refused(model_file, tmp_path):
    vocab = tmp_path / "v.txt"
    vocab.write_text("".join(f"w{i}\n" for i in range(10)))
    assert_one_line_error(run(["--features", vocab, model_file]), str(vocab), "names 10 features",
                          "has 40")


def test_empty_vocabulary_and_missing_files(model_file, tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    assert_one_line_error(run(["--features", empty, model_file]), str(empty), "empty")
    assert_one_line_error(run(["--features", tmp_path / "nope", model_file]), "nope")
    assert_one_line_error(run([tmp_path / "no.model"]), "no.model")


def test_a_file_that_is_not_a_model(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("1 1:2 3:4\n")
    assert_one_line_error(run([data]), f"{data}:1:", "not a linsvm or LIBLINEAR model")


def test_bad_top_is_a_usage_error(model_file):
    r = run(["--top", "-1", model_file])
    assert r.exit_code == 2 and "Traceback" not in r.output
    r = run(["--format", "yaml", model_file])
    assert r.exit_code == 2
