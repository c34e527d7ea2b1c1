"""Command line: `linsvm train|predict|cv|synth|renumber|scale|inspect|convert` and the `linsvm-train`,
`linsvm-predict`, `linsvm-cv` stand-alone commands (same options).

The command line parses options and prints; reading data is linsvm.io's job,
training linsvm.fit's, the file formats linsvm.model's.  Every user error ends as
one line `PROG: error: ...` on stderr and a non-zero exit status (1 for bad
data/model/files, 2 for bad usage); no traceback reaches the user, and a failed
command leaves no output file behind.  Under mpiexec, train and cv run on every
rank (linsvm.cli.job).  The commands are listed in linsvm.cli.commands and run
by their own modules, imported only when they run.
"""
from __future__ import annotations

import sys

import click

from .._version import __version__
from .commands import COMMANDS, command
from .job import launch_rank
from .messages import CONTEXT, OneLineUsage

__all__ = ["cli", "main", "train_main", "predict_main", "cv_main"]


class _Commands(OneLineUsage, click.Group):
    """A Click group whose commands are declared in COMMANDS and built when wanted
    (linsvm.cli.commands): `linsvm predict` builds no training options; usage
    errors in one line (OneLineUsage)."""

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, cmd_name):
        return command(cmd_name) if cmd_name in COMMANDS else None


@click.group(cls=_Commands, context_settings=CONTEXT)
@click.version_option(__version__, "-V", "--version", prog_name="linsvm")
def cli():
    """linsvm: linear SVMs on large sparse data (finite Newton, sequential dual, ALM,
    cutting-plane solvers).  `linsvm COMMAND --help` for each command."""


def _run(command, prog_name):
    """Run a Click command as a program.  On an MPI rank other than 0 (from the
    launcher's environment) its errors exit with their status but are not shown:
    rank 0 shows the same line (module notes)."""
    if launch_rank() == 0:
        command.main(prog_name=prog_name)
        return
    try:
        command.main(prog_name=prog_name, standalone_mode=False)
    except click.ClickException as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(1)
    sys.exit(0)


def main():
    """Entry point of `linsvm` and `python -m linsvm`."""
    _run(cli, "linsvm")


def train_main():
    """Entry point of `linsvm-train`."""
    _run(command("train"), "linsvm-train")


def predict_main():
    """Entry point of `linsvm-predict`."""
    _run(command("predict"), "linsvm-predict")


def cv_main():
    """Entry point of `linsvm-cv`."""
    _run(command("cv"), "linsvm-cv")
