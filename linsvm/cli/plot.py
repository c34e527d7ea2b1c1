"""A picture of a cross-validation grid (`linsvm-cv --plot FILE.png|.svg|.pdf`), and
what every plot of the command line shares (`require_matplotlib`, `plot_format`,
`save_figure`; linsvm.cli.plot_curves draws `linsvm-predict --plot`).

The metric's mean over the folds against log2 C, the best point marked (a star,
with its C, p and value), titled with the solver, the number of folds and the
metric:

* a C grid: one curve, with a band of ± one standard deviation over the folds;
* a C grid and a few values of p (at most `MAX_CURVES`): one curve per p;
* more values of p, on at least two Cs: filled contours of the mean over
  (log2 C, p), the grid points dotted.

Undefined means (nan: a metric with no positive example in a fold, ...) leave
gaps.  Accuracy, PRBEP, F1 and pairwise accuracy are drawn as percentages, as
the table shows them.

matplotlib is optional (``pip install 'linsvm[plot]'``): it is imported only
when a plot is made, through its object-oriented interface (no pyplot, no global
backend change), and its absence raises MatplotlibMissing, which a command turns
into one line.  The file is written atomically (linsvm.io.atomic); its format
follows its extension.
"""
from __future__ import annotations

import io
import math
import os

import numpy as np

from ..errors import DataError, LinsvmError, ParameterError
from ..io.atomic import atomic_output
from ..problem.metric_names import PERCENT_METRICS
from .messages import CommandError, UsageLineError

__all__ = ["MatplotlibMissing", "PLOT_FORMATS", "MAX_CURVES", "require_matplotlib",
           "plot_format", "plot_cv", "save_figure"]

PLOT_FORMATS = ("png", "svg", "pdf")
MAX_CURVES = 6                  # more values of p than this: a contour plot
INSTALL_HINT = "pip install 'linsvm[plot]'"


class MatplotlibMissing(LinsvmError):
    """Plotting was asked for but matplotlib cannot be imported."""


def require_matplotlib():
    """Import matplotlib (>= 3.7) or raise MatplotlibMissing naming the extra to install.
    A command calls it before a long computation whose result it is to plot."""
    try:
        import matplotlib
        from matplotlib.figure import Figure  # noqa: F401
    except ImportError as exc:
        raise MatplotlibMissing(f"plotting needs matplotlib: {INSTALL_HINT}") from exc
    return matplotlib


def check_plot_file(plot_file):
    """A --plot name's part of the checks every command makes before its work: an
    extension plot_format knows (else a usage error) and matplotlib importable (else one
    line saying how to install it)."""
    try:
        plot_format(plot_file)
    except ParameterError as exc:
        raise UsageLineError(str(exc)) from None
    try:
        require_matplotlib()
    except MatplotlibMissing:
        raise CommandError("--plot needs matplotlib: pip install 'linsvm[plot]'") from None


def plot_format(path) -> str:
    """The image format of `path` from its extension ("png", "svg" or "pdf"), else
    ParameterError."""
    ext = os.path.splitext(os.fsdecode(os.fspath(path)))[1].lower().lstrip(".")
    if ext not in PLOT_FORMATS:
        raise ParameterError(f"plot file '{os.fsdecode(os.fspath(path))}': name it .png, .svg or "
                             f".pdf (the format follows the extension), not "
                             f"{'.' + ext if ext else 'no extension'}")
    return ext


def _percent(metric):
    return metric in PERCENT_METRICS


def _fmt(v):
    return f"{v:.6g}"


