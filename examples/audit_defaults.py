"""The audit of the defaults (issue 29): every solver within 1% of its optimum, or a warning.

    python examples/audit_defaults.py [--sets heart_scale,australian,...] [--C 1,64]
        [--solvers mfn,dcd,...] [--quick] [--out DIR]

Every solver of the catalog (linsvm.problem.catalog.SOLVERS, plus `dcd --loss l2`,
LIBLINEAR -s 1's objective) runs at its defaults -- no -e, no caps, only -s, -c and
the default bias feature -- through linsvm.train on the shared data sets of its kind:
binary solvers on the binary training sets (default: heart_scale, australian, a1a,
a9a, w1a, w8a, ijcnn1), sdm-cs, sdm-ww and softmax on SECTOR, mfn-ord and perf-ord on
abalone (5 ranks, split 1), svr and svr-dual (--loss l1, the default, and l2) on
debian-deps-size, each at C = 1 and C = 64, and oneclass (nu = 0.5, no C) on the
binary sets (labels ignored).

Each row recomputes the model's objective here, with NumPy, from the weights it
returned (never the solver's own report), and compares it with an independent tight
optimum f*: the lowest objective of the runs listed below, each also recomputed from
its weights.  The row's gap is (f - f*) / f*; it passes when the gap is <= 1% or the
solve warned (a linsvm.ConvergenceWarning).  The rule of issue 29 is that every row
passes.

References (`--quick` loosens none of them):

    hinge (dcd, mfn-l1, perf, alm, alm-exact at p = 1)
        LIBLINEAR -s 3 -e 1e-8 (liblinear-official; its dual CD stops at 300 loops, so
        it is not always tight), and mfn-l1 -e 1e-9, whose certified duality gap gives
        the lower bound D reported in the reference table
    squared hinge (mfn, dcd --loss l2)
        LIBLINEAR -s 2 -e 1e-8 (primal Newton) and mfn -e 1e-12 --gtol 0
    least squares (ls)
        the normal equations (I + 2C X'X) w = 2C X't solved densely (exact)
    modified Huber (mfn-huber)
        scipy's L-BFGS-B on the C^1 objective (gtol 1e-10) and mfn-huber -e 1e-12
    Crammer-Singer (sdm-cs)
        LIBLINEAR -s 4 -e 1e-4 and sdm-cs -e 1e-4 (its dual value is D)
    Weston-Watkins (sdm-ww)
        sdm-ww -e 1e-4 (LIBLINEAR has no WW; its dual value is D, the KKT check)
    multinomial logistic loss (softmax)
        softmax -e 1e-8 (its dual value is D; LIBLINEAR has no multinomial loss)
    implicit thresholds (mfn-ord)
        scipy's L-BFGS-B on eq. 25 (smooth) and mfn-ord -e 1e-12
    pairwise hinge (perf-ord)
        mfn-l1 -e 1e-9 on the pair differences (each pair once with label +1 and once
        negated with -1, at half the cost, no bias: the same objective; a different
        algorithm whose gap gives D) and perf-ord -e 1e-6
    squared eps-insensitive, free intercept (svr: its default is LIBLINEAR's -R)
        LIBLINEAR -s 11 -R -e 1e-8 (primal Newton) and svr -e 1e-10 (its dual point
        gives D)
    eps-insensitive / its square on centered targets (svr-dual --loss l1 / l2: y minus
        the cost-weighted mean, the bias weight regularized)
        LIBLINEAR -s 13 / -s 12 -e 1e-8 on the centered targets, for l2 also -s 11
        -e 1e-8 (the same objective by primal Newton), and svr-dual -e 1e-6 (its dual
        value is D)
    one-class (oneclass, the problem of linsvm/solvers/oneclass.py in its own scale)
        LIBLINEAR -s 21 -e 1e-8 and oneclass -e 1e-10 (its dual value is D)

Output: Markdown (the audit table, then the references) on stdout and, with --out,
DIR/audit.md; progress on stderr.  CPU seconds are the process's (time.process_time)
around linsvm.train.
"""
from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.optimize as so
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402  (puts this checkout first on sys.path)

