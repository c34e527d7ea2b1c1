"""Benchmark the SVMperf cutting-plane solvers (`perf`, `perf-ord`) against LIBLINEAR -s 3.

    python examples/bench_perf.py [--quick] [--datasets a9a,w8a] [--repeats 3] [--C 1]

Objectives (computed here from each solver's weights, never taken from a solver's report,
except where a table says so):
  classification   F(w) = 1/2 ||w||^2 + C sum_i max(0, 1 - t_i w.x_i), bias feature of value 1
                   regularized like the others: LIBLINEAR -s 3 -B 1, linsvm -s perf;
  pairwise / ROC   P(w) = 1/2 ||w||^2 + (C n / m) sum_{t_i > t_j} max(0, 1 - w.(x_i - x_j))
                   over the m = n+ n- pairs of a positive and a negative example: linsvm
                   -s perf-ord, and LIBLINEAR -s 3 -B -1 with C n / m on the explicit pair
                   differences (built outside the timer, only where m <= --max-pairs).

Protocol
--------
1. Reference optimum per data set and C: f* = the lowest objective seen (perf at eps = 1e-6,
   every LIBLINEAR run of the ladder below); perf's working-set dual value at eps = 1e-6 is a
   certified lower bound, and the table prints how tightly that pins f*.  Gaps are
   (F - f*) / f*.
2. Table 1 (the paper's protocol): training time of perf and perf-ord at the paper's
   eps = 0.001, their iterations and gaps; LIBLINEAR -s 3 at its default -e 0.1 (time and
   gap), and the time LIBLINEAR needs to reach the gap perf reached ("same objective and
   tolerance"): its -e ladder 1, 0.3, 0.1, ..., 1e-9 is walked from loose to tight, 3 runs
   per rung (LIBLINEAR permutes with an unseeded rand()), and the first rung whose median
   gap is <= perf's gap is timed.  "not reached" gives LIBLINEAR's best gap.  The same for
   perf-ord against LIBLINEAR on the explicit pairs.
3. Equal-gap table (DESIGN.md): seconds to reach (F - f*)/f* <= --gap for perf (eps ladder
   1e-2 ... 1e-6) and LIBLINEAR -s 3 (its -e ladder), each at the first rung that reaches.
4. Figure 2 (iterations vs n) and time vs n: random subsets (seed 0) of growing size of the
   largest sets joined with their test files, at a fixed paper C = C_paper (default 10,000,
   the order of the paper's choices; linsvm's C = C_paper / n), perf and perf-ord at
   eps = 0.001: iterations, seconds, seconds per iteration, and for perf-ord seconds per
   iteration / (n log2 n) to show the O(n log n) scaling; the log-log slope of time per
   iteration against n is printed under each table.
Timing: data in memory; medians of --repeats runs interleaved across solvers (a burst of
load from other processes then hits every solver); LIBLINEAR's `problem` is built outside
the timer, linsvm's train() includes its input validation.  Single-threaded (linsvm runs
serial below 4M non-zeros).  The machine is shared: read the ratios.

Output: Markdown on stdout and in examples/results/bench_perf.md; progress on stderr.
"""
from __future__ import annotations

import argparse
import math
import os
import pathlib
import platform
import sys
import time

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)
from harness import log  # noqa: E402

import linsvm  # noqa: E402

REPO = H.REPO
TRAIN_FILES = ("a1a", "a2a", "a3a", "a4a", "a8a", "a9a", "w1a", "w7a", "w8a",
               "australian", "heart_scale", "ijcnn1.bz2")
QUICK_FILES = ("a1a", "w1a", "heart_scale", "a9a")
SCALING_SETS = ("ijcnn1.bz2", "a9a", "w8a")        # joined with their test files where present
EPS = 1e-3                                          # the paper's epsilon
REF_EPS = 1e-6
PERF_LADDER = (1e-2, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6)
LL_LADDER = (1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4, 1e-5, 1e-6, 1e-9)


def data_dir():
    return H.data_root() / "binary"


def load(name, join_test=False):
    X, y, Xt, yt = H.load_pair(data_dir() / name, data_dir() / H.test_file_name(name) if join_test else None)
    if Xt is not None:
        X = sp.vstack([X, Xt]).tocsr()
        y = np.concatenate([y, yt])
    return X, y


# --------------------------------------------------------------------------- objectives

def hinge_F(w, Xb, t, C):
    return 0.5 * w @ w + C * np.sum(np.maximum(0.0, 1.0 - t * (Xb @ w)))


