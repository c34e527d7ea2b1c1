"""The solver registry: what a solver is (SolverInfo), its options (Option), the
checked settings of one solve (Params) and what a solve returns (FitResult).

Every `-s NAME` maps to one `SolverInfo` in the registry SOLVERS, declared in
linsvm.problem.catalog (the one home of every solver's defaults).  Its `fit`
keeps one contract (docs/design.md, "The fit contract"):

    fit(problem, params, start, state, log) -> FitResult

* problem (linsvm.problem.Problem): the CSR buffers X, the examples `rows`, per
  position the targets and relative costs c_k >= 0, bias (LIBLINEAR's -B, <= 0:
  none) and n_weights; what it holds besides depends on SolverInfo.kind
  (linsvm.problem.kinds).  Everything a kernel indexes was checked when the problem
  was built.
* params (Params): C, tol, seed and the solver's options, checked once (make_params).
* start: a warm start or None (binary: n_weights values; multiclass: n_weights x
  n_classes; ordinal: (w0, thresholds0)).
* state: what the same solver returned as FitResult.state on a previous call in this
  process (dual variables for alpha-seeding, constraints for cutting planes), or None.
* log: a function taking one line of progress, or None.

On several MPI ranks problem.comm is a linsvm.runtime.collective.Collective and the
problem holds this rank's block of the examples; only solvers registered with
`distributed` set are called so.  They return the same weights on every rank.

FitResult carries the weights, the ordinal thresholds, an offset added to every
decision value (one-class: -rho; svr-dual: the mean target it took out), stats (objective in linsvm's
scaling, n_iter, and anything else the solver reports), the solve's warning (with
`converged` False when it is about the accuracy) and the state.  The weight arrays
are handed over to the model without copying, so a solver must not keep or later
change them.

This module is pure Python: the command line reads it (help, option checks) without
importing NumPy or any solver; a solver's module is imported when it first runs
(its `fit` is a linsvm._lazy.LazyFunction).  Its records are NamedTuples, not
dataclasses: every command imports them, and a NamedTuple is the cheaper of the two to
build at start-up (docs/design.md and docs/benchmarks.md, "Start-up", have the cost).
"""
from __future__ import annotations

import math
from types import MappingProxyType
from typing import Callable, Mapping, NamedTuple

from ..errors import ParameterError

_EMPTY = MappingProxyType({})     # the default of a read-only mapping field


class Option(NamedTuple):
    """A solver-specific option: its type, default and one line of help."""

    type: type
    default: object
    help: str
    low: float | None = None      # inclusive bounds checked by train()
    high: float | None = None
    choices: tuple | None = None  # the values a str option may take (train() and the CLI check)


# The help of every solver's n_threads: the scatters sum
# fixed row blocks in block order (csrc/csr.pxd), so the count changes only the time
# (linsvm/runtime/threads.py).
N_THREADS_HELP = ("threads for the sparse kernels, -m (0 = auto: the free cores, CPUs less "
                  "the load average, from 4M non-zeros, else 1); the model is the same bit "
                  "for bit for every count")

# LIBLINEAR's -R for the solvers that free the bias as LIBLINEAR does (lr, cdn, glmnet),
# one Option shared by their tables
REGULARIZE_BIAS = Option(bool, True, "regularize the bias weight like the others (LIBLINEAR's "
                                     "default); off: a free intercept (LIBLINEAR's -R; needs "
                                     "-B > 0)")

# the CGLS arrangement of a distributed Newton solve (mfn's family, svr, lr: csrc/cgls.pxd,
# linsvm/runtime/wsplit.py), one Option shared by their tables
WEIGHT_SPLIT = Option(str, "auto", "on several MPI ranks: on = each weight has one owner and a "
                      "CGLS iteration exchanges only the weights several ranks' rows share (for "
                      "many features, few non-zeros per row); off = every rank keeps the whole "
                      "weight vector, one allreduce of it per iteration; auto = on when 8 bytes "
                      "per weight exceed a quarter of 12 bytes per non-zero of a rank's share "
                      "of the rows and the busiest rank's exchanges send at most half of an "
                      "allreduce's bytes",
                      choices=("auto", "on", "off"))


