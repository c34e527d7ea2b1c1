# What the two L1-regularized solvers of csrc/_l1.pyx (cdn and glmnet, whose block
# comment has the equations) share: the settings, the status codes, the constants of
# the papers, the minimum-norm subgradient and the one-variable Newton step, the
# logistic loss, and the trace and callback of an outer iteration.  Everything here is
# inline: this file is cimported, not compiled on its own.

from libc.stdint cimport int64_t, uint64_t
from libc.math cimport fabs, log1p

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    STALLED = 2         # glmnet: no step passed the line search

cdef enum:
    TRACE_COLS = 6      # iteration, objective (nan unless logged for cdn), ||S||_1 of the
                        # iteration, active features, seconds, inner sweeps / failed searches

cdef extern from *:
    """
    /* the constants of csrc/_l1.pyx's methods (its block comment) */
    #define LINSVM_L1_NU 1e-12          /* added to every second derivative (both papers' nu) */
    #define LINSVM_L1_SIGMA 0.01        /* Armijo constant of both line searches */
    #define LINSVM_L1_STEP_BOUND 10.0   /* glmnet: bound on one coordinate step of the model */
    #define LINSVM_L1_TINY_STEP 1e-12   /* cdn: a Newton step below this (not to 0) does nothing */
    #define LINSVM_L1_RESET_FACTOR 0.1  /* shrunk sets re-checked at each tenfold fall of ||S||_1 */
    """
    const double NU "LINSVM_L1_NU"
    const double SIGMA "LINSVM_L1_SIGMA"
    const double STEP_BOUND "LINSVM_L1_STEP_BOUND"
    const double TINY_STEP "LINSVM_L1_TINY_STEP"
    const double RESET_FACTOR "LINSVM_L1_RESET_FACTOR"


cdef struct L1Settings:
    # One solve's settings, filled once from the Python entry's keywords (the catalog's
    # option names, linsvm/solvers/l1_spec.py; C and eps are the solve's)
    double C                # a_k = C c_k
    double eps              # eps' of the stopping rule (-e scaled by max(min(n+, n-), 1)/n)
    uint64_t seed           # the coordinate orders' random stream
    int max_iter            # outer iterations (cdn: sweeps; glmnet: Newton iterations)
    int inner_max_iter      # glmnet: sweeps of one inner solve
    int max_linesearch      # trials of one line search
    bint shrinking
    bint regularize_bias    # False (with a bias feature): the bias weight is free
    int n_threads           # threads of the column and row passes (0: every OpenMP thread)


cdef struct Sweep:
    # What a sweep over the active features measured and left
    double M_new        # the largest |S_j| (the next sweep's shrinking bound)
    double norm1        # sum of |S_j| over the sweep
    double grad_inf     # glmnet: ||g||_inf over every feature
    int64_t n_active    # the active features index[0:n_active] (cdn: in, before the sweep)
    int64_t ls_failures # cdn: coordinates whose line search found no step, all sweeps


cdef inline double violation(double g, double wj) noexcept nogil:
    """|S_j|, the minimum-norm subgradient of |w_j| + L at w_j with dL/dw_j = g."""
    if wj > 0.0:
        return fabs(g + 1.0)
    if wj < 0.0:
        return fabs(g - 1.0)
    if g + 1.0 < 0.0:
        return -(g + 1.0)
    if g - 1.0 > 0.0:
        return g - 1.0
    return 0.0


cdef inline double subgrad(double g, double wj, bint is_free) noexcept nogil:
    """|S_j|: violation(g, wj), or |g| for the free bias."""
    return fabs(g) if is_free else violation(g, wj)


cdef inline double reg_abs(double x, bint is_free) noexcept nogil:
    """|x|, the L1 term of a weight (0 for the free bias)."""
    return 0.0 if is_free else fabs(x)


cdef inline bint can_shrink(double g, double wj, bint shrinking, bint is_free,
                            double M, double n_ex) noexcept nogil:
    """The shrinking test of both papers: w_j = 0 and -1 + M/n < g < 1 - M/n (M: the largest
    violation of the previous sweep, inf after a reset; never the free bias)."""
    return (wj == 0.0 and shrinking and not is_free and g + 1.0 > M / n_ex
            and g - 1.0 < -M / n_ex)


cdef inline double newton_step(double g, double h, double u) noexcept nogil:
    """The minimizer d of g d + h d^2 / 2 + |u + d| (h > 0): the three cases of the block
    comment; the last one is exactly -u."""
    if g + 1.0 <= h * u:
        return -(g + 1.0) / h
    if g - 1.0 >= h * u:
        return -(g - 1.0) / h
    return -u


cdef inline double logistic_loss(double zk, double ezk) noexcept nogil:
    """log(1 + exp(-z)) from z and ez = exp(z), without overflow (ez may be 0 or inf)."""
    if zk >= 0.0:
        return log1p(1.0 / ezk)
    return -zk + log1p(ezk)


cdef inline void trace_row(double* trace, int it, double obj, double norm1, int64_t n_active,
                           double seconds, double last) noexcept nogil:
    """Row it - 1 of the trace (TRACE_COLS columns)."""
    trace[(it - 1) * TRACE_COLS + 0] = it
    trace[(it - 1) * TRACE_COLS + 1] = obj
    trace[(it - 1) * TRACE_COLS + 2] = norm1
    trace[(it - 1) * TRACE_COLS + 3] = n_active
    trace[(it - 1) * TRACE_COLS + 4] = seconds
    trace[(it - 1) * TRACE_COLS + 5] = last
