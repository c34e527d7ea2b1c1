# The pieces of the modified finite Newton family (csrc/_mfn.pyx, whose block
# comment has the equations) that the driver and the test entries (csrc/_testing.pyx)
# both use: the loss records and their zones, the terms seen through the margins
# (csrc/mfn_terms.pxd), the exact line search (csrc/line_search.pxd), the dual KKT
# measure of Section 4.7, and the checks of the Python entries.  Everything
# here is inline: this file is cimported, not compiled on its own.

from libc.stdint cimport int32_t, int64_t
from libc.math cimport fabs, isfinite, INFINITY
from csr cimport CSR
from csr_passes cimport matvec, rmatvec
from comm cimport Comm, comm_sum, comm_max
from mfn_terms cimport (Loss, Terms, make_loss, zone, loss_value, loss_slope, mismatch_term,
                        term_at, term_out)
from line_search cimport KNEE_HI, KNEE_LO, Breakpoint, exact_line_search


# ------------------------------------------------------------------ checks and the dual KKT measure

cdef inline Loss _loss_from(object loss) except *:
    """Check and convert loss = (a, tm, hi, lo)."""
    cdef double a, tm, hi, lo
    a, tm, hi, lo = loss
    if not (a > 0 and isfinite(a) and isfinite(tm) and hi <= INFINITY and lo < hi
            and (hi == INFINITY or hi == tm) and lo < tm and lo != INFINITY):
        raise ValueError(f"invalid loss (a, tm, hi, lo) = {tuple(loss)}")
    return make_loss(a, tm, hi, lo)


cdef inline int check_codes(const int32_t* codes, int64_t m, int64_t nb) except -1:
    """Raise ValueError unless every rank code lies in [0, nb] (the ordinal kernels
    index thresholds by code without bounds checks)."""
    cdef int64_t k
    for k in range(m):
        if codes[k] < 0 or codes[k] > nb:
            raise ValueError(f"rank codes must lie in [0, {nb}]")
    return 0


cdef inline double dual_kkt(const CSR* X, const int64_t* rows, int64_t m, const double* t,
                            const double* c, double lam, const double* y, double* at,
                            double* yhat, double* bh, const Comm* comm=NULL) noexcept nogil:
    """The maximum dual KKT violation of Section 4.7 (csrc/_testing.pyx's mfn_dual_kkt
    states it); at, yhat (m)
    and bh (n_weights) are scratch.  comm: this rank's rows; sum_k alpha_k t_k x_k is
    reduced, and so is the violation (its maximum over the ranks)."""
    cdef int64_t k
    cdef double viol = 0.0, g, alpha
    for k in range(m):
        at[k] = 0.0
        if t[k] * y[k] < 1.0 and c[k] > 0.0:
            at[k] = -c[k] * (y[k] - t[k]) / lam          # alpha_k t_k
    rmatvec(X, rows, m, at, bh)
    comm_sum(comm, bh, X.n_weights)
    matvec(X, rows, m, bh, yhat)
    for k in range(m):
        if c[k] <= 0.0:
            continue
        alpha = at[k] * t[k]
        if alpha > 0.0:
            g = t[k] * yhat[k] + lam * alpha / c[k] - 1.0
            viol = max(viol, fabs(g))
        else:
            g = t[k] * yhat[k] - 1.0
            viol = max(viol, -g)
    comm_max(comm, &viol, 1)
    return viol
