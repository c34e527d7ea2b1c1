"""Benchmark linsvm's L2-SVM-MFN against LIBLINEAR and scikit-learn, at equal quality.

    python examples/benchmark.py [--quick] [--datasets a9a,w8a] [--repeats 3]

Protocol (DESIGN.md, "Performance: how it is measured")
-------------------------------------------------------
Every solver is judged on ONE objective, LIBLINEAR's -s 2 / linsvm's -s mfn:

    F(w, b) = 1/2 (||w||^2 + b^2) + C sum_i max(0, 1 - t_i (w.x_i + b))^2,

i.e. a bias feature of value 1 whose weight is regularized like the others
(LIBLINEAR -B 1; scikit-learn LinearSVC with fit_intercept=True,
intercept_scaling=1).  F is computed here, with numpy/scipy, from the weights
each solver returns; no solver's own report of its objective is used.

Data: the binary files under $LINSVM_DATA/binary (default
<repo>/../shared/datasets/binary) with their test files where present.  Train
and test matrices get the same width (the larger of the two largest feature
indices, e.g. 123 for the whole Adult family), so all solvers see the same
columns.  Missing files are skipped with a note.

For each data set two values of C are benchmarked: C = 1 and a "CV C", the
value of 2^-6, 2^-5, ..., 2^4 with the best 5-fold cross-validation accuracy of
linsvm mfn (default tolerance; folds stratified by class from a seeded
permutation; ties go to the smaller C).  When the CV C is 1 it is run once.

1. Reference optimum f*: the smaller F of linsvm mfn at tol=1e-12 (max_iter=1000) and
   LIBLINEAR -s 2 at -e 1e-8 (the table says which; the other run's relative
   distance to f* is printed as a consistency check).
2. Time to a relative gap (F - f*)/|f*| <= 1e-4: for each solver the ladder of
   stopping tolerances 1, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8
   (the same values for every solver, each in its own -e / tol units) is walked
   from loose to tight, one run per
   tolerance (LIBLINEAR -s 1 permutes at random with a seed the Python
   binding cannot set, so it gets 3 runs per tolerance and reaches when their
   median gap does).  The first tolerance that reaches the gap is then timed
   in rounds that go over all solvers in turn (so a burst of load from other
   processes hits every solver, not one), --repeats rounds, more for runs
   under 0.25 s (until ~1 s of timed work, at most 15), and the median is
   reported with that tolerance; every timed model's gap is checked again
   and a cell says so when not all of them reached.  A solver whose ladder
   ends, or whose single run takes longer than --run-cap seconds, without
   reaching the gap is reported as "not reached" with its best gap.
   Timed is training only: the data are in memory; each LIBLINEAR's
   `problem` (its copy of the data) and `parameter`, and linsvm's validated
   CSRBuffers view of the data (train() accepts one in place of X), are
   built once per data set outside the timer, so that neither library's
   timing includes the preparation of its input; scikit-learn's fit()
   cannot be split and includes its own validation.  Solvers: linsvm mfn
   (default options; its kernels run serially below 50M non-zeros, so every
   data set here is single-threaded like LIBLINEAR), LIBLINEAR -s 2 (trust
   region Newton, primal), LIBLINEAR -s 1 (dual coordinate descent, same
   objective), LinearSVC dual=False and dual=True (scikit-learn's bundled
   LIBLINEAR, max_iter=1000, random_state=0).
3. Test accuracy of the model that reached the gap, from its weights
   (predict classes_[0] where w.x + b > 0).
4. Peak memory of training at C = 1, each in a fresh subprocess: the data
   are loaded from a .npz copy of the in-memory CSR arrays (so loading has no
   transient peak), the high-water mark is reset (/proc/self/clear_refs),
   RSS is recorded, the solver trains once at the tolerance that reached
   the gap (mfn: default 1e-6 if none did; LIBLINEAR -s 2: 0.01, its
   default), and the increase of peak RSS over that RSS is reported.  The
   peak is the process's VmHWM (/proc/self/status), not getrusage's
   ru_maxrss: on Linux ru_maxrss after exec() still holds the high-water mark
   of the forked parent's image (here, this benchmark with all its data), so
   it overstated every figure; where the reset is impossible the growth of
   ru_maxrss during training is shown, marked as a lower bound.  mfn is
   also measured after a warm-up train() on a 2-row problem in the same
   process, which separates its one-time first-call memory from the part
   that grows with the data.  LIBLINEAR is shown twice: training on a prebuilt
   `problem`, and building the `problem` (its own copy of the data) plus
   training, which is what it costs to go from a CSR matrix to a model.
5. Parser: linsvm.load_svmlight(path) vs sklearn.datasets.load_svmlight_file(
   path, zero_based=False) on every train and test file (compressed ones
   included, bzip2's cost then counts for both) and on
   multiclass/sector.scale.bz2: one untimed warm-up each (which also checks
   that both agree on shape and nnz), then the median of the repeats; MB/s is
   decompressed text per second.  (examples/bench_parser.py, a separate
   script, goes deeper into the parser: peak memory and .bz2 files timed as
   text; this table only needs the timing, so it is measured here and does not
   depend on that script's internals.)

The machine is shared (few cores, other processes running), so seconds are
noisy: read the ratios.  Output: Markdown tables on stdout and in
examples/results/benchmark.md, one TSV row per (data set, C, solver) in
examples/results/benchmark.tsv.  Progress goes to stderr.  `--quick` runs a9a
and w8a only, with one repeat.
"""
from __future__ import annotations

import argparse
import bz2
import dataclasses
import importlib.machinery
import importlib.metadata
import json
import math
import os
import pathlib
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

import numpy as np
import scipy.sparse as sp

