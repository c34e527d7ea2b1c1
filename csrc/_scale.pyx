# Feature scaling as LIBSVM's svm-scale does it: the compiled loops of linsvm.io.scale.
#
# Feature j (1-based) with range [m_j, M_j] (m_j != M_j) maps a value v to
#
#     v' = l                                       if v == m_j
#     v' = u                                       if v == M_j
#     v' = l + ((u - l) * (v - m_j)) / (M_j - m_j)  otherwise
#
# and a feature with m_j == M_j is left out of the output.  A value v' == 0 is not
# written; every other is written as "j:%g " (C's %g: six significant digits).  A
# zero -- an entry the row does not store -- scales like any value, so a feature
# whose scaled zero z_j is non-zero ("a shifted feature": m_j < 0 < M_j, or l != 0
# at m_j == 0, ...) appears in every row.  The label t is written b"%.17g ", scaled
# the same way with (y_l, y_u, y_min, y_max) when y scaling is on (no zero-range
# exception there: t == y_min is tested first).
#
# The expression is evaluated in exactly this order, in double precision, one IEEE
# operation at a time (no fused multiply-add can arise: the product feeds a
# division), and the text comes from the C library's printf, so the output is
# byte for byte the one svm-scale prints on the same C library.
#
# Ranges (svm-scale's pass over the data): m_j and M_j are the min and max, over
# every row, of the row's value of feature j, a row that does not store j counting
# as +0.  svm-scale folds them with the macros max(a, b) = a > b ? a : b and
# min(a, b) = a < b ? a : b, so on a tie the later value wins; that matters only
# for a zero result, whose sign (written "-0" or "0" in a parameter file) is that
# of the last zero of the sequence.  update_ranges keeps, per feature, the number
# of stored entries, their min and max, and the row of the last stored zero with
# its sign and the number of entries up to it; linsvm.io.scale finishes the fold (an
# unstored row after the last stored zero means the last zero is a +0).
#
# Both entry points run on one chunk of rows at a time and return, so Ctrl-C is
# seen between chunks; they hold no Python object in their loops.  Inputs come
# from linsvm's parser (indices checked, finite values); the Python layer sizes the
# arrays (see each function's contract).

from libc.stdint cimport int32_t, int64_t, uint8_t
from libc.stdio cimport snprintf
from libc.string cimport memcpy
from libc.math cimport signbit

import numpy as np


ctypedef fused ptr_t:
    int32_t
    int64_t


# Longest texts: b"%d:%g " with an int32 index is at most 10 + 1 + 13 + 1 bytes
# ("-1.79769e+308"), b"%.17g " at most 25, b"qid:%lld " at most 25.
cdef enum:
    FEATURE_MAX = 32
    HEAD_MAX = 64


cdef inline double _scaled(double v, double lo, double hi, double vmin, double vmax) noexcept nogil:
    """v' of the block comment for the range [vmin, vmax] and limits [lo, hi]."""
    if v == vmin:
        return lo
    if v == vmax:
        return hi
    return lo + (hi - lo) * (v - vmin) / (vmax - vmin)


def update_ranges(const ptr_t[::1] indptr, const int32_t[::1] indices, const double[::1] data,
                  int64_t row0, double[::1] vmin, double[::1] vmax, int64_t[::1] count,
                  int64_t[::1] zrow, int64_t[::1] zcount, uint8_t[::1] zneg):
    """Fold one chunk of CSR rows (global row numbers row0, row0 + 1, ...) into the
    per-feature statistics, slot j = feature j = column j - 1:

        count[j] += stored entries; vmin[j], vmax[j]: min / max of the stored values;
        for the last stored zero: zrow[j] its row, zcount[j] count[j] after it,
        zneg[j] its sign bit.

    Contract (checked by the caller): every array of statistics is longer than
    the largest index + 1; indptr is the parser's (monotonic, within indices).
    """
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t i, k
    cdef int64_t j
    cdef double v
    if n_rows <= 0:
        return
    with nogil:
        for i in range(n_rows):
            for k in range(indptr[i], indptr[i + 1]):
                j = <int64_t>indices[k] + 1
                v = data[k]
                count[j] += 1
                if v < vmin[j]:
                    vmin[j] = v
                if v > vmax[j]:
                    vmax[j] = v
                if v == 0.0:
                    zrow[j] = row0 + i
                    zcount[j] = count[j]
                    zneg[j] = 1 if signbit(v) else 0


