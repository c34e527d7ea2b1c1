"""What the commands import (start-up): --help and --version nothing numeric,
linsvm-train and linsvm-predict on a file neither SciPy nor NumPy's masked arrays
(np.unique pulls them in), nor scikit-learn, mpi4py or matplotlib, nor the fast-io
readers on a plain text file, nor the parts of the command only some runs need (-b 1,
-C, -v, --shards: examples/bench_startup.py times the rest); and that the entry points
end a finished command without the interpreter's teardown, keeping its output, status
and atexit callbacks (linsvm.runtime.quick_exit)."""
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


@pytest.mark.subprocess
@pytest.mark.parametrize("args", [["--version"], ["train", "--help"], ["predict", "--help"],
                                  ["cv", "--help"], ["train", "--help-solver", "mfn"]])
def test_help_and_version_import_nothing_numeric(tmp_path, args):
    mods = _imported(tmp_path, *args)
    assert not {m for m in mods if m.split(".")[0] in ("numpy", "scipy")}
    assert not {m for m in mods if m.startswith("linsvm._")} - {"linsvm._lazy", "linsvm._openmp", "linsvm._version"}


@pytest.mark.slow
@pytest.mark.subprocess
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


@pytest.mark.subprocess
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


# ------------------------------------------------------------------ ending without the teardown

def _python(tmp_path, code, *flags):
    return subprocess.run([sys.executable, *flags, "-c", code], capture_output=True, text=True,
                          env=child_env(), cwd=tmp_path)


TEARDOWN = ("import sys\n"
            "class Teardown:\n"
            "    def __del__(self): sys.stderr.write('teardown\\n')\n"
            "keep = Teardown()\n")


@pytest.mark.slow
@pytest.mark.subprocess
def test_a_finished_command_ends_without_the_teardown_and_keeps_its_output(tmp_path):
    # linsvm.runtime.quick_exit: the entry points end the process once the command has
    # ended, so an object that only module teardown would delete is never deleted; the
    # model file and every line written to standard output are there, with the status.
    rng = __import__("numpy").random.default_rng(0)
    lines = [f"{1 if rng.random() < 0.5 else -1} 1:{rng.random():.6f} 2:{rng.random():.6f}"
             for _ in range(3000)]
    (tmp_path / "d.svm").write_text("\n".join(lines) + "\n")
    train = TEARDOWN + ("sys.argv = ['linsvm-train', '-q', 'd.svm', 'm']\n"
                        "from linsvm.__main__ import train_main\ntrain_main()\n")
    out = _python(tmp_path, train)
    assert out.returncode == 0 and "teardown" not in out.stderr, out.stderr
    assert (tmp_path / "m").is_file()
    predict = TEARDOWN + ("sys.argv = ['linsvm-predict', '-q', 'd.svm', 'm', '-']\n"
                          "from linsvm.__main__ import predict_main\npredict_main()\n")
    out = _python(tmp_path, predict)
    assert out.returncode == 0 and "teardown" not in out.stderr, out.stderr
    assert len(out.stdout.splitlines()) == 3000
    missing = TEARDOWN + ("sys.argv = ['linsvm-train', '-q', 'nope.svm', 'm2']\n"
                          "from linsvm.__main__ import train_main\ntrain_main()\n")
    out = _python(tmp_path, missing)
    assert out.returncode == 1 and out.stderr.startswith("linsvm-train: error: ")
    assert "teardown" not in out.stderr
    out = _python(tmp_path, train, "-X", "dev")          # dev mode: the normal exit
    assert out.returncode == 0 and "teardown" in out.stderr


QUICK = ("import atexit, sys, threading\n"
         "from linsvm.runtime import quick_exit\n"
         "{setup}\n"
         "atexit.register(lambda: print('atexit ran'))\n"
         "print('before', end=' ')\n"
         "quick_exit.finish(3)\n"
         "print('returned')\n")


@pytest.mark.subprocess
@pytest.mark.parametrize("setup, ends", [
    ("quick_exit.start()", True),
    ("", False),                                               # not a linsvm program
    ("quick_exit.start(); sys.setprofile(lambda *a: None)", False),   # a profiler reports later
    ("quick_exit.start(); ev = threading.Event(); "
     "threading.Thread(target=ev.wait, daemon=True).start()", False),
    ("quick_exit.start(); import io; sys.stdout = io.StringIO()", False),  # redirected
])
def test_quick_exit_runs_atexit_and_keeps_the_status_or_leaves_the_exit_to_python(
        tmp_path, setup, ends):
    # ends: the atexit callback ran after the flush, then the status 3; otherwise
    # finish returned and Python's own exit ran the callback (status 0)
    out = _python(tmp_path, QUICK.format(setup=setup))
    if ends:
        assert out.returncode == 3 and out.stdout == "before atexit ran\n", out
    else:
        assert out.returncode == 0, out
        if "StringIO" not in setup:
            assert out.stdout == "before returned\natexit ran\n", out
