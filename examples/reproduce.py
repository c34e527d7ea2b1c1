"""Reproduce the papers' tables and figures with linsvm, beside the papers' numbers.

    python examples/reproduce.py TARGET [--quick] [--out examples/results]

Each target writes TARGET.tsv and TARGET.md (ours beside the paper's numbers)
and, where the paper has a figure and matplotlib is installed, TARGET.png.
Data come from $LINSVM_DATA (default ../shared/datasets); a paper's data set
that is not available here is replaced by the closest one, and the table
says so.  `--quick` runs a small subset of each target (seconds).

Several targets may be named in one run.  A target whose data set is not under
$LINSVM_DATA is skipped, and one line on stderr names every skipped target and
its missing file; the exit status is then 0 with `--quick` (the CI step, which
must pass on a machine without the shared data) and 1 otherwise (a full
reproduction that silently left tables out would mislead).

The paper's C is converted to linsvm's -c (DESIGN.md): MFN's C_paper = 2C.
Times are wall-clock seconds on this machine (the papers used 2003-2008
hardware), so compare ratios, not seconds.
"""
from __future__ import annotations

import argparse
import pathlib
import sys

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H                                    # noqa: E402
from harness import data_path, data_root               # noqa: E402

import linsvm                                          # noqa: E402
from linsvm.cv import cross_validate                   # noqa: E402

REPO = H.REPO


class MissingData(Exception):
    """A data set a target needs is not under $LINSVM_DATA (the message is its path)."""


# Keerthi & DeCoste's stopping rule (eq. 13 at epsilon = 1e-6, no gradient test): mfn's
# defaults since issue 15 are -e 0.01 with LIBLINEAR's gradient test, so the paper's
# tables ask for the paper's rule.
PAPER_STOP = {"tol": 1e-6, "gtol": 0.0}


def load(rel, n_features=None):
    path = data_path(rel)
    if path is None:
        raise MissingData(rel)
    return linsvm.load_svmlight(path, n_features=n_features)


def timed(fn, repeats=1):
    """(median seconds, last result) of calling fn() `repeats` times."""
    runs = H.interleaved({"fn": H.timed(fn)}, repeats)["fn"]
    return float(np.median([seconds for seconds, _ in runs])), runs[-1][1]


class Table:
    """Rows of a result table, written as TSV and Markdown."""

    def __init__(self, name, columns, note=""):
        self.name, self.columns, self.note, self.rows = name, columns, note, []

    def add(self, *values):
        self.rows.append(values)

    @staticmethod
    def _fmt(v):
        if isinstance(v, float):                   # 4 digits, but the papers' 105.16 and
            return f"{v:.6g}" if abs(v) >= 100 else f"{v:.4g}"   # 20075.5 print in full
        return "-" if v is None else str(v)

    def write(self, out):
        out.mkdir(parents=True, exist_ok=True)
        with open(out / f"{self.name}.tsv", "w") as fh:
            fh.write("\t".join(self.columns) + "\n")
            for r in self.rows:
                fh.write("\t".join("" if v is None else str(v) for v in r) + "\n")
        md = [f"### {self.name}", "", self.note, ""]
        md += H.markdown_table(self.columns, [[self._fmt(v) for v in r] for r in self.rows])
        (out / f"{self.name}.md").write_text("\n".join(md) + "\n")
        print("\n".join(md) + "\n")


# ---------------------------------------------------------------------------- MFN

MFN_SETS = {"Adult-9": "binary/a9a", "Web-8": "binary/w8a"}
# Table 1: seconds over 21 C values, (no beta-seeding, beta-seeding)
MFN_TABLE1 = {"Adult-9": (60.26, 36.80), "Web-8": (105.16, 24.43)}
# Table 3: seconds at C=1 for no heuristics, heuristic 1, heuristic 2, both; SV fraction
MFN_TABLE3 = {"Adult-9": (7.28, 5.12, 3.57, 3.00, 0.605), "Web-8": (11.79, 9.24, 4.17, 3.90, 0.219)}
# Tables 4-5: log2 C_paper -> (MFN seconds, MFN 10-fold CV error %)
MFN_TABLE4 = dict(zip(np.arange(-4.5, 1.01, 0.5).round(1),
                      zip((1.2, 1.3, 1.4, 1.6, 1.8, 1.9, 2.2, 3.1, 2.9, 2.9, 3.1, 3.5),
                          (15.30, 15.26, 15.22, 15.21, 15.21, 15.23, 15.23, 15.22, 15.22, 15.23, 15.23, 15.23))))
