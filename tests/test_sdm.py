"""SDM for Crammer-Singer and Weston-Watkins against independent references and its own
optimality conditions (Keerthi et al., KDD 2008).

Reference objectives, with U_i = C c_i (c_i = sample weight x class weight), x_i with the
bias feature appended, e_i^m = [m != y_i]:
  CS (eq. 1):  1/2 sum_m ||w_m||^2 + sum_i U_i max_m (e_i^m + w_m.x_i - w_{y_i}.x_i)
  WW (eq. 14): 1/2 sum_m ||w_m||^2 + sum_i U_i sum_{m != y_i} max(0, 1 - w_{y_i}.x_i + w_m.x_i)
Every expectation is computed here from those formulas, scipy's generic QP solver
(SLSQP), or LIBLINEAR; none is copied from linsvm output.
"""
import numpy as np
import pytest
import scipy.optimize as so

import linsvm
from linsvm import _testing
from linsvm.errors import ParameterError

from conftest import augmented, invoke, random_problem


# ---------------------------------------------------------------- helpers (from the formulas)

def codes_of(model, y):
    return np.array([int(np.flatnonzero(model.classes_ == v)[0]) for v in y])


def cs_primal(W, Xa, codes, U):
    S = np.asarray(Xa @ W)
    E = 1.0 - np.eye(W.shape[1])[codes]
    xi = np.max(E + S - S[np.arange(codes.size), codes][:, None], axis=1)
    return 0.5 * np.sum(W * W) + np.sum(U * xi)


def ww_primal(W, Xa, codes, U):
    S = np.asarray(Xa @ W)
    viol = np.maximum(0.0, 1.0 - S[np.arange(codes.size), codes][:, None] + S)
    viol[np.arange(codes.size), codes] = 0.0
    return 0.5 * np.sum(W * W) + np.sum(U * viol.sum(axis=1))


def dense_alpha(state, n, k):
    """The dual variables as an n x k array (CS: alpha_i^m; WW: alpha_i^m for m != y_i)."""
    A = np.zeros((n, k))
    ptr, cls, val = state["a_ptr"], state["a_cls"], state["a_val"]
    rows = np.repeat(np.arange(n), np.diff(ptr))
    A[rows, cls] = val
    if state["kind"] == "cs":
        A[np.arange(n), state["codes"]] = state["alpha_y"]
    return A


def cs_measure(W, Xa, codes, alpha, U):
    """v_i of eq. 6: max_m g_i^m - min_{m: alpha_i^m < C_i^m} g_i^m, g of eq. 5."""
    k = W.shape[1]
    onehot = np.eye(k)[codes].astype(bool)
    g = np.asarray(Xa @ W) + (~onehot)
    Cb = np.where(onehot, U[:, None], 0.0)
    gmin = np.where(alpha < Cb, g, np.inf).min(axis=1)
    return g.max(axis=1) - gmin


def ww_measure(W, Xa, codes, alpha, U):
    """max_{m != y_i} v_i^m of eq. 18, g of eq. 17."""
    S = np.asarray(Xa @ W)
    g = S[np.arange(codes.size), codes][:, None] - S - 1.0
    v = np.where(alpha <= 0, np.maximum(0.0, -g),
                 np.where(alpha >= U[:, None], np.maximum(0.0, g), np.abs(g)))
    v[np.arange(codes.size), codes] = 0.0
    return v.max(axis=1)


def weights_from_alpha(alpha, Xa, codes, kind):
    if kind == "cs":                            # eq. 3
        return np.asarray(Xa.T @ alpha)
    full = alpha.copy()                         # eq. 15 with alpha^{y_i} = -sum of the others
    full[np.arange(codes.size), codes] = -alpha.sum(axis=1)
    return -np.asarray(Xa.T @ full)


def slsqp(fun, jac, x0, **kw):
    res = so.minimize(fun, x0, jac=jac, method="SLSQP",
                      options={"ftol": 1e-15, "maxiter": 2000}, **kw)
    return res


# ---------------------------------------------------------------- sub-problems vs a generic QP

