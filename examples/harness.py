"""The mechanics every benchmark and reproduction script in examples/ shares.

A script in examples/ says which data, which solvers and which table; this module
holds, once, how such an experiment is run and measured.

Protocol (../shared/DESIGN.md, "Performance: how it is measured")
-----------------------------------------------------------------
1. Same data, same objective.  Every solver trains on the same matrix (a test set is
   padded or cut to the training width, `with_width`), and every objective is
   computed here, with numpy, from the weights a solver returns: no solver's own
   report of its objective is used as a gap (`binary_objective`,
   `multiclass_objective`).  A bias feature of value 1 whose weight is regularized
   like the others is LIBLINEAR's -B 1 and linsvm's default.
2. Reference optimum.  f* is the smallest objective among tight runs of more than
   one solver (`reference_optimum`); the script says which runs and prints the
   others' distance to f* (and, where a solver certifies a dual bound, how tightly
   that pins f*).
3. Time to a relative gap.  Quality is the relative gap (f - f*)/|f*|
   (`relative_gap`).  Each solver walks a ladder of its own stopping knob from
   loose to tight, one run per rung, and the first rung whose model reaches the
   target gap is the one timed (`walk_ladder`).  A randomized solver (LIBLINEAR's
   dual solvers permute with an unseeded rand()) gets RANDOM_TRIES runs per rung
   and reaches when their median gap does.  A rung slower than a cap ends the walk.
4. Interleaved repeats.  The chosen runs are timed in rounds that go over every
   solver in turn (`interleaved`), so that a burst of load from other processes
   hits all of them rather than one; runs shorter than SHORT_RUN get more rounds
   (`n_repeats`, up to MAX_REPEATS, until about MIN_TOTAL seconds of work).  A
   cell is the median of its runs.
5. Ratios, not seconds.  The machine is shared: compare solvers by the ratio of
   their medians, or by the median of the per-round ratios (`paired_ratio`), which
   cancels a slow round.  Timed is training only where a library lets the input
   preparation be split off: linsvm's validated CSRBuffers (`linsvm_problem`) and
   LIBLINEAR's `problem` (`liblinear_problem`) are built once, outside the timer.

Also here: where the data live (LINSVM_DATA), how LIBLINEAR is found (the
liblinear-official Python package; its `train` program from --liblinear-train or
$LIBLINEAR_TRAIN), the scikit-learn LinearSVC runner, cross-validated choice of C,
peak-memory measurement in fresh processes, and the report's header.

Importing this module puts this checkout first on sys.path when it has an in-place
build (python3 setup.py build_ext --inplace), so the scripts measure the tree they
sit in; otherwise the installed linsvm is used (a checkout without compiled modules
cannot be imported).
"""
from __future__ import annotations

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
import time
import warnings

import numpy as np
import scipy.sparse as sp

REPO = pathlib.Path(__file__).resolve().parents[1]
if any((REPO / "linsvm" / ("_mfn" + sfx)).exists() for sfx in importlib.machinery.EXTENSION_SUFFIXES):
    sys.path.insert(0, str(REPO))

# The one ladder of stopping tolerances the equal-quality benchmarks give every solver
# (each walks it in its own -e / tol units), so that no solver gets a finer search.
LADDER = (1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-8)
RANDOM_TRIES = 3          # runs per rung for a randomized solver
SHORT_RUN = 0.25          # seconds: runs faster than this get extra rounds
MAX_REPEATS = 15
MIN_TOTAL = 1.0           # seconds of timed work to aim for on short runs


def log(msg):
    """Progress line to stderr (stdout is kept for the result tables)."""
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

def data_root():
    """The data root: $LINSVM_DATA, else <repo>/../shared/datasets (binary/, multiclass/,
    ordinal/ below it)."""
    return pathlib.Path(os.environ.get("LINSVM_DATA", REPO.parent / "shared" / "datasets"))


def data_path(rel):
    """The file `rel` under the data root, or None when it is absent."""
    path = data_root() / rel
    return path if path.is_file() else None


def present(names, folder="binary"):
    """The names whose file exists under data_root()/folder, a note on stderr for each other."""
    kept = []
    for name in names:
        if data_path(f"{folder}/{name}") is None:
            log(f"skip {name}: {data_root() / folder / name} not found")
        else:
            kept.append(name)
    return kept


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


