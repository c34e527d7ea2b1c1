"""Certified or warned, whatever the weights and the scale of the features.

docs/solvers.md's rule: every solver at its defaults ends within 1% of its optimum,
certified, or warns.  Here it is checked on tiny binary problems (a few examples, one to
three features) with class weights and example weights from 1e-6 to 1e6 and every
feature value multiplied by a scale from 1e-300 to 1e300.  The optimum is found
independently, by scipy on the objective written out below in NumPy: any point scipy
returns is an upper bound f_ref >= F*, so a certified result (F - F*) <= 0.01 F must have
F <= f_ref / 0.99 -- unless the solve warned (linsvm.ConvergenceWarning) or refused the
data because a row's squared norm overflows double precision (then numpy's does too).

The same rule is checked below for the regressors (svr, svr-dual), the multi-class
solvers (sdm-cs, sdm-ww, softmax) and the L1-regularized ones (cdn, glmnet), each
objective first checked equal to the stats['objective'] linsvm reports.

Scaling: with X multiplied by s the weights of the features are about 1/s.  For s > 1
scipy works in v = s w (the objective 1/2 ||v||^2 / s^2 + 1/2 b^2 + loss(X v + B b)), for
s <= 1 in w itself, so that its variables stay near 1.
"""
import math
import warnings

import numpy as np
import pytest
import scipy.optimize as so

import linsvm
from linsvm.errors import DataError

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

C = 1.0
BIAS = 1.0


def _sq_hinge(m):
    z = np.maximum(0.0, 1.0 - m)
    return z * z, -2.0 * z


def _hinge_smooth(m, tau=1e-6):
    """A smoothing of max(0, 1 - m) from above by at most tau / 2 (for scipy's search);
    the reference is evaluated on the exact hinge afterwards."""
    z = 1.0 - m
    val = np.where(z <= 0, 0.0, np.where(z < tau, z * z / (2 * tau), z - tau / 2))
    return val, -np.clip(z / tau, 0.0, 1.0)


def _hinge(m):
    return np.maximum(0.0, 1.0 - m), None


def _least_squares(m):
    return (1.0 - m) ** 2, -2.0 * (1.0 - m)


def _huber(m):
    """2 L_h(1 - m), L_h the modified Huber loss (eq. 21): xi^2/2 on (0, 2), 2(xi - 1) beyond."""
    xi = 1.0 - m
    val = np.where(xi <= 0, 0.0, np.where(xi < 2, xi * xi / 2, 2 * (xi - 1)))
    slope = np.where(xi <= 0, 0.0, np.where(xi < 2, xi, 2.0))
    return 2 * val, -2 * slope


def _logistic(m):
    return np.logaddexp(0.0, -m), -np.exp(-np.logaddexp(0.0, m))


# solver (and options) -> (the loss as linsvm writes it, the smooth loss scipy minimizes)
SOLVERS = {
    ("mfn", ()): (_sq_hinge, _sq_hinge),
    ("dcd", (("loss", "l2"),)): (_sq_hinge, _sq_hinge),
    ("ls", ()): (_least_squares, _least_squares),
    ("mfn-huber", ()): (_huber, _huber),
    ("mfn-l1", ()): (_hinge, _hinge_smooth),
    ("dcd", ()): (_hinge, _hinge_smooth),
    ("perf", ()): (_hinge, _hinge_smooth),
    ("alm", ()): (_hinge, _hinge_smooth),
    ("lr", ()): (_logistic, _logistic),
    ("lr-dual", ()): (_logistic, _logistic),
}


def objective(loss, Xs, t, U, w, b):
    """1/2 (||w||^2 + b^2) + sum_i U_i loss(t_i (Xs w + B b)), written out here."""
    return 0.5 * (w @ w + b * b) + float(U @ loss(t * (Xs @ w + BIAS * b))[0])