MFN_TABLE5 = dict(zip(np.arange(-0.5, 5.01, 0.5).round(1),
                      zip((3.2, 4.2, 5.0, 5.0, 4.7, 5.7, 7.6, 8.9, 10.8, 10.8, 11.6, 11.2),
                          (1.34, 1.34, 1.33, 1.33, 1.33, 1.33, 1.33, 1.34, 1.34, 1.34, 1.34, 1.34))))


def mfn_table1(out, quick):
    """Table 1: total time over the 21 values C_paper = sqrt(2)^k, k = -10..10, solved
    one after the other with and without beta-seeding (Sec. 4.1)."""
    ks = range(-10, 11, 4 if quick else 1)
    t = Table("mfn_table1", ["data set", "paper no seeding s", "paper seeding s", "paper ratio",
                             "linsvm no seeding s", "linsvm seeding s", "linsvm ratio",
                             "cg iter cold", "cg iter warm"],
              "Seconds to solve at C_paper = sqrt(2)^k, k = -10..10 (linsvm -c = C_paper / 2); "
              "News20, Financial and Yahoo are not available here.")
    for name, rel in (list(MFN_SETS.items())[:1] if quick else MFN_SETS.items()):
        X, y = load(rel)
        Cs = [2.0 ** (k / 2) / 2 for k in ks]
        cg = {}

        def path(warm):
            prev, total = None, 0
            for C in Cs:
                prev = linsvm.train(X, y, C=C, init=prev if warm else None, **PAPER_STOP)
                total += prev.stats["cg_iter"]
            cg[warm] = total
        cold_s, _ = timed(lambda: path(False))
        warm_s, _ = timed(lambda: path(True))
        pa, pb = MFN_TABLE1[name]
        t.add(name, pa, pb, round(pa / pb, 2), round(cold_s, 3), round(warm_s, 3),
              round(cold_s / warm_s, 2), cg[False], cg[True])
    t.write(out)


def mfn_table3(out, quick):
    """Table 3: the speed-up heuristics at C_paper = 1 (linsvm -c 0.5), from beta = 0."""
    t = Table("mfn_table3", ["data set", "heuristics", "paper s", "linsvm s", "cg iter",
                             "Newton iter", "paper SV fraction", "linsvm SV fraction"],
              "Seconds at C_paper = 1 (linsvm -c 0.5), cold start.  The four paper rows run "
              "the paper's algorithm (--forcing 0 --no-fused-cg: two passes per CGLS "
              "iteration, no forcing term); the last row is linsvm's default, whose "
              "inexact-Newton forcing term subsumes heuristic 1.")
    paper_alg = dict(PAPER_STOP, forcing=0.0, fused_cg=False)
    variants = {"none": dict(paper_alg, heuristic1=False, heuristic2=False),
                "heuristic 1": dict(paper_alg, heuristic2=False),
                "heuristic 2": dict(paper_alg, heuristic1=False),
                "both": paper_alg, "linsvm default": {}}
    for name, rel in (list(MFN_SETS.items())[:1] if quick else MFN_SETS.items()):
        X, y = load(rel)
        paper = MFN_TABLE3[name]
        for i, (label, opts) in enumerate(variants.items()):
            sec, m = timed(lambda: linsvm.train(X, y, C=0.5, **opts), repeats=1 if quick else 3)
            t.add(name, label, paper[i] if i < 4 else None, round(sec, 4), m.stats["cg_iter"],
                  m.stats["n_iter"], paper[4], round(m.stats["n_active"] / X.shape[0], 3))
    t.write(out)


