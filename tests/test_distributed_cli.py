"""What a user touches to run on MPI, without MPI: ranks simulated as threads
(tests/fakempi.py) and launches simulated by environment variables.

* the launch rule (linsvm.distributed.mpi_launch / world_comm): which variables
  make a rank, that nothing imports mpi4py for the serial program, the one-line
  errors when mpi4py is missing or the launch is inconsistent;
* shards (read_shards): the files' assignment to ranks, and the union of the
  ranks' rows equal to the serial reader's result on the concatenated files, bit
  for bit, with empty and compressed shards; errors naming the shard and line;
* rank 0 reading and scattering (scatter_svmlight) equal to the serial reader;
* cross-validation folds that do not depend on the number of ranks, and
  cross_validate(comm=...) equal to the serial one;
* the command line's --shards and its refusals under a launcher.

tests/test_mpiexec.py runs the command line itself under mpiexec.
"""
import bz2
import gzip
import sys

import numpy as np
import pytest

import gathering_solver
from conftest import assert_one_line_error, invoke, random_problem
from fakempi import run_ranks
from linsvm import distributed
from linsvm.cli import cli, cv_cmd, train_cmd
from linsvm.cv import cross_validate, make_folds
from linsvm.io.svmlight import dump_svmlight, load_svmlight_buffers
from linsvm.distributed import (assign_shards, mpi_launch, read_shards, read_training_share,
                                scatter_svmlight, shard_paths, world_comm)
from linsvm.errors import DataError, ParameterError
from linsvm.model import load_model


def bits(a):
    return np.ascontiguousarray(a).view(np.uint8)


def ok(results):
    for r in results:
        assert not isinstance(r, BaseException), repr(r)
    return results


def assert_union_is(shares, X, y, qid=None):
    """The shares in rank order hold exactly the rows of (X, y, qid), bit for bit,
    and agree on the counts, offsets and width."""
    ok(shares)
    P = len(shares)
    assert [s.rank for s in shares] == list(range(P))
    assert all(s.n_ranks == P and s.n_rows_total == X.n_rows for s in shares)
    assert all(s.n_features == s.X.n_features == X.n_features for s in shares)
    assert [s.row_offset for s in shares] == \
        np.cumsum([0] + [s.X.n_rows for s in shares[:-1]]).tolist()
    nnz = np.cumsum([0] + [s.X.nnz for s in shares[:-1]])
    indptr = np.concatenate([[0]] + [s.X.indptr[1:] + o for s, o in zip(shares, nnz)])
    assert np.array_equal(indptr, X.indptr)
    for name in ("indices", "data"):
        got = np.concatenate([getattr(s.X, name) for s in shares])
        assert got.dtype == getattr(X, name).dtype
        assert np.array_equal(bits(got), bits(getattr(X, name)))
    assert np.array_equal(bits(np.concatenate([s.y for s in shares])), bits(y))
    if qid is not None:
        assert np.array_equal(np.concatenate([s.qid for s in shares]), qid)
    _, first = np.unique(y, return_index=True)
    for s in shares:
        assert np.array_equal(s.labels, y[np.sort(first)])


# ---------------------------------------------------------------------------
# the launch
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("env, want", [
    ({}, None),
    ({"PMI_RANK": "1", "PMI_SIZE": "4"}, (1, 4)),                           # MPICH's Hydra
    ({"OMPI_COMM_WORLD_RANK": "2", "OMPI_COMM_WORLD_SIZE": "3"}, (2, 3)),   # Open MPI
    ({"MV2_COMM_WORLD_RANK": "0", "MV2_COMM_WORLD_SIZE": "2"}, (0, 2)),     # MVAPICH
    ({"PMIX_RANK": "3", "SLURM_STEP_NUM_TASKS": "8", "SLURM_PROCID": "3"}, (3, 8)),
    ({"PMIX_RANK": "0"}, (0, None)),                                         # size unknown
    ({"SLURM_PROCID": "0", "SLURM_NTASKS": "4"}, None),     # a batch script: not a launch
    ({"PMI_RANK": "x"}, None),
])
def test_launch_rule(env, want):
    launch = mpi_launch(env)
    assert (None if launch is None else (launch.rank, launch.size)) == want


