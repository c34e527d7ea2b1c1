"""The L1-regularized solvers cdn (LIBLINEAR -s 5) and glmnet (-s 6): linsvm/solvers/l1.py
over csrc/_l1.pyx.

What is checked, never against the code's own output:
* the dual both certificates use, derived by hand in the core's block comment: the
  conjugates against a numerical minimization, weak duality at random points;
* the subgradient optimality conditions at a tight -e, computed here with numpy;
* solutions, objectives and zero patterns against an independent reference: scipy's
  L-BFGS-B on the smooth split w = u - v, u, v >= 0 (tiny problems), and LIBLINEAR
  through liblinear-official at -e 1e-8 on shared data sets when present;
* cost factors (class and sample weights) against the same weighted reference;
* one-vs-rest through linsvm.train, warm starts, exact zeros, the gap certificate, the
  iteration-cap warning (Ctrl-C and stop requests from another thread: test_interrupt.py).
"""

import numpy as np
import pytest
import scipy.optimize as opt
import scipy.sparse as sp
from scipy.special import expit

import linsvm
from linsvm.errors import ParameterError
from linsvm.problem import CSRBuffers, Problem
from linsvm.solvers import get_solver, liblinear_code, make_params
from linsvm.io.synth import make_text_classification

from conftest import augmented, random_problem, shared_file

SOLVERS = ["cdn", "glmnet"]
LOSS = {"cdn": "sqhinge", "glmnet": "logistic"}


# ------------------------------------------------------------------ numpy references

def loss_and_grad(loss, Xa, t, a, w):
    """L(w) = sum_k a_k l(t_k w.x_k) and its gradient, l the squared hinge or logistic loss."""
    z = t * (Xa @ w)
    if loss == "sqhinge":
        r = np.maximum(0.0, 1.0 - z)
        return float(np.sum(a * r * r)), Xa.T @ (t * (-2.0 * a * r))
    return float(np.sum(a * np.logaddexp(0.0, -z))), Xa.T @ (t * (-a * expit(-z)))


def objective(loss, Xa, t, a, w):
    return np.abs(w).sum() + loss_and_grad(loss, Xa, t, a, w)[0]


def reference(loss, Xa, t, a):
    """argmin ||w||_1 + L(w) by L-BFGS-B on w = u - v, u, v >= 0 (a smooth problem with
    bounds), at tight tolerances."""
    d = Xa.shape[1]

    def f(x):
        w = x[:d] - x[d:]
        val, g = loss_and_grad(loss, Xa, t, a, w)
        return x.sum() + val, np.concatenate([1.0 + g, 1.0 - g])

    res = opt.minimize(f, np.zeros(2 * d), jac=True, method="L-BFGS-B",
                       bounds=[(0.0, None)] * (2 * d),
                       options=dict(maxiter=200000, maxfun=400000, ftol=1e-16, gtol=1e-13,
                                    maxcor=50))
    return res.x[:d] - res.x[d:]


def max_violation(loss, Xa, t, a, w):
    """The largest |S_j|, the minimum-norm subgradient of ||w||_1 + L at w."""
    g = loss_and_grad(loss, Xa, t, a, w)[1]
    s = np.where(w > 0, g + 1.0, np.where(w < 0, g - 1.0, np.sign(g) * np.maximum(0.0, np.abs(g) - 1.0)))
    return float(np.abs(s).max())


def solve(solver, X, t, C=1.0, bias=1.0, cost=None, tol=1e-10, start=None, **options):
    """One binary solve through the registry's fit (no one-vs-rest); tight solves of cdn
    may need more than its 1000 sweeps (coordinate descent on ill-conditioned data)."""
    if solver == "cdn" and tol <= 1e-5:
        options.setdefault("max_iter", 100000)
    Xb = CSRBuffers(X)
    n = Xb.n_rows
    cost = np.ones(n) if cost is None else np.asarray(cost, dtype=float)
    problem = Problem.binary(Xb, np.arange(n), t, cost, bias)
    info = get_solver(solver)
    return info.fit(problem, make_params(info, C=C, tol=tol, options=options), start, None, None)


def labels(y):
    return np.where(y == y[0], 1.0, -1.0)


# ------------------------------------------------------------------ the dual

