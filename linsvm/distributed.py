"""Reading training data on several MPI ranks, each rank its own share.

Three ways, one result -- the rows of the serial reader, each rank holding a
block of them in rank order, and every rank agreeing on the width, the labels
in first-appearance order and the row counts (a LocalShare):

* read_svmlight_share: a plain file split into byte ranges (below);
* read_shards: shard files (any compression) dealt whole to the ranks, in name
  order, balanced by size;
* scatter_svmlight: rank 0 reads (standard input, a compressed file) and sends
  each rank its rows;

read_training_share picks the one the input allows.  mpi_launch and world_comm
tell, from the launcher's environment variables alone, whether this process is
one rank of an MPI job (and only then import mpi4py); the command line uses
them (linsvm.cli).

Splitting a plain file (issue 18's first piece): a plain (uncompressed)
file is split into P byte ranges (:func:`byte_ranges`) and rank r parses only
the lines whose first byte lies in its range ``[start_r, end_r)``: a line that
straddles a boundary belongs to the rank where it starts, so a rank whose
start is not 0 first skips to the byte after the newline at or after
``start_r - 1``, and a rank reads past its end only to finish its last line.
No rank reads the whole file, and nobody has to split it beforehand.

The ranks then agree, in one collective (``allgather``), on what the serial
reader (:func:`linsvm.data.load_svmlight_buffers`) would have found:

* the number of features (the largest index over all ranks, or the given
  ``n_features``), the total row count and each rank's first global row;
* the distinct labels in order of first appearance over the whole file (the
  order LIBLINEAR's classes follow; see :func:`linsvm.train.class_order`);
* the first error in the file, if any: every rank raises the same one-line
  :class:`~linsvm.errors.DataError` ``FILE:LINE: what is wrong`` with the
  global line number, after the collective, so no rank is left waiting.  The
  qid rule (every row has a qid or none has) is judged over the whole file,
  as the serial reader judges it.

The union of the ranks' rows, in rank order, is the serial reader's result
bit for bit.  The communicator is anything with mpi4py's lowercase API
(``rank``, ``size``, ``allgather``; ``bcast`` and ``scatter`` for shards and
scattering); mpi4py itself is imported only by world_comm, for a launch of
several ranks, or by the caller who makes the communicator (``pip install
".[mpi]"``; ``mpiexec -n P python ...``).
"""
from __future__ import annotations

import numbers
import os
import re
import stat
from dataclasses import dataclass

import numpy as np

from . import _svmlight
from .data import _MAGIC
from .errors import DataError, ParameterError
from .problem import CSRBuffers

__all__ = ["byte_ranges", "read_svmlight_share", "read_shards", "scatter_svmlight",
           "read_training_share", "shard_paths", "assign_shards", "mpi_launch", "world_comm",
           "LocalShare", "Launch"]

_CHUNK_BYTES = 1 << 20
_INT32_MAX = 2**31 - 1
_QID_FIRST = re.compile(r"\(first at line \d+\)$")


