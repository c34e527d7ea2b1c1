# The loss record of the modified finite Newton family and its terms seen through the
# margins (csrc/_mfn.pyx's block comment has the equations): zones, values, slopes, the
# zone mismatch of one term.  Inline: cimported, not compiled on its own.

from libc.stdint cimport int32_t, int64_t
from libc.math cimport INFINITY


ctypedef struct Loss:
    double a                       # curvature of zone 1 (per unit cost)
    double tm                      # target margin of zone 1
    double hi                      # zone 0 for o >= hi (+inf: none)
    double lo                      # zone 2 for o <= lo (-inf: none)
    double kappa                   # slope of zone 2: a (tm - lo), 0 without zone 2
    double lin0                    # value of zone 2 at o = lo: a/2 (tm - lo)^2
    double knee_tol                # zone tolerance of the consistency test


ctypedef struct Terms:
    # The terms of f, seen through the per-example margins (see the block comment).
    int64_t m                      # examples
    int64_t nb                     # thresholds; 0 for binary terms
    int64_t per                    # terms per example: max(nb, 1)
    const double* t                # binary: label of each example
    const int32_t* code            # ordinal: rank code 0..nb of each example
    const double* c                # cost of each example
    double* y                      # y_k = x_k . w
    double* dy                     # x_k . d_w (line search, consistency test)
    const double* b                # ordinal: thresholds (inside beta)
    const double* db               # ordinal: their step


cdef inline Loss make_loss(double a, double tm, double hi, double lo) noexcept nogil:
    """The loss (a, tm, hi, lo), C^1 by construction: kappa = a (tm - lo) from the same
    rounded numbers, so the slope does not jump at lo (a jump down would make l non-convex
    and break the line search; the smoothed hinge uses tau = 2^-k, for which 1 +- tau,
    tm - lo = 2 tau, a = 1/(2 tau) and kappa = 1 are all exact).  The zone test of the
    consistency check tolerates 1e-8 (Appendix A, footnote 17), or a thousandth of
    zone 1's width if that is smaller."""
    cdef Loss L
    L.a = a
    L.tm = tm
    L.hi = hi
    L.lo = lo
    if lo > -INFINITY:
        L.kappa = a * (tm - lo)
        L.lin0 = 0.5 * a * (tm - lo) * (tm - lo)
    else:
        L.kappa = 0.0
        L.lin0 = 0.0
    L.knee_tol = min(1e-8, 1e-3 * (hi - lo))     # 1e-8: Appendix A, footnote 17
    return L


# ------------------------------------------------------------------ the loss

cdef inline int zone(const Loss* L, double o) noexcept nogil:
    """Zone of margin o: 0 (o >= hi), 2 (o <= lo) or 1 (between)."""
    if o >= L.hi:
        return 0
    if o <= L.lo:
        return 2
    return 1


cdef inline double loss_value(const Loss* L, double o) noexcept nogil:
    """l(o) per unit cost."""
    cdef int zn = zone(L, o)
    if zn == 0:
        return 0.0
    if zn == 1:
        return 0.5 * L.a * (L.tm - o) * (L.tm - o)
    return L.kappa * (L.lo - o) + L.lin0


cdef inline double loss_slope(const Loss* L, double o) noexcept nogil:
    """l'(o) per unit cost."""
    cdef int zn = zone(L, o)
    if zn == 0:
        return 0.0
    if zn == 1:
        return -L.a * (L.tm - o)
    return -L.kappa


cdef inline double mismatch_term(const Loss* L, int zn, double o) noexcept nogil:
    """|l'(o) - l'_zn(o)| for a term assumed in zone zn, now at margin o; 0 when o is
    in zone zn or within L.knee_tol of it.  (Written so that for the L2 loss it is
    the same arithmetic as the original test, o - 1 or 1 - o.)"""
    if zn == 1:
        if o > L.hi + L.knee_tol:
            return L.a * (o - L.tm)
        if o < L.lo - L.knee_tol:
            return L.a * (L.lo - o)
        return 0.0
    if zn == 0:
        if o < L.hi - L.knee_tol:
            if o > L.lo:
                return L.a * (L.tm - o)
            return L.kappa
        return 0.0
    if o > L.lo + L.knee_tol:
        if o < L.hi:
            return L.a * (o - L.lo)
        return L.kappa
    return 0.0


# ------------------------------------------------------------------ terms

cdef inline void term_at(const Terms* T, int64_t k, int64_t s, double* v, double* dv,
                         double* t) noexcept nogil:
    """Output v, its step dv and orientation t of term (k, s) (s = 0 for binary terms)."""
    if T.nb == 0:
        v[0] = T.y[k]
        dv[0] = T.dy[k]
        t[0] = T.t[k]
    else:
        v[0] = T.y[k] - T.b[s]
        dv[0] = T.dy[k] - T.db[s]
        t[0] = 1.0 if T.code[k] > s else -1.0


cdef inline void term_out(const Terms* T, int64_t k, int64_t s, double* v,
                          double* t) noexcept nogil:
    """Output v and orientation t of term (k, s) at beta (no step)."""
    if T.nb == 0:
        v[0] = T.y[k]
        t[0] = T.t[k]
    else:
        v[0] = T.y[k] - T.b[s]
        t[0] = 1.0 if T.code[k] > s else -1.0
