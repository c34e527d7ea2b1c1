"""Writing output files atomically, and checking output paths before the work.

Every file linsvm writes (models, data from ``dump_svmlight`` and ``linsvm
synth``, predictions) goes through `atomic_output`, so all of them share one
policy:

* A regular file (new, or an existing one, followed through symlinks) is
  written to a temporary file in the target's directory, flushed, fsync'ed,
  given the target's permission bits (a new file: 0o666 minus the umask) and
  renamed over the target; the directory is then fsync'ed so that the rename
  itself is durable.  On any failure (an exception, Ctrl-C) the temporary file
  is removed and an existing target is left untouched.
* Where the filesystem offers ``O_TMPFILE`` (Linux: ext4, xfs, btrfs, tmpfs,
  ...), the temporary file has no name while it is written: a process killed
  by SIGKILL, SIGTERM or a power cut leaves nothing behind.  A new target is
  linked into place directly, with no name in between; over an existing
  target, the file gets a name (``.NAME.linsvm-HOST-PID-XXXXXXXX.tmp``, through
  ``/proc/self/fd``) only for the final rename, a window of two system calls
  (Linux cannot link over an existing name).
* Elsewhere the temporary file has that name from the start.
* Each write first removes the named leftovers of earlier writes to the same
  target by dead processes of this host (the name carries the host tag and
  the process id), so the rare leftover of a killed run is cleaned up by the
  next one.
* An existing target that is not a regular file (``/dev/null``, ``/dev/full``,
  a FIFO, a terminal) is written in place: renaming over it would replace the
  device node.
* Every write is checked to the last byte (`linsvm.io.streams.write_all`): a
  short write of an unbuffered stream, standard output under
  ``PYTHONUNBUFFERED=1`` say, is completed or its error (ENOSPC, EFBIG, EIO,
  EPIPE) raised, never dropped.
* Errors name the user's path, never the temporary one: an ``OSError`` from
  writing is raised again with ``filename`` set to the target.

`check_output_path` checks, before a long computation, what can be checked
about an output path: that it is not ``-`` where that is not allowed, not a
directory, not one of the command's input files, that its directory exists
and that a file can be created there, and that an existing target is
writable.  `check_outputs` does that for every output of a command at once and
also refuses two outputs that are the same file.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
import sys
import zlib

from ..errors import DataError, ParameterError
from .streams import STDOUT_NAME, CheckedWriter, renamed_error, silence_stdout, stdout_binary

__all__ = ["atomic_output", "check_output_path", "check_outputs", "same_target", "is_special_file",
           "scratch_file", "file_lock", "write_atomically"]

# O_TMPFILE files are named through /proc/self/fd (linkat): both are needed.
_O_TMPFILE = getattr(os, "O_TMPFILE", 0) if os.path.isdir("/proc/self/fd") else 0


def _host_name() -> str:
    """The machine's network name (uname's nodename, socket.gethostname's answer; the
    socket module only where there is no uname)."""
    try:
        return os.uname().nodename
    except AttributeError:
        import socket
        return socket.gethostname()


_HOST_TAG = f"{zlib.crc32(_host_name().encode('utf-8', 'replace')):08x}"
_TEMP_SUFFIX = ".tmp"


def _new_file_mode() -> int:
    """Permission bits a newly created file gets (0o666 minus the umask)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def is_special_file(path) -> bool:
    """True if `path` exists and is neither a regular file nor a directory (device, FIFO, ...)."""
    try:
        mode = os.stat(path).st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _temp_prefix(base: str) -> str:
    """Start of the temporary names for target basename `base` (host tag included)."""
    return f".{base}.linsvm-{_HOST_TAG}-"


def _temp_name(directory: str, base: str) -> str:
    return os.path.join(directory, f"{_temp_prefix(base)}{os.getpid()}-{os.urandom(4).hex()}{_TEMP_SUFFIX}")


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:          # EPERM: alive, someone else's
        return True
    return True


def _sweep_stale(directory: str, base: str) -> None:
    """Remove temporary files for `base` left by dead processes of this host."""
    prefix = _temp_prefix(base)
    try:
        names = [n for n in os.listdir(directory) if n.startswith(prefix) and n.endswith(_TEMP_SUFFIX)]
    except OSError:
        return
    for name in names:
        pid_text = name[len(prefix):-len(_TEMP_SUFFIX)].split("-", 1)[0]
        if pid_text.isdigit() and not _pid_alive(int(pid_text)):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, name))


