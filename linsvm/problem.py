"""The CSR buffers every solver core reads, and the checks on what it indexes.

`CSRBuffers` holds a sparse matrix in the one layout the Cython cores take:
int64 row pointers, int32 column indices, float64 values, all C-contiguous.
The cores run without bounds checks, so a CSRBuffers exists only once these
hold: row pointers run from 0 to nnz without decreasing, every column index
lies in [0, n_features), every value is finite.  There are two ways in:

* ``CSRBuffers(X)`` converts any scipy sparse matrix or 2-D array and checks
  all of it (one pass of `linsvm._kernels.check_csr`);
* ``CSRBuffers.trusted(...)`` adopts arrays whose producer guarantees those
  properties -- the SVM-light parser, through
  `linsvm.data.load_svmlight_buffers` -- without a copy or a second pass.

`Problem` is one solve's examples as every solver receives them (the fit
contract of linsvm.solvers): the buffers, the rows, per-position targets or
class codes, costs, bias and the weight count, checked when built.

Also here: the checks of the other arrays a core indexes unchecked (row
lists, cost factors, binary targets, class codes), of positive parameters,
and the thread count for the kernels.
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

    Attributes: indptr (int64, n_rows + 1, from 0 to nnz, never decreasing),
    indices (int32, each in [0, n_features)), data (float64, finite), all
    1-D and C-contiguous; n_rows, n_features (<= 2**31 - 1).  Rows are
    addressed by the solvers through index lists, so folds and subsets never
    copy data.  The arrays are checked once, when the object is made; they
    are not copied afterwards, so whoever changes them in place takes over
    the checking.

    ``CSRBuffers(X, what="X")`` takes a scipy sparse matrix (converted to CSR)
    or anything np.asarray makes a 2-D float array of, converts the buffers
    to the canonical dtypes (copying only those that differ) and checks every
    row pointer, index and value; DataError names `what` and the first fault.
    See `trusted` for buffers that need no conversion or check.
    """

    __slots__ = ("indptr", "indices", "data", "n_rows", "n_features")

    @classmethod
    def trusted(cls, indptr, indices, data, n_features, index_bound):
        """Adopt buffers from a producer that has checked their contents.

        The arrays become the attributes as they are: no copy, no conversion,
        no pass over them.  This relies on the caller's guarantee that

        * indptr never decreases (indptr[i] <= indptr[i + 1]);
        * every column index k satisfies 0 <= k < index_bound;
        * every value is finite.

        linsvm.data.load_svmlight_buffers is the caller: the SVM-light parser
        (linsvm._svmlight.Parser, see its `take`) establishes all three while it
        reads, rejecting the line otherwise, and hands over its largest 1-based
        feature index as index_bound.  What costs O(1) is checked here: the
        dtypes (int64, int32, float64), 1-D C-contiguous arrays, indptr[0] == 0
        and indptr[-1] == nnz, one length for indices and data, and
        index_bound <= n_features <= 2**31 - 1 (so every index lies in
        [0, n_features), whatever width the caller asks for).  A failure is a
        ValueError: it means the producer broke its side, not bad input.
        """
        for name, a, dtype in (("indptr", indptr, np.int64), ("indices", indices, np.int32),
                               ("data", data, np.float64)):
            if not isinstance(a, np.ndarray) or a.dtype != dtype or a.ndim != 1 \
                    or not a.flags.c_contiguous:
                raise ValueError(f"CSRBuffers.trusted: {name} must be a 1-D contiguous "
                                 f"{np.dtype(dtype)} array")
        n_features, index_bound = int(n_features), int(index_bound)
        if not 0 <= index_bound <= n_features <= _INT32_MAX:
            raise ValueError(f"CSRBuffers.trusted: need 0 <= index bound ({index_bound}) "
                             f"<= n_features ({n_features}) <= {_INT32_MAX}")
        nnz = data.shape[0]
        if indptr.shape[0] < 1 or indptr[0] != 0 or indptr[-1] != nnz \
                or indices.shape[0] != nnz:
            raise ValueError("CSRBuffers.trusted: inconsistent CSR row pointers or lengths")
        self = cls.__new__(cls)
        self.indptr, self.indices, self.data = indptr, indices, data
        self.n_rows, self.n_features = int(indptr.shape[0] - 1), n_features
        return self

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
        """Number of stored entries."""
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


def check_rows_and_costs(X, rows, cost):
    """The row list and per-position cost factors every solver core indexes unchecked:
    returns (rows as contiguous int64, cost as contiguous float64) after checking that
    rows is 1-D with every entry in [0, X.n_rows), cost has one finite value >= 0 per
    row, and there is at least one example."""
    rows = np.ascontiguousarray(rows, dtype=np.int64)
    cost = np.ascontiguousarray(cost, dtype=np.float64)
    n = rows.shape[0]
    if rows.ndim != 1 or cost.shape != (n,):
        raise DataError(f"rows and cost factors must be 1-D of one length ({n}, {cost.shape})")
    if n == 0:
        raise DataError("no training examples")
    if rows.min() < 0 or rows.max() >= X.n_rows:
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
    per position).  Problem.binary / .multiclass / .ordinal check everything a kernel
    indexes; train() calls the constructor itself, with inputs it has already checked
    (row numbers, cost factors) or built in range (labels, codes).  The attributes are
    not to be changed afterwards.
    """

    __slots__ = ("X", "rows", "cost", "bias", "n_weights", "t", "codes", "n_classes", "qid",
                 "comm")

    def __init__(self, X, rows, cost, bias, t=None, codes=None, n_classes=2, qid=None,
                 comm=None):
        self.X, self.rows, self.cost = X, rows, cost
        self.bias = float(bias)
        self.n_weights = n_weights(X.n_features, self.bias)
        self.t, self.codes, self.n_classes, self.qid = t, codes, int(n_classes), qid
        self.comm = comm

    @property
    def n_rows(self):
        """Number of examples (positions)."""
        return int(self.rows.shape[0])

    @classmethod
    def binary(cls, X, rows, t, cost, bias):
        """A checked binary problem (labels t = +-1 per position)."""
        rows, cost = check_rows_and_costs(X, rows, cost)
        return cls(X, rows, cost, bias, t=check_binary_targets(t, rows.shape[0]))

    @classmethod
    def multiclass(cls, X, rows, codes, n_classes, cost, bias):
        """A checked multi-class problem (class index codes[k] in [0, n_classes))."""
        rows, cost = check_rows_and_costs(X, rows, cost)
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
        return Problem(self.X, self.rows, cost, self.bias, t=t, comm=self.comm)

    def subset(self, pick):
        """The problem on positions `pick` (an index array into rows) only."""
        take = (lambda a: None if a is None else a[pick])
        return Problem(self.X, self.rows[pick], self.cost[pick], self.bias, t=take(self.t),
                       codes=take(self.codes), n_classes=self.n_classes, qid=take(self.qid),
                       comm=self.comm)


def check_codes(codes, n, n_classes, what="class codes"):
    """Class or rank indices per position: n values in [0, n_classes); contiguous int32."""
    codes = np.ascontiguousarray(codes, dtype=np.int32)
    if codes.shape != (n,):
        raise DataError(f"{codes.size} {what} for {n} examples")
    if n and (codes.min() < 0 or codes.max() >= n_classes):
        raise DataError(f"{what} must be in [0, {n_classes})")
    return codes
