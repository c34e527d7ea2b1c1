"""One rank's share of a linsvm binary data file: slices of one map, no text to scan.

Every rank maps and verifies the whole file (linsvm.io.binfile.open_binary) and takes
a block of consecutive rows, the blocks in rank order: rank r's block starts at the
first row whose cost -- the entries before it plus one per row before it -- reaches
r / P of the file's, so the ranks get about equal shares of the entries (and of the
rows where rows are empty), as the byte ranges of a text file share it out
(linsvm.io.plain_share).  Its X is a CSRBuffers whose indices and values are views of
the map (only its row pointers, rebased to 0, are its own); labels, qids and weights are
views too.  Width, row counts and labels in first-appearance order come from the file,
which every rank reads alike; the ranks agree on success in one collective, so a file
that one rank cannot read makes every rank raise the same DataError.
"""
from __future__ import annotations

import bisect

import numpy as np

from ..errors import DataError
from ..problem.labels import class_order_raw
from .binfile import open_binary
from .places import RowPlaces
from .plain_share import LocalShare

__all__ = ["read_binary_share", "share_rows"]


def share_rows(indptr, n_ranks):
    """The first row of each rank's block and the end, n_ranks + 1 numbers from 0 to
    n_rows (module notes: rows split by entries plus one per row)."""
    n_rows = indptr.shape[0] - 1
    total = int(indptr[n_rows]) + n_rows
    cuts = [bisect.bisect_left(range(n_rows + 1), total * r // n_ranks,
                               key=lambda i: int(indptr[i]) + i) for r in range(n_ranks)]
    return cuts + [n_rows]


def read_binary_share(path, comm, n_features=None, with_qid=False, labels=True):
    """This rank's LocalShare of the binary data file `path` (module notes); comm None:
    one rank, the whole file.  `n_features` widens X (DataError when the file has a
    larger index); with_qid: qid the file's (zeros when it has none), else None;
    `labels`: the distinct labels of the whole file in first-appearance order.  The
    share's weights are the file's instance weights of its rows (None without)."""
    rank, n_ranks = (0, 1) if comm is None else (int(comm.rank), int(comm.size))
    data, error = None, None
    try:
        data = open_binary(path)
        if n_features is not None and n_features < data.max_index:
            raise DataError(f"{data.path}: feature index {data.max_index} > "
                            f"n_features={n_features}")
    except DataError as exc:
        error = str(exc)
    errors = [error] if comm is None else comm.allgather(error)
    first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise DataError(first)
    cuts = share_rows(data.indptr, n_ranks)
    a, b = cuts[rank], cuts[rank + 1]
    width = data.n_features if n_features is None else int(n_features)
    X, y, qid, weights = data.rows(a, b, width)
    if with_qid and qid is None:
        qid = np.zeros(b - a, dtype=np.int64)
    return LocalShare(X=X, y=y, qid=qid if with_qid else None, row_offset=a,
                      n_rows_total=data.n_rows, first_line=0, n_lines=0, n_features=width,
                      labels=class_order_raw(data.y) if labels else None, rank=rank,
                      n_ranks=n_ranks, places=RowPlaces().add_examples(data.path, b - a, a),
                      weights=weights)