def reference(loss, X, s, t, U):
    """An upper bound on the optimum: scipy's L-BFGS-B on the objective in well-scaled
    variables (module docstring), evaluated back in (w, b) on the exact loss."""
    big = s > 1.0
    A = X if big else X * s
    reg = 1.0 / (s * s) if big else 1.0

    def f(z):
        v, b = z[:-1], z[-1]
        val, slope = loss(t * (A @ v + BIAS * b))
        u = U * slope * t
        return (0.5 * reg * v @ v + 0.5 * b * b + float(U @ val),
                np.append(reg * v + A.T @ u, b + BIAS * float(u.sum())))

    z = so.minimize(f, np.zeros(X.shape[1] + 1), jac=True, method="L-BFGS-B",
                    options={"maxiter": 5000, "gtol": 1e-12, "ftol": 1e-15}).x
    w = z[:-1] / s if big else z[:-1]
    return w, z[-1]


# L1-regularized (cdn, glmnet): ||w||_1 + |b| + sum_i U_i loss(t_i (Xs w + B b)), the bias
# weight regularized too; scipy minimizes it smoothly in the split w = u - v, u, v >= 0.
L1_SOLVERS = {("cdn", ()): _sq_hinge, ("glmnet", ()): _logistic}


def l1_objective(loss, Xs, t, U, w, b):
    """||w||_1 + |b| + sum_i U_i loss(t_i (Xs w + B b)), written out here."""
    return float(np.abs(w).sum() + abs(b)) + float(U @ loss(t * (Xs @ w + BIAS * b))[0])


def l1_reference(loss, X, s, t, U):
    """An upper bound on the L1 optimum: L-BFGS-B with bounds u, v >= 0 on the smooth
    split [w; b] = u - v, in the variables of `reference` (for s > 1 in v = s w, whose
    L1 weight is then 1/s), evaluated back in (w, b)."""
    d = X.shape[1]
    big = s > 1.0
    A = np.hstack([X if big else X * s, np.full((X.shape[0], 1), BIAS)])
    lam = np.append(np.full(d, 1.0 / s if big else 1.0), 1.0)

    def f(z):
        x = z[:d + 1] - z[d + 1:]
        val, slope = loss(t * (A @ x))
        g = A.T @ (U * slope * t)
        return float(lam @ (z[:d + 1] + z[d + 1:]) + U @ val), np.concatenate([lam + g, lam - g])

    z = so.minimize(f, np.zeros(2 * (d + 1)), jac=True, method="L-BFGS-B",
                    bounds=[(0.0, None)] * (2 * (d + 1)),
                    options={"maxiter": 5000, "gtol": 1e-12, "ftol": 1e-15}).x
    x = z[:d + 1] - z[d + 1:]
    return (x[:d] / s if big else x[:d]), x[d]


@st.composite
def problems(draw):
    """(X, y, scale, class_weight, sample_weight): a tiny binary problem with noisy
    linear labels, weights log-uniform in [1e-6, 1e6] (or none), one scale 10^k."""
    n = draw(st.integers(6, 24))
    d = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2 ** 16))
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n) > 0, 1.0, -1.0)
    y[0], y[1] = 1.0, -1.0                                 # both classes
    weight = st.floats(-6.0, 6.0).map(lambda e: 10.0 ** e)
    class_weight = draw(st.one_of(st.none(), st.fixed_dictionaries({1.0: weight, -1.0: weight})))
    sample_weight = None
    if draw(st.booleans()):
        sample_weight = np.ones(n)
        for k in draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3)):
            sample_weight[k] = draw(weight)
    scale = 10.0 ** draw(st.sampled_from([-300, -150, -20, -3, 0, 3, 20, 100, 150, 153, 155,
                                          200, 300]))
    return X, y, scale, class_weight, sample_weight


