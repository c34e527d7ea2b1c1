# Python entry points to the shared CSR kernels of csr.pxd: thread count
# discovery and thin wrappers used by tests to check the kernels (serial and
# parallel) against scipy.
from libc.stdint cimport int32_t, int64_t
from libc.stdlib cimport malloc, free
import numpy as np
from csr cimport CSR, make_csr, matvec, rmatvec, linsvm_max_threads


def max_threads():
    """Number of OpenMP threads the kernels use by default (1 without OpenMP)."""
    return linsvm_max_threads()


def csr_matvec(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
               int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] w,
               int n_threads=1):
    """Return X[rows] @ w (w includes the bias weight when bias > 0)."""
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, n_threads, NULL)
    out = np.empty(rows.shape[0], dtype=np.float64)
    cdef double[::1] o = out
    with nogil:
        matvec(&X, &rows[0] if rows.shape[0] else NULL, rows.shape[0], &w[0], &o[0] if rows.shape[0] else NULL)
    return out


def csr_rmatvec(const int64_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                int64_t n_features, double bias, const int64_t[::1] rows, const double[::1] u,
                int n_threads=1):
    """Return X[rows].T @ u (with the bias coordinate last when bias > 0)."""
    cdef int T = n_threads if n_threads > 0 else 1
    cdef int64_t nw = n_features + (1 if bias > 0 else 0)
    cdef double* scratch = <double*>malloc(T * nw * sizeof(double)) if T > 1 else NULL
    cdef CSR X = make_csr(indptr, indices, data, n_features, bias, T, scratch)
    out = np.empty(nw, dtype=np.float64)
    cdef double[::1] o = out
    try:
        with nogil:
            rmatvec(&X, &rows[0] if rows.shape[0] else NULL, rows.shape[0],
                    &u[0] if rows.shape[0] else NULL, &o[0])
    finally:
        free(scratch)
    return out
