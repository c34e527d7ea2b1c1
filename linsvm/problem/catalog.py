"""The catalog: every solver linsvm has, its objective, tolerance, options and defaults.

This is the one home of the solvers' defaults (docs/design.md, "Adding a solver"):
each `register(SolverInfo(...))` below declares one `-s NAME`; its `fit` names the
function in linsvm.solvers that runs it (a LazyFunction, imported on the first solve),
so that reading the catalog -- for `--help`, option checks, model files -- imports no
solver and no NumPy.  The order here is the order of `linsvm-train --help`.
"""
from __future__ import annotations

import types

from .._lazy import LazyFunction
from ..errors import ParameterError
from .catalog_l1 import L1_SOLVERS
from .catalog_logistic import LOGISTIC_SOLVERS
from .registry import (N_THREADS_HELP, WEIGHT_SPLIT, Option, Params, SolverInfo, check_options,
                       check_positive, work_memory)


SOLVERS: dict[str, SolverInfo] = {}

def register(info: SolverInfo) -> SolverInfo:
    """Add a solver to the registry (names are unique)."""
    if info.name in SOLVERS:
        raise ValueError(f"solver {info.name!r} registered twice")
    SOLVERS[info.name] = info
    return info


def get_solver(name: str) -> SolverInfo:
    """Return the registered solver called `name`, or raise ParameterError."""
    info = SOLVERS.get(name) if isinstance(name, str) else None
    if info is None:
        raise ParameterError(f"unknown solver {name!r}; choose one of: {', '.join(sorted(SOLVERS))}")
    return info


def liblinear_code(code: int):
    """(solver name, implied options) for LIBLINEAR's `-s code` (linsvm solves every
    code of LIBLINEAR 2.50), or a ParameterError listing the codes."""
    for info in SOLVERS.values():
        if code in info.liblinear_codes:
            return info.name, dict(info.liblinear_codes[code])
    known = sorted(c for info in SOLVERS.values() for c in info.liblinear_codes)
    raise ParameterError(f"-s {code} is not a LIBLINEAR solver code; linsvm accepts the codes "
                         f"{', '.join(map(str, known))} or a solver name")


_DEFAULT_OPTIONS: dict = {}     # solver name -> its checked defaults (read-only mappings)


def make_params(solver, C=1.0, tol=None, seed=0, options=None):
    """Params for `solver` (a name or SolverInfo): C and tol checked (> 0, finite; tol
    None: the solver's default_tol), seed an integer, the options by check_options."""
    info = solver if isinstance(solver, SolverInfo) else get_solver(solver)
    C = check_positive("C", C)
    tol = info.default_tol if tol is None else check_positive("tolerance", tol)
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ParameterError(f"seed must be an integer, got {seed!r}") from None
    if options:
        opts = types.MappingProxyType(check_options(info, options))
    else:
        opts = _DEFAULT_OPTIONS.get(info.name)
        if opts is None:
            opts = _DEFAULT_OPTIONS[info.name] = types.MappingProxyType(check_options(info, {}))
    return Params(info.name, C, tol, seed, opts)


def _fit(module, name):
    """The fit function `name` of linsvm.solvers.`module`, imported on first use."""
    return LazyFunction(f"linsvm.solvers.{module}", name)


# The option the CoCoA+ solvers (dcd, sdm-cs, sdm-ww) add for distributed mode.
LOCAL_EPOCHS_DEFAULT = 2
LOCAL_EPOCHS_HELP = ("distributed (MPI, CoCoA+): full loops of the local solver over each "
                     "rank's block per round, between two allreduces of the change in w")


