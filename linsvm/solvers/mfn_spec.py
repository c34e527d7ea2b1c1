"""The catalog entries of the modified finite Newton family: mfn (LIBLINEAR -s 2's
problem; linsvm.solvers.mfn), ls, mfn-huber, mfn-l1 and mfn-ord (linsvm.solvers.mfn_family),
which share one Newton-CG core and its options.  Pure Python, read by
linsvm.problem.catalog (docs/design.md, "Adding a solver")."""
from __future__ import annotations

from .._lazy import LazyFunction
from ..problem.registry import (N_THREADS_HELP, WEIGHT_SPLIT, LiblinearCode, Option, SolverInfo,
                                WorkMemory)

__all__ = ["SPECS", "MFN_OPTIONS"]

MFN_OPTIONS = {
    "heuristic1": Option(bool, True, "at most 10 CGLS iterations in the first Newton step of a cold start (Sec. 4.6)"),
    "heuristic2": Option(bool, True, "converge at eps=1e-2 first, then at -e (Sec. 4.6)"),
    "precondition": Option(bool, True, "diagonal (Jacobi) preconditioning of CGLS; the eq. 13 stopping rule is unchanged"),
    "jacobi_weight": Option(float, 0.3, "weight w of the Jacobi diagonal in the CGLS preconditioner 1 / (lambda + w diag(X'CX)) (1 = plain Jacobi; smaller mixes in the identity, Hsia, Chiang & Lin 2018)", 1e-6, 1.0),
    "fused_cg": Option(bool, True, "one pass over the active rows per CGLS iteration (q = X p and X'Cq together, residual by recurrence, eq. 13 checked on the true residual); off: the paper's two-pass CGLS"),
    "forcing": Option(float, 0.1, "inexact Newton: a CGLS step may also stop at ||r|| <= forcing * ||gradient|| (0 = off)", 0.0, 0.99),
    "forcing_guard": Option(float, 0.5, "the forcing term ends a CGLS step only once Galli & Lin's quadratic-model rule i (Q_{i-1} - Q_i) <= min(g, ||gradient||_{M^-1}^(1/2)) |Q_i| holds too, never after one iteration (LIBLINEAR's g = 0.5; 0 = the forcing term alone)", 0.0, 0.99),
    "subset": Option(float, 0.0, "heuristic 3: first solve on this random fraction of the examples (0 = off)", 0.0, 0.99),
    "max_iter": Option(int, 50, "cap on Newton iterations (Appendix A: itermax = 50)", 1),
    "cg_max_iter": Option(int, 5000, "cap on CGLS iterations per Newton step (Appendix A: 5000)", 1),
    "gtol": Option(float, None, "also stop at the first Newton iterate with ||grad F(w)|| <= gtol min(n+,n-)/n ||grad F(0)|| (the scaling of LIBLINEAR -s 2's test); default 0.3 x -e (0.0015 at the default -e 0.005); 0 = off: the paper's rule alone, zones settled and eq. 13 at -e", 0.0, 0.99),
    "kkt_tol": Option(float, None, "continue with smaller eps until the dual KKT violation (Sec. 4.7) is below this", 1e-300),
    "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
    "regularize_bias": Option(bool, True, "regularize the bias weight like the others (LIBLINEAR's default); off: a free intercept (LIBLINEAR's -R; needs -B > 0; no Section 4.7 KKT measure then)"),
    "weight_split": WEIGHT_SPLIT,
}

def _pick(*names):
    return {k: MFN_OPTIONS[k] for k in names}


def _family_fit(name):
    return LazyFunction("linsvm.solvers.mfn_family", name)


# Work arrays (csrc/_mfn.pyx, _carve): beta, its gradient and CG/line-search vectors (9 in
# one block), the returned copy; per row the margins y, their step dy, CGLS's xd, z, cc,
# q, u (the line search's breakpoints and trial margins lie over them), the zone-1 and
# other examples' rows and positions (int64), a byte of zone flags, and the labels t
# train() builds: 7 * 8 + 2 * 8 + 1 + 8 = 81 bytes.  ls shares them; a loss with a zone 2
# (mfn-huber, mfn-l1's stages) adds its examples' rows and weights (16).  mfn-ord: per
# example y, dy, the operator's two scratch vectors, the active rows and term offsets (6
# * 8) and the rank code (4); per (example, threshold) term z, cc, q, u and the
# threshold's index (36), nb = k - 1 thresholds.  tests/test_memory.py holds each
# estimate against the traced peak.  Not counted: the binary losses' contiguous copy of a
# step's few active rows (csrc/mfn_losses.pxd, binary_active), made only when they are at
# most a quarter of the rows and of their entries, so at most 12 / 4 bytes per non-zero
# and (8 + 8) / 4 per row (C allocations, which the traced peak does not see either).
_MEMORY = WorkMemory(12, 81)
_ZONE2_MEMORY = _MEMORY._replace(per_row=81 + 16)
_ORD_MEMORY = _MEMORY._replace(per_row=6 * 8 + 4 - 36, per_class_row=36)
_EQ13_CERTIFIED = ("relative CGLS residual, ||r|| <= eps ||z|| (eq. 13), and, with class or "
                   "instance weights that vary, once the duality gap certifies 1% (else it "
                   "continues at eps / 10)")