REPO = pathlib.Path(__file__).resolve().parents[1]
# Measure this checkout: its in-place build (python3 setup.py build_ext --inplace) when it
# has one, else the installed package (pip install .); the report's header names the
# directory linsvm was imported from, and the memory children import the same one.
if any((REPO / "linsvm" / ("_mfn" + sfx)).exists() for sfx in importlib.machinery.EXTENSION_SUFFIXES):
    sys.path.insert(0, str(REPO))
TRAIN_FILES = ("a1a", "a2a", "a3a", "a4a", "a8a", "a9a", "w1a", "w7a", "w8a",
               "australian", "heart_scale", "ijcnn1.bz2", "synth-text-40k", "synth-text-160k")
# Large sparse text-like sets made by linsvm's own generator (no such set is in
# the shared data): name -> (examples, vocabulary); a quarter is held out for test.
SYNTH_SETS = {"synth-text-40k": (40000, 50000), "synth-text-160k": (160000, 200000),
              # issue 15's size (>= 400k x 200k, 20M non-zeros in training), used by
              # bench_defaults.py; not in TRAIN_FILES, so this script does not run them
              "synth-text-533k": (533334, 200000), "synth-text-800k": (800000, 400000)}
QUICK_FILES = ("a9a", "w8a")
EXTRA_PARSER_FILES = ("multiclass/sector.scale.bz2",)
TARGET_GAP = 1e-4
C_GRID = tuple(2.0 ** k for k in range(-6, 5))
CV_FOLDS = 5
CV_SEED = 0
REF_MFN_TOL = 1e-12
REF_MFN_MAX_ITER = 1000   # the reference solve must not stop at the default cap of 50 Newton steps
REF_LIBLINEAR_TOL = 1e-8
# One ladder of stopping tolerances for every solver (each walks it in its own -e /
# tol units until its model reaches the gap), so no solver gets a finer search.
LADDER = (1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8)
SKLEARN_MAX_ITER = 1000
SHORT_RUN = 0.25          # seconds: runs faster than this get extra repeats
MAX_REPEATS = 15
MIN_TOTAL = 1.0           # seconds of timed work to aim for on short runs
RANDOM_TRIES = 3          # runs per tolerance for a randomized solver's ladder


def log(msg):
    """Progress line to stderr (stdout is kept for the result tables)."""
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

@dataclasses.dataclass
class Dataset:
    """A training set (with its test set, if any) as every solver sees it.

    `t` is +1 for the positive class classes[0] (linsvm's order) and -1 else;
    all weight vectors in this script use that sign convention.
    """

    name: str
    X: sp.csr_matrix
    y: np.ndarray
    t: np.ndarray
    classes: np.ndarray
    Xt: sp.csr_matrix | None
    yt: np.ndarray | None
    test_name: str | None

    @property
    def n(self):
        return self.X.shape[0]

    @property
    def d(self):
        return self.X.shape[1]

    @property
    def nnz(self):
        return self.X.nnz


def data_dir():
    """The data root: $LINSVM_DATA, else <repo>/../shared/datasets (binary/ and multiclass/ below it)."""
    root = pathlib.Path(os.environ.get("LINSVM_DATA", REPO.parent / "shared" / "datasets"))
    return root


def test_file_name(train_name):
    """`a9a` -> `a9a.t`, `ijcnn1.bz2` -> `ijcnn1.t.bz2`."""
    if train_name.endswith(".bz2"):
        return train_name[:-4] + ".t.bz2"
    return train_name + ".t"


def with_width(X, d):
    """The same CSR matrix seen with d columns (d >= X.shape[1]; no copy of the arrays)."""
    if X.shape[1] == d:
        return X
    return sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.shape[0], d))


def synth_dataset(name):
    """A SYNTH_SETS data set from linsvm.synth (seed 1), the last quarter held out."""
    from linsvm.synth import make_text_classification

    n, d = SYNTH_SETS[name]
    X, y = make_text_classification(n_samples=n, n_features=d, seed=1)
    n_train = n - n // 4
    classes = class_order(y[:n_train])
    t = np.where(y[:n_train] == classes[0], 1.0, -1.0)
    return Dataset(name=name, X=X[:n_train], y=y[:n_train], t=t, classes=classes,
                   Xt=X[n_train:], yt=y[n_train:], test_name="held-out quarter")


def load_dataset(root, name):
    """Load binary/<name> and its test file (if present) with a common width.

    Returns a Dataset, or None (with a note) when the training file is missing
    or is not a two-class problem.
    """
    import linsvm

    if name in SYNTH_SETS:
        return synth_dataset(name)
    path = root / "binary" / name
    if not path.exists():
        log(f"skip {name}: {path} not found")
        return None
    X, y = linsvm.load_svmlight(path)
    tname = test_file_name(name)
    tpath = root / "binary" / tname
    Xt = yt = None
    if tpath.exists():
        Xt, yt = linsvm.load_svmlight(tpath)
    else:
        log(f"note {name}: no test file {tname}")
        tname = None
    d = max(X.shape[1], Xt.shape[1] if Xt is not None else 0)
    X = with_width(X, d)
    if Xt is not None:
        Xt = with_width(Xt, d)
    classes = class_order(y)
    if classes.shape[0] != 2:
        log(f"skip {name}: {classes.shape[0]} classes, not a binary problem")
        return None
    t = np.where(y == classes[0], 1.0, -1.0)
    return Dataset(name=name.removesuffix(".bz2"), X=X, y=y, t=t, classes=classes,
                   Xt=Xt, yt=yt, test_name=tname)


