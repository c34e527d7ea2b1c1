"""Data as liblinearutil takes it: `svm_read_problem`, the `problem` class, the
conversion of every input form to CSR, and `evaluations`.

LIBLINEAR's Python interface takes x as a scipy sparse matrix, a dense 2-D numpy
array, or a list/tuple of rows, each a dict {index: value} (indices from 1) or a
list/tuple of values (value j at index j + 1).  Its number of features n is the
matrix's width for a sparse matrix, and otherwise the largest index holding a
non-zero value (a dense array's trailing zero columns do not count); `as_csr` keeps
that rule, so that a model's nr_feature is LIBLINEAR's.  Zero values of dicts and
lists are dropped, as LIBLINEAR drops them.  linsvm's own CSRBuffers (of any value
layout) is taken as the sparse matrix it holds, with float64 values.
"""
from __future__ import annotations

import io
import numbers
import os

import numpy as np

from ..errors import DataError
from ..io.svmlight import load_svmlight
from ..problem.csr import CSRBuffers, to_scipy
from ..problem.metrics import regression_measures

__all__ = ["as_csr", "as_labels", "problem", "svm_read_problem", "evaluations"]


def _sparse():
    import scipy.sparse as sp           # slow to import: only when data is converted
    return sp


def _row_entries(i, xi):
    """(0-based columns, values) of row i given as a dict or a sequence, non-zeros only."""
    if isinstance(xi, dict):
        cols, vals = [], []
        for key in sorted(xi):
            if isinstance(key, bool) or not isinstance(key, numbers.Integral) or key < 1:
                raise DataError(f"x[{i}]: feature index {key!r} is not an integer >= 1 "
                                "(LIBLINEAR's indices start at 1)")
            value = xi[key]
            if value != 0:
                cols.append(int(key) - 1)
                vals.append(value)
        return cols, vals
    if isinstance(xi, (list, tuple, np.ndarray)):
        row = np.asarray(xi)
        if row.ndim != 1:
            raise DataError(f"x[{i}] must be one row of values, got shape {row.shape}")
        cols = np.flatnonzero(row)
        return cols.tolist(), row[cols].tolist()
    raise DataError(f"x[{i}] is a {type(xi).__name__}: each row must be a dict "
                    "{index: value} or a list of values")


def _rows_to_csr(x):
    """A list/tuple of rows (module notes) as (csr_matrix, n)."""
    indptr, cols, vals = [0], [], []
    for i, xi in enumerate(x):
        c, v = _row_entries(i, xi)
        cols += c
        vals += v
        indptr.append(len(cols))
    try:
        data = np.asarray(vals, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("x holds a value that is not a number") from None
    n = (max(cols) + 1) if cols else 0
    X = _sparse().csr_matrix((data, np.asarray(cols, dtype=np.int64),
                              np.asarray(indptr, dtype=np.int64)), shape=(len(x), n))
    return X, n


def as_csr(x):
    """(X, n): x as a float64 scipy csr_matrix and LIBLINEAR's feature count n of it
    (module notes).  DataError for a form LIBLINEAR does not take."""
    sp = _sparse()
    if isinstance(x, CSRBuffers):
        x = to_scipy(x)
    if sp.issparse(x):
        if x.ndim != 2:
            raise DataError(f"x must be 2-D (instances x features), got shape {x.shape}")
        X = sp.csr_matrix(x, dtype=np.float64)
        return (X if X.has_sorted_indices else X.sorted_indices()), X.shape[1]
    if isinstance(x, np.ndarray):
        if x.ndim != 2:
            raise DataError(f"x must be a 2-D array (instances x features), got shape {x.shape}")
        if not (np.issubdtype(x.dtype, np.number) or x.dtype == np.bool_):
            raise DataError(f"x must be numeric, got dtype {x.dtype}")
        X = sp.csr_matrix(np.asarray(x, dtype=np.float64))
        X.eliminate_zeros()
        n = int(X.indices.max()) + 1 if X.nnz else 0
        return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n)), n
    if isinstance(x, (list, tuple)):
        return _rows_to_csr(x)
    raise DataError(f"type of x: {type(x).__name__} is not supported (a scipy sparse matrix, "
                    "a 2-D numpy array, or a list of dicts or lists)")