@pytest.mark.parametrize("loss", ["sqhinge", "logistic"])
def test_conjugates_of_the_losses_against_a_numerical_minimization(loss):
    """-phi*(-alpha) = min_z phi(z) + alpha z, phi = a l: the closed forms the
    certificate uses (alpha - alpha^2/(4a); a H(alpha/a))."""
    a = 1.7
    phi = (lambda z: a * max(0.0, 1.0 - z) ** 2) if loss == "sqhinge" else \
        (lambda z: a * np.logaddexp(0.0, -z))
    for alpha in (0.05, 0.4, 1.0, 1.6, 3.0):
        if loss == "logistic" and alpha >= a:
            continue
        num = opt.minimize_scalar(lambda z: phi(z) + alpha * z, bounds=(-50, 50), method="bounded",
                                  options=dict(xatol=1e-12)).fun
        if loss == "sqhinge":
            closed = alpha - alpha ** 2 / (4 * a)
        else:
            p = alpha / a
            closed = a * (-p * np.log(p) - (1 - p) * np.log1p(-p))
        assert closed == pytest.approx(num, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize("solver", SOLVERS)
def test_weak_duality_at_random_points(solver):
    """D(alpha) <= P(w) for random w and random dual-feasible alpha (the dual of the
    block comment), and the core's dual value at a point is one such D."""
    loss = LOSS[solver]
    X, y = random_problem(n_samples=50, n_features=7, seed=4)
    t, Xa = labels(y), augmented(X, 1.0, dense=True)
    rng = np.random.default_rng(0)
    a = 0.8 * np.ones(50)
    for _ in range(20):
        w = rng.standard_normal(8) * rng.integers(0, 2, 8)
        alpha = rng.uniform(0, 1, 50) * (a if loss == "logistic" else 3.0)
        alpha /= max(1.0, np.abs(Xa.T @ (alpha * t)).max())       # feasible
        if loss == "sqhinge":
            D = np.sum(alpha - alpha ** 2 / (4 * a))
        else:
            p = alpha / a
            D = np.sum(a * (-p * np.log(p) - (1 - p) * np.log1p(-p)))
        assert D <= objective(loss, Xa, t, a, w) + 1e-12
    # the core's certificate at a capped solve: primal as computed here, dual below it
    res = solve(solver, X, t, C=0.8, max_iter=1)
    assert res.stats["objective"] == pytest.approx(objective(loss, Xa, t, a, res.weights), rel=1e-12)
    assert res.stats["dual_objective"] <= res.stats["objective"]


# ------------------------------------------------------------------ against references

@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("bias", [1.0, -1.0])
def test_solution_matches_scipy_on_tiny_problems(solver, C, bias):
    """Objective, weights and zero pattern against L-BFGS-B on the split problem."""
    loss = LOSS[solver]
    X, y = random_problem(n_samples=60, n_features=10, seed=7)
    t, Xa = labels(y), augmented(X, bias, dense=True)
    a = C * np.ones(60)
    ref = reference(loss, Xa, t, a)
    res = solve(solver, X, t, C=C, bias=bias, tol=1e-12)
    w = res.weights
    assert res.converged
    f, fref = objective(loss, Xa, t, a, w), objective(loss, Xa, t, a, ref)
    assert f <= fref * (1 + 1e-9)
    assert f == pytest.approx(fref, rel=1e-9)
    np.testing.assert_allclose(w, ref, atol=2e-5 * max(1.0, np.abs(ref).max()))
    clear = (np.abs(ref) > 1e-4) | (np.abs(ref) < 1e-9)      # the reference's own zeros are inexact
    np.testing.assert_array_equal((w != 0)[clear], (np.abs(ref) > 1e-4)[clear])
    assert res.stats["n_nonzero"] == np.count_nonzero(w)


@pytest.mark.parametrize("solver", SOLVERS)
def test_optimality_conditions_at_a_tight_tolerance(solver):
    """w_j != 0: dL/dw_j + sign(w_j) ~ 0; w_j = 0: |dL/dw_j| <= 1 + small (numpy gradient),
    on a sparse text problem with many zero weights."""
    loss = LOSS[solver]
    X, y = make_text_classification(n_samples=400, n_features=600, seed=2)
    t = labels(y)
    Xa = augmented(X, 1.0, dense=True)
    a = 4.0 * np.ones(t.shape[0])
    res = solve(solver, X, t, C=4.0, tol=1e-10)
    w = res.weights
    g = loss_and_grad(loss, Xa, t, a, w)[1]
    nz = w != 0
    assert 0 < nz.sum() < w.shape[0] / 2
    np.testing.assert_allclose(g[nz] + np.sign(w[nz]), 0.0, atol=1e-6)
    assert np.abs(g[~nz]).max() <= 1.0 + 1e-6
    assert res.stats["gap"] < 1e-6


def liblinear_reference(name, solver, C):
    """A shared binary set (X, its labels t) and the weights (bias last) of
    liblinear-official's -s 5 / -s 6 for `solver` at -c C -e 1e-8 -B 1, in t's sign."""
    liblinearutil = pytest.importorskip("liblinear.liblinearutil")
    from linsvm.io.svmlight import load_svmlight

    X, y = load_svmlight(str(shared_file(f"binary/{name}")))[:2]
    X = sp.csr_matrix(X)
    t = labels(y)
    s = {"cdn": 5, "glmnet": 6}[solver]
    model = liblinearutil.train(liblinearutil.problem(t, X, bias=1),
                                liblinearutil.parameter(f"-s {s} -c {C} -e 1e-8 -B 1 -q"))
    wl = np.array([model.w[i] for i in range(X.shape[1] + 1)]) * (1 if model.label[0] == 1 else -1)
    return X, t, wl


@pytest.mark.data
@pytest.mark.parametrize("solver", SOLVERS)
@pytest.mark.parametrize("name,C", [("heart_scale", 1.0), ("heart_scale", 0.1),
                                    ("australian", 1.0), ("australian", 0.1)])
def test_matches_liblinear_on_shared_sets(solver, name, C):
    """LIBLINEAR -s 5 / -s 6 -e 1e-8 -B 1 (liblinear-official) and linsvm at -e 1e-8: the
    same zero pattern, objectives within 1e-6 (relative)."""
    X, t, wl = liblinear_reference(name, solver, C)
    res = solve(solver, X, t, C=C, tol=1e-8, max_iter=100000 if solver == "cdn" else 1000)
    Xa = augmented(X, 1.0, dense=True)
    a = C * np.ones(t.shape[0])
    f, fl = objective(LOSS[solver], Xa, t, a, res.weights), objective(LOSS[solver], Xa, t, a, wl)
    assert abs(f - fl) <= 1e-6 * abs(fl)
    np.testing.assert_array_equal(res.weights != 0, wl != 0)


@pytest.mark.data
@pytest.mark.parametrize("solver", SOLVERS)
def test_unscaled_features_at_the_defaults_end_within_1pct(solver):
    """australian (features up to 1e5, unscaled), C = 1, the default -e: LIBLINEAR's rule
    alone stopped cdn 2.9% and glmnet 5.8% above the optimum, silently; the subgradient
    bound (>= 1 there) sends the solve on, and it ends within 1% of LIBLINEAR's optimum at
    -e 1e-8 (liblinear-official), with no warning."""
    X, t, wl = liblinear_reference("australian", solver, 1.0)
    res = solve(solver, X, t, C=1.0, tol=get_solver(solver).default_tol)
    Xa = augmented(X, 1.0, dense=True)
    a = np.ones(t.shape[0])
    f, fl = objective(LOSS[solver], Xa, t, a, res.weights), objective(LOSS[solver], Xa, t, a, wl)
    assert res.converged and res.warning is None
    assert res.stats["settle_rounds"] >= 1
    assert fl <= f <= fl * 1.01


@pytest.mark.parametrize("solver", SOLVERS)
def test_cost_factors_against_scipy(solver):
    """Class weights (-w) and sample weights (-W) through linsvm.train scale each
    example's loss: the weighted objective's reference, including weight-0 examples."""
    loss = LOSS[solver]
    X, y = random_problem(n_samples=60, n_features=8, seed=11)
    rng = np.random.default_rng(3)
    sw = rng.uniform(0.2, 3.0, 60)
    sw[:5] = 0.0
    model = linsvm.train(X, y, solver=solver, C=0.7, tol=1e-12, class_weight={1.0: 2.5, -1.0: 0.6},
                         sample_weight=sw)
    t = np.where(y == model.classes_[0], 1.0, -1.0)
    a = 0.7 * sw * np.where(y == 1.0, 2.5, 0.6)
    Xa = augmented(X, 1.0, dense=True)
    ref = reference(loss, Xa, t, a)
    w = model.weights[:, 0]
    assert objective(loss, Xa, t, a, w) == pytest.approx(objective(loss, Xa, t, a, ref), rel=1e-9)
    np.testing.assert_allclose(w, ref, atol=2e-5 * max(1.0, np.abs(ref).max()))


@pytest.mark.parametrize("solver", SOLVERS)
def test_one_vs_rest_through_train(solver):
    """Three classes: column j of the model is the binary solve of class j against the rest
    (labels +1 / -1, the same options), and the model predicts its training data well."""
    X, y = random_problem(n_samples=90, n_features=10, n_classes=3, seed=5)
    model = linsvm.train(X, y, solver=solver, C=2.0, tol=1e-10)
    assert model.weights.shape == (11, 3)
    for j, c in enumerate(model.classes_):
        res = solve(solver, X, np.where(y == c, 1.0, -1.0), C=2.0, tol=1e-10)
        np.testing.assert_allclose(model.weights[:, j], res.weights, rtol=1e-6, atol=1e-8)
    assert np.mean(model.predict(X) == y) > 0.7


@pytest.mark.parametrize("solver", SOLVERS)
def test_warm_starts(solver):
    """From the optimum: done at once, the same weights and zeros; from another C's
    optimum: the optimum of this C (as a cold start finds it) in fewer iterations; a warm
    start's target is a cold start's (the same reference norm)."""
    X, y = make_text_classification(n_samples=300, n_features=400, seed=8)
    t = labels(y)
    cold = solve(solver, X, t, C=2.0, tol=1e-6)
    again = solve(solver, X, t, C=2.0, tol=1e-6, start=cold.weights)
    assert again.stats["n_iter"] <= 2
    assert again.stats["reference_norm"] == pytest.approx(cold.stats["reference_norm"], rel=1e-12)
    np.testing.assert_array_equal(again.weights != 0, cold.weights != 0)
    assert again.stats["objective"] <= cold.stats["objective"] * (1 + 1e-9)
    other = solve(solver, X, t, C=1.0, tol=1e-6)
    warm = solve(solver, X, t, C=2.0, tol=1e-6, start=other.weights)
    assert warm.stats["objective"] == pytest.approx(cold.stats["objective"], rel=1e-6)
    assert warm.stats["n_iter"] < cold.stats["n_iter"]
    # through train: a model as init
    m1 = linsvm.train(X, y, solver=solver, C=1.0, tol=1e-6)
    m2 = linsvm.train(X, y, solver=solver, C=2.0, tol=1e-6, init=m1)
    assert m2.stats["n_iter"] < cold.stats["n_iter"]


@pytest.mark.parametrize("solver", SOLVERS)
def test_models_keep_exact_zeros(solver, tmp_path):
    """The weights of a sparse solution are exactly 0.0 (not tiny), in the model and after
    a save and load."""
    X, y = make_text_classification(n_samples=300, n_features=500, seed=9)
    model = linsvm.train(X, y, solver=solver, C=0.5)
    w = model.weights[:, 0]
    assert 0 < np.count_nonzero(w) < w.shape[0] // 4
    assert np.abs(w[w != 0]).min() > 1e-12
    model.save(tmp_path / "m")
    back = linsvm.load_model(tmp_path / "m")
    np.testing.assert_array_equal(back.weights, model.weights)


@pytest.mark.parametrize("solver", SOLVERS)
def test_gap_certificate(solver):
    """At a tight -e the relative gap is tiny and bounds the distance to the reference
    optimum; the dual value never exceeds it (weak duality against an independent f*)."""
    loss = LOSS[solver]
    X, y = random_problem(n_samples=80, n_features=12, seed=12)
    t, Xa = labels(y), augmented(X, 1.0, dense=True)
    a = 3.0 * np.ones(80)
    fstar = objective(loss, Xa, t, a, reference(loss, Xa, t, a))
    for tol, max_iter in ((1e-12, 1000), (0.5, 2)):
        res = solve(solver, X, t, C=3.0, tol=tol, max_iter=max_iter)
        P, D, gap = res.stats["objective"], res.stats["dual_objective"], res.stats["gap"]
        assert D <= fstar * (1 + 1e-10)
        assert P - fstar <= gap * P + 1e-9 * P
        assert gap == pytest.approx((P - D) / P, rel=1e-12)
    assert solve(solver, X, t, C=3.0, tol=1e-12).stats["gap"] < 1e-8


@pytest.mark.parametrize("solver", SOLVERS)
def test_iteration_cap_warns_when_not_certified(solver):
    """A solve stopped by max_iter whose gap exceeds 0.01: converged False, one line naming
    the cap and the gap; train() emits it as a ConvergenceWarning."""
    X, y = make_text_classification(n_samples=400, n_features=500, seed=1)
    res = solve(solver, X, labels(y), C=50.0, tol=1e-12, max_iter=1)
    assert not res.converged
    assert res.stats["gap"] > 0.01
    assert "iteration cap" in res.warning and "\n" not in res.warning
    assert ("--c-path" in res.warning) == (solver == "cdn")
    with pytest.warns(linsvm.ConvergenceWarning, match="iteration cap"):
        linsvm.train(X, y, solver=solver, C=50.0, tol=1e-12, max_iter=1)


def test_subgradient_bound_is_the_stops_subgradient_times_its_largest_weight():
    """stats subgradient_bound = ||S(w)||_1 ||w||_inf / F(w), with S and F computed here
    (glmnet measures ||S||_1 at its final iterate)."""
    X, y = make_text_classification(n_samples=300, n_features=200, seed=3)
    t = labels(y)
    Xa = augmented(X, 1.0, dense=True)
    res = solve("glmnet", X, t, C=2.0, tol=0.01)
    w = res.weights
    g = loss_and_grad("logistic", Xa, t, 2.0, w)[1]
    S = np.where(w > 0, g + 1.0, np.where(w < 0, g - 1.0,
                                          np.sign(g) * np.maximum(0.0, np.abs(g) - 1.0)))
    F = objective("logistic", Xa, t, 2.0, w)
    assert res.stats["subgradient_bound"] == pytest.approx(
        np.abs(S).sum() * np.abs(w).max() / F, rel=1e-6)


def test_a_path_in_c_ends_at_the_optimum_of_c():
    """cdn's c_path = 3: stages at C/8, C/4, C/2 in that order (its log names them), then
    the optimum of C as a cold start reaches it (objective and zero pattern against
    L-BFGS-B); n_iter counts the stages' iterations (stats path_iter) with the final
    solve's; c_path = 0 runs no stage."""
    X, y = random_problem(n_samples=60, n_features=10, seed=7)
    t, Xa = labels(y), augmented(X, 1.0, dense=True)
    C = 10.0
    ref = reference("sqhinge", Xa, t, C * np.ones(60))
    info = get_solver("cdn")
    problem = Problem.binary(CSRBuffers(X), np.arange(60), t, np.ones(60), 1.0)
    lines = []
    res = info.fit(problem, make_params(info, C=C, tol=1e-12, options=dict(c_path=3,
                                                                          max_iter=100000)),
                   None, None, lines.append)
    stages = [line for line in lines if "path stage" in line]
    assert [float(line.split("C = ")[1].split()[0]) for line in stages] == [1.25, 2.5, 5.0]
    stage_iters = sum(int(line.split("after ")[1].split()[0]) for line in stages)
    final_iters = len(lines[lines.index(stages[-1]) + 1:])
    assert res.stats["path_iter"] == stage_iters > 0
    assert res.stats["n_iter"] == stage_iters + final_iters
    w = res.weights
    f, fref = objective("sqhinge", Xa, t, C, w), objective("sqhinge", Xa, t, C, ref)
    assert f <= fref * (1 + 1e-9) and f == pytest.approx(fref, rel=1e-9)
    clear = (np.abs(ref) > 1e-4) | (np.abs(ref) < 1e-9)
    np.testing.assert_array_equal((w != 0)[clear], (np.abs(ref) > 1e-4)[clear])
    cold = solve("cdn", X, t, C=C, tol=1e-12)
    assert cold.stats["path_iter"] == 0
    assert cold.stats["reference_norm"] == pytest.approx(res.stats["reference_norm"], rel=1e-12)


def test_registry_codes_options_and_serial_only():
    assert liblinear_code(5) == ("cdn", {})
    assert liblinear_code(6) == ("glmnet", {})
    for name in SOLVERS:
        info = get_solver(name)
        assert info.distributed is None and "without mpiexec" in info.serial_only
        with pytest.raises(ParameterError, match="does not run on several MPI ranks.*without mpiexec"):
            info.refuse_distributed()
        for opt_name, option in info.options.items():
            assert option.help
            if option.type is int:
                assert option.low is not None and option.high is not None
        with pytest.raises(ParameterError):
            make_params(name, options={"max_iter": 0})
    with pytest.raises(ParameterError):
        make_params("cdn", options={"inner_max_iter": 5})
    for bad in (-1, 31):
        with pytest.raises(ParameterError, match="c_path"):
            make_params("cdn", options={"c_path": bad})
    with pytest.raises(ParameterError, match="c_path"):
        make_params("glmnet", options={"c_path": 2})


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_zero_cost_examples_and_empty_columns(solver):
    """Examples of cost 0 change nothing (the solve equals the one without them); a warm
    start's weight on a feature no example uses is set to its optimum, 0."""
    X, y = random_problem(n_samples=60, n_features=8, seed=13)
    X = sp.hstack([X, sp.csr_matrix((60, 2))]).tocsr()       # two empty columns
    t = labels(y)
    cost = np.ones(60)
    cost[::4] = 0.0
    keep = cost > 0
    res = solve(solver, X, t, cost=cost, tol=1e-12)
    sub = solve(solver, X[keep], t[keep], tol=1e-12)
    np.testing.assert_allclose(res.weights, sub.weights, rtol=1e-7, atol=1e-9)
    start = np.ones(11)
    warm = solve(solver, X, t, cost=cost, tol=1e-12, start=start)
    assert warm.weights[8] == 0.0 and warm.weights[9] == 0.0
    np.testing.assert_allclose(warm.weights, sub.weights, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("solver", SOLVERS)
def test_rows_subset_and_order(solver):
    """The examples are X[rows] in any order (a CV fold): the same solution as the copied
    rows (up to the random order of the coordinates)."""
    X, y = random_problem(n_samples=70, n_features=9, seed=14)
    t = labels(y)
    rows = np.random.default_rng(0).permutation(70)[:50]
    Xb = CSRBuffers(X)
    info = get_solver(solver)
    params = make_params(info, C=1.0, tol=1e-12)
    res = info.fit(Problem.binary(Xb, rows, t[rows], np.ones(50), 1.0), params, None, None, None)
    ref = solve(solver, X[rows], t[rows], tol=1e-12)
    np.testing.assert_allclose(res.weights, ref.weights, rtol=1e-7, atol=1e-9)


# ------------------------------------------------------------------ glmnet's threads

@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_threads_give_the_same_model_bit_for_bit(solver):
    """Sums over long columns (and glmnet's over many rows) are taken by fixed blocks
    (csrc/_l1.pyx, module notes: threads): 20,000 rows (three row blocks) and columns of
    about 10,000 entries (three column blocks) give the same model on 1, 2 and 3
    threads, and it is the optimum (the subgradient conditions, computed here with
    numpy)."""
    rng = np.random.default_rng(7)
    X = sp.random(20000, 12, density=0.5, format="csr", random_state=rng)
    X.data = 2.0 * X.data - 1.0
    t = np.where(X @ rng.standard_normal(12) + 0.3 * rng.standard_normal(20000) > 0, 1.0, -1.0)
    assert np.diff(X.tocsc().indptr).min() > 2 * 4096
    fits = [solve(solver, X, t, C=0.01, tol=1e-8, n_threads=k) for k in (1, 2, 3)]
    for res in fits[1:]:
        assert res.weights.tobytes() == fits[0].weights.tobytes()
        assert res.stats["n_iter"] == fits[0].stats["n_iter"]
    Xa = augmented(X, 1.0, dense=True)
    assert max_violation(LOSS[solver], Xa, t, 0.01 * np.ones(20000), fits[0].weights) < 1e-6
