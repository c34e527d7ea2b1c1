"""linsvm's binary data file: the CSR arrays of a data set, mapped from disk, never parsed.

A binary data file (docs/binary-format.md; written by `linsvm convert`, the `--cache` of
train, cv and predict, or `BinaryWriter`) holds the row pointers, column indices, values
(none for a 0/1 pattern, or float32), labels and, if any, qids and instance weights of a
data set, each in its own section at a page-aligned offset, with a CRC-32 per section and
one for the header.

`open_binary` maps such a file read-only and hands out NumPy arrays that are views into
the map: no copy, no parse.  Before it hands anything out it verifies the whole file in
one streamed pass, chunk by chunk (CHUNK_BYTES, small enough to stay in the cache between
the checksum and the checks): the magic bytes, the format version, the header's CRC, the
sizes against the file's length, every section's CRC, and what the compiled cores index
unchecked -- row pointers from 0 to nnz never decreasing, column indices in
[0, n_features) with the header's largest index the largest there is, finite values,
labels and weights.  So a damaged or truncated file, or one whose checksums hold but
whose contents do not, is refused in one line (DataError ``FILE: what``), never read as
other data.

`is_binary` tells a binary file from anything else by its magic bytes alone, never by
its name; no SVM-light text and no gzip, bzip2 or xz stream starts with them.  The
readers of linsvm.io.svmlight call it before they sniff for compression, so every
command and `linsvm.load_svmlight` take a binary file wherever they take a data file.
"""
from __future__ import annotations

import contextlib
import mmap
import os
import stat
import sys

import numpy as np

from .. import _kernels
from ..errors import DataError
from ..problem.csr import CSRBuffers
from .binformat import (FIXED_BYTES, INDICES, INDPTR, LABELS, MAGIC, QID, SECTION_NAMES, VALUES,
                        WEIGHTS, header_length, parse_header, section_dtype)
from .binwrite import BinaryWriter, NotStorableError
from .checksum import crc32

__all__ = ["is_binary", "is_binary_file", "open_binary", "BinaryData", "BinaryWriter",
           "NotStorableError", "MAGIC", "CHUNK_BYTES"]

CHUNK_BYTES = 4 << 20           # bytes checksummed and checked at a time (a multiple of 8)


