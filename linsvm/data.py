"""Reading and writing data in SVM-light / LIBSVM text format.

One example per line::

    <label> [qid:<q>] <index>:<value> <index>:<value> ... [# comment]

* label: a finite real number (``1``, ``-1``, ``+1``, ``2.5``, ``1e0``);
* qid: an integer (int64), only directly after the label;
* index: 1-based decimal integer, 1 <= index <= 2**31 - 1, strictly
  increasing within a line; value: a finite real number.  Numbers are read
  exactly: every value is the double Python's ``float()`` gives for its text;
  ``nan``, ``inf``, hexadecimal and other spellings are rejected.
* Separators are any run of spaces and tabs; lines end in LF or CRLF; the last
  line may lack its line end.  Blank lines and lines holding only a comment
  are skipped but counted, so line numbers in messages are the editor's.
  A line with a label and no features is a row with no non-zeros.

Input may be gzip, bzip2 or xz compressed; the format is recognised by its
magic bytes, never by the file name, for files and standard input alike.

Compressed input is read strictly: concatenated streams are read in turn, and
anything after the last stream that is not another stream (trailing garbage,
a truncated stream) is an error, for gzip, bzip2 and xz alike (the standard
library's BZ2File and LZMAFile silently stop there; xz's stream padding, zero
bytes in multiples of four, is allowed).  With the optional ``fast-io`` extra
installed, gzip is decompressed by ISA-L (``isal``) and a bzip2 regular file
by ``indexed_bzip2`` on a fixed number of threads, so results never depend on
the load; without it, or for standard input and pipes, the standard library
does it.  Both read the same rows from every sound file; one kind of damaged
bzip2 file reads differently: a stream whose header digit understates its
block size, which libbz2 rejects and indexed_bzip2 decodes (its CRCs check).

Bad input is never guessed at or skipped: every problem raises
:class:`~linsvm.errors.DataError` with a one-line message
``FILE:LINE: what is wrong``, quoting the offending token (``<stdin>`` names
standard input).

Decisions worth knowing:

* Explicit zeros (``3:0``) are kept as stored entries, as scikit-learn does,
  so row lengths and nnz match the file.
* With ``with_qid=True`` either every row has a qid or none has (then all
  qids are 0, SVM-light's default); a file that mixes the two is an error
  naming the first line that breaks the pattern.  With ``with_qid=False``
  qids are checked for syntax and dropped.
* :func:`dump_svmlight` writes every stored entry of a sparse matrix, explicit
  zeros and negative zeros included, and the non-zeros of a dense array, so
  ``load_svmlight(dump_svmlight(X, y))`` gives back the same CSR arrays bit for
  bit (a dense ``-0.0`` is a zero and is not written).

In memory a data set is CSR: ``X`` is a ``scipy.sparse.csr_matrix`` of
float64, ``y`` float64, ``qid`` int64.  (scipy keeps indptr and indices in one
index dtype, int32 unless nnz needs int64.)  :func:`load_svmlight_buffers`
gives X instead as the :class:`~linsvm.problem.CSRBuffers` that ``train`` and
``cross_validate`` take (int64 indptr, int32 indices), made of the parser's own
arrays: no copy, and no second pass over what the parser has checked.
"""
import bz2
import gzip
import io
import lzma
import numbers
import os
import stat
import sys
import zlib

import numpy as np
import scipy.sparse as sp

from . import _svmlight
from .atomic import atomic_output
from .errors import DataError, ParameterError
from .problem import CSRBuffers

__all__ = ["load_svmlight", "load_svmlight_buffers", "iter_svmlight", "dump_svmlight", "renumber_features",
           "read_feature_map", "write_feature_map"]

_CHUNK_BYTES = 1 << 20          # read size for files and streams
_WRITE_NNZ = 1 << 18            # non-zeros formatted per block when writing
_INT32_MAX = 2**31 - 1
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
        return self._fh.read(_CHUNK_BYTES) or b""

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


_MAGIC = (
    (b"\x1f\x8b", "gzip", _open_gzip),
    (b"BZh", "bzip2", lambda fh: _Concatenated(fh, bz2.BZ2Decompressor, b"BZh")),
    (b"\xfd7zXZ\x00", "xz", lambda fh: _Concatenated(
        fh, lambda: lzma.LZMADecompressor(lzma.FORMAT_XZ), b"\xfd7zXZ\x00", padding=True)),
)
_DECOMPRESS_ERRORS = (OSError, EOFError, lzma.LZMAError, zlib.error)
if _igzip is not None:
    from isal import isal_zlib as _isal_zlib
    _DECOMPRESS_ERRORS += (_isal_zlib.error,)
