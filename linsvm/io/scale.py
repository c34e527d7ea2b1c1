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

The parameter file (``-s`` writes it, ``-r`` reads it; linsvm.io.scale_params) is
svm-scale's, so each program reads the other's.  With a parameter file the
ranges, the x limits and (if it has a y section) the y limits are the file's:
``-l``/``-u``/``-y`` given too are overridden, as svm-scale does (with a note).
Features of the data that the file does not list are left out (svm-scale
"scales them to 0"), with one note naming how many varied in the data;
features the file lists beyond the data's largest index are written wherever
their scaled zero is non-zero.  A file with a y section only (svm-scale accepts
it) scales the labels with it and the features as without a file.

Where linsvm differs from svm-scale, it is where svm-scale reads the input
wrongly or not at all: the input is parsed by linsvm's reader (linsvm.io.svmlight:
comments and blank lines are skipped, gzip/bzip2/xz input is recognised,
qids are kept and written after the label, ``1:abc`` or an index out of order
is an error naming the file and line instead of a silently shortened row),
indices must be >= 1 (svm-scale warns and writes a feature 0), a malformed
parameter file is an error instead of being read up to the fault, and a scaling
whose output would hold an inf or a nan (a range wider than the doubles, a scaled
value that overflows: linsvm.io.scale_finite) is refused naming the feature, before
anything is written.

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
import stat
import sys
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from .. import _scale
from ..errors import DataError, ParameterError
from ..problem.csr import entry_values
from .atomic import atomic_output, scratch_file
from .scale_finite import check_finite_scaling
from .scale_params import ScaleParams, format_params, read_params, write_params
from .streams import STDIN_NAME, stdin_binary
from .svmlight import iter_svmlight_buffers

__all__ = ["ScaleParams", "DataRanges", "ScaleResult", "data_ranges", "format_params",
           "write_params", "read_params", "check_options", "scale_file"]

_CHUNK_ROWS = 8192                  # rows parsed at a time
_OUT_BYTES = 1 << 20                # text formatted at a time
_DBL_MAX = sys.float_info.max


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
        yield (indptr, indices, entry_values(X, 0, X.nnz),
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


def _source_name(source) -> str:
    """The data's name in messages: the path, ``<stdin>`` or a file object's name."""
    if isinstance(source, str) and source == "-":
        return STDIN_NAME
    if isinstance(source, (str, bytes, os.PathLike)):
        return os.fsdecode(os.fspath(source))
    name = getattr(source, "name", None)
    return name if isinstance(name, str) else "<file>"


def _restored(params, rname, ranges, lower, upper, limits, y_limits, say):
    """The scaling of a parameter file `params` (named `rname`) on data of `ranges`, as
    svm-scale applies it: the file's limits and ranges win over -l/-u (with a note); a
    file with a y section only scales the features with the data's ranges and `limits`
    (-l/-u or their defaults); -y without a y section scales the labels with the data's
    range; data features the file does not list are left out (one note)."""
    if not params.has_x:
        return ScaleParams(limits[0], limits[1], ranges.feature_min, ranges.feature_max,
                           _y_of(params, rname, ranges, y_limits, say))
    if (lower is not None and lower != params.lower) or \
            (upper is not None and upper != params.upper):
        say(f"-l/-u are overridden by {rname}: its limits {params.lower:g} {params.upper:g} "
            "apply (as in svm-scale)")
    y = _y_of(params, rname, ranges, y_limits, say)
    if y is not params.y:
        params = ScaleParams(params.lower, params.upper, params.feature_min, params.feature_max, y)
    missing = _missing_features(ranges, params)
    if missing.shape[0]:
        shown = ", ".join(str(j) for j in missing[:5].tolist())
        more = ", ..." if missing.shape[0] > 5 else ""
        say(f"{missing.shape[0]} feature(s) of the data vary but have no range in "
            f"{rname} (index {shown}{more}): they are left out (svm-scale scales them to 0)")
    return params


def _y_of(params, rname, ranges, y_limits, say):
    """The label scaling with parameter file `params`: its y section (-y given too is
    overridden, with a note), else -y's limits on the data's label range, else None."""
    if params.y is None:
        return None if y_limits is None else (y_limits[0], y_limits[1], ranges.y_min, ranges.y_max)
    if y_limits is not None and tuple(y_limits) != tuple(params.y[:2]):
        say(f"-y is overridden by {rname}: its y limits {params.y[0]:g} {params.y[1]:g} "
            "apply (as in svm-scale)")
    return params.y


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
    if not math.isfinite(hi - lo):
        raise ParameterError(f"limits too far apart: upper {hi:g} (-u) minus lower {lo:g} (-l) "
                             "overflows the largest double, so would every scaled value")
    if y_limits is not None:
        yl, yu = (float(v) for v in y_limits)
        if not (math.isfinite(yl) and math.isfinite(yu)):
            raise ParameterError("-y limits must be finite numbers")
        if not yl < yu:
            raise ParameterError(f"inconsistent limits: y_lower {yl:g} must be below y_upper {yu:g} (-y)")
        if not math.isfinite(yu - yl):
            raise ParameterError(f"-y limits too far apart: {yu:g} minus {yl:g} overflows the "
                                 "largest double, so would every scaled label")
        y_limits = (yl, yu)
    return lo, hi, y_limits


def _write_scaled(src, out, params: ScaleParams, with_qid: bool):
    """The second pass: the scaled text of every row of src written to out;
    returns (rows, non-zeros written)."""
    fmin = np.ascontiguousarray(params.feature_min, dtype=np.float64)
    fmax = np.ascontiguousarray(params.feature_max, dtype=np.float64)
    scaling = _scale.Scaling(fmin, fmax, params.lower, params.upper, params.y)
    buf = bytearray(_OUT_BYTES)
    rows = nnz = 0
    for indptr, indices, data, y, qid, _ in _chunks(src):
        n = y.shape[0]
        if n:
            longest = int(np.max(np.diff(indptr)))
            need = scaling.row_bound(longest)
            if need > len(buf):
                buf = bytearray(need)
        r = 0
        while r < n:
            done, nbytes, k = _scale.format_rows(scaling, indptr, indices, data, y,
                                                 qid if with_qid else None, r, buf)
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
            params = _restored(restored, os.fsdecode(os.fspath(restore)), ranges, lower, upper,
                               (lo, hi), y_limits, say)
        check_finite_scaling(params, ranges, _source_name(data),
                             lambda: ((c[0], c[1], c[2], c[3]) for c in _chunks(passes.second())))
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
