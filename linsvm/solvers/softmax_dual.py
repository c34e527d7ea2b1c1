"""The certificate of multinomial logistic regression with a free intercept.

softmax with regularize_bias off minimizes (scikit-learn's LogisticRegression objective,
its intercept unpenalized; x_i includes the bias feature of value b, U_i = C c_i)

    f(W) = 1/2 ||W_R||^2 + sum_i U_i [lse(o_i) - o_{i,y_i}],    o_i = W'x_i,

W_R the rows of W but the bias row.  Its dual, over one probability vector pi_i per example,

    D(pi) = -1/2 ||sum_i U_i x_i^R (Y_i - pi_i)'||^2 + sum_i U_i H(pi_i),
    subject to  sum_i U_i (Y_i - pi_i) = 0          (one constraint per class: the bias row),

with H the entropy and Y_i the one-hot label, is a lower bound on min f at every feasible
pi (Fenchel duality, as in csrc/logistic_newton.pxd's block comment, whose unconstrained point
pi_i = softmax(o_i) this constraint excludes away from the optimum).  The feasible point
used here shifts every row's scores by one vector delta, pi_i = softmax(o_i + delta), with
delta the minimizer of the convex

    phi(delta) = sum_i U_i lse(o_i + delta) - delta . n,    n = sum_i U_i Y_i,

whose gradient sum_i U_i pi_i - n is the constraint: Newton's method on it, in the
subspace of the classes present (a class with n_m = 0 takes pi_im = 0: delta_m = -inf),
one component fixed (phi is invariant to adding a constant to delta).  At the optimum of f
the constraint already holds, delta = 0 and pi is softmax(o).  The cost: one pass over the
data for the scores, one for W_pi, and O(n_rows k^2) per Newton step on delta.
"""
from __future__ import annotations

import numpy as np

from .._kernels import csr_scores, csr_transposed_scores

NEWTON_STEPS = 50          # at most (Newton's method on a smooth convex phi)
FEASIBLE = 1e-13           # |sum_i U_i pi_im - n_m| <= FEASIBLE sum_i U_i: feasible to rounding


def _scores(problem, W):
    """o_i = W' x_i (the bias row included) of the problem's examples."""
    return csr_scores(problem.view, np.ascontiguousarray(W, dtype=np.float64))


def _transposed_scores(problem, M):
    """sum_i x_i M_i' over the problem's examples (the bias row included): X' M."""
    return csr_transposed_scores(problem.view, np.ascontiguousarray(M, dtype=np.float64))


def _sum(comm, value):
    """value summed over the ranks (itself when serial), as a float64 array of its shape."""
    a = np.array(value, dtype=np.float64)           # a copy: the allreduce is in place
    if comm is None:
        return a
    return comm.sum(a.reshape(-1)).reshape(a.shape)


def _lse(S):
    mx = S.max(axis=1, keepdims=True)
    return (mx + np.log(np.exp(S - mx).sum(axis=1, keepdims=True))).ravel()


def softmax_free_bias_dual(problem, C, W):
    """D(pi) (module notes) at the balanced point pi_i = softmax(o_i + delta) for the weights
    W (n_weights x k, the bias row last) of a softmax solve with a free bias: a lower bound
    on the optimum.  Every sum runs over every rank's rows when problem.comm is set."""
    comm = problem.comm
    U = C * problem.cost
    use = U > 0
    O = _scores(problem, W)
    Y = np.zeros_like(O)
    Y[np.arange(O.shape[0]), problem.codes] = 1.0
    n = _sum(comm, U @ Y)
    total = float(_sum(comm, U.sum()))
    present = n > 0
    idx = np.flatnonzero(present)
    delta = np.where(present, 0.0, -np.inf)
    Ou, Uu = O[use][:, idx], U[use]

    def phi(d):
        return float(_sum(comm, Uu @ _lse(Ou + d[idx]))) - float(d[idx] @ n[idx])

    f0 = phi(delta)
    for _ in range(NEWTON_STEPS):
        S = Ou + delta[idx]
        P = np.exp(S - _lse(S)[:, None])
        r = _sum(comm, Uu @ P) - n[idx]
        if idx.shape[0] < 2 or np.abs(r).max() <= FEASIBLE * total:
            break
        UP = Uu[:, None] * P
        H = _sum(comm, np.diag(UP.sum(axis=0)) - P.T @ UP)
        # phi is flat along the all-ones vector: fix the last present class's component
        step = np.zeros(idx.shape[0])
        step[:-1] = np.linalg.solve(H[:-1, :-1], -r[:-1])
        t, decrease = 1.0, float(r @ step)
        while t > 1e-12:
            trial = delta.copy()
            trial[idx] += t * step
            f1 = phi(trial)
            if f1 <= f0 + 1e-4 * t * decrease:
                delta, f0 = trial, f1
                break
            t *= 0.5
        else:
            break
    S = O + delta
    with np.errstate(invalid="ignore"):
        P = np.zeros_like(O)
        P[:, idx] = np.exp(S[:, idx] - _lse(S[:, idx])[:, None])
    P[~use] = 0.0
    G = _sum(comm, _transposed_scores(problem, U[:, None] * (Y - P)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(P > 0, P * np.log(P), 0.0).sum(axis=1)
    return float(-0.5 * np.sum(G * G) + float(_sum(comm, U @ ent)))
