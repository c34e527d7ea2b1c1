"""Support vector regression: svr (-s 11, finite Newton) and svr-dual (-s 12 / -s 13, dual CD).

References are independent of the code under test: scipy's L-BFGS on the smooth -s 11
objective, L-BFGS-B on the bound-constrained dual QP of -s 13 (beta = a+ - a-), LIBLINEAR
through liblinear-official at -e 1e-7, and optimality conditions (gradient, duality gap).
"""
import subprocess

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import linsvm

from conftest import shared_file
from fakempi import run_ranks
from linsvm import _svr
from linsvm.runtime.collective import Collective
from linsvm.problem.metrics import regression_measures
from linsvm.problem import CSRBuffers, Problem
from linsvm.solvers import get_solver, make_params


def _problem(X, y, cost=None, bias=1.0, rows=None, comm=None):
    Xb = CSRBuffers(sp.csr_matrix(X))
    n = Xb.n_rows
    rows = np.arange(n, dtype=np.int64) if rows is None else np.asarray(rows, dtype=np.int64)
    cost = np.ones(rows.shape[0]) if cost is None else np.asarray(cost, dtype=np.float64)
    return Problem(Xb, rows, cost, bias, t=np.asarray(y, dtype=np.float64), comm=comm)


def _fit(solver, prob, C=1.0, tol=None, start=None, state=None, log=None, **options):
    info = get_solver(solver)
    return info.fit(prob, make_params(info, C=C, tol=tol, options=options), start, state, log)


def _data(n=80, d=10, seed=0, offset=5.0, density=0.5):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (rng.random((n, d)) < density)
    y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) + offset
    return X, y, rng.uniform(0.5, 2.0, n)


def _F(X, y, c, C, p, w, bias, reg_bias, loss=2):
    pred = X @ w[:X.shape[1]] + (bias * w[-1] if bias > 0 else 0.0)
    a = np.maximum(np.abs(pred - y) - p, 0.0)
    wr = w if (reg_bias or bias <= 0) else w[:-1]
    return 0.5 * wr @ wr + C * np.sum(c * (a ** loss))


# ------------------------------------------------------------------ svr (-s 11)

@pytest.mark.parametrize("reg_bias", [True, False])
@pytest.mark.parametrize("bias", [1.0, -1.0, 2.5])
def test_svr_matches_lbfgs(reg_bias, bias):
    X, y, c = _data()
    C, p = 0.7, 0.2
    nw = X.shape[1] + (bias > 0)
    ref = so.minimize(lambda w: _F(X, y, c, C, p, w, bias, reg_bias), np.zeros(nw),
                      method="L-BFGS-B", options=dict(ftol=1e-15, gtol=1e-12, maxiter=20000))
    res = _fit("svr", _problem(X, y, c, bias), C=C, tol=1e-10, epsilon=p, regularize_bias=reg_bias)
    assert res.converged
    f = _F(X, y, c, C, p, res.weights, bias, reg_bias)
    assert abs(res.stats["objective"] - f) <= 1e-10 * f
    assert f <= ref.fun * (1 + 1e-10)
    np.testing.assert_allclose(res.weights, ref.x, atol=1e-5)
    assert res.stats["gap"] <= 1e-8


def test_svr_gradient_and_gap_at_tight_tol():
    X, y, c = _data(n=200, d=30, seed=4, density=0.2)
    prob = _problem(X, y, c)
    for reg_bias in (True, False):
        res = _fit("svr", prob, C=3.0, tol=1e-12, gtol=0.0, regularize_bias=reg_bias)
        f, g, _ = _svr.svr_primal_value(prob.view, y=prob.t, c=c, C=3.0, epsilon=0.1,
                                        w=res.weights, loss="l2", regularize_bias=reg_bias)
        g0 = _svr.svr_primal_value(prob.view, y=prob.t, c=c, C=3.0, epsilon=0.1,
                                   w=np.zeros(prob.n_weights), loss="l2")[1]
        assert np.linalg.norm(g) <= 1e-9 * np.linalg.norm(g0)
        # weak duality, up to the rounding of two sums over 200 examples at the optimum
        assert res.stats["dual_objective"] <= res.stats["objective"] * (1 + 1e-14)
        assert res.stats["gap"] <= 1e-9


def test_svr_default_tol_meets_liblinear_gradient_test():
    X, y, c = _data(n=300, d=40, seed=7, density=0.3)
    prob = _problem(X, y)
    res = _fit("svr", prob, regularize_bias=True)
    args = dict(data=prob.view, y=prob.t, c=prob.cost, C=1.0, epsilon=0.1, loss="l2")
    g = _svr.svr_primal_value(**args, w=res.weights)[1]
    g0 = _svr.svr_primal_value(**args, w=np.zeros(prob.n_weights))[1]
    assert np.linalg.norm(g) <= 1e-4 * np.linalg.norm(g0)


