"""L2-SVM-MFN against independent references and its own optimality conditions.

Reference objective (LIBLINEAR -s 2):  F(w) = 1/2 w.w + C sum_i c_i max(0, 1 - t_i w.x_i)^2,
x_i with the bias feature appended.  Every expectation is computed here from
that formula, scipy, brute force or LIBLINEAR; none is copied from linsvm output.
"""
import warnings

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import linsvm
from linsvm import _testing
from linsvm._data import DataView
from linsvm.errors import ParameterError
from linsvm.problem import CSRBuffers
from linsvm.problem.labels import class_order

from conftest import augmented, binary_gradient, newton_solve, random_problem, shared_file


def objective_and_grad(w, Xa, t, C, cost):
    """F and its gradient, straight from the formula."""
    slack = np.maximum(0.0, 1.0 - t * (Xa @ w))
    F = 0.5 * w @ w + C * np.sum(cost * slack ** 2)
    g = w - 2.0 * C * (Xa.T @ (cost * t * slack))
    return F, g


def binary_targets(model, y):
    return np.where(y == model.classes_[0], 1.0, -1.0)


def lbfgs_reference(Xa, t, C, cost):
    res = so.minimize(objective_and_grad, np.zeros(Xa.shape[1]), args=(Xa, t, C, cost), jac=True,
                      method="L-BFGS-B", options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 20000})
    return res.fun


@pytest.mark.parametrize("bias", [1.0, -1.0, 3.0])
@pytest.mark.parametrize("C", [0.01, 1.0, 100.0])
def test_objective_matches_lbfgs_and_gradient_vanishes(bias, C):
    X, y = random_problem(n_samples=80, n_features=15, seed=int(C * 7) + int(bias) + 2)
    model = linsvm.train(X, y, solver="mfn", C=C, bias=bias, tol=1e-6, gtol=0)   # the paper's rule
    t = binary_targets(model, y)
    Xa = augmented(X, bias)
    w = model.weights[:, 0]
    F, g = objective_and_grad(w, Xa, t, C, np.ones_like(y))
    F0, g0 = objective_and_grad(np.zeros_like(w), Xa, t, C, np.ones_like(y))
    assert np.linalg.norm(g) <= 1e-6 * np.linalg.norm(g0)
    assert model.objective == pytest.approx(F, rel=1e-10)
    F_ref = lbfgs_reference(Xa, t, C, np.ones_like(y))
    assert F <= F_ref * (1 + 1e-9)
    assert F == pytest.approx(F_ref, rel=1e-6)


def test_weights_scale_the_loss_like_duplicated_examples():
    X, y = random_problem(n_samples=50, n_features=10, seed=3)
    rng = np.random.default_rng(0)
    sw = rng.integers(0, 4, size=y.shape[0]).astype(float)
    cw = {1.0: 2.0}
    model = linsvm.train(X, y, C=0.5, sample_weight=sw, class_weight=cw, tol=1e-10)
    # the same objective written out by repeating rows: row i appears sw_i * cw(y_i) times
    reps = (sw * np.where(y == 1.0, 2.0, 1.0)).astype(int)
    keep = np.repeat(np.arange(y.shape[0]), reps)
    dup = linsvm.train(X[keep], y[keep], C=0.5, tol=1e-10)
    np.testing.assert_allclose(model.weights, dup.weights, rtol=1e-7, atol=1e-9)
    t = binary_targets(model, y)
    F, g = objective_and_grad(model.weights[:, 0], augmented(X, 1.0), t, 0.5, sw * np.where(y == 1.0, 2.0, 1.0))
    assert model.objective == pytest.approx(F, rel=1e-10)


def brute_force_delta(lam, beta, beta_bar, y, ybar, t, c):
    """argmin_{delta >= 0} f(beta + delta (beta_bar - beta)) by dense grid + bounded refinement."""
    def phi(d):
        b = beta + d * (beta_bar - beta)
        o = y + d * (ybar - y)
        act = t * o < 1
        return 0.5 * lam * b @ b + 0.5 * np.sum(c[act] * (o[act] - t[act]) ** 2)
    grid = np.linspace(0, 4, 4001)
    vals = np.array([phi(d) for d in grid])
    i = int(np.argmin(vals))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    return so.minimize_scalar(phi, bounds=(lo, hi), method="bounded", options={"xatol": 1e-13}).x, phi


