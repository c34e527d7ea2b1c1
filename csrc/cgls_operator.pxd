# The operator of csrc/cgls.pxd's CGLS, its settings and work records, and the residual
# A'Cz - Lam beta it starts from (csrc/cgls.pxd's block comment has the mathematics).
# Inline: cimported, not compiled on its own.
#
# The operator.  Its products are called once or twice per iteration through
# function pointers (never per row: each product is one pass over the rows, in
# csr.pxd's kernels or the caller's), so one CGLS serves every operator at the cost
# of an indirect call per product.  An Operator maps nw weights to n terms:
#     apply(A, p, q)            q = A p                         (n doubles out)
#     apply_t(A, u, r)          r = A' u                        (nw doubles out)
#     normal(A, p, c, q, u, h)  q = A p and h = A'C q in one pass; returns q'Cq
#                               (u: n doubles of scratch; NULL: no fused iterations)
#     apply_t_sq(A, u, c, r, d) r = A' u and d = diag(A'CA) in one pass
#                               (NULL: no built-in Jacobi preconditioner)
# X, rows: the CSR rows of csr_operator; ctx: anything else an operator needs.
# poll_rows: rows a product reads (stop polling's measure of work).

from libc.stdint cimport int64_t
from csr cimport CSR
from csr_passes cimport matvec, rmatvec, rmatvec_col_sq, normal_matvec
from interrupt cimport Stop
from comm cimport Comm, comm_sum
from wsplit cimport Split, split_reduce


cdef struct Operator

ctypedef void (*op_map)(const Operator* A, const double* x, double* out) noexcept nogil
ctypedef double (*op_normal)(const Operator* A, const double* p, const double* c, double* q,
                             double* u, double* h) noexcept nogil
ctypedef void (*op_map_sq)(const Operator* A, const double* u, const double* c, double* r,
                           double* diag) noexcept nogil

cdef struct Operator:
    int64_t n                      # terms (rows of A)
    int64_t nw                     # weights (columns of A)
    int64_t poll_rows              # CSR rows one product reads
    op_map apply                   # q = A p
    op_map apply_t                 # r = A' u
    op_normal normal               # q = A p, h = A'C q, returns q'Cq; or NULL
    op_map_sq apply_t_sq           # r = A' u, diag = diag(A'CA); or NULL
    const CSR* X
    const int64_t* rows
    const void* ctx


ctypedef struct CglsSettings:
    double eps                     # eq. 13's tolerance
    double forcing                 # the forcing term eta (0: off)
    double forcing_guard           # the quadratic-model rule's tolerance qtol (0: off)
    int qadapt                     # ... as min(qtol, ||r_0||_{M^-1}^(1/2))
    int qguard                     # ... guarding the forcing term only
    int cg_max_iter
    int fused_cg                   # one pass per iteration (operators with `normal`)
    int jacobi                     # fill W.minv with the damped Jacobi preconditioner
    double jacobi_weight           # its jw
    int verify                     # eq. 13 checked on the true residual (fused, distributed)
    double stop_rr                 # the gradient test at entry (0: none)
    double grad_rr                 # the certifying step (0: none) ...
    double cert_rr                 # ... solved to ||r||^2 <= cert_rr
    int64_t nreg                   # weights regularized: the first nreg (< 0: all)
    Stop* stop                     # polled once per iteration, or NULL
    const Comm* comm               # a distributed solve, or NULL / the serial record
    const Split* split             # the weight-split arrangement (with comm, h, dsum, xd)


ctypedef struct CglsWork:
    double* z                      # n: tt - A beta on entry, the final residual on exit
    double* q                      # n, scratch
    double* u                      # n, scratch
    double* r                      # nw: the residual A'Cz - Lam beta
    double* p                      # nw, scratch
    double* s                      # nw, scratch (unused without minv)
    double* minv                   # nw: the preconditioner (an output with jacobi), or NULL
    double* h                      # nw (+ 3 distributed): fused and distributed scratch
    double* dsum                   # nw: the step taken, or NULL (with xd)
    double* xd                     # n: its image A dsum, or NULL (with dsum)
    double* diag                   # nw: diag(A'CA) of the Jacobi fill, or NULL