def mfn_tables4_5(out, quick):
    """Tables 4-5: training time and 10-fold CV error over the papers' C ranges."""
    t = Table("mfn_tables4_5", ["data set", "log2 C_paper", "linsvm -c", "paper s", "linsvm s",
                                "paper CV error %", "linsvm CV error %"],
              "Training time on all data (cold start, default -e) and 10-fold CV error; the "
              "paper's C is 2x linsvm's -c.  Folds differ from the paper's (random), so CV "
              "errors agree to about 0.1-0.2 points.")
    folds = 3 if quick else 10
    for name, rel, paper in (("Adult-9", "binary/a9a", MFN_TABLE4), ("Web-8", "binary/w8a", MFN_TABLE5)):
        if quick and name == "Web-8":
            continue
        X, y = load(rel)
        grid = list(paper.items())[:: 4 if quick else 1]
        Cs = [2.0 ** lc / 2 for lc, _ in grid]
        res = cross_validate(X, y, Cs=Cs, n_folds=folds, seed=0, n_jobs=2)
        for (lc, (p_s, p_err)), C, pt in zip(grid, Cs, res.points):
            sec, _ = timed(lambda: linsvm.train(X, y, C=C, **PAPER_STOP), repeats=1 if quick else 3)
            t.add(name, lc, C, p_s, round(sec, 4), p_err, round(100 * (1 - pt.mean), 2))
    t.write(out)


def mfn_figure1(out, quick):
    """Figure 1: training time versus m on the Adult and Web ladders at the paper's
    CV-optimal C (Tables 4-5: Adult log2 C_paper = -3.0, Web 0.5), log-log."""
    ladders = {"Adult": (["a1a", "a2a", "a3a", "a4a", "a8a", "a9a"], 2.0 ** -3.0 / 2),
               "Web": (["w1a", "w7a", "w8a"], 2.0 ** 0.5 / 2)}
    t = Table("mfn_figure1", ["ladder", "file", "m", "linsvm -c", "linsvm s"],
              "Training time vs m (paper: Adult-1,4,7,9 and Web-1,4,7,8; a5a-a7a and w2a-w6a "
              "are not available here).")
    points, used = {}, {}
    for ladder, (files, C) in ladders.items():
        present = [f for f in (files[::2] if quick else files) if data_path(f"binary/{f}") is not None]
        if not present:
            raise MissingData(f"binary/{files[-1]}")
        for f in present:
            X, y = load(f"binary/{f}")
            sec, _ = timed(lambda: linsvm.train(X, y, C=C, **PAPER_STOP), repeats=1 if quick else 3)
            t.add(ladder, f, X.shape[0], C, round(sec, 4))
            points.setdefault(ladder, []).append((X.shape[0], sec))
            used.setdefault(ladder, []).append(f)
    t.write(out)
    # the paper's own points on these ladders: L2-SVM-MFN at the CV-optimal C on the
    # largest set (Tables 4-5), on a 2.4 GHz Xeon
    paper = {"Adult": ("Adult-9", 32561, MFN_TABLE4[-3.0][0]), "Web": ("Web-8", 49749, MFN_TABLE5[0.5][0])}
    panels = []
    for ladder, pts in points.items():
        C = ladders[ladder][1]
        pname, pm, ps = paper[ladder]
        panels.append(dict(series={"linsvm mfn (this machine)": pts},
                           marks={f"paper L2-SVM-MFN, {pname} (2.4 GHz Xeon, 2005)": [(pm, ps)]},
                           xlabel="m (training examples)", ylabel="training time (s)",
                           title=f"{ladder} ({', '.join(used[ladder])}), "
                                 f"-c {C:.4g} (C_paper = 2^{np.log2(2 * C):g})",
                           logx=True, logy=True, slope=1))
    _plot(out / "mfn_figure1.png", "MFN Figure 1 (Keerthi & DeCoste 2005): training time vs m, "
          "linsvm's numbers" + (" (quick subset)" if quick else ""), panels)


def objective_of(model, X, y, C, loss, p=2.0):
    """linsvm's primal objective of a binary model, computed from its weights:
    1/2||w||^2 + C sum loss(1 - t w.x) with loss = hinge**p (x with the bias feature)."""
    w = np.asarray(model.weights)[:, 0]
    n = model.n_features_
    score = X[:, :n] @ w[:n] + (model.bias * w[n] if model.bias > 0 else 0.0)
    t = np.where(y == model.classes_[0], 1.0, -1.0)
    xi = np.maximum(0.0, 1.0 - t * score)
    return 0.5 * w @ w + C * np.sum(xi ** p if loss != "l1" else xi)


# ---------------------------------------------------------------------------- SDM

SDM_TABLE42 = {"SECTOR": ((94.83, 0.56), (95.17, 0.62), (94.37, 0.57))}


