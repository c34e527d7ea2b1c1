"""The catalog's logistic regression solvers: lr (LIBLINEAR -s 0), lr-dual (-s 7) and
softmax (multinomial), declared here and merged into linsvm.problem.catalog's SOLVERS
(which imports LOGISTIC_SOLVERS and registers each, in this order, at its end).

Their `loss` is "logistic": the one mark of a model whose decision values are
log-odds, so that it predicts probabilities without calibration
(linsvm.model.logistic_proba).  `fit` names the function in linsvm.solvers.logistic
that runs each (imported on the first solve).  docs/logistic.md describes them.
"""
from __future__ import annotations

from typing import NamedTuple

from .._lazy import LazyFunction
from .registry import (N_THREADS_HELP, REGULARIZE_BIAS, WEIGHT_SPLIT, Option, SolverInfo,
                       work_memory)

__all__ = ["LOGISTIC_SOLVERS", "LOGISTIC_LOSS", "NEWTON_OPTIONS", "SOFTMAX_TOL", "LRDUAL_TOL"]

LOGISTIC_LOSS = "logistic"          # SolverInfo.loss of every solver of a logistic loss

SOFTMAX_TOL = 0.01
# lr-dual's default -e: LIBLINEAR -s 7's 0.1 stops about where this measure reaches 0.01
# (docs/logistic.md, "Stopping"; linsvm.solvers.logistic's module notes)
LRDUAL_TOL = 0.01


class NewtonMemory(NamedTuple):
    """SolverInfo.memory of a truncated Newton solve (lr, softmax): 11 vectors of
    n_weights k doubles (beta, its copy, the CG and line-search vectors), one more per
    kernel thread beyond the first, per row 9 k + 3 doubles (scores, CG terms, U, e,
    lse); k = 1 for lr, the classes for softmax."""

    multinomial: bool

    def __call__(self, n_rows, n_weights, n_classes, nnz, options, threads=None):
        if threads is None:
            threads = max(1, int(options.get("n_threads") or 1))
        k = n_classes if self.multinomial else 1
        vectors = 11 + (threads if threads > 1 else 0)
        return 8 * n_weights * k * vectors + 8 * n_rows * (9 * k + 3)


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


LOGISTIC_SOLVERS = (
    SolverInfo(
        name="lr",
        kind="binary",
        objective="1/2||w||^2 + C sum_i log(1 + exp(-y_i w.x_i))   (L2-regularized logistic "
                  "regression, as LIBLINEAR -s 0)",
        default_tol=0.01,
        tol_meaning="LIBLINEAR -s 0's test ||grad f(w)|| <= eps max(min(n+,n-),1)/n "
                    "||grad f(0)||, and a duality gap <= 1% of f",
        paper="Lin, Weng & Keerthi 2008 (truncated Newton for LR); Galli & Lin 2022 (CG "
              "truncation)",
        fit=_fit("fit_lr"),
        family="logistic",
        options=dict(NEWTON_OPTIONS, weight_split=WEIGHT_SPLIT, regularize_bias=REGULARIZE_BIAS),
        loss=LOGISTIC_LOSS,
        liblinear_codes={0: {}},
        memory=NewtonMemory(False),
        distributed="rows",
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
        family="logistic",
        options={
            "max_iter": Option(int, 300, "cap on loops over the examples (LIBLINEAR -s 7's: "
                               "300)", 1),
            "primal_fallback": Option(bool, True, "a solve that reaches the loop cap finishes "
                                      "with lr from its w (as LIBLINEAR -s 7 switches to -s 0); "
                                      "off: stop there (and warn unless the gap is within 1%)"),
        },
        loss=LOGISTIC_LOSS,
        liblinear_codes={7: {}},
        # w, its copy and the returned weights, the certificate's gradient; per row alpha,
        # its complement, U, QD, the permutation, the certificate's scratch, the state;
        # plus lr's solve (NewtonMemory: 11 vectors, 12 doubles a row) when it finishes
        # with lr at its loop cap, while its own arrays are still held
        memory=work_memory(4 + 11, 88 + 96),
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
        family="logistic",
        options=dict(NEWTON_OPTIONS, regularize_bias=Option(
            bool, True, "regularize the bias row like the others; off: free intercepts "
                        "(scikit-learn's LogisticRegression does not penalize its intercept; "
                        "needs -B > 0)")),
        loss=LOGISTIC_LOSS,
        memory=NewtonMemory(True),
        distributed="rows",
    ),
)
