"""The free intercept of the finite Newton core (regularize_bias=False, LIBLINEAR's -R):
lam on every weight but the bias's (csrc/cgls.pxd nreg), for mfn and ls; against
scipy's L-BFGS on the same objective, serial and over row blocks."""
import warnings

import numpy as np
import pytest
import scipy.optimize as so

import linsvm
from conftest import augmented, random_problem
from fakempi import run_ranks


def _objective(X, y, w, C, bias, loss):
    m = y * (X @ w[:-1] + bias * w[-1])
    r = np.maximum(0.0, 1.0 - m) if loss == "mfn" else 1.0 - m
    return 0.5 * w[:-1] @ w[:-1] + C * np.sum(r * r)


@pytest.mark.parametrize("solver", ["mfn", "ls"])
@pytest.mark.parametrize("bias", [1.0, 3.0])
def test_free_bias_matches_lbfgs(solver, bias):
    X, y = random_problem(n_samples=120, n_features=10, seed=3)
    y = np.where(X @ np.ones(10) + 2.0 > 0.5, 1.0, -1.0)   # an off-center class boundary
    Xd = X.toarray()
    C = 0.3
    ref = so.minimize(lambda w: _objective(Xd, y, w, C, bias, solver), np.zeros(11),
                      method="L-BFGS-B", options=dict(ftol=1e-15, gtol=1e-12, maxiter=20000))
    m = linsvm.train(X, y, solver=solver, C=C, bias=bias, tol=1e-10, regularize_bias=False)
    w = m.weights.ravel()
    # the model's first class may be -1 (then its weights are -w): take the matching sign
    f = min(_objective(Xd, y, w, C, bias, solver), _objective(Xd, y, -w, C, bias, solver))
    assert f <= ref.fun * (1 + 1e-9)
    assert m.stats["objective"] == pytest.approx(ref.fun, rel=1e-8)
    reg = linsvm.train(X, y, solver=solver, C=C, bias=bias, tol=1e-10)
    assert reg.stats["objective"] > m.stats["objective"]


@pytest.mark.parametrize("solver", ["mfn", "lr", "softmax"])
def test_free_bias_over_row_blocks(solver):
    X, y = random_problem(n_samples=300, n_features=20, seed=5)
    serial = linsvm.train(X, y, solver=solver, tol=1e-8, regularize_bias=False)
    cuts = [0, 40, 40, 300]

    def work(comm):
        r = comm.Get_rank()
        return linsvm.train(X[cuts[r]:cuts[r + 1]], y[cuts[r]:cuts[r + 1]], solver=solver,
                            tol=1e-8, regularize_bias=False, comm=comm)
    out = run_ranks(work, 3)
    for m in out:
        assert not isinstance(m, BaseException), m
        assert np.array_equal(m.weights, out[0].weights)
        assert m.stats["objective"] == pytest.approx(serial.stats["objective"], rel=1e-9)


def test_losses_with_a_linear_zone_do_not_take_it():
    X, y = random_problem(n_samples=50, n_features=5, seed=1)
    for solver in ("mfn-huber", "mfn-l1", "dcd"):
        with pytest.raises(Exception, match="regularize_bias|does not apply"):
            linsvm.train(X, y, solver=solver, regularize_bias=False)


# ------------------------------------------------------------------ L1 (cdn, glmnet) and lr
from scipy.special import expit  # noqa: E402


def _loss(kind, Xa, t, a, w):
    """sum_k a_k l(t_k w.x_k) and its gradient: l the squared hinge or the logistic loss."""
    z = t * (Xa @ w)
    if kind == "sqhinge":
        r = np.maximum(0.0, 1.0 - z)
        return float(np.sum(a * r * r)), Xa.T @ (t * (-2.0 * a * r))
    return float(np.sum(a * np.logaddexp(0.0, -z))), Xa.T @ (t * (-a * expit(-z)))


def _penalty(pen, w):
    """The regularizer of every weight but the last (the free bias)."""
    return np.abs(w[:-1]).sum() if pen == "l1" else 0.5 * w[:-1] @ w[:-1]