def solve_or_refuse(Xs, y, squares, name, **kwargs):
    """linsvm.train(Xs, y, solver=name, **kwargs) and what the rule lets pass before any
    optimum is compared: ("refused", None) for a one-line overflow refusal (a row's
    squared norm refused only where numpy's `squares` overflow too), ("warned", model)
    for a ConvergenceWarning, (None, model) otherwise, its scores finite."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = linsvm.train(Xs, y, solver=name, **kwargs)
        except DataError as exc:
            assert "overflow" in str(exc) and "\n" not in str(exc)
            if "squared norm" in str(exc):                # refused before the solve
                assert not np.all(np.isfinite(squares)) or squares.max() > 1e307
            return "refused", None
    assert np.all(np.isfinite(squares))
    assert np.all(np.isfinite(model.decision_function(Xs)))
    if any(issubclass(w.category, linsvm.ConvergenceWarning) for w in caught):
        return "warned", model
    return None, model


def check_certified_or_warned(X, y, s, class_weight, sample_weight, solver):
    """The rule of the module docstring for one solve of X * s."""
    name, options = solver
    l1 = solver in L1_SOLVERS
    loss, smooth = (L1_SOLVERS[solver], L1_SOLVERS[solver]) if l1 else SOLVERS[solver]
    Xs = X * s
    with np.errstate(over="ignore"):
        squares = np.sum(Xs * Xs, axis=1) + BIAS * BIAS
    verdict, model = solve_or_refuse(Xs, y, squares, name, C=C, class_weight=class_weight,
                                     sample_weight=sample_weight, **dict(options))
    if verdict is not None:
        return verdict                                    # refused, or warned: nothing promised
    t = np.where(y == model.classes_[0], 1.0, -1.0)
    c = np.ones_like(y) if sample_weight is None else sample_weight.copy()
    if class_weight:
        c *= np.where(y > 0, class_weight[1.0], class_weight[-1.0])
    U = C * c
    W = model.weights[:, 0]
    value, solve = (l1_objective, l1_reference) if l1 else (objective, reference)
    F = value(loss, Xs, t, U, W[:-1], W[-1])
    w_ref, b_ref = solve(smooth, X, s, t, U)
    f_ref = value(loss, Xs, t, U, w_ref, b_ref)
    assert math.isfinite(F)
    assert F <= f_ref / 0.99 * (1 + 1e-9) + 1e-300, (name, F, f_ref, (F - f_ref) / f_ref)
    return "certified"


@pytest.mark.slow
@settings(max_examples=40, deadline=None, derandomize=True)
@given(case=problems(), solver=st.sampled_from(sorted(SOLVERS)))
def test_every_certified_solver_is_within_1pct_or_warns_under_weights_and_scales(case, solver):
    check_certified_or_warned(*case, solver)


def test_l1_objectives_written_here_are_the_ones_linsvm_reports():
    """On a plain weighted problem l1_objective equals cdn's and glmnet's
    stats['objective'] (the bias weight in the L1 norm)."""
    rng = np.random.default_rng(0)
    X, sw = rng.standard_normal((30, 3)), rng.uniform(0.5, 2.0, 30)
    y = np.where(X @ np.array([1.0, -2.0, 0.5]) + 0.5 * rng.standard_normal(30) + 0.7 > 0,
                 1.0, -1.0)
    cw = {1.0: 2.0, -1.0: 0.5}
    for (name, options), loss in L1_SOLVERS.items():
        model = linsvm.train(X, y, solver=name, C=C, class_weight=cw, sample_weight=sw)
        t = np.where(y == model.classes_[0], 1.0, -1.0)
        U = C * sw * np.where(y > 0, cw[1.0], cw[-1.0])
        W = model.weights[:, 0]
        F = l1_objective(loss, X, t, U, W[:-1], W[-1])
        assert math.isclose(F, model.stats["objective"], rel_tol=1e-9), name


# Scale 1, one example weighing 1e4 times the others: glmnet on x = (1, 0), y = (+1, -1)
# reported objective 30.669 (its own gap 0.66) for an optimum of 10.9034 (w = 9.2102, b = 0;
# Nelder-Mead agrees: +181%); weight 1e6: 2038.5 for 15.509.  cdn on the six examples:
# 26.220 (gap 0.92) for 15.310 (w = 1.7335, b = 0.7813: +71%).  All three silently, before
# the heavy-cost rounds (linsvm.solvers.l1).  No weights, separable x = 1e3 (1, -1, 2,
# -0.5), y = (+1, -1, +1, -1): glmnet 0.021229 (gap 0.32) for 0.014435 (w = 0.012441,
# b = 0; a 1-D search agrees: +47%), before the rounds of the subgradient bound; at scale
# 1e10 0.011266 for 4.67e-9.
L1_SIX_X = np.array([[0.12573022], [-0.13210486], [0.64042265], [0.10490012], [-0.53566937],
                     [0.36159505]])
L1_SIX_Y = np.array([1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
L1_HEAVY_CASES = [
    ("glmnet", np.array([[1.0], [0.0]]), np.array([1.0, -1.0]), 1.0, np.array([1e4, 1.0])),
    ("glmnet", np.array([[1.0], [0.0]]), np.array([1.0, -1.0]), 1.0, np.array([1e6, 1.0])),
    ("cdn", L1_SIX_X, L1_SIX_Y, 1.0, np.array([1e4, 1.0, 1.0, 1.0, 1.0, 1.0])),
]


@pytest.mark.parametrize("solver, X, y, scale, sample_weight", L1_HEAVY_CASES,
                         ids=["glmnet-weight-1e4", "glmnet-weight-1e6", "cdn-weight-1e4"])
def test_l1_solver_under_one_heavy_example_is_within_1pct_or_warns(solver, X, y, scale,
                                                                  sample_weight):
    check_certified_or_warned(X, y, scale, None, sample_weight, (solver, ()))


def test_l1_solver_under_one_heavy_example_goes_on_to_the_optimum():
    """The first heavy case needs two tenfold tighter rounds, and then its answer is
    certified: within 1% of the optimum with no warning (it was 181% above it)."""
    solver, X, y, scale, sample_weight = L1_HEAVY_CASES[0]
    assert check_certified_or_warned(X, y, scale, None, sample_weight, (solver, ())) == \
        "certified"
    model = linsvm.train(X, y, solver=solver, C=C, sample_weight=sample_weight)
    assert model.stats["settle_rounds"] >= 1
    assert model.stats["objective"] <= 10.9034 * 1.01


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("solver", ["cdn", "glmnet"])
def test_l1_solver_under_a_class_weight_of_100_is_within_1pct_or_warns(solver, seed):
    """A class weight of 100 on the minority: LIBLINEAR's rule alone ended 1.8-8% above the
    optimum, silently, on four of these eight problems."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((40, 3)) * 3
    y = np.where(X @ np.array([1.0, -2.0, 0.5]) + 2.0 * rng.standard_normal(40) - 3 > 0,
                 1.0, -1.0)
    check_certified_or_warned(X, y, 1.0, {1.0: 100.0, -1.0: 1.0}, None, (solver, ()))


