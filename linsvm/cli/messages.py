"""How the command line words its failures: one line `PROG: error: message`.

Every user error ends as one line on stderr and a non-zero exit status (1 for bad
data, model or files, 2 for bad usage); no traceback reaches the user.
"""
from __future__ import annotations

import click

__all__ = ["CONTEXT", "CommandError", "UsageLineError", "OneLineUsageError", "OneLineUsage",
           "LinsvmCommand", "prog_name", "flag", "error_text", "os_error_text"]

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


class OneLineUsageError(click.UsageError):
    """Click's usage error (an unknown option, a missing argument, a bad value) shown as
    the one line every other error is: `PROG: error: message (try 'PROG --help')`,
    exit status 2, instead of Click's usage line, hint line and `Error:` line."""

    def show(self, file=None):
        prog = self.ctx.command_path if self.ctx is not None and self.ctx.command_path \
            else prog_name()
        click.echo(f"{prog}: error: {self.format_message()} (try '{prog} --help')", err=True)


# Click's "no arguments: show the help" (Click >= 8.2) is a UsageError whose message is
# the help text: it stays Click's
_HELP_ERRORS = tuple(getattr(click.exceptions, name) for name in ("NoArgsIsHelpError",)
                     if hasattr(click.exceptions, name))


def _one_line(exc, ctx=None):
    """exc (a click.UsageError) as a OneLineUsageError with the same message and context
    (the help Click shows for a group called without arguments is kept as it is)."""
    if isinstance(exc, (OneLineUsageError,) + _HELP_ERRORS):
        return exc
    return OneLineUsageError(exc.format_message(), exc.ctx if exc.ctx is not None else ctx)


class OneLineUsage:
    """Mixin of linsvm's Click commands and group: a usage error met while parsing the
    arguments or raised by the command's body becomes a OneLineUsageError."""

    def make_context(self, info_name, args, parent=None, **extra):
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except click.UsageError as exc:
            raise _one_line(exc) from None

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            raise _one_line(exc, ctx) from None


class LinsvmCommand(OneLineUsage, click.Command):
    """A Click command whose usage errors are one line (OneLineUsage)."""
