"""The solver registry and the one contract every solver keeps.

Every `-s NAME` maps to one `SolverInfo`, whose `fit` is

    fit(problem, params, start, state, log) -> FitResult

* problem (linsvm.problem.Problem): the CSR buffers X, the examples `rows` (int64 row
  numbers of X; a cross-validation fold or a subset, in any order), per position the
  targets and the relative costs c_k >= 0 (class weight x sample weight), bias (LIBLINEAR's
  -B, <= 0: none) and n_weights = n_features + (bias > 0).  By SolverInfo.kind:
  binary      problem.t: labels +-1; the solver minimizes 1/2||w||^2 + C sum_k c_k
              loss(t_k x_k.w), x including the bias feature.  train() runs one-vs-rest over
              it when there are more than two classes.
  multiclass  problem.codes: int32 class index of each example (the model's class order),
              problem.n_classes classes.
  ordinal     problem.codes: int32 rank index 0..n_classes-1 (sorted label order),
              problem.qid: int64 query ids or None.
  Everything a kernel indexes was checked when the problem was built.
* params (Params): C, tol, seed and the solver's options, checked once against the
  registry (make_params); the registry's Option is the only place a default lives.
* start: a warm start or None: binary: n_weights values; multiclass: n_weights x
  n_classes; ordinal: (w0, thresholds0).
* state: what the same solver returned as FitResult.state on a previous call in this
  process (dual variables for alpha-seeding, constraints for cutting planes), or None.
* log: a function taking one line of progress, or None.

On several MPI ranks problem.comm is a linsvm.collective.Collective and the problem
holds this rank's block of the examples; only solvers registered with `distributed`
set are called so (train() refuses the others, with their `serial_only` note).  They
return the same weights on every rank.

FitResult carries the weights (binary and ordinal: n_weights values; multiclass: n_weights
x n_classes), the ordinal thresholds (ascending), stats (objective in linsvm's scaling,
n_iter, and anything else the solver reports), the solve's warning (with `converged`
False when it is about the accuracy: an iteration cap, a stall) and the state.  The
weight arrays are handed over to the model (train() keeps a contiguous float64 array
that owns its data without copying it), so a solver must not keep or later change them,
e.g. through its state.

memory(n_rows, n_weights, n_classes, nnz, options) -> bytes estimates the work
arrays of one solve (weights, dense work vectors of the weight length, per-row
arrays), so that train() can refuse a solve that cannot fit before allocating
(see linsvm.memory); `work_memory` builds it from counts of vectors.

Adding a solver: one module in this package that calls register(SolverInfo(...)) (it is
imported by _register_all), one compiled core in csrc/ (added to setup.py), one test file.
"""
from __future__ import annotations

import math
import types
from dataclasses import dataclass, field
from typing import Callable, Mapping


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
    # On several MPI ranks (problem.comm set): "rows" -- the same iterates over row blocks,
    # one allreduce per inner iteration (the serial objective to rounding); "cocoa" --
    # CoCoA+ rounds of the local dual solver (the serial objective to the tolerance,
    # certified by the global duality gap); None -- serial only: train() refuses with
    # `serial_only`, which names the solver to use instead.
    distributed: str | None = None
    serial_only: str = ""
    # options that act only on several MPI ranks (e.g. CoCoA+'s local_epochs): a serial
    # model's params leave them out
    distributed_options: tuple = ()


@dataclass(frozen=True)
class Params:
    """The checked settings of one solve: C > 0 (LIBLINEAR's -c), tol > 0 (-e), seed, and
    every option of the solver (read-only; params["max_iter"]).  Build with make_params."""

    solver: str
    C: float
    tol: float
    seed: int
    options: Mapping = field(default_factory=dict)

    def __getitem__(self, name):
        return self.options[name]

    def with_tol(self, tol):
        """The same settings at another tolerance (a solver tightening its own eps)."""
        return Params(self.solver, self.C, float(tol), self.seed, self.options)


@dataclass
class FitResult:
    """What a solver returns (module docstring)."""

    weights: object
    stats: dict
    thresholds: object = None
    warning: str | None = None
    converged: bool = True
    state: object = None


def option_error(name, detail, others=None):
    """ParameterError "option NAME DETAIL" that remembers the option's name
    (`.option`), the rest (`.detail`) and other option names it lists
    (`.others`), so the command line can name them by their flags (--max-iter)
    instead of their Python keywords (max_iter)."""
    from ..errors import ParameterError

    listed = f" (valid: {', '.join(others) or 'none'})" if others is not None else ""
    err = ParameterError(f"option {name} {detail}{listed}")
    err.option, err.detail, err.others = name, detail, others
    return err


def check_options(info, options):
    """The solver's options with defaults filled in (from its Option table), types
    coerced, ranges and choices checked; ParameterError (option_error) otherwise."""
    unknown = set(options) - set(info.options)
    if unknown:
        raise option_error(sorted(unknown)[0], f"does not apply to solver {info.name!r}",
                           sorted(info.options))
    out = {}
    for name, opt in info.options.items():
        value = options.get(name, opt.default)
        if value is not None:
            try:
                value = opt.type(value)
            except (TypeError, ValueError):
                raise option_error(name, f"must be {opt.type.__name__}, got {value!r}") from None
            if opt.type in (int, float):
                if not math.isfinite(value) or (opt.low is not None and value < opt.low) or (
                        opt.high is not None and value > opt.high):
                    lo = "-inf" if opt.low is None else f"{opt.low:g}"
                    hi = "inf" if opt.high is None else f"{opt.high:g}"
                    raise option_error(name, f"= {value!r} is out of range [{lo}, {hi}]")
            if opt.choices is not None:
                if isinstance(value, str) and value.lower() in opt.choices:
                    value = value.lower()
                if value not in opt.choices:
                    raise option_error(name, f"= {value!r}: choose one of {', '.join(opt.choices)}")
        out[name] = value
    return out


_DEFAULT_OPTIONS: dict = {}     # solver name -> its checked defaults (read-only mappings)


def make_params(solver, C=1.0, tol=None, seed=0, options=None):
    """Params for `solver` (a name or SolverInfo): C and tol checked (> 0, finite; tol
    None: the solver's default_tol), seed an integer, the options by check_options."""
    from ..errors import ParameterError
    from ..problem import check_positive

    info = solver if isinstance(solver, SolverInfo) else get_solver(solver)
    C = check_positive("C", C)
    tol = info.default_tol if tol is None else check_positive("tolerance", tol)
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ParameterError(f"seed must be an integer, got {seed!r}") from None
    if options:
        opts = types.MappingProxyType(check_options(info, options))
    else:
        opts = _DEFAULT_OPTIONS.get(info.name)
        if opts is None:
            opts = _DEFAULT_OPTIONS[info.name] = types.MappingProxyType(check_options(info, {}))
    return Params(info.name, C, tol, seed, opts)


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
    5: ("L1-regularized L2-loss SVM",
        "linsvm regularizes with the L2 norm only: -s mfn (L2-regularized L2-loss SVM, -s 2)"),
    6: ("L1-regularized logistic regression",
        "linsvm regularizes with the L2 norm only: -s lr (L2-regularized logistic regression, -s 0)"),
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
