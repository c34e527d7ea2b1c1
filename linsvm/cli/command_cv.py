"""`linsvm-cv` / `linsvm cv`: its arguments, options and help (run by linsvm.cli.run_cv)."""
from __future__ import annotations

import click

from ..problem.metric_names import METRICS
from .commands import runner
from .messages import CONTEXT
from .solver_options import SolverCommand, data_options, decorate, solver_help, solver_option_decorators

__all__ = ["cv_cmd"]


def _cv_command(func):
    func = decorate(func, solver_option_decorators(exclude=("p",)))
    options = data_options(single_cost=False)
    options[3:3] = [
        click.option("--log2c", default=None, metavar="LO:HI:STEP",
                     help="C = 2^e for e in the range (e.g. -5:5:0.5)."),
        click.option("-p", "--p", "p_grid", default=None, metavar="GRID",
                     help="Grid of -p values (e.g. 1:2:0.1): alm's loss exponent p, or the tube "
                          "width (--epsilon) of svr and svr-dual."),
    ]
    options += [
        click.option("-v", "--folds", "n_folds", type=click.IntRange(2), default=5, show_default=True,
                     help="Number of folds (stratified; whole queries with qid data)."),
        click.option("-j", "--jobs", "n_jobs", type=click.IntRange(0), default=1, show_default=True,
                     help="Folds run on this many parallel threads (0 = the free cores: CPUs "
                          "less the load average; every CPU on data of 1M non-zeros or "
                          "more); results do not depend on it."),
        click.option("--metric", type=click.Choice(list(METRICS)),
                     default=None,
                     help="Default: accuracy, or mae for ordinal solvers.  prbep, roc and f1 "
                          "(binary) are about the positive class: 1 when the labels include it, "
                          "else the first class."),
        click.option("--format", "fmt", type=click.Choice(["table", "tsv", "json"]), default="table",
                     show_default=True,
                     help="table: for people, accuracy, prbep, f1 and pairwise as percentages; "
                          "tsv and json: fractions, full precision."),
        click.option("--output-model", type=click.Path(dir_okay=False), default=None,
                     help="Train at the best point on all data and save the model here."),
        click.option("--warm-start/--no-warm-start", default=True, show_default=True,
                     help="Seed each C from the previous one along the ascending grid."),
        click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
                     metavar="FILE.png|.svg|.pdf",
                     help="Also draw the metric against log2 C (one curve per p, or contours "
                          "over C and p) with the best point marked; needs matplotlib "
                          "(pip install 'linsvm[plot]')."),
    ]
    return click.command("cv", cls=SolverCommand, context_settings=CONTEXT, epilog=solver_help(),
                         help="k-fold cross-validation of a solver over a grid of C (and p) on "
                              "TRAINING_FILE (SVM-light, or a binary file of `linsvm convert`): "
                              "a table of the metric's mean and std per grid "
                              "point, training time and iterations, and the best point.  Under "
                              "`mpiexec -n P` every fold trains on P ranks; the folds and results "
                              "are the serial ones (docs/mpi.md).")(
        decorate(func, options))


cv_cmd = _cv_command(runner("run_cv", "run"))