import linsvm  # noqa: E402
from linsvm.problem.catalog import SOLVERS  # noqa: E402

BINARY_SETS = ("heart_scale", "australian", "a1a", "a9a", "w1a", "w8a", "ijcnn1.bz2")
QUICK_SETS = ("heart_scale", "australian", "a1a", "w1a")
MULTICLASS_SET = ("sector", "multiclass/sector.scale.bz2")
ORDINAL_SET = ("abalone-5", "ordinal/abalone_5bins.train.1")
REGRESSION_SET = ("debian-deps-size", "regression/debian-deps-size.train.bz2")
KINDS = ("binary", "multiclass", "ordinal", "regression", "oneclass")
RULE = 0.01

# the objective each binary configuration minimizes
BINARY_LOSS = {"mfn": "l2", "dcd-l2": "l2", "dcd": "l1", "mfn-l1": "l1", "perf": "l1",
               "alm": "l1", "alm-exact": "l1", "ls": "ls", "mfn-huber": "huber"}


def configurations(kind):
    """(row name, solver, options) of every catalog solver of `kind` at its defaults."""
    out = []
    for name, info in SOLVERS.items():
        if info.kind != kind:
            continue
        out.append((name, name, {}))
        if name == "dcd":
            out.append(("dcd-l2", "dcd", {"loss": "l2"}))
        if name == "svr-dual":
            out.append(("svr-dual-l2", "svr-dual", {"loss": "l2"}))
    return out


def run(X, y, solver, C, **options):
    """(model, CPU seconds, warned) of linsvm.train at the defaults plus `options`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start = time.process_time()
        model = linsvm.train(X, y, solver=solver, C=C, **options)
        seconds = time.process_time() - start
    warned = any(issubclass(w.category, linsvm.ConvergenceWarning) for w in caught)
    return model, seconds, warned


def stat(model, key):
    """A solver statistic of the model's (only) column, or None."""
    cols = getattr(model, "column_stats", None)
    st = cols[0] if cols else model.stats
    return st.get(key)


# ---------------------------------------------------------------------------- objectives

def huber(xi):
    """The modified Huber loss L_h of mfn-huber (eq. 21) and its derivative."""
    v = np.where(xi <= 0, 0.0, np.where(xi < 2, 0.5 * xi * xi, 2.0 * (xi - 1.0)))
    g = np.where(xi <= 0, 0.0, np.where(xi < 2, xi, 2.0))
    return v, g


def binary_objective(Xa, t, C, loss, w):
    """linsvm's objective of `loss` at w (x with the bias feature): l1, l2, ls, huber."""
    xi = 1.0 - t * (Xa @ w)
    reg = 0.5 * float(w @ w)
    if loss == "l1":
        return reg + C * float(np.maximum(xi, 0.0).sum())
    if loss == "l2":
        return reg + C * float(np.sum(np.maximum(xi, 0.0) ** 2))
    if loss == "ls":
        return reg + C * float(xi @ xi)
    return reg + 2.0 * C * float(huber(xi)[0].sum())


def model_vector(model, d):
    """The binary model's weights (d features and the bias weight), sign for classes_[0]."""
    W = np.asarray(model.weights)
    w = np.zeros(d + 1)
    w[:min(d, model.n_features_)] = W[:min(d, model.n_features_), 0]
    w[-1] = W[-1, 0] if model.bias > 0 else 0.0
    return w


def ordinal_objective(Xa, codes, C, w, b):
    """mfn-ord's eq. 25: 1/2(||w||^2 + ||b||^2) + C sum_s sum_i max(0, 1 - z_is (w.x_i - b_s))^2,
    z_is = -1 if code_i <= s else +1 (s = 0..levels-2)."""
    s = Xa @ w
    z = np.where(codes[:, None] <= np.arange(b.shape[0])[None, :], -1.0, 1.0)
    v = np.maximum(0.0, 1.0 - z * (s[:, None] - b[None, :]))
    return 0.5 * (float(w @ w) + float(b @ b)) + C * float(np.sum(v * v))