# ---------------------------------------------------------------------------- alm
ALM_OPTIONS = {
    "p": Option(float, 1.0, "loss exponent p >= 1 of max(0, 1 - y w.x)^p (1: hinge, 2: squared hinge)", 1.0),
    "free_intercept": Option(bool, False, "unregularized intercept b (the paper's eq. 4), stored as "
                             "the bias row b/B; needs -B > 0"),
    "stop": Option(str, "objective", "stopping rule: objective (relative change <= -e, paper Sec. 4, "
                   "once the certified duality gap is <= min(1%, 100 e)), "
                   "gradient (||grad|| <= -e relative, p > 1) or gap (certified duality gap <= -e)",
                   choices=("objective", "gradient", "gap")),
    "max_iter": Option(int, 1000, "cap on iterations (alm, alm-exact: ALM iterations, default 1000; "
                       "the paper uses 100)", 1),
    "mu0": Option(float, None, "initial penalty mu (default 10 / sum_i ||x_i||^2)", 1e-300),
    "mu_max": Option(float, 1e5, "cap on the penalty mu (the paper's 1e5)", 1e-300),
    "mu_rule": Option(str, "balance", "mu schedule, never decreasing: balance (grow when the primal "
                      "residual leads), geometric (the paper's experiments) or eq29",
                      choices=("geometric", "eq29", "balance")),
    "mu_growth": Option(float, 2.0, "factor by which mu grows", 1.0, 1e6),
    "precondition": Option(bool, True, "diagonal (Jacobi) preconditioning (alm: of the w-step; off gives "
                           "the paper's plain gradient step)"),
    "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
    "primal_fallback": Option(bool, True, "p = 1 or 2 with --stop objective: a solve whose "
                              "certified gap, judged at iterations 100, 200, 400, ..., predicts "
                              "no 1% within --max-iter, or that reaches the cap, finishes with "
                              "mfn-l1 (p = 1) or mfn (p = 2) from its w; off: ALM alone, with a "
                              "warning at the cap"),
}

ALM_EXACT_OPTIONS = dict(
    ALM_OPTIONS,
    cg_tol=Option(float, 1e-3, "relative CGLS residual at which a least-squares step stops "
                  "(alm-exact: default 1e-3)", 1e-300, 1.0),
    cg_max_iter=Option(int, 1000, "cap on CGLS iterations per least-squares step (alm-exact: "
                       "default 1000)", 1),
)

_OBJECTIVE = "1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^p   (p = -p >= 1; p=1: LIBLINEAR -s 3, p=2: -s 1/-s 2)"
_TOL = ("stop=objective: |P_k - P_k-1| <= e |P_k| (paper Sec. 4) and certified duality gap "
        "<= min(1%, 100 e) |P|; stop=gradient: ||grad P|| <= "
        "e min(n+,n-)/n ||grad P(0)||; stop=gap: certified duality gap <= e |P|")

# Work arrays: 7 weight-length vectors in one block, beta and the returned copy;
# per row: 10 + 3 float64 vectors of the augmented Lagrangian.  With the hand-over (on by
# default) the peak is mfn-l1's (13 vectors, 176 bytes per row) plus the beta it finishes
# from (13.04 vectors measured, tests/test_memory.py).
_MEMORY_ALM = work_memory(14, 176)

register(SolverInfo(
    name="alm",
    kind="binary",
    objective=_OBJECTIVE,
    default_tol=1e-4,
    tol_meaning=_TOL,
    paper="Nie et al. 2014, Algorithm 2 (inexact SVM-ALM)",
    fit=_fit("alm", "fit_alm"),
    family="alm",
    options=ALM_OPTIONS,
    loss="lp",
    memory=_MEMORY_ALM,
    distributed="rows",
))

_MEMORY_ALM_EXACT = work_memory(14, 176)     # as alm's, the hand-over's peak

register(SolverInfo(
    name="alm-exact",
    kind="binary",
    objective=_OBJECTIVE,
    default_tol=1e-4,
    tol_meaning=_TOL,
    paper="Nie et al. 2014, Algorithm 1 (exact SVM-ALM, CGLS w-step)",
    fit=_fit("alm", "fit_alm_exact"),
    family="alm",
    options=ALM_EXACT_OPTIONS,
    loss="lp",
    memory=_MEMORY_ALM_EXACT,
    distributed="rows",
))


# ---------------------------------------------------------------------------- dcd
# Work arrays: w, the start copy and the returned weights; per row: alpha, U, D, QD, index
# and the loop's packed record (64 bytes).  With the hand-over (on by default) the peak is
# mfn-l1's (13 vectors, 176 bytes per row) plus the w handed over (13.01 vectors measured,
# tests/test_memory.py).
_MEMORY_DCD = work_memory(14, 176)

