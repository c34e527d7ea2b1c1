"""How many threads: the kernels' (`resolve_threads`) and the parallel units' (`resolve_jobs`).

Two levels of parallelism exist: the threads of one solve's sparse kernels
(OpenMP, `n_threads`, `--n-threads`), and the units run side by side on Python
threads whose compiled solves release the GIL: the columns of a one-vs-rest run
and the folds of a cross-validation (`n_jobs`, `-j`).  `n_jobs` has one meaning
everywhere: a positive number is that many threads, 0 or None the free cores
(the CPUs the load average leaves idle).

A parallel region on a busy machine waits for its slowest, possibly descheduled,
thread, so the kernels stay on one thread below AUTO_THREADS_MIN_NNZ non-zeros
unless asked (docs/benchmarks.md has the measurements behind the threshold).
"""
from __future__ import annotations

import math
import numbers
import os

from .._kernels import max_threads
from ..errors import ParameterError

AUTO_THREADS_MIN_NNZ = 50_000_000


def resolve_threads(n_threads, nnz):
    """Threads for the kernels: n_threads if > 0, else all OpenMP threads for
    problems with at least AUTO_THREADS_MIN_NNZ (50M) non-zeros and 1 below that."""
    if n_threads and n_threads > 0:
        return int(n_threads)
    return max_threads() if nnz >= AUTO_THREADS_MIN_NNZ else 1


def check_jobs(n_jobs):
    """n_jobs as an int >= 0 (None: 0, the free cores), or ParameterError."""
    if n_jobs is None:
        return 0
    if not isinstance(n_jobs, numbers.Integral) or n_jobs < 0:
        raise ParameterError(f"n_jobs must be an integer >= 0 (0: the free cores), got {n_jobs!r}")
    return int(n_jobs)


def free_cores():
    """os.cpu_count() less the 1-minute load average (rounded to the nearest core), >= 1."""
    cpus = os.cpu_count() or 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return max(1, int(math.floor(cpus - load + 0.5)))


def resolve_jobs(n_jobs, n_units, inner_threads=1):
    """Threads for `n_units` parallel units (one-vs-rest columns, folds): n_jobs if
    given (> 0), else the free cores divided by the kernel threads each unit uses
    (inner_threads); never more than the units, at least 1."""
    n_jobs = check_jobs(n_jobs)
    if n_jobs:
        return int(max(1, min(n_jobs, n_units)))
    return int(max(1, min(n_units, free_cores() // max(1, int(inner_threads or 1)))))
