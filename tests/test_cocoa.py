"""dcd, sdm-cs and sdm-ww on several thread ranks by CoCoA+ (linsvm/solvers/cocoa.py).

The ranks are threads (tests/fakempi.py); tests/test_mpiexec.py runs the solvers under
a real `mpiexec -n 2` / `-n 3`.  What a distributed
solve must give: every rank the same weights; a reported duality gap that is a true
gap -- P(w) - D(alpha) recomputed here with numpy on the union of the blocks from the
returned weights and every rank's alphas (checked feasible) -- within the stated
tolerance; hence the serial optimum within that gap (P_dist - P_serial <= gap) and,
by the strong convexity of the primal (P(w) - P* >= ||w - w*||^2 / 2), weights within
sqrt(2 gap_dist) + sqrt(2 gap_serial) of the serial ones, so that predictions on a test
split differ only where the serial margin is within ||x|| times that bound of a tie.
"""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from conftest import shared_file
from fakempi import Aborted, run_ranks
import linsvm
from linsvm.io.svmlight import load_svmlight
from linsvm.solvers import GAP_GUARD, get_solver

TOL = 1e-3          # -e of the distributed solves: relative gap <= min(TOL, 0.01)


# ------------------------------------------------------------------ data

def _synthetic(n, d, n_classes, seed, density=0.4):
    rng = np.random.RandomState(seed)
    X = sp.random(n, d, density=density, random_state=rng, format="csr") * 2.0
    X.data -= 1.0
    W = rng.randn(d, n_classes)
    scores = X @ W + 0.3 * rng.randn(n, n_classes)
    if n_classes == 2:
        y = np.where(scores[:, 0] > np.median(scores[:, 0]), 1.0, -1.0)
    else:
        y = scores.argmax(axis=1).astype(np.float64) + 1.0
    return X.tocsr(), y


def _shared(name, test_name, n_train=None, seed=0):
    """A shared data set, its rows shuffled (so that blocks mix the classes), and its test
    split; skips when absent."""
    X, y = load_svmlight(str(shared_file(name)))[:2]
    Xt, yt = load_svmlight(str(shared_file(test_name)))[:2]
    d = X.shape[1]
    Xt = sp.csr_matrix(Xt)[:, :d] if Xt.shape[1] >= d else \
        sp.hstack([Xt, sp.csr_matrix((Xt.shape[0], d - Xt.shape[1]))]).tocsr()
    p = np.random.RandomState(seed).permutation(X.shape[0])[:n_train]
    return sp.csr_matrix(X)[p], y[p], Xt, yt


# ------------------------------------------------------------------ running

def _blocks(n, P, kind):
    """Row bounds of P blocks: 'even', 'uneven' (the first rank gets a sixth), or 'empty'
    (rank 1 gets no rows)."""
    if kind == "even":
        return np.linspace(0, n, P + 1).astype(int)
    if kind == "uneven":
        first = n // 6
        return np.concatenate([[0], first + np.linspace(0, n - first, P).astype(int)])
    b = np.linspace(0, n, P).astype(int)
    return np.concatenate([b[:1], b[:1], b[1:]]) if P == 2 else np.insert(b, 1, b[1])


def _distributed(X, y, solver, P, bounds, **kw):
    """train() on P thread ranks, rank r holding rows bounds[r]:bounds[r+1]; the models."""
    def fn(comm):
        r = comm.Get_rank()
        return linsvm.train(X[bounds[r]:bounds[r + 1]], y[bounds[r]:bounds[r + 1]],
                            solver=solver, comm=comm, **kw)

    with warnings.catch_warnings():     # not thread-safe: the models' own lists are checked
        warnings.simplefilter("ignore")
        out = run_ranks(fn, P)
    for o in out:
        if isinstance(o, BaseException):
            raise o
        assert not o.warnings, o.warnings
    for o in out[1:]:
        assert np.array_equal(o.weights, out[0].weights), "ranks differ in their weights"
    return out


