"""linsvm.model.sigmoid and linsvm.fit.calibration: Platt's sigmoid (Lin, Lin & Weng 2007) against scipy.optimize,
its edge cases, calibration where the true probability is known, and out-of-fold
decision values."""
import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import minimize

import linsvm
from linsvm.cv import make_folds
from linsvm.fit.calibration import out_of_fold_decision_values
from linsvm.model.sigmoid import fit_multiclass, fit_sigmoid, multiclass_proba, sigmoid_proba


def reference_sigmoid(f, y, w=None):
    """(A, B) minimizing the same regularized cross-entropy, by scipy's BFGS on a
    loss written independently (np.logaddexp) with Platt's targets."""
    y = np.asarray(y, dtype=bool)
    w = np.ones(f.shape[0]) if w is None else w
    n_pos, n_neg = w[y].sum(), w[~y].sum()
    t = np.where(y, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))

    def loss(ab):
        z = ab[0] * f + ab[1]
        # -[t log p + (1-t) log(1-p)], p = 1/(1+e^z): log p = -log(1+e^z), log(1-p) = z - log(1+e^z)
        return np.sum(w * (np.logaddexp(0, z) - (1 - t) * z))

    def grad(ab):
        z = ab[0] * f + ab[1]
        q = 1 / (1 + np.exp(-z))                # = 1 - p
        r = w * (q - (1 - t))
        return np.array([np.dot(r, f), r.sum()])

    res = minimize(loss, np.zeros(2), jac=grad, method="BFGS", options={"gtol": 1e-11, "maxiter": 10000})
    return res.x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sigmoid_fit_matches_scipy_minimize(seed):
    rng = np.random.default_rng(seed)
    n = 300 + 100 * seed
    f = rng.normal(scale=1.5, size=n)
    y = rng.random(n) < 1 / (1 + np.exp(-1.7 * f + 0.4))
    A, B = fit_sigmoid(f, y)
    ref = reference_sigmoid(f, y)
    np.testing.assert_allclose([A, B], ref, rtol=1e-6, atol=1e-6)


def test_weighted_sigmoid_fit_matches_scipy_minimize():
    rng = np.random.default_rng(5)
    f = rng.normal(size=400)
    y = rng.random(400) < 1 / (1 + np.exp(-f))
    w = rng.uniform(0.1, 3.0, size=400)
    np.testing.assert_allclose(fit_sigmoid(f, y, w), reference_sigmoid(f, y, w), rtol=1e-6, atol=1e-6)


def test_all_decision_values_equal_gives_the_mean_target():
    # A and B are not identified (only A c + B is); the fit must still end finite,
    # with the probability at the weighted mean of Platt's targets (the optimum).
    y = np.array([1] * 30 + [0] * 70, dtype=bool)
    f = np.full(100, 0.7)
    A, B = fit_sigmoid(f, y)
    assert np.isfinite([A, B]).all()
    t_mean = (30 * 31 / 32 + 70 * (1 / 72)) / 100
    assert sigmoid_proba(0.7, A, B) == pytest.approx(t_mean, abs=1e-7)


@pytest.mark.parametrize("scale", [1e3, 1e6, 1e12])
def test_separable_data_with_huge_decision_values_stays_finite(scale):
    # Two distinct values, one per class: the optimum reproduces Platt's targets exactly,
    # p(+scale) = (N+ + 1)/(N+ + 2) and p(-scale) = 1/(N- + 2); no overflow on the way.
    y = np.array([True] * 40 + [False] * 60)
    f = np.where(y, scale, -scale)
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        A, B = fit_sigmoid(f, y)
        p = sigmoid_proba(np.array([scale, -scale]), A, B)
    assert np.isfinite([A, B]).all()
    np.testing.assert_allclose(p, [41 / 42, 1 / 62], atol=1e-6)


def test_one_tiny_class_matches_reference():
    rng = np.random.default_rng(3)
    f = rng.normal(size=1000) - 2.0
    y = np.zeros(1000, dtype=bool)
    y[np.argmax(f)] = True                      # a single positive example
    A, B = fit_sigmoid(f, y)
    np.testing.assert_allclose([A, B], reference_sigmoid(f, y), rtol=1e-6, atol=1e-6)
    # and with no positive at all: targets 1/(N-+2) everywhere; still finite, p small
    A0, B0 = fit_sigmoid(f, np.zeros(1000, dtype=bool))
    assert np.isfinite([A0, B0]).all()
    assert np.all(sigmoid_proba(f, A0, B0) < 0.01)


