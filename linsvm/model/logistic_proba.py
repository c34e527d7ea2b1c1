"""Probabilities of logistic regression models, from their decision values alone.

A model trained with a logistic loss (its solver's SolverInfo.probabilities is set: lr,
lr-dual, softmax, glmnet, and any later one; or a LIBLINEAR file of type L2R_LR,
L2R_LR_DUAL or L1R_LR) scores log-odds, so it gives class probabilities without any calibration
(no Platt sigmoids, no folds).  The link depends on how the columns were trained:

* ``binary`` (one column f, the score of classes[0]):
      P(classes[0]) = sigma(f) = 1 / (1 + exp(-f)),   P(classes[1]) = 1 - sigma(f);
* ``ovr`` (a binary solver one-vs-rest over k > 2 classes, column j class j against the
  rest): LIBLINEAR's normalisation of the k binary probabilities,
      P(classes[j]) = sigma(f_j) / sum_m sigma(f_m);
* ``softmax`` (a multinomial solver, one column per class trained jointly, also on two
  classes):  P(classes[j]) = exp(f_j) / sum_m exp(f_m).

All three are computed in log space (log sigma(f) = -log(1 + exp(-f)), then a shifted
log-sum-exp), so that scores far beyond the range of exp give the limits LIBLINEAR's
formulas tend to instead of 0/0.  `logistic_link` says which link a model has (None for
a model whose scores are not log-odds: an SVM, which needs Platt's sigmoids).
"""
from __future__ import annotations

import numpy as np

from ..problem.catalog import SOLVERS
from .format_liblinear import SOLVER_PREFIX

__all__ = ["LIBLINEAR_LOGISTIC_TYPES", "logistic_link", "logistic_proba"]

# LIBLINEAR's solver types whose models `predict -b 1` gives probabilities for (its
# check_probability_model): the logistic losses.
LIBLINEAR_LOGISTIC_TYPES = ("L2R_LR", "L1R_LR", "L2R_LR_DUAL")


def logistic_link(solver, kind, n_columns) -> str | None:
    """"binary", "ovr" or "softmax" (module notes) for a model trained by `solver` (a
    registered name or liblinear:<solver_type>), of model kind `kind`, with n_columns
    weight columns; None when its scores are not log-odds."""
    if not isinstance(solver, str):
        return None
    if solver.startswith(SOLVER_PREFIX):
        if solver[len(SOLVER_PREFIX):] not in LIBLINEAR_LOGISTIC_TYPES:
            return None
        multinomial = False
    else:
        info = SOLVERS.get(solver)
        if info is None or not info.probabilities:
            return None
        multinomial = info.kind == "multiclass"
    if kind not in ("binary", "multiclass"):
        return None
    if multinomial:
        return "softmax"
    return "binary" if n_columns == 1 else "ovr"


def _log_sigmoid(f):
    """log sigma(f) = -log(1 + exp(-f)), without overflow."""
    return -np.logaddexp(0.0, -f)


def _normalise_logs(L):
    """exp(L_j) / sum_m exp(L_m) per row of L (n, k), by a shifted log-sum-exp."""
    top = np.max(L, axis=1, keepdims=True)
    E = np.exp(L - top)
    return E / E.sum(axis=1, keepdims=True)


def logistic_proba(scores, link) -> np.ndarray:
    """Class probabilities (n, k), columns in model order, from decision values
    `scores` ((n,) for one column, (n, k) otherwise) by `link` (module notes)."""
    s = np.asarray(scores, dtype=np.float64)
    if link == "binary":
        f = s.reshape(-1)
        p0 = np.exp(_log_sigmoid(f))
        return np.column_stack([p0, np.exp(_log_sigmoid(-f))])
    if s.ndim == 1:
        s = s.reshape(-1, 1)
    if link == "ovr":
        return _normalise_logs(_log_sigmoid(s))
    if link == "softmax":
        return _normalise_logs(s)
    raise ValueError(f"unknown logistic link {link!r}")
