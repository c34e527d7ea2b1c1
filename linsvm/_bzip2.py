"""bzip2 input decompressed block by block on several threads.

libbz2 decompresses one stream serially, and on a large .bz2 file that takes
most of the time of reading it.  But a bzip2 stream is a sequence of
independent blocks (see `linsvm._bz2blocks` for the format facts used), so
the blocks can be found by their magic numbers and shared out among threads:
thread i lays blocks i, i + n, i + 2n, ... one after another into a new
stream of its own and decompresses it with `bz2.BZ2Decompressor` (CPython's
bz2 module releases the GIL while it decompresses), handing out each block's
output as soon as that block is done; the caller parses them in order.

`split` only accepts input whose structure adds up exactly: every stream
starts with "BZh" and a level digit, each block starts where the previous one
ended, every stream ends in an end-of-stream magic whose combined CRC equals
the combination of its blocks' CRCs, and nothing but streams follows.  libbz2
checks every block's CRC while decompressing, and each thread's new stream
ends with the combined CRC of its blocks.  When anything is off (a chance
magic inside compressed data, a corrupt or truncated file, trailing bytes)
the caller falls back to the serial reader, which gives exactly the results
and messages of before.
"""
import bz2
import os
import queue
import threading

from . import _bz2blocks

__all__ = ["BadBlock", "split", "inflate_blocks", "n_threads"]


class BadBlock(Exception):
    """A block did not decompress cleanly."""


def n_threads():
    """Decompression threads to use: 2, or 1 on a single CPU or a busy machine.

    Two threads decompress while the caller parses.  A second thread only
    helps when a core is free for it: when the machine's load average already
    fills all but half a core, it gets no CPU time of its own and the two
    decompressors (3.6 MB of tables each) evict each other from the cache
    (measured: 1.6x the CPU time per block), so then one thread is used.
    """
    cpus = os.cpu_count() or 1
    if cpus < 2:
        return 1
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):
        load = 0.0
    return 2 if load < cpus - 0.5 else 1


_PIECE_BYTES = 1 << 16          # compressed bytes fed to libbz2 at a time


def _rotl1(x):
    return ((x << 1) | (x >> 31)) & 0xFFFFFFFF


def split(blob):
    """The blocks of the bzip2 data `blob` (one or more concatenated streams).

    Returns a list of ``(start_bit, end_bit, level, block_crc)``, one per
    block in order, bit offsets counted from the most significant bit of
    ``blob[0]``; ``[]`` for streams that hold no block.  Returns None unless
    the structure adds up exactly (see the module notes): then the caller must
    read `blob` serially.
    """
    magics = _bz2blocks.find_magics(blob)
    n_magics = len(magics)
    n = len(blob)
    n_bits = 8 * n
    blocks = []
    pos = 0                         # byte where the next stream starts
    k = 0                           # next entry of magics
    while pos < n:
        if blob[pos:pos + 3] != b"BZh" or pos + 4 > n or not 0x31 <= blob[pos + 3] <= 0x39:
            return None
        level = blob[pos + 3] - 0x30
        bit = (pos + 4) * 8
        combined = 0
        while True:
            # Chance matches overlapping a header or trailer are skipped; a real
            # magic starts exactly where the previous part ended.
            while k < n_magics and magics[k][0] < bit:
                k += 1
            if k == n_magics or magics[k][0] != bit or bit + 80 > n_bits:
                return None
            crc = _bz2blocks.read_bits(blob, bit + 48, 32)
            if magics[k][1] == _bz2blocks.EOS:
                if crc != combined:
                    return None
                pos = (bit + 80 + 7) // 8
                k += 1
                break
            if k + 1 == n_magics:
                return None
            end = magics[k + 1][0]
            if end < bit + 80:
                return None
            blocks.append((bit, end, level, crc))
            combined = _rotl1(combined) ^ crc
            k += 1
            bit = end
    return blocks


def _put(q, item, stop):
    """q.put(item), giving up when stop is set; False if it gave up."""
    while not stop.is_set():
        try:
            q.put(item, timeout=0.05)
            return True
        except queue.Full:
            pass
    return False


