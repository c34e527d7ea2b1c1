"""The "defaults" benchmark (issue 15): linsvm and LIBLINEAR as a user runs them, no -e chosen.

    python examples/bench_defaults.py [--quick] [--datasets a9a,sector] [--pairs mfn,dcd-l1]
        [--repeats 5] [--C 1,cv] [--linsvm-options mfn:tol=0.01,gtol=0.003]
        [--liblinear-train PATH] [--out DIR]

A user types `linsvm-train data model` or LIBLINEAR's `train data model` and
takes what comes out.  This script measures exactly that, pair by pair, where
the two libraries minimize the same objective:

    pair     linsvm                   LIBLINEAR   objective (x with a bias feature 1)
    mfn      -s mfn                   -s 2        1/2||w||^2 + C sum max(0, 1 - t w.x)^2
    dcd-l2   -s dcd --loss l2         -s 1        the same
    dcd-l1   -s dcd --loss l1         -s 3        1/2||w||^2 + C sum max(0, 1 - t w.x)
    mfn-l1   -s mfn-l1                -s 3        the same
    sdm-cs   -s sdm-cs                -s 4        Crammer-Singer (multi-class)

Each library runs at its own defaults: no -e, no iteration caps, linsvm's
default seed; the only options given are -s (and --loss), -c, and LIBLINEAR's
-B 1, which gives it linsvm's default bias feature (value 1, regularized), so
both minimize the same function.  LIBLINEAR's default -e is 0.01 for -s 2 and
0.1 for -s 1, 3, 4.  --linsvm-options adds rows for a named linsvm
configuration (e.g. candidate new defaults: `mfn:tol=0.01,gtol=0.003`, i.e.
`-s mfn -e 0.01 --gtol 0.003`) beside the current defaults, against the same
LIBLINEAR runs.

Data: every binary training file under $LINSVM_DATA/binary (default
<repo>/../shared/datasets; a file NAME.t / NAME.t.bz2 is the test set of
NAME / NAME.bz2), the generated text sets synth-text-533k (400k x 200k in
training) and synth-text-800k (600k x 400k) from linsvm.io.synth, last quarter
held out, and the multi-class sets under $LINSVM_DATA/multiclass (SECTOR) for
sdm-cs.  Data discovery, loading, the objectives, the CV choice of C, LIBLINEAR's
weights and the timing loop come from examples/harness.py.

C: C = 1 and the CV C of each objective (5-fold stratified CV accuracy over
2^-6..2^4 at the default tolerance, ties to the smaller C: mfn for the
squared hinge, dcd --loss l1 for the hinge, sdm-cs for Crammer-Singer).

1. Gap.  f* = the smaller objective of two tight runs: squared hinge, mfn tol
   1e-12 (max_iter 1000) and LIBLINEAR -s 2 -e 1e-8 (as examples/benchmark.py); hinge, dcd
   --loss l1 tol 1e-6 (max_iter 100000) and LIBLINEAR -s 3 -e 1e-6;
   Crammer-Singer, sdm-cs tol 1e-4 (--ref-cs-tol; max_iter 100000) and
   LIBLINEAR -s 4 -e 1e-4.  For the last two, linsvm's tight run also reports
   its dual objective D, a lower bound on the optimum; the reference table
   prints (f* - D)/|f*|, so f*'s own accuracy is known.  Every objective is
   computed here with numpy from the weights, never taken from a solver's
   report.  A cell is the median of (f - f*)/|f*| over the
   timed repeats (LIBLINEAR -s 1, 3, 4 draw their permutations from an unseeded
   rand(), so their repeats differ; linsvm's are identical).
2. Time in one process: each library's input is built once, outside the timer
   (linsvm's CSRBuffers, LIBLINEAR's `problem` from liblinear-official); timed
   is linsvm.train() / liblinear.train() alone.  After one untimed call of
   each (first-call costs are the end-to-end columns' business), --repeats
   rounds, each running every configuration of the data set and C once, in
   alternating order (interleaved, so a burst of load from other processes
   hits all of them).
   Cells are medians of wall time; the ratio columns are linsvm / LIBLINEAR,
   the median over rounds of the ratio within a round, of wall time and of the
   calling thread's CPU time (time.thread_time: what the machine's other load
   does not inflate; linsvm's kernels are single-threaded below 4M non-zeros,
   so it is the whole work on every shared set here).  Below 1: linsvm is faster.
3. Time end to end, as commands: `python -m linsvm train -q -s ... -c C DATA
   MODEL` (the linsvm-train entry point, run with the interpreter and the
   checkout this script imports) vs LIBLINEAR's `train -q -s S -c C -B 1 DATA
   MODEL` built from its public source, outside this repository (path from
   --liblinear-train or $LIBLINEAR_TRAIN; without it these columns are
   skipped with a note).  Parse + train + save, same uncompressed text file
   for both (a .bz2 set is decompressed once beforehand; a generated one is
   written once), --repeats interleaved rounds, median wall time and the
   ratio as in 2, of wall time and of the children's CPU time (getrusage:
   user + system, interpreter start-up and imports included).  The first
   round's saved models are read back and their gaps recorded in the JSON.
4. Test accuracy, where a test set exists (median over the repeats).

The machine this runs on may be shared: the header records the load average;
read the CPU ratios beside the wall ratios.  Output: Markdown on stdout,
progress on stderr; with --out DIR also DIR/bench_defaults.json (every timing,
gap, reference) and DIR/weights_<set>_C<C>_<objective>.npz (the weights of
every timed run, keys "<run label>#<round>").
"""
from __future__ import annotations

