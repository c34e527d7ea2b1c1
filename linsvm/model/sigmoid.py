"""Platt's sigmoid: the probability of a class from a decision value, and its fit.

Binary: P(y = 1 | f) = 1 / (1 + exp(A f + B)), with (A, B) minimizing the
cross-entropy of the sigmoid against Platt's regularized targets

    t_i = (N+ + 1) / (N+ + 2)  for positive examples,  1 / (N- + 2)  for negative ones,

(N+, N-: the (weighted) numbers of positive and negative examples; the targets
are the posterior means under a uniform prior, which keeps A and B finite on
separable data).  The fit is the Newton method with backtracking line search
of Lin, Lin & Weng (2007), "A note on Platt's probabilistic outputs for support
vector machines", Machine Learning 68: written here from the paper's
description:

* start at A = 0, B = log((N- + 1) / (N+ + 1));
* the objective F(A, B) = sum_i t_i z_i + log(1 + exp(-z_i)), z_i = A f_i + B,
  is evaluated in the form that never exponentiates a positive number
  (z >= 0: t z + log1p(exp(-z)); z < 0: (t - 1) z + log1p(exp(z))), and so is
  p_i = 1 / (1 + exp(z_i));
* the Newton direction solves (H + sigma I) d = -g with sigma = 1e-12 (H is
  only positive semi-definite when all f_i are equal);
* backtracking halves the step from 1 until the sufficient-decrease condition
  F(new) < F + 1e-4 step g.d holds; a step below 1e-10 ends the fit (the paper:
  the line search failed, the current point is kept);
* at most 100 Newton iterations; stop when both gradient components are
  below 1e-5 in absolute value.

The decision values must be out of sample (linsvm.fit.calibration fits the
sigmoids on out-of-fold decision values).

Multi-class.  LIBSVM couples the sigmoids of its k(k-1)/2 pairwise classifiers
(Wu, Lin & Weng 2004, method 2).  linsvm's multi-class models have no pairwise
classifiers: one-vs-rest and the Crammer-Singer / Weston-Watkins solvers give
one score per class, so pairwise coupling does not apply.  We fit one sigmoid
per class on that class's out-of-fold score column (class j against the rest)
and normalize the k probabilities of a row to sum to 1.  Why this and not one
softmax with a fitted temperature: (1) for one-vs-rest, each column is a
binary classifier trained exactly for "class j vs rest", which is what Platt's
sigmoid calibrates, and the binary case is the k = 2 special case of the same
rule; (2) the columns of a one-vs-rest model are trained independently, so
their scales and offsets differ per class (a rare class gets negative scores
everywhere); a per-class (A_j, B_j) corrects each, one temperature cannot;
(3) it costs 2k parameters fitted by k independent two-variable Newton
solves, cheap even for SECTOR's 105 classes, and each is regularized by
Platt's targets, so a class with few examples still gets finite parameters.
It is also what scikit-learn's CalibratedClassifierCV(method="sigmoid") does
for one-vs-rest classifiers (docs/benchmarks.md compares the two).
For Crammer-Singer / Weston-Watkins columns the scores are joint margins, and
the same per-column sigmoid is a monotone, per-class recalibration of them;
the normalization makes the result a distribution.
"""
from __future__ import annotations

import math

import numpy as np

from .._kernels import vdot
from ..errors import DataError

MIN_STEP = 1e-10        # the line search gives up below this step
MAX_ITER = 100          # Newton iterations
SIGMA = 1e-12           # added to the Hessian's diagonal
GRAD_TOL = 1e-5         # stop when |dF/dA| and |dF/dB| are both below this


def _sigmoid_terms(z):
    """p = 1 / (1 + exp(z)) and log(1 + exp(-z)) without overflow (elementwise)."""
    e = np.exp(-np.abs(z))                      # in (0, 1]
    p = np.where(z >= 0, e / (1.0 + e), 1.0 / (1.0 + e))
    return p, np.log1p(e)


def _objective(f, t, w, A, B):
    """F(A, B) = sum_i w_i [t_i z_i + log(1 + exp(-z_i))], z = A f + B, evaluated stably:
    z >= 0: t z + log1p(exp(-z)); z < 0: (t - 1) z + log1p(exp(z))."""
    z = A * f + B
    _, l = _sigmoid_terms(z)
    return float(np.sum(w * (np.where(z >= 0, t * z, (t - 1.0) * z) + l)))


