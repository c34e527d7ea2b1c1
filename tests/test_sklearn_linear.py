"""linsvm.sklearn: LinearSVR and OneClassSVM against scikit-learn's
own estimators on the same objective, scikit-learn's estimator checks, and for every
estimator predictions that follow coef_ / intercept_, sparsify / densify and verbose."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from scipy.optimize import minimize                               # noqa: E402
from sklearn import svm                                           # noqa: E402
from sklearn.base import clone                                    # noqa: E402
from sklearn.datasets import load_diabetes, load_iris             # noqa: E402
from sklearn.exceptions import NotFittedError                     # noqa: E402
from sklearn.metrics import r2_score                              # noqa: E402
from sklearn.model_selection import GridSearchCV                  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import linsvm                                                     # noqa: E402
from linsvm.sklearn import LinearSVC, LinearSVR, OneClassSVM, OrdinalSVM, RankSVM  # noqa: E402

_TOLERANCE = ("the solver stops at its stopping tolerance (-e); integer weights and repeated "
              "rows have the same optimum, but the two solves stop at points farther apart "
              "than rtol 1e-7 (test_sample_weights_equal_repeated_rows_at_a_tight_tol checks "
              "the equivalence)")


def _expected_failed_checks(est):
    if isinstance(est, LinearSVR):
        return {"check_sample_weight_equivalence_on_dense_data": _TOLERANCE,
                "check_sample_weight_equivalence_on_sparse_data": _TOLERANCE}
    return {}


@parametrize_with_checks([LinearSVR(), LinearSVR(loss="squared_epsilon_insensitive"),
                          LinearSVR(loss="squared_epsilon_insensitive", dual=True),
                          OneClassSVM()],
                         expected_failed_checks=_expected_failed_checks)
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# ---------------------------------------------------------------- LinearSVR

LOSS_DUAL = [("epsilon_insensitive", True), ("squared_epsilon_insensitive", True),
             ("squared_epsilon_insensitive", False)]


@pytest.mark.slow
@pytest.mark.parametrize("loss, dual", LOSS_DUAL)
@pytest.mark.parametrize("fit_intercept, scaling", [(True, 1.0), (True, 10.0), (False, 1.0)])
def test_linear_svr_equals_scikit_learns_on_its_objective(loss, dual, fit_intercept, scaling):
    """regularize_intercept=True is scikit-learn's LinearSVR objective (LIBLINEAR's, the
    intercept's weight regularized, its feature of value intercept_scaling): at a tight
    tolerance both find the same optimum."""
    if loss == "epsilon_insensitive" and scaling > 1:
        pytest.skip("a large bias feature slows dual coordinate descent on the absolute loss: "
                    "neither LIBLINEAR (1e6 loops) nor svr-dual (1e5) reach -e 1e-10 here")
    X, y = load_diabetes(return_X_y=True)
    X, y = X[:200], y[:200] / 100.0
    kw = dict(C=10.0, epsilon=0.1, loss=loss, dual=dual, fit_intercept=fit_intercept,
              intercept_scaling=scaling)
    ours = LinearSVR(tol=1e-10, max_iter=100000, regularize_intercept=True, **kw).fit(X, y)
    ref = svm.LinearSVR(tol=1e-10, max_iter=1000000, random_state=0, **kw).fit(X, y)
    scale = np.abs(ref.coef_).max()
    np.testing.assert_allclose(ours.coef_, ref.coef_, atol=1e-5 * scale)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, atol=1e-5 * max(scale, 1.0))
    assert ours.coef_.shape == ref.coef_.shape == (X.shape[1],)
    assert ours.intercept_.shape == (1,)
    np.testing.assert_allclose(ours.predict(X), X @ ours.coef_ + ours.intercept_[0], rtol=1e-12)
    assert ours.score(X, y) == pytest.approx(r2_score(y, ours.predict(X)), rel=1e-12)
    assert ours.model_.solver == ("svr-dual" if dual else "svr")


def test_linear_svr_free_intercept_solves_its_objective():
    """The default (regularize_intercept=False) with the squared loss: svr's free
    intercept, checked against scipy's minimum of 1/2 ||w||^2 + C sum (|r| - p)_+^2 with
    the intercept b left out of the regularizer."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 5))
    y = X @ rng.normal(size=5) + 50.0 + 0.3 * rng.normal(size=80)     # far from zero
    C, p = 0.5, 0.2

    def f(v):
        r = np.abs(y - X @ v[:5] - v[5]) - p
        return 0.5 * v[:5] @ v[:5] + C * np.sum(np.maximum(r, 0) ** 2)

    ref = minimize(f, np.zeros(6), method="BFGS", options={"gtol": 1e-10}).x
    est = LinearSVR(C=C, epsilon=p, loss="squared_epsilon_insensitive", tol=1e-12).fit(X, y)
    np.testing.assert_allclose(est.coef_, ref[:5], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(est.intercept_[0], ref[5], rtol=1e-7)
    # the same model with the intercept regularized cannot reach far targets at this C
    trap = LinearSVR(C=C, epsilon=p, loss="squared_epsilon_insensitive", tol=1e-12,
                     regularize_intercept=True).fit(X, y)
    assert trap.score(X, y) < est.score(X, y) - 0.05
    # the absolute loss, dual: targets centered (svr-dual's center_targets)
    dual = LinearSVR(C=C, epsilon=p).fit(X, y)
    assert dual.model_.params["center_targets"] is True and dual.score(X, y) > 0.9
    assert dual.score(X, y) > LinearSVR(C=C, epsilon=p, regularize_intercept=True).fit(X, y).score(X, y)


@pytest.mark.parametrize("loss, dual", LOSS_DUAL)
def test_sample_weights_equal_repeated_rows_at_a_tight_tol(loss, dual):
    rng = np.random.RandomState(42)
    X = rng.rand(15, 30)
    y = rng.randint(0, 3, size=15).astype(float)
    sw = rng.randint(0, 5, size=15)
    kw = dict(loss=loss, dual=dual, tol=1e-10, max_iter=100000)
    a = LinearSVR(**kw).fit(X, y, sample_weight=sw)
    b = LinearSVR(**kw).fit(X.repeat(sw, axis=0), y.repeat(sw))
    np.testing.assert_allclose(a.predict(X), b.predict(X), rtol=1e-7, atol=1e-8)


def test_linear_svr_parameters_reach_the_solver_and_bad_ones_are_refused():
    X, y = load_diabetes(return_X_y=True)
    est = LinearSVR(epsilon=0.5, C=2.0, max_iter=7, random_state=3,
                    solver_options={"shrinking": False}).fit(X, y / 100)
    p = est.model_.params
    assert (p["epsilon"], p["C"], p["max_iter"], p["seed"], p["shrinking"], p["loss"]) == \
        (0.5, 2.0, 7, 3, False, "l1")
    assert est.model_.bias == 1.0
    assert LinearSVR(fit_intercept=False).fit(X, y).intercept_[0] == 0.0
    assert LinearSVR(intercept_scaling=5.0).fit(X, y).model_.bias == 5.0
    with pytest.raises(ValueError, match="Unsupported set of arguments.*dual=False"):
        LinearSVR(dual=False).fit(X, y)
    with pytest.raises(ValueError, match="loss must be one of"):
        LinearSVR(loss="hinge").fit(X, y)
    with pytest.raises(ValueError, match="intercept_scaling"):
        LinearSVR(intercept_scaling=0.0).fit(X, y)
    with pytest.raises(ValueError, match="epsilon"):
        LinearSVR(epsilon=-1.0).fit(X, y)
    with pytest.raises(ValueError, match="dual"):
        LinearSVR(dual="yes").fit(X, y)


def test_linear_svr_warm_start_continues_from_the_previous_fit():
    # along a fine path of C, as a search steps it: between C = 0.1, 0.3, 1, 3 the zones
    # of the tube change so much that a Newton solve from the previous fit takes about
    # as many steps as a cold one (25 against 26 steps; 23 against 23 with the guarded
    # forcing term, whose cold solves take fewer)
    X, y = load_diabetes(return_X_y=True)
    for kw in (dict(loss="squared_epsilon_insensitive", tol=1e-8),
               dict(loss="epsilon_insensitive", tol=1e-3)):
        warm = LinearSVR(warm_start=True, **kw)
        warm_iters = cold_iters = 0
        for C in (1.0, 1.1, 1.2, 1.3):
            warm.set_params(C=C).fit(X, y)
            cold = LinearSVR(C=C, **kw).fit(X, y)
            np.testing.assert_allclose(warm.model_.objective, cold.model_.objective, rtol=1e-3)
            warm_iters += warm.n_iter_
            cold_iters += cold.n_iter_
        assert warm_iters < cold_iters, kw


def test_linear_svr_in_a_grid_search():
    X, y = load_diabetes(return_X_y=True)
    grid = GridSearchCV(LinearSVR(loss="squared_epsilon_insensitive"),
                        {"C": [0.1, 10.0], "epsilon": [0.0, 1.0]}, cv=3).fit(X, y)
    assert grid.best_score_ > 0.4


# ---------------------------------------------------------------- OneClassSVM

def _rho_interval(a, scores, tol):
    """The thresholds rho that satisfy the KKT conditions of the scaled dual for the
    scores w.x_i of dual point a (0 <= a <= 1): a_i < 1 needs w.x_i >= rho, a_i > 0
    needs w.x_i <= rho (to the solver's tolerance)."""
    lo = scores[a > tol].max() if np.any(a > tol) else -np.inf
    hi = scores[a < 1 - tol].min() if np.any(a < 1 - tol) else np.inf
    return min(lo, hi), max(lo, hi)


@pytest.mark.parametrize("nu", [0.1, 0.3, 0.7])
def test_one_class_svm_equals_scikit_learns_linear_one_class(nu):
    """LIBSVM (scikit-learn's OneClassSVM(kernel="linear")) solves the same dual in the
    same scale (0 <= a_i <= 1, sum a_i = nu n): the same w; rho is unique only up to the
    KKT interval, and both lie in it; predictions agree off the boundary."""
    X = load_iris().data
    ours = OneClassSVM(nu=nu, tol=1e-9).fit(X)
    ref = svm.OneClassSVM(kernel="linear", nu=nu, tol=1e-9).fit(X)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-6, atol=1e-6 * np.abs(ref.coef_).max())
    assert ours.coef_.shape == (1, 4) and ours.intercept_.shape == (1,)
    a = np.zeros(X.shape[0])
    a[ref.support_] = np.abs(ref.dual_coef_[0])
    s = X @ ref.coef_[0]
    lo, hi = _rho_interval(a, s, 1e-8)
    for rho in (ours.offset_, float(-ref.intercept_[0])):
        assert lo - 1e-6 * abs(lo) <= rho <= hi + 1e-6 * abs(hi)
    d = ours.decision_function(X)
    np.testing.assert_allclose(d, X @ ours.coef_[0] - ours.offset_, rtol=1e-12)
    np.testing.assert_allclose(ours.score_samples(X), d + ours.offset_)
    clear = np.abs(ref.decision_function(X)) > 1e-3 * np.abs(s).max()
    np.testing.assert_array_equal(ours.predict(X)[clear], ref.predict(X)[clear])
    # the nu property: training outliers <= nu <= support vectors
    assert np.mean(ours.predict(X) == -1) <= nu + 1e-9
    assert ours.model_.stats["sv_fraction"] >= nu - 1e-9