_EOS_MAGIC = 0x177245385090     # bzip2's end-of-stream marker


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


class _Input:
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
            return _CHUNK_BYTES
        if stat.S_ISREG(st.st_mode):
            if self._own:                   # read from its start: a size hint
                self.size = st.st_size
            return max(4096, min(_CHUNK_BYTES, st.st_size + 1))
        return _CHUNK_BYTES

    def sniff(self):
        """Read the first bytes and return the compression: "gzip", "bzip2",
        "xz" or None for plain text.  chunks() starts with those bytes."""
        if self._head is None:
            self._head = self._read_head(6)
        for magic, name, _ in _MAGIC:
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
            extra = _MAGIC[1][2](io.BytesIO(rest)).read() if rest else b"?"
        except _DECOMPRESS_ERRORS as e:
            self._fail("bad bzip2 data", e)
        if extra:
            raise DataError(f"{self.name}: bad bzip2 data: unreadable after byte {end}")

    def chunks(self):
        head = self._head if self._head is not None else self._read_head(6)
        self._head = None
        kind = None
        for magic, name, opener in _MAGIC:
            if head.startswith(magic):
                kind = name
                self._stream = self._fast_bzip2() if name == "bzip2" else None
                if self._stream is None:
                    self._stream = opener(_Prefixed(head, self._fh))
                stream = self._stream
                size = _CHUNK_BYTES
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
               and (v >> (pad + 32)) & ((1 << 48) - 1) == _EOS_MAGIC for pad in range(8))


def _check_parse(parser, rc, name):
    """Raise the parser's error as a DataError; True if the row limit was hit."""
    if rc < 0:
        line, what = parser.error()
        raise DataError(f"{name}:{line}: {what}")
    return rc == 1


def _to_csr(parts, n_features):
    indptr, indices, data, labels, qid, max_index = parts
    width = max_index if n_features is None else n_features
    X = sp.csr_matrix((data, indices, indptr), shape=(labels.shape[0], width))
    return X, labels, qid


def _check_n_features(n_features):
    if n_features is None:
        return None
    if isinstance(n_features, bool) or not isinstance(n_features, numbers.Integral) \
            or n_features < 0:
        raise ParameterError(f"n_features must be a non-negative integer, not {n_features!r}")
    return int(n_features)


def load_svmlight(path, n_features=None, with_qid=False, progress=None):
    """Read a whole SVM-light / LIBSVM file into memory.

    Parameters
    ----------
    path : str, bytes, os.PathLike, ``"-"`` or binary file object
        The input; ``"-"`` reads ``sys.stdin.buffer``.  gzip, bzip2 and xz
        compression are recognised by their magic bytes.
    n_features : int, optional
        Number of columns of X.  A feature index above it is an error naming
        the file and line.  Default: the largest index in the file.
    with_qid : bool
        Also return the query ids (see the module notes on qid).
    progress : callable, optional
        Called with the number of rows parsed so far after each chunk read
        (for a progress display; it must not raise).

    Returns
    -------
    X : scipy.sparse.csr_matrix, float64, shape (n_rows, n_features)
    y : ndarray of float64, shape (n_rows,)
    qid : ndarray of int64, shape (n_rows,)  -- only when ``with_qid``

    Empty input gives zero rows; deciding whether that is acceptable is up
    to the caller.

    Raises
    ------
    DataError
        ``FILE:LINE: what is wrong`` for malformed input; ``FILE: ...`` when
        the file cannot be opened or its compressed data is corrupt.
    """
    n_features = _check_n_features(n_features)
    parts = _load(path, n_features, with_qid, progress)
    X, y, qid = _to_csr(parts, n_features)
    return (X, y, qid) if with_qid else (X, y)


