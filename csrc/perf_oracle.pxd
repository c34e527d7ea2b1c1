# The most violated constraint of csrc/_perf.pyx's cutting planes (its block comment has
# the problems): lines 5-7 of Algorithm 1 (classification) and 5-22 of Algorithm 2
# (ordinal regression: a radix sort of each query's scores and two sweeps with a Fenwick
# tree over the levels), and the allreduce of a cut on several MPI ranks.  Everything
# here is inline: this file is cimported, not compiled on its own.

from libc.stdint cimport int32_t, int64_t, uint64_t
from libc.string cimport memcpy, memset
from csr cimport CSR, dot_row, axpy_row
from csr_passes cimport matvec, rmatvec, scatter_blocks
from comm cimport Comm, comm_active, comm_sum, comm_allgather

# Oracle kinds.
cdef enum:
    BINARY = 0
    ORDINAL = 1

ctypedef struct Item:
    double s          # score w.x_k
    int64_t k         # position of the example in `rows`

ctypedef struct Oracle:
    int kind
    const int64_t* rows       # n row numbers of X
    int64_t n
    const double* t           # BINARY: labels +-1 per position
    const double* q           # cost factor per position
    double scale              # 1/n (BINARY) or 1/m (ORDINAL)
    const int32_t* level      # ORDINAL: level of each position within its query, 0..R_g-1
    const int64_t* perm       # ORDINAL: positions grouped by query
    const int64_t* gptr       # ORDINAL: group g is perm[gptr[g]:gptr[g+1]]
    const int32_t* glevels    # ORDINAL: R_g, number of levels in group g
    int64_t n_groups
    Item* items               # ORDINAL: n scratch items
    Item* items2              # ORDINAL: n more, for the radix sort
    int64_t* counts           # ORDINAL: RADIX_PASSES * RADIX_SIZE counters
    double* fen               # ORDINAL: Fenwick tree, max R_g + 1 entries
    double* cplus             # ORDINAL: c+ per position (output)
    double* cminus            # ORDINAL: c- per position (output)
    double* s                 # scores w.x_k per position (output)
    double* u                 # coefficients of x_k in x_c per position (output)
    # distributed (csrc/comm.pxd): the rows are this rank's block
    const Comm* comm          # NULL or the serial record: a serial solve
    double* pk                # n_weights + 3 doubles: the packed allreduce
    double flag               # in: this rank's stop flag; out: the ranks' sum
    Oracle* glob              # ORDINAL, groups split over ranks: the oracle of all
                              # positions (every rank's, in rank order), or NULL
    int64_t offset            # glob: this rank's first position among all
    int64_t pad               # glob: max positions on one rank (the gather's width)
    const int64_t* per_rank   # glob: positions on each rank
    double* gat               # glob: size * pad gathered scores


# --------------------------------------------------------------------------- #
# The most violated constraint (lines 5-7 of Algorithm 1, 5-22 of Algorithm 2)
# --------------------------------------------------------------------------- #

cdef inline double oracle_binary(const CSR* X, Oracle* O, const double* w, double* xc,
                          double* rhs) noexcept nogil:
    """Lines 5-7 of Algorithm 1 at w.

    s_k = x_k.w; c_k = [t_k s_k < 1]; u_k = c_k q_k t_k / n;
    xc = sum_k u_k x_k (= x_c); rhs = (1/n) sum_k c_k q_k (= b_c).
    Returns xi' = b_c - w.x_c = (1/n) sum_k q_k max(0, 1 - t_k s_k), summed
    term by term (no cancellation).  One pass over the rows: serial runs fuse
    the dot product and the scatter of each row; with threads, matvec then rmatvec.
    """
    cdef int64_t k, n = O.n
    cdef double s, a, r = 0.0, xi = 0.0, sc = O.scale
    if X.n_threads > 1 or scatter_blocks(X, n) > 1:
        matvec(X, O.rows, n, w, O.s)
        for k in range(n):
            s = O.s[k]
            if O.t[k] * s < 1.0:
                O.u[k] = O.q[k] * O.t[k] * sc
                r += O.q[k]
                xi += O.q[k] * (1.0 - O.t[k] * s)
            else:
                O.u[k] = 0.0
        rmatvec(X, O.rows, n, O.u, xc)
    else:
        memset(xc, 0, X.n_weights * sizeof(double))
        for k in range(n):
            s = dot_row(X, O.rows[k], w)
            O.s[k] = s
            if O.t[k] * s < 1.0:
                a = O.q[k] * O.t[k] * sc
                O.u[k] = a
                if a != 0.0:
                    axpy_row(X, O.rows[k], a, xc)
                r += O.q[k]
                xi += O.q[k] * (1.0 - O.t[k] * s)
            else:
                O.u[k] = 0.0
    if comm_active(O.comm):
        reduce_cut(X, O, xc, &r, &xi)
    rhs[0] = r * sc
    return xi * sc