def _stream_tail(skip, combined):
    """The end of a stream whose first `skip` bits are already written: the
    48-bit end-of-stream magic and 32-bit combined CRC, then zero bits to a byte."""
    n = 80 - skip
    bits = ((_bz2blocks.EOS_MAGIC << 32) | combined) & ((1 << n) - 1)
    pad = -n % 8
    return (bits << pad).to_bytes((n + pad) // 8, "big")


def _decompress_share(blob, blocks, level, out, stop):
    """Decompress `blocks` (every k-th block of the input) as one new stream.

    The blocks' bits are laid one after another behind a header "BZh" + level
    (the largest level among them: the level only bounds a block's size), so
    one BZ2Decompressor, and one set of its tables, serves them all.  Each
    block is fed up to its last bit; the byte holding that bit is completed
    with the first bits of what follows, which are known: the next block's
    magic, or the end-of-stream magic.  Once libbz2 has given out all it can
    from that input, it has produced the block's whole output and checked
    its CRC (a block's run-length coding never continues into the next), so
    the output is put on `out` block by block.
    The stream is closed with the end-of-stream magic and the combination of
    these blocks' CRCs, and must then be complete; then None is put on `out`.
    A failure is put on `out` as BadBlock, and ends the thread.
    """
    try:
        d = bz2.BZ2Decompressor()
        d.decompress(b"BZh%d" % level)
        skip = 0                    # bits of this block's magic already fed
        combined = 0
        for i, (start, end, _, crc) in enumerate(blocks):
            if stop.is_set():
                return
            # Input and output go in pieces below glibc's mmap threshold (128 KiB
            # at first): freeing a larger block would raise that threshold and
            # leave every later megabyte-sized buffer resident after its use.
            parts = []
            carry = n_carry = 0
            pos = start + skip
            while pos < end:
                stop_bit = min(end, pos + 8 * _PIECE_BYTES)
                piece, carry, n_carry = _bz2blocks.append_bits(blob, pos, stop_bit,
                                                               carry, n_carry)
                pos = stop_bit
                skip = 0
                if pos == end and n_carry:
                    skip = 8 - n_carry
                    follow = _bz2blocks.BLOCK_MAGIC if i + 1 < len(blocks) \
                        else _bz2blocks.EOS_MAGIC
                    piece += bytes([(carry << skip) | (follow >> (48 - skip))])
                # With all input consumed, BZ2Decompressor returns what fits its
                # first output buffer (32 KiB) and keeps the rest for the next call.
                out_part = d.decompress(piece)
                while out_part:
                    parts.append(out_part)
                    out_part = d.decompress(b"")
            if not _put(out, parts, stop):
                return
            del parts
            combined = _rotl1(combined) ^ crc
        tail = d.decompress(_stream_tail(skip, combined))
        if tail or not d.eof or d.unused_data:
            raise BadBlock("blocks did not end their stream")
        _put(out, None, stop)       # the whole stream checked out
    except Exception as e:          # OSError, EOFError, ValueError, MemoryError ...
        _put(out, e if isinstance(e, BadBlock) else BadBlock(f"{type(e).__name__}: {e}"), stop)


def inflate_blocks(blob, blocks, threads, window=1):
    """Yield ``(parts, end_bit)`` for each block of `split(blob)`, in order:
    parts is a list of bytes objects (of 32 KiB at most) holding the block's
    decompressed data.

    Thread i of `threads` decompresses blocks i, i + threads, ... (see
    _decompress_share) and runs at most `window` finished blocks ahead of the
    consumer, so memory holds at most threads * (window + 1) + 1 decompressed
    blocks whatever the file's size.  Raises BadBlock when a block does not
    decompress cleanly, or, after the last block, when a thread's stream did
    not end as it should.  Closing the generator early stops the threads and
    waits for them.
    """
    if not blocks:
        return
    level = max(b[2] for b in blocks)
    stop = threading.Event()
    queues = [queue.Queue(maxsize=window) for _ in range(threads)]
    workers = [threading.Thread(target=_decompress_share, name=f"linsvm-bz2-{i}", daemon=True,
                                args=(blob, blocks[i::threads], level, queues[i], stop))
               for i in range(threads)]
    for w in workers:
        w.start()
    try:
        for k, block in enumerate(blocks):
            parts = queues[k % threads].get()
            if isinstance(parts, BaseException):
                raise parts
            yield parts, block[1]
            del parts
        for q in queues:            # each thread's stream must have ended cleanly
            status = q.get()
            if status is not None:
                raise status
    finally:
        stop.set()
        for q in queues:            # unblock a worker waiting to put
            while not q.empty():
                q.get_nowait()
        for w in workers:
            w.join()
