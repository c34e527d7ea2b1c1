"""tools/bench_scale.py reads what linsvm's commands print: the read line and the training
summary of linsvm-train, the read line of linsvm-cv, /usr/bin/time -v's report; and it
counts a generated file's rows and non-zeros.  The command line's output is produced
here by the commands themselves, so a change of their lines that the harness would
misread fails this file, and the counts are checked against the parser's."""
import importlib.util
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import linsvm
from linsvm.cli import cv_cmd, train_cmd
from linsvm.io.synth import make_text_classification

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_scale", ROOT / "tools" / "bench_scale.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_scale"] = module         # its dataclasses look their module up
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules["bench_scale"]


@pytest.fixture
def text_set(tmp_path):
    X, y = make_text_classification(n_samples=300, n_features=400, seed=3)
    path = tmp_path / "t.svm"
    linsvm.dump_svmlight(X, y, path)
    return path, X


def test_train_lines_give_rows_non_zeros_read_and_solve(bench, text_set, tmp_path):
    path, X = text_set
    r = CliRunner().invoke(train_cmd, ["-s", "2", "-c", "1", "-B", "1", "-m", "1", str(path),
                                       str(tmp_path / "m")])
    assert r.exit_code == 0, r.output
    got = bench.parse_linsvm_log(r.stderr)
    assert (got["rows"], got["nnz"]) == (X.shape[0], X.nnz)
    assert got["features"] == X.indices.max() + 1
    model = linsvm.load_model(tmp_path / "m")
    assert got["iterations"] == model.stats["n_iter"]
    assert got["cg_iter"] == model.stats["cg_iter"]
    assert got["objective"] == pytest.approx(model.stats["objective"], rel=1e-9)
    assert got["read_s"] >= 0 and got["solve_s"] >= 0


def test_cv_read_line(bench, text_set):
    path, X = text_set
    r = CliRunner().invoke(cv_cmd, ["-s", "2", "-v", "3", "-c", "0.5,1", "-m", "1", str(path)])
    assert r.exit_code == 0, r.output
    got = bench.parse_linsvm_log(r.stderr)
    assert (got["rows"], got["nnz"]) == (X.shape[0], X.nnz)


def test_count_file_gives_the_parsers_rows_and_non_zeros(bench, text_set):
    path, X = text_set
    assert bench.count_file(path) == (X.shape[0], X.nnz)


def test_time_report_fields(bench):
    report = ("\tCommand being timed: \"train a b\"\n\tMaximum resident set size (kbytes): 38932\n"
              "\tPage size (bytes): 4096\n\tExit status: 3\n")
    assert bench.parse_time_v(report) == {"peak_kb": 38932, "exit": 3}
    assert bench.parse_time_v("") == {"peak_kb": None, "exit": None}


@pytest.mark.parametrize("text, n", [("200k", 200_000), ("10M", 10**7), ("2.2e9", 2_200_000_000),
                                     ("2.2G", 2_200_000_000), ("1234", 1234)])
def test_sizes(bench, text, n):
    assert bench.parse_size(text) == n
    assert bench.parse_size(bench.size_label(n)) == n
