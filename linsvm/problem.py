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


class Problem:
    """One solve's examples, as every solver receives them (linsvm.solvers: the contract).

    X: CSRBuffers; rows: int64 row numbers of X (any subset, any order); cost: per
    position the relative cost c_k >= 0; bias: LIBLINEAR's -B (<= 0: none); n_weights:
    n_features + (bias > 0).  Binary problems hold t (labels +-1 per position);
    multi-class and ordinal problems codes (int32 per position, in [0, n_classes)) and
    n_classes (classes, or rank levels); ordinal problems may hold qid (int64 query ids
    per position).  Build them with Problem.binary / .multiclass / .ordinal, which check
    everything a kernel indexes; the attributes are not to be changed afterwards.
    """

    __slots__ = ("X", "rows", "cost", "bias", "n_weights", "t", "codes", "n_classes", "qid")

    def __init__(self, X, rows, cost, bias, t=None, codes=None, n_classes=2, qid=None):
        self.X, self.rows, self.cost = X, rows, cost
        self.bias = float(bias)
        self.n_weights = n_weights(X.n_features, self.bias)
        self.t, self.codes, self.n_classes, self.qid = t, codes, int(n_classes), qid

    @property
    def n_rows(self):
        """Number of examples (positions)."""
        return int(self.rows.shape[0])

    @classmethod
    def binary(cls, X, rows, t, cost, bias, allow_empty=False):
        """A checked binary problem (labels t = +-1 per position)."""
        rows, cost = check_rows_and_costs(X, rows, cost, allow_empty=allow_empty)
        return cls(X, rows, cost, bias, t=check_binary_targets(t, rows.shape[0]))

    @classmethod
    def multiclass(cls, X, rows, codes, n_classes, cost, bias, allow_empty=False):
        """A checked multi-class problem (class index codes[k] in [0, n_classes))."""
        rows, cost = check_rows_and_costs(X, rows, cost, allow_empty=allow_empty)
        if int(n_classes) < 2:
            raise DataError("multi-class training needs at least two classes")
        return cls(X, rows, cost, bias, codes=check_codes(codes, rows.shape[0], n_classes),
                   n_classes=n_classes)

    @classmethod
    def ordinal(cls, X, rows, codes, n_levels, cost, bias, qid=None):
        """A checked ordinal problem (rank index codes[k] in [0, n_levels), optional qids)."""
        rows, cost = check_rows_and_costs(X, rows, cost)
        n = rows.shape[0]
        if qid is not None:
            qid = np.ascontiguousarray(qid, dtype=np.int64).reshape(-1)
            if qid.shape != (n,):
                raise DataError(f"{qid.size} qids for {n} examples")
        return cls(X, rows, cost, bias, codes=check_codes(codes, n, n_levels, "rank codes"),
                   n_classes=n_levels, qid=qid)

    def binary_column(self, t, cost):
        """The same examples with other labels and costs (a one-vs-rest column); t and
        cost must come from checked inputs (train() derives them from its own)."""
        return Problem(self.X, self.rows, cost, self.bias, t=t)

    def subset(self, pick):
        """The problem on positions `pick` (an index array into rows) only."""
        take = (lambda a: None if a is None else a[pick])
        return Problem(self.X, self.rows[pick], self.cost[pick], self.bias, t=take(self.t),
                       codes=take(self.codes), n_classes=self.n_classes, qid=take(self.qid))


def check_codes(codes, n, n_classes, what="class codes"):
    """Class or rank indices per position: n values in [0, n_classes); contiguous int32."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    if codes.shape != (n,):
        raise DataError(f"{codes.size} {what} for {n} examples")
    if n and (codes.min() < 0 or codes.max() >= n_classes):
        raise DataError(f"{what} must be in [0, {n_classes})")
    return codes
