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
:class:`~linsvm.errors.DataError` naming the input.  A linsvm binary data file
(linsvm.io.binfile, recognised by its magic bytes, compressed or not) is refused in one
line: it is mapped by its path, never streamed through here.

One file, one verdict, whatever is installed: the standard library's libbz2 is
the judge of bzip2 data, and indexed_bzip2 is trusted only where it provably
agrees.  It checks each block's CRC but neither the streams' combined CRCs nor a
stream's block size against its header's level digit (it takes every block up to
the format's 900k), so:

* a file whose first stream says less than level 9 is read by the standard
  library from the start;
* after indexed_bzip2 has read a file, its streams are walked through the block
  offsets it found (a few bytes read per block, not the data again): every
  stream must say level 9 and its blocks' CRCs must combine to the stream's CRC;
  otherwise (a later stream of a lower level, a bad combined CRC) the standard
  library reads the file once more and its verdict stands;
* when indexed_bzip2 fails on data, the standard library takes over where it
  stopped (after reading up to there again), and its verdict stands.
"""
from __future__ import annotations

import bz2
import gzip
import io
import lzma
import os
import stat
import zlib

from ..errors import DataError
from .binformat import MAGIC as BINARY_MAGIC
from .streams import STDIN_NAME, stdin_binary

__all__ = ["Input", "MAGIC", "CHUNK_BYTES"]

CHUNK_BYTES = 1 << 20          # read size for files and streams
# The fast-io extra's modules, imported when a gzip / bzip2 file is first read (their
# imports cost every command's start-up, and most inputs are plain text): ISA-L's gzip
# (isal.igzip) and parallel bzip2 blocks (indexed_bzip2); None where not installed.
_NOT_LOADED = object()
_igzip = _indexed_bzip2 = _NOT_LOADED

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


def _fast_gzip():
    """isal.igzip (its errors joining _DECOMPRESS_ERRORS), imported on first use; None
    where the fast-io extra is not installed."""
    global _igzip, _DECOMPRESS_ERRORS
    if _igzip is _NOT_LOADED:
        try:
            from isal import igzip, isal_zlib
        except ImportError:             # pragma: no cover - depends on the environment
            _igzip = None
        else:
            _igzip = igzip
            _DECOMPRESS_ERRORS += (isal_zlib.error,)
    return _igzip


def _fast_bzip2():
    """indexed_bzip2, imported on first use; None where it is not installed."""
    global _indexed_bzip2
    if _indexed_bzip2 is _NOT_LOADED:
        try:
            import indexed_bzip2
        except ImportError:             # pragma: no cover
            indexed_bzip2 = None
        _indexed_bzip2 = indexed_bzip2
    return _indexed_bzip2


def _open_gzip(fh):
    fast = _fast_gzip()
    if fast is not None:
        return fast.IGzipFile(fileobj=fh, mode="rb")
    return gzip.GzipFile(fileobj=fh, mode="rb")


MAGIC = (
    (b"\x1f\x8b", "gzip", _open_gzip),
    (b"BZh", "bzip2", lambda fh: _Concatenated(fh, bz2.BZ2Decompressor, b"BZh")),
    (b"\xfd7zXZ\x00", "xz", lambda fh: _Concatenated(
        fh, lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ), b"\xfd7zXZ\x00", padding=True)),
)
_DECOMPRESS_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)     # + ISA-L's: _fast_gzip
_EOSMAGIC = 0x177245385090     # bzip2's end-of-stream marker
_BLOCKMAGIC = 0x314159265359   # and its block header's


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


BINARY_LINE_BYTES = 1 << 20          # a line this long holding a NUL byte: binary input
_HEAD_BYTES = 8                     # sniffed: the compressed formats' and binfile's magic


class Input:
    """An open source of SVM-light bytes: a path, ``-`` or a binary file object.

    ``chunks()`` yields ``(buffer, n)``: the first n bytes of buffer are the
    next piece of decompressed input.  The buffer is reused between chunks.  A
    line longer than BINARY_LINE_BYTES with a NUL byte in it is a DataError naming
    the byte: such input (``/dev/zero``, a disk image) is not text, and may have no
    newline, so that its "first line" would grow until memory runs out.  (A NUL in
    a shorter line is the parser's to report, with the line's number.)
    """

    def __init__(self, source):
        self._own = False
        if isinstance(source, str) and source == "-":
            self.name = STDIN_NAME
            self._fh = stdin_binary()
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
            self._head = self._read_head(_HEAD_BYTES)
        self._refuse_binary_file(self._head, None)
        for magic, name, _ in MAGIC:
            if self._head.startswith(magic):
                return name
        return None

    def _fast_bzip2(self, head):
        """indexed_bzip2 reading the regular file we opened, or None (`head`: its first
        bytes; a first stream of a level below 9 is left to the standard library).

        Used only when the file ends exactly in a bzip2 end-of-stream marker
        (its last 80 bits before at most 7 zero bits of padding): indexed_bzip2
        would skip trailing data with a warning on stderr, so a file with any
        is left to the strict reader, which names the fault.
        """
        if not self._own or not self.fast or head[3:4] != b"9" or _fast_bzip2() is None:
            return None             # a lower level digit: libbz2 checks the block sizes
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
        """After indexed_bzip2 has read everything: its streams must be what libbz2
        accepts (_bzip2_streams_agree, else the strict reader judges the whole file)
        and end where the file ends.  It stops quietly at data it cannot read, and
        does not count empty streams at the end, so whatever follows its last
        stream must be read by the strict reader and hold nothing."""
        offsets = stream.block_offsets()
        if not _bzip2_streams_agree(self._fh.fileno(), offsets):
            self._strict_check()
            return
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

    def _strict_reader(self):
        """The standard library's reader of the whole bzip2 file, from its start, in
        place of indexed_bzip2 (closed: its threads end)."""
        if self._stream is not None:
            self._stream.close()
        self._stream = None
        self._bz2_size = None
        self._fh.seek(0)
        self._stream = MAGIC[1][2](self._fh)
        return self._stream

    def _strict_check(self):
        """The standard library's verdict on the whole bzip2 file (its output dropped):
        its error is this input's DataError, as if it had read the file alone."""
        strict = self._strict_reader()
        try:
            while strict.read(CHUNK_BYTES):
                pass
        except _DECOMPRESS_ERRORS as e:
            self._fail("bad bzip2 data", e)

    def _strict_resume(self, done):
        """The standard library's reader in place of a failed indexed_bzip2, past the
        `done` decompressed bytes already handed on (read again and dropped)."""
        strict = self._strict_reader()
        try:
            while done > 0:
                part = strict.read(min(done, CHUNK_BYTES))
                if not part:
                    raise _TruncatedStream("compressed data ends before the end of its stream")
                done -= len(part)
        except _DECOMPRESS_ERRORS as e:
            self._fail("bad bzip2 data", e)
        return strict

    def _refuse_binary(self, buf, n, done, kind):
        """DataError for a line longer than BINARY_LINE_BYTES whose latest chunk holds a
        NUL byte (/dev/zero, a disk image): it is not text, and may have no newline to
        end the line that a parser would grow until memory runs out."""
        nul = buf.find(b"\0", 0, n)
        if nul >= 0:
            where = f"byte {done + nul + 1}{' of the decompressed data' if kind else ''}"
            raise DataError(f"{self.name}: {where} is a NUL, in a line of over "
                            f"{BINARY_LINE_BYTES >> 20} MiB: not SVM-light text (a binary file?)")

    def _refuse_binary_file(self, head, kind):
        """DataError for a linsvm binary data file here (its first bytes `head`; `kind`:
        the compression it came out of, or None): it is mapped by its path
        (linsvm.io.binfile), and cannot be read as a stream."""
        if not bytes(head[:len(BINARY_MAGIC)]) == BINARY_MAGIC:
            return
        if kind is not None:
            raise DataError(f"{self.name}: holds a {kind}-compressed linsvm binary data file: "
                            "decompress it first (a binary file is mapped, not streamed)")
        if self.name == STDIN_NAME:
            raise DataError(f"{STDIN_NAME}: a linsvm binary data file cannot be read from "
                            "standard input (it is mapped, not streamed): give its path")
        raise DataError(f"{self.name}: a linsvm binary data file, which is read by its path "
                        "as a whole data file only (not as a shard, a stream or a share)")

    def chunks(self):
        head = self._head if self._head is not None else self._read_head(_HEAD_BYTES)
        self._head = None
        self._refuse_binary_file(head, None)
        kind = None
        for magic, name, opener in MAGIC:
            if head.startswith(magic):
                kind = name
                self._stream = self._fast_bzip2(head) if name == "bzip2" else None
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
        done = 0                                    # decompressed bytes handed on
        run = 0                                     # bytes since the last newline
        while True:
            try:
                if readinto is not None:
                    n = readinto(view[start:])
                else:
                    data = stream.read(size - start)
                    n = len(data)
                    buf[start:start + n] = data
            except _DECOMPRESS_ERRORS + ((RuntimeError, ValueError) if self._bz2_size else ()) as e:
                if self._bz2_size is not None:      # indexed_bzip2 failed: libbz2 judges
                    stream = self._strict_resume(done)
                    readinto = stream.readinto
                    continue
                if kind is None:
                    self._fail("read error", e)
                self._fail(f"bad {kind} data", e)
            n = (n or 0) + start
            start = 0
            if not n:
                break
            if done == 0 and kind is not None:
                self._refuse_binary_file(buf[:len(BINARY_MAGIC)], kind)
            last_nl = buf.rfind(b"\n", 0, n)
            run = n - last_nl - 1 if last_nl >= 0 else run + n
            if last_nl < 0 and run >= BINARY_LINE_BYTES:
                self._refuse_binary(buf, n, done, kind)
            done += n
            yield buf, n
        if self._bz2_size is not None:
            self._check_bzip2_end(stream)


def _bzip2_ends_cleanly(tail):
    """Whether 11 bytes end in bzip2's 48-bit end-of-stream marker and 32-bit
    CRC followed by 0..7 zero bits of padding."""
    v = int.from_bytes(tail, "big")
    return any(v & ((1 << pad) - 1) == 0
               and (v >> (pad + 32)) & ((1 << 48) - 1) == _EOSMAGIC for pad in range(8))


def _bits(fd, bit, n):
    """The n bits of the file open as fd from bit offset `bit` on, as an integer."""
    first = bit // 8
    width = (bit % 8 + n + 7) // 8
    raw = os.pread(fd, width, first)
    if len(raw) < width:
        raise EOFError("short read")
    return (int.from_bytes(raw, "big") >> (8 * width - bit % 8 - n)) & ((1 << n) - 1)


def _bzip2_streams_agree(fd, offsets):
    """Whether the bzip2 streams indexed_bzip2 read (`offsets`: its block offsets in
    bits, blocks and end-of-stream markers, and the end of its last stream) are ones
    libbz2 accepts as indexed_bzip2 did: each stream's header says level 9 (both then
    allow blocks of 900k) and the CRCs of its blocks, each checked by indexed_bzip2,
    combine to the CRC after its end-of-stream marker.  Reads 4 bytes per stream and
    11 per block.  False for anything else, which the caller then has libbz2 judge."""
    bits = sorted(offsets)
    start, i = 0, 0                 # the current stream's first byte, the next offset
    try:
        while i < len(bits):
            if bits[i] == 8 * start and i == len(bits) - 1:
                return True         # the end of the last stream
            if os.pread(fd, 4, start) != b"BZh9" or bits[i] != 8 * start + 32:
                return False
            crc = 0
            while True:
                if i >= len(bits):
                    return False
                magic, stored = divmod(_bits(fd, bits[i], 80), 1 << 32)
                i += 1
                if magic == _BLOCKMAGIC:
                    crc = (((crc << 1) | (crc >> 31)) & 0xFFFFFFFF) ^ stored
                elif magic == _EOSMAGIC and stored == crc:
                    start = (bits[i - 1] + 80 + 7) // 8
                    break
                else:
                    return False
    except (OSError, EOFError):
        return False
    return True