def load_pair(train, test=None):
    """(X, y, Xt, yt) of a training file and its test file (None, None when `test` is None
    or absent), both as wide as the wider of the two."""
    import linsvm

    X, y = linsvm.load_svmlight(train)
    if test is None or not pathlib.Path(test).is_file():
        return X, y, None, None
    Xt, yt = linsvm.load_svmlight(test)
    d = max(X.shape[1], Xt.shape[1])
    return with_width(X, d), y, with_width(Xt, d), yt


def augmented(X, bias=1.0):
    """X with the bias feature appended as its last column."""
    return sp.hstack([X, np.full((X.shape[0], 1), bias)]).tocsr()


@dataclasses.dataclass
class Dataset:
    """A binary training set (with its test set, if any) as every solver sees it.

    `t` is +1 for the positive class classes[0] (linsvm's order) and -1 else; every
    weight vector (w, b) in the scripts uses that sign convention.
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


def binary_class_order(y):
    """Classes in linsvm's order, read off a tiny linsvm model (positive first)."""
    import linsvm

    labels = np.unique(y)
    if labels.shape[0] != 2:
        return labels
    # Two rows, one per label, in order of first appearance: the order
    # linsvm.train gives them is the order it uses on the full data.
    first = np.sort([int(np.flatnonzero(y == c)[0]) for c in labels])
    model = linsvm.train(sp.csr_matrix(np.ones((2, 1))), y[first], C=1.0)
    return np.asarray(model.classes_, dtype=np.float64)


# Large sparse text-like sets made by linsvm's own generator (no such set is in the shared
# data): name -> (examples, vocabulary); a quarter is held out for test.
SYNTH_SETS = {"synth-text-40k": (40000, 50000), "synth-text-160k": (160000, 200000),
              # issue 15's size (>= 400k x 200k, 20M non-zeros in training)
              "synth-text-533k": (533334, 200000), "synth-text-800k": (800000, 400000)}


def synth_dataset(name):
    """A SYNTH_SETS data set from linsvm.io.synth (seed 1), the last quarter held out."""
    from linsvm.io.synth import make_text_classification

    n, d = SYNTH_SETS[name]
    X, y = make_text_classification(n_samples=n, n_features=d, seed=1)
    n_train = n - n // 4
    classes = binary_class_order(y[:n_train])
    t = np.where(y[:n_train] == classes[0], 1.0, -1.0)
    return Dataset(name=name, X=X[:n_train], y=y[:n_train], t=t, classes=classes,
                   Xt=X[n_train:], yt=y[n_train:], test_name="held-out quarter")


def load_dataset(root, name):
    """binary/<name> and its test file (if present) with a common width, or a SYNTH_SETS set.

    Returns a Dataset, or None (with a note) when the training file is missing or is
    not a two-class problem.
    """
    if name in SYNTH_SETS:
        return synth_dataset(name)
    path = root / "binary" / name
    if not path.exists():
        log(f"skip {name}: {path} not found")
        return None
    tname = test_file_name(name)
    X, y, Xt, yt = load_pair(path, root / "binary" / tname)
    if Xt is None:
        log(f"note {name}: no test file {tname}")
        tname = None
    classes = binary_class_order(y)
    if classes.shape[0] != 2:
        log(f"skip {name}: {classes.shape[0]} classes, not a binary problem")
        return None
    t = np.where(y == classes[0], 1.0, -1.0)
    return Dataset(name=name.removesuffix(".bz2"), X=X, y=y, t=t, classes=classes,
                   Xt=Xt, yt=yt, test_name=tname)


@dataclasses.dataclass
class MultiDataset:
    """A multi-class training set (and test set) with linsvm's class order and the rows'
    class codes; Xa is X with the bias column."""

    name: str
    X: sp.csr_matrix
    y: np.ndarray
    Xt: sp.csr_matrix | None
    yt: np.ndarray | None
    classes: np.ndarray
    codes: np.ndarray
    Xa: sp.csr_matrix

    @property
    def d(self):
        return self.X.shape[1]


def multiclass_sets(root):
    """(name, training path, test path or None) of every training file under root/multiclass
    (its test file is NAME.t.REST or NAME.t)."""
    found = []
    for path in sorted((root / "multiclass").glob("*")):
        name = path.name
        if ".t." in name or name.endswith(".t") or not path.is_file():
            continue
        for test in (path.with_name(name.replace(".", ".t.", 1)), path.with_name(name + ".t")):
            if test.is_file():
                break
        else:
            test = None
        found.append((name.split(".")[0], path, test))
    return found


