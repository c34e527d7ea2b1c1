# Collectives for the compiled solvers of a distributed solve (csrc/comm.pxd).
#
# A distributed solve runs on P ranks, each holding a block of the rows, with the
# weights replicated.  Every sum over rows a kernel forms (a gradient X'u, a loss
# sum, a count) is then local, and the ranks add theirs in one allreduce before any
# rank uses it; all ranks take the same decisions because they decide on the same
# reduced numbers.  The kernels reach the communicator through a Comm record:
#
#     cdef Comm C = comm_from(problem_comm)      # with the GIL, in the Python entry
#     with nogil:
#         ... local partial sums into buf[0:n] ...
#         comm_sum(&C, buf, n)                   # buf <- the sum over the ranks
#
# comm_from(None) gives the serial record (obj NULL): every function below then
# returns at once without touching its buffer, so a serial solve's arithmetic is
# unchanged bit for bit and pays one compare per call site.  With a communicator
# (a linsvm.runtime.collective.Collective, borrowed: the caller keeps it alive for the
# solve) each call takes the GIL and calls the Collective's in-place method on a
# view of the buffer; a failing collective aborts the whole MPI job there
# (linsvm/runtime/collective.py), so the kernels need no error path.
#
# Interrupts: a distributed kernel must not leave a loop on one rank alone (the
# others would wait in the next collective forever), so a Python entry that runs
# distributed passes stop polling a record whose decisions are collective, or none;
# Ctrl-C under mpiexec reaches every rank through the launcher.

from libc.stdint cimport int64_t


ctypedef struct Comm:
    void* obj                      # borrowed linsvm.runtime.collective.Collective, NULL: serial
    int rank
    int size


cdef inline Comm comm_from(object coll):
    """The Comm record of a Collective, or the serial record for None."""
    cdef Comm C
    if coll is None:
        C.obj = NULL
        C.rank = 0
        C.size = 1
    else:
        C.obj = <void*>coll
        C.rank = coll.rank
        C.size = coll.size
    return C


cdef inline bint comm_active(const Comm* C) noexcept nogil:
    """True when C stands for more than one rank."""
    return C != NULL and C.obj != NULL


cdef inline void comm_sum(const Comm* C, double* buf, int64_t n) noexcept nogil:
    """buf[0:n] <- its sum over the ranks (nothing when serial or n <= 0)."""
    if C == NULL or C.obj == NULL or n <= 0:
        return
    with gil:
        (<object>C.obj).sum(<double[:n]>buf)


cdef inline void comm_max(const Comm* C, double* buf, int64_t n) noexcept nogil:
    """buf[0:n] <- its elementwise maximum over the ranks (nothing when serial)."""
    if C == NULL or C.obj == NULL or n <= 0:
        return
    with gil:
        (<object>C.obj).max(<double[:n]>buf)


cdef inline double comm_sum1(const Comm* C, double v) noexcept nogil:
    """The sum of one number over the ranks (v itself when serial)."""
    comm_sum(C, &v, 1)
    return v


cdef inline void comm_allgather(const Comm* C, const double* send, int64_t n,
                                double* recv) noexcept nogil:
    """recv[r * n:(r + 1) * n] <- rank r's send[0:n], for every rank r (recv holds
    size * n doubles; when serial, recv[0:n] <- send[0:n])."""
    cdef int64_t j
    cdef double[::1] got
    if C == NULL or C.obj == NULL:
        for j in range(n):
            recv[j] = send[j]
        return
    if n <= 0:
        return
    with gil:
        got = (<object>C.obj).allgather(<double[:n]>send).reshape(-1)
        for j in range(C.size * n):
            recv[j] = got[j]


cdef inline void comm_alltoallv(const Comm* C, const double* send, const int64_t* scounts,
                                double* recv, const int64_t* rcounts) noexcept nogil:
    """A personalized exchange: this rank's send[...] holds, rank after rank in rank
    order, scounts[r] doubles for rank r; recv receives, in rank order, rcounts[r]
    doubles from rank r (csrc/wsplit.pxd's sparse exchanges).  Nothing when serial."""
    cdef int64_t ns = 0, nr = 0
    cdef int r
    if C == NULL or C.obj == NULL:
        return
    for r in range(C.size):
        ns += scounts[r]
        nr += rcounts[r]
    with gil:
        (<object>C.obj).alltoallv(<double[:max(ns, 1)]>send,
                                  [scounts[r] for r in range(C.size)],
                                  <double[:max(nr, 1)]>recv,
                                  [rcounts[r] for r in range(C.size)])


cdef inline void comm_allgatherv(const Comm* C, const double* send, int64_t n, double* recv,
                                 const int64_t* counts) noexcept nogil:
    """recv <- every rank's send, rank after rank (rank r contributes counts[r] doubles;
    n = counts[this rank]).  Nothing when serial."""
    cdef int64_t total = 0
    cdef int r
    if C == NULL or C.obj == NULL:
        return
    for r in range(C.size):
        total += counts[r]
    with gil:
        (<object>C.obj).allgatherv(<double[:max(n, 1)]>send, <double[:max(total, 1)]>recv,
                                   [counts[r] for r in range(C.size)])
