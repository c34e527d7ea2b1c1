"""`linsvm-predict --plot FILE`: the curves of a binary model (ROC, precision-recall, and
the reliability diagram with -b 1) and predicted against true values for regression,
checked in the drawn figure against scikit-learn's points on the written decision
values; the refusals (one line, nothing written).  Skipped without matplotlib, except
the test of that very case."""
import struct
import sys

import numpy as np
import pytest
from click.testing import CliRunner

import linsvm
from linsvm.cli import plot_curves, predict_cmd
from linsvm.model.predict import predict_file

from conftest import assert_one_line_error, random_problem

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def run(args):
    return CliRunner().invoke(predict_cmd, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def mpl():
    return pytest.importorskip("matplotlib")


@pytest.fixture
def binary(tmp_path):
    X, y = random_problem(n_samples=300, n_features=12, seed=11)
    y = np.where(y > 0, 1.0, -1.0)
    y[:20] *= -1                                    # some errors: a curve, not a corner
    data = tmp_path / "test.svm"
    linsvm.dump_svmlight(X, y, str(data))
    model = linsvm.train(X, y, solver="mfn", C=0.3)
    path = tmp_path / "m.model"
    model.save(path)
    return tmp_path, data, path, X, y


def line(fig, axis, gid=None, label_start=None):
    """The data of the line of figure axis `axis` with that gid or label start."""
    for ln in fig.axes[axis].get_lines():
        if (gid is not None and ln.get_gid() == gid) or \
                (label_start is not None and str(ln.get_label()).startswith(label_start)):
            return np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
    raise AssertionError(f"no line {gid or label_start} on axis {axis}")


@pytest.mark.slow
def test_binary_png_with_roc_pr_operating_point_and_prbep(binary, mpl):
    sk = pytest.importorskip("sklearn.metrics")
    tmp, data, model_path, X, y = binary
    png = tmp / "curves.png"
    plain = run(["-q", data, model_path, tmp / "plain.pred"])
    r = run([data, model_path, tmp / "p.pred", "--plot", png])
    assert r.exit_code == 0 and plain.exit_code == 0, r.output
    assert (tmp / "p.pred").read_bytes() == (tmp / "plain.pred").read_bytes()
    head = png.read_bytes()[:24]
    assert head[:8] == PNG_MAGIC
    assert struct.unpack(">II", head[16:24]) == (1040, 530)     # two 5-inch panels, 100 dpi
    assert mpl.image.imread(str(png)).std() > 0.05
    # the figure, drawn again from predict_file's kept values, against scikit-learn
    model = linsvm.load_model(model_path)
    kept = predict_file(str(data), model, None, keep=True).kept
    fig = plot_curves.plot_prediction(kept, model, tmp / "again.png")
    assert len(fig.axes) == 2
    scores = model.decision_function(X)             # classes_[0] = 1 is the positive class
    fpr, tpr, _ = sk.roc_curve(y == 1, scores, drop_intermediate=False)
    x, yy = line(fig, 0, label_start="ROC curve")
    np.testing.assert_allclose(x, fpr, atol=1e-15)
    np.testing.assert_allclose(yy, tpr, atol=1e-15)
    precision, recall, _ = sk.precision_recall_curve(y == 1, scores)
    x, yy = line(fig, 1, label_start="precision-recall")
    np.testing.assert_allclose(x[1:], recall[:-1][::-1], atol=1e-15)
    np.testing.assert_allclose(yy[1:], precision[:-1][::-1], atol=1e-15)
    pred = np.loadtxt(tmp / "p.pred") == 1
    (tn, fp), (fn, tp) = sk.confusion_matrix(y == 1, pred)
    assert line(fig, 0, gid="operating-point") == ([fp / (fp + tn)], [tp / (tp + fn)])
    assert line(fig, 1, gid="operating-point") == ([tp / (tp + fn)], [tp / (tp + fp)])
    # PRBEP: with P positives, the fraction of positives among the P highest scores
    n_pos = int(np.sum(y == 1))
    top = np.argsort(-scores)[:n_pos]
    b = np.mean(y[top] == 1)
    assert line(fig, 1, gid="prbep") == ([b], [b])
    for ax in fig.axes:
        assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title() and ax.get_legend()
    assert f"ROC area = {sk.roc_auc_score(y == 1, scores):.6g}" in r.stderr


def test_positive_class_second_in_the_model_flips_the_scores(tmp_path, mpl):
    """Labels 0/1 with a 0 first: the model's first class is 0, its decision values
    score 0, and the curves of class 1 rank by their negation."""
    sk = pytest.importorskip("sklearn.metrics")
    X, y = random_problem(n_samples=200, n_features=10, seed=12)
    y = np.where(y > 0, 1.0, 0.0)
    y[:15] = 1 - y[:15]
    order = np.r_[np.flatnonzero(y == 0)[:1], np.delete(np.arange(200), np.flatnonzero(y == 0)[0])]
    X, y = X[order], y[order]
    model = linsvm.train(X, y)
    assert model.classes_.tolist() == [0.0, 1.0]
    kept = predict_file_of(tmp_path, X, y, model)
    fig = plot_curves.plot_prediction(kept, model, tmp_path / "c.png")
    fpr, tpr, _ = sk.roc_curve(y == 1, -model.decision_function(X), drop_intermediate=False)
    x, yy = line(fig, 0, label_start="ROC curve")
    np.testing.assert_allclose(x, fpr, atol=1e-15)
    np.testing.assert_allclose(yy, tpr, atol=1e-15)
    pred = model.predict(X) == 1
    (tn, fp), (fn, tp) = sk.confusion_matrix(y == 1, pred)
    assert line(fig, 0, gid="operating-point") == ([fp / (fp + tn)], [tp / (tp + fn)])
    assert "positive class 1" in fig.axes[0].get_title()


@pytest.mark.slow
def test_probability_output_adds_the_reliability_diagram(binary, mpl):
    calibration = pytest.importorskip("sklearn.calibration")
    tmp, data, model_path, X, y = binary
    lr = linsvm.train(X, y, solver="lr")
    lr.save(tmp / "lr.model")
    svg = tmp / "curves.svg"
    r = run(["-b", "1", "--plot", svg, data, tmp / "lr.model", tmp / "p.out"])
    assert r.exit_code == 0, r.output
    text = svg.read_text()
    assert text.startswith("<?xml") and 'id="reliability' in text and 'id="prbep' in text
    kept = predict_file(str(data), lr, None, keep=True, probability=True).kept
    fig = plot_curves.plot_prediction(kept, lr, tmp / "again.pdf")
    assert (tmp / "again.pdf").read_bytes()[:5] == b"%PDF-"
    assert len([ax for ax in fig.axes if ax.get_title()]) == 3
    written = np.loadtxt(tmp / "p.out", skiprows=1)
    column = 1 + list(lr.classes_).index(1.0)
    observed, predicted = calibration.calibration_curve(y == 1, written[:, column], n_bins=10)
    x, yy = line(fig, 2, gid="reliability")
    np.testing.assert_allclose(x, predicted, rtol=1e-12)
    np.testing.assert_allclose(yy, observed, rtol=1e-12)


@pytest.mark.slow
def test_regression_draws_predicted_against_true(tmp_path, mpl):
    rng = np.random.default_rng(3)
    X, _ = random_problem(n_samples=200, n_features=8, seed=2)
    y = X @ rng.standard_normal(8) + 0.2 * rng.standard_normal(200)
    data = tmp_path / "r.svm"
    linsvm.dump_svmlight(X, y, str(data))
    linsvm.train(X, y, solver="svr").save(tmp_path / "r.model")
    r = run(["-q", "--plot", tmp_path / "r.png", data, tmp_path / "r.model", tmp_path / "r.pred"])
    assert r.exit_code == 0 and (tmp_path / "r.png").read_bytes()[:8] == PNG_MAGIC
    model = linsvm.load_model(tmp_path / "r.model")
    kept = predict_file(str(data), model, None, keep=True).kept
    fig = plot_curves.plot_prediction(kept, model, tmp_path / "again.png")
    x, yy = line(fig, 0, gid="points")
    np.testing.assert_array_equal(x, np.loadtxt(data, usecols=0))
    np.testing.assert_array_equal(yy, np.loadtxt(tmp_path / "r.pred"))
    assert fig.axes[0].get_xlabel() == "true target" and "MSE" in fig.axes[0].get_title()


def test_many_examples_are_drawn_as_hexagonal_bins(tmp_path, mpl, monkeypatch):
    monkeypatch.setattr(plot_curves, "SCATTER_MAX", 50)
    X, _ = random_problem(n_samples=120, n_features=5, seed=4)
    y = X @ np.arange(1.0, 6.0)
    model = linsvm.train(X, y, solver="svr")
    kept = predict_file_of(tmp_path, X, y, model)
    fig = plot_curves.plot_prediction(kept, model, tmp_path / "hex.png")
    assert fig.axes[0].collections and len(fig.axes) == 2       # the hexagons and a colorbar


def predict_file_of(tmp_path, X, y, model):
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    return predict_file(str(data), model, None, keep=True).kept


# ------------------------------------------------------------------ refusals: one line

def test_multiclass_model_is_refused_before_anything_is_written(tmp_path, mpl):
    X, y = random_problem(n_samples=90, n_features=6, n_classes=3, seed=1)
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    linsvm.train(X, y).save(tmp_path / "m.model")
    r = run(["--plot", tmp_path / "c.png", data, tmp_path / "m.model", tmp_path / "p"])
    assert_one_line_error(r, "--plot", "multiclass model", "binary and regression")
    assert not (tmp_path / "c.png").exists() and not (tmp_path / "p").exists()


def test_bad_extension_and_the_output_file_are_usage_errors(binary, mpl):
    tmp, data, model_path, X, y = binary
    r = run(["--plot", tmp / "c.jpg", data, model_path, tmp / "p"])
    assert_one_line_error(r, "name it .png, .svg or .pdf", code=2)
    r = run(["--plot", tmp / "p.png", data, model_path, tmp / "p.png"])
    assert_one_line_error(r, "also the output file", code=2)
    r = run(["--plot", data, data, model_path, tmp / "p"])
    assert r.exit_code == 2 and not (tmp / "p").exists()


def test_a_test_set_of_one_class_has_no_curves(binary, mpl):
    tmp, data, model_path, X, y = binary
    one = tmp / "one.svm"
    linsvm.dump_svmlight(X[y == 1], y[y == 1], str(one))
    r = run(["-q", "--plot", tmp / "c.png", one, model_path, tmp / "p"])
    assert_one_line_error(r, "only examples of the positive class 1")
    assert not (tmp / "c.png").exists()


def test_without_matplotlib_one_line_before_predicting(binary, monkeypatch):
    """As linsvm-cv --plot: a None entry in sys.modules makes `import matplotlib` fail."""
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    tmp, data, model_path, X, y = binary
    r = run(["--plot", tmp / "c.png", data, model_path, tmp / "p"])
    assert_one_line_error(r, "--plot needs matplotlib", "pip install 'linsvm[plot]'")
    assert not (tmp / "p").exists() and not (tmp / "c.png").exists()