def test_one_class_svm_predictions_and_sparse_input():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 6)) + 3.0
    est = OneClassSVM(nu=0.2).fit(X)
    Xs = sp.csr_matrix(X)
    np.testing.assert_allclose(OneClassSVM(nu=0.2).fit(Xs).coef_, est.coef_, rtol=1e-12)
    np.testing.assert_allclose(est.decision_function(Xs), est.decision_function(X), rtol=1e-12,
                               atol=1e-12 * np.abs(est.offset_))
    assert set(np.unique(est.predict(X))) == {-1, 1} and est.predict(X).dtype.kind == "i"
    np.testing.assert_array_equal(est.fit_predict(X), est.predict(X))
    assert est.offset_ == pytest.approx(-est.model_.intercept_[0])
    with pytest.raises(ValueError, match="nu"):
        OneClassSVM(nu=1.5).fit(X)
    with pytest.raises(ValueError, match="nu"):
        OneClassSVM(nu=0.0).fit(X)


# ---------------------------------------------------------------- every estimator

def _fitted_estimators():
    """(estimator, X, decision method) for every estimator and output shape."""
    rng = np.random.default_rng(2)
    X = rng.normal(size=(120, 5))
    z = X @ np.array([1.0, -2.0, 0.5, 0.0, 1.0])
    yb = (z > 0).astype(int)
    ym = np.digitize(z, [-1.0, 1.0])
    groups = np.repeat(np.arange(12), 10)
    return [
        (LinearSVC().fit(X, yb), X, "decision_function"),
        (LinearSVC().fit(X, ym), X, "decision_function"),
        (LinearSVC(solver="sdm-cs").fit(X, yb), X, "decision_function"),
        (LinearSVC(probability=True).fit(X, ym), X, "decision_function"),
        (OrdinalSVM().fit(X, ym), X, "decision_function"),
        (RankSVM().fit(X, z.round(1), groups=groups), X, "predict"),
        (LinearSVR().fit(X, z + 5.0), X, "predict"),
        (LinearSVR(loss="squared_epsilon_insensitive").fit(X, z), X, "predict"),
        (OneClassSVM(nu=0.3).fit(X + 2.0), X + 2.0, "decision_function"),
    ]


