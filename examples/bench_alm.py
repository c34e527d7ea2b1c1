"""Benchmark SVM-ALM (linsvm -s alm) with the protocol of Nie et al. 2014, Tables 1-3.

    python examples/bench_alm.py [--quick] [--datasets a1a,w1a] [--repeats 3]
                                 [--no-table3] [--no-mu] [--no-kernels] [--kernels-only]
                                 [--out FILE]

Objective (every solver is scored on it, computed here with NumPy from the
weights it returns; no solver's report of its own objective is used):

    P(w) = 1/2 ||w||^2 + C sum_i max(0, 1 - y_i w.x_i)^p,   C = 1,

x_i with a bias feature of value 1 whose weight is regularized (LIBLINEAR -B 1;
linsvm's default).  p = 1 is Table 1 (L1-SVM), p = 2 Table 2 (L2-SVM).

Tables 1-2: time to bring P within 1% of the optimum, (P - P*)/P* <= 0.01, the
paper's criterion.  P* is the smallest P of the reference runs (linsvm alm with
--stop gap -e 1e-8, LIBLINEAR -e 1e-8 with -s 3 or -s 2, and for p = 2 linsvm
mfn -e 1e-12); the table shows how tightly ALM's duality certificate brackets it.
Solvers: linsvm alm (p = 1 and 2; also alm-exact), LIBLINEAR -s 3 (dual CD,
hinge), -s 1 (dual CD, squared hinge), -s 2 (trust-region Newton, squared
hinge), scikit-learn SGDClassifier(hinge) as the Pegasos-style baseline
(alpha = 1/(C n), the bias as a regularized column of ones, learning_rate
"optimal" = Pegasos's 1/(alpha t), no intercept, random_state 0), and linsvm
mfn for p = 2.  For each solver a ladder of its own stopping knob is walked
from loose to tight (ALM: the iteration cap, read off one long run's trace
because the iterates do not depend on the cap; LIBLINEAR: -e; SGD: epochs), the
first setting that reaches 1% is timed --repeats times in interleaved rounds
and the median reported (LIBLINEAR -s 1/-s 3 permute with an unseeded rand():
3 runs per rung, the median gap decides).  Timed is training only: LIBLINEAR's
`problem` is built outside the timer; linsvm.train and SGDClassifier.fit include
their own input checks.  "alm default" is a plain `linsvm.train(solver="alm")`
(the paper's objective-change rule at -e 1e-4): its time and the gap it
reaches.  All single-threaded (linsvm's kernels run serially below 4M non-zeros).

Table 3 shape: test accuracy of Lp-SVM (linsvm alm, default stopping) for
p in {1, 1.1, ..., 2} on two data sets with test files, C chosen per p by
5-fold cross-validation over 2^-5..2^5 (stratified folds from a seeded
permutation; ties to the smaller C); p itself chosen by CV accuracy too.

mu schedules: gap after a fixed number of iterations for --mu-rule balance
(default), geometric (the paper's experiments) and eq29.

Kernels: csr.pxd's matvec/rmatvec against the candidates of
csrc/_kernels_bench.pyx, 1 and 2 threads (the machine is shared: read ratios); that module is
not in the repository, so without a build of it the table is skipped with a note.

The machine is shared with other work, so seconds are noisy; read the ratios.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)

import linsvm  # noqa: E402

DATA = H.data_root() / "binary"
ALL = ["a1a", "a2a", "a3a", "a4a", "a8a", "a9a", "w1a", "w7a", "w8a", "australian",
       "heart_scale", "ijcnn1.bz2"]
GAP = 0.01
LIBLINEAR_LADDER = [1.0, 0.3, 0.1, 0.03, 0.01, 0.003, 0.001, 3e-4, 1e-4, 1e-5, 1e-6]
SGD_LADDER = [1, 2, 4, 8, 16, 32, 64, 128]
RUN_CAP = 60.0          # a single run slower than this ends a ladder


# ----------------------------------------------------------------- data and objective

class Dataset:
    def __init__(self, name):
        self.name = name
        self.X, y, self.Xt, yt = H.load_pair(DATA / name, DATA / H.test_file_name(name))
        self.y = np.where(y > 0, 1.0, -1.0)          # +1 first in linsvm's class order
        self.yt = None if yt is None else np.where(yt > 0, 1.0, -1.0)
        self.Xa = H.augmented(self.X)
        self.n, self.d = self.X.shape
        self.cache = {}

    def P(self, w, p, C=1.0):
        slack = np.maximum(0.0, 1.0 - self.y * (self.Xa @ w))
        return 0.5 * w @ w + C * np.sum(slack ** p)


def linsvm_weights(model):
    w = np.asarray(model.weights)[:, 0].copy()
    return w if model.classes_[0] == 1.0 else -w


# ----------------------------------------------------------------- solvers: (seconds, w, info)

def run_linsvm(ds, p, knob, solver="alm", **kw):
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if solver == "mfn":
            model = linsvm.train(ds.X, ds.y, solver="mfn", C=1.0, bias=1.0, tol=knob)
        elif knob is None:
            model = linsvm.train(ds.X, ds.y, solver=solver, C=1.0, bias=1.0, p=p, **kw)
        else:      # the iteration cap as the knob (the objective rule switched off)
            model = linsvm.train(ds.X, ds.y, solver=solver, C=1.0, bias=1.0, p=p, tol=1e-300,
                                 max_iter=int(knob), **kw)
    sec = time.perf_counter() - t0
    return sec, linsvm_weights(model), model.column_stats[0]


def run_liblinear(ds, p, eps, s):
    sec, model = H.liblinear_train(H.liblinear_problem(ds, ds.cache), H.liblinear_options(s, 1.0, eps))
    return sec, H.liblinear_vector(model, ds.d, positive=1), {}


def run_sgd(ds, p, epochs):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import SGDClassifier

    est = SGDClassifier(loss="hinge", alpha=1.0 / ds.n, fit_intercept=False, max_iter=int(epochs),
                        tol=None, learning_rate="optimal", shuffle=True, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        t0 = time.perf_counter()
        est.fit(ds.Xa, ds.y)
        sec = time.perf_counter() - t0
    w = est.coef_[0].copy()
    return sec, (w if est.classes_[1] == 1 else -w), {}


# ----------------------------------------------------------------- reference optimum

def reference(ds, p):
    """P* = min over tight runs; also ALM's certified lower bound."""
    cands = {}
    _, w, st = run_linsvm(ds, p, None, stop="gap", tol=1e-8, max_iter=30000)
    cands["alm gap 1e-8"] = ds.P(w, p)
    lower = st["dual"]
    _, w, _ = run_liblinear(ds, p, 1e-8, 3 if p == 1 else 2)
    cands[f"liblinear -s {3 if p == 1 else 2} -e 1e-8"] = ds.P(w, p)
    if p == 2:
        _, w, _ = run_linsvm(ds, p, 1e-12, solver="mfn")
        cands["mfn -e 1e-12"] = ds.P(w, p)
    best = min(cands, key=cands.get)
    return cands[best], best, lower, cands


