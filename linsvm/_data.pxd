# The one data view of linsvm's compiled cores (defined in csrc/_data.pyx, which Cython
# compiles as linsvm._data and so finds this file; every core cimports it from here).
from libc.stdint cimport int64_t
from csr cimport CSR


cdef class DataView:
    cdef CSR X                  # the rows' CSR view: one thread, no scratch, values as stored
    cdef const int64_t* rows    # this solve's row numbers (NULL: the view has no row list)
    cdef readonly int64_t n     # positions: len(rows), or every row of the matrix
    cdef readonly double bias
    cdef readonly int64_t n_features, n_weights, n_rows
    cdef readonly object buffers    # the CSRBuffers (keeps the arrays alive)
    cdef readonly object rows_array # int64 row numbers, or None
    cdef int _pattern           # -1 not yet read, 0 general values, 1 a 0/1 pattern
    cdef object _row_scale      # float64 per row when every row holds one value, or None
    cdef object _offset_indptr  # offset_view's shifted row pointers (X reads them), or None

    cdef CSR csr(self, int n_threads, double* scratch) noexcept
    cdef CSR pattern_csr(self, int n_threads, double* scratch) except *
    cdef int64_t scratch_doubles(self) noexcept
    cdef object kernel_csr(self, int n_threads, bint pattern, CSR* X)
    cdef const int64_t* row_list(self) except? NULL


# The one stop generation of every core (csrc/interrupt.pxd): request_stop() bumps it.
cdef long stop_generation() noexcept nogil
