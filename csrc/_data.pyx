"""The one data view every compiled core reads its examples through (linsvm._data).

A `DataView` is built once in Python, from a `linsvm.problem.csr.CSRBuffers`, the bias
(LIBLINEAR's -B) and optionally the row numbers of one solve, and then passed to a core
as one argument.  It holds csrc/csr.pxd's `CSR` struct over the buffers; the cores take
that struct (`csr`, `pattern_csr`) with their own thread count and scatter scratch, and
read rows only through csr.pxd's inline accessors (dot_row, axpy_row, the row entries;
csr_passes.pxd's mat-vecs and the fused normal mat-vec over them), so a new layout of the
values is a change to csr.pxd and to this file, not to every core (docs/design.md, "The
data view").

The values may be in any of CSRBuffers' layouts: float64, float32 (the struct's data32),
or none (a pattern: the struct is unit from the start, with no scan).  The row numbers
are checked here, once: every entry in [0, n_rows).  The buffers are trusted as
CSRBuffers guarantees them (row pointers from 0 to nnz, never decreasing; column
indices in [0, n_features); finite values).
"""
import numpy as np

from libc.stdint cimport int32_t, int64_t
from csr cimport CSR, make_csr, check_rows, read_pattern
from csr_passes cimport scratch_doubles


cdef extern from *:
    """
    /* the stop generation of every compiled core: bumped by request_stop() */
    static volatile long linsvm_stop_generation = 0;
    """
    long linsvm_stop_generation


cdef long stop_generation() noexcept nogil:
    """The stop generation now: a solve that began at another one stops at its next check
    (csrc/interrupt.pxd)."""
    return linsvm_stop_generation


def request_stop():
    """Make every compiled solve running now, in any thread, stop and raise
    KeyboardInterrupt at its next check (csrc/interrupt.pxd;
    linsvm.runtime.interrupt.stop_running_solves)."""
    global linsvm_stop_generation
    linsvm_stop_generation += 1