def plot_cv(result, path, *, solver=None, title=None, contour=None):
    """Draw `result` (a linsvm.cv.CVResult) to `path` (.png, .svg or .pdf) and return the
    matplotlib Figure.

    solver: named in the title.  title: replaces the default title.  contour:
    force (True) or forbid (False) the contour form for a (C, p) grid; default:
    contours for more than MAX_CURVES values of p on two or more Cs.  The best
    point (CVResult.best) is a star whose artist has gid "best-point" (an id in
    SVG).  Raises MatplotlibMissing without matplotlib, ParameterError for
    another extension, DataError for an empty result or an unwritable file.
    """
    fmt = plot_format(path)
    require_matplotlib()
    from matplotlib.figure import Figure

    points = list(result.points)
    if not points:
        raise DataError("nothing to plot: the cross-validation result has no grid points")
    scale = 100.0 if _percent(result.metric) else 1.0
    unit = " (%)" if scale == 100.0 else ""
    ps = sorted({pt.p for pt in points if pt.p is not None})
    Cs = sorted({pt.C for pt in points})
    use_contour = contour if contour is not None else len(ps) > MAX_CURVES
    use_contour = bool(use_contour) and len(ps) >= 2 and len(Cs) >= 2

    fig = Figure(figsize=(7.0, 4.8), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    best = result.best
    folds = max((len(pt.scores) for pt in points), default=0)
    better = "higher" if result.higher_is_better else "lower"
    ylabel = f"{result.metric}{unit}, mean of {folds} folds ({better} is better)"

    if use_contour:
        grid = np.full((len(ps), len(Cs)), np.nan)
        for pt in points:
            grid[ps.index(pt.p), Cs.index(pt.C)] = pt.mean * scale
        x = np.log2(Cs)
        finite = grid[np.isfinite(grid)]
        if finite.size and finite.min() < finite.max():
            filled = ax.contourf(x, ps, np.ma.masked_invalid(grid), levels=12, cmap="viridis")
            fig.colorbar(filled, ax=ax, label=ylabel)
        else:
            mesh = ax.pcolormesh(x, ps, np.ma.masked_invalid(grid), shading="nearest", cmap="viridis")
            fig.colorbar(mesh, ax=ax, label=ylabel)
        gx, gy = np.meshgrid(x, ps)
        ax.plot(gx.ravel(), gy.ravel(), ".", color="k", markersize=2, alpha=0.5)
        ax.set_ylabel("p (loss exponent)")
        bx, by = math.log2(best.C), best.p
    else:
        groups = ps if ps else [None]
        colors = ["C0", "C1", "C2", "C3", "C4", "C5", "C6", "C7", "C8", "C9"]
        for k, p in enumerate(groups):
            line = sorted((pt for pt in points if pt.p == p), key=lambda pt: pt.C)
            x = np.log2([pt.C for pt in line])
            mean = np.array([pt.mean for pt in line]) * scale
            std = np.array([pt.std for pt in line]) * scale
            color = colors[k % len(colors)]
            label = None if p is None else f"p = {_fmt(p)}"
            ax.plot(x, mean, "o-", color=color, markersize=3.5, linewidth=1.4, label=label)
            if p is None or len(groups) == 1:
                ax.fill_between(x, mean - std, mean + std, color=color, alpha=0.18, linewidth=0,
                                label="± 1 std over the folds")
        ax.set_ylabel(ylabel)
        bx, by = math.log2(best.C), best.mean * scale
    star, = ax.plot([bx], [by], marker="*", markersize=16, color="crimson",
                    markeredgecolor="k", linestyle="none", zorder=5,
                    label="best: " + _best_text(best, result.metric, scale))
    star.set_gid("best-point")
    ax.set_xlabel("log2 C")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")
    if title is None:
        who = f"{solver}: " if solver else ""
        title = f"{who}{folds}-fold cross-validation {result.metric}"
    ax.set_title(title)

    save_figure(fig, path, fmt)
    return fig


def save_figure(fig, path, fmt):
    """Write the matplotlib Figure `fig` to `path` in format `fmt` (plot_format's),
    atomically (linsvm.io.atomic), with no creation date in an SVG or PDF (the same
    figure gives the same file); DataError naming the file when it cannot be written."""
    buf = io.BytesIO()
    metadata = {"Date": None} if fmt == "svg" else {"CreationDate": None} if fmt == "pdf" else {}
    fig.savefig(buf, format=fmt, metadata=metadata)
    name = os.fsdecode(os.fspath(path))
    try:
        with atomic_output(path) as fh:
            fh.write(buf.getvalue())
    except OSError as e:
        raise DataError(f"{name}: cannot write: {e.strerror or e}") from e


def _best_text(best, metric, scale):
    parts = [f"C = {_fmt(best.C)} (log2 C = {_fmt(math.log2(best.C))})"]
    if best.p is not None:
        parts.append(f"p = {_fmt(best.p)}")
    if math.isnan(best.mean):
        parts.append(f"{metric} n/a")
    else:
        parts.append(f"{metric} = {_fmt(best.mean * scale)}{'%' if scale == 100.0 else ''}")
    return ", ".join(parts)