def pairwise_objective(X, codes, C, w):
    """perf-ord's objective 1/2||w||^2 + (C n / m) sum over pairs code_i > code_j of
    max(0, 1 - w.(x_i - x_j)), unit costs, no bias."""
    s = X @ w[:X.shape[1]]
    total, m = 0.0, 0
    for hi in np.unique(codes):
        above = s[codes == hi]
        for lo in np.unique(codes[codes < hi]):
            below = s[codes == lo]
            total += float(np.maximum(0.0, 1.0 - (above[:, None] - below[None, :])).sum())
            m += above.shape[0] * below.shape[0]
    return 0.5 * float(w @ w) + C * codes.shape[0] / m * total


def pair_matrix(X, codes):
    """The pairs code_i > code_j as rows x_i - x_j, each twice (label +1 and negated with
    -1), for an L1-SVM solver without bias at C n / (2 m)."""
    rows_i, rows_j = [], []
    for hi in np.unique(codes):
        a = np.flatnonzero(codes == hi)
        for lo in np.unique(codes[codes < hi]):
            bb = np.flatnonzero(codes == lo)
            rows_i.append(np.repeat(a, bb.shape[0]))
            rows_j.append(np.tile(bb, a.shape[0]))
    ii, jj = np.concatenate(rows_i), np.concatenate(rows_j)
    D = sp.csr_matrix(X[ii] - X[jj])
    return sp.vstack([D, -D]).tocsr(), np.concatenate([np.ones(ii.size), -np.ones(ii.size)])


# ---------------------------------------------------------------------------- references

def liblinear_objective(prob, options, objective, vector):
    """The objective (computed here) of LIBLINEAR's model for `options`; `vector` turns the
    model into the weights `objective` takes.  None without liblinear-official."""
    if harness.liblinear() is None:
        return None
    _, model = harness.liblinear_train(prob, options)
    return objective(vector(model))


def lbfgs(fun_grad, x0):
    """scipy's L-BFGS-B to gtol 1e-10: the minimum value it reaches."""
    res = so.minimize(fun_grad, x0, jac=True, method="L-BFGS-B",
                      options={"gtol": 1e-10, "ftol": 1e-16, "maxiter": 100000, "maxcor": 30})
    return float(res.fun)


def huber_fun_grad(Xa, t, C):
    def fg(w):
        xi = 1.0 - t * (Xa @ w)
        v, g = huber(xi)
        return 0.5 * w @ w + 2.0 * C * v.sum(), w - 2.0 * C * (Xa.T @ (t * g))
    return fg


def binary_reference(ds, Xa, C, loss, cache):
    """(f*, source, {run: objective}, D or None) for one binary objective (module notes)."""
    d = ds.d
    obj = lambda w: binary_objective(Xa, ds.t, C, loss, w)           # noqa: E731
    vec = lambda m: harness.liblinear_vector(m, d, ds.classes[0])    # noqa: E731
    runs, lower = {}, None
    if loss in ("l1", "l2"):
        s = 3 if loss == "l1" else 2
        prob = harness.liblinear_problem(ds, cache) if harness.liblinear() else None
        f = liblinear_objective(prob, harness.liblinear_options(s, C, 1e-8), obj, vec)
        if f is not None:
            runs[f"LIBLINEAR -s {s} -e 1e-8"] = f
        if loss == "l1":
            model, _, _ = run(ds.X, ds.y, "mfn-l1", C, tol=1e-9)
            lower = stat(model, "dual_objective")
            runs["mfn-l1 -e 1e-9"] = obj(model_vector(model, d))
        else:
            model, _, _ = run(ds.X, ds.y, "mfn", C, tol=1e-12, gtol=0.0, max_iter=1000)
            runs["mfn -e 1e-12"] = obj(model_vector(model, d))
    elif loss == "ls":
        A = (2.0 * C) * (Xa.T @ Xa).toarray() + np.eye(d + 1)
        runs["normal equations"] = obj(np.linalg.solve(A, (2.0 * C) * (Xa.T @ ds.t)))
    else:
        runs["L-BFGS-B"] = lbfgs(huber_fun_grad(Xa, ds.t, C), np.zeros(d + 1))
        model, _, _ = run(ds.X, ds.y, "mfn-huber", C, tol=1e-12)
        runs["mfn-huber -e 1e-12"] = obj(model_vector(model, d))
    source = min(runs, key=runs.get)
    return runs[source], source, runs, lower


