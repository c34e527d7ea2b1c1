"""The catalog entries of the support vector regression solvers: svr (the primal Newton
method, LIBLINEAR -s 11's problem) and svr-dual (dual coordinate descent, -s 12 and -s 13)
(linsvm.solvers.svr).  Pure Python, read by linsvm.problem.catalog (docs/design.md,
"Adding a solver")."""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import (N_THREADS_HELP, WEIGHT_SPLIT, LiblinearCode, Option, SolverInfo,
                                WorkMemory)
from .mfn_spec import MFN_OPTIONS

__all__ = ["SPECS", "EPSILON_HELP"]

EPSILON_HELP = ("half-width p of the regression tube (LIBLINEAR's -p): deviations |y - w.x| "
                "below it cost nothing")

SPECS = (
    SolverInfo(
        name="svr",
        kind="regression",
        objective="1/2||w||_R^2 + C sum_i max(0, |y_i - w.x_i| - p)^2 (L2-loss SVR, LIBLINEAR -s 11; "
                  "||w||_R leaves the bias weight out unless --regularize-bias, which -s 11 "
                  "implies as LIBLINEAR does, -R freeing it again)",
        default_tol=0.0001,
        tol_meaning="LIBLINEAR -s 11's gradient test ||grad F|| <= eps ||grad F(0)|| (--gtol), or "
                    "the paper's rule (active set settled, relative CGLS residual <= eps, eq. 13), "
                    "whichever comes first; a relative duality gap above 1% warns",
        paper="Keerthi & DeCoste 2005, Sections 3-4 and Appendix A (squared eps-insensitive loss)",
        fit=LazyFunction("linsvm.solvers.svr", "fit_svr"),
        options={
            "epsilon": Option(float, 0.1, EPSILON_HELP, 0.0),
            "regularize_bias": Option(bool, False, "regularize the bias weight like the others "
                                      "(LIBLINEAR -s 11 without -R: the default with -s 11); "
                                      "off: a free intercept (-R; the default with -s svr)"),
            "heuristic1": Option(bool, True, "at most 10 CGLS iterations in the first Newton step of a cold start (Sec. 4.6)"),
            "heuristic2": Option(bool, True, "converge at eps=1e-2 first, then at -e (Sec. 4.6)"),
            "precondition": Option(bool, True, "diagonal (Jacobi) preconditioning of CGLS"),
            "jacobi_weight": Option(float, 0.3, "weight w of the Jacobi diagonal in the CGLS preconditioner (1 = plain Jacobi)", 1e-6, 1.0),
            "fused_cg": Option(bool, True, "one pass over the active rows per CGLS iteration"),
            "forcing": Option(float, 0.1, "inexact Newton: a CGLS step may also stop at ||r|| <= forcing * ||gradient|| (0 = off)", 0.0, 0.99),
            "forcing_guard": MFN_OPTIONS["forcing_guard"],
            "max_iter": Option(int, 50, "cap on Newton iterations (Appendix A: itermax = 50)", 1),
            "cg_max_iter": Option(int, 5000, "cap on CGLS iterations per Newton step", 1),
            "gtol": Option(float, None, "also stop at the first Newton iterate with ||grad F(w)|| <= gtol ||grad F(0)|| (LIBLINEAR -s 11's test); default -e; 0 = off", 0.0, 0.99),
            "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
            "weight_split": WEIGHT_SPLIT,
        },
        loss="l2",
        liblinear_codes={11: LiblinearCode("L2R_L2LOSS_SVR", defaults={"regularize_bias": True})},
        # per row (csrc/_svr.pyx, _carve): the margins and their step, CGLS's cc, z, q, u,
        # xd (the breakpoints and trial margins lie over them), the line search's two terms
        # (value, step, sign, cost: 8 doubles), the rows and positions (int64), a zone byte
        memory=WorkMemory(12, 15 * 8 + 2 * 8 + 1),
        distributed="rows",
        streams=True,
        distributed_options=("weight_split",),
    ),
    SolverInfo(
        name="svr-dual",
        kind="regression",
        objective="1/2||w||^2 + C sum_i max(0, |y_i - y_offset - w.x_i| - p) (--loss l1, LIBLINEAR "
                  "-s 13) or its square (--loss l2, -s 12); y_offset the weighted mean target "
                  "(--no-center-targets: 0, LIBLINEAR's problem and the default with -s 12 and "
                  "-s 13)",
        default_tol=0.1,
        tol_meaning="summed violation of a loop <= eps x the first loop's (Ho & Lin 2012, "
                    "LIBLINEAR), and a duality gap <= 1% of the objective (else a smaller eps)",
        paper="Ho & Lin 2012 (JMLR 13), Algorithm 4 with shrinking",
        fit=LazyFunction("linsvm.solvers.svr", "fit_svr_dual"),
        options={
            "loss": Option(str, "l1", "svr-dual: l1 = eps-insensitive (LIBLINEAR -s 13), l2 = its square (-s 12)",
                           choices=("l1", "l2")),
            "epsilon": Option(float, 0.1, EPSILON_HELP, 0.0),
            "center_targets": Option(bool, True, "solve for the targets minus their cost-weighted "
                                     "mean (stats y_offset, added back at prediction): the dual's "
                                     "stand-in for a free intercept (off: LIBLINEAR's problem, the "
                                     "default with -s 12 and -s 13)"),
            "shrinking": Option(bool, True, "shrinking (Ho & Lin 2012, Sec. 3.4)"),
            "max_iter": Option(int, 1000, "cap on loops over the examples", 1),
        },
        loss="l1",
        liblinear_codes={12: LiblinearCode("L2R_L2LOSS_SVR_DUAL", {"loss": "l2"},
                                           defaults={"center_targets": False}),
                         13: LiblinearCode("L2R_L1LOSS_SVR_DUAL", {"loss": "l1"},
                                           defaults={"center_targets": False})},
        memory=WorkMemory(3, 104),      # per row: b, box, constants, index, the packed record
        serial_only="for the squared loss (-s 12, --loss l2) use svr (LIBLINEAR -s 11: the same "
                    "problem by the primal Newton method, exact over row blocks); the "
                    "epsilon-insensitive loss (-s 13, --loss l1) has no distributed solver: run it "
                    "without mpiexec (one process)",
    ),
)
