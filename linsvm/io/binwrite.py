"""Writing linsvm's binary data file, streaming: blocks of rows in, one file out, atomically.

`BinaryWriter` takes a data set block by block (`append`), so that memory holds one block
whatever the total.  The column indices go straight into the output, after room reserved
for the header; the row pointers, values, labels, qids and weights go to anonymous side
files in the output's directory (linsvm.io.atomic.scratch_file); on a clean exit each side
file is copied after the indices at the next page-aligned offset (in the kernel where the
file system can, os.copy_file_range), the header is written last, into its reserved room,
and the file is moved into place (linsvm.io.atomic.atomic_output).  On an error, Ctrl-C
included, nothing is left: neither the output nor a side file.

The layout of the values (`values`): "float64" stores them as they are; "float32" rounds
each to the nearest float32 (a value beyond float32's range is refused); "pattern" stores
none, and refuses a value other than 1; "auto" (the default) is a pattern when every value
appended is exactly 1.0 and float64 otherwise.  "auto" writes no values until it meets one
that is not 1, so 0/1 data never costs the disk a values file.

Everything the reader verifies is checked here as each block comes in, so that a file this
writer completes is one the reader accepts: row pointers from 0 never decreasing, column
indices in [0, n_features) increasing within each row, finite values, labels and weights.
A fault raises DataError naming the row; a value the layout cannot store raises
NotStorableError (a DataError carrying the row, column and value, so that a converter can
name the line of its input).
"""
from __future__ import annotations

import contextlib
import errno
import os

import numpy as np

from .. import _kernels
from ..errors import DataError, ParameterError
from .atomic import atomic_output, is_special_file, scratch_file
from .binformat import (ALIGN, INDICES, INDPTR, LABELS, QID, VALUES, WEIGHTS, Header, Section,
                        SourceRecord, aligned, header_bytes, pack_header)
from .checksum import crc32
from .streams import write_all

__all__ = ["BinaryWriter", "NotStorableError", "WriteError", "VALUE_CHOICES"]

VALUE_CHOICES = ("auto", "float64", "float32", "pattern")
_INT32_MAX = 2**31 - 1
_COPY_BYTES = 4 << 20
_F32_MAX = float(np.finfo(np.float32).max)


class NotStorableError(DataError):
    """A value the writer's layout cannot store: row (0-based, over the whole file),
    column (0-based), value, and why."""

    def __init__(self, row, column, value, why):
        super().__init__(f"row {row + 1}: value {value!r} of feature {column + 1} {why}")
        self.row, self.column, self.value, self.why = row, column, value, why


class WriteError(DataError):
    """The output (or a side file beside it) could not be written: a full disk, a
    read-only directory.  Not a fault of the data."""


class _Side:
    """One section on its way: an anonymous side file, its length and CRC so far."""

    def __init__(self, kind, directory):
        self.kind, self.nbytes, self.crc = kind, 0, 0
        self.fh = scratch_file(directory)

    def write(self, a):
        self.crc = crc32(a, self.crc)
        self.nbytes += write_all(self.fh, a)


