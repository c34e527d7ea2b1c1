"""`linsvm scale` refuses a scaling that would write inf or nan (svm-scale writes them).

svm-scale maps a value v of feature j, range [m, M] (m < M), to the limits [l, u] by

    v' = l  if v == m,   u  if v == M,   l + ((u - l)(v - m)) / (M - m)  otherwise

(linsvm.io.scale, csrc/_scale.pyx), in that order of operations.  With huge values
that line overflows: M - m beyond the largest double makes every v' l or nan
(``1:-1.7e308`` and ``1:1.7e308`` give ``-nan``), and (u - l)(v - m) beyond it gives
inf.  `check_finite_scaling` runs after the first pass, before anything is written,
and raises a DataError naming the feature (or the labels, with -y) when:

* the range's width M - m overflows (refused even where every value is an end:
  a range wider than the doubles cannot be scaled);
* v' is not finite for some value v of the data.  Each operation of the line is
  monotone in v, so v' is finite for every v between the data's smallest and
  largest value of the feature when it is at those two; only when one of them is
  an end that the line would overflow at (written as exactly l or u, so harmless
  itself) can a value in between overflow, and then the values of that feature
  are looked at one by one in one more pass over the data.

Exactly the scalings whose output has an inf or a nan are refused, besides ranges
too wide for a double.  The limits' width u - l is checked with the options
(linsvm.io.scale.check_options) and in a parameter file (linsvm.io.scale_params).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import DataError

__all__ = ["check_finite_scaling"]


def _line(v, lo, hi, vmin, vmax):
    """l + ((u - l)(v - m)) / (M - m) at v (arrays broadcast), svm-scale's order of
    operations, without the ends' exceptions."""
    with np.errstate(over="ignore", invalid="ignore"):
        return lo + ((hi - lo) * (v - vmin)) / (vmax - vmin)


def _scaled_finite(v, lo, hi, vmin, vmax):
    """Whether v' is finite at each v (the ends m -> l and M -> u are)."""
    return (v == vmin) | (v == vmax) | np.isfinite(_line(v, lo, hi, vmin, vmax))


def check_finite_scaling(params, ranges, name, chunks) -> None:
    """DataError ``NAME: feature J: ...`` or ``NAME: labels: ...`` unless every value
    the scaling `params` (a ScaleParams) writes for the data of `ranges` (the first
    pass's DataRanges) is finite (module notes).  `chunks()` iterates the data again,
    as (indptr, indices (0-based), values, labels) per chunk of rows; it is called only
    when the ranges cannot decide."""
    listed = params.listed()
    width = ranges.feature_min.shape[0]
    vmin, vmax = params.feature_min[listed], params.feature_max[listed]
    inside = listed < width                     # a listed feature the data lacks: all 0
    at = np.minimum(listed, width - 1)
    dmin = np.where(inside, ranges.feature_min[at], 0.0)
    dmax = np.where(inside, ranges.feature_max[at], 0.0)
    lo, hi = params.lower, params.upper
    with np.errstate(over="ignore", invalid="ignore"):
        wide = np.flatnonzero(vmax - vmin == math.inf)
    if wide.shape[0]:
        k = wide[0]
        raise DataError(f"{name}: feature {listed[k]}: its range [{vmin[k]:g}, {vmax[k]:g}] is "
                        "wider than the largest double (max - min overflows): it cannot be scaled")
    ends_ok = _scaled_finite(dmin, lo, hi, vmin, vmax) & _scaled_finite(dmax, lo, hi, vmin, vmax)
    bad = np.flatnonzero(~ends_ok)
    if bad.shape[0]:
        k = bad[0]
        _feature_overflow(name, listed[k], dmin[k], dmax[k], vmin[k], vmax[k], lo, hi)
    # an end scaled exactly, but the line overflows there: values near it may overflow
    unsure = ~np.isfinite(_line(dmin, lo, hi, vmin, vmax)) | ~np.isfinite(_line(dmax, lo, hi, vmin, vmax))
    y_unsure = _labels_decided(params, ranges, name)
    if unsure.any() or y_unsure:
        _look_at_values(params, ranges, name, chunks, listed[unsure], y_unsure)