def load_svmlight_buffers(path, n_features=None, with_qid=False, progress=None):
    """Read a whole SVM-light file as the CSR buffers the solvers take.

    As :func:`load_svmlight` (same arguments, input, errors), but X is a
    :class:`linsvm.problem.CSRBuffers` (int64 indptr, int32 indices, float64
    data) made of the parser's own arrays, ready for ``linsvm.train`` and
    ``linsvm.cv.cross_validate``: no scipy matrix, no narrowing of the row
    pointers to int32 and back, and no second pass over indices and values.
    That is sound because the parser has checked, line by line, everything
    a solver core indexes unchecked (see ``CSRBuffers.trusted``).

    Returns ``(X, y)``, or ``(X, y, qid)`` with ``with_qid``.  A width
    ``n_features`` above 2**31 - 1 raises DataError (the cores index columns
    with int32).
    """
    n_features = _check_n_features(n_features)
    if n_features is not None and n_features > _INT32_MAX:
        raise DataError(f"X has {n_features} columns, more than int32 indices allow")
    indptr, indices, data, y, qid, max_index = _load(path, n_features, with_qid, progress)
    # The parser read every index against the limit n_features (when given) and
    # returns the largest it stored, so the trusted bound holds for either width.
    X = CSRBuffers.trusted(indptr, indices, data,
                           max_index if n_features is None else n_features, max_index)
    return (X, y, qid) if with_qid else (X, y)


def _load(path, n_features, with_qid, progress):
    """The parser's arrays for the whole input at path (see Parser.take)."""
    with _Input(path) as src:
        src.fast = True
        return _parse_serial(src, with_qid, n_features, progress)


def _parse_serial(src, with_qid, n_features, progress=None):
    """Parse the chunks of src in turn; the parser's arrays (see Parser.take)."""
    parser = _svmlight.Parser(bool(with_qid), n_features)
    consumed = 0
    hinted = False
    for buf, n in src.chunks():
        parser.feed(buf, n)
        _check_parse(parser, parser.parse(), src.name)
        if progress is not None:
            progress(parser.n_rows)
        consumed += n
        if not hinted and consumed >= _CHUNK_BYTES // 2:
            hinted = True
            if src.size is not None and src.size > consumed:
                # Extrapolate the final size from the first megabyte, with 5%
                # to spare, instead of growing by half at a time.
                f = 1.05 * src.size / consumed
                parser.reserve(int(parser.n_rows * f) + 64, int(parser.nnz * f) + 1024)
    parser.end()
    _check_parse(parser, parser.parse(), src.name)
    return parser.take()


def iter_svmlight(path, chunk_rows=65536, with_qid=False):
    """Read an SVM-light file in blocks of rows, for streaming prediction.

    Yields ``(X_chunk, y_chunk)`` (or ``(X_chunk, y_chunk, qid_chunk)`` with
    ``with_qid``) holding ``chunk_rows`` rows each, the last block fewer;
    empty input yields nothing.  Memory is bounded by one block plus one read
    buffer, whatever the size of the input.  ``X_chunk`` has as many columns as
    the largest index in that block; the caller pads or cuts to its width.
    Errors carry line numbers of the whole input.  The input is opened when
    iteration starts; arguments are checked at the call.

    ``path`` and ``with_qid`` are as for :func:`load_svmlight`.
    """
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, numbers.Integral) \
            or chunk_rows < 1:
        raise ParameterError(f"chunk_rows must be a positive integer, not {chunk_rows!r}")
    return _iter_svmlight(path, int(chunk_rows), bool(with_qid))


def _iter_svmlight(path, chunk_rows, with_qid):
    parser = _svmlight.Parser(with_qid, None)

    def block():
        X, y, qid = _to_csr(parser.take(), None)
        return (X, y, qid) if with_qid else (X, y)

    with _Input(path) as src:
        for buf, n in src.chunks():
            parser.feed(buf, n)
            while _check_parse(parser, parser.parse(chunk_rows), src.name):
                yield block()
        parser.end()
        while _check_parse(parser, parser.parse(chunk_rows), src.name):
            yield block()
        if parser.n_rows:
            yield block()


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------

def _as_csr(X):
    """X as a canonical float64 CSR matrix (sorted, no duplicates), never
    modifying the caller's object."""
    if sp.issparse(X):
        X = X.tocsr()
        if X.dtype != np.float64:
            if X.dtype.kind not in "biuf":
                raise DataError(f"X has dtype {X.dtype}, need real numbers")
            X = X.astype(np.float64)
        if not X.has_canonical_format:
            X = X.copy()
            X.sum_duplicates()
    else:
        X = np.asarray(X)
        if X.ndim != 2:
            raise DataError(f"X must be 2-D, got {X.ndim} dimension(s)")
        if X.dtype.kind not in "biuf":
            raise DataError(f"X has dtype {X.dtype}, need real numbers")
        X = sp.csr_matrix(X.astype(np.float64, copy=False))
    return X