def test_svr_costs_zero_and_two():
    X, y, c = _data(n=60, seed=2)
    c = np.ones(60)
    c[::3] = 0.0
    c[1::3] = 2.0
    keep = np.flatnonzero(c > 0)
    rows = np.concatenate([keep, np.flatnonzero(c == 2.0)])
    for solver, opts in (("svr", {}), ("svr-dual", {"loss": "l2", "center_targets": False}),
                         ("svr-dual", {"loss": "l1", "center_targets": False})):
        tol = 1e-10 if solver == "svr" else 1e-8
        a = _fit(solver, _problem(X, y, c), C=0.5, tol=tol, **opts)
        b = _fit(solver, _problem(X, y[rows], rows=rows), C=0.5, tol=tol, **opts)
        assert abs(a.stats["objective"] - b.stats["objective"]) <= 1e-6 * b.stats["objective"]


def test_svr_warm_start():
    X, y, c = _data(n=150, d=20, seed=3)
    prob = _problem(X, y, c)
    cold = _fit("svr", prob, C=2.0, tol=1e-9)
    warm = _fit("svr", prob, C=2.0, tol=1e-9, start=cold.weights)
    assert warm.stats["n_iter"] <= 1
    np.testing.assert_allclose(warm.weights, cold.weights, atol=1e-8)
    near = _fit("svr", prob, C=2.2, tol=1e-9, start=cold.weights)
    far = _fit("svr", prob, C=2.2, tol=1e-9)
    assert near.stats["n_iter"] <= far.stats["n_iter"]
    assert abs(near.stats["objective"] - far.stats["objective"]) <= 1e-9 * far.stats["objective"]


def test_svr_gap_warning_when_capped():
    X, y, c = _data(n=300, d=40, seed=5, density=0.3, offset=50.0)
    res = _fit("svr", _problem(X, y), C=100.0, tol=1e-12, max_iter=1, cg_max_iter=1,
               heuristic1=False, regularize_bias=True)
    assert not res.converged and "svr stopped" in res.warning


def test_svr_forcing_guard_changes_the_steps_not_the_optimum():
    """The forcing term's guard (mfn's: cgls.pxd, qguard) reaches svr's CGLS: guarded, no
    step ends after one iteration and the steps differ from the unguarded ones; both
    stop at the optimum within -e's gradient test (an L-BFGS-B reference)."""
    X, y, c = _data(n=400, d=60, seed=8, density=0.2)
    prob = _problem(X, y, c)
    ref = so.minimize(lambda w: _F(X, y, c, 1.0, 0.1, w, 1.0, False), np.zeros(61),
                      method="L-BFGS-B", options=dict(ftol=1e-15, gtol=1e-12, maxiter=20000))
    steps = {}
    for guard in (0.0, 0.5):
        lines = []
        res = _fit("svr", prob, tol=1e-6, forcing_guard=guard, log=lines.append)
        steps[guard] = [int(line.rsplit(maxsplit=1)[1]) for line in lines if " cg " in line]
        f = _F(X, y, c, 1.0, 0.1, res.weights, 1.0, False)
        assert ref.fun * (1 - 1e-10) <= f <= ref.fun * (1 + 1e-8)
    assert steps[0.0] != steps[0.5] and min(steps[0.5]) >= 2


@pytest.mark.parametrize("guard", [-0.1, 1.0, float("nan")])
def test_svr_refuses_a_forcing_guard_out_of_range(guard):
    X, y, c = _data()
    with pytest.raises(linsvm.errors.ParameterError, match="forcing_guard"):
        linsvm.train(X, y, solver="svr", forcing_guard=guard)
    prob = _problem(X, y)
    with pytest.raises(ValueError, match="forcing_guard"):
        _svr.svr_newton_solve(prob.view, y=prob.t, c=prob.cost, C=1.0, beta=np.zeros(prob.n_weights),
                              epsilon=0.1, regularize_bias=True, tol=1e-3, warm=False,
                              heuristic1=True, heuristic2=True, precondition=True,
                              jacobi_weight=0.3, fused_cg=True, forcing=0.1, gstop=1e-3,
                              max_iter=5, cg_max_iter=10, n_threads=1, forcing_guard=guard)


# ------------------------------------------------------------------ svr-dual (-s 12, -s 13)