def class_order(y):
    """Classes in linsvm's order, read off a tiny linsvm model (positive first)."""
    import linsvm

    labels = np.unique(y)
    if labels.shape[0] != 2:
        return labels
    # Two rows, one per label, in order of first appearance: the order
    # linsvm.train gives them is the order it uses on the full data.
    first = np.sort([int(np.flatnonzero(y == c)[0]) for c in labels])
    tiny_y = y[first]
    model = linsvm.train(sp.csr_matrix(np.ones((2, 1))), tiny_y, C=1.0)
    return np.asarray(model.classes_, dtype=np.float64)


# ---------------------------------------------------------------------------
# objective and accuracy, computed here from the weights
# ---------------------------------------------------------------------------

def objective(ds, w, b, C, loss="l2"):
    """F(w, b) = 1/2(||w||^2 + b^2) + C sum max(0, 1 - t (Xw + b))^2 on the training set
    (loss="l1": the hinge itself, not squared: LIBLINEAR -s 3's objective)."""
    slack = np.maximum(0.0, 1.0 - ds.t * (ds.X @ w + b))
    penalty = float(slack @ slack) if loss == "l2" else float(slack.sum())
    return 0.5 * (float(w @ w) + b * b) + C * penalty


def relative_gap(f, fstar):
    """(f - f*) / |f*|."""
    return (f - fstar) / abs(fstar)


def accuracy(X, y, classes, w, b):
    """Fraction of rows of X whose label is classes[0] iff w.x + b > 0."""
    pred = np.where(X @ w + b > 0, classes[0], classes[1])
    return float(np.mean(pred == y))


# ---------------------------------------------------------------------------
# solvers: each run returns (seconds, w, b, info)
# ---------------------------------------------------------------------------

def linsvm_problem(ds, cache):
    """linsvm's validated view of the training data, built once per data set (untimed),
    as LIBLINEAR's `problem` is."""
    from linsvm.problem import CSRBuffers

    if "csr" not in cache:
        cache["csr"] = CSRBuffers(ds.X)
    return cache["csr"]


def run_mfn(ds, C, tol, cache, **options):
    """linsvm.train(solver="mfn") with default options (or `options`); timed around train()."""
    import linsvm

    X = linsvm_problem(ds, cache)
    start = time.perf_counter()
    model = linsvm.train(X, ds.y, solver="mfn", C=C, bias=1.0, tol=tol, **options)
    seconds = time.perf_counter() - start
    if model.classes_[0] != ds.classes[0]:
        raise RuntimeError("linsvm changed its class order between calls")
    W = np.asarray(model.weights)[:, 0]
    st = model.stats
    info = {"newton": st.get("n_iter"), "cg": st.get("cg_iter")}
    if getattr(model, "warnings", None):
        info["warning"] = "; ".join(model.warnings)
    return seconds, W[:-1].copy(), float(W[-1]), info


def liblinear_problem(ds, cache):
    """LIBLINEAR's own copy of the training data, built once per data set (untimed)."""
    from liblinear import liblinearutil as L

    if "problem" not in cache:
        cache["problem"] = L.problem(ds.y, ds.X)
    return cache["problem"]


def run_liblinear(ds, C, tol, cache, s):
    """LIBLINEAR -s s -c C -B 1 -e tol (tol None: LIBLINEAR's default); only L.train() is timed."""
    from liblinear import liblinearutil as L

    prob = liblinear_problem(ds, cache)
    eps = "" if tol is None else f" -e {tol!r}"
    param = L.parameter(f"-s {s} -c {C!r} -B 1{eps} -q")
    start = time.perf_counter()
    model = L.train(prob, param)
    seconds = time.perf_counter() - start
    w, b = liblinear_weights(ds, model)
    return seconds, w, b, {}


def liblinear_weights(ds, model):
    """(w, b) of a binary LIBLINEAR model in this script's sign convention (t = +1 for
    ds.classes[0]), w padded or cut to ds.d columns."""
    w, b = model.get_decfun()
    w = np.asarray(w, dtype=np.float64)
    if w.shape[0] < ds.d:       # LIBLINEAR's width is the largest index it saw
        w = np.concatenate([w, np.zeros(ds.d - w.shape[0])])
    sign = 1.0 if model.get_labels()[0] == ds.classes[0] else -1.0
    return sign * w[:ds.d], sign * float(b)


