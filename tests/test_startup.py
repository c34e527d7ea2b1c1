"""What the commands import (issue 28's start-up): --help and --version nothing numeric,
linsvm-train and linsvm-predict on a file neither SciPy nor NumPy's masked arrays
(np.unique pulls them in), nor scikit-learn, mpi4py or matplotlib, nor the fast-io
readers on a plain text file, nor the parts of the command only some runs need (-b 1,
-C, -v, --shards: examples/bench_startup.py times the rest)."""
import subprocess
import sys

import pytest

from conftest import child_env

RUN = """
import contextlib, io, runpy, sys
sys.argv = ["linsvm"] + sys.argv[1:]
with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
    try:
        runpy.run_module("linsvm", run_name="__main__")
    except SystemExit as exc:
        assert not exc.code, exc.code
print(" ".join(sorted(sys.modules)))
"""
HEAVY = ("scipy", "numpy.ma", "sklearn", "mpi4py", "matplotlib")


def _imported(tmp_path, *args):
    out = subprocess.run([sys.executable, "-c", RUN, *map(str, args)], capture_output=True,
                         text=True, env=child_env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    return set(out.stdout.split())


@pytest.fixture
def files(tmp_path):
    data = tmp_path / "d.svm"
    data.write_text("".join(f"{1 if i % 3 else -1} 1:{i % 5} 3:{i % 7 / 7}\n" for i in range(60)))
    return data, tmp_path / "m"


@pytest.mark.parametrize("args", [["--version"], ["train", "--help"], ["predict", "--help"],
                                  ["cv", "--help"], ["train", "--help-solver", "mfn"]])
def test_help_and_version_import_nothing_numeric(tmp_path, args):
    mods = _imported(tmp_path, *args)
    assert not {m for m in mods if m.split(".")[0] in ("numpy", "scipy")}
    assert not {m for m in mods if m.startswith("linsvm._")} - {"linsvm._lazy", "linsvm._version"}


def test_train_and_predict_import_no_scipy(tmp_path, files):
    data, model = files
    for args in (["train", "-q", data, model], ["train", data, model],
                 ["train", "-q", "-s", "0", data, model],         # lr (its certificate's kernels)
                 ["predict", data, model, tmp_path / "p"], ["predict", "-q", data, model, tmp_path / "p"]):
        mods = _imported(tmp_path, *args)
        assert not {m for m in mods if m.split(".")[0] in HEAVY or m in HEAVY}, args
        assert "linsvm.solvers.dcd" not in mods           # only the solver that runs
        assert not {m for m in mods if m.split(".")[0] in ("isal", "indexed_bzip2")}, args
        assert not {"linsvm.fit.calibration", "linsvm.fit.search", "linsvm.fit.cv",
                    "linsvm.io.shards"} & mods, args


def test_no_solver_module_imports_scipy(tmp_path):
    """Every solver's module (each SOLVERS entry's lazy fit) loads without SciPy: a solve
    from the command line must not pay SciPy's import (0.27 s here), as lr's certificate
    once did."""
    code = ("import sys\nfrom linsvm.problem.catalog import SOLVERS\n"
            "for info in SOLVERS.values():\n    info.fit.resolve()\n"
            "print(' '.join(sorted(m for m in sys.modules if m.split('.')[0] in "
            f"{HEAVY!r})))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=child_env(), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == []
