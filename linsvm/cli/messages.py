"""How the command line words its failures: one line `PROG: error: message`.

Every user error ends as one line on stderr and a non-zero exit status (1 for bad
data, model or files, 2 for bad usage); no traceback reaches the user.
"""
from __future__ import annotations

import click

__all__ = ["CONTEXT", "CommandError", "UsageLineError", "prog_name", "flag", "error_text",
           "os_error_text"]

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def prog_name():
    """The name the user invoked: `linsvm-train`, `linsvm-predict`, `linsvm-cv`, or
    `linsvm train` for the group (and `python -m linsvm train`)."""
    ctx = click.get_current_context(silent=True)
    return ctx.command_path if ctx is not None and ctx.command_path else "linsvm"


class CommandError(click.ClickException):
    """A failure reported as one line `PROG: error: message`, exit status 1.  PROG is
    the invoked command, taken when the error is raised (Click shows the error
    after the command's context has closed)."""

    exit_code = 1

    def __init__(self, message):
        super().__init__(message)
        self.prog = prog_name()

    def show(self, file=None):
        click.echo(f"{self.prog}: error: {self.format_message()}", err=True)


# Solver options with LIBLINEAR's one-letter flags (-p is also the tube width of the
# regression solvers, whose option is epsilon: linsvm.cli.solver_options routes it).
SHORT_FLAGS = {"p": "-p", "nu": "-n"}
_MESSAGE_FLAGS = dict(SHORT_FLAGS, epsilon="-p (--epsilon)")


def flag(name):
    """The command-line flag of a solver option's Python name (max_iter -> --max-iter)."""
    return _MESSAGE_FLAGS.get(name, "--" + name.replace("_", "-"))


def error_text(exc):
    """A LinsvmError's message, naming a solver option by its flag, not its keyword."""
    if getattr(exc, "option", None) and getattr(exc, "detail", None):
        others = getattr(exc, "others", None)
        listed = "" if others is None else \
            f" (its options: {', '.join(map(flag, others)) or 'none'})"
        return f"{flag(exc.option)} {exc.detail}{listed}"
    return str(exc)


class UsageLineError(CommandError):
    """A usage error that needs no usage text (e.g. a LIBLINEAR -s code linsvm does not
    solve): one line `PROG: error: message`, exit status 2."""

    exit_code = 2


def os_error_text(exc):
    where = f" '{exc.filename}'" if getattr(exc, "filename", None) else ""
    return f"cannot access{where}: {exc.strerror or exc}"
