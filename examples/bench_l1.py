"""The L1 benchmark (issue 26): linsvm's cdn and glmnet against LIBLINEAR -s 5 and -s 6 at
their defaults.

    python examples/bench_l1.py [--datasets a9a,w8a,synth-text-40k] [--objectives sq,lr]
        [--C 1,cv] [--repeats 3] [--liblinear-train PATH] [--e2e-min-nnz 400000]
        [--spread K] [--refs OLD/bench_l1.json] [--out DIR] [--quick]

The pairs (x with a bias feature of value 1 whose weight is L1-regularized, as LIBLINEAR's
-B 1 without -R):

    sq   linsvm -s cdn      LIBLINEAR -s 5   ||w||_1 + C sum max(0, 1 - t w.x)^2
    lr   linsvm -s glmnet   LIBLINEAR -s 6   ||w||_1 + C sum log(1 + exp(-t w.x))

Each library runs at its own defaults (-e 0.01 for both, which both read as
||S(w)||_1 <= eps min(n+, n-)/n ||S(w0)||_1, S the minimum-norm subgradient); the only
options are -s, -c and LIBLINEAR's -B 1, which gives it linsvm's default bias feature.

Data: every binary training file under $LINSVM_DATA/binary (default
<repo>/../shared/datasets), and generated text sets from linsvm.io.synth:
synth-text-40k (40k x 50k, the last quarter held out, as examples/harness.py makes it)
and synth-rare-600k (800k x 200k generated with 60 classes, the first 600k rows for
training, relabelled one class against the rest: 1.7% positives; synth has no knob for
the class balance).

C: C = 1 and the CV C of each objective: 5-fold stratified CV accuracy of linsvm at its
defaults over 2^-6..2^4, ties to the smaller C (not on synth-rare-600k, whose accuracy
would pick the constant classifier's C: C = 1 only there).

1. Gap: (f - f*)/|f*|, f computed here with numpy from the returned weights, f* the
   smallest objective among tight runs: linsvm (cdn -e 1e-5 with up to 3000 sweeps,
   glmnet -e 1e-7 with up to 100 Newton iterations of up to 200 inner sweeps),
   LIBLINEAR (-e 1e-6 for -s 5, whose sweep cap is 1000; -e 1e-7 for -s 6, capped at 100
   Newton iterations of 1000 inner sweeps), and, where there are at most 2000 weights,
   scipy's L-BFGS-B on the split problem w = u - v, u, v >= 0 (the squared hinge's
   coordinate descent crawls on collinear one-hot data: on a9a 1000 sweeps stop 2e-4
   above L-BFGS-B's optimum).  On sets of more than 5M non-zeros only cdn -e 1e-3, glmnet
   -e 1e-5 and LIBLINEAR at the same -e, so that the gaps there are lower bounds.  The
   reference table gives every tight run's distance to f* (--refs reuses an earlier
   run's f* and CV choices).  Cells are medians over the timed repeats (LIBLINEAR draws
   its permutations from an unseeded rand(), so its repeats differ; linsvm's are
   identical: see --spread).
2. Time in one process: linsvm.train() on a prebuilt CSRBuffers against
   liblinear.train() on a prebuilt problem (liblinear-official), after one untimed call
   of each; --repeats interleaved rounds in alternating order; the calling thread's CPU
   time (time.thread_time; both run on one thread) and wall time; ratio columns are
   linsvm / LIBLINEAR, the median over rounds of the ratio within a round.
3. End to end, on sets with at least --e2e-min-nnz non-zeros: `python -m linsvm train -q
   -s cdn|glmnet -c C DATA MODEL` against LIBLINEAR's `train -q -s 5|6 -c C -B 1 DATA
   MODEL` (--liblinear-train or $LIBLINEAR_TRAIN), same uncompressed file, interleaved
   rounds, wall time and the children's CPU time (getrusage), ratios as in 2.
4. nnz(w): the number of non-zero weights (bias included) of each library's model.
5. With --spread K: K more interleaved runs of each, linsvm with seeds 0..K-1, so that
   both sides' numbers cover K coordinate orders: quartiles of gap and CPU time.

Output: Markdown on stdout, progress on stderr; --out DIR also writes DIR/bench_l1.json.
"""
from __future__ import annotations

import argparse
import bz2
import json
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)

import linsvm  # noqa: E402

