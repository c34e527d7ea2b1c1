"""Solvers that finish: every stop certifies 1% of the optimum or warns.

The dual coordinate methods hand over to the exact primal solver of the same objective
when their duality gap stops paying (linsvm/solvers/handover.py): dcd --loss l1 to
mfn-l1, --loss l2 to mfn, alm (p = 1, 2) likewise; perf and perf-ord stop only once
their own duality gap is within 1%.

References are computed here, independently of linsvm: a generalized Newton method in
NumPy (dense, a handful of weights) on the objective itself (squared hinge: piecewise
quadratic, exact) or on a smoothed hinge h_tau <= max(0, z) <= h_tau + tau/2, whose
minimum is a lower bound on the hinge optimum.  The 1/2||w||^2 term makes both strongly
convex with modulus 1, so f(w) - ||grad f(w)||^2 / 2 is a certified lower bound L at the
reference's last point, and the hinge objective at that point an upper bound U: the test
asserts U - L is small before it uses L.
"""
import math
import warnings

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import linsvm
from linsvm.solvers.handover import Payoff

from conftest import augmented, random_problem


def unscaled(n=200, d=8, top=4.0, seed=0):
    """australian-like data: half the columns 0/1, the others positive reals, column j
    scaled by 10^(top j / (d - 1)) (australian's values reach 1e5); noisy linear labels."""
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((n, d))
    Z[:, :d // 2] = Z[:, :d // 2] > 0.3
    Z[:, d // 2:] = np.abs(Z[:, d // 2:])
    score = Z @ rng.standard_normal(d) + 0.8 * rng.standard_normal(n)
    y = np.where(score > np.median(score), 1.0, -1.0)
    return sp.csr_matrix(Z * np.logspace(0, top, d)[None, :]), y


def signed_rows(model, X, y):
    """Rows t_k x_k (x with the bias feature), t = +1 for the model's first class."""
    t = np.where(y == model.classes_[0], 1.0, -1.0)
    return (sp.diags(t) @ augmented(X)).toarray()


def hinge(Z, C, w, loss="l1"):
    slack = np.maximum(0.0, 1.0 - Z @ w)
    return 0.5 * w @ w + C * float(np.sum(slack if loss == "l1" else slack * slack))


def newton_reference(Z, C, loss, tau=1e-3, iters=300):
    """(L, U): a certified lower bound on min_w 1/2||w||^2 + C sum loss(1 - Z w) and the
    objective at the reference's point (module notes).  l1: the smoothed hinge h_tau
    (0, z^2/(2 tau), z - tau/2 on z <= 0, (0, tau), >= tau); l2: the squared hinge."""
    def f(w):
        z = 1.0 - Z @ w
        if loss == "l2":
            return 0.5 * w @ w + C * np.sum(np.maximum(z, 0.0) ** 2)
        h = np.where(z <= 0, 0.0, np.where(z < tau, z * z / (2 * tau), z - tau / 2))
        return 0.5 * w @ w + C * h.sum()

    def grad_hess(w):
        z = 1.0 - Z @ w
        if loss == "l2":
            act = z > 0
            return (w - 2.0 * C * (Z.T @ np.where(act, z, 0.0)),
                    np.eye(w.size) + 2.0 * C * Z[act].T @ Z[act])
        q = (z > 0) & (z < tau)
        return w - C * (Z.T @ np.clip(z / tau, 0.0, 1.0)), np.eye(w.size) + (C / tau) * Z[q].T @ Z[q]

    w = np.zeros(Z.shape[1])
    for _ in range(iters):
        g, H = grad_hess(w)
        if np.linalg.norm(g) < 1e-10:
            break
        d = -np.linalg.solve(H, g)
        s = so.minimize_scalar(lambda s: f(w + s * d), bounds=(0.0, 2.0), method="bounded",
                               options={"xatol": 1e-12}).x
        w = w + s * d
    g, _ = grad_hess(w)
    return f(w) - 0.5 * g @ g, hinge(Z, C, w, loss)


def no_convergence_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", linsvm.ConvergenceWarning)
        return fn()


# ------------------------------------------------------------------ the hand-over rule

def test_payoff_hands_over_only_what_the_cap_would_not_certify():
    steady = Payoff(first=10, cap=1000, target=0.01)
    assert steady.due(10) and not steady.due(9)
    assert not steady.judge(10, 0.9)               # one point: no rate yet
    assert not steady.due(19) and steady.due(20)
    # 0.9 -> 0.8 in 10 loops: 1% in log(80) / (log(9/8) / 10) = 372 more loops <= 980 left
    assert not steady.judge(20, 0.8)
    assert steady.predicted == pytest.approx(math.log(80) / (math.log(0.9 / 0.8) / 10))
    short = Payoff(first=10, cap=300, target=0.01)
    short.judge(10, 0.9)
    assert short.judge(20, 0.8)                    # 372 predicted > 280 left
    stalled = Payoff(first=10, cap=1000, target=0.01)
    stalled.judge(10, 0.9)
    assert stalled.judge(20, 0.95) and stalled.predicted == math.inf
    done = Payoff(first=10, cap=30, target=0.01)
    done.judge(10, 0.9)
    assert not done.judge(20, 0.009)               # within the target: the dual method finishes
    assert [h[0] for h in done.history] == [10, 20] and not done.due(10 ** 9)   # no more checks
    uncapped = Payoff(first=10, target=0.01)
    uncapped.judge(10, 0.9)
    assert not uncapped.judge(20, 0.8999) and uncapped.judge(40, 0.8999)
    # against the loops spent too: 372 predicted > 20 spent, though the cap leaves 980
    spent = Payoff(first=10, cap=1000, target=0.01, spent=True)
    spent.judge(10, 0.9)
    assert spent.judge(20, 0.8)
    quick = Payoff(first=10, cap=1000, target=0.01, spent=True)
    quick.judge(10, 0.5)
    assert not quick.judge(20, 0.05)               # 1% in 10 log(5) / log(10) = 7 <= 20
    # with the start's gap, the first checkpoint is judged too -- against the loops spent
    # only: 1 -> 0.5 in 10 loops predicts 10 log(50) / log(2) = 56 more > 10 spent
    early = Payoff(first=10, cap=1000, target=0.01, spent=True)
    early.start(1.0)
    assert early.judge(10, 0.5)
    assert early.predicted == pytest.approx(10 * math.log(50) / math.log(2))
    fast = Payoff(first=10, cap=1000, target=0.01, spent=True)
    fast.start(1.0)
    assert not fast.judge(10, 0.05)                # 10 log(5) / log(20) = 5.4 <= 10
    capped = Payoff(first=10, cap=1000, target=0.01)
    capped.start(1.0)                              # against the cap: the start is not used
    assert not capped.judge(10, 0.5) and capped.history == [(10, 0.5)]


# ------------------------------------------------------------------ dcd hands over

@pytest.mark.slow
@pytest.mark.parametrize("C", [1.0, 64.0])
def test_dcd_l1_defaults_on_unscaled_data_reach_the_optimum(C):
    """-s 3 at its defaults on australian-like data: the dual loops alone end far above
    the optimum (and warn); with the hand-over mfn-l1 finishes, silently, within 1%."""
    X, y = unscaled()
    model = no_convergence_warning(lambda: linsvm.train(X, y, solver="dcd", C=C))
    Z = signed_rows(model, X, y)
    L, U = newton_reference(Z, C, "l1")
    assert U - L <= 2e-3 * U                       # the reference pins the optimum
    f = hinge(Z, C, model.weights[:, 0])
    st = model.column_stats[0]
    assert st["finished_by"] == "mfn-l1" and "handed over" in st["status"]
    assert L <= f <= 1.01 * L
    # its certificate is a true lower bound and certifies 1%
    assert st["dual_objective"] <= U * (1 + 1e-12)
    assert st["objective"] == pytest.approx(f, rel=1e-9)
    assert st["duality_gap"] <= 0.01 * st["objective"]
    # the hand-over happened at a checkpoint, long before the loop cap
    assert st["gap_checks"] and st["n_iter"] <= 40
    with pytest.warns(linsvm.ConvergenceWarning, match="loop cap"):
        alone = linsvm.train(X, y, solver="dcd", C=C, primal_fallback=False)
    assert hinge(Z, C, alone.weights[:, 0]) > 1.01 * U


@pytest.mark.parametrize("C", [1.0, 64.0])
def test_dcd_l2_defaults_on_unscaled_data_reach_the_optimum(C):
    X, y = unscaled(seed=1)
    model = no_convergence_warning(lambda: linsvm.train(X, y, solver="dcd", loss="l2", C=C))
    Z = signed_rows(model, X, y)
    L, U = newton_reference(Z, C, "l2")
    assert U - L <= 1e-9 * U
    st = model.column_stats[0]
    assert st["finished_by"] == "mfn" and st["n_iter"] <= 40
    assert hinge(Z, C, model.weights[:, 0], "l2") == pytest.approx(U, rel=1e-6)


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_the_common_case_is_unchanged(loss):
    """Where dcd certifies 1% at a steady rate the hand-over does not fire: the model is
    the dual method's, bit for bit, with or without it."""
    X, y = random_problem(n_samples=300, n_features=20, seed=4)
    on = linsvm.train(X, y, solver="dcd", loss=loss, C=1.0)
    off = linsvm.train(X, y, solver="dcd", loss=loss, C=1.0, primal_fallback=False)
    assert on.column_stats[0]["finished_by"] == "dcd"
    assert np.array_equal(on.weights, off.weights)
    Z = signed_rows(on, X, y)
    L, _ = newton_reference(Z, 1.0, loss)
    assert hinge(Z, 1.0, on.weights[:, 0], loss) <= 1.01 * L


@pytest.mark.slow
@pytest.mark.parametrize("solver", ["alm", "alm-exact"])
def test_alm_defaults_on_unscaled_data_reach_the_optimum(solver):
    X, y = unscaled(seed=2)
    C = 64.0
    model = no_convergence_warning(lambda: linsvm.train(X, y, solver=solver, C=C))
    Z = signed_rows(model, X, y)
    L, U = newton_reference(Z, C, "l1")
    assert U - L <= 2e-3 * U
    assert L <= hinge(Z, C, model.weights[:, 0]) <= 1.01 * L


# ------------------------------------------------------------------ perf, perf-ord

@pytest.mark.parametrize("data", ["scaled", "unscaled"])
@pytest.mark.parametrize("tol", [None, 1.0, 100.0])
def test_perf_certifies_whatever_its_eps(data, tol):
    """Line 9's eps bounds an absolute loss (C n eps of the objective); the stop also
    needs a 1% duality gap, so even an eps that line 9 meets at once ends within 1%."""
    X, y = unscaled(seed=3) if data == "unscaled" else random_problem(n_samples=300,
                                                                      n_features=20, seed=3)
    C = 1.0
    kw = {} if tol is None else {"tol": tol}
    model = no_convergence_warning(lambda: linsvm.train(X, y, solver="perf", C=C, **kw))
    Z = signed_rows(model, X, y)
    L, U = newton_reference(Z, C, "l1")
    assert U - L <= 2e-3 * U
    st = model.column_stats[0]
    assert st["rel_gap"] <= 0.01 and st["dual_objective"] <= U * (1 + 1e-12)
    assert L <= hinge(Z, C, model.weights[:, 0]) <= 1.01 * L


def test_perf_warns_when_it_cannot_certify():
    X, y = random_problem(n_samples=300, n_features=20, seed=3)
    with pytest.warns(linsvm.ConvergenceWarning, match=r"relative duality gap of .* <= 0.01"):
        model = linsvm.train(X, y, solver="perf", C=1.0, tol=100.0, max_iter=3)
    assert model.column_stats[0]["rel_gap"] > 0.01


def ordinal_problem(n=60, d=6, levels=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.logspace(0, 2, d)[None, :]
    s = X @ rng.standard_normal(d) / np.logspace(0, 2, d).mean() + 0.5 * rng.standard_normal(n)
    y = np.searchsorted(np.quantile(s, np.linspace(0, 1, levels + 1)[1:-1]), s) + 1.0
    return sp.csr_matrix(X), y


@pytest.mark.parametrize("tol", [None, 1.0])
def test_perf_ord_certifies_whatever_its_eps(tol):
    """perf-ord: 1/2||w||^2 + (C n / m) sum over pairs y_i > y_j of max(0, 1 - w.(x_i - x_j)),
    the binary hinge on the m pair differences without a bias (reference as above)."""
    X, y = ordinal_problem()
    C = 1.0
    kw = {} if tol is None else {"tol": tol}
    model = no_convergence_warning(lambda: linsvm.train(X, y, solver="perf-ord", C=C, **kw))
    A = X.toarray()
    pairs = [A[i] - A[j] for i in range(A.shape[0]) for j in range(A.shape[0]) if y[i] > y[j]]
    Z = np.array(pairs)
    Cp = C * A.shape[0] / Z.shape[0]
    L, U = newton_reference(Z, Cp, "l1")
    assert U - L <= 2e-3 * U
    st = model.column_stats[0]
    assert st["rel_gap"] <= 0.01 and st["dual_objective"] <= U * (1 + 1e-12)
    w = np.asarray(model.weights)[:A.shape[1], 0]
    assert L <= hinge(Z, Cp, w) <= 1.01 * L