register(SolverInfo(
    name="dcd",
    kind="binary",
    objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i) (--loss l1, LIBLINEAR -s 3) or its "
              "square (--loss l2, LIBLINEAR -s 1)",
    default_tol=0.1,
    tol_meaning="max PG - min PG <= eps over a loop of all examples (Hsieh et al. 2008), and a "
                "duality gap <= 1% of the objective (else a smaller eps); on several MPI ranks "
                "(CoCoA+): a relative duality gap (P - D) / P <= min(eps, 0.01)",
    paper="Hsieh et al. 2008 (ref. [9] of Keerthi et al. 2008), Algorithms 1 and 3",
    fit=_fit("dcd", "fit_dcd"),
    family="dcd",
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
        "local_epochs": Option(int, LOCAL_EPOCHS_DEFAULT, LOCAL_EPOCHS_HELP, 1, 1_000_000),
    },
    distributed="cocoa",
    distributed_options=("local_epochs",),
    loss="l1",
    liblinear_codes={1: {"loss": "l2"}, 3: {"loss": "l1"}},
    memory=_MEMORY_DCD,
))


# ---------------------------------------------------------------------------- mfn family
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
    "gtol": Option(float, None, "also stop at the first Newton iterate with ||grad F(w)|| <= gtol min(n+,n-)/n ||grad F(0)|| (the scaling of LIBLINEAR -s 2's test); default 0.3 x -e (0.003 at the default -e 0.01); 0 = off: the paper's rule alone, zones settled and eq. 13 at -e", 0.0, 0.99),
    "kkt_tol": Option(float, None, "continue with smaller eps until the dual KKT violation (Sec. 4.7) is below this", 1e-300),
    "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
    "regularize_bias": Option(bool, True, "regularize the bias weight like the others (LIBLINEAR's default); off: a free intercept (LIBLINEAR's -R; needs -B > 0; no Section 4.7 KKT measure then)"),
    "weight_split": WEIGHT_SPLIT,
}

# Work arrays: beta, its gradient and CG/line-search vectors (9 in one block), the
# returned copy; per row: margins, active-set lists and line-search break points.
_MEMORY_MFN = work_memory(12, 176)

register(SolverInfo(
    name="mfn",
    kind="binary",
    objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^2   (L2-SVM, as LIBLINEAR -s 2)",
    default_tol=0.01,
    tol_meaning="relative CGLS residual, ||r|| <= eps ||z|| (eq. 13), or the gradient test "
                "||grad F|| <= 0.3 eps min(n+,n-)/n ||grad F(0)|| (--gtol), whichever comes "
                "first, and, with class or instance weights that vary, once the duality gap "
                "certifies 1% (else it continues at eps / 10)",
    paper="Keerthi & DeCoste 2005, Sections 3-4 and Appendix A",
    fit=_fit("mfn", "fit_mfn"),
    family="mfn",
    options=MFN_OPTIONS,
    loss="l2",
    liblinear_codes={2: {}},
    memory=_MEMORY_MFN,
    distributed="rows",
    distributed_options=("weight_split",),
))


def _pick(*names):
    return {k: MFN_OPTIONS[k] for k in names}


# Work arrays as mfn's (shared Newton-CG core).
_MEMORY_LS = work_memory(12, 176)
_EQ13_CERTIFIED = ("relative CGLS residual, ||r|| <= eps ||z|| (eq. 13), and, with class or "
                   "instance weights that vary, once the duality gap certifies 1% (else it "
                   "continues at eps / 10)")

register(SolverInfo(
    name="ls",
    kind="binary",
    objective="1/2||w||^2 + C sum_i (1 - y_i w.x_i)^2   (LS-SVM, all examples active)",
    default_tol=1e-6,
    tol_meaning=_EQ13_CERTIFIED,
    paper="Keerthi & DeCoste 2005, Section 4.3 (LS-SVM-CG)",
    fit=_fit("mfn_family", "fit_ls"),
    family="mfn",
    options=_pick("precondition", "jacobi_weight", "fused_cg", "max_iter", "cg_max_iter",
                  "n_threads", "regularize_bias", "weight_split"),
    loss="ls",
    memory=_MEMORY_LS,
    distributed="rows",
    distributed_options=("weight_split",),
))

_MEMORY_MFN_HUBER = work_memory(12, 176)

register(SolverInfo(
    name="mfn-huber",
    kind="binary",
    objective="1/2||w||^2 + 2C sum_i L_h(1 - y_i w.x_i), L_h the modified Huber loss (eq. 21)",
    default_tol=1e-6,
    tol_meaning=_EQ13_CERTIFIED,
    paper="Keerthi & DeCoste 2005, Section 6 (eq. 21-23)",
    fit=_fit("mfn_family", "fit_huber"),
    family="mfn",
    options=_pick("heuristic1", "heuristic2", "precondition", "jacobi_weight", "fused_cg",
                  "forcing", "forcing_guard", "subset", "max_iter", "cg_max_iter", "n_threads", "weight_split"),
    loss="huber",
    memory=_MEMORY_MFN_HUBER,
    distributed="rows",
    distributed_options=("weight_split",),
))

