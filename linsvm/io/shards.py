"""Reading training data on several MPI ranks, each rank its own share.

Three ways, one result -- the rows of the serial reader, each rank holding a
block of them in rank order, and every rank agreeing on the width, the labels
in first-appearance order and the row counts (a LocalShare):

* read_svmlight_share: a plain file split into byte ranges (below);
* read_shards: shard files (any compression) dealt whole to the ranks, in name
  order, balanced by size;
* scatter_svmlight: rank 0 reads (standard input, a compressed file) and sends
  each rank its rows;

read_training_share picks the one the input allows.  (Whether this process is
one rank of an MPI job is linsvm.runtime.launch's question.)

Splitting a plain file: a plain (uncompressed)
file is split into P byte ranges (:func:`byte_ranges`) and rank r parses only
the lines whose first byte lies in its range ``[start_r, end_r)``: a line that
straddles a boundary belongs to the rank where it starts, so a rank whose
start is not 0 first skips to the byte after the newline at or after
``start_r - 1``, and a rank reads past its end only to finish its last line.
No rank reads the whole file, and nobody has to split it beforehand.

The ranks then agree, in one collective (``allgather``), on what the serial
reader (:func:`linsvm.io.svmlight.load_svmlight_buffers`) would have found:

* the number of features (the largest index over all ranks, or the given
  ``n_features``), the total row count and each rank's first global row;
* the distinct labels in order of first appearance over the whole file (the
  order LIBLINEAR's classes follow; see :func:`linsvm.problem.labels.class_order`);
* the first error in the file, if any: every rank raises the same one-line
  :class:`~linsvm.errors.DataError` ``FILE:LINE: what is wrong`` with the
  global line number, after the collective, so no rank is left waiting.  The
  qid rule (every row has a qid or none has) is judged over the whole file,
  as the serial reader judges it.

The union of the ranks' rows, in rank order, is the serial reader's result
bit for bit.  The communicator is anything with mpi4py's lowercase API
(``rank``, ``size``, ``allgather``; ``bcast`` and ``scatter`` for shards and
scattering); mpi4py itself is imported only by linsvm.runtime.launch.world_comm,
for a launch of several ranks, or by the caller who makes the communicator (``pip install
".[mpi]"``; ``mpiexec -n P python ...``).
"""
from __future__ import annotations

import glob
import numbers
import os
import stat

import numpy as np

from .. import _svmlight
from ..errors import DataError, ParameterError
from ..problem.csr import CSRBuffers
from ..problem.labels import class_order_raw, merge_first_appearance
from ..runtime.collective import wait_for_root
from .binary_share import read_binary_share
from .binfile import is_binary_file
from .compressed import MAGIC, Input
from .places import RowPlaces
from .plain_share import LocalShare, byte_ranges, read_svmlight_share, rows_and_width
from .svmlight import load_svmlight_buffers

__all__ = ["byte_ranges", "read_svmlight_share", "read_shards", "scatter_svmlight",
           "read_training_share", "shard_paths", "assign_shards", "LocalShare"]

_INT32_MAX = 2**31 - 1


# ---------------------------------------------------------------------------
# shards: whole files per rank
# ---------------------------------------------------------------------------

def _allgather(comm, obj):
    return [obj] if comm is None else comm.allgather(obj)


def _bcast(comm, obj):
    return obj if comm is None else comm.bcast(obj, root=0)


def shard_paths(spec):
    """The shard files `spec` names, sorted by name: a glob pattern, or several
    patterns and names separated by commas (a name that matches no file is kept, so
    that reading it names the missing file).  Raises DataError for a pattern that
    matches nothing and for an empty spec."""
    names = set()
    for item in str(spec).split(","):
        item = item.strip()
        if not item:
            continue
        if glob.has_magic(item):
            found = [p for p in glob.glob(item) if not os.path.isdir(p)]
            if not found:
                raise DataError(f"--shards: no file matches {item!r}")
            names.update(found)
        else:
            names.add(item)
    if not names:
        raise DataError(f"--shards: no file named in {str(spec)!r}")
    return sorted(names)


