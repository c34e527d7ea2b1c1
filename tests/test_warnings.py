"""linsvm.ConvergenceWarning: every solve that stops without certifying its
stated accuracy warns the Python caller (warnings.warn) and the command line
(one line on stderr, exit 0); and every solver at its defaults either lands
within 1% of an independent optimum or warns."""
import warnings

import numpy as np
import pytest
import scipy.optimize as so
import scipy.sparse as sp

import linsvm
from linsvm.cli import train_cmd, cv_cmd
from linsvm.cv import cross_validate

from conftest import invoke, random_problem, shared_file


def test_convergence_warning_class():
    cw = linsvm.ConvergenceWarning
    assert issubclass(cw, UserWarning) and issubclass(cw, linsvm.LinsvmWarning)
    sklearn = pytest.importorskip("sklearn.exceptions")
    assert issubclass(cw, sklearn.ConvergenceWarning)
    assert linsvm.ConvergenceWarning is cw           # made once


# (solver, options that make it stop early, a word of its message)
CAPPED = [
    ("mfn", {"max_iter": 1, "heuristic2": False}, "iteration cap"),
    ("mfn-huber", {"max_iter": 1, "heuristic2": False}, "iteration cap"),
    ("mfn-l1", {"max_stages": 1}, "stages"),
    ("dcd", {"max_iter": 1, "loss": "l1", "primal_fallback": False}, "loop cap"),
    ("dcd", {"max_iter": 1, "loss": "l2", "primal_fallback": False}, "loop cap"),
    ("alm", {"max_iter": 2, "primal_fallback": False}, "iteration cap"),
    ("alm-exact", {"max_iter": 1, "primal_fallback": False}, "iteration cap"),
    ("perf", {"max_iter": 2}, "iteration cap"),
    ("sdm-cs", {"max_iter": 1}, "full-loop cap"),
    ("sdm-ww", {"max_iter": 1}, "full-loop cap"),
]


@pytest.mark.parametrize("solver,opts,word", CAPPED, ids=[f"{s}-{o}" for s, o, _ in CAPPED])
def test_capped_solve_warns_the_python_caller(solver, opts, word):
    X, y = random_problem(n_samples=200, n_features=15, seed=3)
    with pytest.warns(linsvm.ConvergenceWarning) as record:
        model = linsvm.train(X, y, solver=solver, C=10.0, **opts)
    messages = [str(w.message) for w in record if issubclass(w.category, linsvm.ConvergenceWarning)]
    assert len(messages) == 1 and word in messages[0]
    assert solver in messages[0] and ("-e" in messages[0] or "eps" in messages[0])
    assert model.warnings == messages
    assert record[0].filename == __file__          # attributed to the caller of train()


def _cli_flags(opts):
    flags = []
    for key, value in opts.items():
        name = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            flags.append(name if value else "--no-" + key.replace("_", "-"))
        else:
            flags += [name, value]
    return flags


@pytest.mark.parametrize("solver,opts,word", CAPPED, ids=[f"{s}-{o}" for s, o, _ in CAPPED])
def test_capped_solve_warns_on_the_command_line(tmp_path, solver, opts, word):
    X, y = random_problem(n_samples=200, n_features=15, seed=3)
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    result = invoke(train_cmd, data, tmp_path / "m", "-s", solver, "-c", "10", "-q", *_cli_flags(opts))
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"warning: {solver}") and word in lines[0]
    assert "Warning" not in result.stderr and (tmp_path / "m").is_file()


def test_one_vs_rest_columns_warn_once_naming_their_classes(tmp_path):
    from linsvm.problem.labels import class_order

    X, y = random_problem(n_samples=210, n_features=12, n_classes=4, seed=5)
    classes = ", ".join(f"{c:g}" for c in class_order(y))
    with pytest.warns(linsvm.ConvergenceWarning) as record:
        model = linsvm.train(X, y, solver="dcd", C=10.0, max_iter=1, n_jobs=2,
                             primal_fallback=False)
    messages = [str(w.message) for w in record]
    assert len(messages) == 1                        # one per kind of message, not per column
    assert messages[0].startswith(f"4 of 4 one-vs-rest columns (classes {classes}): dcd stopped")
    assert [m.split(":")[0] for m in model.warnings] == [f"class {c:g} vs rest"
                                                         for c in class_order(y)]  # column order
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    result = invoke(train_cmd, data, tmp_path / "m", "-s", "dcd", "-c", "10", "--max-iter", "1",
                    "--no-primal-fallback", "-q", "-j", "2")
    assert result.exit_code == 0
    assert result.stderr.splitlines() == ["warning: " + messages[0]]


