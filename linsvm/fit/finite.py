"""The one check of a solve's answer before it becomes a model: finite weights, offset
and thresholds, or an error saying what is not finite and why.

A solver whose iterates overflow returns inf or nan.  What drives them out of
floating point is the scale of the problem: the feature values (their squares and
products enter every Newton or coordinate step), C, and the example costs (class
weight x instance weight), each of which multiplies the loss terms.  The error names
the solver, the part of the answer that is not finite, the scales at fault (those
beyond SCALE_LIMIT or below its inverse; all three when none is) and what to change.
Finite weights can still overflow a decision value x.w on a training row
(check_finite_scores), which then names that example.  The command line puts the
training file in front (linsvm.cli.runs.labels_located).
"""
from __future__ import annotations

import math

import numpy as np

from .. import _kernels
from .._data import DataView
from ..errors import DataError
from ..problem.csr import max_abs_value

__all__ = ["NonFiniteSolutionError", "check_finite_scores", "check_finite_solution", "SCALE_LIMIT"]

# A scale beyond this (or below its inverse) is named as a cause: its square, or its
# product with the others, is near the end of double precision (about 1.8e308).
SCALE_LIMIT = 1e50


class NonFiniteSolutionError(DataError):
    """The weights, the offset or the thresholds a solver returned are not finite: its
    iterates overflowed with these feature values, this C or these example costs."""


def _extreme(value):
    return value > SCALE_LIMIT or 0 < value < 1.0 / SCALE_LIMIT


def _largest_feature(X, rows):
    """max |x_ij| over X's stored values (CSRBuffers; every row, a bound for those of
    `rows`), 0 without stored values or rows."""
    return max_abs_value(X) if rows.shape[0] else 0.0


def _cost_range(base, class_weight):
    """The smallest and largest positive example cost (instance x class weight)."""
    positive = np.asarray(base)[np.asarray(base) > 0]
    if positive.size == 0:
        return 1.0, 1.0
    lo, hi = float(positive.min()), float(positive.max())
    if class_weight is not None:
        cw = np.asarray(class_weight, dtype=np.float64)
        cw = cw[cw > 0]
        if cw.size:
            lo, hi = lo * float(cw.min()), hi * float(cw.max())
    return lo, hi


def _causes(C, X, rows, base, class_weight, bias):
    """(causes, advice) for the message: each extreme scale with what to do about it."""
    x_max = max(_largest_feature(X, rows), bias if bias > 0 else 0.0)
    with np.errstate(over="ignore", under="ignore"):
        c_min, c_max = _cost_range(base, class_weight)
    causes, advice = [], []
    if _extreme(x_max):
        causes.append(f"feature values up to {x_max:.3g}")
        advice.append("scale the features (linsvm scale)")
    if _extreme(C):
        causes.append(f"C = {C:g}")
        advice.append("use a C nearer 1")
    if _extreme(c_max) or _extreme(c_min):
        c = c_max if _extreme(c_max) else c_min
        causes.append(f"an example cost (class x instance weight) of {c:g}")
        advice.append("use instance and class weights nearer 1")
    if not causes:
        causes = [f"feature values up to {x_max:.3g}, C = {C:g} and example costs up to {c_max:g}"]
        advice = ["scale the features (linsvm scale) or use a C nearer 1"]
    return causes, advice


def check_finite_solution(name, C, X, rows, base, class_weight, bias, W, results):
    """Raise NonFiniteSolutionError unless the weights W (n_weights x n_columns) and
    every FitResult's offset and thresholds in `results` are finite.  name: the
    solver; C, X (CSRBuffers), rows, base (the instance weights per position of rows),
    class_weight (per class code, or None) and bias: the problem it solved, for the
    causes (module notes)."""
    parts = []
    if not _kernels.all_finite(np.ascontiguousarray(W, dtype=np.float64)):
        parts.append("weights")
    if any(not math.isfinite(float(r.offset)) for r in results):
        parts.append("offset (rho)" if name == "oneclass" else "offset")
    if any(r.thresholds is not None and not np.isfinite(np.asarray(r.thresholds)).all()
           for r in results):
        parts.append("thresholds")
    if not parts:
        return
    causes, advice = _causes(float(C), X, np.asarray(rows), base, class_weight, float(bias))
    verb = "is" if parts in (["offset"], ["offset (rho)"]) else "are"
    raise NonFiniteSolutionError(
        f"{name}: the {' and '.join(parts)} of the solution {verb} not finite (inf or nan): the "
        f"solver's iterates overflowed with {' and '.join(causes)}; {' or '.join(advice)}")


def check_finite_scores(name, X, rows, bias, W, norm):
    """Raise NonFiniteSolutionError for finite weights W (check_finite_solution passed)
    whose decision value x.w on a training row (rows of CSRBuffers X) is not: sums over
    the data overflowed in the solve.  norm: the largest ||x|| (problem.checks.max_row_norm).
    |x.w| <= ||x|| ||w|| <= ||x|| sqrt(n_weights) max |w_j|, so only when that bound
    overflows are the scores computed (one pass per column) and checked."""
    top = max(float(W.max()), -float(W.min())) if W.size else 0.0   # no W-sized temporary
    if np.isfinite(norm * np.sqrt(W.shape[0]) * top):
        return
    view = DataView(X, bias, rows)
    for j in range(W.shape[1]):
        scores = _kernels.csr_matvec(view, np.ascontiguousarray(W[:, j]))
        bad = np.flatnonzero(~np.isfinite(scores))
        if bad.size:
            raise NonFiniteSolutionError(
                f"{name}'s decision value on training example {int(rows[bad[0]]) + 1} is not "
                f"finite: sums over the data overflow double precision (feature norms up to "
                f"{norm:.3g}): rescale the features, e.g. with linsvm scale, or lower -c and "
                "the weights")