def pairwise_P(w, X, t, C):
    """P(w) for two levels in O(n log n): for each negative j, the positives i with
    s_i - s_j < 1 contribute 1 - s_i + s_j (no pair is enumerated)."""
    s = X @ w[:X.shape[1]]
    sp_, sn = np.sort(s[t > 0]), s[t < 0]
    m = sp_.size * sn.size
    csum = np.concatenate([[0.0], np.cumsum(sp_)])
    k = np.searchsorted(sp_, sn + 1.0, side="left")      # positives with s_i < s_j + 1
    loss = np.sum(k * (1.0 + sn) - csum[k])
    return 0.5 * w @ w + C * X.shape[0] / m * loss


def explicit_pairs(X, t):
    """The m x d matrix of x_i - x_j (t_i > 0 > t_j), every other row negated, and its labels."""
    pos, neg = np.flatnonzero(t > 0), np.flatnonzero(t < 0)
    I = np.repeat(pos, neg.size)
    J = np.tile(neg, pos.size)
    m = I.size
    lab = np.where(np.arange(m) % 2 == 0, 1.0, -1.0)
    rows = np.concatenate([np.arange(m), np.arange(m)])
    P = sp.csr_matrix((np.concatenate([lab, -lab]), (rows, np.concatenate([I, J]))), shape=(m, X.shape[0]))
    return (P @ X).tocsr(), lab


# --------------------------------------------------------------------------- solvers

class Perf:
    def __init__(self, solver, X, y, C):
        self.solver, self.X, self.y, self.C = solver, X, y, C

    def run(self, eps):
        t0 = time.perf_counter()
        model = linsvm.train(self.X, self.y, solver=self.solver, C=self.C, bias=1.0, tol=eps)
        return time.perf_counter() - t0, model


class LibLinear:
    def __init__(self, X, y, C, bias):
        self.prob = H.liblinear().problem(y, X)
        self.C, self.bias = C, bias

    def run(self, eps):
        seconds, m = H.liblinear_train(self.prob, H.liblinear_options(3, self.C, eps, self.bias))
        return seconds, H.liblinear_vector(m, positive=1)


def median_times(jobs, repeats):
    """jobs: {key: callable returning seconds}; run them interleaved, return medians."""
    return {k: H.median(v) for k, v in H.interleaved(jobs, repeats).items()}


def ll_ladder(solver, objective, fstar, target):
    """First -e whose median gap over harness.RANDOM_TRIES runs is <= target: (eps, gap) or
    (None, best gap); also every objective seen (for f*)."""
    seen = []

    def gap(w):
        seen.append(objective(w))
        return (seen[-1] - fstar) / fstar
    walk = H.walk_ladder(lambda eps: solver.run(eps) + ({},), LL_LADDER, gap, target, randomized=True)
    return walk.knob, (walk.gap if walk.reached else walk.best_gap), seen


def fmt_s(x):
    if x is None:
        return "-"
    return f"{x * 1e3:.1f} ms" if x < 1 else f"{x:.2f} s"


def fmt_g(x):
    return "-" if x is None else f"{x:.1e}"


# --------------------------------------------------------------------------- parts

def reference(name, X, y, C, t, Xb, kind):
    """f* and the certified lower bound for the binary (kind 'perf') or pairwise objective."""
    solver = Perf(kind, X, y, C)
    _, model = solver.run(REF_EPS)
    w = model.weights[:, 0]
    F = hinge_F(w, Xb, t, C) if kind == "perf" else pairwise_P(w, X, t, C)
    return F, model.column_stats[0]["dual_objective"], model


