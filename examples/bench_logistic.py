"""Logistic regression at the defaults: linsvm lr / lr-dual against LIBLINEAR -s 0 / -s 7,
lr's probabilities against LIBLINEAR -s 0 -b 1's, softmax against scikit-learn on SECTOR.

    python examples/bench_logistic.py [--parts defaults,logloss,softmax] [--datasets a9a,...]
        [--pairs lr,lr-dual] [--C 1,cv] [--repeats 3] [--liblinear-train PATH]
        [--e2e-min-nnz 400000] [--out DIR]

1. Defaults (as examples/bench_defaults.py, README "At the defaults"): a user types
   `linsvm-train -s lr data model` or LIBLINEAR's `train -s 0 data model` and takes what comes
   out.  Pairs: lr (`-s lr`) against LIBLINEAR `-s 0 -B 1` (default -e 0.01), lr-dual
   (`-s lr-dual`) against `-s 7 -B 1` (default -e 0.1); both libraries minimize
   1/2||w||^2 + C sum log(1 + exp(-y w.x)) with a regularized bias feature of value 1.
   Data: every binary set under $LINSVM_DATA/binary, synth-text-160k (harness.SYNTH_SETS:
   120k x 200k in training) and synth-imb-680k: linsvm.io.synth.make_text_classification with
   680k documents, 200k words and 64 topics, relabelled one topic against the rest (1.6%
   positives; the generator has no imbalance knob), the last quarter held out (510k rows in
   training).  C: 1 and the CV C that LIBLINEAR's own `train -C -s 0 -B 1` picks (5-fold CV
   over its C path; --C).  For each row:
   - gap: (f - f*)/|f*|, f computed here with numpy from the returned weights, f* the smaller
     objective of two tight runs (lr -e 1e-10 and LIBLINEAR -s 0 -e 1e-8); the reference table
     prints (f* - D)/|f*| with D the tight lr run's dual bound (the certificate of f*).
     Medians over the rounds (LIBLINEAR -s 7 permutes with an unseeded rand()).
   - time in one process: linsvm.train() on a prebuilt CSRBuffers against liblinear.train() on
     a prebuilt problem, one untimed call each, then --repeats interleaved rounds in
     alternating order; CPU = time.thread_time() of the call (the machine is shared: the
     CPU ratio is the measure; one kernel thread everywhere), ratio = median of the per-round
     ratios linsvm / LIBLINEAR (< 1: linsvm faster).
   - end to end, on sets with at least --e2e-min-nnz non-zeros: `python -m linsvm train -q -s
     NAME -c C DATA MODEL` against LIBLINEAR's `train -q -s S -c C -B 1 DATA MODEL` (built from
     its public source outside this repository: --liblinear-train or $LIBLINEAR_TRAIN), parse +
     train + save, the children's CPU time (getrusage), --repeats interleaved rounds.
2. Log loss: lr's probabilities sigma(w.x) (defaults) against LIBLINEAR -s 0's (defaults,
   `predict -b 1`, here liblinearutil.predict(..., "-b 1")) on the test sets a9a.t, w7a.t,
   ijcnn1.t and the generated sets' held-out quarter, at both C; also the log loss of the
   tight reference's probabilities.
3. Softmax on SECTOR (6412 x 55197, 105 classes; C = 1): linsvm `-s softmax` at its defaults
   against scikit-learn LogisticRegression(solver="lbfgs", C=1, fit_intercept=False) at its
   defaults on X with an explicit column of ones (so that both minimize the same f: scikit-learn
   does not regularize its own intercept); the objective each reaches against f* (softmax
   -e 1e-8), CPU time (this script pins BLAS / OpenMP to one thread), test accuracy and log
   loss on sector.t.

Output: Markdown on stdout, progress on stderr; with --out DIR also DIR/bench_logistic.json.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")                  # one thread for every library

import argparse          # noqa: E402
import bz2               # noqa: E402
import json              # noqa: E402
import pathlib           # noqa: E402
import re                # noqa: E402
import resource          # noqa: E402
import subprocess        # noqa: E402
import sys               # noqa: E402
import tempfile          # noqa: E402
import time              # noqa: E402
import warnings          # noqa: E402

import numpy as np       # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H      # noqa: E402  (puts this checkout's in-place build first on sys.path)

import linsvm            # noqa: E402

PAIRS = {"lr": ("lr", 0, 0.01), "lr-dual": ("lr-dual", 7, 0.1)}    # linsvm solver, -s, LIBLINEAR's -e
SYNTH = ("synth-text-160k", "synth-imb-680k")
LOGLOSS_SETS = ("a9a", "w7a", "ijcnn1", "synth-text-160k", "synth-imb-680k")
REF_TOL, REF_LIBLINEAR_EPS = 1e-10, 1e-8


# ---------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------

def imbalanced_dataset():
    """synth-imb-680k (module docstring): topic 1 of 64 against the rest, a quarter held out."""
    from linsvm.io.synth import make_text_classification

    X, y = make_text_classification(n_samples=680000, n_features=200000, n_classes=64, seed=2)
    y = np.where(y == 1.0, 1.0, -1.0)
    n_train = 510000
    classes = H.binary_class_order(y[:n_train])
    t = np.where(y[:n_train] == classes[0], 1.0, -1.0)
    return H.Dataset(name="synth-imb-680k", X=X[:n_train], y=y[:n_train], t=t, classes=classes,
                     Xt=X[n_train:], yt=y[n_train:], test_name="held-out quarter")


def load(root, name):
    if name == "synth-imb-680k":
        return imbalanced_dataset()
    if name in H.SYNTH_SETS:
        return H.synth_dataset(name)
    for fname in (name, name + ".bz2"):
        if (root / "binary" / fname).is_file():
            return H.load_dataset(root, fname)
    return None


def binary_names(root):
    folder = root / "binary"
    files = sorted(p.name for p in folder.iterdir() if p.is_file()) if folder.is_dir() else []
    tests = {H.test_file_name(f) for f in files}
    return [f.removesuffix(".bz2") for f in files if f not in tests]


def text_file(root, ds, tmp):
    """An uncompressed SVM-light file of the training set (LIBLINEAR's train reads neither
    compressed files nor blank lines)."""
    path = tmp / f"{ds.name}.svm"
    if path.exists():
        return path
    src = None
    for fname in (ds.name, ds.name + ".bz2"):
        if (root / "binary" / fname).is_file():
            src = root / "binary" / fname
    if src is None:
        from linsvm import dump_svmlight
        dump_svmlight(ds.X, ds.y, path)
        return path
    opener = bz2.open if str(src).endswith(".bz2") else open
    with opener(src, "rb") as fi, open(path, "wb") as fo:
        for line in fi:
            if line.strip():
                fo.write(line)
    return path


def liblinear_cv_C(program, data):
    """The C LIBLINEAR's `train -C -s 0 -B 1` picks (5-fold CV along its C path)."""
    out = subprocess.run([str(program), "-C", "-s", "0", "-B", "1", "-v", "5", str(data)],
                         capture_output=True, text=True, check=True).stdout
    found = re.findall(r"Best C = ([0-9.eE+-]+)\s+CV accuracy = ([0-9.]+)%", out)
    if not found:
        raise RuntimeError(f"no 'Best C' in the output of train -C:\n{out[-500:]}")
    return float(found[-1][0]), float(found[-1][1]) / 100


