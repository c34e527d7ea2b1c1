"""`linsvm-predict` once its options are parsed: load the model, stream the test data
through it, write the predictions, print the measures, draw the curves (--plot)."""
from __future__ import annotations

import click

from .._lazy import LazyFunction
from ..io.atomic import check_output_path
from ..io.cache import open_data
from ..model.model import load_model
from ..model.predict import note_lines, predict_file, report_lines
from .console import Console
from .job import refuse_launch
from .messages import CommandError, UsageLineError

__all__ = ["run"]

# what only --plot runs, imported when it does (start-up: linsvm._lazy)
check_plot_request = LazyFunction("linsvm.cli.plot_curves", "check_plot_request")
check_plot_model = LazyFunction("linsvm.cli.plot_curves", "check_plot_model")
plot_prediction = LazyFunction("linsvm.cli.plot_curves", "plot_prediction")


def run(test_file, model_file, output_file, decision_values, chunk_rows, quiet, probability=0,
        plot_file=None, cache=None):
    """The predict command; its arguments are the command line's options."""
    refuse_launch("predict")
    if probability and decision_values:
        raise UsageLineError("-b 1 and --decision-values cannot be used together "
                             "(one writes probabilities, the other decision values)")
    check_output_path(output_file, what="output file", inputs=(test_file, model_file), stdout_ok=True)
    if plot_file is not None:
        check_plot_request(plot_file, test_file, model_file, output_file)
    model = load_model(model_file)
    if probability and model.probability_ is None and model.link_ is None:
        raise CommandError(f"-b 1: {model_file} has no probability sigmoids (train it with "
                           "linsvm-train -b 1, or use a logistic regression solver)")
    if plot_file is not None:
        check_plot_model(model, model_file)
    console = Console(quiet)
    test_source = open_data(test_file, cache, console.note, lambda rows: console.progress(
        f"caching {test_file}: {rows:,} rows")) or test_file
    console.done()
    result = predict_file(test_source, model, output_file, decision_values=decision_values,
                          chunk_rows=chunk_rows, measures=not quiet, probability=bool(probability),
                          model_name=model_file, keep=plot_file is not None, name=test_file,
                          progress=lambda rows: console.progress(f"predicting: {rows:,} rows"))
    console.done()
    if not quiet:
        for text in note_lines(result):
            console.note(text)
        for line in report_lines(result):
            click.echo(line, err=True)
    if plot_file is not None:       # after the predictions and measures: they stand alone
        plot_prediction(result.kept, model, plot_file)