SPECS = (
    SolverInfo(
        name="mfn",
        kind="binary",
        objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^2   (L2-SVM, as LIBLINEAR -s 2)",
        default_tol=0.005,
        tol_meaning="relative CGLS residual, ||r|| <= eps ||z|| (eq. 13), or the gradient test "
                    "||grad F|| <= 0.3 eps min(n+,n-)/n ||grad F(0)|| (--gtol), whichever comes "
                    "first, and, with class or instance weights that vary, once the duality gap "
                    "certifies 1% (else it continues at eps / 10)",
        paper="Keerthi & DeCoste 2005, Sections 3-4 and Appendix A",
        fit=LazyFunction("linsvm.solvers.mfn", "fit_mfn"),
        options=MFN_OPTIONS,
        loss="l2",
        liblinear_codes={2: LiblinearCode("L2R_L2LOSS_SVC")},
        memory=_MEMORY,
        distributed="rows",
        streams=True,
        distributed_options=("weight_split",),
    ),
    SolverInfo(
        name="ls",
        kind="binary",
        objective="1/2||w||^2 + C sum_i (1 - y_i w.x_i)^2   (LS-SVM, all examples active)",
        default_tol=1e-6,
        tol_meaning=_EQ13_CERTIFIED,
        paper="Keerthi & DeCoste 2005, Section 4.3 (LS-SVM-CG)",
        fit=_family_fit("fit_ls"),
        options=_pick("precondition", "jacobi_weight", "fused_cg", "max_iter", "cg_max_iter",
                      "n_threads", "regularize_bias", "weight_split"),
        loss="ls",
        memory=_MEMORY,
        distributed="rows",
        streams=True,
        distributed_options=("weight_split",),
    ),
    SolverInfo(
        name="mfn-huber",
        kind="binary",
        objective="1/2||w||^2 + 2C sum_i L_h(1 - y_i w.x_i), L_h the modified Huber loss (eq. 21)",
        default_tol=1e-6,
        tol_meaning=_EQ13_CERTIFIED,
        paper="Keerthi & DeCoste 2005, Section 6 (eq. 21-23)",
        fit=_family_fit("fit_huber"),
        options=_pick("heuristic1", "heuristic2", "precondition", "jacobi_weight", "fused_cg",
                      "forcing", "forcing_guard", "subset", "max_iter", "cg_max_iter", "n_threads",
                      "weight_split"),
        loss="huber",
        memory=_ZONE2_MEMORY,
        distributed="rows",
        streams=True,
        distributed_options=("weight_split",),
    ),
    SolverInfo(
        name="mfn-l1",
        kind="binary",
        objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)   (L1-SVM, as LIBLINEAR -s 3)",
        default_tol=1e-3,
        tol_meaning=("certified relative objective gap: stops when the duality gap G = F(w) - D(alpha) "
                     "<= eps D(alpha), so (F(w) - F*)/F* <= eps"),
        paper="Keerthi & DeCoste 2005, Section 6 (Huber continuation)",
        fit=_family_fit("fit_l1"),
        options=dict(
            _pick("heuristic1", "precondition", "jacobi_weight", "fused_cg", "forcing",
                  "forcing_guard", "max_iter", "cg_max_iter", "n_threads", "weight_split"),
            tau0=Option(float, 0.25, "mfn-l1: smoothing width of the first continuation stage "
                                     "(the paper's tau_0 = 1)", 1e-12, 1e6),
            cg_tol=Option(float, 1e-2, "mfn-l1: eq. 13 tolerance of the stage solves (divided by 100 "
                                       "when the certificate shows the stage solve is too loose)",
                          1e-12, 0.5),
            max_stages=Option(int, 40, "mfn-l1: cap on continuation stages", 1),
        ),
        loss="l1",
        # the stage's end w_1; the polish's v, and per row its dual point and the margins
        # (its band's arrays are the band's size: hinge_polish.py)
        memory=_ZONE2_MEMORY._replace(per_weight=14, per_row=_ZONE2_MEMORY.per_row + 16),
        distributed="rows",
        streams=True,
        distributed_options=("weight_split",),
    ),
    SolverInfo(
        name="mfn-ord",
        kind="ordinal",
        objective=("1/2(||w||^2 + ||b||^2) + C sum_s sum_i max(0, 1 - z_is (w.x_i - b_s))^2, "
                   "z_is = -1 if rank_i <= s else +1   (implicit thresholds, eq. 25)"),
        default_tol=1e-6,
        tol_meaning="relative CGLS residual, ||r|| <= eps ||z|| (eq. 13)",
        paper="Keerthi & DeCoste 2005, Section 7 (Chu & Keerthi implicit thresholds)",
        fit=_family_fit("fit_ord"),
        options=_pick("heuristic1", "heuristic2", "precondition", "jacobi_weight", "forcing",
                      "forcing_guard", "max_iter", "cg_max_iter", "n_threads", "weight_split"),
        loss="l2",
        memory=_ORD_MEMORY,
        distributed="rows",
        streams=True,
        distributed_options=("weight_split",),
    ),
)