def _row_of(indptr, k):
    return int(np.searchsorted(indptr, k, side="right")) - 1


def _validate_for_dump(X, y, qid):
    X = _as_csr(X)
    n_rows = X.shape[0]
    y = np.asarray(y)
    if y.ndim != 1 or y.shape[0] != n_rows:
        raise DataError(f"y has shape {y.shape}, need ({n_rows},) to match X")
    if y.dtype.kind not in "biuf":
        raise DataError(f"y has dtype {y.dtype}, need real numbers")
    y = np.ascontiguousarray(y, dtype=np.float64)
    bad = ~np.isfinite(y)
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"label {float(y[i])!r} of row {i} is not finite")
    data = np.ascontiguousarray(X.data, dtype=np.float64)
    bad = ~np.isfinite(data)
    if bad.any():
        k = int(np.argmax(bad))
        raise DataError(
            f"value {float(data[k])!r} at row {_row_of(X.indptr, k)}, column {int(X.indices[k])}"
            " is not finite")
    if X.nnz and int(X.indices.max()) >= _INT32_MAX:
        raise DataError(f"column {int(X.indices.max())} needs an index beyond int32")
    if qid is not None:
        qid = np.asarray(qid)
        if qid.ndim != 1 or qid.shape[0] != n_rows:
            raise DataError(f"qid has shape {qid.shape}, need ({n_rows},) to match X")
        if qid.dtype.kind == "f":
            if not (np.isfinite(qid).all() and (qid == np.round(qid)).all()
                    and (np.abs(qid) < 2.0**63).all()):
                raise DataError("qid must hold integers")
        elif qid.dtype.kind not in "biu":
            raise DataError(f"qid has dtype {qid.dtype}, need integers")
        elif qid.dtype.kind == "u" and qid.size and int(qid.max()) > np.iinfo(np.int64).max:
            raise DataError("qid beyond int64")
        qid = np.ascontiguousarray(qid, dtype=np.int64)
    return X, data, y, qid


def _blocks(X, data, y, qid):
    """The SVM-light text of X's rows, in blocks of about _WRITE_NNZ non-zeros."""
    indptr = np.ascontiguousarray(X.indptr)
    indices = np.ascontiguousarray(X.indices)
    with_qid = qid is not None
    q = qid if with_qid else np.zeros(0, dtype=np.int64)
    n_rows = X.shape[0]
    r0 = 0
    while r0 < n_rows:
        r1 = int(np.searchsorted(indptr, indptr[r0] + _WRITE_NNZ, side="right")) - 1
        r1 = min(max(r1, r0 + 1), n_rows)
        yield _svmlight.format_rows(indptr, indices, data, y, q, with_qid, r0, r1)
        r0 = r1


def _comment_bytes(comment):
    if comment is None:
        return b""
    if isinstance(comment, bytes):
        comment = comment.decode("utf-8")
    lines = str(comment).splitlines() or [""]
    return "".join(f"# {line}\n" if line else "#\n" for line in lines).encode("utf-8")


def _write_all(fh, header, blocks):
    text = isinstance(fh, io.TextIOBase)
    if header:
        fh.write(header.decode("utf-8") if text else header)
    for part in blocks:
        fh.write(part.decode("ascii") if text else part)


def _atomic_write(path, write):
    """Call write(fh) on a binary file whose contents replace `path` (linsvm.atomic).

    On any failure nothing is left behind and path is left as it was; an
    existing symlink is followed, an existing device or FIFO written in place.
    Write errors become DataError naming `path`.
    """
    name = os.fsdecode(os.fspath(path))
    try:
        with atomic_output(path) as fh:
            write(fh)
    except OSError as e:
        raise DataError(f"{name}: cannot write: {e.strerror or e}") from e


