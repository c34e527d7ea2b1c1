# The records of one SVM-ALM solve (csrc/_alm.pyx, whose block comment has the
# equations): the examples it reads, its settings (filled once from the keywords of
# alm_solve, named as the solver catalog names its options), its work arrays, the
# scalars of the current iteration and what it returns.

from libc.stdint cimport int64_t
from csr cimport CSR
from comm cimport Comm
from interrupt cimport Stop

cdef enum:
    CONVERGED = 0
    MAX_ITER = 1
    BREAKDOWN = 2          # the objective became non-finite
    HANDED_OVER = 3        # the callback asked to stop: the caller finishes another way

cdef enum:                 # stop: the catalog's "objective", "gradient", "gap"
    STOP_OBJECTIVE = 0
    STOP_GRADIENT = 1
    STOP_GAP = 2

cdef enum:                 # mu_rule: the catalog's "geometric", "eq29", "balance"
    MU_GEOMETRIC = 0
    MU_EQ29 = 1
    MU_BALANCE = 2


ctypedef struct Examples:
    const CSR* X
    const int64_t* rows    # n row numbers (NULL when n = 0: a rank without rows)
    int64_t n
    const double* y        # n labels +-1
    const double* c        # n cost factors >= 0
    const Comm* cm         # the ranks of a distributed solve (serial: not comm_active)


ctypedef struct Settings:
    double C
    double tol
    double p
    int kind               # loss_kind(p): 1 for p = 1, 2 for p = 2, 0 for other p
    int exact              # Algorithm 1 (alm-exact) instead of 2
    int free_intercept     # the last weight is the paper's unregularized b
    int precondition
    double mu0
    double mu_max
    int mu_rule
    double mu_growth
    int stop
    int max_iter
    double cg_tol
    int cg_max_iter
    int refresh            # recompute X beta every this many inexact iterations (0: never)
    double guard           # the objective rule also needs P - D <= guard |P|
    double grad_stop       # the gradient rule's threshold on ||grad P||


ctypedef struct Work:
    double* m          # n: margins X beta
    double* e          # n: the auxiliary e of eq. 5
    double* lam        # n: multipliers
    double* r          # n: X beta - z (cgls: its residual)
    double* q          # n: X d (cgls scratch)
    double* u          # n: scratch (gradient rule, cgls)
    double* v          # n: the w-step's targets z (cgls takes the residual z - X beta)
    double* alpha      # n: the dual point of the certificate
    double* ay         # n: alpha y
    double* ones       # n: cgls weights
    double* g          # nw: gradient of G (eq. 16)
    double* d          # nw: step direction
    double* wa         # nw: X^T(alpha y); cgls scratch
    double* grad       # nw: grad P; cgls scratch
    double* cgs        # nw: cgls scratch
    double* colsq      # nw: diag(X^T X)
    double* dinv       # nw: preconditioner
    double* pk         # nw + 8: the packed allreduce of a distributed solve
    double* gat        # 8 per rank: the gathered scalars of a distributed solve
    Stop* stop         # polled each iteration and by cgls (csrc/interrupt.pxd)


ctypedef struct Iterate:   # the scalars of the iteration under way
    int it             # iterations done
    int status
    double mu
    double inv_mu
    double f           # P(beta)
    double f_prev
    double asum        # the e-step's sum alpha_k ...
    double qsum        # ... and sum C_k l*(alpha_k / C_k)
    double tmax        # the largest t with t alpha <= C c (p = 1), else inf
    double sumsq       # ||X^T(alpha y)||^2 = ||rho*beta - mu g||^2
    double gb          # with a free intercept: the unbalanced certificate (not a bound)
    double rr          # ||X beta + e - y||^2
    double ee          # ||e||^2
    double yy          # ||y||^2
    double mm          # ||X beta||^2
    double pres
    double dres
    double phi_prev    # eq. 29's Phi of the last iteration


ctypedef struct Result:
    int n_iter
    int64_t n_matvec
    int64_t cg_iter
    double f
    double dual        # best D(alpha) seen (-inf if none)
    double mu
    double primal_res  # ||X beta + e - y|| / max(||X beta||, ||e||, ||y||)
    double dual_res    # mu ||g|| / max(||rho beta||, ||X^T lamhat||)
    double grad_norm
    double* f_trace    # per iteration: P(beta_k)
    double* mu_trace   # mu_k
    double* gap_trace  # P(beta_k) - the best D so far
    double* al_trace   # 4 per iteration (alm_core), or NULL
