"""`linsvm-predict` / `linsvm predict`: its arguments, options and help (run by
linsvm.cli.run_predict)."""
from __future__ import annotations

import click

from .commands import runner
from .messages import CONTEXT, LinsvmCommand
from .solver_options import cache_option, decorate

__all__ = ["predict_cmd"]


predict_cmd = decorate(runner("run_predict", "run"), [
    click.command("predict", cls=LinsvmCommand, context_settings=CONTEXT,
                  help="Predict TEST_FILE (SVM-light, or a binary file of linsvm convert; '-' "
                       "is stdin) with MODEL_FILE (linsvm or "
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
    click.option("--plot", "plot_file", type=click.Path(dir_okay=False), default=None,
                 metavar="FILE.png|.svg|.pdf",
                 help="Also draw the model on the test set: for a binary model the ROC and "
                      "precision-recall curves of the positive class with the model's "
                      "operating point and the PRBEP marked (and with -b 1 a reliability "
                      "diagram of the probabilities), for a regression model the predicted "
                      "against the true values.  Other models are refused.  Needs matplotlib "
                      "(pip install 'linsvm[plot]'); keeps every example's score in memory."),
    cache_option("TEST_FILE"),
])