def test_l1_solver_under_costs_spanning_less_than_100x_runs_no_heavy_cost_round():
    """Costs spanning 99x: no round for the costs (its log never names them); rounds, if
    any, come from the subgradient bound; equal costs on non-separable rows: none."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3))
    y = np.where(X[:, 0] > 0, 1.0, -1.0)
    noisy = np.where(X[:, 0] + rng.standard_normal(40) > 0, 1.0, -1.0)
    for solver in ("cdn", "glmnet"):
        lines = []
        linsvm.train(X, y, solver=solver, C=C, class_weight={1.0: 99.0}, log=lines.append)
        assert not any("costs spanning" in line for line in lines)
        model = linsvm.train(X, noisy, solver=solver, C=C)
        assert model.stats["subgradient_bound"] < 0.1
        assert model.stats["settle_rounds"] == 0


def test_glmnet_on_separable_data_at_a_large_feature_scale_is_within_1pct_or_warns():
    """The rule alone stopped 47% above the optimum here, silently; its subgradient bound
    (about 1.1) sends the solve on."""
    X = np.array([[1.0], [-1.0], [2.0], [-0.5]])
    check_certified_or_warned(X, np.array([1.0, -1.0, 1.0, -1.0]), 1e3, None, None,
                              ("glmnet", ()))


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True)
@given(case=problems(), solver=st.sampled_from(sorted(L1_SOLVERS)))
def test_every_l1_solver_is_within_1pct_or_warns_under_weights_and_scales(case, solver):
    check_certified_or_warned(*case, solver)


def _scaled_file(path, scale, n=40, d=5, seed=0):
    """A small binary SVM-light file whose values are standard normals times `scale`."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = np.where(X[:, 0] + 0.3 * rng.standard_normal(n) > 0, 1, -1)
    lines = [f"{y[i]} " + " ".join(f"{j + 1}:{X[i, j] * scale:.17g}" for j in range(d))
             for i in range(n)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("solver", ["mfn", "mfn-huber", "lr-dual", "dcd"])
@pytest.mark.parametrize("scale", [1e155, 1e200, 1e250])
def test_rows_whose_squared_norm_overflows_are_refused_in_one_line(tmp_path, solver, scale):
    """x.x = inf leaves nothing to solve (it ended in a bias-only model reported optimal,
    or NaN scores): one line naming the example and the cause, exit 1, no model file."""
    from click.testing import CliRunner

    from conftest import assert_one_line_error
    from linsvm.cli import train_cmd

    data = _scaled_file(tmp_path / "big.svm", scale)
    out = tmp_path / "m"
    result = CliRunner().invoke(train_cmd, ["-q", "-s", solver, str(data), str(out)])
    assert_one_line_error(result, "example 1", "squared norm overflows double precision",
                          "rescale the features")
    assert not out.exists()


def test_bias_whose_square_overflows_is_refused():
    X = np.ones((4, 1))
    with pytest.raises(DataError, match="bias feature's value 1e\\+200"):
        linsvm.train(X, np.array([1.0, -1.0, 1.0, -1.0]), bias=1e200)


def test_sums_that_overflow_in_a_solve_end_in_a_warning_or_a_one_line_refusal():
    """Rows just below the overflow of x.x, times a class weight of 100: a solver's own
    sums overflow (mfn-l1's weights came out NaN, and the Model refused them with 'weights
    must be finite').  Each solve is certified within 1% (lr: the optimum, found by scipy
    here), warns, or is refused in one line naming the overflow."""
    X = np.array([[0.12573022], [-0.13210486], [0.64042265], [0.10490012], [-0.53566937],
                  [0.36159505]])
    y = np.array([1.0, -1.0, 1.0, -1.0, -1.0, -1.0])
    for solver in ("mfn-l1", "mfn", "dcd", "lr"):
        check_certified_or_warned(X, y, 1e153, {1.0: 1.0, -1.0: 100.0}, None, (solver, ()))


# Regression: the same rule for svr and svr-dual.  The residual r_i = y_i - y_offset -
# (xs_i.w + B b); svr's bias is free (regularize_bias False), svr-dual's is regularized
# and it solves for the targets minus their cost-weighted mean y_offset (center_targets).
EPSILON = 0.1                                             # the tube's half-width p (default)


def _sq_tube(r):
    z = np.maximum(0.0, np.abs(r) - EPSILON)
    return z * z, 2.0 * z * np.sign(r)


def _tube(r):
    return np.maximum(0.0, np.abs(r) - EPSILON), None


def _tube_smooth(r, tau=1e-6):
    """max(0, |r| - p) smoothed by at most tau / 2 (for scipy's search); evaluated on the
    exact tube afterwards."""
    z = np.abs(r) - EPSILON
    val = np.where(z <= 0, 0.0, np.where(z < tau, z * z / (2 * tau), z - tau / 2))
    return val, np.clip(z / tau, 0.0, 1.0) * np.sign(r)


# solver (and options) -> (the loss of the residual, the smooth one for scipy, bias
# regularized?, targets centred?)
REGRESSORS = {
    ("svr", ()): (_sq_tube, _sq_tube, False, False),
    ("svr-dual", ()): (_tube, _tube_smooth, True, True),
    ("svr-dual", (("loss", "l2"),)): (_sq_tube, _sq_tube, True, True),
}


def regression_objective(loss, Xs, r_target, U, w, b, reg_bias):
    """1/2 (||w||^2 + [reg_bias] b^2) + sum_i U_i loss(r_target_i - (Xs w + B b)_i)."""
    return (0.5 * (w @ w + (b * b if reg_bias else 0.0))
            + float(U @ loss(r_target - (Xs @ w + BIAS * b))[0]))


def regression_reference(loss, X, s, r_target, U, reg_bias):
    """An upper bound on the regression optimum, in the variables of `reference`."""
    big = s > 1.0
    A = X if big else X * s
    reg = 1.0 / (s * s) if big else 1.0
    rb = 1.0 if reg_bias else 0.0

    def f(z):
        v, b = z[:-1], z[-1]
        val, slope = loss(r_target - (A @ v + BIAS * b))
        u = U * slope
        return (0.5 * reg * v @ v + 0.5 * rb * b * b + float(U @ val),
                np.append(reg * v - A.T @ u, rb * b - BIAS * float(u.sum())))

    z0 = np.zeros(X.shape[1] + 1)
    z = so.minimize(f, z0, jac=True, method="L-BFGS-B",
                    options={"maxiter": 5000, "gtol": 1e-12, "ftol": 1e-15}).x
    w = z[:-1] / s if big else z[:-1]
    return w, z[-1]


@st.composite
def regression_problems(draw):
    """(X, y, scale, sample_weight): a tiny noisy linear regression with an offset,
    example weights log-uniform in [1e-6, 1e6] (or none), one scale 10^k."""
    X, _, scale, _, sample_weight = draw(problems())
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    n, d = X.shape
    offset = draw(st.sampled_from([0.0, 3.0, -50.0]))
    y = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n) + offset
    return X, y, scale, sample_weight


