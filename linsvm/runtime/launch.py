"""Is this process one rank of an MPI job?  Told from the launcher's environment alone.

`mpi_launch` reads the variables MPI launchers export (nothing is imported);
`world_comm` imports mpi4py only for a launch of several ranks and returns its
COMM_WORLD, or None for the serial program.  The command line uses both
(linsvm.cli); docs/mpi.md says how to launch.
"""
from __future__ import annotations

import os
from typing import NamedTuple

from ..errors import ParameterError


# What MPI launchers export to every process they start: (rank variable, size
# variable, launcher), in the order they are consulted.  The first rank variable
# present decides; mpi4py is imported only when its size is above one (or unknown).
LAUNCHER_VARIABLES = (
    ("PMI_RANK", "PMI_SIZE", "MPICH/Intel MPI (Hydra), or srun --mpi=pmi2"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"),
    ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MVAPICH"),
    ("PMIX_RANK", "SLURM_STEP_NUM_TASKS", "a PMIx launcher (srun --mpi=pmix, prterun)"),
)


class Launch(NamedTuple):
    """How this process was started: its rank, the number of ranks (None when the
    launcher does not export it), and the launcher (for messages)."""
    rank: int
    size: int | None
    launcher: str


def _int_var(environ, name):
    try:
        return int(environ[name])
    except (KeyError, ValueError):
        return None


def mpi_launch(environ=None):
    """The MPI launch this process belongs to, from the environment alone, or None.

    The rule (nothing is imported): the first of the rank variables in
    LAUNCHER_VARIABLES that is set (PMI_RANK: MPICH's and Intel MPI's Hydra
    mpiexec, and Slurm's srun --mpi=pmi2; OMPI_COMM_WORLD_RANK: Open MPI;
    MV2_COMM_WORLD_RANK: MVAPICH; PMIX_RANK: PMIx launchers) makes this process
    rank `rank` of a job of `size` ranks, size read from its partner variable
    (PMI_SIZE, ...; for PMIx, Slurm's SLURM_STEP_NUM_TASKS, else unknown).
    Without any of them -- no launcher, or `srun` without an MPI plugin (see
    world_comm) -- the process is not part of an MPI job: None.
    """
    environ = os.environ if environ is None else environ
    for rank_var, size_var, launcher in LAUNCHER_VARIABLES:
        rank = _int_var(environ, rank_var)
        if rank is not None:
            return Launch(rank, _int_var(environ, size_var), launcher)
    return None


def world_comm(environ=None):
    """The communicator of the MPI job this process runs in (mpi4py's COMM_WORLD), or
    None for the serial program: no launcher, or a job of one rank.

    mpi4py is imported only when mpi_launch finds a launch of more than one rank (or
    of an unknown number); a ParameterError names what to do when it is missing
    (``pip install "linsvm[mpi]"``), when the launcher started several processes
    that MPI sees as separate one-rank jobs (an MPI library that is not the
    launcher's, or ``srun`` without ``--mpi=pmix``), and when Slurm's srun started
    several tasks without any MPI plugin.
    """
    environ = os.environ if environ is None else environ
    launch = mpi_launch(environ)
    if launch is None:
        tasks = _int_var(environ, "SLURM_STEP_NUM_TASKS")
        if tasks is not None and tasks > 1 and "SLURM_PROCID" in environ:
            raise ParameterError(
                f"srun started {tasks} tasks without an MPI plugin: each would train alone "
                "and write the model; use `srun --mpi=pmix` (or pmi2), or one task")
        return None
    if launch.size == 1:
        return None
    ranks = "one of several MPI ranks" if launch.size is None else \
        f"one of {launch.size} MPI ranks"
    try:
        from mpi4py import MPI
    except ImportError:
        raise ParameterError(f"started as {ranks} ({launch.launcher}), but mpi4py is not "
                             'installed: pip install "linsvm[mpi]"') from None
    comm = MPI.COMM_WORLD
    size = int(comm.Get_size())
    if launch.size is not None and size != launch.size:
        raise ParameterError(
            f"started as {ranks} ({launch.launcher}), but MPI sees {size}: mpi4py's MPI "
            "library is not the launcher's (use the mpiexec of the MPI mpi4py was built "
            "with)")
    return comm if size > 1 else None