def byte_ranges(size, n_parts):
    """Split ``size`` bytes into ``n_parts`` contiguous ranges, as even as can be.

    Returns a list of ``(start, end)`` pairs, part r covering bytes
    ``[start, end)`` with ``start = size * r // n_parts``: the ranges are in
    order, cover ``[0, size)`` without overlap, and differ in length by at
    most one byte (ranges are empty when ``size < n_parts``).
    """
    for name, v, low in (("size", size, 0), ("n_parts", n_parts, 1)):
        if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < low:
            raise ParameterError(f"{name} must be an integer >= {low}, not {v!r}")
    size, n_parts = int(size), int(n_parts)
    return [(size * r // n_parts, size * (r + 1) // n_parts) for r in range(n_parts)]


@dataclass(frozen=True)
class LocalShare:
    """One rank's rows of a file read by :func:`read_svmlight_share`.

    X : CSRBuffers of this rank's rows, ``n_features`` columns (the width
        all ranks agreed on).
    y : float64 labels of those rows; qid : int64 query ids, or None
        without ``with_qid``.
    row_offset : global index of this rank's first row (rows of lower ranks).
    n_rows_total : rows in the whole file.
    first_line : global (1-based) line number of this rank's first line; its
        share holds ``n_lines`` lines (blank and comment lines included), so
        local line k is global line ``first_line + k - 1``.
    n_features : the agreed width.
    labels : the distinct labels of the whole file in order of first
        appearance (None when not asked for).
    rank, n_ranks : this rank and the number of ranks.
    """
    X: CSRBuffers
    y: np.ndarray
    qid: np.ndarray | None
    row_offset: int
    n_rows_total: int
    first_line: int
    n_lines: int
    n_features: int
    labels: np.ndarray | None
    rank: int
    n_ranks: int


def read_svmlight_share(path, comm, n_features=None, with_qid=False, labels=True):
    """Read this rank's share of a plain SVM-light file (see the module notes).

    Every rank of `comm` must call this with the same arguments.  `path`: a
    regular file that every rank can open (a shared or replicated file
    system); `n_features` and `with_qid` as for
    :func:`linsvm.data.load_svmlight_buffers`.  `labels`: also agree on the
    distinct labels in first-appearance order (costs one gather of each
    rank's distinct labels; pass False for regression targets).

    Returns a :class:`LocalShare`.  Raises DataError, the same on every rank:
    ``FILE:LINE: ...`` with the global line number for malformed input,
    ``FILE: ...`` when the file cannot be opened or read, is not a regular
    file, or is compressed (a compressed file cannot be split at byte
    offsets).
    """
    if n_features is not None:
        if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) \
                or n_features < 0:
            raise ParameterError(f"n_features must be a non-negative integer, not {n_features!r}")
        n_features = int(n_features)
    rank, n_ranks = int(comm.rank), int(comm.size)
    local, report, fault = _read_local(path, rank, n_ranks, n_features, bool(with_qid),
                                       bool(labels))
    reports = comm.allgather(report)
    return _agree(path, local, reports, rank, n_features, bool(with_qid), bool(labels), fault)


# ---------------------------------------------------------------------------
# the local part: each rank reads and parses its own lines
# ---------------------------------------------------------------------------

def _name(path):
    return os.fsdecode(os.fspath(path))


def _read_local(path, rank, n_ranks, n_features, with_qid, want_labels):
    """Parse rank's lines; returns (arrays or None, report for the others,
    exception or None).

    The report is a small dict of plain values that every rank receives:
    line and row counts, the largest index, the qid pattern of the first row,
    the first error (with its local line), and the first-appearance labels.
    Any exception is caught here and reported, so that this rank still takes
    part in the collective; _agree raises it on every rank (an exception
    that is not a DataError stays here, re-raised by this rank, while the
    others raise a DataError naming it).
    """
    report = {"n_lines": 0, "n_rows": 0, "max_index": 0, "qid_mode": -1, "qid_line": 0,
              "error": None, "line_error": None, "labels": None}
    try:
        parts, parser = _parse_share(path, rank, n_ranks, n_features, with_qid, report)
    except DataError as e:
        report["error"] = str(e)
        return None, report, None
    except Exception as e:     # a fault, not bad input: still join the collective
        report["error"] = f"{_name(path)}: rank {rank}: {type(e).__name__}: {e}"
        return None, report, e
    report["qid_mode"] = parser.qid_mode
    report["qid_line"] = parser.qid_first_line
    if parts is None:                      # a line error: its report is filled in
        return None, report, None
    indptr, indices, data, y, qid, max_index = parts
    report["n_rows"] = int(y.shape[0])
    report["max_index"] = int(max_index)
    if want_labels and y.shape[0]:
        _, first = np.unique(y, return_index=True)
        first.sort()
        report["labels"] = (y[first], first.astype(np.int64))
    return parts, report, None


def _parse_share(path, rank, n_ranks, n_features, with_qid, report):
    """Open path, find this rank's lines and parse them (see _read_local)."""
    name = _name(path)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as e:
        raise DataError(f"{name}: cannot open: {e.strerror or e}") from e
    try:
        def pread(n, at):
            try:
                return os.pread(fd, n, at)
            except OSError as e:
                raise DataError(f"{name}: read error: {e.strerror or e}") from e

        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{name}: not a regular file; reading on several ranks splits "
                            "a plain file at byte offsets")
        size = st.st_size
        head = pread(6, 0)
        for magic, kind, _ in _MAGIC:      # the formats data.py recognises
            if head.startswith(magic):
                raise DataError(f"{name}: {kind} compressed; reading on several ranks splits "
                                "only plain files (decompress it first)")
        start, end = byte_ranges(size, n_ranks)[rank]
        first = _first_line_start(pread, start, size)
        parser = _svmlight.Parser(with_qid, n_features)

        def feed(chunk):
            parser.feed(chunk)
            if parser.parse() < 0:
                line, what = parser.error()
                report["line_error"] = (int(line), what)
                return False
            return True

        pos, last = first, b"\n"
        while pos < end:                       # the lines that start in [first, end)
            chunk = pread(min(_CHUNK_BYTES, end - pos), pos)
            if not chunk:                      # the file shrank under us
                break
            if not feed(chunk):
                return None, parser
            if pos == first and end - first > len(chunk):
                # Extrapolate the share's size from its first chunk, with 5% to
                # spare (as the serial reader does), instead of growing by halves.
                f = 1.05 * (end - first) / len(chunk)
                parser.reserve(int(parser.n_rows * f) + 64, int(parser.nnz * f) + 1024)
            pos += len(chunk)
            last = chunk[-1:]
        while pos < size and last != b"\n":    # the rest of the last line, past end
            chunk = pread(_CHUNK_BYTES, pos)
            if not chunk:
                break
            cut = chunk.find(b"\n")
            if cut >= 0:
                chunk = chunk[:cut + 1]
            if not feed(chunk):
                return None, parser
            pos += len(chunk)
            last = chunk[-1:]
        parser.end()
        if parser.parse() < 0:
            line, what = parser.error()
            report["line_error"] = (int(line), what)
            return None, parser
        report["n_lines"] = int(parser.lineno)
        return parser.take(), parser
    finally:
        os.close(fd)


