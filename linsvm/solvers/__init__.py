"""The solver registry: every `-s NAME` maps to one `SolverInfo`.

Three kinds of solver, by `SolverInfo.kind`:

binary:      fit(X, rows, t, cost, C, bias, tol, beta0, seed, log, state=None, **options)
                 -> (beta, stats)
    minimizing 1/2||w||^2 + C sum_k cost_k loss(t_k x_k.w) over the examples
    `rows` (int64 row numbers of the CSRBuffers X), labels t_k = +-1, relative
    cost factors cost_k >= 0 (class weight x sample weight), x including the
    bias feature when bias > 0.  Multi-class data runs one-vs-rest over it.
multiclass:  fit(X, rows, codes, n_classes, cost, C, bias, tol, W0, seed, log, state=None,
                 **options) -> (W (n_weights x n_classes), stats)
    codes: int32 class index of each example (in the model's class order).
ordinal:     fit(X, rows, codes, n_levels, cost, C, bias, tol, start, seed, log, qid=None,
                 state=None, **options) -> (w, thresholds (n_levels - 1, ascending), stats)
    codes: int32 rank index 0..n_levels-1 of each example (sorted label order);
    start: (w0, thresholds0) or None; qid: int64 query ids or None.

`rows` may be any subset of the rows of X (a cross-validation fold, a
random subset), in any order: t, cost and codes are PER POSITION in rows
(t[k] is the label of row rows[k]), never indexed by row number.
beta0 / W0 / start are warm starts (or None); `state` is what the same solver
returned as stats["_state"] on a previous call in this process (dual variables
for alpha-seeding, constraints for cutting planes), or None; `log` takes one
line of progress (or None).  stats: objective (linsvm's scaling), n_iter, and
anything else the solver reports; stats["_state"] is kept in memory only.
The weight arrays a solver returns are handed over to the model (train() keeps
a contiguous float64 array that owns its data without copying it), so a solver
must not keep or later change them, e.g. through its _state.

memory(n_rows, n_weights, n_classes, nnz, options) -> bytes estimates the work
arrays of one solve (weights, dense work vectors of the weight length, per-row
arrays), so that train() can refuse a solve that cannot fit before allocating
(see linsvm.memory); `work_memory` builds it from counts of vectors.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Option:
    """A solver-specific option: its type, default and one line of help."""

    type: type
    default: object
    help: str
    low: float | None = None      # inclusive bounds checked by train()
    high: float | None = None
    choices: tuple | None = None  # the values a str option may take (train() and the CLI check)


@dataclass(frozen=True)
class SolverInfo:
    """What the CLI and train() need to know about a solver."""

    name: str
    kind: str                 # "binary" (one-vs-rest beyond two classes)
    objective: str            # the objective minimized, in linsvm's -c scaling
    default_tol: float
    tol_meaning: str
    paper: str
    fit: Callable
    options: dict = field(default_factory=dict)
    loss: str = "l2"
    # LIBLINEAR's -s codes for the same problem: code -> the options it implies
    # (e.g. dcd: {1: {"loss": "l2"}, 3: {"loss": "l1"}}); see liblinear_code().
    liblinear_codes: dict = field(default_factory=dict)
    memory: Callable | None = None    # bytes of one solve's work arrays (module notes)


def work_memory(per_weight, per_row, per_class=0):
    """A SolverInfo.memory estimate: `per_weight` float64 vectors as long as the
    weight vector, `per_class` more per class (multi-class solvers keep one
    column per class), one more per thread beyond the first (private
    accumulators of X^T v), and `per_row` bytes per example."""
    def memory(n_rows, n_weights, n_classes, nnz, options):
        from ..problem import resolve_threads

        threads = resolve_threads(options.get("n_threads", 1), nnz)
        vectors = per_weight + per_class * n_classes + (threads if threads > 1 else 0)
        return 8 * n_weights * vectors + per_row * n_rows
    return memory


# The duality-gap guard of the dual methods (dcd, sdm-cs, sdm-ww): their paper's stop
# (a violation <= eps) counts only once the gap certifies the objective within GAP_GUARD;
# otherwise the solve continues from its alphas at eps * gap_guard_shrink(gap).
GAP_GUARD = 0.01
GAP_GUARD_MIN_EPS = 1e-12       # below this eps the guard gives up (and the solver warns)


def relative_gap(primal, dual):
    """(P - D) / |P|, the certified bound on the relative suboptimality (0 if P = 0 = D)."""
    gap = max(primal - dual, 0.0)
    return gap / abs(primal) if primal != 0 else (0.0 if gap == 0 else float("inf"))


def gap_guard_shrink(rel_gap):
    """Factor for eps when a stop's relative gap exceeds GAP_GUARD: the ratio of the two
    (the gap falls roughly in proportion to eps near the end), within [0.1, 0.5].
    Measured on SECTOR (C = 1): sdm-cs stopped at eps 0.1 with a certified gap of
    1.6% (objective 1510.0, 1.6% above the optimum 1486.6); continuing at eps / 10
    cost 6.8x the CPU time of the unguarded run (gap 0.02%), this rule 1.9x (eps 0.05,
    gap 0.56%, objective 1494.5; medians of 3 interleaved runs, 0.90 -> 1.75 s)."""
    return min(0.5, max(0.1, GAP_GUARD / rel_gap))


SOLVERS: dict[str, SolverInfo] = {}


def register(info: SolverInfo) -> SolverInfo:
    """Add a solver to the registry (names are unique)."""
    if info.name in SOLVERS:
        raise ValueError(f"solver {info.name!r} registered twice")
    SOLVERS[info.name] = info
    return info


def get_solver(name: str) -> SolverInfo:
    """Return the registered solver called `name`, or raise ParameterError."""
    info = SOLVERS.get(name) if isinstance(name, str) else None
    if info is None:
        from ..errors import ParameterError    # solvers/ is imported by errors' users

        raise ParameterError(f"unknown solver {name!r}; choose one of: {', '.join(sorted(SOLVERS))}")
    return info


# LIBLINEAR's -s codes whose problem linsvm does not solve: what they are there,
# and what linsvm offers instead.
LIBLINEAR_UNSUPPORTED = {
    0: ("L2-regularized logistic regression (primal)",
        "linsvm trains SVMs only: the closest are -s mfn (L2-loss SVM, LIBLINEAR -s 2) and "
        "-s mfn-huber (modified Huber loss)"),
    5: ("L1-regularized L2-loss SVM",
        "linsvm regularizes with the L2 norm only: -s mfn (L2-regularized L2-loss SVM, -s 2)"),
    6: ("L1-regularized logistic regression",
        "linsvm trains L2-regularized SVMs only: -s mfn (L2-loss SVM, -s 2)"),
    7: ("L2-regularized logistic regression (dual)",
        "linsvm trains SVMs only: -s dcd (L2-regularized SVM dual, -s 1 / -s 3) or -s mfn"),
    11: ("L2-regularized L2-loss support vector regression (primal)",
         "linsvm has no regression solvers; for ordered labels see -s mfn-ord or -s perf-ord"),
    12: ("L2-regularized L2-loss support vector regression (dual)",
         "linsvm has no regression solvers; for ordered labels see -s mfn-ord or -s perf-ord"),
    13: ("L2-regularized L1-loss support vector regression (dual)",
         "linsvm has no regression solvers; for ordered labels see -s mfn-ord or -s perf-ord"),
    21: ("one-class support vector machine (dual)",
         "linsvm has no outlier-detection solver; it trains two-class, multi-class and ordinal SVMs"),
}


def liblinear_code(code: int):
    """(solver name, implied options) for LIBLINEAR's `-s code`, or raise
    ParameterError saying what the code is in LIBLINEAR and what linsvm offers."""
    from ..errors import ParameterError

    for info in SOLVERS.values():
        if code in info.liblinear_codes:
            return info.name, dict(info.liblinear_codes[code])
    if code in LIBLINEAR_UNSUPPORTED:
        what, instead = LIBLINEAR_UNSUPPORTED[code]
        raise ParameterError(f"-s {code} is LIBLINEAR's {what}, which linsvm does not solve; {instead}")
    known = sorted(c for info in SOLVERS.values() for c in info.liblinear_codes)
    raise ParameterError(f"-s {code} is not a LIBLINEAR solver code; linsvm accepts the codes "
                         f"{', '.join(map(str, known))} or a solver name")


def _register_all():
    """Import every module of this package: each registers its solvers."""
    import importlib
    import pkgutil

    for mod in sorted(m.name for m in pkgutil.iter_modules(__path__)):
        importlib.import_module(f"{__name__}.{mod}")


_register_all()