def run_sklearn(ds, C, tol, cache, dual):
    """scikit-learn LinearSVC(squared hinge, intercept_scaling=1); fit() is timed."""
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.svm import LinearSVC

    est = LinearSVC(penalty="l2", loss="squared_hinge", dual=dual, C=C, tol=tol,
                    fit_intercept=True, intercept_scaling=1.0,
                    max_iter=SKLEARN_MAX_ITER, random_state=0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        start = time.perf_counter()
        est.fit(ds.X, ds.y)
        seconds = time.perf_counter() - start
    sign = 1.0 if est.classes_[1] == ds.classes[0] else -1.0
    info = {}
    if any(issubclass(c.category, ConvergenceWarning) for c in caught):
        info["warning"] = f"max_iter={SKLEARN_MAX_ITER} reached"
    return seconds, sign * est.coef_[0].copy(), sign * float(est.intercept_[0]), info


@dataclasses.dataclass(frozen=True, eq=False)   # hashed by identity
class Solver:
    """A benchmarked solver: display name, tolerance ladder, and run function."""

    name: str
    ladder: tuple
    run: object
    options: dict = dataclasses.field(default_factory=dict)
    randomized: bool = False

    def __call__(self, ds, C, tol, cache):
        return self.run(ds, C, tol, cache, **self.options)


def solvers():
    """The solvers in table order; the first is linsvm, the second the reference peer."""
    return [
        Solver("linsvm mfn", LADDER, run_mfn),
        Solver("liblinear -s 2", LADDER, run_liblinear, {"s": 2}),
        Solver("liblinear -s 1", LADDER, run_liblinear, {"s": 1}, randomized=True),
        Solver("LinearSVC primal", LADDER, run_sklearn, {"dual": False}),
        Solver("LinearSVC dual", LADDER, run_sklearn, {"dual": True}),
        Solver("linsvm mfn 2 threads", LADDER, run_mfn, {"n_threads": 2}),
    ]


# ---------------------------------------------------------------------------
# C by cross-validation, reference optimum, time to gap
# ---------------------------------------------------------------------------

def stratified_folds(y, k, seed):
    """Fold number of every row: each class permuted (seeded) and dealt round-robin."""
    rng = np.random.default_rng(seed)
    fold = np.empty(y.shape[0], dtype=np.int64)
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        rows = rows[rng.permutation(rows.shape[0])]
        fold[rows] = np.arange(rows.shape[0]) % k
    return fold


def choose_cv_C(ds, solver="mfn", **options):
    """5-fold CV accuracy of linsvm mfn (or `solver` with `options`) over C_GRID;
    returns (best C, {C: accuracy}).

    Default tolerance; in each fold the C path is walked upwards from a cold
    start per C (no warm start, so each accuracy is that of a plain train()).
    Ties go to the smaller C.
    """
    import linsvm

    fold = stratified_folds(ds.y, CV_FOLDS, CV_SEED)
    correct = {C: 0 for C in C_GRID}
    for f in range(CV_FOLDS):
        tr = np.flatnonzero(fold != f)
        te = np.flatnonzero(fold == f)
        Xtr, ytr, Xte, yte = ds.X[tr], ds.y[tr], ds.X[te], ds.y[te]
        for C in C_GRID:
            model = linsvm.train(Xtr, ytr, solver=solver, C=C, **options)
            correct[C] += int(np.sum(model.predict(Xte) == yte))
    acc = {C: correct[C] / ds.y.shape[0] for C in C_GRID}
    best = max(acc.values())
    return min(C for C in C_GRID if acc[C] == best), acc


def reference_optimum(ds, C, cache):
    """f* = min F over mfn(tol=1e-12, max_iter=1000) and liblinear -s 2 (-e 1e-8).

    Returns (f*, name of the run that gave it, {run name: F}).
    """
    runs = {
        f"mfn tol={REF_MFN_TOL:g}": lambda: run_mfn(ds, C, REF_MFN_TOL, cache, max_iter=REF_MFN_MAX_ITER),
        f"liblinear -s 2 -e {REF_LIBLINEAR_TOL:g}":
            lambda: run_liblinear(ds, C, REF_LIBLINEAR_TOL, cache, s=2),
    }
    values = {}
    for name, run in runs.items():
        _, w, b, _ = run()
        values[name] = objective(ds, w, b, C)
    source = min(values, key=values.get)
    return values[source], source, values


def n_repeats(first_seconds, repeats):
    """How many timings to take: `repeats`, more for short runs (see SHORT_RUN)."""
    if repeats <= 1 or first_seconds >= SHORT_RUN:
        return repeats
    want = math.ceil(MIN_TOTAL / max(first_seconds, 1e-6))
    return int(min(MAX_REPEATS, max(repeats, want)))


def walk_ladder(ds, C, fstar, solver, cache, run_cap, start=0):
    """Walk solver.ladder from loose to tight until a model's gap is <= TARGET_GAP.

    A randomized solver (LIBLINEAR -s 1 seeds nothing it can be told about)
    is run RANDOM_TRIES times per tolerance and reaches when the median gap
    does.  The walk begins at solver.ladder[start].
    Returns a dict: reached, tol, seconds (of the deciding run), gap,
    best_gap, test_acc (of the reaching model), info (the reaching or last
    run's extras), ladder (list of (tol, seconds, gap) walked).
    """
    walk = []
    best_gap = math.inf
    info = {}
    for tol in solver.ladder[start:]:
        tries = []
        for _ in range(RANDOM_TRIES if solver.randomized else 1):
            seconds, w, b, info = solver(ds, C, tol, cache)
            tries.append((relative_gap(objective(ds, w, b, C), fstar), seconds, w, b))
        tries.sort(key=lambda x: x[0])
        gap, seconds, w, b = tries[len(tries) // 2]
        walk.append((tol, seconds, gap))
        best_gap = min(best_gap, tries[0][0])
        if gap <= TARGET_GAP:
            acc = accuracy(ds.Xt, ds.yt, ds.classes, w, b) if ds.Xt is not None else None
            return {"reached": True, "tol": tol, "seconds": seconds, "gap": gap,
                    "best_gap": best_gap, "test_acc": acc, "info": info, "ladder": walk}
        if seconds > run_cap:
            break
    if walk:
        info = dict(info, last_tol=walk[-1][0], last_seconds=round(walk[-1][1], 4))
    return {"reached": False, "tol": None, "seconds": None, "gap": None,
            "best_gap": best_gap, "test_acc": None, "info": info, "ladder": walk}


def time_interleaved(ds, C, fstar, walks, cache, repeats):
    """Time every solver that reached the gap at its reaching tolerance.

    Rounds go over the solvers in turn, so a burst of load from other
    processes hits all of them rather than one; a solver whose deciding run
    was short gets more rounds (n_repeats).  Each result in `walks` (solver ->
    walk dict) gains seconds (median of the timed runs), n_timed, gap (worst
    timed gap) and n_reached (timed runs that reached the gap).
    """
    todo = {s: n_repeats(w["seconds"], repeats) for s, w in walks.items() if w["reached"]}
    times = {s: [] for s in todo}
    gaps = {s: [] for s in todo}
    for k in range(max(todo.values(), default=0)):
        for solver, count in todo.items():
            if k < count:
                seconds, w, b, _ = solver(ds, C, walks[solver]["tol"], cache)
                times[solver].append(seconds)
                gaps[solver].append(relative_gap(objective(ds, w, b, C), fstar))
    for solver, walk in walks.items():
        if solver in todo:
            walk.update(seconds=statistics.median(times[solver]), n_timed=len(times[solver]),
                        gap=max(gaps[solver]),
                        n_reached=sum(g <= TARGET_GAP for g in gaps[solver]))
        else:
            walk.update(n_timed=0, n_reached=0)


def bench_solvers(ds, C, fstar, cache, repeats, run_cap):
    """Time to gap of every solver at one C: ladder walks, then interleaved timing.

    A tolerance whose timed runs mostly missed the gap (possible for a
    randomized solver whose ladder runs were lucky) is rejected and the walk
    resumes below it.  Returns {solver name: result dict}.
    """
    walks = {solver: walk_ladder(ds, C, fstar, solver, cache, run_cap) for solver in solvers()}
    time_interleaved(ds, C, fstar, walks, cache, repeats)
    rejected = {solver: [] for solver in walks}
    while True:
        redo = [s for s, w in walks.items() if w["reached"] and 2 * w["n_reached"] < w["n_timed"]]
        if not redo:
            break
        for solver in redo:
            old = walks[solver]
            rejected[solver].append(f"tol {old['tol']:g} rejected: {old['n_reached']}/{old['n_timed']} "
                                    f"timed runs reached")
            log(f"   C={C:g} {solver.name}: {rejected[solver][-1]}; walking on")
            new = walk_ladder(ds, C, fstar, solver, cache, run_cap,
                              start=solver.ladder.index(old["tol"]) + 1)
            new["ladder"] = old["ladder"] + new["ladder"]
            new["best_gap"] = min(old["best_gap"], new["best_gap"])
            walks[solver] = new
        time_interleaved(ds, C, fstar, {s: walks[s] for s in redo}, cache, repeats)
    for solver, notes in rejected.items():
        if notes:
            walks[solver]["info"] = dict(walks[solver]["info"], warning="; ".join(notes))
    return {solver.name: w for solver, w in walks.items()}


# ---------------------------------------------------------------------------
# memory, in fresh subprocesses
# ---------------------------------------------------------------------------

MEMORY_CHILD = r"""
import json, resource, sys
sys.path.insert(0, sys.argv[1])
mode, npz, C, tol = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
import numpy as np, scipy.sparse as sp
import linsvm
from liblinear import liblinearutil as L

def status_kb(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)

z = np.load(npz)
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
y = z["y"]
del z
param = L.parameter(f"-s 2 -c {C!r} -B 1 -e {tol!r} -q")
if mode == "liblinear":
    prob = L.problem(y, X)
if mode == "mfn-warm":      # pay linsvm's one-time first-call costs outside the measurement
    linsvm.train(sp.csr_matrix(np.eye(2)), np.array([1.0, -1.0]), solver="mfn", C=C, tol=tol)
try:
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    reset = True
except OSError:
    reset = False
before = status_kb("VmRSS")
peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
if mode in ("mfn", "mfn-warm"):
    linsvm.train(X, y, solver="mfn", C=C, tol=tol)
elif mode == "liblinear":
    L.train(prob, param)
else:
    prob = L.problem(y, X)
    L.train(prob, param)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"rss_before_kb": before, "peak_before_kb": peak_before, "peak_kb": peak,
                  "hwm_kb": status_kb("VmHWM"), "reset": reset}))
"""


def peak_memory(ds, C, mode, tol, tmpdir):
    """Increase of peak RSS (MB) while training once in a fresh process.

    mode: "mfn", "mfn-warm" (after one train() on a 2-row problem, so that
    first-call costs are excluded), "liblinear" (problem prebuilt) or
    "liblinear+problem".
    Returns (MB, note).
    """
    npz = pathlib.Path(tmpdir) / f"{ds.name}.npz"
    if not npz.exists():
        np.savez(npz, data=ds.X.data, indices=ds.X.indices, indptr=ds.X.indptr,
                 shape=np.array(ds.X.shape), y=ds.y)
    import linsvm
    out = subprocess.run([sys.executable, "-c", MEMORY_CHILD,
                          str(pathlib.Path(linsvm.__file__).resolve().parents[1]), mode, str(npz),
                          repr(C), repr(tol)], capture_output=True, text=True)
    if out.returncode != 0:
        return None, "child failed: " + (out.stderr.strip().splitlines() or ["?"])[-1]
    r = json.loads(out.stdout.strip().splitlines()[-1])
    if r["reset"]:
        # VmHWM is this process's own high-water mark, reset just before training.
        return max(0, r["hwm_kb"] - r["rss_before_kb"]) / 1024.0, ""
    # No reset possible: ru_maxrss also remembers the forked parent's image
    # (Linux carries the pre-exec high-water mark over), so only the growth of
    # ru_maxrss during training can be trusted, and it is a lower bound.
    return (max(0, r["peak_kb"] - r["peak_before_kb"]) / 1024.0,
            "high-water mark could not be reset: lower bound")


# ---------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------

def text_bytes(path):
    """Size of the decompressed text of a file (bzip2 recognised by its magic)."""
    with open(path, "rb") as fh:
        head = fh.read(3)
    if head == b"BZh":
        n = 0
        with bz2.open(path, "rb") as fh:
            while chunk := fh.read(1 << 22):
                n += len(chunk)
        return n
    return os.path.getsize(path)


def median_seconds(fn, repeats):
    """Median wall time of `repeats` calls of fn()."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def bench_parser(path, repeats):
    """Time linsvm.load_svmlight vs sklearn load_svmlight_file on one file."""
    import linsvm
    from sklearn.datasets import load_svmlight_file

    X1, _ = linsvm.load_svmlight(path)                       # warm-up + check
    X2, _ = load_svmlight_file(str(path), zero_based=False)
    agree = X1.shape[0] == X2.shape[0] and X1.nnz == X2.nnz
    t_lin = median_seconds(lambda: linsvm.load_svmlight(path), repeats)
    t_sk = median_seconds(lambda: load_svmlight_file(str(path), zero_based=False), repeats)
    mb = text_bytes(path) / 1e6
    return {"file": path, "disk_mb": os.path.getsize(path) / 1e6, "text_mb": mb,
            "rows": X1.shape[0], "nnz": X1.nnz, "agree": agree,
            "linsvm_s": t_lin, "sklearn_s": t_sk,
            "linsvm_mbs": mb / t_lin, "sklearn_mbs": mb / t_sk, "speedup": t_sk / t_lin}


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

def machine_header(args):
    """Lines describing the machine, the library versions and the protocol."""
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    try:
        load = "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        load = "?"

    def version(dist):
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return "not installed"

    import linsvm
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        commit = "?"
    return [
        f"Machine: nproc {usable} (os.cpu_count {os.cpu_count()}), CPU {cpu}, load average "
        f"at start {load}; {platform.system()} {platform.release()}.",
        f"Versions: Python {platform.python_version()}, linsvm {linsvm.__version__} imported from "
        f"{pathlib.Path(linsvm.__file__).resolve().parent} (repository HEAD {commit}, working tree "
        f"may differ), numpy {np.__version__}, scipy {version('scipy')}, "
        f"scikit-learn {version('scikit-learn')}, liblinear-official {version('liblinear-official')}.",
        f"Protocol: objective 1/2||w||^2 + C sum max(0, 1 - t w.x)^2 with a regularized bias "
        f"feature of value 1, computed here from each solver's weights; f* = min over mfn "
        f"tol={REF_MFN_TOL:g} and liblinear -s 2 -e {REF_LIBLINEAR_TOL:g}; time = median of "
        f"{args.repeats} repeat(s) (more for runs < {SHORT_RUN * 1000:.0f} ms) of the first "
        f"tolerance on each solver's ladder whose model reaches (F - f*)/|f*| <= {TARGET_GAP:g}; "
        f"training only, data in memory, single-threaded solvers. CV C: 5-fold stratified CV "
        f"accuracy of mfn over C = 2^-6..2^4 (seed {CV_SEED}, ties -> smaller C). "
        f"See the docstring of examples/benchmark.py.",
    ]


def fmt_s(x):
    """Seconds, with enough digits for small values."""
    if x is None:
        return "—"
    return f"{x:.3f}" if x >= 0.01 else f"{x * 1000:.2f} ms"


def fmt_c(C):
    """C for the tables (powers of two print exactly with %g)."""
    return f"{C:g}"


def fmt_opt(x, spec):
    """format(x, spec), or a dash for None."""
    return "—" if x is None else format(x, spec)


def fmt_pct(x):
    """A fraction as a percentage with two decimals, or a dash."""
    return "—" if x is None else f"{100 * x:.2f}%"


def solver_cell(r):
    """Table cell: seconds (tol), or 'not reached'."""
    if not r["reached"]:
        return f"not reached (best gap {r['best_gap']:.1e})"
    cell = f"{fmt_s(r['seconds'])} ({r['tol']:g})"
    if r["n_reached"] < r["n_timed"]:
        cell += f" [{r['n_reached']}/{r['n_timed']} runs reached]"
    return cell


def ratio_to_s2(r, ref):
    """seconds / liblinear -s 2 seconds (None when either did not reach the gap)."""
    if r["reached"] and ref["reached"] and ref["seconds"] > 0:
        return r["seconds"] / ref["seconds"]
    return None


def training_tables(results, names):
    """Markdown for tables (a1) summary and (a2) detail."""
    lines = ["## (a) Training: seconds to a relative objective gap <= "
             f"{TARGET_GAP:g} (tolerance used in parentheses)", "",
             "| data set | n | d | nnz | C | " + " | ".join(names)
             + " | mfn / liblinear -s 2 | mfn Newton / CG iters | test acc mfn / liblinear -s 2 |",
             "|" + "---|" * (len(names) + 8)]
    for res in results:
        ds, C = res["ds"], res["C"]
        rs = res["solvers"]
        mfn = rs[names[0]]
        iters = f"{mfn['info'].get('newton', '?')} / {mfn['info'].get('cg', '?')}" if mfn["reached"] else "—"
        label = fmt_c(C) + (" (CV)" if res["cv"] else "")
        cells = [ds.name, str(ds.n), str(ds.d), str(ds.nnz), label]
        cells += [solver_cell(rs[nm]) for nm in names]
        acc = f"{fmt_pct(mfn['test_acc'])} / {fmt_pct(rs[names[1]]['test_acc'])}" if ds.Xt is not None else "—"
        cells += [fmt_opt(ratio_to_s2(mfn, rs[names[1]]), ".2f"), iters, acc]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Ratio < 1: mfn is faster. (CV) marks the C chosen by cross-validation; "
              "where it is 1 the row is shared.", ""]
    lines += ["### (a2) Detail per solver", "",
              "| data set | C | f* (from) | solver | tol | seconds | timed runs | gap | test acc "
              "| ratio to liblinear -s 2 | ladder walked (tol: gap) |",
              "|---|---|---|---|---|---|---|---|---|---|---|"]
    for res in results:
        ds, C = res["ds"], res["C"]
        rs = res["solvers"]
        fstar = f"{res['fstar']:.10g} ({res['fstar_source'].split()[0]})"
        for nm in names:
            r = rs[nm]
            walk = ", ".join(f"{tol:g}: {gap:.1e}" for tol, _, gap in r["ladder"])
            if r["info"].get("warning"):
                walk += " — " + r["info"]["warning"]
            cells = [ds.name, fmt_c(C), fstar, nm, fmt_opt(r["tol"], "g"), fmt_s(r["seconds"]),
                     str(r["n_timed"]), fmt_opt(r["gap"], ".1e"), fmt_pct(r["test_acc"]),
                     fmt_opt(ratio_to_s2(r, rs[names[1]]), ".2f"), walk]
            lines.append("| " + " | ".join(cells) + " |")
    return lines


def reference_table(results, cv):
    """Markdown: CV choice of C and the two reference runs behind f*."""
    lines = ["## Reference optima and the cross-validated C", "",
             "| data set | CV C (5-fold acc) | acc at C=1 | C | f* | from | other reference run: gap to f* |",
             "|---|---|---|---|---|---|---|"]
    for res in results:
        ds, C = res["ds"], res["C"]
        best, acc = cv[ds.name]
        other = [(k, v) for k, v in res["fstar_runs"].items() if k != res["fstar_source"]]
        other_txt = ", ".join(f"{k}: {relative_gap(v, res['fstar']):.1e}" for k, v in other)
        lines.append(f"| {ds.name} | {fmt_c(best)} ({fmt_pct(acc[best])}) | {fmt_pct(acc[1.0])} | "
                     f"{fmt_c(C)} | {res['fstar']:.10g} | {res['fstar_source']} | {other_txt} |")
    return lines


def memory_table(rows):
    """Markdown for table (b)."""
    lines = ["## (b) Memory: increase of peak RSS while training once at C = 1 (fresh process)", "",
             "| data set | n | nnz | CSR arrays MB | solver | tol | peak increase MB | per CSR size "
             "| bytes per example | note |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        per = "—" if r["mb"] is None else f"{r['mb'] / r['csr_mb']:.2f}x"
        per_ex = "—" if r["mb"] is None else f"{r['mb'] * 2**20 / r['n']:.0f}"
        lines.append(f"| {r['dataset']} | {r['n']} | {r['nnz']} | {r['csr_mb']:.2f} | {r['solver']} | "
                     f"{r['tol']:g} | {fmt_opt(r['mb'], '.2f')} | {per} | {per_ex} | {r['note']} |")
    lines += ["", "CSR arrays = data (8 B) + indices (4 B) per non-zero + indptr (4 B) per row, "
              "as scipy holds them. 'liblinear -s 2 + problem()' also builds LIBLINEAR's own copy "
              "of the data (16 B per non-zero plus the bias node), which a user going from a CSR "
              "matrix to a LIBLINEAR model pays. 'after a warm-up call' first trains on a 2-row problem in "
              "the same process, separating linsvm's one-time first-call memory from what grows "
              "with the data. RSS is counted in 4 kB pages, so tiny sets show ~0."]
    return lines


def parser_table(rows):
    """Markdown for table (c)."""
    lines = ["## (c) Parser: linsvm.load_svmlight vs sklearn load_svmlight_file(zero_based=False)", "",
             "| file | MB on disk | MB text | rows | nnz | linsvm s | linsvm MB/s | sklearn s | "
             "sklearn MB/s | speedup (sklearn / linsvm) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        warn = "" if r["agree"] else " (shape/nnz DISAGREE)"
        lines.append(f"| {r['label']}{warn} | {r['disk_mb']:.2f} | {r['text_mb']:.2f} | {r['rows']} | "
                     f"{r['nnz']} | {r['linsvm_s']:.4f} | {r['linsvm_mbs']:.1f} | {r['sklearn_s']:.4f} | "
                     f"{r['sklearn_mbs']:.1f} | {r['speedup']:.2f}x |")
    lines += ["", "MB/s = decompressed text per second; for .bz2 files bzip2's decompression is "
              "inside both timings (scikit-learn reads through Python's bz2 module, linsvm "
              "splits the file at its bzip2 blocks and may decompress them on two threads, "
              "see the README)."]
    return lines


TSV_COLUMNS = ("dataset", "n", "d", "nnz", "C", "solver", "tol_used", "seconds", "gap",
               "test_acc", "ratio_to_liblinear_s2")


def tsv_rows(results, names):
    """One row per (data set, C, solver); 'not reached' solvers have tol_used=not_reached."""
    rows = []
    for res in results:
        ds, C = res["ds"], res["C"]
        rs = res["solvers"]
        for nm in names:
            r = rs[nm]
            ratio = ratio_to_s2(r, rs[names[1]])
            rows.append([ds.name, ds.n, ds.d, ds.nnz, f"{C:g}", nm,
                         "not_reached" if not r["reached"] else f"{r['tol']:g}",
                         "" if r["seconds"] is None else f"{r['seconds']:.6f}",
                         f"{(r['gap'] if r['reached'] else r['best_gap']):.3e}",
                         "" if r["test_acc"] is None else f"{r['test_acc']:.6f}",
                         "" if ratio is None else f"{ratio:.4f}"])
    return rows


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def parse_args(argv):
    """Command-line options."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"only {', '.join(QUICK_FILES)}, one repeat (about a minute)")
    ap.add_argument("--datasets", default=None,
                    help="comma-separated training files (default: all; e.g. a9a,w8a,ijcnn1)")
    ap.add_argument("--repeats", type=int, default=None, help="timed repeats (default 3; 1 with --quick)")
    ap.add_argument("--run-cap", type=float, default=None,
                    help="stop a ladder after a single run slower than this many seconds "
                         "(default 20; 5 with --quick)")
    ap.add_argument("--out", default=str(REPO / "examples" / "results"),
                    help="directory for benchmark.md and benchmark.tsv")
    args = ap.parse_args(argv)
    if args.repeats is None:
        args.repeats = 1 if args.quick else 3
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    if args.run_cap is None:
        args.run_cap = 5.0 if args.quick else 20.0
    if args.datasets:
        wanted = [s.strip() for s in args.datasets.split(",") if s.strip()]
        names = []
        for w in wanted:
            match = [f for f in TRAIN_FILES if f == w or f.removesuffix(".bz2") == w]
            names.append(match[0] if match else w)
        args.files = names
    else:
        args.files = list(QUICK_FILES if args.quick else TRAIN_FILES)
    return args


def main(argv=None):
    """Run the benchmark and write the tables; returns the process exit status."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    t_start = time.perf_counter()
    root = data_dir()
    names = [s.name for s in solvers()]
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    header = machine_header(args)

    results, cv, mem_rows, datasets = [], {}, [], []
    with tempfile.TemporaryDirectory() as tmp:
        for fname in args.files:
            ds = load_dataset(root, fname)
            if ds is None:
                continue
            datasets.append(fname)
            log(f"== {ds.name}: n={ds.n} d={ds.d} nnz={ds.nnz} test={ds.test_name}")
            t0 = time.perf_counter()
            best, acc = choose_cv_C(ds)
            cv[ds.name] = (best, acc)
            log(f"   CV C = {best:g} (5-fold accuracy {100 * acc[best]:.2f}%; "
                f"C=1: {100 * acc[1.0]:.2f}%) in {time.perf_counter() - t0:.1f}s")
            cache = {}
            for C, is_cv in ([(1.0, best == 1.0)] + ([(best, True)] if best != 1.0 else [])):
                fstar, source, runs = reference_optimum(ds, C, cache)
                log(f"   C={C:g}: f* = {fstar:.12g} from {source}; "
                    + ", ".join(f"{k}: F={v:.12g}" for k, v in runs.items()))
                res = {"ds": ds, "C": C, "cv": is_cv, "fstar": fstar, "fstar_source": source,
                       "fstar_runs": runs, "solvers": {}}
                res["solvers"] = bench_solvers(ds, C, fstar, cache, args.repeats, args.run_cap)
                for name, r in res["solvers"].items():
                    if r["reached"]:
                        log(f"   C={C:g} {name:17s} tol {r['tol']:<6g} {fmt_s(r['seconds']):>9s} "
                            f"gap {r['gap']:.1e} ({r['n_reached']}/{r['n_timed']} runs reached) {r['info']}")
                    else:
                        log(f"   C={C:g} {name:17s} not reached, best gap {r['best_gap']:.1e} {r['info']}")
                results.append(res)
            # (b) memory at C = 1, each solver at the tolerance that reached the gap
            c1 = next(r for r in results if r["ds"] is ds and r["C"] == 1.0)["solvers"]
            csr_mb = (ds.X.data.nbytes + ds.X.indices.nbytes + ds.X.indptr.nbytes) / 2**20
            mfn_tol = c1[names[0]]["tol"] or 1e-6
            ll_tol = c1[names[1]]["tol"] or 0.01
            for label, mode, tol in ((names[0], "mfn", mfn_tol),
                                     (names[0] + " after a warm-up call", "mfn-warm", mfn_tol),
                                     (names[1], "liblinear", ll_tol),
                                     (names[1] + " + problem()", "liblinear+problem", ll_tol)):
                mb, note = peak_memory(ds, 1.0, mode, tol, tmp)
                mem_rows.append({"dataset": ds.name, "n": ds.n, "nnz": ds.nnz, "csr_mb": csr_mb,
                                 "solver": label, "tol": tol, "mb": mb, "note": note})
                log(f"   memory {label}: {fmt_opt(mb, '.2f')} MB {note}")
            cache.clear()

    # (c) parser, on the train and test files of the data sets run (+ sector in full runs)
    parser_rows = []
    files = []
    for fname in datasets:
        files.append("binary/" + fname)
        files.append("binary/" + test_file_name(fname))
    if not args.quick and not args.datasets:
        files += list(EXTRA_PARSER_FILES)
    for rel in files:
        path = root / rel
        if not path.exists():
            continue
        r = bench_parser(path, args.repeats)
        r["label"] = rel
        parser_rows.append(r)
        log(f"   parser {rel}: linsvm {r['linsvm_s']:.4f}s sklearn {r['sklearn_s']:.4f}s "
            f"({r['speedup']:.2f}x)")

    total = time.perf_counter() - t_start
    md = ["# linsvm benchmark", ""] + [f"- {h}" for h in header] + [
        f"- Data: {root}; run: `{' '.join(['python examples/benchmark.py'] + list(sys.argv[1:] if argv is None else argv))}`"
        f"; total wall time {total:.0f} s.", ""]
    md += reference_table(results, cv) + [""]
    md += training_tables(results, names) + [""]
    md += memory_table(mem_rows) + [""]
    md += parser_table(parser_rows) + [""]
    text = "\n".join(md)
    print(text)
    (out_dir / "benchmark.md").write_text(text + "\n")
    with open(out_dir / "benchmark.tsv", "w") as fh:
        fh.write("\t".join(TSV_COLUMNS) + "\n")
        for row in tsv_rows(results, names):
            fh.write("\t".join(str(x) for x in row) + "\n")
    log(f"wrote {out_dir / 'benchmark.md'} and {out_dir / 'benchmark.tsv'} in {total:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