def sdm_table4_2(out, quick):
    """Table 4.2: test accuracy of one-vs-rest (dcd, hinge), Crammer-Singer (sdm-cs) and
    Weston-Watkins (sdm-ww), C tuned on a validation split, over random 60/20/20
    class-stratified partitions of the pooled SECTOR train+test (Sec. 4)."""
    from scipy.sparse import vstack
    X1, y1 = load("multiclass/sector.scale.bz2")
    X2, y2 = load("multiclass/sector.t.scale.bz2", n_features=X1.shape[1])
    X, y = vstack([X1, X2]).tocsr(), np.concatenate([y1, y2])
    Cs = [0.1, 1.0] if quick else [0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0]
    n_parts = 1 if quick else 5
    methods = {"OVR (dcd)": dict(solver="dcd", loss="l1"), "CS (sdm-cs)": dict(solver="sdm-cs"),
               "WW (sdm-ww)": dict(solver="sdm-ww")}
    acc = {m: [] for m in methods}
    for part in range(n_parts):
        rng = np.random.default_rng(part)
        split = np.empty(y.shape[0], dtype=int)
        for label in np.unique(y):                      # class-stratified 60/20/20
            idx = rng.permutation(np.flatnonzero(y == label))
            cut = np.round(np.array([0.6, 0.8]) * idx.size).astype(int)
            split[idx[:cut[0]]], split[idx[cut[0]:cut[1]]], split[idx[cut[1]:]] = 0, 1, 2
        tr, va, te = (split == 0), (split == 1), (split == 2)
        for name, opts in methods.items():
            val = [np.mean(linsvm.train(X[tr], y[tr], C=C, **opts).predict(X[va]) == y[va]) for C in Cs]
            best = Cs[int(np.argmax(val))]
            model = linsvm.train(X[tr | va], y[tr | va], C=best, **opts)
            acc[name].append(100 * np.mean(model.predict(X[te]) == y[te]))
    t = Table("sdm_table4_2", ["data set", "method", "paper accuracy %", "linsvm accuracy %", "partitions"],
              f"Test accuracy, mean +- std over {n_parts} random 60/20/20 partitions of SECTOR "
              f"(paper: 10), C from {Cs} by validation accuracy, retrained on train+validation.")
    for (name, vals), (pm, ps) in zip(acc.items(), SDM_TABLE42["SECTOR"]):
        t.add("SECTOR", name, f"{pm} +- {ps}", f"{np.mean(vals):.2f} +- {np.std(vals):.2f}", n_parts)
    t.write(out)