def test_svr_dual_at_the_loop_cap_with_a_certified_gap_is_a_result():
    """A loop cap met with a certified relative gap within 1% is a result, not a warning
    (it used to warn "relative duality gap of 5e-05 > 0.01")."""
    X, y, c = _data(n=200, d=10, seed=7)
    loose = _fit("svr-dual", _problem(X, y), tol=1e-12, max_iter=40, loss="l2")
    assert loose.stats["status"] == "iteration cap"
    assert loose.stats["gap"] <= 0.01
    assert loose.converged and loose.warning is None
    capped = _fit("svr-dual", _problem(X, y), C=1e3, tol=1e-12, max_iter=1, loss="l1")
    assert capped.stats["gap"] > 0.01 and not capped.converged
    assert f"{capped.stats['gap']:.3g} > 0.01" in capped.warning


def test_svr_dual_l2_equals_primal():
    X, y, c = _data(n=100, d=12, seed=6)
    prob = _problem(X, y, c)
    primal = _fit("svr", prob, C=0.8, tol=1e-11, regularize_bias=True)
    dual = _fit("svr-dual", prob, C=0.8, tol=1e-9, loss="l2", center_targets=False)
    assert dual.converged and dual.stats["gap"] <= 1e-7
    assert abs(dual.stats["objective"] - primal.stats["objective"]) <= 1e-7 * primal.stats["objective"]
    np.testing.assert_allclose(dual.weights, primal.weights, atol=1e-4)


def test_svr_dual_l1_matches_bound_constrained_qp():
    """-s 13's dual with beta = a+ - a- (0 <= a+-, <= C c) is a smooth bound-constrained QP:
    min 1/2 (a+ - a-)'Q(a+ - a-) - y'(a+ - a-) + p sum(a+ + a-), solved by L-BFGS-B; its
    optimum is -F* (strong duality)."""
    X, y, c = _data(n=40, d=6, seed=8)
    C, p = 0.6, 0.15
    Xb = np.hstack([X, np.ones((40, 1))])
    Q = Xb @ Xb.T

    def g(ab):
        b = ab[:40] - ab[40:]
        Qb = Q @ b
        f = 0.5 * b @ Qb - y @ b + p * ab.sum()
        gb = Qb - y
        return f, np.concatenate([gb + p, -gb + p])
    U = np.concatenate([C * c, C * c])
    ref = so.minimize(g, np.zeros(80), jac=True, method="L-BFGS-B",
                      bounds=list(zip(np.zeros(80), U)),
                      options=dict(ftol=1e-16, gtol=1e-12, maxiter=100000, maxfun=100000))
    res = _fit("svr-dual", _problem(X, y, c), C=C, tol=1e-9, loss="l1", epsilon=p,
               center_targets=False)
    F = _F(X, y, c, C, p, res.weights, 1.0, True, loss=1)
    assert abs(F - res.stats["objective"]) <= 1e-10 * F
    assert abs(F + ref.fun) <= 1e-6 * F
    assert res.stats["gap"] <= 1e-6


def test_svr_dual_centering_and_state():
    X, y, c = _data(n=120, d=10, seed=9, offset=2000.0)
    prob = _problem(X, y)
    res = _fit("svr-dual", prob, C=1.0, tol=1e-6, loss="l2")
    assert res.stats["y_offset"] == pytest.approx(y.mean())
    pred = X @ res.weights[:-1] + res.weights[-1] + res.stats["y_offset"]
    assert np.mean((pred - y) ** 2) < 0.2 * np.var(y)
    again = _fit("svr-dual", prob, C=1.0, tol=1e-6, loss="l2", state=res.state)
    assert again.stats["n_iter"] <= 2
    other = _fit("svr-dual", prob, C=1.0, tol=1e-6, loss="l2", start=res.weights)
    assert other.converged and other.warning is None or "cannot start" in (other.warning or "")


def test_svr_dual_refuses_mpi():
    X, y, c = _data(n=20)
    with pytest.raises(Exception, match="serial only"):
        _fit("svr-dual", _problem(X, y, comm=object()))


# ------------------------------------------------------------------ the free intercept

def test_free_intercept_fits_far_targets():
    """Targets around 2000: with the bias regularized a small C cannot reach them and the
    fit is worse than predicting the mean; svr's free bias (default) and svr-dual's
    centering are not."""
    X, y, c = _data(n=300, d=10, seed=10, offset=2000.0)
    prob = _problem(X, y)
    mean_mse = np.var(y)

    def mse(res, off=0.0):
        return np.mean((X @ res.weights[:-1] + res.weights[-1] + off - y) ** 2)
    trap = _fit("svr", prob, C=1e-2, regularize_bias=True)
    assert mse(trap) > mean_mse
    free = _fit("svr", prob, C=1e-2)
    assert mse(free) < 0.5 * mean_mse
    cen = _fit("svr-dual", prob, C=1e-2, loss="l2")
    assert mse(cen, cen.stats["y_offset"]) < 0.5 * mean_mse


