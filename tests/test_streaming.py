"""Data beyond memory: which solvers stream, the refusal of the others, what the process
can have under a memory cgroup, and a mapped file trained under a limit smaller than it."""
import os
import re
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from linsvm import cli, train
from linsvm.errors import DataError
from linsvm.io.svmlight import dump_svmlight
from linsvm.problem import CSRBuffers
from linsvm.problem.catalog import SOLVERS, streaming_solvers
from linsvm.runtime import memory

from conftest import REPO, child_env, invoke, random_problem

# The solvers that visit rows in random order (coordinate descent, LIBLINEAR's dual
# methods and L1 solvers): they need the data in memory.  Every other solver reads the
# rows in passes.
RANDOM_ACCESS = {"dcd", "sdm-cs", "sdm-ww", "cdn", "glmnet", "svr-dual", "oneclass", "lr-dual"}


def test_the_catalog_says_which_solvers_stream():
    assert {name for name, info in SOLVERS.items() if not info.streams} == RANDOM_ACCESS
    assert streaming_solvers("binary")[0] == "mfn"
    assert set(streaming_solvers("binary")) == {
        n for n, i in SOLVERS.items() if i.streams and i.kind == "binary"}
    assert set(streaming_solvers("multiclass")) == {
        n for n, i in SOLVERS.items() if i.streams and i.kind in ("binary", "multiclass")}
    assert streaming_solvers("regression") == ["svr"]
    assert streaming_solvers("oneclass") == []


@pytest.fixture
def tight(monkeypatch):
    """Every data set counts (no 64 MiB floor) and the process can have 100 bytes in all,
    while its work arrays still have room: only the data check can refuse."""
    monkeypatch.setattr(memory, "_SMALL", 0)
    monkeypatch.setattr(memory, "capacity", lambda: (100, "cgroup memory.max"))
    monkeypatch.setattr(memory, "available", lambda: (1 << 40, "MemAvailable"))


def _bytes_of(X):
    Xb = CSRBuffers(X)
    return memory.fmt_bytes(Xb.indptr.nbytes + Xb.indices.nbytes + Xb.data.nbytes)


@pytest.mark.parametrize("solver", sorted(RANDOM_ACCESS - {"oneclass", "svr-dual",
                                                              "sdm-cs", "sdm-ww"}))
def test_random_access_solver_refuses_data_beyond_memory(tight, solver):
    X, y = random_problem(50, 6)
    with pytest.raises(DataError) as e:
        train(X, y, solver=solver)
    assert str(e.value) == (
        f"data ({_bytes_of(X)}) exceed the memory this process can have (100 B, cgroup "
        f"memory.max): solver {solver} needs them in memory; use -s "
        f"{', '.join(streaming_solvers('binary'))}, which read the rows in passes")


def test_multiclass_refusal_offers_one_vs_rest_too(tight):
    X, y = random_problem(60, 6, n_classes=3)
    with pytest.raises(DataError, match=r"solver sdm-cs needs them in memory; use -s mfn, .*"
                                        r"softmax.*, which read the rows in passes$"):
        train(X, y, solver="sdm-cs")


def test_regression_refusal_offers_svr(tight):
    X, y = random_problem(40, 5)
    with pytest.raises(DataError, match=r"solver svr-dual needs them in memory; use -s svr, "):
        train(X, y * 2.5 + 0.3, solver="svr-dual")


def test_refusal_without_a_streaming_solver_says_so(tight):
    X, _ = random_problem(40, 5)
    with pytest.raises(DataError, match=r"solver oneclass needs them in memory, and no solver "
                                        r"that trains a one-class model reads the rows in passes"):
        train(X, np.ones(40), solver="oneclass")


@pytest.mark.parametrize("solver", sorted(n for n, i in SOLVERS.items() if i.streams
                                          and i.kind == "binary"))
def test_streaming_solvers_train_beyond_memory(tight, solver):
    """The same tight limit refuses no solver that reads the rows in passes."""
    X, y = random_problem(50, 6)
    model = train(X, y, solver=solver, **({"max_iter": 2} if solver.startswith("alm") else {}))
    assert model.weights.shape == (7, 1)


def test_refusal_is_one_line_at_the_cli(tight, tmp_path):
    X, y = random_problem(30, 4)
    dump_svmlight(X, y, str(tmp_path / "d.svm"))
    r = invoke(cli.cli, "train", "-q", "-s", "dcd", str(tmp_path / "d.svm"), str(tmp_path / "m"))
    assert r.exit_code == 1 and r.output.count("\n") == 1, r.output
    assert "solver dcd needs them in memory; use -s mfn" in r.output
    assert not (tmp_path / "m").exists()


def test_data_bytes_count_every_layout():
    X = CSRBuffers(sp.random(20, 9, density=0.5, format="csr", random_state=0))
    n = X.indptr.nbytes + X.indices.nbytes
    assert memory.data_bytes(X) == n + X.data.nbytes
    X.data = X.data.astype(np.float32)          # a float32 layout: 4 bytes a value
    assert memory.data_bytes(X) == n + 4 * X.nnz
    X.data = None                               # a pattern: no values
    assert memory.data_bytes(X) == n