cdef object zero_columns(const double[::1] vmin, const double[::1] vmax, double lower,
                         double upper):
    """The shifted features and their text: (features int32, text bytes, offsets int64).

    features: the j in 1..len(vmin)-1 with vmin[j] != vmax[j] whose scaled zero is
    non-zero, increasing; text[offsets[p]:offsets[p + 1]] is "j:%g " of that
    scaled zero for features[p].
    """
    cdef Py_ssize_t n = vmin.shape[0]
    cdef Py_ssize_t j, count = 0, p
    cdef double z
    cdef char tmp[FEATURE_MAX]
    cdef int w
    for j in range(1, n):
        if vmin[j] != vmax[j] and _scaled(0.0, lower, upper, vmin[j], vmax[j]) != 0.0:
            count += 1
    features = np.empty(count, dtype=np.int32)
    offsets = np.zeros(count + 1, dtype=np.int64)
    text = bytearray(count * FEATURE_MAX)
    cdef int32_t[::1] f = features
    cdef int64_t[::1] off = offsets
    cdef unsigned char[::1] out = text
    p = 0
    with nogil:
        for j in range(1, n):
            if vmin[j] == vmax[j]:
                continue
            z = _scaled(0.0, lower, upper, vmin[j], vmax[j])
            if z == 0.0:
                continue
            w = snprintf(tmp, FEATURE_MAX, b"%d:%g ", <int>j, z)
            memcpy(&out[off[p]], tmp, w)
            f[p] = <int32_t>j
            off[p + 1] = off[p] + w
            p += 1
    return features, bytes(text[:offsets[count]]), offsets


ctypedef struct Limits:
    const double* vmin          # n_vars ranges: feature j's [vmin[j], vmax[j]]
    const double* vmax
    Py_ssize_t n_vars
    double lower                # the features' target interval
    double upper
    int y_scaling               # the labels' too: [y_min, y_max] -> [y_lower, y_upper]
    double y_lower
    double y_upper
    double y_min
    double y_max
    const int32_t* shifted      # n_shift shifted features (zero_columns), increasing
    Py_ssize_t n_shift
    const unsigned char* ztext  # their scaled zeros' text, feature p's at
    const int64_t* zoff         # ztext[zoff[p]:zoff[p + 1]]


cdef class Scaling:
    """Scaling(vmin, vmax, lower, upper, y=None): how format_rows scales one file.

    vmin, vmax: float64 per-feature ranges (slot j = feature j, slot 0 unused), of one
    length; lower < upper: the features' target interval; y: None, or (y_lower,
    y_upper, y_min, y_max) to scale the labels too.  The shifted features (those whose
    scaled zero is non-zero) and their text are found here, once.
    """
    cdef Limits L
    cdef object vmin, vmax, shifted, zoff
    cdef readonly bytes zero_text      # the shifted features' text, all of it
    cdef readonly Py_ssize_t n_shifted

    def __cinit__(self, vmin, vmax, double lower, double upper, y=None):
        cdef const double[::1] lo = vmin
        cdef const double[::1] hi = vmax
        if hi.shape[0] != lo.shape[0]:
            raise ValueError("vmin and vmax differ in length")
        self.vmin, self.vmax = vmin, vmax
        self.shifted, self.zero_text, self.zoff = zero_columns(lo, hi, lower, upper)
        cdef const int32_t[::1] sh = self.shifted
        cdef const int64_t[::1] off = self.zoff
        self.n_shifted = sh.shape[0]
        self.L.vmin = &lo[0] if lo.shape[0] else NULL
        self.L.vmax = &hi[0] if hi.shape[0] else NULL
        self.L.n_vars = lo.shape[0]
        self.L.lower = lower
        self.L.upper = upper
        self.L.y_scaling = y is not None
        self.L.y_lower, self.L.y_upper, self.L.y_min, self.L.y_max = (
            (0.0, 0.0, 0.0, 0.0) if y is None else (float(v) for v in y))
        self.L.shifted = &sh[0] if sh.shape[0] else NULL
        self.L.n_shift = sh.shape[0]
        self.L.ztext = <const unsigned char*><const char*>self.zero_text
        self.L.zoff = &off[0]

    def row_bound(self, Py_ssize_t row_nnz):
        """Bytes that format_rows needs free to write a row with row_nnz stored entries."""
        return HEAD_MAX + row_nnz * FEATURE_MAX + self.L.zoff[self.L.n_shift] + 1


