"""`linsvm renumber`, `linsvm synth` and `linsvm scale` once their options are parsed."""
from __future__ import annotations

import os
import sys

import click
import numpy as np

from ..errors import ParameterError
from ..io.atomic import check_output_path
from ..io.features import read_feature_map, renumber_features, write_feature_map
from ..io.scale import check_options, scale_file
from ..io.svmlight import dump_svmlight, load_svmlight
from ..io.synth import make_text_classification, make_text_regression
from .job import refuse_launch
from .messages import UsageLineError

__all__ = ["renumber", "synth", "scale"]


def renumber(input_file, output_file, map_file, apply_map):
    """The renumber command; its arguments are the command line's options."""
    refuse_launch("renumber")
    feature_map = read_feature_map(map_file) if apply_map else None
    X, y, qid = load_svmlight(input_file, with_qid=True)
    X, feature_map = renumber_features(X, feature_map)
    dump_svmlight(X, y, output_file, qid=qid if np.any(qid) else None)
    if not apply_map:
        write_feature_map(map_file, feature_map)


def synth(train_file, test_file, n_samples, n_features, n_classes, noise, test_fraction, seed,
          regression=False, target_noise=0.3, target_offset=0.0):
    """The synth command; its arguments are the command line's options."""
    refuse_launch("synth")
    if regression:
        X, y = make_text_regression(n_samples=n_samples, n_features=n_features,
                                    noise=target_noise, offset=target_offset, seed=seed)
    else:
        X, y = make_text_classification(n_samples=n_samples, n_features=n_features,
                                        n_classes=n_classes, noise=noise, seed=seed)
    n_test = int(round(test_fraction * n_samples)) if test_file else 0
    if n_test:
        dump_svmlight(X[n_samples - n_test:], y[n_samples - n_test:], test_file)
    dump_svmlight(X[:n_samples - n_test], y[:n_samples - n_test],
                  sys.stdout.buffer if train_file == "-" else train_file)


def scale(data_file, lower, upper, y_limits, save, restore, output, quiet):
    """The scale command (LIBSVM's svm-scale; linsvm.io.scale); its arguments are the
    command line's options."""
    refuse_launch("scale")
    try:
        check_options(lower, upper, y_limits, save, restore)
    except ParameterError as exc:
        raise UsageLineError(str(exc)) from None
    inputs = (data_file, restore)
    check_output_path(output, what="output file", inputs=inputs, stdout_ok=True)
    if save is not None:
        if output != "-" and os.path.abspath(save) == os.path.abspath(output):
            raise UsageLineError(f"-s {save} is also the output file (-o)")
        check_output_path(save, what="parameter file (-s)", inputs=inputs + (output,))
    prog = click.get_current_context().command_path

    def note(text):
        if not quiet:
            click.echo(f"{prog}: note: {text}", err=True)

    scale_file(data_file, output, lower=lower, upper=upper, y_limits=y_limits, save=save,
               restore=restore, note=note)