# ------------------------------------------------------------------ cgroup files, faked

def _fake_cgroup(tmp_path, monkeypatch, version, levels):
    """A memory cgroup hierarchy under tmp_path that this process seems to live in:
    levels maps a path ("a", "a/b") to (limit or None, usage, file page cache)."""
    root = tmp_path / f"cg{version}"
    for rel, (limit, usage, cache) in levels.items():
        d = root / rel
        d.mkdir(parents=True, exist_ok=True)
        if version == 2:
            (d / "memory.max").write_text("max\n" if limit is None else f"{limit}\n")
            (d / "memory.current").write_text(f"{usage}\n")
            (d / "memory.stat").write_text(f"anon {usage - cache}\nfile {cache}\n"
                                           f"active_file {cache // 4}\n"
                                           f"inactive_file {cache - cache // 4}\n")
        else:
            (d / "memory.limit_in_bytes").write_text(
                f"{9223372036854771712 if limit is None else limit}\n")
            (d / "memory.usage_in_bytes").write_text(f"{usage}\n")
            (d / "memory.stat").write_text(f"cache {cache}\nrss {usage - cache}\n"
                                           f"total_active_file {cache // 2}\n"
                                           f"total_inactive_file {cache - cache // 2}\n")
    deepest = max(levels, key=len)
    proc = tmp_path / f"proc{version}"
    proc.write_text(f"4:memory:/{deepest}\n3:cpu:/\n0::/\n" if version == 1 else
                    f"0::/{deepest}\n")
    monkeypatch.setattr(memory, "_PROC_CGROUP", str(proc))
    monkeypatch.setattr(memory, "_V1_ROOT" if version == 1 else "_V2_ROOT", str(root))


@pytest.mark.parametrize("version", [1, 2])
def test_page_cache_leaves_the_work_arrays_room(tmp_path, monkeypatch, version):
    """A mapped data file fills the cgroup's usage with page cache: the room for work
    arrays is the limit less what is held besides (here 20 MB of 200 MB), not the limit
    less the usage (nearly none), and the limit itself is what the process can have."""
    _fake_cgroup(tmp_path, monkeypatch, version, {
        "job": (200_000_000, 198_000_000, 178_000_000),
        "job/run": (None, 198_000_000, 178_000_000)})
    limit_file = "memory.limit_in_bytes" if version == 1 else "memory.max"
    assert memory._cgroup_room() == (180_000_000, f"cgroup {limit_file}")
    have, where = memory.capacity()
    assert where == f"cgroup {limit_file}" and have == 200_000_000


@pytest.mark.parametrize("version", [1, 2])
def test_the_tightest_cgroup_on_the_way_up_counts(tmp_path, monkeypatch, version):
    _fake_cgroup(tmp_path, monkeypatch, version, {
        "a": (300_000_000, 250_000_000, 0),              # room 50 MB
        "a/b": (200_000_000, 40_000_000, 10_000_000)})   # room 170 MB
    limit_file = "memory.limit_in_bytes" if version == 1 else "memory.max"
    assert memory._cgroup_room() == (50_000_000, f"cgroup {limit_file}")
    assert memory.capacity() == (200_000_000, f"cgroup {limit_file}")


def test_no_cgroup_limit_leaves_ram_and_rlimits(tmp_path, monkeypatch):
    _fake_cgroup(tmp_path, monkeypatch, 2, {"a": (None, 5, 0)})
    assert memory._cgroup_room() == (None, None)
    have, where = memory.capacity()
    assert where in ("MemAvailable", "RLIMIT_AS", "RLIMIT_DATA") and have > 0


def test_mfn_is_not_refused_when_page_cache_fills_the_cgroup(tmp_path, monkeypatch):
    """check_solve's room for mfn's work arrays under a cgroup whose usage is mostly the
    page cache of a mapped file: no refusal (its work fits in what is not cache)."""
    _fake_cgroup(tmp_path, monkeypatch, 2, {
        "job": (300 << 20, (300 << 20) - 4096, 250 << 20)})
    monkeypatch.setattr(memory, "_read_kib", lambda path, key: None)   # the cgroup alone
    d = 1 << 20                 # 12 vectors of 8 MiB: more than _SMALL, less than the room
    X = sp.csr_matrix((np.ones(2), np.array([0, d - 1]), np.array([0, 1, 2])), shape=(2, d))
    model = train(X, [1, -1], solver="mfn")
    assert model.weights.shape == (d + 1, 1)
    _fake_cgroup(tmp_path, monkeypatch, 2, {"job": (300 << 20, (300 << 20) - 4096, 0)})
    with pytest.raises(DataError, match=r"training -s mfn needs about .* \(cgroup memory.max\)"):
        train(X, [1, -1], solver="mfn")       # without cache the cgroup is full: refused


# ------------------------------------------------------------------ under a real memory cgroup

CGROUP_RUN = REPO / "tools" / "cgroup_run.sh"

