"""The weight split of the finite Newton family on several thread ranks
(linsvm/runtime/wsplit.py, csrc/wsplit.pxd, csrc/cgls.pxd's split arrangement).

The plan is checked against a brute-force reading of its rule (owner of weight j: the
(j mod k_j)-th of the k_j ranks touching it, j mod P if none; the counts each rank
sends).  The models of P = 2, 3 thread-ranks (tests/fakempi.py) with --weight-split on
are compared with the serial model as tests/test_mfn_over_ranks.py does (objective to 1e-9
at a tight -e, the same weights bit for bit on every rank), on a set with many
features and few non-zeros per row, where most weights are touched by one rank only,
with a weight no row touches and a bias every rank touches, and for mfn-ord (CGLS
split, its thresholds touched by every rank) on an ordinal set; the bytes the Collective
counts for the exchanges are those of the plan's formula.  tests/test_mpiexec.py runs
the split under a real `mpiexec -n 2` / `-n 3`.
"""
import numpy as np
import pytest
import scipy.sparse as sp

import linsvm
from fakempi import run_ranks
from linsvm.io.synth import make_text_classification
from linsvm.runtime import wsplit
from linsvm.runtime.collective import Collective

RTOL = 1e-9
TOL = {"mfn": 1e-6, "mfn-l1": 1e-9}


def _wide_set(seed=7):
    """300 rows of about 6 non-zeros over 1,500 used features, plus 20 columns no row
    touches (the last ones)."""
    X, y = make_text_classification(n_samples=400, n_features=1500, avg_length=6, noise=0.05,
                                    seed=seed)
    X = sp.hstack([X, sp.csr_matrix((X.shape[0], 20))], format="csr")
    return X[:300], y[:300], X[300:], y[300:]


def _owner_by_rule(sets, d, P):
    """The ownership rule of linsvm/runtime/wsplit.py, one weight at a time."""
    owner = []
    for j in range(d):
        who = [r for r, t in enumerate(sets) if j in t]
        owner.append(who[j % len(who)] if who else j % P)
    return np.array(owner)


def _plans(sets, d, P):
    """Every rank's plan_touched(sets[r]), the ranks as threads."""
    out = run_ranks(lambda c: wsplit.plan_touched(Collective(c), sets[c.Get_rank()], d), P)
    for res in out:
        if isinstance(res, BaseException):
            raise res
    return out


@pytest.mark.parametrize("P", [2, 3])
def test_plan_follows_its_rule(P):
    rng = np.random.default_rng(P)
    d = 60
    sets = [np.unique(rng.integers(0, 50, size=k)).astype(np.int32) for k in (30, 5, 40)[:P]]
    if P == 3:
        sets[1] = np.zeros(0, dtype=np.int32)               # a rank with no rows
    owner = _owner_by_rule([set(t.tolist()) for t in sets], d, P)
    plans = _plans(sets, d, P)
    k = np.zeros(d, dtype=int)
    for t in sets:
        k[t] += 1
    for r, pl in enumerate(plans):
        assert np.array_equal(pl.own, np.flatnonzero(owner == r))
        others = [j for j in sets[r] if owner[j] != r]
        assert sorted(pl.pr_idx.tolist()) == sorted(others)
        assert list(owner[pl.pr_idx]) == sorted(owner[pl.pr_idx])     # grouped by owner
        # what r sends in a reduction: its touched weights owned elsewhere; in a scatter:
        # each owned weight once to every other rank touching it
        assert pl.bytes_per_iteration() == 8 * (len(others) + sum(k[j] - (j in set(sets[r]))
                                                                 for j in pl.own))
        for s, other in enumerate(plans):
            got = pl.own[pl.ps_pos[pl.ps_cnt[:s].sum():pl.ps_cnt[:s + 1].sum()]]
            want = other.pr_idx[other.pr_cnt[:r].sum():other.pr_cnt[:r + 1].sum()]
            assert np.array_equal(got, want)
    # all ranks together: 2 (k_j - 1) doubles for a weight touched by k_j ranks
    assert sum(p.bytes_per_iteration() for p in plans) == 16 * np.maximum(k - 1, 0).sum()
    for r, pl in enumerate(plans):              # the final allgather's layout; kept entries
        assert np.array_equal(pl.perm, np.concatenate([p.own for p in plans]))
        assert list(pl.own_cnt) == [len(p.own) for p in plans]
        assert np.array_equal(pl.mine, np.union1d(pl.own, sets[r]))


class _CountingComm:
    """A ThreadComm that counts the entries its alltoalls deliver to this rank."""

    def __init__(self, comm):
        self._comm, self.received = comm, 0

    def __getattr__(self, name):
        return getattr(self._comm, name)

    def alltoall(self, objs):
        got = self._comm.alltoall(objs)
        self.received += sum(np.asarray(g).size for g in got)
        return got