def assign_shards(sizes, n_ranks):
    """Split files of the given byte sizes (in name order) into n_ranks contiguous runs,
    as even in bytes as whole files allow: file i goes to the rank whose share of the
    total [r S / P, (r + 1) S / P) holds the middle of the file.  Returns a list of
    (first, stop) file indices per rank, in order (empty runs where there are fewer
    files than ranks, or one file outweighs several shares)."""
    sizes = [max(int(s), 0) for s in sizes]
    n, total = len(sizes), sum(sizes)
    owner, before = [], 0
    for i, s in enumerate(sizes):
        if total > 0:
            owner.append(min(n_ranks - 1, (2 * before + s) * n_ranks // (2 * total)))
        else:
            owner.append(i * n_ranks // max(n, 1))
        before += s
    out, first = [], 0
    for r in range(n_ranks):
        stop = first
        while stop < n and owner[stop] == r:
            stop += 1
        out.append((first, stop))
        first = stop
    return out


def _shard_list(spec):
    """(paths, sizes) of the shards, or the DataError's message."""
    try:
        paths = shard_paths(spec)
    except DataError as e:
        return str(e)
    sizes = []
    for p in paths:
        try:
            sizes.append(os.stat(p).st_size)
        except OSError as e:
            return f"{p}: cannot open: {e.strerror or e}"
    return paths, sizes


def _parse_whole(path, with_qid, n_features):
    """Parse a whole file (any compression): (parts or None, parser, (line, what) of a
    line error or None).  File-level errors raise DataError."""
    parser = _svmlight.Parser(with_qid, n_features)
    with Input(path) as src:
        src.fast = True
        for buf, n in src.chunks():
            parser.feed(buf, n)
            if parser.parse() < 0:
                return None, parser, parser.error()
        parser.end()
        if parser.parse() < 0:
            return None, parser, parser.error()
    return parser.take(), parser, None


def _concat(parts_list, with_qid):
    """One rank's rows from its files' parser arrays, in file order."""
    if not parts_list:
        return (np.zeros(1, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64),
                np.zeros(0, np.float64), np.zeros(0, np.int64), 0)
    if len(parts_list) == 1:
        return parts_list[0]
    nnz = np.cumsum([0] + [p[0][-1] for p in parts_list[:-1]])
    indptr = np.concatenate([parts_list[0][0][:1]] +
                            [p[0][1:] + int(o) for p, o in zip(parts_list, nnz)]).astype(np.int64)
    qid = np.concatenate([p[4] for p in parts_list]) if with_qid else None
    return (indptr, *(np.concatenate([p[k] for p in parts_list]) for k in (1, 2, 3)), qid,
            max(int(p[5]) for p in parts_list))


def read_shards(spec, comm, n_features=None, with_qid=False, labels=True):
    """Read shard files spread over the ranks of `comm` (None: one rank reads all).

    `spec`: a glob pattern or comma-separated patterns and names (shard_paths); the
    files, sorted by name, are dealt to the ranks in contiguous runs balanced by
    their sizes (assign_shards; rank 0 lists them and tells the others, so every
    rank works from one list).  Each file may be plain or compressed (as
    linsvm.io.svmlight reads), and may hold no rows; each rank reads only its own files.
    The union of the ranks' rows in rank order is the concatenation of the files in
    name order, and the ranks agree, as for read_svmlight_share, on the width (the
    largest index of all files, or `n_features`), the row counts, the labels in
    first-appearance order, and the qid rule (every row of every file has a qid or
    none has).

    Returns a LocalShare (first_line and n_lines are 0: a rank's rows span files).
    Raises DataError on every rank alike: the first error in name order,
    ``FILE:LINE: ...`` with the file's own line number.
    """
    n_features = _check_width(n_features)
    rank, n_ranks = (0, 1) if comm is None else (int(comm.rank), int(comm.size))
    listing = _bcast(comm, _shard_list(spec) if rank == 0 else None)
    if isinstance(listing, str):
        raise DataError(listing)
    paths, sizes = listing
    first, stop = assign_shards(sizes, n_ranks)[rank]
    report = {"n_rows": 0, "max_index": 0, "error": None, "qid": [], "labels": None}
    parts_list, fault, places = [], None, RowPlaces()
    for f in range(first, stop):
        try:
            parts, parser, line_error = _parse_whole(paths[f], bool(with_qid), n_features)
        except DataError as e:
            report["error"] = (f, 0, str(e))
            break
        except Exception as e:     # a fault, not bad input: still join the collective
            report["error"] = (f, 0, f"{paths[f]}: rank {rank}: {type(e).__name__}: {e}")
            fault = e
            break
        if parser.qid_mode >= 0:
            report["qid"].append((f, parser.qid_mode, parser.qid_first_line))
        if line_error is not None:
            report["error"] = (f, line_error[0], f"{paths[f]}:{line_error[0]}: {line_error[1]}")
            break
        parts_list.append(parts)
        places.add(paths[f], parts[3].shape[0], parser.row_gaps())
    local = None
    if report["error"] is None:
        local = _concat(parts_list, bool(with_qid))
        report["n_rows"] = int(local[3].shape[0])
        report["max_index"] = int(local[5])
        if labels and local[3].shape[0]:
            report["labels"] = class_order_raw(local[3])
    reports = _allgather(comm, report)
    message = _first_shard_error(paths, reports, bool(with_qid))
    if message is not None:
        if fault is not None and message == report["error"][2]:
            raise fault
        raise DataError(message)
    n_rows, row_offsets, width = rows_and_width(reports, n_features)
    indptr, indices, data, y, qid, max_index = local
    X = CSRBuffers.trusted(indptr, indices, data, width, max_index)
    return LocalShare(X=X, y=y, qid=qid if with_qid else None, row_offset=row_offsets[rank],
                      n_rows_total=int(sum(n_rows)), first_line=0, n_lines=0,
                      n_features=int(width),
                      labels=merge_first_appearance(rep["labels"] for rep in reports
                                                    if rep["labels"] is not None)
                      if labels else None,
                      rank=rank, n_ranks=n_ranks, places=places)


def _first_shard_error(paths, reports, with_qid):
    """The first error in name order over the ranks' reports, or None: a file's own
    error (each rank stops at its first), or a file whose rows break the qid rule set
    by the first file with rows."""
    errors = [rep["error"] for rep in reports if rep["error"] is not None]
    candidates = [(f, line, msg) for f, line, msg in errors]
    if with_qid:
        modes = sorted(q for rep in reports for q in rep["qid"])
        if modes:
            f0, mode, line0 = modes[0]
            for f, m, line in modes[1:]:
                if m != mode:
                    what = (f"row has a qid, but the rows of {paths[f0]} do not" if m else
                            f"row has no qid, but the rows of {paths[f0]} do")
                    candidates.append((f, line, f"{paths[f]}:{line}: {what} "
                                                f"(first at line {line0})"))
                    break
    if not candidates:
        return None
    return min(candidates, key=lambda c: (c[0], c[1]))[2]


def _check_width(n_features):
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) \
                or n_features < 0:
            raise ParameterError(f"n_features must be a non-negative integer, not {n_features!r}")
        n_features = int(n_features)
    return n_features


# ---------------------------------------------------------------------------
# one reader, the rows scattered: standard input, compressed files
# ---------------------------------------------------------------------------

def scatter_svmlight(source, comm, n_features=None, with_qid=False, labels=True,
                     progress=None):
    """Rank 0 reads `source` whole (a path, ``-`` for standard input, any
    compression; linsvm.io.svmlight.load_svmlight_buffers) and sends every rank its
    block of rows: rows [n r / P, n (r + 1) / P) to rank r, so that the union in
    rank order is the file.  For input that cannot be split at byte offsets; it
    costs rank 0 the memory of the whole data set (about twice that while the
    blocks are being sent) and the others its transfer (a plain file read with
    read_svmlight_share, or shards, avoid both).
    `progress(rows)` is called on rank 0 while it reads.

    Returns a LocalShare (first_line, n_lines 0); a reading error is raised on
    every rank alike (rank 0's DataError).
    """
    n_features = _check_width(n_features)
    rank, n_ranks = (0, 1) if comm is None else (int(comm.rank), int(comm.size))
    pieces = None
    if rank == 0:
        places = RowPlaces()
        try:
            X, y, qid = load_svmlight_buffers(source, n_features=n_features, with_qid=True,
                                              progress=progress, places=places)
        except DataError as e:
            pieces = [str(e)] * n_ranks
        else:
            n = y.shape[0]
            head = {"n_rows": n, "n_features": X.n_features,
                    "labels": class_order_raw(y) if labels else None}
            pieces = []
            for r in range(n_ranks):
                a, b = n * r // n_ranks, n * (r + 1) // n_ranks
                lo, hi = int(X.indptr[a]), int(X.indptr[b])
                pieces.append(dict(head, row_offset=a, indptr=X.indptr[a:b + 1] - lo,
                                   indices=X.indices[lo:hi],
                                   data=None if X.data is None else X.data[lo:hi], y=y[a:b],
                                   qid=qid[a:b], places=places.slice(a, b)))
            del X, y, qid
    if comm is not None:
        wait_for_root(comm)         # the others sleep while rank 0 reads (they may share its core)
    mine = pieces[0] if comm is None else comm.scatter(pieces, root=0)
    del pieces
    if isinstance(mine, str):
        raise DataError(mine)
    indices = mine["indices"]
    X = CSRBuffers.trusted(mine["indptr"], indices, mine["data"], mine["n_features"],
                           int(indices.max()) + 1 if indices.shape[0] else 0)
    return LocalShare(X=X, y=mine["y"], qid=mine["qid"] if with_qid else None,
                      row_offset=mine["row_offset"], n_rows_total=mine["n_rows"], first_line=0,
                      n_lines=0, n_features=mine["n_features"], labels=mine["labels"],
                      rank=rank, n_ranks=n_ranks, places=mine["places"])


def _sniff(source):
    """How rank 0 can read `source`: "map" (a binary data file), "split" (a plain
    regular file), "scatter" (standard input, a compressed or not regular file), or
    "error" (the reader then names the problem)."""
    if source == "-":
        return "scatter"
    if is_binary_file(source):
        return "map"
    try:
        fd = os.open(source, os.O_RDONLY)
    except OSError:
        return "split"              # read_svmlight_share names the problem on every rank
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "scatter"
        head = os.pread(fd, 6, 0)
    except OSError:
        return "split"
    finally:
        os.close(fd)
    return "scatter" if any(head.startswith(m) for m, _, _ in MAGIC) else "split"


def read_training_share(source, comm, shards=False, n_features=None, with_qid=False,
                        labels=True, progress=None):
    """This rank's share of a training set, read the cheapest way the input allows.

    `source`: a path, ``-`` (standard input), or with ``shards=True`` a shard spec
    (read_shards).  A plain regular file is split by byte ranges
    (read_svmlight_share: every rank reads its own lines); standard input, a
    compressed file, or anything else that cannot be split is read by rank 0 and
    scattered (scatter_svmlight); a binary data file is mapped by every rank, each
    taking its rows (linsvm.io.binary_share); rank 0 decides which, and tells the
    others, so every rank takes the same path.  With comm None (one rank) the serial
    reader reads the whole input (how "serial"; shards: their concatenation; a binary
    file: "map").

    Returns (LocalShare, how): how is "split", "shards", "scatter", "map" or "serial".
    """
    if shards:
        return read_shards(source, comm, n_features, with_qid, labels), "shards"
    if comm is None:
        if is_binary_file(source):
            return read_binary_share(source, None, n_features, with_qid, labels), "map"
        return scatter_svmlight(source, None, n_features, with_qid, labels, progress), "serial"
    how = comm.bcast(_sniff(source) if int(comm.rank) == 0 else None, root=0)
    if how == "map":
        return read_binary_share(source, comm, n_features, with_qid, labels), how
    if how == "scatter":
        return scatter_svmlight(source, comm, n_features, with_qid, labels, progress), how
    return read_svmlight_share(source, comm, n_features, with_qid, labels), how