def dump_svmlight(X, y, path_or_file, qid=None, comment=None):
    """Write X, y (and qid) in SVM-light format.

    Parameters
    ----------
    X : scipy sparse matrix or 2-D array, shape (n_rows, n_features)
        Written row by row as CSR.  Every stored entry of a sparse matrix is
        written (explicit zeros too); of a dense array, the non-zeros.
        Duplicate entries of a sparse matrix are summed first, as scipy does.
    y : array, shape (n_rows,)
        Labels; written like values.
    path_or_file : str, os.PathLike, ``"-"`` or file object
        A path is written atomically: to a temporary file in the same
        directory, renamed over the path only when complete, so a failure
        leaves no partial file (and any previous file intact).  ``"-"``
        writes ``sys.stdout.buffer``; a file object (binary, or text) is
        written in place.
    qid : array of integers, shape (n_rows,), optional
        Written as ``qid:<q>`` after each label.
    comment : str, optional
        Written first, each of its lines as a ``# `` comment line.

    Numbers are written in the shortest form that reads back to the same
    double (Python's ``repr``, C locale, without a trailing ``.0``:
    ``1``, ``0.1``, ``-0``, ``1e-300``), indices 1-based, so
    ``load_svmlight`` reproduces X, y and qid bit for bit.  (The width of X
    is not stored: pass ``n_features`` when loading if trailing columns are
    empty.)

    Raises
    ------
    DataError
        Before anything is written, for a non-finite label or value,
        mismatched lengths, non-integer qid, or a column beyond int32; and
        when the file cannot be written.
    """
    X, data, y, qid = _validate_for_dump(X, y, qid)
    header = _comment_bytes(comment)
    blocks = _blocks(X, data, y, qid)
    if isinstance(path_or_file, str) and path_or_file == "-":
        try:
            with atomic_output("-", stdout_ok=True) as fh:
                _write_all(fh, header, blocks)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise DataError(f"<stdout>: cannot write: {e.strerror or e}") from e
    elif isinstance(path_or_file, (str, bytes, os.PathLike)):
        _atomic_write(path_or_file, lambda fh: _write_all(fh, header, blocks))
    elif hasattr(path_or_file, "write"):
        _write_all(path_or_file, header, blocks)
    else:
        raise TypeError(
            f"expected a path, '-' or a file object, not {type(path_or_file).__name__}")


# ---------------------------------------------------------------------------
# renumbering features
# ---------------------------------------------------------------------------

_MAP_HEADER = b"# linsvm feature map: line k holds the original index of feature k\n"


def renumber_features(X, feature_map=None):
    """Feature indices mapped to 1..d' (columns 0..d'-1).

    Without `feature_map`: the columns X uses, in increasing order, become
    0, 1, ...; returns ``(X', map)``, map[k] the original 1-based index of new
    feature k + 1 (int64, increasing).  With `feature_map` (such a map, e.g.
    read back by :func:`read_feature_map`): X's columns are renumbered through
    it, and columns the map does not hold are dropped -- a model trained on
    the renumbered data has no weight for them, so predictions are unchanged.
    X' is CSR with as many columns as the map has entries.
    """
    X = sp.csr_matrix(X)
    cols = X.indices.astype(np.int64) + 1               # 1-based original indices
    if feature_map is None:
        feature_map = np.unique(cols)
    feature_map = np.asarray(feature_map, dtype=np.int64)
    pos = np.searchsorted(feature_map, cols)
    hit = pos < feature_map.shape[0]
    hit[hit] = feature_map[pos[hit]] == cols[hit]
    row = np.repeat(np.arange(X.shape[0]), np.diff(X.indptr))
    indptr = np.zeros(X.shape[0] + 1, dtype=np.int64)
    np.cumsum(np.bincount(row[hit], minlength=X.shape[0]), out=indptr[1:])
    out = sp.csr_matrix((X.data[hit], pos[hit].astype(np.int32), indptr),
                        shape=(X.shape[0], feature_map.shape[0]))
    return out, feature_map


def write_feature_map(path, feature_map):
    """Write a feature map (see renumber_features), one original index a line,
    atomically."""
    body = _MAP_HEADER + "".join(f"{int(v)}\n" for v in feature_map).encode("ascii")
    _atomic_write(path, lambda fh: fh.write(body))


def read_feature_map(path):
    """Read a feature map written by write_feature_map; DataError naming the
    file and line for anything else."""
    name = os.fsdecode(os.fspath(path))
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split(b"\n")
    except OSError as e:
        raise DataError(f"{name}: cannot open: {e.strerror or e}") from e
    if not lines or lines[0] + b"\n" != _MAP_HEADER:
        raise DataError(f"{name}:1: not a linsvm feature map")
    if lines[-1] == b"":
        lines.pop()
    out = np.empty(len(lines) - 1, dtype=np.int64)
    prev = 0
    for k, text in enumerate(lines[1:]):
        if not text.isdigit() or not prev < int(text) <= _INT32_MAX:
            raise DataError(f"{name}:{k + 2}: expected an index above {prev} and at most "
                            f"{_INT32_MAX}, got {text[:40].decode('ascii', 'replace')!r}")
        out[k] = prev = int(text)
    return out
