"""The commands' declarations: arguments, options, help, and the module that runs each.

Every command is declared here and run by its own module (linsvm.cli.run_train,
run_predict, run_cv, run_tools), imported only when the command runs: `--help`
and `--version` read the declarations and the solver catalog alone, and import no
NumPy (linsvm._lazy).  Every body is wrapped by fail_on_errors: one line per
error, never a traceback.
"""
from __future__ import annotations

import click

from .._lazy import LazyFunction
from ..model.formats import MODEL_FORMATS
from ..problem.metric_names import METRICS
from .failures import fail_on_errors
from .messages import CONTEXT
from .solver_options import (SolverCommand, data_options, decorate, solver_help,
                             solver_option_decorators)

__all__ = ["train_cmd", "predict_cmd", "cv_cmd", "synth_cmd", "renumber_cmd", "scale_cmd"]


def _runner(module, name):
    """The body of a command: linsvm.cli.`module`.`name`, imported when the command runs,
    its errors as one line each."""
    return fail_on_errors(LazyFunction(f"linsvm.cli.{module}", name))


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
                          "average).  Each column's kernels then run on one thread (or "
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
                              "stdin; gzip/bzip2/xz accepted) and write MODEL_FILE (default: "
                              "the training file's name + '.model'; '-' is stdout).  The model "
                              "path is checked before training.  Under `mpiexec -n P` it trains "
                              "on P ranks, each reading its share; rank 0 prints and writes the "
                              "model (docs/mpi.md).")(decorate(func, options))


train_cmd = _train_command(_runner("run_train", "run"))


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
                          "less the load average); results do not depend on it."),
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
                     metavar="FILE.png|FILE.svg",
                     help="Also draw the metric against log2 C (one curve per p, or contours "
                          "over C and p) with the best point marked; needs matplotlib "
                          "(pip install 'linsvm[plot]')."),
    ]
    return click.command("cv", cls=SolverCommand, context_settings=CONTEXT, epilog=solver_help(),
                         help="k-fold cross-validation of a solver over a grid of C (and p) on "
                              "TRAINING_FILE: a table of the metric's mean and std per grid "
                              "point, training time and iterations, and the best point.  Under "
                              "`mpiexec -n P` every fold trains on P ranks; the folds and results "
                              "are the serial ones (docs/mpi.md).")(
        decorate(func, options))


cv_cmd = _cv_command(_runner("run_cv", "run"))