def _feature_overflow(name, j, dmin, dmax, m, M, lo, hi):
    values = "" if (dmin, dmax) == (m, M) else f" its values [{dmin:g}, {dmax:g}] from"
    raise DataError(f"{name}: feature {j}: scaling{values} its range [{m:g}, {M:g}] to "
                    f"[{lo:g}, {hi:g}] overflows the largest double")


def _labels_overflow(name, ymin_data, ymax_data, ymin, ymax, yl, yu):
    values = "" if (ymin_data, ymax_data) == (ymin, ymax) else \
        f" their values [{ymin_data:g}, {ymax_data:g}] from"
    raise DataError(f"{name}: labels: scaling{values} their range [{ymin:g}, {ymax:g}] to "
                    f"[{yl:g}, {yu:g}] overflows the largest double (-y)")


def _labels_decided(params, ranges, name) -> bool:
    """The labels' part of the check from their range: raises, or returns whether the
    labels must be looked at one by one."""
    if params.y is None or ranges.n_rows == 0:
        return False
    yl, yu, ymin, ymax = params.y
    if ymin == ymax:                # svm-scale: every label is y_lower (its first test)
        return False
    if ymax - ymin == math.inf:     # (-inf: min > max, svm-scale's range of no labels)
        raise DataError(f"{name}: labels: their range [{ymin:g}, {ymax:g}] is wider than the "
                        "largest double (max - min overflows): they cannot be scaled (-y)")
    ends = np.array([ranges.y_min, ranges.y_max])
    if not _scaled_finite(ends, yl, yu, ymin, ymax).all():
        _labels_overflow(name, ranges.y_min, ranges.y_max, ymin, ymax, yl, yu)
    return not np.isfinite(_line(ends, yl, yu, ymin, ymax)).all()


def _look_at_values(params, ranges, name, chunks, features, labels):
    """One more pass: v' of every stored value of `features` (1-based), of the zero of
    the rows that do not store one, and (if `labels`) of every label."""
    lo, hi = params.lower, params.upper
    m_of, M_of = params.feature_min, params.feature_max
    wanted = np.zeros(ranges.feature_min.shape[0] + 1, dtype=bool)
    wanted[features[features < wanted.shape[0]]] = True
    stored = np.zeros(wanted.shape[0], dtype=np.int64)
    for indptr, indices, data, y in chunks():
        j = indices.astype(np.int64) + 1
        pick = wanted[np.minimum(j, wanted.shape[0] - 1)] & (j < wanted.shape[0])
        j, v = j[pick], data[pick]
        np.add.at(stored, j, 1)
        ok = _scaled_finite(v, lo, hi, m_of[j], M_of[j])
        if not ok.all():
            k = int(np.flatnonzero(~ok)[0])
            raise DataError(f"{name}: feature {j[k]}: scaling its value {v[k]:g} from its range "
                            f"[{m_of[j[k]]:g}, {M_of[j[k]]:g}] to [{lo:g}, {hi:g}] overflows "
                            "the largest double")
        if labels:
            yl, yu, ymin, ymax = params.y
            ok = _scaled_finite(y, yl, yu, ymin, ymax)
            if not ok.all():
                k = int(np.flatnonzero(~ok)[0])
                raise DataError(f"{name}: labels: scaling the label {y[k]:g} from their range "
                                f"[{ymin:g}, {ymax:g}] to [{yl:g}, {yu:g}] overflows the largest "
                                "double (-y)")
    for j in features.tolist():             # a row without j: its value is 0
        absent = j >= stored.shape[0] or stored[j] < ranges.n_rows
        if absent and not _scaled_finite(np.array(0.0), lo, hi, m_of[j], M_of[j]):
            raise DataError(f"{name}: feature {j}: scaling 0 (a row without it) from its range "
                            f"[{m_of[j]:g}, {M_of[j]:g}] to [{lo:g}, {hi:g}] overflows the "
                            "largest double")
