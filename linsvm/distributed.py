"""Training data on several MPI ranks (public path; the code lives in linsvm.io.shards
and linsvm.runtime.launch).

    share, how = linsvm.distributed.read_training_share("train.svm", comm)
    model = linsvm.train(share.X, share.y, comm=comm)

docs/mpi.md describes the readers and how to launch.
"""
from .io.shards import (LocalShare, assign_shards, byte_ranges, read_shards,
                        read_svmlight_share, read_training_share, scatter_svmlight, shard_paths)
from .runtime.launch import Launch, mpi_launch, world_comm

__all__ = ["read_training_share", "read_svmlight_share", "read_shards", "scatter_svmlight",
           "byte_ranges", "shard_paths", "assign_shards", "LocalShare", "mpi_launch",
           "world_comm", "Launch"]
