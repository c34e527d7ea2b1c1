"""The CSR buffers every solver core reads, checked once.

`CSRBuffers` holds a sparse matrix in the layouts the Cython cores take: int64 row
pointers, int32 column indices and the values in one of three layouts (`layout`):

* ``"float64"``: `data` is a float64 array, the values as given (the default, lossless);
* ``"float32"``: `data` is a float32 array, 4 bytes a value instead of 8.  The cores
  widen each value to double as they read it, and do every sum in double precision, so
  a float32 matrix trains and predicts exactly as the float64 matrix holding the same
  rounded values (`with_layout` says what the rounding does);
* ``"pattern"``: `data` is None and every stored value is exactly 1.0 (0/1 data, term
  presence): nothing but the column indices is stored, and the cores read no values.
  A pattern gives the bits of its values stored as 1.0.

The cores run without bounds checks, so a CSRBuffers exists only once these hold: row
pointers run from 0 to nnz without decreasing, every column index lies in
[0, n_features), every value is finite.  There are two ways in:

* ``CSRBuffers(X)`` converts any scipy sparse matrix or 2-D array to float64 buffers
  and checks all of it (one pass of `linsvm._kernels.check_csr`);
* ``CSRBuffers.trusted(...)`` adopts arrays of any layout whose producer guarantees
  those properties -- the SVM-light parser, through
  `linsvm.io.svmlight.load_svmlight_buffers` -- without a copy or a second pass;
* ``CSRBuffers.checked(...)`` adopts arrays of any layout after one pass of checks,
  without a copy.

`with_layout` converts between the layouts; `to_scipy` is the one way back to a scipy
matrix (sharing the buffers; a pattern's ones are made then), and `take_rows` the rows
of any matrix linsvm accepts.  The arrays may be read-only (a memory map): nothing here
writes into them.
"""
from __future__ import annotations

import numpy as np

from .._data import DataView
from .._kernels import check_csr, row_sq_norms as _row_sq_norms
from ..errors import DataError

_INT32_MAX = np.iinfo(np.int32).max
LAYOUTS = ("float64", "float32", "pattern")