def test_predictions_follow_coef_and_intercept():
    """scikit-learn's linear models predict from coef_ / intercept_: so does every
    linsvm estimator (setting them changes decision values, labels, probabilities)."""
    for est, X, method in _fitted_estimators():
        before = getattr(est, method)(X)
        coef = np.asarray(est.coef_)
        expect = X @ coef.T + est.intercept_
        np.testing.assert_allclose(before, expect.reshape(before.shape), rtol=1e-9, atol=1e-10)
        est.coef_ = 2.0 * coef
        est.intercept_ = est.intercept_ - 1.0
        after = getattr(est, method)(X)
        np.testing.assert_allclose(after, (X @ (2 * coef).T + est.intercept_).reshape(before.shape),
                                   rtol=1e-9, atol=1e-10)
        if hasattr(est, "predict") and method != "predict":
            est.predict(X)          # follows too (below for the labels)
    svc, X, _ = _fitted_estimators()[0]
    svc.coef_ = -svc.coef_
    svc.intercept_ = -svc.intercept_
    np.testing.assert_array_equal(svc.predict(X), svc.classes_[(svc.decision_function(X) > 0).astype(int)])
    assert np.mean(svc.predict(X) == (X @ np.array([1.0, -2.0, 0.5, 0.0, 1.0]) > 0)) < 0.2
    proba, X, _ = _fitted_estimators()[3]
    P = proba.predict_proba(X)
    proba.coef_ = np.zeros_like(proba.coef_)
    proba.intercept_ = np.zeros_like(proba.intercept_)
    P0 = proba.predict_proba(X)
    assert not np.allclose(P, P0) and np.allclose(P0, P0[0])      # every row alike
    ocs, X, _ = _fitted_estimators()[-1]
    ocs.intercept_ = np.array([-1e9])
    assert ocs.offset_ == 1e9 and np.all(ocs.predict(X) == -1)


