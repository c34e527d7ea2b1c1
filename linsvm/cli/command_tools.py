"""`linsvm renumber`, `linsvm synth` and `linsvm scale`: their arguments, options and
help (run by linsvm.cli.run_tools)."""
from __future__ import annotations

import click

from .commands import runner
from .messages import CONTEXT, LinsvmCommand
from .solver_options import decorate

__all__ = ["renumber_cmd", "synth_cmd", "scale_cmd"]


renumber_cmd = decorate(runner("run_tools", "renumber"), [
    click.command("renumber", cls=LinsvmCommand, context_settings=CONTEXT,
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


synth_cmd = decorate(runner("run_tools", "synth"), [
    click.command("synth", cls=LinsvmCommand, context_settings=CONTEXT,
                  help="Write a realistic sparse text-like data set (Zipf vocabulary, class topics, "
                       "tf-idf rows of unit length) in SVM-light format, with class labels or "
                       "(--regression) real targets: TRAIN_FILE and, if given, TEST_FILE holding "
                       "--test-fraction of the examples.  With --format binary: binary data files, "
                       "generated block by block, for sets larger than memory."),
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
    click.option("--seed", default=0, show_default=True, type=click.IntRange(0),
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
    click.option("--format", "fmt", type=click.Choice(["svmlight", "binary"]), default="svmlight",
                 show_default=True,
                 help="svmlight: the whole set drawn at once, written as text.  binary: drawn "
                      "block by block (memory independent of --n-samples; its own draw order, "
                      "docs/synth.md) and written as a binary data file."),
    click.option("--values", type=click.Choice(["float64", "float32", "pattern"]), default=None,
                 help="With --format binary: tf-idf-like values as float64 (default) or float32, "
                      "or pattern (no values: every entry 1, term presence)."),
    click.option("--mean-nnz", type=click.FloatRange(1), default=None,
                 help="With --format binary: mean number of non-zeros per row (exact per row, "
                      "log-normal over rows; default 100, at most --n-features / 10)."),
])


scale_cmd = decorate(runner("run_tools", "scale"), [
    click.command("scale", cls=LinsvmCommand, context_settings=CONTEXT,
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