@pytest.mark.parametrize("seed", range(8))
def test_exact_line_search_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    m, n = 40, 6
    X = rng.standard_normal((m, n))
    t = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, m)
    lam = 0.3
    beta = 0.5 * rng.standard_normal(n)
    # a descent target: the minimizer of f_I at beta (what CGLS approximates), perturbed
    act = t * (X @ beta) < 1
    A = lam * np.eye(n) + X[act].T @ (c[act, None] * X[act])
    beta_bar = np.linalg.solve(A, X[act].T @ (c[act] * t[act])) + 0.2 * rng.standard_normal(n) * (seed % 2)
    y, ybar = X @ beta, X @ beta_bar
    delta = _testing.line_search(lam, beta, beta_bar, y, ybar, t, c)
    ref, phi = brute_force_delta(lam, beta, beta_bar, y, ybar, t, c)
    assert phi(delta) <= phi(ref) + 1e-12 * max(1.0, abs(phi(ref)))
    assert delta == pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("seed", range(6))
def test_line_search_selection_with_many_tied_breakpoints(seed):
    # integer-valued data makes many breakpoints coincide; the selection must
    # still land on the brute-force minimizer
    rng = np.random.default_rng(100 + seed)
    m, n = 3000, 5
    X = rng.integers(-2, 3, size=(m, n)).astype(float)
    t = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    c = np.ones(m)
    lam = 0.7
    beta = rng.integers(-1, 2, size=n).astype(float) * 0.5
    d = rng.integers(-2, 3, size=n).astype(float) * 0.25

    def phi(step, direction):
        b = beta + step * direction
        o = X @ b
        act = t * o < 1
        return 0.5 * lam * b @ b + 0.5 * np.sum(c[act] * (o[act] - t[act]) ** 2)

    if phi(1e-6, d) > phi(0.0, d):           # make d a descent direction
        d = -d
    beta_bar = beta + d
    y, ybar = X @ beta, X @ beta_bar
    delta = _testing.line_search(lam, beta, beta_bar, y, ybar, t, c)
    ref, phi_ref = brute_force_delta(lam, beta, beta_bar, y, ybar, t, c)
    assert delta > 0.0
    assert phi_ref(delta) <= phi_ref(ref) + 1e-12 * max(1.0, abs(phi_ref(ref)))
    assert delta == pytest.approx(ref, abs=1e-6)


def test_one_vs_rest_columns_are_the_binary_problems():
    X, y = random_problem(n_samples=90, n_features=8, n_classes=3, seed=5)
    model = linsvm.train(X, y, solver="mfn", C=2.0, tol=1e-6)
    assert model.weights.shape == (9, 3)
    np.testing.assert_array_equal(model.classes_, class_order(y))
    for j, label in enumerate(model.classes_):
        yb = np.where(y == label, 1.0, -1.0)
        t = yb
        F, g = objective_and_grad(model.weights[:, j], augmented(X, 1.0), t, 2.0, np.ones_like(y))
        F_ref = lbfgs_reference(augmented(X, 1.0), t, 2.0, np.ones_like(y))
        assert F == pytest.approx(F_ref, rel=1e-6)
    scores = augmented(X, 1.0) @ model.weights
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(scores, axis=1)])


def test_class_order_follows_liblinear():
    assert class_order(np.array([-1.0, 1.0, -1.0])).tolist() == [1.0, -1.0]
    assert class_order(np.array([3.0, 0.0, 3.0, 7.0])).tolist() == [3.0, 0.0, 7.0]
    assert class_order(np.array([0.0, 1.0])).tolist() == [0.0, 1.0]


