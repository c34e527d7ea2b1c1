"""The catalog entry of oneclass, the one-class SVM by dual coordinate descent
(linsvm.solvers.oneclass; LIBLINEAR -s 21).  Pure Python, read by linsvm.problem.catalog
(docs/design.md, "Adding a solver")."""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import LiblinearCode, Option, SolverInfo, WorkMemory

__all__ = ["SPECS"]

SPECS = (
    SolverInfo(
        name="oneclass",
        kind="oneclass",
        objective="1/2||w||^2 - rho + 1/(nu n) sum_i max(0, rho - w.x_i) (one-class SVM, LIBLINEAR "
                  "-s 21; weights and rho returned in LIBLINEAR's scale, nu n times these)",
        default_tol=0.01,
        tol_meaning="max_{a<1} -G - min_{a>0} -G < eps in the dual scaled by nu n (LIBLINEAR), and "
                    "a duality gap <= 1% of the objective (else a smaller eps)",
        paper="Chou, Lin & Lin, SDM 2020 (dual CD with two-variable updates, as LIBLINEAR -s 21)",
        fit=LazyFunction("linsvm.solvers.oneclass", "fit_oneclass"),
        options={
            "nu": Option(float, 0.5, "nu in (0, 1]: bounds the fraction of training outliers (<= nu) "
                                     "and of support vectors (>= nu) (LIBLINEAR's -n)", 1e-12, 1.0),
            "max_iter": Option(int, 1000, "cap on outer iterations (LIBLINEAR: 1000)", 1),
        },
        loss="l1",
        liblinear_codes={21: LiblinearCode("ONECLASS_SVM")},
        memory=WorkMemory(3, 72),
        serial_only="there is no distributed one-class solver: run it without mpiexec (one process)",
        default_bias=-1.0,
    ),
)