# ---------------------------------------------------------------------------
# objectives and probabilities, in numpy from the weights
# ---------------------------------------------------------------------------

def lr_objective(ds, sol, C):
    """1/2 ||(w, b)||^2 + C sum log(1 + exp(-t (Xw + b)))."""
    m = ds.t * (ds.X @ sol[:-1] + sol[-1])
    return 0.5 * float(sol @ sol) + C * float(np.sum(np.logaddexp(0.0, -m)))


def log_loss_binary(ds, sol):
    """Mean -log p(y | x) on the test set, p(classes[0] | x) = sigma(w.x + b)."""
    m = np.where(ds.yt == ds.classes[0], 1.0, -1.0) * (ds.Xt @ sol[:-1] + sol[-1])
    return float(np.mean(np.logaddexp(0.0, -m)))


def linsvm_solution(ds, model):
    W = np.asarray(model.weights, dtype=np.float64)
    if not np.array_equal(np.asarray(model.classes_), np.asarray(ds.classes)):
        raise RuntimeError("linsvm's class order differs from the data set's")
    nf = model.n_features_
    if nf < ds.d:
        W = np.vstack([W[:nf], np.zeros((ds.d - nf, W.shape[1])), W[nf:]])
    return W[:, 0].copy()


def liblinear_solution(ds, model):
    w, b = H.liblinear_weights(ds, model)
    return np.append(w, b)


