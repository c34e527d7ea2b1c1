# Functions of the SDM core that the test module (csrc/_testing.pyx) cimports; defined in
# csrc/_sdm.pyx, which Cython compiles as linsvm._sdm and so finds this file (setup.py's
# include path has the repository root); the test module cimports from linsvm._sdm.
from libc.stdint cimport int64_t

cdef int cs_subproblem(int64_t n, double A, const double* g, const double* b, double* d,
                       char* inW, int max_it) noexcept nogil
cdef int ww_subproblem(int64_t n, double A, const double* g, const double* lo,
                       const double* hi, double* d, char* flag, int max_it) noexcept nogil
