# The working-set QP of csrc/_perf.pyx's cutting planes (line 4 of Algorithms 1 and 2,
# OP3 on the working set, solved in its dual): a primal active-set method with Newton
# steps on the free set (qp_active), and SMO (qp_smo) as its fallback.  Everything here
# is inline: this file is cimported, not compiled on its own.

from libc.stdint cimport int64_t
from libc.math cimport sqrt, INFINITY
from libc.float cimport DBL_EPSILON


ctypedef struct QPWork:
    double* H          # (ld + 1)^2: reduced Hessian and its Cholesky factor
    int64_t* F         # ld + 1: free variables
    double* p          # ld + 1: search direction (index k: the slack)
    double* y          # ld + 1: right-hand side / solution


cdef inline double qG(const double* G, int64_t ld, int64_t i, int64_t j) noexcept nogil:
    """G_ij, with index -1 the slack variable (a zero row and column)."""
    if i < 0 or j < 0:
        return 0.0
    return G[i * ld + j]


cdef inline void qp_gradient(const double* G, int64_t ld, const double* b, int64_t k,
                             const double* alpha, double* grad) noexcept nogil:
    """grad = G alpha - b (the gradient of the minimized form)."""
    cdef int64_t i, l
    cdef double d
    for i in range(k):
        d = -b[i]
        for l in range(k):
            if alpha[l] != 0.0:
                d += G[i * ld + l] * alpha[l]
        grad[i] = d



cdef inline double qp_feasible_start(double* alpha, int64_t k, double Cp) noexcept nogil:
    """Make the start feasible: alpha_j <= 0 or NaN set to 0, then alpha scaled down to
    sum Cp if it sums to more.  Returns sum_j alpha_j."""
    cdef int64_t j
    cdef double s = 0.0, d
    for j in range(k):
        if not (alpha[j] > 0.0):           # also clears a NaN
            alpha[j] = 0.0
        s += alpha[j]
    if s > Cp:
        d = Cp / s
        for j in range(k):
            alpha[j] *= d
    s = 0.0
    for j in range(k):
        s += alpha[j]
    return s


cdef inline double qp_tolerance(const double* G, int64_t ld, int64_t k, double Cp, double tol,
                                double* Gmax) noexcept nogil:
    """The violation the QP stops at: tol, raised to the rounding floor 16 eps Cp max_j G_jj
    below which the gradient cannot be resolved (that max in Gmax)."""
    cdef int64_t j
    cdef double tol_eff = tol
    Gmax[0] = 0.0
    for j in range(k):
        if G[j * ld + j] > Gmax[0]:
            Gmax[0] = G[j * ld + j]
    if 16.0 * DBL_EPSILON * Cp * Gmax[0] > tol_eff:
        tol_eff = 16.0 * DBL_EPSILON * Cp * Gmax[0]
    return tol_eff


cdef inline int smo_step(const double* G, int64_t ld, int64_t k, double* alpha, double* grad,
                         double* sigma, double tau, double tol_eff) noexcept nogil:
    """One SMO step of qp_smo on (alpha, the slack sigma), grad kept up to date.  Returns 0
    without a step when the violation is <= tol_eff (or no pair is found), else 1."""
    cdef int64_t i, j, l, jbest
    cdef double gmin, gmax, best, d, a, tstep, lim, Qii, Qij, Qjj
    # i: the variable to increase, smallest gradient (slack: 0)
    i = -1
    gmin = 0.0
    for j in range(k):
        if grad[j] < gmin:
            gmin = grad[j]
            i = j
    # the largest gradient among variables that can decrease
    gmax = 0.0 if sigma[0] > 0.0 else -INFINITY
    for j in range(k):
        if alpha[j] > 0.0 and grad[j] > gmax:
            gmax = grad[j]
    if gmax - gmin <= tol_eff:
        return 0
    # j: second-order choice among a_j > 0 (and the slack) with g_j > g_i
    Qii = qG(G, ld, i, i)
    jbest = -2
    best = -1.0
    if sigma[0] > 0.0 and i >= 0:
        d = -gmin
        a = Qii if Qii > tau else tau
        best = d * d / a
        jbest = -1
    for j in range(k):
        if alpha[j] > 0.0 and grad[j] > gmin and j != i:
            d = grad[j] - gmin
            a = Qii + G[j * ld + j] - 2.0 * qG(G, ld, i, j)
            if a < tau:
                a = tau
            if d * d / a > best:
                best = d * d / a
                jbest = j
    if jbest == -2:                  # cannot happen while gmax > gmin; be safe
        return 0
    j = jbest
    Qjj = qG(G, ld, j, j)
    Qij = qG(G, ld, i, j)
    d = (grad[j] if j >= 0 else 0.0) - gmin
    a = Qii + Qjj - 2.0 * Qij
    if a < tau:
        a = tau
    tstep = d / a
    lim = alpha[j] if j >= 0 else sigma[0]
    if tstep >= lim:
        tstep = lim
    # move: a_i += t, a_j -= t, grad += t (G[:, i] - G[:, j])
    if i >= 0:
        alpha[i] += tstep
    else:
        sigma[0] += tstep
    if j >= 0:
        alpha[j] = 0.0 if tstep == lim else alpha[j] - tstep
    else:
        sigma[0] = 0.0 if tstep == lim else sigma[0] - tstep
    for l in range(k):
        grad[l] += tstep * (qG(G, ld, l, i) - qG(G, ld, l, j))
    return 1


