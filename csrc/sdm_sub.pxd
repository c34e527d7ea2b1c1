# The sub-problems of the sequential dual method (csrc/_sdm.pyx, whose block comment
# has the algorithm): Crammer-Singer's (10) and Weston-Watkins' (21) for one example,
# solved by a primal active-set method (csrc/sdm_subproblems.pxi).  What the solver and
# the test entries (csrc/_testing.pyx) share; the two solvers are compiled in _sdm.pyx
# and exported through linsvm/_sdm.pxd.

from libc.stdint cimport int64_t
from libc.math cimport fabs

cdef enum:
    FREE = 0
    AT_LO = 1
    AT_HI = 2


cdef inline int sub_iter_cap(int64_t k) noexcept nogil:
    """The iteration cap of a sub-problem over k variables."""
    return <int>(10 * k + 50)