def platt_targets(y, sample_weight=None):
    """Platt's regularized targets for labels y (True / 1 = positive) and the
    (weighted) counts (N+, N-): (N+ + 1)/(N+ + 2) for positives, 1/(N- + 2) else."""
    pos = _as_positive(y)
    w = _weights(sample_weight, pos.shape[0])
    n_pos = float(np.sum(w[pos]))
    n_neg = float(np.sum(w[~pos]))
    t = np.where(pos, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    return t, n_pos, n_neg


def _as_positive(y):
    y = np.asarray(y)
    if y.ndim != 1:
        raise DataError(f"y must be 1-D, got shape {y.shape}")
    if y.dtype == np.bool_:
        return y
    y = y.astype(np.float64)
    return y > 0


def _weights(sample_weight, n):
    if sample_weight is None:
        return np.ones(n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise DataError(f"sample_weight must be {n} finite numbers >= 0")
    return w


def fit_sigmoid(f, y, sample_weight=None, max_iter=MAX_ITER, min_step=MIN_STEP, sigma=SIGMA,
                grad_tol=GRAD_TOL):
    """Fit Platt's sigmoid P(y=1|f) = 1/(1+exp(A f + B)) to decision values f and
    labels y (positive: y > 0, or True); returns (A, B).

    The Newton method with backtracking of Lin, Lin & Weng (2007), module
    docstring.  sample_weight (optional) weights each example's term and the
    counts in the targets.  f must be finite; y may contain one class only (the
    targets keep the solution finite).
    """
    f = np.ascontiguousarray(f, dtype=np.float64).reshape(-1)
    if not np.all(np.isfinite(f)):
        raise DataError("decision values must be finite")
    if f.shape[0] != np.asarray(y).shape[0]:
        raise DataError(f"{f.shape[0]} decision values for {np.asarray(y).shape[0]} labels")
    if f.shape[0] == 0:
        raise DataError("no decision values to fit a sigmoid to")
    w = _weights(sample_weight, f.shape[0])
    t, n_pos, n_neg = platt_targets(y, w)
    A, B = 0.0, math.log((n_neg + 1.0) / (n_pos + 1.0))
    fval = _objective(f, t, w, A, B)
    for _ in range(max_iter):
        p, _ = _sigmoid_terms(A * f + B)
        d2 = w * p * (1.0 - p)                  # second-derivative weights
        d1 = w * (t - p)                        # dF/dz_i
        h11 = sigma + vdot(f * f, d2)
        h22 = sigma + float(np.sum(d2))
        h21 = vdot(f, d2)
        g1 = vdot(f, d1)
        g2 = float(np.sum(d1))
        if abs(g1) < grad_tol and abs(g2) < grad_tol:
            break
        det = h11 * h22 - h21 * h21
        dA = -(h22 * g1 - h21 * g2) / det       # (H + sigma I) d = -g, 2 x 2
        dB = -(-h21 * g1 + h11 * g2) / det
        gd = g1 * dA + g2 * dB                  # < 0: a descent direction
        step = 1.0
        while step >= min_step:
            nA, nB = A + step * dA, B + step * dB
            nf = _objective(f, t, w, nA, nB)
            if nf < fval + 1e-4 * step * gd:
                A, B, fval = nA, nB, nf
                break
            step /= 2.0
        else:
            break                               # the line search failed: keep (A, B)
    return float(A), float(B)


def sigmoid_proba(f, A, B):
    """P(y = 1 | f) = 1 / (1 + exp(A f + B)), elementwise, without overflow."""
    p, _ = _sigmoid_terms(A * np.asarray(f, dtype=np.float64) + B)
    return p


def fit_multiclass(scores, y, sample_weight=None):
    """One sigmoid per class (module docstring): scores (n, k) with column j the
    score of class j, y (n,) class indices 0..k-1; returns an array (k, 2) of
    (A_j, B_j).  Rows whose score in column j is NaN (a fold that had no
    example of class j to train on) are left out of class j's fit."""
    S = np.asarray(scores, dtype=np.float64)
    y = np.asarray(y)
    if S.ndim != 2 or S.shape[0] != y.shape[0]:
        raise DataError(f"scores must have shape (n, k) with n = {y.shape[0]}, got {S.shape}")
    w = _weights(sample_weight, y.shape[0])
    params = np.empty((S.shape[1], 2))
    for j in range(S.shape[1]):
        ok = ~np.isnan(S[:, j])
        if not ok.any():
            raise DataError(f"no decision values for class {j}")
        params[j] = fit_sigmoid(S[ok, j], y[ok] == j, w[ok])
    return params


def multiclass_proba(scores, params):
    """Probabilities (n, k) from scores (n, k) and per-class sigmoids (k, 2):
    each column's sigmoid, rows normalized to sum to 1 (a row whose sigmoids all
    underflow to 0 gets the uniform distribution)."""
    S = np.asarray(scores, dtype=np.float64)
    params = np.asarray(params, dtype=np.float64)
    if S.ndim != 2 or params.shape != (S.shape[1], 2):
        raise DataError(f"scores (n, k) and params (k, 2) expected, got {S.shape} and {params.shape}")
    P = sigmoid_proba(S, params[:, 0], params[:, 1])
    total = P.sum(axis=1, keepdims=True)
    zero = total[:, 0] <= 0
    if zero.any():
        P[zero] = 1.0
        total[zero] = S.shape[1]
    return P / total