def alm_iterations_to_gap(ds, p, fstar, solver="alm", cap=20000):
    """Smallest iteration cap whose run reaches the gap, read off the trace of one
    run (the iterates do not depend on the cap); caps 250, 1000, 4000, ... tried
    in turn so that an easy problem does not run to `cap`."""
    k = 250
    while True:
        _, w, st = run_linsvm(ds, p, min(k, cap), solver=solver)
        trace = np.asarray(st["trace"])
        hit = np.flatnonzero((trace - fstar) / abs(fstar) <= GAP)
        if hit.size or k >= cap:
            return (int(hit[0]) + 1 if hit.size else None), float((trace.min() - fstar) / abs(fstar))
        k *= 4


# ----------------------------------------------------------------- Tables 1-2

def walk(ds, p, fstar, run, ladder, randomized=False):
    """harness.walk_ladder to GAP: (first knob that reaches or None, its gap or the best)."""
    w = H.walk_ladder(lambda knob: run(ds, p, knob), ladder, lambda w: (ds.P(w, p) - fstar) / abs(fstar),
                      GAP, randomized=randomized, run_cap=RUN_CAP)
    return w.knob, (w.gap if w.reached else w.best_gap)


def time_rounds(entries, repeats):
    """entries: name -> (callable returning (sec, w, info), check); interleaved rounds.
    Returns name -> (median seconds, whether every timed model passed check)."""
    timed = H.interleaved({k: fn for k, (fn, _) in entries.items()}, repeats)
    return {k: (float(np.median([r[0] for r in v])), all(entries[k][1](r[1]) for r in v))
            for k, v in timed.items()}