def as_labels(y, n_rows=None):
    """y (a list, tuple or 1-D array of numbers) as float64; n_rows: the length it must have."""
    if not isinstance(y, (list, tuple, np.ndarray)):
        raise DataError(f"type of y: {type(y).__name__} is not supported (a list, tuple or "
                        "numpy array of labels)")
    try:
        out = np.asarray(y, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError("y holds a label that is not a number") from None
    if out.ndim != 1:
        raise DataError(f"y must be one label per instance (1-D), got shape {out.shape}")
    if n_rows is not None and out.shape[0] != n_rows:
        raise DataError(f"len(y) != len(x): {out.shape[0]} labels for {n_rows} instances")
    return out


class problem:
    """LIBLINEAR's training problem: labels y and instances x in any form of the module
    notes, and a bias feature (bias >= 0 appends one of that value; < 0: none).

    Fields as liblinear-official names them: l (instances), n (features, the bias
    feature included when bias >= 0), y (float64 array), bias; and x, the instances
    as a scipy csr_matrix (without the bias feature).  train(prob, param) sets the
    bias to param's -B (set_bias), as LIBLINEAR does."""

    def __init__(self, y, x, bias=-1):
        self.x, self._n = as_csr(x)
        self.y = as_labels(y, self.x.shape[0])
        self.l = self.x.shape[0]
        self.n = self._n
        self.bias = -1.0
        self.set_bias(bias)

    def set_bias(self, bias):
        """Use a bias feature of value `bias` (>= 0), or none (< 0)."""
        bias = float(bias)
        self.n = self._n + (1 if bias >= 0 else 0)
        self.bias = bias

    def copy(self):
        """A new problem sharing this one's arrays."""
        out = problem.__new__(problem)
        out.__dict__.update(self.__dict__)
        return out


def _text_source(source):
    """A path or a file object (text or binary) as what load_svmlight reads."""
    if hasattr(source, "read"):
        content = source.read()
        if isinstance(content, str):
            content = content.encode("utf-8")
        return io.BytesIO(content)
    return os.fspath(source)


def svm_read_problem(data_source, return_scipy=False):
    """Read LIBSVM-format data from a path or a file object: (y, x).

    return_scipy=False: y a list of floats, x a list of dicts {index: value} (every
    entry of the file, zeros included, indices from 1), as liblinearutil returns them;
    True: y a float64 array and x a scipy csr_matrix of the non-zeros, as wide as the
    largest index of a non-zero.  The file is read by linsvm's parser
    (linsvm.io.svmlight): compressed files, comments and qids are accepted, and a
    malformed line raises DataError naming the file and line; a path may also name a
    linsvm binary data file (linsvm.io.binfile, `linsvm convert`), which is mapped."""
    X, y = load_svmlight(_text_source(data_source))
    if return_scipy:
        if not X.data.flags.writeable:          # a binary file's values: views of its map
            X = X.copy()
        X.eliminate_zeros()
        n = int(X.indices.max()) + 1 if X.nnz else 0
        return y, _sparse().csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], n))
    indptr, cols, vals = X.indptr.tolist(), (X.indices + 1).tolist(), X.data.tolist()
    rows = [dict(zip(cols[a:b], vals[a:b])) for a, b in zip(indptr[:-1], indptr[1:])]
    return y.tolist(), rows


def evaluations(ty, pv, useScipy=True):
    """(ACC, MSE, SCC) of predictions pv against true values ty (lists, tuples or arrays
    of one length): the accuracy in percent, 100 |{i: pv_i = ty_i}| / l, the mean
    squared error and the squared correlation coefficient (linsvm.problem.metrics.
    regression_measures; nan when either side is constant).  useScipy is accepted
    for liblinearutil's signature; the numbers do not depend on it."""
    t = as_labels(ty)
    v = as_labels(pv)
    if t.shape != v.shape:
        raise DataError(f"len(ty) must be equal to len(pv): {t.shape[0]} and {v.shape[0]}")
    if t.size == 0:
        raise DataError("evaluations needs at least one value")
    mse, scc = regression_measures(t, v)
    return float(100.0 * np.mean(t == v)), float(mse), float(scc)