MULTICLASS_KINDS = {"sdm-cs": "CS", "sdm-ww": "WW", "softmax": "softmax"}


def multiclass_reference(ds, C, kind):
    """(f*, source, runs, D) for Crammer-Singer ("CS"), Weston-Watkins ("WW") or the
    multinomial logistic loss ("softmax") on SECTOR."""
    runs = {}
    if kind == "softmax":
        model, _, _ = run(ds.X, ds.y, "softmax", C, tol=1e-8, max_iter=100000)
        runs["softmax -e 1e-8"] = harness.multiclass_objective(kind, ds,
                                                               np.asarray(model.weights), C)
        return runs["softmax -e 1e-8"], "softmax -e 1e-8", runs, stat(model, "dual_objective")
    solver = "sdm-cs" if kind == "CS" else "sdm-ww"
    model, _, _ = run(ds.X, ds.y, solver, C, tol=1e-4, max_iter=100000)
    runs[f"{solver} -e 1e-4"] = harness.multiclass_objective(kind, ds, np.asarray(model.weights), C)
    if kind == "CS" and harness.liblinear() is not None:
        _, lm = harness.liblinear_train(harness.liblinear().problem(ds.y, ds.X),
                                        harness.liblinear_options(4, C, 1e-4))
        runs["LIBLINEAR -s 4 -e 1e-4"] = harness.multiclass_objective(
            kind, ds, harness.liblinear_W(lm, ds.d, list(ds.classes)), C)
    source = min(runs, key=runs.get)
    return runs[source], source, runs, model.stats.get("dual_objective")


def ordinal_fun_grad(Xa, codes, C, nb):
    z = np.where(codes[:, None] <= np.arange(nb)[None, :], -1.0, 1.0)
    dw = Xa.shape[1]

    def fg(x):
        w, b = x[:dw], x[dw:]
        s = Xa @ w
        r = np.maximum(0.0, 1.0 - z * (s[:, None] - b[None, :]))
        f = 0.5 * (w @ w + b @ b) + C * float(np.sum(r * r))
        g_s = -2.0 * C * np.sum(r * z, axis=1)
        return f, np.concatenate([w + Xa.T @ g_s, b + 2.0 * C * np.sum(r * z, axis=0)])
    return fg


def ordinal_reference(X, y, codes, C, solver):
    """(f*, source, runs, D or None) for mfn-ord (eq. 25) or perf-ord (pairwise hinge)."""
    Xa = harness.augmented(X)
    runs, lower = {}, None
    if solver == "mfn-ord":
        nb = int(codes.max())
        runs["L-BFGS-B"] = lbfgs(ordinal_fun_grad(Xa, codes, C, nb), np.zeros(Xa.shape[1] + nb))
        model, _, _ = run(X, y, "mfn-ord", C, tol=1e-12)
        runs["mfn-ord -e 1e-12"] = ordinal_objective(Xa, codes, C, model_vector(model, X.shape[1]),
                                                     np.asarray(model.thresholds_))
    else:
        D, t = pair_matrix(X, codes)
        Cp = C * codes.shape[0] / D.shape[0]                  # C n / (2 m): each pair twice
        obj = lambda w: pairwise_objective(X, codes, C, w)    # noqa: E731
        model, _, _ = run(D, t, "mfn-l1", Cp, tol=1e-9, bias=-1)
        lower = stat(model, "dual_objective")
        runs["mfn-l1 -e 1e-9 on pairs"] = obj(np.asarray(model.weights)[:, 0])
        if harness.liblinear() is not None:
            _, lm = harness.liblinear_train(harness.liblinear().problem(t, D),
                                            f"-s 3 -c {Cp!r} -B -1 -e 1e-8")
            runs["LIBLINEAR -s 3 -e 1e-8 on pairs"] = obj(
                harness.liblinear_vector(lm, X.shape[1], 1.0))
    source = min(runs, key=runs.get)
    return runs[source], source, runs, lower


