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
   (default options; its kernels run serially below 4M non-zeros, so every
   shared data set here is single-threaded like LIBLINEAR; above, on the free
   cores: linsvm.runtime.threads), LIBLINEAR -s 2 (trust
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
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)
from harness import log  # noqa: E402

REPO = H.REPO
TRAIN_FILES = ("a1a", "a2a", "a3a", "a4a", "a8a", "a9a", "w1a", "w7a", "w8a",
               "australian", "heart_scale", "ijcnn1.bz2", "synth-text-40k", "synth-text-160k")
QUICK_FILES = ("a9a", "w8a")
EXTRA_PARSER_FILES = ("multiclass/sector.scale.bz2",)
TARGET_GAP = 1e-4
REF_MFN_TOL = 1e-12
REF_MFN_MAX_ITER = 1000   # the reference solve must not stop at the default cap of 50 Newton steps
REF_LIBLINEAR_TOL = 1e-8


# ---------------------------------------------------------------------------
# solvers: each run returns (seconds, w, b, info)
# ---------------------------------------------------------------------------

def run_mfn(ds, C, tol, cache, **options):
    """linsvm.train(solver="mfn") with default options (or `options`); timed around train()."""
    import linsvm

    X = H.linsvm_problem(ds, cache)
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


def run_liblinear(ds, C, tol, cache, s):
    """LIBLINEAR -s s -c C -B 1 -e tol (tol None: LIBLINEAR's default); only train() is timed."""
    seconds, model = H.liblinear_train(H.liblinear_problem(ds, cache), H.liblinear_options(s, C, tol))
    w, b = H.liblinear_weights(ds, model)
    return seconds, w, b, {}


def run_sklearn(ds, C, tol, cache, dual):
    """scikit-learn LinearSVC(squared hinge, intercept_scaling=1); fit() is timed."""
    return H.run_linearsvc(ds, C, tol, dual)


def solvers():
    """The solvers in table order, each called as solver(ds, C, tol, cache); the first is
    linsvm, the second the reference peer."""
    return [
        H.Solver("linsvm mfn", H.LADDER, run_mfn),
        H.Solver("liblinear -s 2", H.LADDER, run_liblinear, {"s": 2}),
        H.Solver("liblinear -s 1", H.LADDER, run_liblinear, {"s": 1}, randomized=True),
        H.Solver("LinearSVC primal", H.LADDER, run_sklearn, {"dual": False}),
        H.Solver("LinearSVC dual", H.LADDER, run_sklearn, {"dual": True}),
        H.Solver("linsvm mfn 2 threads", H.LADDER, run_mfn, {"n_threads": 2}),
    ]


# ---------------------------------------------------------------------------
# reference optimum, time to gap
# ---------------------------------------------------------------------------

def reference_optimum(ds, C, cache):
    """f* = min F over mfn(tol=1e-12, max_iter=1000) and liblinear -s 2 (-e 1e-8).

    Returns (f*, name of the run that gave it, {run name: F}).
    """
    def value(run):
        _, w, b, _ = run()
        return H.binary_objective(ds, w, b, C)
    return H.reference_optimum({
        f"mfn tol={REF_MFN_TOL:g}":
            lambda: value(lambda: run_mfn(ds, C, REF_MFN_TOL, cache, max_iter=REF_MFN_MAX_ITER)),
        f"liblinear -s 2 -e {REF_LIBLINEAR_TOL:g}":
            lambda: value(lambda: run_liblinear(ds, C, REF_LIBLINEAR_TOL, cache, s=2)),
    })


def gap_of(ds, C, fstar):
    """The relative gap of a solution (w, b)."""
    return lambda wb: H.relative_gap(H.binary_objective(ds, wb[0], wb[1], C), fstar)


def walk_ladder(ds, C, fstar, solver, cache, run_cap, start=0):
    """harness.walk_ladder over solver.ladder[start:] to TARGET_GAP; returns a dict: reached,
    tol, seconds (of the deciding run), gap, best_gap, test_acc (of the reaching model),
    info (the reaching or last run's extras), ladder (list of (tol, seconds, gap) walked)."""
    def run(tol):
        seconds, w, b, info = solver(ds, C, tol, cache)
        return seconds, (w, b), info
    walk = H.walk_ladder(run, solver.ladder[start:], gap_of(ds, C, fstar), TARGET_GAP,
                         randomized=solver.randomized, run_cap=run_cap)
    if walk.reached:
        acc = H.binary_accuracy(ds.Xt, ds.yt, ds.classes, *walk.solution) if ds.Xt is not None else None
        return {"reached": True, "tol": walk.knob, "seconds": walk.seconds, "gap": walk.gap,
                "best_gap": walk.best_gap, "test_acc": acc, "info": walk.info, "ladder": walk.walked}
    info = walk.info
    if walk.walked:
        info = dict(info, last_tol=walk.walked[-1][0], last_seconds=round(walk.walked[-1][1], 4))
    return {"reached": False, "tol": None, "seconds": None, "gap": None,
            "best_gap": walk.best_gap, "test_acc": None, "info": info, "ladder": walk.walked}


