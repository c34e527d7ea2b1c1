# The token loop of the block generator of synthetic text (linsvm.io.synth_blocks, whose
# docstring and docs/synth.md, "The block generator", have the model and its draw order).
#
# Problem.  Document d of a block has a class c_d, a number n_d of distinct words and a
# topic share lam_d (drawn by the Python layer).  It draws tokens until it holds n_d
# distinct words; each token takes two uniforms u1, u2 of its row's stream:
#     a topic word of class c_d (u2 through the class's alias table)   if u1 < lam_d,
#     a background word (u2 through the background alias table)        otherwise,
# the table giving a frequency rank, word_of_rank the feature index.  The row's entries
# are its n_d distinct words in increasing order; with values, x_dj = log1p(count_dj)
# idf_j, the row then divided by its Euclidean norm (summed in index order).
#
# Streams.  Row k of a block (its position in the block) draws from SplitMix64
# (csrc/rng.pxd) started at rng_next(key + k), key the block's; a uniform is the top 53
# bits of an output times 2^-53.  The rows are independent, so they run on the threads in
# any split with the same entries.
#
# Alias tables (Walker 1977, Vose 1991): outcome i of n with probability q_i is drawn
# from one uniform u as x = u n, i = floor(x), i if x - i < prob_i else alias_i.
#
# Scratch per thread: an open-addressing hash table of the row's words (2^b slots, at
# least twice the longest row of the block: keys, counts) and the row's slots in
# insertion order (to clear them).  Everything is allocated by the Python entries.

from libc.stdint cimport int32_t, int64_t, uint32_t, uint64_t
from libc.math cimport log1p, sqrt
from cython.parallel cimport prange, threadid
import numpy as np
from rng cimport rng_next
from csr cimport entry_threads

cdef double TWO_M53 = 1.0 / 9007199254740992.0


ctypedef struct Entry:             # one outcome of an alias table, its words resolved
    double prob
    int32_t word                    # feature index of the outcome itself
    int32_t alias_word              # feature index of its alias


ctypedef struct Tables:
    const Entry* bg                 # the background table over the V ranks
    int64_t V
    const Entry* tp                 # the classes' topic tables, m entries per class
    int64_t m
    int64_t K                       # classes
    const double* idf               # per feature index, or NULL (no values)


ctypedef struct Scratch:
    int32_t* keys                   # hash slots: a word, or -1
    int32_t* counts
    int64_t* slots                  # the row's slots in insertion order
    uint32_t shift                  # 32 - b


def alias_table(const double[::1] q):
    """(prob, alias) of Vose's alias method for the probabilities q (>= 0, summing to 1
    up to rounding; n <= 2**31 - 1 outcomes): outcome i is drawn as i with probability
    prob_i / n and as alias_i with probability (1 - prob_i) / n for each i, so that
    P(j) = (prob_j + sum over i with alias_i = j of (1 - prob_i)) / n = q_j up to
    rounding.  Outcomes are paired in stack order (the last small with the last large)."""
    cdef int64_t n = q.shape[0], i, s, l, n_small = 0, n_large = 0
    if n < 1 or n > 2147483647:
        raise ValueError("alias_table: need 1 <= n <= 2**31 - 1 outcomes")
    prob_arr = np.empty(n, dtype=np.float64)
    alias_arr = np.empty(n, dtype=np.int32)
    scaled_arr = np.empty(n, dtype=np.float64)
    stack_arr = np.empty(n, dtype=np.int64)          # smalls from the front, larges from the back
    cdef double[::1] prob = prob_arr, scaled = scaled_arr
    cdef int32_t[::1] alias = alias_arr
    cdef int64_t[::1] stack = stack_arr
    with nogil:
        for i in range(n):
            scaled[i] = q[i] * n
            if scaled[i] < 1.0:
                stack[n_small] = i
                n_small += 1
            else:
                stack[n - 1 - n_large] = i
                n_large += 1
        while n_small > 0 and n_large > 0:
            n_small -= 1
            s = stack[n_small]
            l = stack[n - n_large]
            prob[s] = scaled[s]
            alias[s] = <int32_t>l
            scaled[l] = (scaled[l] + scaled[s]) - 1.0
            if scaled[l] < 1.0:
                n_large -= 1                     # l moves from the larges to the smalls
                stack[n_small] = l
                n_small += 1
        for i in range(n_small):                 # rounding leaves some near 1: keep them
            prob[stack[i]] = 1.0
            alias[stack[i]] = <int32_t>stack[i]
        for i in range(n - n_large, n):
            prob[stack[i]] = 1.0
            alias[stack[i]] = <int32_t>stack[i]
    return prob_arr, alias_arr