def check_regression_certified_or_warned(X, y, s, sample_weight, solver):
    """The rule of the module docstring for one regression solve of X * s."""
    name, options = solver
    loss, smooth, reg_bias, centred = REGRESSORS[solver]
    Xs = X * s
    with np.errstate(over="ignore"):
        squares = np.sum(Xs * Xs, axis=1) + BIAS * BIAS
    verdict, model = solve_or_refuse(Xs, y, squares, name, C=C, sample_weight=sample_weight,
                                     **dict(options))
    if verdict is not None:
        return verdict                                    # refused, or warned: nothing promised
    U = C * (np.ones_like(y) if sample_weight is None else sample_weight)
    y_offset = float(U @ y / U.sum()) if centred else 0.0
    if centred:
        assert math.isclose(model.stats["y_offset"], y_offset, rel_tol=1e-9, abs_tol=1e-12)
    W = model.weights[:, 0]
    F = regression_objective(loss, Xs, y - y_offset, U, W[:-1], W[-1], reg_bias)
    w_ref, b_ref = regression_reference(smooth, X, s, y - y_offset, U, reg_bias)
    f_ref = regression_objective(loss, Xs, y - y_offset, U, w_ref, b_ref, reg_bias)
    assert math.isfinite(F)
    assert F <= f_ref / 0.99 * (1 + 1e-9) + 1e-300, (name, options, F, f_ref,
                                                    (F - f_ref) / f_ref)
    return "certified"


