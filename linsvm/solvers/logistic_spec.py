"""The catalog entries of the logistic regression solvers: lr (LIBLINEAR -s 0), lr-dual
(-s 7) and softmax (multinomial), run by linsvm.solvers.logistic (imported on the first
solve).  Pure Python, read by linsvm.problem.catalog (docs/design.md, "Adding a solver").

Their `loss` is "logistic" and `probabilities` is set: their decision values are
log-odds, so that the model predicts probabilities without calibration
(linsvm.model.logistic_proba).  docs/logistic.md describes them.
"""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import (N_THREADS_HELP, REGULARIZE_BIAS, WEIGHT_SPLIT, LiblinearCode,
                                Option, SolverInfo, WorkMemory)

__all__ = ["SPECS", "NEWTON_OPTIONS", "SOFTMAX_TOL", "LRDUAL_TOL"]

LOGISTIC_LOSS = "logistic"          # SolverInfo.loss of every solver of a logistic loss

SOFTMAX_TOL = 0.01
# lr-dual's default -e, not LIBLINEAR -s 7's 0.1 (docs/logistic.md, "Stopping")
LRDUAL_TOL = 0.01

# SolverInfo.memory of a truncated Newton solve (csrc/_logistic.pyx): 11 vectors of
# n_weights k doubles (beta, its copy, the CG and line-search vectors), one more per kernel
# thread beyond the first; per row U = C c and per term the scores, the step's image, the
# CGLS weights and residual, CGLS's q and u (the scores are kept over a line search in q)
# -- lr: one term an example, and e and the labels t (9 doubles); softmax: k terms an
# example, and its probabilities and the operator's scratch per term, the log-sum-exp and
# the class code (int32) per example, and two multinomial scatters' block scratch.
_NEWTON_MEMORY = WorkMemory(11, 9 * 8)
_SOFTMAX_MEMORY = WorkMemory(0, 2 * 8 + 4, per_class=11, per_class_row=8 * 8, per_thread=0,
                             per_thread_class=1, class_scatters=2)


NEWTON_OPTIONS = {
    "max_iter": Option(int, 1000, "cap on Newton iterations (LIBLINEAR's: 1000)", 1),
    "cg_max_iter": Option(int, 5000, "cap on CG iterations per Newton step", 1),
    "cg_tol": Option(float, 0.5, "truncation of each step's CG by Galli & Lin's quadratic-model "
                     "rule, i (Q_{i-1} - Q_i) <= min(cg_tol, ||g||_{M^-1}^(1/2)) |Q_i| (0 = off)",
                     0.0, 0.99),
    "forcing": Option(float, 0.0, "inexact Newton: a CG step also stops at ||r|| <= forcing "
                      "||grad f|| (0 = off)", 0.0, 0.99),
    "precondition": Option(bool, True, "damped Jacobi preconditioning of CG"),
    "jacobi_weight": Option(float, 0.01, "weight w of the Jacobi diagonal in the CG "
                            "preconditioner 1 / (1 + w diag(C X'DX)) (1 = plain Jacobi; "
                            "LIBLINEAR's 0.01)", 1e-6, 1.0),
    "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
}


def _fit(name):
    return LazyFunction("linsvm.solvers.logistic", name)


SPECS = (
    SolverInfo(
        name="lr",
        kind="binary",
        objective="1/2||w||^2 + C sum_i log(1 + exp(-y_i w.x_i))   (L2-regularized logistic "
                  "regression, as LIBLINEAR -s 0)",
        default_tol=0.002,
        tol_meaning="LIBLINEAR -s 0's test ||grad f(w)|| <= eps max(min(n+,n-),1)/n "
                    "||grad f(0)||, and a duality gap <= 1% of f",
        paper="Lin, Weng & Keerthi 2008 (truncated Newton for LR); Galli & Lin 2022 (CG "
              "truncation)",
        fit=_fit("fit_lr"),
        options=dict(NEWTON_OPTIONS, weight_split=WEIGHT_SPLIT, regularize_bias=REGULARIZE_BIAS),
        loss=LOGISTIC_LOSS,
        probabilities=True,
        liblinear_codes={0: LiblinearCode("L2R_LR")},
        memory=_NEWTON_MEMORY,
        distributed="rows",
        streams=True,
        distributed_options=("weight_split",),
    ),
    SolverInfo(
        name="lr-dual",
        kind="binary",
        objective="1/2||w||^2 + C sum_i log(1 + exp(-y_i w.x_i)), by its dual   (as LIBLINEAR "
                  "-s 7)",
        default_tol=LRDUAL_TOL,
        tol_meaning="the dual maximal violation max_i |dD/dalpha_i| over a loop of all examples "
                    "<= eps (Yu, Huang & Lin 2011; LIBLINEAR -s 7's measure), and a duality gap "
                    "<= 1% of f (else a smaller eps); default 0.01, not LIBLINEAR's 0.1 "
                    "(measured: LIBLINEAR's 0.1 stops about where this measure reaches 0.01)",
        paper="Yu, Huang & Lin 2011 (Machine Learning 85), Sec. 3, Algorithms 3-4",
        fit=_fit("fit_lrdual"),
        options={
            "max_iter": Option(int, 300, "cap on loops over the examples (LIBLINEAR -s 7's: "
                               "300)", 1),
            "primal_fallback": Option(bool, True, "a solve that reaches the loop cap finishes "
                                      "with lr from its w (as LIBLINEAR -s 7 switches to -s 0); "
                                      "off: stop there (and warn unless the gap is within 1%)"),
        },
        loss=LOGISTIC_LOSS,
        probabilities=True,
        liblinear_codes={7: LiblinearCode("L2R_LR_DUAL")},
        # w, its copy and the returned weights, the certificate's gradient; per row alpha,
        # its complement, U, QD, the permutation, the certificate's scratch, the state;
        # plus lr's solve (_NEWTON_MEMORY: 11 vectors, 9 doubles a row) when it finishes
        # with lr at its loop cap, while its own arrays are still held
        memory=WorkMemory(4 + 11, 88 + _NEWTON_MEMORY.per_row),
        serial_only="use -s lr (LIBLINEAR -s 0: the same objective, exact over row blocks)",
    ),
    SolverInfo(
        name="softmax",
        kind="multiclass",
        objective="1/2 sum_m ||w_m||^2 + C sum_i [log sum_m exp(w_m.x_i) - w_{y_i}.x_i]   "
                  "(multinomial logistic regression; scikit-learn's LogisticRegression "
                  "objective with the bias as a regularized feature)",
        default_tol=SOFTMAX_TOL,
        tol_meaning="||grad f(W)|| <= eps ||grad f(0)||, and a duality gap <= 1% of f",
        paper="truncated Newton as lr's (Lin, Weng & Keerthi 2008; Galli & Lin 2022) over all "
              "classes at once",
        fit=_fit("fit_softmax"),
        options=dict(NEWTON_OPTIONS, regularize_bias=Option(
            bool, True, "regularize the bias row like the others; off: free intercepts "
                        "(scikit-learn's LogisticRegression does not penalize its intercept; "
                        "needs -B > 0)")),
        loss=LOGISTIC_LOSS,
        probabilities=True,
        memory=_SOFTMAX_MEMORY,
        distributed="rows",
        streams=True,
    ),
)