def is_binary(source) -> bool:
    """Whether `source` is a linsvm binary data file, by its magic bytes: a path (str or
    os.PathLike: its first bytes are read; False when it cannot be read, and for
    ``"-"``), or the first bytes of a file (bytes, bytearray, memoryview)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source[:len(MAGIC)]) == MAGIC
    return is_binary_file(source)


def is_binary_file(path) -> bool:
    """is_binary for a path given as str, bytes or os.PathLike: False for ``"-"`` and for
    anything but a regular file, which is not even opened (the first bytes of a pipe,
    ``<(zcat data.gz)``, would be lost to its reader; linsvm.io.compressed.Input refuses
    a binary file that arrives through one)."""
    if isinstance(path, str) and path == "-":
        return False
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as fh:
            return fh.read(len(MAGIC)) == MAGIC
    except (OSError, TypeError, ValueError):
        return False


def _as_buffers(indptr, indices, values, layout, n_features, index_bound):
    """The CSRBuffers of a file's (or a block's) arrays, values as the layout stores them
    (None for a pattern).  The reader has verified what CSRBuffers.trusted relies on."""
    if layout == "pattern":
        values = None
    return CSRBuffers.trusted(indptr, indices, values, n_features, index_bound)


class BinaryData:
    """A verified, mapped binary data file (open_binary).

    X: CSRBuffers over the map (n_features columns); y: float64 labels; qid: int64 query
    ids or None; weights: float64 instance weights or None; path: the file's name;
    n_rows, n_features, nnz; max_index: the largest 1-based feature index (0 without
    entries); layout: "float64", "float32" or "pattern"; source: the SourceRecord of a
    cache file (linsvm.io.binformat.SourceRecord), else None.  The arrays are read-only
    views into the map; `close` drops this object's hold on it (the map itself closes
    when the last array over it is gone).
    """

    def __init__(self, path, header, mm):
        self.path, self._mm, self._h = path, mm, header
        self.n_rows, self.n_features, self.nnz = header.n_rows, header.n_features, header.nnz
        self.max_index, self.layout, self.source = header.max_index, header.layout, header.source
        self.indptr = self._array(INDPTR)
        self.indices = self._array(INDICES)
        self.values = self._array(VALUES)
        self.y = self._array(LABELS)
        self.qid = self._array(QID)
        self.weights = self._array(WEIGHTS)
        self.X = _as_buffers(self.indptr, self.indices, self.values, self.layout,
                             self.n_features, self.max_index)

    def _array(self, kind):
        s = self._h.section(kind)
        if s is None:
            return None
        dtype = section_dtype(kind, self._h.layout)
        return np.frombuffer(self._mm, dtype, s.nbytes // dtype.itemsize, s.offset)

    def matrix(self, width=None):
        """X as a CSRBuffers `width` columns wide (default n_features; at least max_index),
        over the map."""
        if width is None or width == self.n_features:
            return self.X
        return _as_buffers(self.indptr, self.indices, self.values, self.layout, width,
                           self.max_index)

    def rows(self, start, stop, width=None):
        """Rows [start, stop) as (X, y, qid, weights): X a CSRBuffers of `width` columns
        (default n_features) whose row pointers are a new array starting at 0 and whose
        indices and values are views into the map; y, qid, weights views (qid and
        weights None when the file has none)."""
        lo, hi = int(self.indptr[start]), int(self.indptr[stop])
        indptr = self.indptr[start:stop + 1] - lo
        values = self.values[lo:hi] if self.values is not None else None
        X = _as_buffers(indptr, self.indices[lo:hi], values, self.layout,
                        self.n_features if width is None else width, self.max_index)
        qid = self.qid[start:stop] if self.qid is not None else None
        weights = self.weights[start:stop] if self.weights is not None else None
        return X, self.y[start:stop], qid, weights

    def blocks(self, chunk_rows):
        """rows() of each block of `chunk_rows` rows in turn, the last fewer; each X as
        wide as the file's largest index (max_index)."""
        for start in range(0, self.n_rows, chunk_rows):
            yield self.rows(start, min(self.n_rows, start + chunk_rows), self.max_index)

    def close(self):
        """Drop the map (closed now if no array over it is left)."""
        mm, self._mm = self._mm, None
        if mm is not None:
            try:
                mm.close()
            except BufferError:         # arrays over it remain: it closes with the last
                pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return (f"BinaryData({self.path!r}: {self.n_rows} rows, {self.n_features} features, "
                f"{self.nnz} entries, {self.layout})")


def open_binary(path) -> BinaryData:
    """Map the binary data file at `path` read-only and verify it (module notes).

    Returns a BinaryData.  Raises DataError ``FILE: what`` when the file cannot be
    opened, is not a regular file, is not a binary data file, was written by a newer
    linsvm, is truncated or damaged, or holds what the cores cannot take; ``-``
    (standard input) is refused: a binary file is mapped, not streamed.
    """
    if isinstance(path, str) and path == "-":
        raise DataError("<stdin>: a linsvm binary data file cannot be read from standard "
                        "input (it is mapped, not streamed): give its path")
    name = os.fsdecode(os.fspath(path))
    if sys.byteorder != "little":
        raise DataError(f"{name}: binary data files are little-endian, this machine is not")
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        raise DataError(f"{name}: cannot open: {e.strerror or e}") from None
    try:
        mm, header = _map(fd, name)
    finally:
        os.close(fd)
    try:
        _verify(mm, header, name)
    except BaseException:
        with contextlib.suppress(BufferError):      # an array of the pass may remain
            mm.close()
        raise
    return BinaryData(name, header, mm)


def _map(fd, name):
    """(the map, the Header) of the file open as fd, once its header is checked."""
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise DataError(f"{name}: not a regular file (a binary data file is mapped)")
        size = st.st_size
        head = os.pread(fd, FIXED_BYTES, 0)
        data = os.pread(fd, header_length(head, name, size), 0)
        header = parse_header(data, name, size)
        with_advice = getattr(os, "posix_fadvise", None)
        if with_advice is not None:
            with_advice(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)     # the verifying pass
        return mmap.mmap(fd, size, access=mmap.ACCESS_READ), header
    except OSError as e:
        raise DataError(f"{name}: cannot read: {e.strerror or e}") from None


