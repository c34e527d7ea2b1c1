"""The layout of linsvm's binary data file: magic bytes, header, section table.

docs/binary-format.md is the specification; this module is its one implementation, shared
by the reader (linsvm.io.binfile) and the writer (linsvm.io.binwrite).  Everything is
little-endian.  A file is

* a header: the fixed part (`FIXED`: magic, format version, header length, the counts,
  the value layout, the flags, the number of sections, the source record's size and
  modification time), then one `ENTRY` per section (kind, offset, length, CRC-32), then
  the source record's path bytes, then the CRC-32 of all the header's bytes before it;
* the sections, each at an offset that is a multiple of `ALIGN` (the bytes between them
  are zero), the file ending where the last one ends.

`pack_header` and `parse_header` turn a `Header` into bytes and back; `parse_header`
checks everything that can be checked without the sections' contents and raises a
one-line DataError naming the file otherwise.
"""
from __future__ import annotations

import struct
import zlib
from typing import NamedTuple

import numpy as np

from ..errors import DataError

__all__ = ["MAGIC", "VERSION", "ALIGN", "LAYOUTS", "Header", "Section", "SourceRecord",
           "pack_header", "header_length", "parse_header", "header_bytes", "aligned",
           "section_dtype", "expected_sections",
           "FIXED_BYTES", "INDPTR", "INDICES", "VALUES", "LABELS", "QID", "WEIGHTS",
           "SECTION_NAMES"]

# A non-ASCII first byte (no SVM-light text, no gzip / bzip2 / xz stream starts so), "LSV",
# CR LF (mangled by a text-mode copy in either direction), ^Z (stops a DOS `type`), LF.
MAGIC = b"\x89LSV\r\n\x1a\n"
VERSION = 1
ALIGN = 4096
_INT32_MAX = 2**31 - 1

# magic, version, header bytes, n_rows, n_features, nnz, max_index, layout, flags,
# n_sections, source path bytes, source size, source mtime_ns
FIXED = struct.Struct("<8sIIQQQQIIIIQq")
FIXED_BYTES = FIXED.size
ENTRY = struct.Struct("<IIQQII")        # kind, 0, offset, nbytes, crc32, 0
_CRC = struct.Struct("<I")
_MAX_HEADER = 1 << 20                   # a path longer than any file system allows, and then some

LAYOUTS = {"float64": 0, "float32": 1, "pattern": 2}
_LAYOUT_NAMES = {code: name for name, code in LAYOUTS.items()}
_QID, _WEIGHTS, _SOURCE = 1, 2, 4

INDPTR, INDICES, VALUES, LABELS, QID, WEIGHTS = 1, 2, 3, 4, 5, 6
SECTION_NAMES = {INDPTR: "indptr", INDICES: "indices", VALUES: "values", LABELS: "labels",
                 QID: "qid", WEIGHTS: "weights"}


class SourceRecord(NamedTuple):
    """What a cache file was made from: the source's absolute path, size and
    modification time (ns) when it was read."""

    path: bytes
    size: int
    mtime_ns: int


class Section(NamedTuple):
    """One entry of the section table."""

    kind: int
    offset: int
    nbytes: int
    crc: int


class Header(NamedTuple):
    """The header's contents: counts (nnz stored entries, max_index the largest 1-based
    feature index, 0 without entries), the layout name, the optional qid and weights,
    the source record (or None) and the sections in file order."""

    n_rows: int
    n_features: int
    nnz: int
    max_index: int
    layout: str
    with_qid: bool
    with_weights: bool
    source: SourceRecord | None
    sections: tuple

    def section(self, kind):
        """The Section of `kind`, or None."""
        for s in self.sections:
            if s.kind == kind:
                return s
        return None


