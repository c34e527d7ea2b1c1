"""Probability outputs for linear SVMs: Platt's sigmoids (linsvm.model.sigmoid)
fitted on out-of-fold decision values.

The decision values must be out of sample: on the training rows the SVM's
values are biased towards the margin (most training points sit at |f| >= 1),
and a sigmoid fitted on them is over-confident.  `out_of_fold_decision_values`
trains k models (default 5, the stratified folds of linsvm.fit.folds.make_folds)
with the same options and collects each held-out row's decision value;
`calibrate` fits the sigmoids on them (one for two classes, one per class
column for more) and returns the model carrying them.
"""
from __future__ import annotations

import numpy as np

from ..errors import DataError, ParameterError
from ..model.sigmoid import fit_multiclass, fit_sigmoid
from ..problem.csr import CSRBuffers, take_rows
from ..problem.labels import class_order
from .folds import make_folds, run_folds
from .training import train
from .warm import columns_in_order

def out_of_fold_decision_values(X, y, n_folds=5, seed=0, classes=None, sample_weight=None,
                                init=None, **train_options):
    """Decision values of every row from a model that did not see it.

    Splits the rows into n_folds stratified folds (linsvm.fit.folds.make_folds with
    `seed`, which is also the solvers' seed), trains linsvm.train(X, y, rows=<the other folds>, **train_options)
    on each and scores the held-out fold.  classes: the class order of the
    result (default linsvm.problem.labels.class_order(y), the order of a model trained on
    all of y).  Returns (classes, scores): scores (n,) for two classes (positive
    for classes[0]; a two-column model's score is column 0 minus column 1) or (n, k) with column j scoring classes[j].  Entries a fold
    cannot give are NaN: a multi-class fold without an example of class j to
    train on leaves column j NaN for its held-out rows, and a binary fold whose
    training rows hold one class leaves its rows NaN.  init: a Model (e.g. the
    one trained on all rows, same bias) whose weights warm-start every fold that
    has all the classes (beta-seeding; not for the dual solvers, which
    need their dual variables).  Warnings of the folds are emitted (or collected) as
    train() does.
    """
    y = np.asarray(y, dtype=np.float64)
    if classes is None:
        classes = class_order(y)
    classes = np.asarray(classes, dtype=np.float64)
    k = classes.shape[0]
    if k < 2:
        raise DataError("need at least two classes for decision values")
    try:
        n_folds = int(n_folds)
    except (TypeError, ValueError):
        raise ParameterError(f"the number of folds must be an integer, got {n_folds!r}") from None
    Xb = X if isinstance(X, CSRBuffers) else CSRBuffers(X)
    fold = make_folds(y, n_folds, seed=seed)
    scores = np.full((y.shape[0],) if k == 2 else (y.shape[0], k), np.nan)

    def run_fold(f, rows, test):
        if test.size == 0 or rows.size == 0:
            return
        present = np.unique(y[rows])
        if present.shape[0] < 2:
            return
        start = None
        if init is not None and present.shape[0] == k and not _dual_state(init):
            # a weight array, not the Model: a dual solver's state belongs to its rows
            start = columns_in_order(init, class_order(y[rows]))
        model = train(Xb, y, rows=rows, sample_weight=sample_weight, init=start, seed=seed,
                      **train_options)
        s = model.decision_function(take_rows(X, test))
        if k == 2 and s.ndim == 2:          # a multi-class solver: one column per class
            s = s[:, 0] - s[:, 1]
        if k == 2:
            scores[test] = s if model.classes_[0] == classes[0] else -s
        else:
            for m, label in enumerate(model.classes_):
                scores[test, int(np.flatnonzero(classes == label)[0])] = s[:, m]

    run_folds(fold, n_folds, run_fold)      # serially: the folds' warnings reach the caller
    return classes, scores


def calibrate(model, X, y, n_folds=5, sample_weight=None, **train_options):
    """`model` with Platt sigmoids fitted on out-of-fold decision values: a new Model
    (`Model.with_probability`) whose `predict_proba` gives class probabilities.

    X, y, sample_weight: the data `model` was trained on; train_options: the
    options of linsvm.train it was trained with (solver, C, bias, tol,
    class_weight, seed, ...), which the folds reuse (`seed` also deals the
    folds).  `out_of_fold_decision_values` trains min(n_folds, n) models (each
    warm-started from `model` where the solver allows), so this costs about
    n_folds more trainings.  A row that no fold can score (its fold's training
    part lacks a class) takes `model`'s own decision value.  Two classes: one
    sigmoid, the probability of model.classes_[0] against its score; k > 2: one
    per class column (module docstring).  This is what ``linsvm-train -b 1`` and
    ``linsvm.sklearn.LinearSVC(probability=True)`` call.  Ordinal models and
    one-class models raise ParameterError.
    """
    if model.kind == "ordinal":
        raise ParameterError("probabilities (-b 1) are for classifiers: an ordinal model has no "
                             "class probabilities")
    classes = model.classes_
    if classes.shape[0] < 2:
        raise ParameterError("probabilities (-b 1) need at least two classes")
    y = np.asarray(y, dtype=np.float64)
    seed = train_options.pop("seed", 0)
    train_options.pop("init", None)
    n_folds = int(min(n_folds, y.shape[0]))
    _, S = out_of_fold_decision_values(X, y, n_folds=n_folds, seed=seed, classes=classes,
                                       sample_weight=sample_weight, init=model, **train_options)
    missing = np.isnan(S)
    if missing.any():
        full = model.decision_function(take_rows(X, np.arange(y.shape[0])))
        if S.ndim == 1 and full.ndim == 2:
            full = full[:, 0] - full[:, 1]
        S[missing] = full[missing]
    if S.ndim == 1:                     # positive for classes[0]
        params = np.array([fit_sigmoid(S, y == classes[0], sample_weight)])
    else:
        index = {c: j for j, c in enumerate(classes.tolist())}
        params = fit_multiclass(S, np.array([index[v] for v in y.tolist()]), sample_weight)
    return model.with_probability(params)


def _dual_state(model):
    """Whether model carries a dual solver's state (such solvers cannot start from
    weights alone: a fold starts them cold rather than warn)."""
    state = getattr(model, "solver_state_", None)
    if isinstance(state, list):
        return any(x is not None for x in state)
    return state is not None
