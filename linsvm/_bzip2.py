"""bzip2 input decompressed block by block on several threads.

libbz2 decompresses one stream serially, and on a large .bz2 file that takes
most of the time of reading it.  But a bzip2 stream is a sequence of
independent blocks (see `linsvm._bz2blocks` for the format facts used), so
the blocks can be found by their magic numbers, each re-framed as a one-block
stream, and decompressed by `bz2.BZ2Decompressor` on a thread pool (CPython's
bz2 module releases the GIL while it decompresses).

`split` only accepts input whose structure adds up exactly: every stream
starts with "BZh" and a level digit, each block starts where the previous one
ended, every stream ends in an end-of-stream magic whose combined CRC equals
the combination of its blocks' CRCs, and nothing but streams follows.  Each
re-framed block is decompressed with its block CRC checked by libbz2.  When
anything is off (a chance magic inside compressed data, a corrupt or
truncated file, trailing bytes) the caller falls back to the serial reader,
which gives exactly today's results and messages.
"""
import bz2
import collections
import itertools
import os
from concurrent.futures import ThreadPoolExecutor

from . import _bz2blocks

__all__ = ["BadBlock", "split", "inflate_blocks", "n_threads"]


class BadBlock(Exception):
    """A re-framed block did not decompress cleanly."""


def n_threads():
    """Decompression threads to use: two where there are two or more CPUs.

    Two threads decompress while the caller parses; more would only contend
    for the same cores on the small machines this is tuned for.
    """
    return min(2, os.cpu_count() or 1)


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


def _inflate(blob, block):
    """The decompressed data of one block, re-framed as a one-block stream."""
    start, end, level, crc = block
    stream = _bz2blocks.block_stream(blob, start, end, level, crc)
    d = bz2.BZ2Decompressor()
    try:
        data = d.decompress(stream)
    except (OSError, EOFError, ValueError) as e:
        raise BadBlock(str(e)) from e
    if not d.eof or d.unused_data:
        raise BadBlock("block did not end its stream")
    return data


def inflate_blocks(blob, blocks, threads, window):
    """Yield ``(data, end_bit)`` for each block of `split(blob)`, in order.

    Decompression runs on `threads` threads, at most `window` blocks ahead of
    the consumer, so memory holds at most window + 1 decompressed blocks
    whatever the file's size.  Raises BadBlock when a block does not
    decompress cleanly.  Closing the generator early cancels what is queued
    and waits for the blocks in progress.
    """
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="linsvm-bz2")
    pending = collections.deque()
    try:
        todo = iter(blocks)
        for block in itertools.islice(todo, window):
            pending.append((pool.submit(_inflate, blob, block), block[1]))
        while pending:
            future, end_bit = pending.popleft()
            data = future.result()
            block = next(todo, None)
            if block is not None:
                pending.append((pool.submit(_inflate, blob, block), block[1]))
            yield data, end_bit
            del data
    finally:
        for future, _ in pending:
            future.cancel()
        pool.shutdown(wait=True)
