"""The parameter search of `linsvm-train -C` (LIBLINEAR's `train -C`): cross-validation
along a doubling grid of C, warm-started from small C up, and the best point.

The grid starts at C0, the largest power of two at most 1 / (n max_i ||x_i||^2) (x
with the bias feature), or at most half that for a classifier of the squared hinge
(LIBLINEAR's calc_start_C for -s 2, whose loss has twice the slope): below it every
fitted margin stays under one, and the models are all alike.  It doubles up to 1024
for classifiers and ordinal solvers and 2^20 for regression (LIBLINEAR's caps); a C
given with -c starts it instead.
For a regression solver the tube width p is searched too (LIBLINEAR searches p from
its largest useful value down in 20 steps): p = i max_p / 20, i = 19 .. 0, with max_p
LIBLINEAR's largest absolute target, or, for a problem with an intercept (a free bias
weight, or centred targets: linsvm's defaults for -s svr and -s svr-dual), the largest
absolute deviation of a target from the targets' mean (then deviations, not raw
targets, set the scale); from -p down when -p is given.  Each point's value is pooled
over the folds as LIBLINEAR counts it (every example's out-of-fold prediction), not a
mean of folds.

The points are computed in LIBLINEAR's order (the largest p first, C ascending) and
each is reported (`log`, LIBLINEAR's `log2c=...` line) as soon as its folds are done,
so a search stopped early has printed the points it computed.  As LIBLINEAR's does, a
C path ends early once five points in a row leave every fold's weights where they were
(UNCHANGED_POINTS; cross_validate's stop_unchanged): the warm starts already meet the
stop, so larger C would give the same models and the same value (separable data, whose
loss has vanished, reach that point well before 1024).  Points whose models are all
zero (an L1 model below the C of its first non-zero weight) do not count: there the
weights stay put only until the path reaches that C.  `max_C_reached` says
when the best C is the largest of the grid (LIBLINEAR's `WARNING: maximum C
reached.`, MAX_C_WARNING).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import ParameterError
from ..problem.catalog import get_solver
from ..problem.csr import CSRBuffers, max_abs_value, row_sq_norms, to_scipy
from ..problem.kinds import KINDS
from ..runtime.collective import collective_of
from .cv import cross_validate

__all__ = ["search_C", "SearchResult", "check_C_search", "start_C", "P_STEPS",
           "max_C_reached", "MAX_C_WARNING"]

MAX_C = 1024.0
MIN_C_EXPONENT = -1022           # start_C's first C is a normal number or refused
MAX_C_REGRESSION = 2.0 ** 20
P_STEPS = 20
UNCHANGED_POINTS = 5             # LIBLINEAR's: a C path ends after 5 points of unmoved weights
MAX_C_WARNING = "WARNING: maximum C reached."       # LIBLINEAR's line


@dataclass
class SearchResult:
    """The grid (C, p, pooled value) in the order searched, the metric, and the best."""

    metric: str
    higher_is_better: bool
    points: list = field(default_factory=list)

    @property
    def best(self):
        """The best point (C, p, value): ties go to the smaller C, then the larger p;
        an undefined value is never best unless every one is."""
        sign = -1.0 if self.higher_is_better else 1.0
        return min(self.points, key=lambda pt: (math.isnan(pt[2]), sign * pt[2] if not
                                                math.isnan(pt[2]) else 0.0, pt[0], -(pt[1] or 0.0)))


def start_C(X, bias, coll=None, squared=False):
    """C0 of the module notes for the rows of X (CSRBuffers or scipy) and bias; squared:
    a classifier of the squared hinge (half the other C0)."""
    Xs = X if isinstance(X, CSRBuffers) else to_scipy(X).tocsr()
    sq = row_sq_norms(Xs) + (bias * bias if bias and bias > 0 else 0.0)
    n, top = sq.shape[0], float(sq.max()) if sq.size else 0.0
    if coll is not None:
        n, top = int(coll.sum_scalars(n)[0]), float(max(coll.comm.allgather(top)))
    if n == 0 or top <= 0:
        return 1.0
    exponent = -math.log2(2 if squared else 1) - math.log2(n) - math.log2(top)
    if not exponent >= MIN_C_EXPONENT:      # also top = inf: squares beyond the float range
        largest = max_abs_value(Xs)
        raise ParameterError(f"-C: with feature values up to {largest:.3g} (squared row norms up "
                             f"to {top:.3g}) the search would start below the smallest normal C "
                             "(2^-1022); scale the features (linsvm scale)")
    return 2.0 ** math.floor(exponent)


def check_C_search(solver, what="-C"):
    """Raise ParameterError when `solver`'s objective has no cost C (a one-class
    solver: nu takes its place), so that a search over C (`what`: -C, a -c grid)
    would train the same model at every point."""
    info = get_solver(solver)
    if not KINDS[info.kind].uses_C:
        nu = " (nu, -n, plays its part)" if "nu" in info.options else ""
        raise ParameterError(f"{what}: {info.name} has no C in its objective{nu}, so a search "
                             "over C would train the same model at every point")


def search_C(X, y, solver="mfn", n_folds=5, C0=None, p0=None, seed=0, n_jobs=1, comm=None,
             log=None, progress=None, **train_options):
    """Cross-validate `solver` along the grid of the module notes; a SearchResult whose
    values are pooled over all examples (and all MPI ranks with comm).  C0: the first C
    (None: start_C); p0: a regression solver's largest p (None: from the targets).
    log(line) receives LIBLINEAR's line per point.  train_options go to linsvm.train."""
    check_C_search(solver)
    info = get_solver(solver)
    kind = KINDS[info.kind]
    coll = collective_of(comm)
    Xb = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    y = np.asarray(y, dtype=np.float64)
    bias = train_options.get("bias")
    regression = info.kind == "regression"
    squared = not regression and train_options.get("loss", info.loss) == "l2"
    if C0 is None:
        C0 = start_C(Xb, info.default_bias if bias is None else bias, coll, squared)
    C0 = float(C0)
    if not C0 > 0:
        raise ParameterError(f"the first C of the search must be > 0, got {C0!r}")
    cap = MAX_C_REGRESSION if regression else MAX_C
    Cs = [C0 * 2.0 ** k for k in range(int(math.floor(math.log2(cap / C0))) + 1)] if C0 <= cap else [C0]
    ps = _p_grid(y, p0, coll, _has_intercept(info, train_options)) if regression else None
    y_all = _all(coll, y)
    classes = np.unique(y_all)
    metric = kind.metrics[0]
    out = SearchResult(metric=metric, higher_is_better=True)

    def on_point(pt):                   # in computing order: p descending, C ascending
        pred = _all(coll, pt.predictions)
        value = kind.metric_value(metric, classes, y_all, pred, pred)
        out.points.append((pt.C, pt.p, float(value)))
        pt.predictions = None           # pooled: not kept for the whole grid
        if log is not None:
            log(grid_line(metric, pt.C, pt.p, value))

    res = cross_validate(Xb, y, solver=solver, Cs=Cs, ps=ps, n_folds=n_folds, seed=seed,
                         n_jobs=n_jobs, comm=comm, keep_predictions=True, progress=progress,
                         metric=metric, on_point=on_point, stop_unchanged=UNCHANGED_POINTS,
                         **train_options)
    out.metric, out.higher_is_better = res.metric, res.higher_is_better
    return out


