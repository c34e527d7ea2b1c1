"""One-class SVM (LIBLINEAR -s 21): against SLSQP on the dual with its constraints, against
LIBLINEAR (liblinear-official) at -e 1e-7, the nu property, the certificate, warm starts,
the refusals LIBLINEAR makes, and stopping from another thread."""

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

from conftest import shared_file
from linsvm.problem import CSRBuffers, Problem
from linsvm.solvers import get_solver, make_params


def _problem(X, bias=-1.0, cost=None):
    Xb = CSRBuffers(sp.csr_matrix(X))
    n = Xb.n_rows
    return Problem(Xb, np.arange(n, dtype=np.int64), np.ones(n) if cost is None else cost, bias)


def _fit(prob, tol=None, state=None, start=None, log=None, **options):
    info = get_solver("oneclass")
    return info.fit(prob, make_params(info, tol=tol, options=options), start, state, log)


def _data(n=30, d=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, d)) + np.array([2.0] + [0.5] * (d - 1))


@pytest.mark.parametrize("nu", [0.1, 0.37, 0.8, 1.0])
def test_matches_slsqp_on_the_dual(nu):
    """min 1/2 a'Qa, 0 <= a <= 1/(nu n), sum a = 1 (the unscaled dual): -1/2 ||w*||^2 is
    the primal optimum; LIBLINEAR's w is nu n times w*."""
    X = _data()
    n = X.shape[0]
    Q = X @ X.T
    ref = so.minimize(lambda a: 0.5 * a @ Q @ a, np.full(n, 1.0 / n), jac=lambda a: Q @ a,
                      method="SLSQP", bounds=[(0, 1.0 / (nu * n))] * n,
                      constraints=[{"type": "eq", "fun": lambda a: a.sum() - 1.0,
                                    "jac": lambda a: np.ones(n)}],
                      options=dict(ftol=1e-15, maxiter=1000))
    res = _fit(_problem(X), tol=1e-10, nu=nu)
    assert res.converged
    w_ref = X.T @ ref.x
    np.testing.assert_allclose(res.weights / (nu * n), w_ref, atol=1e-5)
    assert res.stats["dual_objective"] == pytest.approx(-ref.fun, rel=1e-6)
    assert res.stats["objective"] == pytest.approx(-ref.fun, rel=1e-6)
    assert res.stats["gap"] <= 1e-7
    # the primal at (w, rho): a feasible point whose value is the certificate's P
    w, rho = res.weights / (nu * n), (-res.offset) / (nu * n)
    P = 0.5 * w @ w - rho + np.maximum(0.0, rho - X @ w).sum() / (nu * n)
    assert P == pytest.approx(res.stats["objective"], rel=1e-12, abs=1e-14)


@pytest.mark.parametrize("nu", [0.05, 0.3, 0.7])
def test_nu_property(nu):
    from linsvm.io.synth import make_text_classification
    X, _ = make_text_classification(n_samples=2000, n_features=500, avg_length=30, seed=4)
    res = _fit(_problem(X), tol=1e-8, nu=nu)      # the property holds at the optimum
    assert res.converged
    assert res.stats["outlier_fraction"] <= nu + 1e-12
    assert res.stats["sv_fraction"] >= nu - 1e-12


def _liblinear(X, nu, eps):
    ll = pytest.importorskip("liblinear.liblinearutil")
    m = ll.train(np.ones(X.shape[0]), sp.csr_matrix(X), f"-s 21 -n {nu} -e {eps} -q")
    w, b = m.get_decfun()
    return np.array(w), -b


@pytest.mark.data
@pytest.mark.parametrize("nu", [0.1, 0.5])
def test_against_liblinear(nu):
    from sklearn.datasets import load_svmlight_file
    X = sp.csr_matrix(load_svmlight_file(str(shared_file("binary/heart_scale")))[0])
    w_ll, rho_ll = _liblinear(X, nu, 1e-7)
    res = _fit(_problem(X), tol=1e-7, nu=nu)
    np.testing.assert_allclose(res.weights, w_ll, atol=1e-6 * np.abs(w_ll).max())
    assert (-res.offset) == pytest.approx(rho_ll, rel=1e-6)
    # decision values as LIBLINEAR's
    np.testing.assert_allclose(X @ res.weights - (-res.offset), X @ w_ll - rho_ll,
                               atol=1e-5 * abs(rho_ll))


def test_refusals_and_ignored_costs():
    X = _data()
    with pytest.raises(Exception, match="no bias"):
        _fit(_problem(X, bias=1.0))
    with pytest.raises(Exception, match="serial only"):
        prob = _problem(X)
        get_solver("oneclass").fit(Problem(prob.X, prob.rows, prob.cost, -1.0, comm=object()),
                                   make_params("oneclass"), None, None, None)
    a = _fit(_problem(X), tol=1e-9)
    b = _fit(_problem(X, cost=np.linspace(0.5, 2, X.shape[0])), tol=1e-9)
    assert np.array_equal(a.weights, b.weights) and b.stats["ignored_costs"]


def test_state_seeds_a_later_solve():
    X = _data(n=300, d=20, seed=3)
    prob = _problem(X)
    first = _fit(prob, tol=1e-3, nu=0.2)
    again = _fit(prob, tol=1e-8, nu=0.2, state=first.state)
    cold = _fit(prob, tol=1e-8, nu=0.2)
    assert again.stats["n_iter"] < cold.stats["n_iter"]
    np.testing.assert_allclose(again.weights, cold.weights, atol=1e-6 * np.abs(cold.weights).max())
    other = _fit(prob, nu=0.3, state=first.state)
    assert "does not belong" in other.warning and other.converged is False or other.warning


def test_data_centred_at_the_origin_is_certified_at_once():
    """Centred data (e.g. after StandardScaler): the optimum is w = 0, rho = 0, where
    the primal and dual values are both rounding and their ratio means nothing.  The gap
    is judged against the objectives' scale max ||x_i||^2: certified, no warning, and
    no run to the iteration cap (it used to take max_iter iterations and warn of a gap
    of 1)."""
    X = _data(60, 4, seed=3)
    X = X - X.mean(axis=0)
    res = _fit(_problem(X), nu=0.5)
    assert res.converged and res.warning is None
    assert res.stats["n_iter"] < 1000
    assert np.linalg.norm(res.weights) <= 1e-8 * np.abs(X).max() * X.shape[0]