cdef inline double _uniform(uint64_t* st) noexcept nogil:
    return (rng_next(st) >> 11) * TWO_M53


cdef inline int32_t _draw(const Entry* table, int64_t n, double u) noexcept nogil:
    """The word of the alias table of n outcomes for the uniform u."""
    cdef double x = u * n
    cdef int64_t i = <int64_t>x
    if i >= n:
        i = n - 1
    return table[i].word if x - i < table[i].prob else table[i].alias_word


cdef void _resolve(Entry* out, const double[::1] prob, const int32_t[::1] alias,
                   const int64_t* rank, const int32_t[::1] word_of_rank) noexcept nogil:
    """out[i] = (prob_i, word of outcome i, word of alias_i), outcome i being rank[i]
    (rank NULL: i itself)."""
    cdef int64_t i, n = prob.shape[0]
    for i in range(n):
        out[i].prob = prob[i]
        out[i].word = word_of_rank[rank[i] if rank != NULL else i]
        out[i].alias_word = word_of_rank[rank[alias[i]] if rank != NULL else alias[i]]


cdef inline int64_t _slot(const Scratch* S, int32_t j) noexcept nogil:
    """The slot holding word j, or the empty slot where it goes (linear probing)."""
    cdef uint32_t mask = (<uint32_t>0xFFFFFFFF) >> S.shift
    cdef uint32_t h = (<uint32_t>j * <uint32_t>0x9E3779B1) >> S.shift
    while S.keys[h] != -1 and S.keys[h] != j:
        h = (h + 1) & mask
    return h


cdef void _sort(int32_t* a, int64_t n) noexcept nogil:
    """a[0:n] in increasing order (quicksort, median of three, insertion below 16; the
    values are distinct)."""
    cdef int64_t i, j, lo = 0, hi = n - 1
    cdef int32_t v, p, t
    while hi - lo >= 16:
        i = lo + (hi - lo) // 2
        if a[i] < a[lo]:
            t = a[i]; a[i] = a[lo]; a[lo] = t
        if a[hi] < a[lo]:
            t = a[hi]; a[hi] = a[lo]; a[lo] = t
        if a[hi] < a[i]:
            t = a[hi]; a[hi] = a[i]; a[i] = t
        p = a[i]
        i = lo
        j = hi
        while i <= j:
            while a[i] < p:
                i += 1
            while a[j] > p:
                j -= 1
            if i <= j:
                t = a[i]; a[i] = a[j]; a[j] = t
                i += 1
                j -= 1
        if j - lo < hi - i:                      # the smaller side by recursion
            _sort(a + lo, j - lo + 1)
            lo = i
        else:
            _sort(a + i, hi - i + 1)
            hi = j
    for i in range(lo + 1, hi + 1):
        v = a[i]
        j = i - 1
        while j >= lo and a[j] > v:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = v


cdef void _row(const Tables* T, Scratch* S, uint64_t state, int64_t c, int64_t n, double lam,
               int32_t* out, double* val) noexcept nogil:
    """Document of class c with n distinct words and topic share lam from the stream at
    `state`: its sorted words in out[0:n], their values in val[0:n] (val NULL: none)."""
    cdef int64_t k = 0, h
    cdef int32_t j
    cdef double u1, u2, v, ss = 0.0
    while k < n:
        u1 = _uniform(&state)
        u2 = _uniform(&state)
        if u1 < lam:
            j = _draw(T.tp + c * T.m, T.m, u2)
        else:
            j = _draw(T.bg, T.V, u2)
        h = _slot(S, j)
        if S.keys[h] == -1:
            S.keys[h] = j
            S.counts[h] = 1
            S.slots[k] = h
            out[k] = j
            k += 1
        else:
            S.counts[h] += 1
    _sort(out, n)
    if val != NULL:
        for k in range(n):
            v = log1p(<double>S.counts[_slot(S, out[k])]) * T.idf[out[k]]
            val[k] = v
            ss += v * v
        ss = sqrt(ss)
        for k in range(n):
            val[k] = val[k] / ss
    for k in range(n):
        S.keys[S.slots[k]] = -1


