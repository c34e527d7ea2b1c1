"""`linsvm convert`: its arguments, options and help (run by linsvm.cli.run_convert)."""
from __future__ import annotations

import click

from .commands import runner
from .messages import CONTEXT, LinsvmCommand
from .solver_options import decorate

__all__ = ["convert_cmd"]

# linsvm.io.convert.TARGETS and linsvm.io.binwrite.VALUE_CHOICES, spelt out here so that
# --help imports neither (nor NumPy)
_TARGETS = ("binary", "svmlight")
_VALUES = ("auto", "float64", "float32", "pattern")

convert_cmd = decorate(runner("run_convert", "convert"), [
    click.command("convert", cls=LinsvmCommand, context_settings=CONTEXT,
                  short_help="SVM-light text to linsvm's binary data file, or back.",
                  help="Write INPUT_FILE (SVM-light text, plain or gzip/bzip2/xz, '-' for "
                       "stdin; or a binary data file) as OUTPUT_FILE: a binary data file, "
                       "which every command and linsvm.load_svmlight map instead of parsing "
                       "(docs/binary-format.md), or with --to svmlight as SVM-light text ('-' "
                       "for stdout), byte for byte what linsvm writes for the data.  Labels "
                       "and qids are kept; streaming (memory does not grow with the input); "
                       "written atomically, nothing left on an error (docs/convert.md)."),
    click.argument("input_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.argument("output_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.option("--to", "to", type=click.Choice(_TARGETS), default="binary", show_default=True,
                 help="binary: linsvm's binary data file; svmlight: SVM-light text (instance "
                      "weights are left out: the text has no place for them)."),
    click.option("--values", type=click.Choice(_VALUES), default="auto", show_default=True,
                 help="How the binary file stores the values: float64 as they are; float32 "
                      "rounded to 4 bytes each (a value beyond float32's range is refused); "
                      "pattern none at all (every value must be 1: 0/1 data, 4 bytes per "
                      "non-zero); auto a pattern when every value is 1, else float64 (lossless)."),
    click.option("-W", "--instance-weights", type=click.Path(dir_okay=False), default=None,
                 metavar="FILE",
                 help="Store these instance weights in the binary file, one per example, as "
                      "linsvm-train -W reads them; training on the file then uses them unless "
                      "-W is given again."),
    click.option("-q", "--quiet", is_flag=True, help="Do not print the summary line."),
])