def load_multiclass(name, path, test):
    """A MultiDataset; the test matrix is cut or padded to the training width."""
    import linsvm
    from linsvm.problem.labels import class_order

    X, y = linsvm.load_svmlight(str(path))
    X = sp.csr_matrix(X)
    Xt = yt = None
    if test is not None:
        Xt, yt = linsvm.load_svmlight(str(test))
        Xt = sp.csr_matrix(Xt)
        if Xt.shape[1] > X.shape[1]:
            Xt = Xt[:, : X.shape[1]]
        else:
            Xt = with_width(Xt, X.shape[1])
    classes = class_order(y)
    index = {float(c): j for j, c in enumerate(classes)}
    codes = np.array([index[float(v)] for v in y])
    return MultiDataset(name, X, y, Xt, yt, classes, codes, augmented(X))


# ---------------------------------------------------------------------------
# objectives, gaps, accuracies: computed here from the weights
# ---------------------------------------------------------------------------

def relative_gap(f, fstar):
    """(f - f*) / |f*|."""
    return (f - fstar) / abs(fstar)


def binary_objective(ds, w, b, C, loss="l2"):
    """1/2(||w||^2 + b^2) + C sum max(0, 1 - t (Xw + b))^2 on the training set of a Dataset
    (loss="l1": the hinge itself, not squared: LIBLINEAR -s 3's objective)."""
    slack = np.maximum(0.0, 1.0 - ds.t * (ds.X @ w + b))
    penalty = float(slack @ slack) if loss == "l2" else float(slack.sum())
    return 0.5 * (float(w @ w) + b * b) + C * penalty


def binary_accuracy(X, y, classes, w, b):
    """Fraction of rows of X whose label is classes[0] iff w.x + b > 0."""
    pred = np.where(X @ w + b > 0, classes[0], classes[1])
    return float(np.mean(pred == y))


def multiclass_objective(kind, ds, W, C):
    """The primal objective of a (d + 1) x classes weight matrix on a MultiDataset, x with
    the bias feature, e_i^m = [m != y_i]:

      CS      1/2 sum_m ||w_m||^2 + C sum_i max_m (e_i^m + w_m.x_i - w_{y_i}.x_i)
      WW      1/2 sum_m ||w_m||^2 + C sum_i sum_{m != y_i} max(0, 1 - (w_{y_i} - w_m).x_i)
      OVR-l1  sum_m [1/2 ||w_m||^2 + C sum_i max(0, 1 - t_im w_m.x_i)]
      OVR-l2  the same with the hinge squared
      softmax 1/2 sum_m ||w_m||^2 + C sum_i [log sum_m exp(w_m.x_i) - w_{y_i}.x_i]
    """
    S = np.asarray(ds.Xa @ W)
    n = ds.codes.size
    reg = 0.5 * float(np.sum(W * W))
    if kind == "softmax":
        from scipy.special import logsumexp
        return reg + C * float(np.sum(logsumexp(S, axis=1) - S[np.arange(n), ds.codes]))
    if kind == "CS":
        E = 1.0 - np.eye(W.shape[1])[ds.codes]
        return reg + C * float(np.max(E + S - S[np.arange(n), ds.codes][:, None], axis=1).sum())
    if kind == "WW":
        v = np.maximum(0.0, 1.0 - S[np.arange(n), ds.codes][:, None] + S)
        v[np.arange(n), ds.codes] = 0.0
        return reg + C * float(v.sum())
    T = np.where(np.eye(W.shape[1])[ds.codes] > 0, 1.0, -1.0)
    slack = np.maximum(0.0, 1.0 - T * S)
    return reg + C * float(np.sum(slack if kind == "OVR-l1" else slack * slack))


def multiclass_accuracy(ds, W):
    """Test accuracy of argmax scores on a MultiDataset (None without a test set)."""
    if ds.Xt is None:
        return None
    S = ds.Xt @ W[:-1] + W[-1]
    return float(np.mean(ds.classes[np.argmax(S, axis=1)] == ds.yt))


def reference_optimum(runs):
    """f* from tight runs: `runs` maps a run's name to a function returning its objective.

    Returns (f*, name of the run that gave it, {run name: objective})."""
    values = {name: run() for name, run in runs.items()}
    source = min(values, key=values.get)
    return values[source], source, values