import argparse
import bz2
import dataclasses
import json
import os
import pathlib
import resource
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)

import linsvm  # noqa: E402

SYNTH = ("synth-text-533k", "synth-text-800k")
QUICK_DATASETS = ("a9a", "heart_scale")
LIBLINEAR_DEFAULT_EPS = {1: 0.1, 2: 0.01, 3: 0.1, 4: 0.1}
REF_L2 = ("mfn", {}, 1e-12, 1000, 2, 1e-8)   # linsvm solver, options, tol, max_iter; LIBLINEAR -s, -e
REF_HINGE_TOL = 1e-6
REF_CS_TOL = 1e-4
REF_MAX_ITER = 100000


@dataclasses.dataclass(frozen=True)
class Pair:
    """linsvm solver (+ fixed options) and the LIBLINEAR -s code with the same objective."""

    name: str
    solver: str
    options: tuple          # ((name, value), ...) that define the pair, e.g. the loss
    s: int
    objective: str          # "l2" squared hinge, "l1" hinge, "cs" Crammer-Singer


PAIRS = {p.name: p for p in (
    Pair("mfn", "mfn", (), 2, "l2"),
    Pair("dcd-l2", "dcd", (("loss", "l2"),), 1, "l2"),
    Pair("dcd-l1", "dcd", (("loss", "l1"),), 3, "l1"),
    Pair("mfn-l1", "mfn-l1", (), 3, "l1"),
    Pair("sdm-cs", "sdm-cs", (), 4, "cs"),
)}
OBJECTIVE_NAMES = {"l2": "squared hinge", "l1": "hinge", "cs": "Crammer-Singer"}


@dataclasses.dataclass(frozen=True)
class Config:
    """One linsvm configuration of a pair: its defaults (extra == ()) or named options."""

    pair: Pair
    extra: tuple = ()

    @property
    def label(self):
        opts = "".join(f" --{k} {v}" for k, v in self.pair.options)
        extra = ",".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}" for k, v in self.extra)
        return f"linsvm {self.pair.solver}{opts} " + (f"[{extra}]" if extra else "(defaults)")

    def options(self):
        return dict(self.pair.options + self.extra)

    def cli_args(self):
        """The linsvm-train options that select this configuration."""
        args = ["-s", self.pair.solver]
        for k, v in self.pair.options + self.extra:
            if k == "tol":
                args += ["-e", repr(float(v))]
            elif isinstance(v, bool):
                args.append(f"--{k.replace('_', '-')}" if v else f"--no-{k.replace('_', '-')}")
            else:
                args += [f"--{k.replace('_', '-')}", str(v)]
        return args


def liblinear_label(s):
    return f"LIBLINEAR -s {s} -B 1"


def parse_value(text):
    """'0.01' -> 0.01, 'true' -> True, 'l1' -> 'l1' (an option value of --linsvm-options)."""
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    try:
        return int(text) if text.lstrip("-").isdigit() else float(text)
    except ValueError:
        return text