def table1_row(name, C, repeats, max_pairs, gap_target):
    X, y = load(name)
    t = np.where(y == max(y), 1.0, -1.0)     # linsvm: +1 first for {-1, +1}; any order gives the same F
    Xb = H.augmented(X)
    n, d = X.shape
    out = dict(name=name, n=n, d=d, density=100.0 * X.nnz / (n * d), C=C)
    # --- classification
    F_ref, D_ref, _ = reference(name, X, y, C, t, Xb, "perf")
    perf = Perf("perf", X, y, C)
    ll = LibLinear(X, y, C, 1)
    objective = lambda w: hinge_F(w, Xb, t, C)
    _, model = perf.run(EPS)
    st = model.column_stats[0]
    F_perf = objective(model.weights[:, 0])
    # LIBLINEAR default, and the ladder (its objectives also feed f*)
    _, w_def = ll.run(0.1)
    seen = [objective(w_def)]
    fstar = min([F_ref, F_perf] + seen)
    eps_eq, g_eq, more = ll_ladder(ll, objective, fstar, (F_perf - fstar) / fstar)
    seen += more
    fstar = min([fstar] + seen)
    gap_perf = (F_perf - fstar) / fstar
    # equal-gap (DESIGN.md): first perf eps and LIBLINEAR -e reaching gap_target
    eps_p = H.walk_ladder(lambda e: perf.run(e) + ({},), PERF_LADDER,
                          lambda m: (objective(m.weights[:, 0]) - fstar) / fstar, gap_target).knob
    eps_l, g_l, _ = ll_ladder(ll, objective, fstar, gap_target)
    jobs = {"perf": lambda: perf.run(EPS)[0], "ll_def": lambda: ll.run(0.1)[0]}
    if eps_eq is not None:
        jobs["ll_eq"] = lambda: ll.run(eps_eq)[0]
    if eps_p is not None:
        jobs["perf_gap"] = lambda: perf.run(eps_p)[0]
    if eps_l is not None:
        jobs["ll_gap"] = lambda: ll.run(eps_l)[0]
    tm = median_times(jobs, repeats)
    out.update(perf_s=tm["perf"], perf_iter=st["n_iter"], perf_gap=gap_perf, cert=(fstar - D_ref) / fstar,
               ll_def_s=tm["ll_def"], ll_def_gap=(objective(w_def) - fstar) / fstar,
               ll_eq_s=tm.get("ll_eq"), ll_eq_eps=eps_eq, ll_eq_best=g_eq,
               gap_perf_s=tm.get("perf_gap"), gap_perf_eps=eps_p, gap_ll_s=tm.get("ll_gap"),
               gap_ll_eps=eps_l, gap_ll_best=g_l, fstar=fstar, ws_rel=(fstar - st["objective_ws"]) / fstar)
    log(f"{name}: perf {fmt_s(tm['perf'])} ({st['n_iter']} it, gap {gap_perf:.1e}), "
        f"liblinear same gap {fmt_s(tm.get('ll_eq'))} (-e {eps_eq})")
    # --- pairwise / ROC area
    P_ref, PD_ref, _ = reference(name, X, y, C, t, Xb, "perf-ord")
    ordp = Perf("perf-ord", X, y, C)
    pobj = lambda w: pairwise_P(w, X, t, C)
    _, omodel = ordp.run(EPS)
    ost = omodel.column_stats[0]
    P_perf = pobj(omodel.weights[:, 0])
    m = int(np.sum(t > 0)) * int(np.sum(t < 0))
    pstar = min(P_ref, P_perf)
    out.update(m=m, ord_iter=ost["n_iter"])
    pjobs = {"ord": lambda: ordp.run(EPS)[0]}
    ll_pair = None
    if m <= max_pairs:
        t0 = time.perf_counter()
        D, lab = explicit_pairs(X, t)
        build = time.perf_counter() - t0
        llp = LibLinear(D, lab, C * n / m, -1)
        pobj_ll = lambda w: pairwise_P(np.concatenate([w, [0.0]]), X, t, C)   # no bias weight
        _, wdef = llp.run(0.1)
        pstar = min(pstar, pobj_ll(wdef))
        eps_pe, g_pe, seen_p = ll_ladder(llp, pobj_ll, pstar, (P_perf - pstar) / pstar)
        pstar = min([pstar] + seen_p)
        pjobs["ll_def"] = lambda: llp.run(0.1)[0]
        if eps_pe is not None:
            pjobs["ll_eq"] = lambda: llp.run(eps_pe)[0]
        ll_pair = dict(build=build, eps=eps_pe, best=g_pe, def_gap=(pobj_ll(wdef) - pstar) / pstar)
    ptm = median_times(pjobs, repeats)
    out.update(ord_s=ptm["ord"], ord_gap=(P_perf - pstar) / pstar, ord_cert=(pstar - PD_ref) / pstar,
               ord_auc=roc(omodel.decision_function(X), t), perf_auc=roc(model.decision_function(X), t))
    if ll_pair is not None:
        out.update(pll_def_s=ptm["ll_def"], pll_def_gap=ll_pair["def_gap"], pll_eq_s=ptm.get("ll_eq"),
                   pll_eq_eps=ll_pair["eps"], pll_best=ll_pair["best"], pll_build=ll_pair["build"])
    log(f"{name}: perf-ord {fmt_s(ptm['ord'])} ({ost['n_iter']} it), m = {m}")
    return out


def roc(scores, t):
    from linsvm.problem.metrics import roc_area

    return roc_area(t > 0, scores)


