"""Every LIBLINEAR -s code through both programs' train commands, each at its own default -e:
how far from the optimum each ends and how long each takes, end to end.

    python examples/bench_codes.py [--sets w8a,ijcnn1.bz2,...] [--synth imbalanced-200k,...]
        [--codes 0,1,2,3,5,6,7,...] [--C 1,cv] [--repeat 3] [--liblinear-train PATH]
        [--out FILE]

A row is one (data set, -s code, C): `linsvm-train -s CODE -c C -B 1 -q FILE` against
LIBLINEAR's `train -s CODE -c C -B 1 -q FILE` (-B 1 in both: LIBLINEAR's default is no
bias, linsvm's a bias feature of 1, docs/liblinear.md; -s 21 takes none), timed as whole commands (reading
the file, training, writing the model), interleaved `--repeat` times, medians.  The two
models are read back with linsvm.load_model and their objectives -- LIBLINEAR's problem
for the code -- computed here with NumPy from the weights (`objective`).  f* is the
smallest objective among both defaults and both programs at -e / 1000 (LIBLINEAR's dual
solvers stop at fixed iteration caps, so its tight run is not always tight; linsvm's
certified stops make it the usual f*).  A gap is (f - f*) / |f*|; a row passes when
linsvm's gap is at most LIBLINEAR's, or at most FLOOR (both at the optimum to the
precision the stops aim at).

Data: the shared sets named by --sets, of their kind by folder (binary/: codes 0-3, 5-7
and 21, labels ignored by 21; multiclass/: one-vs-rest codes and 4; regression/: 11-13),
and generated sets (--synth, written once to a temporary folder by `linsvm synth`):
text-100k (two balanced classes, 100k rows and features), imbalanced-200k (50 topics,
topic 1 against the rest: 2% positives, 200k rows and features).  C: 1 and, with `cv`,
the C that `linsvm-train -s 2 -C` (classification) picks on the set.  Output: Markdown on
stdout (and --out), progress on stderr.
"""
from __future__ import annotations

import argparse
import bz2
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402  (puts this checkout first on sys.path)

import linsvm  # noqa: E402
from linsvm.liblinear_compat.options import LIBLINEAR_EPS, liblinear_entry  # noqa: E402
from linsvm.problem.catalog import SOLVERS  # noqa: E402

CLASSIFY = (0, 1, 2, 3, 5, 6, 7)
MULTICLASS = (1, 2, 3, 4)
REGRESSION = (11, 12, 13)
ONECLASS = 21
L1_CODES = (5, 6)
LOGISTIC = (0, 6, 7)
TIGHTER = 1000.0        # the reference runs' -e is the default's / TIGHTER
FLOOR = 1e-6            # gaps at or below this count as the optimum
DEFAULT_SETS = ("a9a", "w8a", "ijcnn1.bz2", "sector.scale.bz2", "debian-deps-size.train.bz2")
SYNTH = {"text-100k": ["--n-samples", "100000", "--n-features", "100000", "--seed", "3"],
         "imbalanced-200k": ["--n-samples", "200000", "--n-features", "200000",
                             "--n-classes", "50", "--seed", "7"]}


def kind_of(name):
    """The folder (binary, multiclass, regression) a shared set lives in, or None."""
    for kind in ("binary", "multiclass", "regression"):
        if harness.data_path(f"{kind}/{name}") is not None:
            return kind
    return None


def plain_copy(path, tmp):
    """A file LIBLINEAR can read: the set decompressed, without blank lines."""
    out = tmp / path.name.removesuffix(".bz2")
    opener = bz2.open if path.suffix == ".bz2" else open
    with opener(path, "rt") as src, open(out, "w") as dst:
        dst.writelines(line for line in src if line.strip())
    return out


