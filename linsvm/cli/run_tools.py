"""`linsvm renumber` and `linsvm synth` once their options are parsed."""
from __future__ import annotations

import sys

import numpy as np

from ..io.features import read_feature_map, renumber_features, write_feature_map
from ..io.svmlight import dump_svmlight, load_svmlight
from ..io.synth import make_text_classification
from .job import refuse_launch

__all__ = ["renumber", "synth"]


def renumber(input_file, output_file, map_file, apply_map):
    """The renumber command; its arguments are the command line's options."""
    refuse_launch("renumber")
    feature_map = read_feature_map(map_file) if apply_map else None
    X, y, qid = load_svmlight(input_file, with_qid=True)
    X, feature_map = renumber_features(X, feature_map)
    dump_svmlight(X, y, output_file, qid=qid if np.any(qid) else None)
    if not apply_map:
        write_feature_map(map_file, feature_map)


def synth(train_file, test_file, n_samples, n_features, n_classes, noise, test_fraction, seed):
    """The synth command; its arguments are the command line's options."""
    refuse_launch("synth")
    X, y = make_text_classification(n_samples=n_samples, n_features=n_features,
                                    n_classes=n_classes, noise=noise, seed=seed)
    n_test = int(round(test_fraction * n_samples)) if test_file else 0
    if n_test:
        dump_svmlight(X[n_samples - n_test:], y[n_samples - n_test:], test_file)
    dump_svmlight(X[:n_samples - n_test], y[:n_samples - n_test],
                  sys.stdout.buffer if train_file == "-" else train_file)