# ------------------------------------------------------------------ LIBLINEAR

def _liblinear(y, X, args):
    ll = pytest.importorskip("liblinear.liblinearutil")
    m = ll.train(y, sp.csr_matrix(X), args + " -q")
    w, b = m.get_decfun()
    return np.array(list(w) + [b])


def _liblinear_cases():
    from sklearn.datasets import load_diabetes
    X, y = load_diabetes(return_X_y=True)
    return X, y


@pytest.mark.parametrize("code,solver,opts,reg", [
    (11, "svr", {}, True), (11, "svr", {}, False),
    (12, "svr-dual", {"loss": "l2", "center_targets": False}, True),
    (13, "svr-dual", {"loss": "l1", "center_targets": False}, True)])
def test_against_liblinear_on_diabetes(code, solver, opts, reg):
    X, y = _liblinear_cases()
    X = X / np.abs(X).max(axis=0)
    y = y / 100.0
    C = 1.0
    args = f"-s {code} -c {C} -p 0.1 -e 1e-7 -B 1" + ("" if reg else " -R")
    w_ll = _liblinear(y, X, args)
    if solver == "svr":
        opts = dict(opts, regularize_bias=reg)
        tol = 1e-10
    else:
        tol = 1e-7
    res = _fit(solver, _problem(X, y), C=C, tol=tol, **opts)
    loss = 1 if code == 13 else 2
    f_ll = _F(X, y, np.ones(len(y)), C, 0.1, w_ll, 1.0, reg, loss)
    f = _F(X, y, np.ones(len(y)), C, 0.1, res.weights, 1.0, reg, loss)
    assert f <= f_ll * (1 + 1e-6)
    assert res.stats["gap"] <= 1e-5
    if code != 13:          # LIBLINEAR -s 13 stops at its loop cap here, 1e-4 above ours
        assert abs(f - f_ll) <= 1e-5 * f_ll


@pytest.mark.slow
@pytest.mark.data
def test_against_liblinear_on_debian():
    from linsvm.io.svmlight import load_svmlight
    X, y = load_svmlight(shared_file("regression/debian-deps-size.train.bz2"))
    for reg in (True, False):
        w_ll = _liblinear(y, X, "-s 11 -c 1 -e 1e-7 -B 1" + ("" if reg else " -R"))
        res = _fit("svr", _problem(X, y), C=1.0, tol=1e-9, regularize_bias=reg)
        prob = _problem(X, y)
        f_ll = _svr.svr_primal_value(prob.view, y=prob.t, c=prob.cost, C=1.0, epsilon=0.1,
                                     w=w_ll, loss="l2", regularize_bias=reg)[0]
        assert res.stats["objective"] <= f_ll * (1 + 1e-7)
        assert abs(res.stats["objective"] - f_ll) <= 1e-6 * f_ll


@pytest.mark.subprocess
def test_regression_measures_as_liblinear_prints_them(tmp_path):
    """MSE and SCC of LIBLINEAR's predictions, from LIBLINEAR's predict output, from
    regression_measures and from scikit-learn (SCC = R^2 of the least-squares line of y
    on the predictions)."""
    from sklearn.datasets import load_diabetes
    from linsvm.io.svmlight import dump_svmlight
    from sklearn.linear_model import LinearRegression
    from sklearn.metrics import mean_squared_error, r2_score
    from conftest import liblinear_tool
    train, predict = liblinear_tool("train"), liblinear_tool("predict")
    X, y = load_diabetes(return_X_y=True)
    dump_svmlight(X, y, tmp_path / "d")
    subprocess.run([train, "-q", "-s", "11", "-c", "10", tmp_path / "d", tmp_path / "m"], check=True)
    out = subprocess.run([predict, tmp_path / "d", tmp_path / "m", tmp_path / "o"], check=True,
                         capture_output=True, text=True).stdout
    mse_ll = float(out.split("Mean squared error = ")[1].split()[0])
    scc_ll = float(out.split("Squared correlation coefficient = ")[1].split()[0])
    v = np.loadtxt(tmp_path / "o")
    mse, scc = regression_measures(y, v)
    assert mse == pytest.approx(mse_ll, rel=1e-5) and scc == pytest.approx(scc_ll, rel=1e-5)
    assert mse == pytest.approx(mean_squared_error(y, v), rel=1e-12)
    fit = LinearRegression().fit(v[:, None], y)
    assert scc == pytest.approx(r2_score(y, fit.predict(v[:, None])), rel=1e-9)