def test_column_warnings_merge_by_kind_and_name_their_classes():
    from linsvm.fit.reporting import merge_column_warnings as _merge_column_warnings

    cap = "dcd stopped at the loop cap (max_iter=5) with PG spread {} (eps 0.1)"
    per_column = [[(cap.format(2.5), True)], [], [("a note", False)], [(cap.format(0.7), True)]]
    merged = _merge_column_warnings(per_column, np.array([3.0, 1.0, 2.0, 7.0]))
    assert merged == [
        ("2 of 4 one-vs-rest columns (classes 3, 7): " + cap.format(2.5) + " (shown for class 3)",
         True),
        ("class 2 vs rest: a note", False)]


def test_cross_validation_merges_fold_warnings(tmp_path):
    X, y = random_problem(n_samples=200, n_features=15, seed=3)
    with pytest.warns(linsvm.ConvergenceWarning) as record:
        cross_validate(X, y, solver="dcd", Cs=[1.0, 10.0], n_folds=4, max_iter=1, n_jobs=2,
                       primal_fallback=False)
    messages = [str(w.message) for w in record]
    assert len(messages) == 2                       # one per grid point, not one per fold
    assert all("of 4 folds: dcd stopped at the loop cap" in m for m in messages)
    data = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(data))
    result = invoke(cv_cmd, data, "-s", "dcd", "-c", "1,10", "-v", "4", "--max-iter", "1",
                    "--no-primal-fallback", "-q")
    assert result.exit_code == 0
    lines = result.stderr.splitlines()
    assert all(line.startswith("warning:") for line in lines)
    # one per grid point (not one per fold), beside cv's own note that C = 1 is the grid's edge
    assert len([line for line in lines if "of 4 folds: dcd stopped at the loop cap" in line]) == 2
    assert len(lines) <= 3


def test_notes_are_linsvm_warnings_not_convergence_warnings():
    X, y = random_problem(n_samples=80, n_features=8, seed=2)
    first = linsvm.train(X, y, solver="mfn")
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        linsvm.train(X, y, solver="dcd", init=first)  # weights cannot seed a dual method
    assert len(record) == 1 and record[0].category is linsvm.LinsvmWarning