predict_cmd = decorate(_runner("run_predict", "run"), [
    click.command("predict", context_settings=CONTEXT,
                  help="Predict TEST_FILE (SVM-light; '-' is stdin) with MODEL_FILE (linsvm or "
                       "LIBLINEAR format) and write one label per line (or the decision values) to "
                       "OUTPUT_FILE ('-' is stdout).  Streams: memory does not grow with the test "
                       "file.  Features beyond the model's width are ignored.  Prints "
                       "'Accuracy = x% (a/b)' to stderr, then for binary models precision, recall, "
                       "F1, PRBEP and ROC area of the positive class (1 when the labels include 1 or "
                       "+1, else the model's first class) and the decision threshold with the best "
                       "F1, and for ordinal/ranking models the mean absolute "
                       "error, exact-rank and pairwise accuracy and Kendall tau (per qid when the "
                       "data has qids).  Measures that are undefined print as n/a."),
    click.argument("test_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.argument("model_file", type=click.Path(dir_okay=False)),
    click.argument("output_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.option("--decision-values", is_flag=True,
                 help="Write decision values (one per class column, space separated) instead of labels."),
    click.option("--chunk-rows", default=None, type=click.IntRange(1),
                 help="Rows read and predicted at a time [default: 65536, fewer for models with "
                      "many classes, so that a chunk's scores stay within 2^22 numbers (32 MB)]."),
    click.option("-b", "--probability", type=click.IntRange(0, 1), default=0, show_default=True,
                 help="1: write probability estimates as LIBSVM's svm-predict -b 1 does: a first "
                      "line 'labels L1 L2 ...', then per example the label of the largest "
                      "probability and one probability per class in that order.  The model must "
                      "have been trained with -b 1; not with --decision-values."),
    click.option("-q", "--quiet", is_flag=True, help="Do not print the accuracy."),
])


renumber_cmd = decorate(_runner("run_tools", "renumber"), [
    click.command("renumber", context_settings=CONTEXT,
                  help="Renumber the features of INPUT_FILE (SVM-light) to 1..d, d the number of "
                       "distinct feature indices it uses, and write OUTPUT_FILE (labels and qids "
                       "kept, comments dropped) and MAP_FILE (line k: the original index of feature "
                       "k).  Every solver keeps dense vectors as long as the largest feature index, "
                       "so a file with few features but large indices (hashed or sparse ids) trains "
                       "in a fraction of the memory and time once renumbered.  With --apply, read "
                       "MAP_FILE instead and renumber test data the same way (features the map does "
                       "not hold are dropped: the model has no weight for them)."),
    click.argument("input_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.argument("output_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.argument("map_file", type=click.Path(dir_okay=False)),
    click.option("--apply", "apply_map", is_flag=True,
                 help="Read MAP_FILE (written by an earlier renumber) and apply it."),
])


synth_cmd = decorate(_runner("run_tools", "synth"), [
    click.command("synth", context_settings=CONTEXT,
                  help="Write a realistic sparse text-like data set (Zipf vocabulary, class topics, "
                       "tf-idf rows of unit length) in SVM-light format, with class labels or "
                       "(--regression) real targets: TRAIN_FILE and, if given, TEST_FILE holding "
                       "--test-fraction of the examples."),
    click.argument("train_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.argument("test_file", required=False, type=click.Path(dir_okay=False)),
    click.option("--n-samples", default=20000, show_default=True, type=click.IntRange(2),
                 help="Number of documents (rows), training and test together."),
    click.option("--n-features", default=20000, show_default=True, type=click.IntRange(1),
                 help="Vocabulary size: feature indices run from 1 to this."),
    click.option("--n-classes", default=2, show_default=True, type=click.IntRange(2),
                 help="Number of classes (labels +1/-1 for two, 1..N for more)."),
    click.option("--noise", default=0.05, show_default=True, type=click.FloatRange(0, 0.5),
                 help="Fraction of labels flipped."),
    click.option("--test-fraction", default=0.25, show_default=True, type=click.FloatRange(0, 1, max_open=True),
                 help="Fraction of the documents written to TEST_FILE (the last ones); "
                      "ignored without TEST_FILE."),
    click.option("--seed", default=0, show_default=True, type=int,
                 help="Seed of the generator: the same seed and options give the same files."),
    click.option("--regression", is_flag=True,
                 help="Real-valued targets instead of classes: a sparse linear model of the "
                      "same documents plus Gaussian noise (--n-classes and --noise are then "
                      "not used)."),
    click.option("--target-noise", default=0.3, show_default=True, type=click.FloatRange(0),
                 help="With --regression: the noise's standard deviation (the linear part has "
                      "standard deviation 1)."),
    click.option("--target-offset", default=0.0, show_default=True, type=float,
                 help="With --regression: a constant added to every target (e.g. 2000, to see "
                      "what a regularized bias cannot fit)."),
])


scale_cmd = decorate(_runner("run_tools", "scale"), [
    click.command("scale", context_settings=CONTEXT,
                  help="Scale each feature of DATA_FILE (SVM-light; '-' is stdin; gzip, bzip2, xz "
                       "recognised) to [LOWER, UPPER] as LIBSVM's svm-scale does, byte for byte, "
                       "and write the result to standard output (or -o FILE).  Features constant "
                       "over the data are left out; an absent entry is a 0 and is scaled too, so "
                       "-l below 0 makes sparse data dense: use -l 0 for sparse non-negative "
                       "features.  -s saves the ranges, -r applies saved ones (svm-scale's "
                       "parameter file: each program reads the other's); scale test data with the "
                       "training data's file.  Reads the input twice (standard input is copied to "
                       "a temporary file); memory does not grow with the file."),
    click.argument("data_file", type=click.Path(dir_okay=False, allow_dash=True)),
    click.option("-l", "--lower", type=float, default=None, metavar="LOWER",
                 help="x scaling lower limit [default: -1]."),
    click.option("-u", "--upper", type=float, default=None, metavar="UPPER",
                 help="x scaling upper limit [default: 1]."),
    click.option("-y", "--y-limits", type=float, nargs=2, default=None, metavar="Y_LOWER Y_UPPER",
                 help="Scale the labels too, to [Y_LOWER, Y_UPPER] (regression targets)."),
    click.option("-s", "--save", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                 help="Save the scaling parameters to FILE."),
    click.option("-r", "--restore", type=click.Path(dir_okay=False), default=None, metavar="FILE",
                 help="Restore the scaling parameters from FILE (its limits override -l/-u/-y)."),
    click.option("-o", "--output", type=click.Path(dir_okay=False, allow_dash=True), default="-",
                 show_default=True, metavar="FILE",
                 help="Write the scaled data to FILE, atomically ('-': standard output)."),
    click.option("-q", "--quiet", is_flag=True, help="Do not print notes."),
])
