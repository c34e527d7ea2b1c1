"""ls, mfn-huber, mfn-l1 and mfn-ord against independent references and their own
optimality conditions.

Objectives (linsvm's scaling, x_i with the bias feature appended, c_i costs):
  ls         1/2 w.w + C sum c_i (1 - t_i w.x_i)^2
  mfn-huber  1/2 w.w + 2C sum c_i L_h(1 - t_i w.x_i)     (eq. 21)
  mfn-l1     1/2 w.w + C sum c_i max(0, 1 - t_i w.x_i)
  mfn-ord    1/2 (w.w + b.b) + C sum_s sum_i c_i max(0, 1 - z_is (w.x_i - b_s))^2
Every expected value is computed here from these formulas, with numpy, scipy,
brute force or LIBLINEAR; none is copied from linsvm output.
"""
import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import linsvm
from linsvm import _testing
from linsvm.cli import predict_cmd
from linsvm.solvers.mfn_family import smoothed_hinge

from conftest import augmented, invoke, newton_solve, ordinal_solve, random_problem, shared_file, targets

INF = np.inf


def noisy_problem(n=150, d=12, seed=0, flip=0.2):
    """A binary problem with flipped labels, so some examples end far on the wrong side."""
    X, y = random_problem(n_samples=n, n_features=d, seed=seed)
    rng = np.random.default_rng(seed + 100)
    flipped = rng.random(n) < flip
    return X, np.where(flipped, -y, y)


def huber(xi):
    """Eq. 21, written out."""
    return np.where(xi <= 0, 0.0, np.where(xi < 2, 0.5 * xi ** 2, 2.0 * (xi - 1.0)))


def huber_prime(xi):
    return np.where(xi <= 0, 0.0, np.where(xi < 2, xi, 2.0))


def binary_objective(loss, w, Xa, t, C, cost):
    """(F, grad F) for loss in 'ls', 'huber', 'l1' (the last without gradient)."""
    xi = 1.0 - t * (Xa @ w)
    if loss == "ls":
        return 0.5 * w @ w + C * np.sum(cost * xi ** 2), w - 2 * C * (Xa.T @ (cost * t * xi))
    if loss == "huber":
        return (0.5 * w @ w + 2 * C * np.sum(cost * huber(xi)),
                w - 2 * C * (Xa.T @ (cost * t * huber_prime(xi))))
    return 0.5 * w @ w + C * np.sum(cost * np.maximum(0.0, xi)), None


def lbfgs(fun, x0):
    res = so.minimize(fun, x0, jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 50000, "maxcor": 30})
    return res.x, res.fun


# ---------------------------------------------------------------------------- ls

@pytest.mark.parametrize("bias", [1.0, -1.0, 2.5])
@pytest.mark.parametrize("C", [0.05, 3.0])
def test_ls_is_the_normal_equations_solution(bias, C):
    X, y = random_problem(n_samples=90, n_features=14, seed=int(10 * C) + int(abs(bias)) + 3)
    cost = np.random.default_rng(1).uniform(0.2, 2.0, y.size)
    model = linsvm.train(X, y, solver="ls", C=C, bias=bias, sample_weight=cost, tol=1e-12)
    Xa, t = augmented(X, bias), targets(model, y)
    # grad = w - 2C X'C(t - Xw) = 0  <=>  (I + 2C X'CX) w = 2C X'C t
    A = np.eye(Xa.shape[1]) + 2 * C * (Xa.T @ (cost[:, None] * Xa.toarray()))
    w_ref = np.linalg.solve(A, 2 * C * (Xa.T @ (cost * t)))
    np.testing.assert_allclose(model.weights[:, 0], w_ref, rtol=1e-8, atol=1e-10)
    F, _ = binary_objective("ls", w_ref, Xa, t, C, cost)
    assert model.objective == pytest.approx(F, rel=1e-12)
    assert model.n_iter == 1                      # one least-squares solve, every example active
    assert model.stats["n_active"] == y.size


def test_ls_gradient_at_default_tolerance():
    X, y = random_problem(n_samples=300, n_features=25, seed=5)
    model = linsvm.train(X, y, solver="ls", C=2.0)
    Xa, t = augmented(X, 1.0), targets(model, y)
    _, g = binary_objective("ls", model.weights[:, 0], Xa, t, 2.0, np.ones(y.size))
    _, g0 = binary_objective("ls", np.zeros(Xa.shape[1]), Xa, t, 2.0, np.ones(y.size))
    assert np.linalg.norm(g) <= 1e-5 * np.linalg.norm(g0)
    assert model.column_stats[0]["grad_norm"] == pytest.approx(np.linalg.norm(g), rel=1e-6, abs=1e-12)


# ---------------------------------------------------------------------------- mfn-huber

@pytest.mark.parametrize("bias", [1.0, -1.0])
@pytest.mark.parametrize("C", [0.1, 1.0, 30.0])
def test_huber_matches_lbfgs_and_gradient_vanishes(bias, C):
    X, y = noisy_problem(seed=int(C * 3) + int(abs(bias)) + 7)
    cost = np.random.default_rng(2).uniform(0.5, 1.5, y.size)
    model = linsvm.train(X, y, solver="mfn-huber", C=C, bias=bias, sample_weight=cost, tol=1e-10)
    Xa, t = augmented(X, bias), targets(model, y)
    w = model.weights[:, 0]
    xi = 1 - t * (Xa @ w)
    assert np.any(xi >= 2) and np.any((xi > 0) & (xi < 2)) and np.any(xi <= 0)   # I2, I1, I0 all used
    assert model.column_stats[0]["n_linear"] == np.count_nonzero(xi >= 2)
    F, g = binary_objective("huber", w, Xa, t, C, cost)
    _, g0 = binary_objective("huber", np.zeros_like(w), Xa, t, C, cost)
    assert np.linalg.norm(g) <= 1e-7 * np.linalg.norm(g0)
    assert model.objective == pytest.approx(F, rel=1e-12)
    _, F_ref = lbfgs(lambda v: binary_objective("huber", v, Xa, t, C, cost), np.zeros_like(w))
    assert F <= F_ref * (1 + 1e-10)
    assert F == pytest.approx(F_ref, rel=1e-7)


