"""P ranks as P threads of this process, for testing distributed code without MPI.

`ThreadComm` has the part of mpi4py's communicator API linsvm uses: the buffer
collectives (Allreduce with IN_PLACE, Allgather(v), Alltoallv, Bcast, Ibcast) that
linsvm.runtime.collective.Collective calls, the lowercase object collectives
(allgather, alltoall, bcast, gather, scatter, allreduce) of the distributed readers,
Get_rank/Get_size and Abort.  Every collective is a barrier-separated exchange through
shared slots, and the sums add the ranks' buffers in rank order, so every rank gets the
same bits (as an MPI allreduce gives every rank).  `run_ranks(fn, P)` calls fn(comm)
on P threads and returns each rank's result or exception; a rank that never
returns fails the test instead of hanging it.
"""
import threading

import numpy as np

IN_PLACE, SUM, MAX = "IN_PLACE", "SUM", "MAX"


class Aborted(RuntimeError):
    """Raised by ThreadComm.Abort (a real MPI job would end every rank)."""


class _Group:
    def __init__(self, n):
        self.slots = [None] * n
        self.barrier = threading.Barrier(n, timeout=60)


class ThreadComm:
    """One rank's communicator among the threads of a _Group (module notes)."""

    mpi_constants = (IN_PLACE, SUM, MAX)

    def __init__(self, group, rank):
        self._g, self.rank, self.size = group, rank, len(group.slots)

    def Get_rank(self):
        return self.rank

    def Get_size(self):
        return self.size

    # object collectives (mpi4py's lowercase API)
    def allgather(self, obj):
        self._g.slots[self.rank] = obj
        self._g.barrier.wait()
        out = list(self._g.slots)
        self._g.barrier.wait()
        return out

    def alltoall(self, objs):
        return [sent[self.rank] for sent in self.allgather(list(objs))]

    def bcast(self, obj, root=0):
        return self.allgather(obj)[root]

    def gather(self, obj, root=0):
        out = self.allgather(obj)
        return out if self.rank == root else None

    def scatter(self, objs, root=0):
        return self.allgather(objs)[root][self.rank]

    def allreduce(self, obj, op=None):
        vals = self.allgather(obj)
        return sum(vals[1:], vals[0]) if op is None else op(vals)

    def barrier(self):
        self.allgather(None)

    # buffer collectives (mpi4py's uppercase API)
    def Allreduce(self, sendbuf, recvbuf=None, op=SUM):
        assert sendbuf is IN_PLACE, "linsvm reduces in place"
        buf = np.asarray(recvbuf)
        parts = self.allgather(buf.copy())
        if op == SUM:
            acc = parts[0].copy()
            for p in parts[1:]:
                acc += p
        else:
            acc = np.maximum.reduce(parts)
        buf[...] = acc

    def Allgather(self, sendbuf, recvbuf):
        parts = self.allgather(np.asarray(sendbuf).copy())
        np.asarray(recvbuf)[...] = np.stack(parts)

    def Alltoallv(self, smsg, rmsg):
        (sbuf, (sc, sd)), (rbuf, (rc, rd)) = smsg, rmsg
        parts = self.allgather((np.asarray(sbuf).copy(), list(sc), list(sd)))
        rbuf = np.asarray(rbuf)
        for src, (b, c, d) in enumerate(parts):
            assert c[self.rank] == rc[src], "send and receive counts disagree"
            rbuf[rd[src]:rd[src] + rc[src]] = b[d[self.rank]:d[self.rank] + c[self.rank]]

    def Allgatherv(self, smsg, rmsg):
        (sbuf, n), (rbuf, (rc, rd)) = smsg, rmsg
        parts = self.allgather(np.asarray(sbuf)[:n].copy())
        rbuf = np.asarray(rbuf)
        for src, b in enumerate(parts):
            assert len(b) == rc[src], "allgatherv counts disagree"
            rbuf[rd[src]:rd[src] + rc[src]] = b

    def Bcast(self, buf, root=0):
        buf = np.asarray(buf)
        buf[...] = self.allgather(buf.copy())[root]

    def Ibcast(self, buf, root=0):
        # the threads' collectives are barriers: complete at once, a request that is done
        self.Bcast(buf, root)
        return _Done()

    def Abort(self, code=1):
        # as MPI_Abort ends every process, end every rank's wait: the others' next (or
        # current) collective fails with BrokenBarrierError
        self._g.barrier.abort()
        raise Aborted(f"Abort({code})")


class _Done:
    """The request of a non-blocking collective that has completed."""

    def Test(self):
        return True


def comms(n_ranks):
    """n_ranks ThreadComms of one group."""
    group = _Group(n_ranks)
    return [ThreadComm(group, r) for r in range(n_ranks)]


def run_ranks(fn, n_ranks, timeout=120):
    """fn(comm) on n_ranks threads; the list of each rank's result or exception."""
    out = [None] * n_ranks

    def work(comm):
        try:
            out[comm.rank] = fn(comm)
        except BaseException as e:      # noqa: BLE001 - the test inspects it
            out[comm.rank] = e

    threads = [threading.Thread(target=work, args=(c,)) for c in comms(n_ranks)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    assert not any(t.is_alive() for t in threads), "a rank was left waiting"
    return out


def block_cuts(n, n_ranks, layout):
    """Row boundaries of n rows over 2 or 3 ranks: "uneven" blocks, or with an empty one."""
    if layout == "uneven":
        return [0, n // 3, n] if n_ranks == 2 else [0, n // 7, n // 2, n]
    return [0, 0, n] if n_ranks == 2 else [0, n // 2, n // 2, n]


def train_on_ranks(X, y, cuts, solver, coll=None, **kw):
    """Every rank's linsvm.train model, rank r training on rows cuts[r]:cuts[r+1] through
    coll(comm) (default linsvm's Collective); a rank's exception is raised here."""
    import linsvm
    from linsvm.runtime.collective import Collective

    collective = Collective if coll is None else coll

    def work(comm):
        r = comm.Get_rank()
        return linsvm.train(X[cuts[r]:cuts[r + 1]], y[cuts[r]:cuts[r + 1]], solver=solver,
                            comm=collective(comm), **kw)

    out = run_ranks(work, len(cuts) - 1)
    for res in out:
        if isinstance(res, BaseException):
            raise res
    return out


def recording_collective():
    """A linsvm Collective class that records the length of every sum (its `sizes`)."""
    from linsvm.runtime.collective import Collective

    class Recording(Collective):
        def __init__(self, comm):
            super().__init__(comm)
            self.sizes = []

        def sum(self, buf):
            self.sizes.append(len(buf))
            return super().sum(buf)

    return Recording
