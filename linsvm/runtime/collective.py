"""The collectives distributed training uses, over an MPI communicator.

A distributed solve runs the same program on P ranks, each rank
holding a block of the rows; the weight vector is replicated and every sum
over rows becomes a local sum followed by one allreduce.  `Collective` wraps
the communicator the user gave (mpi4py's ``MPI.COMM_WORLD``, or any
communicator with mpi4py's buffer API) and is what a `Problem` carries as
``problem.comm``; ``None`` there means the serial program, and so does a
communicator of one rank (:func:`collective_of` returns None for it, so that
``mpiexec -n 1`` and no mpiexec run the very same code).

Its methods work in place on float64 buffers (numpy arrays, or the typed
memoryviews the compiled solvers pass through csrc/comm.pxd) and count what
they do: ``seconds`` spent inside collectives, ``calls``, and ``bytes``, the
payload one rank contributes (8 bytes per double; what travels on the wire
depends on the MPI's algorithm: a ring allreduce sends and receives
2 (P - 1) / P times the payload per rank, see examples/bench_mpi.py).

A collective that fails (a lost rank, an MPI error) cannot be recovered from:
the other ranks are waiting inside the same collective.  So every method
catches any exception, prints ``linsvm: error: MPI rank R: ...`` on stderr and
aborts the whole job (``comm.Abort(1)``): every rank exits non-zero at once,
none is left waiting.  Errors every rank meets alike (bad options, bad data
found by the reader) are raised normally, before any solver starts.

mpi4py is imported here only when a real mpi4py communicator is wrapped;
nothing else in linsvm imports it (``pip install ".[mpi]"`` brings it).
"""
from __future__ import annotations

import sys
import time

from .. import errors

__all__ = ["Collective", "collective_of", "agreed", "gather_objects", "exchange_objects",
           "from_root", "wait_for_root"]

ABORT_GRACE = 0.25          # seconds between the error line and MPI_Abort (Collective.abort)
IDLE_POLL_MAX = 2e-3        # the longest sleep between two polls of wait_for_root


def _constants(comm):
    """(IN_PLACE, SUM, MAX) of the communicator's MPI binding: mpi4py's, or those a
    stand-in communicator (the tests' threads) exposes as ``mpi_constants``."""
    own = getattr(comm, "mpi_constants", None)
    if own is not None:
        return own
    from mpi4py import MPI      # only ever reached with a real mpi4py communicator

    return MPI.IN_PLACE, MPI.SUM, MPI.MAX


class Collective:
    """Allreduce (sum, max), allgather(v), alltoallv and broadcast of float64 buffers
    over `comm`.

    rank, size: this rank and the number of ranks.  seconds, calls, bytes: time
    inside collectives, their number, and this rank's payload in bytes (module notes).
    """

    def __init__(self, comm):
        self.comm = comm
        self.rank, self.size = int(comm.Get_rank()), int(comm.Get_size())
        self._in_place, self._sum, self._max = _constants(comm)
        self.seconds = 0.0
        self.calls = 0
        self.bytes = 0

    # -- in-place reductions ---------------------------------------------------------
    def sum(self, buf):
        """buf <- the elementwise sum of every rank's buf (float64, contiguous, in place)."""
        self._reduce(buf, self._sum)
        return buf

    def max(self, buf):
        """buf <- the elementwise maximum over the ranks (in place)."""
        self._reduce(buf, self._max)
        return buf

    def _reduce(self, buf, op):
        n = len(buf)
        if n == 0:
            return
        t0 = time.perf_counter()
        try:
            self.comm.Allreduce(self._in_place, buf, op=op)
        except BaseException as exc:        # noqa: BLE001 - no rank may be left waiting
            self.abort(f"allreduce of {n} values failed: {exc}")
        self._count(t0, 8 * n)

    # -- gathering and broadcasting -------------------------------------------------
    def allgather(self, local):
        """Every rank's `local` (a float64 vector of one length on every rank) as a
        (size x len) array, in rank order."""
        import numpy as np          # not at import: the command line's start-up needs none

        local = np.ascontiguousarray(local, dtype=np.float64)
        out = np.empty((self.size, local.shape[0]), dtype=np.float64)
        t0 = time.perf_counter()
        try:
            self.comm.Allgather(local, out)
        except BaseException as exc:        # noqa: BLE001
            self.abort(f"allgather of {local.shape[0]} values failed: {exc}")
        self._count(t0, 8 * local.shape[0])
        return out

    def bcast(self, buf, root=0):
        """buf <- root's buf (float64, contiguous, in place)."""
        t0 = time.perf_counter()
        try:
            self.comm.Bcast(buf, root=root)
        except BaseException as exc:        # noqa: BLE001
            self.abort(f"broadcast of {len(buf)} values failed: {exc}")
        self._count(t0, 8 * len(buf))
        return buf

    def await_root(self, root=0):
        """wait_for_root over this communicator; a failure ends the job (abort)."""
        try:
            wait_for_root(self.comm, root)
        except BaseException as exc:        # noqa: BLE001
            self.abort(f"waiting for rank {root} failed: {exc}")

    def alltoallv(self, send, scounts, recv, rcounts):
        """The personalized exchange of the weight split (csrc/wsplit.pxd): send holds
        scounts[r] doubles for each rank r in rank order, recv receives rcounts[r] from
        each.  Counts the doubles sent to the other ranks (not the rank's own part)."""
        sd, rd = _displacements(scounts), _displacements(rcounts)
        t0 = time.perf_counter()
        try:
            self.comm.Alltoallv([send, (list(scounts), sd)], [recv, (list(rcounts), rd)])
        except BaseException as exc:        # noqa: BLE001
            self.abort(f"alltoallv of {sum(scounts)} values failed: {exc}")
        self._count(t0, 8 * (sum(scounts) - scounts[self.rank]))

    def allgatherv(self, send, recv, counts):
        """recv <- every rank's first counts[r] entries of send, in rank order (float64,
        or int64 indices: 8 bytes each either way)."""
        t0 = time.perf_counter()
        try:
            self.comm.Allgatherv([send, counts[self.rank]],
                                 [recv, (list(counts), _displacements(counts))])
        except BaseException as exc:        # noqa: BLE001
            self.abort(f"allgatherv of {sum(counts)} values failed: {exc}")
        self._count(t0, 8 * counts[self.rank])

    def sum_scalars(self, *values):
        """The sums over the ranks of a few numbers, in one allreduce (a tuple)."""
        import numpy as np

        return tuple(self.sum(np.array(values, dtype=np.float64)).tolist())

    def _count(self, t0, n_bytes):
        self.seconds += time.perf_counter() - t0
        self.calls += 1
        self.bytes += n_bytes

    def abort(self, message):
        """Print ``linsvm: error: MPI rank R: message`` and end every rank (module notes)."""
        print(f"linsvm: error: MPI rank {self.rank}: {message}", file=sys.stderr, flush=True)
        abort = getattr(self.comm, "Abort", None)
        if abort is not None:
            # the launcher forwards a rank's stderr through its own processes, which
            # MPI_Abort tears down: give the line a moment to get out first (without
            # it, one CI run under MPICH's mpiexec showed every line but this one)
            time.sleep(ABORT_GRACE)
            abort(1)
        raise SystemExit(1)

    def stats(self):
        """{"ranks", "comm_seconds", "comm_calls", "comm_bytes"} for a model's stats."""
        return {"ranks": self.size, "comm_seconds": self.seconds, "comm_calls": self.calls,
                "comm_bytes": self.bytes}


