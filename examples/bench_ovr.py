"""One-vs-rest on threads: linsvm -j 1 vs -j 2 against LIBLINEAR's own one-vs-rest.

    python examples/bench_ovr.py [--repeats 3] [--data PATH] [--jobs 1,2] [--out DIR]

Data: SECTOR (multiclass/sector.scale.bz2 under $LINSVM_DATA, default
<repo>/../shared/datasets; 6412 x 55197, 105 classes), C = 1, bias feature 1
(LIBLINEAR -B 1).  Each library at its own defaults, the same objectives:

  linsvm mfn        sum over classes of 1/2||w||^2 + C sum max(0, 1 - t w.x)^2   LIBLINEAR -s 2
  linsvm dcd        the hinge (dcd --loss l1)                                    LIBLINEAR -s 3
  linsvm dcd l2     the squared hinge by dual coordinate descent                 LIBLINEAR -s 1

linsvm runs every column on `-j N` threads (train(n_jobs=N)); the weights are
the same bit for bit for every N (tests/test_ovr_parallel.py), so only the time
changes.  The `liblinear-official` Python package has no OpenMP build (its `-n`
is the one-class nu; the multi-core LIBLINEAR is a separate source
distribution), so LIBLINEAR runs on one thread here.

Timed: training only (data parsed once; LIBLINEAR's `problem` built outside
the timer), in --repeats rounds that go over every row in turn (interleaved),
median wall time and median process CPU time (user + system, all threads);
the objective of every model is computed here with numpy from its weights.
The machine is shared: the 1-minute load average is printed before and after;
on a busy machine the -j 2 / -j 1 wall ratio measures the scheduler as much as
linsvm, so read it beside the CPU-time ratio and the load.
Output: Markdown on stdout (and OUT/ovr.md with --out); progress on stderr.

Measured on an idle 2-CPU machine (load average 0.5-1.0, 3 rounds; README.md): -j 2 /
-j 1 = 0.48 (mfn), 0.50 (dcd l1), 0.48 (dcd l2); against LIBLINEAR on one thread,
mfn -j 1 1.33 of -s 2's time at today's default -e 1e-6 (objective 1.2e-4 lower), dcd l1
0.79 of -s 3's (1.1% lower), dcd l2 0.50 of -s 1's (4.7e-5 higher).
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)
from harness import log  # noqa: E402

import linsvm  # noqa: E402
from linsvm.io.svmlight import load_svmlight  # noqa: E402
from linsvm.problem.labels import class_order  # noqa: E402


def ovr_objective(X, y, classes, W, C, loss):
    """sum_m 1/2||w_m||^2 + C sum_i l(t_im w_m.x_i), x with the bias feature 1."""
    S = X @ W[:-1] + W[-1]
    T = np.where(y[:, None] == classes[None, :], 1.0, -1.0)
    xi = np.maximum(0.0, 1.0 - T * S)
    return float(0.5 * np.sum(W * W) + C * np.sum(xi if loss == "l1" else xi * xi))


def linsvm_row(X, y, solver, jobs, **opts):
    def run():
        m = linsvm.train(X, y, solver=solver, C=1.0, bias=1.0, n_jobs=jobs, **opts)
        return m.weights, list(m.classes_)
    return run


def liblinear_row(X, y, s):
    from liblinear.liblinearutil import parameter, problem, train

    prob = problem(y, X, bias=1)          # built once, outside the timer

    def run():
        m = train(prob, parameter(f"-s {s} -c 1 -B 1 -q"))
        labels = m.get_labels()
        nf = m.get_nr_feature() + 1
        k = m.get_nr_class()
        W = np.array([m.w[i] for i in range(nf * k)]).reshape(nf, k)
        return W, labels
    return run


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--data", default=str(H.data_root() / "multiclass" / "sector.scale.bz2"))
    ap.add_argument("--jobs", default="1,2", help="linsvm -j values (comma separated)")
    ap.add_argument("--rows", default="mfn,dcd,dcd-l2",
                    help="which objectives to time: mfn (vs -s 2), dcd (vs -s 3), dcd-l2 (vs -s 1)")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    X, y = load_svmlight(args.data)
    classes = class_order(y)
    log(f"{args.data}: {X.shape[0]} x {X.shape[1]}, {X.nnz} non-zeros, {classes.size} classes")
    jobs = [int(j) for j in args.jobs.split(",")]
    rows = []                              # (name, loss, runner, first -j row, LIBLINEAR row)
    for key, solver, opts, loss, s in (("mfn", "mfn", {}, "l2", 2), ("dcd", "dcd", {}, "l1", 3),
                                       ("dcd-l2", "dcd", {"loss": "l2"}, "l2", 1)):
        if key not in args.rows.split(","):
            continue
        label = solver + (" " + opts["loss"] if opts else "")
        first = f"linsvm {label} -j {jobs[0]}"
        peer = f"LIBLINEAR -s {s}"
        for j in jobs:
            rows.append((f"linsvm {label} -j {j}", loss, linsvm_row(X, y, solver, j, **opts),
                         first, peer))
        try:
            rows.append((peer, loss, liblinear_row(X, y, s), None, peer))
        except ImportError:
            log("liblinear-official not installed: LIBLINEAR rows skipped")
    names = {r[0] for r in rows}
    load0 = os.getloadavg()[0]
    def clocked(name, run):
        """run() timed: (wall, CPU of all threads, the weights and labels of the first call only)."""
        first = []

        def go():
            c0, t0 = os.times(), time.perf_counter()
            out = run()
            t1, c1 = time.perf_counter(), os.times()
            log(f"{name}: {t1 - t0:.2f} s")
            keep = None if first else out
            first.append(True)
            return t1 - t0, c1.user - c0.user + c1.system - c0.system, keep
        return go
    timed = H.interleaved({name: clocked(name, run) for name, _, run, _, _ in rows}, args.repeats,
                          after_round=lambda k, _: log(f"round {k + 1} done"))
    objective = {}
    for name, loss, _, _, _ in rows:
        W, labels = timed[name][0][2]
        order = [labels.index(c) for c in classes] if len(labels) == classes.size else None
        objective[name] = ovr_objective(X, y, classes, W[:, order], 1.0, loss)
    load1 = os.getloadavg()[0]
    med = {k: H.median([r[0] for r in v]) for k, v in timed.items()}
    medc = {k: H.median([r[1] for r in v]) for k, v in timed.items()}
    out = [f"SECTOR one-vs-rest ({classes.size} classes), C = 1, -B 1, each library at its "
           f"defaults; median of {args.repeats} interleaved rounds; load average "
           f"{load0:.2f} before, {load1:.2f} after, {os.cpu_count()} CPUs.", "",
           "| run | wall s | CPU s | wall / -j 1 | wall / LIBLINEAR | objective | vs LIBLINEAR's |",
           "|---|---|---|---|---|---|---|"]
    for name, _, _, first, peer in rows:
        peer = peer if peer in names else None
        rel = (objective[name] - objective[peer]) / objective[peer] if peer else float("nan")
        out.append(f"| {name} | {med[name]:.2f} | {medc[name]:.2f} | "
                   + (f"{med[name] / med[first]:.2f}" if first else "-") + " | "
                   + (f"{med[name] / med[peer]:.2f}" if peer else "-") + " | "
                   + f"{objective[name]:.8g} | {rel:+.1e} |")
    text = "\n".join(out)
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "ovr.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
