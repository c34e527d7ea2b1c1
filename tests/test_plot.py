"""linsvm.cli.plot: the picture of a cross-validation grid (`linsvm-cv --plot`).

Skipped without matplotlib, except the test of that very case (the import is made to
fail by monkeypatching)."""
import math
import struct
import sys
import xml.etree.ElementTree as ET
import zlib

import numpy as np
import pytest

from linsvm.cv import CVPoint, CVResult, cross_validate
from linsvm.errors import DataError, LinsvmError, ParameterError
from linsvm.cli import plot

from conftest import random_problem

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def c_grid(metric="accuracy", higher=True, peak=1.0):
    res = CVResult(metric, higher)
    for e in np.arange(-4, 4.5, 0.5):
        base = 0.9 - 0.02 * (e - peak) ** 2
        res.points.append(CVPoint(2.0 ** e, None, [base - 0.01, base, base + 0.01], 0.01, 5))
    return res


def p_grid(n_p, metric="mae", higher=False):
    res = CVResult(metric, higher)
    for p in np.linspace(1.0, 2.0, n_p):
        for e in range(-3, 4):
            v = 0.5 + 0.03 * (e - 1) ** 2 + 0.2 * (p - 1.25) ** 2
            res.points.append(CVPoint(2.0 ** e, float(p), [v, v + 0.02], 0.01, 5))
    return res


def png_chunks(data):
    """The PNG's chunks, each CRC checked: [(type, payload), ...]."""
    assert data[:8] == PNG_MAGIC
    pos, chunks = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, payload = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(kind + payload) == crc
        chunks.append((kind, payload))
        pos += 12 + n
    return chunks


def best_artist(fig):
    ax = fig.axes[0]
    stars = [line for line in ax.get_lines() if line.get_gid() == "best-point"]
    assert len(stars) == 1
    return stars[0]


# ------------------------------------------------------------------ with matplotlib

@pytest.fixture
def mpl():
    return pytest.importorskip("matplotlib")


@pytest.mark.slow
def test_png_is_written_and_valid(tmp_path, mpl):
    res = c_grid()
    fig = plot.plot_cv(res, tmp_path / "cv.png", solver="mfn")
    data = (tmp_path / "cv.png").read_bytes()
    chunks = png_chunks(data)
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    width, height = struct.unpack(">II", chunks[0][1][:8])
    assert (width, height) == (700, 480)
    image = mpl.image.imread(str(tmp_path / "cv.png"))
    assert image.shape[:2] == (480, 700)
    assert image.std() > 0.05                   # not a blank picture
    assert fig.axes[0].get_title() == "mfn: 3-fold cross-validation accuracy"


@pytest.mark.slow
def test_svg_is_written_and_valid(tmp_path, mpl):
    plot.plot_cv(c_grid(), tmp_path / "cv.svg", solver="dcd")
    root = ET.parse(tmp_path / "cv.svg").getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    ids = {el.get("id") for el in root.iter()}
    assert "best-point" in ids                  # the marked best point, findable in the file


def test_best_point_is_marked_where_the_best_is(tmp_path, mpl):
    res = c_grid(peak=1.5)
    best = res.best
    assert best.C == 2.0 ** 1.5
    fig = plot.plot_cv(res, tmp_path / "cv.png")
    star = best_artist(fig)
    assert star.get_xdata()[0] == pytest.approx(1.5)
    assert star.get_ydata()[0] == pytest.approx(100 * best.mean)    # accuracy in percent
    assert star.get_marker() == "*"
    assert "C = 2.82843" in star.get_label() and "accuracy = 90%" in star.get_label()


def test_lower_is_better_metric_marks_the_minimum(tmp_path, mpl):
    res = CVResult("mae", False, [CVPoint(2.0 ** e, None, [abs(e - 2) + 0.5], 0.0, 1)
                                  for e in range(-2, 5)])
    fig = plot.plot_cv(res, tmp_path / "cv.png", solver="alm")
    star = best_artist(fig)
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (2.0, 0.5)   # mae: no percent
    assert "lower is better" in fig.axes[0].get_ylabel()