def test_warm_start_needs_fewer_iterations_and_reaches_the_same_point():
    X, y = random_problem(n_samples=400, n_features=30, density=0.3, seed=11)
    first = linsvm.train(X, y, C=1.0, tol=1e-10)
    cold = linsvm.train(X, y, C=1.5, tol=1e-10)
    warm = linsvm.train(X, y, C=1.5, tol=1e-10, init=first)
    assert warm.stats["cg_iter"] < cold.stats["cg_iter"]
    np.testing.assert_allclose(warm.weights, cold.weights, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("opts", [dict(heuristic1=False), dict(heuristic2=False),
                                  dict(heuristic1=False, heuristic2=False), dict(subset=0.3),
                                  dict(forcing=0.0), dict(precondition=False),
                                  dict(jacobi_weight=1.0), dict(jacobi_weight=0.01)])
def test_heuristics_change_the_path_not_the_answer(opts):
    X, y = random_problem(n_samples=300, n_features=20, seed=2)
    ref = linsvm.train(X, y, C=3.0, tol=1e-10)
    other = linsvm.train(X, y, C=3.0, tol=1e-10, **opts)
    np.testing.assert_allclose(other.weights, ref.weights, rtol=1e-7, atol=1e-9)


def test_kkt_tol_is_met_and_reported():
    X, y = random_problem(n_samples=300, n_features=20, seed=4)
    loose = linsvm.train(X, y, C=10.0, tol=1e-1)
    tight = linsvm.train(X, y, C=10.0, tol=1e-1, kkt_tol=1e-6)
    assert tight.stats["kkt_violation"] <= 1e-6
    assert tight.stats["kkt_violation"] <= loose.stats["kkt_violation"]


def test_dual_kkt_violation_matches_formula():
    X, y = random_problem(n_samples=70, n_features=9, seed=8)
    C = 0.7
    model = linsvm.train(X, y, C=C, tol=1e-3)
    Xa = augmented(X, 1.0)
    t = binary_targets(model, y)
    lam = 1 / (2 * C)
    o = Xa @ model.weights[:, 0]
    alpha = np.where(t * o < 1, (1 - t * o) / lam, 0.0)     # alpha_i = -t_i d_i / lam
    beta_hat = Xa.T @ (alpha * t)
    g = t * (Xa @ beta_hat) + lam * alpha - 1
    expected = max(np.max(np.abs(g[alpha > 0]), initial=0), np.max(np.maximum(0, -g[alpha == 0]), initial=0))
    assert model.stats["kkt_violation"] == pytest.approx(expected, rel=1e-9, abs=1e-12)


def test_iteration_cap_warns():
    X, y = random_problem(n_samples=300, n_features=20, seed=6)
    model = linsvm.train(X, y, C=100.0, max_iter=1, heuristic2=False)
    assert any("iteration cap" in w for w in model.warnings)


def test_same_seed_same_model_bytes():
    X, y = random_problem(n_samples=200, n_features=20, seed=9)
    a = linsvm.train(X, y, C=1.0, subset=0.5, seed=3)
    b = linsvm.train(X, y, C=1.0, subset=0.5, seed=3)
    assert a.weights.tobytes() == b.weights.tobytes()


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("C", [0.5, 4.0])
def test_matches_liblinear_s2_on_real_data(C):
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    path = shared_file("binary/a9a")
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(path), n_features=123)
    model = linsvm.train(X, y, solver="mfn", C=C, bias=1.0, tol=1e-6)
    ref = liblinear.train(y, X, f"-s 2 -c {C} -B 1 -e 1e-8 -q")
    w_ref = np.array(ref.get_decfun()[0] + [ref.get_decfun()[1]])
    t = binary_targets(model, y)
    if ref.get_labels()[0] != model.classes_[0]:
        w_ref = -w_ref
    Xa = augmented(X, 1.0)
    F_ref, _ = objective_and_grad(w_ref, Xa, t, C, np.ones_like(y))
    F, _ = objective_and_grad(model.weights[:, 0], Xa, t, C, np.ones_like(y))
    assert abs(F - F_ref) <= 1e-6 * F_ref


def _solve_args(X, y, C=1.0):
    Xb = CSRBuffers(X)
    t = np.where(y == y[0], 1.0, -1.0)
    rows = np.arange(Xb.n_rows, dtype=np.int64)
    return Xb, t, rows, np.ones(Xb.n_rows), 1.0 / (2.0 * C)