def parse_config(text):
    """'mfn:tol=0.01,gtol=0.003' -> Config(PAIRS['mfn'], (('tol', 0.01), ('gtol', 0.003)))."""
    pair, sep, rest = text.partition(":")
    if pair not in PAIRS or not sep:
        raise ValueError(f"--linsvm-options {text!r}: expected PAIR:NAME=VALUE,... with PAIR one of "
                         f"{', '.join(PAIRS)}")
    extra = []
    for item in rest.split(","):
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"--linsvm-options {text!r}: {item!r} is not NAME=VALUE")
        extra.append((key.strip(), parse_value(value.strip())))
    return Config(PAIRS[pair], tuple(extra))


# ---------------------------------------------------------------------------
# data: a binary set is a harness.Dataset, a multi-class one a harness.MultiDataset
# ---------------------------------------------------------------------------

def binary_names(root):
    """Training files under root/binary (a file that is another's test file is not one)."""
    folder = root / "binary"
    if not folder.is_dir():
        return []
    files = sorted(p.name for p in folder.iterdir() if p.is_file())
    tests = {H.test_file_name(f) for f in files}
    return [f for f in files if f not in tests]


def available(root):
    """{display name: (kind, locator)} of every data set this script can run."""
    found = {}
    for f in binary_names(root):
        found[f.removesuffix(".bz2")] = ("binary", f)
    for name in SYNTH:
        found[name] = ("binary", name)
    for name, path, test in H.multiclass_sets(root):
        found[name] = ("multiclass", (name, path, test))
    return found


def load(root, kind, locator):
    if kind == "binary":
        return H.load_dataset(root, locator)
    return H.load_multiclass(*locator)


def text_file(root, kind, locator, ds, tmp):
    """An uncompressed SVM-light file of the training set, for the commands."""
    if kind == "binary" and locator in H.SYNTH_SETS:
        path = tmp / f"{locator}.svm"
        if not path.exists():
            from linsvm.io.svmlight import dump_svmlight
            dump_svmlight(ds.X, ds.y, path)
        return path
    src = root / "binary" / locator if kind == "binary" else locator[1]
    opener = bz2.open if str(src).endswith(".bz2") else open
    with opener(src, "rb") as fh:
        blank = any(not line.strip() for line in fh)
    if opener is open and not blank:
        return pathlib.Path(src)
    # LIBLINEAR's train reads neither compressed files nor blank lines (w8a ends in one:
    # "Wrong input format at line 49750"): both commands read the same plain copy
    path = tmp / pathlib.Path(src).name.removesuffix(".bz2")
    if not path.exists():
        with opener(src, "rb") as fi, open(path, "wb") as fo:
            for line in fi:
                if line.strip():
                    fo.write(line)
    return path


# ---------------------------------------------------------------------------
# weights and objectives: a solution is a vector (w, b) or a (d + 1) x k matrix
# ---------------------------------------------------------------------------

def linsvm_solution(ds, model):
    """linsvm's weights in the data set's class order (binary: the vector (w, b))."""
    W = np.asarray(model.weights, dtype=np.float64)
    if not np.array_equal(np.asarray(model.classes_), np.asarray(ds.classes)):
        raise RuntimeError("linsvm's class order differs from the data set's")
    nf = model.n_features_
    if nf < ds.d:       # trained from the file: as wide as its largest index (a1a: 119 of 123)
        W = np.vstack([W[:nf], np.zeros((ds.d - nf, W.shape[1])), W[nf:]])
    return W[:, 0].copy() if W.shape[1] == 1 else W.copy()


def liblinear_solution(ds, model, objective):
    if objective == "cs":
        return H.liblinear_W(model, ds.d, ds.classes)
    w, b = H.liblinear_weights(ds, model)
    return np.append(w, b)


def objective_value(ds, sol, C, objective):
    if objective == "cs":
        return H.multiclass_objective("CS", ds, sol, C)
    return H.binary_objective(ds, sol[:-1], sol[-1], C, loss=objective)


def test_accuracy(ds, sol, objective):
    if ds.Xt is None:
        return None
    if objective == "cs":
        return H.multiclass_accuracy(ds, sol)
    return H.binary_accuracy(ds.Xt, ds.yt, ds.classes, sol[:-1], sol[-1])


