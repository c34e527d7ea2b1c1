"""Cross-validation: folds, warm-started C paths, parallel determinism, outputs."""
import json

import numpy as np
import pytest
from click.testing import CliRunner

import linsvm
from linsvm.cv import cross_validate, make_folds, parse_grid
from linsvm.cli import cv_cmd
from linsvm.io.synth import make_text_classification

from conftest import invoke, random_problem


def test_parse_grid():
    assert parse_grid("0.25,0.5,1") == [0.25, 0.5, 1.0]
    assert parse_grid("-2:1:1") == [-2.0, -1.0, 0.0, 1.0]
    assert parse_grid("1:2:0.25") == [1.0, 1.25, 1.5, 1.75, 2.0]
    for bad in ("", "1:0:1", "1:2", "a,b", "1:2:0"):
        with pytest.raises(linsvm.ParameterError):
            parse_grid(bad)


def test_folds_are_stratified_and_deterministic():
    y = np.array([1.0] * 37 + [2.0] * 11 + [3.0] * 52)
    f = make_folds(y, 5, seed=3)
    assert np.array_equal(f, make_folds(y, 5, seed=3))
    assert not np.array_equal(f, make_folds(y, 5, seed=4))
    sizes = np.bincount(f, minlength=5)
    assert sizes.max() - sizes.min() <= 1
    for label in (1.0, 2.0, 3.0):
        per_fold = np.bincount(f[y == label], minlength=5)
        assert per_fold.max() - per_fold.min() <= 1


def test_folds_keep_queries_whole():
    qid = np.repeat(np.arange(12), 7)
    y = np.tile(np.arange(7.0), 12)
    f = make_folds(y, 4, seed=0, qid=qid)
    for q in range(12):
        assert np.unique(f[qid == q]).size == 1
    assert np.bincount(f, minlength=4).min() > 0


def test_fold_scores_equal_training_on_copied_folds():
    X, y = random_problem(n_samples=120, n_features=10, seed=4)
    res = cross_validate(X, y, Cs=[0.5], n_folds=4, seed=1)
    fold = make_folds(y, 4, seed=1)
    expected = []
    for f in range(4):
        tr, te = fold != f, fold == f
        model = linsvm.train(X[tr], y[tr], C=0.5, n_threads=1)
        expected.append(np.mean(model.predict(X[te]) == y[te]))
    np.testing.assert_allclose(res.points[0].scores, expected)


@pytest.mark.slow
def test_warm_path_reaches_cold_models_with_fewer_iterations():
    X, y = make_text_classification(n_samples=3000, n_features=4000, seed=2)
    Cs = [2.0 ** k for k in range(-3, 4)]
    warm = cross_validate(X, y, Cs=Cs, n_folds=3, tol=1e-8)
    cold = cross_validate(X, y, Cs=Cs, n_folds=3, tol=1e-8, warm_start=False)
    for a, b in zip(warm.points, cold.points):
        np.testing.assert_allclose(a.scores, b.scores)
    assert sum(p.n_iter for p in warm.points) < sum(p.n_iter for p in cold.points)


def test_parallel_folds_give_identical_results():
    X, y = random_problem(n_samples=300, n_features=15, n_classes=3, seed=7)
    a = cross_validate(X, y, Cs=[0.1, 1, 10], n_folds=5, n_jobs=1)
    b = cross_validate(X, y, Cs=[0.1, 1, 10], n_folds=5, n_jobs=2)
    assert [p.scores for p in a.points] == [p.scores for p in b.points]
    assert [p.n_iter for p in a.points] == [p.n_iter for p in b.points]


def test_best_point_ties_go_to_the_smaller_c():
    X, y = random_problem(n_samples=60, n_features=5, seed=1)
    res = cross_validate(X, y, Cs=[100.0, 1000.0], n_folds=3)
    if res.points[0].mean == res.points[1].mean:
        assert res.best.C == 100.0
    assert res.best.mean == max(p.mean for p in res.points)


