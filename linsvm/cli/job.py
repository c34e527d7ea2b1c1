"""The ranks a train or cv command runs on: the serial program, or one rank of an MPI job.

On MPI (`mpiexec -n P linsvm-train ...`, P > 1; linsvm.runtime.launch.mpi_launch
states how a launch is recognised, from the environment alone) `train` and `cv`
run on P ranks: each reads its share of the data and trains with the others.
Rank 0 alone prints -- notes, progress, warnings, the summary, results -- and
writes the model.  An error every rank meets alike (options, data, a serial-only
solver) is printed once, by rank 0, and every rank exits with its status (the
others silently: the entry points hide their copy).  A check that could differ
between ranks (a file one rank cannot read) is made collective (Job.run) before
any rank goes on, and anything unexpected on one rank ends the whole job at once
(linsvm.runtime.collective.Collective.abort: `linsvm: error: MPI rank R: ...`),
so no rank is left waiting.  Without a launcher, or with P = 1, nothing imports
mpi4py: the serial program.  Ctrl-C, which the launcher delivers to every rank,
ends each rank at once with `interrupted` and status 130
(linsvm.runtime.sigint.end_at_once_in_command).
"""
from __future__ import annotations

import click

from ..errors import LinsvmError
from .messages import CommandError, UsageLineError, error_text, os_error_text
from ..problem.catalog import SOLVERS
from ..runtime.collective import collective_of
from ..runtime.launch import mpi_launch, world_comm
from ..runtime.sigint import end_at_once_in_command

__all__ = ["Job", "open_job", "launch_rank", "refuse_launch"]


class Job:
    """The ranks a train or cv command runs on: the serial program (comm None) or
    one rank of an MPI job (module notes).  rank, size; root: rank 0, the one that
    prints and writes.  `active` is the job of the command running now (one at a
    time per process), for fail_on_errors."""

    active = None

    def __init__(self, comm):
        self.comm = comm
        self.coll = collective_of(comm)
        self.rank = 0 if comm is None else int(comm.Get_rank())
        self.size = 1 if comm is None else int(comm.Get_size())
        self.root = self.rank == 0

    def run(self, fn, *args, root_only=False, **kwargs):
        """fn(*args, **kwargs) with its errors made collective: a one-line error
        (LinsvmError, OSError, Click's) on any rank is raised on every rank, the
        lowest failing rank's (prefixed "MPI rank R: " when R > 0), after one
        allgather, so no rank goes on alone.  root_only: fn runs on rank 0 only
        (what rank 0 alone writes).  Returns fn's result (None on the others with
        root_only)."""
        if self.comm is None:
            return fn(*args, **kwargs)
        out, fault = None, None
        if self.root or not root_only:
            try:
                out = fn(*args, **kwargs)
            except click.ClickException as exc:
                fault = (exc.exit_code, exc.format_message())
            except LinsvmError as exc:
                fault = (1, error_text(exc))
            except OSError as exc:
                fault = (1, os_error_text(exc))
        for rank, f in enumerate(self.comm.allgather(fault)):
            if f is not None:
                text = (f"MPI rank {rank}: " if rank else "") + f[1]
                raise (UsageLineError if f[0] == 2 else CommandError)(text)
        return out

    def gather(self, obj):
        """Every rank's picklable obj, in rank order ([obj] when serial)."""
        return [obj] if self.comm is None else self.comm.allgather(obj)


def open_job(solver=None, probability=0):
    """The Job of a train/cv command: the MPI job this process was launched in
    (linsvm.runtime.launch.world_comm), else the serial program.  On several ranks a
    serial-only solver and -b 1 are refused here, before any data is read."""
    job = Job(world_comm())
    if job.comm is None:
        return job
    Job.active = job
    end_at_once_in_command()        # Ctrl-C: no KeyboardInterrupt inside a collective
    if solver is not None:
        SOLVERS[solver].refuse_distributed()
    if probability:
        raise UsageLineError("-b 1 does not run on several MPI ranks (the sigmoids are fitted "
                             "on every fold's decision values at once); train with -b 1 "
                             "without mpiexec")
    return job


def launch_rank():
    """This process's rank in an MPI launch (0 without one), from the environment."""
    launch = mpi_launch()
    return 0 if launch is None else launch.rank


def refuse_launch(command):
    """Commands that run on one process only refuse an MPI launch of several ranks
    (each rank would do the whole work and write the same output)."""
    launch = mpi_launch()
    if launch is not None and launch.size != 1:
        raise UsageLineError(f"{command} runs on one process; run it without mpiexec (only "
                             "train and cv run on several MPI ranks)")
