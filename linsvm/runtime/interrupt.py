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
        linsvm.runtime.interrupt.stop_running_solves()    # the workers' solves raise too
        raise

Each solve that had begun by then raises KeyboardInterrupt in its own thread at its
next check; solves begun afterwards run normally, so there is nothing to reset.
`run_in_threads` does this for the two places that run solves on threads: the columns
of a one-vs-rest run (linsvm.fit.ovr) and the folds of a cross-validation (linsvm.fit.cv).
"""
from __future__ import annotations

import sys
import threading


def stop_running_solves():
    """Make every compiled solve running now, in any thread, stop and raise KeyboardInterrupt.

    The compiled cores share one stop generation (csrc/interrupt.pxd), kept by the data
    view's module, linsvm._data; its `request_stop()` bumps it.  If that module was never
    imported, no solve runs."""
    data = sys.modules.get("linsvm._data")
    if data is not None:
        data.request_stop()


class Cancelled(Exception):
    """Raised by a task of run_in_threads that saw its run cancelled (and stopped early)."""


def run_in_threads(task, n_items, jobs, cancel=None):
    """[task(i) for i in range(n_items)] on `jobs` threads (serially when jobs <= 1).

    Items are dealt in order from a shared counter, so the results do not depend on
    `jobs` when the tasks are independent.  When a task raises, no further item is
    dealt, `cancel` (a threading.Event, if given) is set so that running tasks that do
    several things can stop between them (by raising Cancelled), and once every thread
    has finished the error of the lowest item is raised.  Ctrl-C (KeyboardInterrupt in
    the main thread, the only one signals reach) does the same and also stops the
    compiled solves running in the workers (stop_running_solves: they raise at their
    next check, a few milliseconds of work later); the workers are joined before it
    re-raises, so nothing goes on in the background.
    """
    if jobs <= 1:
        return [task(i) for i in range(n_items)]
    results = [None] * n_items
    lock = threading.Lock()
    done = threading.Event()
    cancel = cancel if cancel is not None else threading.Event()
    state = {"next": 0, "running": 0, "error": None}

    def finished():             # with lock held
        return state["running"] == 0 and (cancel.is_set() or state["next"] >= n_items)

    def worker():
        while True:
            with lock:
                i = state["next"]
                if cancel.is_set() or i >= n_items:
                    if finished():
                        done.set()
                    return
                state["next"] = i + 1
                state["running"] += 1
            try:
                results[i] = task(i)
            except Cancelled:
                pass
            except BaseException as exc:        # handed to the caller, the lowest item's first
                with lock:
                    if state["error"] is None or state["error"][0] > i:
                        state["error"] = (i, exc)
                    cancel.set()
            finally:
                with lock:
                    state["running"] -= 1
                    if finished():
                        done.set()

    threads = [threading.Thread(target=worker, name=f"linsvm-worker-{k}", daemon=True)
               for k in range(min(jobs, n_items))]
    for th in threads:
        th.start()
    try:
        while not done.wait(0.1):               # a timed wait lets Ctrl-C through at once
            pass
    except BaseException:
        cancel.set()
        stop_running_solves()
        for th in threads:
            th.join()
        raise
    for th in threads:
        th.join()
    if state["error"] is not None:
        raise state["error"][1]
    return results