def _instances(kind, seed, count=60):
    """Random sub-problems, degenerate ones included: tied gradients, tiny and large A,
    every variable at its bound, one variable."""
    rng = np.random.default_rng(seed)
    for trial in range(count):
        n = int(rng.integers(1, 9))
        A = float(10.0 ** rng.choice([-9, -4, -1, 0, 0, 1, 3]))
        g = rng.standard_normal(n) * float(10.0 ** rng.uniform(-2, 1))
        if trial % 4 == 0:
            g = np.round(g)                                  # ties
        if trial % 5 == 0:
            g[:] = g[0]                                      # all tied
        if kind == "cs":
            b = np.where(rng.random(n) < 0.5, 0.0, rng.random(n) * 2)
            if trial % 7 == 0:
                b[:] = 0.0                                   # all at their bound
            yield A, g, b
        else:
            lo = np.where(rng.random(n) < 0.5, 0.0, -rng.random(n) * 2)
            hi = np.where(rng.random(n) < 0.3, 0.0, rng.random(n) * 2)
            if trial % 7 == 0:
                lo[:] = 0.0
                hi[:] = 0.0                                  # every variable fixed
            elif trial % 7 == 1:
                hi[:] = 0.0                                  # all at the upper bound
            yield A, g, lo, hi


@pytest.mark.parametrize("start", ["empty", "bounds"])
def test_cs_subproblem_matches_generic_qp(start):
    for A, g, b in _instances("cs", seed=1 if start == "empty" else 2):
        n = g.size
        init = None if start == "empty" else (b == 0)
        d, at_bound, it = _testing.cs_subproblem_solve(A, g, b, start=init)
        assert it > 0
        # feasibility, and the flagged bounds are met exactly
        # (the equality holds up to the rounding of g magnified by 1/A)
        assert np.all(d <= b)
        assert abs(d.sum()) <= 1e-12 * (1 + np.abs(d).sum()) + 8 * n * 2e-16 * np.abs(g).max() / A
        assert np.all(d[at_bound] == b[at_bound])
        obj = lambda x: 0.5 * A * x @ x + g @ x
        ref = slsqp(obj, lambda x: A * x + g, np.zeros(n), bounds=[(None, v) for v in b],
                    constraints=[{"type": "eq", "fun": lambda x: x.sum(),
                                  "jac": lambda x: np.ones(n)}])
        scale = 1.0 + abs(ref.fun) + np.abs(g).sum() * (1 + np.abs(ref.x).max())
        assert obj(d) <= ref.fun + 1e-9 * scale
        # KKT from first principles: d_m = min(b_m, (beta - g_m)/A) for one beta
        free = ~at_bound
        if free.any():
            beta = np.mean(A * d[free] + g[free])
            assert np.allclose(A * d[free] + g[free], beta, atol=1e-9 * (1 + np.abs(g).max()))
            assert np.all(beta - g[at_bound] - A * b[at_bound] >= -1e-9 * (1 + np.abs(g).max()))


@pytest.mark.parametrize("start", ["empty", "bounds"])
def test_ww_subproblem_matches_generic_qp(start):
    for A, g, lo, hi in _instances("ww", seed=3 if start == "empty" else 4):
        n = g.size
        init = None if start == "empty" else np.where(lo == 0, 1, np.where(hi == 0, 2, 0))
        d, flag, it = _testing.ww_subproblem_solve(A, g, lo, hi, start=init)
        assert it > 0
        assert np.all(d >= lo) and np.all(d <= hi)
        assert np.all(d[flag == 1] == lo[flag == 1]) and np.all(d[flag == 2] == hi[flag == 2])
        obj = lambda x: 0.5 * A * (x @ x + x.sum() ** 2) + g @ x
        ref = slsqp(obj, lambda x: A * (x + x.sum()) + g, np.zeros(n), bounds=list(zip(lo, hi)))
        scale = 1.0 + abs(ref.fun) + np.abs(g).sum() * (1 + np.abs(ref.x).max())
        assert obj(d) <= ref.fun + 1e-9 * scale
        # KKT: gradient A (d + sum d) + g is 0 on free variables, >= 0 at lo, <= 0 at hi
        grad = A * (d + d.sum()) + g
        tol = 1e-9 * (1 + np.abs(g).max() + A * np.abs(d).max())
        assert np.all(np.abs(grad[flag == 0]) <= tol)
        assert np.all(grad[flag == 1] >= -tol) and np.all(grad[flag == 2] <= tol)