def _first_line_start(pread, start, size):
    """Offset of the first line that starts at or after `start` (size if none):
    start itself when it is 0 or follows a newline, else the byte after the
    next newline."""
    if start == 0:
        return 0
    pos = start - 1
    while pos < size:
        chunk = pread(_CHUNK_BYTES, pos)
        if not chunk:
            break
        cut = chunk.find(b"\n")
        if cut >= 0:
            return pos + cut + 1
        pos += len(chunk)
    return size


# ---------------------------------------------------------------------------
# the agreement: every rank computes the same from everyone's reports
# ---------------------------------------------------------------------------

def _rows_and_width(reports, n_features):
    """From every rank's report: the ranks' row counts, their first global rows, and the
    agreed width (the largest index read, or the given n_features), which the cores'
    int32 column indices must be able to address."""
    n_rows = [rep["n_rows"] for rep in reports]
    row_offsets = np.concatenate([[0], np.cumsum(n_rows[:-1], dtype=np.int64)]).tolist()
    width = max(rep["max_index"] for rep in reports) if n_features is None else n_features
    if width > _INT32_MAX:
        raise DataError(f"X has {width} columns, more than int32 indices allow")
    return n_rows, row_offsets, width


def _first_error(name, reports, line_offsets, with_qid):
    """The error the serial reader would raise, as (message) or None.

    A file-level fault (cannot open, compressed, ...) on any rank wins, the
    lowest rank's.  Otherwise the first line error in file order: ranks hold
    consecutive lines, so it is the first rank's that has one.  With qid the
    pattern is set by the file's first row; a rank whose first row breaks it
    has its error at that row, unless an earlier line of the rank failed; and
    a local qid message names the file's first row, not the rank's.
    """
    for rep in reports:
        if rep["error"] is not None:
            return rep["error"]
    mode, mode_line = -1, 0
    if with_qid:
        for rep, off in zip(reports, line_offsets):
            if rep["qid_mode"] >= 0:
                mode, mode_line = rep["qid_mode"], off + rep["qid_line"]
                break
    for rep, off in zip(reports, line_offsets):
        err = None
        if rep["line_error"] is not None:
            line, what = rep["line_error"]
            if what.startswith("row has "):
                what = _QID_FIRST.sub(f"(first at line {mode_line})", what)
            err = (off + line, what)
        if with_qid and rep["qid_mode"] >= 0 and rep["qid_mode"] != mode:
            line = off + rep["qid_line"]
            if err is None or err[0] >= line:
                what = ("row has a qid, but earlier rows do not" if rep["qid_mode"]
                        else "row has no qid, but earlier rows do")
                err = (line, f"{what} (first at line {mode_line})")
        if err is not None:
            return f"{name}:{err[0]}: {err[1]}"
    return None