def test_huber_loss_matches_eq21_and_is_c1_at_the_set_boundaries():
    loss = (1.0, 1.0, 1.0, -1.0)                     # the solver's encoding of eq. 21 in o = 1 - xi
    xi = np.linspace(-3, 5, 8001)
    val, der = _testing.loss_eval(loss, 1.0 - xi)
    np.testing.assert_allclose(val, huber(xi), rtol=1e-15, atol=1e-15)
    np.testing.assert_allclose(-der, huber_prime(xi), rtol=1e-15, atol=1e-15)   # dl/do = -dL/dxi
    for knee in (0.0, 2.0):                          # I0|I1 and I1|I2
        for h in (1e-4, 1e-7):
            v, d = _testing.loss_eval(loss, 1.0 - np.array([knee - h, knee, knee + h]))
            assert abs(v[2] - v[0]) <= 2.1 * h * max(1.0, abs(d[1])) + 1e-12       # continuous
            assert abs(d[2] - d[0]) <= 2.1 * h + 1e-12                            # C^1: jumps vanish with h
    # the continuation's smoothed hinge tau/2 L_h(xi/tau + 1): C^1, within [0, tau/4] of max(0, xi)
    for tau in (1.0, 2.0 ** -4, 2.0 ** -10):
        a, tm = 0.5 / tau, 1 + tau
        assert smoothed_hinge(tau) == (a, tm, tm, 1 - tau)     # the loss mfn-l1's stages use
        val, der = _testing.loss_eval((a, tm, tm, 1 - tau), 1.0 - xi)
        np.testing.assert_allclose(val, 0.5 * tau * huber(xi / tau + 1), rtol=1e-13, atol=1e-15)
        excess = val - np.maximum(0.0, xi)
        assert excess.min() >= -1e-14 and excess.max() <= tau / 4 + 1e-14
        assert np.all(der >= -1.0) and np.all(der <= 0.0)       # slope exactly -1 beyond tau
        for knee in (-tau, tau):
            v, d = _testing.loss_eval((a, tm, tm, 1 - tau), 1.0 - np.array([knee - 1e-9, knee + 1e-9]))
            assert abs(d[1] - d[0]) <= 1e-8 / tau


@pytest.mark.parametrize("loss", [(1.0, 1.0, 1.0, -1.0), (1.0, 1.0, 1.0, -INF), (2.5, 1.2, 1.2, 0.8)])
def test_zone_consistency_measure_is_the_gradient_change(loss):
    # a term assumed in zone z (0: o >= hi, 1: between, 2: o <= lo) and now at o adds
    # |l'(o) - l'_z(o)| to the gradient, l'_z the slope of zone z's piece extended
    a, tm, hi, lo = loss
    o = np.linspace(-3, 3, 6001)
    true = np.where(o >= hi, 0.0, np.where(o <= lo, -a * (tm - lo), -a * (tm - o)))
    piece = {0: np.zeros_like(o), 1: -a * (tm - o), 2: np.full_like(o, -a * (tm - lo))}
    for z in (0, 1, 2) if np.isfinite(lo) else (0, 1):
        got = _testing.loss_mismatch(loss, np.full(o.size, z, dtype=np.int32), o)
        expected = np.abs(true - piece[z])
        near = np.minimum(np.abs(o - hi), np.abs(o - lo)) <= 1e-8
        np.testing.assert_allclose(got[~near], expected[~near], rtol=1e-12, atol=1e-15)


def phi_huber(lam, beta, d, y, dy, t, c, loss_fn):
    def phi(step):
        b = beta + step * d
        return 0.5 * lam * b @ b + np.sum(c * loss_fn(1 - t * (y + step * dy)))
    return phi


def brute_force_min(phi, hi=4.0):
    grid = np.linspace(0, hi, 8001)
    vals = np.array([phi(g) for g in grid])
    i = int(np.argmin(vals))
    lo_, hi_ = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    return so.minimize_scalar(phi, bounds=(lo_, hi_), method="bounded", options={"xatol": 1e-13}).x


@pytest.mark.parametrize("seed", range(10))
def test_huber_line_search_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    m, n = 60, 5
    integer = seed % 2 == 1                          # integer data: many tied breakpoints
    X = rng.integers(-2, 3, size=(m, n)).astype(float) if integer else rng.standard_normal((m, n))
    t = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, m)
    lam = 0.4
    beta = rng.standard_normal(n) * (0.5 if integer else 1.5)
    d = rng.standard_normal(n) * 1.5
    y, dy = X @ beta, X @ d
    phi = phi_huber(lam, beta, d, y, dy, t, c, huber)
    if phi(1e-7) > phi(0):
        d, dy = -d, -dy
        phi = phi_huber(lam, beta, d, y, dy, t, c, huber)
    o0, o1 = t * y, t * (y + 2 * dy)
    assert np.any(o0 <= -1) and np.any(o0 >= 1)      # the ray starts with examples in I2 and I0
    delta = _testing.loss_line_search(lam, beta, d, y, dy, t, c, (1.0, 1.0, 1.0, -1.0))
    ref = brute_force_min(phi)
    assert phi(delta) <= phi(ref) + 1e-12 * max(1.0, abs(phi(ref)))
    assert delta == pytest.approx(ref, abs=1e-6)
    assert np.any((o0 <= -1) != (o1 <= -1)) or np.any((o0 >= 1) != (o1 >= 1))   # crossings happen


def test_huber_warm_start_and_subset_heuristic():
    X, y = noisy_problem(n=400, d=30, seed=3)
    first = linsvm.train(X, y, solver="mfn-huber", C=1.0, tol=1e-10)
    cold = linsvm.train(X, y, solver="mfn-huber", C=1.3, tol=1e-10)
    warm = linsvm.train(X, y, solver="mfn-huber", C=1.3, tol=1e-10, init=first)
    assert warm.stats["cg_iter"] < cold.stats["cg_iter"]
    np.testing.assert_allclose(warm.weights, cold.weights, rtol=1e-7, atol=1e-9)
    sub = linsvm.train(X, y, solver="mfn-huber", C=1.3, tol=1e-10, subset=0.3)
    np.testing.assert_allclose(sub.weights, cold.weights, rtol=1e-7, atol=1e-9)


