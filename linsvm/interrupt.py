"""Stopping compiled solves that run in other threads.

Every long loop in the compiled kernels polls for Ctrl-C (csrc/interrupt.pxd): on the
main thread it runs Python's signal handlers every few milliseconds of work, so Ctrl-C
raises KeyboardInterrupt out of the solve, which frees its work arrays as it unwinds.
Signals reach the main thread only, though: a solve running in a worker thread does not
see them.  Code that runs solves in worker threads therefore catches the
KeyboardInterrupt in the main thread and calls `stop_running_solves()`:

    try:
        results = [f.result() for f in futures]
    except KeyboardInterrupt:
        linsvm.interrupt.stop_running_solves()    # the workers' solves raise too
        raise

Each solve that had begun by then raises KeyboardInterrupt in its own thread at its
next check; solves begun afterwards run normally, so there is nothing to reset.
"""
from __future__ import annotations


def stop_running_solves():
    """Make every compiled solve running now, in any thread, stop and raise KeyboardInterrupt."""
    from . import _alm, _dcd, _mfn, _perf, _sdm

    for module in (_alm, _dcd, _mfn, _perf, _sdm):
        module.request_stop()
