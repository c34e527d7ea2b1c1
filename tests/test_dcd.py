"""Dual coordinate descent (Hsieh et al. 2008) against independent references and its own
optimality conditions.

Reference objectives (LIBLINEAR -s 3 / -s 1), x_i with the bias feature appended,
U_i = C c_i (c_i = sample weight x class weight):
  l1:  1/2 w.w + sum_i U_i max(0, 1 - t_i w.x_i)
  l2:  1/2 w.w + sum_i U_i max(0, 1 - t_i w.x_i)^2
Dual: min 1/2 a'(Q + D)a - sum a over 0 <= a <= U (l1, D = 0) or a >= 0 (l2, D_ii = 1/(2 U_i)),
Q_ij = t_i t_j x_i.x_j, w = sum a_i t_i x_i.  Expectations come from these formulas,
scipy's L-BFGS-B, or LIBLINEAR; none is copied from linsvm output.
"""
import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import linsvm
from linsvm.errors import ParameterError

from conftest import augmented, invoke, random_problem, shared_file, targets


def primal(w, Xa, t, U, loss):
    slack = np.maximum(0.0, 1.0 - t * (Xa @ w))
    return 0.5 * w @ w + np.sum(U * (slack if loss == "l1" else slack ** 2))


def dual_reference(Xa, t, U, loss):
    """max of the dual by L-BFGS-B on the box (from the formulas in the module docstring)."""
    Z = sp.diags(t) @ Xa
    live = U > 0
    Dg = np.where(live, 0.5 / np.where(live, U, 1.0), 0.0) if loss == "l2" else np.zeros(t.size)

    def fun(a):
        w = Z.T @ a
        return 0.5 * w @ w + 0.5 * np.sum(Dg * a * a) - a.sum(), Z @ w + Dg * a - 1.0

    ub = [(0.0, u if loss == "l1" else (None if u > 0 else 0.0)) for u in U]
    res = so.minimize(fun, np.zeros(t.size), jac=True, method="L-BFGS-B", bounds=ub,
                      options={"ftol": 1e-16, "gtol": 1e-13, "maxiter": 50000, "maxcor": 50})
    return -res.fun


def projected_gradient_spread(w, Xa, t, alpha, U, loss):
    """max PG - min PG over the examples with a dual variable ([9]'s stopping measure)."""
    live = U > 0
    Dg = np.where(live, 0.5 / np.where(live, U, 1.0), 0.0) if loss == "l2" else 0.0
    G = t * (Xa @ w) - 1.0 + Dg * alpha
    upper = U if loss == "l1" else np.inf
    PG = np.where(alpha <= 0, np.minimum(G, 0.0), np.where(alpha >= upper, np.maximum(G, 0.0), G))
    PG = PG[live]
    return PG.max() - PG.min()


@pytest.mark.parametrize("loss", ["l1", "l2"])
@pytest.mark.parametrize("bias", [1.0, -1.0])
@pytest.mark.parametrize("C", [0.05, 2.0])
def test_objective_matches_generic_solver(loss, bias, C):
    X, y = random_problem(n_samples=40, n_features=6, seed=int(C * 3) + (bias > 0))
    rng = np.random.default_rng(0)
    sw = rng.uniform(0.3, 2.0, size=y.size)
    model = linsvm.train(X, y, solver="dcd", loss=loss, C=C, bias=bias, tol=1e-10,
                         sample_weight=sw, class_weight={-1.0: 1.5}, max_iter=100000)
    st = model.column_stats[0]
    t = targets(model, y)
    U = C * (sw * np.where(y == -1.0, 1.5, 1.0))
    Xa = augmented(X, bias)
    P = primal(model.weights[:, 0], Xa, t, U, loss)
    ref = dual_reference(Xa, t, U, loss)
    assert st["status"] == "converged"
    assert model.objective == pytest.approx(P, rel=1e-12)
    assert P >= ref * (1 - 1e-10)
    assert P == pytest.approx(ref, rel=1e-7)
    assert st["dual_objective"] == pytest.approx(ref, rel=1e-7)