def test_ls_warm_start():
    X, y = random_problem(n_samples=400, n_features=40, seed=8)
    first = linsvm.train(X, y, solver="ls", C=1.0, tol=1e-10)
    cold = linsvm.train(X, y, solver="ls", C=1.2, tol=1e-10)
    warm = linsvm.train(X, y, solver="ls", C=1.2, tol=1e-10, init=first)
    assert warm.stats["cg_iter"] < cold.stats["cg_iter"]
    np.testing.assert_allclose(warm.weights, cold.weights, rtol=1e-7, atol=1e-9)


# ---------------------------------------------------------------------------- mfn-l1

_DUAL_CACHE = {}


def hinge_dual_optimum(Xa, t, C, cost):
    """max_alpha sum alpha - 1/2 ||X'(alpha t)||^2, 0 <= alpha <= C c, by L-BFGS-B (the
    hinge SVM dual; by strong duality its value is F*)."""
    key = (Xa.data.tobytes(), t.tobytes(), C, cost.tobytes())
    if key in _DUAL_CACHE:
        return _DUAL_CACHE[key]
    Z = (Xa.multiply(t[:, None])).tocsr()

    def neg(alpha):
        v = Z.T @ alpha
        return 0.5 * v @ v - alpha.sum(), Z @ v - 1.0

    res = so.minimize(neg, np.zeros(t.size), jac=True, method="L-BFGS-B",
                      bounds=list(zip(np.zeros(t.size), C * cost)),
                      options={"gtol": 1e-12, "ftol": 1e-16, "maxiter": 100000, "maxcor": 50})
    _DUAL_CACHE[key] = -res.fun
    return -res.fun


@pytest.mark.parametrize("C", [0.1, 1.0, 20.0])
@pytest.mark.parametrize("tol", [1e-2, 1e-4])
def test_l1_objective_within_the_certified_gap_of_the_dual_optimum(C, tol):
    X, y = noisy_problem(n=120, d=10, seed=int(C * 10) + 1, flip=0.1)
    cost = np.random.default_rng(4).uniform(0.5, 1.5, y.size)
    model = linsvm.train(X, y, solver="mfn-l1", C=C, tol=tol, sample_weight=cost)
    Xa, t = augmented(X, 1.0), targets(model, y)
    F, _ = binary_objective("l1", model.weights[:, 0], Xa, t, C, cost)
    assert model.objective == pytest.approx(F, rel=1e-12)
    D_star = hinge_dual_optimum(Xa, t, C, cost)      # = F*
    st = model.column_stats[0]
    assert st["dual_objective"] <= D_star * (1 + 1e-9)  # the certificate's lower bound is valid
    assert st["duality_gap"] <= tol
    assert (F - D_star) / D_star <= tol
    assert F >= D_star * (1 - 1e-9)


@pytest.mark.slow
def test_l1_stage_ends_once_its_smoothed_objective_certifies_the_hinge():
    # F <= F_tau (H_tau >= max(0, xi)), so a stage may end at the first Newton iterate
    # with F_tau <= (1 + tol) D_max of the earlier stages.  Here the second stage ends
    # that way after a step or two; the result must still be within tol of F*
    # (L-BFGS-B on the dual).
    X, y = noisy_problem(n=600, d=40, seed=4, flip=0.1)
    C, tol = 10.0, 1e-2
    lines = []
    model = linsvm.train(X, y, solver="mfn-l1", C=C, tol=tol, log=lines.append)
    ends = [line for line in lines if " stage " in line]
    assert "stopped by the caller's test" in ends[-1] and len(ends) >= 2
    Xa, t = augmented(X, 1.0), targets(model, y)
    cost = np.ones(y.size)
    F, _ = binary_objective("l1", model.weights[:, 0], Xa, t, C, cost)
    D_star = hinge_dual_optimum(Xa, t, C, cost)
    assert (F - D_star) / D_star <= tol
    st = model.column_stats[0]
    assert st["dual_objective"] <= D_star * (1 + 1e-9) and st["duality_gap"] <= tol


def test_l1_predictor_extrapolates_the_stage_optima_toward_the_next_one():
    # Stage optima w(tau) of F_tau move to first order linearly in tau where no example
    # crosses a band edge, so w2 + (tau3 - tau2)/(tau2 - tau1) (w2 - w1) starts the tau3
    # stage nearer its optimum than w2 does (here within 0.3 of w2's distance), at a lower
    # F_tau3.  The optima are tight Newton solves.
    from linsvm.problem import CSRBuffers, Problem
    from linsvm.solvers.mfn_family import _Predictor
    X, y = noisy_problem(n=400, d=20, seed=7, flip=0.1)
    t = np.where(y > 0, 1.0, -1.0)
    C = 1.0
    problem = Problem.binary(CSRBuffers(X), np.arange(y.size, dtype=np.int64), t, np.ones(y.size), 1.0)
    Xb = problem.X
    optima = {}
    for tau in (2.0 ** -4, 2.0 ** -5, 2.0 ** -6):
        w = np.zeros(X.shape[1] + 1)
        st = newton_solve(Xb.indptr, Xb.indices, Xb.data, X.shape[1], 1.0, problem.rows, t,
                          problem.cost, 1.0 / C, w, smoothed_hinge(tau), tol=1e-12, max_iter=200)
        assert st["status"] in (0, 2)
        optima[tau] = w
    (tau1, w1), (tau2, w2), (tau3, w3) = optima.items()
    lines = []
    pred = _Predictor(problem, 1.0 / C, 1, lines.append)
    beta = w1.copy()
    pred.end(tau1, True)                 # stage 1 solved: beta is its end
    pred.start(beta, tau2, smoothed_hinge(tau2))
    assert lines == [] and beta.tobytes() == w1.tobytes()      # one end: nothing to extrapolate
    beta[:] = w2
    pred.end(tau2, True)
    pred.start(beta, tau3, smoothed_hinge(tau3))
    assert "(taken)" in lines[0]
    np.testing.assert_allclose(beta, w2 + (tau3 - tau2) / (tau2 - tau1) * (w2 - w1), rtol=1e-13)
    assert np.linalg.norm(beta - w3) < 0.5 * np.linalg.norm(w2 - w3)
    assert pred.prev[0] == tau2 and pred.prev[1].tobytes() == w2.tobytes()   # w_1 of the next
    # after a stage that was not solved (its end is not on the path) it is left alone
    pred.end(tau3, False)
    other = w3.copy()
    pred.start(other, tau3 / 8, smoothed_hinge(tau3 / 8))
    assert other.tobytes() == w3.tobytes() and len(lines) == 1


