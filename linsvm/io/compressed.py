"""Input of SVM-light bytes: files, standard input and file objects, plain or compressed.

`Input` opens a path, ``-`` (standard input) or a binary file object and yields
its decompressed bytes in chunks.  gzip, bzip2 and xz are recognised by their
magic bytes (`MAGIC`), never by the file name.  Compressed input is read
strictly: concatenated streams are read in turn, and anything after the last
stream that is not another stream (trailing garbage, a truncated stream) is an
error, for gzip, bzip2 and xz alike (the standard library's BZ2File and LZMAFile
silently stop there; xz's stream padding, zero bytes in multiples of four, is
allowed).  With the optional ``fast-io`` extra installed, gzip is decompressed by
ISA-L (``isal``) and a bzip2 regular file by ``indexed_bzip2`` on a fixed number
of threads, so results never depend on the load; without it, or for standard
input and pipes, the standard library does it.  Errors are
:class:`~linsvm.errors.DataError` naming the input.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import sys
import zlib

from ..errors import DataError

__all__ = ["Input", "MAGIC", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20          # read size for files and streams
try:                            # optional (the fast-io extra): ISA-L's gzip
    from isal import igzip as _igzip
except ImportError:             # pragma: no cover - depends on the environment
    _igzip = None
try:                            # optional (the fast-io extra): parallel bzip2 blocks
    import indexed_bzip2 as _indexed_bzip2
except ImportError:             # pragma: no cover
    _indexed_bzip2 = None

_BZ2_THREADS = 2                # fixed, never chosen by the load average
_BZ2_TAIL_BYTES = 1 << 16       # empty streams after indexed_bzip2's last, at most


class _TruncatedStream(EOFError):
    """Compressed input that ends inside a stream."""


class _TrailingData(OSError):
    """Bytes after the last compressed stream that do not start another one."""


class _Concatenated(io.RawIOBase):
    """Decompressed bytes of one or more concatenated streams, read strictly.

    `new` makes a decompressor (``bz2.BZ2Decompressor``,
    ``lzma.LZMADecompressor``); after each stream the input must end or start
    another stream with `magic`.  Anything else raises _TrailingData, input
    that ends inside a stream _TruncatedStream, and corrupt data the
    decompressor's own error.  `padding`: zero bytes in multiples of four may
    separate or follow streams (xz's stream padding).
    """

    def __init__(self, fh, new, magic, padding=False):
        super().__init__()
        self._fh = fh
        self._new = new
        self._magic = magic
        self._padding = padding
        self._d = new()
        self._in = b""              # compressed bytes read but not yet fed

    def readable(self):
        return True

    def _read(self):
        return self._fh.read(CHUNK_BYTES) or b""

    def _next_stream(self):
        """Start the next stream; False at a clean end of input."""
        data, zeros = self._in, 0
        while True:
            if self._padding:
                stripped = data.lstrip(b"\0")
                zeros += len(data) - len(stripped)
                data = stripped
            if len(data) >= len(self._magic):
                break
            more = self._read()
            if not more:
                break
            data += more
        if self._padding and zeros % 4:
            raise _TrailingData(f"{zeros} zero bytes of stream padding, not a multiple of 4")
        if not data:
            self._in = b""
            return False
        if not data.startswith(self._magic):
            raise _TrailingData("trailing data after the end of the compressed stream")
        self._in = data
        self._d = self._new()
        return True

    def readinto(self, b):
        while True:
            if self._d is None and not self._next_stream():
                return 0
            data = b""
            if self._d.needs_input:
                data = self._in or self._read()
                self._in = b""
                if not data:
                    raise _TruncatedStream("compressed data ends before the end of its stream")
            out = self._d.decompress(data, len(b))
            if self._d.eof:
                self._in = self._d.unused_data
                self._d = None
            if out:
                b[:len(out)] = out
                return len(out)


def _open_gzip(fh):
    if _igzip is not None:
        return _igzip.IGzipFile(fileobj=fh, mode="rb")
    return gzip.GzipFile(fileobj=fh, mode="rb")


MAGIC = (
    (b"\x1f\x8b", "gzip", _open_gzip),
    (b"BZh", "bzip2", lambda fh: _Concatenated(fh, bz2.BZ2Decompressor, b"BZh")),
    (b"\xfd7zXZ\x00", "xz", lambda fh: _Concatenated(
        fh, lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ), b"\xfd7zXZ\x00", padding=True)),
)
_DECOMPRESS_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)
if _igzip is not None:
    from isal import isal_zlib as _isal_zlib
    _DECOMPRESS_ERRORS += (_isal_zlib.error,)
_EOSMAGIC = 0x177245385090     # bzip2's end-of-stream marker


# ---------------------------------------------------------------------------
# input
# ---------------------------------------------------------------------------

class _Prefixed(io.RawIOBase):
    """A raw stream that yields `head` and then the rest of `fh`.

    Used to put back the magic bytes read for sniffing, so the same code works
    for files, pipes and objects that cannot seek or peek.
    """

    def __init__(self, head, fh):
        super().__init__()
        self._head = head
        self._fh = fh

    def readable(self):
        return True

    def readinto(self, b):
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        readinto = getattr(self._fh, "readinto", None)
        if readinto is not None:
            return readinto(b)
        data = self._fh.read(len(b))
        b[:len(data)] = data
        return len(data)


class Input:
    """An open source of SVM-light bytes: a path, ``-`` or a binary file object.

    ``chunks()`` yields ``(buffer, n)``: the first n bytes of buffer are the
    next piece of decompressed input.  The buffer is reused between chunks.
    """

    def __init__(self, source):
        self._own = False
        if isinstance(source, str) and source == "-":
            self.name = "<stdin>"
            self._fh = sys.stdin.buffer
        elif isinstance(source, (str, bytes, os.PathLike)):
            path = os.fspath(source)
            self.name = os.fsdecode(path)
            try:
                self._fh = open(path, "rb", buffering=0)
            except OSError as e:
                raise DataError(f"{self.name}: cannot open: {e.strerror or e}") from e
            self._own = True
        elif hasattr(source, "read"):
            fh = source
            if isinstance(fh, io.TextIOBase):
                if not hasattr(fh, "buffer"):
                    raise TypeError("need a binary file object, not a text stream")
                fh = fh.buffer
            self._fh = fh
            name = getattr(source, "name", None)
            self.name = name if isinstance(name, str) else "<file>"
        else:
            raise TypeError(
                f"expected a path, '-' or a binary file object, not {type(source).__name__}")
        self._stream = None
        self._bz2_size = None   # size of a bzip2 file that indexed_bzip2 reads
        self.fast = False       # may indexed_bzip2 read it (its threads need a close())
        self._head = None       # bytes read by sniff(), not yet consumed
        self.size = None        # bytes of uncompressed input, when known

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        if self._stream is not None:
            self._stream.close()
            self._stream = None
        if self._own:
            self._fh.close()
            self._own = False

    def _fail(self, what, e):
        raise DataError(f"{self.name}: {what}: {getattr(e, 'strerror', None) or e}") from e

    def _read_head(self, n):
        head = b""
        while len(head) < n:
            try:
                part = self._fh.read(n - len(head))
            except OSError as e:
                self._fail("read error", e)
            if not part:
                break
            head += part
        return head

    def _plain_chunk_size(self):
        """Read size for uncompressed input: the file's size when it is smaller."""
        try:
            st = os.fstat(self._fh.fileno())
        except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
            return CHUNK_BYTES
        if stat.S_ISREG(st.st_mode):
            if self._own:                   # read from its start: a size hint
                self.size = st.st_size
            return max(4096, min(CHUNK_BYTES, st.st_size + 1))
        return CHUNK_BYTES

    def sniff(self):
        """Read the first bytes and return the compression: "gzip", "bzip2",
        "xz" or None for plain text.  chunks() starts with those bytes."""
        if self._head is None:
            self._head = self._read_head(6)
        for magic, name, _ in MAGIC:
            if self._head.startswith(magic):
                return name
        return None

    def _fast_bzip2(self):
        """indexed_bzip2 reading the regular file we opened, or None.

        Used only when the file ends exactly in a bzip2 end-of-stream marker
        (its last 80 bits before at most 7 zero bits of padding): indexed_bzip2
        would skip trailing data with a warning on stderr, so a file with any
        is left to the strict reader, which names the fault.
        """
        if _indexed_bzip2 is None or not self._own or not self.fast:
            return None
        try:
            st = os.fstat(self._fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size < 14:
                return None
            tail = os.pread(self._fh.fileno(), 11, st.st_size - 11)
        except (OSError, ValueError):
            return None
        if not _bzip2_ends_cleanly(tail):
            return None
        try:
            self._fh.seek(0)
            stream = _indexed_bzip2.open(self._fh, parallelization=_BZ2_THREADS)
        except (RuntimeError, ValueError, OSError) as e:
            self._fail("bad bzip2 data", e)
        self._bz2_size = st.st_size
        return stream

    def _check_bzip2_end(self, stream):
        """After indexed_bzip2 has read everything: its streams must end where
        the file ends.  It stops quietly at data it cannot read, and does not
        count empty streams at the end, so whatever follows its last stream
        must be read by the strict reader and hold nothing."""
        offsets = stream.block_offsets()
        end = (max(offsets) + 7) // 8 if offsets else 0
        if end >= self._bz2_size:
            return
        rest = b""
        if self._bz2_size - end <= _BZ2_TAIL_BYTES:
            try:
                rest = os.pread(self._fh.fileno(), self._bz2_size - end, end)
            except OSError as e:
                self._fail("read error", e)
        try:
            extra = MAGIC[1][2](io.BytesIO(rest)).read() if rest else b"?"
        except _DECOMPRESS_ERRORS as e:
            self._fail("bad bzip2 data", e)
        if extra:
            raise DataError(f"{self.name}: bad bzip2 data: unreadable after byte {end}")

    def chunks(self):
        head = self._head if self._head is not None else self._read_head(6)
        self._head = None
        kind = None
        for magic, name, opener in MAGIC:
            if head.startswith(magic):
                kind = name
                self._stream = self._fast_bzip2() if name == "bzip2" else None
                if self._stream is None:
                    self._stream = opener(_Prefixed(head, self._fh))
                stream = self._stream
                size = CHUNK_BYTES
                head = b""
                break
        else:
            stream = self._fh
            size = max(self._plain_chunk_size(), 2 * len(head))
        buf = bytearray(size)
        view = memoryview(buf)
        # The sniffed bytes of plain input start the first chunk.
        start = len(head)
        buf[:start] = head
        readinto = getattr(stream, "readinto", None)
        while True:
            try:
                if readinto is not None:
                    n = readinto(view[start:])
                else:
                    data = stream.read(size - start)
                    n = len(data)
                    buf[start:start + n] = data
            except _DECOMPRESS_ERRORS + ((RuntimeError, ValueError) if self._bz2_size else ()) as e:
                if kind is None:
                    self._fail("read error", e)
                self._fail(f"bad {kind} data", e)
            n = (n or 0) + start
            start = 0
            if not n:
                break
            yield buf, n
        if self._bz2_size is not None:
            self._check_bzip2_end(stream)


def _bzip2_ends_cleanly(tail):
    """Whether 11 bytes end in bzip2's 48-bit end-of-stream marker and 32-bit
    CRC followed by 0..7 zero bits of padding."""
    v = int.from_bytes(tail, "big")
    return any(v & ((1 << pad) - 1) == 0
               and (v >> (pad + 32)) & ((1 << 48) - 1) == _EOSMAGIC for pad in range(8))
