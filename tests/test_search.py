"""`linsvm-train -C` (LIBLINEAR's parameter search, linsvm.fit.search): the grid, the
pooled values recomputed from folds trained here, and LIBLINEAR's lines."""
import math
import re

import numpy as np
import pytest
from click.testing import CliRunner
import scipy.sparse as sp

import linsvm
from linsvm.cli import train_cmd
from linsvm.cv import cross_validate, make_folds
from linsvm.fit.search import P_STEPS, search_C, start_C
from linsvm.io.svmlight import dump_svmlight

from conftest import invoke, random_problem


def test_start_c_is_the_power_of_two_below_one_over_n_times_the_largest_squared_norm():
    X = sp.csr_matrix(np.array([[3.0, 0.0], [0.0, 1.0], [1.0, 1.0]]))
    # largest ||x||^2 with the bias feature (1): 9 + 1 = 10; n = 3: 1/30 -> 2^-5
    assert start_C(X, 1.0) == 2.0 ** -5
    assert start_C(X, -1.0) == 2.0 ** -5          # 1/27 -> 2^-5 too
    assert start_C(sp.csr_matrix((3, 2)), -1.0) == 1.0
    # the squared hinge (LIBLINEAR's -s 2): 1/(2 n max ||x||^2) = 1/60 -> 2^-6
    assert start_C(X, 1.0, squared=True) == 2.0 ** -6


@pytest.mark.parametrize("solver,opts,first", [("mfn", {}, -8), ("dcd", {"loss": "l2"}, -8),
                                               ("dcd", {"loss": "l1"}, -7), ("lr", {}, -7)])
def test_the_search_starts_where_liblinear_does_for_the_loss(solver, opts, first):
    # LIBLINEAR's calc_start_C: 1/(n max ||x||^2) for -s 0, half that for -s 2 (the squared
    # hinge).  Here max ||x||^2 = 9 + 1 (bias) and n = 12: 1/120 -> 2^-7, 1/240 -> 2^-8
    X = sp.csr_matrix(np.array([[3.0, 0.0], [0.0, 1.0], [1.0, 1.0]] * 4))
    y = np.array([1.0, -1.0, 1.0] * 4)
    res = search_C(X, y, solver=solver, n_folds=2, seed=0, **opts)
    assert math.log2(res.points[0][0]) == first


def test_each_point_is_the_accuracy_of_the_pooled_out_of_fold_predictions():
    X, y = random_problem(n_samples=90, n_features=6, seed=4)
    res = search_C(X, y, solver="mfn", n_folds=3, C0=0.25, seed=0)
    assert [pt[0] for pt in res.points] == [0.25 * 2 ** k for k in range(13)]   # to 1024
    fold = make_folds(y, 3, seed=0)
    for C, _, value in res.points[:4]:
        pred = np.empty_like(y)
        for f in range(3):
            m = linsvm.train(X, y, solver="mfn", C=C, rows=np.flatnonzero(fold != f))
            pred[fold == f] = m.predict(X[fold == f])
        assert value == pytest.approx(np.mean(pred == y), abs=1e-12)
    best = res.best
    assert best[2] == max(v for _, _, v in res.points)
    assert best[0] == min(C for C, _, v in res.points if v == best[2])


def test_regression_searches_the_tube_width_too():
    rng = np.random.default_rng(0)
    X = sp.random(80, 5, density=0.5, format="csr", random_state=rng)
    y = 3.0 + X @ rng.standard_normal(5)
    res = search_C(X, y, solver="svr", n_folds=3, C0=256.0, p0=1.0)
    ps = sorted({pt[1] for pt in res.points}, reverse=True)
    assert ps == pytest.approx([i / P_STEPS for i in range(P_STEPS - 1, -1, -1)])
    assert {pt[0] for pt in res.points} == {256.0 * 2 ** k for k in range(13)}        # to 2^20
    assert res.metric == "mse" and res.best[2] == min(v for _, _, v in res.points)