def test_subproblem_rejects_bad_input():
    with pytest.raises(ValueError):
        _testing.cs_subproblem_solve(0.0, np.ones(2), np.zeros(2))
    with pytest.raises(ValueError):
        _testing.cs_subproblem_solve(1.0, np.ones(2), np.array([0.0, -1.0]))
    with pytest.raises(ValueError):
        _testing.ww_subproblem_solve(1.0, np.ones(2), np.array([0.0, 0.5]), np.ones(2))


# ---------------------------------------------------------------- whole problems vs a generic QP

def tiny_problem(seed, n=14, d=4, k=3):
    rng = np.random.default_rng(seed)
    X, y = random_problem(n_samples=n, n_features=d, density=0.8, n_classes=k, seed=seed)
    y[: k] = np.arange(1, k + 1)                   # every class present
    sw = rng.uniform(0.2, 2.0, size=n)
    return X, y, sw


def cs_dual_reference(Xa, codes, U, k):
    """min_alpha 1/2 sum_m alpha^m' K alpha^m + sum e alpha, alpha <= C, sum_m alpha_i^m = 0."""
    n = codes.size
    K = np.asarray((Xa @ Xa.T).todense())
    E = (1.0 - np.eye(k)[codes]).ravel()
    Cb = np.where(np.eye(k)[codes] > 0, U[:, None], 0.0).ravel()

    def fun(a):
        Al = a.reshape(n, k)
        return 0.5 * np.sum(Al * (K @ Al)) + E @ a

    def jac(a):
        return (K @ a.reshape(n, k)).ravel() + E

    cons = [{"type": "eq", "fun": lambda a: a.reshape(n, k).sum(axis=1),
             "jac": lambda a: np.kron(np.eye(n), np.ones((1, k)))}]
    res = slsqp(fun, jac, np.zeros(n * k), bounds=[(None, c) for c in Cb], constraints=cons)
    return -res.fun