def test_fused_cgls_reaches_the_two_pass_solution_and_eq13_on_the_true_residual():
    # The fused pass updates the residual by recurrence; eq. 13 must still hold for the
    # true gradient, and the optimum must be the one the paper's CGLS finds.
    from linsvm.solvers.mfn import L2_LOSS
    X, y = random_problem(800, 60, density=0.2, seed=3)
    Xb, t, rows, c, lam = _solve_args(X, y, C=4.0)
    out = {}
    for fused in (False, True):
        beta = np.zeros(61)
        st = newton_solve(Xb.indptr, Xb.indices, Xb.data, 60, 1.0, rows, t, c, lam, beta,
                               L2_LOSS, tol=1e-10, fused_cg=fused)
        assert st["status"] == 0
        f, g, _, _ = binary_gradient(Xb.indptr, Xb.indices, Xb.data, 60, 1.0, rows, t, c, lam, beta, L2_LOSS)
        f0, g0, _, _ = binary_gradient(Xb.indptr, Xb.indices, Xb.data, 60, 1.0, rows, t, c, lam,
                                     np.zeros(61), L2_LOSS)
        assert np.linalg.norm(g) <= 1e-8 * np.linalg.norm(g0)
        out[fused] = (f, beta)
    assert abs(out[True][0] - out[False][0]) <= 1e-12 * out[False][0]
    np.testing.assert_allclose(out[True][1], out[False][1], rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("eps", [1e-2, 1e-4, 1e-6])
@pytest.mark.parametrize("fused", [False, True])
def test_stop_certifies_the_gradient_bound_of_the_block_comment(eps, fused):
    # At a converged stop eq. 13 holds for the true residual and the zones are
    # consistent, so ||grad f|| <= 2 eps ||z||_C (csrc/_mfn.pyx, step 5).  The fused
    # CGLS stops on its recurrence and the driver checks the true residual only
    # before it stops: this fails if that check is skipped or mis-computed.
    from linsvm.solvers.mfn import L2_LOSS
    X, y = random_problem(600, 40, density=0.25, seed=11)
    Xb, t, rows, c, lam = _solve_args(X, y, C=8.0)
    c = np.random.default_rng(4).uniform(0.5, 2.0, Xb.n_rows)
    beta = np.zeros(41)
    st = newton_solve(Xb.indptr, Xb.indices, Xb.data, 40, 1.0, rows, t, c, lam, beta,
                           L2_LOSS, tol=eps, fused_cg=fused, forcing=0.0, heuristic2=False)
    assert st["status"] == 0
    _, g, _, _ = binary_gradient(Xb.indptr, Xb.indices, Xb.data, 40, 1.0, rows, t, c, lam, beta, L2_LOSS)
    o = t * (X @ beta[:40] + beta[40])
    active = o < 1.0
    z_c = np.sqrt(np.sum(c[active] * (1.0 - o[active]) ** 2))
    assert np.linalg.norm(g) <= 2.0 * eps * z_c * (1 + 1e-9)


def test_callback_stop_ends_at_that_iterate_with_beta_and_margins_of_it():
    # A true return of the callback ends the solve after that step (status 4), with
    # beta the iterate it saw: the same bits as a solve capped at that many steps, and
    # y = X beta of it.  A callback returning False changes nothing.
    from linsvm.solvers.mfn import L2_LOSS
    X, y = random_problem(800, 60, density=0.2, seed=5)
    Xb, t, rows, c, lam = _solve_args(X, y, C=4.0)
    args = (Xb.indptr, Xb.indices, Xb.data, 60, 1.0, rows, t, c, lam)
    full = np.zeros(61)
    st_full = newton_solve(*args, full, L2_LOSS, tol=1e-10, heuristic2=False)
    assert st_full["status"] == 0 and st_full["n_iter"] >= 4
    seen = []

    def stop_at_3(it, f, n_active, cg_it):
        seen.append((it, f))
        return it == 3

    beta = np.zeros(61)
    st = newton_solve(*args, beta, L2_LOSS, tol=1e-10, heuristic2=False, callback=stop_at_3)
    capped = np.zeros(61)
    st_cap = newton_solve(*args, capped, L2_LOSS, tol=1e-10, heuristic2=False, max_iter=3)
    assert st["status"] == 4 and st["n_iter"] == 3 and [i for i, _ in seen] == [1, 2, 3]
    assert st_cap["status"] == 1
    assert beta.tobytes() == capped.tobytes()
    assert seen[-1][1] == st["trace"][-1] == st_cap["trace"][-1]
    np.testing.assert_allclose(st["y"], X @ beta[:-1] + beta[-1], rtol=1e-12, atol=1e-12)
    again = np.zeros(61)
    st_no = newton_solve(*args, again, L2_LOSS, tol=1e-10, heuristic2=False,
                         callback=lambda *a: False)
    assert st_no["status"] == 0 and again.tobytes() == full.tobytes()


def test_index_only_solve_is_bit_identical_on_binary_features():
    from linsvm.solvers.mfn import L2_LOSS
    rng = np.random.default_rng(7)
    X = sp.random(1500, 80, density=0.08, format="csr", random_state=2)
    X.data[:] = 1.0                       # a 0/1 pattern matrix, as the Adult and Web sets
    y = np.where(X @ rng.standard_normal(80) + 0.1 * rng.standard_normal(1500) > 0, 1.0, -1.0)
    Xb, t, rows, c, lam = _solve_args(X, y)
    runs = []
    for pattern in (False, True):
        beta = np.zeros(81)
        st = newton_solve(Xb.indptr, Xb.indices, Xb.data, 80, 1.0, rows, t, c, lam, beta,
                               L2_LOSS, tol=1e-8, fused_cg=True, pattern=pattern)
        runs.append((beta.tobytes(), st["n_iter"], st["cg_iter"]))
    assert runs[0] == runs[1]


def test_kkt_from_the_solve_equals_the_separate_computation():
    from linsvm.solvers.mfn import L2_LOSS
    X, y = random_problem(400, 30, density=0.3, seed=9)
    Xb, t, rows, c, lam = _solve_args(X, y)
    c = np.random.default_rng(1).uniform(0.0, 2.0, Xb.n_rows)
    beta = np.zeros(31)
    st = newton_solve(Xb.indptr, Xb.indices, Xb.data, 30, 1.0, rows, t, c, lam, beta,
                           L2_LOSS, tol=1e-3, kkt=True)
    sep = _testing.mfn_dual_kkt(DataView(Xb, 1.0, rows), t, c, lam, st["y"])
    assert st["kkt"] == pytest.approx(sep, rel=1e-12, abs=1e-15) and sep > 0


@pytest.mark.parametrize("unit", [False, True])
@pytest.mark.parametrize("jw", [1.0, 0.3])
def test_jacobi_diagonal_kept_across_steps_matches_a_fresh_one(unit, jw):
    # The driver updates diag(X_1' C X_1) by the rows that enter or leave zone 1
    # instead of summing it again: the CGLS path must be the one a fresh diagonal
    # gives, up to rounding (the same Newton count, CG counts within 2 of ~150, the
    # same point).  A dropped cost or membership flip in the update adds 7-40 CG
    # iterations on the scaled problem.
    from linsvm.solvers.mfn import L2_LOSS
    rng = np.random.default_rng(21)
    X = sp.random(2000, 60, density=0.1, format="csr", random_state=5)
    if unit:
        X.data[:] = 1.0
    else:
        X.data[:] = rng.uniform(0.1, 3.0, X.nnz) * rng.choice([-1.0, 1.0], X.nnz)
        X = X @ sp.diags(10.0 ** rng.uniform(-1, 1, 60))    # Jacobi matters here
        X = X.tocsr()
    y = np.where(X @ rng.standard_normal(60) + 0.5 * rng.standard_normal(2000) > 0, 1.0, -1.0)
    Xb, t, rows, c, lam = _solve_args(X, y, C=4.0)
    c = 10.0 ** rng.uniform(-1, 1, Xb.n_rows)
    runs = []
    for update in (False, True):
        beta = np.zeros(61)
        st = newton_solve(Xb.indptr, Xb.indices, Xb.data, 60, 1.0, rows, t, c, lam, beta,
                               L2_LOSS, tol=1e-9, fused_cg=True, diag_update=update,
                               jacobi_weight=jw)
        assert st["status"] == 0
        runs.append((beta, st["n_iter"], st["cg_iter"]))
    (b0, n0, cg0), (b1, n1, cg1) = runs
    assert n0 >= 5 and n1 == n0 and abs(cg1 - cg0) <= 2
    np.testing.assert_allclose(b1, b0, rtol=1e-7, atol=1e-9)


def test_jacobi_weight_mixes_the_diagonal_with_lambda():
    # Rows with one non-zero each make X'CX diagonal, so the Newton system
    # (lam I + X'CX) w = X'C t is diagonal and w_j = t_j d_j / (lam + d_j^2).  The
    # preconditioner 1 / (lam + jw d_j^2) is exact for jw = 1 (one CGLS iteration);
    # for jw = 0.3 the preconditioned matrix has 5 distinct eigenvalues
    # (lam + d^2) / (lam + 0.3 d^2), so CG needs all 5.  A preconditioner scaled as a
    # whole, jw (lam + d^2), would still take one; jw ignored would take one too.
    d = np.array([0.5, 1.0, 2.0, 4.0, 8.0])
    X = sp.csr_matrix(np.diag(d))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    C = 1.0
    exact = y * d / (1 / (2 * C) + d * d)
    for jw, n_cg in ((1.0, 1), (0.3, 5)):
        model = linsvm.train(X, y, C=C, bias=-1, tol=1e-12, heuristic1=False, heuristic2=False,
                             forcing=0.0, jacobi_weight=jw)
        assert model.n_iter == 1 and model.stats["cg_iter"] == n_cg
        np.testing.assert_allclose(model.weights[:, 0], exact, rtol=1e-12)


@pytest.mark.parametrize("option, value", [
    ("jacobi_weight", 0.0), ("jacobi_weight", -0.5), ("jacobi_weight", 1.5),
    ("jacobi_weight", float("nan")),
    ("forcing_guard", -0.1), ("forcing_guard", 1.0), ("forcing_guard", float("nan")),
])
def test_driver_option_out_of_range_is_an_error(option, value):
    X, y = random_problem(n_samples=40, n_features=5, seed=1)
    with pytest.raises(ParameterError, match=option):
        linsvm.train(X, y, **{option: value})
    from linsvm.solvers.mfn import L2_LOSS
    Xb, t, rows, c, lam = _solve_args(X, y)
    with pytest.raises(ValueError, match=option):     # the compiled entry checks too
        newton_solve(Xb.indptr, Xb.indices, Xb.data, 5, 1.0, rows, t, c, lam, np.zeros(6),
                     L2_LOSS, **{option: value})


def test_kept_jacobi_diagonal_carries_the_weight():
    # Columns scaled over three decades make the weight matter (68 CGLS iterations
    # with plain Jacobi, 80 with jw = 0.3 here).  The diagonal kept across Newton
    # steps must be damped as the freshly summed one is: the same path within 2
    # iterations; an update that forgot jw would follow plain Jacobi (70).
    from linsvm.solvers.mfn import L2_LOSS
    rng = np.random.default_rng(3)
    m, k = 2000, 30
    X = sp.random(m, k, density=0.1, format="csr", random_state=3)
    X.data[:] = rng.uniform(0.5, 1.5, X.nnz)
    X = (X @ sp.diags(10.0 ** np.linspace(-1.5, 1.5, k))).tocsr()
    y = np.where(X @ rng.standard_normal(k) + rng.standard_normal(m) > 0, 1.0, -1.0)
    Xb, t, rows, c, lam = _solve_args(X, y, C=1.0)
    cg = {}
    for jw, update in ((1.0, False), (0.3, False), (0.3, True)):
        beta = np.zeros(k + 1)
        st = newton_solve(Xb.indptr, Xb.indices, Xb.data, k, 1.0, rows, t, c, lam, beta,
                               L2_LOSS, tol=1e-9, fused_cg=True, diag_update=update,
                               jacobi_weight=jw)
        assert st["status"] == 0
        cg[jw, update] = st["cg_iter"]
    assert abs(cg[0.3, False] - cg[1.0, False]) > 6
    assert abs(cg[0.3, True] - cg[0.3, False]) <= 2


@pytest.mark.parametrize("gtol", [0.3, 0.05, 0.003])
@pytest.mark.parametrize("warm", [False, True])
def test_gradient_test_stops_at_the_first_iterate_that_passes_it(gtol, warm):
    """gtol: the solve stops at the first Newton iterate w_k with ||grad F(w_k)|| <=
    gtol min(n+, n-)/n ||grad F(0)|| (gradients from the formula, not from linsvm; with
    equal costs the test is LIBLINEAR's alone, gaps.costs_vary).  The iterates are those of the paper's rule (gtol = 0) cut
    short at max_iter = k, so the returned point must pass the test and every earlier
    iterate must fail it."""
    X, y = random_problem(n_samples=300, n_features=40, seed=11)
    y[:200] = np.where(y[:200] > 0, -1.0, y[:200])        # unbalanced: min(n+, n-)/n < 1/2
    C = 4.0
    start = None
    if warm:
        start = 0.5 * linsvm.train(X, y, solver="mfn", C=C, tol=0.5, max_iter=2).weights
    model = linsvm.train(X, y, solver="mfn", C=C, tol=1e-6, gtol=gtol, init=start)
    t = binary_targets(model, y)
    Xa = augmented(X, 1.0)
    ones = np.ones_like(y)
    n_pos = np.count_nonzero(t > 0)
    bound = gtol * min(n_pos, t.size - n_pos) / t.size * np.linalg.norm(
        objective_and_grad(np.zeros(Xa.shape[1]), Xa, t, C, ones)[1])

    def passes(w):
        F, g = objective_and_grad(w, Xa, t, C, ones)
        return np.linalg.norm(g) <= bound

    k = model.stats["n_iter"]
    assert model.column_stats[0]["status"] == "converged (gradient test)"
    assert passes(model.weights[:, 0])
    for j in range(1 if warm else 0, k):
        if j == 0:
            w_j = np.zeros(Xa.shape[1])
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", linsvm.ConvergenceWarning)   # the cap
                w_j = linsvm.train(X, y, solver="mfn", C=C, tol=1e-6, gtol=0, max_iter=j,
                                   init=start).weights[:, 0]
        assert not passes(w_j), j
    # the same iterates as the paper's rule: the point is the paper's k-th iterate
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linsvm.ConvergenceWarning)
        w_k = linsvm.train(X, y, solver="mfn", C=C, tol=1e-6, gtol=0, max_iter=k,
                           init=start).weights[:, 0]
    np.testing.assert_array_equal(model.weights[:, 0], w_k)