def test_sparsify_and_densify_keep_predictions():
    for est, X, method in _fitted_estimators():
        before = getattr(est, method)(X)
        dense = np.asarray(est.coef_).copy()
        assert est.sparsify() is est and sp.issparse(est.coef_) and est.coef_.format == "csr"
        np.testing.assert_allclose(getattr(est, method)(X), before, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(getattr(est, method)(sp.csr_matrix(X)), before, rtol=1e-12,
                                   atol=1e-12)
        assert est.densify() is est and isinstance(est.coef_, np.ndarray)
        np.testing.assert_array_equal(est.coef_, dense)
        assert est.coef_.shape == dense.shape
    with pytest.raises(NotFittedError):
        LinearSVR().sparsify()
    # a warm start continues from model_ (the trained weights and solver state), sparse coef_ or not
    X, y = load_diabetes(return_X_y=True)
    est = LinearSVR(loss="squared_epsilon_insensitive", warm_start=True, tol=1e-8).fit(X, y)
    cold_iters = est.n_iter_
    est.sparsify().fit(X, y)
    assert isinstance(est.coef_, np.ndarray) and est.n_iter_ < cold_iters
    with pytest.raises(NotFittedError):
        OneClassSVM().densify()


def test_a_score_that_overflows_names_the_row():
    X = np.ones((3, 2))
    est = LinearSVR().fit(X * [[1], [2], [3]], [1.0, 2.0, 3.0])
    est.coef_ = np.array([1e308, 1e308])
    with pytest.raises(linsvm.DataError, match="not finite"):
        est.predict(X)


@pytest.mark.parametrize("make", [
    lambda: (LinearSVC(verbose=1), "fit_c"),
    lambda: (OrdinalSVM(verbose=1), "fit_c"),
    lambda: (RankSVM(verbose=1), "fit_c"),
    lambda: (LinearSVR(verbose=1), "fit_r"),
    lambda: (LinearSVR(verbose=2, loss="squared_epsilon_insensitive"), "fit_r"),
    lambda: (OneClassSVM(verbose=1), "fit_o"),
])
def test_verbose_prints_the_solvers_lines_to_stderr(make, capsys):
    est, how = make()
    rng = np.random.default_rng(3)
    X = rng.normal(size=(100, 4))
    y = (X[:, 0] > 0).astype(int)
    fit = {"fit_c": lambda e: e.fit(X, y), "fit_r": lambda e: e.fit(X, X[:, 0]),
           "fit_o": lambda e: e.fit(X + 3.0)}[how]
    fit(est)
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.splitlines()
    assert len(lines) >= 2
    assert lines[-1].startswith(f"{est.model_.solver}: objective = ")
    fit(clone(est).set_params(verbose=0))
    assert capsys.readouterr() == ("", "")
    with pytest.raises(ValueError, match="verbose"):
        fit(clone(est).set_params(verbose=-1))


def test_no_warnings_at_the_defaults_on_easy_data():
    X, y = load_diabetes(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        LinearSVR().fit(X, y)
        LinearSVR(loss="squared_epsilon_insensitive").fit(X, y)
        OneClassSVM().fit(load_iris().data)


@pytest.mark.parametrize("solver, k", [("mfn", 2), ("mfn", 4), ("sdm-cs", 2), ("sdm-cs", 4)])
def test_predict_proba_from_coef_equals_the_trained_models(solver, k):
    """Until coef_ is edited, probabilities from coef_ / intercept_ are those of model_
    (the sigmoids applied to its own decision values, columns mapped to classes_), for
    one-column, two-column (a multi-class solver on two classes) and k-column models,
    with labels in any order."""
    rng = np.random.default_rng(k)
    X = rng.normal(size=(240, 5))
    y = np.argmax(X @ rng.normal(size=(5, k)) + 0.5 * rng.normal(size=(240, k)), axis=1)
    labels = np.array(["d", "b", "a", "c"])[:k]
    est = LinearSVC(solver=solver, probability=True).fit(X, labels[y])
    m = est.model_
    names = dict(zip(range(k), labels))
    # model_'s classes are codes: -1/+1 for two classes (+1 = classes_[1]), else 0..k-1
    model_labels = ([est.classes_[1] if c == 1 else est.classes_[0] for c in m.classes_] if k == 2
                    else [est.classes_[int(c)] for c in m.classes_])
    P_model = m.predict_proba(X)
    P = est.predict_proba(X)
    for j, label in enumerate(est.classes_):
        np.testing.assert_allclose(P[:, j], P_model[:, model_labels.index(label)], rtol=1e-10,
                                   atol=1e-12)
    assert sorted(names.values()) == list(est.classes_)
