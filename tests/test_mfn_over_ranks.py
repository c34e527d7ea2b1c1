"""The finite Newton family over row blocks: mfn, ls, mfn-huber, mfn-l1, mfn-ord, on
thread ranks.

Each test trains on P simulated ranks (tests/fakempi.py: threads with mpi4py's
buffer API), rank r passing its own contiguous block of the rows to
linsvm.train(..., comm=comm), and compares with the serial train() on the union
of the blocks in rank order: the relative objective difference must be <= 1e-9,
the predictions on a test split the same, and every rank must return the very
same weights (bit for bit).  Blocks are uneven, one layout has an empty block, one
puts a class on one rank only.  tests/test_mpiexec.py runs the same comparison under a
real `mpiexec -n 2` / `-n 3`.

Tolerances: the objective of a solve stopped at -e is only determined to about
-e's accuracy, and rounding-level changes (a distributed sum adds in another
order) move the CGLS iterates by more than rounding (CG is not forward stable;
the forcing term and the gradient test stop it early).  A serial run on the same
rows in another order already ends that far away: on australian at mfn's default
-e 0.01, 1e-8 (distributed: 3e-7), on the synthetic set below with --no-fused-cg
1.5e-5 (distributed: 6e-5).  mfn-l1's last stage ends at the first iterate whose
smoothed objective certifies -e, part way through a Newton solve, so its answer is
only determined to about -e (at 1e-5, 4e-9 apart).  So the tests compare where the
answer is determined to better than 1e-9: mfn at -e 1e-6, mfn-l1 at 1e-9 (ls,
mfn-huber and mfn-ord default to 1e-6); there serial and distributed agree to ~1e-12.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from linsvm import _testing
from conftest import shared_file
from fakempi import block_cuts as _cuts, recording_collective, run_ranks, train_on_ranks
from linsvm.runtime.collective import Collective
from linsvm.io.svmlight import load_svmlight
from linsvm.io.synth import make_text_classification

SOLVERS = ["mfn", "ls", "mfn-huber", "mfn-l1", "mfn-ord"]
TOL = {"mfn": 1e-6, "mfn-l1": 1e-9}          # module docstring
RTOL = 1e-9


def _binary_set(seed=3):
    X, y = make_text_classification(n_samples=600, n_features=400, avg_length=25, noise=0.05,
                                    seed=seed)
    return X[:400], y[:400], X[400:], y[400:]


def _ordinal_set(seed=5):
    """A seeded sparse set with 4 rank levels from a noisy linear score."""
    rng = np.random.default_rng(seed)
    X = sp.random(500, 30, density=0.3, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k))
    s = X @ rng.standard_normal(30) + 0.3 * rng.standard_normal(500)
    y = np.digitize(s, np.quantile(s, [0.2, 0.5, 0.8])) + 1
    return X[:350], y[:350], X[350:], y[350:]


def _data(solver):
    return _ordinal_set() if solver == "mfn-ord" else _binary_set()


def _assert_same_model(serial, models, X_test):
    f_s, f_d = serial.stats["objective"], models[0].stats["objective"]
    assert abs(f_d - f_s) <= RTOL * abs(f_s), (f_s, f_d)
    for m in models[1:]:
        assert np.array_equal(m.weights, models[0].weights)
        assert m.stats["objective"] == f_d
        if serial.kind == "ordinal":
            assert np.array_equal(m.thresholds_, models[0].thresholds_)
    assert np.array_equal(models[0].classes_, serial.classes_)
    assert np.array_equal(models[0].predict(X_test), serial.predict(X_test))
    assert models[0].stats["ranks"] == len(models)


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["uneven", "empty"])
@pytest.mark.parametrize("n_ranks", [2, 3])
@pytest.mark.parametrize("solver", SOLVERS)
def test_distributed_equals_serial(solver, n_ranks, layout):
    X, y, Xt, _ = _data(solver)
    kw = {"tol": TOL[solver]} if solver in TOL else {}
    serial = linsvm.train(X, y, solver=solver, **kw)
    models = train_on_ranks(X, y, _cuts(X.shape[0], n_ranks, layout), solver, **kw)
    _assert_same_model(serial, models, Xt)
    assert models[0].stats["n_active"] == serial.stats["n_active"]


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_class_on_one_rank_only(solver):
    """Rows sorted by label: the first class in the union's order lives on rank 0 only
    (and for mfn-ord the top level on the last rank only)."""
    X, y, Xt, _ = _data(solver)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    n = X.shape[0]
    first = int(np.count_nonzero(y == y[0]))
    last = n - int(np.count_nonzero(y == y[-1])) - 3
    cuts = [0, first + 5, last if solver == "mfn-ord" else (first + n) // 2, n]
    assert y[0] not in set(y[cuts[1]:])
    if solver == "mfn-ord":
        assert y[-1] not in set(y[:cuts[2]])
    kw = {"tol": TOL[solver]} if solver in TOL else {}
    serial = linsvm.train(X, y, solver=solver, **kw)
    _assert_same_model(serial, train_on_ranks(X, y, cuts, solver, **kw), Xt)


@pytest.mark.parametrize("options", [
    {"fused_cg": False, "jacobi_weight": 1.0},
    {"precondition": False},
    {"subset": 0.5},
    {"kkt_tol": 1e-8, "gtol": 0.0},
    {"heuristic1": False, "heuristic2": False, "forcing": 0.0},
], ids=["twopass", "noprecond", "subset", "kkt", "noheuristics"])
def test_mfn_options_distributed(options):
    X, y, Xt, _ = _binary_set(seed=4)
    kw = dict(options, C=4.0, tol=TOL["mfn"])
    serial = linsvm.train(X, y, solver="mfn", **kw)
    models = train_on_ranks(X, y, _cuts(X.shape[0], 3, "empty"), "mfn", **kw)
    _assert_same_model(serial, models, Xt)
    if "kkt_tol" in options:
        kkt = models[0].stats["kkt_violation"]
        assert kkt <= 1e-8 and all(m.stats["kkt_violation"] == kkt for m in models)


@pytest.mark.slow
@pytest.mark.parametrize("solver", SOLVERS)
def test_sample_weights_and_balanced_classes(solver):
    """Per-row weights travel with the rows; "balanced" counts the classes over every rank."""
    X, y, Xt, _ = _data(solver)
    sw = np.random.default_rng(0).uniform(0.2, 3.0, X.shape[0])
    kw = dict({"tol": TOL[solver]} if solver in TOL else {}, sample_weight=sw)
    if solver != "mfn-ord":
        kw["class_weight"] = "balanced"
    serial = linsvm.train(X, y, solver=solver, **kw)
    cuts = _cuts(X.shape[0], 3, "uneven")

    def work(comm):
        r = comm.Get_rank()
        a, b = cuts[r], cuts[r + 1]
        return linsvm.train(X[a:b], y[a:b], solver=solver, comm=comm,
                            **dict(kw, sample_weight=sw[a:b]))

    _assert_same_model(serial, run_ranks(work, 3), Xt)


@pytest.mark.parametrize("free_bias", [False, True])
def test_extreme_class_weight_is_certified_over_the_ranks_to_the_stopping_tolerance(free_bias):
    """-w1 1000 at the default -e (and a free bias, whose dual point is balanced over
    every rank's rows): the distributed certificate, reduced over the ranks, certifies
    1% as the serial one does, every rank alike, and the two objectives differ by at most
    the larger certified gap (the stop itself may move: docs/mpi.md)."""
    X, y, _, _ = _binary_set(seed=7)
    kw = dict(class_weight={1.0: 1000.0}, C=0.1, regularize_bias=not free_bias)
    serial = linsvm.train(X, y, solver="mfn", **kw)
    models = train_on_ranks(X, y, _cuts(X.shape[0], 3, "empty"), "mfn", **kw)
    f_s, f_d = serial.stats["objective"], models[0].stats["objective"]
    g_s, g_d = serial.stats["gap"], models[0].stats["gap"]
    assert g_s <= 0.01 and g_d <= 0.01
    assert abs(f_d - f_s) <= max(g_s * f_s, g_d * f_d)
    assert all(np.array_equal(m.weights, models[0].weights) for m in models)
    assert all(m.stats["gap"] == g_d for m in models)


def test_huber_weighted_and_warm_start():
    """Class weights and a warm start take the same path as the serial solve."""
    X, y, Xt, _ = _binary_set(seed=6)
    kw = dict(C=2.0, class_weight={1.0: 3.0})
    init = linsvm.train(X, y, solver="mfn-huber", C=0.5)
    serial = linsvm.train(X, y, solver="mfn-huber", init=init, **kw)
    models = train_on_ranks(X, y, _cuts(X.shape[0], 2, "uneven"), "mfn-huber", init=init, **kw)
    _assert_same_model(serial, models, Xt)
    assert models[0].stats["n_linear"] == serial.stats["n_linear"]


@pytest.mark.parametrize("solver", ["mfn", "mfn-ord"])
def test_progress_on_rank_zero_only(solver):
    """As the command line runs it: only rank 0 logs (the others pass log=None), and its
    lines count zone 1 over every rank, as the serial solve's do."""
    X, y, Xt, _ = _data(solver)
    lines, ser_lines = [], []
    serial = linsvm.train(X, y, solver=solver, log=ser_lines.append, tol=1e-6)
    cuts = _cuts(X.shape[0], 3, "uneven")

    def work(comm):
        r = comm.Get_rank()
        return linsvm.train(X[cuts[r]:cuts[r + 1]], y[cuts[r]:cuts[r + 1]], solver=solver,
                            comm=comm, tol=1e-6, log=lines.append if r == 0 else None)

    models = run_ranks(work, 3)
    _assert_same_model(serial, models, Xt)

    def active(log):
        return [ln.split("active")[1].split()[-3 if "pairs" in ln else 0] for ln in log
                if " iter " in ln]

    assert active(lines) and active(lines) == active(ser_lines)


def test_one_vs_rest_distributed():
    """Three classes: the columns run one after the other on every rank."""
    X, y = make_text_classification(n_samples=500, n_features=300, n_classes=3, avg_length=20,
                                    seed=2)
    serial = linsvm.train(X[:400], y[:400], solver="mfn", tol=TOL["mfn"])
    models = train_on_ranks(X[:400], y[:400], _cuts(400, 3, "empty"), "mfn", tol=TOL["mfn"])
    assert models[0].weights.shape == (301, 3)
    _assert_same_model(serial, models, X[400:])


_Recording = recording_collective()


@pytest.mark.parametrize("solver", ["ls", "mfn"])
def test_one_allreduce_per_cgls_iteration(solver):
    """Every CGLS iteration costs exactly one allreduce, of n_weights + 3 doubles; the
    rest of a solve (per Newton step: the start residual, the line search's rounds,
    f, counts) is a small overhead."""
    X, y, _, _ = _binary_set()
    recs = {}

    def coll(comm):
        recs[comm.Get_rank()] = _Recording(comm)
        return recs[comm.Get_rank()]

    models = train_on_ranks(X, y, _cuts(X.shape[0], 2, "uneven"), solver, coll=coll,
                          precondition=False)
    nw = X.shape[1] + 1
    st = models[0].stats
    for rec in recs.values():
        assert rec.sizes.count(nw + 3) == st["cg_iter"]
        assert len(rec.sizes) - st["cg_iter"] <= 60 * max(st["n_iter"], 1)
    assert st["comm_calls"] >= st["cg_iter"]


# ------------------------------------------------------------------ the line search alone

class _CountingGathers(Collective):
    """A Collective that counts its allgathers (one per round of the line search)."""

    def __init__(self, comm):
        super().__init__(comm)
        self.gathers = 0

    def allgather(self, local):
        self.gathers += 1
        return super().allgather(local)


def _slope(lam, beta, d, y, dy, t, c, loss, delta):
    """phi'(delta) of the binary line search, by numpy (the independent reference)."""
    a, tm, hi, lo = loss
    o = t * (y + delta * dy)
    dl = np.where(o >= hi, 0.0, np.where(o > lo, -a * (tm - o), -a * (tm - lo)))
    return lam * (beta + delta * d) @ d + np.sum(c * dl * t * dy)


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("n_ranks", [2, 3])
@pytest.mark.parametrize("loss", [(1.0, 1.0, 1.0, -np.inf), (1.0, 1.0, 1.0, -1.0),
                                  (4.0, 1.125, 1.125, 0.875)], ids=["l2", "huber", "smooth"])
def test_line_search_over_ranks_finds_the_serial_root(loss, n_ranks, ties):
    """Thousands of breakpoints spread over uneven blocks (one empty with 3 ranks), with
    many equal ones (ties): the ranks agree on the serial delta, a root of phi' (numpy),
    after several rounds of the distributed selection."""
    rng = np.random.default_rng(11 + n_ranks)
    m, nw, lam = 4000, 8, 0.05
    y, dy = 2.0 * rng.standard_normal(m), 3.0 * rng.standard_normal(m)
    if ties:
        y, dy = np.round(y, 1), np.round(dy) + 0.5
    t = np.where(rng.random(m) < 0.5, 1.0, -1.0)
    c = rng.uniform(0.5, 2.0, m)
    beta, d = rng.standard_normal(nw), rng.standard_normal(nw)
    if _slope(lam, beta, d, y, dy, t, c, loss, 0.0) > 0:
        d, dy = -d, -dy
    serial = _testing.loss_line_search(lam, beta, d, y, dy, t, c, loss)
    assert serial > 0
    cuts = [0, m // 3, m] if n_ranks == 2 else [0, m // 4, m // 4, m]

    def work(comm):
        coll = _CountingGathers(comm)
        a, b = cuts[comm.Get_rank()], cuts[comm.Get_rank() + 1]
        return _testing.loss_line_search(lam, beta, d, y[a:b], dy[a:b], t[a:b], c[a:b], loss,
                                         comm=coll), coll.gathers

    out = run_ranks(work, n_ranks)
    deltas = {o[0] for o in out}
    assert len(deltas) == 1
    delta = deltas.pop()
    assert abs(delta - serial) <= 1e-12 * max(1.0, serial)
    scale = lam * abs(d @ d) * delta + np.sum(c * np.abs(dy) * (np.abs(y) + delta * np.abs(dy)))
    assert abs(_slope(lam, beta, d, y, dy, t, c, loss, delta)) <= 1e-12 * scale
    assert out[0][1] >= (1 if ties else 2)     # without ties, more than one round


@pytest.mark.parametrize("n_ranks", [2, 3])
def test_ordinal_line_search_over_ranks(n_ranks):
    rng = np.random.default_rng(3)
    m, nw, nb, lam = 1500, 6, 3, 0.1
    codes = rng.integers(0, nb + 1, m).astype(np.int32)
    y, dy = rng.standard_normal(m), 2.0 * rng.standard_normal(m)
    c = rng.uniform(0.5, 2.0, m)
    beta, d = rng.standard_normal(nw + nb), rng.standard_normal(nw + nb)
    serial = _testing.ordinal_line_search(lam, beta, d, y, dy, codes, c, nb)
    if serial == 0.0:
        d, dy = -d, -dy
        serial = _testing.ordinal_line_search(lam, beta, d, y, dy, codes, c, nb)
    assert serial > 0
    cuts = [0, m // 3, m] if n_ranks == 2 else [0, m // 2, m // 2, m]

    def work(comm):
        a, b = cuts[comm.Get_rank()], cuts[comm.Get_rank() + 1]
        return _testing.ordinal_line_search(lam, beta, d, y[a:b], dy[a:b], codes[a:b], c[a:b],
                                            nb, comm=Collective(comm))

    out = run_ranks(work, n_ranks)
    assert len(set(out)) == 1 and abs(out[0] - serial) <= 1e-12 * max(1.0, serial)


# ------------------------------------------------------------------ shared data sets

def _shared(name, test_name):
    train, test = shared_file(name), shared_file(test_name)
    nf = max(load_svmlight(train)[0].shape[1], load_svmlight(test)[0].shape[1])
    X, y = load_svmlight(train, n_features=nf)
    return X, y, load_svmlight(test, n_features=nf)[0]


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("solver", ["mfn", "ls", "mfn-huber", "mfn-l1"])
def test_w1a_three_ranks(solver):
    X, y, Xt = _shared("binary/w1a", "binary/w1a.t")
    kw = {"tol": TOL[solver]} if solver in TOL else {}
    serial = linsvm.train(X, y, solver=solver, **kw)
    _assert_same_model(serial, train_on_ranks(X, y, _cuts(X.shape[0], 3, "uneven"), solver, **kw),
                       Xt)


@pytest.mark.data
def test_australian_and_a1a_mfn_with_an_empty_rank():
    for train, test in (("binary/australian", "binary/australian"),
                        ("binary/a1a", "binary/a1a.t")):
        X, y, Xt = _shared(train, test)
        serial = linsvm.train(X, y, solver="mfn", tol=TOL["mfn"])
        _assert_same_model(serial, train_on_ranks(X, y, _cuts(X.shape[0], 3, "empty"), "mfn",
                                                tol=TOL["mfn"]), Xt)


@pytest.mark.data
@pytest.mark.parametrize("n_ranks", [2, 3])
def test_ordinal_housing(n_ranks):
    X, y, Xt = _shared("ordinal/housing_5bins.train.1", "ordinal/housing_5bins.test.1")
    serial = linsvm.train(X, y, solver="mfn-ord")
    models = train_on_ranks(X, y, _cuts(X.shape[0], n_ranks, "uneven"), "mfn-ord")
    _assert_same_model(serial, models, Xt)