def _fsync_dir(directory: str) -> None:
    """Make a rename in `directory` durable (not every platform can open a directory)."""
    with contextlib.suppress(OSError, AttributeError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


class _Target:
    """A regular-file target resolved once: real path, directory, base name and mode."""

    def __init__(self, path):
        self.user_path = os.fspath(path)
        real = os.path.realpath(self.user_path)       # through a symlink: replace what it names
        self.path = real
        self.directory, self.base = os.path.split(real)
        self.base = os.fsdecode(self.base)
        self.directory = os.fsdecode(self.directory)
        try:
            st = os.stat(real)
        except FileNotFoundError:
            st = None
        self.exists = st is not None
        self.mode = stat.S_IMODE(st.st_mode) if st is not None else _new_file_mode()


def _link_fd(fd: int, path: str) -> None:
    """Give the anonymous (O_TMPFILE) file open as `fd` the name `path` (linkat).

    os.link without a directory fd calls link(2), which does not follow the
    /proc/self/fd symlink; passing one makes it call linkat with AT_SYMLINK_FOLLOW.
    """
    directory, base = os.path.split(path)
    dfd = os.open(directory or ".", os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.link(f"/proc/self/fd/{fd}", base, dst_dir_fd=dfd, follow_symlinks=True)
    finally:
        os.close(dfd)


def _claim_temp_name(target, create, what):
    """(name, create(name)) for a fresh temporary name beside `target`: create raises
    FileExistsError when the name is taken, and another random name is tried."""
    for _ in range(100):
        name = _temp_name(target.directory, target.base)
        try:
            return name, create(name)
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, what, target.user_path)


class _TempFile:
    """The temporary file behind one atomic write (anonymous when O_TMPFILE works)."""

    def __init__(self, target: _Target):
        self.target = target
        self.name = None                 # set when the file has a name in the directory
        fd = -1
        _sweep_stale(target.directory, target.base)
        if _O_TMPFILE:
            try:
                fd = os.open(target.directory, _O_TMPFILE | os.O_WRONLY | getattr(os, "O_CLOEXEC", 0),
                             target.mode)
            except OSError as exc:
                # Filesystem or kernel without O_TMPFILE: fall back to a named file.
                if exc.errno not in (errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                    raise
                fd = -1
        if fd < 0:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0) \
                | getattr(os, "O_CLOEXEC", 0)
            self.name, fd = _claim_temp_name(target, lambda name: os.open(name, flags, 0o600),
                                             "cannot create a temporary file")
        self.fd = fd

    def commit(self) -> None:
        """fsync, set the mode, and move the file into place."""
        t = self.target
        os.fsync(self.fd)
        os.fchmod(self.fd, t.mode)
        if self.name is None:
            if not t.exists:
                try:
                    _link_fd(self.fd, t.path)      # atomic create, no name in between
                    return
                except FileExistsError:
                    pass                       # appeared meanwhile: replace it below
            self.name, _ = _claim_temp_name(t, lambda name: _link_fd(self.fd, name),
                                            "cannot name the temporary file")
        os.replace(self.name, t.path)
        self.name = None

    def discard(self) -> None:
        if self.name is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.name)
            self.name = None


def _call(path, func, *args):
    try:
        return func(*args)
    except OSError as exc:
        raise renamed_error(exc, path) from None


@contextlib.contextmanager
def atomic_output(path, *, stdout_ok: bool = False):
    """Context manager yielding a binary file object whose contents replace `path`.

    On normal exit the data are flushed, fsync'ed and renamed over `path` (see
    the module docstring); on an exception nothing is left behind and an
    existing `path` is unchanged.  A non-regular existing `path` (device,
    FIFO) is written in place.  With `stdout_ok`, ``"-"`` writes
    ``sys.stdout.buffer`` (flushed at the end, not closed; a closed standard
    output is a DataError).  Every write goes through
    `linsvm.io.streams.write_all`, so a short write of an unbuffered stream is
    completed or its error raised.  An ``OSError`` from writing is raised with
    ``filename`` = `path` (``<stdout>`` for ``-``); exceptions from the caller's
    own code pass through unchanged.
    """
    if stdout_ok and isinstance(path, str) and path == "-":
        w = CheckedWriter(stdout_binary(), STDOUT_NAME)
        try:
            yield w
            w.flush()
        except OSError as exc:
            if not isinstance(exc, BrokenPipeError):
                silence_stdout()
            raise
        return
    if is_special_file(path):
        fh = _call(path, open, path, "wb")
        w = CheckedWriter(fh, path)
        try:
            yield w
            w.flush()
        finally:
            with contextlib.suppress(OSError):
                fh.close()
        return
    target = _call(path, _Target, path)
    tmp = _call(path, _TempFile, target)
    fh = open(tmp.fd, "wb", closefd=False)
    committed = False
    try:
        yield CheckedWriter(fh, path)
        _call(path, fh.flush)
        _call(path, tmp.commit)
        committed = True
    finally:
        with contextlib.suppress(OSError):
            fh.close()
        if not committed:
            tmp.discard()
        os.close(tmp.fd)
    _fsync_dir(target.directory)