def test_regression_objectives_written_here_are_the_ones_linsvm_reports():
    """On a plain problem the NumPy objective of each regressor equals stats['objective']
    (so the scipy reference is of the same problem)."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((30, 3))
    y = X @ np.array([1.0, 2.0, -1.0]) + 0.3 * rng.standard_normal(30) + 2.0
    sw = rng.uniform(0.5, 2.0, 30)
    for (name, options), (loss, _, reg_bias, centred) in REGRESSORS.items():
        model = linsvm.train(X, y, solver=name, C=C, sample_weight=sw, **dict(options))
        y_offset = float(sw @ y / sw.sum()) if centred else 0.0
        W = model.weights[:, 0]
        F = regression_objective(loss, X, y - y_offset, C * sw, W[:-1], W[-1], reg_bias)
        assert math.isclose(F, model.stats["objective"], rel_tol=1e-9), (name, options)


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True)
@given(case=regression_problems(), solver=st.sampled_from(sorted(REGRESSORS)))
def test_every_regressor_is_within_1pct_or_warns_under_weights_and_scales(case, solver):
    check_regression_certified_or_warned(*case, solver)


# Multi-class: the same rule for sdm-cs, sdm-ww and softmax.  Scores S = Xs W + B b, one
# column per class (the bias weights regularized), E_im = [m != y_i], U_i the cost of
# example i (C times its example weight times its class's weight).
def _cs_loss(S, codes, tau=0.0):
    """Crammer-Singer's max_m (E_im + S_im - S_iy_i); tau > 0: tau logsumexp(./tau), above
    it by at most tau log k (for scipy), with its gradient in S."""
    n = S.shape[0]
    Z = S - S[np.arange(n), codes][:, None] + 1.0
    Z[np.arange(n), codes] = 0.0
    if tau == 0.0:
        return Z.max(axis=1), None
    lse = np.logaddexp.reduce(Z / tau, axis=1)
    P = np.exp(Z / tau - lse[:, None])
    P[np.arange(n), codes] -= 1.0
    return tau * lse, P


def _ww_loss(S, codes, tau=0.0):
    """Weston-Watkins' sum_{m != y_i} max(0, 1 - (S_iy_i - S_im)); tau > 0: each hinge
    smoothed as _hinge_smooth does, with its gradient in S."""
    n = S.shape[0]
    M = S[np.arange(n), codes][:, None] - S
    if tau == 0.0:
        val = np.maximum(0.0, 1.0 - M)
        val[np.arange(n), codes] = 0.0
        return val.sum(axis=1), None
    val, slope = _hinge_smooth(M, tau)
    val[np.arange(n), codes] = 0.0
    slope[np.arange(n), codes] = 0.0
    G = -slope
    G[np.arange(n), codes] = slope.sum(axis=1)
    return val.sum(axis=1), G


def _softmax_loss(S, codes, tau=0.0):
    """logsumexp_m S_im - S_iy_i, with its gradient in S always (tau unused: smooth)."""
    n = S.shape[0]
    lse = np.logaddexp.reduce(S, axis=1)
    P = np.exp(S - lse[:, None])
    P[np.arange(n), codes] -= 1.0
    return lse - S[np.arange(n), codes], P


# solver -> (its loss in the scores, the smoothings scipy minimizes in turn)
MULTICLASS = {
    "sdm-cs": (_cs_loss, (1e-2, 1e-4, 1e-6)),
    "sdm-ww": (_ww_loss, (1e-2, 1e-4, 1e-6)),
    "softmax": (_softmax_loss, (0.0,)),
}


def multiclass_objective(loss, Xs, codes, U, W, b):
    """1/2 (||W||_F^2 + ||b||^2) + sum_i U_i loss_i(Xs W + B b), written out here."""
    return (0.5 * (np.sum(W * W) + b @ b)
            + float(U @ loss(Xs @ W + BIAS * b[None, :], codes)[0]))


def multiclass_reference(loss, taus, X, s, codes, U, k):
    """An upper bound on the multi-class optimum: L-BFGS-B in the variables of `reference`
    on each smoothing in turn, each from the last one's point; returns (W, b)."""
    d = X.shape[1]
    big = s > 1.0
    A = X if big else X * s
    reg = 1.0 / (s * s) if big else 1.0
    z = np.zeros((d + 1) * k)
    for tau in taus:
        def f(z, tau=tau):
            V, b = z[:d * k].reshape(d, k), z[d * k:]
            val, G = loss(A @ V + BIAS * b[None, :], codes, tau)
            G = U[:, None] * G
            return (0.5 * reg * np.sum(V * V) + 0.5 * b @ b + float(U @ val),
                    np.concatenate([(reg * V + A.T @ G).ravel(), b + BIAS * G.sum(axis=0)]))

        z = so.minimize(f, z, jac=True, method="L-BFGS-B",
                        options={"maxiter": 5000, "gtol": 1e-12, "ftol": 1e-15}).x
    V, b = z[:d * k].reshape(d, k), z[d * k:]
    return (V / s if big else V), b