def scaling(name, C_paper, sizes, repeats):
    X, y = load(name, join_test=True)
    rng = np.random.default_rng(0)
    order = rng.permutation(X.shape[0])
    rows = []
    for n in [s for s in sizes if s < X.shape[0]] + [X.shape[0]]:
        idx = np.sort(order[:n])
        Xs, ys = X[idx], y[idx]
        if np.unique(ys).size < 2:
            continue
        C = C_paper / n
        res = {}
        for solver in ("perf", "perf-ord"):
            p = Perf(solver, Xs, ys, C)
            it = p.run(EPS)[1].column_stats[0]["n_iter"]
            sec = median_times({"x": lambda: p.run(EPS)[0]}, repeats)["x"]
            res[solver] = (it, sec)
        rows.append((n, C, res))
        log(f"scaling {name} n={n}: perf {res['perf'][0]} it {fmt_s(res['perf'][1])}, "
            f"perf-ord {res['perf-ord'][0]} it {fmt_s(res['perf-ord'][1])}")
    return X.shape[0], rows


def slope(ns, ys):
    return float(np.polyfit(np.log(ns), np.log(ys), 1)[0]) if len(ns) > 1 else float("nan")


# --------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="four small/medium sets, 1 repeat, short scaling")
    ap.add_argument("--datasets", help="comma-separated training files under binary/")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--C", type=float, default=1.0, help="linsvm C for Table 1 (default 1)")
    ap.add_argument("--gap", type=float, default=1e-3, help="relative gap of the equal-gap table")
    ap.add_argument("--C-paper", type=float, default=1e4, help="fixed paper C for the scaling tables")
    ap.add_argument("--max-pairs", type=int, default=500_000,
                    help="largest pair count for LIBLINEAR on explicit pairs")
    ap.add_argument("--no-scaling", action="store_true")
    ap.add_argument("--out", default=str(REPO / "examples" / "results" / "bench_perf.md"))
    args = ap.parse_args()
    names = args.datasets.split(",") if args.datasets else (QUICK_FILES if args.quick else TRAIN_FILES)
    repeats = 1 if args.quick else args.repeats
    names = H.present(names)
    t_start = time.time()
    load_avg = " ".join(f"{x:.2f}" for x in os.getloadavg())
    rows = [table1_row(n, args.C, repeats, args.max_pairs, args.gap) for n in names]
    scal = []
    if not args.no_scaling:
        sizes = (1000, 3000, 10000) if args.quick else (1000, 2000, 5000, 10000, 20000, 50000, 100000)
        for name in (SCALING_SETS[:1] if args.quick else SCALING_SETS):
            if (data_dir() / name).is_file():
                scal.append((name,) + scaling(name, args.C_paper, sizes, repeats))

    L = []
    vers = ", ".join(f"{p} {H.version(p)}" for p in ("numpy", "scipy", "liblinear-official"))
    L += ["# linsvm perf / perf-ord benchmark (Joachims 2006, Table 1 / Figure 2 protocol)", "",
          f"- Machine: nproc {os.cpu_count()}, {platform.processor() or platform.machine()}, load average "
          f"at start {load_avg}; Python {platform.python_version()}, {vers}, linsvm {linsvm.__version__}.",
          f"- Command: `python examples/bench_perf.py {' '.join(sys.argv[1:])}`; wall time "
          f"{time.time() - t_start:.0f} s; medians of {repeats} interleaved run(s).",
          f"- C = {args.C:g} (linsvm scaling; paper's C = C n) for Tables 1-2; eps = {EPS:g} for perf; "
          f"f* = the lowest objective seen (perf eps = {REF_EPS:g} and every LIBLINEAR run); 'cert' = "
          "(f* - perf's certified lower bound)/f*.  See the docstring for the protocol.", ""]
    L += ["## Table 1: classification (objective of LIBLINEAR -s 3)", "",
          "| data set | n | N | s | perf eps=0.001 | iters | gap | cert | (f*-obj_ws)/f* | LIBLINEAR -e 0.1 (gap) | "
          "LIBLINEAR at perf's gap (-e) | LIBLINEAR / perf |", "|" + "---|" * 12]
    for r in rows:
        ll_eq = f"{fmt_s(r['ll_eq_s'])} ({r['ll_eq_eps']:g})" if r["ll_eq_s"] is not None else \
            f"not reached (best {r['ll_eq_best']:.1e})"
        ratio = f"{r['ll_eq_s'] / r['perf_s']:.2f}" if r["ll_eq_s"] is not None else "-"
        L.append(f"| {r['name']} | {r['n']} | {r['d']} | {r['density']:.1f}% | {fmt_s(r['perf_s'])} | "
                 f"{r['perf_iter']} | {r['perf_gap']:.1e} | {r['cert']:.0e} | {r['ws_rel']:.1e} | "
                 f"{fmt_s(r['ll_def_s'])} ({r['ll_def_gap']:.1e}) | {ll_eq} | {ratio} |")
    L += ["", "gap = (F - f*)/f* of the returned w; (f*-obj_ws)/f*: the paper's Figure 7 quantity "
          "(relaxed working-set objective below the optimum).", ""]
    L += [f"## Table 1 (ordinal regression / ROC area, two levels): perf-ord", "",
          "| data set | n | pairs m | perf-ord eps=0.001 | iters | gap | cert | ROC area perf-ord / perf (train) | "
          "LIBLINEAR on pairs -e 0.1 (gap) | LIBLINEAR on pairs at perf-ord's gap (-e) | LIBLINEAR / perf-ord | "
          "pair build |", "|" + "---|" * 12]
    for r in rows:
        if "pll_def_s" in r:
            eq = f"{fmt_s(r['pll_eq_s'])} ({r['pll_eq_eps']:g})" if r["pll_eq_s"] is not None else \
                f"not reached (best {r['pll_best']:.1e})"
            ratio = f"{r['pll_eq_s'] / r['ord_s']:.2f}" if r["pll_eq_s"] is not None else "-"
            extra = f"{fmt_s(r['pll_def_s'])} ({r['pll_def_gap']:.1e}) | {eq} | {ratio} | {fmt_s(r['pll_build'])}"
        else:
            extra = f"NA (m > {args.max_pairs}) | NA | - | -"
        L.append(f"| {r['name']} | {r['n']} | {r['m']} | {fmt_s(r['ord_s'])} | {r['ord_iter']} | "
                 f"{r['ord_gap']:.1e} | {r['ord_cert']:.0e} | {r['ord_auc']:.4f} / {r['perf_auc']:.4f} | {extra} |")
    L += ["", f"## Equal quality (DESIGN.md): seconds to (F - f*)/f* <= {args.gap:g}, classification", "",
          "| data set | perf (eps) | LIBLINEAR -s 3 (-e) | LIBLINEAR / perf |", "|---|---|---|---|"]
    for r in rows:
        p = f"{fmt_s(r['gap_perf_s'])} ({r['gap_perf_eps']:g})" if r["gap_perf_s"] is not None else "not reached"
        q = f"{fmt_s(r['gap_ll_s'])} ({r['gap_ll_eps']:g})" if r["gap_ll_s"] is not None else \
            f"not reached (best {r['gap_ll_best']:.1e})"
        ratio = f"{r['gap_ll_s'] / r['gap_perf_s']:.2f}" if r["gap_ll_s"] and r["gap_perf_s"] else "-"
        L.append(f"| {r['name']} | {p} | {q} | {ratio} |")
    for name, n_all, srows in scal:
        ns = [n for n, _, _ in srows]
        L += ["", f"## Figure 2 and time vs n: {name} (joined with its test file where present, {n_all} rows), "
              f"paper C = {args.C_paper:g} fixed (linsvm C = C_paper / n), eps = {EPS:g}", "",
              "| n | linsvm C | perf iters | perf time | perf ms/iter | perf-ord iters | perf-ord time | "
              "perf-ord ms/iter | perf-ord ns/iter/(n log2 n) |", "|" + "---|" * 9]
        for n, C, res in srows:
            (pi, ps), (oi, os_) = res["perf"], res["perf-ord"]
            L.append(f"| {n} | {C:.4g} | {pi} | {fmt_s(ps)} | {1e3 * ps / pi:.3f} | {oi} | {fmt_s(os_)} | "
                     f"{1e3 * os_ / oi:.3f} | {1e9 * os_ / oi / (n * math.log2(n)):.2f} |")
        L += ["", f"log-log slope vs n: perf time/iter {slope(ns, [r['perf'][1] / r['perf'][0] for _, _, r in srows]):.2f}, "
              f"perf-ord time/iter {slope(ns, [r['perf-ord'][1] / r['perf-ord'][0] for _, _, r in srows]):.2f}, "
              f"perf iterations {slope(ns, [r['perf'][0] for _, _, r in srows]):.2f}, "
              f"perf-ord iterations {slope(ns, [r['perf-ord'][0] for _, _, r in srows]):.2f}, "
              f"perf-ord total time {slope(ns, [r['perf-ord'][1] for _, _, r in srows]):.2f}"]
    text = "\n".join(L) + "\n"
    print(text)
    out = pathlib.Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text)


if __name__ == "__main__":
    main()