def test_l1_subgradient_optimality():
    X, y = noisy_problem(n=200, d=15, seed=11, flip=0.1)
    C = 2.0
    model = linsvm.train(X, y, solver="mfn-l1", C=C, tol=1e-9)
    Xa, t = augmented(X, 1.0), targets(model, y)
    w = model.weights[:, 0]
    xi = 1 - t * (Xa @ w)
    # 0 in w - C sum d max(0, xi_i) t_i x_i: alpha_i = C above the margin, 0 below it,
    # anything in [0, C] on it; find the best alpha on the margin by bounded least squares
    on = np.abs(xi) <= 1e-5
    assert 0 < np.count_nonzero(on) < y.size
    alpha = np.where(xi > 0, C, 0.0)
    Z = Xa.multiply(t[:, None]).tocsr()
    rest = w - Z[~on].T @ alpha[~on]
    fit = so.lsq_linear(Z[on].T.toarray(), rest, bounds=(0.0, C), method="bvls", tol=1e-14)
    assert np.linalg.norm(rest - Z[on].T @ fit.x) <= 1e-5 * np.linalg.norm(w)
    # and the same test rejects a point that is not optimal: the first smoothing stage's
    far = linsvm.train(X, y, solver="mfn-l1", C=C, tol=0.5, tau0=0.5)
    wf = far.weights[:, 0]
    xif = 1 - t * (Xa @ wf)
    on_f = np.abs(xif) <= 1e-5
    rest_f = wf - Z[~on_f].T @ np.where(xif > 0, C, 0.0)[~on_f]
    if np.any(on_f):
        fit_f = so.lsq_linear(Z[on_f].T.toarray(), rest_f, bounds=(0.0, C), method="bvls")
        rest_f = rest_f - Z[on_f].T @ fit_f.x
    assert np.linalg.norm(rest_f) > 1e-3 * np.linalg.norm(wf)


def test_l1_certificate_is_the_duality_gap():
    from linsvm.solvers.mfn_family import hinge_certificate
    from linsvm.problem import CSRBuffers, Problem
    X, y = noisy_problem(n=100, d=8, seed=21)
    t = np.where(y > 0, 1.0, -1.0)
    cost = np.random.default_rng(0).uniform(0.5, 2.0, y.size)
    beta = np.random.default_rng(1).standard_normal(9) * 0.3
    C, tau = 0.7, 0.2
    problem = Problem.binary(CSRBuffers(X), np.arange(y.size, dtype=np.int64), t, cost, 1.0)
    cert = hinge_certificate(problem, C, beta, tau)
    Xa = augmented(X, 1.0)
    xi = 1 - t * (Xa @ beta)
    alpha = C * cost * np.clip((xi + tau) / (2 * tau), 0, 1)     # H_tau'(xi) C c
    wa = Xa.T @ (alpha * t)
    D = alpha.sum() - 0.5 * wa @ wa
    F, _ = binary_objective("l1", beta, Xa, t, C, cost)
    assert cert["F"] == pytest.approx(F, rel=1e-13)
    assert cert["D"] == pytest.approx(D, rel=1e-12)
    assert cert["gap"] == pytest.approx(F - D, rel=1e-9)


@pytest.mark.data
@pytest.mark.parametrize("C", [0.5, 4.0])
def test_l1_matches_liblinear_s3_on_real_data(C):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    path = shared_file("binary/a1a")
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(path), n_features=123)
    tol = 1e-4
    model = linsvm.train(X, y, solver="mfn-l1", C=C, tol=tol)
    ref = liblinear.train(y, X, f"-s 3 -c {C} -B 1 -e 1e-6 -q")
    w_ref = np.array(ref.get_decfun()[0] + [ref.get_decfun()[1]])
    t = targets(model, y)
    if ref.get_labels()[0] != model.classes_[0]:
        w_ref = -w_ref
    Xa = augmented(X, 1.0)
    F_ref, _ = binary_objective("l1", w_ref, Xa, t, C, np.ones_like(y))
    F, _ = binary_objective("l1", model.weights[:, 0], Xa, t, C, np.ones_like(y))
    D = model.column_stats[0]["dual_objective"]
    assert D <= F_ref * (1 + 1e-12)                  # our lower bound holds for LIBLINEAR's point
    assert F <= F_ref * (1 + tol)                    # we are at least as good, to the certified gap
    # the same objective: LIBLINEAR's -s 3 stops at its 1000-iteration cap here, 5e-5 (C = 0.5)
    # to 8e-3 (C = 4) above F*, which the certificate brackets; how far depends on its
    # coordinate order, drawn from the C library's rand() whose state the earlier LIBLINEAR
    # calls of this process leave
    assert F_ref <= F * (1 + 1e-2)


