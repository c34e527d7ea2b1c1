# What a Python entry of the finite Newton cores (csrc/_mfn.pyx, csrc/_svr.pyx) takes
# from its data view (linsvm/_data.pxd) before a kernel reads the rows: the CSR struct
# with the entry's threads and scatter scratch, and the row list.  Inline: cimported,
# not compiled on its own.  (The module must have called cnp.import_array().)

from libc.stdint cimport int64_t
cimport numpy as cnp
from csr cimport CSR, entry_threads
from linsvm._data cimport DataView


cdef inline object view_csr(DataView data, int n_threads, int pattern, CSR* X):
    """Set X over the view's rows with n_threads threads (0: all) and the scatter scratch
    every subset of them needs; pattern: let the kernels read only the column indices
    where the values allow it (DataView.pattern_csr).  Returns the scratch array, which
    the caller keeps while it uses X."""
    cdef int T = entry_threads(n_threads)
    cdef cnp.npy_intp dim = max(data.scratch_doubles(), 1)
    scratch = cnp.PyArray_EMPTY(1, &dim, cnp.NPY_FLOAT64, 0)
    if pattern:
        X[0] = data.pattern_csr(T, <double*>cnp.PyArray_DATA(scratch))
    else:
        X[0] = data.csr(T, <double*>cnp.PyArray_DATA(scratch))
    return scratch


cdef inline const int64_t* view_rows(DataView data) except? NULL:
    """The view's row numbers (data.n of them), NULL when it has none (an empty block of
    a distributed solve); ValueError for a view built without a row list."""
    if data.n == 0:
        return NULL
    return data.row_list()