def test_plan_holds_no_other_ranks_touched_list():
    """A rank receives its own weights' owners, the weights it is home to (j mod P), and
    (weight, rank) pairs for the shared weights it owns -- never another rank's whole
    touched list (with P ranks touching millions of hashed features each, P
    lists per rank did not fit)."""
    P, d = 3, 3000
    rng = np.random.default_rng(5)
    sets = [np.unique(rng.integers(0, d, size=1500)).astype(np.int32) for _ in range(P)]
    owner = _owner_by_rule([set(t.tolist()) for t in sets], d, P)
    k = np.zeros(d, dtype=int)
    for t in sets:
        k[t] += 1

    def work(c):
        counting = _CountingComm(c)
        wsplit.plan_touched(Collective(counting), sets[c.Get_rank()], d)
        return counting.received

    received = run_ranks(work, P)
    for r in range(P):
        homed = sum(int(np.sum(t % P == r)) for t in sets)
        pairs = 2 * int(np.maximum(k[owner == r] - 1, 0).sum())
        assert received[r] == len(sets[r]) + homed + pairs
        assert received[r] < sum(len(t) for t in sets)        # what the gather held


class Recording(Collective):
    """A Collective that keeps what each alltoallv sent and the sizes of the sums."""

    def __init__(self, comm):
        super().__init__(comm)
        self.exchanges, self.sums = [], []

    def alltoallv(self, send, scounts, recv, rcounts):
        before = self.bytes
        super().alltoallv(send, scounts, recv, rcounts)
        self.exchanges.append((list(scounts), self.bytes - before))

    def sum(self, buf):
        self.sums.append(len(buf))
        return super().sum(buf)


def _train_split(X, y, cuts, solver, **kw):
    colls = {}

    def work(comm):
        r = comm.Get_rank()
        colls[r] = Recording(comm)
        return linsvm.train(X[cuts[r]:cuts[r + 1]], y[cuts[r]:cuts[r + 1]], solver=solver,
                            comm=colls[r], weight_split="on", **kw)

    out = run_ranks(work, len(cuts) - 1)
    for res in out:
        if isinstance(res, BaseException):
            raise res
    return out, colls


def _assert_same(serial, models, Xt):
    f_s, f_d = serial.stats["objective"], models[0].stats["objective"]
    assert abs(f_d - f_s) <= RTOL * abs(f_s), (f_s, f_d)
    for m in models:
        assert np.array_equal(m.weights, models[0].weights)
        assert m.stats["weight_exchange"] == "split"
    if serial.kind == "regression":
        np.testing.assert_allclose(models[0].predict(Xt), serial.predict(Xt), atol=1e-6)
    else:
        assert np.array_equal(models[0].predict(Xt), serial.predict(Xt))


LAYOUTS = {2: {"uneven": [0, 70, 300], "empty": [0, 0, 300]},
           3: {"uneven": [0, 40, 150, 300], "empty": [0, 120, 120, 300]}}


CASES = [(s, P, lay) for s in ("mfn", "ls", "mfn-huber") for P in (2, 3)
         for lay in ("uneven", "empty")] + \
    [(s, P, lay) for s in ("mfn-l1", "svr", "lr") for P, lay in ((2, "uneven"), (3, "empty"))]
TOL.update({"svr": 1e-9, "lr": 1e-8})


@pytest.mark.slow
@pytest.mark.parametrize("solver,P,layout", CASES)
def test_split_equals_serial(solver, P, layout):
    """The mfn family splits its Newton loop too (the step scattered to T_r, beta gathered
    once at the end); svr and lr keep theirs replicated (the step gathered after each
    CGLS).  mfn-l1's continuation takes seconds: two of the layouts for it and the others."""
    X, y, Xt, _ = _wide_set()
    kw = {"tol": TOL[solver]} if solver in TOL else {}
    serial = linsvm.train(X, y, solver=solver, **kw)
    models, _ = _train_split(X, y, LAYOUTS[P][layout], solver, **kw)
    _assert_same(serial, models, Xt)