def synth_set(name, tmp):
    """A generated set's file (binary labels; the imbalanced one: topic 1 against the rest)."""
    raw = tmp / f"{name}.raw"
    subprocess.run(["linsvm", "synth", *SYNTH[name], str(raw)], check=True, env=harness.child_env())
    if "--n-classes" not in SYNTH[name]:
        return raw.rename(tmp / name)
    out = tmp / name
    with open(raw) as src, open(out, "w") as dst:
        for line in src:
            label, rest = line.split(" ", 1)
            dst.write(("+1 " if label == "1" else "-1 ") + rest)
    raw.unlink()
    return out


def objective(code, X, y, W, labels, C, rho=None, p=0.1, nu=0.5):
    """LIBLINEAR's primal objective for `code` at W (n_weights x columns, the bias feature's
    weight last; labels: the columns' classes, the first the +1 class of a binary model):
    the regularizer (1/2||w||^2, ||w||_1 for -s 5, 6) plus C times the summed loss, one-vs-rest
    summed over the columns; -s 4 Crammer-Singer; -s 11-13 the (squared) eps-insensitive
    loss; -s 21 the one-class dual's scaling, 1/2||w||^2 - nu n rho + sum max(0, rho - w.x)."""
    S = np.asarray((harness.augmented(X) if W.shape[0] > X.shape[1] else X) @ W)
    reg = (np.abs(W).sum() if code in L1_CODES else 0.5 * float(np.sum(W * W)))
    if code in REGRESSION:
        e = np.maximum(np.abs(y - S[:, 0]) - p, 0.0)
        return reg + C * float(np.sum(e if code == 13 else e * e))
    if code == ONECLASS:
        return reg - nu * y.shape[0] * rho + float(np.maximum(rho - S[:, 0], 0.0).sum())
    column = {v: j for j, v in enumerate(labels)}
    codes = np.array([column[v] for v in y])              # the column of each row's class
    rows = np.arange(y.shape[0])
    if code == 4:
        E = 1.0 - np.eye(len(labels))[codes]
        return reg + C * float(np.max(E + S - S[rows, codes][:, None], axis=1).sum())
    T = np.where(np.eye(len(labels))[codes] > 0, 1.0, -1.0)[:, :W.shape[1]]
    M = T * S
    if code in LOGISTIC:
        loss = np.logaddexp(0.0, -M)
    else:
        loss = np.maximum(1.0 - M, 0.0) ** (1 if code == 3 else 2)
    return reg + C * float(loss.sum())


def model_objective(path, code, X, y, C):
    """The objective of the model file at `path` (either program's format)."""
    m = linsvm.load_model(path)
    if code in REGRESSION:
        return objective(code, X, y, m.weights, None, C)
    if code == ONECLASS:
        return objective(code, X, y, m.weights, None, C, rho=-m.offset_)
    return objective(code, X, y, m.weights, [float(v) for v in m.classes_], C)


def train(program, code, C, file, model, eps=None):
    """Run one train command; wall seconds."""
    cmd = [*program, "-s", str(code), "-c", repr(C), "-q"] + (["-B", "1"] if code != ONECLASS else [])
    cmd += ["-e", repr(eps)] if eps is not None else []
    start = time.perf_counter()
    r = subprocess.run(cmd + [str(file), str(model)], capture_output=True, text=True,
                       env=harness.child_env())
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)}: {r.stderr.strip()}")
    return time.perf_counter() - start


def cv_C(file, regression=False):
    """The C linsvm-train -s 2 -C picks (LIBLINEAR's search; None for regression)."""
    if regression:
        return None
    r = subprocess.run(["linsvm-train", "-s", "2", "-C", "-q", str(file)], capture_output=True,
                       text=True, env=harness.child_env(), check=True)
    return float(r.stdout.split("Best C = ")[1].split()[0])


