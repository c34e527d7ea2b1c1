"""`linsvm renumber`, `linsvm synth` and `linsvm scale` once their options are parsed.

Each checks every file it will write before reading or generating anything
(linsvm.io.atomic: not an input, not another of its outputs, writable); renumber and
synth write their two files together: each to a temporary file, both renamed into
place only when both are complete, so a failure leaves neither."""
from __future__ import annotations

import contextlib

import click
import numpy as np

from ..errors import ParameterError
from ..io.atomic import atomic_output, check_output_path, check_outputs, same_target
from ..io.binwrite import BinaryWriter
from ..io.features import read_feature_map, renumber_features, write_feature_map
from ..io.scale import check_options, scale_file
from ..io.svmlight import dump_svmlight, load_svmlight
from ..io.synth import make_text_classification, make_text_regression
from ..io.synth_blocks import TextBlocks, check_block_spec, write_blocks
from .job import refuse_launch
from .messages import UsageLineError

__all__ = ["renumber", "synth", "scale"]


def renumber(input_file, output_file, map_file, apply_map):
    """The renumber command; its arguments are the command line's options."""
    refuse_launch("renumber")
    check_outputs([(output_file, "output file", True),
                   (None if apply_map else map_file, "feature map", False)],
                  inputs=(input_file, map_file if apply_map else None))
    feature_map = read_feature_map(map_file) if apply_map else None
    X, y, qid = load_svmlight(input_file, with_qid=True)
    X, feature_map = renumber_features(X, feature_map)
    with atomic_output(output_file, stdout_ok=True) as out, \
            _maybe_output(None if apply_map else map_file) as map_out:
        dump_svmlight(X, y, out, qid=qid if np.any(qid) else None)
        if map_out is not None:
            write_feature_map(map_out, feature_map)


def synth(train_file, test_file, fmt="svmlight", values=None, mean_nnz=None, **options):
    """The synth command; its arguments are the command line's options (`options`: those
    of both formats, n_samples, n_features, n_classes, noise, test_fraction, seed, and
    the text format's regression, target_noise, target_offset)."""
    refuse_launch("synth")
    if fmt == "binary":
        return _synth_binary(train_file, test_file, values, mean_nnz, **options)
    for name, given in (("--values", values), ("--mean-nnz", mean_nnz)):
        if given is not None:
            raise UsageLineError(f"{name} is an option of --format binary")
    return _synth_text(train_file, test_file, **options)


def _synth_text(train_file, test_file, n_samples, n_features, n_classes, noise, test_fraction,
                seed, regression=False, target_noise=0.3, target_offset=0.0):
    """synth --format svmlight: the whole set drawn at once, written as text."""
    check_outputs([(train_file, "training file", True), (test_file, "test file", False)])
    if regression:
        X, y = make_text_regression(n_samples=n_samples, n_features=n_features,
                                    noise=target_noise, offset=target_offset, seed=seed)
    else:
        X, y = make_text_classification(n_samples=n_samples, n_features=n_features,
                                        n_classes=n_classes, noise=noise, seed=seed)
    n_test = int(round(test_fraction * n_samples)) if test_file else 0
    with atomic_output(train_file, stdout_ok=True) as train_out, \
            _maybe_output(test_file if n_test else None) as test_out:
        if test_out is not None:
            dump_svmlight(X[n_samples - n_test:], y[n_samples - n_test:], test_out)
        dump_svmlight(X[:n_samples - n_test], y[:n_samples - n_test], train_out)


def _synth_binary(train_file, test_file, values, mean_nnz, n_samples, n_features, n_classes,
                  noise, test_fraction, seed, regression=False, **text_only):
    """synth --format binary: the block generator (linsvm.io.synth_blocks) streamed into
    binary data files, the last test_fraction of the rows into test_file when given
    (text_only: the text format's target options, unused)."""
    if regression:
        raise UsageLineError("--regression is an option of --format svmlight")
    if train_file == "-":
        raise UsageLineError("--format binary writes a file, not standard output")
    spec = check_block_spec(n_samples, n_features, n_classes,
                            100.0 if mean_nnz is None else mean_nnz, noise,
                            values or "float64", seed)
    check_outputs([(train_file, "training file", False), (test_file, "test file", False)])
    n_test = int(round(test_fraction * n_samples)) if test_file else 0
    outputs = [(train_file, 0, n_samples - n_test)]
    if n_test:
        outputs.append((test_file, n_samples - n_test, n_samples))
    write_blocks(TextBlocks(spec), outputs, binary_writer)


def binary_writer(path, values, n_features):
    """The writer of a binary data file (linsvm.io.binwrite.BinaryWriter): a context
    manager with append(indptr, indices, data, labels) whose file appears only on a
    clean exit."""
    return BinaryWriter(path, values=values, n_features=n_features)


def _maybe_output(path):
    """atomic_output(path), or a context that yields None when path is None."""
    return contextlib.nullcontext() if path is None else atomic_output(path)


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
        if same_target(save, output):      # by name, symlink or hard link
            raise UsageLineError(f"-s {save} is also the output file (-o)")
        check_output_path(save, what="parameter file (-s)", inputs=inputs + (output,))
    prog = click.get_current_context().command_path

    def note(text):
        if not quiet:
            click.echo(f"{prog}: note: {text}", err=True)

    scale_file(data_file, output, lower=lower, upper=upper, y_limits=y_limits, save=save,
               restore=restore, note=note)
