"""One solve's examples, as every solver receives them (the fit contract).

`Problem` holds the CSR buffers (`linsvm.problem.csr.CSRBuffers`), the rows of
this solve, per position the targets or class codes and the relative costs,
the bias and the weight count, checked when built (`linsvm.problem.checks`).
docs/design.md states the contract every solver keeps.
"""
from __future__ import annotations

import numpy as np

from .._data import DataView
from ..errors import DataError
from .checks import check_binary_targets, check_codes, check_rows_and_costs, n_weights


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
                 "comm", "_view")

    def __init__(self, X, rows, cost, bias, t=None, codes=None, n_classes=2, qid=None,
                 comm=None):
        self.X, self.rows, self.cost = X, rows, cost
        self.bias = float(bias)
        self.n_weights = n_weights(X.n_features, self.bias)
        self.t, self.codes, self.n_classes, self.qid = t, codes, int(n_classes), qid
        self.comm = comm
        self._view = None

    @property
    def view(self):
        """The compiled cores' view of these examples (`linsvm._data.DataView` over X,
        bias and rows), built on first use; problems over the same X, rows and bias
        (binary_column) share it, and so its one scan of the values for a pattern."""
        if self._view is None:
            self._view = DataView(self.X, self.bias, self.rows)
        return self._view

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
        column = Problem(self.X, self.rows, cost, self.bias, t=t, comm=self.comm)
        column._view = self._view
        return column

    def subset(self, pick):
        """The problem on positions `pick` (an index array into rows) only."""
        take = (lambda a: None if a is None else a[pick])
        return Problem(self.X, self.rows[pick], self.cost[pick], self.bias, t=take(self.t),
                       codes=take(self.codes), n_classes=self.n_classes, qid=take(self.qid),
                       comm=self.comm)
