"""How many threads: the kernels' (`resolve_threads`) and the parallel units' (`resolve_jobs`).

Two levels of parallelism exist: the threads of one solve's sparse kernels
(OpenMP, `n_threads`, `-m`, `--n-threads`), and the units run side by side on
Python threads whose compiled solves release the GIL: the columns of a one-vs-rest
run and the folds of a cross-validation (`n_jobs`, `-j`).  Both defaults use the
free cores (`free_cores`: the CPUs the 1-minute load average leaves idle, at least 1),
except that units over AUTO_JOBS_MIN_NNZ non-zeros or more take every CPU the process
may run on (`usable_cpus`).  `n_jobs` has one meaning everywhere: a positive number is
that many threads, 0 or None the default.

A parallel region waits for its slowest thread, and on a busy machine one of them
may be descheduled for a time slice: two threads on a 2-core machine running one
other busy process were several times slower than one (less so since the OpenMP
runtime's threads spin less at a region's end, linsvm._openmp).  The free cores are 1 there,
so the default stays on one thread, and a machine without spare cores is never
slower than one thread.  Below AUTO_THREADS_MIN_NNZ non-zeros a solve is too short
for threads to pay even on an idle machine (a region per CG iteration costs more
than it shares out), so the default is one thread there too.  The units have no such
region: each is a whole solve dealt from a shared counter, so a descheduled thread
delays only its own unit, and on a busy machine more threads still win a larger share
of the cores -- once the units are long enough to pay for their threads, hence their
threshold (short units beside other processes, a test suite's, lose).
docs/threads.md has the measurements behind these rules.  The thread count never
changes a model (the sums over rows run in fixed row blocks, csrc/csr_passes.pxd).
"""
from __future__ import annotations

import math
import numbers
import os

from .._kernels import max_threads
from ..errors import ParameterError

AUTO_THREADS_MIN_NNZ = 4_000_000
AUTO_JOBS_MIN_NNZ = 1_000_000


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


def resolve_jobs(n_jobs, n_units, inner_threads=1, nnz=0):
    """Threads for `n_units` parallel units (one-vs-rest columns, folds) over data of
    `nnz` non-zeros: n_jobs if given (> 0), else the cores -- every usable CPU from
    AUTO_JOBS_MIN_NNZ non-zeros, the free cores below -- divided by the kernel threads
    each unit uses (inner_threads); never more than the units, at least 1."""
    n_jobs = check_jobs(n_jobs)
    if n_jobs:
        return int(max(1, min(n_jobs, n_units)))
    cores = usable_cpus() if nnz >= AUTO_JOBS_MIN_NNZ else free_cores()
    return int(max(1, min(n_units, cores // max(1, int(inner_threads or 1)))))


def usable_cpus():
    """The CPUs this process may run on (its affinity mask; os.cpu_count() where the
    platform has none), >= 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