def _agree(path, local, reports, rank, n_features, with_qid, want_labels, fault=None):
    """This rank's LocalShare from everyone's reports, or the common error."""
    name = _name(path)
    n_lines = [rep["n_lines"] for rep in reports]
    line_offsets = np.concatenate([[0], np.cumsum(n_lines[:-1], dtype=np.int64)]).tolist()
    message = _first_error(name, reports, line_offsets, with_qid)
    if message is not None:
        if fault is not None and message == reports[rank]["error"]:
            raise fault
        raise DataError(message)
    n_rows, row_offsets, width = _rows_and_width(reports, n_features)
    labels = None
    if want_labels:
        values, rows = [], []
        for rep, off in zip(reports, row_offsets):
            if rep["labels"] is not None:
                values.append(rep["labels"][0])
                rows.append(rep["labels"][1] + off)
        labels = np.zeros(0, dtype=np.float64)
        if values:
            rows = np.concatenate(rows)
            values = np.concatenate(values)[np.argsort(rows, kind="stable")]
            _, first = np.unique(values, return_index=True)   # first in row order
            first.sort()
            labels = values[first]
    indptr, indices, data, y, qid, max_index = local
    X = CSRBuffers.trusted(indptr, indices, data, width, max_index)
    return LocalShare(X=X, y=y, qid=qid if with_qid else None, row_offset=row_offsets[rank],
                      n_rows_total=int(sum(n_rows)), first_line=line_offsets[rank] + 1,
                      n_lines=n_lines[rank], n_features=int(width), labels=labels,
                      rank=rank, n_ranks=len(reports))


# ---------------------------------------------------------------------------
# the launch: is this process one rank of an MPI job?
# ---------------------------------------------------------------------------

# What MPI launchers export to every process they start: (rank variable, size
# variable, launcher), in the order they are consulted.  The first rank variable
# present decides; mpi4py is imported only when its size is above one (or unknown).
LAUNCHER_VARIABLES = (
    ("PMI_RANK", "PMI_SIZE", "MPICH/Intel MPI (Hydra), or srun --mpi=pmi2"),
    ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "Open MPI"),
    ("MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_SIZE", "MVAPICH"),
    ("PMIX_RANK", "SLURM_STEP_NUM_TASKS", "a PMIx launcher (srun --mpi=pmix, prterun)"),
)


@dataclass(frozen=True)
class Launch:
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
    import glob

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
    from .data import _Input

    parser = _svmlight.Parser(with_qid, n_features)
    with _Input(path) as src:
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


def _first_appearance(y):
    _, first = np.unique(y, return_index=True)
    first.sort()
    return y[first], first.astype(np.int64)


def _merge_labels(reports, row_offsets):
    """The distinct labels over the ranks in order of first appearance (reports'
    "labels": each rank's (values, local first rows) or None)."""
    values, rows = [], []
    for rep, off in zip(reports, row_offsets):
        if rep["labels"] is not None:
            values.append(rep["labels"][0])
            rows.append(rep["labels"][1] + off)
    if not values:
        return np.zeros(0, dtype=np.float64)
    rows = np.concatenate(rows)
    values = np.concatenate(values)[np.argsort(rows, kind="stable")]
    _, first = np.unique(values, return_index=True)
    first.sort()
    return values[first]


