"""`linsvm scale`: LIBSVM's svm-scale as a linsvm command (the work is linsvm.scale's).

Self-contained on purpose: its own one-line error handling, the same as the other
commands' (`PROG: error: ...`, exit status 1 for data and files, 2 for usage, 130
on Ctrl-C, a quiet exit when standard output is closed early), so that the
command can be registered with any `click.Group` by `group.add_command(scale_cmd)`.
"""
from __future__ import annotations

import functools
import os
import sys

import click

from .atomic import check_output_path
from .errors import LinsvmError, ParameterError

__all__ = ["scale_cmd"]


class _Failure(click.ClickException):
    """One line `PROG: error: message` on stderr; exit status 1 (2 for usage)."""

    def __init__(self, message, exit_code=1):
        super().__init__(message)
        self.exit_code = exit_code
        ctx = click.get_current_context(silent=True)
        self.prog = ctx.command_path if ctx is not None and ctx.command_path else "linsvm scale"

    def show(self, file=None):
        click.echo(f"{self.prog}: error: {self.format_message()}", err=True)


def _one_line_errors(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except LinsvmError as exc:
            raise _Failure(str(exc)) from None
        except BrokenPipeError:             # `linsvm scale data | head`
            try:
                sys.stdout = open(os.devnull, "w")
            finally:
                raise SystemExit(0)
        except OSError as exc:
            where = f" '{exc.filename}'" if getattr(exc, "filename", None) else ""
            raise _Failure(f"cannot access{where}: {exc.strerror or exc}") from None
        except MemoryError:
            raise _Failure("out of memory (the ranges take 40 bytes per feature up to the "
                           "largest index: 'linsvm renumber' makes sparse indices dense)") from None
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            raise SystemExit(130) from None

    return wrapper


@click.command("scale", context_settings={"help_option_names": ["-h", "--help"],
                                          "max_content_width": 100},
               help="Scale each feature of DATA_FILE (SVM-light; '-' is stdin; gzip, bzip2, xz "
                    "recognised) to [LOWER, UPPER] as LIBSVM's svm-scale does, byte for byte, "
                    "and write the result to standard output (or -o FILE).  Features constant "
                    "over the data are left out; an absent entry is a 0 and is scaled too, so "
                    "-l below 0 makes sparse data dense: use -l 0 for sparse non-negative "
                    "features.  -s saves the ranges, -r applies saved ones (svm-scale's "
                    "parameter file: each program reads the other's); scale test data with the "
                    "training data's file.  Reads the input twice (standard input is copied to "
                    "a temporary file); memory does not grow with the file.")
@click.argument("data_file", type=click.Path(dir_okay=False, allow_dash=True))
@click.option("-l", "--lower", type=float, default=None, metavar="LOWER",
              help="x scaling lower limit [default: -1].")
@click.option("-u", "--upper", type=float, default=None, metavar="UPPER",
              help="x scaling upper limit [default: 1].")
@click.option("-y", "--y-limits", type=float, nargs=2, default=None, metavar="Y_LOWER Y_UPPER",
              help="Scale the labels too, to [Y_LOWER, Y_UPPER] (regression targets).")
@click.option("-s", "--save", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Save the scaling parameters to FILE.")
@click.option("-r", "--restore", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Restore the scaling parameters from FILE (its limits override -l/-u/-y).")
@click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
              show_default=True, metavar="FILE",
              help="Write the scaled data to FILE, atomically ('-': standard output).")
@click.option("-q", "--quiet", is_flag=True, help="Do not print notes.")
@_one_line_errors
def scale_cmd(data_file, lower, upper, y_limits, save, restore, output, quiet):
    from .scale import check_options, scale_file

    try:
        check_options(lower, upper, y_limits, save, restore)
    except ParameterError as exc:
        raise _Failure(str(exc), exit_code=2) from None
    inputs = (data_file, restore)
    check_output_path(output, what="output file", inputs=inputs, stdout_ok=True)
    if save is not None:
        if output != "-" and os.path.abspath(save) == os.path.abspath(output):
            raise _Failure(f"-s {save} is also the output file (-o)", exit_code=2)
        check_output_path(save, what="parameter file (-s)", inputs=inputs + (output,))
    prog = click.get_current_context().command_path

    def note(text):
        if not quiet:
            click.echo(f"{prog}: note: {text}", err=True)

    scale_file(data_file, output, lower=lower, upper=upper, y_limits=y_limits, save=save,
               restore=restore, note=note)