def test_serial_and_one_rank_launch_never_import_mpi4py(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)        # importing it would now fail
    assert world_comm({}) is None
    assert world_comm({"PMI_RANK": "0", "PMI_SIZE": "1"}) is None
    assert world_comm({"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"}) is None


def test_launch_of_several_ranks_without_mpi4py_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ParameterError) as err:
        world_comm({"PMI_RANK": "1", "PMI_SIZE": "3"})
    assert 'pip install "linsvm[mpi]"' in str(err.value)
    assert "3 MPI ranks" in str(err.value) and "\n" not in str(err.value)


def test_srun_without_an_mpi_plugin_is_refused():
    with pytest.raises(ParameterError, match="srun --mpi=pmix"):
        world_comm({"SLURM_PROCID": "1", "SLURM_STEP_NUM_TASKS": "4"})
    assert world_comm({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "1"}) is None


@pytest.mark.parametrize("command", [["predict", "a", "b", "c"], ["synth", "x.svm"],
                                     ["renumber", "a", "b", "c"]])
def test_one_process_commands_refuse_a_launch_of_several_ranks(tmp_path, command):
    res = invoke(cli, *command, env={"PMI_RANK": "0", "PMI_SIZE": "2"})
    assert_one_line_error(res, "runs on one process", "without mpiexec", code=2)
    assert list(tmp_path.iterdir()) == []


# ---------------------------------------------------------------------------
# shards
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_ranks", [1, 2, 3, 5, 8])
def test_shard_assignment_is_contiguous_complete_and_balanced(n_ranks):
    rng = np.random.default_rng(n_ranks)
    for _ in range(50):
        sizes = rng.integers(0, 1000, rng.integers(0, 12)).tolist()
        runs = assign_shards(sizes, n_ranks)
        assert len(runs) == n_ranks and runs[0][0] == 0 and runs[-1][1] == len(sizes)
        for (a, b), (c, _) in zip(runs, runs[1:]):
            assert a <= b == c
        # a rank's bytes exceed its even share by less than one file (the middle rule)
        total, biggest = sum(sizes), max(sizes, default=0)
        for a, b in runs:
            assert sum(sizes[a:b]) <= total / n_ranks + biggest


def test_shards_are_spread_by_size():
    assert assign_shards([10, 10, 10, 10], 2) == [(0, 2), (2, 4)]
    assert assign_shards([100, 1, 1, 1], 2) == [(0, 1), (1, 4)]
    assert assign_shards([5, 5], 4) == [(0, 0), (0, 1), (1, 1), (1, 2)]
    assert assign_shards([0, 0, 0], 3) == [(0, 1), (1, 2), (2, 3)]


SHARD_TEXTS = {
    "part-0.svm": b"# a comment\n1 1:0.5 3:-2\r\n\n-1 2:1 4:7.25  # trailing\n",
    "part-1.svm": b"",                                                 # no rows at all
    "part-2.svm": b"# only a comment\n",                               # no rows either
    "part-3.svm.gz": b"2 1:1 2:2 9:9\n-1 5:-0\n",                      # gzip, a new class
    "part-4.svm": b"3 12:0.1\n1 7:1\r\n2",                             # no final line end
    "part-5.svm.bz2": b"-1 1:1e-3\n",
}


def write_shards(tmp_path, texts=SHARD_TEXTS, qid=False):
    d = tmp_path / "shards"
    d.mkdir()
    for name, text in texts.items():
        data = gzip.compress(text) if name.endswith(".gz") else \
            bz2.compress(text) if name.endswith(".bz2") else text
        (d / name).write_bytes(data)
    whole = b"".join(t if t.endswith(b"\n") or not t else t + b"\n" for t in texts.values())
    (tmp_path / "whole.svm").write_bytes(whole)
    return str(d / "*"), str(tmp_path / "whole.svm")


