"""Ctrl-C from a program's first instruction: `interrupted` and exit status 130.

Python's own SIGINT handler raises KeyboardInterrupt wherever the main thread is.
Once a command's body runs, that is what linsvm wants: the body catches it, stops
the solves, removes its temporary files and prints ``interrupted``
(linsvm.cli.failures).  Before that -- while the console script imports the
command line, its options are parsed, NumPy loads -- there is nothing to clean up,
and a KeyboardInterrupt would end in a traceback of the import in progress.  So:

* `arrange()` is the first thing an entry point does (linsvm/__main__.py, before it
  imports anything else of linsvm): unless SIGINT is ignored (``nohup``, a shell
  script's background job: it stays ignored), it installs `exit_interrupted`,
  which prints ``interrupted`` and ends the process at once with status 130, and
  unblocks SIGINT, so that a Ctrl-C that arrived while it was blocked is handled
  here, not lost;
* `in_command()` brackets a command's body: a KeyboardInterrupt inside, as Python's
  handler raises it, so that the body's own cleanup runs -- with a watchdog that ends
  the process CLEANUP_GRACE seconds later if the interrupt was swallowed on its way;
  `exit_interrupted` again after it, until the process ends;
* `end_at_once_in_command()`, on a rank of an MPI job: inside the command's body too,
  Ctrl-C ends the process at once, as `exit_interrupted` does (below).

A library caller of linsvm (``import linsvm``) never runs `arrange`, so its signal
handling is its own.  This module imports nothing but the standard library's
os, signal, sys and threading (docs/design.md, "Ctrl-C at start-up").
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

__all__ = ["arrange", "in_command", "end_at_once_in_command", "exit_interrupted",
           "run_module_main", "EXIT_INTERRUPTED"]

EXIT_INTERRUPTED = 130          # 128 + SIGINT, the shell's status of a Ctrl-C'd program


def exit_interrupted(signum=None, frame=None):
    """SIGINT handler outside a command's body: what was printed stays printed, then
    ``interrupted`` on stderr and exit 130 at once (nothing to clean up, no traceback)."""
    with contextlib.suppress(BaseException):       # e.g. a write in progress: skip it
        sys.stdout.flush()
    with contextlib.suppress(OSError):
        os.write(2, b"interrupted\n")
    os._exit(EXIT_INTERRUPTED)


def arrange():
    """Install exit_interrupted for SIGINT, unless SIGINT is ignored or has a handler
    of the embedding program's; then unblock SIGINT (one blocked until now arrives
    here).  The first call of an entry point (module notes)."""
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return
    signal.signal(signal.SIGINT, exit_interrupted)
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})


def run_module_main(main):
    """Run `python -m linsvm`'s entry point; an exit with status 130 (a command that
    caught Ctrl-C and cleaned up) ends the process at once with that status.

    CPython 3.11 run with -m remembers a KeyboardInterrupt that left any exec()'d or
    eval()'d string -- dataclasses and namedtuple build their methods that way while
    a module imports -- as "unhandled" for the rest of the run, even when the command
    caught it, and after finalizing ends the process by SIGINT (status -2) instead of
    the status the command chose.  A script run as a file (the console scripts) keeps
    its status, so only this entry point needs the shortcut."""
    try:
        main()
    except SystemExit as exc:
        if exc.code != EXIT_INTERRUPTED:
            raise
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(EXIT_INTERRUPTED)


@contextlib.contextmanager
def in_command():
    """Python's KeyboardInterrupt inside the block (a command's body, which cleans up
    and prints ``interrupted`` itself), exit_interrupted again after it -- when
    arrange() installed it; otherwise nothing changes."""
    if signal.getsignal(signal.SIGINT) is not exit_interrupted:
        yield
        return
    signal.signal(signal.SIGINT, _interrupt_command)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, exit_interrupted)


def end_at_once_in_command():
    """On a rank of an MPI job, inside a command's body: Ctrl-C prints ``interrupted``
    and ends this rank at once with status 130 (exit_interrupted) instead of raising
    KeyboardInterrupt -- when in_command() installed its handler; otherwise nothing
    changes.

    A KeyboardInterrupt raised wherever the main thread is would surface inside the
    collectives of a distributed solve: in the Python method a compiled kernel calls
    for an allreduce (which cannot pass it on: "Exception ignored", and this rank goes
    on out of step with the others, to MPICH's "Message truncated"), or between two
    collectives, which aborts the job.  There is nothing a rank needs to undo: MPI's
    launcher delivers the Ctrl-C to every rank, and the model's atomic writer renames
    a complete file into place or leaves the target as it was (an unfinished
    temporary file is anonymous, or swept by the next write, linsvm.io.atomic).
    mpiexec then exits 130 with one ``interrupted`` per rank that ran its handler
    before the launcher ended it: a rank waiting inside MPI for one that has ended
    runs no Python handler, and the launcher ends it, so one line may stand for all."""
    if signal.getsignal(signal.SIGINT) is _interrupt_command:
        signal.signal(signal.SIGINT, exit_interrupted)


# Seconds a command has, after a Ctrl-C, to clean up and end by itself.
CLEANUP_GRACE = 10.0


def _interrupt_command(signum, frame):
    """SIGINT inside a command's body: KeyboardInterrupt, as Python's handler raises it,
    and a watchdog that ends the process as exit_interrupted does if the command is
    still running CLEANUP_GRACE seconds later.  A KeyboardInterrupt can be swallowed: one
    raised while a module is being imported can reach an `except Exception` as the
    RuntimeError Python wraps it in (a descriptor's __set_name__), and the command then
    goes on -- e.g. to wait on its standard input for ever."""
    watchdog = threading.Timer(CLEANUP_GRACE, exit_interrupted)
    watchdog.daemon = True
    watchdog.start()
    raise KeyboardInterrupt
