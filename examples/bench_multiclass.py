"""Benchmark linsvm's multi-class solvers against LIBLINEAR, at equal solution quality.

    python examples/bench_multiclass.py [--repeats 3] [--C 1] [--out examples/results]

Protocol (DESIGN.md, "Performance: how it is measured")
-------------------------------------------------------
Data: every multi-class training file under $LINSVM_DATA/multiclass (default
<repo>/../shared/datasets/multiclass) with its test file (NAME.t.REST or
NAME.t); here that is SECTOR only (6412 train / 3207 test, 55197 features, 105
classes).  The test matrix is cut or padded to the training width.  C = 1 and
a bias feature of value 1 (LIBLINEAR -B 1) for every solver.

Four objectives, each computed here with numpy/scipy from the weights a solver
returns (no solver's own report of its objective is used), x with the bias
feature, e_i^m = [m != y_i]:

  CS   1/2 sum_m ||w_m||^2 + C sum_i max_m (e_i^m + w_m.x_i - w_{y_i}.x_i)    linsvm sdm-cs, LIBLINEAR -s 4
  WW   1/2 sum_m ||w_m||^2 + C sum_i sum_{m != y_i} max(0, 1 - (w_{y_i} - w_m).x_i)     linsvm sdm-ww
  OVR-l1  sum_m [1/2 ||w_m||^2 + C sum_i max(0, 1 - t_im w_m.x_i)]     linsvm dcd --loss l1, LIBLINEAR -s 3
  OVR-l2  the same with the hinge squared          linsvm dcd --loss l2 and mfn, LIBLINEAR -s 1

1. Reference f* per objective: the smallest primal among tight runs (CS:
   sdm-cs tol 1e-3 and LIBLINEAR -s 4 -e 1e-3; WW: sdm-ww tol 1e-3; OVR-l1: dcd
   tol 1e-3 and -s 3 -e 1e-3; OVR-l2: mfn tol 1e-10, dcd l2 tol 1e-4 and -s 1 -e
   1e-4).  linsvm's dual objective of its tight run is a certified lower bound;
   the table prints (f* - dual)/f*, so the reference itself is known to that
   accuracy.
2. Time to a relative PRIMAL gap (P - f*)/f* <= 1e-3: each solver walks a
   ladder of its own stopping tolerance from loose to tight, one run per rung
   (LIBLINEAR permutes with an unseeded rand(), so it gets 3 runs per rung and
   reaches when their median gap does; linsvm runs with --seed 0).  The first
   rung that reaches is timed in --repeats rounds that go over all solvers of
   the objective in turn, and the median is reported; every timed model's gap
   is checked again.  Timed is training only (data in memory; LIBLINEAR's
   `problem` is built outside the timer; linsvm's train() includes its input
   validation).  All solvers run single-threaded.
3. Test accuracy of the model that reached the gap (argmax of the scores).
4. The paper's Figure 1 (and Figure 4 for WW): SDM with and without the
   shrinking + cooling heuristics, run once to tol 1e-3 (at most 300 full
   loops), recording the dual objective D at the end of every full loop and
   shrunk phase; the table gives the training time at which the relative dual
   gap (D* - D)/D* first falls below each level, D* the best dual known.

The machine is shared (2 cores, other processes running): read the ratios.
Output: Markdown on stdout and in OUT/multiclass.md; progress on stderr.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import platform
import sys
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)
from harness import log  # noqa: E402

import linsvm  # noqa: E402

REPO = H.REPO
TARGET_GAP = 1e-3
SDM_LADDER = (0.3, 0.1, 0.05, 0.03, 0.02, 0.015, 0.01, 0.005, 0.003, 0.001)
DCD_LADDER = (0.3, 0.1, 0.05, 0.03, 0.01, 0.003, 0.001, 3e-4)
MFN_LADDER = (0.1, 0.03, 0.01, 1e-3, 1e-4, 1e-6, 1e-8)
FIG1_LEVELS = (1e-1, 1e-2, 1e-3, 1e-4, 1e-5, 1e-6)


# ------------------------------------------------------------------ solvers

def run_linsvm(ds, C, tol, solver, **opts):
    start = time.perf_counter()
    model = linsvm.train(ds.X, ds.y, solver=solver, C=C, bias=1.0, tol=tol, seed=0, **opts)
    seconds = time.perf_counter() - start
    if not np.array_equal(model.classes_, ds.classes):
        raise RuntimeError("linsvm changed its class order")
    st = model.column_stats
    info = {"dual": float(sum(s.get("dual_objective", np.nan) for s in st)),
            "loops": int(model.n_iter)}
    if len(st) == 1 and "effective_loops" in st[0]:
        info["effective_loops"] = st[0]["effective_loops"]
    if getattr(model, "warnings", None):
        info["warning"] = "; ".join(model.warnings)
    return seconds, np.asarray(model.weights), info


def run_liblinear(ds, C, tol, s, cache):
    seconds, model = H.liblinear_train(H.liblinear_problem(ds, cache), H.liblinear_options(s, C, tol))
    return seconds, H.liblinear_W(model, ds.d, ds.classes), {}


def solvers_for(kind, ds, C, cache):
    """The solvers of one objective; each run(tol) -> (seconds, W, info)."""
    lin = lambda solver, **o: (lambda tol: run_linsvm(ds, C, tol, solver, **o))
    ll = lambda s: (lambda tol: run_liblinear(ds, C, tol, s, cache))
    if kind == "CS":
        return [H.Solver("linsvm sdm-cs", SDM_LADDER, lin("sdm-cs")),
                H.Solver("linsvm sdm-cs --subproblem restricted", SDM_LADDER,
                       lin("sdm-cs", subproblem="restricted")),
                H.Solver("liblinear -s 4", SDM_LADDER, ll(4), randomized=True)]
    if kind == "WW":
        return [H.Solver("linsvm sdm-ww", SDM_LADDER, lin("sdm-ww")),
                H.Solver("linsvm sdm-ww --subproblem restricted", SDM_LADDER,
                       lin("sdm-ww", subproblem="restricted"))]
    if kind == "OVR-l1":
        return [H.Solver("linsvm dcd --loss l1", DCD_LADDER, lin("dcd", loss="l1")),
                H.Solver("liblinear -s 3", DCD_LADDER, ll(3), randomized=True)]
    return [H.Solver("linsvm dcd --loss l2", DCD_LADDER, lin("dcd", loss="l2")),
            H.Solver("linsvm mfn", MFN_LADDER, lin("mfn")),
            H.Solver("liblinear -s 1", DCD_LADDER, ll(1), randomized=True)]


def references(kind, ds, C, cache):
    """Tight runs: (name, primal, W, dual or None) each."""
    if kind == "CS":
        runs = [("sdm-cs tol=1e-3", lambda: run_linsvm(ds, C, 1e-3, "sdm-cs", max_iter=100000)),
                ("liblinear -s 4 -e 1e-3", lambda: run_liblinear(ds, C, 1e-3, 4, cache))]
    elif kind == "WW":
        runs = [("sdm-ww tol=1e-3", lambda: run_linsvm(ds, C, 1e-3, "sdm-ww", max_iter=100000))]
    elif kind == "OVR-l1":
        runs = [("dcd l1 tol=1e-3", lambda: run_linsvm(ds, C, 1e-3, "dcd", loss="l1", max_iter=100000)),
                ("liblinear -s 3 -e 1e-3", lambda: run_liblinear(ds, C, 1e-3, 3, cache))]
    else:
        runs = [("mfn tol=1e-10", lambda: run_linsvm(ds, C, 1e-10, "mfn")),
                ("dcd l2 tol=1e-4", lambda: run_linsvm(ds, C, 1e-4, "dcd", loss="l2", max_iter=100000)),
                ("liblinear -s 1 -e 1e-4", lambda: run_liblinear(ds, C, 1e-4, 1, cache))]
    out = []
    for name, fn in runs:
        log(f"  reference {name}")
        seconds, W, info = fn()
        out.append((name, H.multiclass_objective(kind, ds, W, C), seconds, info.get("dual")))
    return out


def walk_ladder(solver, kind, ds, C, fstar):
    """harness.walk_ladder to TARGET_GAP: (first rung that reaches or None, [(tol, gap, seconds)])."""
    walk = H.walk_ladder(solver.run, solver.ladder,
                         lambda W: (H.multiclass_objective(kind, ds, W, C) - fstar) / fstar, TARGET_GAP,
                         randomized=solver.randomized,
                         on_rung=lambda tol, sec, gap: log(f"  {solver.name} tol={tol:g}: gap {gap:.2e} "
                                                           f"({sec:.2f}s)"))
    return walk.knob, [(tol, gap, sec) for tol, sec, gap in walk.walked]


def time_rounds(chosen, kind, ds, C, fstar, repeats):
    """Median seconds of each solver at its chosen rung, solvers interleaved per round."""
    last = {}                   # the last run's (W, info, gap): one weight matrix per solver

    def run(solver, tol):
        def go():
            seconds, W, info = solver.run(tol)
            last[solver.name] = (W, info, (H.multiclass_objective(kind, ds, W, C) - fstar) / fstar)
            return seconds, last[solver.name][2]
        return go
    timed = H.interleaved({s.name: run(s, tol) for s, tol in chosen}, repeats)
    return {name: (H.median([sec for sec, _ in r]), sum(gap <= TARGET_GAP for _, gap in r), len(r), last[name])
            for name, r in timed.items()}


# ------------------------------------------------------------------ Figure 1

def figure1(ds, C, solver, best_dual):
    rows = []
    for label, opts in (("with shrinking + cooling", {}),
                        ("without (plain Algorithm)", {"shrinking": False, "cooling": False})):
        log(f"  figure 1: {solver} {label}")
        model = linsvm.train(ds.X, ds.y, solver=solver, C=C, tol=1e-3, seed=0, max_iter=300, **opts)
        trace = model.column_stats[0]["trace"]
        times = []
        for level in FIG1_LEVELS:
            hit = next((r["seconds"] for r in trace if (best_dual - r["dual"]) / best_dual <= level), None)
            times.append(hit)
        final = (best_dual - trace[-1]["dual"]) / best_dual
        rows.append((label, times, trace[-1]["seconds"], len(trace), final,
                     model.column_stats[0]["status"]))
    return rows


# ------------------------------------------------------------------ report

def fmt_s(x):
    if x is None:
        return "—"
    return f"{x * 1000:.0f} ms" if x < 1 else f"{x:.2f} s"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--C", type=float, default=1.0)
    ap.add_argument("--out", default=str(REPO / "examples" / "results"))
    ap.add_argument("--objectives", default="CS,WW,OVR-l1,OVR-l2")
    args = ap.parse_args()
    root = H.data_root()
    kinds = args.objectives.split(",")
    C = args.C
    t_start = time.perf_counter()
    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    lines = ["# linsvm multi-class benchmark", ""]
    lines.append(f"- Machine: nproc {os.cpu_count()}, {platform.processor() or platform.machine()}, "
                 f"load average at start {load_avg}; Python {platform.python_version()}, numpy "
                 f"{np.__version__}, liblinear-official {H.version('liblinear-official')}.")
    lines.append(f"- Protocol: C = {C:g}, bias feature 1; primal objectives computed here from the "
                 f"weights; time = median of {args.repeats} interleaved rounds at the first rung of "
                 f"each solver's tolerance ladder whose model reaches a relative primal gap "
                 f"(P - f*)/f* <= {TARGET_GAP:g} (LIBLINEAR: median gap of {H.RANDOM_TRIES} runs per "
                 "rung); training only; single-threaded.  See the docstring of "
                 "examples/bench_multiclass.py.")
    lines.append(f"- Run: `python examples/bench_multiclass.py --repeats {args.repeats}`")
    lines.append("")
    found = H.multiclass_sets(root)
    if not found:
        lines.append(f"No multi-class data under {root}/multiclass.")
    ref_rows, time_rows, fig_rows = [], [], []
    for name, path, test in found:
        log(f"{name}: loading")
        ds = H.load_multiclass(name, path, test)
        cache = {}
        duals = {}
        for kind in kinds:
            log(f"{name} {kind}")
            refs = references(kind, ds, C, cache)
            fstar = min(r[1] for r in refs)
            best_dual = max((r[3] for r in refs if r[3] is not None and np.isfinite(r[3])),
                            default=None)
            duals[kind] = best_dual
            for rname, p, sec, dual in refs:
                ref_rows.append(f"| {name} | {kind} | {rname} | {p:.10g} | {(p - fstar) / fstar:.1e} | "
                                f"{fmt_s(sec)} | "
                                + (f"{(fstar - best_dual) / fstar:.1e}" if best_dual else "—") + " |")
            chosen, walks = [], {}
            for solver in solvers_for(kind, ds, C, cache):
                tol, walked = walk_ladder(solver, kind, ds, C, fstar)
                walks[solver.name] = (tol, walked)
                if tol is not None:
                    chosen.append((solver, tol))
            timed = time_rounds(chosen, kind, ds, C, fstar, args.repeats)
            base = next((timed[s.name][0] for s, _ in chosen if s.name.startswith("liblinear")), None)
            for solver in solvers_for(kind, ds, C, cache):
                tol, walked = walks[solver.name]
                ladder = ", ".join(f"{t:g}: {g:.1e}" for t, g, _ in walked)
                if tol is None:
                    best = min(g for _, g, _ in walked)
                    time_rows.append(f"| {name} | {kind} | {solver.name} | not reached (best gap "
                                     f"{best:.1e}) | — | — | — | {ladder} |")
                    continue
                sec, ok, n, (W, info, gap) = timed[solver.name]
                note = "" if ok == n else f" [{ok}/{n} timed runs reached]"
                ratio = f"{sec / base:.2f}" if base else "—"
                acc = H.multiclass_accuracy(ds, W)
                extra = info.get("effective_loops")
                loops = f"{info.get('loops', '—')}" + (f" / {extra:.1f}" if extra else "")
                time_rows.append(f"| {name} | {kind} | {solver.name} | {fmt_s(sec)} (tol {tol:g}){note} | "
                                 f"{ratio} | {100 * acc:.2f}% | {loops} | {ladder} |"
                                 if acc is not None else
                                 f"| {name} | {kind} | {solver.name} | {fmt_s(sec)} (tol {tol:g}){note} | "
                                 f"{ratio} | — | {loops} | {ladder} |")
        for kind, solver in (("CS", "sdm-cs"), ("WW", "sdm-ww")):
            if kind in kinds and duals.get(kind):
                for label, times, total, n_pts, final, status in figure1(ds, C, solver, duals[kind]):
                    fig_rows.append(f"| {name} | {solver} | {label} | "
                                    + " | ".join(fmt_s(t) for t in times)
                                    + f" | {fmt_s(total)} ({status}) | {final:.1e} |")
    lines += ["## Reference optima", "",
              "| data set | objective | tight run | primal P | (P - f*)/f* | seconds | (f* - best dual)/f* |",
              "|---|---|---|---|---|---|---|"] + ref_rows
    lines += ["", f"## Seconds to a relative primal gap <= {TARGET_GAP:g} (tolerance used), test accuracy",
              "", "ratio = seconds / the LIBLINEAR solver's seconds on the same objective; loops: "
              "linsvm's loops over the data (SDM: loops / effective loops = g evaluations / (k l)).",
              "", "| data set | objective | solver | time | ratio to LIBLINEAR | test acc | loops | "
              "ladder walked (tol: gap) |", "|---|---|---|---|---|---|---|---|"] + time_rows
    if fig_rows:
        lines += ["", "## Paper's Figure 1 / Figure 4: SDM with and without shrinking + cooling", "",
                  "Training time at which the relative dual gap (D* - D)/D* first falls below each "
                  "level (D measured at the end of each full loop and shrunk phase), one run to "
                  "tol 1e-3 (at most 300 full loops).", "",
                  "| data set | solver | heuristics | " + " | ".join(f"≤ {x:g}" for x in FIG1_LEVELS)
                  + " | run time (status) | final dual gap |",
                  "|---|---|---|" + "---|" * len(FIG1_LEVELS) + "---|---|"] + fig_rows
    lines += ["", f"Total wall time {time.perf_counter() - t_start:.0f} s; load average at end "
              + " ".join(f"{x:.2f}" for x in os.getloadavg()) + "."]
    text = "\n".join(lines) + "\n"
    print(text)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / "multiclass.md.tmp"
    tmp.write_text(text)
    os.replace(tmp, out / "multiclass.md")


if __name__ == "__main__":
    main()