def test_recovers_a_known_sigmoid():
    # y ~ Bernoulli(1/(1+exp(A f + B))): with 20000 draws the fit recovers (A, B)
    # and its probabilities are within 0.02 of the true ones on the range of f.
    rng = np.random.default_rng(7)
    f = rng.normal(scale=2.0, size=20000)
    A0, B0 = -1.5, 0.3
    y = rng.random(f.shape[0]) < sigmoid_proba(f, A0, B0)
    A, B = fit_sigmoid(f, y)
    assert abs(A - A0) < 0.1 and abs(B - B0) < 0.1
    grid = np.linspace(-4, 4, 81)
    assert np.max(np.abs(sigmoid_proba(grid, A, B) - sigmoid_proba(grid, A0, B0))) < 0.02


def test_svm_probabilities_are_calibrated_when_the_truth_is_logistic():
    # Data from a logistic model in feature space (true P known per row): a linear SVM's
    # out-of-fold scores plus Platt's sigmoid give probabilities close to the truth.
    rng = np.random.default_rng(11)
    n, d = 4000, 5
    X = rng.normal(size=(n, d))
    w_true = np.array([2.0, -1.0, 0.5, 0.0, 1.0])
    p_true = 1 / (1 + np.exp(-(X @ w_true - 0.5)))
    y = np.where(rng.random(n) < p_true, 1.0, -1.0)
    classes, f = out_of_fold_decision_values(X, y, n_folds=5, solver="mfn", C=1.0)
    assert classes[0] == 1.0                    # f > 0 means +1
    A, B = fit_sigmoid(f, y > 0)
    model = linsvm.train(X, y, solver="mfn", C=1.0)
    X_new = rng.normal(size=(4000, d))
    p_new = 1 / (1 + np.exp(-(X_new @ w_true - 0.5)))
    p_hat = sigmoid_proba(model.decision_function(X_new), A, B)
    assert np.mean(np.abs(p_hat - p_new)) < 0.03
    assert np.max(np.abs(p_hat - p_new)) < 0.12


def test_multiclass_proba_rows_sum_to_one_and_each_column_is_its_sigmoid():
    rng = np.random.default_rng(2)
    S = rng.normal(size=(300, 4))
    y = np.argmax(S + rng.normal(scale=0.7, size=S.shape), axis=1)
    params = fit_multiclass(S, y)
    for j in range(4):      # class j vs the rest, the binary fit on column j
        np.testing.assert_allclose(params[j], reference_sigmoid(S[:, j], y == j), rtol=1e-6, atol=1e-6)
    P = multiclass_proba(S, params)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    raw = sigmoid_proba(S, params[:, 0], params[:, 1])
    np.testing.assert_allclose(P, raw / raw.sum(axis=1, keepdims=True))
    # a row whose sigmoids all underflow gets the uniform distribution, not NaN
    P0 = multiclass_proba(np.full((1, 4), 1e308), np.array([[1.0, 0.0]] * 4))
    np.testing.assert_allclose(P0, 0.25)


def test_multiclass_fit_skips_missing_scores():
    rng = np.random.default_rng(4)
    S = rng.normal(size=(200, 3))
    y = rng.integers(0, 3, size=200)
    S2 = S.copy()
    S2[:20, 1] = np.nan
    params = fit_multiclass(S2, y)
    np.testing.assert_allclose(params[1], fit_sigmoid(S[20:, 1], y[20:] == 1))
    np.testing.assert_allclose(params[0], fit_sigmoid(S[:, 0], y == 0))


def test_out_of_fold_values_come_from_models_that_did_not_see_the_row():
    rng = np.random.default_rng(6)
    X = sp.random(150, 20, density=0.3, random_state=6, format="csr")
    y = np.where(X @ rng.normal(size=20) + 0.1 * rng.normal(size=150) > 0, 1.0, -1.0)
    classes, f = out_of_fold_decision_values(X, y, n_folds=3, seed=9, solver="dcd", C=0.5)
    fold = make_folds(y, 3, seed=9)
    for i in range(3):
        held = fold == i
        m = linsvm.train(X[~held], y[~held], solver="dcd", C=0.5, seed=9)
        s = m.decision_function(X[held])
        np.testing.assert_allclose(f[held], s if m.classes_[0] == classes[0] else -s, rtol=1e-9, atol=1e-12)
    full = linsvm.train(X, y, solver="dcd", C=0.5, seed=9).decision_function(X)
    assert not np.allclose(f, full)             # not the in-sample values


def test_out_of_fold_multiclass_leaves_a_class_missing_from_a_fold_as_nan():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(60, 4))
    y = np.repeat([0.0, 1.0, 2.0], 20)
    y[0] = 3.0                                  # one example of class 3: its fold cannot learn it
    classes, S = out_of_fold_decision_values(X, y, n_folds=4, solver="mfn")
    assert S.shape == (60, 4)
    col = int(np.flatnonzero(classes == 3.0)[0])
    fold = make_folds(y, 4, seed=0)
    held = fold == fold[0]
    assert np.isnan(S[held, col]).all() and not np.isnan(S[~held]).any()
    assert not np.isnan(np.delete(S, col, axis=1)).any()