_MEMORY_MFN_L1 = work_memory(13, 176)     # mfn's, and the predictor's stage end w_1

register(SolverInfo(
    name="mfn-l1",
    kind="binary",
    objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)   (L1-SVM, as LIBLINEAR -s 3)",
    default_tol=1e-3,
    tol_meaning=("certified relative objective gap: stops when the duality gap G = F(w) - D(alpha) "
                 "<= eps D(alpha), so (F(w) - F*)/F* <= eps"),
    paper="Keerthi & DeCoste 2005, Section 6 (Huber continuation)",
    fit=_fit("mfn_family", "fit_l1"),
    family="mfn",
    options=dict(
        _pick("heuristic1", "precondition", "jacobi_weight", "fused_cg", "forcing", "forcing_guard",
              "max_iter", "cg_max_iter", "n_threads", "weight_split"),
        tau0=Option(float, 0.25, "mfn-l1: smoothing width of the first continuation stage "
                                 "(the paper's tau_0 = 1)", 1e-12, 1e6),
        cg_tol=Option(float, 1e-2, "mfn-l1: eq. 13 tolerance of the stage solves (divided by 100 "
                                   "when the certificate shows the stage solve is too loose)",
                      1e-12, 0.5),
        max_stages=Option(int, 40, "mfn-l1: cap on continuation stages", 1),
    ),
    loss="l1",
    memory=_MEMORY_MFN_L1,
    distributed="rows",
    distributed_options=("weight_split",),
))

_MEMORY_MFN_ORD = work_memory(12, 176)

register(SolverInfo(
    name="mfn-ord",
    kind="ordinal",
    objective=("1/2(||w||^2 + ||b||^2) + C sum_s sum_i max(0, 1 - z_is (w.x_i - b_s))^2, "
               "z_is = -1 if rank_i <= s else +1   (implicit thresholds, eq. 25)"),
    default_tol=1e-6,
    tol_meaning="relative CGLS residual, ||r|| <= eps ||z|| (eq. 13)",
    paper="Keerthi & DeCoste 2005, Section 7 (Chu & Keerthi implicit thresholds)",
    fit=_fit("mfn_family", "fit_ord"),
    family="mfn",
    options=_pick("heuristic1", "heuristic2", "precondition", "jacobi_weight", "forcing",
                  "forcing_guard", "max_iter", "cg_max_iter", "n_threads", "weight_split"),
    loss="l2",
    memory=_MEMORY_MFN_ORD,
    distributed="rows",
    distributed_options=("weight_split",),
))


# ---------------------------------------------------------------------------- perf
PERF_OPTIONS = {
    "max_iter": Option(int, 10000, "cap on cutting-plane iterations (each adds one constraint)", 1),
    "max_constraints": Option(int, 1000, "cap on the working set; at the cap inactive constraints "
                              "are dropped, or all merged into one, with a warning", 2),
    "inactive_iters": Option(int, 50, "remove a constraint after this many iterations with "
                             "alpha = 0 (0 = keep all)", 0),
    "qp_tol": Option(float, 1e-10, "KKT tolerance of the working-set QP (units of xi)", 0.0, 1.0),
    "n_threads": Option(int, 0, N_THREADS_HELP, 0, 1024),
}

# Work arrays: the cutting planes' working set starts at 16 dense rows of the
# weight length (it doubles as constraints accumulate, up to max_constraints),
# w, the mean-constraint vector, the returned weights and the Gram
# bookkeeping (22 vectors in all: tracemalloc's peak of a solve, which
# tests/test_memory.py keeps within the estimate).
_MEMORY_PERF = work_memory(22, 64)

register(SolverInfo(
    name="perf",
    kind="binary",
    objective="1/2||w||^2 + C sum_i max(0, 1 - y_i w.x_i)   (L1-SVM, as LIBLINEAR -s 3; "
              "paper's C = C*n)",
    default_tol=1e-3,
    tol_meaning="training-loss precision: stop when xi' <= xi + eps, xi' = average hinge loss "
                "(1/n) sum max(0, 1 - y_i w.x_i) at w, xi = its working-set bound (Alg. 1 line 9)",
    paper="Joachims 2006, Algorithm 1 on OP2",
    fit=_fit("perf", "fit_perf"),
    family="perf",
    options=PERF_OPTIONS,
    loss="l1",
    memory=_MEMORY_PERF,
    distributed="rows",
))