def tables_1_2(datasets, repeats, out):
    rows = {1: [], 2: []}
    for name in datasets:
        ds = Dataset(name)
        for p in (1, 2):
            t0 = time.perf_counter()
            fstar, who, lower, cands = reference(ds, p)
            solvers = {}
            k, _ = alm_iterations_to_gap(ds, p, fstar)
            solvers["alm"] = (k, lambda ds, p, kk: run_linsvm(ds, p, kk))
            k, _ = alm_iterations_to_gap(ds, p, fstar, solver="alm-exact", cap=3000)
            solvers["alm-exact"] = (k, lambda ds, p, kk: run_linsvm(ds, p, kk, solver="alm-exact"))
            if p == 1:
                k, _ = walk(ds, p, fstar, lambda d, pp, e: run_liblinear(d, pp, e, 3), LIBLINEAR_LADDER, True)
                solvers["liblinear -s 3"] = (k, lambda ds, p, kk: run_liblinear(ds, p, kk, 3))
                k, best = walk(ds, p, fstar, run_sgd, SGD_LADDER)
                solvers["SGD hinge"] = (k, run_sgd)
                sgd_best = best
            else:
                for s in (1, 2):
                    k, _ = walk(ds, p, fstar, lambda d, pp, e, s=s: run_liblinear(d, pp, e, s),
                                LIBLINEAR_LADDER, s == 1)
                    solvers[f"liblinear -s {s}"] = (k, lambda ds, p, kk, s=s: run_liblinear(ds, p, kk, s))
                k, _ = walk(ds, p, fstar, lambda d, pp, e: run_linsvm(d, pp, e, solver="mfn"),
                            [1e-1, 1e-2, 1e-3, 1e-4, 1e-6])
                solvers["mfn"] = (k, lambda ds, p, kk: run_linsvm(ds, p, kk, solver="mfn"))
            entries = {}
            for sname, (knob, fn) in solvers.items():
                if knob is not None:
                    entries[sname] = (lambda fn=fn, knob=knob: fn(ds, p, knob),
                                      lambda w: (ds.P(w, p) - fstar) / abs(fstar) <= GAP * 1.0001)
            entries["alm default"] = (lambda: run_linsvm(ds, p, None), lambda w: True)
            n_rep = repeats if ds.X.nnz > 200_000 else max(repeats, 7)
            timed = time_rounds(entries, n_rep)
            _, w_def, st_def = run_linsvm(ds, p, None)
            row = {"dataset": name, "n": ds.n, "nnz": int(ds.X.nnz), "fstar": fstar, "fstar_by": who,
                   "cert": (fstar - lower) / abs(fstar), "solvers": {},
                   "alm_default_gap": (ds.P(w_def, p) - fstar) / abs(fstar),
                   "alm_default_iter": st_def["n_iter"]}
            for sname, (knob, _) in solvers.items():
                if knob is None:
                    row["solvers"][sname] = None
                else:
                    sec, ok = timed[sname]
                    row["solvers"][sname] = {"sec": sec, "knob": knob, "ok": ok}
            row["solvers"]["alm default"] = {"sec": timed["alm default"][0], "knob": "default", "ok": True}
            if p == 1:
                row["sgd_best"] = sgd_best
            rows[p].append(row)
            print(f"# {name} p={p} done in {time.perf_counter() - t0:.1f}s", file=sys.stderr, flush=True)
    for p, title in ((1, "Table 1 (p = 1, L1-SVM)"), (2, "Table 2 (p = 2, L2-SVM)")):
        names = (["alm", "alm-exact", "liblinear -s 3", "SGD hinge"] if p == 1 else
                 ["alm", "alm-exact", "liblinear -s 1", "liblinear -s 2", "mfn"])
        out(f"\n### {title}: seconds to (P - P*)/P* <= 1%, C = 1 (median; [knob]; x = time / alm's)\n")
        out("| data | n | nnz | P* (by) | cert | " + " | ".join(names) + " | alm default: s (gap, iters) |")
        out("|" + "---|" * (len(names) + 6))
        for row in rows[p]:
            base = row["solvers"].get("alm")
            cells = []
            for sname in names:
                r = row["solvers"].get(sname)
                if r is None:
                    extra = f" (best {row['sgd_best']:.1%})" if sname == "SGD hinge" else ""
                    cells.append("not reached" + extra)
                    continue
                ratio = f" x{r['sec'] / base['sec']:.2g}" if base and sname != "alm" else ""
                flag = "" if r["ok"] else " (!)"
                cells.append(f"{r['sec']:.3g} [{r['knob']}]{ratio}{flag}")
            d = row["solvers"]["alm default"]
            out(f"| {row['dataset']} | {row['n']} | {row['nnz']} | {row['fstar']:.8g} ({row['fstar_by']}) | "
                f"{row['cert']:.0e} | " + " | ".join(cells) +
                f" | {d['sec']:.3g} ({row['alm_default_gap']:.2%}, {row['alm_default_iter']}) |")
    return rows


