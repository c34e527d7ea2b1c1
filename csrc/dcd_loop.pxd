# One loop of dual coordinate descent over packed examples (csrc/dcd_loop.pxd), the
# inner part of csrc/_dcd.pyx's core: that file's block comment has the algorithm, the
# shrinking rule and the "Memory" notes on the packed records.  Here: the settings and
# work arrays of a solve, the 64-byte Example records, packing them from the view's rows
# and back, and one loop over a fresh permutation of the active set.

from libc.stdint cimport int64_t, uint64_t, uintptr_t
from libc.math cimport INFINITY
from csr cimport (CSR, dot_row_span, axpy_row_span, row_start, row_stop, prefetch_span,
                 LINSVM_PREFETCH)
from rng cimport shuffle

# One active example as the loop reads it (_dcd.pyx's block comment, "Memory"): 8 x 8 bytes.
ctypedef struct Example:
    int64_t lo                # the row's entries [lo, hi) (csr.pxd's row_start / row_stop)
    int64_t hi
    double t
    double Dg
    double QD
    double U
    double alpha
    int64_t k                 # its position in rows (alpha[k] on return)

cdef enum:
    AHEAD = 8                 # prefetch distance, in steps of the loop
    EXAMPLE_DOUBLES = 8       # sizeof(Example) / sizeof(double)

# The settings of one solve or local pass, filled once from the entry's keywords (the
# catalog's names; `loss` is "l1" or "l2" there, 1 or 2 here).
ctypedef struct DcdSettings:
    double C
    int loss                  # 1: hinge (U_k = C c_k, D_kk = 0); 2: squared hinge
    double tol                # the stopping rule's eps: PG spread <= tol over a loop
    int shrinking
    int max_iter              # loops (a local pass: its local_epochs)
    double sigma              # each step moves w by sigma d t_k x_k (1: the serial dual)

# The per-position arrays of a solve (t, c, alpha, U, Dg, QD: one entry per position of
# the view's row list) and the core's scratch.
ctypedef struct DcdWork:
    const double* t
    const double* c
    double* alpha
    double* U
    double* Dg                # D_kk
    double* QD                # sigma ||x_k||^2 + D_kk
    int64_t* index            # index[0:n_total]: the positions taking part
    int64_t n_total
    Example* ex               # room for n_total Examples (aligned_examples)
    double* trace             # TRACE_COLS doubles per loop

# The active set and the shrinking thresholds between two loops of dcd_core.
ctypedef struct LoopState:
    int64_t n_active          # index[0:n_active] is the active set
    double Mbar               # the previous loop's max PG (+inf when <= 0)
    double mbar               # its min PG (-inf when >= 0)
    double PGmax              # this loop's extremes of PG
    double PGmin


cdef inline Example* aligned_examples(double[::1] buf) noexcept nogil:
    """The first 64-byte boundary in buf (EXAMPLE_DOUBLES (n + 1) doubles for n Examples)."""
    return <Example*>((<uintptr_t>&buf[0] + 63) & ~(<uintptr_t>63))


cdef inline void pack_examples(const CSR* X, const int64_t* rows, DcdWork* A) noexcept nogil:
    """Copy the positions A.index[0:n_total] into the Examples (_dcd.pyx's "Memory");
    index then numbers the Examples, which the loops shuffle."""
    cdef int64_t j, k
    cdef Example* ex = A.ex
    for j in range(A.n_total):
        k = A.index[j]
        ex[j].lo = row_start(X, rows[k])
        ex[j].hi = row_stop(X, rows[k])
        ex[j].t = A.t[k]
        ex[j].Dg = A.Dg[k]
        ex[j].QD = A.QD[k]
        ex[j].U = A.U[k]
        ex[j].alpha = A.alpha[k]
        ex[j].k = k
        A.index[j] = j


cdef inline void unpack_examples(DcdWork* A) noexcept nogil:
    """alpha back from the Examples, and index back to positions."""
    cdef int64_t j
    cdef Example* ex = A.ex
    for j in range(A.n_total):
        A.alpha[ex[j].k] = ex[j].alpha
        A.index[j] = ex[A.index[j]].k


cdef inline void dcd_loop(const CSR* X, const DcdSettings* opt, Example* ex, int64_t* index,
                           double* w, LoopState* L, double* f, uint64_t* rng) noexcept nogil:
    """One loop over a fresh permutation of the active set index[0:L.n_active] (_dcd.pyx's
    block comment: the step, and shrinking against L.Mbar / L.mbar); sets L.n_active, L.PGmax
    and L.PGmin, and keeps f = f(alpha) and w = sum alpha t x up to date."""
    cdef int64_t n_active = L.n_active, s = 0, tmp
    cdef double Mbar = L.Mbar, mbar = L.mbar, PGmax = -INFINITY, PGmin = INFINITY
    cdef double G, PG, a_old, a_new, d, sigma = opt.sigma
    cdef int shrinking = opt.shrinking
    cdef Example* e
    shuffle(rng, index, n_active)
    while s < n_active:
        if s + AHEAD < n_active:
            LINSVM_PREFETCH(&ex[index[s + AHEAD]])
        if s + AHEAD // 2 < n_active:
            prefetch_span(X, ex[index[s + AHEAD // 2]].lo)
        e = &ex[index[s]]
        G = e.t * dot_row_span(X, e.lo, e.hi, w) - 1.0 + e.Dg * e.alpha
        PG = 0.0
        if e.alpha <= 0.0:
            if shrinking and G > Mbar:
                # shrink: swap it to the end of the active part and revisit slot s
                n_active -= 1
                tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                continue
            if G < 0.0:
                PG = G
        elif e.alpha >= e.U:
            if shrinking and G < mbar:
                n_active -= 1
                tmp = index[s]; index[s] = index[n_active]; index[n_active] = tmp
                continue
            if G > 0.0:
                PG = G
        else:
            PG = G
        if PG > PGmax:
            PGmax = PG
        if PG < PGmin:
            PGmin = PG
        if PG != 0.0:
            a_old = e.alpha
            a_new = a_old - G / e.QD
            if a_new < 0.0:
                a_new = 0.0
            elif a_new > e.U:
                a_new = e.U
            e.alpha = a_new
            d = a_new - a_old
            if d != 0.0:
                # w += d t_k x_k;  f changes by d G + d^2 QD / 2
                axpy_row_span(X, e.lo, e.hi, d * e.t * sigma, w)
                f[0] += d * G + 0.5 * d * d * e.QD
        s += 1
    L.n_active = n_active
    L.PGmax = PGmax
    L.PGmin = PGmin
