# The e-step and the w-step of SVM-ALM (csrc/_alm.pyx, whose block comment has the
# equations of Nie et al. 2014): the closed forms and root of eq. 10-13, the gradient
# step of eq. 16-18 and its Jacobi preconditioner.  Shared by the solver and the test
# entries (csrc/_testing.pyx); the e-step here is inline; the w-step is compiled in
# _alm.pyx (out of line, as gcc lays out alm_core best) and exported through
# linsvm/_alm.pxd.

from libc.stdint cimport int64_t
from libc.string cimport memcpy
from libc.math cimport fabs, pow
from csr cimport CSR, dot
from csr_passes cimport matvec, rmatvec

cdef inline int loss_kind(double p) noexcept nogil:
    """The e-step's kind of p: 1 for p = 1, 2 for p = 2, 0 for any other p > 1."""
    return 1 if p == 1.0 else (2 if p == 2.0 else 0)


# ---------------------------------------------------------------- the e-step

cdef inline double lp_root(double s, double pg, double p, double u0) noexcept nogil:
    """The root u > 0 of h(u) = u + pg u^(p-1) - s (eq. 11 with u = y e, s = y t,
    pg = p gamma > 0, p > 1, s > 0): bracketed Newton from u0 (from the upper end
    of the bracket if u0 is outside it), bisection when Newton leaves the
    bracket; h is increasing, so the bracket [lo, hi] shrinks."""
    cdef double lo = 0.0, hi = s, u, un, pw, h, dh, cap
    cdef int it
    cap = pow(s / pg, 1.0 / (p - 1.0))     # pg u^(p-1) <= s
    if cap < hi:
        hi = cap
    if not (hi > 0.0):                     # underflow: the root is below the smallest double
        return 0.0
    u = u0 if (u0 > 0.0 and u0 < hi) else hi
    for it in range(200):
        pw = pg * pow(u, p - 1.0)
        h = u + pw - s
        if h > 0.0:
            hi = u
        elif h < 0.0:
            lo = u
        else:
            return u
        dh = 1.0 + (p - 1.0) * pw / u
        un = u - h / dh
        if not (un > lo and un < hi):
            un = 0.5 * (lo + hi)
        if fabs(un - u) <= 1e-13 * un or hi - lo <= 1e-15 * hi:
            return un
        u = un
    return u


cdef inline double e_update(double t, double y, double gam, double p, int kind,
                           double e0) noexcept nogil:
    """argmin_e gamma (y e)_+^p + 1/2 (e - t)^2 (eq. 10): kind 1 is p = 1 (eq. 12),
    kind 2 is p = 2 (eq. 13), kind 0 any p > 1 (eq. 11, Newton started from e0,
    the previous value).  y = +-1, gamma >= 0."""
    cdef double s = y * t
    if s <= 0.0 or gam <= 0.0:
        return t
    if kind == 1:
        if s > gam:
            return t - y * gam
        return 0.0
    if kind == 2:
        return t / (1.0 + 2.0 * gam)
    return y * lp_root(s, p * gam, p, y * e0)