def test_shard_paths_sorted_by_name(tmp_path):
    for name in ("b.svm", "a.svm", "c.txt", "a10.svm", "a2.svm"):
        (tmp_path / name).write_bytes(b"")
    d = str(tmp_path)
    assert shard_paths(f"{d}/*.svm") == [f"{d}/{n}" for n in ("a.svm", "a10.svm", "a2.svm", "b.svm")]
    assert shard_paths(f"{d}/c.txt, {d}/b*.svm,{d}/a.svm") == \
        [f"{d}/a.svm", f"{d}/b.svm", f"{d}/c.txt"]
    with pytest.raises(DataError, match="no file matches"):
        shard_paths(f"{d}/*.nothing")
    with pytest.raises(DataError):
        shard_paths(" , ")


@pytest.mark.parametrize("n_ranks", [1, 2, 3, 4, 7])
def test_shards_union_equals_the_concatenated_file(tmp_path, n_ranks):
    spec, whole = write_shards(tmp_path)
    X, y = load_svmlight_buffers(whole)
    shares = run_ranks(lambda c: read_shards(spec, c), n_ranks)
    assert_union_is(shares, X, y)
    if n_ranks == 1:
        assert_union_is([read_shards(spec, None)], X, y)


def test_shards_with_qids_equal_the_concatenated_file(tmp_path):
    texts = {"q0.svm": b"1 qid:1 1:1\n2 qid:1 2:1\n", "q1.svm": b"",
             "q2.svm.gz": b"3 qid:2 1:2\n1 qid:3 3:1\n"}
    spec, whole = write_shards(tmp_path, texts)
    X, y, qid = load_svmlight_buffers(whole, with_qid=True)
    assert_union_is(run_ranks(lambda c: read_shards(spec, c, with_qid=True), 2), X, y, qid)


@pytest.mark.parametrize("n_ranks", [1, 2, 3])
def test_error_in_a_later_shard_named_with_its_line_on_every_rank(tmp_path, n_ranks):
    texts = dict(SHARD_TEXTS)
    texts["part-4.svm"] = b"3 12:0.1\n1 7:1 3:1\n"                # indices not increasing
    texts["part-5.svm.bz2"] = b"1 x\n"                            # a later error loses
    spec, _ = write_shards(tmp_path, texts)
    out = run_ranks(lambda c: read_shards(spec, c), n_ranks)
    with pytest.raises(DataError) as ref:
        load_svmlight_buffers(str(tmp_path / "shards" / "part-4.svm"))
    assert str(ref.value).endswith("part-4.svm:2: indices not increasing (3 after 7)")
    assert [str(e) for e in out] == [str(ref.value)] * n_ranks
    assert all(isinstance(e, DataError) for e in out)


def test_qid_rule_holds_across_shards(tmp_path):
    texts = {"a.svm": b"# x\n1 qid:1 1:1\n", "b.svm": b"\n2 1:1\n"}
    spec, _ = write_shards(tmp_path, texts)
    out = run_ranks(lambda c: read_shards(spec, c, with_qid=True), 2)
    for e in out:
        assert isinstance(e, DataError)
        assert str(e).endswith("b.svm:2: row has no qid, but the rows of "
                               f"{tmp_path / 'shards' / 'a.svm'} do (first at line 2)")


def test_missing_shard_same_error_everywhere(tmp_path):
    spec, _ = write_shards(tmp_path)
    missing = str(tmp_path / "shards" / "gone.svm")
    out = run_ranks(lambda c: read_shards(spec + "," + missing, c), 3)
    assert len({str(e) for e in out}) == 1 and "gone.svm: cannot open" in str(out[0])