# ---------------------------------------------------------------------------
# part 1: the defaults table
# ---------------------------------------------------------------------------

def reference(ds, C, cache):
    """(f*, source, {run: f}, the tight lr run's dual bound)."""
    dual = []

    def tight_lr():
        model = linsvm.train(H.linsvm_problem(ds, cache), ds.y, solver="lr", C=C, tol=REF_TOL)
        dual.append(model.stats["dual_objective"])
        cache[f"ref-{C}"] = linsvm_solution(ds, model)
        return lr_objective(ds, cache[f"ref-{C}"], C)

    def tight_liblinear():
        _, model = H.liblinear_train(H.liblinear_problem(ds, cache),
                                     H.liblinear_options(0, C, REF_LIBLINEAR_EPS))
        return lr_objective(ds, liblinear_solution(ds, model), C)

    fstar, source, values = H.reference_optimum({f"lr -e {REF_TOL:g}": tight_lr,
                                                 f"LIBLINEAR -s 0 -e {REF_LIBLINEAR_EPS:g}": tight_liblinear})
    return fstar, source, values, dual[0]


def runner(ds, C, run, cache):
    """A function training `run` once: (solution, wall, thread CPU) -- only the call timed."""
    from liblinear import liblinearutil as L

    kind, name = run
    if kind == "linsvm":
        X = H.linsvm_problem(ds, cache)

        def go():
            model, wall, cpu, _ = H.clocks(lambda: linsvm.train(X, ds.y, solver=name, C=C))
            return linsvm_solution(ds, model), wall, cpu, model.stats
        return go
    prob = H.liblinear_problem(ds, cache)

    def go():
        param = L.parameter(f"-s {name} -c {C!r} -B 1 -q")
        model, wall, cpu, _ = H.clocks(lambda: L.train(prob, param))
        return liblinear_solution(ds, model), wall, cpu, None
    return go


def command(run, C, data, model_path, program):
    kind, name = run
    if kind == "linsvm":
        return [sys.executable, "-m", "linsvm", "train", "-q", "-s", name, "-c", repr(C),
                str(data), str(model_path)]
    return [str(program), "-q", "-s", str(name), "-c", repr(C), "-B", "1", str(data), str(model_path)]


