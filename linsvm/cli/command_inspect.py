"""`linsvm inspect`: its arguments, options and help (run by linsvm.cli.run_inspect)."""
from __future__ import annotations

import click

from .commands import runner
from .messages import CONTEXT
from .solver_options import decorate

__all__ = ["inspect_cmd", "DEFAULT_TOP"]

DEFAULT_TOP = 10


inspect_cmd = decorate(runner("run_inspect", "inspect"), [
    click.command("inspect", context_settings=CONTEXT,
                  short_help="A model's header in words and its largest weights per class.",
                  help="Describe MODEL_FILE (linsvm format, text or binary weights, or "
                       "LIBLINEAR's) in words: its solver and the objective it minimized, the "
                       "problem, C, bias, classes, objective, certified duality gap, iterations "
                       "and training time (what the file records), then per weight column the "
                       "features with the largest positive and the most negative weights, named "
                       "through --features.  Writes to standard output; reads only MODEL_FILE "
                       "and the --features file."),
    click.argument("model_file", type=click.Path(dir_okay=False)),
    click.option("-k", "--top", "top", type=click.IntRange(0), default=DEFAULT_TOP,
                 show_default=True, metavar="K",
                 help="List the K largest positive and the K most negative weights of each "
                      "column (0: the header only).  Zero weights are never listed; ties go to "
                      "the smaller feature index."),
    click.option("--features", "features_file", type=click.Path(dir_okay=False), default=None,
                 metavar="FILE",
                 help="Name the features: a feature map written by `linsvm renumber` (feature "
                      "k is named by its original index) or a vocabulary, one name a line, "
                      "line i naming feature i.  Recognised by its first line; it must name "
                      "every feature of the model."),
    click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
                 show_default=True,
                 help="text: for people; json: one object for scripts (docs/inspect.md has "
                      "its schema), numbers in full precision, undefined ones null."),
])