def reference(ds, C, objective, cache, ref_cs_tol=REF_CS_TOL):
    """(f*, source, {run: F}, dual lower bound or None): the tight runs of the module
    docstring, item 1."""
    solver, opts, tol, max_iter, s, eps = {
        "l2": REF_L2, "l1": ("dcd", {"loss": "l1"}, REF_HINGE_TOL, REF_MAX_ITER, 3, REF_HINGE_TOL),
        "cs": ("sdm-cs", {}, ref_cs_tol, REF_MAX_ITER, 4, ref_cs_tol)}[objective]
    dual = []

    def tight_linsvm():
        model = linsvm.train(H.linsvm_problem(ds, cache), ds.y, solver=solver, C=C, bias=1.0, tol=tol,
                             max_iter=max_iter, **opts)
        # the dual objective of that run is a lower bound on the optimum: f* is certified to
        # (f* - D)/|f*| (the dual is a solver's report, used only for this bound, never as a gap)
        dual.append(None if objective == "l2" else model.stats.get("dual_objective"))
        return objective_value(ds, linsvm_solution(ds, model), C, objective)

    def tight_liblinear():
        _, model = H.liblinear_train(H.liblinear_problem(ds, cache), H.liblinear_options(s, C, eps))
        return objective_value(ds, liblinear_solution(ds, model, objective), C, objective)

    fstar, source, values = H.reference_optimum({f"{solver} tol={tol:g}": tight_linsvm,
                                                 f"liblinear -s {s} -e {eps:g}": tight_liblinear})
    return fstar, source, values, dual[0]


def choose_C(ds, objective):
    """The CV C of the objective (module docstring): harness.choose_cv_C with its solver."""
    if objective == "l2":
        return H.choose_cv_C(ds)
    if objective == "l1":
        return H.choose_cv_C(ds, "dcd", loss="l1")
    return H.choose_cv_C(ds, "sdm-cs")


# ---------------------------------------------------------------------------
# timing
# ---------------------------------------------------------------------------

def in_process_runner(ds, C, run, cache):
    """A function that trains `run` (a Config or a LIBLINEAR -s code) once and returns
    (solution, wall, thread CPU, process CPU); only the train call is timed."""
    from liblinear import liblinearutil as L

    if isinstance(run, Config):
        X = H.linsvm_problem(ds, cache)
        opts = run.options()

        def go():
            model, wall, cpu, pcpu = H.clocks(lambda: linsvm.train(X, ds.y, solver=run.pair.solver,
                                                                 C=C, **opts))
            return linsvm_solution(ds, model), wall, cpu, pcpu
        return go
    s, objective = run
    prob = H.liblinear_problem(ds, cache)

    def go():
        param = L.parameter(f"-s {s} -c {C!r} -B 1 -q")
        model, wall, cpu, pcpu = H.clocks(lambda: L.train(prob, param))
        return liblinear_solution(ds, model, objective), wall, cpu, pcpu
    return go


def command(run, C, data, model_path, liblinear_train):
    if isinstance(run, Config):
        return [sys.executable, "-m", "linsvm", "train", "-q", *run.cli_args(), "-c", repr(C),
                str(data), str(model_path)]
    return [str(liblinear_train), "-q", "-s", str(run[0]), "-c", repr(C), "-B", "1",
            str(data), str(model_path)]