def max_C_reached(result):
    """Whether the best point's C is the largest C of a grid of several (the best C may
    lie beyond the search: LIBLINEAR's MAX_C_WARNING)."""
    Cs = {pt[0] for pt in result.points}
    return len(Cs) > 1 and result.best[0] == max(Cs)


def _has_intercept(info, options):
    """Whether the regression problem of solver `info` with `options` has an intercept:
    a free bias weight (regularize_bias off, with a bias feature) or centred targets."""
    def value(name):
        return options.get(name, info.options[name].default) if name in info.options else None
    bias = options.get("bias")
    bias = info.default_bias if bias is None else bias
    return (value("regularize_bias") is False and bias > 0) or value("center_targets") is True


def _all(coll, a):
    """a over all ranks in rank order (a itself when serial)."""
    return a if coll is None else np.concatenate(coll.comm.allgather(a))


def _p_grid(y, p0, coll, intercept):
    """The tube widths of a regression search, largest first (module notes); intercept:
    the problem has one (max_p from the deviations from the mean target)."""
    if p0 is None:
        y_all = _all(coll, y)
        centre = y_all.mean() if intercept and y_all.size else 0.0
        p0 = float(np.max(np.abs(y_all - centre))) if y_all.size else 1.0
    return [i * p0 / P_STEPS for i in range(P_STEPS - 1, -1, -1)]


def grid_line(metric, C, p, value):
    """LIBLINEAR's line for one grid point (log2 C, and p for regression)."""
    if p is None:
        shown = f"rate={100 * value:g}" if metric == "accuracy" else f"{metric}={value:g}"
        return f"log2c={math.log2(C):7.2f}\t{shown}"
    return f"log2c={math.log2(C):7.2f}\tp={p:7.2f}\tMean squared error={value:g}"


def best_line(result):
    """LIBLINEAR's last line: `Best C = ...  CV accuracy = ...%` (or its regression form)."""
    C, p, value = result.best
    if p is not None:
        return f"Best C = {C:g} Best p = {p:g}  CV MSE = {value:g}"
    if result.metric == "accuracy":
        return f"Best C = {C:g}  CV accuracy = {100 * value:g}%"
    return f"Best C = {C:g}  CV {result.metric} = {value:g}"