OBJECTIVES = {"sq": ("cdn", 5, "L1 squared hinge"), "lr": ("glmnet", 6, "L1 logistic")}
SYNTH = ("synth-text-40k", "synth-rare-600k")
QUICK_DATASETS = ("heart_scale", "a9a")
REF = {"sq": dict(tol=1e-5, max_iter=3000), "lr": dict(tol=1e-7, max_iter=100, inner_max_iter=200)}
REF_LIBLINEAR_EPS = {"sq": 1e-6, "lr": 1e-7}
# sets above BIG_NNZ non-zeros: looser tight runs (a sweep over 30M non-zeros takes a second)
BIG_NNZ = 5_000_000
REF_BIG = {"sq": dict(tol=1e-3, max_iter=1000), "lr": dict(tol=1e-5, max_iter=100, inner_max_iter=200)}
REF_LIBLINEAR_EPS_BIG = {"sq": 1e-3, "lr": 1e-5}
LBFGS_MAX_WEIGHTS = 2000


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

def binary_names(root):
    """Training files under root/binary (a file that is another's test file is not one)."""
    folder = root / "binary"
    if not folder.is_dir():
        return []
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    tests = {H.test_file_name(f) for f in files}
    return [f for f in files if f not in tests]


def rare_dataset():
    """synth-rare-600k: 800k x 200k generated text with 60 classes, the first 600k rows for
    training, class 1 of the generator against the rest (about 1.7% positives)."""
    from linsvm.io.synth import make_text_classification

    X, y = make_text_classification(n_samples=800000, n_features=200000, n_classes=60, seed=1)
    n_train = 600000
    y = np.where(y == y.min(), 1.0, -1.0)
    classes = H.binary_class_order(y[:n_train])
    t = np.where(y[:n_train] == classes[0], 1.0, -1.0)
    return H.Dataset(name="synth-rare-600k", X=X[:n_train], y=y[:n_train], t=t, classes=classes,
                     Xt=X[n_train:], yt=y[n_train:], test_name="held-out quarter")


def load(root, name):
    if name == "synth-rare-600k":
        return rare_dataset()
    if name in H.SYNTH_SETS:
        return H.synth_dataset(name)
    return H.load_dataset(root, name)


def text_file(root, name, ds, tmp):
    """An uncompressed SVM-light file of the training set without blank lines (LIBLINEAR's
    train reads neither compressed files nor blank lines), for the commands."""
    src = root / "binary" / name
    if not src.exists():
        path = tmp / f"{name}.svm"
        if not path.exists():
            from linsvm.io.svmlight import dump_svmlight
            dump_svmlight(ds.X, ds.y, path)
        return path
    opener = bz2.open if name.endswith(".bz2") else open
    with opener(src, "rb") as fh:
        blank = any(not line.strip() for line in fh)
    if opener is open and not blank:
        return src
    path = tmp / name.removesuffix(".bz2")
    if not path.exists():
        with opener(src, "rb") as fi, open(path, "wb") as fo:
            for line in fi:
                if line.strip():
                    fo.write(line)
    return path


# ---------------------------------------------------------------------------
# objectives, computed here from the weights (w, b) in the data set's sign convention
# ---------------------------------------------------------------------------

def objective(ds, v, C, obj):
    """||v||_1 + C sum loss(t (X w + b)), v = (w, b)."""
    z = ds.t * (ds.X @ v[:-1] + v[-1])
    if obj == "sq":
        r = np.maximum(0.0, 1.0 - z)
        loss = float(r @ r)
    else:
        loss = float(np.logaddexp(0.0, -z).sum())
    return float(np.abs(v).sum()) + C * loss


def linsvm_vector(ds, model):
    """linsvm's weights as (w, b) in the data set's class order, w padded to ds.d."""
    if not np.array_equal(np.asarray(model.classes_), np.asarray(ds.classes)):
        raise RuntimeError("linsvm's class order differs from the data set's")
    W = np.asarray(model.weights, dtype=np.float64)[:, 0]
    nf = model.n_features_
    return np.concatenate([W[:nf], np.zeros(ds.d - nf), W[nf:]])


def liblinear_vector(ds, model):
    w, b = H.liblinear_weights(ds, model)
    return np.append(w, b)


def lbfgs_reference(ds, C, obj):
    """argmin by L-BFGS-B on the split problem (u, v >= 0); returns (w, b)."""
    import scipy.optimize as opt
    from scipy.special import expit

    n, d = ds.X.shape
    V = sp.diags(ds.t) @ sp.hstack([ds.X, np.ones((n, 1))]).tocsr()
    VT = V.T.tocsr()
    D = d + 1

    def f(x):
        z = V @ (x[:D] - x[D:])
        if obj == "sq":
            r = np.maximum(0.0, 1.0 - z)
            val, gz = C * float(r @ r), -2.0 * C * r
        else:
            val, gz = C * float(np.logaddexp(0.0, -z).sum()), -C * expit(-z)
        g = VT @ gz
        return float(x.sum()) + val, np.concatenate([1.0 + g, 1.0 - g])

    res = opt.minimize(f, np.zeros(2 * D), jac=True, method="L-BFGS-B", bounds=[(0.0, None)] * (2 * D),
                       options=dict(maxiter=100000, maxfun=200000, ftol=1e-15, gtol=1e-12, maxcor=50))
    return res.x[:D] - res.x[D:]


