"""The pictures of `linsvm-predict --plot FILE.png|.svg|.pdf`: a model on its test set.

* A binary model: the ROC curve (its area in the legend, chance dashed) and the
  precision-recall curve (the positive rate of the test set dashed), both with the
  operating point of the model's predictions marked (a dot: decision value > 0, or the
  largest probability with -b 1) and, on the precision-recall curve, the PRBEP (a star
  where precision = recall).  With probability output (-b 1) a third panel: the
  reliability diagram (the observed fraction of the positive class against the mean
  predicted probability in ten equal bins, the number of examples per bin as bars).
* A regression model: the predicted against the true values, with the line y = x.

The points are computed by linsvm.problem.curves; this module only draws (matplotlib's
object-oriented interface, no pyplot: linsvm.cli.plot) and writes the file atomically.
Other kinds of models have no such picture (`CURVE_KINDS`).  `check_plot_request` and
`check_plot_model` are the command's checks before it reads anything and once the
model is loaded.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError
from ..io.atomic import check_output_path, same_target
from ..problem import curves
from ..problem.kinds import get_kind
from ..problem.labels import format_label
from ..problem.metrics import positive_class, positive_scores, prbep, regression_measures, roc_area
from .messages import CommandError, UsageLineError
from .plot import check_plot_file, plot_format, require_matplotlib, save_figure

__all__ = ["CURVE_KINDS", "plot_prediction", "check_plot_request", "check_plot_model"]

CURVE_KINDS = ("binary", "regression")      # the kinds of models --plot draws
PANEL = 5.0                                 # inches per panel (100 dpi: 500 pixels)
SCATTER_MAX = 100000                        # more test examples: hexagonal bins instead


def check_plot_request(plot_file, test_file, model_file, output_file):
    """--plot, before anything is read: a .png, .svg or .pdf name, matplotlib importable
    (as linsvm-cv --plot), a path that can be written and is none of the inputs or the
    output file."""
    check_plot_file(plot_file)
    if same_target(plot_file, output_file):
        raise UsageLineError(f"--plot {plot_file} is also the output file")
    check_output_path(plot_file, what="plot file", inputs=(test_file, model_file))


def check_plot_model(model, model_file):
    """--plot, once the model is loaded: CommandError unless it is a binary or
    regression model (the kinds with a picture)."""
    if model.kind not in CURVE_KINDS:
        raise CommandError(f"--plot: {model_file} is {get_kind(model.kind).noun}; curves are "
                           "drawn for binary and regression models only")


def plot_prediction(kept, model, path, *, title=None):
    """Draw the predictions `kept` (linsvm.model.predict.Kept: labels, predictions,
    scores, probabilities) of `model` (binary or regression) to `path` (.png, .svg or
    .pdf) and return the matplotlib Figure.  DataError for another kind of model or an
    empty test set; MatplotlibMissing, ParameterError for another extension."""
    fmt = plot_format(path)
    require_matplotlib()
    from matplotlib.figure import Figure

    if model.kind not in CURVE_KINDS:
        raise DataError(f"--plot draws binary and regression models, not {model.kind} ones")
    if kept.y.size == 0:
        raise DataError("nothing to plot: the test set has no examples")
    panels = 1 if model.kind == "regression" else 2 + (kept.proba is not None)
    colorbar = model.kind == "regression" and kept.y.size > SCATTER_MAX     # hexagons' scale
    fig = Figure(figsize=(PANEL * panels + 0.4 + 1.2 * colorbar, PANEL + 0.3), dpi=100,
                 layout="constrained")
    axes = [fig.add_subplot(1, panels, i + 1) for i in range(panels)]
    if model.kind == "regression":
        _regression(axes[0], kept)
    else:
        _binary(axes, kept, model)
    if title is not None:
        fig.suptitle(title)
    save_figure(fig, path, fmt)
    return fig


def _binary(axes, kept, model):
    """ROC and precision-recall curves (and the reliability diagram) of a binary model."""
    classes = model.classes_
    pos = positive_class(classes)
    is_pos = kept.y == pos
    s = positive_scores(classes, kept.scores, pos)
    label = format_label(pos)
    n_pos, n = int(np.count_nonzero(is_pos)), is_pos.size
    if n_pos in (0, n):
        raise DataError(f"--plot: the test set has {'no' if n_pos == 0 else 'only'} examples of "
                        f"the positive class {label}: no ROC or precision-recall curve")
    point = curves.operating_point(is_pos, kept.pred == pos)
    rule = "largest probability" if kept.proba is not None else "decision value > 0"
    roc = curves.roc_points(is_pos, s)
    ax = axes[0]
    ax.plot(roc.x, roc.y, color="C0", linewidth=1.6,
            label=f"ROC curve (area = {roc_area(is_pos, s):.4f})")
    ax.plot([0, 1], [0, 1], "--", color="0.6", linewidth=1, label="chance")
    ax.plot([point.fpr], [point.tpr], "o", color="crimson", markeredgecolor="k", markersize=8,
            label=f"the model's predictions ({rule}):\nFPR {point.fpr:.3f}, TPR {point.tpr:.3f}",
            gid="operating-point")
    _unit_square(ax, "false positive rate", f"true positive rate (recall of class {label})")
    ax.set_title(f"ROC curve, positive class {label}")
    ax.legend(loc="lower right", fontsize="small")

    pr = curves.pr_points(is_pos, s)
    ax = axes[1]
    ax.plot(np.r_[0.0, pr.x], np.r_[pr.y[0], pr.y], color="C0", linewidth=1.6,
            label="precision-recall curve")
    ax.axhline(n_pos / n, linestyle="--", color="0.6", linewidth=1,
               label=f"fraction of class {label} ({n_pos / n:.3f})")
    ax.plot([point.recall], [point.precision], "o", color="crimson", markeredgecolor="k",
            markersize=8, label=f"the model's predictions: recall {point.recall:.3f}, "
                                f"precision {point.precision:.3f}", gid="operating-point")
    b = prbep(is_pos, s)
    ax.plot([b], [b], "*", color="gold", markeredgecolor="k", markersize=15,
            label=f"PRBEP (precision = recall) = {b:.3f}", gid="prbep")
    _unit_square(ax, f"recall of class {label}", f"precision of class {label}")
    ax.set_title(f"Precision-recall curve, positive class {label}")
    ax.legend(loc="lower left", fontsize="small")
    if kept.proba is not None:
        column = int(np.flatnonzero(classes == pos)[0])
        _reliability(axes[2], is_pos, kept.proba[:, column], label)


def _reliability(ax, is_pos, p, label):
    """The reliability diagram of the probabilities p of the positive class."""
    bins = curves.reliability_bins(is_pos, p)
    width = bins.edges[1] - bins.edges[0]
    twin = ax.twinx()
    twin.bar(bins.edges[bins.index], bins.counts, width=width, align="edge", color="C7", alpha=0.25,
             label="examples per bin")
    twin.set_ylim(0, 1.3 * bins.counts.max())        # the tallest bar stays below the legend
    twin.set_ylabel("examples per bin")
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    ax.plot([0, 1], [0, 1], "--", color="0.6", linewidth=1, label="perfectly calibrated")
    ax.plot(bins.predicted, bins.observed, "o-", color="C1", linewidth=1.6, markersize=5,
            label="test set, 10 equal bins", gid="reliability")
    _unit_square(ax, f"mean predicted probability of class {label}",
                 f"observed fraction of class {label}", square=False)   # twinx: no fixed aspect
    ax.set_title("Reliability diagram (-b 1)")
    handles, labels = ax.get_legend_handles_labels()
    bars, bar_labels = twin.get_legend_handles_labels()
    ax.legend(handles + bars, labels + bar_labels, loc="upper left", fontsize="small")


def _regression(ax, kept):
    """Predicted against true values, the line y = x, MSE and SCC in the title."""
    y, v = kept.y, np.asarray(kept.pred, dtype=np.float64)
    lo, hi = float(min(y.min(), v.min())), float(max(y.max(), v.max()))
    pad = 0.03 * (hi - lo) if hi > lo else 1.0
    if y.size > SCATTER_MAX:
        hexes = ax.hexbin(y, v, gridsize=80, bins="log", mincnt=1, cmap="viridis")
        ax.figure.colorbar(hexes, ax=ax, label="examples (log scale)")
    else:
        ax.plot(y, v, ".", color="C0", markersize=3, alpha=0.5 if y.size > 2000 else 0.8,
                rasterized=y.size > 2000, label=f"{y.size} test examples", gid="points")
    ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], "--", color="crimson", linewidth=1.2,
            label="predicted = true")
    ax.set_xlim(lo - pad, hi + pad)
    ax.set_ylim(lo - pad, hi + pad)
    ax.set_aspect("equal")
    ax.set_xlabel("true target")
    ax.set_ylabel("predicted value")
    mse, scc = regression_measures(y, v)
    ax.set_title(f"Predicted against true values\nMSE = {mse:.4g}, SCC = {scc:.4f}")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize="small")


def _unit_square(ax, xlabel, ylabel, square=True):
    """[0, 1] x [0, 1] (a small margin), labelled, gridded; square unless told not."""
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    if square:
        ax.set_aspect("equal")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(True, alpha=0.3)