def test_the_command_prints_liblinears_lines(tmp_path):
    X, y = random_problem(n_samples=80, n_features=5, seed=2)
    dump_svmlight(X, y, tmp_path / "d.svm")
    r = invoke(train_cmd, "-C", "-v", "3", "-c", "0.5", str(tmp_path / "d.svm"))
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    assert lines[0] == "Doing parameter search with 3-fold cross validation."
    assert all(re.fullmatch(r"log2c=\s*-?\d+\.\d\d\trate=[\d.]+", ln) for ln in lines[1:-1])
    assert len(lines) == 2 + 12                                     # 2^-1 .. 2^10
    m = re.fullmatch(r"Best C = ([\d.e+-]+)  CV accuracy = ([\d.]+)%", lines[-1])
    assert m and float(m.group(2)) == max(float(ln.split("rate=")[1]) for ln in lines[1:-1])
    assert math.log2(float(m.group(1))).is_integer()
    assert not list(tmp_path.glob("*.model"))                       # -C writes no model


def test_a_search_over_c_is_refused_for_the_one_class_solver_before_reading(tmp_path):
    from conftest import assert_one_line_error

    missing = str(tmp_path / "absent.svm")       # refused before the file is opened
    for solver in ("21", "oneclass"):
        r = CliRunner().invoke(train_cmd, ["-s", solver, "-C", missing])
        assert_one_line_error(r, "-C: oneclass has no C in its objective", "nu")
        assert r.stdout == "" and not list(tmp_path.iterdir())
    X, y = random_problem(n_samples=40, n_features=4, seed=3)
    with pytest.raises(linsvm.ParameterError, match="oneclass has no C"):
        search_C(X, y, solver="oneclass", n_folds=3)


@pytest.mark.parametrize("solver", ["0", "2", "11", "lr", "mfn-ord", "sdm-cs"])
def test_a_search_over_c_still_runs_for_solvers_with_a_cost(tmp_path, solver):
    X, y = random_problem(n_samples=60, n_features=4, seed=4)
    if solver == "mfn-ord":
        y = np.digitize(X.toarray()[:, 0] if sp.issparse(X) else X[:, 0], [-0.3, 0.3]) + 1.0
    dump_svmlight(X, y, tmp_path / "d.svm")
    r = CliRunner().invoke(train_cmd, ["-s", solver, "-C", "-c", "256", "-v", "2",
                                       str(tmp_path / "d.svm")])
    assert r.exit_code == 0, r.output
    assert r.stdout.strip().splitlines()[-1].startswith("Best C = ")


def test_a_search_whose_first_c_would_underflow_is_refused_in_one_line(tmp_path):
    from conftest import assert_one_line_error

    X, y = random_problem(n_samples=40, n_features=4, seed=3)
    dump_svmlight(X * 1e155, y, tmp_path / "big.svm")
    r = CliRunner().invoke(train_cmd, ["-q", "-s", "ls", "-C", str(tmp_path / "big.svm")])
    assert r.exit_code == 1 and "Traceback" not in r.output, r.output
    assert_one_line_error(r, "-C: with feature values up to", "e+155", "linsvm scale")
    with pytest.raises(linsvm.ParameterError, match="smallest normal C"):
        start_C(sp.csr_matrix(X * 1e155), 1.0)
    assert start_C(sp.csr_matrix(X * 1e150), 1.0) > 0      # squares of 1e300 still fit


def test_each_point_is_reported_as_soon_as_its_folds_are_done():
    """LIBLINEAR prints a point once its folds are trained, so a search stopped early has
    shown what it computed: here the line of the k-th point arrives when exactly k x folds
    models have been trained, not after the whole grid."""
    X, y = random_problem(n_samples=60, n_features=4, seed=5)
    trained, seen = [0], []
    res = search_C(X, y, solver="mfn", n_folds=3, C0=1.0,
                   progress=lambda done, total: trained.__setitem__(0, done),
                   log=lambda line: seen.append((trained[0], line)))
    assert [count for count, _ in seen] == [3 * (k + 1) for k in range(len(res.points))]
    assert [line for _, line in seen] == [f"log2c={math.log2(C):7.2f}\trate={100 * v:g}"
                                          for C, _, v in res.points]