# ----------------------------------------------------------------- Table 3 shape

def table_3(names, out, quick):
    Cs = [2.0 ** e for e in range(-5, 6, 1 if not quick else 2)]
    ps = [round(1 + 0.1 * i, 1) for i in range(11)]
    out("\n### Table 3 shape: test accuracy of Lp-SVM (alm), C by 5-fold CV per p\n")
    summary = []
    for name in names:
        ds = Dataset(name)
        if ds.Xt is None:
            continue
        res = []
        for p in ps:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                best, cv = H.choose_cv_C(ds, "alm", grid=Cs, p=p)     # ties: the smaller C
            m = linsvm.train(ds.X, ds.y, solver="alm", C=best, p=p)
            acc = float(np.mean(m.predict(ds.Xt) == ds.yt))
            res.append((p, best, cv[best], acc))
        out(f"\n{name} (train {ds.n}, test {ds.Xt.shape[0]}):\n")
        out("| p | " + " | ".join(f"{p:g}" for p, *_ in res) + " |")
        out("|---|" + "---|" * len(res))
        out("| C (CV) | " + " | ".join(f"{C:g}" for _, C, _, _ in res) + " |")
        out("| CV acc | " + " | ".join(f"{a:.2%}" for _, _, a, _ in res) + " |")
        out("| test acc | " + " | ".join(f"{a:.2%}" for *_, a in res) + " |")
        pbest = max(res, key=lambda r: (r[2], -abs(r[0] - 1.5)))
        summary.append((name, res[0][3], res[-1][3], pbest[3], pbest[0]))
    out("\n| data | L1-SVM | L2-SVM | Lp-SVM (p by CV) | p |\n|---|---|---|---|---|")
    for name, a1, a2, ap, p in summary:
        out(f"| {name} | {a1:.2%} | {a2:.2%} | {ap:.2%} | {p:g} |")


# ----------------------------------------------------------------- mu schedules

def mu_schedules(names, out, iters=300):
    out(f"\n### mu schedules: relative gap (P - P*)/P* after {iters} alm iterations (C = 1)\n")
    out("| data | p | balance (default) | geometric x2 (paper's experiments) | geometric x1.1 | eq29 |")
    out("|---|---|---|---|---|---|")
    for name in names:
        ds = Dataset(name)
        for p in (1, 2):
            fstar, *_ = reference(ds, p)
            cells = []
            for kw in ({"mu_rule": "balance"}, {"mu_rule": "geometric"},
                       {"mu_rule": "geometric", "mu_growth": 1.1}, {"mu_rule": "eq29"}):
                _, w, st = run_linsvm(ds, p, iters, **kw)
                cells.append(f"{(ds.P(w, p) - fstar) / fstar:.1e} (mu {st['mu']:.1e})")
            out(f"| {name} | {p} | " + " | ".join(cells) + " |")