class SolverInfo(NamedTuple):
    """What the CLI and train() need to know about a solver (read-only: `_replace` makes
    a changed copy)."""

    name: str
    kind: str                 # the problem it solves: a name of linsvm.problem.kinds.KINDS
    objective: str            # the objective minimized, in linsvm's -c scaling
    default_tol: float
    tol_meaning: str
    paper: str
    fit: Callable             # the contract above; a LazyFunction in the catalog
    options: Mapping = _EMPTY
    loss: str = "l2"
    penalty: str = "l2"       # the regularizer: "l2" (1/2||w||^2) or "l1" (||w||_1)
    # LIBLINEAR's -s codes for the same problem: code -> the options it implies
    # (e.g. dcd: {1: {"loss": "l2"}, 3: {"loss": "l1"}}); see liblinear_code().
    liblinear_codes: Mapping = _EMPTY
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
    # the solver's family (its module in linsvm.solvers: "mfn" for the whole finite
    # Newton family); the command line's help groups options by it
    family: str = ""
    # the bias feature's value when -B is not given (LIBLINEAR's -B; <= 0: none)
    default_bias: float = 1.0

    def refuse_distributed(self):
        """The one-line ParameterError for a solver that does not run on several MPI
        ranks (distributed None), naming what to use; nothing for the others."""
        if self.distributed is None:
            raise ParameterError(f"solver {self.name} does not run on several MPI ranks; "
                                 f"{self.serial_only or 'use mfn (or run it without mpiexec)'}")


class Params(NamedTuple):
    """The checked settings of one solve: C > 0 (LIBLINEAR's -c), tol > 0 (-e), seed, and
    every option of the solver (read-only; params["max_iter"]).  Build with make_params."""

    solver: str
    C: float
    tol: float
    seed: int
    options: Mapping = _EMPTY

    def __getitem__(self, name):
        """The option `name` (params["max_iter"]); a Params is not indexed by position."""
        return self.options[name]

    def with_tol(self, tol):
        """The same settings at another tolerance (a solver tightening its own eps)."""
        return self._replace(tol=float(tol))


class FitResult:
    """What a solver returns (module docstring): weights, stats, thresholds (ordinal),
    offset (added to every decision value; one-class: -rho), warning, converged, state.
    Its fields may be changed after it is built."""

    __slots__ = ("weights", "stats", "thresholds", "offset", "warning", "converged", "state")

    def __init__(self, weights, stats, thresholds=None, offset=0.0, warning=None,
                 converged=True, state=None):
        self.weights, self.stats, self.thresholds, self.offset = weights, stats, thresholds, offset
        self.warning, self.converged, self.state = warning, converged, state

    def __repr__(self):
        return (f"FitResult(stats={self.stats!r}, warning={self.warning!r}, "
                f"converged={self.converged!r})")


def option_error(name, detail, others=None):
    """ParameterError "option NAME DETAIL" that remembers the option's name
    (`.option`), the rest (`.detail`) and other option names it lists
    (`.others`), so the command line can name them by their flags (--max-iter)
    instead of their Python keywords (max_iter)."""
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
                if not math.isfinite(value):
                    raise option_error(name, f"= {value!r} must be a finite number")
                if (opt.low is not None and value < opt.low) or (
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


class WorkMemory(NamedTuple):
    """A SolverInfo.memory estimate: `per_weight` float64 vectors as long as the
    weight vector, `per_class` more per class (multi-class solvers keep one
    column per class), one more per kernel thread beyond the first (private
    accumulators of X^T v), and `per_row` bytes per example.  Called as
    memory(n_rows, n_weights, n_classes, nnz, options, threads) -> bytes, threads
    the solve's kernel threads (linsvm.runtime.threads.resolve_threads; default:
    the n_threads option when positive, else 1)."""

    per_weight: int
    per_row: int
    per_class: int = 0

    def __call__(self, n_rows, n_weights, n_classes, nnz, options, threads=None):
        if threads is None:
            threads = max(1, int(options.get("n_threads") or 1))
        vectors = self.per_weight + self.per_class * n_classes + (threads if threads > 1 else 0)
        return 8 * n_weights * vectors + self.per_row * n_rows


def work_memory(per_weight, per_row, per_class=0):
    """WorkMemory(per_weight, per_row, per_class)."""
    return WorkMemory(per_weight, per_row, per_class)


def check_positive(name, value, allow_zero=False):
    """Return float(value) if it is finite and > 0 (>= 0 with allow_zero), else raise
    ParameterError."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ParameterError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, got {value!r}")
    return v
