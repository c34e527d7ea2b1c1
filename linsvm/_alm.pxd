# Functions of the ALM core that the test module (csrc/_testing.pyx) cimports; defined in
# csrc/_alm.pyx, which Cython compiles as linsvm._alm and so finds this file (setup.py's
# include path has the repository root); the test module cimports from linsvm._alm.
from libc.stdint cimport int64_t
from csr cimport CSR
from comm cimport Comm

cdef void grad_G(const CSR* X, const int64_t* rows, int64_t n, const double* beta,
                 int64_t nreg, const double* r, double inv_mu, double* g) noexcept nogil
cdef double step_along(const CSR* X, const int64_t* rows, int64_t n, double* beta,
                       int64_t nreg, double* m, const double* g, double inv_mu,
                       const double* dinv, double* d, double* q,
                       const Comm* cm=*) noexcept nogil
cdef void set_precond(const double* colsq, int64_t nw, int64_t nreg, double inv_mu,
                      double* dinv) noexcept nogil
