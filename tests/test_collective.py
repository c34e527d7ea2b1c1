"""linsvm.runtime.collective and csrc/comm.pxd on simulated ranks (tests/fakempi.py).

The reference is numpy on the ranks' inputs: a sum, a maximum, a gather.
train(comm=...) is checked in the solvers' distributed tests; here the plumbing
every one of them relies on: reductions from compiled code without the GIL,
errors made collective, the serial shortcut for one rank.
"""
import numpy as np
import pytest

from fakempi import Aborted, comms, run_ranks
from linsvm import _testing
from linsvm.runtime.collective import Collective, agreed, collective_of
from linsvm.errors import DataError, ParameterError


def _values(rank):
    return np.array([rank + 0.5, -3.0 * rank, 7.0, 2.0 ** -rank])


@pytest.mark.parametrize("n_ranks", [2, 3])
def test_compiled_collectives_equal_numpy(n_ranks):
    out = run_ranks(lambda c: _testing.comm_roundtrip(Collective(c), _values(c.rank)), n_ranks)
    rows = np.stack([_values(r) for r in range(n_ranks)])
    for res in out:
        assert not isinstance(res, BaseException), res
        s, m, one, g = res
        np.testing.assert_array_equal(s, rows.sum(axis=0))
        np.testing.assert_array_equal(m, rows.max(axis=0))
        assert one == rows[:, 0].sum()
        np.testing.assert_array_equal(g, rows)


def test_serial_record_leaves_buffers_alone():
    s, m, one, g = _testing.comm_roundtrip(None, _values(1))
    np.testing.assert_array_equal(s, _values(1))
    np.testing.assert_array_equal(m, _values(1))
    assert one == 1.5
    np.testing.assert_array_equal(g, _values(1)[None, :])


def test_collective_counts_calls_and_bytes():
    def work(c):
        coll = Collective(c)
        coll.sum(np.ones(5))
        coll.sum_scalars(1.0, 2.0)
        return coll.stats()

    for st in run_ranks(work, 2):
        assert st["ranks"] == 2 and st["comm_calls"] == 2 and st["comm_bytes"] == 8 * 7
        assert st["comm_seconds"] >= 0


def test_one_rank_is_the_serial_program():
    c = comms(1)[0]
    assert collective_of(None) is None
    assert collective_of(c) is None
    assert collective_of(Collective(c)) is None
    two = Collective(comms(2)[0])
    assert collective_of(two) is two


def test_error_on_one_rank_is_raised_on_every_rank():
    def check(rank):
        if rank == 1:
            raise DataError("label of example 3 is not finite")
        return rank

    out = run_ranks(lambda c: agreed(Collective(c), check, c.rank), 3)
    for res in out:
        assert isinstance(res, DataError)
        assert str(res) == "MPI rank 1: label of example 3 is not finite"


def test_lowest_failing_rank_wins_and_keeps_its_class():
    def check(rank):
        if rank:
            raise ParameterError(f"bad on {rank}")

    out = run_ranks(lambda c: agreed(Collective(c), check, c.rank), 3)
    assert all(isinstance(r, ParameterError) and str(r) == "MPI rank 1: bad on 1" for r in out)


def test_failed_collective_aborts_the_job(capsys):
    class Broken:
        mpi_constants = ("IN_PLACE", "SUM", "MAX")

        def Get_rank(self):
            return 0

        def Get_size(self):
            return 2

        def Allreduce(self, *a, **k):
            raise RuntimeError("connection reset")

        def Abort(self, code):
            raise Aborted(code)

    with pytest.raises(Aborted):
        Collective(Broken()).sum(np.ones(3))
    assert "linsvm: error: MPI rank 0: allreduce of 3 values failed: connection reset" \
        in capsys.readouterr().err


@pytest.mark.slow
def test_a_solver_fault_on_one_rank_ends_the_job(monkeypatch, capsys):
    # a distributed fit that fails on rank 1 only must not leave rank 0 waiting in its
    # next collective: train() ends the job (Collective.abort -> comm.Abort)
    import scipy.sparse as sp

    import linsvm
    from linsvm.solvers import SOLVERS

    info = SOLVERS["dcd"]

    def fit(problem, params, start, state, log):
        if problem.comm.rank == 1:
            raise DataError("something only rank 1 sees")
        problem.comm.sum(np.ones(3))        # rank 0 goes on into a collective
        return info.fit(problem, params, start, state, log)

    monkeypatch.setitem(SOLVERS, "dcd", info._replace(fit=fit))
    X = sp.random(12, 4, density=0.5, random_state=0, format="csr")
    y = np.array([1.0, -1.0] * 6)

    def work(c):
        lo, hi = 6 * c.rank, 6 * c.rank + 6
        return linsvm.train(X[lo:hi], y[lo:hi], solver="dcd", comm=c)

    out = run_ranks(work, 2, timeout=60)
    assert isinstance(out[1], Aborted)
    assert "linsvm: error: MPI rank 1: dcd failed: something only rank 1 sees" \
        in capsys.readouterr().err
