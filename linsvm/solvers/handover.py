"""When a dual coordinate method stops paying, and the primal solver that finishes for it.

dcd (Hsieh et al. 2008) and its CoCoA+ form converge linearly at a rate set by the
conditioning of the data: on scaled data they certify 1% in tens of loops, on unscaled
features (australian, whose values reach 1e5) or at large C the duality gap hardly moves
in a thousand loops.  The primal solvers of the same objectives -- mfn (squared hinge,
Keerthi & DeCoste 2005, Sections 3-4) and mfn-l1 (hinge, by Huber continuation with a
certified gap, Section 6) -- are Newton methods, insensitive to that scaling.  So dcd
watches its own gap and hands over to them once its loops stop paying.

The rule (`Payoff`).  At checkpoints L = first, 2 first, 4 first, ... loops (rounds on
several MPI ranks) the relative duality gap g_L = (P - D) / P is evaluated (one pass
over the data for the primal; the dual is the solver's own).  Linear convergence makes
log g fall by a rate r per loop; over the last doubling r = log(g_{L/2} / g_L) / (L / 2),
and the loops still needed to reach GAP_GUARD are log(g_L / GAP_GUARD) / r.  The solver
hands over when that prediction exceeds the loops its cap leaves (max_iter - L), or when
the gap did not fall at all over the doubling: only solves that would end at the cap
uncertified, never one the dual method would finish.  Checkpoints cost one pass each,
log2(max_iter / first) of them at most, none after the first gap within GAP_GUARD: such
a solve is never handed over, the dual method finishes by its own rule (the gap guard
of its stop certifies it, and a later stall still ends at the cap, which hands over).

Why against the cap and not against the loops spent: dcd's rate grows as it goes, so
an early rate over-predicts, and a rule against the loops spent hands over solves the
dual method would have finished sooner than the finisher (docs/audit.md, "dcd's
hand-over", has the runs).  Against the cap, every run the dual method certifies within
its cap keeps its model bit for bit, and the runs that reach it uncertified (unscaled
data, large C) still hand over, mostly at the second checkpoint (their gap barely
moves).

Against the loops spent (`spent`), for a finisher that costs no more than the solver's
own serial run (the serial solver on rows gathered to one rank; mfn over the row
blocks), an early hand-over cannot make the solve slow, only the rounds can: so the
first checkpoint is judged too, against the gap at the start (`start`; on a cold start
the relative gap 1): CoCoA+ rounds over several ranks can cost more than the whole
serial solve (docs/mpi.md).
"""
from __future__ import annotations

import math

import numpy as np

from .._data import DataView
from .._kernels import csr_matvec, csr_transposed_scores, vdot
from ..problem.catalog import make_params
from .gaps import GAP_GUARD, relative_gap
from .mfn import fit_mfn
from .mfn_family import fit_l1

FIRST_CHECK = 10          # the first checkpoint (loops; rounds on several ranks)


class Payoff:
    """The hand-over rule of the module notes, fed (loops, relative gap) at checkpoints.

    due(loops) says whether `loops` has reached the next checkpoint; judge(loops, gap)
    records the gap there and returns True when the solver should hand over: the gap
    did not fall since the last checkpoint, or its rate predicts more loops to `target`
    than `cap` (the solver's max_iter; None: no cap) leaves -- or, with `spent`, more than
    the loops spent so far (for a finisher that can cost no more than the solver's own
    serial run, such as sdm's gathered finish, which an early hand-over cannot make slow).  history keeps the (loops,
    gap) pairs judged (for the stats), predicted the last prediction."""

    def __init__(self, first=FIRST_CHECK, cap=None, target=GAP_GUARD, spent=False):
        self.next, self.target = int(first), float(target)
        self.cap = math.inf if cap is None else float(cap)
        self.spent = bool(spent)
        self.history = []
        self.predicted = None

    def due(self, loops):
        return loops >= self.next

    def start(self, gap):
        """Record the gap at loop 0, the solve's starting point, when judged against the
        loops spent: the first checkpoint is then judged against it instead of only
        recorded (module notes).  Judged against the cap, the start is not used."""
        if self.spent:
            self.history.append((0, float(gap)))

    def judge(self, loops, gap):
        """Record the gap at `loops`; True if the loops stopped paying."""
        self.next = 2 * max(int(loops), 1)
        last = self.history[-1] if self.history else None
        self.history.append((int(loops), float(gap)))
        if not gap > self.target:
            self.next = math.inf        # certified: the dual method finishes by its own rule
            return False
        if last is None:
            return False
        loops0, gap0 = last
        rate = math.log(gap0 / gap) / (loops - loops0) if 0 < gap < gap0 and loops > loops0 else 0.0
        self.predicted = math.log(gap / self.target) / rate if rate > 0 else math.inf
        horizon = self.cap - loops
        if self.spent:
            horizon = min(horizon, loops)
        return self.predicted == math.inf or self.predicted > horizon


def binary_primal(problem, C, loss, w):
    """1/2 ||w||^2 + C sum_k c_k max(0, 1 - t_k w.x_k)^p (p = 1 for loss "l1", 2 for
    "l2") over this problem's rows: one pass (X w), in NumPy without BLAS."""
    # sums without BLAS: a dot product here wakes OpenBLAS's thread pool, whose spinning
    # threads then take CPU from dcd's next loops (docs/audit.md, "What the hand-over costs")
    ww = float(np.sum(w * w))
    if problem.n_rows == 0:
        return 0.5 * ww
    margins = problem.t * csr_matvec(problem.view, w)
    slack = np.maximum(0.0, 1.0 - margins)
    if loss == "l2":
        slack *= slack
    return 0.5 * ww + C * float(np.sum(problem.cost * slack))


