"""Probability outputs on the shared train/test splits: linsvm's LinearSVC(probability=True)
against scikit-learn's CalibratedClassifierCV(LinearSVC) and LogisticRegression.

    python examples/calibration.py [--sets a9a,sector] [--png examples/calibration.png]

Prints one Markdown row per (data set, method): test log loss, top-label expected
calibration error (15 equal-width bins of the largest predicted probability: the
bin-size-weighted mean |accuracy - confidence|), Brier score (binary), accuracy and
fit seconds (one run: timings on a shared machine are noisy).  All at C = 1: linsvm
mfn (L2-loss SVM, bias 1, LIBLINEAR -s 2's problem), scikit-learn LinearSVC (the same
problem via LIBLINEAR) calibrated by 5-fold sigmoid, LogisticRegression (lbfgs).
With --png (and matplotlib installed) it draws the reliability curves.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SETS = {"a9a": ("binary/a9a", "binary/a9a.t"),
        "sector": ("multiclass/sector.scale.bz2", "multiclass/sector.t.scale.bz2")}


def top_label_ece(P, y_idx, n_bins=15):
    """Expected calibration error of the top label: rows binned by max_j P[i, j]."""
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == y_idx).astype(float)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        m = bins == b
        if m.any():
            ece += m.mean() * abs(correct[m].mean() - conf[m].mean())
    return ece


def reliability(P, y_idx, n_bins=15):
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == y_idx).astype(float)
    bins = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    xs, ys = [], []
    for b in range(n_bins):
        m = bins == b
        if m.sum() >= 10:
            xs.append(conf[m].mean())
            ys.append(correct[m].mean())
    return xs, ys


def methods():
    from sklearn.calibration import CalibratedClassifierCV
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC as SkLinearSVC

    from linsvm.sklearn import LinearSVC

    return {
        "linsvm LinearSVC(probability=True)": lambda: LinearSVC(C=1.0, probability=True),
        "CalibratedClassifierCV(sklearn LinearSVC), sigmoid, cv=5":
            lambda: CalibratedClassifierCV(SkLinearSVC(C=1.0, dual=True, max_iter=10000),
                                           method="sigmoid", cv=5),
        "LogisticRegression(C=1)": lambda: LogisticRegression(C=1.0, max_iter=1000),
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="a9a", help="comma-separated: " + ", ".join(SETS))
    ap.add_argument("--png", default=None, help="write reliability curves here (needs matplotlib)")
    args = ap.parse_args(argv)
    import warnings

    from sklearn.metrics import log_loss

    import linsvm

    data = Path(os.environ.get("LINSVM_DATA", REPO.parent / "shared" / "datasets"))
    curves = {}
    print("| data | method | log loss | ECE | Brier | accuracy | fit s |")
    print("|---|---|---|---|---|---|---|")
    for name in args.sets.split(","):
        tr, te = SETS[name]
        X, y = linsvm.load_svmlight(str(data / tr))
        Xt, yt = linsvm.load_svmlight(str(data / te))
        d = max(X.shape[1], Xt.shape[1])
        X.resize((X.shape[0], d))
        Xt.resize((Xt.shape[0], d))
        classes = np.unique(y)
        keep = np.isin(yt, classes)
        Xt, yt = Xt[keep], yt[keep]
        y_idx = np.searchsorted(classes, yt)
        for label, make in methods().items():
            est = make()
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                est.fit(X, y)
            secs = time.perf_counter() - t0
            P = np.clip(est.predict_proba(Xt), 1e-15, 1.0)
            P = P / P.sum(axis=1, keepdims=True)
            ll = log_loss(y_idx, P, labels=np.arange(classes.shape[0]))
            ece = top_label_ece(P, y_idx)
            brier = np.mean((P[:, 1] - (y_idx == 1)) ** 2) if classes.shape[0] == 2 else float("nan")
            acc = np.mean(P.argmax(axis=1) == y_idx)
            print(f"| {name} | {label} | {ll:.4f} | {ece:.4f} | "
                  f"{'' if np.isnan(brier) else f'{brier:.4f}'} | {acc:.4f} | {secs:.1f} |", flush=True)
            curves[(name, label)] = reliability(P, y_idx)
    if args.png:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("matplotlib is not installed: no PNG written", file=sys.stderr)
            return 0
        names = args.sets.split(",")
        fig, axes = plt.subplots(1, len(names), figsize=(5 * len(names), 4.5), squeeze=False)
        for ax, name in zip(axes[0], names):
            ax.plot([0, 1], [0, 1], "k:", lw=1)
            for (n, label), (xs, ys) in curves.items():
                if n == name:
                    ax.plot(xs, ys, "o-", ms=3, label=label.split(",")[0])
            ax.set(title=f"{name}: reliability (top label)", xlabel="confidence", ylabel="accuracy")
            ax.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.png, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