def test_l1_warm_start_needs_fewer_iterations_and_reaches_the_same_objective():
    X, y = noisy_problem(n=600, d=40, seed=13, flip=0.1)
    tol = 1e-5
    first = linsvm.train(X, y, solver="mfn-l1", C=1.0, tol=tol)
    cold = linsvm.train(X, y, solver="mfn-l1", C=1.2, tol=tol)
    warm = linsvm.train(X, y, solver="mfn-l1", C=1.2, tol=tol, init=first)
    assert warm.stats["cg_iter"] < cold.stats["cg_iter"]
    assert warm.n_iter < cold.n_iter
    assert warm.objective == pytest.approx(cold.objective, rel=2 * tol)
    again = linsvm.train(X, y, solver="mfn-l1", C=1.2, tol=tol, init=warm)   # already certified
    assert again.n_iter == 0
    np.testing.assert_array_equal(again.weights, warm.weights)


@pytest.mark.slow
@pytest.mark.data
def test_l1_tight_tolerance_never_increases_the_smoothed_objective_regression():
    # At tau ~ 1e-7 on a9a a Newton direction of norm 1e-13 once produced an "exact" step
    # of 6e12 (the slope's pieces were rounding noise) and F jumped from 11434 to 17687.
    # F_tau(beta) falls within a stage and also when tau shrinks (H_tau grows with tau),
    # so the whole trace must be non-increasing.
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(shared_file("binary/a9a")), n_features=123)
    model = linsvm.train(X, y, solver="mfn-l1", C=1.0, tol=1e-9)
    trace = np.array(model.column_stats[0]["trace"])
    assert np.all(np.diff(trace) <= 1e-12 * trace[:-1])
    assert model.column_stats[0]["duality_gap"] <= 1e-9


@pytest.mark.slow
def test_l1_certificate_stays_valid_when_it_cannot_be_met():
    # one feature scaled by 1e9 (the unscaled Australian set has one at 1e5; up to about
    # 1e7 the solver now certifies 1e-10, since CGLS hands it the step it took): double
    # precision cannot certify 1e-10, the solver must stop, warn, and report a bound
    # that holds.
    # (L-BFGS-B on the dual fails on this scaling too; the reference is the primal QP
    # min 1/2 w.w + C sum s, s >= 0, s >= 1 - t x.w by SLSQP, an upper bound on F*.)
    X, y = noisy_problem(n=40, d=6, seed=5, flip=0.1)
    X = sp.csr_matrix(X.toarray() * np.r_[np.ones(5), 1e9])
    C, tol = 1.0, 1e-10
    model = linsvm.train(X, y, solver="mfn-l1", C=C, tol=tol)
    st = model.column_stats[0]
    Xa, t = augmented(X, 1.0).toarray(), targets(model, y)
    n, N = Xa.shape[1], y.size
    A = np.hstack([t[:, None] * Xa, np.eye(N)])
    res = so.minimize(lambda v: (0.5 * v[:n] @ v[:n] + C * v[n:].sum(), np.r_[v[:n], C * np.ones(N)]),
                      np.r_[np.zeros(n), np.ones(N)], jac=True, method="SLSQP",
                      constraints=[{"type": "ineq", "fun": lambda v: A @ v - 1, "jac": lambda v: A}],
                      bounds=[(None, None)] * n + [(0, None)] * N, options={"maxiter": 2000, "ftol": 1e-14})
    F_qp, _ = binary_objective("l1", res.x[:n], sp.csr_matrix(Xa), t, C, np.ones(N))
    F, _ = binary_objective("l1", model.weights[:, 0], sp.csr_matrix(Xa), t, C, np.ones(N))
    assert st["dual_objective"] <= min(F_qp, F) * (1 + 1e-12)       # a true lower bound on F*
    assert F <= F_qp * (1 + max(st["duality_gap"], 1e-9))
    assert st["duality_gap"] > tol and st["status"] in ("stalled", "stage cap") and model.warnings


# ---------------------------------------------------------------------------- mfn-ord

def ordinal_problem(n=150, d=8, levels=4, seed=0, labels=None):
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.5, random_state=seed, format="csr",
                  data_rvs=lambda k: rng.standard_normal(k))
    score = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    codes = np.digitize(score, np.quantile(score, np.linspace(0, 1, levels + 1)[1:-1]))
    labels = np.arange(1, levels + 1) if labels is None else np.asarray(labels)
    return X, labels[codes].astype(float), codes


def ordinal_objective(beta, Xa, codes, nb, C, cost):
    """eq. 25 in linsvm's scaling and its gradient, straight from the formula."""
    nw = Xa.shape[1]
    w, b = beta[:nw], beta[nw:]
    y = Xa @ w
    F = 0.5 * beta @ beta
    gw, gb = w.copy(), b.copy()
    for s in range(nb):
        z = np.where(codes > s, 1.0, -1.0)
        v = np.maximum(0.0, 1.0 - z * (y - b[s]))
        F += C * np.sum(cost * v ** 2)
        dv = -2 * C * cost * v * z                   # dF/dy_i for this threshold
        gw += Xa.T @ dv
        gb[s] -= dv.sum()
    return F, np.concatenate([gw, gb])


@pytest.mark.parametrize("levels", [3, 5])
@pytest.mark.parametrize("bias", [1.0, -1.0])
@pytest.mark.parametrize("C", [0.1, 5.0])
@pytest.mark.parametrize("jw", [1.0, 0.05])
def test_ord_matches_lbfgs_gradient_vanishes_thresholds_ordered(levels, bias, C, jw):
    X, y, codes = ordinal_problem(levels=levels, seed=levels + int(C))
    cost = np.random.default_rng(3).uniform(0.5, 1.5, y.size)
    model = linsvm.train(X, y, solver="mfn-ord", C=C, bias=bias, sample_weight=cost, tol=1e-10,
                         jacobi_weight=jw)
    Xa = augmented(X, bias)
    beta = np.concatenate([model.weights[:, 0], model.thresholds_])
    F, g = ordinal_objective(beta, Xa, codes, levels - 1, C, cost)
    _, g0 = ordinal_objective(np.zeros_like(beta), Xa, codes, levels - 1, C, cost)
    assert np.linalg.norm(g) <= 1e-7 * np.linalg.norm(g0)
    assert model.objective == pytest.approx(F, rel=1e-12)
    _, F_ref = lbfgs(lambda v: ordinal_objective(v, Xa, codes, levels - 1, C, cost), np.zeros_like(beta))
    assert F <= F_ref * (1 + 1e-10)
    assert F == pytest.approx(F_ref, rel=1e-7)
    assert model.column_stats[0]["threshold_inversion"] == 0.0    # ordered by the solver, not by a sort
    assert np.all(np.diff(model.thresholds_) >= 0)


