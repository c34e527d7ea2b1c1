"""What dcd's hand-over (issue 29) costs where it does not fire and gains where it does.

    python examples/bench_handover.py --before /work/wt/base [--sets a9a,w8a,synth-rcv1,australian]
        [--C 1] [--repeats 3] [--out FILE]

`dcd` (-s 3, --loss l1) and `dcd --loss l2` (-s 1) train at their defaults (only -c)
with two builds of linsvm: this checkout ("after") and the tree given by --before (an
in-place build of the code before the hand-over).  Every run is a fresh process
(`python -c`, the build on PYTHONPATH) that loads the data untimed and reports the CPU
seconds of linsvm.train in process (time.process_time; after a warm-up train on 40
rows, so that neither build's lazy imports are timed), the objective recomputed here
from the returned weights, and who finished the solve.  Runs are interleaved: each
round runs every (set, loss) with before, then after (the order alternating by round),
so that load from other processes hits both; a cell is the median of `--repeats`
rounds.  The gap is (f - f*)/f*, f* the objective of mfn-l1 -e 1e-6 (l1: certified
within 1e-6, so gaps below that are not resolved) or
mfn -e 1e-12 --gtol 0 (l2) with this checkout, recomputed likewise.

synth-rcv1 is an RCV1-like text set from linsvm's generator (linsvm.io.synth: Zipf
vocabulary, about 80 tokens per document), 40,000 x 47,236, written once to a
temporary file so that both builds read the same bytes.

    python examples/bench_handover.py --sweep [--sets ...] [--C 0.25,1,4,16,64]

The sweep behind the rule's constants (linsvm/solvers/handover.py): with this checkout
only, in process, dcd at its defaults with and without the hand-over (--no-primal-fallback)
for each set, C and loss: whether the dual method alone certifies 1% within its loop cap
and in how many loops, where the hand-over fired, and both CPU times (one run each).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402  (puts this checkout first on sys.path)

WORKER = r'''
import json, sys, time, warnings
import numpy as np, scipy.sparse as sp
import linsvm
path, C, loss, extra = sys.argv[1], float(sys.argv[2]), sys.argv[3], json.loads(sys.argv[4])
X, y = linsvm.load_svmlight(path)
X = sp.csr_matrix(X)
solver = extra.pop("solver", "dcd")
kw = dict(extra) if solver != "dcd" else dict(extra, loss=loss)
# warm-up on 40 rows of both classes: the package imports its solvers lazily on first use
pick = np.concatenate([np.flatnonzero(y == v)[:20] for v in np.unique(y)[:2]])
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    linsvm.train(X[pick], y[pick], solver=solver, C=C, **kw)
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    t0 = time.process_time()
    m = linsvm.train(X, y, solver=solver, C=C, **kw)
    cpu = time.process_time() - t0
W = np.asarray(m.weights)
w = W[:X.shape[1], 0]
b = W[-1, 0] if m.bias > 0 else 0.0
t = np.where(y == m.classes_[0], 1.0, -1.0)
slack = np.maximum(0.0, 1.0 - t * (X @ w + b * m.bias))
f = 0.5 * (w @ w + b * b) + C * float(np.sum(slack if loss == "l1" else slack * slack))
st = m.column_stats[0]
print(json.dumps(dict(cpu=cpu, f=f, by=st.get("finished_by", "dcd"), loops=st.get("n_iter"),
                      where=linsvm.__file__,
                      warned=any(issubclass(w.category, linsvm.ConvergenceWarning) for w in caught))))
'''


def run_worker(build, path, C, loss, extra=None):
    env = dict(os.environ, PYTHONPATH=str(build), OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", WORKER, str(path), repr(C), loss,
                          json.dumps(extra or {})], env=env, cwd=str(build), capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def data_file(name, tmp):
    """The file a set is read from (synth-rcv1 written to tmp once)."""
    if name != "synth-rcv1":
        return harness.data_root() / "binary" / name
    import linsvm
    from linsvm.io.synth import make_text_classification

    path = Path(tmp) / "synth-rcv1.svm"
    X, y = make_text_classification(n_samples=40000, n_features=47236, seed=1)
    linsvm.dump_svmlight(X, y, str(path))
    return path


def sweep(names, Cs):
    """The --sweep table (module notes)."""
    import time
    import warnings

    import linsvm
    lines = ["| set | C | loss | alone: loops, certified | alone CPU s | with: finished by, "
             "gap checks (loop: gap) | with CPU s |", "|---|---|---|---|---|---|---|"]
    warm = harness.data_root() / "binary" / "heart_scale"      # the lazy imports, untimed
    if warm.is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Xw, yw = linsvm.load_svmlight(str(warm))
            for loss in ("l1", "l2"):
                linsvm.train(Xw, yw, solver="dcd", loss=loss, C=64.0, max_iter=30)
    for name in names:
        path = harness.data_root() / "binary" / name
        if not path.is_file():
            continue
        X, y = linsvm.load_svmlight(str(path))
        for C in Cs:
            for loss in ("l1", "l2"):
                out = {}
                for fb in (False, True):
                    with warnings.catch_warnings(record=True) as caught:
                        warnings.simplefilter("always")
                        t0 = time.process_time()
                        m = linsvm.train(X, y, solver="dcd", loss=loss, C=C, primal_fallback=fb)
                        cpu = time.process_time() - t0
                    warned = any(issubclass(w.category, linsvm.ConvergenceWarning) for w in caught)
                    out[fb] = (m.column_stats[0], cpu, warned)
                a, ca, wa = out[False]
                b, cb, _ = out[True]
                checks = ", ".join(f"{c[0]}: {c[1]:.2g}" for c in b.get("gap_checks", []))
                lines.append(f"| {name} | {C:g} | {loss} | {a['n_iter']}, "
                             f"{'no (warned)' if wa else 'yes'} | {ca:.3f} | {b['finished_by']}"
                             f"{' at ' + str(b['n_iter']) if b['finished_by'] != 'dcd' else ''}; "
                             f"{checks} | {cb:.3f} |")
                harness.log(lines[-1])
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--before", help="an in-place build of the earlier code")
    ap.add_argument("--sweep", action="store_true", help="the sweep of the rule (module notes)")
    ap.add_argument("--sets", default="a9a,w8a,synth-rcv1,australian")
    ap.add_argument("--C", default="1")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    if args.sweep:
        text = sweep(args.sets.split(","), [float(c) for c in args.C.split(",")])
        sys.stdout.write(text)
        if args.out:
            Path(args.out).write_text(text)
        return 0
    if not args.before:
        ap.error("--before is required (or --sweep)")
    after = harness.REPO
    builds = {"before": Path(args.before), "after": after}
    Cs = [float(c) for c in args.C.split(",")]
    lines = ["| set | C | loss | before CPU s | after CPU s | after / before | before gap | "
             "after gap | before: finished by (loops) | after: finished by (loops) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        files = {name: data_file(name, tmp) for name in args.sets.split(",")}
        cells = [(name, C, loss) for name in files for C in Cs for loss in ("l1", "l2")]
        fstar = {}
        for name, C, loss in cells:
            ref = dict(solver="mfn-l1", tol=1e-6) if loss == "l1" else \
                dict(solver="mfn", tol=1e-12, gtol=0.0, max_iter=1000)
            fstar[name, C, loss] = run_worker(after, files[name], C, loss, ref)["f"]
        res = {(c, b): [] for c in cells for b in builds}
        for r in range(args.repeats):
            order = list(builds) if r % 2 == 0 else list(reversed(builds))
            for cell in cells:
                for b in order:
                    res[cell, b].append(run_worker(builds[b], files[cell[0]], cell[1], cell[2]))
                    harness.log(f"round {r} {cell} {b}: {res[cell, b][-1]}")
        for cell in cells:
            med = {b: statistics.median(x["cpu"] for x in res[cell, b]) for b in builds}
            gap = {b: (res[cell, b][0]["f"] - fstar[cell]) / fstar[cell] for b in builds}
            how = {b: f"{res[cell, b][0]['by']} ({res[cell, b][0]['loops']})"
                   + (", warned" if res[cell, b][0]["warned"] else "") for b in builds}
            lines.append(f"| {cell[0]} | {cell[1]:g} | {cell[2]} | {med['before']:.3f} | "
                         f"{med['after']:.3f} | {med['after'] / max(med['before'], 1e-9):.2f} | "
                         f"{gap['before']:.2e} | {gap['after']:.2e} | {how['before']} | "
                         f"{how['after']} |")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
