# The duality-gap certificate of csrc/_l1.pyx's solvers (its block comment has the
# Fenchel dual of both problems): the primal value at w and the dual value of the
# scaled point s alpha built from the margins the solve kept.  Everything here is
# inline: this file is cimported, not compiled on its own.

from libc.stdint cimport int64_t
from libc.math cimport fabs, exp, log, log1p
from l1_shared cimport reg_abs, logistic_loss
from l1_columns cimport CSC


cdef inline void certificate(const CSC* A, const double* a, const double* w, const double* z,
                             const double* ez, double* alpha, int loss, double gknown,
                             int64_t free, double* primal, double* dual,
                             double* gmax) noexcept nogil:
    """Primal f(w) and dual value of the scaled point s alpha (csrc/_l1.pyx), from the
    margins z the solve kept up to date (and, for the logistic loss, ez = exp(z), or NULL);
    gmax = ||grad L(w)||_inf over the regularized columns, computed by one pass over the
    columns unless gknown >= 0 is it already (never with a free bias, whose balancing
    changes alpha).  loss 2: squared hinge, 3: logistic.  free: the free bias column or -1.
    alpha (n values) is work space."""
    cdef int64_t n = A.n_rows, j, k, p
    cdef double P = 0.0, Asum = 0.0, B = 0.0, s, gm = 0.0, gj, xi, ezk, pk, q, D = 0.0
    cdef double side[2]
    for j in range(A.n_cols):
        P += reg_abs(w[j], j == free)
    for k in range(n):
        if a[k] <= 0.0:
            alpha[k] = 0.0
            continue
        if loss == 2:
            xi = 1.0 - z[k]
            if xi > 0.0:
                P += a[k] * xi * xi
                alpha[k] = 2.0 * a[k] * xi
            else:
                alpha[k] = 0.0
        else:
            ezk = ez[k] if ez != NULL else exp(z[k])
            P += a[k] * logistic_loss(z[k], ezk)
            alpha[k] = a[k] / (1.0 + ezk)
    if free >= 0:
        # the equality constraint: scale the side with the larger sum down to the other's
        # (the free column is dense: one entry per row, val = t_k bias)
        side[0] = 0.0
        side[1] = 0.0
        for p in range(A.colptr[free], A.colptr[free + 1]):
            side[1 if A.val[p] > 0.0 else 0] += alpha[A.row[p]]
        for p in range(A.colptr[free], A.colptr[free + 1]):
            k = A.row[p]
            if A.val[p] > 0.0 and side[1] > side[0]:
                alpha[k] *= side[0] / side[1]
            elif A.val[p] < 0.0 and side[0] > side[1]:
                alpha[k] *= side[1] / side[0]
        gknown = -1.0
    for k in range(n):
        if loss == 2 and a[k] > 0.0:
            Asum += alpha[k]
            B += alpha[k] * alpha[k] / (4.0 * a[k])
    # ||sum_k alpha_k v_k||_inf = ||grad L(w)||_inf over the regularized columns
    for j in range(A.n_cols if gknown < 0.0 else 0):
        if j == free:
            continue
        gj = 0.0
        for p in range(A.colptr[j], A.colptr[j + 1]):
            gj += alpha[A.row[p]] * A.val[p]
        if fabs(gj) > gm:
            gm = fabs(gj)
    if gknown >= 0.0:
        gm = gknown
    s = 1.0 if gm <= 1.0 else 1.0 / gm
    if loss == 2:
        if B > 0.0 and Asum / (2.0 * B) < s:
            s = Asum / (2.0 * B)
        D = s * Asum - s * s * B
    else:
        for k in range(n):
            if a[k] <= 0.0:
                continue
            pk = s * alpha[k] / a[k]
            q = 0.0
            if pk > 0.0:
                q -= pk * log(pk)
            if pk < 1.0:
                q -= (1.0 - pk) * log1p(-pk)
            D += a[k] * q
    primal[0] = P
    dual[0] = D
    gmax[0] = gm