def run_command(cmd, env):
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def bench_case(ds, C, pairs, fstar, cache, args, data_file, tmp):
    runs = []
    for p in pairs:
        runs += [("linsvm", PAIRS[p][0]), ("liblinear", PAIRS[p][1])]
    rec = {r: {"wall": [], "cpu": [], "gap": [], "e2e_wall": [], "e2e_cpu": [], "stats": None}
           for r in runs}
    go = {r: runner(ds, C, r, cache) for r in runs}
    for r in runs:
        go[r]()                                     # untimed first call
    timed = H.interleaved(go, args.repeats, alternate=True, after_round=lambda k, res: H.log(
        f"     round {k + 1}/{args.repeats}: " + ", ".join(
            f"{r[1]} {res[r][-1][2] * 1000:.1f} ms" for r in runs)))
    for r in runs:
        for sol, wall, cpu, stats in timed[r]:
            rec[r]["wall"].append(wall)
            rec[r]["cpu"].append(cpu)
            rec[r]["gap"].append(H.relative_gap(lr_objective(ds, sol, C), fstar))
            if stats is not None:
                rec[r]["stats"] = {k: v for k, v in stats.items() if isinstance(v, (int, float))}
        rec[r]["solution"] = timed[r][0][0]
    if data_file is not None:
        env = H.child_env(OMP_NUM_THREADS="1")
        for k in range(args.repeats):
            for i, r in enumerate(H.rounds_order(runs, k)):
                path = tmp / f"model-{i}-{k}"
                wall, cpu = run_command(command(r, C, data_file, path, args.liblinear_train), env)
                rec[r]["e2e_wall"].append(wall)
                rec[r]["e2e_cpu"].append(cpu)
                path.unlink()
    return rec


COLUMNS = ("data set", "n", "C", "linsvm", "LIBLINEAR", "gap linsvm", "gap LIBLINEAR",
           "CPU linsvm", "CPU LIBLINEAR", "CPU ratio", "end-to-end CPU linsvm",
           "end-to-end CPU LIBLINEAR", "end-to-end CPU ratio", "linsvm iters")


def fmt_gap(x):
    return "—" if x is None else ("0" if x == 0 else f"{x:.1e}")


def defaults_rows(cases):
    rows = []
    for case in cases:
        for p in case["pairs"]:
            lin, ll = ("linsvm", PAIRS[p][0]), ("liblinear", PAIRS[p][1])
            x, y = case["runs"][lin], case["runs"][ll]
            st = x["stats"] or {}
            iters = f"{st.get('n_iter', '?')}" + (f" / cg {st['cg_iter']}" if "cg_iter" in st else "")
            rows.append([case["dataset"], case["n"], f"{case['C']:g}" + (" (CV)" if case["cv"] else ""),
                         f"-s {p}", f"-s {PAIRS[p][1]}",
                         fmt_gap(H.median(x["gap"])), fmt_gap(H.median(y["gap"])),
                         H.fmt_s(H.median(x["cpu"])), H.fmt_s(H.median(y["cpu"])),
                         f"{H.paired_ratio(x['cpu'], y['cpu']):.2f}",
                         H.fmt_s(H.median(x["e2e_cpu"])) if x["e2e_cpu"] else "—",
                         H.fmt_s(H.median(y["e2e_cpu"])) if y["e2e_cpu"] else "—",
                         f"{H.paired_ratio(x['e2e_cpu'], y['e2e_cpu']):.2f}" if x["e2e_cpu"] else "—",
                         iters])
    return rows


# ---------------------------------------------------------------------------
# part 2: log loss of the probabilities
# ---------------------------------------------------------------------------

def logloss_case(ds, C, cache):
    from liblinear import liblinearutil as L

    model = linsvm.train(H.linsvm_problem(ds, cache), ds.y, solver="lr", C=C)
    ours = log_loss_binary(ds, linsvm_solution(ds, model))
    _, ll = H.liblinear_train(H.liblinear_problem(ds, cache), H.liblinear_options(0, C))
    Xt = ds.Xt[:, :ll.nr_feature] if ds.Xt.shape[1] > ll.nr_feature else ds.Xt
    _, _, probs = L.predict(ds.yt, Xt, ll, "-b 1 -q")
    probs = np.asarray(probs)
    col = ll.get_labels().index(int(ds.classes[0])) if ds.classes[0] == int(ds.classes[0]) else 0
    p_pos = np.clip(probs[:, col], 1e-300, 1.0)
    p_neg = np.clip(1.0 - probs[:, col], 1e-300, 1.0)
    theirs = float(np.mean(-np.log(np.where(ds.yt == ds.classes[0], p_pos, p_neg))))
    ref = cache.get(f"ref-{C}")
    tight = log_loss_binary(ds, ref) if ref is not None else None
    return {"linsvm": ours, "liblinear": theirs, "tight": tight}