# ---------------------------------------------------------------------------
# the libraries: linsvm, LIBLINEAR, scikit-learn
# ---------------------------------------------------------------------------

def linsvm_problem(ds, cache):
    """linsvm's validated view of the training data, built once per data set (untimed), as
    LIBLINEAR's `problem` is."""
    from linsvm.problem import CSRBuffers

    if "csr" not in cache:
        cache["csr"] = CSRBuffers(ds.X)
    return cache["csr"]


def linsvm_home():
    """The directory the imported linsvm package lies in (what a child process must import)."""
    import linsvm

    return pathlib.Path(linsvm.__file__).resolve().parents[1]


def child_env(**extra):
    """The environment of a child process that imports the same linsvm as this one."""
    env = dict(os.environ, **extra)
    top = str(linsvm_home())
    env["PYTHONPATH"] = top + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def liblinear():
    """liblinear-official's liblinearutil, or None when the package is not installed."""
    try:
        from liblinear import liblinearutil
    except ImportError:
        return None
    return liblinearutil


def liblinear_problem(ds, cache):
    """LIBLINEAR's own copy of the training data, built once per data set (untimed)."""
    if "problem" not in cache:
        cache["problem"] = liblinear().problem(ds.y, ds.X)
    return cache["problem"]


def liblinear_train(prob, options):
    """(seconds, model) of LIBLINEAR's train on a prebuilt `problem` with the command-line
    `options` (e.g. "-s 2 -c 1 -B 1 -e 0.01"; -q is added); only train() is timed."""
    L = liblinear()
    param = L.parameter(options + " -q")
    start = time.perf_counter()
    model = L.train(prob, param)
    return time.perf_counter() - start, model


def liblinear_options(s, C, eps=None, bias=1):
    """The option string of LIBLINEAR -s s -c C -B bias [-e eps] (eps None: its default)."""
    return f"-s {s} -c {C!r} -B {bias}" + ("" if eps is None else f" -e {eps!r}")


def liblinear_vector(model, d=None, positive=None):
    """A binary LIBLINEAR model's weights as one vector: w, padded with zeros or cut to d
    features (LIBLINEAR's width is the largest index it saw; d None: as it is), then the
    bias weight b when the model has a bias feature; the sign such that a positive score
    means the label `positive` (None: LIBLINEAR's first label)."""
    w, b = model.get_decfun()
    w = np.asarray(w, dtype=np.float64)
    if d is not None:
        w = np.concatenate([w, np.zeros(max(0, d - w.shape[0]))])[:d]
    if model.bias >= 0:
        w = np.append(w, b)
    return w if positive is None or model.get_labels()[0] == positive else -w


def liblinear_weights(ds, model):
    """(w, b) of a binary LIBLINEAR model (trained with a bias) in the Dataset's sign
    convention (t = +1 for ds.classes[0]), w padded or cut to ds.d columns."""
    v = liblinear_vector(model, ds.d, ds.classes[0])
    return v[:-1], float(v[-1])


def liblinear_W(model, d, classes):
    """A multi-class LIBLINEAR model's weights (trained with a bias) as (d + 1) x classes,
    columns in the order of `classes`, the bias row last."""
    nf = model.nr_feature
    raw = np.ctypeslib.as_array(model.w, shape=(nf + 1, model.nr_class))
    labels = model.get_labels()
    raw = np.asarray(raw)[:, [labels.index(c) for c in classes]]
    W = np.zeros((d + 1, len(classes)))
    W[: min(nf, d)] = raw[: min(nf, d)]
    W[-1] = raw[nf]
    return W


def liblinear_program(given=None):
    """LIBLINEAR's `train` program, built from its source outside this repository: `given`
    (a command-line option), else $LIBLINEAR_TRAIN.  Returns (path or None, note or None);
    the note says why there is none."""
    path = given if given is not None else os.environ.get("LIBLINEAR_TRAIN")
    if path and not (os.path.isfile(path) and os.access(path, os.X_OK)):
        return None, f"{path} is not an executable file"
    if not path:
        return None, "no LIBLINEAR `train` given (--liblinear-train or $LIBLINEAR_TRAIN)"
    return path, None


SKLEARN_MAX_ITER = 1000


def run_linearsvc(ds, C, tol, dual):
    """scikit-learn LinearSVC(squared hinge, intercept_scaling=1) on a Dataset; fit() is
    timed.  Returns (seconds, w, b, info) in the Dataset's sign convention."""
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


