"""bzip2 block boundaries: the compiled bit scanner and bit copier.

This module is private; `linsvm._bzip2` is its only user.

Facts of the bzip2 format (as written by bzip2/libbz2 1.0) this relies on:

* A stream starts with the bytes "BZh" and a level digit '1'..'9' (block size
  level * 100 000 bytes before the Burrows-Wheeler transform).
* Then come blocks, packed MSB-first with no byte alignment: each starts with
  the 48-bit magic 0x314159265359, followed by the 32-bit CRC of the block's
  uncompressed data.  A block is decoded from its own bits alone.
* The stream ends with the 48-bit magic 0x177245385090, the 32-bit combined
  CRC (for each block in order: combined = rotl1(combined) ^ block_crc,
  starting from 0), then zero bits up to a byte boundary.  Another stream
  may follow (pbzip2 and `cat a.bz2 b.bz2` write such files).

The magics may also occur by chance inside compressed data; the caller must
check that the blocks found add up (see `linsvm._bzip2`).
"""

from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING
from cpython.mem cimport PyMem_RawRealloc, PyMem_RawFree
from libc.stdint cimport int64_t, uint16_t, uint32_t, uint64_t
from libc.string cimport memcpy

cdef uint64_t C_BLOCK_MAGIC = 0x314159265359ULL
cdef uint64_t C_EOS_MAGIC = 0x177245385090ULL
cdef uint64_t MASK48 = 0xFFFFFFFFFFFFULL

# Kinds of magic reported by find_magics(), and the magics themselves.
BLOCK = 0
EOS = 1
BLOCK_MAGIC = C_BLOCK_MAGIC
EOS_MAGIC = C_EOS_MAGIC

# CANDIDATES[v]: which (kind, shift) placements of a magic are possible when the
# byte after the one where the magic starts has value v.  A magic starting at bit
# s (0..7, counted from the most significant bit) of byte i covers bits
# 8 - s .. 15 - s of itself with byte i + 1, i.e. byte i + 1 must equal
# (magic >> (32 + s)) & 0xFF.  Bit kind * 8 + s is set for each match.
cdef uint16_t CANDIDATES[256]


cdef void _init_candidates() noexcept nogil:
    cdef int s, v
    for v in range(256):
        CANDIDATES[v] = 0
    for s in range(8):
        CANDIDATES[(C_BLOCK_MAGIC >> (32 + s)) & 0xFF] |= <uint16_t>(1 << s)
        CANDIDATES[(C_EOS_MAGIC >> (32 + s)) & 0xFF] |= <uint16_t>(1 << (8 + s))


_init_candidates()


cdef inline uint64_t _window(const unsigned char* b, Py_ssize_t i, Py_ssize_t n) noexcept nogil:
    """Bytes b[i .. i+7] as a big-endian integer, zeros past the end n."""
    cdef uint64_t w = 0
    cdef Py_ssize_t k
    for k in range(8):
        w <<= 8
        if i + k < n:
            w |= b[i + k]
    return w


cdef Py_ssize_t _scan(const unsigned char* b, Py_ssize_t n, int64_t** out,
                      Py_ssize_t* cap) noexcept nogil:
    """Append the bit offset * 2 + kind of every magic in b[:n] to out[0].

    Returns the number found, or -1 when memory runs out.  One table look-up
    per byte; only candidate bytes (about 16 values in 256) are checked in full.
    """
    cdef Py_ssize_t i, count = 0, newcap
    cdef int64_t bit
    cdef uint64_t w
    cdef unsigned int c
    cdef int s
    cdef void* q
    for i in range(n - 1):
        c = CANDIDATES[b[i + 1]]
        if c == 0:
            continue
        w = _window(b, i, n)
        for s in range(8):
            if ((c >> s) & 0x101) == 0:
                continue
            bit = <int64_t>i * 8 + s
            if bit + 48 > <int64_t>n * 8:
                break
            # magic bits = w's bits 63 - s .. 16 - s
            if ((c >> s) & 1) and ((w >> (16 - s)) & MASK48) == C_BLOCK_MAGIC:
                bit = bit * 2 + 0
            elif ((c >> (8 + s)) & 1) and ((w >> (16 - s)) & MASK48) == C_EOS_MAGIC:
                bit = bit * 2 + 1
            else:
                continue
            if count == cap[0]:
                newcap = cap[0] * 2 + 64
                q = PyMem_RawRealloc(out[0], newcap * sizeof(int64_t))
                if q == NULL:
                    return -1
                out[0] = <int64_t*>q
                cap[0] = newcap
            out[0][count] = bit
            count += 1
    return count