# ---------------------------------------------------------------------------- the audit

def audit_binary(names, Cs, only, rows, refs):
    root = harness.data_root()
    for name in names:
        ds = harness.load_dataset(root, name)
        if ds is None:
            continue
        Xa, cache = harness.augmented(ds.X), {}
        for C in Cs:
            fstars = {}
            for row, solver, options in configurations("binary"):
                if only and row not in only:
                    continue
                loss = BINARY_LOSS[row]
                if loss not in fstars:
                    harness.log(f"reference {ds.name} C={C:g} {loss}")
                    fstars[loss] = binary_reference(ds, Xa, C, loss, cache)
                    refs.append((ds.name, C, loss) + fstars[loss])
                model, seconds, warned = run(ds.X, ds.y, solver, C, **options)
                f = binary_objective(Xa, ds.t, C, loss, model_vector(model, ds.d))
                rows.append(record(ds.name, C, row, f, fstars[loss][0], warned, seconds, model))


def audit_multiclass(Cs, only, rows, refs):
    path = harness.data_root() / MULTICLASS_SET[1]
    if not path.is_file():
        harness.log(f"skip {MULTICLASS_SET[0]}: {path} not found")
        return
    ds = harness.load_multiclass(MULTICLASS_SET[0], path, None)
    for C in Cs:
        for row, solver, options in configurations("multiclass"):
            if only and row not in only:
                continue
            kind = MULTICLASS_KINDS[solver]
            harness.log(f"reference {ds.name} C={C:g} {kind}")
            ref = multiclass_reference(ds, C, kind)
            refs.append((ds.name, C, kind) + ref)
            model, seconds, warned = run(ds.X, ds.y, solver, C, **options)
            f = harness.multiclass_objective(kind, ds, np.asarray(model.weights), C)
            rows.append(record(ds.name, C, row, f, ref[0], warned, seconds, model))


def audit_ordinal(Cs, only, rows, refs):
    path = harness.data_root() / ORDINAL_SET[1]
    if not path.is_file():
        harness.log(f"skip {ORDINAL_SET[0]}: {path} not found")
        return
    X, y = linsvm.load_svmlight(str(path))
    X = sp.csr_matrix(X)
    codes = np.searchsorted(np.unique(y), y)
    Xa = harness.augmented(X)
    for C in Cs:
        for row, solver, options in configurations("ordinal"):
            if only and row not in only:
                continue
            harness.log(f"reference {ORDINAL_SET[0]} C={C:g} {solver}")
            ref = ordinal_reference(X, y, codes, C, solver)
            refs.append((ORDINAL_SET[0], C, solver) + ref)
            model, seconds, warned = run(X, y, solver, C, **options)
            w = model_vector(model, X.shape[1])
            f = (ordinal_objective(Xa, codes, C, w, np.asarray(model.thresholds_))
                 if solver == "mfn-ord" else pairwise_objective(X, codes, C, w))
            rows.append(record(ORDINAL_SET[0], C, row, f, ref[0], warned, seconds, model))


# ---------------------------------------------------------------------------- regression

def regression_objective(Xa, y, C, loss, w, free_bias):
    """1/2 ||w||^2 + C sum_i max(0, |y_i - w.x_i| - p)^p' (p = 0.1, p' = 1 for "l1", 2 for
    "l2"), the bias weight (last) left out of the norm when free_bias."""
    dev = np.maximum(0.0, np.abs(y - Xa @ w) - 0.1)
    reg = w[:-1] if free_bias else w
    return 0.5 * float(reg @ reg) + C * float(np.sum(dev if loss == "l1" else dev * dev))