def test_few_p_values_give_one_curve_each(tmp_path, mpl):
    res = p_grid(4)
    fig = plot.plot_cv(res, tmp_path / "cv.png", solver="alm")
    ax = fig.axes[0]
    curves = [line for line in ax.get_lines() if line.get_label().startswith("p = ")]
    assert [c.get_label() for c in curves] == ["p = 1", "p = 1.33333", "p = 1.66667", "p = 2"]
    assert all(len(c.get_xdata()) == 7 for c in curves)
    star = best_artist(fig)
    best = res.best
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (math.log2(best.C), best.mean)
    assert f"p = {best.p:.6g}" in star.get_label()


@pytest.mark.slow
def test_many_p_values_give_a_contour_with_the_best_at_C_and_p(tmp_path, mpl):
    res = p_grid(11, metric="accuracy", higher=True)
    fig = plot.plot_cv(res, tmp_path / "cv.svg", solver="alm")
    ax = fig.axes[0]
    assert ax.get_ylabel() == "p (loss exponent)"
    assert len(fig.axes) == 2                   # the colour bar
    star = best_artist(fig)
    best = res.best
    assert (star.get_xdata()[0], star.get_ydata()[0]) == (math.log2(best.C), best.p)
    # forcing curves instead
    fig = plot.plot_cv(res, tmp_path / "curves.png", contour=False)
    assert len([l for l in fig.axes[0].get_lines() if l.get_label().startswith("p = ")]) == 11


def test_nan_means_leave_gaps_and_never_win(tmp_path, mpl):
    res = c_grid()
    res.points[3].scores = [float("nan")] * 3
    fig = plot.plot_cv(res, tmp_path / "cv.png")
    assert not math.isnan(best_artist(fig).get_ydata()[0])


def test_from_a_real_cross_validation(tmp_path, mpl):
    X, y = random_problem(n_samples=80, n_features=6, seed=2)
    res = cross_validate(X, y, solver="mfn", Cs=[2.0 ** e for e in range(-3, 4)], n_folds=3)
    fig = plot.plot_cv(res, tmp_path / "cv.png", solver="mfn")
    star = best_artist(fig)
    assert star.get_xdata()[0] == math.log2(res.best.C)
    assert png_chunks((tmp_path / "cv.png").read_bytes())[-1][0] == b"IEND"


def test_bad_extension_and_empty_result(tmp_path, mpl):
    with pytest.raises(ParameterError, match=r"name it \.png, \.svg or \.pdf"):
        plot.plot_cv(c_grid(), tmp_path / "cv.gif")
    with pytest.raises(ParameterError, match="no extension"):
        plot.plot_format(tmp_path / "cv")
    assert plot.plot_format("A.PNG") == "png"
    with pytest.raises(DataError, match="no grid points"):
        plot.plot_cv(CVResult("accuracy", True), tmp_path / "cv.png")
    assert not (tmp_path / "cv.png").exists()


def test_unwritable_plot_leaves_nothing(tmp_path, mpl):
    with pytest.raises(DataError, match="cannot write"):
        plot.plot_cv(c_grid(), tmp_path / "no-such-dir" / "cv.png")
    (tmp_path / "old.png").write_bytes(b"old")
    with pytest.raises(DataError):
        plot.plot_cv(CVResult("accuracy", True), tmp_path / "old.png")
    assert (tmp_path / "old.png").read_bytes() == b"old"


# ------------------------------------------------------------------ without matplotlib

def test_without_matplotlib_a_dedicated_error(tmp_path, monkeypatch):
    """A None entry in sys.modules makes `import matplotlib` raise ImportError."""
    for name in list(sys.modules):
        if name == "matplotlib" or name.startswith("matplotlib."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(plot.MatplotlibMissing) as exc:
        plot.require_matplotlib()
    assert "pip install 'linsvm[plot]'" in str(exc.value)
    assert isinstance(exc.value, LinsvmError)
    with pytest.raises(plot.MatplotlibMissing):
        plot.plot_cv(c_grid(), tmp_path / "cv.png")
    assert not (tmp_path / "cv.png").exists()