# ---------------------------------------------------------------------------
# rank 0 reads, every rank gets its block
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("n_ranks", [1, 2, 3, 5])
def test_scatter_equals_serial(tmp_path, n_ranks):
    X0, y0 = random_problem(n_samples=11, n_features=7, n_classes=3, seed=2)
    plain = tmp_path / "d.svm"
    dump_svmlight(X0, y0, str(plain))
    packed = tmp_path / "d.svm.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    X, y = load_svmlight_buffers(str(plain))
    shares = run_ranks(lambda c: scatter_svmlight(str(packed), c), n_ranks)
    assert_union_is(shares, X, y)
    sizes = [s.X.n_rows for s in shares]
    assert max(sizes) - min(sizes) <= 1                       # rows split evenly
    how = run_ranks(lambda c: read_training_share(str(packed), c)[1], n_ranks)
    assert how == ["scatter"] * n_ranks
    how = run_ranks(lambda c: read_training_share(str(plain), c)[1], n_ranks)
    assert how == ["split"] * n_ranks


def test_scatter_error_reaches_every_rank(tmp_path):
    bad = tmp_path / "bad.svm.gz"
    bad.write_bytes(gzip.compress(b"1 1:1\n-1 2:x\n"))
    out = run_ranks(lambda c: scatter_svmlight(str(bad), c), 3)
    with pytest.raises(DataError) as ref:
        load_svmlight_buffers(str(bad))
    assert str(ref.value).startswith(f"{bad}:2: ")
    assert all(isinstance(e, DataError) and str(e) == str(ref.value) for e in out)


# ---------------------------------------------------------------------------
# cross-validation on several ranks
# ---------------------------------------------------------------------------

def _blocks(n, n_ranks, seed):
    """Uneven row blocks, one of them empty when there are three ranks or more."""
    rng = np.random.default_rng(seed)
    cuts = sorted(rng.integers(0, n, n_ranks - 1).tolist())
    if n_ranks >= 3:
        cuts[1] = cuts[0]
    return [0] + cuts + [n]


@pytest.mark.parametrize("n_ranks", [2, 3, 4])
def test_folds_do_not_depend_on_the_number_of_ranks(n_ranks):
    rng = np.random.default_rng(n_ranks)
    y = rng.choice([1.0, 2.0, 5.0, -1.0], 300, p=[0.5, 0.3, 0.15, 0.05])
    qid = np.sort(rng.integers(0, 40, 300))
    b = _blocks(300, n_ranks, n_ranks)
    for q in (None, qid):
        ref = make_folds(y, 5, seed=11, qid=q)
        out = run_ranks(lambda c: make_folds(y[b[c.rank]:b[c.rank + 1]], 5, seed=11,
                                             qid=None if q is None else q[b[c.rank]:b[c.rank + 1]],
                                             comm=c), n_ranks)
        assert np.array_equal(np.concatenate(ok(out)), ref)


def test_too_few_examples_for_the_folds_on_every_rank():
    y = np.array([1.0, -1.0, 1.0])
    out = run_ranks(lambda c: make_folds(y[c.rank:c.rank + 1], 4, comm=c), 3)
    assert all(isinstance(e, DataError) and "3 examples cannot fill 4 folds" in str(e)
               for e in out)


@pytest.mark.parametrize("metric", ["accuracy", "f1", "roc"])
@pytest.mark.parametrize("n_ranks", [2, 3])
def test_cross_validate_on_ranks_equals_serial(monkeypatch, metric, n_ranks):
    solver = gathering_solver.install(monkeypatch)
    X, y = random_problem(n_samples=90, n_features=8, seed=5)
    X = X.tocsr()
    ref = cross_validate(X, y, solver=solver, Cs=[0.25, 1.0], n_folds=3, seed=4, metric=metric)
    b = _blocks(90, n_ranks, 7)
    out = ok(run_ranks(lambda c: cross_validate(X[b[c.rank]:b[c.rank + 1]],
                                                y[b[c.rank]:b[c.rank + 1]], solver=solver,
                                                Cs=[0.25, 1.0], n_folds=3, seed=4,
                                                metric=metric, comm=c), n_ranks))
    for res in out:
        for pt, want in zip(res.points, ref.points):
            assert (pt.C, pt.n_iter) == (want.C, want.n_iter)
            np.testing.assert_allclose(pt.scores, want.scores, rtol=0, atol=1e-12)


