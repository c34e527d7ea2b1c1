"""The command line under a real MPI launcher: `mpiexec -n 2` and `-n 3`.

Needs the `mpi` extra (mpi4py and an MPI; `pip install ".[mpi]"` brings MPICH's
wheel with its mpiexec); skipped with a reason without it.  Each test is one
launch (about a second each) of `linsvm train|cv` through a small driver that
first makes sure a binary solver runs distributed (tests/gathering_solver.py:
the real one once a solver declares it, else a stand-in for mfn that gathers the
rows, so that what is tested here is the plumbing: reading shares, rank 0
printing and writing, errors).  The reference is the serial program on the same
data: the same classes and predictions, the objective within 1e-9 (relative),
the same error message.
"""
import gzip
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import gathering_solver
from conftest import child_env, mpiexec, random_problem
from linsvm import train
from linsvm.cv import cross_validate
from linsvm.io.svmlight import dump_svmlight, load_svmlight
from linsvm.distributed import byte_ranges
from linsvm.errors import DataError
from linsvm.model import load_model
from linsvm.solvers import SOLVERS

TESTS = Path(__file__).resolve().parent

DRIVER = textwrap.dedent("""
    import os, sys
    sys.path.insert(0, TESTS_DIR)
    import gathering_solver
    name = gathering_solver.install()
    fail = os.environ.get("LINSVM_TEST_FAIL_RANK")
    if fail is not None:                    # a fault on one rank, after training started
        from linsvm.solvers import SOLVERS
        info = SOLVERS[name]

        def failing(problem, params, start, state, log):
            if problem.comm is not None and problem.comm.rank == int(fail):
                raise RuntimeError("injected fault")
            return info.fit(problem, params, start, state, log)
        SOLVERS[name] = info._replace(fit=failing)
    serial = os.environ.get("LINSVM_TEST_SERIAL_ONLY")
    if serial is not None:                  # a solver registered without a distributed mode
        from linsvm.solvers import SOLVERS
        SOLVERS[serial] = SOLVERS[serial]._replace(distributed=None,
                                              serial_only="use mfn")
    from linsvm.cli import main
    sys.argv[0] = "linsvm"
    try:
        main()
    except SystemExit as e:                 # each rank's exit status, for the test
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        from linsvm.distributed import mpi_launch
        with open(f"exit-{mpi_launch().rank}.txt", "w") as fh:
            fh.write(str(code))
        raise
""")




def launch(tmp_path, n_ranks, *args, stdin=None, env=None):
    """`mpiexec -n n_ranks linsvm ARGS` through the driver; the CompletedProcess."""
    exe = mpiexec()
    driver = tmp_path / "driver.py"
    driver.write_text(DRIVER.replace("TESTS_DIR", repr(str(TESTS))))
    return subprocess.run([exe, "-n", str(n_ranks), sys.executable, str(driver), *map(str, args)],
                          input=stdin, capture_output=True, timeout=120, cwd=tmp_path,
                          env=child_env(**(env or {})))


def solver_name():
    return gathering_solver.distributed_binary_solver() or "mfn"