def test_gradient_test_defaults_to_0_3_tol_and_0_turns_it_off():
    # gtol follows -e (0.3 x -e) unless given; gtol = 0 is the paper's rule alone
    X, y = random_problem(n_samples=300, n_features=40, seed=11)
    for tol in (0.01, 1e-4):
        # C = 1: the gradient test certifies 1% before eq. 13 holds (at C = 4 it does
        # not at -e 0.01, and eq. 13 stops first)
        default = linsvm.train(X, y, solver="mfn", C=1.0, tol=tol)
        explicit = linsvm.train(X, y, solver="mfn", C=1.0, tol=tol, gtol=0.3 * tol)
        np.testing.assert_array_equal(default.weights, explicit.weights)
        assert default.column_stats[0]["status"] == "converged (gradient test)"
        paper = linsvm.train(X, y, solver="mfn", C=1.0, tol=tol, gtol=0)
        assert paper.n_iter > default.n_iter         # the test fired before the paper's rule
    assert default.params["gtol"] is None
    assert linsvm.train(X, y, solver="mfn", C=4.0).params["tol"] == 0.005
    paper = linsvm.train(X, y, solver="mfn", C=4.0, gtol=0)
    assert paper.column_stats[0]["status"] == "converged"
    with pytest.raises(ParameterError):
        linsvm.train(X, y, solver="mfn", gtol=1.5)


