"""The hinge loss against multi-core LIBLINEAR and Snap ML, at N = 1 and 2 threads (issue 28).

    python examples/bench_hinge.py --llmc-python PY --snap-python PY
        [--datasets synth-imb-680k,a9a,w8a,ijcnn1.bz2] [--threads 1,2] [--repeats 3]
        [--C 1] [--no-mfn-l1] [--out DIR]

Problem: min 1/2 (||w||^2 + b^2) + C sum_i max(0, 1 - y_i (w.x_i + b)), LIBLINEAR's `-s 3
-B 1`.  Runs, each fit in its own process on the training rows loaded untimed, the
rounds interleaved (one of each run per round):

- linsvm `-s 3` (dcd with the hinge, its defaults; one thread, docs/threads.md) and,
  unless --no-mfn-l1, `-s mfn-l1` (Huber continuation, its defaults);
- liblinear-multicore's train() with "-s 3 -c C -B 1 -m N" (its own venv, --llmc-python:
  it shadows liblinear-official);
- Snap ML's SupportVectorMachine(loss="hinge", regularizer=1/C, fit_intercept=True,
  n_jobs=N) (its own venv, --snap-python; `pip install snapml`).

Each run reports wall and CPU seconds of the fit alone (every library first fits a 4-row
problem, untimed, so that the modules its first call imports are not timed: linsvm
imports its training path on first use, about 60 ms) and the gap (F - F*)/F* of its
model's objective computed here (the bias regularized as above), F* the dual value of a
linsvm dcd solve at -e 1e-4 (a lower bound; its own primal is within 1e-6 of it on the
generated set).  Medians over --repeats rounds, with the range.  Data as
examples/harness.py finds it ($LINSVM_DATA); synth-imb-680k is examples/bench_logistic.py's
imbalanced set (1.6% positives, 510k training rows).  Markdown on stdout, progress on
stderr; --out DIR also writes DIR/bench_hinge.json.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import harness as H

HERE = pathlib.Path(__file__).resolve()


# ------------------------------------------------------------------------- the child

def _child(what, data, C):
    """Fit one run on the npz training set `data`; print {wall, cpu, w, b} as JSON."""
    import scipy.sparse as sp

    z = np.load(data)
    X = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(z["shape"]))
    t = z["t"]
    kind, _, arg = what.partition(":")
    # every library first fits a 4-row problem, untimed: the timer then sees the fit, not
    # the modules its first call imports (linsvm imports its training path lazily)
    Xs, ts = sp.csr_matrix(np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0], [0.0, 2.0]])), \
        np.array([1.0, -1.0, 1.0, -1.0])
    if kind == "linsvm":
        sys.path.insert(0, str(HERE.parent.parent))
        import linsvm
        from linsvm.problem import CSRBuffers

        prob = CSRBuffers(X)
        kw = {"loss": "l1"} if arg == "dcd" else {}
        linsvm.train(Xs, ts, solver=arg, C=C, **kw)
        t0, c0 = time.perf_counter(), time.process_time()
        m = linsvm.train(prob, t, solver=arg, C=C, **kw)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        w = m.weights[:, 0]
        w, b = w[:-1], w[-1]
    elif kind == "llmc":
        from liblinear import liblinearutil as L

        prob = L.problem(t, X)
        L.train(L.problem(ts, Xs), f"-s 3 -c {C:g} -B 1 -m {arg} -q")
        t0, c0 = time.perf_counter(), time.process_time()
        m = L.train(prob, f"-s 3 -c {C:g} -B 1 -m {arg} -q")
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        w, b = m.get_decfun()
        w, b = np.asarray(w, dtype=np.float64), float(b)
    elif kind == "snap":
        from snapml import SupportVectorMachine

        s = SupportVectorMachine(loss="hinge", regularizer=1.0 / C, fit_intercept=True,
                                 n_jobs=int(arg))
        SupportVectorMachine(loss="hinge", regularizer=1.0 / C, fit_intercept=True,
                             n_jobs=int(arg)).fit(Xs, ts)
        t0, c0 = time.perf_counter(), time.process_time()
        s.fit(X, t)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        w, b = np.ravel(s.coef_).astype(np.float64), float(np.ravel(s.intercept_)[0])
    else:
        raise SystemExit(f"unknown run {what!r}")
    if t @ (X @ w + b) < 0:                   # a model that scores the other class positive
        w, b = -w, -b
    F = 0.5 * (w @ w + b * b) + C * np.maximum(0.0, 1.0 - t * (X @ w + b)).sum()
    print(json.dumps({"wall": wall, "cpu": cpu, "F": float(F)}))


# ------------------------------------------------------------------------ the parent

def _load(name):
    if name == "synth-imb-680k":
        sys.path.insert(0, str(HERE.parent))
        import bench_logistic
        return bench_logistic.imbalanced_dataset()
    return H.load_dataset(H.data_root(), name)


def _runs(args):
    runs = [("linsvm -s 3 (dcd)", 1, sys.executable, "linsvm:dcd")]
    if args.mfn_l1:
        runs.append(("linsvm -s mfn-l1", 1, sys.executable, "linsvm:mfn-l1"))
    for n in args.threads:
        if args.llmc_python:
            runs.append(("LIBLINEAR-multicore -s 3", n, args.llmc_python, f"llmc:{n}"))
        if args.snap_python:
            runs.append(("Snap ML", n, args.snap_python, f"snap:{n}"))
    return runs


def _fstar(ds, C):
    """A lower bound on F*: the dual value of a tight dcd solve (and its primal)."""
    import linsvm

    m = linsvm.train(ds.X, ds.t, solver="dcd", loss="l1", C=C, tol=1e-4)
    st = m.column_stats[0]
    return st["dual_objective"], st["objective"]


def bench_set(args, name, tmp):
    H.log(f"{name}: loading")
    ds = _load(name)
    path = tmp / f"{name}.npz"
    X = ds.X.tocsr()
    np.savez(path, data=X.data, indices=X.indices, indptr=X.indptr,
             shape=np.array(X.shape), t=np.asarray(ds.t, dtype=np.float64))
    H.log(f"{name}: reference")
    lower, upper = _fstar(ds, args.C)
    runs = _runs(args)
    out = {label_n: [] for label_n in ((r[0], r[1]) for r in runs)}
    for r in range(args.repeats):
        for label, n, py, what in runs:
            H.log(f"{name}: round {r + 1}: {label} N = {n}")
            proc = subprocess.run([py, str(HERE), "--child", what, "--data", str(path),
                                   "--C", repr(args.C)], capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"{label} failed on {name}: {proc.stderr.strip()[-400:]}")
            out[(label, n)].append(json.loads(proc.stdout.strip().splitlines()[-1]))
    rows = []
    for (label, n), recs in out.items():
        walls = [x["wall"] for x in recs]
        rows.append({"set": name, "run": label, "N": n,
                     "wall": statistics.median(walls), "wall_min": min(walls),
                     "wall_max": max(walls), "cpu": statistics.median(x["cpu"] for x in recs),
                     "gap": (statistics.median(x["F"] for x in recs) - lower) / lower})
    return rows, (lower, upper)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--data", help=argparse.SUPPRESS)
    ap.add_argument("--datasets", default="synth-imb-680k,a9a,w8a,ijcnn1.bz2")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--llmc-python", help="python of a venv with liblinear-multicore")
    ap.add_argument("--snap-python", help="python of a venv with snapml")
    ap.add_argument("--no-mfn-l1", dest="mfn_l1", action="store_false")
    ap.add_argument("--out", type=pathlib.Path)
    args = ap.parse_args(argv)
    if args.child:
        _child(args.child, args.data, args.C)
        return
    args.threads = [int(v) for v in args.threads.split(",")]
    all_rows, refs = [], {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.datasets.split(","):
            rows, refs[name] = bench_set(args, name, pathlib.Path(tmp))
            all_rows += rows
    print("| set | run | N | wall median (range), s | CPU median, s | wall / linsvm dcd | gap |")
    print("|---|---|---|---|---|---|---|")
    for r in all_rows:
        base = next(x for x in all_rows if x["set"] == r["set"] and x["run"].endswith("(dcd)"))
        print(f"| {r['set']} | {r['run']} | {r['N']} | {r['wall']:.2f} ({r['wall_min']:.2f}-"
              f"{r['wall_max']:.2f}) | {r['cpu']:.2f} | {r['wall'] / base['wall']:.2f} | "
              f"{r['gap']:.1e} |")
    for name, (lower, upper) in refs.items():
        print(f"\n{name}: F* in [{lower:.10g}, {upper:.10g}]")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_hinge.json").write_text(json.dumps(
            {"rows": all_rows, "reference": refs, "C": args.C}, indent=1))


if __name__ == "__main__":
    main()
