"""stderr for one command: progress lines, notes, warnings and a transient progress line."""
from __future__ import annotations

import numbers
import sys
import threading
import time

import click

__all__ = ["Console", "stderr_is_tty", "fmt_stat", "print_warnings", "PROGRESS_DELAY",
           "PROGRESS_EVERY"]


def stderr_is_tty():
    """Whether stderr is a terminal: progress lines show only then (tests replace this)."""
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


PROGRESS_DELAY = 2.0    # seconds a run lasts before its progress line first shows


PROGRESS_EVERY = 0.25   # seconds between redraws


class Console:
    """stderr for one command: log lines (None when quiet), notes, and one transient
    progress line, redrawn in place with '\\r' on a terminal once the run has lasted
    PROGRESS_DELAY seconds; no progress when quiet or when stderr is not a terminal."""

    def __init__(self, quiet, silent=False):
        quiet = quiet or silent             # silent: an MPI rank other than 0, not even warnings
        self.quiet, self.silent = quiet, silent
        self.live = not quiet and stderr_is_tty()
        self.t0 = time.monotonic()
        self.last = -1e9
        self.shown = False
        self.lock = threading.Lock()
        self.log = None if quiet else self._log

    def _log(self, line):
        with self.lock:
            self._clear()
            click.echo(line, err=True)

    def note(self, text):
        """A one-line remark about the data or the result (silenced by -q)."""
        if not self.quiet:
            self._log(f"note: {text}")

    def warn(self, text):
        """A warning (shown even with -q; not on MPI ranks other than 0)."""
        if self.silent:
            return
        with self.lock:
            self._clear()
            click.echo(f"warning: {text}", err=True)

    def progress(self, text):
        """Show `text` as the progress line (throttled; a no-op off a terminal)."""
        if not self.live:
            return
        now = time.monotonic()
        if now - self.t0 < PROGRESS_DELAY or now - self.last < PROGRESS_EVERY:
            return
        with self.lock:
            self.last = now
            click.echo("\r" + text + "\033[K", err=True, nl=False)
            self.shown = True

    def _clear(self):
        if self.shown:
            click.echo("\r\033[K", err=True, nl=False)
            self.shown = False

    def done(self):
        """Remove the progress line, if one is shown."""
        with self.lock:
            self._clear()


def fmt_stat(v):
    """A statistic for people: counts as integers, other numbers to 4 digits."""
    if isinstance(v, numbers.Integral) and not isinstance(v, bool):
        return str(int(v))
    return f"{v:.4g}"


def print_warnings(console, records):
    """One line `warning: ...` on stderr per (message, is_convergence) record."""
    for message, _ in records:
        console.warn(message)