@pytest.mark.parametrize("seed", range(4))
def test_ord_thresholds_ordered_with_a_sparse_middle_rank_and_class_weights(seed):
    X, y, codes = ordinal_problem(n=200, levels=5, seed=30 + seed)
    keep = (codes != 2) | (np.arange(y.size) % 25 == 0)      # rank 3 nearly empty
    model = linsvm.train(X[keep], y[keep], solver="mfn-ord", C=3.0, tol=1e-8,
                         class_weight={1.0: 3.0, 5.0: 0.3})
    assert model.column_stats[0]["threshold_inversion"] <= 1e-9
    assert np.all(np.diff(model.thresholds_) >= 0)
    assert model.thresholds_.size == 4


@pytest.mark.parametrize("bias_ord, bias_mfn", [(-1.0, 1.0), (1.0, np.sqrt(2.0)), (2.0, np.sqrt(5.0))])
def test_ord_with_two_ranks_is_mfn_up_to_the_threshold_bias_reparametrization(bias_ord, bias_mfn):
    # two ranks: one threshold b; score w.x + B w_B - b.  With a bias feature B the offset
    # o = B w_B - b is regularized by min w_B^2 + b^2 = o^2 / (B^2 + 1): mfn with bias
    # sqrt(B^2 + 1) (its offset v sqrt(B^2 + 1), regularized by v^2) is the same problem.
    X, y = random_problem(n_samples=120, n_features=9, seed=17)
    y01 = np.where(y > 0, 7.0, 3.0)                   # ranks 3 < 7: the higher rank is mfn's +1
    C = 1.5
    ordm = linsvm.train(X, y01, solver="mfn-ord", C=C, bias=bias_ord, tol=1e-12)
    mfnm = linsvm.train(X, np.where(y01 == 7.0, 1.0, -1.0), solver="mfn", C=C, bias=bias_mfn, tol=1e-12)
    n = X.shape[1]
    np.testing.assert_allclose(ordm.weights[:n, 0], mfnm.weights[:n, 0], rtol=1e-8, atol=1e-10)
    offset_ord = (bias_ord * ordm.weights[n, 0] if bias_ord > 0 else 0.0) - ordm.thresholds_[0]
    np.testing.assert_allclose(offset_ord, bias_mfn * mfnm.weights[n, 0], rtol=1e-8, atol=1e-10)
    assert ordm.objective == pytest.approx(mfnm.objective, rel=1e-9)
    np.testing.assert_array_equal(ordm.predict(X) == 7.0, mfnm.predict(X) == 1.0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(6))
def test_ord_line_search_matches_brute_force(seed):
    rng = np.random.default_rng(200 + seed)
    m, n, nb = 50, 4, 3
    X = rng.standard_normal((m, n)) if seed % 2 == 0 else rng.integers(-2, 3, (m, n)).astype(float)
    codes = rng.integers(0, nb + 1, m).astype(np.int32)
    c = rng.uniform(0.5, 2.0, m)
    lam = 0.5
    beta = np.concatenate([rng.standard_normal(n), np.sort(rng.standard_normal(nb))])
    d = rng.standard_normal(n + nb)

    def phi(step):
        b = beta + step * d
        y = X @ b[:n]
        f = 0.5 * lam * b @ b
        for s in range(nb):
            z = np.where(codes > s, 1.0, -1.0)
            f += 0.5 * np.sum(c * np.maximum(0.0, 1 - z * (y - b[n + s])) ** 2)
        return f

    if phi(1e-7) > phi(0):
        d = -d
    delta = _testing.ordinal_line_search(lam, beta, d, X @ beta[:n], X @ d[:n], codes, c, nb)
    ref = brute_force_min(phi)
    assert phi(delta) <= phi(ref) + 1e-12 * max(1.0, abs(phi(ref)))
    assert delta == pytest.approx(ref, abs=1e-6)


def test_ord_arbitrary_integer_labels_are_ranks_in_sorted_order():
    X, y, codes = ordinal_problem(levels=3, seed=5, labels=[-3, 0, 7])
    a = linsvm.train(X, y, solver="mfn-ord", C=1.0, tol=1e-10)
    b = linsvm.train(X, codes + 1.0, solver="mfn-ord", C=1.0, tol=1e-10)
    np.testing.assert_array_equal(a.classes_, [-3.0, 0.0, 7.0])
    np.testing.assert_array_equal(a.weights, b.weights)
    np.testing.assert_array_equal(a.thresholds_, b.thresholds_)
    s = augmented(X, 1.0) @ a.weights[:, 0]
    expected = np.array([-3.0, 0.0, 7.0])[np.sum(s[:, None] > a.thresholds_[None, :], axis=1)]
    np.testing.assert_array_equal(a.predict(X), expected)


