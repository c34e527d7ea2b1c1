"""Ending a finished command-line process without tearing the interpreter down.

When a command of the command line has finished (its files closed, its output
written), CPython's exit does four things: it joins the threads still running, runs
the atexit callbacks, flushes the standard streams, and then tears down every module
(NumPy's and linsvm's), freeing memory the operating system takes back anyway. The
last step costs tens of milliseconds on every run of a program that users call in
shell loops (docs/benchmarks.md, "Start-up").  `finish(status)`, with no other thread
running, runs the callbacks and flushes the streams itself, then ends the process with
os._exit(status): only the teardown is skipped.

It returns instead, leaving the whole normal exit to Python, when finishing early
could change what the process does:

- `start` was not called (linsvm's code running inside another program);
- a tracer or profiler is set (cProfile and debuggers report after the program
  returns; coverage's report runs from atexit and would be kept);
- a thread other than the main one is alive;
- the standard streams are not the process's own (an embedding program redirected
  them), or flushing them fails (Python's exit reports that as it always does);
- the status is neither None nor an int in 0..255, or Python runs in dev mode.

A file the command left open and unflushed would lose its buffer: linsvm's writers
close their files before the command returns (linsvm.io.atomic).
"""
from __future__ import annotations

import atexit
import os
import sys
import threading

_started = False


def start():
    """Mark the process as a linsvm program: `finish` may end it early."""
    global _started
    _started = True


def finish(status):
    """End the process with `status` (SystemExit's code: None or an int) after running
    the atexit callbacks and flushing the standard streams; return without doing
    anything when the module notes say the normal exit must run."""
    if not _started or sys.flags.dev_mode:
        return
    if status is None:
        status = 0
    if isinstance(status, bool) or not isinstance(status, int) or not 0 <= status <= 255:
        return
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return
    if threading.active_count() != 1:
        return
    if sys.stdout is not sys.__stdout__ or sys.stderr is not sys.__stderr__:
        return
    run_exitfuncs = getattr(atexit, "_run_exitfuncs", None)
    if run_exitfuncs is None or not _flushed():
        return
    run_exitfuncs()
    if _flushed():
        os._exit(status)


def _flushed():
    """Flush the standard streams; False if that failed (the normal exit then reports it)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except BaseException:
        return False
    return True