def ww_dual_reference(Xa, codes, U, k):
    """min_s 1/2 sum_m ||w_m||^2 - sum s, 0 <= s <= U, w from eq. 15."""
    n = codes.size
    K = np.asarray((Xa @ Xa.T).todense())
    onehot = np.eye(k)[codes].astype(bool)

    def full(s):
        Al = s.reshape(n, k) * ~onehot
        Al[onehot] = -Al.sum(axis=1)
        return Al

    def fun(s):
        Al = full(s)
        return 0.5 * np.sum(Al * (K @ Al)) - (s.reshape(n, k) * ~onehot).sum()

    def jac(s):
        G = K @ full(s)                           # d/d alpha_i^m of the quadratic
        gm = G - G[np.arange(n), codes][:, None] - 1.0   # (17) with the sign of alpha_y
        gm[onehot] = 0.0
        return gm.ravel()

    bounds = [(0.0, 0.0) if onehot.ravel()[j] else (0.0, U[j // k]) for j in range(n * k)]
    res = so.minimize(fun, np.zeros(n * k), jac=jac, method="L-BFGS-B", bounds=bounds,
                      options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 20000, "maxcor": 50})
    return -res.fun


@pytest.mark.parametrize("bias", [1.0, -1.0])
@pytest.mark.parametrize("C", [0.1, 3.0])
@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_objective_matches_generic_qp(solver, C, bias):
    X, y, sw = tiny_problem(seed=int(C * 10) + (bias > 0))
    cw = {2.0: 1.7}
    model = linsvm.train(X, y, solver=solver, C=C, bias=bias, tol=1e-9, sample_weight=sw,
                         class_weight=cw, max_iter=100000)
    codes = codes_of(model, y)
    U = C * (sw * np.where(y == 2.0, 1.7, 1.0))      # C x (sample weight x class weight)
    Xa = augmented(X, bias)
    k = model.classes_.size
    primal = (cs_primal if solver == "sdm-cs" else ww_primal)(model.weights, Xa, codes, U)
    ref = (cs_dual_reference if solver == "sdm-cs" else ww_dual_reference)(Xa, codes, U, k)
    st = model.column_stats[0]
    assert st["status"] == "converged"
    assert model.objective == pytest.approx(primal, rel=1e-12)
    assert primal >= ref * (1 - 1e-9)                 # weak duality against the reference
    assert primal == pytest.approx(ref, rel=1e-6)
    assert st["dual_objective"] <= primal
    assert st["dual_objective"] == pytest.approx(ref, rel=1e-6)


# ---------------------------------------------------------------- certificates at return

@pytest.mark.parametrize("subproblem", ["restricted", "all"])
@pytest.mark.parametrize("tol", [0.1, 1e-4])
@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_feasible_and_epsilon_optimal_at_return(solver, tol, subproblem):
    X, y = random_problem(n_samples=250, n_features=25, n_classes=6, seed=7)
    sw = np.random.default_rng(1).uniform(0.5, 1.5, size=y.size)
    C = 0.7
    model = linsvm.train(X, y, solver=solver, C=C, tol=tol, sample_weight=sw,
                         subproblem=subproblem)
    st = model.column_stats[0]
    state = model.solver_state_
    codes = codes_of(model, y)
    k = model.classes_.size
    U = C * sw
    alpha = dense_alpha(state, y.size, k)
    Xa = augmented(X, 1.0)
    assert st["status"] == "converged"
    if solver == "sdm-cs":
        onehot = np.eye(k)[codes].astype(bool)
        assert np.all(np.abs(alpha.sum(axis=1)) <= 1e-12 * C)          # sum_m alpha_i^m = 0
        assert np.all(alpha[~onehot] <= 0.0)                            # alpha <= C_i^m, exactly
        assert np.all(alpha[onehot] <= U)
        v = cs_measure(model.weights, Xa, codes, alpha, U)
    else:
        assert np.all(alpha >= 0.0) and np.all(alpha <= U[:, None])    # the box, exactly
        assert np.all(alpha[np.arange(y.size), codes] == 0.0)
        v = ww_measure(model.weights, Xa, codes, alpha, U)
    W = weights_from_alpha(alpha, Xa, codes, state["kind"])
    np.testing.assert_allclose(model.weights, W, atol=1e-10 * (1 + np.abs(W).max()))
    assert v.max() < tol                                                # eq. 9 / 20
    assert st["kkt_violation"] == pytest.approx(v.max(), rel=1e-8, abs=1e-12)
    assert st["kkt_violation"] < tol
    assert 0.0 <= st["duality_gap"] <= U.sum() * tol                    # gap <= sum_i U_i v_i
    assert st["n_nonzero"] == np.count_nonzero(alpha)


# ---------------------------------------------------------------- heuristics, seeds, warm starts

@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_shrinking_and_cooling_change_the_path_not_the_answer(solver):
    X, y = random_problem(n_samples=200, n_features=20, n_classes=5, seed=11)
    results = {}
    for shrinking in (True, False):
        for cooling in (True, False):
            for sub in ("restricted", "all"):
                m = linsvm.train(X, y, solver=solver, C=1.0, tol=1e-7, shrinking=shrinking,
                                 cooling=cooling, subproblem=sub, max_iter=100000)
                assert m.column_stats[0]["status"] == "converged"
                results[shrinking, cooling, sub] = m
    objs = np.array([m.objective for m in results.values()])
    assert objs.max() - objs.min() <= 1e-6 * objs.min()
    paths = {(round(m.column_stats[0]["effective_loops"], 6), m.n_iter) for m in results.values()}
    assert len(paths) >= 4
    plain = results[False, False, "restricted"].column_stats[0]
    assert all(r["phase"] != "shrunk" for r in plain["trace"])
    assert any(r["phase"] == "shrunk" for r in results[True, True, "restricted"].column_stats[0]["trace"])
    assert [r["eps"] for r in results[True, True, "all"].column_stats[0]["trace"]][0] == 1.0


@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_seed_reproducible(solver):
    X, y = random_problem(n_samples=150, n_features=15, n_classes=4, seed=5)
    a = linsvm.train(X, y, solver=solver, seed=3, tol=0.01)
    b = linsvm.train(X, y, solver=solver, seed=3, tol=0.01)
    c = linsvm.train(X, y, solver=solver, seed=4, tol=0.01)
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.weights.tobytes() != c.weights.tobytes()


@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_warm_start_along_a_c_path(solver):
    X, y = random_problem(n_samples=300, n_features=25, n_classes=5, seed=13)
    sw = np.random.default_rng(2).uniform(0.5, 1.5, size=y.size)
    prev = None
    warm_loops = cold_loops = 0.0
    for C in (0.25, 1.0, 4.0, 0.5):             # up and down: alphas rescaled / clipped
        cold = linsvm.train(X, y, solver=solver, C=C, tol=1e-5, sample_weight=sw)
        warm = linsvm.train(X, y, solver=solver, C=C, tol=1e-5, sample_weight=sw, init=prev)
        st = warm.column_stats[0]
        if prev is not None:
            assert st["warm_start"] == "alpha" and "warning" not in st
            warm_loops += st["effective_loops"]
            cold_loops += cold.column_stats[0]["effective_loops"]
        assert st["status"] == "converged"
        assert warm.objective == pytest.approx(cold.objective, rel=1e-5)
        # the seeded alphas stayed feasible for the new C (checked at return)
        alpha = dense_alpha(warm.solver_state_, y.size, warm.classes_.size)
        U = C * sw
        if solver == "sdm-cs":
            assert np.all(alpha.max(axis=1) <= U) and np.all(np.abs(alpha.sum(axis=1)) <= 1e-12 * C)
        else:
            assert np.all(alpha <= U[:, None]) and np.all(alpha >= 0)
        prev = warm
    assert warm_loops < cold_loops
    # re-solving at the same C from its own solution: one loop, then the certifying one
    again = linsvm.train(X, y, solver=solver, C=0.5, tol=1e-5, sample_weight=sw, init=prev)
    assert again.column_stats[0]["n_full_loops"] <= 2
    assert again.objective == pytest.approx(prev.objective, rel=1e-6)


def test_weights_alone_cannot_seed_a_dual_method(tmp_path):
    X, y = random_problem(n_samples=80, n_features=10, n_classes=3, seed=2)
    first = linsvm.train(X, y, solver="sdm-cs")
    path = tmp_path / "m.model"
    first.save(str(path))
    loaded = linsvm.load_model(str(path))
    again = linsvm.train(X, y, solver="sdm-cs", init=loaded)
    st = again.column_stats[0]
    assert st["warm_start"] == "weights ignored" and "alpha = 0" in st["warning"]
    assert again.weights.tobytes() == first.weights.tobytes()
    # a state from other labels is refused, not misused
    y2 = y.copy()
    y2[:5] = y[5:10]
    other = linsvm.train(X, y2, solver="sdm-cs", init=first)
    assert other.column_stats[0]["warm_start"] == "state rejected"
    assert other.weights.tobytes() == linsvm.train(X, y2, solver="sdm-cs").weights.tobytes()


def test_alpha_storage_follows_the_non_zeros():
    X, y = random_problem(n_samples=400, n_features=40, n_classes=40, seed=3)
    for solver in ("sdm-cs", "sdm-ww"):
        m = linsvm.train(X, y, solver=solver, C=0.1)
        state = m.solver_state_
        k = m.classes_.size
        stored = state["a_cls"].size
        assert state["a_val"].size == stored
        assert stored + (np.count_nonzero(state["alpha_y"]) if solver == "sdm-cs" else 0) \
            == m.column_stats[0]["n_nonzero"]
        assert stored < 0.2 * y.size * k
        assert np.all(state["a_val"] != 0)


def test_zero_rows_zero_costs_and_absent_classes():
    X, y = random_problem(n_samples=60, n_features=8, n_classes=4, seed=9)
    X = X.tolil()
    X[3, :] = 0
    X[10, :] = 0
    X = X.tocsr()
    sw = np.ones(y.size)
    sw[5] = 0.0
    for solver, primal in (("sdm-cs", cs_primal), ("sdm-ww", ww_primal)):
        m = linsvm.train(X, y, solver=solver, bias=-1, sample_weight=sw, tol=1e-8,
                         max_iter=100000)
        codes = codes_of(m, y)
        assert m.objective == pytest.approx(primal(m.weights, augmented(X, -1), codes, sw),
                                            rel=1e-12)
        alpha = dense_alpha(m.solver_state_, y.size, m.classes_.size)
        assert np.all(alpha[5] == 0)
        # x = 0 contributes its fixed loss and nothing else; its alphas sit at their optimum
        if solver == "sdm-cs":
            assert alpha[3, codes[3]] == 1.0 and np.sort(alpha[3])[0] == -1.0
        else:
            assert np.all(alpha[3][np.arange(m.classes_.size) != codes[3]] == 1.0)
        assert m.column_stats[0]["duality_gap"] <= 1e-6 * m.objective
    # a class code with no examples in this training set still gets a column
    from linsvm.solvers import make_params
    from linsvm.solvers.sdm import fit_sdm_cs
    from linsvm.problem import CSRBuffers, Problem
    Xb = CSRBuffers(X)
    codes = np.zeros(y.size, dtype=np.int32)
    codes[y == y[0]] = 1
    problem = Problem.multiclass(Xb, np.arange(y.size), codes, 3, np.ones(y.size), 1.0)
    params = make_params("sdm-cs", C=1.0, tol=0.1, options=dict(
        shrinking=True, cooling=True, effort_cap=5.0, max_iter=1000, subproblem="restricted"))
    res = fit_sdm_cs(problem, params, None, None, None)
    W, st = res.weights, res.stats
    assert W.shape == (9, 3) and st["status"] == "converged"


def test_two_classes_and_argmax_prediction():
    X, y = random_problem(n_samples=100, n_features=10, n_classes=2, seed=4)
    m = linsvm.train(X, y, solver="sdm-cs")
    assert m.kind == "multiclass" and m.weights.shape == (11, 2)
    scores = augmented(X, 1.0) @ m.weights
    np.testing.assert_array_equal(m.predict(X), m.classes_[np.argmax(scores, axis=1)])


def test_bad_options_are_parameter_errors():
    X, y = random_problem(n_samples=30, n_features=5, n_classes=3, seed=1)
    with pytest.raises(ParameterError, match="subproblem"):
        linsvm.train(X, y, solver="sdm-cs", subproblem="some")
    with pytest.raises(ParameterError):
        linsvm.train(X, y, solver="sdm-ww", max_iter=0)


def test_cli_trains_and_predicts(tmp_path):
    from linsvm.cli import predict_cmd, train_cmd

    X, y = random_problem(n_samples=90, n_features=8, n_classes=3, seed=6)
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    for args in (["-s", "sdm-cs", "--no-shrinking"], ["-s", "sdm-ww", "--subproblem", "all"]):
        model_file = tmp_path / "m.model"
        r = invoke(train_cmd, *args, "-q", "--seed", "2", str(data), str(model_file))
        assert r.exit_code == 0, r.output
        m = linsvm.load_model(str(model_file))
        ref = linsvm.train(X, y, solver=args[1], seed=2, **({"shrinking": False} if
                                                              "--no-shrinking" in args else
                                                              {"subproblem": "all"}))
        np.testing.assert_array_equal(m.weights, ref.weights)
        r = invoke(predict_cmd, str(data), str(model_file), str(tmp_path / "p"))
        assert r.exit_code == 0 and "Accuracy" in r.stderr


# ---------------------------------------------------------------- LIBLINEAR on real data

@pytest.mark.slow
@pytest.mark.data
def test_cs_matches_liblinear_s4_on_sector(sector_head):
    liblinearutil = pytest.importorskip("liblinear.liblinearutil")
    X, y = sector_head
    X, y = X[:500], y[:500]             # 70 classes (82 in 1000 rows); -s 4 costs most here
    model = linsvm.train(X, y, solver="sdm-cs", C=1.0, tol=0.003)
    ref = liblinearutil.train(y, X, "-s 4 -c 1 -B 1 -e 0.003 -q")
    labels = ref.get_labels()
    W = np.ctypeslib.as_array(ref.w, shape=(ref.nr_feature + 1, ref.nr_class))
    W = np.asarray(W)[:, [labels.index(c) for c in model.classes_]]
    full = np.zeros_like(model.weights)             # LIBLINEAR's width: the largest index seen
    full[: ref.nr_feature] = W[: ref.nr_feature]
    full[-1] = W[ref.nr_feature]                       # the bias row
    codes = codes_of(model, y)
    Xa = augmented(X, 1.0)
    ll = cs_primal(full, Xa, codes, np.ones(y.size))
    ours = cs_primal(model.weights, Xa, codes, np.ones(y.size))
    dual = model.column_stats[0]["dual_objective"]
    assert ours == pytest.approx(model.objective, rel=1e-10)
    assert abs(ours - ll) / ll < 1e-3
    assert ll >= dual * (1 - 1e-12) and ours >= dual        # both above our dual bound
    assert (ours - dual) / ours < 1e-3