@st.composite
def multiclass_problems(draw):
    """(X, y, scale, class_weight, sample_weight): `problems`' X, scale and example weights
    with 3 or 4 classes from noisy linear scores, every class present, a class weight
    log-uniform in [1e-6, 1e6] per class (or none)."""
    X, _, scale, _, sample_weight = draw(problems())
    n, d = X.shape
    k = draw(st.integers(3, 4))
    rng = np.random.default_rng(draw(st.integers(0, 2 ** 16)))
    y = np.argmax(X @ rng.standard_normal((d, k)) + 0.5 * rng.standard_normal((n, k)),
                  axis=1).astype(float) + 1.0
    y[:k] = np.arange(1.0, k + 1.0)                      # every class
    weight = st.floats(-6.0, 6.0).map(lambda e: 10.0 ** e)
    class_weight = draw(st.one_of(st.none(), st.fixed_dictionaries(
        {float(m): weight for m in range(1, k + 1)})))
    return X, y, scale, class_weight, sample_weight


def check_multiclass_certified_or_warned(X, y, s, class_weight, sample_weight, name):
    """The rule of the module docstring for one multi-class solve of X * s."""
    loss, taus = MULTICLASS[name]
    Xs = X * s
    with np.errstate(over="ignore"):
        squares = np.sum(Xs * Xs, axis=1) + BIAS * BIAS
    verdict, model = solve_or_refuse(Xs, y, squares, name, C=C, class_weight=class_weight,
                                     sample_weight=sample_weight)
    if verdict is not None:
        return verdict                                    # refused, or warned: nothing promised
    classes = np.asarray(model.classes_)
    codes = (y[:, None] == classes[None, :]).argmax(axis=1)
    U = C * (np.ones_like(y) if sample_weight is None else sample_weight.copy())
    if class_weight:
        U *= np.array([class_weight[v] for v in y])
    F = multiclass_objective(loss, Xs, codes, U, model.weights[:-1], model.weights[-1])
    W_ref, b_ref = multiclass_reference(loss, taus, X, s, codes, U, classes.size)
    f_ref = multiclass_objective(loss, Xs, codes, U, W_ref, b_ref)
    assert math.isfinite(F)
    assert F <= f_ref / 0.99 * (1 + 1e-9) + 1e-300, (name, F, f_ref, (F - f_ref) / f_ref)
    return "certified"