def test_regression_points_come_in_liblinears_order():
    """-s 11: the largest p first, along it C ascending, each point's line as it is done."""
    rng = np.random.default_rng(0)
    X = sp.random(60, 5, density=0.5, format="csr", random_state=rng)
    y = 3.0 + X @ rng.standard_normal(5)
    seen = []
    res = search_C(X, y, solver="svr", n_folds=3, C0=2.0 ** 18, p0=1.0, log=seen.append)
    ps = [float(ln.split("p=")[1].split()[0]) for ln in seen]
    assert ps == sorted(ps, reverse=True) and len(seen) == len(res.points) == 3 * P_STEPS
    assert [pt[:2] for pt in res.points] == sorted((pt[:2] for pt in res.points),
                                                   key=lambda cp: (-cp[1], cp[0]))


def _needs_a_large_C(tmp_path, scale):
    """Separable data whose features are `scale` small: the smaller, the larger the C the
    search needs (at 3e-3 the accuracy still rises at C = 1024)."""
    rng = np.random.default_rng(1)
    X = rng.standard_normal((80, 3))
    y = np.where(X @ rng.standard_normal(3) > 0, 1.0, -1.0)
    dump_svmlight(sp.csr_matrix(X * scale), y, tmp_path / "d.svm")
    return str(tmp_path / "d.svm")


@pytest.mark.parametrize("scale", [3e-3, 1.0])
def test_liblinears_warning_when_the_best_c_is_the_largest(tmp_path, scale):
    data = _needs_a_large_C(tmp_path, scale)
    r = invoke(train_cmd, "-C", "-v", "4", data)
    assert r.exit_code == 0, r.output
    lines = r.stdout.strip().splitlines()
    points = [ln for ln in lines if ln.startswith("log2c=")]
    rates = [float(ln.split("rate=")[1]) for ln in points]
    at_top = rates.index(max(rates)) == len(rates) - 1      # the first best is the last C
    assert at_top == (scale < 1)
    assert ("WARNING: maximum C reached." in lines) == at_top
    if at_top:
        assert lines[-2] == "WARNING: maximum C reached." and lines[-1].startswith("Best C = ")
    quiet = invoke(train_cmd, "-q", "-C", "-v", "4", data)
    assert quiet.stdout.strip().splitlines() == [lines[0], lines[-1]]   # as LIBLINEAR's -q


def test_liblinearutils_search_warns_too(tmp_path, capsys):
    from linsvm.liblinearutil import svm_read_problem, train
    y, x = svm_read_problem(_needs_a_large_C(tmp_path, 3e-3))
    best_C, _, _ = train(y, x, "-C -v 4 -B 1")
    out = capsys.readouterr().out.splitlines()
    assert best_C == 1024 and out[-2:] == ["WARNING: maximum C reached.", out[-1]]


@pytest.mark.subprocess
def test_a_search_stopped_early_has_printed_its_points(tmp_path):
    """Through a pipe, as a script reads it: the first point's line arrives while the
    search goes on, and killing the run leaves the lines printed so far."""
    import subprocess
    import sys
    import time

    from conftest import child_env
    X, y = random_problem(n_samples=3000, n_features=40, seed=6)
    dump_svmlight(X, y, tmp_path / "d.svm")
    proc = subprocess.Popen([sys.executable, "-m", "linsvm", "train", "-s", "11", "-C",
                             str(tmp_path / "d.svm")], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=child_env(), text=True)
    try:
        first = proc.stdout.readline()
        point = proc.stdout.readline()
        assert first.startswith("Doing parameter search") and point.startswith("log2c=")
        time.sleep(0.2)
        assert proc.poll() is None              # the grid (20 p x 30 C) is far from done
    finally:
        proc.kill()
        rest = proc.stdout.read()
        proc.wait()
    assert all(ln.startswith("log2c=") for ln in rest.splitlines())