def time_interleaved(ds, C, fstar, walks, cache, repeats):
    """Time every solver that reached the gap at its reaching tolerance, in interleaved
    rounds (harness.interleaved; a solver whose deciding run was short gets more rounds,
    harness.n_repeats).  Each result in `walks` (solver -> walk dict) gains seconds (median
    of the timed runs), n_timed, gap (worst timed gap) and n_reached (timed runs that
    reached the gap)."""
    gap = gap_of(ds, C, fstar)
    todo = {s: n_repeats for s, w in walks.items() if w["reached"]
            for n_repeats in [H.n_repeats(w["seconds"], repeats)]}
    runs = {s: (lambda s=s: s(ds, C, walks[s]["tol"], cache)) for s in todo}
    timed = H.interleaved(runs, repeats, counts=todo)
    for solver, walk in walks.items():
        if solver in todo:
            gaps = [gap((w, b)) for _, w, b, _ in timed[solver]]
            walk.update(seconds=H.median([r[0] for r in timed[solver]]), n_timed=len(gaps),
                        gap=max(gaps), n_reached=sum(g <= TARGET_GAP for g in gaps))
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
mode, npz, C, tol = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
import numpy as np, scipy.sparse as sp
import linsvm
from liblinear import liblinearutil as L

z = np.load(npz)
X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
y = z["y"]
del z
param = L.parameter(f"-s 2 -c {C!r} -B 1 -e {tol!r} -q")
if mode == "liblinear":
    prob = L.problem(y, X)
if mode == "mfn-warm":      # pay linsvm's one-time first-call costs outside the measurement
    linsvm.train(sp.csr_matrix(np.eye(2)), np.array([1.0, -1.0]), solver="mfn", C=C, tol=tol)
reset = reset_peak()
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
    r, error = H.run_child(MEMORY_CHILD, [mode, npz, repr(C), repr(tol)])
    if r is None:
        return None, "child failed: " + error
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


def bench_parser(path, repeats):
    """Time linsvm.load_svmlight vs sklearn load_svmlight_file on one file."""
    import linsvm
    from sklearn.datasets import load_svmlight_file

    X1, _ = linsvm.load_svmlight(path)                       # warm-up + check
    X2, _ = load_svmlight_file(str(path), zero_based=False)
    agree = X1.shape[0] == X2.shape[0] and X1.nnz == X2.nnz
    times = H.interleaved({"linsvm": H.timed(lambda: linsvm.load_svmlight(path)),
                           "sklearn": H.timed(lambda: load_svmlight_file(str(path), zero_based=False))},
                          repeats)
    t_lin, t_sk = (H.median([s for s, _ in times[k]]) for k in ("linsvm", "sklearn"))
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
    return H.machine_header() + [
        f"Protocol: objective 1/2||w||^2 + C sum max(0, 1 - t w.x)^2 with a regularized bias "
        f"feature of value 1, computed here from each solver's weights; f* = min over mfn "
        f"tol={REF_MFN_TOL:g} and liblinear -s 2 -e {REF_LIBLINEAR_TOL:g}; time = median of "
        f"{args.repeats} repeat(s) (more for runs < {H.SHORT_RUN * 1000:.0f} ms) of the first "
        f"tolerance on each solver's ladder whose model reaches (F - f*)/|f*| <= {TARGET_GAP:g}; "
        f"training only, data in memory, single-threaded solvers. CV C: 5-fold stratified CV "
        f"accuracy of mfn over C = 2^-6..2^4 (seed {H.CV_SEED}, ties -> smaller C). "
        f"See the docstring of examples/benchmark.py.",
    ]


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
    cell = f"{H.fmt_s(r['seconds'])} ({r['tol']:g})"
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
            cells = [ds.name, fmt_c(C), fstar, nm, fmt_opt(r["tol"], "g"), H.fmt_s(r["seconds"]),
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
        other_txt = ", ".join(f"{k}: {H.relative_gap(v, res['fstar']):.1e}" for k, v in other)
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
    root = H.data_root()
    names = [s.name for s in solvers()]
    out_dir = pathlib.Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    header = machine_header(args)

    results, cv, mem_rows, datasets = [], {}, [], []
    with tempfile.TemporaryDirectory() as tmp:
        for fname in args.files:
            ds = H.load_dataset(root, fname)
            if ds is None:
                continue
            datasets.append(fname)
            log(f"== {ds.name}: n={ds.n} d={ds.d} nnz={ds.nnz} test={ds.test_name}")
            t0 = time.perf_counter()
            best, acc = H.choose_cv_C(ds)
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
                        log(f"   C={C:g} {name:17s} tol {r['tol']:<6g} {H.fmt_s(r['seconds']):>9s} "
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
        files.append("binary/" + H.test_file_name(fname))
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
