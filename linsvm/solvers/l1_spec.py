"""The catalog entries of the L1-regularized solvers: cdn (LIBLINEAR -s 5) and glmnet (-s 6).

Pure Python, read by linsvm.problem.catalog (docs/design.md, "Adding a solver"): this
module only declares them, so reading it imports no solver (their fit functions live in
linsvm.solvers.l1 and are imported on the first solve).  docs/l1.md describes both.
"""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import (N_THREADS_HELP, REGULARIZE_BIAS, LiblinearCode, Option,
                                SolverInfo, WorkMemory)

__all__ = ["SPECS", "MAX_LINESEARCH", "PATH_LOOSENESS", "SERIAL_ONLY"]

MAX_LINESEARCH = 20         # trials (step lengths 1, 1/2, ...) per line search, as LIBLINEAR
PATH_LOOSENESS = 5          # c_path's stages stop at this many times -e (at 0.002: LIBLINEAR's 0.01)
_F8 = 8
_TRACE_BYTES = 6 * _F8      # one trace row per outer iteration

SERIAL_ONLY = ("there is no distributed L1-regularized solver: run -s {name} without mpiexec "
               "(one process), or -s mfn for an L2-regularized model over row blocks")


def _memory(per_weight, per_row):
    """SolverInfo.memory: per_weight float64 vectors of the weight length, per_row bytes
    per example, the column copy (int32 position + float64 value per non-zero, and per
    example for the dense bias column; int64 column pointers: n_weights + 1 of them) and
    the trace.  The threads share the buffers: the thread count does not change the
    estimate."""
    return WorkMemory(per_weight + 1, per_row + 12, per_thread=0, per_nnz=12,
                      per_iteration=_TRACE_BYTES, fixed=_F8)


_SHRINKING = Option(bool, True, "shrinking: leave out features at w_j = 0 whose gradient is "
                                "well inside [-1, 1] (the papers' shrinking)")


CDN = SolverInfo(
    name="cdn",
    kind="binary",
    objective="||w||_1 + C sum_i max(0, 1 - y_i w.x_i)^2   (L1-regularized L2-loss SVM, "
              "as LIBLINEAR -s 5)",
    default_tol=0.002,
    tol_meaning="||S(w)||_1 <= eps min(n+,n-)/n ||S(w0)||_1, S the minimum-norm subgradient "
                "summed over a sweep, w0 = 0 (LIBLINEAR's rule for -s 5); under costs spanning "
                "100x or more, or where ||S||_1 ||w||_inf >= 0.1 F, tenfold tighter rounds "
                "while the duality gap exceeds 1%",
    paper="Yuan, Chang, Hsieh & Lin, JMLR 2010, Section 4.1 (CDN)",
    fit=LazyFunction("linsvm.solvers.l1", "fit_cdn"),
    options={
        "max_iter": Option(int, 1000, "cap on outer iterations (sweeps over the features)",
                           1, 1e9),
        "shrinking": _SHRINKING,
        "c_path": Option(int, 0, "continuation in C: first solve at C/2^K, C/2^(K-1), ..., C/2, "
                                 f"each at {PATH_LOOSENESS}x -e and from the one before, then at "
                                 "C to -e (0: none); for a large C, where a cold start converges "
                                 "slowly (docs/l1.md, Large C)", 0, 30),
        "regularize_bias": REGULARIZE_BIAS,
        "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
    },
    loss="l2",
    penalty="l1",
    liblinear_codes={5: LiblinearCode("L1R_L2LOSS_SVC")},
    memory=_memory(5, 5 * _F8),
    distributed=None,
    serial_only=SERIAL_ONLY.format(name="cdn"),
)

GLMNET = SolverInfo(
    name="glmnet",
    kind="binary",
    objective="||w||_1 + C sum_i log(1 + exp(-y_i w.x_i))   (L1-regularized logistic "
              "regression, as LIBLINEAR -s 6)",
    default_tol=0.002,
    tol_meaning="||S(w)||_1 <= eps min(n+,n-)/n ||S(0)||_1, S the minimum-norm subgradient "
                "(LIBLINEAR's rule for -s 6); under costs spanning 100x or more, or where "
                "||S||_1 ||w||_inf >= 0.1 F, tenfold tighter rounds while the duality gap "
                "exceeds 1%",
    paper="Yuan, Ho & Lin, JMLR 2012 (newGLMNET)",
    fit=LazyFunction("linsvm.solvers.l1", "fit_glmnet"),
    options={
        "max_iter": Option(int, 100, "cap on Newton iterations", 1, 1e9),
        "inner_max_iter": Option(int, 1000, "cap on coordinate-descent sweeps of one Newton "
                                            "iteration's quadratic model", 1, 1e9),
        "shrinking": _SHRINKING,
        "regularize_bias": REGULARIZE_BIAS,
        "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
    },
    loss="logistic",
    penalty="l1",
    liblinear_codes={6: LiblinearCode("L1R_LR")},
    memory=_memory(6, 10 * _F8),
    distributed=None,
    serial_only=SERIAL_ONLY.format(name="glmnet"),
    probabilities=True,
)

SPECS = (CDN, GLMNET)