def bench_row(name, file, code, C, X, y, args, tmp):
    """One row: gaps and median seconds of both programs at their defaults."""
    programs = {"linsvm": ["linsvm-train"], "LIBLINEAR": [args.liblinear_train]}
    runs = {who: harness.timed(lambda who=who: train(programs[who], code, C, file, tmp / who))
            for who in programs}
    seconds = {who: harness.median([t for t, _ in out])
               for who, out in harness.interleaved(runs, args.repeat, alternate=True).items()}
    f = {who: model_objective(tmp / who, code, X, y, C) for who in programs}
    refs = []
    for who, program in programs.items():
        train(program, code, C, file, tmp / "tight", LIBLINEAR_EPS[code] / TIGHTER
              if who == "LIBLINEAR" else linsvm_tight(code))
        refs.append(model_objective(tmp / "tight", code, X, y, C))
    fstar = min(refs + list(f.values()))
    gap = {who: harness.relative_gap(v, fstar) for who, v in f.items()}
    ok = gap["linsvm"] <= max(gap["LIBLINEAR"], FLOOR)
    harness.log(f"{name} -s {code} C={C:g}: gap {gap['linsvm']:.2e} / {gap['LIBLINEAR']:.2e}, "
                f"{seconds['linsvm']:.2f} s / {seconds['LIBLINEAR']:.2f} s")
    return [name, code, f"{C:g}", f"{gap['linsvm']:.1e}", f"{gap['LIBLINEAR']:.1e}",
            "yes" if ok else "**no**", harness.fmt_s(seconds["linsvm"]),
            harness.fmt_s(seconds["LIBLINEAR"]), f"{seconds['linsvm'] / seconds['LIBLINEAR']:.2f}"]


def linsvm_tight(code):
    """linsvm's reference -e for a code: its solver's default / TIGHTER."""
    return SOLVERS[liblinear_entry(code)[0]].default_tol / TIGHTER


def data_sets(args, tmp):
    """(name, kind, file) of every set asked for that is present."""
    out = []
    for name in args.sets:
        kind = kind_of(name)
        if kind is None:
            harness.log(f"skip {name}: not under {harness.data_root()}")
            continue
        out.append((name.removesuffix(".bz2"), kind,
                    plain_copy(harness.data_path(f"{kind}/{name}"), tmp)))
    out += [(name, "binary", synth_set(name, tmp)) for name in args.synth]
    return out


def codes_of(kind, wanted):
    """The codes of `wanted` a set of `kind` is benchmarked on."""
    own = {"binary": CLASSIFY + (ONECLASS,), "multiclass": MULTICLASS, "regression": REGRESSION}
    return [c for c in wanted if c in own[kind]]


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", default=",".join(DEFAULT_SETS), type=lambda s: [x for x in s.split(",") if x])
    ap.add_argument("--synth", default="", type=lambda s: [x for x in s.split(",") if x])
    ap.add_argument("--codes", default="0,1,2,3,4,5,6,7,11,12,13,21",
                    type=lambda s: [int(x) for x in s.split(",")])
    ap.add_argument("--C", default="1,cv", type=lambda s: s.split(","))
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--liblinear-train", default=None)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    args.liblinear_train, why = harness.liblinear_program(args.liblinear_train)
    if args.liblinear_train is None:
        raise SystemExit(why)
    return args


def main(argv=None):
    args = parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as td:
        tmp = Path(td)
        for name, kind, file in data_sets(args, tmp):
            X, y = linsvm.load_svmlight(str(file))
            Cs = [1.0] + ([cv_C(file, kind == "regression")] if "cv" in args.C else [])
            for code in codes_of(kind, args.codes):
                for C in dict.fromkeys(c for c in (Cs if code != ONECLASS else [1.0]) if c):
                    rows.append(bench_row(name, file, code, C, X, y, args, tmp))
    columns = ["data set", "-s", "C", "gap linsvm", "gap LIBLINEAR", "linsvm no further",
               "s linsvm", "s LIBLINEAR", "ratio"]
    text = "\n".join(harness.machine_header() + [""] + harness.markdown_table(columns, rows)) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
