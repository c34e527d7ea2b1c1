"""Regression and one-class solvers against LIBLINEAR at both programs' defaults (issue 27).

    python examples/bench_regression.py [--rounds 3] [--text-rows 500000] [--out docs/bench-regression.md]

Tables (Markdown, to --out):

1. Defaults.  For LIBLINEAR -s 11, 12, 13 (linsvm svr, svr-dual --loss l2, --loss l1) on the
   regression sets (debian-deps-size, scikit-learn's diabetes, a generated text regression
   set of --text-rows rows) at C = 1 and at the 5-fold-CV-best C (by MSE, svr on a C grid;
   the first --cv-rows rows of the generated set), and -s 21 (oneclass) at nu = 0.1 and 0.5
   on binary sets with the labels ignored: each program at its default -e (and -p 0.1), the
   relative objective gap (F - F*)/|F*| to a tight reference (F computed here with numpy
   from the returned weights; F* the smallest of a tight linsvm run and every run met) and
   the CPU seconds of the training call in this process (time.thread_time: linsvm's fit on
   a prebuilt Problem, liblinear-official's train on a prebuilt problem; one thread), medians
   of --rounds interleaved rounds.  Both programs solve the same problem: -B 1 with the bias
   regularized (linsvm's svr run with regularize_bias=True and svr-dual with
   center_targets=False, so that they minimize LIBLINEAR's objective), no bias for -s 21.
2. End to end on the larger sets: wall seconds of LIBLINEAR's `train` program
   (/work/peers/liblinear/train or $LIBLINEAR_TRAIN) against a fresh Python process that
   reads the same file with linsvm's reader and fits (no model file: the model layer does
   not store regression models yet).
3. The free-intercept trap: test MSE and squared correlation coefficient (as LIBLINEAR's
   predict prints them) on debian-deps-size and on a copy with 2000 added to every target,
   for LIBLINEAR -s 11 -B 1 (bias regularized) and -B 1 -R, linsvm svr at its defaults
   (free bias) and with the bias regularized, svr-dual at its defaults (targets centered).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import scipy.sparse as sp

from harness import child_env, data_path, machine_header, markdown_table, median  # noqa: E402

from linsvm.io.svmlight import dump_svmlight, load_svmlight
from linsvm.problem.metrics import regression_measures
from linsvm.problem import CSRBuffers, Problem
from linsvm.solvers import get_solver, make_params

P_TUBE = 0.1
C_GRID = tuple(2.0 ** k for k in range(-8, 9, 2))
SLOW_RUN = 60.0           # seconds of a first round above which a cell gets one round only


# ------------------------------------------------------------------ objectives (numpy)

def svr_objective(X, y, w, C, loss):
    """LIBLINEAR's -s 11/12 (loss 2) or -s 13 (loss 1) objective, bias weight last (-B 1,
    regularized)."""
    pred = X @ w[:-1] + w[-1]
    a = np.maximum(np.abs(pred - y) - P_TUBE, 0.0)
    return 0.5 * float(w @ w) + C * float(np.sum(a ** loss))


def oneclass_objective(X, w, rho, nu):
    """The nu-formulation's primal at (w, rho) given in LIBLINEAR's scale (nu n times)."""
    s = nu * X.shape[0]
    w, rho = w / s, rho / s
    return 0.5 * float(w @ w) - rho + float(np.maximum(0.0, rho - X @ w).sum()) / s


# ------------------------------------------------------------------ the two programs

def problem_of(X, y, bias):
    Xb = CSRBuffers(X)
    n = Xb.n_rows
    return Problem(Xb, np.arange(n, dtype=np.int64), np.ones(n), bias,
                   t=None if y is None else np.ascontiguousarray(y, dtype=np.float64))


def linsvm_fit(prob, solver, C, tol=None, **options):
    info = get_solver(solver)
    params = make_params(info, C=C, tol=tol, options=options)
    t0 = time.thread_time()
    res = info.fit(prob, params, None, None, None)
    return time.thread_time() - t0, res


def liblinear_fit(lprob, options):
    from liblinear import liblinearutil as L
    param = L.parameter(options + " -q")
    t0 = time.thread_time()
    m = L.train(lprob, param)
    return time.thread_time() - t0, m


def liblinear_w(m, d):
    w, b = m.get_decfun()
    w = np.asarray(w, dtype=np.float64)
    w = np.concatenate([w, np.zeros(max(0, d - w.shape[0]))])[:d]
    return w, b


LINSVM = {11: ("svr", {"regularize_bias": True}), 12: ("svr-dual", {"loss": "l2", "center_targets": False}),
          13: ("svr-dual", {"loss": "l1", "center_targets": False})}


def reference(prob, code, C):
    """A tight linsvm run for F* (svr at -e 1e-10 for -s 11/12, svr-dual l1 at 1e-6, its
    duality gap certifying it, for -s 13)."""
    if code in (11, 12):
        return linsvm_fit(prob, "svr", C, 1e-10, regularize_bias=True, gtol=0.0)[1]
    return linsvm_fit(prob, "svr-dual", C, 1e-4, loss="l1", center_targets=False,
                      max_iter=3000)[1]


def cv_best_C(X, y, folds=5, seed=0):
    """5-fold CV MSE of svr (LIBLINEAR's -s 11 problem) over C_GRID; ties to the smaller C."""
    rng = np.random.default_rng(seed)
    fold = rng.permutation(X.shape[0]) % folds
    mse = {C: 0.0 for C in C_GRID}
    for f in range(folds):
        tr, te = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        prob = problem_of(X[tr], y[tr], 1.0)
        for C in C_GRID:
            res = linsvm_fit(prob, "svr", C, regularize_bias=True)[1]
            pred = X[te] @ res.weights[:-1] + res.weights[-1]
            mse[C] += float(np.sum((pred - y[te]) ** 2))
    best = min(mse.values())
    return min(C for C in C_GRID if mse[C] == best), {C: v / X.shape[0] for C, v in mse.items()}


def defaults_rows(name, X, y, Cs, rounds, log):
    from liblinear import liblinearutil as L
    prob = problem_of(X, y, 1.0)
    lprob = L.problem(y, X)
    lprob.set_bias(1)
    d = X.shape[1]
    rows = []
    for C in Cs:
        for code in (11, 12, 13):
            loss = 1 if code == 13 else 2
            solver, opts = LINSVM[code]
            ref = reference(prob, code, C)
            fstar = svr_objective(X, y, ref.weights, C, loss)
            log(f"{name} C={C:g} -s {code}: reference certified within {ref.stats['gap']:.1e}")
            times = {"linsvm": [], "liblinear": []}
            objs = {"linsvm": [], "liblinear": []}
            for k in range(rounds):
                if k > 0 and times["linsvm"][0] + times["liblinear"][0] > SLOW_RUN:
                    break                        # a slow cell: one round (marked "1 run")
                order = ("linsvm", "liblinear") if k % 2 == 0 else ("liblinear", "linsvm")
                for who in order:
                    if who == "linsvm":
                        t, res = linsvm_fit(prob, solver, C, **opts)
                        f = svr_objective(X, y, res.weights, C, loss)
                    else:
                        t, m = liblinear_fit(lprob, f"-s {code} -c {C!r} -p {P_TUBE} -B 1")
                        w, b = liblinear_w(m, d)
                        f = svr_objective(X, y, np.append(w, b), C, loss)
                    times[who].append(t)
                    objs[who].append(f)
            fstar = min([fstar] + objs["linsvm"] + objs["liblinear"])
            gl = median([(f - fstar) / abs(fstar) for f in objs["linsvm"]])
            gL = median([(f - fstar) / abs(fstar) for f in objs["liblinear"]])
            tl, tL = median(times["linsvm"]), median(times["liblinear"])
            log(f"{name} C={C:g} -s {code}: linsvm gap {gl:.2e} {tl:.3f}s, LIBLINEAR gap {gL:.2e} {tL:.3f}s")
            runs = "" if len(times["linsvm"]) > 1 else " (1 run)"
            rows.append([name, f"{C:g}", f"-s {code} ({solver}{' ' + opts['loss'] if 'loss' in opts else ''}){runs}",
                         f"{gl:.1e}", f"{gL:.1e}", f"{tl:.3f}", f"{tL:.3f}",
                         f"{tl / tL:.2f}" if tL > 0 else "—"])
    return rows


def oneclass_rows(name, X, rounds, log):
    from liblinear import liblinearutil as L
    prob = problem_of(X, None, -1.0)
    lprob = L.problem(np.ones(X.shape[0]), X)
    d = X.shape[1]
    rows = []
    for nu in (0.1, 0.5):
        ref = linsvm_fit(prob, "oneclass", 1.0, 1e-6, nu=nu, max_iter=20000)[1]
        log(f"{name} nu={nu}: reference certified within {ref.stats['gap']:.1e}")
        fstar = oneclass_objective(X, ref.weights, ref.thresholds[0], nu)
        times = {"linsvm": [], "liblinear": []}
        objs = {"linsvm": [], "liblinear": []}
        for k in range(rounds):
            order = ("linsvm", "liblinear") if k % 2 == 0 else ("liblinear", "linsvm")
            for who in order:
                if who == "linsvm":
                    t, res = linsvm_fit(prob, "oneclass", 1.0, nu=nu)
                    f = oneclass_objective(X, res.weights, res.thresholds[0], nu)
                else:
                    t, m = liblinear_fit(lprob, f"-s 21 -n {nu}")
                    w, b = liblinear_w(m, d)
                    f = oneclass_objective(X, w, -b, nu)
                times[who].append(t)
                objs[who].append(f)
        fstar = min([fstar] + objs["linsvm"] + objs["liblinear"])
        gl = median([(f - fstar) / abs(fstar) for f in objs["linsvm"]])
        gL = median([(f - fstar) / abs(fstar) for f in objs["liblinear"]])
        tl, tL = median(times["linsvm"]), median(times["liblinear"])
        log(f"{name} nu={nu}: linsvm gap {gl:.2e} {tl:.3f}s, LIBLINEAR gap {gL:.2e} {tL:.3f}s")
        rows.append([name, f"nu {nu}", "-s 21 (oneclass)", f"{gl:.1e}", f"{gL:.1e}",
                     f"{tl:.3f}", f"{tL:.3f}", f"{tl / tL:.2f}" if tL > 0 else "—"])
    return rows


CHILD = r"""
import sys, time, json
t0 = time.perf_counter()
from linsvm.io.svmlight import load_svmlight
from linsvm.problem import CSRBuffers, Problem
from linsvm.solvers import get_solver, make_params
import numpy as np
t1 = time.perf_counter()
path, solver, C, opts = sys.argv[1], sys.argv[2], float(sys.argv[3]), json.loads(sys.argv[4])
X, y = load_svmlight(path)
n = X.shape[0]
prob = Problem(CSRBuffers(X), np.arange(n, dtype=np.int64), np.ones(n), 1.0, t=y)
info = get_solver(solver)
res = info.fit(prob, make_params(info, C=C, options=opts), None, None, None)
np.save(sys.argv[5], res.weights)
print(json.dumps([time.perf_counter() - t0, t1 - t0]))
"""


def end_to_end_rows(name, path, C, rounds, train, log):
    rows = []
    for code in (11, 12, 13):
        solver, opts = LINSVM[code]
        tl, tL, ti = [], [], []
        with tempfile.TemporaryDirectory() as tmp:
            for k in range(rounds):
                for who in (("linsvm", "liblinear") if k % 2 == 0 else ("liblinear", "linsvm")):
                    t0 = time.perf_counter()
                    if who == "linsvm":
                        out = subprocess.run([sys.executable, "-c", CHILD, str(path), solver,
                                              repr(C), json.dumps(opts), os.path.join(tmp, "w.npy")],
                                             check=True, capture_output=True, text=True,
                                             env=child_env())
                        tl.append(time.perf_counter() - t0)
                        ti.append(json.loads(out.stdout.strip().splitlines()[-1])[1])
                    else:
                        subprocess.run([train, "-q", "-s", str(code), "-c", repr(C), "-p",
                                        str(P_TUBE), "-B", "1", str(path), os.path.join(tmp, "m")],
                                       check=True, capture_output=True)
                        tL.append(time.perf_counter() - t0)
        log(f"end to end {name} -s {code}: linsvm {median(tl):.2f}s (imports {median(ti):.2f}s) "
            f"LIBLINEAR {median(tL):.2f}s")
        rest = median([a - b for a, b in zip(tl, ti)])
        rows.append([name, f"{C:g}", f"-s {code}", f"{median(tl):.2f}", f"{median(ti):.2f}",
                     f"{rest:.2f}", f"{median(tL):.2f}", f"{median(tl) / median(tL):.2f}",
                     f"{rest / median(tL):.2f}"])
    return rows


def trap_rows(Xtr, ytr, Xte, yte, C, log):
    from liblinear import liblinearutil as L
    rows = []
    d = Xtr.shape[1]
    for shift in (0.0, 2000.0):
        yt, ye = ytr + shift, yte + shift
        base = float(np.mean((np.mean(yt) - ye) ** 2))
        runs = []
        for label, opt in (("LIBLINEAR -s 11 -B 1", "-B 1"), ("LIBLINEAR -s 11 -B 1 -R", "-B 1 -R")):
            m = L.train(yt, Xtr, f"-s 11 -c {C!r} -p {P_TUBE} {opt} -q")
            w, b = liblinear_w(m, d)
            runs.append((label, Xte @ w + b))
        prob = problem_of(Xtr, yt, 1.0)
        for label, solver, opts in (("linsvm svr (defaults: free bias)", "svr", {}),
                                    ("linsvm svr --regularize-bias", "svr", {"regularize_bias": True}),
                                    ("linsvm svr-dual --loss l2 (defaults: centered)", "svr-dual", {"loss": "l2"}),
                                    ("linsvm svr-dual --loss l1 (defaults: centered)", "svr-dual", {"loss": "l1"})):
            res = linsvm_fit(prob, solver, C, **opts)[1]
            off = res.stats.get("y_offset", 0.0)
            runs.append((label, Xte @ res.weights[:-1] + res.weights[-1] + off))
        for label, pred in runs:
            mse, scc = regression_measures(ye, pred)
            log(f"trap shift {shift:g} {label}: MSE {mse:.4g} SCC {scc:.4f}")
            rows.append([f"+{shift:g}" if shift else "as is", label, f"{mse:.4g}", f"{scc:.4f}",
                         f"{base:.4g}"])
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--text-rows", type=int, default=500000)
    ap.add_argument("--cv-rows", type=int, default=100000)
    ap.add_argument("--out", default=None)
    ap.add_argument("--skip-text", action="store_true")
    ap.add_argument("--only", default="regression,oneclass,trap",
                    help="comma-separated parts to run: regression, oneclass, trap")
    ap.add_argument("--text-C", default="1,cv", help="the C values of the generated set's rows "
                    "(1 and/or cv; its dual rows at the CV-best C take minutes per run)")
    args = ap.parse_args()
    train = os.environ.get("LIBLINEAR_TRAIN", "/work/peers/liblinear/train")
    lines = []

    def log(s):
        print(s, file=sys.stderr, flush=True)

    from sklearn.datasets import load_diabetes
    from linsvm.io.synth import make_text_regression

    sets = []
    deb = data_path("regression/debian-deps-size.train.bz2")
    deb_test = data_path("regression/debian-deps-size.test.bz2")
    if deb is not None:
        X, y = load_svmlight(deb)
        plain = os.path.join(tempfile.gettempdir(), "debian-deps-size.train.svm")
        if not os.path.exists(plain):        # LIBLINEAR's train reads no bzip2
            dump_svmlight(X, y, plain)
        sets.append(("debian-deps-size", X, y, plain))
    Xd, yd = load_diabetes(return_X_y=True)
    sets.append(("diabetes", sp.csr_matrix(Xd), yd, None))
    text_file = None
    if not args.skip_text:
        Xt, yt = make_text_regression(n_samples=args.text_rows, n_features=20000, avg_length=30,
                                      offset=3.0, seed=0)
        text_file = os.path.join(tempfile.gettempdir(), f"text-regression-{args.text_rows}.svm")
        if not os.path.exists(text_file):
            dump_svmlight(Xt, yt, text_file)
        sets.append((f"text-regression ({args.text_rows // 1000}k)", Xt, yt, text_file))

    parts = set(args.only.split(","))
    table, e2e, cvs = [], [], []
    for name, X, y, path in (sets if "regression" in parts else []):
        nc = min(X.shape[0], args.cv_rows)
        C_cv, mse = cv_best_C(X[:nc], y[:nc])
        cvs.append(f"{name}: CV-best C = {C_cv:g} (5-fold MSE " + ", ".join(
            f"{C:g}: {v:.4g}" for C, v in mse.items()) + ")")
        log(cvs[-1])
        Cs = (1.0,) if C_cv == 1.0 else (1.0, C_cv)
        if name.startswith("text"):
            Cs = tuple(C for C, key in ((1.0, "1"), (C_cv, "cv")) if key in args.text_C.split(","))
        table += defaults_rows(name, X, y, Cs, args.rounds, log)
        if path is not None and os.path.exists(train):
            e2e += end_to_end_rows(name, path, 1.0, args.rounds, train, log)
    for name in (("a9a", "w8a", "ijcnn1.bz2") if "oneclass" in parts else ()):
        p = data_path(f"binary/{name}")
        if p is not None:
            X, _ = load_svmlight(p)
            table += oneclass_rows(name.replace(".bz2", ""), X, args.rounds, log)
    trap = []
    if deb is not None and deb_test is not None and "trap" in parts:
        Xtr, ytr = load_svmlight(deb)
        Xte, yte = load_svmlight(deb_test, n_features=Xtr.shape[1])
        trap = trap_rows(Xtr, ytr, Xte[:, :Xtr.shape[1]], yte, 1.0, log)

    lines += ["# Regression and one-class solvers against LIBLINEAR (examples/bench_regression.py)", ""]
    lines += machine_header() + [""]
    lines += ["## At both programs' defaults", "",
              "Relative objective gap (F - F*)/|F*| and CPU seconds of the training call in "
              "process (one thread), medians of %d interleaved rounds; the same problem for both "
              "(-B 1 regularized; -p 0.1; -s 21 without bias)." % args.rounds, ""]
    lines += cvs + [""]
    lines += markdown_table(["set", "C / nu", "problem", "gap linsvm", "gap LIBLINEAR",
                             "CPU s linsvm", "CPU s LIBLINEAR", "time ratio"], table) + [""]
    if e2e:
        lines += ["## End to end (wall seconds, read the file and train)", ""]
        lines += ["Wall seconds of a fresh process: linsvm's (Python start, imports, reading the "
                  "file, the fit) and LIBLINEAR's `train` (reading, training, writing the model); "
                  "the imports of numpy/scipy/linsvm are shown apart.", ""]
        lines += markdown_table(["set", "C", "problem", "linsvm", "of which imports",
                                 "linsvm w/o imports", "LIBLINEAR train", "ratio",
                                 "ratio w/o imports"], e2e) + [""]
    if trap:
        lines += ["## The free intercept (debian-deps-size test split, C = 1)", "",
                  "Test MSE and squared correlation coefficient (as LIBLINEAR's predict prints "
                  "them); the last column is the MSE of predicting the training mean.", ""]
        lines += markdown_table(["targets", "model", "MSE", "SCC", "MSE of the mean"], trap) + [""]
    text = "\n".join(lines) + "\n"
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
