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

Input may be gzip, bzip2 or xz compressed (linsvm.io.compressed: recognised by
content, read strictly).  Every reader here also takes a linsvm binary data file
(linsvm.io.binfile, written by ``linsvm convert``), recognised by its magic bytes before
any sniffing for compression: it is mapped and verified, not parsed.  Its labels, qids
and width are the file's (the width it was written with, trailing empty columns
included; ``n_features`` may widen it); a binary file on standard input is refused (it
cannot be mapped).

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
gives X instead as the :class:`~linsvm.problem.csr.CSRBuffers` that ``train`` and
``cross_validate`` take (int64 indptr, int32 indices), made of the parser's own
arrays: no copy, and no second pass over what the parser has checked.
"""

from __future__ import annotations

import io
import numbers
import os

import numpy as np

from .. import _svmlight
from ..errors import DataError, ParameterError
from ..problem.csr import CSRBuffers, to_scipy
from .atomic import atomic_output, write_atomically
from .binfile import BinaryData, is_binary_file, open_binary
from . import compressed
from .compressed import Input
from .streams import write_all

__all__ = ["load_svmlight", "load_svmlight_buffers", "iter_svmlight", "iter_svmlight_buffers",
           "dump_svmlight"]

_WRITE_NNZ = 1 << 18            # non-zeros formatted per block when writing
_INT32_MAX = 2**31 - 1


def _check_parse(parser, rc, name):
    """Raise the parser's error as a DataError; True if the row limit was hit."""
    if rc < 0:
        line, what = parser.error()
        raise DataError(f"{name}:{line}: {what}")
    return rc == 1


def _to_csr(parts, n_features):
    import scipy.sparse as sp           # slow to import: only for the scipy results

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
        compression are recognised by their magic bytes, and so is a linsvm binary
        data file (a path, or an open linsvm.io.binfile.BinaryData), which is mapped:
        X's arrays are then read-only views of the map (float64 values; scipy makes
        its own row pointers and indices).
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

    Memory: scipy keeps indices and row pointers in one index type, so past
    2**31 non-zeros X holds int64 indices -- 16 bytes per non-zero instead of
    the parser's 12 -- and ``linsvm.train`` narrows them into an int32 copy (4
    more).  :func:`load_svmlight_buffers`, or a binary data file, gives the
    solvers' buffers without any scipy matrix (12 bytes per non-zero).

    Raises
    ------
    DataError
        ``FILE:LINE: what is wrong`` for malformed input; ``FILE: ...`` when
        the file cannot be opened or its compressed data is corrupt.
    """
    n_features = _check_n_features(n_features)
    binary = _binary(path)
    if binary is not None:
        X, y, qid = _binary_whole(binary, n_features, with_qid)
        X = _to_csr((X.indptr, X.indices, _float64_values(X), y, qid, X.n_features), None)[0]
    else:
        parts = _load(path, n_features, with_qid, progress)
        X, y, qid = _to_csr(parts, n_features)
    return (X, y, qid) if with_qid else (X, y)


def _binary(path):
    """The verified BinaryData of path when it names a binary data file (or is one, from
    linsvm.io.binfile.open_binary), else None (then the text readers read it, and name
    any problem opening it)."""
    if isinstance(path, BinaryData):
        return path
    if isinstance(path, (str, bytes, os.PathLike)) and is_binary_file(path):
        return open_binary(path)
    return None


def _binary_whole(data, n_features, with_qid):
    """(X as CSRBuffers, y, qid) of a BinaryData, X n_features wide (default the file's
    width); with_qid: qid zeros when the file has none (as for text without qids), else
    None."""
    if n_features is not None and n_features < data.max_index:
        raise DataError(f"{data.path}: feature index {data.max_index} > "
                        f"n_features={n_features}")
    X = data.matrix(n_features)
    qid = None
    if with_qid:
        qid = data.qid if data.qid is not None else np.zeros(data.n_rows, dtype=np.int64)
    return X, data.y, qid


def load_svmlight_buffers(path, n_features=None, with_qid=False, progress=None, places=None):
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
    with int32).  `places`: a linsvm.io.places.RowPlaces to which the rows'
    file and lines are added (for errors found in the data after reading).
    """
    n_features = _check_n_features(n_features)
    if n_features is not None and n_features > _INT32_MAX:
        raise DataError(f"X has {n_features} columns, more than int32 indices allow")
    binary = _binary(path)
    if binary is not None:
        X, y, qid = _binary_whole(binary, n_features, with_qid)
        if places is not None:
            places.add_examples(binary.path, binary.n_rows)
        return (X, y, qid) if with_qid else (X, y)
    indptr, indices, data, y, qid, max_index = _load(path, n_features, with_qid, progress,
                                                     places)
    # The parser read every index against the limit n_features (when given) and
    # returns the largest it stored, so the trusted bound holds for either width.
    X = CSRBuffers.trusted(indptr, indices, data,
                           max_index if n_features is None else n_features, max_index)
    return (X, y, qid) if with_qid else (X, y)


def _load(path, n_features, with_qid, progress, places=None):
    """The parser's arrays for the whole input at path (see Parser.take); the rows'
    places added to `places` (a RowPlaces) when given."""
    with Input(path) as src:
        src.fast = True
        parts, gaps = _parse_serial(src, with_qid, n_features, progress)
        if places is not None:
            places.add(src.name, parts[3].shape[0], gaps)
        return parts


