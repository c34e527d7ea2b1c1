"""The validated training problem that every solver receives.

A `Problem` holds a CSR matrix in the canonical buffers the Cython cores take
(int64 row pointers, int32 column indices, float64 values), the bias value
(LIBLINEAR's -B: a constant feature appended as the last column, never
materialised; <= 0 means none), and the per-example cost factors.  Everything a
kernel will index is checked here, once, before any compiled code runs: the
cores run without bounds checks.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from ._kernels import check_csr, max_threads
from .errors import DataError, ParameterError

_INT32_MAX = np.iinfo(np.int32).max


class CSRBuffers:
    """Canonical CSR buffers of an n_rows x n_features matrix, validated.

    Attributes: indptr (int64), indices (int32), data (float64, finite),
    n_rows, n_features.  Rows are addressed by the solvers through index lists,
    so folds and subsets never copy data.
    """

    __slots__ = ("indptr", "indices", "data", "n_rows", "n_features")

    def __init__(self, X, what="X"):
        if not sp.issparse(X):
            X = np.asarray(X, dtype=np.float64)
            if X.ndim != 2:
                raise DataError(f"{what} must be a 2-D array or a sparse matrix, got {X.ndim}-D")
            X = sp.csr_matrix(X)
        elif X.format != "csr":
            X = X.tocsr()
        n_rows, n_features = X.shape
        if n_features > _INT32_MAX:
            raise DataError(f"{what} has {n_features} columns, more than int32 indices allow")
        indptr = np.ascontiguousarray(X.indptr, dtype=np.int64)
        indices = np.ascontiguousarray(X.indices, dtype=np.int32)
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        if indptr.shape[0] != n_rows + 1 or indptr[0] != 0 or indptr[-1] != data.shape[0]:
            raise DataError(f"{what}: inconsistent CSR row pointers")
        if indices.shape[0] != data.shape[0]:
            raise DataError(f"{what}: CSR indices and data differ in length")
        code, where = check_csr(indptr, indices, data, n_features)
        if code == 1:
            raise DataError(f"{what}: CSR row pointers decrease")
        if code == 2:
            raise DataError(f"{what}: column index out of range [0, {n_features})")
        if code == 3:
            row = int(np.searchsorted(indptr, where, side="right") - 1)
            raise DataError(f"{what}: non-finite value in row {row + 1}")
        self.indptr, self.indices, self.data = indptr, indices, data
        self.n_rows, self.n_features = int(n_rows), int(n_features)

    @property
    def nnz(self):
        return int(self.data.shape[0])

    def args(self):
        """(indptr, indices, data, n_features) as the cores take them."""
        return self.indptr, self.indices, self.data, self.n_features


def check_positive(name, value, allow_zero=False):
    """Return float(value) if it is finite and > 0 (>= 0 with allow_zero), else raise."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(v) or v < 0 or (v == 0 and not allow_zero):
        raise ParameterError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, got {value!r}")
    return v


def n_weights(n_features, bias):
    """Length of a weight vector: the features plus one for the bias feature."""
    return n_features + (1 if bias > 0 else 0)


# Below this many non-zeros a parallel region does too little work to pay for
# its barrier when the machine is busy: on a loaded 2-core machine, 2 threads
# made a 190k-nnz MFN solve 55x slower (0.95 s vs 0.017 s) and a 2.07M-nnz one
# 5.8x slower (2.05 s vs 0.35 s), because every region waited 10-20 ms for a
# descheduled thread.  Only very large problems go parallel by themselves;
# --n-threads asks for threads at any size.
AUTO_THREADS_MIN_NNZ = 50_000_000


def resolve_threads(n_threads, nnz):
    """Threads for the kernels: n_threads if > 0, else all OpenMP threads for
    problems with at least AUTO_THREADS_MIN_NNZ (50M) non-zeros and 1 below that."""
    if n_threads and n_threads > 0:
        return int(n_threads)
    return max_threads() if nnz >= AUTO_THREADS_MIN_NNZ else 1


def check_rows_and_costs(X, rows, cost, allow_empty=False):
    """The row list and per-position cost factors every solver core indexes unchecked:
    returns (rows as contiguous int64, cost as contiguous float64) after checking that
    rows is 1-D with every entry in [0, X.n_rows), cost has one finite value >= 0 per
    row, and (unless allow_empty) there is at least one example."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    n = rows.shape[0]
    if rows.ndim != 1 or cost.shape != (n,):
        raise DataError(f"rows and cost factors must be 1-D of one length ({n}, {cost.shape})")
    if n == 0 and not allow_empty:
        raise DataError("no training examples")
    if n and (rows.min() < 0 or rows.max() >= X.n_rows):
        raise DataError(f"row numbers must be in [0, {X.n_rows})")
    if not np.all(np.isfinite(cost)) or np.any(cost < 0):
        raise DataError("cost factors must be finite and >= 0")
    return rows, cost


def check_binary_targets(t, n):
    """Labels t per position: n values, each +1 or -1; returns contiguous float64."""
    t = np.ascontiguousarray(t, dtype=np.float64)
    if t.shape != (n,):
        raise DataError(f"{t.size} labels for {n} examples")
    if not np.all(np.abs(t) == 1.0):
        raise DataError("binary labels must be +1 or -1")
    return t