def _same_file(a, b) -> bool:
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError, TypeError):
        return False


def check_output_path(path, *, what: str = "output file", inputs=(), stdout_ok: bool = False) -> None:
    """Raise ParameterError now if writing `path` later is certain to fail or to do harm.

    Checks: ``"-"`` only when `stdout_ok`; not a directory; not the same file
    as any of `inputs` (paths read by the same command: writing the model over
    the training data is refused); the directory exists, is a directory, and a
    file can be created in it (probed with an anonymous or at once removed
    temporary file); an existing regular target is writable.  Messages name
    `what` and the user's `path`.
    """
    text = os.fsdecode(os.fspath(path))
    if text == "-":
        if stdout_ok:
            if sys.stdout is None:
                raise ParameterError(f"cannot write {what} '-': standard output is closed")
            return
        raise ParameterError(f"{what} '-': standard output is not available here; give a file name")
    where = f"cannot write {what} '{text}'"
    if text == "":
        raise ParameterError(f"{what}: empty file name")
    if os.path.isdir(path):
        raise ParameterError(f"{where}: it is a directory")
    for other in inputs:
        if other is not None and os.fsdecode(os.fspath(other)) != "-" and _same_file(path, other):
            raise ParameterError(f"{where}: it is the input file '{os.fsdecode(os.fspath(other))}' "
                                 "(refusing to overwrite it)")
    if is_special_file(path):
        if not os.access(path, os.W_OK):
            raise ParameterError(f"{where}: permission denied")
        return
    target = _Target(path)
    if not os.path.isdir(target.directory):
        if os.path.exists(target.directory):
            raise ParameterError(f"{where}: '{target.directory}' is not a directory")
        raise ParameterError(f"{where}: directory '{os.path.dirname(text) or '.'}' "
                             "does not exist")
    if target.exists and not os.access(target.path, os.W_OK):
        raise ParameterError(f"{where}: the file is read-only")
    try:
        tmp = _TempFile(target)
    except OSError as exc:
        raise ParameterError(f"{where}: {exc.strerror or exc}") from None
    tmp.discard()
    os.close(tmp.fd)


def same_target(a, b) -> bool:
    """Whether output paths `a` and `b` would write the same file: both ``-``; the same
    existing file (through symlinks and hard links); or, for names not yet there, the
    same resolved path (relative or absolute, through symlinked directories and a
    dangling symlink)."""
    a, b = os.fsdecode(os.fspath(a)), os.fsdecode(os.fspath(b))
    if a == "-" or b == "-":
        return a == b
    return _same_file(a, b) or os.path.realpath(a) == os.path.realpath(b)


def check_outputs(outputs, inputs=()) -> None:
    """check_output_path for every ``(path, what, stdout_ok)`` of `outputs` (entries
    whose path is None are left out) against all of `inputs`, and that no two outputs
    are the same file (`same_target`): everything a command will write, checked at
    once before it reads or writes anything."""
    seen = []
    for path, what, stdout_ok in outputs:
        if path is None:
            continue
        check_output_path(path, what=what, inputs=inputs, stdout_ok=stdout_ok)
        for other, other_what in seen:
            if same_target(path, other):
                raise ParameterError(f"cannot write {what} '{os.fsdecode(os.fspath(path))}': it is "
                                     f"the same file as the {other_what} "
                                     f"'{os.fsdecode(os.fspath(other))}'; give two different names")
        seen.append((path, what))


def write_atomically(path, write):
    """Call write(fh) on a binary file whose contents replace `path` (atomic_output).

    On any failure nothing is left behind and path is left as it was; an
    existing symlink is followed, an existing device or FIFO written in place.
    Write errors become DataError naming `path`.
    """
    name = os.fsdecode(os.fspath(path))
    try:
        with atomic_output(path) as fh:
            write(fh)
    except OSError as e:
        raise DataError(f"{name}: cannot write: {e.strerror or e}") from e


def scratch_file(directory=None):
    """An anonymous temporary file (binary, read/write) in `directory` (default: the
    system's temporary directory, ``TMPDIR``), removed when closed or when the process
    ends: scratch space such as a copy of standard input read twice (``linsvm scale``)
    or the side files of a binary data file being written (beside it, so that they are
    copied within one file system), never an output file."""
    import tempfile                 # here: its imports (shutil, random) cost every command
    return tempfile.TemporaryFile(dir=directory)


@contextlib.contextmanager
def file_lock(path):
    """Hold an exclusive lock (flock) on the lock file `path`, created if absent (and
    left in place: removing it would let two processes lock two files of one name).
    Blocks until the lock is free; released when the block ends, or when the process
    does, however it ends.  For one writer among processes that share a file (the
    cache, linsvm.io.cache)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                # closing the last descriptor releases the lock
