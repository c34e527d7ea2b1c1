"""The catalog entry of dcd, dual coordinate descent for binary SVMs (linsvm.solvers.dcd;
LIBLINEAR -s 1 and -s 3).  Pure Python, read by linsvm.problem.catalog (docs/design.md,
"Adding a solver")."""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import LOCAL_EPOCHS, LiblinearCode, Option, SolverInfo, WorkMemory

__all__ = ["SPECS"]

# Work arrays: w, the start copy and the returned weights; per row alpha, U, D, QD, index
# and the loop's packed record (64 bytes) and the labels t.  With the hand-over (on by
# default) the peak is mfn-l1's (14 vectors, 113 bytes per row with the labels, up to 16
# more for its polish's band: linsvm/solvers/mfn_spec.py) beside the w handed over and
# what dcd keeps of its own (alpha and its loop's state, two doubles a row;
# tests/test_memory.py).
_MEMORY = WorkMemory(15, 129 + 2 * 8)

SPECS = (
    SolverInfo(
        name="dcd",
        kind="binary",
        objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i) (--loss l1, LIBLINEAR -s 3) or its "
                  "square (--loss l2, LIBLINEAR -s 1)",
        default_tol=0.03,
        tol_meaning="max PG - min PG <= eps over a loop of all examples (Hsieh et al. 2008), and a "
                    "duality gap <= 1% of the objective (else a smaller eps); on several MPI ranks "
                    "(CoCoA+): a relative duality gap (P - D) / P <= min(eps, 0.01)",
        paper="Hsieh et al. 2008 (ref. [9] of Keerthi et al. 2008), Algorithms 1 and 3",
        fit=LazyFunction("linsvm.solvers.dcd", "fit_dcd"),
        options={
            "loss": Option(str, "l1", "dcd: l1 = hinge (LIBLINEAR -s 3), l2 = squared hinge (-s 1)",
                           choices=("l1", "l2")),
            "shrinking": Option(bool, True, "shrinking: leave out variables stuck at a bound "
                                            "(Sec. 2.1 / Hsieh et al. Alg. 3)"),
            "max_iter": Option(int, 1000, "cap on loops over the examples (on several MPI ranks: "
                                          "on CoCoA+ rounds)", 1),
            "primal_fallback": Option(bool, True, "a solve whose duality gap, judged at loops "
                                      "10, 20, 40, ..., predicts no certified 1% within the loop "
                                      "cap, or that reaches the cap uncertified, finishes in the primal "
                                      "from its w: --loss l1 with mfn-l1, l2 with mfn (as LIBLINEAR "
                                      "-s 1 switches to -s 2); on several MPI ranks the same over "
                                      "CoCoA+ rounds; off: the dual method alone, with a warning at "
                                      "the cap"),
            "local_epochs": LOCAL_EPOCHS,
        },
        distributed="cocoa",
        distributed_options=("local_epochs",),
        loss="l1",
        liblinear_codes={1: LiblinearCode("L2R_L2LOSS_SVC_DUAL", {"loss": "l2"}),
                         3: LiblinearCode("L2R_L1LOSS_SVC_DUAL", {"loss": "l1"})},
        memory=_MEMORY,
    ),
)
