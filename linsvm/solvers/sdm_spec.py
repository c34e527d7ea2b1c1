"""The catalog entries of the sequential dual method for multi-class SVMs, sdm-cs
(Crammer-Singer, LIBLINEAR -s 4) and sdm-ww (Weston-Watkins) (linsvm.solvers.sdm).
Pure Python, read by linsvm.problem.catalog (docs/design.md, "Adding a solver")."""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import LOCAL_EPOCHS, LiblinearCode, Option, SolverInfo, WorkMemory

__all__ = ["SPECS", "SDM_OPTIONS"]

SDM_OPTIONS = {
    "shrinking": Option(bool, True, "shrinking: alternate full loops with loops over the examples "
                                    "and alphas that can still move (Sec. 2.1)"),
    "cooling": Option(bool, True, "cooling: reach eps = 1, 0.1, ... in turn down to -e (Sec. 2.1)"),
    "effort_cap": Option(float, 5.0, "end a run of shrunk loops after this many effective loops "
                                     "of gradient evaluations (Sec. 2.1 footnote: 5)", 1e-3, 1e6),
    "max_iter": Option(int, 1000, "cap on full loops over the examples (on several MPI ranks: "
                                  "on CoCoA+ rounds)", 1),
    "subproblem": Option(str, "all", "sdm: classes of the per-example sub-problem in full loops: "
                                     "'all' (eq. 10 / 21 exactly, by the active-set method started "
                                     "from the paper's set) or 'restricted' (the paper's: M_i and "
                                     "the alphas off their bound, Sec. 2 / 3)",
                         choices=("all", "restricted")),
    "local_epochs": LOCAL_EPOCHS,
    "gather_finish": Option(bool, True, "distributed (MPI): CoCoA+ rounds that stop paying "
                            "(judged at rounds 10, 20, 40, ...) or reach the cap uncertified "
                            "finish serially on rank 0 from the gathered rows and alphas, "
                            "when rank 0 can hold all rows; off: rounds only"),
}

# Work arrays: W, one weight column per class; per row the alphas' sparse lists.
_MEMORY = WorkMemory(1, 64, per_class=1)

SPECS = (
    SolverInfo(
        name="sdm-cs",
        kind="multiclass",
        objective="1/2 sum_m ||w_m||^2 + C sum_i max_m (e_i^m - (w_{y_i} - w_m).x_i)   "
                  "(Crammer-Singer, as LIBLINEAR -s 4)",
        default_tol=0.1,
        tol_meaning="max_m g_i^m - min_{m: alpha_i^m < C_i^m} g_i^m < eps for every i (eq. 9), and a "
                    "duality gap <= 1% of the objective (else a smaller eps); on several MPI ranks "
                    "(CoCoA+): a relative duality gap (P - D) / P <= min(eps, 0.01)",
        paper="Keerthi et al. 2008, Section 2, Algorithm 2.1",
        fit=LazyFunction("linsvm.solvers.sdm", "fit_sdm_cs"),
        options=SDM_OPTIONS,
        loss="l1",
        distributed="cocoa",
        distributed_options=("local_epochs", "gather_finish"),
        liblinear_codes={4: LiblinearCode("MCSVM_CS")},
        memory=_MEMORY,
    ),
    SolverInfo(
        name="sdm-ww",
        kind="multiclass",
        objective="1/2 sum_m ||w_m||^2 + C sum_i sum_{m != y_i} max(0, 1 - (w_{y_i} - w_m).x_i)   "
                  "(Weston-Watkins)",
        default_tol=0.1,
        tol_meaning="v_i^m < eps for every i and m != y_i (eq. 20), and a duality gap <= 1% of the "
                    "objective (else a smaller eps); on several MPI ranks (CoCoA+): a relative "
                    "duality gap (P - D) / P <= min(eps, 0.01)",
        paper="Keerthi et al. 2008, Section 3, Algorithm 3.1",
        fit=LazyFunction("linsvm.solvers.sdm", "fit_sdm_ww"),
        options=SDM_OPTIONS,
        loss="l1",
        distributed="cocoa",
        distributed_options=("local_epochs", "gather_finish"),
        memory=_MEMORY,
    ),
)
