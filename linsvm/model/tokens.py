"""What the two model file formats share: tokens, numbers, the chunked reader.

`linsvm.model.format_linsvm` (linsvm's own format) and `linsvm.model.format_liblinear`
(LIBLINEAR's) both write floats in a form that reads back bit for bit and read
a model file the same way: a text header of ``KEY VALUE...`` lines, then the
weight rows, streamed in chunks of `_READ_BYTES` straight into the weight
array by the compiled row parser (`_svmlight.parse_dense_rows`), with a
``FILE:LINE: ...`` `ModelError` for anything wrong.  This module holds those
pieces: the strict token patterns and number parsers, the shortest exact float
text, the row chunks of the writers, `Stream` (lines, dense text rows, raw
bytes, line numbers) and `Parser`, the base of both readers (located errors,
header values, the weight array).  A reader's ``parse()`` returns the fields
of a `linsvm.model.Model`; `linsvm.model.load_model` builds it.
"""
from __future__ import annotations

import math
import re

import numpy as np

from .. import _svmlight
from ..errors import ModelError

_READ_BYTES = 1 << 20               # chunk size of the loader
_MAX_HEADER_LINE = 1 << 26          # a longer line without a newline is not a model header

# Rows written per chunk when saving (bounds the size of the strings built).
_CHUNK_ROWS = 4096
_CHUNK_ENTRIES = 1 << 16            # weights per chunk of text (wide models: fewer rows)

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*\Z")
TOKEN_RE = re.compile(r"[!-~]+\Z")                       # printable ASCII, no space
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_DEC_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_SPECIAL_RE = re.compile(r"(?:[+-]?inf|nan)\Z")          # what repr() writes for non-finite
_HEADER_BAD_CHAR_RE = re.compile(r"[^\t -~]")              # header lines: printable ASCII and tabs


# --------------------------------------------------------------------------- #
# Value formatting and parsing helpers
# --------------------------------------------------------------------------- #

def fmt_float(v: float) -> str:
    """Shortest exact decimal form of `v` (repr), without an integral '.0'."""
    s = repr(float(v))
    return s[:-2] if s.endswith(".0") else s


def parse_float(tok: str, *, finite: bool = True) -> float | None:
    """Return the float of a strict decimal token (or inf/nan when not `finite`), else None."""
    if _DEC_RE.match(tok):
        v = float(tok)
        if finite and not math.isfinite(v):
            return None
        return v
    if not finite and _SPECIAL_RE.match(tok):
        return float(tok)
    return None


def parse_int(tok: str) -> int | None:
    """Return the int of a strict decimal integer token, else None."""
    return int(tok) if _INT_RE.match(tok) else None


def fmt_list(values, sep=" ") -> str:
    """Floats in their shortest exact form, joined by `sep`."""
    return sep.join(fmt_float(v) for v in values)