def sdm_figure3(out, quick):
    """Figure 3, row 2 (SECTOR): relative function value difference (f - f*)/|f*| and
    test accuracy against training time, sdm-cs at decreasing tolerances beside
    LIBLINEAR -s 4 (the paper compares SDM with EG and bundle methods, which are not
    available here), SECTOR train / test, C = 1.  f is the Crammer-Singer primal
    objective (the paper plots the dual's).  f* is the primal objective of a tighter sdm-cs
    run (-e 1e-3; 1e-2 in --quick), whose certified duality gap bounds how far f* can be
    from the optimum (the table's note gives it); -e 1e-4 would take minutes."""
    X, y = load("multiclass/sector.scale.bz2")
    Xt, yt = load("multiclass/sector.t.scale.bz2", n_features=X.shape[1])
    ref_tol = 1e-2 if quick else 1e-3
    ref = linsvm.train(X, y, solver="sdm-cs", C=1.0, tol=ref_tol)

    def primal(model):
        W = np.asarray(model.weights)
        S = X @ W[:X.shape[1]] + (model.bias * W[X.shape[1]] if model.bias > 0 else 0)
        col = {float(v): j for j, v in enumerate(model.classes_)}
        idx = np.array([col[float(v)] for v in y])
        own = S[np.arange(y.size), idx]
        S[np.arange(y.size), idx] = -np.inf
        return 0.5 * np.sum(W * W) + np.sum(np.maximum(0.0, 1.0 + S.max(axis=1) - own))
    fstar = primal(ref)
    dual = ref.stats.get("dual_objective")
    certified = "" if dual is None else f" (its duality gap: (f* - dual)/f* = {(fstar - dual) / abs(fstar):.1e})"
    t = Table("sdm_figure3", ["solver", "tolerance", "seconds", "primal objective", "rel. difference",
                              "test accuracy %"],
              "Crammer-Singer primal objective 1/2 sum ||w_m||^2 + C sum_i max(0, 1 + max_{m != y_i} "
              f"w_m.x_i - w_{{y_i}}.x_i), C = 1, SECTOR train; f* = {fstar:.6g} from sdm-cs at -e {ref_tol:g}"
              f"{certified}; accuracy on SECTOR test.")
    gap, acc = {}, {}

    def record(name, tol, sec, model):
        f = primal(model)
        a = 100 * np.mean(model.predict(Xt) == yt)
        t.add(name, tol, round(sec, 3), f, (f - fstar) / abs(fstar), round(a, 2))
        if f > fstar:                                   # a log axis shows only positive differences
            gap.setdefault(name, []).append((sec, (f - fstar) / abs(fstar)))
        acc.setdefault(name, []).append((sec, a))
    for tol in ([0.5, 0.1] if quick else [1.0, 0.5, 0.2, 0.1, 0.05, 0.02, 0.01]):
        sec, m = timed(lambda: linsvm.train(X, y, solver="sdm-cs", C=1.0, tol=tol))
        record("linsvm sdm-cs", tol, sec, m)
    L = H.liblinear()
    if L is not None:
        prob = L.problem(y, X)
        for eps in ([0.1] if quick else [1.0, 0.3, 0.1, 0.03, 0.01]):
            sec, ll = timed(lambda: L.train(prob, L.parameter(f"-s 4 -c 1 -B 1 -e {eps} -q")))
            labels = np.array(ll.get_labels(), dtype=float)
            W = H.liblinear_W(ll, X.shape[1], list(labels))
            model = linsvm.Model(solver="liblinear:MCSVM_CS", classes=labels, weights=W, bias=1.0,
                                 params={"C": 1.0})
            record("liblinear -s 4", eps, sec, model)
    t.write(out)
    _plot(out / "sdm_figure3.png",
          "SDM Figure 3, row 2 (Keerthi et al. 2008): SECTOR, Crammer-Singer, C = 1 - linsvm's numbers"
          + (" (quick subset)" if quick else ""),
          [dict(series=gap, xlabel="training time (s)", ylabel="(f - f*) / f*  (primal)",
                title="relative function value difference (each point: one tolerance)", logy=True),
           dict(series=acc, xlabel="training time (s)", ylabel="test set accuracy (%)",
                title="test accuracy on sector.t.scale")])


# ---------------------------------------------------------------------------- SVMperf

# Figures 1-2: C_paper held fixed over n; linsvm -c = C_paper / n is 1 at the smallest n and
# 1/64 at n = 160,000 (1/64 is the C that cross-validation chose on this generator's text sets
# for L2-SVM in the README benchmark)
PERF_FIG_C_PAPER = 2500
PERF_TABLE1 = {"Reuters CCAT": (149.7, 20075.5, 304.1), "Reuters C11": (178.9, 5187.4, 499.1),
               "Arxiv astro-ph": (16.9, 80.1, 26.1), "Covertype 1": (171.7, 25514.3, 1109.1),
               "KDD04 Physics": (31.9, 1040.2, 132.5)}


def perf_table1(out, quick):
    """Table 1: training time of the 1-slack cutting-plane solvers (classification and
    ordinal regression on two levels, i.e. ROC area) against a dual decomposition method
    on the same hinge objective (LIBLINEAR -s 3 here; the paper used SVM-Light), at the
    paper's tolerance epsilon = 0.001.  The paper's data sets are not available; the
    closest large sparse and dense ones are used and the paper's rows are listed below."""
    sets = {"a9a": "binary/a9a", "ijcnn1": "binary/ijcnn1.bz2"} if quick else \
        {"a9a": "binary/a9a", "w8a": "binary/w8a", "ijcnn1": "binary/ijcnn1.bz2"}
    t = Table("perf_table1", ["data set", "n", "d", "perf s", "perf iter", "liblinear -s 3 s",
                              "perf-ord s", "paper perf s", "paper SVM-Light s", "paper perf-ord s"],
              "Seconds at linsvm -c 1 (paper C = n), epsilon 0.001; LIBLINEAR -s 3 at -e 0.1 "
              "(its default).  Paper rows are the paper's own data sets (RCV1, astro-ph, "
              "Covertype, KDD04), not available here.")
    for name, rel in sets.items():
        X, y = load(rel)
        sec, m = timed(lambda: linsvm.train(X, y, solver="perf", C=1.0))
        sec_ord, _ = timed(lambda: linsvm.train(X, y, solver="perf-ord", C=1.0))
        L, sec_ll = H.liblinear(), None
        if L is not None:
            prob = L.problem(y, X)
            sec_ll, _ = timed(lambda: L.train(prob, L.parameter("-s 3 -c 1 -B 1 -q")))
        t.add(name, X.shape[0], X.shape[1], round(sec, 3), m.stats["n_iter"],
              None if sec_ll is None else round(sec_ll, 3), round(sec_ord, 3), None, None, None)
    for name, (a, b, c) in PERF_TABLE1.items():
        t.add(name + " (paper)", None, None, None, None, None, None, a, b, c)
    t.write(out)