class CSRBuffers:
    """Canonical CSR buffers of an n_rows x n_features matrix, validated.

    Attributes: indptr (int64, n_rows + 1, from 0 to nnz, never decreasing),
    indices (int32, each in [0, n_features)), data (the values, finite: float64,
    float32, or None for a pattern whose every value is 1.0; see `layout`), the
    arrays 1-D and C-contiguous; n_rows, n_features (<= 2**31 - 1).  Rows are
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
    or check, and `with_layout` for the compact layouts.
    """

    __slots__ = ("indptr", "indices", "data", "n_rows", "n_features")

    @classmethod
    def trusted(cls, indptr, indices, data, n_features, index_bound):
        """Adopt buffers from a producer that has checked their contents.

        The arrays become the attributes as they are: no copy, no conversion,
        no pass over them.  This relies on the caller's guarantee that

        * indptr never decreases (indptr[i] <= indptr[i + 1]);
        * every column index k satisfies 0 <= k < index_bound;
        * every value is finite (a pattern, data None: every value is 1.0).

        linsvm.io.svmlight.load_svmlight_buffers is the caller: the SVM-light parser
        (linsvm._svmlight.Parser, see its `take`) establishes all three while it
        reads, rejecting the line otherwise, and hands over its largest 1-based
        feature index as index_bound.  What costs O(1) is checked here: the
        dtypes (int64, int32, and float64 or float32 values or None), 1-D
        C-contiguous arrays, indptr[0] == 0 and indptr[-1] == nnz, one length for
        indices and data, and index_bound <= n_features <= 2**31 - 1 (so every index
        lies in [0, n_features), whatever width the caller asks for).  A failure is
        a ValueError: it means the producer broke its side, not bad input.
        """
        arrays = [("indptr", indptr, (np.int64,)), ("indices", indices, (np.int32,))]
        if data is not None:
            arrays.append(("data", data, (np.float64, np.float32)))
        for name, a, dtypes in arrays:
            if not isinstance(a, np.ndarray) or a.dtype not in dtypes or a.ndim != 1 \
                    or not a.flags.c_contiguous:
                kinds = " or ".join(str(np.dtype(d)) for d in dtypes)
                raise ValueError(f"CSRBuffers.trusted: {name} must be a 1-D contiguous "
                                 f"{kinds} array" + (" (or None)" if name == "data" else ""))
        n_features, index_bound = int(n_features), int(index_bound)
        if not 0 <= index_bound <= n_features <= _INT32_MAX:
            raise ValueError(f"CSRBuffers.trusted: need 0 <= index bound ({index_bound}) "
                             f"<= n_features ({n_features}) <= {_INT32_MAX}")
        nnz = indices.shape[0]
        if indptr.shape[0] < 1 or indptr[0] != 0 or indptr[-1] != nnz \
                or (data is not None and data.shape[0] != nnz):
            raise ValueError("CSRBuffers.trusted: inconsistent CSR row pointers or lengths")
        self = cls.__new__(cls)
        self.indptr, self.indices, self.data = indptr, indices, data
        self.n_rows, self.n_features = int(indptr.shape[0] - 1), n_features
        return self

    @classmethod
    def checked(cls, indptr, indices, data, n_features, what="X"):
        """Adopt buffers of any layout (as `trusted` takes them) after one pass of
        check_csr over them: for a producer that cannot vouch for their contents (a
        file read in place).  DataError names `what` and the first fault: row pointers
        that decrease, a column index out of [0, n_features), or the row of a value
        that is not finite.  The arrays are not copied."""
        n_features = int(n_features)
        nnz = indices.shape[0] if isinstance(indices, np.ndarray) else -1
        if isinstance(indptr, np.ndarray) and indptr.ndim == 1 and indptr.shape[0] >= 1 \
                and (indptr[0] != 0 or indptr[-1] != nnz):
            raise DataError(f"{what}: CSR row pointers must run from 0 to the {nnz} entries")
        self = cls.trusted(indptr, indices, data, n_features, 0)
        _check(indptr, indices, data, n_features, what)
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
        _check(indptr, indices, data, n_features, what, narrow)
        if narrow is not None:
            indices = narrow
        self.indptr, self.indices, self.data = indptr, indices, data
        self.n_rows, self.n_features = int(n_rows), int(n_features)

    @property
    def layout(self):
        """"float64", "float32" or "pattern" (data None: every value 1.0)."""
        if self.data is None:
            return "pattern"
        return "float32" if self.data.dtype == np.float32 else "float64"

    @property
    def shape(self):
        """(n_rows, n_features), as a matrix has it."""
        return (self.n_rows, self.n_features)

    @property
    def nnz(self):
        """Number of stored entries."""
        return int(self.indices.shape[0])

    @property
    def nbytes(self):
        """Bytes of the three arrays (no values for a pattern)."""
        return int(self.indptr.nbytes + self.indices.nbytes
                   + (0 if self.data is None else self.data.nbytes))

    def args(self):
        """(indptr, indices, data, n_features) as the cores take them (data None for a
        pattern)."""
        return self.indptr, self.indices, self.data, self.n_features


def _check(indptr, indices, data, n_features, what, narrow=None):
    """check_csr's one pass (int64 indices: written to `narrow` as int32 in it), its
    failure as a DataError naming `what` and the row."""
    code, where = check_csr(indptr, indices, data, n_features, narrow)
    if code == 1:
        raise DataError(f"{what}: CSR row pointers decrease")
    if code == 2:
        raise DataError(f"{what}: column index out of range [0, {n_features})")
    if code == 3:
        row = int(np.searchsorted(indptr, where, side="right") - 1)
        raise DataError(f"{what}: non-finite value in row {row + 1}")