class LoopMonitor:
    """dcd_solve's `monitor` for one serial solve: at Payoff's checkpoints it evaluates
    the primal at the current w (binary_primal) and asks the rule (cap: the solve's
    max_iter); `offset` is the number of loops of earlier dcd_solve calls of the same
    solve."""

    def __init__(self, problem, C, loss, cap):
        self.problem, self.C, self.loss = problem, C, loss
        self.payoff = Payoff(FIRST_CHECK, cap)
        self.offset = 0
        self.handed = False

    def __call__(self, it, w, dual):
        loops = self.offset + it
        if not self.payoff.due(loops):
            return False
        gap = relative_gap(binary_primal(self.problem, self.C, self.loss, w), dual)
        self.handed = self.payoff.judge(loops, gap)
        return self.handed


def block_w(problem, coef):
    """sum over this problem's rows of coef_k x_k (the bias feature included):
    n_weights values (this rank's share on several ranks)."""
    X, rows = problem.X, problem.rows
    w = np.zeros(problem.n_weights)
    if rows.shape[0] and np.any(coef != 0):
        M = np.ascontiguousarray(coef, dtype=np.float64).reshape(-1, 1)
        w[:X.n_features] = csr_transposed_scores(DataView(X, -1.0, rows), M)[:, 0]
        if problem.bias > 0:
            w[X.n_features] = problem.bias * coef.sum()
    return w


def hinge_dual(problem, alpha):
    """The hinge loss's dual value D(alpha) = sum alpha_k - 1/2 ||sum alpha_k t_k x_k||^2
    for 0 <= alpha_k <= C c_k (the caller's point must be feasible; examples with
    c_k = 0 left out), over every rank's rows when problem.comm is set: a lower bound on
    the optimum."""
    return _dual(problem, alpha, None)


def l2_dual(problem, C, alpha):
    """The squared-hinge dual value D(alpha) = sum alpha_k - 1/2 ||sum alpha_k t_k x_k||^2
    - sum alpha_k^2 / (4 C c_k) (examples with c_k = 0 left out: alpha_k = 0 there),
    over every rank's rows when problem.comm is set: a lower bound on the optimum."""
    return _dual(problem, alpha, C)


def _dual(problem, alpha, C):
    """hinge_dual (C None) or l2_dual (its alpha^2 / (4 C c) term): one pass for
    w(alpha), and with problem.comm one allreduce of w and one of the sums."""
    pos = problem.cost > 0
    a = np.where(pos, alpha, 0.0)
    w = block_w(problem, a * problem.t)
    sums = np.array([a.sum(), 0.0 if C is None else
                     float(np.sum(a[pos] ** 2 / (4.0 * C * problem.cost[pos])))])
    if problem.comm is not None:
        w, sums = problem.comm.sum(w), problem.comm.sum(sums)
    return float(sums[0] - 0.5 * vdot(w, w) - sums[1])


# The tolerance of the mfn solve that finishes an l2 run: the paper's -e, without the
# gradient test (the dual point of a near-exact optimum certifies it).
L2_FINISH_TOL = 1e-6


def finish_in_primal(problem, C, loss, w, seed, log, why, name="dcd", l1_tol=None, n_threads=0):
    """Finish a solve of `loss` ("l1" or "l2") by solver `name` from its w with the
    primal solver of the same objective: mfn-l1 at -e l1_tol (default: its own, a
    certified relative gap of 1e-3) for the hinge, mfn at -e L2_FINISH_TOL without the
    gradient test for its square.  Runs on this rank's rows, or over every rank's
    (problem.comm: both run distributed).

    Returns (alpha, dual, result): a dual point for the state (alpha_k = C c_k
    H_tau'(xi_k) at mfn-l1's last smoothing width tau, resp. 2 C c_k max(0, xi_k),
    xi_k = 1 - t_k w.x_k), the certified dual value for l1 (mfn-l1's best, a lower
    bound on the optimum) or None for l2 (the caller evaluates alpha's), and the
    solver's FitResult.  n_threads: the finisher's, as the solver's option (0: auto)."""
    if log is not None:
        log(f"{name}: {why}: finishing with {'mfn-l1' if loss == 'l1' else 'mfn'} from its w"
            + (" (as LIBLINEAR -s 1 switches to -s 2)" if loss == "l2" and name == "dcd" else ""))
    if loss == "l1":
        res = fit_l1(problem, make_params("mfn-l1", C=C, tol=l1_tol, seed=seed,
                                          options={"n_threads": n_threads}), w, None, log)
    else:
        params = make_params("mfn", C=C, tol=L2_FINISH_TOL, seed=seed, options={"gtol": 0.0, "n_threads": n_threads})
        res = fit_mfn(problem, params, w, None, log)
    margins = problem.t * csr_matvec(problem.view, res.weights)
    xi = 1.0 - margins
    if loss == "l2":
        return 2.0 * C * problem.cost * np.maximum(0.0, xi), None, res
    tau = float(res.stats["tau"])
    slope = np.clip((xi + tau) / (2.0 * tau), 0.0, 1.0)       # H_tau'(xi) in [0, 1]
    return C * problem.cost * slope, float(res.stats["dual_objective"]), res
