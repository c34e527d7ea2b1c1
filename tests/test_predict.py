"""linsvm.model.predict: streaming prediction of a file as a library function (issue 16), checked
against whole-file prediction, scikit-learn's measures and the command line."""
import io

import numpy as np
import pytest
from click.testing import CliRunner

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
    r = CliRunner().invoke(predict_cmd, [str(test), str(path), str(tmp / "cli.pred")])
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