@pytest.mark.parametrize("loss", ["l1", "l2"])
@pytest.mark.parametrize("tol", [0.1, 1e-4])
def test_feasible_and_certified_at_return(loss, tol):
    X, y = random_problem(n_samples=300, n_features=20, seed=21)
    C = 0.8
    model = linsvm.train(X, y, solver="dcd", loss=loss, C=C, tol=tol, max_iter=100000)
    st = model.column_stats[0]
    alpha = model.solver_state_[0]["alpha"]
    t = targets(model, y)
    Xa = augmented(X, 1.0)
    U = np.full(y.size, C)
    assert st["status"] == "converged"
    assert np.all(alpha >= 0) and (loss == "l2" or np.all(alpha <= C))          # the box, exactly
    w = Xa.T @ (alpha * t)
    np.testing.assert_allclose(model.weights[:, 0], w, atol=1e-11 * (1 + np.abs(w).max()))
    spread = projected_gradient_spread(model.weights[:, 0], Xa, t, alpha, U, loss)
    assert st["kkt_violation"] == pytest.approx(spread, rel=1e-8, abs=1e-12)
    assert st["loop_violation"] <= tol                                          # [9]'s rule
    assert 0.0 <= st["duality_gap"] <= 0.02 * model.objective
    assert st["n_sv"] == np.count_nonzero(alpha)


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_packed_loop_on_a_row_subset_of_binary_features(loss):
    # The loop reads each example from a packed copy (its row span, t, D, QD, U, alpha;
    # csrc/_dcd.pyx, "Memory") and writes alpha back to its position on return.  On a
    # shuffled subset of the rows (rows is not the identity) of 0/1 features (the
    # index-only reads), with unequal costs, two of them 0: w must be sum alpha_k t_k x_k
    # over those rows, and the KKT spread at the returned alpha as the solver reports it.
    rng = np.random.default_rng(8)
    X = sp.random(500, 40, density=0.15, format="csr", random_state=3)
    X.data[:] = 1.0
    y = np.where(X @ rng.standard_normal(40) + 0.3 * rng.standard_normal(500) > 0, 1.0, -1.0)
    sw = rng.uniform(0.5, 2.0, 500)
    rows = rng.permutation(500)[:350]
    sw[rows[[3, 100]]] = 0.0             # no dual variable: the packed copy skips them
    C = 0.7
    model = linsvm.train(X, y, solver="dcd", loss=loss, C=C, tol=1e-6, rows=rows,
                         sample_weight=sw, max_iter=100000)
    st = model.column_stats[0]
    alpha = model.solver_state_[0]["alpha"]
    assert alpha.shape == (350,)
    Xr, yr = X[rows], y[rows]
    t = targets(model, yr)
    Xa = augmented(Xr, 1.0)
    w = Xa.T @ (alpha * t)
    np.testing.assert_allclose(model.weights[:, 0], w, atol=1e-11 * (1 + np.abs(w).max()))
    U = C * sw[rows]
    assert alpha[3] == 0.0 and alpha[100] == 0.0
    assert np.all(alpha >= 0) and (loss == "l2" or np.all(alpha <= U))
    spread = projected_gradient_spread(model.weights[:, 0], Xa, t, alpha, U, loss)
    assert st["kkt_violation"] == pytest.approx(spread, rel=1e-8, abs=1e-12)
    assert spread <= 1e-5


def test_one_vs_rest_with_more_than_two_classes():
    X, y = random_problem(n_samples=200, n_features=12, n_classes=4, seed=8)
    model = linsvm.train(X, y, solver="dcd", C=1.0, tol=1e-8, max_iter=100000)
    assert model.kind == "multiclass" and model.weights.shape == (13, 4)
    Xa = augmented(X, 1.0)
    total = 0.0
    for j, c in enumerate(model.classes_):
        t = np.where(y == c, 1.0, -1.0)
        total += primal(model.weights[:, j], Xa, t, np.ones(y.size), "l1")
        assert len(model.solver_state_) == 4
    assert model.objective == pytest.approx(total, rel=1e-12)
    np.testing.assert_array_equal(model.predict(X), model.classes_[np.argmax(Xa @ model.weights, axis=1)])


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_shrinking_changes_the_path_not_the_answer(loss):
    X, y = random_problem(n_samples=300, n_features=15, seed=2)
    a = linsvm.train(X, y, solver="dcd", loss=loss, tol=1e-7, shrinking=True, max_iter=100000)
    b = linsvm.train(X, y, solver="dcd", loss=loss, tol=1e-7, shrinking=False, max_iter=100000)
    assert a.objective == pytest.approx(b.objective, rel=1e-8)
    ta, tb = a.column_stats[0]["trace"], b.column_stats[0]["trace"]
    assert min(r["active"] for r in ta) < y.size            # shrinking did shrink
    assert all(r["active"] == y.size for r in tb)
    assert a.weights.tobytes() != b.weights.tobytes()