def test_row_scaled_data_gives_the_model_of_its_stored_values():
    """Binary terms scaled to unit rows (one value per row) take the index-only kernels with
    a scale per row; an explicit zero stored in every row turns that path off without
    changing the problem: the two models agree to rounding, on 1 and 2 threads."""
    import scipy.sparse as sp
    from linsvm.io.synth import make_text_classification
    X, y = make_text_classification(n_samples=400, n_features=300, avg_length=12, seed=3)
    X = X.tocsr()
    counts = np.diff(X.indptr)
    X.data = np.repeat(1.0 / np.sqrt(np.maximum(counts, 1)), counts)
    # the same rows with an explicit 0.0 in a new last column (whose weight stays 0)
    at = X.indptr[1:]
    Z = sp.csr_matrix((np.insert(X.data, at, 0.0), np.insert(X.indices, at, 300),
                       X.indptr + np.arange(401)), shape=(400, 301))
    assert Z.nnz > X.nnz                                 # the explicit zeros are stored
    for threads in (1, 2):
        a = linsvm.train(X, y, solver="mfn", C=4.0, tol=1e-10, n_threads=threads)
        b = linsvm.train(Z, y, solver="mfn", C=4.0, tol=1e-10, n_threads=threads)
        # at -e 1e-10 the weights are determined to about 1e-10 of their scale
        np.testing.assert_allclose(a.decision_function(X), b.decision_function(Z), atol=1e-8)
        assert a.stats["objective"] == pytest.approx(b.stats["objective"], rel=1e-12)


