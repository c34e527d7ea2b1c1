"""Shared fixtures and helpers of the suite: the real data sets (skipped when absent), small
generated problems, the bias-augmented matrix, the in-process command runner, and the
markers' guards.

Markers (registered in pyproject.toml): `data` (reads $LINSVM_DATA), `mpi` (launches
mpiexec), `subprocess` (starts a process), `slow` (over about a third of a second:
`-m "not slow"` is the quick suite).  A test that reads the data sets, launches mpiexec
or starts a process without its marker fails (the guards below), so `pytest -m "not
data"` and `-m "not subprocess"` mean what they say.
"""
import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

REPO = Path(__file__).resolve().parent.parent


def child_env(**extra):
    """Environment for a Python subprocess that must import the linsvm under test.

    The directory this process imported linsvm from (a checkout's in-place build, or
    site-packages after `pip install .`) goes first on PYTHONPATH, and PYTHONSAFEPATH
    keeps `python -c` / `python -m` from putting the working directory first: from the
    repository root that would import the uncompiled sources (as CI's clean clone has
    them) instead of the package being tested."""
    import linsvm

    root = str(Path(linsvm.__file__).resolve().parent.parent)
    rest = os.environ.get("PYTHONPATH")
    return dict(os.environ, PYTHONSAFEPATH="1",
                PYTHONPATH=root + (os.pathsep + rest if rest else ""), **extra)


def default_sigint():
    """preexec_fn of a child that a test interrupts: it starts with SIGINT's default
    disposition whatever this process has.  A runner started with SIGINT ignored (a
    shell script's background job, `nohup pytest -q tests &`) would pass SIG_IGN on to
    every child, and a Python child keeps an ignored SIGINT ignored."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def default_sigint_blocked():
    """preexec_fn as default_sigint, with SIGINT also blocked: one sent before the child
    unblocks it waits for that moment (linsvm's entry points unblock it at their first
    instruction, linsvm.runtime.sigint), so that a test can send it during the
    interpreter's own start-up and still test linsvm's first instruction on."""
    import signal

    default_sigint()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler (KeyboardInterrupt) in this process for one test that
    sends itself SIGINT, whatever the runner's disposition (ignored under nohup)."""
    import signal

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def mpiexec():
    """The mpiexec to launch MPI tests with (the one beside this Python, as the mpich
    wheel installs it, else the first on PATH); skips the test without mpi4py or an
    mpiexec (the `mpi` extra: pip install ".[mpi]")."""
    import shutil
    import sys

    _require_marker("mpi", "launches mpiexec")
    pytest.importorskip("mpi4py", reason="mpi4py is not installed (pip install '.[mpi]')")
    here = Path(sys.executable).parent / "mpiexec"
    exe = str(here) if here.exists() else shutil.which("mpiexec")
    if exe is None:
        pytest.skip("no mpiexec on PATH (pip install '.[mpi]' brings MPICH's)")
    return exe


def data_dir():
    """Where the shared data sets live: $LINSVM_DATA, default <repo>/../shared/datasets.
    Only a test marked `data` may ask."""
    _require_marker("data", "reads the shared data sets ($LINSVM_DATA)")
    return Path(os.environ.get("LINSVM_DATA", REPO.parent / "shared" / "datasets"))


def shared_file(relpath):
    """Path of a shared data set file, or skip the test if it is absent."""
    path = data_dir() / relpath
    if not path.is_file():
        pytest.skip(f"data set {relpath} not found under {data_dir()} (set LINSVM_DATA)")
    return path


def wide_sparse_problem(n, d, per_row, seed, noise=0.0):
    """n rows of per_row uniform(0, 1) values at random columns of d (duplicates summed),
    and each row's score under a standard normal weight vector (plus noise times a
    standard normal): (X, s), X a scipy CSR matrix."""
    rng = np.random.default_rng(seed)
    cols = rng.integers(0, d, per_row * n)
    X = sp.csr_matrix((rng.random(per_row * n), cols, np.arange(0, per_row * n + 1, per_row)),
                      shape=(n, d))
    X.sum_duplicates()
    s = X @ rng.standard_normal(d)
    if noise:
        s = s + noise * rng.standard_normal(n)
    return X, s