cdef inline int64_t qp_smo(const double* G, int64_t ld, const double* b, int64_t k, double Cp,
                           double* alpha, double* grad, double tol, int64_t max_steps,
                           double* viol_out) noexcept nogil:
    """Solve OP3 restricted to k constraints, warm started from `alpha`:

        min_a  f(a) = 1/2 a'Ga - b'a   s.t.  a >= 0,  sum_j a_j <= Cp.

    A slack variable a_s = Cp - sum_j a_j (index -1: zero row of G, b_s = 0)
    turns the constraint into sum = Cp.  KKT: with g = grad f (g_s = 0), a is
    optimal iff max_{a_j > 0} g_j <= min_j g_j.  Each SMO step (Fan, Chen & Lin
    2005 working-set selection) increases the variable i of smallest gradient
    and decreases the one j among a_j > 0 that maximizes the second-order gain
    (g_j - g_i)^2 / (G_ii + G_jj - 2 G_ij), by the exact minimizer of f on that
    line, clipped at a_j = 0.  G may be singular (repeated or dependent
    constraints): zero curvature is replaced by a tiny one, and the clip
    bounds the step.  Stops when the violation max_{a_j>0} g_j - min g <= tol
    (raised to a rounding floor 16 eps Cp max_j G_jj, below which the
    gradient cannot be resolved) or after max_steps steps; the gradient is then
    recomputed from scratch and the test repeated.  The duality gap of the
    result is sum_j a_j (g_j - min g) <= Cp * violation.
    On return grad = G a - b (fresh) and *viol_out the final violation.
    Returns the number of steps.
    """
    cdef int64_t j, steps = 0
    cdef double s, sigma, gmin, gmax, Gmax, tau, tol_eff
    s = qp_feasible_start(alpha, k, Cp)
    sigma = Cp - s if Cp > s else 0.0
    tol_eff = qp_tolerance(G, ld, k, Cp, tol, &Gmax)
    tau = 1e-12 * Gmax if Gmax > 0.0 else 1e-300
    qp_gradient(G, ld, b, k, alpha, grad)
    while True:
        while steps < max_steps:
            if not smo_step(G, ld, k, alpha, grad, &sigma, tau, tol_eff):
                break
            steps += 1
        qp_gradient(G, ld, b, k, alpha, grad)
        s = 0.0
        for j in range(k):
            s += alpha[j]
        sigma = Cp - s if Cp > s else 0.0
        gmin = 0.0
        gmax = 0.0 if sigma > 0.0 else -INFINITY
        for j in range(k):
            if grad[j] < gmin:
                gmin = grad[j]
            if alpha[j] > 0.0 and grad[j] > gmax:
                gmax = grad[j]
        viol_out[0] = gmax - gmin if gmax - gmin > 0.0 else 0.0
        if viol_out[0] <= tol_eff or steps >= max_steps:
            break
    return steps


cdef inline double qS(const double* G, int64_t ld, int64_t k, int64_t i,
                      int64_t j) noexcept nogil:
    """Q_ij of the QP with the slack variable as index k (a zero row and column)."""
    if i >= k or j >= k:
        return 0.0
    return G[i * ld + j]


cdef inline int chol_solve(double* H, int64_t n, int64_t ldh, double delta,
                           double* y) noexcept nogil:
    """Solve (H + delta I) y = y in place by Cholesky (H overwritten by its factor, lower
    triangle).  Returns -1, leaving y untouched, on a non-positive pivot."""
    cdef int64_t i, j, l
    cdef double d, s
    for j in range(n):
        d = H[j * ldh + j] + delta
        for l in range(j):
            d -= H[j * ldh + l] * H[j * ldh + l]
        if not (d > 0.0):
            return -1
        d = sqrt(d)
        H[j * ldh + j] = d
        for i in range(j + 1, n):
            s = H[i * ldh + j]
            for l in range(j):
                s -= H[i * ldh + l] * H[j * ldh + l]
            H[i * ldh + j] = s / d
    for i in range(n):                       # L z = y
        s = y[i]
        for l in range(i):
            s -= H[i * ldh + l] * y[l]
        y[i] = s / H[i * ldh + i]
    for i in range(n - 1, -1, -1):           # L' y = z
        s = y[i]
        for l in range(i + 1, n):
            s -= H[l * ldh + i] * y[l]
        y[i] = s / H[i * ldh + i]
    return 0



