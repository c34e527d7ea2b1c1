"""The catalog entries of the L1-regularized solvers: cdn (LIBLINEAR -s 5) and glmnet (-s 6).

linsvm.problem.catalog registers L1_SOLVERS with the others (one line there); this
module only declares them, so reading it imports no solver (their fit functions live in
linsvm.solvers.l1 and are imported on the first solve).  docs/l1.md describes both.
"""
from __future__ import annotations

from .._lazy import LazyFunction
from .registry import N_THREADS_HELP, REGULARIZE_BIAS, Option, SolverInfo

MAX_LINESEARCH = 20         # trials (step lengths 1, 1/2, ...) per line search, as LIBLINEAR
_F8 = 8
_TRACE_BYTES = 6 * _F8      # one trace row per outer iteration

SERIAL_ONLY = ("there is no distributed L1-regularized solver: run -s {name} without mpiexec "
               "(one process), or -s mfn for an L2-regularized model over row blocks")


def _memory(per_weight, per_row):
    """SolverInfo.memory: per_weight float64 vectors of the weight length, per_row bytes
    per example, the column copy (int32 position + float64 value per non-zero, and per
    example for the dense bias column; int64 column pointers) and the trace.  The
    threads share the buffers: the thread count does not change the estimate."""
    def memory(n_rows, n_weights, n_classes, nnz, options, threads=None):
        column_copy = 12 * (nnz + n_rows) + _F8 * (n_weights + 1)
        return (_F8 * per_weight * n_weights + per_row * n_rows + column_copy
                + _TRACE_BYTES * options.get("max_iter", 1000))
    return memory


_SHRINKING = Option(bool, True, "shrinking: leave out features at w_j = 0 whose gradient is "
                                "well inside [-1, 1] (the papers' shrinking)")


CDN = SolverInfo(
    name="cdn",
    kind="binary",
    objective="||w||_1 + C sum_i max(0, 1 - y_i w.x_i)^2   (L1-regularized L2-loss SVM, "
              "as LIBLINEAR -s 5)",
    default_tol=0.01,
    tol_meaning="||S(w)||_1 <= eps min(n+,n-)/n ||S(w0)||_1, S the minimum-norm subgradient "
                "summed over a sweep, w0 = 0 (LIBLINEAR's rule for -s 5)",
    paper="Yuan, Chang, Hsieh & Lin, JMLR 2010, Section 4.1 (CDN)",
    fit=LazyFunction("linsvm.solvers.l1", "fit_cdn"),
    family="l1",
    options={
        "max_iter": Option(int, 1000, "cap on outer iterations (sweeps over the features)",
                           1, 1e9),
        "shrinking": _SHRINKING,
        "regularize_bias": REGULARIZE_BIAS,
        "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
    },
    loss="l2",
    penalty="l1",
    liblinear_codes={5: {}},
    memory=_memory(5, 5 * _F8),
    distributed=None,
    serial_only=SERIAL_ONLY.format(name="cdn"),
)

GLMNET = SolverInfo(
    name="glmnet",
    kind="binary",
    objective="||w||_1 + C sum_i log(1 + exp(-y_i w.x_i))   (L1-regularized logistic "
              "regression, as LIBLINEAR -s 6)",
    default_tol=0.01,
    tol_meaning="||S(w)||_1 <= eps min(n+,n-)/n ||S(0)||_1, S the minimum-norm subgradient "
                "(LIBLINEAR's rule for -s 6)",
    paper="Yuan, Ho & Lin, JMLR 2012 (newGLMNET)",
    fit=LazyFunction("linsvm.solvers.l1", "fit_glmnet"),
    family="l1",
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
    liblinear_codes={6: {}},
    memory=_memory(6, 10 * _F8),
    distributed=None,
    serial_only=SERIAL_ONLY.format(name="glmnet"),
)

L1_SOLVERS = (CDN, GLMNET)


def penalty_of(solver) -> str:
    """The regularizer of a model's solver: "l1" or "l2".  `solver` is a catalog name or
    a LIBLINEAR model's ``liblinear:<solver_type>`` (L1R_* types are L1-regularized);
    anything else is "l2"."""
    if isinstance(solver, str) and solver.startswith("liblinear:"):
        return "l1" if solver[len("liblinear:"):].startswith("L1R_") else "l2"
    info = next((i for i in L1_SOLVERS if i.name == solver), None)
    return info.penalty if info is not None else "l2"


def solver_for_penalty(solver, penalty, default="mfn"):
    """The solver scikit-learn's `penalty` asks for: None keeps `solver`; "l1" with the
    default solver gives cdn (scikit-learn's LinearSVC(penalty="l1") minimizes cdn's
    problem: squared hinge, dual=False); otherwise `solver` must have that penalty
    (ValueError, naming the solvers that do)."""
    if penalty is None:
        return solver
    if penalty not in ("l1", "l2"):
        raise ValueError(f"penalty must be 'l1', 'l2' or None, got {penalty!r}")
    if penalty_of(solver) == penalty:
        return solver
    if penalty == "l1" and solver == default:
        return CDN.name
    l1 = ", ".join(i.name for i in L1_SOLVERS)
    raise ValueError(f"solver {solver!r} is {penalty_of(solver).upper()}-regularized but penalty="
                     f"{penalty!r}: the L1-regularized solvers are {l1}, the others L2")