def _imbalanced_text(n=10000, d=4000):
    """A generated text set with 2.5% positives (topic 1 of 40 against the rest)."""
    from linsvm.io.synth import make_text_classification
    X, y = make_text_classification(n_samples=n, n_features=d, n_classes=40, seed=2)
    return X, np.where(y == 1.0, 1.0, -1.0)


@pytest.mark.slow
def test_forcing_guard_keeps_imbalanced_steps_from_ending_after_one_cgls_iteration():
    # With 2.5% positives the gradient is mostly one direction (the bias and the mean of
    # the negatives): one CGLS iteration cuts ||r|| tenfold, and the forcing term alone
    # ended every other Newton step there.  Guarded by the quadratic-model rule, which
    # never holds at the first iteration, no step ends after one, and the stop at -e 0.01
    # lands nearer the optimum (an L-BFGS-B reference) than the unguarded one (at the
    # default -e both end within a few 1e-6 of it).
    X, t = _imbalanced_text()
    Xa = augmented(X, 1.0)
    fstar = lbfgs_reference(Xa, t, 1.0, np.ones(t.shape[0]))
    cgs, gaps = {}, {}
    for guard in (0.0, 0.5):
        lines = []
        model = linsvm.train(X, t, solver="mfn", C=1.0, tol=0.01, forcing_guard=guard,
                             log=lines.append)
        cgs[guard] = [int(line.rsplit(maxsplit=1)[1]) for line in lines if " cg " in line]
        w = model.weights[:, 0] * (1.0 if model.classes_[0] == 1.0 else -1.0)
        gaps[guard] = (objective_and_grad(w, Xa, t, 1.0, 1.0)[0] - fstar) / fstar
    assert cgs[0.0].count(1) >= 2
    assert 1 not in cgs[0.5]
    assert 0.0 <= gaps[0.5] < gaps[0.0] and gaps[0.5] < 1e-4


# ------------------------------------------------------------------ weights and the certificate

def _costs(y, class_weight=None, sample_weight=None):
    c = np.ones_like(y) if sample_weight is None else np.asarray(sample_weight, dtype=float).copy()
    for label, weight in (class_weight or {}).items():
        c[y == label] *= weight
    return c


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 3, 5])
@pytest.mark.parametrize("weights", ["class", "example"])
def test_default_stop_is_within_1pct_under_extreme_weights(seed, weights):
    """A class weight of 1000, or one example weight of 1e6, inflates ||grad F(0)||, the
    scale of the gradient test: the default stop must still be certified within 1% of
    the optimum (L-BFGS on the formula here) and say so, without a warning."""
    X, y = random_problem(n_samples=120, n_features=8, seed=seed)
    cw = {1.0: 1000.0} if weights == "class" else None
    sw = None
    if weights == "example":
        sw = np.ones_like(y)
        sw[seed] = 1e6
    model = no_convergence_warning(lambda: linsvm.train(X, y, solver="mfn", class_weight=cw,
                                                        sample_weight=sw))
    t, Xa, cost = binary_targets(model, y), augmented(X, 1.0), _costs(y, cw, sw)
    F, _ = objective_and_grad(model.weights[:, 0], Xa, t, 1.0, cost)
    F_ref = lbfgs_reference(Xa, t, 1.0, cost)
    assert F <= F_ref / 0.99
    assert model.column_stats[0]["gap"] <= 0.01
    # the gap certifies: F - F* <= gap F, and F_ref >= F*
    assert F - F_ref <= model.column_stats[0]["gap"] * F * (1 + 1e-9)