def data_set(tmp_path, n=240, seed=3):
    """A three-class file whose last rows hold a fourth class (on the last rank only)."""
    X, y = random_problem(n_samples=n, n_features=20, n_classes=3, seed=seed)
    y[-n // 10:] = 4.0
    path = tmp_path / "train.svm"
    dump_svmlight(X, y, str(path))
    return path, X, y


def assert_same_model(model_path, X, y, **options):
    """The model file written under mpiexec is the serial model on (X, y)."""
    got = load_model(str(model_path))
    ref = train(X, y, solver=solver_name(), **options)
    assert np.array_equal(got.classes_, ref.classes_)
    assert np.array_equal(got.predict(X), ref.predict(X))
    f, f_ref = got.stats["objective"], ref.stats["objective"]
    assert abs(f - f_ref) <= 1e-9 * abs(f_ref)
    return got


def exit_codes(tmp_path, n_ranks):
    """Each rank's exit status as the driver recorded it."""
    return [int((tmp_path / f"exit-{r}.txt").read_text()) for r in range(n_ranks)]


def stderr_lines(proc):
    return [line for line in proc.stderr.decode().splitlines() if line.strip()]


@pytest.mark.mpi
def test_train_on_a_plain_file_equals_serial(tmp_path):
    """Each of 2 ranks reads its byte range; class 4 lives on rank 1 only."""
    path, X, y = data_set(tmp_path)
    proc = launch(tmp_path, 2, "train", "-s", solver_name(), "-c", "0.5", path, "m.model")
    assert proc.returncode == 0, proc.stderr.decode()
    assert exit_codes(tmp_path, 2) == [0, 0]
    text = path.read_bytes()
    first_4 = text.index(b"\n4 ") + 1
    assert byte_ranges(len(text), 2)[1][0] < first_4       # class 4 is on rank 1 only
    got = assert_same_model(tmp_path / "m.model", X, y, C=0.5)
    assert 4.0 in got.classes_.tolist()
    lines = stderr_lines(proc)
    assert sum("on 2 MPI ranks" in line for line in lines) == 1          # rank 0 alone
    summary = [line for line in lines if line.startswith("2 MPI ranks:")]
    assert len(summary) == 1 and "communicating" in summary[0]
    assert got.stats["ranks"] == 2


@pytest.mark.mpi
def test_train_on_shards_with_an_empty_and_a_gzip_shard(tmp_path):
    path, X, y = data_set(tmp_path, n=150, seed=4)
    lines = path.read_bytes().splitlines(keepends=True)
    d = tmp_path / "parts"
    d.mkdir()
    (d / "part-0.svm").write_bytes(b"".join(lines[:40]))
    (d / "part-1.svm").write_bytes(b"# nothing here\n")
    (d / "part-2.svm.gz").write_bytes(gzip.compress(b"".join(lines[40:100])))
    (d / "part-3.svm").write_bytes(b"".join(lines[100:]))
    proc = launch(tmp_path, 3, "train", "-q", "-s", solver_name(), "--shards",
                  f"{d}/part-*", "m.model")
    assert proc.returncode == 0, proc.stderr.decode()
    assert stderr_lines(proc) == []
    assert_same_model(tmp_path / "m.model", X, y)


@pytest.mark.mpi
def test_train_from_stdin_is_scattered_by_rank_0(tmp_path):
    """MPICH's mpiexec forwards standard input to rank 0 only, and only while it
    keeps up: a small input (large ones are better given as files)."""
    path, X, y = data_set(tmp_path, n=60, seed=5)
    proc = launch(tmp_path, 3, "train", "-s", solver_name(), "-", "m.model",
                  stdin=path.read_bytes())
    assert proc.returncode == 0, proc.stderr.decode()
    notes = [line for line in stderr_lines(proc) if line.startswith("note:")]
    assert len(notes) == 1 and "read by rank 0" in notes[0]
    assert_same_model(tmp_path / "m.model", X, y)


@pytest.mark.mpi
def test_malformed_line_in_the_second_half(tmp_path):
    """Every rank exits non-zero; one message naming the file and the global line;
    no model written."""
    path, X, y = data_set(tmp_path)
    lines = path.read_bytes().splitlines(keepends=True)
    k = int(len(lines) * 0.8)
    lines[k] = lines[k].rstrip(b"\n") + b" 1:1\n"                  # indices not increasing
    path.write_bytes(b"".join(lines))
    with pytest.raises(DataError) as ref:
        load_svmlight(str(path))
    assert f":{k + 1}: " in str(ref.value)
    proc = launch(tmp_path, 3, "train", "-s", solver_name(), path, "m.model")
    assert proc.returncode != 0
    assert exit_codes(tmp_path, 3) == [1, 1, 1]
    assert stderr_lines(proc) == [f"linsvm train: error: {ref.value}"]
    assert not (tmp_path / "m.model").exists()
    assert [p.name for p in tmp_path.iterdir() if "model" in p.name] == []


@pytest.mark.mpi
def test_serial_only_solver_is_refused_once(tmp_path):
    # every registered solver runs distributed today: the driver registers one without
    # (LINSVM_TEST_SERIAL_ONLY), as a solver added later without a distributed mode is
    serial_only = [info.name for info in SOLVERS.values() if info.distributed is None]
    name = serial_only[0] if serial_only else "perf"
    path, _, _ = data_set(tmp_path, n=60)
    proc = launch(tmp_path, 2, "train", "-s", name, path, "m.model",
                  env={"LINSVM_TEST_SERIAL_ONLY": name})
    assert proc.returncode != 0
    assert exit_codes(tmp_path, 2) == [1, 1]
    lines = stderr_lines(proc)
    assert len(lines) == 1 and f"solver {name} does not run on several MPI ranks" in lines[0]
    assert not (tmp_path / "m.model").exists()


@pytest.mark.mpi
def test_cv_equals_serial_cv(tmp_path):
    path, X, y = data_set(tmp_path, n=200, seed=6)
    proc = launch(tmp_path, 3, "cv", "-q", "-s", solver_name(), "-c", "0.25,1", "-v", "4",
                  "--format", "tsv", path)
    assert proc.returncode == 0, proc.stderr.decode()
    rows = [line.split("\t") for line in proc.stdout.decode().splitlines()]
    assert rows[0][:3] == ["C", "p", "accuracy"] and len(rows) == 3        # rank 0 alone
    ref = cross_validate(X, y, solver=solver_name(), Cs=[0.25, 1.0], n_folds=4)
    for row, pt in zip(rows[1:], ref.points):
        assert float(row[0]) == pt.C
        assert float(row[2]) == pytest.approx(pt.mean, abs=1e-12)
        assert float(row[3]) == pytest.approx(pt.std, abs=1e-12)


@pytest.mark.mpi
def test_fault_on_one_rank_ends_the_job(tmp_path):
    path, _, _ = data_set(tmp_path, n=60)
    proc = launch(tmp_path, 2, "train", "-s", solver_name(), path, "m.model",
                  env={"LINSVM_TEST_FAIL_RANK": "1"})
    assert proc.returncode != 0
    err = proc.stderr.decode()
    assert "linsvm: error: MPI rank 1: " in err and "RuntimeError: injected fault" in err
    assert not (tmp_path / "m.model").exists()


@pytest.mark.mpi
@pytest.mark.parametrize("solver", ["dcd", "sdm-cs"])
def test_serial_finish_runs_on_rank_0_while_the_others_wait(tmp_path, solver):
    """3 real ranks gather their rows and alphas on rank 0, which finishes serially while
    the others wait on a polled broadcast (linsvm.solvers.gather): dcd after 2 rounds
    left uncertified by --max-iter 3, sdm-cs at once (ten classes over 400 sparse
    features: a round's W outweighs the data).  The job ends certified, at the serial
    optimum within the gap, and every rank exits 0."""
    if solver == "dcd":
        X, y = random_problem(n_samples=240, n_features=15, seed=11)
        options, rounds = ["--max-iter", "3"], 2
    else:
        X, y = random_problem(n_samples=240, n_features=400, density=0.02, n_classes=10,
                              seed=11)
        options, rounds = [], 0
        assert 8 * 401 * 10 > 12 * X.nnz
    path = tmp_path / "train.svm"
    dump_svmlight(X, y, str(path))
    proc = launch(tmp_path, 3, "train", "-s", solver, "-e", "0.001", *options, path, "m.model")
    assert proc.returncode == 0, proc.stderr.decode()
    assert exit_codes(tmp_path, 3) == [0, 0, 0]
    st = load_model(str(tmp_path / "m.model")).stats
    assert st["ranks"] == 3 and st["rounds"] == rounds
    assert ("serial_loops" if solver == "dcd" else "serial_full_loops") in st  # the finish ran
    f, d = st["objective"], st["dual_objective"]
    assert 0.0 <= f - d <= 1e-3 * f
    ref = train(X, y, solver=solver, tol=1e-6, max_iter=100000)
    f_ref = ref.stats["objective"]
    assert d - 1e-9 * f_ref <= f_ref <= f * (1 + 1e-12)


@pytest.mark.mpi
def test_a_refused_label_names_the_files_line_on_every_rank(tmp_path):
    """On two MPI ranks (each its share of the plain file, or rank 0 scattering a
    compressed one), every rank raises the error with the file's own line."""
    from conftest import child_env, mpiexec
    from test_fuzz_input import _label_files
    exe = mpiexec()
    _label_files(tmp_path)
    for name in ("frac.svm", "frac.svm.gz"):
        r = subprocess.run([exe, "-n", "2", sys.executable, "-m", "linsvm", "train", "-q", name, "m"],
                           cwd=tmp_path, env=child_env(), capture_output=True, timeout=300)
        err = [x for x in r.stderr.decode().splitlines()
               if x.strip() and not x.startswith("note:")]
        assert r.returncode != 0 and len(err) == 1, r.stderr
        assert err[0].startswith(f"linsvm train: error: {name}:9: label 0.25 is not an integer"), err


@pytest.mark.mpi
@pytest.mark.subprocess
@pytest.mark.slow
def test_ctrl_c_during_a_distributed_solve_prints_interrupted_on_every_rank(tmp_path):
    # Ctrl-C to the process group once the solve is under way (its first progress line:
    # the ranks are in their collectives then); -e 1e-300 and no iteration cap keep it
    # running until the signal.  The job must end with `interrupted` (one line per rank
    # that ran its handler before the launcher ended it: a rank waiting in MPI for one
    # that has ended runs none) and status 130 -- not a KeyboardInterrupt raised inside
    # a collective (a traceback, "Exception ignored", an MPI abort or MPICH's "Message
    # truncated" from ranks out of step)
    import os
    import signal

    exe = mpiexec()
    X, y = random_problem(n_samples=3000, n_features=40, seed=6)
    data = tmp_path / "train.svm"
    dump_svmlight(X, y, str(data))
    model = tmp_path / "m"
    proc = subprocess.Popen([exe, "-n", "2", sys.executable, "-m", "linsvm", "train", "-s", "11",
                             "-e", "1e-300", "--max-iter", "100000000", str(data), str(model)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=tmp_path, env=child_env(), start_new_session=True)
    lines = []
    try:
        for line in proc.stderr:
            lines.append(line)
            if line.startswith("svr iter"):
                break
        assert lines and lines[-1].startswith("svr iter"), "".join(lines)
        os.killpg(proc.pid, signal.SIGINT)
        _, rest = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    err = "".join(lines) + rest
    ours = [ln for ln in err.splitlines() if not ln.startswith(("svr iter", "read ", "[mpiexec@"))]
    assert proc.returncode == 130, err
    assert ours in (["interrupted"], ["interrupted", "interrupted"]), err
    assert not model.exists() and not [p for p in tmp_path.iterdir() if p.name.startswith(".m.")]
