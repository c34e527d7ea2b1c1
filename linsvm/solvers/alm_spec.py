"""The catalog entries of the SVM-ALM solvers, alm and alm-exact (linsvm.solvers.alm).

Pure Python, as every FAMILY_spec module: linsvm.problem.catalog imports it by name to
read SPECS, so reading it imports no solver and no NumPy (docs/design.md, "Adding a
solver").
"""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import N_THREADS_HELP, Option, SolverInfo, WorkMemory

__all__ = ["SPECS", "ALM_OPTIONS", "ALM_EXACT_OPTIONS"]

FIT_MODULE = "linsvm.solvers.alm"

ALM_OPTIONS = {
    "p": Option(float, 1.0, "loss exponent p >= 1 of max(0, 1 - y w.x)^p (1: hinge, 2: squared hinge)", 1.0),
    "free_intercept": Option(bool, False, "unregularized intercept b (the paper's eq. 4), stored as "
                             "the bias row b/B; needs -B > 0"),
    "stop": Option(str, "objective", "stopping rule: objective (relative change <= -e, paper Sec. 4, "
                   "once the certified duality gap is <= min(1%, 100 e)), "
                   "gradient (||grad|| <= -e relative, p > 1) or gap (certified duality gap <= -e)",
                   choices=("objective", "gradient", "gap")),
    "max_iter": Option(int, 1000, "cap on iterations (alm, alm-exact: ALM iterations, default 1000; "
                       "the paper uses 100)", 1),
    "mu0": Option(float, None, "initial penalty mu (default 10 / sum_i ||x_i||^2)", 1e-300),
    "mu_max": Option(float, 1e5, "cap on the penalty mu (the paper's 1e5)", 1e-300),
    "mu_rule": Option(str, "balance", "mu schedule, never decreasing: balance (grow when the primal "
                      "residual leads), geometric (the paper's experiments) or eq29",
                      choices=("geometric", "eq29", "balance")),
    "mu_growth": Option(float, 2.0, "factor by which mu grows", 1.0, 1e6),
    "precondition": Option(bool, True, "diagonal (Jacobi) preconditioning (alm: of the w-step; off gives "
                           "the paper's plain gradient step)"),
    "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
    "primal_fallback": Option(bool, True, "p = 1 or 2 with --stop objective: a solve whose "
                              "certified gap, judged at iterations 100, 200, 400, ..., predicts "
                              "no 1% within --max-iter, or that reaches the cap, finishes with "
                              "mfn-l1 (p = 1) or mfn (p = 2) from its w; off: ALM alone, with a "
                              "warning at the cap"),
}

ALM_EXACT_OPTIONS = dict(
    ALM_OPTIONS,
    cg_tol=Option(float, 1e-3, "relative CGLS residual at which a least-squares step stops "
                  "(alm-exact: default 1e-3)", 1e-300, 1.0),
    cg_max_iter=Option(int, 1000, "cap on CGLS iterations per least-squares step (alm-exact: "
                       "default 1000)", 1),
)

_OBJECTIVE = "1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^p   (p = -p >= 1; p=1: LIBLINEAR -s 3, p=2: -s 1/-s 2)"
_TOL = ("stop=objective: |P_k - P_k-1| <= e |P_k| (paper Sec. 4) and certified duality gap "
        "<= min(1%, 100 e) |P|; stop=gradient: ||grad P|| <= "
        "e min(n+,n-)/n ||grad P(0)||; stop=gap: certified duality gap <= e |P|")

# Work arrays: 7 weight-length vectors in one block, beta and the returned copy; per row
# 10 + 3 float64 vectors of the augmented Lagrangian and the labels t (112 bytes).  With
# the hand-over (on by default) the peak is mfn-l1's (14 vectors, 113 bytes per row with
# the labels, up to 16 more for its polish's band: linsvm/solvers/mfn_spec.py) beside the
# beta it finishes from and one vector of the polish's temporaries, the multipliers and
# the ALM result's two row vectors, and ALM's scatter scratch beside mfn-l1's
# (tests/test_memory.py checks the estimate against the traced peak).
_MEMORY = WorkMemory(16, 129 + 3 * 8, scatters=2)

SPECS = (
    SolverInfo(
        name="alm",
        kind="binary",
        objective=_OBJECTIVE,
        default_tol=1e-4,
        tol_meaning=_TOL,
        paper="Nie et al. 2014, Algorithm 2 (inexact SVM-ALM)",
        fit=LazyFunction(FIT_MODULE, "fit_alm"),
        options=ALM_OPTIONS,
        loss="lp",
        memory=_MEMORY,
        distributed="rows",
        streams=True,
    ),
    SolverInfo(
        name="alm-exact",
        kind="binary",
        objective=_OBJECTIVE,
        default_tol=1e-4,
        tol_meaning=_TOL,
        paper="Nie et al. 2014, Algorithm 1 (exact SVM-ALM, CGLS w-step)",
        fit=LazyFunction(FIT_MODULE, "fit_alm_exact"),
        options=ALM_EXACT_OPTIONS,
        loss="lp",
        memory=_MEMORY,         # as alm's: the hand-over's peak
        distributed="rows",
        streams=True,
    ),
)