@pytest.mark.data
@pytest.mark.parametrize("w1", [1000.0, 5000.0])
def test_class_weight_on_heart_scale_ends_within_1pct_of_liblinear_tight(w1):
    """-w1 1000 (5000) on heart_scale: the default stop within 1% of LIBLINEAR -s 2 -e 1e-8
    with the same weight (it was 6.9% (24%) above, without a warning)."""
    liblinear = pytest.importorskip("liblinear.liblinearutil")
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(shared_file("binary/heart_scale")), n_features=13)
    model = no_convergence_warning(lambda: linsvm.train(X, y, solver="mfn", class_weight={1.0: w1}))
    ref = liblinear.train(y, X, f"-s 2 -c 1 -B 1 -w1 {w1:g} -e 1e-8 -q")
    w_ref = np.array(ref.get_decfun()[0] + [ref.get_decfun()[1]])
    t = binary_targets(model, y)
    if ref.get_labels()[0] != model.classes_[0]:
        w_ref = -w_ref
    Xa, cost = augmented(X, 1.0), _costs(y, {1.0: w1})
    F_ref, _ = objective_and_grad(w_ref, Xa, t, 1.0, cost)
    F, _ = objective_and_grad(model.weights[:, 0], Xa, t, 1.0, cost)
    assert F <= F_ref / 0.99


def no_convergence_warning(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("error", linsvm.ConvergenceWarning)
        return fn()


@pytest.mark.parametrize("free", [False, True])
@pytest.mark.parametrize("loss", [(1.0, 1.0, 1.0, -np.inf), (1.0, 1.0, np.inf, -np.inf),
                                  (1.0, 1.0, 1.0, -1.0)])
def test_binary_certificate_is_a_lower_bound_exact_at_the_optimum(loss, free):
    """binary_certificate's D = F - gap: F is the objective of the formula; D <= F* at any
    point (F* from L-BFGS on the formula); with every weight regularized F - D is
    1/2 ||grad F||^2; at the optimum D = F to rounding (the free bias's balanced point too)."""
    if free and loss[3] > -np.inf:
        pytest.skip("a free bias needs a loss without a linear zone")
    from linsvm import _mfn
    from linsvm._data import DataView
    X, y = random_problem(n_samples=60, n_features=6, seed=2)
    t = np.where(y > 0, 1.0, -1.0)
    cost = np.where(t > 0, 30.0, 1.0)
    lam = 0.25                      # C = 2
    Xa = augmented(X, 1.0).toarray()
    nreg = 6 if free else 7
    a, tm, hi, lo = loss

    def f(w):
        o = t * (Xa @ w)
        zone1 = (o < hi) & (o > lo)
        val = np.where(o >= hi, 0.0, np.where(zone1, 0.5 * a * (tm - o) ** 2,
                                              a * (tm - lo) * (lo - o) + 0.5 * a * (tm - lo) ** 2))
        slope = np.where(o >= hi, 0.0, np.where(zone1, -a * (tm - o), -a * (tm - lo)))
        g = np.append(w[:nreg], np.zeros(7 - nreg)) + Xa.T @ (cost / lam * slope * t)
        return 0.5 * w[:nreg] @ w[:nreg] + float(cost / lam @ val), g

    opt = so.minimize(f, np.zeros(7), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-11, "ftol": 1e-16, "maxiter": 20000}).x
    Xb = CSRBuffers(X)
    rng = np.random.default_rng(0)
    for w in [np.zeros(7), opt + 0.05 * rng.standard_normal(7), opt]:
        F, gap = _mfn.binary_certificate(
            DataView(Xb, 1.0, np.arange(60, dtype=np.int64)), t=t, c=cost, lam=lam, beta=w,
            loss=loss, n_threads=1, regularize_bias=not free)
        Fw, g = f(w)
        assert F == pytest.approx(Fw, rel=1e-12)
        assert F - gap <= f(opt)[0] * (1 + 1e-9)
        if not free:
            assert gap == pytest.approx(0.5 * g @ g, rel=1e-9, abs=1e-9 * F)
    assert gap <= 1e-7 * F