# ---------------------------------------------------------------------------
# one row: a data set, a C, an objective
# ---------------------------------------------------------------------------

def reference(ds, C, obj, cache):
    """f* and the tight runs' objectives {run: f}."""
    solver, s, _ = OBJECTIVES[obj]
    big = ds.nnz > BIG_NNZ
    ref, eps = (REF_BIG[obj], REF_LIBLINEAR_EPS_BIG[obj]) if big else (REF[obj], REF_LIBLINEAR_EPS[obj])
    runs = {}
    csr = H.linsvm_problem(ds, cache)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = linsvm.train(csr, ds.y, solver=solver, C=C, **ref)
    runs[f"linsvm {solver} -e {ref['tol']:g}"] = objective(ds, linsvm_vector(ds, model), C, obj)
    if H.liblinear() is not None:
        _, m = H.liblinear_train(H.liblinear_problem(ds, cache), H.liblinear_options(s, C, eps))
        runs[f"LIBLINEAR -s {s} -e {eps:g}"] = objective(ds, liblinear_vector(ds, m), C, obj)
    if ds.d + 1 <= LBFGS_MAX_WEIGHTS:
        runs["L-BFGS-B (split)"] = objective(ds, lbfgs_reference(ds, C, obj), C, obj)
    fstar = min(runs.values())
    return fstar, runs


def measure(ds, C, obj, repeats, cache):
    """In-process timings and gaps of both libraries at their defaults."""
    solver, s, _ = OBJECTIVES[obj]
    csr = H.linsvm_problem(ds, cache)
    prob = H.liblinear_problem(ds, cache)
    options = H.liblinear_options(s, C)

    def run_linsvm():
        model, wall, cpu, _ = H.clocks(lambda: linsvm.train(csr, ds.y, solver=solver, C=C))
        return dict(wall=wall, cpu=cpu, v=linsvm_vector(ds, model),
                    n_iter=model.stats["n_iter"], cert_gap=model.stats["gap"])

    def run_liblinear():
        L = H.liblinear()
        param = L.parameter(options + " -q")
        model, wall, cpu, _ = H.clocks(lambda: L.train(prob, param))
        return dict(wall=wall, cpu=cpu, v=liblinear_vector(ds, model))

    run_linsvm()
    run_liblinear()
    res = H.interleaved({"linsvm": run_linsvm, "LIBLINEAR": run_liblinear}, repeats, alternate=True)
    out = {}
    for name, runs in res.items():
        out[name] = dict(
            cpu=[r["cpu"] for r in runs], wall=[r["wall"] for r in runs],
            f=[objective(ds, r["v"], C, obj) for r in runs],
            nnz=[int(np.count_nonzero(r["v"])) for r in runs],
            extra={k: [r[k] for r in runs] for k in ("n_iter", "cert_gap") if k in runs[0]})
    return out


def spread(ds, C, obj, k, cache):
    """k interleaved runs of each library, linsvm with seeds 0..k-1 (LIBLINEAR's unseeded
    rand() differs between runs by itself): objectives and CPU times, to show how far the
    coordinate order alone moves both."""
    solver, s, _ = OBJECTIVES[obj]
    csr = H.linsvm_problem(ds, cache)
    prob = H.liblinear_problem(ds, cache)
    L = H.liblinear()
    param = L.parameter(H.liblinear_options(s, C) + " -q")
    seeds = iter(range(k))

    def run_linsvm():
        seed = next(seeds)
        model, wall, cpu, _ = H.clocks(lambda: linsvm.train(csr, ds.y, solver=solver, C=C, seed=seed))
        return dict(cpu=cpu, f=objective(ds, linsvm_vector(ds, model), C, obj))

    def run_liblinear():
        model, wall, cpu, _ = H.clocks(lambda: L.train(prob, param))
        return dict(cpu=cpu, f=objective(ds, liblinear_vector(ds, model), C, obj))

    res = H.interleaved({"linsvm": run_linsvm, "LIBLINEAR": run_liblinear}, k, alternate=True)
    return {name: dict(cpu=[r["cpu"] for r in runs], f=[r["f"] for r in runs])
            for name, runs in res.items()}