@pytest.mark.parametrize("P,layout", [(2, "uneven"), (3, "empty")])
def test_ordinal_split_equals_serial(P, layout):
    """mfn-ord splits each Newton step's CGLS (its thresholds: weights every rank with rows
    touches) and keeps its Newton loop replicated: the serial model to 1e-9, thresholds
    included, on uneven blocks and with an empty one."""
    X, y = make_text_classification(n_samples=400, n_features=1500, n_classes=3, avg_length=6,
                                    noise=0.05, seed=9)
    X = sp.hstack([X, sp.csr_matrix((400, 20))], format="csr")
    X, y, Xt = X[:300], y[:300], X[300:]
    serial = linsvm.train(X, y, solver="mfn-ord", tol=1e-8)
    models, colls = _train_split(X, y, LAYOUTS[P][layout], "mfn-ord", tol=1e-8)
    f_s, f_d = serial.stats["objective"], models[0].stats["objective"]
    assert abs(f_d - f_s) <= RTOL * abs(f_s), (f_s, f_d)
    for m in models:
        assert np.array_equal(m.weights, models[0].weights)
        assert np.array_equal(m.thresholds_, models[0].thresholds_)
        assert m.stats["weight_exchange"] == "split"
    np.testing.assert_allclose(models[0].thresholds_, serial.thresholds_, rtol=1e-7, atol=1e-9)
    assert np.array_equal(models[0].predict(Xt), serial.predict(Xt))
    d = X.shape[1] + 1 + 2                                  # weights, bias, 2 thresholds
    assert all(d + 3 not in c.sums and any(c.exchanges) for c in colls.values())


def test_split_class_on_one_rank_only_and_free_bias():
    X, y, Xt, _ = _wide_set(seed=8)
    order = np.argsort(y, kind="stable")
    X, y = X[order], y[order]
    first = int(np.count_nonzero(y == y[0]))
    cuts = [0, first - 10, first + 20, 300]
    assert y[0] not in set(y[cuts[2]:])
    for kw in ({"tol": 1e-6}, {"tol": 1e-6, "regularize_bias": False}):
        serial = linsvm.train(X, y, solver="mfn", **kw)
        models, _ = _train_split(X, y, cuts, "mfn", **kw)
        _assert_same(serial, models, Xt)


def test_exchange_bytes_are_the_plans():
    """Every alltoallv a rank makes sends either its reduction's or its scatter's share
    (the plan's counts, brute-forced here from the rows), counted in the Collective's
    bytes without the rank's own part; no d-sized allreduce per CGLS iteration."""
    X, y, _, _ = _wide_set()
    cuts = [0, 40, 150, 300]
    models, colls = _train_split(X, y, cuts, "mfn", tol=1e-6)
    d = X.shape[1] + 1                                          # the bias weight
    sets = []
    for r in range(3):
        cols = set(X[cuts[r]:cuts[r + 1]].indices.tolist())
        sets.append(cols | ({d - 1} if cuts[r + 1] > cuts[r] else set()))
    owner = _owner_by_rule(sets, d, 3)
    cg = models[0].stats["cg_iter"]
    for r, coll in colls.items():
        reduce_cnt = np.bincount([owner[j] for j in sets[r] if owner[j] != r], minlength=3)
        scatter_cnt = np.array([sum(owner[j] == r for j in sets[s]) if s != r else 0
                                for s in range(3)])
        n_reduce = n_scatter = 0
        for counts, nbytes in coll.exchanges:
            assert nbytes == 8 * (sum(counts) - counts[r])
            if list(counts) == list(reduce_cnt):
                n_reduce += 1
            else:
                assert list(counts) == list(scatter_cnt)
                n_scatter += 1
        assert n_reduce >= cg and n_scatter >= 1
        assert d + 3 not in coll.sums                      # the allreduce arrangement's pack


def test_auto_rule():
    """auto considers a plan when 8 d bytes exceed a quarter of 12 nnz / P (nnz summed over
    the ranks), and keeps it when the busiest rank's exchanges send at most half of a
    ring allreduce's 2 (P - 1) / P x 8 (d + 3) bytes."""
    def decide(d, nnz_per_rank, P):
        return run_ranks(lambda c: wsplit.use_split("auto", Collective(c), d, nnz_per_rank), P)

    assert decide(1000, 4000, 2) == [False, False]           # 4 x 8000 < 12 x 8000 / 2
    assert decide(1000, 2000, 2) == [True, True]             # 32000 > 24000
    assert decide(10, 0, 3) == [True] * 3
    assert run_ranks(lambda c: wsplit.use_split("off", Collective(c), 10**9, 1), 2) == [False] * 2
    assert wsplit.use_split("on", None, 10**9, 1) is False   # serial: never

    # two ranks, 10 weights: rank 0 touches 0..5, rank 1 touches 4..9 (4 and 5 shared):
    # each sends 2 x 8 bytes per iteration against half of 8 x 13
    def judge(sets):
        def work(c):
            coll = Collective(c)
            return wsplit.pays(coll, wsplit.plan_touched(coll, sets[coll.rank], 10))
        return run_ranks(work, 2)

    few = [np.arange(0, 6, dtype=np.int32), np.arange(4, 10, dtype=np.int32)]
    assert judge(few) == [True, True]
    every = [np.arange(10, dtype=np.int32)] * 2                # 10 x 8 bytes each > 52
    assert judge(every) == [False, False]