_MEMORY_PERF_ORD = work_memory(22, 64)

register(SolverInfo(
    name="perf-ord",
    kind="ordinal",
    objective="1/2||w||^2 + (C n/m) sum_{y_i>y_j} max(0, 1 - w.(x_i - x_j))   (pairwise "
              "OR-SVM / ROC area; m pairs, within a qid when given; paper's C = C*n)",
    default_tol=1e-3,
    tol_meaning="pairwise training-loss precision: stop when xi' <= xi + eps, xi' = average "
                "pairwise hinge loss (1/m) sum_pairs at w (Alg. 2 line 24)",
    paper="Joachims 2006, Algorithm 2 on OP5",
    fit=_fit("perf", "fit_perf_ord"),
    family="perf",
    options=PERF_OPTIONS,
    loss="l1",
    memory=_MEMORY_PERF_ORD,
    distributed="rows",
))


# ---------------------------------------------------------------------------- sdm
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
    "local_epochs": Option(int, LOCAL_EPOCHS_DEFAULT, LOCAL_EPOCHS_HELP, 1, 1_000_000),
    "gather_finish": Option(bool, True, "distributed (MPI): CoCoA+ rounds that stop paying "
                            "(judged at rounds 10, 20, 40, ...) or reach the cap uncertified "
                            "finish serially on rank 0 from the gathered rows and alphas, "
                            "when rank 0 can hold all rows; off: rounds only"),
}

# Work arrays: W, one weight column per class; per row: the alphas' sparse lists.
_MEMORY_SDM_CS = work_memory(1, 64, per_class=1)

register(SolverInfo(
    name="sdm-cs",
    kind="multiclass",
    objective="1/2 sum_m ||w_m||^2 + C sum_i max_m (e_i^m - (w_{y_i} - w_m).x_i)   "
              "(Crammer-Singer, as LIBLINEAR -s 4)",
    default_tol=0.1,
    tol_meaning="max_m g_i^m - min_{m: alpha_i^m < C_i^m} g_i^m < eps for every i (eq. 9), and a "
                "duality gap <= 1% of the objective (else a smaller eps); on several MPI ranks "
                "(CoCoA+): a relative duality gap (P - D) / P <= min(eps, 0.01)",
    paper="Keerthi et al. 2008, Section 2, Algorithm 2.1",
    fit=_fit("sdm", "fit_sdm_cs"),
    family="sdm",
    options=SDM_OPTIONS,
    loss="l1",
    distributed="cocoa",
    distributed_options=("local_epochs", "gather_finish"),
    liblinear_codes={4: {}},
    memory=_MEMORY_SDM_CS,
))

_MEMORY_SDM_WW = work_memory(1, 64, per_class=1)

register(SolverInfo(
    name="sdm-ww",
    kind="multiclass",
    objective="1/2 sum_m ||w_m||^2 + C sum_i sum_{m != y_i} max(0, 1 - (w_{y_i} - w_m).x_i)   "
              "(Weston-Watkins)",
    default_tol=0.1,
    tol_meaning="v_i^m < eps for every i and m != y_i (eq. 20), and a duality gap <= 1% of the "
                "objective (else a smaller eps); on several MPI ranks (CoCoA+): a relative "
                "duality gap (P - D) / P <= min(eps, 0.01)",
    paper="Keerthi et al. 2008, Section 3, Algorithm 3.1",
    fit=_fit("sdm", "fit_sdm_ww"),
    family="sdm",
    options=SDM_OPTIONS,
    loss="l1",
    distributed="cocoa",
    distributed_options=("local_epochs", "gather_finish"),
    memory=_MEMORY_SDM_WW,
))


# ---------------------------------------------------------------------------- svr
EPSILON_HELP = ("half-width p of the regression tube (LIBLINEAR's -p): deviations |y - w.x| "
                "below it cost nothing")