def test_seed_reproducible():
    X, y = random_problem(n_samples=200, n_features=15, seed=3)
    a = linsvm.train(X, y, solver="dcd", seed=7)
    b = linsvm.train(X, y, solver="dcd", seed=7)
    c = linsvm.train(X, y, solver="dcd", seed=8)
    assert a.weights.tobytes() == b.weights.tobytes()
    assert a.weights.tobytes() != c.weights.tobytes()


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_warm_start_along_a_c_path(loss):
    X, y = random_problem(n_samples=400, n_features=20, n_classes=3, seed=4)
    prev = None
    warm_loops = cold_loops = 0
    for C in (0.1, 1.0, 10.0, 0.3):            # up and down: alphas scaled, then clipped
        # the dual method alone (no hand-over): alpha-seeding's effect on its loops
        cold = linsvm.train(X, y, solver="dcd", loss=loss, C=C, tol=1e-4, max_iter=100000,
                            primal_fallback=False)
        warm = linsvm.train(X, y, solver="dcd", loss=loss, C=C, tol=1e-4, init=prev,
                            max_iter=100000, primal_fallback=False)
        if prev is not None:
            assert all(ws["warm_start"] == "alpha" for ws in warm.column_stats)
            warm_loops += warm.n_iter
            cold_loops += cold.n_iter
        assert warm.objective == pytest.approx(cold.objective, rel=1e-3)
        for state in warm.solver_state_:
            assert np.all(state["alpha"] >= 0) and (loss == "l2" or np.all(state["alpha"] <= C))
        prev = warm
    if loss == "l2":
        assert warm_loops < cold_loops
    # re-solving at the same C from its own solution is immediate
    again = linsvm.train(X, y, solver="dcd", loss=loss, C=0.3, tol=1e-4, init=prev)
    assert again.n_iter <= 2 * len(again.column_stats)
    assert again.objective == pytest.approx(prev.objective, rel=1e-6)


def test_weights_alone_cannot_seed_a_dual_method(tmp_path):
    X, y = random_problem(n_samples=60, n_features=8, seed=5)
    first = linsvm.train(X, y, solver="dcd")
    path = tmp_path / "m.model"
    first.save(str(path))
    again = linsvm.train(X, y, solver="dcd", init=linsvm.load_model(str(path)))
    assert "cannot start from weights alone" in again.column_stats[0]["warning"]
    assert again.weights.tobytes() == first.weights.tobytes()
    other = linsvm.train(X, -y, solver="dcd", init=first)     # same classes, flipped labels
    assert other.column_stats[0]["warm_start"] == "state rejected"


def test_zero_rows_and_zero_costs():
    X, y = random_problem(n_samples=50, n_features=6, seed=6)
    X = X.tolil()
    X[2, :] = 0
    X = X.tocsr()
    sw = np.ones(y.size)
    sw[7] = 0.0
    for loss in ("l1", "l2"):
        m = linsvm.train(X, y, solver="dcd", loss=loss, bias=-1, sample_weight=sw, tol=1e-9,
                         max_iter=100000)
        alpha = m.solver_state_[0]["alpha"]
        t = targets(m, y)
        assert alpha[7] == 0.0
        assert alpha[2] == (1.0 if loss == "l1" else 2.0)   # x = 0: the loss is fixed, alpha at its optimum
        assert m.objective == pytest.approx(primal(m.weights[:, 0], augmented(X, -1), t, sw, loss), rel=1e-12)
        assert m.column_stats[0]["duality_gap"] <= 1e-7 * m.objective


def test_bad_loss_is_a_parameter_error():
    X, y = random_problem(n_samples=20, n_features=4, seed=1)
    with pytest.raises(ParameterError, match="loss"):
        linsvm.train(X, y, solver="dcd", loss="l3")


def test_cli_loss_option(tmp_path):
    from linsvm.cli import train_cmd

    X, y = random_problem(n_samples=80, n_features=6, seed=2)
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    r = invoke(train_cmd, "-s", "dcd", "--loss", "l2", "-c", "0.5", "-q", str(data),
               str(tmp_path / "m"))
    assert r.exit_code == 0, r.output
    m = linsvm.load_model(str(tmp_path / "m"))
    assert m.params["loss"] == "l2"
    np.testing.assert_array_equal(m.weights, linsvm.train(X, y, solver="dcd", loss="l2", C=0.5).weights)


# ---------------------------------------------------------------- LIBLINEAR on real data