def random_problem(n_samples=60, n_features=12, density=0.4, n_classes=2, seed=0, scale=1.0):
    """A small random sparse classification problem with noisy linear labels."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_samples, n_features, density=density, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k) * scale)
    W = rng.standard_normal((n_features, n_classes))
    scores = X @ W + 0.3 * rng.standard_normal((n_samples, n_classes))
    if n_classes == 2:
        y = np.where(scores[:, 0] > np.median(scores[:, 0]), 1.0, -1.0)
    else:
        y = np.argmax(scores, axis=1).astype(np.float64) + 1.0
    return X.tocsr(), y


@pytest.fixture
def small_binary():
    return random_problem()


# Hypothesis profiles: "default" keeps property-based tests to seconds (150 examples
# each); "ci" is the same with the examples fixed; "long" (pytest
# --hypothesis-profile=long, tools/fuzz.sh) runs them for hours, LINSVM_FUZZ_EXAMPLES
# examples each (default 100000).
try:
    from hypothesis import HealthCheck, settings as _hyp_settings
except ImportError:          # hypothesis is in the `test` extra; property tests skip without it
    pass
else:
    _hyp_settings.register_profile("default", max_examples=150, deadline=None,
                                   suppress_health_check=[HealthCheck.too_slow])
    _hyp_settings.register_profile(
        "long", max_examples=int(os.environ.get("LINSVM_FUZZ_EXAMPLES", "100000")), deadline=None,
        suppress_health_check=list(HealthCheck))
    # CI (the CI variable set) draws the same examples every run: a failure there is one
    # that reproduces, never a random moment's
    _hyp_settings.register_profile("ci", max_examples=150, deadline=None, derandomize=True,
                                   database=None, suppress_health_check=[HealthCheck.too_slow])
    _hyp_settings.load_profile("ci" if os.environ.get("CI") else "default")


# The compiled entries take keyword-only arguments without defaults (the
# solvers' option registry is the only place a default lives).  Tests that call them
# directly were written against the settings below, the entries' former defaults; these
# adapters pass them by name, with the test's own arguments on top.
NEWTON_SETTINGS = dict(tol=1e-6, warm=False, heuristic1=True, heuristic2=True, precondition=True,
                       forcing=0.0, forcing_guard=0.0, max_iter=50, cg_max_iter=5000,
                       n_threads=0, jacobi_weight=1.0, callback=None)


def data_view(indptr, indices, data, n_features, bias, rows):
    """linsvm._data.DataView over raw CSR buffers (checked as CSRBuffers.trusted checks
    them), the bias feature and the row numbers: what the compiled entries take."""
    from linsvm._data import DataView
    from linsvm.problem.csr import CSRBuffers
    X = CSRBuffers.trusted(indptr, indices, data, n_features, n_features)
    return DataView(X, bias, np.asarray(rows, dtype=np.int64))


def newton_solve(indptr, indices, data, n_features, bias, rows, t, c, lam, beta, loss, **kw):
    """linsvm._mfn.newton_solve with positional data arguments and the former defaults."""
    from linsvm import _mfn
    settings = dict(NEWTON_SETTINGS, fused_cg=False, pattern=True, kkt=False, diag_update=True,
                    compact_rows=True,
                    gstop=0.0, gap_stop=0.0, regularize_bias=True)
    return _mfn.newton_solve(data_view(indptr, indices, data, n_features, bias, rows), t=t, c=c,
                             lam=lam, beta=beta, loss=loss, **{**settings, **kw})


def ordinal_solve(indptr, indices, data, n_features, bias, rows, codes, n_thresholds, c, lam,
                  beta, **kw):
    """linsvm._mfn.ordinal_solve with positional data arguments and the former defaults."""
    from linsvm import _mfn
    settings = NEWTON_SETTINGS
    return _mfn.ordinal_solve(data_view(indptr, indices, data, n_features, bias, rows),
                              codes=codes, n_thresholds=n_thresholds, c=c, lam=lam, beta=beta,
                              **{**settings, **kw})


def binary_gradient(indptr, indices, data, n_features, bias, rows, t, c, lam, beta, loss,
                    n_threads=0):
    """linsvm._mfn.gradient with positional arguments (n_threads formerly defaulted to 0)."""
    from linsvm import _mfn
    return _mfn.gradient(data_view(indptr, indices, data, n_features, bias, rows), t=t, c=c,
                         lam=lam, beta=beta, loss=loss, n_threads=n_threads)


def assert_one_line_error(result, *needles, code=1):
    """A CliRunner result that failed with `code` and exactly one line on stderr holding
    every needle, and no traceback."""
    assert result.exit_code == code, result.output
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, result.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert "Traceback" not in result.output


# ------------------------------------------------------------------ markers and their guards

_CURRENT = {"markers": None}      # the marker names of the test being set up or run


def _require_marker(name, what):
    """Fail the running test unless it carries marker `name` (outside a test: allowed)."""
    markers = _CURRENT["markers"]
    if markers is not None and name not in markers:
        pytest.fail(f"this test {what}: mark it @pytest.mark.{name}", pytrace=False)


class _GuardedPopen(subprocess.Popen):
    """subprocess.Popen that only a test marked `subprocess` (or `mpi`) may start."""

    def __init__(self, *args, **kwargs):
        markers = _CURRENT["markers"]
        command = args[0] if args else kwargs.get("args")
        fonts = isinstance(command, (list, tuple)) and command[:1] == ["fc-list"]
        # matplotlib lists the system's fonts once per machine, on the first plot ever
        # drawn (it caches them): that process is matplotlib's, not the test's
        if markers is not None and not {"subprocess", "mpi"} & markers and not fonts:
            _require_marker("subprocess", "starts a process")
        super().__init__(*args, **kwargs)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _CURRENT["markers"] = {m.name for m in item.iter_markers()}
    original, subprocess.Popen = subprocess.Popen, _GuardedPopen
    try:
        return (yield)
    finally:
        subprocess.Popen = original
        _CURRENT["markers"] = None


# ------------------------------------------------------------------ helpers many files use

def liblinear_tool(name):
    """The path of a built LIBLINEAR's program `name` (train, predict): in
    $LINSVM_LIBLINEAR_DIR, default ../peers/liblinear beside the repository's parent; the
    test is skipped when there is none.  A test that calls it starts a process: mark it
    `subprocess`."""
    root = os.environ.get("LINSVM_LIBLINEAR_DIR",
                          str(Path(__file__).resolve().parents[2] / "peers" / "liblinear"))
    path = os.path.join(root, name)
    if not os.access(path, os.X_OK):
        pytest.skip(f"LIBLINEAR's {name} not found in {root} (LINSVM_LIBLINEAR_DIR)")
    return path


def augmented(X, bias=1.0, dense=False):
    """X (any sparse or dense matrix) with LIBLINEAR's bias feature appended as a last
    column of value `bias` when bias > 0, as CSR float64 (a dense array with dense=True):
    the matrix whose rows x_i' = [x_i, B] the objectives with a regularized bias use."""
    X = sp.csr_matrix(X, dtype=np.float64)
    if bias > 0:
        X = sp.hstack([X, np.full((X.shape[0], 1), float(bias))]).tocsr()
    return X.toarray() if dense else X