def wait_for_root(comm, root=0):
    """Wait, off the CPU, until `root` calls this too; every rank of the (mpi4py)
    communicator calls it once.

    For ranks with nothing to do while root works alone (reading a compressed file,
    linsvm.io.shards; the serial finish, linsvm.solvers.gather).  MPI's blocking
    collectives wait by polling, which on a machine with more ranks than cores takes
    root's core from it; here the waiting ranks sleep between polls of a non-blocking
    broadcast (_idle).  Carries no data."""
    import numpy as np

    _idle(comm.Ibcast(np.zeros(1), root=root))


def _idle(request):
    """Wait for a non-blocking MPI request, sleeping between polls (the pause doubling
    from its first value up to IDLE_POLL_MAX): the waiting rank leaves its core to the
    ranks still working, and a request completes at most that much after its last rank arrives (MPICH
    progresses a collective only inside such polls)."""
    pause = 2e-5
    while not request.Test():
        time.sleep(pause)
        pause = min(2.0 * pause, IDLE_POLL_MAX)


def _displacements(counts):
    """The start of each rank's part in a buffer of parts of these sizes, in rank order."""
    out, at = [], 0
    for c in counts:
        out.append(at)
        at += int(c)
    return out


def collective_of(comm):
    """A Collective over `comm`, or None for the serial program (comm None, or one rank).
    A Collective is returned as it is."""
    if comm is None or isinstance(comm, Collective):
        return comm if comm is None or comm.size > 1 else None
    return Collective(comm) if int(comm.Get_size()) > 1 else None


def agreed(coll, fn, *args, **kwargs):
    """fn(*args, **kwargs) on every rank, its errors made collective.

    Serial (coll None): just the call.  Distributed: each rank runs fn on its own
    inputs; if it raises a linsvm error (LinsvmError) on any rank, every rank raises
    the same one -- the lowest failing rank's, its message prefixed "MPI rank R: " --
    after one allgather, so no rank goes on into a collective the others never reach.
    Returns fn's result otherwise."""
    if coll is None:
        return fn(*args, **kwargs)
    try:
        out, fault = fn(*args, **kwargs), None
    except errors.LinsvmError as exc:
        out, fault = None, (type(exc).__name__, str(exc))
    faults = coll.comm.allgather(fault)
    for rank, f in enumerate(faults):
        if f is not None:
            raise getattr(errors, f[0], errors.LinsvmError)(f"MPI rank {rank}: {f[1]}")
    return out


def exchange_objects(coll, parts, nbytes=None):
    """parts[r] (picklable) to rank r, for every r: returns what each rank sent this one,
    in rank order ([parts[0]] when serial).  nbytes: as for gather_objects."""
    if coll is None:
        return [parts[0]]
    t0 = time.perf_counter()
    out = coll.comm.alltoall(list(parts))
    if nbytes is not None:
        coll._count(t0, int(nbytes))
    return out


def gather_objects(coll, obj, nbytes=None, root=None):
    """Every rank's picklable `obj`, in rank order ([obj] when serial); with `root`, on
    that rank only (None elsewhere).  With `nbytes` (this rank's payload) the call
    counts in coll's stats like the float64 collectives (a data gather); without, it
    is bookkeeping (a few small objects) and does not."""
    if coll is None:
        return [obj]
    t0 = time.perf_counter()
    out = coll.comm.allgather(obj) if root is None else coll.comm.gather(obj, root=root)
    if nbytes is not None:
        coll._count(t0, int(nbytes))
    return out


def from_root(coll, common, parts, root=0):
    """(common, parts[r]) on every rank r, both picklable and given on `root` only (the
    others pass None): one broadcast and one scatter, counted as bookkeeping."""
    common = coll.comm.bcast(common, root=root)
    return common, coll.comm.scatter(parts, root=root)