def _serial(X, y, solver, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")             # a loop cap at tol 1e-6 is fine here
        return linsvm.train(X, y, solver=solver, **kw)


def _with_bias(X, bias):
    X = sp.csr_matrix(X)
    return sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr() if bias > 0 else X


# ------------------------------------------------------------------ independent objectives

def _binary_gap(X, t, c, C, loss, w, alpha):
    """(P(w), D(alpha)) of dcd's problem (solvers/dcd.py) on rows X (bias column
    included), labels t, costs c; asserts alpha is dual feasible."""
    margins = t * (X @ w)
    hinge = np.maximum(0.0, 1.0 - margins)
    U = C * c
    assert np.all(alpha >= 0)
    if loss == "l1":
        assert np.all(alpha <= U * (1 + 1e-12))
        primal = 0.5 * w @ w + np.sum(U * hinge)
        dsep = alpha.sum()
    else:
        assert np.all(alpha[c == 0] == 0)
        primal = 0.5 * w @ w + np.sum(U * hinge ** 2)
        pos = c > 0
        dsep = alpha.sum() - np.sum(alpha[pos] ** 2 / (4 * U[pos]))
    wa = X.T @ (alpha * t)
    return primal, dsep - 0.5 * wa @ wa


def _alpha_matrix(states, kind, codes, k):
    """The dense alpha matrix (rows in rank order) of the ranks' SDM states."""
    rows = []
    for st in states:
        n = st["a_ptr"].shape[0] - 1
        A = np.zeros((n, k))
        row_of = np.repeat(np.arange(n), np.diff(st["a_ptr"]))
        A[row_of, st["a_cls"]] = st["a_val"]
        rows.append(A)
    A = np.vstack(rows)
    if kind == "cs":
        A[np.arange(A.shape[0]), codes] = np.concatenate([st["alpha_y"] for st in states])
    return A


def _multiclass_gap(X, codes, U, kind, W, A):
    """(P(W), D(alpha)) of eq. 1 / eq. 14 (Keerthi et al. 2008) with alpha the dense
    matrix A; asserts alpha is dual feasible."""
    n, k = A.shape
    S = X @ W
    sy = S[np.arange(n), codes]
    other = np.ones((n, k), dtype=bool)
    other[np.arange(n), codes] = False
    if kind == "cs":
        assert np.all(A[other] <= 0)
        assert np.all(A[~other] <= U * (1 + 1e-12))
        np.testing.assert_allclose(A.sum(axis=1), 0, atol=1e-9 * (1 + U.max()))
        xi = np.max(other + S - sy[:, None], axis=1)
        Wa = X.T @ A
        dsep = A[~other].sum()
    else:
        assert np.all(A >= 0) and np.all(A[~other] == 0)
        assert np.all(A <= U[:, None] * (1 + 1e-12))
        xi = np.sum(np.maximum(0, 1 - sy[:, None] + S) * other, axis=1)
        B = -A
        B[np.arange(n), codes] = A.sum(axis=1)
        Wa = X.T @ B
        dsep = A.sum()
    return 0.5 * np.sum(W * W) + U @ xi, dsep - 0.5 * np.sum(Wa * Wa)


# ------------------------------------------------------------------ the checks

def _check(models, ser, X, y, Xt, solver, C=1.0, bias=1.0, loss="l1", tol=TOL):
    m = models[0]
    Xb, Xtb = _with_bias(X, bias), _with_bias(Xt, bias)
    info = get_solver(solver)
    target = min(tol, GAP_GUARD)
    classes = m.classes_
    gaps = []
    if info.kind == "binary":
        for j in range(m.weights.shape[1]):
            st = models[0].column_stats[j]
            positive = classes[0] if m.weights.shape[1] == 1 else classes[j]
            t = np.where(y == positive, 1.0, -1.0)
            alpha = np.concatenate([mm.solver_state_[j]["alpha"] for mm in models])
            P, D = _binary_gap(Xb, t, np.ones(len(y)), C, loss, m.weights[:, j], alpha)
            gaps.append((P, D, st))
    else:
        codes = np.array([int(np.flatnonzero(classes == v)[0]) for v in y])
        A = _alpha_matrix([mm.solver_state_ for mm in models], solver[-2:], codes, len(classes))
        P, D = _multiclass_gap(Xb, codes, C * np.ones(len(y)), solver[-2:], m.weights, A)
        gaps.append((P, D, m.column_stats[0]))
    for P, D, st in gaps:
        # the reported objectives are those of the returned point; the gap is a true gap
        assert P == pytest.approx(st["objective"], rel=1e-9, abs=1e-9)
        assert D == pytest.approx(st["dual_objective"], rel=1e-9, abs=1e-9)
        assert P - D <= target * P + 1e-9
        assert st["status"].startswith("converged")     # perhaps handed over to mfn(-l1)
    # the serial optimum within the certified gap, and the weights near the serial ones:
    # per column for one-vs-rest (independent problems), for all of W for SDM
    P_s = ser.stats["objective"]
    P_d = sum(P for P, _, _ in gaps)
    assert P_d - P_s <= sum(P - D for P, D, _ in gaps) + 1e-9 * P_s
    assert P_s - P_d <= sum(cs.get("duality_gap", 0.0) for cs in ser.column_stats) + 1e-9 * P_s
    cols = [slice(j, j + 1) for j in range(len(gaps))] if len(gaps) > 1 else [slice(None)]
    bounds = []
    for (P, D, _), cs, c in zip(gaps, ser.column_stats, cols):
        bound = np.sqrt(2 * (P - D)) + np.sqrt(2 * cs["duality_gap"]) + 1e-9
        assert np.linalg.norm(m.weights[:, c] - ser.weights[:, c]) <= bound
        bounds.append(bound)
    # predictions: equal wherever the serial decision is not within ||x|| bound of a tie
    xnorm = np.sqrt(np.asarray(Xtb.multiply(Xtb).sum(axis=1))).ravel()
    Sd, Ss = Xtb @ m.weights, Xtb @ ser.weights
    if Ss.shape[1] == 1:
        clear = np.abs(Ss[:, 0]) > xnorm * bounds[0]
        assert np.array_equal(Sd[clear, 0] > 0, Ss[clear, 0] > 0)
    else:
        top2 = np.sort(Ss, axis=1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 2 * xnorm * max(bounds)
        assert np.array_equal(Sd[clear].argmax(axis=1), Ss[clear].argmax(axis=1))
    # the same through predict(); and where the bound is loose (the rows not `clear`),
    # the two models still agree on nearly every row
    same = m.predict(Xt) == ser.predict(Xt)
    assert np.all(same[clear]) and np.mean(same) >= 0.95
    # CoCoA+ with sigma' = K never lowers the dual (Ma et al. 2015, Lemma 3)
    for _, _, st in gaps:
        duals = [r["dual"] for r in st["trace"]]
        assert all(b >= a - 1e-9 * abs(a) for a, b in zip(duals, duals[1:]))
    return gaps


# ------------------------------------------------------------------ tests: synthetic

@pytest.mark.parametrize("P,blocks", [(2, "uneven"), (3, "empty"), (3, "uneven")])
@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_dcd_cocoa_synthetic(P, blocks, loss):
    X, y = _synthetic(300, 15, 2, seed=1)
    Xt, _ = _synthetic(200, 15, 2, seed=2)
    ser = _serial(X, y, "dcd", loss=loss, tol=1e-6)
    models = _distributed(X, y, "dcd", P, _blocks(300, P, blocks), loss=loss, tol=TOL)
    _check(models, ser, X, y, Xt, "dcd", loss=loss)
    st = models[0].stats
    assert st["ranks"] == P and st["rounds"] >= 1
    assert st["bytes_per_round"] == 8 * (X.shape[1] + 1 + 4)


@pytest.mark.parametrize("P", [2, 3])
def test_dcd_cocoa_one_vs_rest_class_on_one_rank(P):
    """Three classes one-vs-rest; class 3 only in the last rank's block."""
    X, y = _synthetic(300, 12, 3, seed=3)
    order = np.argsort(y == 3, kind="stable")       # class 3 last: in the last block only
    X, y = X[order], y[order]
    n3 = int(np.sum(y == 3))
    bounds = np.linspace(0, 300 - n3, P + 1).astype(int)
    bounds[-1] = 300
    Xt, _ = _synthetic(150, 12, 3, seed=4)
    assert set(y[bounds[-2]:]) >= {3.0} and 3.0 not in set(y[:bounds[-2]])
    ser = _serial(X, y, "dcd", tol=1e-6)
    models = _distributed(X, y, "dcd", P, bounds, tol=TOL)
    assert np.array_equal(models[0].classes_, ser.classes_)
    _check(models, ser, X, y, Xt, "dcd")


@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
@pytest.mark.parametrize("P,blocks", [(2, "uneven"), (3, "empty")])
def test_sdm_cocoa_synthetic(solver, P, blocks):
    X, y = _synthetic(300, 12, 4, seed=5)
    Xt, _ = _synthetic(200, 12, 4, seed=6)
    ser = _serial(X, y, solver, tol=1e-4)
    models = _distributed(X, y, solver, P, _blocks(300, P, blocks), tol=TOL)
    _check(models, ser, X, y, Xt, solver)
    assert models[0].stats["bytes_per_round"] == 8 * ((X.shape[1] + 1) * 4 + 4)


@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_sdm_cocoa_class_on_one_rank(solver):
    X, y = _synthetic(240, 10, 4, seed=7)
    order = np.argsort(y == 2, kind="stable")
    X, y = X[order], y[order]
    n2 = int(np.sum(y == 2))
    bounds = np.array([0, 120, 240 - n2 - 10, 240])   # class 2 on rank 2 only
    assert 2.0 not in set(y[:bounds[2]])
    Xt, _ = _synthetic(150, 10, 4, seed=8)
    ser = _serial(X, y, solver, tol=1e-4)
    models = _distributed(X, y, solver, 3, bounds, tol=TOL)
    _check(models, ser, X, y, Xt, solver)


def test_cocoa_weighted_and_no_bias():
    """Class weights (costs c_k != 1) and -B -1 reach the local passes and the gap."""
    X, y = _synthetic(200, 10, 2, seed=9)
    Xt, _ = _synthetic(100, 10, 2, seed=10)
    kw = dict(bias=-1, class_weight={1.0: 2.0, -1.0: 0.5}, C=0.5)
    ser = _serial(X, y, "dcd", tol=1e-6, **kw)
    models = _distributed(X, y, "dcd", 2, _blocks(200, 2, "uneven"), tol=TOL, **kw)
    m = models[0]
    t = np.where(y == m.classes_[0], 1.0, -1.0)
    c = np.where(t > 0, 2.0, 0.5)
    alpha = np.concatenate([mm.solver_state_[0]["alpha"] for mm in models])
    P, D = _binary_gap(sp.csr_matrix(X), t, c, 0.5, "l1", m.weights[:, 0], alpha)
    assert P == pytest.approx(m.stats["objective"], rel=1e-9)
    assert P - D <= TOL * P
    assert P - ser.stats["objective"] <= P - D + 1e-9


def test_cocoa_warm_start_and_local_epochs_not_in_serial_model():
    """A distributed model's per-rank alphas seed the next distributed solve (fewer
    rounds); local_epochs is a model param only when distributed."""
    X, y = _synthetic(300, 15, 2, seed=11)
    bounds = _blocks(300, 2, "even")

    def fn(comm):
        r = comm.Get_rank()
        Xr, yr = X[bounds[r]:bounds[r + 1]], y[bounds[r]:bounds[r + 1]]
        a = linsvm.train(Xr, yr, solver="dcd", tol=TOL, comm=comm, C=0.5)
        b = linsvm.train(Xr, yr, solver="dcd", tol=TOL, comm=comm, C=0.5, init=a)
        return a, b

    out = run_ranks(fn, 2)
    a, b = out[0]
    assert b.column_stats[0]["warm_start"] == "alpha"
    assert b.stats["rounds"] < a.stats["rounds"]
    assert a.params["local_epochs"] == get_solver("dcd").options["local_epochs"].default
    ser = _serial(X, y, "dcd")
    assert "local_epochs" not in ser.params


# ------------------------------------------------------------------ tests: shared data

@pytest.mark.data
@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_dcd_cocoa_a1a(loss):
    X, y, Xt, _ = _shared("binary/a1a", "binary/a1a.t")
    Xt = Xt[:5000]
    ser = _serial(X, y, "dcd", loss=loss, tol=1e-6, max_iter=5000)
    for P in (2, 3):
        models = _distributed(X, y, "dcd", P, _blocks(X.shape[0], P, "uneven"), loss=loss,
                              tol=0.01)
        _check(models, ser, X, y, Xt, "dcd", loss=loss, tol=0.01)


@pytest.mark.data
def test_dcd_cocoa_w1a_australian():
    X, y, Xt, _ = _shared("binary/w1a", "binary/w1a.t")
    ser = _serial(X, y, "dcd", tol=1e-6, max_iter=5000)
    models = _distributed(X, y, "dcd", 3, _blocks(X.shape[0], 3, "empty"), tol=0.01)
    _check(models, ser, X, y, Xt[:5000], "dcd", tol=0.01)
    X, y, _, _ = _shared("binary/australian", "binary/australian")
    Xs = X.multiply(1.0 / np.maximum(1e-12, abs(X).max(axis=0).toarray())).tocsr()
    ser = _serial(Xs, y, "dcd", loss="l2", tol=1e-6, max_iter=5000)
    models = _distributed(Xs, y, "dcd", 2, _blocks(X.shape[0], 2, "uneven"), loss="l2",
                          tol=0.01)
    _check(models, ser, Xs, y, Xs, "dcd", loss="l2", tol=0.01)


@pytest.mark.slow
@pytest.mark.data
@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_sdm_cocoa_abalone_as_classes(solver):
    """The 5 ranks of abalone as 5 classes (a small shared multi-class set; rows shuffled:
    the file is sorted by label, see the notes in linsvm/solvers/cocoa.py)."""
    X, y, Xt, _ = _shared("ordinal/abalone_5bins.train.1", "ordinal/abalone_5bins.test.1")
    ser = _serial(X, y, solver, tol=1e-4)
    for P in (2, 3):
        models = _distributed(X, y, solver, P, _blocks(X.shape[0], P, "uneven"), tol=0.01)
        _check(models, ser, X, y, Xt, solver, tol=0.01)


# ------------------------------------------------------------------ round caps and finishes

@pytest.mark.parametrize("solver,kw", [("dcd", {"loss": "l2", "primal_fallback": False}),
                                       ("sdm-ww", {"gather_finish": False})])
def test_cocoa_round_cap_warns_with_a_true_gap(solver, kw):
    """At the round cap (dcd: without --primal-fallback) every rank warns alike and
    returns the last certified point, and the reported gap is still the true gap of the
    returned weights and alphas."""
    X, y = _synthetic(200, 10, 2 if solver == "dcd" else 3, seed=12)
    bounds = _blocks(200, 2, "uneven")

    def fn(comm):
        r = comm.Get_rank()
        m = linsvm.train(X[bounds[r]:bounds[r + 1]], y[bounds[r]:bounds[r + 1]],
                         solver=solver, comm=comm, tol=1e-6, max_iter=3, **kw)
        return m, m.warnings            # (warnings.catch_warnings is not thread-safe)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", linsvm.ConvergenceWarning)
        out = run_ranks(fn, 2)
    (m0, w0), (m1, w1) = out
    assert np.array_equal(m0.weights, m1.weights)
    assert len(w0) == 1 and w0 == w1 and "round cap (max_iter=3)" in w0[0]
    st = m0.column_stats[0]
    assert st["status"] == "round cap" and st["rounds"] == 2
    if solver == "dcd":
        assert "--primal-fallback" in w0[0] and st["finished_by"] == "dcd (CoCoA+)"
        t = np.where(y == m0.classes_[0], 1.0, -1.0)
        alpha = np.concatenate([m.solver_state_[0]["alpha"] for m, _ in out])
        P, D = _binary_gap(_with_bias(X, 1.0), t, np.ones(200), 1.0, "l2", m0.weights[:, 0],
                           alpha)
    else:
        codes = np.array([int(np.flatnonzero(m0.classes_ == v)[0]) for v in y])
        A = _alpha_matrix([m.solver_state_ for m, _ in out], "ww", codes, 3)
        P, D = _multiclass_gap(_with_bias(X, 1.0), codes, np.ones(200), "ww", m0.weights, A)
    assert P == pytest.approx(st["objective"], rel=1e-9)
    assert D == pytest.approx(st["dual_objective"], rel=1e-9)
    assert P - D > 1e-6 * P


@pytest.mark.parametrize("loss", ["l1", "l2"])
@pytest.mark.parametrize("P", [2, 3])
@pytest.mark.parametrize("fit", [True, False])
def test_dcd_round_cap_finishes_in_the_primal_over_the_ranks(loss, P, fit, monkeypatch):
    """With --primal-fallback (the default), rounds that end at the cap uncertified
    finish with mfn over the same row blocks (squared hinge), or for the hinge with the
    serial dcd on the gathered rows and alphas where rank 0 can hold them (fit), else
    with mfn-l1 over the row blocks: every rank the same weights, a certified gap that is
    the true gap of the returned weights and alphas, and the serial optimum within it."""
    import linsvm.solvers.dcd as dcd_module
    if not fit:
        monkeypatch.setattr(dcd_module, "fits", lambda problem, extra=0: False)
    X, y = _synthetic(240, 12, 2, seed=21)
    Xt, _ = _synthetic(100, 12, 2, seed=22)
    ser = _serial(X, y, "dcd", loss=loss, tol=1e-6)
    models = _distributed(X, y, "dcd", P, _blocks(240, P, "empty"), loss=loss, tol=TOL,
                          max_iter=3)
    gaps = _check(models, ser, X, y, Xt, "dcd", loss=loss)
    st = gaps[0][2]
    assert st["finished_by"] == ("mfn" if loss == "l2" else "dcd, serial on the gathered rows"
                                 if fit else "mfn-l1")
    assert st["status"] == f"converged (finished to {st['finished_by']})" and st["rounds"] == 2


@pytest.mark.slow
def test_a_failure_in_the_serial_finish_ends_every_rank(monkeypatch, capsys):
    """The serial finish runs on rank 0 while the others wait for it: when it fails,
    rank 0 says so in one line and ends the job (Abort), and no rank is left waiting."""
    import linsvm.solvers.dcd as dcd_module
    real = dcd_module.fit_dcd

    def failing(problem, params, start, state, log):
        if problem.comm is None:
            raise RuntimeError("injected fault")
        return real(problem, params, start, state, log)
    monkeypatch.setattr(dcd_module, "fit_dcd", failing)
    X, y = _synthetic(240, 12, 2, seed=21)
    bounds = _blocks(240, 3, "uneven")

    def fn(comm):
        r = comm.Get_rank()
        return linsvm.train(X[bounds[r]:bounds[r + 1]], y[bounds[r]:bounds[r + 1]],
                            solver="dcd", comm=comm, tol=TOL, max_iter=3)

    out = run_ranks(fn, 3)
    assert all(isinstance(o, Aborted) for o in out), out
    err = capsys.readouterr().err
    assert "linsvm: error: MPI rank 0: the serial finish failed: RuntimeError: injected fault" \
        in err


@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
@pytest.mark.parametrize("P,blocks", [(2, "uneven"), (3, "empty")])
def test_sdm_rounds_that_stop_paying_finish_serially_from_the_gathered_alphas(solver, P, blocks):
    """With --gather-finish (the default), rounds that stop paying (here: six classes at
    -e 1e-3, whose rate at round 10 or 20 predicts more rounds than the cap of 30
    leaves) finish by the serial solver on the gathered rows, from the gathered alphas:
    every rank the same weights, each rank's state its own rows' share of the final
    alphas (the true gap recomputed from them and the weights within the tolerance), the
    serial optimum within it."""
    X, y = _synthetic(300, 12, 6, seed=31)
    Xt, _ = _synthetic(120, 12, 6, seed=32)
    ser = _serial(X, y, solver, tol=1e-4)
    models = _distributed(X, y, solver, P, _blocks(300, P, blocks), tol=TOL, max_iter=30)
    st = _check(models, ser, X, y, Xt, solver)[0][2]
    assert st["finished_by"] == "serial, gathered after rounds stopped paying"
    assert st["gap_checks"][-1][0] == st["rounds"]
    assert st["status"].startswith("converged")


@pytest.mark.parametrize("solver", ["sdm-cs", "sdm-ww"])
def test_sdm_gathers_at_once_when_a_round_outweighs_the_data(solver):
    """Many classes and features, few non-zeros (SECTOR's shape): one round's W would
    carry more bytes than the whole data set, so the solve gathers the rows at once and
    runs the serial solver -- certified, every rank the same weights, no rounds."""
    X, y = _synthetic(240, 400, 10, seed=33, density=0.02)
    Xt, _ = _synthetic(100, 400, 10, seed=34, density=0.02)
    assert 8 * 401 * 10 > 12 * X.nnz
    ser = _serial(X, y, solver, tol=1e-4)
    models = _distributed(X, y, solver, 2, _blocks(240, 2, "uneven"), tol=TOL)
    st = _check(models, ser, X, y, Xt, solver)[0][2]
    assert st["finished_by"] == "serial, gathered at once (a round outweighs the data)"
    assert st["rounds"] == 0 and st["status"].startswith("converged")


def _unscaled(n, seed):
    """Binary data with features of very different scales (up to 1e4, as australian's):
    dual coordinate descent converges slowly there, Newton does not care."""
    X, y = _synthetic(n, 10, 2, seed, density=0.8)
    scale = 10.0 ** np.arange(-1, 4, 0.5)
    return (X @ sp.diags(scale)).tocsr(), np.where((X @ np.ones(10)) > 0, 1.0, -1.0)


@pytest.mark.parametrize("loss", ["l1", "l2"])
def test_dcd_rounds_that_stop_paying_hand_over(loss):
    """On unscaled data the gap of the rounds stalls: the rule of linsvm.solvers.handover
    hands over at one of its checkpoints (rounds 10, 20, 40, ...), long before the cap,
    and the result is certified within 1% of the serial optimum."""
    X, y = _unscaled(300, seed=23)
    ser = _serial(X, y, "dcd", loss=loss, tol=1e-6, max_iter=100000)
    models = _distributed(X, y, "dcd", 2, _blocks(300, 2, "uneven"), loss=loss, tol=0.1)
    st = models[0].column_stats[0]
    assert st["status"].startswith("converged (handed over")
    assert st["gap_checks"][-1][0] == st["rounds"] < 1000
    assert st["objective"] - st["dual_objective"] <= GAP_GUARD * st["objective"]
    assert st["objective"] <= ser.stats["objective"] * (1 + GAP_GUARD)
    for m in models[1:]:
        assert np.array_equal(m.weights, models[0].weights)


# ------------------------------------------------------------------ K = 1: the serial kernels

def test_local_passes_with_sigma_one_are_the_serial_kernels():
    """With sigma' = 1 (one rank) a local pass from alpha = 0, w = 0 is the serial solve:
    the same alphas and the same w, bit for bit (dcd with shrinking; SDM without cooling)."""
    from linsvm import _dcd, _sdm
    from linsvm._data import DataView
    from linsvm.problem import CSRBuffers

    X, y = _synthetic(120, 9, 3, seed=13)
    view = DataView(CSRBuffers(X), 1.0, np.arange(120, dtype=np.int64))
    t = np.where(y == 1, 1.0, -1.0)
    c = np.linspace(0.5, 1.5, 120)
    for loss in ("l1", "l2"):
        a_serial = np.zeros(120)
        st = _dcd.dcd_solve(view, t=t, c=c, C=0.7, loss=loss, alpha=a_serial, tol=1e-9,
                            shrinking=True, seed=7, max_iter=4, callback=None)
        a_local = np.zeros(120)
        block = _dcd.dcd_local_setup(view, t=t, c=c, C=0.7, loss=loss, sigma=1.0, alpha=a_local)
        v = np.empty(10)
        lp = _dcd.dcd_local_pass(block, w=np.zeros(10), v=v, tol=1e-9, shrinking=True,
                                 rng=np.array([7], dtype=np.uint64), local_epochs=4)
        assert lp["n_iter"] == st["n_iter"] == 4 and np.count_nonzero(a_serial) > 10
        assert np.array_equal(a_local, a_serial) and np.array_equal(v, st["w"])
    codes = (y - 1).astype(np.int32)
    U = 0.7 * c
    for ww in (False, True):
        empty = (np.zeros(121, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0))
        args = dict(y=codes, n_classes=3, U=U, weston_watkins=ww, shrinking=True,
                    effort_cap=5.0, subproblem="all", tol=0.01)
        st = _sdm.sdm_solve(view, **args, alphas=(np.zeros(120), *empty), cooling=False,
                            max_iter=3, seed=5)
        V = np.empty((10, 3))
        lp = _sdm.sdm_local_pass(view, **args, alphas=(np.zeros(120), *empty),
                                 W=np.zeros((10, 3)), V=V, sigma=1.0, local_epochs=3,
                                 rng=np.array([5], dtype=np.uint64))
        assert lp["n_full"] == st["n_full"] == 3 and st["a_val"].size > 10
        assert np.array_equal(V, st["W"])
        for key in ("alpha_y", "a_ptr", "a_cls", "a_val"):
            assert np.array_equal(lp[key], st[key]), key
