"""liblinearutil's `train`: a model, or with -v the cross-validation accuracy (MSE for
regression), or with -C LIBLINEAR's parameter search's (best C, best p, best score).

The solve is linsvm's (linsvm.fit.training.train, the solver the catalog gives for
the -s code; linsvm.problem.catalog.liblinear_code) on LIBLINEAR's problem: its
defaults and its options (linsvm.liblinear_compat.options), labels cast to int for
classifiers as LIBLINEAR casts them, class weights of labels absent from the data
ignored with LIBLINEAR's warning.  -v runs linsvm's k-fold cross-validation
(linsvm.fit.cv) and scores the pooled out-of-fold predictions as LIBLINEAR does; -C
runs linsvm's version of LIBLINEAR's search (linsvm.fit.search: C doubling from
LIBLINEAR's start, and for -s 11 p = i p0 / 20, i = 19 .. 0, p0 = -p or LIBLINEAR's
max_i |y_i|).  Folds are linsvm's (seed 0), not LIBLINEAR's
random ones, so -v and -C agree with LIBLINEAR to the noise of the folds.
"""
from __future__ import annotations

import numpy as np

from ..fit.cv import cross_validate
from ..fit.search import MAX_C_WARNING, best_line, max_C_reached, search_C
from ..fit.training import train as linsvm_train
from .data import evaluations, problem
from .models import model, with_zero_bias_row
from .options import (ONECLASS_CODE, REGRESSION_CODES, check_parameter, parameter,
                      train_arguments)

__all__ = ["train"]


def _problem_and_parameter(arg1, arg2, arg3):
    """train()'s two call forms as (problem, parameter)."""
    if isinstance(arg1, problem):
        return arg1, arg2 if isinstance(arg2, parameter) else parameter(arg2)
    if isinstance(arg1, (list, tuple, np.ndarray)):
        return problem(arg1, arg2), arg3 if isinstance(arg3, parameter) else parameter(arg3)
    raise TypeError("Wrong types for the arguments: train(y, x[, options]) or "
                    "train(problem[, options or parameter])")


def _class_weights(param, y, quiet):
    """-wLABEL WEIGHT as {label: weight}, LIBLINEAR's warning for a label not in y."""
    present = set(np.unique(y).tolist())
    out = {}
    for label, weight in zip(param.weight_label, param.weight):
        if float(label) in present:
            out[float(label)] = float(weight)
        elif not quiet:
            print(f"WARNING: class label {label} specified in weight is not found")
    return out or None


def train(arg1, arg2=None, arg3=None):
    """train(y, x[, options]), train(prob[, options]) or train(prob, param).

    y: labels (list, tuple or array); x: instances (scipy sparse, a 2-D numpy array,
    or a list of dicts or lists); options: LIBLINEAR's training options (a string,
    linsvm.liblinear_compat.options).  Returns a `model`; with -v n the n-fold
    cross-validation accuracy in percent (classification, one-class) or mean squared
    error (regression); with -C the tuple (best C, best p, best score) of LIBLINEAR's
    parameter search (-s 0, 2: p is -1 and the score the CV accuracy as a fraction;
    -s 11: the CV MSE).  An option LIBLINEAR refuses raises ParameterError (a
    ValueError) with its reason; data it cannot take raises DataError."""
    prob, param = _problem_and_parameter(arg1, arg2, arg3)
    prob.set_bias(param.bias)
    code = check_parameter(param, prob.bias)
    quiet = bool(param.quiet)
    y = prob.y if code in REGRESSION_CODES else np.trunc(prob.y)    # LIBLINEAR: (int) y
    options = train_arguments(param, code)
    options["bias"] = prob.bias if prob.bias > 0 else -1.0
    if code not in REGRESSION_CODES and code != ONECLASS_CODE:
        options["class_weight"] = _class_weights(param, y, quiet)
    options["allow_many_classes"] = True            # LIBLINEAR takes any int labels
    log = None if quiet else print
    if param.flag_find_parameters:
        return _search(prob, y, param, code, options, log)
    if param.flag_cross_validation:
        return _cross_validation(prob, y, param, code, options, quiet)
    m = linsvm_train(prob.x, y, log=log, **options)
    if prob.bias == 0:
        m = with_zero_bias_row(m)
    return model(m, _copy_of(param))


def _copy_of(param):
    out = parameter.__new__(parameter)
    out.__dict__.update(param.__dict__, weight_label=list(param.weight_label),
                        weight=list(param.weight))
    return out


def _cross_validation(prob, y, param, code, options, quiet):
    """-v: the pooled out-of-fold accuracy (percent) or, for regression, MSE."""
    folds = param.nr_fold
    if folds > prob.l:
        if not quiet:
            print("WARNING: # folds > # data. Will use # folds = # data instead (i.e., "
                  "leave-one-out cross validation)")
        folds = prob.l
    C = options.pop("C")
    res = cross_validate(prob.x, y, Cs=[C], n_folds=folds, seed=0, keep_predictions=True,
                         **options)
    acc, mse, scc = evaluations(y, res.points[0].predictions)
    if code in REGRESSION_CODES:
        print(f"Cross Validation Mean squared error = {mse:g}")
        print(f"Cross Validation Squared correlation coefficient = {scc:g}")
        return mse
    print(f"Cross Validation Accuracy = {acc:g}%")
    return acc


def _search(prob, y, param, code, options, log):
    """-C: (best C, best p or -1, best CV accuracy as a fraction or MSE)."""
    options.pop("C")
    p0 = None
    if code in REGRESSION_CODES:        # LIBLINEAR's largest p: -p, else max |y_i|
        p0 = options.pop("epsilon")
        if not param.flag_p_specified:
            p0 = float(np.max(np.abs(y)))
    res = search_C(prob.x, y, n_folds=param.nr_fold,
                   C0=param.C if param.flag_C_specified else None, p0=p0, seed=0, log=log,
                   **options)
    if log is not None and max_C_reached(res):
        log(MAX_C_WARNING)
    print(best_line(res))
    best_C, best_p, best_score = res.best
    return float(best_C), (float(best_p) if code in REGRESSION_CODES else -1.0), float(best_score)