# ---------------------------------------------------------------------------
# the command line: --shards, serially
# ---------------------------------------------------------------------------

def test_cli_shards_serially_equal_the_concatenated_file(tmp_path):
    texts = {"p0.svm": b"1 1:1 2:0.5\n-1 2:1\n1 1:0.7\n", "p1.svm": b"",
             "p2.svm.gz": b"-1 3:1 4:1\n1 1:2\n-1 2:2 3:0.1\n"}
    spec, whole = write_shards(tmp_path, texts)
    res = invoke(train_cmd, "-q", "--shards", spec, str(tmp_path / "s.model"))
    assert res.exit_code == 0, res.output
    res = invoke(train_cmd, "-q", whole, str(tmp_path / "w.model"))
    assert res.exit_code == 0, res.output
    a, b = load_model(str(tmp_path / "s.model")), load_model(str(tmp_path / "w.model"))
    assert np.array_equal(a.weights, b.weights)
    res = invoke(train_cmd, "--shards", spec)
    assert res.exit_code == 2 and "MODEL_FILE is required with --shards" in res.stderr
    shard = str(tmp_path / "shards" / "p0.svm")
    before = (tmp_path / "shards" / "p0.svm").read_bytes()
    res = invoke(train_cmd, "--shards", spec, shard)      # the model over a shard
    assert_one_line_error(res, "refusing to overwrite")
    assert (tmp_path / "shards" / "p0.svm").read_bytes() == before
    res = invoke(cv_cmd, "--shards", "-v", "2", "--format", "tsv", spec)
    ref = invoke(cv_cmd, "-v", "2", "--format", "tsv", whole)
    assert res.exit_code == 0 and res.stdout.split("\n")[1].split("\t")[2] == \
        ref.stdout.split("\n")[1].split("\t")[2]


# ---------------------------------------------------------------------------
# the command line's error handling on several ranks
# ---------------------------------------------------------------------------

def test_check_failing_on_one_rank_fails_on_every_rank():
    """_Job.run: a check that fails on rank 1 only (a file it cannot read) is raised
    on every rank, with rank 1's message, and no rank goes on alone."""
    import click

    from linsvm.cli.job import CommandError, Job as _Job

    def check(rank):
        if rank == 1:
            raise DataError("w.txt: cannot open: No such file or directory")
        return rank

    out = run_ranks(lambda c: _Job(c).run(check, c.rank), 3)
    assert all(isinstance(e, CommandError) for e in out)
    assert {e.format_message() for e in out} == \
        {"MPI rank 1: w.txt: cannot open: No such file or directory"}
    out = run_ranks(lambda c: _Job(c).run(check, c.rank, root_only=True), 3)
    assert out == [0, None, None]                      # rank 0 alone ran it
    def usage(rank):
        if rank == 0:
            raise click.UsageError("give either -c or --log2c, not both")

    out = run_ranks(lambda c: _Job(c).run(usage, c.rank), 2)
    assert all(isinstance(e, click.ClickException) and e.exit_code == 2 for e in out)
    assert {e.format_message() for e in out} == {"give either -c or --log2c, not both"}


def test_unexpected_fault_on_one_rank_aborts_the_job(capsys):
    """Anything but a one-line error, on one rank of a distributed command, ends every
    rank (Collective.abort -> comm.Abort) instead of leaving the others waiting."""
    from fakempi import Aborted, comms
    from linsvm.cli.failures import fail_on_errors as _fail_on_errors
    from linsvm.cli.job import Job as _Job

    @_fail_on_errors
    def command():
        _Job.active = _Job(comms(2)[1])
        raise RuntimeError("boom")

    with pytest.raises(Aborted):
        command()
    assert "linsvm: error: MPI rank 1: RuntimeError: boom" in capsys.readouterr().err
    assert _Job.active is None
