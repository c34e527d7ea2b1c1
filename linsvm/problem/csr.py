"""The CSR buffers every solver core reads, checked once.

`CSRBuffers` holds a sparse matrix in the one layout the Cython cores take:
int64 row pointers, int32 column indices, float64 values, all C-contiguous.
The cores run without bounds checks, so a CSRBuffers exists only once these
hold: row pointers run from 0 to nnz without decreasing, every column index
lies in [0, n_features), every value is finite.  There are two ways in:

* ``CSRBuffers(X)`` converts any scipy sparse matrix or 2-D array and checks
  all of it (one pass of `linsvm._kernels.check_csr`);
* ``CSRBuffers.trusted(...)`` adopts arrays whose producer guarantees those
  properties -- the SVM-light parser, through
  `linsvm.io.svmlight.load_svmlight_buffers` -- without a copy or a second pass.

`to_scipy` is the one way back to a scipy matrix (sharing the buffers), and
`take_rows` the rows of any matrix linsvm accepts.
"""
from __future__ import annotations

import numpy as np

from .._data import DataView
from .._kernels import check_csr, row_sq_norms as _row_sq_norms
from ..errors import DataError

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
    Past 2**31 non-zeros scipy keeps int64 column indices: the pass that checks
    them writes their int32 copy, so the conversion costs that copy (4 bytes per
    non-zero) and no temporary; float64 values and int64 row pointers are shared,
    never copied.  (`linsvm.io.svmlight.load_svmlight_buffers` builds CSRBuffers
    without any scipy matrix.)  See `trusted` for buffers that need no conversion
    or check.
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

        linsvm.io.svmlight.load_svmlight_buffers is the caller: the SVM-light parser
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
        import scipy.sparse as sp       # slow to import: only when converting

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
        data = np.ascontiguousarray(X.data, dtype=np.float64)
        indices = X.indices
        if indptr.shape[0] != n_rows + 1 or indptr[0] != 0 or indptr[-1] != data.shape[0]:
            raise DataError(f"{what}: inconsistent CSR row pointers")
        if indices.ndim != 1 or indices.shape[0] != data.shape[0]:
            raise DataError(f"{what}: CSR indices and data differ in length")
        narrow = None
        if indices.dtype != np.int32:
            # int64 (scipy's past 2**31 non-zeros) or another integer type: the int32
            # copy is filled by the pass that checks it -- no wider temporary
            indices = np.ascontiguousarray(indices, dtype=np.int64)
            narrow = np.empty(indices.shape[0], dtype=np.int32)
        else:
            indices = np.ascontiguousarray(indices)
        code, where = check_csr(indptr, indices, data, n_features, narrow)
        if narrow is not None:
            indices = narrow
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


def to_scipy(X):
    """X (CSRBuffers) as a scipy.sparse.csr_matrix sharing its buffers (no copy);
    any other matrix is returned as it is."""
    if not isinstance(X, CSRBuffers):
        return X
    import scipy.sparse as sp

    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.n_rows, X.n_features))


def take_rows(X, rows):
    """Rows `rows` (an index array) of a scipy sparse matrix, a dense array or a
    CSRBuffers, as a matrix of the same family (CSRBuffers: a scipy CSR matrix)."""
    return to_scipy(X)[rows]


def row_sq_norms(X, rows=None):
    """||x_i||^2 for the rows i of X (CSRBuffers or a scipy CSR matrix; the bias feature
    is the caller's): every row in order, or rows[k] at k for an int64 array of row
    numbers.  One compiled pass over the rows' entries, summed in index order
    (linsvm._kernels.row_sq_norms over the data view); nothing is allocated but the
    output.  A square beyond the float range is inf, silently: what a solver makes of
    it is checked in its answer (linsvm.fit.finite)."""
    B = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    return _row_sq_norms(DataView(B, -1.0, rows))
