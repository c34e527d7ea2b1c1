"""The standard streams as linsvm uses them, and the one check every write goes through.

`write_all(fh, data)` writes every byte of `data` to a binary file object of any kind.
A buffered writer (``io.BufferedWriter``: files linsvm opens, ``sys.stdout.buffer``
normally) takes everything or raises.  A raw one (``io.FileIO``: ``sys.stdout.buffer``
when Python runs unbuffered, ``PYTHONUNBUFFERED=1`` or ``python -u``) may take fewer
bytes than it is given and only say how many: on a nearly full disk, at a file-size
limit, or when a signal interrupts a write to a pipe.  The rest is written again, so
that the fault behind a short write (ENOSPC, EFBIG, EIO, EPIPE) is raised by the next
write instead of the data being dropped.  A non-blocking descriptor that cannot take
more yet (a raw write returning None) is waited for.  `CheckedWriter` is a binary file
object whose every write is `write_all` and whose OSErrors name the user's path.

`stdin_binary` and `stdout_binary` give ``sys.stdin.buffer`` and ``sys.stdout.buffer``,
or a one-line DataError when the stream is closed: a process started with its
descriptor 0 or 1 closed (the shell's ``<&-``, ``>&-``) has ``sys.stdin`` or
``sys.stdout`` set to None.  `print_lines` writes the results a command prints on
standard output (``linsvm-cv``'s table, ``linsvm-train -v``'s accuracy) through the
same check, flushed at once: a result that cannot be written is an error inside the
command, never lost at the interpreter's exit.  After a failed write to standard
output other than a closed pipe, `silence_stdout` points descriptor 1 at
``/dev/null``, so that the interpreter's final flush of what is still buffered
neither fails again nor prints.
"""
from __future__ import annotations

import contextlib
import errno
import os
import select
import sys

from ..errors import DataError

__all__ = ["CheckedWriter", "write_all", "renamed_error", "stdin_binary", "stdout_binary", "check_stdout", "print_lines",
           "silence_stdout", "STDIN_NAME", "STDOUT_NAME"]

STDIN_NAME = "<stdin>"
STDOUT_NAME = "<stdout>"


def write_all(fh, data) -> int:
    """Write all of `data` (bytes-like) to the binary file object `fh`; return its length.

    Each call of ``fh.write`` may take a prefix only (a raw stream's short write); the
    rest is written again until nothing is left, so the error behind a short write is
    raised by the next call.  A write that takes nothing is an OSError (EIO) rather
    than a loop; one that returns None (a non-blocking descriptor, full for now) is
    retried once the descriptor is writable.  A text stream's ``write`` (str) is
    passed through: text layers do not report partial writes.
    """
    if isinstance(data, str):
        fh.write(data)
        return len(data)
    view = memoryview(data)
    if view.ndim != 1 or view.itemsize != 1:
        view = view.cast("B")
    total = len(view)
    done = 0
    while done < total:
        n = fh.write(view[done:] if done else view)
        if n is None:
            _wait_writable(fh)
            continue
        if n <= 0:
            raise OSError(errno.EIO, "the write took no bytes")
        done += n
    return total


def _wait_writable(fh) -> None:
    try:
        fd = fh.fileno()
    except (AttributeError, OSError, ValueError):
        raise OSError(errno.EAGAIN, "the stream cannot take more data") from None
    select.select([], [fd], [])


def renamed_error(exc: OSError, name) -> OSError:
    """`exc` again with filename `name` (the user's path, never a temporary file); the
    errno keeps its subclass (EPIPE: BrokenPipeError)."""
    if exc.errno is None:
        return exc
    new = OSError(exc.errno, exc.strerror or os.strerror(exc.errno), os.fsdecode(name))
    new.__cause__ = None
    return new


class CheckedWriter:
    """A binary file object over `fh` whose writes are `write_all` (every byte, or an
    OSError) and whose OSErrors name `name`."""

    def __init__(self, fh, name):
        self._fh = fh
        self._name = name

    def write(self, data) -> int:
        try:
            return write_all(self._fh, data)
        except OSError as exc:
            raise renamed_error(exc, self._name) from None

    def flush(self) -> None:
        try:
            self._fh.flush()
        except OSError as exc:
            raise renamed_error(exc, self._name) from None

    def fileno(self) -> int:
        return self._fh.fileno()


class _TextSink:
    """A binary writer over a text-only stream (a ``sys.stdout`` replaced by one without
    ``.buffer``, as some embedding programs do): bytes are decoded as UTF-8."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, data) -> int:
        text = bytes(data).decode("utf-8", "surrogateescape")
        self._stream.write(text)
        return len(data)

    def flush(self) -> None:
        self._stream.flush()

    def fileno(self) -> int:
        return self._stream.fileno()


def stdin_binary():
    """``sys.stdin.buffer`` (or ``sys.stdin`` if it is binary already); DataError
    ``<stdin>: cannot read: standard input is closed`` when there is none."""
    stream = sys.stdin
    if stream is None:
        raise DataError(f"{STDIN_NAME}: cannot read: standard input is closed")
    return getattr(stream, "buffer", stream)


def check_stdout(what: str = "") -> None:
    """DataError ``<stdout>: cannot write WHAT: standard output is closed`` when it is:
    for a command to refuse before its work what it could not print after it."""
    if sys.stdout is None:
        what = f" {what}" if what else ""
        raise DataError(f"{STDOUT_NAME}: cannot write{what}: standard output is closed")


def stdout_binary():
    """A binary file object for standard output: ``sys.stdout.buffer`` after the text
    layer is flushed (so text written before comes first), or DataError
    ``<stdout>: cannot write: standard output is closed`` when there is none."""
    check_stdout()
    stream = sys.stdout
    flush = getattr(stream, "flush", None)
    if flush is not None:
        flush()
    buffer = getattr(stream, "buffer", None)
    return _TextSink(stream) if buffer is None else buffer


def silence_stdout() -> None:
    """Point descriptor 1 at /dev/null (after a failed write to standard output), so
    that the interpreter's final flush of the unwritten buffer neither fails nor prints."""
    with contextlib.suppress(OSError, ValueError, AttributeError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)


def print_lines(*lines: str) -> None:
    """Write `lines` (each followed by a newline) to standard output through
    `write_all` and flush them: an OSError names ``<stdout>`` (a closed pipe is a
    BrokenPipeError), a closed standard output is a DataError."""
    writer = CheckedWriter(stdout_binary(), STDOUT_NAME)
    try:
        writer.write("".join(line + "\n" for line in lines).encode("utf-8", "surrogateescape"))
        writer.flush()
    except OSError as exc:
        if not isinstance(exc, BrokenPipeError):
            silence_stdout()
        raise