cdef inline void _csr_apply(const Operator* A, const double* p, double* q) noexcept nogil:
    matvec(A.X, A.rows, A.n, p, q)


cdef inline void _csr_apply_t(const Operator* A, const double* u, double* r) noexcept nogil:
    rmatvec(A.X, A.rows, A.n, u, r)


cdef inline double _csr_normal(const Operator* A, const double* p, const double* c, double* q,
                               double* u, double* h) noexcept nogil:
    return normal_matvec(A.X, A.rows, A.n, p, c, q, u, h)


cdef inline void _csr_apply_t_sq(const Operator* A, const double* u, const double* c, double* r,
                                 double* diag) noexcept nogil:
    rmatvec_col_sq(A.X, A.rows, A.n, u, c, r, diag)


cdef inline Operator csr_operator(const CSR* X, const int64_t* rows, int64_t n) noexcept nogil:
    """The operator beta -> X[rows] beta of the n CSR rows `rows` (fused and Jacobi
    capable)."""
    cdef Operator A
    A.n = n
    A.nw = X.n_weights
    A.poll_rows = n
    A.apply = _csr_apply
    A.apply_t = _csr_apply_t
    A.normal = _csr_normal
    A.apply_t_sq = _csr_apply_t_sq
    A.X = X
    A.rows = rows
    A.ctx = NULL
    return A


cdef inline void residual(const Operator* A, const double* c, const double* z, double lam,
                          const double* beta, double* u, double* r, double* minv,
                          double* diag=NULL, double jw=1.0, const Comm* comm=NULL,
                          int64_t nreg=-1) noexcept nogil:
    """r = A'Cz - lam beta (u = C z: n doubles of scratch); nreg >= 0: lam on the first
    nreg weights only (block comment).  With minv != NULL (A must
    have apply_t_sq), also minv = 1 / (lam + jw diag(A'CA)) from the same pass over the
    rows, and (diag != NULL) diag = diag(A'CA).  comm: A'Cz (and diag) summed over the
    ranks (one allreduce each; nothing when serial)."""
    cdef int64_t j, nr = A.nw if nreg < 0 else nreg
    for j in range(A.n):
        u[j] = c[j] * z[j]
    if minv != NULL:
        if diag == NULL:
            diag = minv
        A.apply_t_sq(A, u, c, r, diag)
        comm_sum(comm, diag, A.nw)
        for j in range(nr):
            minv[j] = 1.0 / (lam + jw * diag[j])
        for j in range(nr, A.nw):
            minv[j] = 1.0 / (jw * diag[j]) if diag[j] > 0.0 else 1.0 / lam
    else:
        A.apply_t(A, u, r)
    comm_sum(comm, r, A.nw)
    for j in range(nr):
        r[j] -= lam * beta[j]


cdef inline void residual_split(const Operator* A, const double* c, const double* z, double lam,
                                const double* beta, double* u, double* r, double* minv,
                                double* diag, double jw, const Split* S,
                                int64_t nr) noexcept nogil:
    """residual's split form (block comment): r = A'Cz - Lam beta, and with minv != NULL
    the Jacobi minv, valid on this rank's owned weights."""
    cdef int64_t i, j
    for j in range(A.n):
        u[j] = c[j] * z[j]
    if minv != NULL:
        if diag == NULL:
            diag = minv
        A.apply_t_sq(A, u, c, r, diag)
        split_reduce(S, diag)
        for i in range(S.n_own):
            j = S.own[i]
            if j < nr:
                minv[j] = 1.0 / (lam + jw * diag[j])
            else:
                minv[j] = 1.0 / (jw * diag[j]) if diag[j] > 0.0 else 1.0 / lam
    else:
        A.apply_t(A, u, r)
    split_reduce(S, r)
    for i in range(S.n_own):
        j = S.own[i]
        if j < nr:
            r[j] -= lam * beta[j]