# ---------------------------------------------------------------------------
# part 3: softmax against scikit-learn on SECTOR
# ---------------------------------------------------------------------------

def softmax_objective(ds, W, C):
    S = np.asarray(ds.Xa @ W)
    lse = np.logaddexp.reduce(S, axis=1)
    return 0.5 * float(np.sum(W * W)) + C * float(np.sum(lse - S[np.arange(len(ds.codes)), ds.codes]))


def softmax_test(ds, W):
    if ds.Xt is None:
        return None, None
    S = np.asarray(H.augmented(ds.Xt) @ W)
    lse = np.logaddexp.reduce(S, axis=1)
    index = {float(c): j for j, c in enumerate(ds.classes)}
    known = np.array([float(v) in index for v in ds.yt])
    codes = np.array([index.get(float(v), 0) for v in ds.yt])
    acc = float(np.mean(ds.classes[np.argmax(S, axis=1)] == ds.yt))
    ll = float(np.mean((lse - S[np.arange(len(codes)), codes])[known]))
    return acc, ll


def bench_softmax(root, repeats, C=1.0):
    from sklearn.linear_model import LogisticRegression
    from linsvm.problem import CSRBuffers

    sets = [s for s in H.multiclass_sets(root) if s[0] == "sector"]
    if not sets:
        H.log("skip softmax: SECTOR not found")
        return None
    ds = H.load_multiclass(*sets[0])
    Xb = CSRBuffers(ds.X)
    H.log(f"== sector: {ds.X.shape}, {len(ds.classes)} classes")
    tight = linsvm.train(Xb, ds.y, solver="softmax", C=C, tol=1e-8)
    fstar = softmax_objective(ds, tight.weights, C)
    cert = H.relative_gap(fstar, tight.stats["dual_objective"])

    def ours():
        model, wall, cpu, _ = H.clocks(lambda: linsvm.train(Xb, ds.y, solver="softmax", C=C))
        return model.weights, wall, cpu, model.stats

    def sklearn():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est, wall, cpu, _ = H.clocks(lambda: LogisticRegression(C=C, fit_intercept=False).fit(ds.Xa, ds.y))
        order = [list(est.classes_).index(c) for c in ds.classes]
        return est.coef_.T[:, order], wall, cpu, {"n_iter": int(est.n_iter_[0])}

    res = H.interleaved({"linsvm": ours, "sklearn": sklearn}, repeats, alternate=True,
                        after_round=lambda k, r: H.log(f"     round {k + 1}/{repeats}: " + ", ".join(
                            f"{n} {r[n][-1][2]:.2f} s" for n in r)))
    out = {"fstar": fstar, "certified": cert, "C": C}
    for name, runs in res.items():
        W = runs[0][0]
        acc, ll = softmax_test(ds, W)
        out[name] = {"gap": [H.relative_gap(softmax_objective(ds, r[0], C), fstar) for r in runs],
                     "cpu": [r[2] for r in runs], "wall": [r[1] for r in runs],
                     "n_iter": runs[0][3].get("n_iter"), "accuracy": acc, "log_loss": ll}
    return out


# ---------------------------------------------------------------------------