# ----------------------------------------------------------------- kernels

def kernels(names, out, repeats):
    try:
        from linsvm import _kernels_bench as KB
    except ImportError:         # csrc/_kernels_bench.pyx was never part of the repository
        out("\n(mat-vec kernel table skipped: no linsvm._kernels_bench module in this build)")
        return
    from linsvm.problem import CSRBuffers
    from linsvm.io.synth import make_text_classification

    out("\n### Mat-vec kernels: csr.pxd vs candidates (median ms; ratio to csr.pxd)\n")
    out("| data | nnz | threads | matvec csr.pxd | matvec csr4 | rmatvec csr.pxd | rmatvec scatter (1 thread) "
        "/ padded (2) | rmatvec csc | csc build (once) |")
    out("|---|---|---|---|---|---|---|---|---|")
    sets = [(n, Dataset(n).X) for n in names]
    Xs, _ = make_text_classification(n_samples=300000, n_features=100000, avg_length=60, seed=0)[:2]
    sets.append(("synthetic text 300k x 100k", Xs))
    for name, X in sets:
        Xb = CSRBuffers(X)
        rows = np.arange(X.shape[0], dtype=np.int64)
        for T in (1, 2):
            r = KB.bench(Xb, rows, 1.0, T, repeats=repeats)
            mv, rmv = r["matvec csr.pxd"][0], r["rmatvec csr.pxd"][0]

            def cell(key, base):
                if key not in r:
                    return "-"
                sec, dev = r[key]
                return f"{sec * 1e3:.3g} (x{sec / base:.2f})" + (f" dev {dev:.0e}" if dev > 1e-13 else "")
            out(f"| {name} | {Xb.nnz} | {T} | {mv * 1e3:.3g} | {cell('matvec csr4', mv)} | {rmv * 1e3:.3g} | "
                f"{cell('rmatvec scatter' if T == 1 else 'rmatvec padded', rmv)} | {cell('rmatvec csc', rmv)} | "
                f"{r['csc build (once)'][0] * 1e3:.3g} |")


# ----------------------------------------------------------------- main

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--datasets", default=",".join(ALL))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="a1a, w1a, heart_scale only; coarser C grid")
    ap.add_argument("--no-table3", action="store_true")
    ap.add_argument("--no-kernels", action="store_true")
    ap.add_argument("--no-mu", action="store_true")
    ap.add_argument("--kernels-only", action="store_true", help="only the mat-vec kernel table")
    ap.add_argument("--out", help="also write the Markdown here")
    args = ap.parse_args(argv)
    names = ["a1a", "w1a", "heart_scale"] if args.quick else args.datasets.split(",")
    names = H.present(names)
    lines = []

    def out(text):
        print(text, flush=True)
        lines.append(text)

    out(f"# SVM-ALM benchmark (linsvm {linsvm.__version__}, liblinear-official "
        f"{H.version('liblinear-official')}, scikit-learn {H.version('scikit-learn')}, "
        f"{os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f})")
    t0 = time.perf_counter()
    if args.kernels_only:
        args.no_mu = args.no_table3 = True
    else:
        tables_1_2(names, args.repeats, out)
    if not args.no_mu:
        mu_schedules([n for n in ("a1a", "w1a", "a9a") if n in names] or names[:2], out)
    if not args.no_table3:
        table_3([n for n in ("a1a", "w1a") if (DATA / n).is_file()], out, args.quick)
    if not args.no_kernels:
        kernels([n for n in ("a9a", "w8a", "ijcnn1.bz2") if n in names], out, 40)
    out(f"\n(total {time.perf_counter() - t0:.0f} s; load average at the end "
        f"{os.getloadavg()[0]:.1f})")
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
