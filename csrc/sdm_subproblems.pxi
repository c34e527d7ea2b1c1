# The sub-problems of the sequential dual method (csrc/_sdm.pyx, whose block comment
# has the algorithm, "Both sub-problems"): Crammer-Singer's (10) and Weston-Watkins'
# (21) for one example, solved by a primal active-set method from d = 0.  Included in
# csrc/_sdm.pyx (a textual include: these are the module's own cdef functions, which
# linsvm/_sdm.pxd exports to the test entries of csrc/_testing.pyx).

from libc.stdint cimport int64_t
from libc.math cimport fabs
from sdm_sub cimport FREE, AT_LO, AT_HI


cdef int cs_subproblem(int64_t n, double A, const double* g, const double* b, double* d,
                       char* inW, int max_it) noexcept nogil:
    """Solve (10) over n variables: min 1/2 A ||d||^2 + g.d, d <= b, sum d = 0.

    b >= 0 (b_m = C_i^m - alpha_i^m) and A > 0.  Primal active-set method from
    d = 0 with the working set given in inW (1: held at its bound; only
    variables with b = 0 may start there).  On return d is the minimizer and
    inW[t] = 1 marks the variables held at their bound d_t = b_t exactly.
    Returns the number of iterations, or -1 if max_it stopped it (d is then
    feasible and no worse than 0).
    """
    cdef int64_t t, nF, block
    cdef int it = 0
    cdef double gbar, gref, sbar, sg, sb, step, p, dstar, mu, mu_min, tol, scale = 0.0
    for t in range(n):
        d[t] = 0.0
        if b[t] != 0.0:
            inW[t] = 0
        if fabs(g[t]) > scale:
            scale = fabs(g[t])
        if A * b[t] > scale:
            scale = A * b[t]
    tol = 1e-13 * (1.0 + scale)
    while True:
        it += 1
        if it > max_it:
            return -1
        # equality-constrained minimizer on the free set F
        nF = 0
        sg = 0.0
        sb = 0.0
        gref = 0.0
        for t in range(n):
            if inW[t]:
                sb += b[t]
            else:
                if nF == 0:
                    gref = g[t]          # sums of g - gref: exact for tied gradients
                nF += 1
                sg += g[t] - gref
        if nF == 0:
            return it
        # beta = mean_F g - A sum_W b / |F|; d_t = (beta - g_t) / A is computed as
        # (mean_F g - g_t) / A - sum_W b / |F| so that a tiny A does not magnify the
        # rounding of beta into the equality constraint
        gbar = gref + sg / nF
        sbar = sb / nF
        # ratio test: the first bound met on the way from d to that minimizer
        step = 1.0
        block = -1
        for t in range(n):
            if not inW[t]:
                dstar = (gbar - g[t]) / A - sbar
                p = dstar - d[t]
                if p > 0.0 and dstar > b[t]:
                    if (b[t] - d[t]) / p < step:
                        step = (b[t] - d[t]) / p
                        block = t
        if step < 0.0:
            step = 0.0
        for t in range(n):
            if not inW[t]:
                d[t] += step * ((gbar - g[t]) / A - sbar - d[t])
        if block >= 0:
            d[block] = b[block]
            inW[block] = 1
            continue
        # at the minimizer: multipliers mu_t = beta - g_t - A b_t of the bounds in W
        block = -1
        mu_min = -tol
        for t in range(n):
            if inW[t]:
                mu = (gbar - g[t]) - A * (sbar + b[t])
                if mu < mu_min:
                    mu_min = mu
                    block = t
        if block < 0:
            return it
        inW[block] = 0


cdef int ww_subproblem(int64_t n, double A, const double* g, const double* lo,
                       const double* hi, double* d, char* flag, int max_it) noexcept nogil:
    """Solve (21) restricted to n variables:
    min 1/2 A ||d||^2 + 1/2 A (sum d)^2 + g.d,  lo <= d <= hi  (lo <= 0 <= hi, A > 0).

    Primal active-set method from d = 0 with the working set given in flag
    (AT_LO allowed only where lo = 0, AT_HI only where hi = 0, else FREE).  On
    return flag[t] = AT_LO / AT_HI marks the variables held at that bound
    exactly, FREE the others.  Returns iterations, or -1 if max_it stopped it.
    """
    cdef int64_t t, nF, block
    cdef int it = 0, side
    cdef double T, sW, sg, step, p, dstar, grad, viol, worst, tol, scale = 0.0
    for t in range(n):
        d[t] = 0.0
        if (flag[t] == AT_LO and lo[t] != 0.0) or (flag[t] == AT_HI and hi[t] != 0.0) \
                or flag[t] > AT_HI:
            flag[t] = FREE
        if fabs(g[t]) > scale:
            scale = fabs(g[t])
        if A * hi[t] > scale:
            scale = A * hi[t]
        if -A * lo[t] > scale:
            scale = -A * lo[t]
    tol = 1e-13 * (1.0 + scale)
    while True:
        it += 1
        if it > max_it:
            return -1
        nF = 0
        sW = 0.0
        sg = 0.0
        for t in range(n):
            if flag[t] == FREE:
                nF += 1
                sg += g[t]
            else:
                sW += d[t]
        # free minimizer: d_t = -g_t / A - T, T = total sum at that point
        T = (sW - sg / A) / (1.0 + nF)
        step = 1.0
        block = -1
        side = FREE
        for t in range(n):
            if flag[t] == FREE:
                dstar = -g[t] / A - T
                p = dstar - d[t]
                if p > 0.0 and dstar > hi[t]:
                    if (hi[t] - d[t]) / p < step:
                        step = (hi[t] - d[t]) / p
                        block = t
                        side = AT_HI
                elif p < 0.0 and dstar < lo[t]:
                    if (lo[t] - d[t]) / p < step:
                        step = (lo[t] - d[t]) / p
                        block = t
                        side = AT_LO
        if step < 0.0:
            step = 0.0
        for t in range(n):
            if flag[t] == FREE:
                d[t] += step * (-g[t] / A - T - d[t])
        if block >= 0:
            d[block] = hi[block] if side == AT_HI else lo[block]
            flag[block] = side
            continue
        # multipliers: gradient A d_t + A sum(d) + g_t must be >= 0 at lo, <= 0 at hi
        T = 0.0
        for t in range(n):
            T += d[t]
        block = -1
        worst = tol
        for t in range(n):
            if flag[t] != FREE:
                grad = A * (d[t] + T) + g[t]
                viol = -grad if flag[t] == AT_LO else grad
                if viol > worst:
                    worst = viol
                    block = t
        if block < 0:
            return it
        flag[block] = FREE
