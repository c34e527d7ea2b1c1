"""The solver registry: what a solver is (SolverInfo), its options (Option), its
memory estimate (WorkMemory), the checked settings of one solve (Params) and what a
solve returns (FitResult).

Every `-s NAME` maps to one `SolverInfo` in linsvm.problem.catalog.SOLVERS, declared
by its family's spec module linsvm/solvers/FAMILY_spec.py (the one home of the
family's defaults) and registered by the catalog.  Its `fit` keeps one contract
(docs/design.md, "The fit contract"):

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
dataclasses: every command imports them, and a NamedTuple is the cheaper of the two
to build at start-up (docs/design.md, "Names imported on first use").
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


# The help of every solver's n_threads: the scatters sum fixed row blocks in block
# order (csrc/csr_passes.pxd), so the count changes only the time (linsvm/runtime/threads.py).
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


# the CoCoA+ solvers' (dcd, sdm-cs, sdm-ww) option for distributed mode, one Option shared
# by their tables
LOCAL_EPOCHS = Option(int, 2, "distributed (MPI, CoCoA+): full loops of the local solver over "
                      "each rank's block per round, between two allreduces of the change in w",
                      1, 1_000_000)


class WorkMemory(NamedTuple):
    """SolverInfo.memory, every solver's estimate of the bytes of one solve's work arrays:

        memory(n_rows, n_weights, n_classes, nnz, options, threads) =
            8 n_weights (per_weight + k per_class + T (per_thread + k per_thread_class))
            + n_rows (per_row + k per_class_row) + nnz per_nnz
            + 8 (K_1 - 1) n_weights scatters + 8 (K_k - 1) n_weights k class_scatters
            + max_iter per_iteration + fixed

    k = n_classes; T = threads when threads > 1, else 0 (a kernel thread beyond the first
    keeps private accumulators of X^T v: per_thread weight-length vectors, per_thread_class
    more per class); max_iter the options' (1000 when they leave it out).  per_weight and
    per_class count float64 vectors as long as the weight vector (a multi-class solver
    keeps one column per class), per_row and per_class_row bytes per example -- the
    solve's own arrays and the per-example inputs train() builds for it after the check
    (the labels t or class codes; the row list and the costs exist before it) --, per_nnz
    bytes per non-zero (a copy of the data), per_iteration bytes per iteration (a trace).
    K_w is the number of row blocks of csr_passes.pxd's deterministic scatter into w doubles
    (scatter_blocks: 1 + 12 nnz / (192 w), at most 64 and n_rows / 64, 1 below 256 rows);
    scatters and class_scatters count the scratch buffers of K_w - 1 accumulators a solve
    keeps, for scatters into the weight vector and into all k columns at once.
    threads: the solve's kernel threads (linsvm.runtime.threads.resolve_threads); default
    the n_threads option when positive, else 1."""

    per_weight: int
    per_row: int
    per_class: int = 0
    per_class_row: int = 0
    per_thread: int = 1
    per_thread_class: int = 0
    per_nnz: int = 0
    per_iteration: int = 0
    fixed: int = 0
    scatters: int = 1
    class_scatters: int = 0

    def __call__(self, n_rows, n_weights, n_classes, nnz, options, threads=None):
        if threads is None:
            threads = max(1, int(options.get("n_threads") or 1))
        extra = threads if threads > 1 else 0
        vectors = (self.per_weight + self.per_class * n_classes
                   + extra * (self.per_thread + self.per_thread_class * n_classes))
        need = 8 * n_weights * vectors + (self.per_row + self.per_class_row * n_classes) * n_rows
        if self.per_iteration:
            need += self.per_iteration * options.get("max_iter", 1000)
        for count, width in ((self.scatters, n_weights), (self.class_scatters, n_weights * n_classes)):
            if count:
                need += 8 * count * (scatter_blocks(n_rows, width, nnz) - 1) * width
        return need + self.per_nnz * nnz + self.fixed


def scatter_blocks(n_rows, width, nnz):
    """The row blocks of csr_passes.pxd's deterministic scatter over n_rows rows holding nnz
    non-zeros into `width` accumulators (its blocks_for at 12 bytes per non-zero)."""
    if n_rows < 256 or width <= 0:
        return 1
    k = min(1.0 + 12.0 * nnz / (192.0 * width), 64.0, float(n_rows // 64))
    return int(k) if k >= 1.0 else 1


class LiblinearCode(NamedTuple):
    """One of LIBLINEAR's `-s` codes a solver answers to (SolverInfo.liblinear_codes maps
    the code to it): the solver_type name LIBLINEAR's model files carry for the code
    (linsvm.model.format_liblinear.SOLVER_TYPES is built from these), the options the
    code implies (dcd: -s 1 is loss l2, -s 3 loss l1; another value given with the code
    is a contradiction), and `defaults`: the options whose default under the code is
    LIBLINEAR's problem where the solver's own default is linsvm's improvement on it
    (svr: -s 11 regularizes the bias weight, -s svr frees it); a value given with the
    code overrides them."""

    solver_type: str
    implied: Mapping = _EMPTY
    defaults: Mapping = _EMPTY


class SolverInfo(NamedTuple):
    """One solver: what the CLI and train() need to know about it (read-only: `_replace`
    makes a changed copy).  A family's module linsvm/solvers/FAMILY_spec.py declares its
    solvers' SolverInfos; linsvm.problem.catalog registers them (docs/design.md, "Adding
    a solver")."""

    name: str
    kind: str                 # the problem it solves: a name of linsvm.problem.kinds.KINDS
    objective: str            # the objective minimized, in linsvm's -c scaling
    default_tol: float
    tol_meaning: str
    paper: str
    fit: Callable             # the contract above; a LazyFunction in the catalog
    options: Mapping = _EMPTY
    loss: str = "l2"          # the loss, as the model's params record it
    penalty: str = "l2"       # the regularizer: "l2" (1/2||w||^2) or "l1" (||w||_1)
    # LIBLINEAR's -s codes for the same problem: code -> LiblinearCode (its solver_type,
    # the options it implies), e.g. dcd: {1: LiblinearCode("L2R_L2LOSS_SVC_DUAL",
    # {"loss": "l2"}), 3: ...}; see linsvm.problem.catalog.liblinear_code.
    liblinear_codes: Mapping = _EMPTY
    memory: WorkMemory | None = None      # bytes of one solve's work arrays
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
    # the solver's family: the FAMILY of the spec module that declares it, set by the
    # catalog when it registers the module; the command line's help groups options by it
    family: str = ""
    # the bias feature's value when -B is not given (LIBLINEAR's -B; <= 0: none)
    default_bias: float = 1.0
    # the decision values are log-odds: the model gives class probabilities without
    # calibration (linsvm.model.logistic_proba; -b 1 fits no sigmoids)
    probabilities: bool = False
    # the solver reads the rows in whole passes, in the order of the row list (a Newton
    # method's mat-vecs, a cutting plane's scores): it trains on data mapped from a file
    # larger than memory, the pages streaming from disk each pass.  False: it visits rows
    # in random order (coordinate descent), and train() refuses data that cannot fit in
    # memory (linsvm.runtime.memory.check_in_memory; docs/streaming.md)
    streams: bool = False

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
