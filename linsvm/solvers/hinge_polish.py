"""The dual polish of mfn-l1's certificate (linsvm.solvers.mfn_family, fit_l1).

At an iterate w of a continuation stage, with xi_i = 1 - t_i w.x_i, the plain
certificate's dual point alpha_i = C c_i H_tau'(xi_i) is only as good as w is the
smoothed problem's optimum: its gradient part 1/2 ||w - w_alpha||^2 stays large until
the stage has converged, many Newton iterations after F(w) itself has come within the
tolerance of F* (on imbalanced text, twelve of a stage's 42).  The polish keeps
alpha_i = 0 below the band -width < xi_i < width and alpha_i = C c_i above it, and
raises the hinge loss's dual

    D(alpha) = sum_i alpha_i - 1/2 ||w_alpha||^2,   w_alpha = sum_i alpha_i t_i x_i,
    0 <= alpha_i <= C c_i,

over the band's alphas by dual coordinate descent from alpha(w) (Hsieh et al. 2008:
csrc/_dcd.pyx's local pass, whose w starts at w_alpha of every example), LOOPS loops at
a time while D rises by more than a tenth of the tolerance.  Every alpha it visits is
feasible, so each D is a lower bound on F*; the polished w_alpha is a primal point too.
Cost: two passes over the data for alpha(w) and w_alpha, one for F(w_alpha), and the
band's loops.  Serial solves only: on several MPI ranks the band's loops would need the
CoCoA+ rounds of linsvm.solvers.cocoa, and mfn-l1 keeps its plain certificate there.
"""
from __future__ import annotations

import numpy as np

from .. import _dcd
from .._data import DataView
from .._kernels import csr_matvec, csr_transposed_scores, vdot

LOOPS = 5               # dual CD loops between two evaluations of D
MAX_LOOPS = 40          # loops of one polish at most


def hinge_objective(problem, C, w, n_threads=1):
    """F(w) = 1/2 ||w||^2 + C sum_i c_i max(0, xi_i), and the xi_i = 1 - t_i w.x_i (one
    array, the margins' own)."""
    xi = csr_matvec(problem.view, w, n_threads)
    xi *= problem.t
    np.subtract(1.0, xi, out=xi)
    return 0.5 * vdot(w, w) + C * vdot(problem.cost, np.maximum(xi, 0.0)), xi


def polish(problem, C, w, width, tol, seed, n_threads=1, tau=0.0):
    """The polished dual point at w (module notes), from the band |xi_i| < width: returns
    a dict with F (the hinge objective at w), alpha (the dual point, one per position)
    and D (its dual value, <= F*), v (its w_alpha), F_v (the hinge objective at v),
    n_band (the examples whose alpha could move), n_quad (those with |xi_i| < tau, the
    stage's quadratic band) and loops."""
    F, alpha = hinge_objective(problem, C, w, n_threads)
    n_quad = int(np.count_nonzero(np.abs(alpha) < tau))
    alpha += width                          # alpha_i = C c_i clip((xi_i + width) / (2 width))
    alpha *= 0.5 / width
    np.clip(alpha, 0.0, 1.0, out=alpha)
    band = np.flatnonzero((alpha > 0.0) & (alpha < 1.0))
    alpha *= problem.cost
    alpha *= C
    v = csr_transposed_scores(problem.view, (alpha * problem.t).reshape(-1, 1)).ravel()
    D = alpha.sum() - 0.5 * vdot(v, v)
    loops = 0
    if band.size:
        rows = problem.rows[band] if problem.rows is not None else band
        a_band = alpha[band]                    # moved in place by the local passes
        fixed = alpha.sum() - a_band.sum()
        block = _dcd.dcd_local_setup(DataView(problem.X, problem.bias, rows),
                                     t=problem.t[band], c=problem.cost[band], C=C,
                                     loss="l1", sigma=1.0, alpha=a_band)
        rng = np.array([seed & 0xFFFFFFFFFFFFFFFF], dtype=np.uint64)
        while loops < MAX_LOOPS:
            # w = v: the pass copies w into v first, so v continues from where it is
            out = _dcd.dcd_local_pass(block, w=v, v=v, tol=0.0, shrinking=False, rng=rng,
                                      local_epochs=LOOPS)
            if out["stopped"] is not None:
                raise out["stopped"]
            loops += out["n_iter"]
            D_new = fixed + a_band.sum() - 0.5 * vdot(v, v)
            gain, D = D_new - D, D_new
            if gain <= 0.1 * tol * abs(D):
                break
        alpha[band] = a_band
    F_v, _ = hinge_objective(problem, C, v, n_threads)
    return {"F": F, "alpha": alpha, "D": D, "v": v, "F_v": F_v, "n_band": int(band.size),
            "n_quad": n_quad, "loops": loops}