cdef inline double qp_violation(const double* G, int64_t ld, const double* b, int64_t k,
                                double Cp, const double* alpha, double* grad, double* sigma,
                                int64_t* jmin) noexcept nogil:
    """grad = G alpha - b afresh, the slack sigma = Cp - sum alpha, the variable of smallest
    gradient in jmin (k: the slack) and the KKT violation max_{z_j > 0} g_j - min_j g_j,
    returned (0 if negative)."""
    cdef int64_t j
    cdef double s = 0.0, gmin, gmax
    qp_gradient(G, ld, b, k, alpha, grad)
    for j in range(k):
        s += alpha[j]
    sigma[0] = Cp - s if Cp > s else 0.0
    jmin[0] = k
    gmin = 0.0
    gmax = 0.0 if sigma[0] > 0.0 else -INFINITY
    for j in range(k):
        if grad[j] < gmin:
            gmin = grad[j]
            jmin[0] = j
        if alpha[j] > 0.0 and grad[j] > gmax:
            gmax = grad[j]
    return gmax - gmin if gmax > gmin else 0.0


cdef inline int64_t qp_free_set(QPWork* Q, int64_t k, const double* alpha, const double* grad,
                                double sigma, double tol_eff, int64_t jmin,
                                int64_t* r_out) noexcept nogil:
    """The free set F = {z_j > 0} in Q.F (index k: the slack), plus jmin when f is minimal
    on that face; r_out: the member with the largest z_r.  Returns |F|."""
    cdef int64_t j, nf = 0, r = -1
    cdef double gFmin = INFINITY, gFmax = -INFINITY, z = -1.0, d, lim
    for j in range(k + 1):
        if j < k:
            if not (alpha[j] > 0.0):
                continue
            d = grad[j]
            lim = alpha[j]
        else:
            if not (sigma > 0.0):
                continue
            d = 0.0
            lim = sigma
        Q.F[nf] = j
        nf += 1
        if d < gFmin:
            gFmin = d
        if d > gFmax:
            gFmax = d
        if lim > z:
            z = lim
            r = j
    if nf == 0 or gFmax - gFmin <= tol_eff:
        Q.F[nf] = jmin
        nf += 1
    r_out[0] = r
    return nf


cdef inline int qp_face_newton(const double* G, int64_t ld, int64_t k, const double* grad,
                               QPWork* Q, int64_t nf, int64_t r) noexcept nogil:
    """The Newton step on the face F (nf >= 2 members, r among them): r moved last and
    eliminated by p_r = -sum_{a != r} p_a, the reduced system H y = -(g_a - g_r) solved
    by Cholesky with a relative ridge of 1e-13, raised x100 while it fails (at most 8
    tries).  Returns 1 with y in Q.y, or 0 if every try failed."""
    cdef int64_t a, c, i, j, m = nf - 1, tries
    cdef int64_t ldh = ld + 1
    cdef double* H = Q.H
    cdef double gr, delta = 0.0, hmax, d
    # put r last; F[0:m] are the eliminated-coordinate variables
    for a in range(nf):
        if Q.F[a] == r:
            Q.F[a] = Q.F[m]
            Q.F[m] = r
            break
    gr = grad[r] if r < k else 0.0
    for tries in range(8):
        hmax = 0.0
        for a in range(m):
            i = Q.F[a]
            for c in range(a + 1):
                j = Q.F[c]
                d = (qS(G, ld, k, i, j) - qS(G, ld, k, i, r) - qS(G, ld, k, r, j)
                     + qS(G, ld, k, r, r))
                H[a * ldh + c] = d
                H[c * ldh + a] = d
            if H[a * ldh + a] > hmax:
                hmax = H[a * ldh + a]
            Q.y[a] = -((grad[i] if i < k else 0.0) - gr)
        if tries == 0:
            delta = 1e-13 * hmax if hmax > 0.0 else 1e-300
        else:
            delta *= 100.0
        if chol_solve(H, m, ldh, delta, Q.y) == 0:
            return 1
    return 0