def targets(model, y):
    """+1 / -1 targets of labels y for a binary model: +1 for the model's first class."""
    return np.where(y == model.classes_[0], 1.0, -1.0)


def invoke(command, *args, **kwargs):
    """Run a click command in this process as a user types it (arguments str()-ed), with
    exceptions propagating (a traceback fails the test): click's Result."""
    from click.testing import CliRunner

    kwargs.setdefault("catch_exceptions", False)
    return CliRunner().invoke(command, [str(a) for a in args], **kwargs)


def run_here(*args, cwd, input=None):
    """`linsvm ARGS` in this process (click's runner) from directory `cwd`, as a user
    types it: (exit status, stdout, stderr)."""
    from click.testing import CliRunner

    from linsvm.cli import cli
    here = os.getcwd()
    os.chdir(cwd)
    try:
        r = CliRunner().invoke(cli, [str(a) for a in args], prog_name="linsvm", input=input,
                               catch_exceptions=False)
    finally:
        os.chdir(here)
    return r.exit_code, r.stdout, r.stderr


def one_error_line(err, prog="linsvm"):
    """The single line a failed command printed on stderr (no traceback, no warning)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog} ") and ": error: " in lines[0], err
    return lines[0]


@pytest.fixture(scope="module")
def sector_head():
    """The first 1000 training examples of SECTOR (real text data, about 100 classes), as
    (X, y); skips when the data set is absent.  Only a test marked `data` may ask."""
    import linsvm

    X, y = linsvm.load_svmlight(str(shared_file("multiclass/sector.scale.bz2")))
    return X[:1000], y[:1000]
