"""The CRC-32 of the binary data file's sections (docs/binary-format.md).

The sections' checksum is CRC-32 with zlib's polynomial (that of gzip and PNG), chained
over the chunks of a section: ``crc32(chunk, crc)``.  The reader computes it over every
byte of a file it opens and the writer over every byte it writes, so its speed is the
read phase's: zlib's table-driven loop runs at about 2 GB/s, while ISA-L's (the
``isal`` package of the fast-io extra), with the processor's carry-less multiply, runs
several times faster.  Both give the same value for the same bytes (the polynomial is
one, and tests/test_binfile.py checks the two against each other), so the choice changes
no file and only the time; zlib's is the fallback where isal is not installed.
"""
from __future__ import annotations

import zlib

__all__ = ["crc32", "implementation"]

_crc32 = None                           # chosen on the first call (start-up imports no isal)


def crc32(data, value=0):
    """zlib's CRC-32 of the bytes of `data` (any buffer) continued from `value`, the CRC
    of the bytes before them: ISA-L's where the fast-io extra is installed, else zlib's."""
    global _crc32
    if _crc32 is None:
        _crc32 = _fastest()
    return _crc32(data, value)


def implementation():
    """"isal" or "zlib": whose CRC-32 `crc32` runs."""
    return "zlib" if _fastest() is zlib.crc32 else "isal"


def _fastest():
    try:                                # the fast-io extra
        from isal.isal_zlib import crc32 as fast
    except ImportError:                 # pragma: no cover - depends on the environment
        return zlib.crc32
    return fast