cdef inline double qp_direction(const double* G, int64_t ld, int64_t k, const double* grad,
                                QPWork* Q, int64_t nf, double* curv) noexcept nogil:
    """The direction p on F from the reduced solution y (p_r = -sum y), its curvature
    p'Qp in curv; returns the slope g.p."""
    cdef int64_t a, c, i, j, m = nf - 1
    cdef double d = 0.0, slope = 0.0
    for a in range(m):
        Q.p[a] = Q.y[a]
        d += Q.y[a]
    Q.p[m] = -d
    for a in range(nf):
        i = Q.F[a]
        slope += Q.p[a] * (grad[i] if i < k else 0.0)
    curv[0] = 0.0
    for a in range(nf):
        i = Q.F[a]
        if i >= k:
            continue
        d = 0.0
        for c in range(nf):
            j = Q.F[c]
            if j < k:
                d += G[i * ld + j] * Q.p[c]
        curv[0] += Q.p[a] * d
    return slope


cdef inline int qp_face_step(double* alpha, int64_t k, double sigma, const QPWork* Q,
                             int64_t nf, double slope, double curv) noexcept nogil:
    """Move alpha along p by the exact minimizer of f, cut at the first variable that
    reaches 0 (set to exactly 0).  Returns 0, moving nothing, when the step is not a
    positive finite length."""
    cdef int64_t a, i, blocking = -1
    cdef double tstar, tmax = INFINITY, t, lim
    tstar = -slope / curv if curv > 0.0 else INFINITY
    for a in range(nf):
        if Q.p[a] < 0.0:
            i = Q.F[a]
            lim = (alpha[i] if i < k else sigma) / (-Q.p[a])
            if lim < tmax:
                tmax = lim
                blocking = a
    t = tstar if tstar < tmax else tmax
    if not (t > 0.0 and t < INFINITY):
        return 0
    for a in range(nf):
        i = Q.F[a]
        if i < k:
            alpha[i] += t * Q.p[a]
            if alpha[i] < 0.0 or (a == blocking and t == tmax):
                alpha[i] = 0.0
    return 1


cdef inline int64_t qp_active(const double* G, int64_t ld, const double* b, int64_t k,
                              double Cp, double* alpha, double* grad, QPWork* Q, double tol,
                              int64_t max_iter, double* viol_out,
                              int64_t* smo_steps) noexcept nogil:
    """Solve OP3 on k constraints (the problem of qp_smo) by a primal active-set method.

    Variables z = (alpha, slack), sum z = Cp, z >= 0; the free set F is
    {z_j > 0}, plus, once f is minimal on that face (max_F g - min_F g <= tol),
    the variable of smallest gradient (its multiplier is negative).  Each
    iteration takes the Newton step on the face: with r in F (the largest
    z_r) eliminated by p_r = -sum_{a != r} p_a, the reduced Hessian is
    H_ab = Q_ab - Q_ar - Q_rb + Q_rr and H p = -(g_a - g_r); H may be singular
    (dependent constraints), so it is solved with a relative ridge of 1e-13
    (raised x100 while Cholesky fails), and the step length is the exact
    minimizer of f along p, cut at the first variable that reaches 0.  Each
    iteration costs O(k |F| + |F|^3) and lowers f; near-singular faces end
    at a bound, regular ones at the face optimum, so warm starts after one new
    constraint finish in a few iterations.  When a step makes no progress
    (a direction that is not one of descent in rounded arithmetic) a burst of
    SMO steps (qp_smo) takes over.  Same stopping test and outputs as qp_smo;
    returns the number of active-set iterations (SMO steps in *smo_steps).
    """
    cdef int64_t r, nf, it = 0, jmin
    cdef double sigma, Gmax, tol_eff, slope, curv
    cdef int ok
    qp_feasible_start(alpha, k, Cp)
    tol_eff = qp_tolerance(G, ld, k, Cp, tol, &Gmax)
    viol_out[0] = 0.0
    while True:
        viol_out[0] = qp_violation(G, ld, b, k, Cp, alpha, grad, &sigma, &jmin)
        if viol_out[0] <= tol_eff or it >= max_iter:
            break
        it += 1
        # the free set; release jmin when f is minimal on the face
        nf = qp_free_set(Q, k, alpha, grad, sigma, tol_eff, jmin, &r)
        ok = 0
        if nf >= 2 and qp_face_newton(G, ld, k, grad, Q, nf, r):
            # direction p on F, slope g.p, curvature p'Qp, exact step cut at the bounds
            slope = qp_direction(G, ld, k, grad, Q, nf, &curv)
            ok = slope < 0.0
            if ok:
                ok = qp_face_step(alpha, k, sigma, Q, nf, slope, curv)
        if not ok:
            smo_steps[0] += qp_smo(G, ld, b, k, Cp, alpha, grad, tol, 50 * (k + 1), viol_out)
    return it