def _free_reference(kind, pen, Xa, t, a):
    """argmin of the penalty (bias excluded) + the loss by L-BFGS-B: for L1 on the split
    w = u - v, u, v >= 0, with the bias weight unbounded."""
    d = Xa.shape[1] - 1
    if pen == "l2":
        def f2(w):
            val, g = _loss(kind, Xa, t, a, w)
            return 0.5 * w[:-1] @ w[:-1] + val, g + np.append(w[:-1], 0.0)
        res = so.minimize(f2, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                          options=dict(maxiter=100000, ftol=1e-16, gtol=1e-12))
        return res.x

    def f1(x):
        w = np.append(x[:d] - x[d:2 * d], x[-1])
        val, g = _loss(kind, Xa, t, a, w)
        return x[:2 * d].sum() + val, np.concatenate([1.0 + g[:d], 1.0 - g[:d], g[d:]])
    res = so.minimize(f1, np.zeros(2 * d + 1), jac=True, method="L-BFGS-B",
                      bounds=[(0.0, None)] * (2 * d) + [(None, None)],
                      options=dict(maxiter=200000, maxfun=400000, ftol=1e-16, gtol=1e-13,
                                   maxcor=50))
    return np.append(res.x[:d] - res.x[d:2 * d], res.x[-1])


_FREE = {"cdn": ("sqhinge", "l1"), "glmnet": ("logistic", "l1"), "lr": ("logistic", "l2")}


def _binary_fit(solver, X, t, C, bias, tol, **options):
    from linsvm.problem import CSRBuffers, Problem
    from linsvm.solvers import get_solver, make_params
    info = get_solver(solver)
    if solver == "cdn":
        options.setdefault("max_iter", 100000)
    Xb = CSRBuffers(X)
    problem = Problem.binary(Xb, np.arange(Xb.n_rows), t, np.ones(Xb.n_rows), bias)
    return info.fit(problem, make_params(info, C=C, tol=tol,
                                         options=dict(options, regularize_bias=False)),
                    None, None, None)


@pytest.mark.parametrize("solver", sorted(_FREE))
@pytest.mark.parametrize("bias", [1.0, 3.0])
def test_free_bias_of_l1_and_logistic_solvers_matches_lbfgs(solver, bias):
    """-R for cdn, glmnet and lr: the objective without the bias weight's penalty, against
    L-BFGS-B; the certificate bounds the distance at a loose tolerance too (weak duality
    against the independent f*), and an off-centre problem's intercept moves past where
    the regularized one stays."""
    kind, pen = _FREE[solver]
    X, y = random_problem(n_samples=90, n_features=8, seed=4)
    t = np.where(X @ np.ones(8) + 2.0 > 0.8, 1.0, -1.0)     # an off-centre boundary
    Xa = augmented(X, bias, dense=True)
    C, a = 0.7, 0.7 * np.ones(90)
    ref = _free_reference(kind, pen, Xa, t, a)
    fstar = _penalty(pen, ref) + _loss(kind, Xa, t, a, ref)[0]
    res = _binary_fit(solver, X, t, C, bias, 1e-12)
    w = res.weights.ravel()
    f = _penalty(pen, w) + _loss(kind, Xa, t, a, w)[0]
    assert res.converged
    assert f <= fstar * (1 + 1e-9)
    assert f == pytest.approx(fstar, rel=1e-9)
    assert res.stats["objective"] == pytest.approx(f, rel=1e-9)
    np.testing.assert_allclose(w, ref, atol=1e-4 * max(1.0, np.abs(ref).max()))
    loose = _binary_fit(solver, X, t, C, bias, 0.5, max_iter=2)
    P, D = loose.stats["objective"], loose.stats["dual_objective"]
    assert D <= fstar * (1 + 1e-10)
    assert P - fstar <= loose.stats["gap"] * P + 1e-9 * P


@pytest.mark.parametrize("code,solver", [(0, "lr"), (5, "cdn"), (6, "glmnet")])
def test_free_bias_is_liblinears_minus_R(code, solver):
    """LIBLINEAR's own -R (liblinear-official, -s 0/5/6 -R -B 1 at a tight -e) minimizes the
    same objective: linsvm's is no larger, and within 1e-7 of it."""
    ll = pytest.importorskip("liblinear.liblinearutil")
    kind, pen = _FREE[solver]
    X, _ = random_problem(n_samples=150, n_features=12, seed=8)
    t = np.where(X @ np.ones(12) + 1.0 > 0.9, 1.0, -1.0)
    Xa = augmented(X, dense=True)
    rows = [{j + 1: v for j, v in enumerate(r) if v != 0} for r in X.toarray()]
    m = ll.train(list(t), rows, f"-q -s {code} -R -B 1 -c 2 -e 1e-8")
    w_ll = np.array(list(m.get_decfun()[0]) + [m.get_decfun()[1]])
    w_ll = w_ll if m.get_labels()[0] == 1 else -w_ll
    res = _binary_fit(solver, X, t, 2.0, 1.0, 1e-11)

    def f(w):
        return _penalty(pen, w) + _loss(kind, Xa, t, 2.0 * np.ones(150), w)[0]
    assert f(res.weights.ravel()) <= f(w_ll) * (1 + 1e-12)
    assert f(res.weights.ravel()) == pytest.approx(f(w_ll), rel=1e-7)


