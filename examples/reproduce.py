"""Reproduce the papers' tables and figures with linsvm, beside the papers' numbers.

    python examples/reproduce.py TARGET [--quick] [--out examples/results]

Each target writes TARGET.tsv and TARGET.md (ours beside the paper's numbers)
and, where the paper has a figure and matplotlib is installed, TARGET.png.
Data come from $LINSVM_DATA (default ../shared/datasets); a paper's data set
that is not available here is replaced by the closest one, and the table
says so.  `--quick` runs a small subset of each target (seconds).

The paper's C is converted to linsvm's -c (DESIGN.md): MFN's C_paper = 2C.
Times are wall-clock seconds on this machine (the papers used 2003-2008
hardware), so compare ratios, not seconds.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import sys
import time

import numpy as np

REPO = pathlib.Path(__file__).resolve().parents[1]

import linsvm                                          # noqa: E402
from linsvm.cv import cross_validate                   # noqa: E402


def data_path(rel):
    """A file under $LINSVM_DATA, or None when it is absent."""
    root = pathlib.Path(os.environ.get("LINSVM_DATA", REPO.parent / "shared" / "datasets"))
    path = root / rel
    return path if path.is_file() else None


def load(rel, n_features=None):
    path = data_path(rel)
    if path is None:
        raise SystemExit(f"data set {rel} not found under $LINSVM_DATA; see datasets.txt")
    return linsvm.load_svmlight(path, n_features=n_features)


def timed(fn, repeats=1):
    """(median seconds, last result) of calling fn() `repeats` times."""
    times, out = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


class Table:
    """Rows of a result table, written as TSV and Markdown."""

    def __init__(self, name, columns, note=""):
        self.name, self.columns, self.note, self.rows = name, columns, note, []

    def add(self, *values):
        self.rows.append(values)

    @staticmethod
    def _fmt(v):
        if isinstance(v, float):
            return f"{v:.4g}"
        return "-" if v is None else str(v)

    def write(self, out):
        out.mkdir(parents=True, exist_ok=True)
        with open(out / f"{self.name}.tsv", "w") as fh:
            fh.write("\t".join(self.columns) + "\n")
            for r in self.rows:
                fh.write("\t".join("" if v is None else str(v) for v in r) + "\n")
        md = [f"### {self.name}", "", self.note, "",
              "| " + " | ".join(self.columns) + " |", "|" + "---|" * len(self.columns)]
        md += ["| " + " | ".join(self._fmt(v) for v in r) + " |" for r in self.rows]
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
                prev = linsvm.train(X, y, C=C, init=prev if warm else None)
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
              "the paper's algorithm (--forcing 0); the last row is linsvm's default, whose "
              "inexact-Newton forcing term subsumes heuristic 1.")
    paper_alg = dict(forcing=0.0)
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
            sec, _ = timed(lambda: linsvm.train(X, y, C=C), repeats=1 if quick else 3)
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
    points = {}
    for ladder, (files, C) in ladders.items():
        for f in (files[::2] if quick else files):
            if data_path(f"binary/{f}") is None:
                continue
            X, y = load(f"binary/{f}")
            sec, _ = timed(lambda: linsvm.train(X, y, C=C), repeats=1 if quick else 3)
            t.add(ladder, f, X.shape[0], C, round(sec, 4))
            points.setdefault(ladder, []).append((X.shape[0], sec))
    t.write(out)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not installed: no PNG)")
        return
    fig, ax = plt.subplots(figsize=(5, 4))
    for ladder, pts in points.items():
        m, s = zip(*pts)
        ax.loglog(m, s, "o-", label=f"{ladder} (linsvm mfn)")
    ax.set_xlabel("m (training examples)")
    ax.set_ylabel("training time (s)")
    ax.set_title("MFN Figure 1: time vs m")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "mfn_figure1.png", dpi=100)


TARGETS = {
    "mfn-table1": mfn_table1,
    "mfn-table3": mfn_table3,
    "mfn-tables4-5": mfn_tables4_5,
    "mfn-figure1": mfn_figure1,
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("target", choices=sorted(TARGETS))
    ap.add_argument("--quick", action="store_true", help="a small subset (seconds)")
    ap.add_argument("--out", default=str(REPO / "examples" / "results"))
    args = ap.parse_args(argv)
    TARGETS[args.target](pathlib.Path(args.out), args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
