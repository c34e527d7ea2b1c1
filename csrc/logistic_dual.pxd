# lr-dual's core (csrc/_logistic.pyx's lrdual_solve): the binary L2-regularized logistic
# regression dual by coordinate descent, an inner Newton step per coordinate.
#
# Dual coordinate descent for binary L2-regularized logistic regression (Yu, Huang & Lin,
# "Dual coordinate descent methods for logistic regression and maximum entropy models",
# Machine Learning 85, 2011: Sec. 3, Algorithms 3-4; LIBLINEAR -s 7's problem).  In their
# minimization form the dual of f is
#
#     min_alpha  1/2 alpha'Q alpha + sum_i [alpha_i log alpha_i + (U_i - alpha_i) log(U_i - alpha_i)]
#     s.t. 0 <= alpha_i <= U_i,     Q_ij = t_i t_j x_i.x_j,     w(alpha) = sum_i alpha_i t_i x_i
#
# (its negative plus sum_i U_i log U_i is D of csrc/logistic_newton.pxd's Certificate).  The
# entropy's slope is infinite at both ends of the box, so the optimum and every iterate lie
# inside it.  With A_i = alpha_i and B_i = U_i - alpha_i, coordinate i's sub-problem in its
# step z is
#
#     g(z) = (A_i + z) log(A_i + z) + (B_i - z) log(B_i - z) + Q_ii z^2 / 2 + G_i z,  G_i = t_i w.x_i
#     g'(z) = Q_ii z + G_i + log((A_i + z) / (B_i - z)),    -A_i < z < B_i.
#
# Both A_i and B_i are stored and each is updated by its own formula (Sec. 3.2 of the paper:
# taking U_i - alpha_i when alpha_i is near U_i loses the digits the log needs).  At the
# midpoint z_m = (B_i - A_i)/2 the log vanishes, so g'(z_m) = Q_ii z_m + G_i says on which
# half the root lies: if g'(z_m) >= 0 the new alpha_i is <= U_i/2 and the sub-problem is
# solved for v = alpha_i + z, else for v = U_i - alpha_i - z; in either case Newton on
#
#     h(v) = Q_ii (v - v_old) + s G_i + log(v / (U_i - v)),   v in (0, U_i/2],   s = +-1,
#
# an increasing function, concave on (0, U_i/2], so from a point left of its root Newton's
# iterates rise monotonically to it; a Newton point <= 0 is replaced by XI v (XI = 0.1, the
# paper's Algorithm 4 safeguard).  It starts at min(v_old, U_i/2) and stops at |h(v)| <=
# delta (at most INNER_MAX steps).  delta = min(1e-2, 0.01 max(eps, Gmax_prev)) with Gmax_prev
# the previous loop's measure: loose while the loop's violation is large, a hundredth of it
# at the end (each coordinate left at |g'| ~ delta adds about delta^2 U_i / 8 to the duality
# gap at the stop: hence a hundredth rather than a tenth; docs/logistic.md, "How they solve
# it").
#
# Loops visit the examples in a fresh random permutation (seeded SplitMix64, csrc/rng.pxd).
# Stop (LIBLINEAR -s 7's "dual maximal violation", default -e 0.1): the largest |g'_i(0)|,
# each measured when the loop visits i, is <= eps over a whole loop.  A coordinate whose
# |g'_i(0)| <= delta is left as it is (no update of w).  Examples with U_i = 0 have no dual
# variable and are skipped.

from libc.stdint cimport int64_t, uint64_t
from libc.math cimport log, fabs, fmax, fmin, INFINITY
from clock cimport monotonic_seconds
from csr cimport CSR, dot_row_span, axpy_row_span, prefetch_span, LINSVM_PREFETCH
from rng cimport shuffle
from interrupt cimport Stop, stop_poll, stop_keep
from logistic_loss cimport CONVERGED, MAX_ITER

cdef enum:
    INNER_MAX = 100                # Newton steps per coordinate
    DUAL_TRACE = 4                 # a loop's trace row: loop, max violation, seconds, inner steps

cdef extern from *:
    """
    #define LINSVM_LOGISTIC_XI 0.1
    """
    # the inner Newton safeguard (Algorithm 4's xi)
    const double XI "LINSVM_LOGISTIC_XI"


