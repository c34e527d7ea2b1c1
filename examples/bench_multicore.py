"""linsvm against multi-core LIBLINEAR at N = 1 and 2 threads, at both programs' defaults
(issue 28).

    python examples/bench_multicore.py --llmc-dir DIR --llmc-python PY
        [--datasets a9a,w8a,ijcnn1.bz2,synth-text-800k,synth-imb-680k,debian-deps-size,
                    text-regression-500k] [--codes 0,2,1,3,5,6,11]
        [--threads 1,2] [--repeats 3] [--C 1] [--no-e2e] [--out DIR]

Pairs: LIBLINEAR's `-s CODE` on both sides (linsvm reads the codes as LIBLINEAR does:
0 lr, 1 dcd with the squared hinge, 2 mfn, 3 dcd with the hinge, 5 cdn, 6 glmnet, 11 svr),
each at its defaults with `-c C`, LIBLINEAR with `-B 1` (linsvm's default bias feature, so
that both solve one problem) and for -s 11 `-R` on both sides (linsvm's svr by name leaves
the bias weight out of the regularizer, -s 11 regularizes it as LIBLINEAR; both tubes are
p = 0.1).  linsvm's dcd runs on one
thread (docs/threads.md): its N = 2 rows run it as at N = 1, beside LIBLINEAR's `-m 2`.
The classification codes run on the binary sets, -s 11 on the regression sets
(debian-deps-size, and text-regression-500k: linsvm.io.synth's make_text_regression, 500,000
rows x 20,000 features, 30 words a document, as examples/bench_regression.py's).

1. In process: linsvm.train(X, y, solver=CODE's, n_threads=N) on prebuilt CSR buffers in
   this process, against liblinear.train() of the liblinear-multicore package (its own
   venv, --llmc-python: it shadows liblinear-official) with "-m N" on a problem built
   untimed in a child process; --repeats rounds, the two libraries alternating; wall
   time and process CPU time (all threads).
2. End to end (unless --no-e2e): `python -m linsvm train -q -s CODE [-m N] -c C DATA
   MODEL` against `DIR/train -q -s CODE -m N -c C -B 1 DATA MODEL` on the same
   uncompressed file; wall time and the child's CPU time.
3. Gap: (f - f*)/f* of each end-to-end model (in process with --no-e2e), f computed here
   from the model (linsvm.load_model reads both formats) on the training data, f* the
   smallest objective among a tight linsvm solve (tol / 100 of its default, or 1e-6 for
   the dual and L1 solvers) and every model of the run.

Ratios are linsvm / LIBLINEAR of the medians.  Data as examples/harness.py finds it
($LINSVM_DATA); synth-imb-680k is examples/bench_logistic.py's imbalanced set (1.6%
positives, 510k training rows).  Output: Markdown on stdout, progress on stderr; --out
DIR also writes DIR/bench_multicore.json.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import harness as H

CODES = {0: ("lr", {}), 1: ("dcd", {"loss": "l2"}), 2: ("mfn", {}), 3: ("dcd", {"loss": "l1"}),
         5: ("cdn", {}), 6: ("glmnet", {}), 11: ("svr", {})}
REGRESSION_CODES = {11}
REGRESSION_SETS = {"debian-deps-size": "regression/debian-deps-size.train.bz2",
                   "text-regression-500k": None}
SVR_P = 0.1                 # both programs' default tube half-width


def _threaded():
    """The solvers of CODES that take n_threads (the registry's option)."""
    from linsvm.solvers import get_solver

    return {name for name, _ in CODES.values() if "n_threads" in get_solver(name).options}


THREADED = _threaded()
TIGHT = {"lr": 1e-4, "mfn": 1e-8, "dcd": 1e-4, "cdn": 1e-5, "glmnet": 1e-6, "svr": 1e-9}

LLMC_DRIVER = """
import json, sys, time
from liblinear import liblinearutil as L
from linsvm.io.svmlight import load_svmlight
X, y = load_svmlight(sys.argv[1])
prob = L.problem(y, X)
out = []
for options in json.loads(sys.argv[2]):
    t, c = time.perf_counter(), time.process_time()
    L.train(prob, L.parameter(options + " -q"))
    out.append((time.perf_counter() - t, time.process_time() - c))
print(json.dumps(out))
"""


def objective(code, model, X, y, C):
    """LIBLINEAR's objective of `code` at the model's weights (bias feature 1 included;
    for -s 11 the bias weight, last, is left out of the regularizer: -R)."""
    w = model.weights.ravel()
    if code in REGRESSION_CODES:
        r = np.abs(y - model.decision_function(X).ravel())
        return float(0.5 * w[:-1] @ w[:-1] + C * (np.maximum(0.0, r - SVR_P) ** 2).sum())
    t = np.where(y == model.classes_[0], 1.0, -1.0)
    z = t * model.decision_function(X).ravel()
    reg = np.abs(w).sum() if code in (5, 6) else 0.5 * w @ w
    if code in (0, 6):
        loss = np.logaddexp(0.0, -z).sum()
    elif code == 3:
        loss = np.maximum(0.0, 1.0 - z).sum()
    else:
        loss = (np.maximum(0.0, 1.0 - z) ** 2).sum()
    return float(reg + C * loss)


def linsvm_in_process(ds, code, n, C, cache):
    """(wall, cpu, model) of one linsvm.train at -s code on n threads."""
    import linsvm

    solver, opts = CODES[code]
    if solver in THREADED:
        opts = dict(opts, n_threads=n)
    X = H.linsvm_problem(ds, cache)
    t, c = time.perf_counter(), time.process_time()
    model = linsvm.train(X, ds.y, solver=solver, C=C, **opts)
    return time.perf_counter() - t, time.process_time() - c, model


def llmc_in_process(args, data_file, options):
    """[(wall, cpu)] of liblinear-multicore's train() for each option string, in one
    child process of its venv (the problem built once, untimed)."""
    env = dict(os.environ, PYTHONPATH=str(H.linsvm_home()))
    out = subprocess.run([args.llmc_python, "-c", LLMC_DRIVER, str(data_file), json.dumps(options)],
                         capture_output=True, text=True, env=env, check=True)
    return json.loads(out.stdout)


def run_timed(argv, env=None):
    """(wall, children's CPU) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(argv, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def data_file(ds, tmp):
    """The training set as an uncompressed SVM-light file (written once)."""
    from linsvm.io.svmlight import dump_svmlight

    path = pathlib.Path(tmp) / f"{ds.name}.svm"
    if not path.exists():
        dump_svmlight(ds.X, ds.y, str(path))
    return path


def load_regression(name):
    """A regression set as a Dataset-like record (name, X, y), or None when absent."""
    import types

    from linsvm.io.svmlight import load_svmlight
    if REGRESSION_SETS[name] is None:
        from linsvm.io.synth import make_text_regression
        X, y = make_text_regression(n_samples=500_000, n_features=20000, avg_length=30,
                                    offset=3.0, seed=0)
    else:
        path = H.data_root() / REGRESSION_SETS[name]
        if not path.exists():
            H.log(f"skip {name}: {path} not found")
            return None
        X, y = load_svmlight(str(path))
    return types.SimpleNamespace(name=name, X=X.tocsr(), y=np.asarray(y, dtype=np.float64))


def load(name):
    if name in REGRESSION_SETS:
        return load_regression(name)
    if name == "synth-imb-680k":
        import bench_logistic
        return bench_logistic.imbalanced_dataset()
    return H.load_dataset(H.data_root(), name)


def bench_set(args, ds, tmp):
    """The rows of one data set: {(code, n): record}."""
    import linsvm

    path = data_file(ds, tmp)
    cache, rows = {}, {}
    regression = ds.name in REGRESSION_SETS
    for code in args.codes:
        if (code in REGRESSION_CODES) != regression:
            continue
        solver, opts = CODES[code]
        H.log(f"{ds.name} -s {code} ({solver}): reference")
        tol = TIGHT[solver]
        ref = linsvm.train(H.linsvm_problem(ds, cache), ds.y, solver=solver, C=args.C, tol=tol,
                           **opts)
        fstar = objective(code, ref, ds.X, ds.y, args.C)
        free = " -R" if code in REGRESSION_CODES else ""
        llmc_opts = [f"-s {code} -c {args.C:g} -B 1{free} -m {n}" for n in args.threads]
        for n in args.threads:
            rows[(code, n)] = {"linsvm_ip": [], "llmc_ip": [], "linsvm_e2e": [], "llmc_e2e": [],
                               "f": []}
        for r in range(args.repeats):
            H.log(f"{ds.name} -s {code}: round {r + 1}")
            llmc = llmc_in_process(args, path, llmc_opts)
            for n, (wall, cpu) in zip(args.threads, llmc):
                rec = rows[(code, n)]
                rec["llmc_ip"].append((wall, cpu))
                wall, cpu, model = linsvm_in_process(ds, code, n, args.C, cache)
                rec["linsvm_ip"].append((wall, cpu))
                if args.no_e2e:
                    rec["f"].append(("linsvm", objective(code, model, ds.X, ds.y, args.C)))
                    continue
                m_lin, m_ll = pathlib.Path(tmp) / "lin.model", pathlib.Path(tmp) / "ll.model"
                threads = ["-m", str(n)] if solver in THREADED else []
                rec["linsvm_e2e"].append(run_timed(
                    [sys.executable, "-m", "linsvm", "train", "-q", "-s", str(code), *threads,
                     "-c", f"{args.C:g}", *free.split(), str(path), str(m_lin)],
                    env=H.child_env()))
                rec["llmc_e2e"].append(run_timed(
                    [str(pathlib.Path(args.llmc_dir) / "train"), "-q", "-s", str(code), "-m",
                     str(n), "-c", f"{args.C:g}", "-B", "1", *free.split(), str(path),
                     str(m_ll)]))
                for who, p in (("linsvm", m_lin), ("llmc", m_ll)):
                    rec["f"].append((who, objective(code, linsvm.load_model(str(p)), ds.X, ds.y,
                                                    args.C)))
        fmin = min([fstar] + [f for n in args.threads for _, f in rows[(code, n)]["f"]])
        for n in args.threads:
            rows[(code, n)]["fstar"] = fmin
    return rows


def med(pairs, k):
    return statistics.median(p[k] for p in pairs) if pairs else float("nan")


def gap(rec, who):
    fs = [f for w, f in rec["f"] if w == who]
    return statistics.median((f - rec["fstar"]) / rec["fstar"] for f in fs) if fs else float("nan")


def report(results, args):
    print(f"linsvm against multi-core LIBLINEAR, C = {args.C:g}, medians of {args.repeats} rounds "
          f"(load average {os.getloadavg()[0]:.2f} at the end).\n")
    print("| set | -s | N | in process wall lin / LL (s) | ratio | CPU ratio | end to end wall "
          "lin / LL (s) | ratio | gap linsvm | gap LIBLINEAR |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, rows in results.items():
        for (code, n), rec in rows.items():
            li, ll = med(rec["linsvm_ip"], 0), med(rec["llmc_ip"], 0)
            lc, lc2 = med(rec["linsvm_ip"], 1), med(rec["llmc_ip"], 1)
            le, lle = med(rec["linsvm_e2e"], 0), med(rec["llmc_e2e"], 0)
            solver = CODES[code][0]
            tag = "" if solver in THREADED or n == 1 else " (1 thread)"
            print(f"| {name} | {code} {solver}{tag} | {n} | {li:.3f} / {ll:.3f} | {li / ll:.2f} | "
                  f"{lc / lc2:.2f} | {le:.3f} / {lle:.3f} | {le / lle:.2f} | "
                  f"{gap(rec, 'linsvm'):.1e} | {gap(rec, 'llmc'):.1e} |")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--llmc-dir", required=True, help="directory of multi-core LIBLINEAR's train")
    ap.add_argument("--llmc-python", required=True,
                    help="python of a venv with the liblinear-multicore package")
    ap.add_argument("--datasets", default="a9a,w8a,ijcnn1.bz2,synth-text-800k,synth-imb-680k,"
                                          "debian-deps-size,text-regression-500k")
    ap.add_argument("--codes", default="0,2,1,3,5,6,11")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--no-e2e", action="store_true")
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    args.codes = [int(c) for c in args.codes.split(",")]
    args.threads = [int(n) for n in args.threads.split(",")]
    if not set(args.codes) <= set(CODES) or args.repeats < 1:
        ap.error(f"--codes from {sorted(CODES)}, --repeats >= 1")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets.split(","):
            ds = load(name)
            if ds is not None:
                results[ds.name] = bench_set(args, ds, tmp)
    report(results, args)
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "bench_multicore.json").write_text(json.dumps(
            {name: {f"{c}/{n}": rec for (c, n), rec in rows.items()}
             for name, rows in results.items()}, indent=1))


if __name__ == "__main__":
    main()