def with_layout(X, layout, what="X"):
    """X (CSRBuffers) with its values in `layout`; X itself when they already are.

    The row pointers and indices are shared, never copied; only the values change.

    * ``"float32"``: each value rounded to the nearest float32: v becomes v(1 + e)
      with |e| <= 2**-24 (about 6e-8), or, below float32's normal range
      (|v| < 1.2e-38), moves by at most 2**-150 (zero included); DataError names the
      first row with a value beyond float32's range (|v| > 3.4e38).  The solvers
      then solve the problem of the rounded data exactly as they solve it in
      float64 (the same model as the float64 matrix of the rounded values, bit for
      bit).  Against the original data: for a given w each margin w.x_i moves by
      at most 2**-24 sum_j |w_j x_ij| <= 2**-24 ||w|| ||x_i||, so the loss term
      C sum_i l(w.x_i) moves by at most C sum_i |l'| 2**-24 ||w|| ||x_i|| (l' the
      loss's slope there; a hinge's is at most 1).  Where ||w|| ||x_i|| is of the
      order of the margins that is a relative change of about 1e-7 of the loss
      term, far below any solver's default tolerance.
    * ``"pattern"``: no values stored; DataError naming the first row with a value
      that is not exactly 1.0.
    * ``"float64"``: float64 values (a pattern's ones made, a float32's widened: exact).
    """
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    if X.layout == layout:
        return X
    data = X.data
    if layout == "pattern":
        bad = np.flatnonzero(data != 1.0)
        if bad.size:
            raise DataError(f"{what}: a pattern holds only values 1.0, row "
                            f"{_row_of(X, int(bad[0])) + 1} has {float(data[bad[0]]):g}")
        data = None
    elif layout == "float32":
        if data is None:
            data = np.ones(X.nnz, dtype=np.float32)
        else:
            with np.errstate(over="ignore"):
                data = data.astype(np.float32)
            big = np.flatnonzero(~np.isfinite(data))
            if big.size:
                raise DataError(f"{what}: row {_row_of(X, int(big[0])) + 1} has the value "
                                f"{float(X.data[big[0]]):g}, beyond float32's range")
    else:
        data = np.ones(X.nnz) if data is None else data.astype(np.float64)
    return CSRBuffers.trusted(X.indptr, X.indices, data, X.n_features, X.n_features)


def _row_of(X, p):
    """The row (0-based) that holds stored entry p."""
    return int(np.searchsorted(X.indptr, p, side="right") - 1)


def entry_values(X, lo, hi):
    """The values of X's stored entries lo:hi as float64 (ones for a pattern): for a
    message about one row, not for a pass over the data."""
    if X.data is None:
        return np.ones(hi - lo)
    return np.asarray(X.data[lo:hi], dtype=np.float64)


def max_abs_value(X):
    """The largest |x_ij| of X's stored values (CSRBuffers: 1.0 for a pattern with
    entries), 0 without any, without a temporary the size of the data."""
    if X.nnz == 0:
        return 0.0
    if X.data is None:
        return 1.0
    return float(max(X.data.max(), -X.data.min()))


def to_scipy(X):
    """X (CSRBuffers) as a scipy.sparse.csr_matrix sharing its buffers (no copy): float64
    or float32 values as stored; a pattern has no values to share, so its ones are made
    here (8 bytes per non-zero: prefer the paths that take the CSRBuffers itself, which
    read none).  Any other matrix is returned as it is."""
    if not isinstance(X, CSRBuffers):
        return X
    import scipy.sparse as sp

    data = np.ones(X.nnz) if X.data is None else X.data
    return sp.csr_matrix((data, X.indices, X.indptr), shape=(X.n_rows, X.n_features))


def take_rows(X, rows):
    """Rows `rows` (an index array, or a boolean mask) of a scipy sparse matrix, a dense
    array or a CSRBuffers, as a matrix of the same family: a CSRBuffers gives a
    CSRBuffers of the same layout holding a copy of those rows' entries (no ones made
    for a pattern), which linsvm's predictions take as they take any."""
    if not isinstance(X, CSRBuffers):
        return X[rows]
    rows = np.asarray(rows)
    rows = np.flatnonzero(rows) if rows.dtype == np.bool_ else rows.astype(np.int64).reshape(-1)
    if rows.size and (rows.min() < 0 or rows.max() >= X.n_rows):
        raise IndexError(f"row numbers must lie in [0, {X.n_rows})")
    start = X.indptr[rows]
    counts = X.indptr[rows + 1] - start
    indptr = np.zeros(rows.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=indptr[1:])
    # each picked entry's position: its row's start plus its place in the row
    at = np.repeat(start - indptr[:-1], counts) + np.arange(indptr[-1], dtype=np.int64)
    data = None if X.data is None else X.data[at]
    return CSRBuffers.trusted(indptr, X.indices[at], data, X.n_features, X.n_features)


def row_sq_norms(X, rows=None):
    """||x_i||^2 for the rows i of X (CSRBuffers or a scipy CSR matrix; the bias feature
    is the caller's): every row in order, or rows[k] at k for an int64 array of row
    numbers.  One compiled pass over the rows' entries, summed in index order
    (linsvm._kernels.row_sq_norms over the data view); nothing is allocated but the
    output.  A square beyond the float range is inf, silently: what a solver makes of
    it is checked in its answer (linsvm.fit.finite)."""
    B = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    return _row_sq_norms(DataView(B, -1.0, rows))