def end_to_end(path, C, obj, repeats, program, tmp):
    """Wall and children's CPU seconds of both commands, interleaved rounds."""
    solver, s, _ = OBJECTIVES[obj]
    env = H.child_env()
    ours = [sys.executable, "-m", "linsvm", "train", "-q", "-s", solver, "-c", repr(C), str(path),
            str(tmp / "linsvm.model")]
    theirs = [program, "-q", "-s", str(s), "-c", repr(C), "-B", "1", str(path), str(tmp / "liblinear.model")]

    def command(cmd):
        def go():
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            w0 = time.perf_counter()
            proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                  text=True, cwd=tmp)
            wall = time.perf_counter() - w0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            if proc.returncode != 0:
                raise RuntimeError(f"{' '.join(cmd)} failed: {proc.stderr.strip()[-400:]}")
            return dict(wall=wall, cpu=(r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime))
        return go

    res = H.interleaved({"linsvm": command(ours), "LIBLINEAR": command(theirs)}, repeats, alternate=True)
    return {name: dict(wall=[r["wall"] for r in runs], cpu=[r["cpu"] for r in runs])
            for name, runs in res.items()}


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def fmt_gap(g):
    return "—" if g is None else f"{g:.2e}"


def fmt_ratio(r):
    return "—" if r is None else f"{r:.2f}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", help="comma-separated names (default: every shared binary set "
                    "and " + ", ".join(SYNTH) + ")")
    ap.add_argument("--objectives", default="sq,lr")
    ap.add_argument("--C", default="1,cv", help="comma-separated values of C and/or 'cv'")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--liblinear-train", default=None)
    ap.add_argument("--e2e-min-nnz", type=int, default=400000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--quick", action="store_true", help=f"only {', '.join(QUICK_DATASETS)}, C = 1")
    ap.add_argument("--refs", default=None, metavar="JSON",
                    help="take f* from this earlier run's bench_l1.json where it has the row "
                         "(the tight runs are the slow part)")
    ap.add_argument("--spread", type=int, default=0, metavar="K",
                    help="also K runs of each library, linsvm with seeds 0..K-1: the quartiles "
                         "of gap and CPU time (the table 'Over coordinate orders')")
    args = ap.parse_args(argv)

    root = H.data_root()
    if args.quick:
        names, Cs = list(QUICK_DATASETS), ["1"]
    else:
        names = args.datasets.split(",") if args.datasets else \
            [n for n in binary_names(root)] + list(SYNTH)
        Cs = args.C.split(",")
    objectives = args.objectives.split(",")
    program, note = H.liblinear_program(args.liblinear_train)
    if H.liblinear() is None:
        sys.exit("liblinear-official is not installed (pip install liblinear-official)")

    known = {}
    if args.refs:
        with open(args.refs) as fh:
            for r in json.load(fh)["rows"]:
                known[(r["set"], r["obj"], float(r["C"]))] = (r["fstar"], r["refs"])
                if r["how"] == "cv":
                    known[(r["set"], r["obj"], "cv")] = float(r["C"])
    header = H.machine_header()
    rows, refs, e2e_rows, spread_rows, record = [], [], [], [], []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = pathlib.Path(tmpdir)
        for name in names:
            H.log(f"== {name}")
            ds = load(root, name)
            if ds is None:
                continue
            cache = {}
            for obj in objectives:
                solver, s, label = OBJECTIVES[obj]
                values = []
                for c in Cs:
                    if c == "cv":
                        if name == "synth-rare-600k":
                            continue
                        best = known.get((ds.name, obj, "cv"))
                        if best is None:
                            best, acc = H.choose_cv_C(ds, solver=solver)
                        H.log(f"   {obj}: CV C = {best:g}")
                        values.append((best, "cv"))
                    else:
                        values.append((float(c), "fixed"))
                seen = set()
                for C, how in values:
                    if C in seen:
                        continue
                    seen.add(C)
                    if (ds.name, obj, C) in known:
                        fstar, runs = known[(ds.name, obj, C)]
                    else:
                        H.log(f"   {obj} C={C:g} ({how}): reference")
                        fstar, runs = reference(ds, C, obj, cache)
                    H.log(f"   {obj} C={C:g}: timing")
                    m = measure(ds, C, obj, args.repeats, cache)
                    g = {k: H.median([H.relative_gap(f, fstar) for f in m[k]["f"]]) for k in m}
                    cpu = {k: H.median(m[k]["cpu"]) for k in m}
                    row = dict(set=ds.name, n=ds.n, d=ds.d, nnz=ds.nnz, obj=obj, C=C, how=how, fstar=fstar,
                               refs=runs, timings=m, gap=g)
                    e2e = None
                    if program is not None and ds.nnz >= args.e2e_min_nnz:
                        H.log(f"   {obj} C={C:g}: end to end")
                        path = text_file(root, name, ds, tmp)
                        e2e = end_to_end(path, C, obj, args.repeats, program, tmp)
                        row["e2e"] = e2e
                    record.append(row)
                    C_text = f"{C:g}" + (" (cv)" if how == "cv" else "")
                    rows.append([ds.name, label, C_text, fmt_gap(g["linsvm"]), fmt_gap(g["LIBLINEAR"]),
                                 H.fmt_s(cpu["linsvm"]), H.fmt_s(cpu["LIBLINEAR"]),
                                 fmt_ratio(H.paired_ratio(m["linsvm"]["cpu"], m["LIBLINEAR"]["cpu"])),
                                 fmt_ratio(H.paired_ratio(m["linsvm"]["wall"], m["LIBLINEAR"]["wall"])),
                                 int(H.median(m["linsvm"]["nnz"])), int(H.median(m["LIBLINEAR"]["nnz"]))])
                    refs.append([ds.name, label, C_text, f"{fstar:.10g}"] +
                                ["; ".join(f"{k}: {H.relative_gap(v, fstar):.1e}" for k, v in runs.items())])
                    if args.spread:
                        H.log(f"   {obj} C={C:g}: {args.spread} coordinate orders")
                        sp_ = spread(ds, C, obj, args.spread, cache)
                        row["spread"] = sp_
                        q = {k: np.percentile([H.relative_gap(f, fstar) for f in sp_[k]["f"]],
                                              [25, 50, 75]) for k in sp_}
                        t = {k: np.percentile(sp_[k]["cpu"], [25, 50, 75]) for k in sp_}
                        spread_rows.append([ds.name, label, C_text] +
                                           [" / ".join(f"{x:.2e}" for x in q[k]) for k in ("linsvm", "LIBLINEAR")] +
                                           [" / ".join(H.fmt_s(x) for x in t[k]) for k in ("linsvm", "LIBLINEAR")])
                    if e2e is not None:
                        e2e_rows.append([ds.name, label, C_text,
                                         H.fmt_s(H.median(e2e["linsvm"]["wall"])),
                                         H.fmt_s(H.median(e2e["LIBLINEAR"]["wall"])),
                                         fmt_ratio(H.paired_ratio(e2e["linsvm"]["wall"], e2e["LIBLINEAR"]["wall"])),
                                         fmt_ratio(H.paired_ratio(e2e["linsvm"]["cpu"], e2e["LIBLINEAR"]["cpu"]))])
                    H.log(f"   {obj} C={C:g}: gap {g['linsvm']:.2e} vs {g['LIBLINEAR']:.2e}, CPU "
                          f"{cpu['linsvm']:.3f} vs {cpu['LIBLINEAR']:.3f}")

    lines = ["# L1-regularized solvers at their defaults: linsvm vs LIBLINEAR", ""] + \
        [f"{h}" for h in header] + \
        [f"Load average at the end: {H.load_average()}.", "",
         "## Gap and time in one process", ""]
    lines += H.markdown_table(["set", "objective", "C", "gap linsvm", "gap LIBLINEAR", "CPU s linsvm",
                               "CPU s LIBLINEAR", "CPU ratio", "wall ratio", "nnz(w) linsvm",
                               "nnz(w) LIBLINEAR"], rows)
    lines += ["", "## End to end (parse + train + save)", ""]
    if program is None:
        lines.append(f"Skipped: {note}.")
    else:
        lines += H.markdown_table(["set", "objective", "C", "wall s linsvm", "wall s LIBLINEAR",
                                   "wall ratio", "CPU ratio"], e2e_rows)
    if spread_rows:
        lines += ["", f"## Over coordinate orders ({args.spread} runs each; quartiles 25% / 50% / 75%)", ""]
        lines += H.markdown_table(["set", "objective", "C", "gap linsvm (seeds)", "gap LIBLINEAR",
                                   "CPU s linsvm", "CPU s LIBLINEAR"], spread_rows)
    lines += ["", "## Reference optima", ""]
    lines += H.markdown_table(["set", "objective", "C", "f*", "tight runs: (f - f*)/|f*|"], refs)
    print("\n".join(lines))
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        with open(out / "bench_l1.json", "w") as fh:
            json.dump(dict(header=header, rows=record), fh, indent=1, default=float)


if __name__ == "__main__":
    main()