def regression_reference(X, y, Xa, C, row):
    """(f*, source, runs, D or None) for svr (l2, free bias) or svr-dual (l1 / l2 on the
    targets minus their mean, y here already centered for svr-dual)."""
    d = X.shape[1]
    free = row == "svr"
    loss = "l1" if row == "svr-dual" else "l2"
    obj = lambda w: regression_objective(Xa, y, C, loss, w, free)     # noqa: E731
    runs, lower = {}, None
    L = harness.liblinear()
    if L is not None:
        prob = L.problem(y, X)
        codes = ["-s 11 -R"] if free else (["-s 13"] if loss == "l1" else ["-s 12", "-s 11"])
        for code in codes:
            _, lm = harness.liblinear_train(prob, f"{code} -c {C!r} -p 0.1 -B 1 -e 1e-8")
            runs[f"LIBLINEAR {code} -e 1e-8"] = obj(harness.liblinear_vector(lm, d))
    if free:
        model, _, _ = run(X, y, "svr", C, tol=1e-10, max_iter=1000)
    else:
        model, _, _ = run(X, y, "svr-dual", C, tol=1e-6, max_iter=100000, loss=loss,
                          center_targets=False)
    lower = model.stats.get("dual_objective")
    runs[f"{row} -e {'1e-10' if free else '1e-6'}"] = obj(model_vector(model, d))
    source = min(runs, key=runs.get)
    return runs[source], source, runs, lower


def audit_regression(Cs, only, rows, refs):
    path = harness.data_root() / REGRESSION_SET[1]
    if not path.is_file():
        harness.log(f"skip {REGRESSION_SET[0]}: {path} not found")
        return
    X, y = linsvm.load_svmlight(str(path))
    X = sp.csr_matrix(X)
    yc = y - y.mean()                        # svr-dual's default: the targets centered
    Xa = harness.augmented(X)
    for C in Cs:
        for row, solver, options in configurations("regression"):
            if only and row not in only:
                continue
            harness.log(f"reference {REGRESSION_SET[0]} C={C:g} {row}")
            target = y if row == "svr" else yc
            ref = regression_reference(X, target, Xa, C, row)
            refs.append((REGRESSION_SET[0], C, row) + ref)
            model, seconds, warned = run(X, y, solver, C, **options)
            loss = "l1" if row == "svr-dual" else "l2"
            f = regression_objective(Xa, target, C, loss, model_vector(model, X.shape[1]),
                                     row == "svr")
            rows.append(record(REGRESSION_SET[0], C, row, f, ref[0], warned, seconds, model))


# ---------------------------------------------------------------------------- one-class

NU = 0.5


def oneclass_objective(X, w, rho):
    """oneclass's problem (linsvm/solvers/oneclass.py) at (w, rho) given in LIBLINEAR's
    scale (nu n times): 1/2 ||v||^2 - r + 1/(nu n) sum_i max(0, r - v.x_i), v = w / (nu n),
    r = rho / (nu n)."""
    s = NU * X.shape[0]
    v, r = w / s, rho / s
    return 0.5 * float(v @ v) - r + float(np.maximum(0.0, r - X @ v).sum()) / s


def audit_oneclass(names, only, rows, refs):
    if only and "oneclass" not in only:
        return
    root = harness.data_root()
    for name in names:
        path = root / "binary" / name
        if not path.is_file():
            continue
        X, y = linsvm.load_svmlight(str(path))
        X = sp.csr_matrix(X)
        d = X.shape[1]
        harness.log(f"reference {name} oneclass")
        runs = {}
        L = harness.liblinear()
        if L is not None:
            _, lm = harness.liblinear_train(L.problem(y, X), f"-s 21 -n {NU} -e 1e-8")
            w, minus_rho = lm.get_decfun()
            w = np.concatenate([np.asarray(w), np.zeros(max(0, d - len(w)))])[:d]
            runs["LIBLINEAR -s 21 -e 1e-8"] = oneclass_objective(X, w, -minus_rho)
        ref_model, _, _ = run(X, y, "oneclass", 1.0, tol=1e-10, max_iter=100000)
        runs["oneclass -e 1e-10"] = oneclass_objective(
            X, np.asarray(ref_model.weights)[:d, 0], -ref_model.offset_)
        source = min(runs, key=runs.get)
        refs.append((name, 0.0, "one-class", runs[source], source, runs,
                     ref_model.stats.get("dual_objective")))
        model, seconds, warned = run(X, y, "oneclass", 1.0)
        f = oneclass_objective(X, np.asarray(model.weights)[:d, 0], -model.offset_)
        rows.append(record(name, 0.0, "oneclass", f, runs[source], warned, seconds, model))