cdef class TokenModel:
    """The vocabulary's tables for the token loop (see the block comment), built once:
    TokenModel(bg_prob, bg_alias, tp_prob, tp_alias, tp_rank, word_of_rank, idf) from
    alias_table's arrays of the background (over the V ranks) and of each class's topic
    (n_classes x m, C order; tp_rank the rank of each topic entry), the feature index of
    each rank, and the idf per feature index or None (no values).  The tables are stored
    with their words resolved (16 bytes per outcome, one cache line per draw); the
    caller checks the ranges (ranks in [0, V), aliases in [0, n), word indices >= 0)."""
    cdef Tables T
    cdef object arrays

    def __init__(self, const double[::1] bg_prob, const int32_t[::1] bg_alias,
                 const double[:, ::1] tp_prob, const int32_t[:, ::1] tp_alias,
                 const int64_t[:, ::1] tp_rank, const int32_t[::1] word_of_rank, idf):
        cdef const double[::1] iv
        cdef int64_t V = bg_prob.shape[0], K = tp_prob.shape[0], m = tp_prob.shape[1], c
        if bg_alias.shape[0] != V or word_of_rank.shape[0] != V or tp_alias.shape[0] != K \
                or tp_alias.shape[1] != m or tp_rank.shape[0] != K or tp_rank.shape[1] != m \
                or K < 1 or m < 1 or V < 1:
            raise ValueError("TokenModel: inconsistent table shapes")
        bg = np.empty(V * sizeof(Entry), dtype=np.uint8)
        tp = np.empty(K * m * sizeof(Entry), dtype=np.uint8)
        cdef unsigned char[::1] bv = bg, tv = tp
        _resolve(<Entry*>&bv[0], bg_prob, bg_alias, NULL, word_of_rank)
        for c in range(K):
            _resolve(<Entry*>&tv[0] + c * m, tp_prob[c], tp_alias[c], &tp_rank[c, 0],
                     word_of_rank)
        self.arrays = (bg, tp, idf)
        self.T.bg = <Entry*>&bv[0]
        self.T.V = V
        self.T.tp = <Entry*>&tv[0]
        self.T.m = m
        self.T.K = K
        self.T.idf = NULL
        if idf is not None:
            iv = idf
            if iv.shape[0] != V:
                raise ValueError("TokenModel: one idf per feature")
            self.T.idf = &iv[0]

    def fill(self, uint64_t key, const int64_t[::1] cls, const double[::1] lam,
             const int64_t[::1] indptr, int32_t[::1] indices, values, int n_threads=0):
        """Rows k < len(cls) of a block: row k (class cls[k], topic share lam[k]) writes
        its indptr[k + 1] - indptr[k] sorted words into indices[indptr[k]:indptr[k + 1]]
        and, unless values is None, their values into values[...] (float64), from the
        stream at rng_next(key + k).  n_threads: threads (0: all); the entries do not
        depend on it."""
        cdef int64_t r = cls.shape[0], k, longest = 1, t, n_slots
        cdef int T_ = entry_threads(n_threads)
        cdef double[::1] vv
        cdef double* vp = NULL
        cdef uint64_t s
        cdef Scratch* S
        if lam.shape[0] != r or indptr.shape[0] != r + 1 or indices.shape[0] < indptr[r]:
            raise ValueError("fill: inconsistent lengths")
        if values is not None:
            vv = values
            if vv.shape[0] < indptr[r] or self.T.idf == NULL:
                raise ValueError("fill: values need idf and one entry per index")
            vp = &vv[0] if vv.shape[0] else NULL
        for k in range(r):
            if cls[k] < 0 or cls[k] >= self.T.K or indptr[k + 1] < indptr[k] \
                    or indptr[k + 1] - indptr[k] > self.T.V:
                raise ValueError(f"fill: row {k} has a bad class or length")
            if indptr[k + 1] - indptr[k] > longest:
                longest = indptr[k + 1] - indptr[k]
        cdef uint32_t b = 1
        while (<int64_t>1 << b) < 2 * longest:
            b += 1
        n_slots = <int64_t>1 << b
        keys = np.full((T_, n_slots), -1, dtype=np.int32)
        counts = np.zeros((T_, n_slots), dtype=np.int32)
        slots = np.empty((T_, longest), dtype=np.int64)
        cdef int32_t[:, ::1] kv = keys, cv = counts
        cdef int64_t[:, ::1] sv = slots
        scratch = np.empty(T_ * sizeof(Scratch), dtype=np.uint8)
        cdef unsigned char[::1] raw = scratch
        S = <Scratch*>&raw[0]
        for t in range(T_):
            S[t].keys = &kv[t, 0]
            S[t].counts = &cv[t, 0]
            S[t].slots = &sv[t, 0]
            S[t].shift = 32 - b
        with nogil:
            for k in prange(r, schedule="dynamic", chunksize=16, num_threads=T_):
                s = key + <uint64_t>k
                _row(&self.T, &S[threadid()], rng_next(&s), cls[k], indptr[k + 1] - indptr[k],
                     lam[k], &indices[indptr[k]] if indptr[k + 1] > indptr[k] else NULL,
                     vp + indptr[k] if vp != NULL else NULL)
        return None