def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="defaults,logloss,softmax")
    ap.add_argument("--datasets", default=None, help="comma-separated (default: every binary set and "
                    + ", ".join(SYNTH) + ")")
    ap.add_argument("--pairs", default="lr,lr-dual")
    ap.add_argument("--C", dest="Cs", default="1,cv")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--liblinear-train", default=None)
    ap.add_argument("--e2e-min-nnz", type=int, default=400000)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    args.parts = [p.strip() for p in args.parts.split(",") if p.strip()]
    args.pairs = [p.strip() for p in args.pairs.split(",") if p.strip()]
    for p in args.pairs:
        if p not in PAIRS:
            ap.error(f"unknown pair {p!r}")
    args.Cs = [c.strip() for c in args.Cs.split(",") if c.strip()]
    args.liblinear_train, note = H.liblinear_program(args.liblinear_train)
    if args.liblinear_train is None:
        ap.error(f"LIBLINEAR's train is needed (CV C, end-to-end): {note}")
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    root = H.data_root()
    names = [d.strip() for d in args.datasets.split(",")] if args.datasets else \
        binary_names(root) + list(SYNTH)
    header = H.machine_header()
    t_start = time.perf_counter()
    cases, losses, notes = [], [], []
    cv_cache = {}
    out_dir = pathlib.Path(args.out) if args.out else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        if (out_dir / "cv_C.json").exists():
            cv_cache = json.loads((out_dir / "cv_C.json").read_text())
    with tempfile.TemporaryDirectory() as tmpname:
        tmp = pathlib.Path(tmpname)
        for name in names if ("defaults" in args.parts or "logloss" in args.parts) else []:
            ds = load(root, name)
            if ds is None:
                notes.append(f"{name}: not found, skipped")
                continue
            H.log(f"== {ds.name}: {ds.X.shape[0]} x {ds.X.shape[1]}, {ds.X.nnz} non-zeros, "
                  f"{100 * np.mean(ds.t > 0):.1f}% positive")
            data_file = text_file(root, ds, tmp)
            cache = {}
            Cs = []
            for c in args.Cs:
                if c == "cv":
                    if ds.name not in cv_cache:
                        t0 = time.perf_counter()
                        cv_cache[ds.name] = liblinear_cv_C(args.liblinear_train, data_file)
                        H.log(f"   CV C = {cv_cache[ds.name][0]:g} (accuracy {100 * cv_cache[ds.name][1]:.2f}%, "
                              f"{time.perf_counter() - t0:.0f} s)")
                        if out_dir is not None:
                            (out_dir / "cv_C.json").write_text(json.dumps(cv_cache, indent=1))
                    Cs.append((cv_cache[ds.name][0], True))
                else:
                    Cs.append((float(c), False))
            seen = {}
            for C, cv in Cs:
                seen[C] = seen.get(C, False) or cv
            for C, cv in seen.items():
                fstar, source, values, dual = reference(ds, C, cache)
                H.log(f"   C={C:g}: f* = {fstar:.12g} from {source}")
                if "defaults" in args.parts:
                    e2e = data_file if ds.X.nnz >= args.e2e_min_nnz else None
                    runs = bench_case(ds, C, args.pairs, fstar, cache, args, e2e, tmp)
                    cases.append({"dataset": ds.name, "n": ds.X.shape[0], "nnz": ds.X.nnz, "C": C,
                                  "cv": cv, "fstar": fstar, "fstar_source": source,
                                  "fstar_runs": values, "dual_bound": dual, "pairs": args.pairs,
                                  "runs": runs})
                if "logloss" in args.parts and ds.Xt is not None and ds.name in LOGLOSS_SETS:
                    losses.append(dict(logloss_case(ds, C, cache), dataset=ds.name, C=C, cv=cv))
            data_file.unlink()
            save(out_dir, header, cases, losses, None, notes, args, argv, t_start)
    soft = bench_softmax(root, args.repeats) if "softmax" in args.parts else None
    print(save(out_dir, header, cases, losses, soft, notes, args, argv, t_start))
    return 0