def test_ord_warm_start_needs_fewer_iterations_and_reaches_the_same_point():
    X, y, _ = ordinal_problem(n=500, d=30, levels=5, seed=9)
    first = linsvm.train(X, y, solver="mfn-ord", C=1.0, tol=1e-10)
    cold = linsvm.train(X, y, solver="mfn-ord", C=1.3, tol=1e-10)
    warm = linsvm.train(X, y, solver="mfn-ord", C=1.3, tol=1e-10, init=first)
    assert warm.stats["cg_iter"] < cold.stats["cg_iter"]
    np.testing.assert_allclose(warm.weights, cold.weights, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(warm.thresholds_, cold.thresholds_, rtol=1e-7, atol=1e-9)


def test_ord_ignores_qid_with_a_warning():
    X, y, _ = ordinal_problem(seed=2)
    qid = np.repeat([1, 2, 3], [50, 50, 50])
    a = linsvm.train(X, y, solver="mfn-ord", qid=qid)
    b = linsvm.train(X, y, solver="mfn-ord")
    np.testing.assert_array_equal(a.weights, b.weights)
    assert any("query ids" in w for w in a.warnings)


@pytest.mark.data
def test_ord_on_housing_against_lbfgs_and_predict_reports_ordinal_measures(tmp_path):
    from sklearn.datasets import load_svmlight_file
    train_path = shared_file("ordinal/housing_5bins.train.1")
    test_path = shared_file("ordinal/housing_5bins.test.1")
    X, y = load_svmlight_file(str(train_path))
    Xt, yt = load_svmlight_file(str(test_path), n_features=X.shape[1])
    C = 2.0
    model = linsvm.train(X, y, solver="mfn-ord", C=C)
    classes = np.unique(y)
    codes = np.searchsorted(classes, y)
    Xa = augmented(X, 1.0).toarray()               # unscaled features: dense makes L-BFGS quicker
    beta = np.concatenate([model.weights[:, 0], model.thresholds_])
    F, g = ordinal_objective(beta, Xa, codes, classes.size - 1, C, np.ones(y.size))
    _, g0 = ordinal_objective(np.zeros_like(beta), Xa, codes, classes.size - 1, C, np.ones(y.size))
    assert np.linalg.norm(g) <= 1e-5 * np.linalg.norm(g0)
    _, F_ref = lbfgs(lambda v: ordinal_objective(v, Xa, codes, classes.size - 1, C, np.ones(y.size)),
                     np.zeros_like(beta))
    assert F == pytest.approx(F_ref, rel=1e-7)
    assert np.all(np.diff(model.thresholds_) > 0)
    # linsvm-predict: ranks out, MAE / exact-rank / pairwise accuracy on stderr
    model_file, out = tmp_path / "h.model", tmp_path / "h.pred"
    model.save(str(model_file))
    res = invoke(predict_cmd, str(test_path), str(model_file), str(out))
    assert res.exit_code == 0, res.output
    pred = np.loadtxt(out)
    scores = augmented(Xt, 1.0) @ model.weights[:, 0]
    ranks = np.sum(scores[:, None] > model.thresholds_[None, :], axis=1)
    np.testing.assert_array_equal(pred, classes[ranks])
    mae = np.mean(np.abs(ranks - np.searchsorted(classes, yt)))
    acc = np.mean(classes[ranks] == yt)
    lo, hi = np.meshgrid(yt, yt, indexing="ij")
    pairs = lo < hi
    si, sj = np.meshgrid(scores, scores, indexing="ij")
    pw = (np.sum((si < sj) & pairs) + 0.5 * np.sum((si == sj) & pairs)) / np.sum(pairs)
    assert f"Mean absolute error = {mae:.6g}" in res.stderr
    assert f"Exact-rank accuracy = {100 * acc:.4g}%" in res.stderr
    assert f"Pairwise accuracy = {100 * pw:.4g}%" in res.stderr
    res = invoke(predict_cmd, "--decision-values", "-q", str(test_path), str(model_file), "-")
    np.testing.assert_allclose(np.array(res.stdout.split(), dtype=float), scores, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------------------- inputs

def test_core_rejects_bad_indices_before_the_kernel():
    from linsvm.problem import CSRBuffers
    X, y = random_problem(n_samples=20, n_features=5, seed=1)
    Xb = CSRBuffers(X)
    beta = np.zeros(6)
    with pytest.raises(ValueError, match="row numbers"):
        newton_solve(Xb.indptr, Xb.indices, Xb.data, 5, 1.0, np.array([0, 20], dtype=np.int64),
                          np.ones(2), np.ones(2), 1.0, beta, (1.0, 1.0, 1.0, -INF))
    with pytest.raises(ValueError, match="rank codes"):
        ordinal_solve(Xb.indptr, Xb.indices, Xb.data, 5, 1.0, np.arange(20, dtype=np.int64),
                           np.full(20, 3, dtype=np.int32), 2, np.ones(20), 1.0, np.zeros(8))
    with pytest.raises(ValueError, match="invalid loss"):
        newton_solve(Xb.indptr, Xb.indices, Xb.data, 5, 1.0, np.arange(20, dtype=np.int64),
                          np.ones(20), np.ones(20), 1.0, beta, (1.0, 1.0, 2.0, -INF))
    with pytest.raises(ValueError, match="beta has"):
        newton_solve(Xb.indptr, Xb.indices, Xb.data, 5, 1.0, np.arange(20, dtype=np.int64),
                          np.ones(20), np.ones(20), 1.0, np.zeros(5), (1.0, 1.0, 1.0, -INF))


def _ray_with_root_at(target, X, t, c, lam, beta, d, loss):
    """f(delta, dd) = lam/2 ||beta + delta dd||^2 + sum c l(t (X (beta + delta dd))) for the
    loss (a, tm, hi, lo) of mfn_terms, and d turned into a descent direction and scaled so
    that the minimizer of f(., d) over delta >= 0 (scipy's bounded search) lies at target."""
    a, tm, hi, lo = loss
    y = X @ beta

    def f(delta, dd):
        o = t * (y + delta * (X @ dd))
        lval = np.where(o >= hi, 0.0, 0.5 * a * (tm - o) ** 2)
        if np.isfinite(lo):
            lval = np.where(o > lo, lval, a * (tm - lo) * (lo - o) + 0.5 * a * (tm - lo) ** 2)
        b = beta + delta * dd
        return 0.5 * lam * b @ b + np.sum(c * lval)

    if f(1e-7, d) > f(0.0, d):
        d = -d
    root = so.minimize_scalar(lambda s: f(s, d), bounds=(0.0, 1e3), method="bounded",
                              options={"xatol": 1e-12}).x
    return f, d * root / target


@pytest.mark.parametrize("target", [0.05, 0.7, 1.0, 3.0, 40.0])
@pytest.mark.parametrize("loss", [(1.0, 1.0, 1.0, -np.inf), (1.0, 1.0, 1.0, -1.0)])
@pytest.mark.parametrize("seed", [21, 6])
def test_line_search_root_before_and_beyond_one(target, loss, seed):
    # The search takes phi'(1) first and selects among the breakpoints on the root's
    # side of delta = 1 only: scale the direction so that the root lands on either
    # side of 1 (and at 1), with breakpoints on both sides, and compare with brute force.
    # (Seed 6 has breakpoints between 1 and a root at 40 whose phi'(1) the
    # regularizer's part alone gets wrong: the L2 pass must add the loss terms'.)
    rng = np.random.default_rng(seed)
    m, n = 300, 6
    X = rng.standard_normal((m, n))
    t = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, m)
    lam, beta, d = 0.4, rng.standard_normal(n), rng.standard_normal(n)
    y = X @ beta
    a, tm, hi, lo = loss
    f, d = _ray_with_root_at(target, X, t, c, lam, beta, d, loss)   # the minimizer at target
    dy = X @ d
    delta = _testing.loss_line_search(lam, beta, d, y, dy, t, c, loss)
    knees = [(t * k - y) / dy for k in (hi, lo) if np.isfinite(k)]
    knees = np.concatenate(knees)
    knees = knees[knees > 0]
    if seed == 21:
        assert np.any(knees < 1.0) and np.any(knees > 1.0)
    assert f(delta, d) <= f(target, d) + 1e-12 * abs(f(target, d))
    assert delta == pytest.approx(target, rel=1e-6)


def test_ord_jacobi_weight_reaches_the_ordinal_preconditioner():
    # mfn-ord builds its own preconditioner over (example, threshold) pairs: the weight
    # must change its CGLS path (the iterates, so the last digits of the result), not its
    # answer.
    X, y, codes = ordinal_problem(levels=3, seed=3)
    runs = [linsvm.train(X, y, solver="mfn-ord", C=0.1, tol=1e-10, jacobi_weight=jw)
            for jw in (1.0, 0.3)]
    assert not np.array_equal(runs[0].weights, runs[1].weights)
    np.testing.assert_allclose(runs[1].weights, runs[0].weights, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(runs[1].thresholds_, runs[0].thresholds_, rtol=1e-7, atol=1e-9)


def _stalled_l1(X, y, C, **kw):
    import warnings as _w
    with _w.catch_warnings(record=True) as rec:
        _w.simplefilter("always")
        model = linsvm.train(X, y, solver="mfn-l1", C=C, **kw)
    return model, [str(r.message) for r in rec if "mfn-l1" in str(r.message)]


def test_a_stall_on_rows_of_unit_length_names_the_newton_cap_not_the_scale():
    """Rows of unit length (tf-idf text) are scaled: a stall there does not hint at the
    scale.  Here (separable, C = 1e5) every stage's Newton solve stops at --max-iter, which
    the warning names -- and raising it does certify the model."""
    from sklearn.preprocessing import normalize
    rng = np.random.default_rng(0)
    X = normalize(sp.random(300, 2000, density=0.01, format="csr", random_state=rng))
    y = np.where(rng.random(300) < 0.5, 1.0, -1.0)
    assert np.allclose(sp.linalg.norm(X, axis=1), 1.0)
    _, msgs = _stalled_l1(X, y, 1e5)
    assert len(msgs) == 1 and "(stalled)" in msgs[0], msgs
    assert "scale" not in msgs[0] and "stopped at --max-iter 50: raise --max-iter" in msgs[0]
    model, msgs = _stalled_l1(X, y, 1e5, max_iter=1000)
    assert msgs == [] and model.stats["duality_gap"] <= model.params["tol"]


@pytest.mark.data
def test_a_stall_on_badly_scaled_rows_hints_at_the_scale():
    """Australian's columns spread over 1e0 .. 1e5 more: rows of norm up to 1e10, where
    double precision cannot certify 1e-6 and the hint to scale is the right one."""
    from conftest import shared_file
    from linsvm.io.svmlight import load_svmlight
    X, y = load_svmlight(shared_file("binary/australian"))
    X = X @ sp.diags(np.logspace(0, 5, X.shape[1]))
    _, msgs = _stalled_l1(X, y, 100.0, tol=1e-6)
    assert len(msgs) == 1 and "(stalled)" in msgs[0], msgs
    assert "badly scaled features? scale them" in msgs[0] and "rows of norm up to" in msgs[0]


@pytest.mark.parametrize("target", [0.3, 3.0])
@pytest.mark.parametrize("loss", [(1.0, 1.0, 1.0, -np.inf), (1.0, 1.0, 1.0, -1.0)])
def test_chunked_line_search_over_many_terms(target, loss):
    # line_search_terms.pxd: above 16,384 terms the pass over them runs in fixed chunks, each
    # storing its breakpoints in its own region of the buffer, gathered before (root < 1)
    # or after (root > 1) the selection.  The root is the brute-force minimizer's, and the
    # same bits on 1, 2 and 3 threads.
    rng = np.random.default_rng(8)
    m, n = 50000, 6
    X = rng.standard_normal((m, n))
    t = np.where(rng.random(m) < 0.3, 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, m)
    lam, beta, d = 0.4, rng.standard_normal(n) * 0.3, rng.standard_normal(n)
    y = X @ beta
    a, tm, hi, lo = loss
    f, d = _ray_with_root_at(target, X, t, c, lam, beta, d, loss)
    dy = X @ d
    knees = np.concatenate([(t * k - y) / dy for k in (hi, lo) if np.isfinite(k)])
    assert np.sum((knees > 0) & (knees < 1)) > 100 and np.sum(knees > 1) > 100
    deltas = [_testing.loss_line_search(lam, beta, d, y, dy, t, c, loss, n_threads=k)
              for k in (1, 2, 3)]
    assert deltas[1] == deltas[0] and deltas[2] == deltas[0]
    assert f(deltas[0], d) <= f(target, d) + 1e-12 * abs(f(target, d))
    assert deltas[0] == pytest.approx(target, rel=1e-6)
