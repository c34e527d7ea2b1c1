"""Models and predictions of every solver on the shared data sets, for refactoring.

A change that should not alter behaviour (issue "one fit contract and a tidier house")
must leave every model file and every prediction file the same, byte for byte, except
the training time.  Run

    python tools/model_regression.py write BEFORE_DIR      # on the old tree
    python tools/model_regression.py write AFTER_DIR       # on the new tree
    python tools/model_regression.py compare BEFORE_DIR AFTER_DIR

`write DIR TAG...` runs only the runs whose tag contains one of the TAGs (a solver's
name, say: `write after mfn-ovr svr`); `compare` then lists the files of the other runs
as "only in".

`write` trains through the command line (`python -m linsvm train`, so the parser, the
option handling, train() and the model writer all take part) on a matrix of solvers,
options, data sets and costs, and predicts the matching test split with each model.
`compare` lists the files that differ (ignoring the `stat seconds` line) and exits 1 if
any does.  Data come from $LINSVM_DATA (default ../shared/datasets); runs whose data
set is absent are skipped.  The linsvm that runs is the one `python -m linsvm` imports
(run from the repository root with an in-place build to test the checkout).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DATA = Path(os.environ.get("LINSVM_DATA", Path(__file__).resolve().parents[1].parent / "shared" / "datasets"))

BINARY = [("heart_scale", "heart_scale"), ("australian", "australian"), ("a1a", "a1a.t"),
          ("w1a", "w1a.t")]
# (name, solver options) for the binary sets; each also runs at -B -1 on the first two sets.
BINARY_RUNS = [
    ("mfn", ["-s", "mfn"]),
    ("mfn-code2", ["-s", "2"]),
    ("mfn-subset", ["-s", "mfn", "--subset", "0.5"]),
    ("mfn-kkt", ["-s", "mfn", "--kkt-tol", "1e-6"]),
    ("mfn-twopass", ["-s", "mfn", "--no-fused-cg", "--jacobi-weight", "1"]),
    ("mfn-gtol", ["-s", "mfn", "-e", "0.01", "--gtol", "0.003"]),
    ("dcd-l1", ["-s", "dcd", "--loss", "l1"]),
    ("dcd-l2", ["-s", "dcd", "--loss", "l2"]),
    ("ls", ["-s", "ls"]),
    ("mfn-huber", ["-s", "mfn-huber"]),
    ("mfn-l1", ["-s", "mfn-l1"]),
    ("alm", ["-s", "alm"]),
    ("alm-p1", ["-s", "alm", "--p", "1"]),
    ("alm-exact", ["-s", "alm-exact"]),
    ("perf", ["-s", "perf"]),
    ("lr", ["-s", "lr"]),
    ("lr-free-bias", ["-s", "lr", "-R"]),
    ("lr-dual", ["-s", "lr-dual"]),
    ("cdn", ["-s", "cdn"]),
    ("glmnet", ["-s", "glmnet"]),
]
MULTICLASS = [("sector.scale.bz2", "sector.t.scale.bz2")]
MULTICLASS_RUNS = [
    ("sdm-cs", ["-s", "sdm-cs"]),
    ("sdm-ww", ["-s", "sdm-ww", "-e", "0.3"]),
    ("dcd-ovr", ["-s", "dcd", "-j", "2"]),
    ("mfn-ovr", ["-s", "mfn", "-e", "0.01", "-j", "1"]),
]
ORDINAL = [("abalone_5bins.train.1", "abalone_5bins.test.1"),
           ("autompg_5bins.train.1", "autompg_5bins.test.1")]
ORDINAL_RUNS = [("mfn-ord", ["-s", "mfn-ord"]), ("perf-ord", ["-s", "perf-ord"]),
                ("softmax", ["-s", "softmax"])]
# one-class models train on the binary sets' examples (the labels are ignored)
ONECLASS = [("heart_scale", "heart_scale"), ("a1a", "a1a.t")]
REGRESSION = [("debian-deps-size.train.bz2", "debian-deps-size.test.bz2")]
REGRESSION_RUNS = [
    ("svr", ["-s", "svr"]),
    ("svr-code11", ["-s", "11", "-p", "0.1"]),
    ("svr-dual-l1", ["-s", "svr-dual", "--loss", "l1"]),
    ("svr-dual-l2", ["-s", "svr-dual", "--loss", "l2"]),
]


def runs():
    """(tag, training file, test file, train arguments) of every run whose data exist."""
    out = []
    for k, (train, test) in enumerate(BINARY):
        for name, args in BINARY_RUNS:
            for c in ("1", "16"):
                out.append((f"{train}-{name}-c{c}", "binary/" + train, "binary/" + test, args + ["-c", c]))
            if k < 2 and "-R" not in args:       # -R needs a bias feature
                out.append((f"{train}-{name}-nobias", "binary/" + train, "binary/" + test, args + ["-B", "-1"]))
        out.append((f"{train}-mfn-weighted", "binary/" + train, "binary/" + test,
                    ["-s", "mfn", "-w", "-1:0.5", "-w", "1:2"]))
        out.append((f"{train}-dcd-balanced", "binary/" + train, "binary/" + test,
                    ["-s", "dcd", "-w", "balanced"]))
    for train, test in MULTICLASS:
        for name, args in MULTICLASS_RUNS:
            out.append((f"{train}-{name}", "multiclass/" + train, "multiclass/" + test, args))
    for train, test in ORDINAL:
        for name, args in ORDINAL_RUNS:
            for c in ("1", "10"):
                out.append((f"{train}-{name}-c{c}", "ordinal/" + train, "ordinal/" + test, args + ["-c", c]))
    for train, test in ONECLASS:
        for nu in ("0.1", "0.5"):
            out.append((f"{train}-oneclass-nu{nu}", "binary/" + train, "binary/" + test,
                        ["-s", "oneclass", "-n", nu]))
    for train, test in REGRESSION:
        for name, args in REGRESSION_RUNS:
            out.append((f"{train}-{name}", "regression/" + train, "regression/" + test, args))
    return [r for r in out if (DATA / r[1]).exists() and (DATA / r[2]).exists()]


def write(outdir, only=()):
    """Train and predict every run (those whose tag contains one of `only`, if given)."""
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    todo = [r for r in runs() if not only or any(o in r[0] for o in only)]
    for i, (tag, train, test, args) in enumerate(todo, 1):
        model = outdir / f"{tag}.model"
        pred = outdir / f"{tag}.pred"
        cmd = [sys.executable, "-m", "linsvm", "train", "-q", *args, str(DATA / train), str(model)]
        subprocess.run(cmd, check=True)
        subprocess.run([sys.executable, "-m", "linsvm", "predict", "-q", str(DATA / test), str(model),
                        str(pred)], check=True)
        print(f"[{i}/{len(todo)}] {tag}", flush=True)


def _content(path):
    lines = path.read_bytes().split(b"\n")
    return [ln for ln in lines if not ln.startswith(b"stat seconds ")]


def compare(a, b):
    a, b = Path(a), Path(b)
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    bad = []
    for name in names:
        pa, pb = a / name, b / name
        if not (pa.exists() and pb.exists()):
            bad.append(f"{name}: only in {a if pa.exists() else b}")
        elif _content(pa) != _content(pb):
            bad.append(f"{name}: differs")
    for line in bad:
        print(line)
    print(f"{len(names) - len(bad)} of {len(names)} files the same")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "write":
        write(sys.argv[2], sys.argv[3:])
    elif len(sys.argv) == 4 and sys.argv[1] == "compare":
        sys.exit(compare(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
