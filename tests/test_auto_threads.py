"""The default thread counts (linsvm.runtime.threads): the kernels' resolve_threads and
the units' resolve_jobs follow the free cores (CPUs less the 1-minute load average),
the kernels stay on one thread below AUTO_THREADS_MIN_NNZ non-zeros, and a given
count is kept.  The load and the CPU count are monkeypatched: no timing here."""
import os

import pytest

from linsvm.runtime import threads as T

BIG = T.AUTO_THREADS_MIN_NNZ


@pytest.fixture
def machine(monkeypatch):
    """machine(cpus, load, omp): os.cpu_count, os.getloadavg and the OpenMP threads."""
    def set_(cpus, load, omp=64):
        monkeypatch.setattr(os, "cpu_count", lambda: cpus)
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(cpus)), raising=False)
        monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
        monkeypatch.setattr(T, "max_threads", lambda: omp)
    return set_


@pytest.mark.parametrize("cpus, load, expected", [
    (2, 0.0, 2), (2, 0.4, 2), (2, 0.6, 1), (2, 1.0, 1), (2, 2.0, 1), (2, 9.0, 1),
    (8, 0.0, 8), (8, 2.4, 6), (8, 2.6, 5), (1, 0.0, 1)])
def test_auto_uses_the_free_cores_on_large_problems(machine, cpus, load, expected):
    """cpus - load rounded to the nearest core, at least 1: a machine whose cores are
    busy gets one thread (never slower than one)."""
    machine(cpus, load)
    assert T.free_cores() == expected
    for auto in (0, None):
        assert T.resolve_threads(auto, BIG) == expected
        assert T.resolve_threads(auto, 10 * BIG) == expected


def test_auto_is_one_thread_below_the_size_threshold(machine):
    machine(8, 0.0)
    assert T.resolve_threads(0, BIG - 1) == 1
    assert T.resolve_threads(0, 0) == 1
    assert T.resolve_threads(0, BIG) == 8


def test_auto_never_exceeds_the_openmp_threads(machine):
    machine(16, 0.0, omp=4)
    assert T.resolve_threads(0, BIG) == 4
    machine(16, 0.0, omp=1)            # a build without OpenMP
    assert T.resolve_threads(0, BIG) == 1


def test_a_given_count_is_kept_whatever_the_load_and_size(machine):
    machine(2, 5.0, omp=2)
    assert T.resolve_threads(3, 10) == 3
    assert T.resolve_threads(1, 10 * BIG) == 1


def test_unknown_load_counts_as_idle(machine, monkeypatch):
    machine(4, 0.0)

    def no_load():
        raise OSError("no load average")
    monkeypatch.setattr(os, "getloadavg", no_load)
    assert T.free_cores() == 4 and T.resolve_threads(0, BIG) == 4


def test_units_share_the_free_cores_with_their_kernel_threads(machine):
    """resolve_jobs, the -j policy the kernels' default now shares."""
    machine(8, 2.0)
    assert T.resolve_jobs(None, 100) == 6
    assert T.resolve_jobs(0, 100, inner_threads=2) == 3
    assert T.resolve_jobs(0, 2) == 2
    assert T.resolve_jobs(4, 100) == 4


@pytest.mark.parametrize("load", [0.0, 2.0, 9.0])
def test_units_over_large_data_take_every_usable_cpu_whatever_the_load(machine, load):
    """Columns and folds are whole solves without a shared parallel region: from
    AUTO_JOBS_MIN_NNZ non-zeros the load does not cut their threads (docs/threads.md);
    below it they keep the free cores."""
    machine(8, load)
    big = T.AUTO_JOBS_MIN_NNZ
    assert T.resolve_jobs(None, 100, nnz=big) == 8
    assert T.resolve_jobs(0, 100, inner_threads=2, nnz=big) == 4
    assert T.resolve_jobs(0, 3, nnz=big) == 3
    assert T.resolve_jobs(2, 100, nnz=big) == 2
    assert T.resolve_jobs(0, 100, nnz=big - 1) == T.free_cores()


def test_units_follow_the_affinity_mask(machine, monkeypatch):
    machine(8, 0.0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert T.resolve_jobs(0, 100, nnz=T.AUTO_JOBS_MIN_NNZ) == 3


@pytest.mark.subprocess
@pytest.mark.parametrize("given", [None, "777"])
def test_the_openmp_wait_is_set_before_the_kernels_load_unless_given(given):
    """linsvm._openmp: GOMP_SPINCOUNT is 10000 after `import linsvm` when the user has not
    set it, and the user's value when set; the package imports _openmp before anything
    else, so the variable is in the environment before the first compiled module (whose
    load starts libgomp, which reads it once)."""
    import subprocess
    import sys
    from pathlib import Path

    import linsvm
    from conftest import child_env

    env = child_env()
    env.pop("GOMP_SPINCOUNT", None)
    if given is not None:
        env["GOMP_SPINCOUNT"] = given
    code = "import os, linsvm, linsvm._kernels; print(os.environ['GOMP_SPINCOUNT'])"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.strip()
    assert out == (given or "10000")
    first = [line for line in Path(linsvm.__file__).read_text().splitlines()
             if line.startswith(("import ", "from "))][0]
    assert first.startswith("from . import _openmp")
