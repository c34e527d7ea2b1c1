"""How many threads: the kernels' (`resolve_threads`) and the parallel units' (`resolve_jobs`).

Two levels of parallelism exist: the threads of one solve's sparse kernels
(OpenMP, `n_threads`, `-m`, `--n-threads`), and the units run side by side on
Python threads whose compiled solves release the GIL: the columns of a one-vs-rest
run and the folds of a cross-validation (`n_jobs`, `-j`).  Both defaults follow one
policy: use the free cores (`free_cores`: the CPUs the 1-minute load average leaves
idle, at least 1).  `n_jobs` has one meaning everywhere: a positive number is that
many threads, 0 or None the free cores.

A parallel region waits for its slowest thread, and on a busy machine one of them
may be descheduled for a time slice: two threads on a 2-core machine running one
other busy process were several times slower than one.  The free cores are 1 there,
so the default stays on one thread, and a machine without spare cores is never
slower than one thread.  Below AUTO_THREADS_MIN_NNZ non-zeros a solve is too short
for threads to pay even on an idle machine (a region per CG iteration costs more
than it shares out), so the default is one thread there too.
docs/threads.md has the measurements behind both rules.  The thread count never
changes a model (the sums over rows run in fixed row blocks, csrc/csr_passes.pxd).
"""
from __future__ import annotations

import math
import numbers
import os

from .._kernels import max_threads
from ..errors import ParameterError

AUTO_THREADS_MIN_NNZ = 4_000_000


def resolve_threads(n_threads, nnz):
    """Threads for the kernels of a solve over nnz non-zeros: n_threads if > 0, else
    (auto, 0 or None) 1 below AUTO_THREADS_MIN_NNZ non-zeros and the free cores
    (free_cores) above, never more than the OpenMP threads (max_threads)."""
    if n_threads and n_threads > 0:
        return int(n_threads)
    if nnz < AUTO_THREADS_MIN_NNZ:
        return 1
    return max(1, min(max_threads(), free_cores()))


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