def perf_figures1_2(out, quick):
    """Figures 1-2: training time of perf (classification) and perf-ord (ordinal regression
    on two levels) and their iterations against the training set size n, log-log.  As in
    the paper, C_paper is held fixed over n (the paper: the value best on the largest set),
    so linsvm's -c = C_paper / n changes with n; the paper reports roughly linear time and
    iterations that do not grow with n.  Nested prefixes of one synthetic set."""
    from linsvm.io.synth import make_text_classification
    X, y = make_text_classification(n_samples=40000 if quick else 160000,
                                    n_features=50000 if quick else 200000, seed=3)
    sizes = [2500, 10000, 40000] if quick else [2500, 5000, 10000, 20000, 40000, 80000, 160000]
    c_paper = PERF_FIG_C_PAPER
    t = Table("perf_figures1_2", ["n", "linsvm -c", "perf s", "perf iterations", "perf-ord s",
                                  "perf-ord iterations"],
              f"Synthetic text-like data (linsvm synth, seed 3; the paper's RCV1 CCAT is not available), "
              f"C_paper = {c_paper} for every n (linsvm -c = C_paper / n), epsilon 0.001; seconds are the "
              f"median of {1 if quick else 3} runs.")
    secs, iters = {"perf": [], "perf-ord": []}, {"perf": [], "perf-ord": []}
    for n in sizes:
        Xs, ys, C = X[:n], y[:n], c_paper / n
        s1, m1 = timed(lambda: linsvm.train(Xs, ys, solver="perf", C=C), repeats=1 if quick else 3)
        s2, m2 = timed(lambda: linsvm.train(Xs, ys, solver="perf-ord", C=C), repeats=1 if quick else 3)
        t.add(n, C, round(s1, 3), m1.stats["n_iter"], round(s2, 3), m2.stats["n_iter"])
        for name, sec, m in (("perf", s1, m1), ("perf-ord", s2, m2)):
            secs[name].append((n, sec))
            iters[name].append((n, m.stats["n_iter"]))
    t.write(out)
    sub = " (quick subset)" if quick else ""
    _plot(out / "perf_figures1_2.png",
          f"SVMperf Figures 1-2 (Joachims 2006): synthetic text data, C_paper = {c_paper}, "
          f"epsilon = 0.001 - linsvm's numbers{sub}",
          [dict(series={"linsvm perf (classification)": secs["perf"],
                        "linsvm perf-ord (ordinal, 2 levels)": secs["perf-ord"]},
                xlabel="n (training examples)", ylabel="training time (s)",
                title="Figure 1: training time vs n", logx=True, logy=True, slope=1),
           dict(series={"linsvm perf (classification)": iters["perf"],
                        "linsvm perf-ord (ordinal, 2 levels)": iters["perf-ord"]},
                xlabel="n (training examples)", ylabel="iterations (cutting planes added)",
                title="Figure 2: iterations vs n", logx=True, ymin=0)])


# ---------------------------------------------------------------------------- SVM-ALM

ALM_TABLE1 = {"IJCNN1": {"OUR": 3.2, "PEGASOS": 87.9, "SVMperf": 105.6, "DCD": 7.8, "BMRM": 63.5},
              "WEBPAGE": {"OUR": 4.6, "PEGASOS": 38.3, "SVMperf": 62.1, "DCD": 3.6, "BMRM": 30.2}}
ALM_TABLE2 = {"IJCNN1": {"OUR": 3.2, "TRON": 7.7, "PCD": 3.4, "DCD": 7.5, "BMRM": 64.2},
              "WEBPAGE": {"OUR": 4.4, "TRON": 2.2, "PCD": 0.9, "DCD": 3.9, "BMRM": 32.1}}
ALM_TABLE3 = {"IJCNN1": (67.3, 74.2, 74.6, 1.9), "WEBPAGE": (57.3, 59.7, 63.4, 1.6)}
ALM_SETS = {"IJCNN1": "binary/ijcnn1.bz2", "WEBPAGE": "binary/w8a"}