def read_shards(spec, comm, n_features=None, with_qid=False, labels=True):
    """Read shard files spread over the ranks of `comm` (None: one rank reads all).

    `spec`: a glob pattern or comma-separated patterns and names (shard_paths); the
    files, sorted by name, are dealt to the ranks in contiguous runs balanced by
    their sizes (assign_shards; rank 0 lists them and tells the others, so every
    rank works from one list).  Each file may be plain or compressed (as
    linsvm.data reads), and may hold no rows; each rank reads only its own files.
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
    parts_list, fault = [], None
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
    local = None
    if report["error"] is None:
        local = _concat(parts_list, bool(with_qid))
        report["n_rows"] = int(local[3].shape[0])
        report["max_index"] = int(local[5])
        if labels and local[3].shape[0]:
            report["labels"] = _first_appearance(local[3])
    reports = _allgather(comm, report)
    message = _first_shard_error(paths, reports, bool(with_qid))
    if message is not None:
        if fault is not None and message == report["error"][2]:
            raise fault
        raise DataError(message)
    n_rows, row_offsets, width = _rows_and_width(reports, n_features)
    indptr, indices, data, y, qid, max_index = local
    X = CSRBuffers.trusted(indptr, indices, data, width, max_index)
    return LocalShare(X=X, y=y, qid=qid if with_qid else None, row_offset=row_offsets[rank],
                      n_rows_total=int(sum(n_rows)), first_line=0, n_lines=0,
                      n_features=int(width),
                      labels=_merge_labels(reports, row_offsets) if labels else None,
                      rank=rank, n_ranks=n_ranks)


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
    compression; linsvm.data.load_svmlight_buffers) and sends every rank its
    block of rows: rows [n r / P, n (r + 1) / P) to rank r, so that the union in
    rank order is the file.  For input that cannot be split at byte offsets; it
    costs rank 0 the memory of the whole data set (about twice that while the
    blocks are being sent) and the others its transfer (a plain file read with
    read_svmlight_share, or shards, avoid both).
    `progress(rows)` is called on rank 0 while it reads.

    Returns a LocalShare (first_line, n_lines 0); a reading error is raised on
    every rank alike (rank 0's DataError).
    """
    from .data import load_svmlight_buffers
    from .train import class_order_raw

    n_features = _check_width(n_features)
    rank, n_ranks = (0, 1) if comm is None else (int(comm.rank), int(comm.size))
    pieces = None
    if rank == 0:
        try:
            X, y, qid = load_svmlight_buffers(source, n_features=n_features, with_qid=True,
                                              progress=progress)
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
                                   indices=X.indices[lo:hi], data=X.data[lo:hi], y=y[a:b],
                                   qid=qid[a:b]))
            del X, y, qid
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
                      rank=rank, n_ranks=n_ranks)


def _sniff(source):
    """How rank 0 can read `source`: "split" (a plain regular file), "scatter"
    (standard input, a compressed or not regular file), or "error" (the reader
    then names the problem)."""
    if source == "-":
        return "scatter"
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
    return "scatter" if any(head.startswith(m) for m, _, _ in _MAGIC) else "split"


def read_training_share(source, comm, shards=False, n_features=None, with_qid=False,
                        labels=True, progress=None):
    """This rank's share of a training set, read the cheapest way the input allows.

    `source`: a path, ``-`` (standard input), or with ``shards=True`` a shard spec
    (read_shards).  A plain regular file is split by byte ranges
    (read_svmlight_share: every rank reads its own lines); standard input, a
    compressed file, or anything else that cannot be split is read by rank 0 and
    scattered (scatter_svmlight); rank 0 decides which, and tells the others, so
    every rank takes the same path.  With comm None (one rank) the serial reader
    reads the whole input (how "serial"; shards: their concatenation).

    Returns (LocalShare, how): how is "split", "shards", "scatter" or "serial".
    """
    if shards:
        return read_shards(source, comm, n_features, with_qid, labels), "shards"
    if comm is None:
        return scatter_svmlight(source, None, n_features, with_qid, labels, progress), "serial"
    how = comm.bcast(_sniff(source) if int(comm.rank) == 0 else None, root=0)
    if how == "scatter":
        return scatter_svmlight(source, comm, n_features, with_qid, labels, progress), how
    return read_svmlight_share(source, comm, n_features, with_qid, labels), how
