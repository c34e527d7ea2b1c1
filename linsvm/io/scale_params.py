"""The parameter file of `linsvm scale` (LIBSVM's svm-scale ``-s`` / ``-r``).

Its format, svm-scale's, so that each program reads the other's files::

    y                      (optional: only when labels are scaled)
    y_lower y_upper
    y_min y_max
    x                      (optional after a y section, as in svm-scale)
    lower upper
    j m_j M_j              (one line per feature with m_j != M_j, increasing j)

numbers in ``%.17g``, so they read back exactly.  `ScaleParams` is what a file
holds, `format_params` / `write_params` write one, `read_params` reads one
(strictly: see its contract).  linsvm.io.scale applies them.
"""
from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from typing import Optional

import numpy as np

from ..errors import DataError
from .atomic import atomic_output

__all__ = ["ScaleParams", "format_params", "write_params", "read_params"]

_INT32_MAX = 2**31 - 1


@dataclass
class ScaleParams:
    """What a parameter file holds.

    feature_min[j], feature_max[j]: the range of feature j (slot 0 unused); a
    feature with feature_min[j] == feature_max[j] is left out of the output and
    of the file.  y: (y_lower, y_upper, y_min, y_max) when labels are scaled.
    has_x: False for a file with a y section only, which svm-scale accepts: the
    features are then scaled as without a file (the data's ranges, the -l/-u
    limits), and lower, upper and the (empty) ranges here mean nothing.
    """

    lower: float
    upper: float
    feature_min: np.ndarray
    feature_max: np.ndarray
    y: Optional[tuple] = None
    has_x: bool = True

    @property
    def n_features(self) -> int:
        """Largest feature index the ranges cover."""
        return self.feature_min.shape[0] - 1

    def listed(self) -> np.ndarray:
        """The features j a parameter file lists (m_j != M_j), increasing."""
        return np.flatnonzero(self.feature_min[1:] != self.feature_max[1:]) + 1


# ---------------------------------------------------------------------------
# the parameter file
# ---------------------------------------------------------------------------

def _g17(v: float) -> str:
    # Python's %-formatting follows C's printf for %.17g (correctly rounded, "1e+22").
    return "%.17g" % v


def format_params(params: ScaleParams) -> bytes:
    """The text of a parameter file for `params` (svm-scale's -s format; a y section
    only when `params.has_x` is False)."""
    parts = []
    if params.y is not None:
        yl, yu, ymin, ymax = params.y
        parts.append(f"y\n{_g17(yl)} {_g17(yu)}\n{_g17(ymin)} {_g17(ymax)}\n")
    if not params.has_x:
        return "".join(parts).encode("ascii")
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
    (and left out of the output, as by svm-scale).  A y section with nothing
    after it is a file svm-scale accepts too (it then scales the features as
    without a file): `ScaleParams.has_x` is False.
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

    def limits(ln, lo, hi, lo_name, hi_name):
        """The target interval of a section: lo < hi, and hi - lo a double."""
        if not lo < hi:
            fail(ln, f"{lo_name} {_g17(lo)} is not below {hi_name} {_g17(hi)}")
        if not math.isfinite(hi - lo):
            fail(ln, f"{lo_name} {_g17(lo)} and {hi_name} {_g17(hi)} are too far apart "
                     f"({hi_name} - {lo_name} overflows the largest double)")

    if not lines:
        fail(1, "empty parameter file (expected 'x' or 'y' on the first line)")
    y = None
    if keyword(b"y"):
        ln, (yl, yu) = numbers(("num", "num"), "'y_lower y_upper'")
        limits(ln, yl, yu, "y_lower", "y_upper")
        ln, (ymin, ymax) = numbers(("num", "num"), "'y_min y_max'")
        if ymax - ymin == math.inf:         # (min > max: the range of no labels, svm-scale's)
            fail(ln, f"the label range [{_g17(ymin)}, {_g17(ymax)}] is wider than the largest "
                     "double (y_max - y_min overflows)")
        y = (yl, yu, ymin, ymax)
    if y is not None and pos == len(lines):     # svm-scale: the x section is optional
        return ScaleParams(-1.0, 1.0, np.zeros(1), np.zeros(1), y, has_x=False)
    if not keyword(b"x"):
        ln, tokens = lines[pos]
        fail(ln, f"expected 'x'{'' if y else ' or y'} on a line of its own, got "
                 f"{_quote(b' '.join(tokens))} (not a scaling parameter file?)")
    ln, (lower, upper) = numbers(("num", "num"), "'lower upper'")
    limits(ln, lower, upper, "lower", "upper")
    features = []
    while pos < len(lines):
        features.append(numbers(("index", "num", "num"), "'index min max'"))
    fmin, fmax = _feature_ranges(features, fail)
    return ScaleParams(lower, upper, fmin, fmax, y)


def _feature_ranges(features, fail):
    """feature_min, feature_max (slot j = feature j) of the x section's lines, a list
    of (line number, (j, min, max)); fail(line, what) for a bad one."""
    idx, mins, maxs = [], [], []
    prev = 0
    for ln, (j, lo, hi) in features:
        if j < 1:
            fail(ln, f"feature index {j}: feature indices start at 1")
        if j > _INT32_MAX:
            fail(ln, f"feature index {j} is above {_INT32_MAX}, the largest linsvm reads")
        if j <= prev:
            fail(ln, f"feature index {j} is not above the previous one ({prev})")
        if lo > hi:
            fail(ln, f"feature {j}: min {_g17(lo)} is above max {_g17(hi)}")
        if not math.isfinite(hi - lo):
            fail(ln, f"feature {j}: its range [{_g17(lo)}, {_g17(hi)}] is wider than the largest "
                     "double (max - min overflows)")
        idx.append(j)
        mins.append(lo)
        maxs.append(hi)
        prev = j
    fmin = np.zeros(prev + 1)
    fmax = np.zeros(prev + 1)
    fmin[idx] = mins
    fmax[idx] = maxs
    return fmin, fmax