def alm_tables1_2(out, quick):
    """Tables 1-2: seconds for alm (p = 1 and p = 2) to bring the objective within 1% of
    the optimum at C = 1, beside LIBLINEAR's dual CD (-s 3 / -s 1) and TRON (-s 2)."""
    t = Table("alm_tables1_2", ["data set", "loss", "linsvm alm s", "alm tol", "liblinear s",
                                "liblinear solver", "paper OUR s", "paper DCD s", "paper TRON s"],
              "Seconds to reach a relative objective gap <= 1%, C = 1, f* from a tight run "
              "(mfn-l1 / mfn); 'WEBPAGE' is w8a (w8a.t is missing).  Each solver walks its "
              "tolerance ladder from loose to tight and the first run within 1% is timed.")
    L = H.liblinear()
    for name, rel in (list(ALM_SETS.items())[:1] if quick else ALM_SETS.items()):
        X, y = load(rel)
        for p, loss, ref_solver, ll_solvers in ((1.0, "l1", "mfn-l1", (3,)), (2.0, "l2", "mfn", (2, 1))):
            fstar = objective_of(linsvm.train(X, y, solver=ref_solver, C=1.0, tol=1e-8 if p == 2 else None),
                                 X, y, 1.0, loss)
            # each solver's tolerance ladder, loose to tight: the first run within 1% of f*
            within = dict(gap=lambda m: objective_of(m, X, y, 1.0, loss), target=1.01 * fstar)
            alm = H.walk_ladder(lambda tol: timed(lambda: linsvm.train(X, y, solver="alm", C=1.0, p=p, tol=tol))
                                + ({},), (1e-2, 1e-3, 1e-4, 1e-5), **within)
            alm_s, alm_tol = (round(alm.seconds, 3), alm.knob) if alm.reached else (None, None)
            for s_ in ll_solvers if L is not None else ():
                prob = L.problem(y, X)
                ll_type = {1: "L2R_L2LOSS_SVC_DUAL", 2: "L2R_L2LOSS_SVC", 3: "L2R_L1LOSS_SVC_DUAL"}[s_]

                def run_ll(e):
                    sec, md = timed(lambda: L.train(prob, L.parameter(f"-s {s_} -c 1 -B 1 -e {e} -q")))
                    w = H.liblinear_vector(md, X.shape[1])
                    model = linsvm.Model(solver=f"liblinear:{ll_type}", classes=np.array(md.get_labels(), float),
                                         weights=w[:, None], bias=1.0, params={"C": 1.0})
                    return sec, model, {}
                ll = H.walk_ladder(run_ll, (1.0, 0.3, 0.1, 0.03, 0.01, 1e-3), **within)
                ll_s = round(ll.seconds, 3) if ll.reached else None
                paper = ALM_TABLE1[name] if p == 1 else ALM_TABLE2[name]
                t.add(name, f"L{int(p)}", alm_s, alm_tol, ll_s, f"-s {s_}", paper["OUR"], paper["DCD"],
                      paper.get("TRON"))
    t.write(out)


def alm_table3(out, quick):
    """Table 3: test accuracy of L1-, L2- and Lp-SVM, p tuned over {1, 1.1, ..., 2} and C
    over a small grid by cross-validation on the training set (SVM-ALM, Sec. 4)."""
    t = Table("alm_table3", ["data set", "paper L1 %", "paper L2 %", "paper Lp %", "paper p",
                             "linsvm L1 %", "linsvm L2 %", "linsvm Lp %", "linsvm p", "linsvm C"],
              "Test accuracy; p and C by 3-fold CV (paper: p grid as here).  The paper's accuracies "
              "for IJCNN1/WEBPAGE are far below what any linear SVM gets on the LIBSVM copies "
              "used here, so compare the pattern (Lp >= max(L1, L2)), not the numbers.")
    from linsvm.cv import cross_validate
    for name, rel in (list(ALM_SETS.items())[:1] if quick else ALM_SETS.items()):
        X, y = load(rel)
        test = data_path(rel.replace(".bz2", "") + ".t" + (".bz2" if rel.endswith(".bz2") else ""))
        if test is not None:
            Xt, yt = linsvm.load_svmlight(test, n_features=X.shape[1])
        else:                                            # w8a: hold out a quarter
            cut = X.shape[0] * 3 // 4
            X, y, Xt, yt = X[:cut], y[:cut], X[cut:], y[cut:]
        if quick:
            X, y = X[:5000], y[:5000]
        ps = [1.0, 1.5, 2.0] if quick else [round(1 + 0.1 * i, 1) for i in range(11)]
        Cs = [0.1, 1.0] if quick else [0.03, 0.1, 0.3, 1.0, 3.0]
        res = cross_validate(X, y, solver="alm", Cs=Cs, ps=ps, n_folds=3, seed=0, n_jobs=2)

        def acc_at(p):
            pts = [pt for pt in res.points if pt.p == p]
            best = max(pts, key=lambda pt: (pt.mean, -pt.C))
            m = linsvm.train(X, y, solver="alm", C=best.C, p=p)
            return 100 * np.mean(m.predict(Xt) == yt)
        best = res.best
        pl1, pl2, plp, pp = ALM_TABLE3[name]
        t.add(name, pl1, pl2, plp, pp, round(acc_at(1.0), 2), round(acc_at(2.0), 2),
              round(acc_at(best.p), 2), best.p, best.C)
    t.write(out)