register(SolverInfo(
    name="svr",
    kind="regression",
    objective="1/2||w||_R^2 + C sum_i max(0, |y_i - w.x_i| - p)^2 (L2-loss SVR, LIBLINEAR -s 11; "
              "||w||_R leaves the bias weight out unless --regularize-bias: LIBLINEAR's -R)",
    default_tol=0.0001,
    tol_meaning="LIBLINEAR -s 11's gradient test ||grad F|| <= eps ||grad F(0)|| (--gtol), or "
                "the paper's rule (active set settled, relative CGLS residual <= eps, eq. 13), "
                "whichever comes first; a relative duality gap above 1% warns",
    paper="Keerthi & DeCoste 2005, Sections 3-4 and Appendix A (squared eps-insensitive loss)",
    fit=_fit("svr", "fit_svr"),
    family="svr",
    options={
        "epsilon": Option(float, 0.1, EPSILON_HELP, 0.0),
        "regularize_bias": Option(bool, False, "regularize the bias weight like the others "
                                  "(LIBLINEAR -s 11 without -R); off: a free intercept"),
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
    liblinear_codes={11: {}},
    memory=work_memory(12, 216),     # per row: margins, CGLS, two line-search terms, lists
    distributed="rows",
    distributed_options=("weight_split",),
))

register(SolverInfo(
    name="svr-dual",
    kind="regression",
    objective="1/2||w||^2 + C sum_i max(0, |y_i - y_offset - w.x_i| - p) (--loss l1, LIBLINEAR "
              "-s 13) or its square (--loss l2, -s 12); y_offset the weighted mean target "
              "(--no-center-targets: 0, LIBLINEAR's problem)",
    default_tol=0.1,
    tol_meaning="summed violation of a loop <= eps x the first loop's (Ho & Lin 2012, "
                "LIBLINEAR), and a duality gap <= 1% of the objective (else a smaller eps)",
    paper="Ho & Lin 2012 (JMLR 13), Algorithm 4 with shrinking",
    fit=_fit("svr", "fit_svr_dual"),
    family="svr",
    options={
        "loss": Option(str, "l1", "svr-dual: l1 = eps-insensitive (LIBLINEAR -s 13), l2 = its square (-s 12)",
                       choices=("l1", "l2")),
        "epsilon": Option(float, 0.1, EPSILON_HELP, 0.0),
        "center_targets": Option(bool, True, "solve for the targets minus their cost-weighted "
                                 "mean (stats y_offset, added back at prediction): the dual's "
                                 "stand-in for a free intercept"),
        "shrinking": Option(bool, True, "shrinking (Ho & Lin 2012, Sec. 3.4)"),
        "max_iter": Option(int, 1000, "cap on loops over the examples", 1),
    },
    loss="l1",
    liblinear_codes={12: {"loss": "l2"}, 13: {"loss": "l1"}},
    memory=work_memory(3, 104),      # per row: b, box, constants, index, the packed record
    serial_only="for the squared loss (-s 12, --loss l2) use svr (LIBLINEAR -s 11: the same "
                "problem by the primal Newton method, exact over row blocks); the "
                "epsilon-insensitive loss (-s 13, --loss l1) has no distributed solver: run it "
                "without mpiexec (one process)",
))


# ---------------------------------------------------------------------------- oneclass
register(SolverInfo(
    name="oneclass",
    kind="oneclass",
    objective="1/2||w||^2 - rho + 1/(nu n) sum_i max(0, rho - w.x_i) (one-class SVM, LIBLINEAR "
              "-s 21; weights and rho returned in LIBLINEAR's scale, nu n times these)",
    default_tol=0.01,
    tol_meaning="max_{a<1} -G - min_{a>0} -G < eps in the dual scaled by nu n (LIBLINEAR), and "
                "a duality gap <= 1% of the objective (else a smaller eps)",
    paper="Chou, Lin & Lin, SDM 2020 (dual CD with two-variable updates, as LIBLINEAR -s 21)",
    fit=_fit("oneclass", "fit_oneclass"),
    family="oneclass",
    options={
        "nu": Option(float, 0.5, "nu in (0, 1]: bounds the fraction of training outliers (<= nu) "
                                 "and of support vectors (>= nu) (LIBLINEAR's -n)", 1e-12, 1.0),
        "max_iter": Option(int, 1000, "cap on outer iterations (LIBLINEAR: 1000)", 1),
    },
    loss="l1",
    liblinear_codes={21: {}},
    memory=work_memory(3, 72),
    serial_only="there is no distributed one-class solver: run it without mpiexec (one process)",
    default_bias=-1.0,
))


# ---------------------------------------------------------------------------- cdn, glmnet
for _info in L1_SOLVERS:        # declared in catalog_l1.py
    register(_info)

# lr, lr-dual, softmax (linsvm.problem.catalog_logistic)
for _info in LOGISTIC_SOLVERS:
    register(_info)