def row_chunks(W):
    """The rows of W in blocks that bound the text a writer builds at a time."""
    step = max(1, min(_CHUNK_ROWS, _CHUNK_ENTRIES // max(1, W.shape[1])))
    for start in range(0, W.shape[0], step):
        yield W[start:start + step]


# --------------------------------------------------------------------------- #
# Reading
# --------------------------------------------------------------------------- #

class Stream:
    """A model file read in chunks: header lines, dense text rows, raw bytes.

    Keeps one buffer of about _READ_BYTES (more only for a longer line) and
    counts lines for error messages (`lineno` = lines consumed so far).
    """

    def __init__(self, fh, source):
        self.fh = fh
        self.source = source
        self.buf = b""
        self.pos = 0
        self.eof = False
        self.lineno = 0
        self.offset = 0          # file offset of buf[0]
        self.partial = False
        self.line_offset = 0

    def _more(self) -> bool:
        """Append the next chunk to the buffer (dropping what was consumed); False at EOF."""
        if self.eof:
            return False
        data = self.fh.read(_READ_BYTES)
        if not data:
            self.eof = True
            return False
        self.offset += self.pos
        self.buf = self.buf[self.pos:] + data
        self.pos = 0
        return True

    def readline(self):
        """The next line without its newline (bytes), or None at the end of the file.

        A last line without a newline is returned too; `self.partial` tells.
        """
        while True:
            nl = self.buf.find(b"\n", self.pos)
            if nl >= 0:
                break
            if len(self.buf) - self.pos > _MAX_HEADER_LINE:
                raise ModelError(f"{self.source}:{self.lineno + 1}: line longer than "
                                 f"{_MAX_HEADER_LINE} bytes (not a model file?)")
            if not self._more():
                if self.pos >= len(self.buf):
                    return None
                line = self.buf[self.pos:]
                self.line_offset = self.offset + self.pos
                self.pos = len(self.buf)
                self.lineno += 1
                self.partial = True
                return line
        line = self.buf[self.pos:nl]
        self.line_offset = self.offset + self.pos
        self.pos = nl + 1
        self.lineno += 1
        self.partial = False
        return line

    def unread_first(self):
        """Put back the first line (read to recognise the format); it is still in the buffer,
        which _more only trims by what was consumed, and nothing was before it."""
        assert self.lineno == 1 and self.offset == 0
        self.lineno = 0
        self.pos = 0

    def text(self, line: bytes) -> str:
        """Decode a header line (UTF-8), or raise 'not a model file (not text...)'."""
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ModelError(f"{self.source}: not a model file (not text: undecodable byte at "
                             f"offset {self.line_offset + exc.start})") from None

    def text_rows(self, out: np.ndarray, n_rows: int, n_cols: int, truncated):
        """Parse the next n_rows lines as rows of n_cols numbers into out (flat, C order).

        `truncated()` returns the error for a file that ends too early.
        """
        done = 0
        while done < n_rows:
            end = self.buf.rfind(b"\n", self.pos) + 1
            if end > self.pos:
                rows, pos, status, col = _svmlight.parse_dense_rows(
                    self.buf, self.pos, end, n_cols, out, done, n_rows - done)
                if status:
                    self._row_error(pos, rows, status, col, n_cols)
                self.pos = pos
                self.lineno += rows
                done += rows
                if done == n_rows:
                    break
            if not self._more():
                if self.pos < len(self.buf):        # a last row without its newline
                    raise ModelError(f"{self.source}:{self.lineno + 1}: truncated file "
                                     "(the last line has no newline)")
                raise truncated()

    def _row_error(self, pos, rows, status, col, n_cols):
        nl = self.buf.find(b"\n", pos)
        line = self.buf[pos:nl].decode("utf-8", "replace")
        where = f"{self.source}:{self.lineno + rows + 1}"
        tokens = line.split()
        if status in (3, 4):
            raise ModelError(f"{where}: weight row has {len(tokens)} values, expected {n_cols}")
        tok = tokens[col - 1] if col - 1 < len(tokens) else line.strip()
        if len(tok) > 40:
            tok = tok[:40] + "..."
        if status == 2:
            raise ModelError(f"{where}: weight {tok!r} out of range (overflows to infinity)")
        if tok.lower().lstrip("+-") in ("inf", "infinity", "nan"):
            raise ModelError(f"{where}: weight {tok!r} is not finite")
        raise ModelError(f"{where}: weight {tok!r} is not a number")

    def read_into(self, view: memoryview) -> int:
        """Fill the byte view from the file; return the number of bytes read (short at EOF)."""
        n = len(view)
        have = min(n, len(self.buf) - self.pos)
        view[:have] = self.buf[self.pos:self.pos + have]
        self.pos += have
        got = have
        while got < n:
            k = self.fh.readinto(view[got:])
            if not k:
                self.eof = True
                break
            got += k
        if got > have:
            # the buffer is exhausted; continue reading after the raw bytes
            self.offset += len(self.buf) + (got - have)
            self.buf, self.pos = b"", 0
        return got


class Parser:
    """Shared pieces of the two readers: errors with locations, header values, weights."""

    def __init__(self, stream: Stream, source):
        self.stream = stream
        self.source = source

    def error(self, i: int, msg: str) -> ModelError:
        """ModelError located at 0-based line index `i`."""
        return ModelError(f"{self.source}:{i + 1}: {msg}")

    def file_error(self, msg: str) -> ModelError:
        return ModelError(f"{self.source}: {msg}")

    def header_line(self, what_missing):
        """(0-based index, str) of the next header line; errors for EOF and truncation."""
        s = self.stream
        line = s.readline()
        if line is None:
            raise self.file_error(what_missing(s.lineno))
        text = s.text(line)
        if s.partial:
            raise self.error(s.lineno - 1, "truncated file (the last line has no newline)")
        bad = _HEADER_BAD_CHAR_RE.search(text[:-1] if text.endswith("\r") else text)
        if bad:
            raise self.error(s.lineno - 1, f"character {bad.group()!r} in a header line (the header is "
                                           "printable ASCII; tokens are separated by spaces or tabs)")
        return s.lineno - 1, text

    def one_token(self, i, toks, what):
        if len(toks) != 2:
            raise self.error(i, f"'{toks[0]}' takes exactly one value ({what}), got {len(toks) - 1}")
        return toks[1]

    def count(self, i, toks, what, minimum):
        tok = self.one_token(i, toks, what)
        v = parse_int(tok)
        if v is None or v < minimum:
            raise self.error(i, f"bad {toks[0]} {tok!r} (expected {what})")
        return v

    def number(self, i, toks, what):
        tok = self.one_token(i, toks, what)
        v = parse_float(tok)
        if v is None:
            raise self.error(i, f"bad {toks[0]} {tok!r} (expected {what})")
        return v

    def allocate(self, n_rows, n_columns) -> np.ndarray:
        """The (n_rows, n_columns) weight array, or a located error if it cannot exist."""
        try:
            return np.empty((n_rows, n_columns), dtype=np.float64)
        except (MemoryError, ValueError) as exc:
            raise self.file_error(f"cannot hold {n_rows} x {n_columns} weights "
                                  f"({8.0 * n_rows * n_columns / 2**30:.3g} GiB): "
                                  f"{'out of memory' if isinstance(exc, MemoryError) else exc}") from None
