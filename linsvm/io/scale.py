"""Scaling features to a range: LIBSVM's svm-scale, streaming.

Feature j with range [m_j, M_j] over the data (m_j != M_j) maps a value v to
``l + (u - l) (v - m_j) / (M_j - m_j)`` (exactly l at m_j, u at M_j), with
limits [l, u] = [-1, 1] unless given; a feature whose range is one value is left
out, a scaled value of 0 is not written.  An entry a row does not store is a 0
and is scaled like any value, so with l < 0 (or any feature with negative
values) zeros become non-zeros and sparse data dense: LIBLINEAR's README
advises ``-l 0`` for sparse non-negative data.  Labels are scaled the same way
to [y_l, y_u] when asked (``-y``).  The text written is svm-scale's, byte for
byte (its arithmetic in its order, its ``%g`` / ``%.17g`` from the C library:
see csrc/_scale.pyx).

The parameter file (``-s`` writes it, ``-r`` reads it) is svm-scale's, so each
program reads the other's::

    y                      (optional: only when labels are scaled)
    y_lower y_upper
    y_min y_max
    x
    lower upper
    j m_j M_j              (one line per feature with m_j != M_j, increasing j)

numbers in ``%.17g``, so they read back exactly.  With a parameter file the
ranges, the x limits and (if it has a y section) the y limits are the file's:
``-l``/``-u``/``-y`` given too are overridden, as svm-scale does (with a note).
Features of the data that the file does not list are left out (svm-scale
"scales them to 0"), with one note naming how many varied in the data;
features the file lists beyond the data's largest index are written wherever
their scaled zero is non-zero.

Where linsvm differs from svm-scale, it is where svm-scale reads the input
wrongly or not at all: the input is parsed by linsvm's reader (linsvm.io.svmlight:
comments and blank lines are skipped, gzip/bzip2/xz input is recognised,
qids are kept and written after the label, ``1:abc`` or an index out of order
is an error naming the file and line instead of a silently shortened row),
indices must be >= 1 (svm-scale warns and writes a feature 0), and a malformed
parameter file is an error instead of being read up to the fault.

Streaming: memory holds one chunk of rows and a few arrays as long as the
largest feature index, whatever the size of the input.  The ranges need a
first pass over the data (svm-scale reads the file three times); a regular
file, compressed or not, is simply opened again for the second pass (a
compressed one is decompressed twice: that costs CPU, not disk).  Standard
input, a pipe or any file that cannot be opened twice is copied as it is read
(compressed bytes stay compressed) to an anonymous temporary file in
``TMPDIR`` (linsvm.io.atomic.scratch_file), which the second pass reads and which
disappears when the command ends.  The first pass also checks the whole input,
so a malformed line is reported before anything is written.  Output goes to
standard output or, atomically, to a file (linsvm.io.atomic); the parameter file
is written atomically once the first pass has succeeded, as svm-scale writes it
before scaling.
"""
from __future__ import annotations

import math
import os
import re
import stat
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import _scale
from ..errors import DataError, ParameterError
from .atomic import atomic_output, scratch_file
from .streams import STDIN_NAME, stdin_binary
from .svmlight import iter_svmlight_buffers

__all__ = ["ScaleParams", "DataRanges", "ScaleResult", "data_ranges", "format_params",
           "write_params", "read_params", "check_options", "scale_file"]

_CHUNK_ROWS = 8192                  # rows parsed at a time
_OUT_BYTES = 1 << 20                # text formatted at a time
_DBL_MAX = sys.float_info.max
_INT32_MAX = 2**31 - 1


@dataclass
class ScaleParams:
    """What a parameter file holds.

    feature_min[j], feature_max[j]: the range of feature j (slot 0 unused); a
    feature with feature_min[j] == feature_max[j] is left out of the output and
    of the file.  y: (y_lower, y_upper, y_min, y_max) when labels are scaled.
    """

    lower: float
    upper: float
    feature_min: np.ndarray
    feature_max: np.ndarray
    y: Optional[tuple] = None

    @property
    def n_features(self) -> int:
        """Largest feature index the ranges cover."""
        return self.feature_min.shape[0] - 1

    def listed(self) -> np.ndarray:
        """The features j a parameter file lists (m_j != M_j), increasing."""
        return np.flatnonzero(self.feature_min[1:] != self.feature_max[1:]) + 1