# ------------------------------------------------------------------ MPI (svr)

def _cuts(n, P, empty):
    if empty:
        return [0, n // 3, n // 3, n] if P == 3 else [0, 0, n]
    return [0] + [int(n * (k + 1) ** 1.3 / P ** 1.3) for k in range(P - 1)] + [n]


@pytest.mark.parametrize("P,empty", [(2, False), (3, False), (3, True), (2, True)])
@pytest.mark.parametrize("reg_bias", [True, False])
def test_svr_over_ranks_equals_serial(P, empty, reg_bias):
    X, y, c = _data(n=300, d=40, seed=11, density=0.2)
    serial = _fit("svr", _problem(X, y, c), C=2.0, tol=1e-9, regularize_bias=reg_bias)
    cuts = _cuts(300, P, empty)

    def work(comm):
        r = comm.Get_rank()
        a, b = cuts[r], cuts[r + 1]
        prob = _problem(X[a:b] if b > a else np.zeros((0, X.shape[1])), y[a:b], c[a:b],
                        comm=Collective(comm))
        return _fit("svr", prob, C=2.0, tol=1e-9, regularize_bias=reg_bias)
    out = run_ranks(work, P)
    for res in out:
        assert not isinstance(res, BaseException), res
        assert np.array_equal(res.weights, out[0].weights)
        assert abs(res.stats["objective"] - serial.stats["objective"]) <= 1e-9 * serial.stats["objective"]
        assert abs(res.stats["gap"]) <= 1e-7
    np.testing.assert_allclose(out[0].weights, serial.weights, atol=1e-6)




def test_make_text_regression():
    from linsvm.io.synth import make_text_classification, make_text_regression
    X, y = make_text_regression(n_samples=500, n_features=300, avg_length=20, offset=10.0,
                                noise=0.0, seed=3)
    X2, y2 = make_text_regression(n_samples=500, n_features=300, avg_length=20, offset=10.0,
                                  noise=0.0, seed=3)
    Xc, _ = make_text_classification(n_samples=500, n_features=300, avg_length=20, noise=0.0,
                                     seed=3)
    assert (X != Xc).nnz == 0 and (X != X2).nnz == 0 and np.array_equal(y, y2)
    assert y.std() == pytest.approx(1.0) and y.mean() != 0.0
    # noise-free targets are an exact sparse linear function of X plus the offset
    w = np.linalg.lstsq(np.hstack([X.toarray(), np.ones((500, 1))]), y, rcond=None)[0]
    assert np.allclose(np.hstack([X.toarray(), np.ones((500, 1))]) @ w, y, atol=1e-8)
    with pytest.raises(Exception):
        make_text_regression(n_samples=10, informative=0.0)


def test_free_bias_solve_moves_with_the_targets():
    """With the free bias (svr's default) a shift of every target shifts only the bias:
    the start (the weighted mean target) and the gradient test's reference move along, so
    the same iterates result (LIBLINEAR -R's relative test at w = 0 does not have this)."""
    X, y, c = _data(n=400, d=30, seed=12, density=0.3, offset=0.0)
    a = _fit("svr", _problem(X, y, c))
    b = _fit("svr", _problem(X, y + 2000.0, c))
    assert a.stats["n_iter"] == b.stats["n_iter"]
    np.testing.assert_allclose(b.weights[:-1], a.weights[:-1], atol=1e-6)
    assert b.weights[-1] - a.weights[-1] == pytest.approx(2000.0, abs=1e-6)


def test_warm_start_along_c_with_targets_far_from_zero():
    """A warm start from the solution at a smaller C: with a free bias the gradient test
    measures against the intercept-only model, not beta = 0 (whose gradient, for targets
    around 2000, is so large that the warm start would pass the test at once and stop
    where it began).  Each warm-started solve ends at the cold-started objective."""
    rng = np.random.default_rng(11)
    X = sp.random(300, 20, density=0.3, format="csr", random_state=rng)
    y = 2000.0 + X @ rng.standard_normal(20) + 0.1 * rng.standard_normal(300)
    prev = None
    for C in (0.125, 0.5, 2.0, 8.0):
        warm = linsvm.train(X, y, solver="svr", C=C, epsilon=0.0, init=prev)
        cold = linsvm.train(X, y, solver="svr", C=C, epsilon=0.0)
        assert warm.stats["gap"] <= 1e-3 and warm.stats["n_iter"] >= 1
        assert warm.objective == pytest.approx(cold.objective, rel=1e-4)
        prev = warm