def aligned(n):
    """n rounded up to a multiple of ALIGN."""
    return -(-int(n) // ALIGN) * ALIGN


def header_bytes(n_sections, path_bytes):
    """Length of a header with `n_sections` entries and a source path of `path_bytes`."""
    return FIXED_BYTES + ENTRY.size * n_sections + path_bytes + _CRC.size


def section_dtype(kind, layout):
    """The little-endian NumPy dtype of section `kind` in a file of `layout`."""
    if kind == VALUES:
        return np.dtype("<f4") if layout == "float32" else np.dtype("<f8")
    return np.dtype({INDPTR: "<i8", INDICES: "<i4", LABELS: "<f8", QID: "<i8",
                     WEIGHTS: "<f8"}[kind])


def expected_sections(layout, with_qid, with_weights):
    """The section kinds a file of this layout and flags holds, in the reader's order."""
    kinds = [INDPTR, INDICES] + ([VALUES] if layout != "pattern" else []) + [LABELS]
    return kinds + ([QID] if with_qid else []) + ([WEIGHTS] if with_weights else [])


def _lengths(n_rows, nnz):
    """{kind: number of items} of a file with n_rows rows and nnz entries."""
    return {INDPTR: n_rows + 1, INDICES: nnz, VALUES: nnz, LABELS: n_rows, QID: n_rows,
            WEIGHTS: n_rows}


def pack_header(h):
    """The bytes of Header `h` (its CRC last)."""
    path = h.source.path if h.source is not None else b""
    flags = (_QID if h.with_qid else 0) | (_WEIGHTS if h.with_weights else 0) | \
        (_SOURCE if h.source is not None else 0)
    size = header_bytes(len(h.sections), len(path))
    src = h.source or SourceRecord(b"", 0, 0)
    out = FIXED.pack(MAGIC, VERSION, size, h.n_rows, h.n_features, h.nnz, h.max_index,
                     LAYOUTS[h.layout], flags, len(h.sections), len(path), src.size,
                     src.mtime_ns)
    out += b"".join(ENTRY.pack(s.kind, 0, s.offset, s.nbytes, s.crc, 0) for s in h.sections)
    out += path
    return out + _CRC.pack(zlib.crc32(out))


def header_length(head, name, file_size):
    """The header's length, from the first FIXED_BYTES bytes of the file (`head`), after
    the checks that need nothing more: the magic, and a length that the file can hold.
    (The magic, the version, the length and the CRC at the header's end keep their
    places in every format version, so that any version can say which it is.)"""
    if len(head) < len(MAGIC) or not head.startswith(MAGIC):
        raise DataError(f"{name}: not a linsvm binary data file (no magic bytes)")
    if len(head) < FIXED_BYTES:
        raise DataError(f"{name}: truncated: {file_size} bytes, less than a header")
    size = FIXED.unpack(head[:FIXED_BYTES])[2]
    if not FIXED_BYTES + _CRC.size <= size <= _MAX_HEADER:
        raise DataError(f"{name}: damaged header (its length, {size} bytes, is impossible)")
    if size > file_size:
        raise DataError(f"{name}: truncated or damaged: {file_size} bytes, less than its "
                        f"header says it has ({size})")
    return size


def parse_header(data, name, file_size):
    """The Header of the header bytes `data` (the whole header, as long as
    header_length says) of file `name` of `file_size` bytes.

    Checks, each failure a one-line DataError: the CRC; the format version (a newer one
    is named); known layout and flags; the sections the layout and flags call for, each
    once, of the length the counts give, at aligned offsets after the header, not
    overlapping; the file ending exactly where the last section ends; max_index <=
    n_features <= 2**31 - 1."""
    (_, version, size, n_rows, n_features, nnz, max_index, layout, flags, n_sections,
     path_len, src_size, src_mtime) = FIXED.unpack(data[:FIXED_BYTES])
    (crc,) = _CRC.unpack(data[size - _CRC.size:size])
    newer = f"written by a newer linsvm (format {version}); this linsvm reads format {VERSION}"
    if zlib.crc32(data[:size - _CRC.size]) != crc:
        raise DataError(f"{name}: {newer}, or damaged" if version > VERSION else
                        f"{name}: damaged header (checksum mismatch)")
    if version > VERSION:
        raise DataError(f"{name}: {newer}")
    if version < 1 or size != header_bytes(n_sections, path_len):
        raise DataError(f"{name}: impossible header (format {version}, {size} bytes)")
    if layout not in _LAYOUT_NAMES or flags & ~(_QID | _WEIGHTS | _SOURCE):
        raise DataError(f"{name}: impossible header (value layout {layout}, flags {flags:#x})")
    layout = _LAYOUT_NAMES[layout]
    at = FIXED_BYTES
    sections = []
    for _ in range(n_sections):
        kind, _, offset, nbytes, scrc, _ = ENTRY.unpack(data[at:at + ENTRY.size])
        sections.append(Section(kind, offset, nbytes, scrc))
        at += ENTRY.size
    source = SourceRecord(bytes(data[at:at + path_len]), src_size, src_mtime) \
        if flags & _SOURCE else None
    h = Header(n_rows, n_features, nnz, max_index, layout, bool(flags & _QID),
               bool(flags & _WEIGHTS), source, tuple(sections))
    _check_counts(h, name)
    _check_sections(h, name, size, file_size)
    return h


def _check_counts(h, name):
    if not h.max_index <= h.n_features <= _INT32_MAX:
        raise DataError(f"{name}: impossible header: largest index {h.max_index}, "
                        f"{h.n_features} features")
    if h.n_rows >= 2**62 or h.nnz >= 2**62:
        raise DataError(f"{name}: impossible header: {h.n_rows} rows, {h.nnz} entries")


def _check_sections(h, name, size, file_size):
    """The section table of h against its counts and the file's length (parse_header)."""
    want = expected_sections(h.layout, h.with_qid, h.with_weights)
    kinds = sorted(s.kind for s in h.sections)
    if kinds != sorted(want):
        raise DataError(f"{name}: impossible header (sections {kinds}, expected {sorted(want)})")
    lengths = _lengths(h.n_rows, h.nnz)
    end = aligned(size)
    for s in sorted(h.sections, key=lambda s: s.offset):
        need = lengths[s.kind] * section_dtype(s.kind, h.layout).itemsize
        if s.nbytes != need:
            raise DataError(f"{name}: impossible header (section {SECTION_NAMES[s.kind]} has "
                            f"{s.nbytes} bytes, its counts say {need})")
        if s.offset % ALIGN or s.offset < end:
            raise DataError(f"{name}: impossible header (section {SECTION_NAMES[s.kind]} at "
                            f"byte {s.offset})")
        end = s.offset + s.nbytes
    if file_size < end:
        raise DataError(f"{name}: truncated: {file_size} bytes, its sections end at byte {end}")
    if file_size > end:
        raise DataError(f"{name}: {file_size - end} bytes after the end of its last section "
                        f"(byte {end}): damaged")