cdef inline void reduce_cut(const CSR* X, Oracle* O, double* xc, double* a,
                            double* b) noexcept nogil:
    """Distributed: xc, a, b and the stop flag summed over the ranks, one allreduce
    of n_weights + 3 doubles (the cut's only communication besides glob's gather)."""
    cdef int64_t nw = X.n_weights
    memcpy(O.pk, xc, nw * sizeof(double))
    O.pk[nw] = a[0]
    O.pk[nw + 1] = b[0]
    O.pk[nw + 2] = O.flag
    comm_sum(O.comm, O.pk, nw + 3)
    memcpy(xc, O.pk, nw * sizeof(double))
    a[0] = O.pk[nw]
    b[0] = O.pk[nw + 1]
    O.flag = O.pk[nw + 2]


cdef enum:
    RADIX_BITS = 11
    RADIX_PASSES = 6               # 6 * 11 >= 64 key bits
    RADIX_SIZE = 2048
    SMALL_SORT = 32


cdef inline uint64_t desc_key(double s) noexcept nogil:
    """An unsigned key whose increasing order is the decreasing order of s
    (IEEE-754 bits, sign-folded; -0.0 and +0.0 get the same key)."""
    cdef uint64_t u
    s = s + 0.0
    memcpy(&u, &s, sizeof(double))
    if u >> 63:
        u = ~u
    else:
        u = u ^ (<uint64_t>1 << 63)
    return ~u


cdef inline void sort_desc(Item* a, Item* tmp, int64_t n, int64_t* cnt) noexcept nogil:
    """Sort a[0:n] by decreasing score, stably (ties keep their order).

    LSD radix sort on desc_key, 11 bits per pass, passes whose digit is the same
    for every item skipped (O(n) per pass, no comparisons); insertion sort below
    SMALL_SORT items.  tmp holds n items; cnt RADIX_PASSES * RADIX_SIZE counters.
    """
    cdef int64_t i, j, d, b, c, total
    cdef uint64_t key
    cdef Item x
    cdef Item* src = a
    cdef Item* dst = tmp
    cdef Item* sw
    cdef int64_t* cd
    if n <= SMALL_SORT:
        for i in range(1, n):
            x = a[i]
            j = i - 1
            while j >= 0 and desc_key(a[j].s) > desc_key(x.s):
                a[j + 1] = a[j]
                j -= 1
            a[j + 1] = x
        return
    memset(cnt, 0, RADIX_PASSES * RADIX_SIZE * sizeof(int64_t))
    for i in range(n):
        key = desc_key(a[i].s)
        for d in range(RADIX_PASSES):
            cnt[d * RADIX_SIZE + <int64_t>((key >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))] += 1
    for d in range(RADIX_PASSES):
        cd = cnt + d * RADIX_SIZE
        if cd[<int64_t>((desc_key(src[0].s) >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))] == n:
            continue
        total = 0
        for b in range(RADIX_SIZE):
            c = cd[b]
            cd[b] = total
            total += c
        for i in range(n):
            b = <int64_t>((desc_key(src[i].s) >> (RADIX_BITS * d)) & (RADIX_SIZE - 1))
            dst[cd[b]] = src[i]
            cd[b] += 1
        sw = src
        src = dst
        dst = sw
    if src != a:
        memcpy(a, src, n * sizeof(Item))


cdef inline void fen_add(double* fen, int64_t R, int64_t lev, double v) noexcept nogil:
    """Fenwick tree over levels 0..R-1: add v at `lev`."""
    cdef int64_t i = lev + 1
    while i <= R:
        fen[i] += v
        i += i & (-i)


cdef inline double fen_prefix(const double* fen, int64_t cnt) noexcept nogil:
    """Sum of the values at levels 0..cnt-1."""
    cdef int64_t i = cnt
    cdef double s = 0.0
    while i > 0:
        s += fen[i]
        i -= i & (-i)
    return s