# ---------------------------------------------------------------------------
# C by cross-validation
# ---------------------------------------------------------------------------

C_GRID = tuple(2.0 ** k for k in range(-6, 5))
CV_FOLDS = 5
CV_SEED = 0


def stratified_folds(y, k, seed):
    """Fold number of every row: each class permuted (seeded) and dealt round-robin."""
    rng = np.random.default_rng(seed)
    fold = np.empty(y.shape[0], dtype=np.int64)
    for c in np.unique(y):
        rows = np.flatnonzero(y == c)
        rows = rows[rng.permutation(rows.shape[0])]
        fold[rows] = np.arange(rows.shape[0]) % k
    return fold


def choose_cv_C(ds, solver="mfn", grid=C_GRID, **options):
    """CV_FOLDS-fold CV accuracy of linsvm `solver` (with `options`, default tolerance, a
    cold start per C) over `grid`; returns (best C, {C: accuracy}), ties to the smaller C."""
    import linsvm

    fold = stratified_folds(ds.y, CV_FOLDS, CV_SEED)
    correct = {C: 0 for C in grid}
    for f in range(CV_FOLDS):
        tr = np.flatnonzero(fold != f)
        te = np.flatnonzero(fold == f)
        Xtr, ytr, Xte, yte = ds.X[tr], ds.y[tr], ds.X[te], ds.y[te]
        for C in grid:
            model = linsvm.train(Xtr, ytr, solver=solver, C=C, **options)
            correct[C] += int(np.sum(model.predict(Xte) == yte))
    acc = {C: correct[C] / ds.y.shape[0] for C in grid}
    best = max(acc.values())
    return min(C for C in grid if acc[C] == best), acc


# ---------------------------------------------------------------------------
# time to a gap: the ladder walk
# ---------------------------------------------------------------------------

@dataclasses.dataclass(frozen=True, eq=False)   # hashed by identity
class Solver:
    """A benchmarked solver: its display name, its ladder of stopping knobs, its run function
    (called with the script's arguments and then `options` as keywords) and whether it is
    randomized (walk_ladder's `randomized`)."""

    name: str
    ladder: tuple
    run: object
    options: dict = dataclasses.field(default_factory=dict)
    randomized: bool = False

    def __call__(self, *args):
        return self.run(*args, **self.options)


@dataclasses.dataclass
class Walk:
    """The result of walk_ladder: the rung that reached (None: none did), its run, and the
    rungs walked as (knob, seconds, gap)."""

    knob: object
    gap: float | None
    seconds: float | None
    solution: object
    info: dict
    best_gap: float
    walked: list

    @property
    def reached(self):
        return self.knob is not None


