"""Parse once: the binary copy of a text data file in a cache directory, reused while the
file is unchanged (``--cache`` of linsvm-train, linsvm-cv and linsvm-predict, and
``LINSVM_CACHE=DIR``).

`cached(source)` gives the verified, mapped BinaryData of a binary copy of the SVM-light
text file `source` (plain or compressed): on first use it converts the file
(linsvm.io.convert, the lossless "auto" layout, qids kept, no instance weights) into
`cache_directory()`, under a name made of the file's base name and a hash of its
absolute path (symlinks resolved); later uses map that copy while the size and the
modification time (ns) of the file, kept in the copy's source record with its path, are
what they were when it was read.  A copy that is stale (the file changed, or another
file now has its path) or damaged (anything open_binary refuses) is never trusted: it is
converted again, with a note.  Standard input, binary files and anything but a regular
file are never cached (None: read them as they are).

One writer at a time: a conversion holds an exclusive lock on ``NAME.lock`` beside the
copy (linsvm.io.atomic.file_lock), checks again once it has the lock (another process
may have made the copy meanwhile) and writes the copy atomically, so concurrent runs on
one cache all succeed, with one conversion, and a reader never sees half a file (a copy
that is replaced while mapped stays whole for whoever mapped it).  A cache that cannot
be written (no such directory can be made, a full disk) is not an error: the note says
so and the caller reads the text itself.
"""
from __future__ import annotations

import hashlib
import os
import re
import stat

from ..errors import DataError
from .atomic import file_lock
from .binfile import is_binary_file, open_binary
from .binformat import SourceRecord
from .binwrite import WriteError
from .convert import convert

__all__ = ["cached", "open_data", "cache_directory", "cache_wanted", "cache_path", "ENV"]

ENV = "LINSVM_CACHE"
_SUFFIX = ".lsvm"


def cache_wanted(flag) -> bool:
    """Whether to cache: `flag` when given (``--cache`` True, ``--no-cache`` False), else
    whether LINSVM_CACHE is set (to a directory)."""
    return bool(os.environ.get(ENV)) if flag is None else bool(flag)


def cache_directory() -> str:
    """The cache directory: $LINSVM_CACHE, else $XDG_CACHE_HOME/linsvm (an absolute
    XDG_CACHE_HOME only, as its specification says), else ~/.cache/linsvm."""
    env = os.environ.get(ENV)
    if env:
        return os.path.abspath(os.path.expanduser(env))
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "linsvm")


def cache_path(source, directory=None) -> str:
    """Where the copy of `source` lives in `directory` (default cache_directory()): its
    base name (characters other than letters, digits, '.', '-', '_' as '_', at most 64)
    and 20 hex digits of the SHA-256 of its absolute path, symlinks resolved."""
    real = os.path.realpath(source)
    base = re.sub(r"[^A-Za-z0-9._-]", "_", os.path.basename(os.fsdecode(real)))[:64]
    digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:20]
    return os.path.join(directory or cache_directory(), f"{base}-{digest}{_SUFFIX}")


def _record(source):
    """The SourceRecord of `source` now, or None when it is not a regular text file."""
    try:
        st = os.stat(source)
    except (OSError, TypeError, ValueError):
        return None                 # the reader names the problem
    if not stat.S_ISREG(st.st_mode) or is_binary_file(source):
        return None
    return SourceRecord(os.fsencode(os.path.realpath(source)), st.st_size, st.st_mtime_ns)


def _look(path, record):
    """(BinaryData or None, why not): the copy at `path` if it is whole and made from
    `record`; else why it will be converted ("missing", "stale", or the damage)."""
    if not os.path.exists(path):
        return None, "missing"
    try:
        data = open_binary(path)
    except DataError as exc:
        return None, str(exc)
    if data.source != record:
        data.close()
        return None, "stale"
    return data, None


def cached(source, directory=None, note=None, progress=None):
    """The BinaryData of the up-to-date binary copy of text file `source` (module notes),
    converted now if there is none; None when `source` is not cached (standard input, a
    binary file, not a regular file) or the cache cannot be written (`note` says why).
    `note(text)`: told of conversions and of a cache that cannot be used;
    `progress(rows)`: rows converted so far.  Bad text raises the parser's DataError."""
    note = note or (lambda text: None)
    if isinstance(source, str) and source == "-":
        return None
    record = _record(source)
    if record is None:
        return None
    directory = directory or cache_directory()
    path = cache_path(source, directory)
    data, why = _look(path, record)
    if data is not None:
        return data
    name = os.fsdecode(os.fspath(source))
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
        with file_lock(path + ".lock"):
            data, why = _look(path, record)         # made meanwhile by another process?
            if data is not None:
                return data
            note(_conversion_note(name, path, why))
            convert(source, path, source_record=record, progress=progress)
    except (OSError, WriteError) as exc:
        what = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        note(f"cannot use the cache {directory}: {what}; reading {name} itself")
        return None
    return open_binary(path)


def _conversion_note(name, path, why):
    if why == "missing":
        return f"caching {name} in {path} (parsed once, mapped while the file is unchanged)"
    if why == "stale":
        return f"{name} changed since it was cached: converting it again into {path}"
    return f"the cached copy of {name} is damaged ({why}): converting it again"


def open_data(path, cache=None, note=None, progress=None):
    """The BinaryData to read data file `path` from: its binary copy in the cache when
    caching is wanted (`cache`: ``--cache`` True, ``--no-cache`` False, None:
    LINSVM_CACHE decides; `cached`, with `note` and `progress`), the file itself when
    it is a binary data file, else None (read it as text)."""
    if cache_wanted(cache):
        data = cached(path, note=note, progress=progress)
        if data is not None:
            return data
    return open_binary(path) if is_binary_file(path) else None