cdef inline void ordinal_counts(Oracle* O) noexcept nogil:
    """The condensed representation (c+, c-) of the most violated OP5 constraint.

    With c_ij = [s_i - s_j < 1] for every pair (i, j) of one query with
    level_i > level_j (proof of Theorem 5):
        c+_i = q_i sum { q_j : level_j < level_i, s_i - s_j < 1 },
        c-_j = q_j sum { q_i : level_i > level_j, s_i - s_j < 1 }.
    Per query (Algorithm 2, lines 5-22): sort by decreasing score (line 5, sort_desc), then
    sweep 1 walks i down the order while a second pointer inserts every j with
    s_i - s_j < 1 (a prefix of the order that only grows, since the difference
    is monotone in both scores, also in rounded arithmetic) into a Fenwick
    tree over the levels, weighted by q_j; c+_i is its prefix sum below
    level_i.  Sweep 2 is the mirror image (ascending order, levels counted
    from the top) for c-.  The Fenwick tree replaces the paper's per-level
    counters a and b, so all R levels are done in the same two sweeps:
    O(n log n + n log R) instead of O(n log n + R n).  The predicate is
    evaluated as the same floating-point expression s_i - s_j < 1 as a
    brute-force pair enumeration would, so the counts agree exactly.
    """
    cdef int64_t g, a, p, a0, ng, i, j, R
    cdef const double* s = O.s
    cdef Item* it = O.items
    for g in range(O.n_groups):
        a0 = O.gptr[g]
        ng = O.gptr[g + 1] - a0
        R = O.glevels[g]
        for a in range(ng):
            i = O.perm[a0 + a]
            O.cplus[i] = 0.0
            O.cminus[i] = 0.0
            it[a].s = s[i]
            it[a].k = i
        if R < 2 or ng < 2:
            continue
        sort_desc(it, O.items2, ng, O.counts)
        # sweep 1 (decreasing s_i): j enters when s_i - s_j < 1
        memset(O.fen, 0, (R + 1) * sizeof(double))
        p = 0
        for a in range(ng):
            i = it[a].k
            while p < ng and s[i] - it[p].s < 1.0:
                fen_add(O.fen, R, O.level[it[p].k], O.q[it[p].k])
                p += 1
            O.cplus[i] = O.q[i] * fen_prefix(O.fen, O.level[i])
        # sweep 2 (increasing s_j): i enters when s_i - s_j < 1; levels reversed
        memset(O.fen, 0, (R + 1) * sizeof(double))
        p = ng - 1
        for a in range(ng - 1, -1, -1):
            j = it[a].k
            while p >= 0 and it[p].s - s[j] < 1.0:
                fen_add(O.fen, R, R - 1 - O.level[it[p].k], O.q[it[p].k])
                p -= 1
            O.cminus[j] = O.q[j] * fen_prefix(O.fen, R - 1 - O.level[j])


cdef inline double oracle_ordinal(const CSR* X, Oracle* O, const double* w, double* xc,
                           double* rhs) noexcept nogil:
    """Lines 5-22 of Algorithm 2 at w: scores, (c+, c-), x_c and b_c.

    u_k = (c+_k - c-_k) / m, xc = sum_k u_k x_k, rhs = (1/(2m)) sum_k (c+_k + c-_k).
    Returns xi' = b_c - w.x_c = (1/m) sum_P v_ij max(0, 1 - (s_i - s_j)).
    """
    cdef int64_t k, n = O.n, rk, i, at
    cdef double r = 0.0, ws = 0.0, sc = O.scale
    cdef Oracle* G = O.glob
    matvec(X, O.rows, n, w, O.s)
    if G != NULL:
        # groups split over the ranks: every rank gathers all scores (pad doubles per
        # rank) and counts the same (c+, c-) of all positions; it keeps its own
        comm_allgather(O.comm, O.s, O.pad, O.gat)
        at = 0
        for rk in range(O.comm.size):
            for i in range(O.per_rank[rk]):
                G.s[at] = O.gat[rk * O.pad + i]
                at += 1
        ordinal_counts(G)
        for k in range(n):
            O.cplus[k] = G.cplus[O.offset + k]
            O.cminus[k] = G.cminus[O.offset + k]
    else:
        ordinal_counts(O)
    for k in range(n):
        O.u[k] = (O.cplus[k] - O.cminus[k]) * sc
        r += O.cplus[k] + O.cminus[k]
        ws += O.u[k] * O.s[k]
    rmatvec(X, O.rows, n, O.u, xc)
    if comm_active(O.comm):
        reduce_cut(X, O, xc, &r, &ws)
    rhs[0] = 0.5 * r * sc
    return rhs[0] - ws


cdef inline double oracle(const CSR* X, Oracle* O, const double* w, double* xc,
                          double* rhs) noexcept nogil:
    """The most violated constraint at w of the oracle's kind: x_c in xc, b_c in rhs;
    returns xi' = b_c - w.x_c."""
    if O.kind == BINARY:
        return oracle_binary(X, O, w, xc, rhs)
    return oracle_ordinal(X, O, w, xc, rhs)