def walk_ladder(run, ladder, gap, target, randomized=False, run_cap=math.inf, on_rung=None):
    """Walk `ladder` from loose to tight until a run's gap is <= target (protocol, item 3).

    run(knob) -> (seconds, solution, info); gap(solution) -> its relative gap (or any
    score compared with `target`).  A randomized solver is run RANDOM_TRIES times per
    rung and reaches when the median gap does (that run's seconds and solution are the
    rung's).  A rung that does not reach and whose run took longer than run_cap seconds
    ends the walk.  on_rung(knob, seconds, gap), if given, is called after each rung.
    """
    walked, best, info = [], math.inf, {}
    for knob in ladder:
        tries = []
        for _ in range(RANDOM_TRIES if randomized else 1):
            seconds, solution, info = run(knob)
            tries.append((gap(solution), seconds, solution))
        tries.sort(key=lambda x: x[0])
        g, seconds, solution = tries[len(tries) // 2]
        walked.append((knob, seconds, g))
        best = min(best, tries[0][0])
        if on_rung is not None:
            on_rung(knob, seconds, g)
        if g <= target:
            return Walk(knob, g, seconds, solution, info, best, walked)
        if seconds > run_cap:
            break
    return Walk(None, None, None, None, info, best, walked)


# ---------------------------------------------------------------------------
# interleaved repeats
# ---------------------------------------------------------------------------

def n_repeats(first_seconds, repeats):
    """How many timings to take of a run whose first took first_seconds: `repeats`, more
    for short runs (SHORT_RUN, MIN_TOTAL, MAX_REPEATS)."""
    if repeats <= 1 or first_seconds >= SHORT_RUN:
        return repeats
    want = math.ceil(MIN_TOTAL / max(first_seconds, 1e-6))
    return int(min(MAX_REPEATS, max(repeats, want)))


def rounds_order(runs, k):
    """Round k's order: the runs forward on even rounds, backward on odd ones."""
    return list(runs) if k % 2 == 0 else list(reversed(runs))


def interleaved(runs, repeats, counts=None, alternate=False, after_round=None):
    """Call every run in `runs` (name -> zero-argument function) once per round, in turn.

    `repeats` rounds; counts[name], if given, how many rounds that run takes part in (the
    rounds are then max(counts)); alternate: every other round goes backward
    (rounds_order).  Returns {name: [each call's result, ...]}.  after_round(k, results),
    if given, is called after round k.
    """
    counts = counts if counts is not None else {name: repeats for name in runs}
    results = {name: [] for name in runs}
    for k in range(max(counts.values(), default=0)):
        for name in (rounds_order(list(runs), k) if alternate else runs):
            if k < counts[name]:
                results[name].append(runs[name]())
        if after_round is not None:
            after_round(k, results)
    return results


def timed(fn):
    """A function that calls fn() and returns (wall seconds, its result)."""
    def go():
        start = time.perf_counter()
        out = fn()
        return time.perf_counter() - start, out
    return go


def clocks(fn):
    """fn()'s result, wall seconds, and this thread's and this process's CPU seconds."""
    w0, t0, p0 = time.perf_counter(), time.thread_time(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w0, time.thread_time() - t0, time.process_time() - p0


def median(xs):
    """The median of the values that are not None (None when there are none)."""
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def paired_ratio(a, b):
    """Median over rounds of a[k] / b[k] (protocol, item 5)."""
    return median([x / y for x, y in zip(a, b) if y > 0])


def geometric_mean(xs):
    """exp(mean(log xs))."""
    return float(np.exp(np.mean(np.log(xs))))


# ---------------------------------------------------------------------------
# fresh processes: peak memory, commands
# ---------------------------------------------------------------------------

# Prepended to the code a child process runs: the peak resident set of the process's own
# memory.  VmHWM, not getrusage's ru_maxrss: on Linux ru_maxrss after exec() still holds
# the high-water mark of the forked parent's image.  reset_peak() resets it (clear_refs,
# Linux >= 4.0) and says whether it could.
CHILD_PRELUDE = r'''
def status_kb(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
        return True
    except OSError:
        return False
'''


def run_child(code, args, cwd=None, env=None):
    """Run CHILD_PRELUDE + code in a fresh interpreter that imports the same linsvm as this
    one; returns (the JSON value of its last line of output, None), or (None, the last line
    of its error output) when it failed."""
    out = subprocess.run([sys.executable, "-c", CHILD_PRELUDE + code] + [str(a) for a in args],
                         capture_output=True, text=True, cwd=cwd, env=env or child_env())
    if out.returncode != 0:
        return None, (out.stderr.strip().splitlines() or ["?"])[-1]
    return json.loads(out.stdout.strip().splitlines()[-1]), None


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

def version(dist):
    """The installed version of a distribution, or "not installed"."""
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def load_average():
    """The three load averages as text ("?" where unknown)."""
    try:
        return "%.2f %.2f %.2f" % os.getloadavg()
    except OSError:
        return "?"


def machine_header():
    """Two lines: the machine (CPUs, load average) and the versions of linsvm and its peers."""
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
    import linsvm
    try:
        commit = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip() or "?"
    except OSError:
        commit = "?"
    return [
        f"Machine: nproc {usable} (os.cpu_count {os.cpu_count()}), CPU {cpu}, load average "
        f"at start {load_average()}; {platform.system()} {platform.release()}.",
        f"Versions: Python {platform.python_version()}, linsvm {linsvm.__version__} imported from "
        f"{pathlib.Path(linsvm.__file__).resolve().parent} (repository HEAD {commit}, working tree "
        f"may differ), numpy {np.__version__}, scipy {version('scipy')}, "
        f"scikit-learn {version('scikit-learn')}, liblinear-official {version('liblinear-official')}.",
    ]


def fmt_s(x):
    """Seconds, with enough digits for small values (a dash for None)."""
    if x is None:
        return "—"
    return f"{x:.3f}" if x >= 0.01 else f"{x * 1000:.2f} ms"


def markdown_table(columns, rows):
    """Lines of a Markdown table: the header, the rule, one line per row of cells."""
    return (["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
            + ["| " + " | ".join(str(c) for c in row) + " |" for row in rows])
