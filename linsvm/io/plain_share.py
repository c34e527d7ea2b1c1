"""One rank's share of a plain SVM-light file: byte ranges and the agreement of the ranks.

A plain (uncompressed) file is split into P byte ranges (`byte_ranges`) and rank
r parses only the lines whose first byte lies in its range ``[start_r, end_r)``:
a line that straddles a boundary belongs to the rank where it starts, so a rank
whose start is not 0 first skips to the byte after the newline at or after
``start_r - 1``, and a rank reads past its end only to finish its last line.  No
rank reads the whole file, and nobody has to split it beforehand.  The ranks then
agree, in one collective (``allgather``), on what the serial reader would have
found: the width, the row counts, the labels in first-appearance order, and the
first error in the file with its global line number (linsvm.io.shards has the
module notes on the three readers).
"""
from __future__ import annotations

import numbers
import os
import re
import stat
from dataclasses import dataclass

import numpy as np

from .. import _svmlight
from ..errors import DataError, ParameterError
from ..problem.csr import CSRBuffers
from ..problem.labels import class_order_raw, merge_first_appearance
from .compressed import MAGIC
from .places import RowPlaces

__all__ = ["byte_ranges", "read_svmlight_share", "LocalShare", "rows_and_width", "source_name"]

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
    places : a linsvm.io.places.RowPlaces of this rank's rows (FILE:LINE of each),
        or None.
    weights : the instance weights of this rank's rows that a binary data file holds
        (linsvm.io.binary_share), else None.
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
    places: object = None
    weights: object = None


def read_svmlight_share(path, comm, n_features=None, with_qid=False, labels=True):
    """Read this rank's share of a plain SVM-light file (see the module notes).

    Every rank of `comm` must call this with the same arguments.  `path`: a
    regular file that every rank can open (a shared or replicated file
    system); `n_features` and `with_qid` as for
    :func:`linsvm.io.svmlight.load_svmlight_buffers`.  `labels`: also agree on the
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
    gaps = report.pop("gaps")           # this rank's own: not sent
    reports = comm.allgather(report)
    return _agree(path, local, reports, rank, n_features, bool(with_qid), bool(labels), fault,
                  gaps)


# ---------------------------------------------------------------------------
# the local part: each rank reads and parses its own lines
# ---------------------------------------------------------------------------

def source_name(path):
    """The file name of a path, for messages."""
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
              "error": None, "line_error": None, "labels": None, "gaps": None}
    try:
        parts, parser = _parse_share(path, rank, n_ranks, n_features, with_qid, report)
    except DataError as e:
        report["error"] = str(e)
        return None, report, None
    except Exception as e:     # a fault, not bad input: still join the collective
        report["error"] = f"{source_name(path)}: rank {rank}: {type(e).__name__}: {e}"
        return None, report, e
    report["qid_mode"] = parser.qid_mode
    report["qid_line"] = parser.qid_first_line
    if parts is None:                      # a line error: its report is filled in
        return None, report, None
    indptr, indices, data, y, qid, max_index = parts
    report["n_rows"] = int(y.shape[0])
    report["max_index"] = int(max_index)
    report["gaps"] = parser.row_gaps()
    if want_labels and y.shape[0]:
        report["labels"] = class_order_raw(y)
    return parts, report, None


def _parse_share(path, rank, n_ranks, n_features, with_qid, report):
    """Open path, find this rank's lines and parse them (see _read_local)."""
    name = source_name(path)
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
        for magic, kind, _ in MAGIC:      # the formats data.py recognises
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

def rows_and_width(reports, n_features):
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


def _agree(path, local, reports, rank, n_features, with_qid, want_labels, fault=None, gaps=None):
    """This rank's LocalShare from everyone's reports, or the common error."""
    name = source_name(path)
    n_lines = [rep["n_lines"] for rep in reports]
    line_offsets = np.concatenate([[0], np.cumsum(n_lines[:-1], dtype=np.int64)]).tolist()
    message = _first_error(name, reports, line_offsets, with_qid)
    if message is not None:
        if fault is not None and message == reports[rank]["error"]:
            raise fault
        raise DataError(message)
    n_rows, row_offsets, width = rows_and_width(reports, n_features)
    labels = None
    if want_labels:             # ranks hold consecutive rows: rank order is row order
        labels = merge_first_appearance(rep["labels"] for rep in reports
                                        if rep["labels"] is not None)
    indptr, indices, data, y, qid, max_index = local
    X = CSRBuffers.trusted(indptr, indices, data, width, max_index)
    places = RowPlaces().add(name, y.shape[0], gaps, line_offsets[rank] + 1)
    return LocalShare(X=X, y=y, qid=qid if with_qid else None, row_offset=row_offsets[rank],
                      n_rows_total=int(sum(n_rows)), first_line=line_offsets[rank] + 1,
                      n_lines=n_lines[rank], n_features=int(width), labels=labels,
                      rank=rank, n_ranks=len(reports), places=places)