# ---------------------------------------------------------------------------
# the verifying pass
# ---------------------------------------------------------------------------

class _Check:
    """The state of the structural checks over one file's sections, chunk by chunk: each
    `kind` method takes the chunk (an array), the position of its first item, and
    returns a message for the first fault or None."""

    def __init__(self, header, mm, name):
        self.h, self.mm, self.name = header, mm, name
        self.prev = 0               # the last row pointer seen
        self.top = 0                # 1 + the largest column index seen
        s = header.section(INDPTR)
        self.indptr = np.frombuffer(mm, np.int64, header.n_rows + 1, s.offset)

    def row_of(self, k):
        """The 1-based row of entry k (the row pointers are verified first)."""
        return int(np.searchsorted(self.indptr, k, side="right"))

    def indptr_chunk(self, p, first):
        if first == 0 and p.shape[0] and p[0] != 0:
            return "its first row pointer is not 0"
        k = _kernels.first_bad_row_pointer(p, self.prev, self.h.nnz)
        if k >= 0:
            return f"the row pointers of row {first + k} decrease or pass its {self.h.nnz} entries"
        if p.shape[0]:
            self.prev = int(p[-1])
        return None

    def indptr_end(self):
        if self.prev != self.h.nnz:
            return f"its row pointers end at {self.prev}, not at its {self.h.nnz} entries"
        return None

    def indices_chunk(self, ind, first):
        k, top = _kernels.scan_column_indices(ind, self.h.n_features)
        self.top = max(self.top, top)
        if k >= 0:
            return (f"row {self.row_of(first + k)}: column index {int(ind[k])} outside "
                    f"[0, {self.h.n_features})")
        return None

    def indices_end(self):
        if self.top != self.h.max_index:
            return (f"its largest feature index is {self.top}, its header says "
                    f"{self.h.max_index}")
        return None

    def values_chunk(self, v, first):
        k = _kernels.first_non_finite_value(v)
        return f"row {self.row_of(first + k)}: value {float(v[k])!r} is not finite" \
            if k >= 0 else None

    def per_row_chunk(self, what):
        def check(v, first):
            k = _kernels.first_non_finite_value(v)
            return f"row {first + k + 1}: {what} {float(v[k])!r} is not finite" if k >= 0 else None
        return check


def _verify(mm, h, name):
    """The checksum and the checks of every section (module notes): DataError at the
    first section whose CRC fails, else at the first structural fault."""
    check = _Check(h, mm, name)
    plan = {INDPTR: (check.indptr_chunk, check.indptr_end),
            INDICES: (check.indices_chunk, check.indices_end),
            VALUES: (check.values_chunk, None),
            LABELS: (check.per_row_chunk("label"), None),
            QID: (None, None),
            WEIGHTS: (check.per_row_chunk("instance weight"), None)}
    for kind in (INDPTR, INDICES, VALUES, LABELS, QID, WEIGHTS):
        s = h.section(kind)
        if s is not None:
            _verify_section(mm, s, section_dtype(kind, h.layout), *plan[kind], name)


def _verify_section(mm, s, dtype, on_chunk, at_end, name):
    """One section: its CRC over chunks of CHUNK_BYTES and, on each chunk while no fault
    is found, on_chunk(items, first item); at_end() after the last.  A CRC that fails
    is reported before a fault it may have caused."""
    crc, fault = 0, None
    per_chunk = CHUNK_BYTES // dtype.itemsize
    n = s.nbytes // dtype.itemsize
    for first in range(0, n, per_chunk):
        items = np.frombuffer(mm, dtype, min(per_chunk, n - first),
                              s.offset + first * dtype.itemsize)
        crc = crc32(items, crc)
        if fault is None and on_chunk is not None:
            fault = on_chunk(items, first)
    if crc != s.crc:
        raise DataError(f"{name}: damaged: the {SECTION_NAMES[s.kind]} section fails its "
                        "checksum")
    if fault is None and at_end is not None:
        fault = at_end()
    if fault is not None:
        raise DataError(f"{name}: {fault} (not a file linsvm wrote, or damaged)")