# The child: train on the CSR arrays of DIR mapped from their .npy files (np.load with
# mmap_mode="r", handed to CSRBuffers.trusted as they are), save the weights, and report
# the seconds of train() and the bytes the process read from storage; a DataError is its
# one line and exit status 3.
_CHILD = r"""
import sys, time
import numpy as np
from linsvm import train
from linsvm.errors import DataError
from linsvm.problem import CSRBuffers
d, solver, n_features, C = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
indptr, indices, data, y = (np.load(f"{d}/{name}.npy", mmap_mode="r")
                            for name in ("indptr", "indices", "data", "y"))
X = CSRBuffers.trusted(indptr, indices, data, n_features, n_features)
t0 = time.perf_counter()
try:
    model = train(X, y, solver=solver, C=C)
except DataError as e:
    print(e)
    sys.exit(3)
seconds = time.perf_counter() - t0
np.save(f"{d}/weights.npy", model.weights)
with open("/proc/self/io") as fh:
    read = dict(line.split(": ") for line in fh.read().splitlines())["read_bytes"]
print(seconds, read)
"""


def _limit_memory_or_skip():
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("a memory cgroup needs root")
    probe = subprocess.run(["sh", str(CGROUP_RUN), str(64 << 20), "true"],
                           capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        pytest.skip(f"no writable memory cgroup: {probe.stderr.strip()}")


def _mapped_problem(where, n=125_000, per_row=200, d=20_000, seed=0):
    """A float64 CSR problem of about 300 MB (n rows of per_row distinct sorted columns out
    of d) saved as .npy arrays in `where`, their page cache dropped (so that a reader under
    a memory cgroup is charged for every page it maps); returns the in-memory arrays."""
    rng = np.random.default_rng(seed)
    stride = (d - 1) // per_row                 # per_row distinct columns a row
    base = rng.integers(0, d, n)
    indices = np.sort(((base[:, None] + stride * np.arange(per_row)) % d).astype(np.int32),
                      axis=1).ravel()
    indptr = np.arange(0, n * per_row + 1, per_row, dtype=np.int64)
    data = rng.standard_normal(n * per_row)
    scores = sp.csr_matrix((data, indices, indptr), shape=(n, d)) @ rng.standard_normal(d)
    y = np.where(scores + 3.0 * rng.standard_normal(n) > 0, 1.0, -1.0)
    for name, a in (("indptr", indptr), ("indices", indices), ("data", data), ("y", y)):
        path = where / f"{name}.npy"
        np.save(path, a)
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    return indptr, indices, data, y


@pytest.mark.slow
@pytest.mark.subprocess
def test_mfn_streams_a_mapped_file_three_times_the_memory_limit(tmp_path):
    """mfn trains on about 300 MB of float64 CSR arrays mapped from .npy files, in a memory
    cgroup limited to 90 MB (tools/cgroup_run.sh): the rows stream from disk each pass (the
    process reads more than the data from storage) and the weights are those of the same
    training in memory, bit for bit.  dcd, which visits rows in random order, is refused
    under the same limit in one line naming the solvers that stream."""
    _limit_memory_or_skip()
    limit, C = 90_000_000, 0.001
    indptr, indices, data, y = _mapped_problem(tmp_path)
    size = indptr.nbytes + indices.nbytes + data.nbytes
    assert size > 3 * limit
    t0 = time.perf_counter()
    expected = train(CSRBuffers.trusted(indptr, indices, data, 20_000, 20_000), y,
                     solver="mfn", C=C).weights
    in_memory = time.perf_counter() - t0
    del indptr, indices, data
    env = child_env(OPENBLAS_NUM_THREADS="1")
    run = subprocess.run(["sh", str(CGROUP_RUN), str(limit), sys.executable, "-c", _CHILD,
                          str(tmp_path), "mfn", "20000", str(C)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    seconds, read = run.stdout.split()
    report = run.stderr.strip().splitlines()[-1]
    assert report.startswith("cgroup_run: ") and " oom_kills 0" in report, report
    peak = report.split(" peak ")[1].split()[0]
    assert peak == "n/a" or int(peak) <= limit
    assert int(read) > 2 * size                 # the data read again: it did not stay in memory
    assert np.array_equal(np.load(tmp_path / "weights.npy"), expected)
    print(f"mfn on {size} bytes: {in_memory:.2f} s in memory, {float(seconds):.2f} s under "
          f"{limit} bytes ({int(read)} bytes read; {report})")

    refused = subprocess.run(["sh", str(CGROUP_RUN), str(limit), sys.executable, "-c", _CHILD,
                              str(tmp_path), "dcd", "20000", str(C)],
                             capture_output=True, text=True, env=env, timeout=600)
    assert refused.returncode == 3, refused.stdout + refused.stderr
    line, = refused.stdout.splitlines()
    assert line.startswith("data (") and "exceed the memory this process can have" in line
    assert re.search(r"cgroup memory\.(max|limit_in_bytes)\): solver dcd needs them in memory; "
                     r"use -s mfn, ", line), line
