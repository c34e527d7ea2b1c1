"""The duality-gap guard of the dual methods (dcd, sdm-cs, sdm-ww, CoCoA+), and of the
primal ones whose stopping rule weights can defeat (mfn's family, cdn, glmnet).

Their papers' stops (a violation <= eps) count only once the relative duality gap
(P - D) / |P| certifies the objective within GAP_GUARD of the optimum; otherwise the
solve continues from its dual variables at a smaller eps (gap_guard_shrink).  The
primal solvers' rules are scaled by the gradient at 0, which one heavy example inflates:
with costs that vary (costs_vary) their stops must certify likewise.
"""
from __future__ import annotations

import math

import numpy as np

# The duality-gap guard of the dual methods (dcd, sdm-cs, sdm-ww): their paper's stop
# (a violation <= eps) counts only once the gap certifies the objective within GAP_GUARD;
# otherwise the solve continues from its alphas at eps * gap_guard_shrink(gap).
GAP_GUARD = 0.01
GAP_GUARD_MIN_EPS = 1e-12       # below this eps the guard gives up (and the solver warns)


def relative_gap(primal, dual):
    """(P - D) / |P|, the certified bound on the relative suboptimality (0 if P = 0 = D)."""
    gap = max(primal - dual, 0.0)
    return gap / abs(primal) if primal != 0 else (0.0 if gap == 0 else float("inf"))


def gap_guard_shrink(rel_gap):
    """Factor for eps when a stop's relative gap exceeds GAP_GUARD: the ratio of the two
    (the gap falls roughly in proportion to eps near the end), within [0.1, 0.5]; chosen
    over a fixed eps / 10 by measurement (docs/benchmarks.md, "The duality-gap guard")."""
    return min(0.5, max(0.1, GAP_GUARD / rel_gap))


def costs_vary(problem):
    """True when the examples' costs c_i (class weight times example weight) are not all
    equal, over every rank.  The gradient test's reference ||grad F(0)|| = ||C sum c_i t_i
    x_i|| (and eq. 13's ||z||) grow with the largest costs while F* need not, so with
    varying costs the test can pass far from the optimum (heart_scale -w1 1000: 6.9%
    above): only then must a stop also be certified by the duality gap.  With equal
    costs the test is LIBLINEAR's, whose stops at the defaults docs/audit.md measures
    within 2e-4 of the optimum, and the cheap certificate 1/2 ||grad F||^2, loose by the
    Hessian's conditioning, would only add Newton steps."""
    c = problem.cost
    spread = np.array([-float(c.min()), float(c.max())] if c.size else [-math.inf, -math.inf])
    if problem.comm is not None:
        problem.comm.max(spread)
    return bool(-spread[0] < spread[1])


def progressed(last, F):
    """True when a round of a certifying loop lowered the objective from `last` to F by
    more than rounding (1e-12 relative): a round that did not, cannot certify by going on."""
    return last == math.inf or F < last - 1e-12 * abs(last)