cdef class DataView:
    """DataView(buffers, bias=-1.0, rows=None): the examples of one solve.

    buffers: a CSRBuffers (int64 indptr, int32 indices, data float64, float32 or None for
    a pattern, n_features);
    bias: the constant feature's value (<= 0: none), appended as weight n_features;
    rows: int64 row numbers of the solve (any subset, any order; each in [0, n_rows)),
    or None for a view of every row in order (what prediction reads).  The view keeps
    the arrays alive and never copies them; it is not to be changed afterwards.
    """

    def __cinit__(self, buffers, double bias=-1.0, rows=None):
        cdef const int64_t[::1] indptr = buffers.indptr
        cdef const int32_t[::1] indices = buffers.indices
        cdef const double[::1] data
        cdef const float[::1] data32
        cdef const double* d64 = NULL
        cdef const float* d32 = NULL
        cdef const int64_t[::1] rv
        cdef int64_t n_rows = indptr.shape[0] - 1
        self.buffers = buffers
        self.bias = bias
        self.n_features = buffers.n_features
        self.n_rows = n_rows
        values = buffers.data
        if values is not None and values.shape[0] > 0:
            if values.dtype == np.float32:
                data32 = values
                d32 = &data32[0]
            else:
                data = values
                d64 = &data[0]
        self.X = make_csr(indptr, indices, d64, d32, self.n_features, bias)
        self.n_weights = self.X.n_weights
        self._pattern = -1
        self._row_scale = None
        self._offset_indptr = None
        self.rows = NULL
        self.rows_array = None
        self.n = n_rows
        if rows is not None:
            rows = np.ascontiguousarray(rows, dtype=np.int64)
            if rows.ndim != 1:
                raise ValueError("row numbers must be a 1-D array")
            rv = rows
            check_rows(rv, n_rows)
            self.rows_array = rows
            self.n = rv.shape[0]
            self.rows = &rv[0] if rv.shape[0] > 0 else NULL

    cdef CSR csr(self, int n_threads, double* scratch) noexcept:
        """The CSR struct for a core's kernels: n_threads threads (<= 0: one), scratch
        NULL (every scatter in one block) or scratch_doubles() doubles the caller owns.
        Values are read as stored."""
        cdef CSR X = self.X
        X.n_threads = n_threads if n_threads > 0 else 1
        X.scratch = scratch
        X.max_blocks = 1
        if scratch != NULL and X.n_weights > 0:
            X.max_blocks = 1 + <int>(self.scratch_doubles() // X.n_weights)
        return X

    cdef CSR pattern_csr(self, int n_threads, double* scratch) except *:
        """As csr, and the kernels read only the column indices where the values allow
        it (csr.pxd's read_pattern: a 0/1 pattern, or one value per row); the values are
        scanned once per view, on the first call (a pattern has none: it is unit from
        the start, and csr gives it so too)."""
        cdef CSR X = self.csr(n_threads, scratch)
        cdef double[::1] scale
        if self._pattern < 0:
            if self.n_rows > 0:
                self._row_scale = np.empty(self.n_rows, dtype=np.float64)
                scale = self._row_scale
                read_pattern(&X, &scale[0])
            if X.row_scale == NULL:
                self._row_scale = None
            self._pattern = X.unit
        X.unit = self._pattern
        if self._row_scale is not None:
            scale = self._row_scale
            X.row_scale = &scale[0]
        return X

    cdef int64_t scratch_doubles(self) noexcept:
        """Doubles of scratch a scatter over any of the rows needs (csr_passes.pxd's
        scratch_doubles: independent of the thread count)."""
        cdef const int64_t[::1] indptr = self.buffers.indptr
        return scratch_doubles(indptr, self.n_features, self.bias)

    cdef object kernel_csr(self, int n_threads, bint pattern, CSR* X):
        """Set X for a core's kernels with n_threads threads (<= 0: one) and the scatter
        scratch any subset of the rows needs (pattern: as pattern_csr, else as csr).
        Returns the scratch array, which the caller keeps while it uses X."""
        scratch = np.empty(max(self.scratch_doubles(), 1), dtype=np.float64)
        cdef double[::1] sv = scratch
        X[0] = self.pattern_csr(n_threads, &sv[0]) if pattern else self.csr(n_threads, &sv[0])
        return scratch

    cdef const int64_t* row_list(self) except? NULL:
        """The row numbers, for a core that addresses rows: NULL when there are none (an
        empty block of a distributed solve); ValueError for a view built without them."""
        if self.rows_array is None:
            raise ValueError("this core needs a data view with row numbers")
        return self.rows

    @property
    def nnz(self):
        """Stored non-zeros of the whole matrix."""
        return int(self.X.indptr[self.n_rows] - self.X.indptr[0])

    def __repr__(self):
        return (f"DataView({self.n} of {self.n_rows} rows, {self.n_features} features, "
                f"bias {self.bias:g})")


def offset_view(buffers, double bias=-1.0, rows=None, int64_t offset=(1 << 31) + 12345):
    """DataView(buffers, bias, rows) whose every entry position lies `offset` further on:
    the row pointers read indptr + offset, the index and value pointers point `offset`
    entries before the arrays, so that position p + offset reads entry p.  The cores then
    see a matrix whose entry offsets pass 2**31 (with the default) while it holds only
    the small arrays; their answers must be those of the plain view bit for bit.  For
    the tests of 64-bit offsets (tests/test_wide_offsets.py): no production code calls
    it.  The view keeps its shifted row pointers alive."""
    if offset < 0:
        raise ValueError("offset_view: the offset must be >= 0")
    cdef DataView view = DataView(buffers, bias, rows)
    shifted = np.asarray(buffers.indptr, dtype=np.int64) + offset
    cdef const int64_t[::1] ip = shifted
    view._offset_indptr = shifted
    view.X.indptr = &ip[0]
    if view.X.indices != NULL:
        view.X.indices = view.X.indices - offset
    if view.X.data != NULL:
        view.X.data = view.X.data - offset
    if view.X.data32 != NULL:
        view.X.data32 = view.X.data32 - offset
    return view