@dataclass
class DataRanges:
    """The first pass over a data file: n_rows, nnz (stored entries),
    feature_min/feature_max (svm-scale's fold, slot j = feature j, slot 0
    unused), y_min/y_max (svm-scale's: +-DBL_MAX for no rows) and has_qid (some
    row has a non-zero qid)."""

    n_rows: int
    nnz: int
    feature_min: np.ndarray
    feature_max: np.ndarray
    y_min: float
    y_max: float
    has_qid: bool


@dataclass
class ScaleResult:
    """What scale_file did: rows written, non-zeros read and written, the
    parameters used, and the notes it gave."""

    n_rows: int
    nnz_in: int
    nnz_out: int
    params: ScaleParams
    notes: list


# ---------------------------------------------------------------------------
# the first pass: ranges
# ---------------------------------------------------------------------------

class _Stats:
    """Per-feature statistics of _scale.update_ranges, grown as indices appear."""

    def __init__(self):
        self.size = 0
        self.vmin = self.vmax = self.count = self.zrow = self.zcount = self.zneg = None
        self._grow(1024)

    def _grow(self, size):
        def grown(old, fill, dtype):
            new = np.full(size, fill, dtype=dtype)
            if old is not None:
                new[:old.shape[0]] = old
            return new
        self.vmin = grown(self.vmin, np.inf, np.float64)
        self.vmax = grown(self.vmax, -np.inf, np.float64)
        self.count = grown(self.count, 0, np.int64)
        self.zrow = grown(self.zrow, -1, np.int64)
        self.zcount = grown(self.zcount, 0, np.int64)
        self.zneg = grown(self.zneg, 0, np.uint8)
        self.size = size

    def need(self, width):
        """Room for features 1..width (slots 0..width)."""
        if width + 1 > self.size:
            self._grow(max(width + 1, self.size + self.size // 2))

    def finish(self, n_rows, width):
        """feature_min, feature_max over slots 0..width: svm-scale's fold of every
        row's value (+0 where a row stores nothing), ties going to the later value."""
        w = width + 1
        count, vmin, vmax = self.count[:w], self.vmin[:w], self.vmax[:w]
        absent = count < n_rows                     # some row does not store j: a +0
        fmin = np.where(absent, np.minimum(vmin, 0.0), vmin)
        fmax = np.where(absent, np.maximum(vmax, 0.0), vmax)
        # A zero result takes the sign of the last zero of the row sequence: a stored
        # zero, unless some later row does not store j (a +0 then comes after it).
        zrow = self.zrow[:w]
        stored_last = (zrow >= 0) & (n_rows - 1 - zrow == count - self.zcount[:w])
        zero = np.where(stored_last & (self.zneg[:w] == 1), -0.0, 0.0)
        fmin = np.where(fmin == 0.0, zero, fmin)
        fmax = np.where(fmax == 0.0, zero, fmax)
        fmin[0] = fmax[0] = 0.0
        return fmin, fmax


def _labels_fold(y, y_min, y_max, last_zero):
    """svm-scale's fold of the labels (ties to the later value), for one chunk."""
    if y.shape[0]:
        lo, hi = float(y.min()), float(y.max())
        y_min = lo if lo <= y_min else y_min
        y_max = hi if hi >= y_max else y_max
        zeros = np.flatnonzero(y == 0.0)
        if zeros.shape[0]:
            last_zero = -0.0 if math.copysign(1.0, float(y[zeros[-1]])) < 0 else 0.0
    return y_min, y_max, last_zero


def _chunks(source):
    """(indptr, indices int32, data, labels, qid, width) for each chunk of rows."""
    for X, y, qid in iter_svmlight_buffers(source, chunk_rows=_CHUNK_ROWS, with_qid=True):
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        indptr = np.ascontiguousarray(X.indptr)
        if indptr.dtype not in (np.int32, np.int64):
            indptr = indptr.astype(np.int64)
        yield (indptr, indices, np.ascontiguousarray(X.data, dtype=np.float64),
               np.ascontiguousarray(y, dtype=np.float64),
               np.ascontiguousarray(qid, dtype=np.int64), int(X.n_features))


def data_ranges(source) -> DataRanges:
    """One pass over `source` (a path, ``-`` or a binary file object, as for
    linsvm.io.svmlight.load_svmlight): the ranges svm-scale computes (see DataRanges).

    Memory: one chunk of rows and arrays as long as the largest index.
    """
    stats = _Stats()
    n_rows = nnz = width = 0
    y_min, y_max, last_zero = _DBL_MAX, -_DBL_MAX, 0.0
    has_qid = False
    for indptr, indices, data, y, qid, w in _chunks(source):
        stats.need(w)
        width = max(width, w)
        _scale.update_ranges(indptr, indices, data, n_rows, stats.vmin, stats.vmax, stats.count,
                             stats.zrow, stats.zcount, stats.zneg)
        y_min, y_max, last_zero = _labels_fold(y, y_min, y_max, last_zero)
        has_qid = has_qid or bool(np.any(qid))
        n_rows += y.shape[0]
        nnz += data.shape[0]
    if y_min == 0.0:
        y_min = last_zero
    if y_max == 0.0:
        y_max = last_zero
    fmin, fmax = stats.finish(n_rows, width)
    return DataRanges(n_rows, nnz, fmin, fmax, y_min, y_max, has_qid)


# ---------------------------------------------------------------------------
# the parameter file
# ---------------------------------------------------------------------------

def _g17(v: float) -> str:
    # Python's %-formatting follows C's printf for %.17g (correctly rounded, "1e+22").
    return "%.17g" % v


def format_params(params: ScaleParams) -> bytes:
    """The text of a parameter file for `params` (svm-scale's -s format)."""
    parts = []
    if params.y is not None:
        yl, yu, ymin, ymax = params.y
        parts.append(f"y\n{_g17(yl)} {_g17(yu)}\n{_g17(ymin)} {_g17(ymax)}\n")
    parts.append(f"x\n{_g17(params.lower)} {_g17(params.upper)}\n")
    fmin, fmax = params.feature_min, params.feature_max
    for j in params.listed().tolist():
        parts.append(f"{j} {_g17(float(fmin[j]))} {_g17(float(fmax[j]))}\n")
    return "".join(parts).encode("ascii")


def write_params(path, params: ScaleParams) -> None:
    """Write a parameter file atomically (nothing is left behind on failure)."""
    body = format_params(params)
    name = os.fsdecode(os.fspath(path))
    try:
        with atomic_output(path) as fh:
            fh.write(body)
    except OSError as e:
        raise DataError(f"{name}: cannot write: {e.strerror or e}") from e


_NUMBER = re.compile(rb"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_INDEX = re.compile(rb"\+?[0-9]+\Z")


def _quote(token: bytes) -> str:
    text = token[:40].decode("ascii", "replace")
    return repr(text + ("..." if len(token) > 40 else ""))


def read_params(path) -> ScaleParams:
    """Read a parameter file written by svm-scale -s or write_params.

    Strict where svm-scale is lenient: every line must be what the format says
    (blank lines are skipped), numbers finite, lower < upper, feature indices
    1 <= j <= 2**31 - 1 and increasing; anything else raises DataError
    ``FILE:LINE: what is wrong``.  A feature listed with min == max is kept
    (and left out of the output, as by svm-scale).
    """
    name = os.fsdecode(os.fspath(path))
    try:
        with open(path, "rb") as fh:
            text = fh.read()
    except OSError as e:
        raise DataError(f"{name}: cannot open the parameter file: {e.strerror or e}") from e
    lines = [(k + 1, line.split()) for k, line in enumerate(text.split(b"\n")) if line.strip()]
    pos = 0

    def fail(lineno, what):
        raise DataError(f"{name}:{lineno}: {what}")

    def numbers(expect, what):
        nonlocal pos
        if pos >= len(lines):
            fail(text.count(b"\n") + (not text.endswith(b"\n")),
                 f"the file ends where {what} should follow")
        lineno, tokens = lines[pos]
        pos += 1
        if len(tokens) != len(expect):
            fail(lineno, f"expected {what}, got {len(tokens)} field(s)")
        out = []
        for tok, kind in zip(tokens, expect):
            if kind == "index":
                if not _INDEX.match(tok):
                    fail(lineno, f"expected a feature index, got {_quote(tok)}")
                out.append(int(tok))
                continue
            if not _NUMBER.match(tok):
                fail(lineno, f"expected a number, got {_quote(tok)}")
            v = float(tok)
            if not math.isfinite(v):
                fail(lineno, f"number {_quote(tok)} is out of range")
            out.append(v)
        return lineno, out

    def keyword(word):
        nonlocal pos
        if pos < len(lines) and lines[pos][1] == [word]:
            pos += 1
            return True
        return False

    if not lines:
        fail(1, "empty parameter file (expected 'x' or 'y' on the first line)")
    y = None
    if keyword(b"y"):
        ln, (yl, yu) = numbers(("num", "num"), "'y_lower y_upper'")
        if not yl < yu:
            fail(ln, f"y_lower {_g17(yl)} is not below y_upper {_g17(yu)}")
        _, (ymin, ymax) = numbers(("num", "num"), "'y_min y_max'")
        y = (yl, yu, ymin, ymax)
    if not keyword(b"x"):
        ln, tokens = lines[pos]
        fail(ln, f"expected 'x'{'' if y else ' or y'} on a line of its own, got "
                 f"{_quote(b' '.join(tokens))} (not a scaling parameter file?)")
    ln, (lower, upper) = numbers(("num", "num"), "'lower upper'")
    if not lower < upper:
        fail(ln, f"lower {_g17(lower)} is not below upper {_g17(upper)}")
    idx, mins, maxs = [], [], []
    prev = 0
    while pos < len(lines):
        ln, (j, lo, hi) = numbers(("index", "num", "num"), "'index min max'")
        if not prev < j <= _INT32_MAX:
            fail(ln, f"feature index {j} is not above the previous one ({prev})" if j <= prev
                 else f"feature index {j} is not between 1 and {_INT32_MAX}")
        if lo > hi:
            fail(ln, f"feature {j}: min {_g17(lo)} is above max {_g17(hi)}")
        idx.append(j)
        mins.append(lo)
        maxs.append(hi)
        prev = j
    width = prev
    fmin = np.zeros(width + 1)
    fmax = np.zeros(width + 1)
    fmin[idx] = mins
    fmax[idx] = maxs
    return ScaleParams(lower, upper, fmin, fmax, y)


# ---------------------------------------------------------------------------
# the second pass: scaling
# ---------------------------------------------------------------------------

class _Spool:
    """A binary stream that copies what it reads from `fh` to `sink` (standard
    input kept for the second pass); named `name` in error messages."""

    def __init__(self, fh, sink, name):
        self._fh = fh
        self._sink = sink
        self.name = name

    def read(self, n=-1):
        data = self._fh.read(n)
        if data:
            self._sink.write(data)
        return data

    def readinto(self, b):
        n = self._fh.readinto(b)
        if n:
            self._sink.write(memoryview(b)[:n])
        return n


class _Named:
    """The spooled copy, read under the original name."""

    def __init__(self, fh, name):
        self._fh = fh
        self.name = name

    def read(self, n=-1):
        return self._fh.read(n)

    def readinto(self, b):
        return self._fh.readinto(b)


def _reopenable(source) -> bool:
    """Whether `source` is a path to a regular file (read again for the second pass)."""
    if isinstance(source, str) and source == "-":
        return False
    if not isinstance(source, (str, bytes, os.PathLike)):
        return False
    try:
        return stat.S_ISREG(os.stat(source).st_mode)
    except OSError:
        return True                     # let the reader report it, with the file's name


class _TwoPasses:
    """The first and second reading of the input (see the module notes)."""

    def __init__(self, source):
        self.source = source
        self.spool = None
        if _reopenable(source):
            self.first = self.second_source = source
            return
        if isinstance(source, str) and source == "-":
            fh, name = stdin_binary(), STDIN_NAME
        elif isinstance(source, (str, bytes, os.PathLike)):
            name = os.fsdecode(os.fspath(source))
            try:
                fh = open(source, "rb")
            except OSError as e:
                raise DataError(f"{name}: cannot open: {e.strerror or e}") from e
            self._own = fh
        else:
            fh = source
            name = getattr(source, "name", None)
            name = name if isinstance(name, str) else "<file>"
        self.spool = scratch_file()
        self.name = name
        self.first = _Spool(fh, self.spool, name)

    def second(self):
        if self.spool is None:
            return self.second_source
        self.spool.flush()
        self.spool.seek(0)
        return _Named(self.spool, self.name)

    def close(self):
        if self.spool is not None:
            self.spool.close()
        own = getattr(self, "_own", None)
        if own is not None:
            own.close()


def _missing_features(ranges: DataRanges, params: ScaleParams):
    """Features that vary in the data but have no range in the parameter file
    (svm-scale's warning: they are left out)."""
    varies = np.flatnonzero(ranges.feature_min[1:] != ranges.feature_max[1:]) + 1
    inside = varies[varies <= params.n_features]
    unlisted = params.feature_min[inside] == params.feature_max[inside]
    return np.concatenate([inside[unlisted], varies[varies > params.n_features]])


def check_options(lower=None, upper=None, y_limits=None, save=None, restore=None):
    """The x limits, y limits of a scaling after svm-scale's checks: ParameterError
    for -s with -r, a non-finite limit, or lower >= upper; returns (lower, upper,
    y_limits) with svm-scale's defaults -1 and 1 filled in."""
    if save is not None and restore is not None:
        raise ParameterError("cannot use -s and -r together (save the parameters of one file, "
                             "restore them for another)")
    for what, v in (("-l", lower), ("-u", upper)):
        if v is not None and not math.isfinite(v):
            raise ParameterError(f"{what} must be a finite number, not {v!r}")
    lo = -1.0 if lower is None else float(lower)
    hi = 1.0 if upper is None else float(upper)
    if not lo < hi:
        raise ParameterError(f"inconsistent limits: lower {lo:g} (-l) must be below upper {hi:g} (-u)")
    if y_limits is not None:
        yl, yu = (float(v) for v in y_limits)
        if not (math.isfinite(yl) and math.isfinite(yu)):
            raise ParameterError("-y limits must be finite numbers")
        if not yl < yu:
            raise ParameterError(f"inconsistent limits: y_lower {yl:g} must be below y_upper {yu:g} (-y)")
        y_limits = (yl, yu)
    return lo, hi, y_limits


def _write_scaled(src, out, params: ScaleParams, with_qid: bool):
    """The second pass: the scaled text of every row of src written to out;
    returns (rows, non-zeros written)."""
    fmin = np.ascontiguousarray(params.feature_min, dtype=np.float64)
    fmax = np.ascontiguousarray(params.feature_max, dtype=np.float64)
    shifted, ztext, zoff = _scale.zero_columns(fmin, fmax, params.lower, params.upper)
    if params.y is not None:
        y_on, (yl, yu, ymin, ymax) = True, params.y
    else:
        y_on, yl, yu, ymin, ymax = False, 0.0, 0.0, 0.0, 0.0
    buf = bytearray(_OUT_BYTES)
    rows = nnz = 0
    for indptr, indices, data, y, qid, _ in _chunks(src):
        n = y.shape[0]
        if n:
            longest = int(np.max(np.diff(indptr)))
            need = _scale.row_bound(longest, int(zoff[-1]))
            if need > len(buf):
                buf = bytearray(need)
        r = 0
        while r < n:
            done, nbytes, k = _scale.format_rows(
                indptr, indices, data, y, qid, with_qid, fmin, fmax, params.lower, params.upper,
                y_on, yl, yu, ymin, ymax, shifted, ztext, zoff, r, buf)
            if done == 0:           # cannot happen: the buffer fits the longest row
                raise RuntimeError("scaling buffer too small")
            out.write(memoryview(buf)[:nbytes])
            r += done
            nnz += k
        rows += n
    return rows, nnz


def scale_file(data, output="-", *, lower=None, upper=None, y_limits=None, save=None,
               restore=None, note: Optional[Callable[[str], None]] = None) -> ScaleResult:
    """Scale the SVM-light file `data` as svm-scale does and write the result.

    data: a path, ``-`` (standard input) or a binary file object; gzip, bzip2
    and xz are recognised.  output: a path (written atomically) or ``-``
    (standard output).  lower, upper: x limits (None: svm-scale's -1 and 1);
    y_limits: (y_lower, y_upper) to scale labels too.  save: write the
    parameters to this path; restore: read them from this path instead of
    computing them (the file's limits win over lower/upper/y_limits).
    note(text) receives one-line remarks (features the parameter file lacks,
    limits overridden by it, output denser than the input).

    Raises ParameterError for inconsistent options (before reading anything)
    and DataError ``FILE:LINE: ...`` for a malformed data or parameter file
    (before anything is written: the first pass reads all of the input).
    """
    notes = []

    def say(text):
        notes.append(text)
        if note is not None:
            note(text)

    lo, hi, y_limits = check_options(lower, upper, y_limits, save, restore)
    restored = read_params(restore) if restore is not None else None
    passes = _TwoPasses(data)
    try:
        ranges = data_ranges(passes.first)
        if restored is None:
            y = None
            if y_limits is not None:
                y = (y_limits[0], y_limits[1], ranges.y_min, ranges.y_max)
            params = ScaleParams(lo, hi, ranges.feature_min, ranges.feature_max, y)
        else:
            params = restored
            rname = os.fsdecode(os.fspath(restore))
            if (lower is not None and lower != params.lower) or \
                    (upper is not None and upper != params.upper):
                say(f"-l/-u are overridden by {rname}: its limits {params.lower:g} {params.upper:g} "
                    "apply (as in svm-scale)")
            if params.y is None and y_limits is not None:
                params = ScaleParams(params.lower, params.upper, params.feature_min,
                                     params.feature_max,
                                     (y_limits[0], y_limits[1], ranges.y_min, ranges.y_max))
            elif params.y is not None and y_limits is not None and \
                    tuple(y_limits) != tuple(params.y[:2]):
                say(f"-y is overridden by {rname}: its y limits {params.y[0]:g} {params.y[1]:g} "
                    "apply (as in svm-scale)")
            missing = _missing_features(ranges, params)
            if missing.shape[0]:
                shown = ", ".join(str(j) for j in missing[:5].tolist())
                more = ", ..." if missing.shape[0] > 5 else ""
                say(f"{missing.shape[0]} feature(s) of the data vary but have no range in "
                    f"{rname} (index {shown}{more}): they are left out (svm-scale scales them to 0)")
        if save is not None:
            write_params(save, params)
        name = "<stdout>" if isinstance(output, str) and output == "-" else os.fsdecode(os.fspath(output))
        try:
            with atomic_output(output, stdout_ok=True) as out:
                rows, nnz_out = _write_scaled(passes.second(), out, params, ranges.has_qid)
        except BrokenPipeError:
            raise
        except OSError as e:
            raise DataError(f"{name}: cannot write: {e.strerror or e}") from e
    finally:
        passes.close()
    if nnz_out > ranges.nnz:
        say(f"the output has more non-zeros than the input ({nnz_out:,} > {ranges.nnz:,}): a zero "
            "scales to a non-zero unless it is a feature's minimum mapped to 0; for sparse "
            "non-negative features use -l 0 (LIBLINEAR's README advises it)")
    return ScaleResult(rows, ranges.nnz, nnz_out, params, notes)
