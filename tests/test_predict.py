"""linsvm.model.predict: streaming prediction of a file as a library function, checked
against whole-file prediction, scikit-learn's measures and the command line."""
import io

import numpy as np
import pytest
from conftest import invoke, one_error_line, run_here

import linsvm
from linsvm.cli import predict_cmd
from linsvm.errors import DataError, ModelError
from linsvm.model import Model
from linsvm.model.predict import default_chunk_rows, note_lines, predict_file, report_lines
from linsvm.io.synth import make_text_classification


@pytest.fixture(scope="module")
def binary(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("predict")
    X, y = make_text_classification(n_samples=600, n_features=300, n_classes=2, noise=0.1, seed=5)
    y = np.where(y > 0, 1.0, -1.0)
    model = linsvm.train(X[:400], y[:400], solver="mfn", C=1.0)
    test = tmp / "test.svm"
    linsvm.dump_svmlight(X[400:], y[400:], str(test))
    return tmp, model, test, X[400:], y[400:]


@pytest.mark.parametrize("chunk_rows", [None, 1, 7, 199, 200])
def test_chunked_predictions_equal_whole_file_prediction(binary, chunk_rows):
    tmp, model, test, X, y = binary
    out = tmp / f"p{chunk_rows}"
    res = predict_file(test, model, out, chunk_rows=chunk_rows)
    pred = np.array([float(t) for t in out.read_text().split()])
    np.testing.assert_array_equal(pred, model.predict(X))
    assert (res.n_total, res.n_correct) == (y.size, int(np.sum(model.predict(X) == y)))
    assert res.accuracy == np.mean(model.predict(X) == y)


def test_decision_values_read_back_bit_for_bit(binary):
    tmp, model, test, X, y = binary
    out = io.BytesIO()
    predict_file(test, model, out, decision_values=True, chunk_rows=13)
    values = np.array([float(t) for t in out.getvalue().split()])
    np.testing.assert_array_equal(values, model.decision_function(X))


def test_binary_measures_agree_with_scikit_learn(binary):
    metrics = pytest.importorskip("sklearn.metrics")
    tmp, model, test, X, y = binary
    res = predict_file(test, model, None, chunk_rows=50)
    m = res.measures
    pred, scores = model.predict(X), model.decision_function(X)
    pos = 1.0                                   # the labels include 1
    assert m["positive"] == pos
    assert m["precision"] == pytest.approx(metrics.precision_score(y, pred, pos_label=pos))
    assert m["recall"] == pytest.approx(metrics.recall_score(y, pred, pos_label=pos))
    assert m["f1"] == pytest.approx(metrics.f1_score(y, pred, pos_label=pos))
    oriented = scores if model.classes_[0] == pos else -scores
    assert m["roc_area"] == pytest.approx(metrics.roc_auc_score(y == pos, oriented))


def test_ordinal_measures_per_query_agree_with_scipy(tmp_path):
    stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(0)
    n = 90
    X = rng.normal(size=(n, 4))
    qid = np.repeat([1, 2, 3], n // 3)
    y = np.clip(np.round(X[:, 0] + 2 + 0.5 * rng.normal(size=n)), 1, 3)
    model = Model(solver="mfn-ord", classes=[1, 2, 3], weights=[[1.0], [0.1], [0.0], [0.0]], bias=-1,
                  params={}, thresholds=[-1.5, -0.5])
    test = tmp_path / "t.svm"
    linsvm.dump_svmlight(X, y, str(test), qid=qid)
    res = predict_file(test, model, None, chunk_rows=11)
    s = model.decision_function(X)
    taus = [stats.kendalltau(y[qid == q], s[qid == q]).statistic for q in (1, 2, 3)]
    assert res.per_query
    assert res.measures["kendall_tau"] == pytest.approx(np.mean(taus))
    ranks = {1.0: 0, 2.0: 1, 3.0: 2}
    mae = np.mean([abs(ranks[a] - ranks[b]) for a, b in zip(y, model.predict(X))])
    assert res.measures["mae"] == pytest.approx(mae)
    assert report_lines(res)[1].endswith(" (per query)")


def test_cli_prints_the_library_lines(binary):
    tmp, model, test, X, y = binary
    path = tmp / "m.model"
    model.save(path)
    res = predict_file(test, model, None)
    r = invoke(predict_cmd, str(test), str(path), str(tmp / "cli.pred"))
    assert r.exit_code == 0
    assert r.stderr.splitlines() == [f"note: {t}" for t in note_lines(res)] + report_lines(res)
    assert report_lines(res)[0] == f"Accuracy = {100 * res.n_correct / y.size:g}% ({res.n_correct}/{y.size})"
    predict_file(test, str(path), tmp / "lib.pred")           # a model path works too
    assert (tmp / "lib.pred").read_bytes() == (tmp / "cli.pred").read_bytes()


def test_unknown_labels_and_widths_are_noted(tmp_path):
    model = Model(solver="mfn", classes=[1, -1], weights=[[1.0], [-1.0], [0.25]], bias=1.0, params={})
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n7 2:1\n9 5:2\n-1 1:-1\n")
    res = predict_file(test, model, None)
    assert (res.n_unknown, res.unknown, res.width) == (2, (7.0, 9.0), 5)
    assert note_lines(res) == [
        "the test data has feature indices up to 5, the model only 1..2: features above 2 are ignored",
        "2 of 4 test examples have labels that are not among the model's classes (7, 9); "
        "they count as errors"]
    quiet = predict_file(test, model, None, measures=False)
    assert (quiet.n_unknown, quiet.measures, quiet.n_correct) == (0, None, res.n_correct)


def test_empty_test_data(tmp_path):
    model = Model(solver="mfn", classes=[1, -1], weights=[[1.0]], bias=-1, params={})
    (tmp_path / "e.svm").write_text("")
    res = predict_file(tmp_path / "e.svm", model, tmp_path / "p")
    assert res.n_total == 0 and np.isnan(res.accuracy) and note_lines(res) == []
    assert report_lines(res) == [f"{tmp_path / 'e.svm'}: 0 examples, nothing to predict"]
    assert (tmp_path / "p").read_bytes() == b""


def test_overflow_names_the_example_across_chunks_and_leaves_no_output(tmp_path):
    model = Model(solver="mfn", classes=[1, -1], weights=[[1e300], [1e300]], bias=-1, params={})
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n" * 5 + "1 1:1e10 2:1e10\n")
    out = tmp_path / "p"
    out.write_text("old\n")
    with pytest.raises(ModelError, match=r"^the model: example 6 of .*t\.svm: the decision value is inf"):
        predict_file(test, model, out, chunk_rows=2)
    assert out.read_text() == "old\n"
    # features the larger factor: the data are at fault, and the model is named too
    small = Model(solver="mfn", classes=[1, -1], weights=[[1.0], [1.0]], bias=-1, params={})
    test.write_text("1 1:1\n" * 5 + "1 1:1e308 2:1e308\n")
    with pytest.raises(DataError, match=r"t\.svm: example 6: the decision value is inf, not finite: "
                                        r".* \(model m\.model\)$"):
        predict_file(test, small, out, chunk_rows=2, model_name="m.model")
    assert out.read_text() == "old\n"


def test_bad_line_leaves_an_existing_output_untouched(tmp_path):
    model = Model(solver="mfn", classes=[1, -1], weights=[[1.0]], bias=-1, params={})
    test = tmp_path / "t.svm"
    test.write_text("1 1:1\n" * 5 + "1 1:x\n")
    out = tmp_path / "p"
    out.write_text("old\n")
    with pytest.raises(DataError, match=":6:"):
        predict_file(test, model, out, chunk_rows=2)
    assert out.read_text() == "old\n"


def test_progress_and_default_chunk_rows(binary):
    tmp, model, test, X, y = binary
    seen = []
    predict_file(test, model, None, chunk_rows=64, progress=seen.append)
    assert seen == list(range(64, y.size, 64)) + [y.size]
    assert default_chunk_rows(1) == 65536 and default_chunk_rows(1000) == 4194
    assert default_chunk_rows(10**6) == 256


@pytest.mark.parametrize("n_columns,bias,width", [(1, 1.0, 12), (3, 1.0, 9), (1, -1.0, 15), (4, 0.5, 12)])
def test_buffers_score_as_scipy_does_bit_for_bit(n_columns, bias, width):
    """Model.decision_function on CSRBuffers (the compiled kernel predict_file uses, no
    scipy) gives scipy's product's values exactly, features beyond the model ignored."""
    import scipy.sparse as sp

    from linsvm import Model
    from linsvm.problem.csr import CSRBuffers

    rng = np.random.default_rng(n_columns)
    n_features = 12
    W = rng.standard_normal((n_features + (bias > 0), n_columns)) * 10.0 ** rng.integers(-3, 4)
    classes = [1.0, -1.0] if n_columns == 1 else list(range(1, n_columns + 1))
    model = Model(solver="mfn", classes=classes, weights=W, bias=bias, params={})
    X = sp.random(40, width, density=0.3, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k) * 1e3)
    got = model.decision_function(CSRBuffers(X))
    assert got.shape == model.decision_function(X).shape
    assert np.array_equal(got, model.decision_function(X))


# models whose weights overflow a decision value

def _overflow_models(directory):
    """(file, test data, example) triples: models whose decision value overflows on an
    example, in the three places it can -- adding the bias term, a weight times a
    feature, the sum of finite products -- saved in every format (binary weights with
    their crc32)."""
    from linsvm.model.model import Model
    cases = {
        # w = (1, 1), bias weight 1e308: x = (1e308/2 .. ) plus the bias term overflows
        "bias": (np.array([[1.0], [1.0], [1e308]]), b"1 1:1\n-1 1:1 2:1e308\n", 2),
        # one product: 1e308 * 10
        "product": (np.array([[1e308], [-1.0], [0.5]]), b"1 2:1\n1 1:10\n", 2),
        # all +-1e308 (the model): each product is finite, their sum is not
        "sum": (np.where(np.arange(14) % 2 == 0, 1e308, -1e308).reshape(-1, 1),
                b"1 1:1 3:1 5:0.5\n-1 2:1\n", 1),
    }
    out = []
    for name, (W, data, example) in cases.items():
        test = directory / f"{name}.svm"
        test.write_bytes(data)
        model = Model(solver="mfn", classes=[1, -1], weights=W, bias=1.0, params={})
        for fmt in ("linsvm-text", "linsvm-binary", "liblinear"):
            path = directory / f"{name}.{fmt}.model"
            model.save(path, format=fmt)
            out.append((path, test, example))
    return out


def test_overflowing_model_is_one_line_naming_the_model(tmp_path):
    """All +-1e308 weights loaded (text, LIBLINEAR, binary with a valid crc32), then predict
    printed NumPy's `RuntimeWarning: overflow encountered in add` with a source line and an
    error naming the test file as if the data were at fault."""
    for model, test, example in _overflow_models(tmp_path):
        out = tmp_path / "p.txt"
        status, _, err = run_here("predict", test.name, model.name, out.name, cwd=tmp_path)
        line = one_error_line(err)
        assert status == 1 and "RuntimeWarning" not in err, err
        assert line.startswith(f"linsvm predict: error: {model.name}: example {example} of "
                               f"{test.name}: the decision value is "), line
        assert "the model's weights (up to 1e+308 in magnitude)" in line, line
        assert not out.exists()


def test_no_numpy_warning_from_the_python_api(tmp_path):
    import warnings

    from linsvm.model import ScoreOverflowError
    from linsvm.io.svmlight import load_svmlight
    for model, test, example in _overflow_models(tmp_path):
        m = linsvm.load_model(model)
        X, _ = load_svmlight(test)
        for x in (X, X.toarray()):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with pytest.raises(ScoreOverflowError) as info:
                    m.decision_function(x)
            assert info.value.row == example - 1 and info.value.model_at_fault
        assert m.source == str(model)


def test_warm_start_from_an_overflowing_model_is_refused(tmp_path):
    """-i from such a model started the solve from inf: mfn failed with "weights must be
    finite", alm wrote an unusable model and exited 0."""
    model, test, _ = _overflow_models(tmp_path)[-3]          # the "sum" model, text format
    for solver in ("mfn", "alm", "dcd"):
        status, _, err = run_here("train", "-q", "-s", solver, "-i", model.name, test.name, "o.model",
                                 cwd=tmp_path)
        line = one_error_line(err)
        assert status == 1 and f"error: {model.name}: its weights overflow the decision value of " \
            "training example 1" in line, err
        assert not (tmp_path / "o.model").exists()


