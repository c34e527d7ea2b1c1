"""`linsvm-train` / `linsvm train`: its arguments, options and help (run by
linsvm.cli.run_train)."""
from __future__ import annotations

import click

from ..model.formats import MODEL_FORMATS
from .commands import runner
from .messages import CONTEXT
from .solver_options import SolverCommand, data_options, decorate, solver_help, solver_option_decorators

__all__ = ["train_cmd"]


def _train_command(func):
    func = decorate(func, solver_option_decorators())
    options = data_options(single_cost=True)
    options[1:1] = [click.argument("model_file", required=False, type=click.Path(dir_okay=False))]
    options += [
        click.option("-i", "--init", "init_model", type=click.Path(dir_okay=False),
                     help="Warm start from this model (beta-/alpha-seeding)."),
        click.option("--model-format", type=click.Choice(list(MODEL_FORMATS)), default="linsvm",
                     show_default=True,
                     help="linsvm: linsvm's format, weights as text up to 2^20 weights and as binary "
                          "float64 (LIBLINEAR's file size or less, loads without parsing) above; "
                          "linsvm-text / linsvm-binary: always text / binary weights; liblinear: "
                          "LIBLINEAR's format (not for ordinal models)."),
        click.option("-v", "--cross-validation", "n_folds", type=click.IntRange(2), default=None,
                     help="N-fold cross-validation at -c instead of training (as LIBLINEAR's -v); "
                          "see `linsvm cv` for grids."),
        click.option("-C", "--find-C", "find_C", is_flag=True, default=False,
                     help="Search C (and p for regression) by cross-validation instead of "
                          "training, as LIBLINEAR's train -C: C doubles from a small value (or "
                          "-c) to 1024 (2^20 for regression), warm-started; prints a line per "
                          "point and 'Best C = ...  CV accuracy = ...%'.  Folds: -v (default 5)."),
        click.option("-j", "--jobs", "n_jobs", type=click.IntRange(0), default=0, show_default=True,
                     help="Threads for the columns of a one-vs-rest run (a binary solver on "
                          "more than two classes); 0 = the free cores (CPUs less the load "
                          "average), every CPU on data of 1M non-zeros or more.  Each "
                          "column's kernels then run on one thread (or "
                          "--n-threads).  The model does not depend on it."),
        click.option("-b", "--probability", type=click.IntRange(0, 1), default=0, show_default=True,
                     help="1: also fit Platt sigmoids for probability estimates (linsvm-predict "
                          "-b 1) on 5-fold out-of-fold decision values, with the same solver "
                          "options and seed; costs about 5 more trainings.  Stored in the model "
                          "(linsvm format version 3).  Not for ordinal solvers, -v or "
                          "--model-format liblinear."),
    ]
    return click.command("train", cls=SolverCommand, context_settings=CONTEXT, epilog=solver_help(),
                         help="Train a linear SVM on TRAINING_FILE (SVM-light format; '-' is "
                              "stdin; gzip/bzip2/xz accepted; or a binary file of `linsvm "
                              "convert`, mapped) and write MODEL_FILE (default: "
                              "the training file's name + '.model'; '-' is stdout).  The model "
                              "path is checked before training.  Under `mpiexec -n P` it trains "
                              "on P ranks, each reading its share; rank 0 prints and writes the "
                              "model (docs/mpi.md).")(decorate(func, options))


train_cmd = _train_command(runner("run_train", "run"))