cdef inline Py_ssize_t _label_text(const Limits* L, double v, char* o) noexcept nogil:
    """The row's label, scaled when L.y_scaling, as b"%.17g " at o; returns its bytes."""
    if L.y_scaling:
        # svm-scale's output_target: the ends first, then the line between them.
        if v == L.y_min:
            v = L.y_lower
        elif v == L.y_max:
            v = L.y_upper
        else:
            v = L.y_lower + (L.y_upper - L.y_lower) * (v - L.y_min) / (L.y_max - L.y_min)
    return snprintf(o, HEAD_MAX, b"%.17g ", v)


cdef inline Py_ssize_t _features_text(const Limits* L, const int32_t* indices,
                                      const double* data, Py_ssize_t k0, Py_ssize_t k1,
                                      char* o, int64_t* nnz) noexcept nogil:
    """The written features of the row whose entries are [k0, k1), in increasing j (the
    block comment): stored entries scaled, shifted features the row does not store
    copied as text; at o, returning its bytes and adding the features to nnz[0]."""
    cdef Py_ssize_t k, p = 0, q, n = 0
    cdef int64_t j
    cdef double v
    for k in range(k0, k1):
        j = <int64_t>indices[k] + 1
        # shifted features before j, which this row does not store: one copy
        q = p
        while q < L.n_shift and L.shifted[q] < j:
            q += 1
        if q > p:
            memcpy(o + n, &L.ztext[L.zoff[p]], L.zoff[q] - L.zoff[p])
            n += L.zoff[q] - L.zoff[p]
            nnz[0] += q - p
        p = q
        if p < L.n_shift and L.shifted[p] == j:
            p += 1              # stored here: scaled from its value below
        if j >= L.n_vars or L.vmin[j] == L.vmax[j]:
            continue
        v = _scaled(data[k], L.lower, L.upper, L.vmin[j], L.vmax[j])
        if v != 0.0:
            n += snprintf(o + n, FEATURE_MAX, b"%d:%g ", <int>j, v)
            nnz[0] += 1
    if p < L.n_shift:
        memcpy(o + n, &L.ztext[L.zoff[p]], L.zoff[L.n_shift] - L.zoff[p])
        n += L.zoff[L.n_shift] - L.zoff[p]
        nnz[0] += L.n_shift - p
    return n


def format_rows(Scaling scaling, const ptr_t[::1] indptr, const int32_t[::1] indices,
                const double[::1] data, const double[::1] labels, const int64_t[::1] qid,
                Py_ssize_t r0, unsigned char[::1] out):
    """Scaled text of rows r0, r0 + 1, ... of a chunk into `out`, as long as the next
    row surely fits; returns (rows written, bytes written, non-zeros written).

    A row is "label [qid:q ]" and then, in increasing j, the written features of
    the block comment; then "\n".  Features beyond len(vmin) - 1 are left out (not in
    a restored range file).  qid: None, or as long as labels.  (0, 0, 0) when the
    first row does not fit in `out`: the caller gives a buffer of at least
    scaling.row_bound(...) bytes.
    """
    cdef const Limits* L = &scaling.L
    cdef Py_ssize_t n_rows = indptr.shape[0] - 1
    cdef Py_ssize_t cap = out.shape[0]
    cdef Py_ssize_t zbytes = L.zoff[L.n_shift]
    cdef Py_ssize_t i, n = 0, need
    cdef int64_t nnz = 0
    cdef bint with_qid = qid is not None
    cdef char* o
    if labels.shape[0] < n_rows or (with_qid and qid.shape[0] < n_rows):
        raise ValueError("labels or qid shorter than the rows")
    if r0 < 0 or r0 > n_rows:
        raise ValueError("r0 out of range")
    if cap == 0:
        return 0, 0, 0
    o = <char*>&out[0]
    i = r0
    with nogil:
        while i < n_rows:
            need = HEAD_MAX + (indptr[i + 1] - indptr[i]) * FEATURE_MAX + zbytes + 1
            if n + need > cap:
                break
            n += _label_text(L, labels[i], o + n)
            if with_qid:
                n += snprintf(o + n, HEAD_MAX, b"qid:%lld ", <long long>qid[i])
            n += _features_text(L, &indices[0] if indices.shape[0] else NULL,
                                &data[0] if data.shape[0] else NULL, indptr[i], indptr[i + 1],
                                o + n, &nnz)
            o[n] = c'\n'
            n += 1
            i += 1
    return i - r0, n, nnz
