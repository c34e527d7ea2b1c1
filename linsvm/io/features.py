"""Renumbering features: a map from the indices a data set uses to 1..d, and back.

Every solver keeps dense vectors as long as the largest feature index, so data with
few features but large indices (hashed or sparse ids) train in a fraction of the
memory and time once renumbered (`linsvm renumber`).  The map file has one original
index a line, increasing, after a header line.
"""
from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp

from ..errors import DataError
from .atomic import write_atomically

__all__ = ["renumber_features", "read_feature_map", "write_feature_map", "read_feature_names",
           "FeatureNames"]

_INT32_MAX = 2**31 - 1

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
    """Write a feature map (see renumber_features), one original index a line, to a
    path (atomically) or a binary file object."""
    body = _MAP_HEADER + "".join(f"{int(v)}\n" for v in feature_map).encode("ascii")
    if hasattr(path, "write"):
        path.write(body)
    else:
        write_atomically(path, lambda fh: fh.write(body))


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


class FeatureNames(NamedTuple):
    """Names of features 1..len(names): what `read_feature_names` read.  form: "map" (a
    feature map of `linsvm renumber`: a feature's name is its original index) or
    "vocabulary" (one name a line); path: the file, for messages."""

    form: str
    names: list
    path: str


def read_feature_names(path) -> FeatureNames:
    """The names of the features 1..d from `path`: a feature map written by `linsvm
    renumber` (recognised by its first line; feature k's name is the original index of
    feature k), or a vocabulary, one name a line, line i naming feature i (a trailing
    carriage return and surrounding blanks are dropped).  DataError naming the file and
    line for a malformed map, a vocabulary line that is blank or not UTF-8, an empty
    file, or one that cannot be read."""
    name = os.fsdecode(os.fspath(path))
    try:
        with open(path, "rb") as fh:
            body = fh.read()
    except OSError as e:
        raise DataError(f"{name}: cannot open: {e.strerror or e}") from e
    if body.startswith(_MAP_HEADER):
        return FeatureNames("map", [str(v) for v in read_feature_map(path).tolist()], name)
    lines = body.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise DataError(f"{name}: empty file (a vocabulary names one feature a line)")
    names = []
    for i, raw in enumerate(lines, 1):
        try:
            text = raw.decode("utf-8").strip()
        except UnicodeDecodeError:
            raise DataError(f"{name}:{i}: not UTF-8 text (a vocabulary names one feature a "
                            "line)") from None
        if not text:
            raise DataError(f"{name}:{i}: blank line: feature {i} has no name (a vocabulary "
                            "names one feature a line, line i naming feature i)")
        names.append(text)
    return FeatureNames("vocabulary", names, name)