@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("loss,s", [("l1", 3), ("l2", 1)])
def test_one_vs_rest_matches_liblinear_on_sector(loss, s, sector_head):
    liblinearutil = pytest.importorskip("liblinear.liblinearutil")
    X, y = sector_head
    X, y = X[:500], y[:500]                   # 500 examples keep about 70 of the classes
    model = linsvm.train(X, y, solver="dcd", loss=loss, C=1.0, tol=1e-3)
    ref = liblinearutil.train(y, X, f"-s {s} -c 1 -B 1 -e 0.001 -q")
    labels = ref.get_labels()
    W = np.asarray(np.ctypeslib.as_array(ref.w, shape=(ref.nr_feature + 1, ref.nr_class)))
    W = W[:, [labels.index(c) for c in model.classes_]]
    full = np.zeros_like(model.weights)
    full[: ref.nr_feature] = W[: ref.nr_feature]
    full[-1] = W[ref.nr_feature]
    Xa = augmented(X, 1.0)
    P = lambda M: sum(primal(M[:, j], Xa, np.where(y == c, 1.0, -1.0), np.ones(y.size), loss)
                      for j, c in enumerate(model.classes_))
    ours, ll = P(model.weights), P(full)
    dual = sum(c["dual_objective"] for c in model.column_stats)
    assert ours == pytest.approx(model.objective, rel=1e-10)
    assert abs(ours - ll) / ll < 1e-3
    assert ll >= dual * (1 - 1e-12) and ours >= dual


def _primal_reference(Xa, t, C):
    """min of the squared-hinge primal by L-BFGS (gradient from the formula)."""
    def fg(w):
        slack = np.maximum(0.0, 1.0 - t * (Xa @ w))
        return 0.5 * w @ w + C * slack @ slack, w - 2.0 * C * (Xa.T @ (t * slack))
    res = so.minimize(fg, np.zeros(Xa.shape[1]), jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-12, "ftol": 1e-15, "maxiter": 50000})
    return res.fun


@pytest.mark.slow
def test_l2_dcd_that_reaches_the_loop_cap_finishes_with_mfn():
    """--loss l2 at the loop cap used to return the capped point (australian, unscaled:
    56x the optimum after 1000 loops, where LIBLINEAR -s 1 switches to -s 2 and reaches
    7e-4).  Now it finishes with mfn from its w: the optimum (scipy), a certified gap from
    the dual point alpha = 2 C max(0, 1 - t w.x), and no warning; with primal_fallback off
    it still stops and warns."""
    import warnings

    X, y = random_problem(n_samples=200, n_features=12, seed=5)
    X = sp.csr_matrix(X) @ sp.diags(np.logspace(0, 3, 12))      # badly scaled features
    C = 1.0
    with warnings.catch_warnings():
        warnings.simplefilter("error", linsvm.ConvergenceWarning)
        model = linsvm.train(X, y, solver="dcd", loss="l2", C=C, max_iter=3)
    st = model.column_stats[0]
    t = targets(model, y)
    Xa = augmented(X, 1.0)
    F = primal(model.weights[:, 0], Xa, t, C * np.ones_like(t), "l2")
    F_ref = _primal_reference(Xa, t, C)
    assert st["finished_by"] == "mfn" and st["n_iter"] == 3
    assert F == pytest.approx(F_ref, rel=1e-8)
    assert st["dual_objective"] <= F * (1 + 1e-12) and st["duality_gap"] <= 1e-6 * F
    with pytest.warns(linsvm.ConvergenceWarning, match="loop cap"):
        capped = linsvm.train(X, y, solver="dcd", loss="l2", C=C, max_iter=3, primal_fallback=False)
    assert primal(capped.weights[:, 0], Xa, t, C * np.ones_like(t), "l2") > F * 1.01
    # l1 finishes with mfn-l1 likewise (tests/test_certified.py); off, the cap still warns
    with pytest.warns(linsvm.ConvergenceWarning, match="loop cap"):
        linsvm.train(X, y, solver="dcd", loss="l1", C=C, max_iter=3, primal_fallback=False)


@pytest.mark.data
def test_l2_dcd_on_unscaled_australian_reaches_the_optimum():
    X, y = linsvm.load_svmlight(shared_file("binary/australian"))
    model = linsvm.train(X, y, solver="dcd", loss="l2", C=1.0)
    ref = linsvm.train(X, y, solver="mfn", C=1.0, tol=1e-10)
    assert model.column_stats[0]["finished_by"] == "mfn"
    assert model.objective == pytest.approx(ref.objective, rel=1e-9)
