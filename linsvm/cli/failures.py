"""Errors inside a command as one line and an exit status, never a traceback.

`fail_on_errors` wraps every command body: a LinsvmError, an OSError, running out
of memory and Ctrl-C become one line `PROG: error: ...` (or `interrupted`, exit
130); on a rank of an MPI job anything unexpected first ends the whole job
(linsvm.cli.job).
"""
from __future__ import annotations

import functools
import os
import sys

import click

from ..errors import LinsvmError
from ..runtime.sigint import EXIT_INTERRUPTED, in_command
from .job import Job
from .messages import CommandError, error_text, os_error_text, prog_name

__all__ = ["fail_on_errors", "serial_errors"]


def fail_on_errors(func):
    """Turn LinsvmError / OSError / Ctrl-C inside a command into one-line errors; on a
    rank of an MPI job anything but a LinsvmError or Click's error (which every rank
    meets alike) first ends the whole job (_abort_job)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except LinsvmError as exc:
            raise CommandError(error_text(exc)) from None
        except click.ClickException:
            raise
        except BaseException as exc:
            _abort_job(exc)             # on MPI: one rank's fault ends every rank
            raise
        finally:
            Job.active = None

    return serial_errors(wrapper)


def serial_errors(func):
    """OSError, MemoryError and Ctrl-C inside a command as one-line errors.  Ctrl-C is
    a KeyboardInterrupt inside the command only (linsvm.runtime.sigint.in_command):
    before and after it, the entry point's handler prints `interrupted` and exits 130."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            with in_command():
                return func(*args, **kwargs)
        except OSError as exc:
            if isinstance(exc, BrokenPipeError):       # `linsvm-predict ... - | head`
                try:
                    sys.stdout = open(os.devnull, "w")
                finally:
                    raise SystemExit(0)
            raise CommandError(os_error_text(exc)) from None
        except MemoryError as exc:
            raise CommandError(_out_of_memory_text(exc)) from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            raise SystemExit(EXIT_INTERRUPTED) from None
        except Exception as exc:
            # Python wraps an exception raised inside some protocols (a descriptor's
            # __set_name__ while a module such as NumPy's is imported) in a RuntimeError
            if not _caused_by_interrupt(exc):
                raise
            click.echo("interrupted", err=True)
            raise SystemExit(EXIT_INTERRUPTED) from None

    return wrapper


def _out_of_memory_text(exc):
    """The one line for a MemoryError: what ran out, and the hint to renumber sparse,
    large feature indices only where it can help (the weight vectors are as long as
    the largest index; parsing is not, and renumber itself cannot shorten them)."""
    detail = f" ({exc})" if str(exc) else ""
    if "parsing" in str(exc):
        return f"out of memory{detail}: the data does not fit in memory"
    if prog_name().endswith("renumber"):
        return f"out of memory{detail}"
    return (f"out of memory{detail}; with sparse, large feature indices 'linsvm renumber' "
            "makes the weight vectors shorter")


def _caused_by_interrupt(exc):
    """Whether a KeyboardInterrupt is in exc's chain of causes and contexts."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False


def _abort_job(exc):
    """On a rank of a distributed command: print the fault and end every rank
    (Collective.abort); nothing for the serial program."""
    job = Job.active
    if job is None or job.coll is None or isinstance(exc, (SystemExit, click.exceptions.Exit)):
        return
    if isinstance(exc, KeyboardInterrupt):
        text = "interrupted"
    elif isinstance(exc, OSError):
        text = os_error_text(exc)
    else:
        text = f"{type(exc).__name__}: {exc}"
    job.coll.abort(text)