def test_cli_tsv_json_and_output_model(tmp_path):
    X, y = random_problem(n_samples=100, n_features=8, seed=3)
    f = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(f))
    tsv = invoke(cv_cmd, "-q", "-c", "0.5,2", "-v", "4", "--format", "tsv", str(f))
    assert tsv.exit_code == 0, tsv.output
    lines = tsv.stdout.strip().splitlines()
    assert lines[0].split("\t")[:3] == ["C", "p", "accuracy"]
    assert [float(line.split("\t")[0]) for line in lines[1:]] == [0.5, 2.0]
    js = invoke(cv_cmd, "-q", "--log2c", "-1:1:1", "-v", "4", "--format", "json", "--output-model",
                str(tmp_path / "best.model"), str(f))
    assert js.exit_code == 0, js.output
    doc = json.loads(js.stdout)
    assert [p["C"] for p in doc["points"]] == [0.5, 1.0, 2.0]
    best = max(doc["points"], key=lambda p: (p["mean"], -p["C"]))
    assert doc["best"]["C"] == best["C"]
    model = linsvm.load_model(str(tmp_path / "best.model"))
    np.testing.assert_array_equal(model.weights, linsvm.train(X, y, C=best["C"]).weights)


def test_cli_output_does_not_depend_on_jobs(tmp_path):
    X, y = random_problem(n_samples=150, n_features=8, seed=5)
    f = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(f))
    outs = []
    for j in ("1", "2"):
        r = invoke(cv_cmd, "-q", "-c", "0.1,1,10", "-j", j, "--format", "tsv", str(f))
        assert r.exit_code == 0
        outs.append([line.split("\t")[:4] + line.split("\t")[5:] for line in r.stdout.splitlines()])
    assert outs[0] == outs[1]


def test_cli_errors(tmp_path):
    X, y = random_problem(n_samples=30, n_features=4, seed=0)
    f = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(f))
    r = invoke(cv_cmd, "-c", "1", "--log2c", "0:1:1", str(f))
    assert r.exit_code == 2
    r = invoke(cv_cmd, "-c", "x,y", str(f))
    assert r.exit_code == 1 and "bad C grid" in r.stderr
    r = invoke(cv_cmd, "--metric", "mae", str(f))
    assert r.exit_code == 1 and "does not apply" in r.stderr


def test_progress_counts_every_trained_model_once():
    X, y = random_problem(n_samples=90, n_features=6, seed=2)
    calls = []
    cross_validate(X, y, Cs=[0.5, 1, 2], n_folds=3, n_jobs=2,
                   progress=lambda done, total: calls.append((done, total)))
    assert sorted(calls) == [(k, 9) for k in range(1, 10)]


def test_metric_f1_is_refused_for_multiclass():
    X, y = random_problem(n_samples=90, n_features=6, n_classes=3, seed=2)
    with pytest.raises(linsvm.ParameterError, match="does not apply"):
        cross_validate(X, y, n_folds=3, metric="f1")


def test_a_c_grid_is_refused_for_the_one_class_solver_but_one_c_is_not(tmp_path):
    from conftest import assert_one_line_error

    X, y = random_problem(n_samples=40, n_features=4, seed=5)
    f = tmp_path / "d.svm"
    linsvm.dump_svmlight(X, y, str(f))
    for grid in (["-c", "0.5,1,2"], ["--log2c", "-1:1:1"]):
        r = CliRunner().invoke(cv_cmd, ["-s", "21", "-v", "3", *grid, str(f)])
        assert_one_line_error(r, f"{grid[0]}: oneclass has no C in its objective")
        assert r.stdout == ""
    r = CliRunner().invoke(cv_cmd, ["-s", "21", "-q", "-v", "3", "-c", "1", str(f)])
    assert r.exit_code == 0, r.output