def test_converged_solve_is_silent():
    X, y = random_problem(n_samples=120, n_features=10, seed=4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for solver in ("mfn", "dcd", "alm", "alm-exact", "sdm-cs", "perf", "mfn-l1"):
            linsvm.train(X, y, solver=solver)


# ------------------------------------------------- edge cases: within 1% or a warning

def _hinge_optimum(Xa, t, c, C):
    """min 1/2||w||^2 + C sum c_i xi_i, xi_i >= 1 - t_i w.x_i, xi >= 0, by SLSQP."""
    n, d = Xa.shape
    cons = [{"type": "ineq", "fun": lambda z: z[d:] - 1 + t * (Xa @ z[:d]),
             "jac": lambda z: np.hstack([t[:, None] * Xa, np.eye(n)])},
            {"type": "ineq", "fun": lambda z: z[d:],
             "jac": lambda z: np.hstack([np.zeros((n, d)), np.eye(n)])}]
    r = so.minimize(lambda z: 0.5 * z[:d] @ z[:d] + C * np.sum(c * z[d:]),
                    np.hstack([np.zeros(d), np.ones(n)]),
                    jac=lambda z: np.hstack([z[:d], C * c]), constraints=cons, method="SLSQP",
                    options={"ftol": 1e-14, "maxiter": 2000})
    assert r.success
    return r.fun


def _cs_optimum(Xa, codes, k, C, ww):
    """Crammer-Singer (ww=False) or Weston-Watkins optimum by SLSQP (tiny problems)."""
    n, d = Xa.shape
    pairs = [(i, m) for i in range(n) for m in range(k) if m != codes[i]]
    nx = len(pairs) if ww else n

    def g(z):
        S = Xa @ z[:d * k].reshape(d, k)
        xi = z[d * k:]
        out = [xi[p if ww else i] - 1 + S[i, codes[i]] - S[i, m] for p, (i, m) in enumerate(pairs)]
        return np.array(out + list(xi))

    r = so.minimize(lambda z: 0.5 * z[:d * k] @ z[:d * k] + C * np.sum(z[d * k:]),
                    np.hstack([np.zeros(d * k), 2 * np.ones(nx)]),
                    constraints=[{"type": "ineq", "fun": g}], method="SLSQP",
                    options={"ftol": 1e-14, "maxiter": 3000})
    if not r.success:           # SLSQP can stall next to the optimum: polish by trust-constr
        r = so.minimize(lambda z: 0.5 * z[:d * k] @ z[:d * k] + C * np.sum(z[d * k:]), r.x,
                        constraints=[so.NonlinearConstraint(g, 0.0, np.inf)],
                        method="trust-constr", options={"gtol": 1e-12, "xtol": 1e-14,
                                                        "maxiter": 5000})
        assert np.all(g(r.x) >= -1e-9)
    assert r.success
    return r.fun


def _within_1pct_or_warns(solver, X, y, ref, **opts):
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        model = linsvm.train(X, y, solver=solver, **opts)
    warned = any(issubclass(w.category, linsvm.ConvergenceWarning) for w in record)
    f = model.stats["objective"]
    assert f >= ref * (1 - 1e-6)
    assert warned or f <= 1.01 * ref, (solver, f, ref)
    return f


EDGE_HINGE = ["dcd", "mfn-l1", "alm", "alm-exact", "perf"]


@pytest.mark.parametrize("solver", EDGE_HINGE)
def test_two_examples_one_feature_each_within_1pct_or_warns(solver):
    # `1 1:1` / `-1 2:1`: hinge optimum 1 at C = 1 with the bias feature
    X = sp.csr_matrix(np.eye(2))
    y = np.array([1.0, -1.0])
    ref = _hinge_optimum(np.hstack([np.eye(2), np.ones((2, 1))]), y, np.ones(2), 1.0)
    _within_1pct_or_warns(solver, X, y, ref)


@pytest.mark.parametrize("solver", EDGE_HINGE)
def test_one_example_per_class_one_vs_rest_within_1pct_or_warns(solver):
    # dcd --loss l1 stopped 1.4% above the optimum here without a word
    X = sp.csr_matrix(np.eye(3))
    y = np.array([1.0, 2.0, 3.0])
    Xa = np.hstack([np.eye(3), np.ones((3, 1))])
    ref = sum(_hinge_optimum(Xa, np.where(y == c, 1.0, -1.0), np.ones(3), 1.0) for c in (1, 2, 3))
    _within_1pct_or_warns(solver, X, y, ref)


@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_one_example_per_class_multiclass_within_1pct_or_warns(solver, n_classes):
    # sdm-cs / sdm-ww stopped 1.8-3.2% above the optimum here without a word
    X = sp.csr_matrix(np.eye(n_classes))
    y = np.arange(1.0, n_classes + 1)
    Xa = np.hstack([np.eye(n_classes), np.ones((n_classes, 1))])
    ref = _cs_optimum(Xa, np.arange(n_classes), n_classes, 1.0, solver == "sdm-ww")
    _within_1pct_or_warns(solver, X, y, ref)


@pytest.mark.data
@pytest.mark.parametrize("solver", ["alm-exact", "alm", "dcd", "perf", "mfn-l1"])
def test_half_the_sample_weights_zero_within_1pct_or_warns(solver):
    from linsvm.io.svmlight import load_svmlight

    X, y = load_svmlight(str(shared_file("binary/heart_scale")))
    sw = np.ones(y.shape[0])
    sw[::2] = 0.0
    ref = linsvm.train(X, y, solver="dcd", tol=1e-9, max_iter=100000, sample_weight=sw)
    assert ref.column_stats[0]["duality_gap"] <= 1e-6 * ref.stats["objective"]
    _within_1pct_or_warns(solver, X, y, ref.stats["objective"], sample_weight=sw)