class BinaryWriter:
    """Write a binary data file block by block (module notes); a context manager.

    `path`: the output, written atomically (a regular file: not ``-``, not a pipe or a
    device other than /dev/null).  `values`: "auto", "float64", "float32" or "pattern".
    `n_features`: the width stored (default: the largest index appended); an index at or
    beyond it is an error.  `with_qid`, `with_weights`: every block then carries qid
    (integers) or weights (finite).  `source`: a linsvm.io.binformat.SourceRecord to
    store (the cache's record of what the file was made from), or None.

    ``append(indptr, indices, data, labels, qid=None, weights=None)`` adds a block of
    rows: its row pointers start at 0, `data` is None for a block of a pattern (every
    value 1).  The file appears when the ``with`` block ends without an error.
    """

    def __init__(self, path, values="auto", n_features=None, with_qid=False,
                 with_weights=False, source=None):
        if values not in VALUE_CHOICES:
            raise ParameterError(f"values must be one of {', '.join(VALUE_CHOICES)}, "
                                 f"not {values!r}")
        if n_features is not None and (isinstance(n_features, bool) or int(n_features) != n_features
                                       or not 0 <= n_features <= _INT32_MAX):
            raise ParameterError(f"n_features must be an integer in [0, {_INT32_MAX}], "
                                 f"not {n_features!r}")
        self.name = os.fsdecode(os.fspath(path))
        if self.name == "-" or (is_special_file(path) and self.name != os.devnull):
            raise ParameterError(f"cannot write a binary data file to '{self.name}': it is "
                                 "written in sections, the header last; give a file name")
        self.path, self.values = path, values
        self.n_features = None if n_features is None else int(n_features)
        self.with_qid, self.with_weights = bool(with_qid), bool(with_weights)
        self.source = source
        self.n_rows = self.nnz = self.max_index = 0
        self.layout = self.width = None     # the file's layout and width, once written
        self._stack = None

    # -- the output ---------------------------------------------------------------

    def __enter__(self):
        stack = contextlib.ExitStack()
        try:
            try:
                self._out = stack.enter_context(atomic_output(self.path))
            except OSError as e:
                raise WriteError(f"{self.name}: cannot write: {e.strerror or e}") from None
            # beside the output (one file system); /dev/null's: the temporary directory's
            directory = None if is_special_file(self.path) else \
                os.path.dirname(os.path.realpath(self.path))
            kinds = [INDPTR, LABELS] + ([QID] if self.with_qid else []) + \
                ([WEIGHTS] if self.with_weights else []) + \
                ([VALUES] if self.values in ("float64", "float32") else [])
            self._sides = {k: self._side(k, directory, stack) for k in kinds}
            self._directory = directory
            path_len = len(self.source.path) if self.source is not None else 0
            self._reserved = aligned(header_bytes(6, path_len))
            self._pos = self._write_out(bytes(self._reserved))
            self._indices_crc = 0
            self._write_side(INDPTR, np.zeros(1, np.int64))
        except BaseException:
            stack.close()
            raise
        self._stack = stack
        return self

    def __exit__(self, kind, exc, tb):
        """On a clean exit: the sections, the header, the file moved into place; on an
        error: nothing left."""
        stack, self._stack = self._stack, None
        if kind is not None:
            return stack.__exit__(kind, exc, tb)
        try:
            self._finish()
        except BaseException as e:
            stack.__exit__(type(e), e, e.__traceback__)
            raise
        try:
            stack.close()                   # the commit: fsync and rename
        except OSError as e:
            raise WriteError(f"{self.name}: cannot write: {e.strerror or e}") from None
        return False

    def _side(self, kind, directory, stack):
        try:
            side = _Side(kind, directory)
        except OSError as e:
            raise WriteError(f"{self.name}: cannot write a temporary file beside it: "
                             f"{e.strerror or e}") from None
        stack.callback(side.fh.close)
        return side

    def _write_out(self, a):
        try:
            return self._out.write(a)
        except OSError as e:
            raise WriteError(f"{self.name}: cannot write: {e.strerror or e}") from None

    def _write_side(self, kind, a):
        try:
            self._sides[kind].write(a)
        except OSError as e:
            raise WriteError(f"{self.name}: cannot write a temporary file beside it: "
                             f"{e.strerror or e}") from None

    # -- blocks -------------------------------------------------------------------

    def append(self, indptr, indices, data, labels, qid=None, weights=None):
        """Add a block of rows (class notes); DataError for a block that breaks the
        file's rules, naming the row (counted over the whole file), NotStorableError for
        a value the layout cannot store."""
        if self._stack is None:
            raise ValueError("BinaryWriter.append outside its with block")
        indptr, indices, labels = _check_block(indptr, indices, labels, self.n_rows)
        m, nnz = labels.shape[0], indices.shape[0]
        limit = self.n_features if self.n_features is not None else _INT32_MAX
        bad, top = _kernels.scan_column_indices(indices, limit)
        if bad >= 0:
            raise DataError(f"row {self._row(indptr, bad)}: feature index "
                            f"{int(indices[bad]) + 1} beyond the {limit} features")
        _check_increasing(indptr, indices, self.n_rows)
        values = self._values(indptr, indices, data, nnz)
        qid = self._per_row(qid, self.with_qid, "qid", m, np.int64)
        weights = self._per_row(weights, self.with_weights, "weights", m, np.float64)
        _check_finite(labels, "label", self.n_rows)
        if weights is not None:
            _check_finite(weights, "instance weight", self.n_rows)
        self._indices_crc = crc32(indices, self._indices_crc)
        self._pos += self._write_out(indices)
        if values is not None:
            self._write_side(VALUES, values)
        self._write_side(INDPTR, indptr[1:] + np.int64(self.nnz))
        self._write_side(LABELS, labels)
        if qid is not None:
            self._write_side(QID, qid)
        if weights is not None:
            self._write_side(WEIGHTS, weights)
        self.n_rows += m
        self.nnz += nnz
        self.max_index = max(self.max_index, int(top))

    def _row(self, indptr, k):
        """The 1-based file row of the block's entry k."""
        return self.n_rows + int(np.searchsorted(indptr, k, side="right"))

    def _per_row(self, a, wanted, what, m, dtype):
        if not wanted:
            if a is not None:
                raise ParameterError(f"BinaryWriter: {what} given to a writer made without")
            return None
        if a is None:
            raise ParameterError(f"BinaryWriter: every block needs its {what}")
        a = np.asarray(a)
        if a.ndim != 1 or a.shape[0] != m:
            raise DataError(f"{what} of shape {a.shape} for a block of {m} rows")
        if dtype is np.int64 and a.dtype.kind not in "iu":
            raise DataError(f"qid must be integers, not {a.dtype}")
        return np.ascontiguousarray(a, dtype=dtype)

    def _values(self, indptr, indices, data, nnz):
        """The block's values as the layout stores them (None: none to write)."""
        if data is not None:
            data = np.ascontiguousarray(data, dtype=np.float64)
            if data.ndim != 1 or data.shape[0] != nnz:
                raise DataError(f"data of shape {data.shape} for a block of {nnz} entries")
            k = _kernels.first_non_finite_value(data)
            if k >= 0:
                raise DataError(f"row {self._row(indptr, k)}: value {float(data[k])!r} is not "
                                "finite")
        unit = data is None or bool(np.all(data == 1.0))
        if self.values == "pattern":
            if not unit:
                k = int(np.argmax(data != 1.0))
                raise NotStorableError(self._row(indptr, k) - 1, int(indices[k]), float(data[k]),
                                       "is not 1 (a pattern stores no values)")
            return None
        if data is None:
            data = np.ones(nnz)
        if self.values == "float32":
            with np.errstate(over="ignore"):
                v = data.astype("<f4")
            if not np.all(np.isfinite(v)):
                k = int(np.argmax(~np.isfinite(v)))
                raise NotStorableError(self._row(indptr, k) - 1, int(indices[k]), float(data[k]),
                                       f"is beyond float32's range (+-{_F32_MAX:.7g})")
            return v
        if self.values == "auto" and VALUES not in self._sides:
            if unit:
                return None
            self._start_values()
        return data

    def _start_values(self):
        """The first value other than 1 of an "auto" file: the values side file starts,
        with a 1 for every entry before."""
        self._sides[VALUES] = self._side(VALUES, self._directory, self._stack)
        ones = np.ones(min(self.nnz, _COPY_BYTES // 8))
        left = self.nnz
        while left > 0:
            n = min(left, ones.shape[0])
            self._write_side(VALUES, ones[:n])
            left -= n

    # -- the end ------------------------------------------------------------------

    def _finish(self):
        """Copy the side files after the indices, write the header into its room."""
        layout = self.values
        if layout == "auto":
            layout = "float64" if VALUES in self._sides else "pattern"
        n_features = self.max_index if self.n_features is None else self.n_features
        sections = [Section(INDICES, self._reserved, self.nnz * 4, self._indices_crc)]
        for kind in (VALUES, INDPTR, LABELS, QID, WEIGHTS):
            side = self._sides.get(kind)
            if side is None:
                continue
            start = aligned(self._pos)
            self._pos += self._write_out(bytes(start - self._pos))
            self._copy(side)
            sections.append(Section(kind, start, side.nbytes, side.crc))
        header = pack_header(Header(self.n_rows, n_features, self.nnz, self.max_index, layout,
                                    self.with_qid, self.with_weights, self.source,
                                    tuple(sections)))
        assert len(header) <= self._reserved
        self.layout, self.width = layout, n_features
        try:
            self._out.flush()
            _pwrite_all(self._out.fileno(), header, 0)
        except OSError as e:
            raise WriteError(f"{self.name}: cannot write: {e.strerror or e}") from None

    def _copy(self, side):
        """The side file's bytes appended to the output (in the kernel where it can)."""
        try:
            side.fh.flush()
            self._out.flush()
            done = _copy_range(side.fh.fileno(), self._out.fileno(), side.nbytes)
        except OSError as e:
            raise WriteError(f"{self.name}: cannot write: {e.strerror or e}") from None
        side.fh.seek(done)
        while done < side.nbytes:
            part = side.fh.read(min(_COPY_BYTES, side.nbytes - done))
            if not part:
                raise WriteError(f"{self.name}: a temporary file beside it came back short")
            self._write_out(part)
            done += len(part)
        self._pos += side.nbytes


def _copy_range(src, dst, n):
    """Bytes of src (from its start) appended to dst by os.copy_file_range, as many as
    the file systems allow (0 where they do not: the caller copies the rest)."""
    copy = getattr(os, "copy_file_range", None)
    done = 0
    while copy is not None and done < n:
        try:
            k = copy(src, dst, n - done, done)
        except OSError as e:
            if e.errno in (errno.EXDEV, errno.ENOSYS, errno.EINVAL, errno.EOPNOTSUPP,
                           errno.EBADF, errno.EPERM):
                break
            raise
        if k <= 0:
            break
        done += k
    return done


def _pwrite_all(fd, data, offset):
    view = memoryview(data)
    while view:
        k = os.pwrite(fd, view, offset)
        if k <= 0:
            raise OSError(errno.EIO, "the write took no bytes")
        view, offset = view[k:], offset + k


def _check_block(indptr, indices, labels, first_row):
    """The block's row pointers (int64), indices (int32) and labels (float64), checked for
    the CSR shape: pointers from 0 to len(indices) never decreasing, one label a row."""
    indptr, indices, labels = np.asarray(indptr), np.asarray(indices), np.asarray(labels)
    if indptr.ndim != 1 or indptr.shape[0] < 1 or indptr.dtype.kind not in "iu":
        raise DataError("indptr must be a 1-D integer array of n_rows + 1 row pointers")
    if indices.ndim != 1 or indices.dtype.kind not in "iu":
        raise DataError("indices must be a 1-D integer array")
    if labels.ndim != 1 or labels.shape[0] != indptr.shape[0] - 1:
        raise DataError(f"{labels.shape} labels for a block of {indptr.shape[0] - 1} rows")
    indptr = np.ascontiguousarray(indptr, dtype=np.int64)
    nnz = indices.shape[0]
    if indptr[0] != 0:
        raise DataError(f"row {first_row + 1}: a block's row pointers must start at 0")
    k = _kernels.first_bad_row_pointer(indptr, 0, nnz)
    if k >= 0 or indptr[-1] != nnz:
        row = first_row + (k if k >= 0 else indptr.shape[0] - 1)
        raise DataError(f"row {row}: row pointers decrease or do not end at the block's "
                        f"{nnz} entries")
    if nnz and (int(indices.min()) < 0 or int(indices.max()) >= _INT32_MAX):
        raise DataError(f"indices must lie in [0, {_INT32_MAX})")
    return (indptr, np.ascontiguousarray(indices, dtype="<i4"),
            np.ascontiguousarray(labels, dtype=np.float64))


def _check_increasing(indptr, indices, first_row):
    """DataError unless the indices increase within every row of the block."""
    if indices.shape[0] < 2:
        return
    step = np.diff(indices) <= 0
    starts = indptr[1:-1]
    step[starts[(starts > 0) & (starts < indices.shape[0])] - 1] = False    # row boundaries
    if step.any():
        k = int(np.argmax(step)) + 1
        row = first_row + int(np.searchsorted(indptr, k, side="right"))
        raise DataError(f"row {row}: feature indices must increase within a row")


def _check_finite(a, what, first_row):
    k = _kernels.first_non_finite_value(a)
    if k >= 0:
        raise DataError(f"row {first_row + k + 1}: {what} {float(a[k])!r} is not finite")