def _softmax_free_objective(Xa, codes, W, C, cost):
    """1/2 ||W without its last (bias) row||^2 + C sum_i c_i [lse(o_i) - o_{i,y_i}]."""
    O = Xa @ W
    mx = O.max(axis=1, keepdims=True)
    lse = (mx + np.log(np.exp(O - mx).sum(axis=1, keepdims=True))).ravel()
    return 0.5 * np.sum(W[:-1] ** 2) + C * np.sum(cost * (lse - O[np.arange(len(codes)), codes]))


@pytest.mark.parametrize("bias", [1.0, 2.5])
def test_softmax_free_intercepts_match_lbfgs_and_scikit_learn(bias):
    """softmax with regularize_bias off is scikit-learn's LogisticRegression objective (the
    intercepts unpenalized): against L-BFGS on it and against scikit-learn's own lbfgs
    solve; the certificate bounds the distance at a loose tolerance too; a class without
    examples of positive cost leaves the balanced dual point feasible."""
    X, y = random_problem(n_samples=150, n_features=6, seed=11)
    codes = np.digitize(X.toarray() @ np.arange(1, 7) / 6.0, [0.45, 0.6, 0.75])   # 4 classes
    Xa = augmented(X, bias, dense=True)
    C, cost = 0.8, np.where(np.arange(150) % 5 == 0, 2.0, 1.0)

    def f(v):
        W = v.reshape(7, 4)
        O = Xa @ W
        P = np.exp(O - O.max(axis=1, keepdims=True))
        P /= P.sum(axis=1, keepdims=True)
        Y = np.eye(4)[codes]
        G = Xa.T @ (C * cost[:, None] * (P - Y))
        G[:-1] += W[:-1]
        return _softmax_free_objective(Xa, codes, W, C, cost), G.ravel()
    ref = so.minimize(f, np.zeros(28), jac=True, method="L-BFGS-B",
                      options=dict(maxiter=100000, ftol=1e-16, gtol=1e-12)).fun
    m = linsvm.train(X, codes.astype(float), solver="softmax", C=C, bias=bias, tol=1e-10,
                     sample_weight=cost, regularize_bias=False)
    W = m.weights[:, np.argsort(m.classes_)]           # columns in the order 0..3
    fm = _softmax_free_objective(Xa, codes, W, C, cost)
    assert fm <= ref * (1 + 1e-10) and fm == pytest.approx(ref, rel=1e-9)
    assert m.stats["objective"] == pytest.approx(fm, rel=1e-9)
    sk = pytest.importorskip("sklearn.linear_model").LogisticRegression(
        C=C, tol=1e-12, max_iter=100000).fit(X.toarray(), codes, sample_weight=cost)
    Wsk = np.vstack([sk.coef_.T, sk.intercept_ / bias])
    assert fm <= _softmax_free_objective(Xa, codes, Wsk, C, cost) * (1 + 1e-9)
    np.testing.assert_allclose(W[:-1], Wsk[:-1], atol=1e-5 * np.abs(Wsk).max())
    with warnings.catch_warnings():            # one Newton step: it may warn, rightly
        warnings.simplefilter("ignore")
        loose = linsvm.train(X, codes.astype(float), solver="softmax", C=C, bias=bias, tol=0.5,
                             sample_weight=cost, regularize_bias=False, max_iter=1)
    P, D = loose.stats["objective"], loose.stats["dual_objective"]
    assert D <= ref * (1 + 1e-10) and P - ref <= loose.stats["gap"] * P + 1e-9 * P
    # a class whose only examples cost nothing: its probabilities are 0 in the dual point
    zero = np.where(codes == 3, 0.0, cost)
    mz = linsvm.train(X, codes.astype(float), solver="softmax", C=C, bias=bias, tol=1e-8,
                      sample_weight=zero, regularize_bias=False)
    assert not mz.warnings and 0 <= mz.stats["gap"] <= 0.01