def record(name, C, row, f, fstar, warned, seconds, model):
    gap = (f - fstar) / abs(fstar)
    by = stat(model, "finished_by")
    harness.log(f"{name} C={C:g} {row}: gap {gap:.3g}{' (warned)' if warned else ''}"
                f"{' finished by ' + by if by else ''}, {seconds:.2f} s")
    return dict(set=name, C=C, solver=row, f=f, fstar=fstar, gap=gap, warned=warned,
                seconds=seconds, by=by or "", ok=gap <= RULE or warned)


def report(rows, refs):
    out = ["| set | C | solver | objective | f* | (f - f*)/f* | warned | finished by | CPU s | rule |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['set']} | {r['C'] or '-'} | {r['solver']} | {r['f']:.10g} | {r['fstar']:.10g} "
                   f"| {r['gap']:.2e} | {'yes' if r['warned'] else 'no'} | {r['by']} "
                   f"| {r['seconds']:.2f} | {'ok' if r['ok'] else '**FAIL**'} |")
    bad = [r for r in rows if not r["ok"]]
    out += ["", f"{len(rows) - len(bad)} of {len(rows)} rows within 1% of f* or warned.", "",
            "References (every objective recomputed from the run's weights; D a certified lower "
            "bound on the optimum where the run gives one):", "",
            "| set | C | objective | f* | from | other runs | (f* - D)/f* |", "|---|---|---|---|---|---|---|"]
    for name, C, what, fstar, source, runs, lower in refs:
        others = "; ".join(f"{k} {(v - fstar) / abs(fstar):+.1e}" for k, v in runs.items() if k != source)
        tight = f"{(fstar - lower) / abs(fstar):.1e}" if lower is not None else ""
        out.append(f"| {name} | {C:g} | {what} | {fstar:.12g} | {source} | {others} | {tight} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sets", help="binary training sets (comma-separated names under binary/)")
    ap.add_argument("--C", default="1,64", help="values of C (default 1,64)")
    ap.add_argument("--solvers", help="only these rows (e.g. dcd,dcd-l2,perf)")
    ap.add_argument("--quick", action="store_true", help="the four small binary sets only")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help=f"problem kinds to audit (default all: {','.join(KINDS)})")
    ap.add_argument("--oneclass-sets", help="binary sets for oneclass (default: --sets')")
    ap.add_argument("--out", help="also write DIR/audit.md")
    args = ap.parse_args(argv)
    names = args.sets.split(",") if args.sets else (QUICK_SETS if args.quick else BINARY_SETS)
    Cs = [float(c) for c in args.C.split(",")]
    only = set(args.solvers.split(",")) if args.solvers else None
    kinds = set(args.kinds.split(","))
    rows, refs = [], []
    if "binary" in kinds:
        audit_binary(names, Cs, only, rows, refs)
    if not args.quick:
        if "multiclass" in kinds:
            audit_multiclass(Cs, only, rows, refs)
        if "ordinal" in kinds:
            audit_ordinal(Cs, only, rows, refs)
        if "regression" in kinds:
            audit_regression(Cs, only, rows, refs)
    if "oneclass" in kinds:
        one = args.oneclass_sets.split(",") if args.oneclass_sets else names
        audit_oneclass([n for n in one], only, rows, refs)
    text = report(rows, refs)
    sys.stdout.write(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "audit.md").write_text(text)
    return 0 if all(r["ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