def _plot(path, title, panels):
    """Panels side by side as one PNG, if matplotlib is installed.  Each panel is a dict:
    series {label: [(x, y), ...]} (lines), marks {label: [(x, y), ...]} (unconnected
    markers, e.g. the paper's own points), xlabel, ylabel, title, logx, logy, ymin, and
    slope (draw a dashed power-law guide x^slope through the first point of the first
    series, to judge scaling on a log-log plot)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import NullFormatter
    except ImportError:
        print("(matplotlib not installed: no PNG; pip install \".[repro]\")")
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 4.4), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        first = None
        for label, pts in panel.get("series", {}).items():
            if not pts:
                continue
            xs, ys = zip(*sorted(pts))
            ax.plot(xs, ys, "o-", label=label)
            first = first or (xs, ys)
        for label, pts in panel.get("marks", {}).items():
            xs, ys = zip(*pts)
            ax.plot(xs, ys, "k*", markersize=11, linestyle="none", label=label)
        if panel.get("slope") is not None and first is not None:
            xs = np.array([first[0][0], first[0][-1]], dtype=float)
            ax.plot(xs, first[1][0] * (xs / xs[0]) ** panel["slope"], "k--", linewidth=0.8,
                    label=f"slope {panel['slope']:g} guide (time ~ x^{panel['slope']:g})")
        for on, axis, scale in ((panel.get("logx"), ax.xaxis, ax.set_xscale),
                                (panel.get("logy"), ax.yaxis, ax.set_yscale)):
            if on:                                   # decades labelled, minor ticks unlabelled
                scale("log")
                axis.set_minor_formatter(NullFormatter())
        ax.margins(0.08)
        if panel.get("ymin") is not None:
            ax.set_ylim(bottom=panel["ymin"])
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"])
        ax.set_title(panel.get("title", ""), fontsize=10)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"wrote {path}")


TARGETS = {
    "mfn-table1": mfn_table1,
    "mfn-table3": mfn_table3,
    "mfn-tables4-5": mfn_tables4_5,
    "mfn-figure1": mfn_figure1,
    "sdm-table4-2": sdm_table4_2,
    "sdm-figure3": sdm_figure3,
    "perf-table1": perf_table1,
    "perf-figures1-2": perf_figures1_2,
    "alm-tables1-2": alm_tables1_2,
    "alm-table3": alm_table3,
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("targets", nargs="+", choices=sorted(TARGETS), metavar="TARGET",
                    help="one or more of: " + ", ".join(TARGETS))
    ap.add_argument("--quick", action="store_true",
                    help="a small subset (seconds); targets without data are skipped, exit 0")
    ap.add_argument("--out", default=str(REPO / "examples" / "results"))
    args = ap.parse_args(argv)
    skipped = []
    for target in args.targets:
        try:
            TARGETS[target](pathlib.Path(args.out), args.quick)
        except MissingData as exc:
            skipped.append(f"{target} ({exc})")
    if skipped:
        print(f"reproduce.py: skipped {len(skipped)} of {len(args.targets)} targets, data not found "
              f"under {data_root()} (see datasets.txt, make data): " + ", ".join(skipped),
              file=sys.stderr)
        return 0 if args.quick else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