def test_multiclass_objectives_written_here_are_the_ones_linsvm_reports():
    """On a plain weighted problem the NumPy objective of each multi-class solver equals
    stats['objective'], and the smoothed scipy reference reaches the SLSQP optimum of
    tests/test_warnings.py on an unweighted one."""
    from test_warnings import _cs_optimum

    rng = np.random.default_rng(0)
    X, sw = rng.standard_normal((30, 2)), rng.uniform(0.5, 2.0, 30)
    cw = {1.0: 2.0, 2.0: 0.5, 3.0: 1.0}
    y = np.argmax(X @ rng.standard_normal((2, 3)) + 0.5 * rng.standard_normal((30, 3)),
                  axis=1).astype(float) + 1.0
    for name, (loss, taus) in MULTICLASS.items():
        model = linsvm.train(X, y, solver=name, C=C, class_weight=cw, sample_weight=sw)
        codes = (y[:, None] == np.asarray(model.classes_)[None, :]).argmax(axis=1)
        U = C * sw * np.array([cw[v] for v in y])
        F = multiclass_objective(loss, X, codes, U, model.weights[:-1], model.weights[-1])
        assert math.isclose(F, model.stats["objective"], rel_tol=1e-9), name
    Xt, codes = X[:8], (np.arange(8) % 3)
    Xa = np.hstack([Xt, np.ones((8, 1))])
    for name, ww in (("sdm-cs", False), ("sdm-ww", True)):
        loss, taus = MULTICLASS[name]
        W, b = multiclass_reference(loss, taus, Xt, 1.0, codes, np.ones(8), 3)
        f = multiclass_objective(loss, Xt, codes, np.ones(8), W, b)
        assert math.isclose(f, _cs_optimum(Xa, codes, 3, C, ww), rel_tol=1e-5), name


@pytest.mark.slow
@settings(max_examples=25, deadline=None, derandomize=True)
@given(case=multiclass_problems(), name=st.sampled_from(sorted(MULTICLASS)))
def test_every_multiclass_solver_is_within_1pct_or_warns_under_weights_and_scales(case, name):
    check_multiclass_certified_or_warned(*case, name)
