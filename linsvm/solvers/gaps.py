"""The duality-gap guard of the dual methods (dcd, sdm-cs, sdm-ww, CoCoA+).

Their papers' stops (a violation <= eps) count only once the relative duality gap
(P - D) / |P| certifies the objective within GAP_GUARD of the optimum; otherwise the
solve continues from its dual variables at a smaller eps (gap_guard_shrink).
"""
from __future__ import annotations

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