def run_command(cmd, env):
    """Wall seconds and child CPU seconds of one command; raises with its stderr on failure."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - w0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def load_saved(ds, run, path, objective):
    from liblinear import liblinearutil as L

    if isinstance(run, Config):
        return linsvm_solution(ds, linsvm.load_model(path))
    return liblinear_solution(ds, L.load_model(str(path)), objective)


def bench_case(ds, C, objective, configs, fstar, cache, args, data_file, tmp, weights):
    """Every run of one (data set, C, objective): in-process and end-to-end timings, gaps,
    accuracies.  Returns {run label: record}; fills weights[label#round]."""
    runs = list(configs) + sorted({(c.pair.s, objective) for c in configs})
    label = {r: r.label if isinstance(r, Config) else liblinear_label(r[0]) for r in runs}
    rec = {label[r]: {"wall": [], "thread_cpu": [], "process_cpu": [], "gap": [], "accuracy": [],
                      "e2e_wall": [], "e2e_cpu": [], "e2e_gap": None} for r in runs}
    go = {r: in_process_runner(ds, C, r, cache) for r in runs}
    for r in runs:      # one untimed call each: first-call costs belong to the end-to-end columns
        rec[label[r]]["warmup_wall"] = go[r]()[1]
    timed = H.interleaved(go, args.repeats, alternate=True, after_round=lambda k, res: H.log(
        f"     round {k + 1}/{args.repeats}: " + ", ".join(f"{label[r]} {res[r][-1][1]:.3f}s" for r in runs)))
    for r in runs:
        x = rec[label[r]]
        for k, (sol, wall, cpu, pcpu) in enumerate(timed[r]):
            x["wall"].append(wall)
            x["thread_cpu"].append(cpu)
            x["process_cpu"].append(pcpu)
            x["gap"].append(H.relative_gap(objective_value(ds, sol, C, objective), fstar))
            x["accuracy"].append(test_accuracy(ds, sol, objective))
            weights[f"{label[r]}#{k}"] = sol
    if data_file is not None:
        env = H.child_env()
        for k in range(args.repeats):
            for i, r in enumerate(H.rounds_order(runs, k)):
                model_path = tmp / f"model-{i}-{k}"
                wall, cpu = run_command(command(r, C, data_file, model_path, args.liblinear_train), env)
                x = rec[label[r]]
                x["e2e_wall"].append(wall)
                x["e2e_cpu"].append(cpu)
                if k == 0:
                    sol = load_saved(ds, r, model_path, objective)
                    x["e2e_gap"] = H.relative_gap(objective_value(ds, sol, C, objective), fstar)
                model_path.unlink()
            H.log(f"     end-to-end round {k + 1}/{args.repeats}: " + ", ".join(
                f"{label[r]} {rec[label[r]]['e2e_wall'][-1]:.3f}s" for r in runs))
    for r in runs:
        x = rec[label[r]]
        x["kind"] = "linsvm" if isinstance(r, Config) else "liblinear"
        x["command"] = command(r, C, data_file or "DATA", "MODEL", args.liblinear_train or "train")
        x["command"][0] = "linsvm-train" if isinstance(r, Config) else "train"
        if isinstance(r, Config):
            del x["command"][1:4]
        x["vs"] = label[(r.pair.s, objective)] if isinstance(r, Config) else None
    return rec


# ---------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------

COLUMNS = ("data set", "C", "linsvm", "LIBLINEAR", "gap linsvm", "gap LIBLINEAR",
           "train s linsvm", "train s LIBLINEAR", "wall ratio", "CPU ratio",
           "end-to-end s linsvm", "end-to-end s LIBLINEAR", "end-to-end ratio", "end-to-end CPU ratio",
           "test acc linsvm", "test acc LIBLINEAR")


def fmt(x, spec):
    return "—" if x is None else format(x, spec)


def fmt_gap(x):
    return "—" if x is None else ("0" if x == 0 else f"{x:.1e}")


def fmt_acc(x):
    return "—" if x is None else f"{100 * x:.2f}%"


def table_rows(cases):
    """One row per linsvm configuration and case, against its LIBLINEAR pair."""
    rows = []
    for case in cases:
        for lab, x in case["runs"].items():
            if x["kind"] != "linsvm":
                continue
            y = case["runs"][x["vs"]]
            cname = f"{case['C']:g}" + (" (CV)" if case["cv"] else "")
            rows.append([case["dataset"], cname, lab, x["vs"],
                         fmt_gap(H.median(x["gap"])), fmt_gap(H.median(y["gap"])),
                         H.fmt_s(H.median(x["wall"])), H.fmt_s(H.median(y["wall"])),
                         fmt(H.paired_ratio(x["wall"], y["wall"]), ".2f"),
                         fmt(H.paired_ratio(x["thread_cpu"], y["thread_cpu"]), ".2f"),
                         H.fmt_s(H.median(x["e2e_wall"])), H.fmt_s(H.median(y["e2e_wall"])),
                         fmt(H.paired_ratio(x["e2e_wall"], y["e2e_wall"]) if x["e2e_wall"] else None, ".2f"),
                         fmt(H.paired_ratio(x["e2e_cpu"], y["e2e_cpu"]) if x["e2e_cpu"] else None, ".2f"),
                         fmt_acc(H.median(x["accuracy"])), fmt_acc(H.median(y["accuracy"]))])
    return rows


def markdown(cases, header, notes):
    out = ["# linsvm vs LIBLINEAR at their defaults", ""] + [f"- {h}" for h in header]
    out += [f"- {n}" for n in notes] + [""]
    out += H.markdown_table(COLUMNS, table_rows(cases))
    out += ["", "Reference optima:", "",
            "| data set | C | objective | f* | from | other run's gap | certified (f* - D)/abs(f*) |",
            "|---|---|---|---|---|---|---|"]
    for case in cases:
        others = "; ".join(f"{k}: {fmt_gap(H.relative_gap(v, case['fstar']))}"
                           for k, v in case["fstar_runs"].items() if k != case["fstar_source"])
        out.append(f"| {case['dataset']} | {case['C']:g} | {OBJECTIVE_NAMES[case['objective']]} | "
                   f"{case['fstar']:.10g} | {case['fstar_source']} | {others} | "
                   + ("—" if case["dual_bound"] is None
                      else fmt_gap(H.relative_gap(case["fstar"], case["dual_bound"])))
                   + " |")
    return "\n".join(out)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"only {', '.join(QUICK_DATASETS)} (unless --datasets) and the binary pairs")
    ap.add_argument("--datasets", default=None,
                    help="comma-separated data set names (a9a, ijcnn1, sector, synth-text-533k, ...; "
                         "default: all)")
    ap.add_argument("--pairs", default=None,
                    help=f"comma-separated pairs from {', '.join(PAIRS)} "
                         "(default: all; --quick: the binary ones)")
    ap.add_argument("--repeats", type=int, default=5, help="interleaved timed rounds (default 5)")
    ap.add_argument("--C", dest="Cs", default="1,cv",
                    help="comma-separated values of C; 'cv' is the CV C of each objective (default 1,cv)")
    ap.add_argument("--linsvm-options", action="append", default=[], metavar="PAIR:NAME=VALUE,...",
                    help="also run linsvm with these options (a named configuration, e.g. candidate "
                         "defaults mfn:tol=0.01,gtol=0.003); repeatable")
    ap.add_argument("--liblinear-train", default=None,
                    help="LIBLINEAR's `train` program, built from its source outside this repository "
                         "(default $LIBLINEAR_TRAIN); without it no end-to-end columns")
    ap.add_argument("--ref-cs-tol", type=float, default=REF_CS_TOL,
                    help=f"tolerance of the tight Crammer-Singer reference runs (default {REF_CS_TOL:g}; "
                         "the reference table prints the dual bound that certifies f*)")
    ap.add_argument("--out", default=None, help="directory for bench_defaults.json and the weights")
    ap.add_argument("--tmpdir", default=None, help="where to write uncompressed data and models")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    pairs = [p.strip() for p in (args.pairs or "").split(",") if p.strip()]
    if not pairs:
        pairs = [p for p in PAIRS if PAIRS[p].objective != "cs" or not args.quick]
    bad = [p for p in pairs if p not in PAIRS]
    if bad:
        ap.error(f"unknown pair {bad[0]!r} (known: {', '.join(PAIRS)})")
    args.pairs = pairs
    try:
        args.configs = [Config(PAIRS[p]) for p in pairs] + [parse_config(t) for t in args.linsvm_options]
    except ValueError as exc:
        ap.error(str(exc))
    from linsvm.solvers import SOLVERS
    for c in args.configs:
        valid = set(SOLVERS[c.pair.solver].options) | {"tol"}
        for key, _ in c.extra:
            if key not in valid:
                ap.error(f"--linsvm-options: solver {c.pair.solver} has no option {key!r} "
                         f"(valid: {', '.join(sorted(valid))})")
    order = list(PAIRS)     # rows: pair by pair, the defaults first, then named configurations
    args.configs = sorted((c for c in args.configs if c.pair.name in pairs),
                          key=lambda c: (order.index(c.pair.name), c.extra != ()))
    args.Cs = [c.strip() for c in args.Cs.split(",") if c.strip()]
    for c in args.Cs:
        if c != "cv":
            try:
                if not float(c) > 0:
                    raise ValueError
            except ValueError:
                ap.error(f"--C: {c!r} is neither a positive number nor 'cv'")
    args.liblinear_train, note = H.liblinear_program(args.liblinear_train)
    args.e2e_note = None if note is None else f"end-to-end columns skipped: {note}"
    args.datasets = [d.strip().removesuffix(".bz2") for d in (args.datasets or "").split(",") if d.strip()]
    return args


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    root = H.data_root()
    found = available(root)
    names = args.datasets or [n for n in found if not args.quick or n in QUICK_DATASETS]
    objectives = {c.pair.objective for c in args.configs}
    cases, notes = [], []
    t_start = time.perf_counter()
    header = H.machine_header()
    with tempfile.TemporaryDirectory(dir=args.tmpdir) as tmpname:
        tmp = pathlib.Path(tmpname)
        for name in names:
            if name not in found:
                H.log(f"skip {name}: not found under {root} (nor a generated set)")
                notes.append(f"{name}: not found, skipped")
                continue
            kind, locator = found[name]
            wanted = [o for o in ("l2", "l1") if o in objectives] if kind == "binary" else \
                (["cs"] if "cs" in objectives else [])
            if not wanted:
                continue
            ds = load(root, kind, locator)
            if ds is None:
                continue
            H.log(f"== {name}: {ds.X.shape[0]} x {ds.X.shape[1]}, {ds.X.nnz} non-zeros")
            data_file = text_file(root, kind, locator, ds, tmp) if args.liblinear_train else None
            cache = {}
            weights_out = {}
            for objective in wanted:
                configs = [c for c in args.configs if c.pair.objective == objective]
                Cs = []
                for c in args.Cs:
                    if c == "cv":
                        t0 = time.perf_counter()
                        best, acc = choose_C(ds, objective)
                        H.log(f"   CV C ({OBJECTIVE_NAMES[objective]}) = {best:g}, 5-fold accuracy "
                              f"{100 * acc[best]:.2f}% ({time.perf_counter() - t0:.1f}s)")
                        Cs.append((best, True))
                    else:
                        Cs.append((float(c), False))
                seen = {}
                for C, cv in Cs:
                    seen[C] = seen.get(C, False) or cv
                for C, cv in seen.items():
                    fstar, source, values, dual = reference(ds, C, objective, cache, args.ref_cs_tol)
                    H.log(f"   C={C:g} {OBJECTIVE_NAMES[objective]}: f* = {fstar:.12g} from {source}")
                    weights = {}
                    runs = bench_case(ds, C, objective, configs, fstar, cache, args, data_file, tmp, weights)
                    cases.append({"dataset": name, "n": ds.X.shape[0], "d": ds.X.shape[1], "nnz": ds.X.nnz,
                                  "C": C, "cv": cv, "objective": objective, "fstar": fstar,
                                  "fstar_source": source, "fstar_runs": values, "dual_bound": dual,
                                  "runs": runs,
                                  "weights_file": f"weights_{name}_C{C:g}_{objective}.npz"})
                    weights_out[cases[-1]["weights_file"]] = weights
            if args.out:
                out = pathlib.Path(args.out)
                out.mkdir(parents=True, exist_ok=True)
                for fname, weights in weights_out.items():
                    np.savez_compressed(out / fname, **weights)
            cache.clear()
    if args.e2e_note:
        notes.append(args.e2e_note)
    notes += [
        "Each library at its own defaults (no -e; LIBLINEAR's are -e "
        + ", ".join(f"{v:g} for -s {s}" for s, v in LIBLINEAR_DEFAULT_EPS.items())
        + "), LIBLINEAR with -B 1 = linsvm's default bias feature 1: the same objective on both sides.",
        f"Gaps (f - f*)/|f*| from numpy on the weights, medians over {args.repeats} round(s); "
        "train s: linsvm.train() / liblinear.train() in one process, data and problem built outside "
        "the timer; end-to-end s: `linsvm-train -q ... DATA MODEL` vs LIBLINEAR's `train -q ... -B 1 "
        "DATA MODEL` (parse + train + save); medians of interleaved rounds; ratios linsvm / LIBLINEAR "
        "(median of per-round ratios; < 1: linsvm faster); CPU = time.thread_time in process, "
        "the children's user + system time end to end.",
        f"Run: `python examples/bench_defaults.py {' '.join(sys.argv[1:] if argv is None else argv)}`, "
        f"{time.perf_counter() - t_start:.0f} s; load average at the end "
        + "%.2f %.2f %.2f" % os.getloadavg() + ".",
    ]
    text = markdown(cases, header, notes)
    print(text)
    if args.out:
        out = pathlib.Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        payload = {"header": header, "notes": notes, "cases": cases,
                   "protocol": {"ref_hinge_tol": REF_HINGE_TOL, "ref_cs_tol": args.ref_cs_tol,
                                "ref_mfn_tol": REF_L2[2], "ref_liblinear_s2_tol": REF_L2[5],
                                "repeats": args.repeats}}
        (out / "bench_defaults.json").write_text(json.dumps(payload, indent=1, default=str) + "\n")
        H.log(f"wrote {out / 'bench_defaults.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