def save(out_dir, header, cases, losses, soft, notes, args, argv, t_start):
    """The report so far as Markdown (returned), and with --out also DIR/bench_logistic.md and
    DIR/bench_logistic.json (written after every data set, so that a stopped run keeps what
    it measured)."""
    text = report(cases, losses, soft, header, notes, args, argv, t_start)
    if out_dir is not None:
        plain = [dict(case, runs={f"{k[0]} {k[1]}": {kk: vv for kk, vv in v.items() if kk != "solution"}
                                  for k, v in case["runs"].items()}) for case in cases]
        (out_dir / "bench_logistic.json").write_text(json.dumps(
            {"header": header, "cases": plain, "log_loss": losses, "softmax": soft}, indent=1,
            default=float) + "\n")
        (out_dir / "bench_logistic.md").write_text(text + "\n")
    return text


def report(cases, losses, soft, header, notes, args, argv, t_start):
    out = ["# Logistic regression at the defaults", ""] + [f"- {h}" for h in header]
    out += [f"- {n}" for n in notes]
    out.append(f"- Run: `python examples/bench_logistic.py {' '.join(sys.argv[1:] if argv is None else argv)}`, "
               f"{time.perf_counter() - t_start:.0f} s; load average at the end {H.load_average()}.")
    if cases:
        out += ["", "## linsvm against LIBLINEAR, each at its defaults", "",
                f"Medians of {args.repeats} interleaved rounds; gap (f - f*)/|f*| from numpy on the "
                "weights; CPU = thread CPU time of the train call in one process; end to end = "
                "children's CPU of the commands (parse + train + save), on sets with at least "
                f"{args.e2e_min_nnz} non-zeros; ratios linsvm / LIBLINEAR (median of per-round "
                "ratios; < 1: linsvm faster).", ""]
        out += H.markdown_table(COLUMNS, defaults_rows(cases))
        out += ["", "Reference optima (f* the smaller of the two tight runs; certified: (f* - D)/|f*| "
                "with D the tight lr run's dual bound):", "",
                "| data set | C | f* | from | other run's gap | certified |", "|---|---|---|---|---|---|"]
        for case in cases:
            others = "; ".join(f"{k}: {fmt_gap(H.relative_gap(v, case['fstar']))}"
                               for k, v in case["fstar_runs"].items() if k != case["fstar_source"])
            out.append(f"| {case['dataset']} | {case['C']:g} | {case['fstar']:.10g} | {case['fstar_source']} | "
                       f"{others} | {fmt_gap(H.relative_gap(case['fstar'], case['dual_bound']))} |")
    if losses:
        out += ["", "## Test log loss of lr's probabilities", "",
                "| data set | C | lr (defaults) | LIBLINEAR -s 0 -b 1 (defaults) | tight reference |",
                "|---|---|---|---|---|"]
        for r in losses:
            out.append(f"| {r['dataset']} | {r['C']:g}{' (CV)' if r['cv'] else ''} | {r['linsvm']:.6f} | "
                       f"{r['liblinear']:.6f} | {r['tight']:.6f} |")
    if soft:
        out += ["", "## softmax against scikit-learn (lbfgs) on SECTOR, C = 1, each at its defaults", "",
                f"f* = {soft['fstar']:.10g} (softmax -e 1e-8, certified to {fmt_gap(soft['certified'])}); "
                f"medians of {args.repeats} interleaved rounds; one thread.", "",
                "| solver | gap (f - f*)/f* | CPU s | wall s | iterations | test accuracy | test log loss |",
                "|---|---|---|---|---|---|---|"]
        for name, label in (("linsvm", "linsvm -s softmax"), ("sklearn", "LogisticRegression(lbfgs)")):
            r = soft[name]
            out.append(f"| {label} | {fmt_gap(H.median(r['gap']))} | {H.median(r['cpu']):.2f} | "
                       f"{H.median(r['wall']):.2f} | {r['n_iter']} | {100 * r['accuracy']:.2f}% | "
                       f"{r['log_loss']:.4f} |")
        out.append(f"\nCPU ratio linsvm / scikit-learn: {H.paired_ratio(soft['linsvm']['cpu'], soft['sklearn']['cpu']):.2f}")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
