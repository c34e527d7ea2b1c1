"""The catalog entries of the cutting-plane solvers perf and perf-ord (SVM-perf,
linsvm.solvers.perf).  Pure Python, read by linsvm.problem.catalog (docs/design.md,
"Adding a solver")."""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import N_THREADS_HELP, Option, SolverInfo, WorkMemory

__all__ = ["SPECS", "PERF_OPTIONS"]

PERF_OPTIONS = {
    "max_iter": Option(int, 10000, "cap on cutting-plane iterations (each adds one constraint)", 1),
    "max_constraints": Option(int, 1000, "cap on the working set; at the cap inactive constraints "
                              "are dropped, or all merged into one, with a warning", 2),
    "inactive_iters": Option(int, 50, "remove a constraint after this many iterations with "
                             "alpha = 0 (0 = keep all); once the constraints' rows would "
                             "outgrow the data, after min(10, this) first", 0),
    "qp_tol": Option(float, 1e-10, "KKT tolerance of the working-set QP (units of xi)", 0.0, 1.0),
    "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
}

# Work arrays: the cutting planes' working set starts at 16 dense rows of the weight
# length (16 more each time it fills, a quarter more past 64, up to max_constraints),
# w, the mean-constraint vector, the returned weights and the Gram bookkeeping (22 vectors in
# all, tests/test_memory.py).  Per row, perf: the oracle's scores and weights and the
# labels t (3 doubles); perf-ord: the scores and weights, the counts above and below
# (4 doubles), the radix sort's two 16-byte items, the query layout's permutation (int64)
# and levels (int32), and the rank code (int32): 80 bytes, more than its threshold rule
# holds after the solve.
_MEMORY = WorkMemory(22, 3 * 8)
_ORD_MEMORY = WorkMemory(22, 4 * 8 + 2 * 16 + 8 + 4 + 4)

SPECS = (
    SolverInfo(
        name="perf",
        kind="binary",
        objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)   (L1-SVM, as LIBLINEAR -s 3; "
                  "paper's C = C*n)",
        default_tol=1e-3,
        tol_meaning="training-loss precision: stop when xi' <= xi + eps, xi' = average hinge loss "
                    "(1/n) sum max(0, 1 - y_i w.x_i) at w, xi = its working-set bound (Alg. 1 line 9)",
        paper="Joachims 2006, Algorithm 1 on OP2",
        fit=LazyFunction("linsvm.solvers.perf", "fit_perf"),
        options=PERF_OPTIONS,
        loss="l1",
        memory=_MEMORY,
        distributed="rows",
        streams=True,
    ),
    SolverInfo(
        name="perf-ord",
        kind="ordinal",
        objective="1/2||w||^2 + (C n/m) sum_{y_i>y_j} max(0, 1 - w.(x_i - x_j))   (pairwise "
                  "OR-SVM / ROC area; m pairs, within a qid when given; paper's C = C*n)",
        default_tol=1e-3,
        tol_meaning="pairwise training-loss precision: stop when xi' <= xi + eps, xi' = average "
                    "pairwise hinge loss (1/m) sum_pairs at w (Alg. 2 line 24)",
        paper="Joachims 2006, Algorithm 2 on OP5",
        fit=LazyFunction("linsvm.solvers.perf", "fit_perf_ord"),
        options=PERF_OPTIONS,
        loss="l1",
        memory=_ORD_MEMORY,
        distributed="rows",
        streams=True,
    ),
)
