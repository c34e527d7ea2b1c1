"""mfn-l1's dual polish (linsvm.solvers.hinge_polish) against the hinge SVM's dual
optimum by L-BFGS-B, and the stage it lets end early (linsvm.solvers.mfn_family)."""
import numpy as np
import pytest

import linsvm
import linsvm.solvers.mfn_family as mfn_family
from linsvm.io.synth import make_text_classification
from linsvm.problem import CSRBuffers, Problem
from linsvm.solvers.hinge_polish import polish
from linsvm.solvers.mfn_family import hinge_certificate

from conftest import augmented, random_problem, targets
from test_mfn_family import binary_objective, hinge_dual_optimum


def _problem(n, d, seed, subset):
    """A noisy binary problem with random costs, as a Problem over all rows or over a
    shuffled subset of them (positions that are not row numbers)."""
    X, y = random_problem(n_samples=n, n_features=d, seed=seed)
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.15, -y, y)
    rows = rng.permutation(n)[: n * 3 // 4] if subset else np.arange(n)
    t = np.where(y[rows] > 0, 1.0, -1.0)
    cost = rng.uniform(0.5, 1.5, rows.size)
    problem = Problem.binary(CSRBuffers(X), rows.astype(np.int64), t, cost, 1.0)
    return problem, augmented(X, 1.0)[rows], t, cost


@pytest.mark.parametrize("subset", [False, True])
@pytest.mark.parametrize("C", [0.5, 5.0])
def test_the_polished_dual_point_is_feasible_and_a_bound_closer_to_the_optimum(subset, C):
    problem, Xa, t, cost = _problem(300, 12, seed=int(C * 10) + subset, subset=subset)
    D_star = hinge_dual_optimum(Xa.tocsr(), t, C, cost)            # = F* (strong duality)
    rng = np.random.default_rng(3)
    for scale in (0.05, 0.5, 2.0):
        w = rng.standard_normal(Xa.shape[1]) * scale
        width = 0.05
        p = polish(problem, C, w, width, 1e-6, seed=7)
        alpha = p["alpha"]
        assert np.all(alpha >= 0) and np.all(alpha <= C * cost * (1 + 1e-15))
        v = Xa.T @ (alpha * t)
        assert np.allclose(p["v"], v, rtol=1e-10, atol=1e-12)
        assert p["D"] == pytest.approx(alpha.sum() - 0.5 * v @ v, rel=1e-10, abs=1e-10)
        assert p["D"] <= D_star * (1 + 1e-9)                       # a valid lower bound
        plain = hinge_certificate(problem, C, w, width)            # the polish's start
        assert p["D"] >= plain["D"] - 1e-9 * abs(plain["D"])
        F, _ = binary_objective("l1", w, Xa, t, C, cost)
        F_v, _ = binary_objective("l1", p["v"], Xa, t, C, cost)
        assert p["F"] == pytest.approx(F, rel=1e-12)
        assert p["F_v"] == pytest.approx(F_v, rel=1e-12)


def test_the_polish_near_the_optimum_certifies_what_the_plain_point_cannot():
    X, y = random_problem(n_samples=400, n_features=15, seed=11)
    y = np.where(np.random.default_rng(11).random(y.size) < 0.15, -y, y)
    C = 2.0
    model = linsvm.train(X, y, solver="mfn-l1", C=C, tol=1e-9)
    Xa, t, cost = augmented(X, 1.0), targets(model, y), np.ones(y.size)
    problem = Problem.binary(CSRBuffers(X), np.arange(y.size, dtype=np.int64), t, cost, 1.0)
    D_star = hinge_dual_optimum(Xa, t, C, cost)
    w = model.weights[:, 0] + np.random.default_rng(0).standard_normal(Xa.shape[1]) * 1e-3
    plain = hinge_certificate(problem, C, w, 1e-3)         # a stage iterate's own point
    p = polish(problem, C, w, 4e-3, 1e-6, seed=1)
    assert (p["F"] - plain["D"]) / D_star > 1e-2           # far from certifying
    assert (D_star - p["D"]) / D_star < 1e-4               # the polished one: close to F*
    assert p["D"] <= D_star * (1 + 1e-9)


def _imbalanced_text():
    X, y = make_text_classification(n_samples=10000, n_features=10000, n_classes=50,
                                    avg_length=17, seed=5)
    return X, np.where(y == 1, 1.0, -1.0)                 # topic 1 against the rest: 2%


@pytest.mark.slow
def test_a_final_stage_ends_once_the_polish_certifies_and_the_result_is_within_tol(monkeypatch):
    X, y = _imbalanced_text()
    C, tol = 1.0, 2e-3
    lines = []
    polished = linsvm.train(X, y, solver="mfn-l1", C=C, tol=tol, log=lines.append)
    monkeypatch.setattr(mfn_family, "POLISH_FIRST", 10 ** 9)        # the polish off
    plain = linsvm.train(X, y, solver="mfn-l1", C=C, tol=tol)
    st, st0 = polished.column_stats[0], plain.column_stats[0]
    assert st["polishes"] >= 1 and st0["polishes"] == 0
    assert "certified by the dual polish" in [x for x in lines if " stage " in x][-1]
    assert st["n_iter"] < st0["n_iter"] and st["cg_iter"] < st0["cg_iter"]
    Xa, t = augmented(X, 1.0), targets(polished, y)
    cost = np.ones(y.size)
    D_star = hinge_dual_optimum(Xa.tocsr(), t, C, cost)
    F, _ = binary_objective("l1", polished.weights[:, 0], Xa, t, C, cost)
    assert polished.objective == pytest.approx(F, rel=1e-12)
    assert st["dual_objective"] <= D_star * (1 + 1e-9)
    assert st["duality_gap"] <= tol and (F - D_star) / D_star <= tol


def test_a_stage_polishes_when_its_predicted_smoothing_part_is_within_four_times_the_target(
        monkeypatch):
    """fit_l1's rule: a stage is hopeful (polishes) when the last stage's smoothing part,
    scaled by the ratio of the widths, is at most POLISH_HOPE = 4 times tol * D_max; on this
    set at -e 1e-3 the last stage's prediction lies between 1x and 4x, where the rule of
    a plain 1x would not polish."""
    X, y = _imbalanced_text()
    tol, seen, made = 1e-3, [], []
    real_next, real_stop = mfn_family._next_stage, mfn_family._StageStop

    def next_stage(cert, target, cg_eps, tau):
        out = real_next(cert, target, cg_eps, tau)
        seen.append(cert["gap_smooth"] * out[1] / tau)          # the prediction for tau'
        return out

    def stage_stop(problem, C, tau, beta, best, tol_, settings, hopeful):
        s = real_stop(problem, C, tau, beta, best, tol_, settings, hopeful)
        made.append((s, best.D))
        return s

    monkeypatch.setattr(mfn_family, "_next_stage", next_stage)
    monkeypatch.setattr(mfn_family, "_StageStop", stage_stop)
    model = linsvm.train(X, y, solver="mfn-l1", C=1.0, tol=tol)
    assert len(made) == len(seen) + 1 or len(made) == len(seen)
    ratios = [pred / (tol * D) for pred, (_, D) in zip(seen, made[1:])]
    for r, (s, _) in zip(ratios, made[1:]):
        assert s.hopeful == (r <= 4.0)
    assert not made[0][0].hopeful
    assert any(1.0 < r <= 4.0 and s.polishes > 0 for r, (s, _) in zip(ratios, made[1:]))
    assert model.column_stats[0]["duality_gap"] <= tol