def _parse_serial(src, with_qid, n_features, progress=None):
    """Parse the chunks of src in turn: the parser's arrays (see Parser.take) and its
    notes of where the rows are (Parser.row_gaps)."""
    parser = _svmlight.Parser(bool(with_qid), n_features)
    consumed = 0
    hinted = False
    for buf, n in src.chunks():
        parser.feed(buf, n)
        _check_parse(parser, parser.parse(), src.name)
        if progress is not None:
            progress(parser.n_rows)
        consumed += n
        if not hinted and consumed >= compressed.CHUNK_BYTES // 2:
            hinted = True
            if src.size is not None and src.size > consumed:
                # Extrapolate the final size from the first megabyte, with 5%
                # to spare, instead of growing by half at a time.
                f = 1.05 * src.size / consumed
                parser.reserve(int(parser.n_rows * f) + 64, int(parser.nnz * f) + 1024)
    parser.end()
    _check_parse(parser, parser.parse(), src.name)
    return parser.take(), parser.row_gaps()


def iter_svmlight(path, chunk_rows=65536, with_qid=False):
    """Read an SVM-light file in blocks of rows, for streaming prediction.

    Yields ``(X_chunk, y_chunk)`` (or ``(X_chunk, y_chunk, qid_chunk)`` with
    ``with_qid``) holding ``chunk_rows`` rows each, the last block fewer;
    empty input yields nothing.  Memory is bounded by one block plus one read
    buffer, whatever the size of the input.  ``X_chunk`` is a scipy CSR matrix with
    as many columns as the largest index in that block (of a binary file: in the whole
    file); the caller pads or cuts to its width.  Errors carry line numbers of the whole input.  The input is opened
    when iteration starts; arguments are checked at the call.

    ``path`` and ``with_qid`` are as for :func:`load_svmlight`.
    """
    return _iter_svmlight(path, _check_chunk_rows(chunk_rows), bool(with_qid), _to_csr)


def iter_svmlight_buffers(path, chunk_rows=65536, with_qid=False):
    """iter_svmlight with each X_chunk a :class:`~linsvm.problem.csr.CSRBuffers` of the
    parser's arrays (width: the block's largest index): no scipy, no copy."""
    return _iter_svmlight(path, _check_chunk_rows(chunk_rows), bool(with_qid), _to_buffers)


def _check_chunk_rows(chunk_rows):
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, numbers.Integral) \
            or chunk_rows < 1:
        raise ParameterError(f"chunk_rows must be a positive integer, not {chunk_rows!r}")
    return int(chunk_rows)


def _to_buffers(parts, n_features):
    indptr, indices, data, labels, qid, max_index = parts
    return CSRBuffers.trusted(indptr, indices, data, max_index, max_index), labels, qid


def _iter_svmlight(path, chunk_rows, with_qid, make):
    binary = _binary(path)
    if binary is not None:
        yield from _iter_binary(binary, chunk_rows, with_qid, make)
        return
    parser = _svmlight.Parser(with_qid, None)

    def block():
        X, y, qid = make(parser.take(), None)
        return (X, y, qid) if with_qid else (X, y)

    with Input(path) as src:
        for buf, n in src.chunks():
            parser.feed(buf, n)
            while _check_parse(parser, parser.parse(chunk_rows), src.name):
                yield block()
        parser.end()
        while _check_parse(parser, parser.parse(chunk_rows), src.name):
            yield block()
        if parser.n_rows:
            yield block()


def _iter_binary(data, chunk_rows, with_qid, make):
    """The blocks of a BinaryData as _iter_svmlight yields them (as wide as the file's
    largest index); `make` as there (_to_buffers: the blocks' own CSRBuffers)."""
    for X, y, qid, _ in data.blocks(chunk_rows):
        if with_qid and qid is None:
            qid = np.zeros(y.shape[0], dtype=np.int64)
        if make is not _to_buffers:
            X = make((X.indptr, X.indices, _float64_values(X), y, qid, data.max_index), None)[0]
        yield (X, y, qid) if with_qid else (X, y)


def _float64_values(X):
    """The values of CSRBuffers X as float64 (ones for a pattern): what scipy gets."""
    if X.data is None:
        return np.ones(X.indices.shape[0])
    return X.data.astype(np.float64, copy=False)


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------

def _as_csr(X):
    """X as a canonical float64 CSR matrix (sorted, no duplicates), never
    modifying the caller's object (a CSRBuffers of any layout: its matrix, to_scipy)."""
    import scipy.sparse as sp           # slow to import: only when writing

    if isinstance(X, CSRBuffers):
        X = to_scipy(X)
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
    """The header and blocks to `fh`: a text stream gets str, a binary one every byte
    (write_all: a raw stream's short writes are completed, their errors raised)."""
    text = isinstance(fh, io.TextIOBase)
    if header:
        write_all(fh, header.decode("utf-8") if text else header)
    for part in blocks:
        write_all(fh, part.decode("ascii") if text else part)


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
        write_atomically(path_or_file, lambda fh: _write_all(fh, header, blocks))
    elif hasattr(path_or_file, "write"):
        _write_all(path_or_file, header, blocks)
    else:
        raise TypeError(
            f"expected a path, '-' or a file object, not {type(path_or_file).__name__}")