ctypedef struct DualVar:
    # everything a visit of example i reads, in one cache line (the loop visits the examples
    # in random order, so each array read apart would be a cache miss of its own)
    double A                       # alpha_i
    double B                       # U_i - alpha_i
    double L                       # log(A / B)
    double U                       # C c_i
    double QD                      # ||x_i||^2
    double t                       # label +-1
    int64_t lo                     # the row's entries: row_start <= p < row_stop
    int64_t hi


ctypedef struct DualRun:
    # the settings of one run of the loops, and what it did
    double eps                     # stop at a loop's max |g'_i(0)| <= eps
    int max_iter                   # loops
    uint64_t rng                   # the permutations' SplitMix64 state
    double* trace                  # DUAL_TRACE doubles per loop
    void* callback                 # callback(loop, max violation, inner steps) after each
                                   # loop, or NULL
    Stop* stop                     # polled once per loop
    int n_iter                     # out: loops
    int64_t n_newton               # out: inner Newton steps
    double gmax                    # out: the last loop's max |g'_i(0)|


cdef inline double _visit(const CSR* X, DualVar* d, double* w, double delta,
                          int64_t* newton) noexcept nogil:
    """One visit of coordinate d (block comment): its sub-problem solved to |h| <= delta
    unless |g'_i(0)| <= delta already, w updated; returns |g'_i(0)|."""
    cdef int j
    cdef double G, gp, a, u, vold, v, vn, sgn, h, z
    G = d.t * dot_row_span(X, d.lo, d.hi, w)
    gp = G + d.L                              # g'_i(0)
    if fabs(gp) <= delta:
        return fabs(gp)
    a = d.QD
    u = d.U
    if a * 0.5 * (d.B - d.A) + G >= 0.0:     # the new alpha_i is <= U_i / 2
        vold = d.A
        sgn = 1.0
    else:                                     # the new U_i - alpha_i is < U_i / 2
        vold = d.B
        sgn = -1.0
    v = fmin(vold, 0.5 * u)
    for j in range(INNER_MAX):
        h = a * (v - vold) + sgn * G + log(v / (u - v))
        if fabs(h) <= delta:
            break
        vn = v - h / (a + u / (v * (u - v)))
        v = vn if vn > 0.0 else XI * v
        newton[0] += 1
    if sgn > 0.0:
        z = v - d.A
        d.A = v
        d.B = u - v
    else:
        z = d.B - v
        d.B = v
        d.A = u - v
    d.L = log(d.A / d.B)
    if z != 0.0:
        axpy_row_span(X, d.lo, d.hi, z * d.t, w)
    return fabs(gp)


cdef inline int lrdual_core(const CSR* X, DualVar* V, double* w, int64_t* index, int64_t n,
                            DualRun* R) noexcept nogil:
    """Dual coordinate descent (block comment) over the examples index[0:n] of V from their
    (A, B), with w = w(alpha) on entry; returns CONVERGED or MAX_ITER.  R.trace gets one row
    per loop.  Each loop polls R.stop; once stopped the solve returns and the caller raises."""
    cdef int it = 0, status = MAX_ITER
    cdef int64_t s, newton = 0
    cdef double Gmax, g, delta, prev = INFINITY
    cdef double t0 = monotonic_seconds()
    while it < R.max_iter:
        delta = fmin(1e-2, 0.01 * fmax(R.eps, prev))
        shuffle(&R.rng, index, n)
        Gmax = 0.0
        for s in range(n):
            # the visits go in random order: ask for the next examples' data ahead of use
            if s + 2 < n:
                LINSVM_PREFETCH(&V[index[s + 2]])
            if s + 1 < n:
                prefetch_span(X, V[index[s + 1]].lo)
            g = _visit(X, &V[index[s]], w, delta, &newton)
            if g > Gmax:
                Gmax = g
        it += 1
        prev = Gmax
        R.trace[(it - 1) * DUAL_TRACE + 0] = it
        R.trace[(it - 1) * DUAL_TRACE + 1] = Gmax
        R.trace[(it - 1) * DUAL_TRACE + 2] = monotonic_seconds() - t0
        R.trace[(it - 1) * DUAL_TRACE + 3] = <double>newton
        if R.callback != NULL:
            with gil:
                try:
                    (<object>R.callback)(it, Gmax, newton)
                except BaseException as e:
                    stop_keep(R.stop, e)
        if stop_poll(R.stop, n * R.stop.per_row):
            break
        if Gmax <= R.eps:
            status = CONVERGED
            break
    R.n_iter = it
    R.n_newton = newton
    R.gmax = prev if it > 0 else 0.0
    return status