def _wide_margin(n=60, seed=2):
    """Separable with a wide margin: past a moderate C the loss is gone and the warm
    starts meet mfn's stop at once, so the models stop moving."""
    rng = np.random.default_rng(seed)
    t = np.where(np.arange(n) % 2 == 1, 1.0, -1.0)
    X = np.column_stack([t * (1 + rng.random(n)), 0.1 * rng.standard_normal(n)])
    return sp.csr_matrix(X), t


def test_a_c_path_ends_after_five_points_whose_models_did_not_move():
    """LIBLINEAR's -C rule: five points in a row at which no fold's weights moved end the
    path.  The points skipped are the ones a full grid gives the same models at: their
    values (and every fold's weights, recomputed here by warm-started training) equal the
    last point's."""
    X, y = _wide_margin()
    res = search_C(X, y, solver="mfn", n_folds=5, C0=16.0, seed=0)
    assert [pt[0] for pt in res.points] == [16.0 * 2 ** k for k in range(5)]
    full = cross_validate(X, y, solver="mfn", Cs=[16.0 * 2 ** k for k in range(7)],
                                 n_folds=5, seed=0)
    last = res.points[-1][2]
    assert [pt.mean for pt in full.points] == [v for _, _, v in res.points] + [last] * 2
    fold = make_folds(y, 5, seed=0)
    for f in range(5):
        rows = np.flatnonzero(fold != f)
        model = None
        ws = []
        for C in [16.0 * 2 ** k for k in range(7)]:
            model = linsvm.train(X, y, solver="mfn", C=C, rows=rows, init=model)
            ws.append(np.array(model.weights))
        assert all(np.array_equal(ws[0], w) for w in ws[1:])


def test_a_c_path_whose_models_keep_moving_runs_to_the_largest_c():
    X, y = random_problem(n_samples=90, n_features=6, seed=4)
    res = search_C(X, y, solver="lr", n_folds=3, C0=1.0, seed=0)
    assert [pt[0] for pt in res.points] == [2.0 ** k for k in range(11)]


@pytest.mark.parametrize("solver", ["cdn", "glmnet"])
def test_an_l1_path_does_not_end_among_its_all_zero_models(solver):
    """Below the C of its first non-zero weight an L1 model is exactly 0 at every C, so
    its weights do not move there; the path goes on past them (it ended after five such
    points, at the majority class's accuracy).  Features at scale 1000: the grid starts
    about 20 doublings below that C.  The best point is then the best of the same grid
    cross-validated without any early end, and beats the majority class."""
    X, y = random_problem(n_samples=120, n_features=5, seed=6)
    X = X * 1000.0
    res = search_C(X, y, solver=solver, n_folds=3, seed=0)
    Cs = [pt[0] for pt in res.points]
    full = cross_validate(X, y, solver=solver, Cs=Cs, n_folds=3, seed=0)
    assert max(v for _, _, v in res.points) == pytest.approx(max(pt.mean for pt in full.points))
    majority = max(np.mean(y == label) for label in np.unique(y))
    assert res.best[2] > majority + 0.05
    first = next(C for C in Cs if np.any(linsvm.train(X, y, solver=solver, C=C).coef_))
    assert Cs[-1] >= 4 * first
    assert Cs[0] <= first / 2 ** 10


def test_the_command_stops_early_as_liblinear_does(tmp_path):
    X, y = _wide_margin()
    dump_svmlight(X, y, tmp_path / "d.svm")
    r = invoke(train_cmd, "-C", "-c", "16", str(tmp_path / "d.svm"))
    assert r.exit_code == 0, r.output
    points = [ln for ln in r.stdout.splitlines() if ln.startswith("log2c=")]
    assert [float(ln.split("\t")[0].split("=")[1]) for ln in points] == [4.0, 5.0, 6.0, 7.0, 8.0]
    assert "WARNING: maximum C reached." not in r.stdout
