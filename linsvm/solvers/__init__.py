"""The solver registry: every `-s NAME` maps to one `SolverInfo`.

A binary solver implements

    fit(X: CSRBuffers, rows, t, cost, C, bias, tol, beta0, seed, log, **options)
        -> (beta, stats)

minimizing 1/2||w||^2 + C sum_k cost_k loss(t_k x_k.w) over the examples
`rows` (int64 row numbers of X), with labels t_k = +-1 and relative cost factors
cost_k >= 0 (class weight x sample weight), x including the bias feature when
bias > 0.  beta0 is a warm start (or None), `log` a function taking one line
of progress (or None).  It returns the weight vector and a dict of statistics
(objective in linsvm's scaling, n_iter, status, ...).  Multi-class data runs
one-vs-rest over a binary solver (linsvm.train).
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


SOLVERS: dict[str, SolverInfo] = {}


def register(info: SolverInfo) -> SolverInfo:
    """Add a solver to the registry (names are unique)."""
    if info.name in SOLVERS:
        raise ValueError(f"solver {info.name!r} registered twice")
    SOLVERS[info.name] = info
    return info


def get_solver(name: str) -> SolverInfo:
    """Return the registered solver called `name`, or raise ParameterError."""
    from ..errors import ParameterError

    try:
        return SOLVERS[name]
    except KeyError:
        raise ParameterError(
            f"unknown solver {name!r}; choose one of: {', '.join(sorted(SOLVERS))}"
        ) from None


from . import mfn  # noqa: E402,F401  (registers its solvers)