def find_magics(const unsigned char[::1] buf):
    """Every place where a bzip2 block magic (0x314159265359) or end-of-stream
    magic (0x177245385090) starts, at any bit offset, in increasing order.

    Returns a list of (bit_offset, kind) with kind BLOCK (0) or EOS (1); bit
    offsets count from the most significant bit of buf[0].  Every occurrence is
    reported, including chance ones inside compressed data.  The scan runs
    without the GIL.
    """
    cdef Py_ssize_t n = buf.shape[0]
    cdef int64_t* found = NULL
    cdef Py_ssize_t cap = 0, count = 0, k
    if n < 2:
        return []
    try:
        with nogil:
            count = _scan(&buf[0], n, &found, &cap)
        if count < 0:
            raise MemoryError()
        return [(found[k] >> 1, <int>(found[k] & 1)) for k in range(count)]
    finally:
        PyMem_RawFree(found)


cdef inline uint64_t _get_bits(const unsigned char* b, int64_t pos, int nb) noexcept nogil:
    """nb (<= 56) bits of b starting at bit pos, MSB first (the bits must exist)."""
    cdef uint64_t v = 0
    cdef int k
    for k in range(nb):
        v = (v << 1) | ((b[(pos + k) >> 3] >> (7 - ((pos + k) & 7))) & 1)
    return v


def read_bits(const unsigned char[::1] buf, int64_t pos, int count):
    """The count (0..56) bits of buf starting at bit pos, MSB first, as an int."""
    if count < 0 or count > 56 or pos < 0 or pos + count > <int64_t>buf.shape[0] * 8:
        raise ValueError("bits out of range")
    if count == 0:
        return 0
    return _get_bits(&buf[0], pos, count)


cdef struct _BitWriter:
    unsigned char* p
    uint64_t acc
    int n


cdef inline void _put(_BitWriter* w, uint64_t v, int nb) noexcept nogil:
    """Append the nb (<= 32) low bits of v."""
    w.acc = (w.acc << nb) | (v & ((1ULL << nb) - 1))
    w.n += nb
    while w.n >= 8:
        w.n -= 8
        w.p[0] = <unsigned char>(w.acc >> w.n)
        w.p += 1


def append_bits(const unsigned char[::1] buf, int64_t start, int64_t end,
                uint64_t carry, int n_carry):
    """Bytes holding the n_carry (0..7) low bits of carry, then bits [start, end)
    of buf, MSB first.

    Returns ``(data, carry, n_carry)``: the whole bytes, and the fewer than 8
    bits left over (low bits of the new carry) that start the next piece.
    This is how blocks found at arbitrary bit offsets are laid one after the
    other into a new stream.  The copy runs without the GIL.
    """
    cdef int64_t n_bits = end - start
    cdef int64_t total
    cdef Py_ssize_t k, j, n_full
    cdef int s, m, rest
    cdef const unsigned char* b
    cdef unsigned char* o
    cdef _BitWriter w
    if n_carry < 0 or n_carry > 7 or start < 0 or n_bits < 0 \
            or end > <int64_t>buf.shape[0] * 8:
        raise ValueError("bits out of range")
    total = n_carry + n_bits
    out = PyBytes_FromStringAndSize(NULL, total >> 3)
    o = <unsigned char*>PyBytes_AS_STRING(out)
    b = &buf[0] if buf.shape[0] > 0 else NULL
    with nogil:
        w.p = o
        w.acc = 0
        w.n = 0
        _put(&w, carry, n_carry)
        # fill the carry's byte, then copy byte-aligned output in bulk
        m = (8 - n_carry) & 7
        if m > n_bits:
            m = <int>n_bits
        if m:
            _put(&w, _get_bits(b, start, m), m)
        start += m
        n_bits -= m
        n_full = n_bits >> 3
        rest = n_bits & 7
        if n_full:
            k = start >> 3
            s = start & 7
            if s == 0:
                memcpy(w.p, b + k, n_full)
            else:
                # output byte j = low 8 - s bits of b[k + j], high s bits of the next
                for j in range(n_full):
                    w.p[j] = <unsigned char>((b[k + j] << s) | (b[k + j + 1] >> (8 - s)))
            w.p += n_full
        # the leftover bits: with w.n == 0 here unless all input fit in the carry's byte
        if rest:
            _put(&w, _get_bits(b, start + n_full * 8, rest), rest)
    return out, w.acc & ((1ULL << w.n) - 1), w.n
