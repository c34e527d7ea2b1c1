"""Benchmark the rest of the finite Newton family against the peers a user would pick.

    python examples/bench_mfn_family.py [--parts l1,ord,ls] [--datasets a9a,w8a]
                                        [--repeats 3] [--out FILE]

All objectives are computed here, with numpy/scipy, from the weights each solver
returns; no solver's own report of its objective is used.  Timed is training
only: the data are in memory, LIBLINEAR's `problem` and linsvm's CSRBuffers (the
validated CSR view train() takes) are built outside the timer.  BLAS and OpenMP
run single-threaded (linsvm's kernels are serial below 4M non-zeros anyway).  Every timing is
the median of --repeats runs (more, up to 15, for runs under 0.25 s, taken in
rounds over the competing solvers so that bursts of load from other processes
hit all of them).  The machine is shared: read the ratios.

1. mfn-l1 vs LIBLINEAR -s 3 (dual coordinate descent; both minimize
   1/2||w||^2 + C sum max(0, 1 - y w.x) with a regularized bias feature of
   value 1), C = 1, every binary data set under $LINSVM_DATA/binary.
   f* = the smaller objective of mfn-l1 at -e 1e-9 and LIBLINEAR at -e 1e-6;
   mfn-l1's certificate also gives a lower bound on F*, so the table shows how
   tightly f* is bracketed.  For each solver a ladder of its own tolerance is
   walked from loose to tight and the first tolerance whose model reaches
   (F - f*)/f* <= 1e-3 is timed.  Also shown: mfn-l1 at -e 1e-3, where the gap is
   *certified* (what a user asking for 1e-3 gets, without knowing f*), and
   LIBLINEAR at its default -e 0.1.
2. mfn-ord vs scipy L-BFGS-B on the same smooth objective (eq. 25 in linsvm's
   scaling: 1/2(||w||^2 + ||b||^2) + C sum_s sum_i max(0, 1 - z_is (w.x_i - b_s))^2,
   bias feature 1), C = 1, on the *.train.1 files under ordinal/ (features as
   given, not rescaled).  f* = the smaller of mfn-ord at -e 1e-12 and L-BFGS at
   gtol 1e-12.  mfn-ord: tolerance ladder as above; L-BFGS: one tight run per
   repeat whose every function evaluation is time-stamped, giving the time of the
   first evaluation at gap <= 1e-3 (and 1e-6).  Also shown: both at their
   defaults (mfn-ord -e 1e-6; L-BFGS-B's own defaults), time and gap, and the
   test MAE of the mfn-ord model on *.test.1.
3. The LS-SVM point of the paper's Table 2: linsvm ls (LS-SVM-CG, default
   -e 1e-6, with and without its Jacobi preconditioner; timed as the registry's
   solver call) vs a direct solution of the normal equations
   (I + 2C X'X) w = 2C X'y (the proximal-SVM approach): form X'X, then a dense
   Cholesky (scipy.linalg.cho_factor/cho_solve), X'X formed by dense BLAS (when
   the dense copy fits in 80 MB) or by a sparse product; and X'X kept sparse
   with a sparse LU (scipy.sparse.linalg.splu).  Australian (dense) and w7a (the
   paper's Web-7, s = 0.04) at C = 2^-5..2^5, plus two synthetic text-like sets
   with more features (20000 x 2000 and 20000 x 5000, linsvm.io.synth, seed 1) at
   C = 2^-5, 1, 2^5; the ratio is the paper's: the direct method's time averaged
   over C divided by the CG time averaged over C (> 1: CG wins).  The largest
   relative objective difference between the CG and direct solutions is shown.
"""
from __future__ import annotations

import os

# Single-threaded BLAS (set before numpy loads it): every solver here runs on one
# thread, and on a loaded 2-core machine OpenBLAS's second thread made a 301 x 301
# Cholesky take 0.19 s instead of 1 ms.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import pathlib  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import scipy.linalg as sla  # noqa: E402
import scipy.optimize as so  # noqa: E402
import scipy.sparse as sp  # noqa: E402
import scipy.sparse.linalg as spla  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)
from harness import augmented, log  # noqa: E402
from harness import relative_gap as gap  # noqa: E402

import linsvm  # noqa: E402
from linsvm.problem import CSRBuffers, Problem  # noqa: E402
from linsvm.solvers import make_params  # noqa: E402

BINARY = ("a1a", "a2a", "a3a", "a4a", "a8a", "a9a", "w1a", "w7a", "w8a", "australian",
          "heart_scale", "ijcnn1.bz2")
TARGET = 1e-3
L1_LADDER = (0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4)
LL_LADDER = (1.0, 0.3, 0.1, 0.03, 0.01, 3e-3, 1e-3, 1e-4, 1e-5)
ORD_LADDER = (0.1, 1e-2, 1e-3, 1e-4, 1e-6, 1e-8)


def data_dir():
    return H.data_root()


def timed_rounds(fns, repeats):
    """Median seconds of each zero-argument callable: one run each, then interleaved rounds
    (harness.interleaved; short runs get more, harness.n_repeats)."""
    fns = {k: H.timed(fn) for k, fn in fns.items()}
    counts = {k: H.n_repeats(fn()[0], repeats) for k, fn in fns.items()}
    return {k: statistics.median(s for s, _ in v) for k, v in H.interleaved(fns, repeats, counts).items()}


def fmt_s(x):
    if x is None:
        return "-"
    return f"{x * 1e3:.2f} ms" if x < 0.1 else f"{x:.3f} s"


# ---------------------------------------------------------------------------- 1. mfn-l1

def load_binary(name):
    from sklearn.datasets import load_svmlight_file
    X, y = load_svmlight_file(str(data_dir() / "binary" / name))
    return X.tocsr(), y


def bench_l1(names, repeats):
    from liblinear.liblinearutil import problem
    C = 1.0
    rows = []
    for name in H.present(names):
        log(f"l1: {name}")
        X, y = load_binary(name)
        Xa = augmented(X)
        Xb = CSRBuffers(X)
        prob = problem(y, X)

        def F_of(w, t):
            return 0.5 * w @ w + C * float(np.sum(np.maximum(0.0, 1.0 - t * (Xa @ w))))

        def run_l1(tol):
            m = linsvm.train(Xb, y, solver="mfn-l1", C=C, tol=tol)
            t = np.where(y == m.classes_[0], 1.0, -1.0)
            return m, F_of(m.weights[:, 0], t)

        def run_ll(e):
            _, mdl = H.liblinear_train(prob, H.liblinear_options(3, C, e))
            w = H.liblinear_vector(mdl)
            t = np.where(y == mdl.get_labels()[0], 1.0, -1.0)
            return F_of(w, t)

        ref, F_ref = run_l1(1e-9)
        F_ll_ref = run_ll(1e-6)
        fstar = min(F_ref, F_ll_ref)
        lower = ref.column_stats[0]["dual_objective"]
        tol_l1 = H.walk_ladder(lambda tol: (0.0, run_l1(tol)[1], {}), L1_LADDER,
                               lambda F: gap(F, fstar), TARGET).knob
        walk = H.walk_ladder(lambda e: (0.0, run_ll(e), {}), LL_LADDER, lambda F: gap(F, fstar), TARGET)
        walk_ll, best_ll = walk.knob, walk.best_gap
        cert_model, F_cert = run_l1(TARGET)
        F_def = run_ll(0.1)
        fns = {"cert": lambda: run_l1(TARGET), "ll_default": lambda: run_ll(0.1)}
        if tol_l1 is not None:
            fns["l1"] = lambda: run_l1(tol_l1)
        if walk_ll is not None:
            fns["ll"] = lambda: run_ll(walk_ll)
        tm = timed_rounds(fns, repeats)
        st = cert_model.column_stats[0]
        rows.append(dict(
            name=name, n=X.shape[0], d=X.shape[1], nnz=X.nnz, fstar=fstar,
            bracket=(fstar - lower) / fstar, ll_ref_gap=gap(F_ll_ref, fstar), l1_ref_gap=gap(F_ref, fstar),
            t_l1=tm.get("l1"), tol_l1=tol_l1,
            t_ll=tm.get("ll"), e_ll=walk_ll, best_ll=best_ll,
            t_cert=tm["cert"], gap_cert=gap(F_cert, fstar), certified=st["duality_gap"],
            stages=st["stages"], newton=cert_model.n_iter, cg=cert_model.stats["cg_iter"],
            t_def=tm["ll_default"], gap_def=gap(F_def, fstar)))
    out = ["## 1. mfn-l1 vs LIBLINEAR -s 3 (hinge loss, C = 1): seconds to (F - f*)/f* <= 1e-3", "",
           "| data set | n | d | nnz | f* | f* bracket (f* - lower bound)/f* | LIBLINEAR -e 1e-6 gap | "
           "mfn-l1 (tol) | LIBLINEAR -s 3 (e) | LIBLINEAR / mfn-l1 | mfn-l1 -e 1e-3: time, actual gap, "
           "certified gap, stages / Newton / CG | LIBLINEAR default -e 0.1: time, gap |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ll = f"{fmt_s(r['t_ll'])} ({r['e_ll']:g})" if r["t_ll"] is not None else \
            f"not reached (best gap {r['best_ll']:.1e})"
        l1 = f"{fmt_s(r['t_l1'])} ({r['tol_l1']:g})" if r["t_l1"] is not None else "not reached"
        ratio = f"{r['t_ll'] / r['t_l1']:.2f}" if r["t_ll"] is not None and r["t_l1"] is not None else "-"
        out.append(
            f"| {r['name']} | {r['n']} | {r['d']} | {r['nnz']} | {r['fstar']:.10g} | {r['bracket']:.1e} | "
            f"{r['ll_ref_gap']:.1e} | {l1} | {ll} | {ratio} | {fmt_s(r['t_cert'])}, {r['gap_cert']:.1e}, "
            f"{r['certified']:.1e}, {r['stages']} / {r['newton']} / {r['cg']} | "
            f"{fmt_s(r['t_def'])}, {r['gap_def']:.1e} |")
    ratios = [r["t_ll"] / r["t_l1"] for r in rows if r["t_ll"] is not None and r["t_l1"] is not None]
    if ratios:
        out += ["", f"Geometric mean of LIBLINEAR / mfn-l1 over the {len(ratios)} sets where both "
                    f"reached 1e-3: {H.geometric_mean(ratios):.2f}."]
    return out


# ---------------------------------------------------------------------------- 2. mfn-ord

def ord_objective_factory(Xa, codes, nb, C):
    """(F, grad) of eq. 25 in linsvm's scaling, vectorized, for scipy."""
    nw = Xa.shape[1]
    Z = np.where(codes[:, None] > np.arange(nb)[None, :], 1.0, -1.0)
    XaT = Xa.T.tocsr()

    def fun(beta):
        w, b = beta[:nw], beta[nw:]
        V = (Xa @ w)[:, None] - b[None, :]
        viol = np.maximum(0.0, 1.0 - Z * V)
        F = 0.5 * beta @ beta + C * float(np.sum(viol * viol))
        G = -2.0 * C * viol * Z
        return F, np.concatenate([w + XaT @ G.sum(axis=1), b - G.sum(axis=0)])

    return fun


def bench_ord(repeats):
    from sklearn.datasets import load_svmlight_file
    C = 1.0
    files = sorted((data_dir() / "ordinal").glob("*.train.1"))
    rows = []
    for path in files:
        name = path.name[:-len(".train.1")]
        log(f"ord: {name}")
        X, y = load_svmlight_file(str(path))
        X = X.tocsr()
        Xb = CSRBuffers(X)
        classes = np.unique(y)
        codes = np.searchsorted(classes, y)
        nb = classes.size - 1
        Xa = augmented(X)
        fun = ord_objective_factory(Xa, codes, nb, C)
        x0 = np.zeros(Xa.shape[1] + nb)

        def run_ord(tol):
            m = linsvm.train(Xb, y, solver="mfn-ord", C=C, tol=tol)
            return m, fun(np.concatenate([m.weights[:, 0], m.thresholds_]))[0]

        def run_lbfgs(options, trace=None):
            t0 = time.perf_counter()

            def f(b):
                v = fun(b)
                if trace is not None:
                    trace.append((time.perf_counter() - t0, v[0]))
                return v
            res = so.minimize(f, x0, jac=True, method="L-BFGS-B", options=options)
            return res

        tight = dict(gtol=1e-12, ftol=1e-16, maxiter=100000)
        ref, F_ref = run_ord(1e-12)
        res = run_lbfgs(tight)
        fstar = min(F_ref, res.fun)
        walk = {}
        for target in (1e-3, 1e-6):
            walk[target] = H.walk_ladder(lambda tol: (0.0, run_ord(tol)[1], {}), ORD_LADDER,
                                         lambda F: gap(F, fstar), target).knob
        m_def, F_def = run_ord(1e-6)
        res_def = run_lbfgs({})
        fns = {f"ord{k}": (lambda tol=v: run_ord(tol)) for k, v in walk.items() if v is not None}
        fns["ord_default"] = lambda: run_ord(1e-6)
        fns["lbfgs_default"] = lambda: run_lbfgs({})
        tm = timed_rounds(fns, repeats)
        # L-BFGS time to each target: median over repeats of the time stamp of the first
        # evaluation reaching it, in tight runs
        reach = {1e-3: [], 1e-6: []}
        for _ in range(max(1, repeats)):
            trace = []
            run_lbfgs(tight, trace)
            for target in reach:
                hit = next((tt for tt, F in trace if gap(F, fstar) <= target), None)
                reach[target].append(hit if hit is not None else np.inf)
        t_lb = {k: statistics.median(v) for k, v in reach.items()}
        Xt, yt = load_svmlight_file(str(path.with_name(name + ".test.1")), n_features=X.shape[1])
        pred = m_def.predict(Xt)
        mae = float(np.mean(np.abs(np.searchsorted(classes, pred) - np.searchsorted(classes, yt))))
        rows.append(dict(name=name, n=X.shape[0], d=X.shape[1], p=classes.size, fstar=fstar,
                         ref_gaps=(gap(F_ref, fstar), gap(res.fun, fstar)),
                         t_ord={k: tm.get(f"ord{k}") for k in walk}, tol=walk, t_lb=t_lb,
                         t_def=tm["ord_default"], gap_def=gap(F_def, fstar), n_iter=m_def.n_iter,
                         cg=m_def.stats["cg_iter"], t_lbdef=tm["lbfgs_default"],
                         gap_lbdef=gap(res_def.fun, fstar), lb_nit=res_def.nit, mae=mae,
                         inv=m_def.column_stats[0]["threshold_inversion"]))
    out = ["## 2. mfn-ord vs scipy L-BFGS-B on eq. 25 (C = 1)", "",
           "| data set | n | d | ranks | f* | gap of mfn-ord / L-BFGS reference | to 1e-3: mfn-ord (tol) | "
           "L-BFGS | L-BFGS / mfn-ord | to 1e-6: mfn-ord (tol) | L-BFGS | L-BFGS / mfn-ord | "
           "mfn-ord default: time, gap, Newton / CG | L-BFGS-B default: time, gap, iterations | "
           "test MAE (mfn-ord) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    r13, r16 = [], []
    for r in rows:
        cells = []
        for target, acc in ((1e-3, r13), (1e-6, r16)):
            to = r["t_ord"][target]
            tl = r["t_lb"][target]
            cells.append(f"{fmt_s(to)} ({r['tol'][target]:g})" if to is not None else "not reached")
            cells.append(fmt_s(tl) if np.isfinite(tl) else "not reached")
            if to is not None and np.isfinite(tl):
                acc.append(tl / to)
                cells.append(f"{tl / to:.1f}")
            else:
                cells.append("-")
        out.append(f"| {r['name']} | {r['n']} | {r['d']} | {r['p']} | {r['fstar']:.10g} | "
                   f"{r['ref_gaps'][0]:.1e} / {r['ref_gaps'][1]:.1e} | " + " | ".join(cells) +
                   f" | {fmt_s(r['t_def'])}, {r['gap_def']:.1e}, {r['n_iter']} / {r['cg']} | "
                   f"{fmt_s(r['t_lbdef'])}, {r['gap_lbdef']:.1e}, {r['lb_nit']} | {r['mae']:.3f} |")
    for target, acc in ((1e-3, r13), (1e-6, r16)):
        if acc:
            out.append(f"\nGeometric mean of L-BFGS / mfn-ord time to {target:g}: "
                       f"{H.geometric_mean(acc):.1f} ({len(acc)} sets).")
    inv = max((r["inv"] for r in rows), default=0.0)
    out.append(f"\nLargest threshold inversion before the final sort, over all sets: {inv:.1e}.")
    return out


# ---------------------------------------------------------------------------- 3. ls, Table 2

def direct_cholesky(XtX_of, Xa, t, C):
    """Proximal-SVM style: form X'X (by XtX_of), then a dense Cholesky solve."""
    A = XtX_of(Xa)
    A = np.asarray(A.todense() if sp.issparse(A) else A) * (2.0 * C)
    A[np.diag_indices_from(A)] += 1.0
    return sla.cho_solve(sla.cho_factor(A), 2.0 * C * np.asarray(Xa.T @ t).ravel())


def direct_sparse(Xa, t, C):
    """X'X as a sparse matrix and a sparse LU (SuperLU) solve."""
    A = (2.0 * C) * (Xa.T @ Xa).tocsc() + sp.identity(Xa.shape[1], format="csc")
    return spla.splu(A).solve(2.0 * C * np.asarray(Xa.T @ t).ravel())


def ls_sets():
    """(label, X, y, C values) for the Table 2 runs."""
    for name, label in (("australian", "Australian (dense)"), ("w7a", "Web-7 = w7a (sparse)")):
        if (data_dir() / "binary" / name).is_file():
            X, y = load_binary(name)
            yield label, X, y, [2.0 ** k for k in range(-5, 6)]
        else:
            log(f"ls: {name} missing, skipped")
    from linsvm.io.synth import make_text_classification
    for n in (2000, 5000):
        X, y = make_text_classification(n_samples=20000, n_features=n, avg_length=60, seed=1)
        yield f"synthetic text 20000 x {n} (linsvm.io.synth)", X.tocsr(), y, [2.0 ** -5, 1.0, 2.0 ** 5]


def bench_ls(repeats):
    from linsvm.solvers import SOLVERS
    info = SOLVERS["ls"]
    rows = []
    for label, X, y, Cs in ls_sets():
        log(f"ls: {label}")
        m, n = X.shape
        Xb = CSRBuffers(X)
        idx = np.arange(m, dtype=np.int64)
        Xa = augmented(X)
        Xd = Xa.toarray() if m * n <= 1e7 else None
        t = np.where(y == linsvm.train(Xb, y, solver="ls", C=1.0, max_iter=1).classes_[0], 1.0, -1.0)
        problem = Problem.binary(Xb, idx, t, np.ones(m), 1.0)
        opts = {}
        plain = dict(precondition=False)
        big = m * n > 5e7                     # the dense/sparse factorizations take seconds: fewer repeats
        times, worst, iters = {}, 0.0, []
        for C in Cs:
            def cg(o=opts):
                res = info.fit(problem, make_params(info, C=C, options=o), None, None, None)
                return res.weights, res.stats
            w_cg, st = cg()
            iters.append(st["cg_iter"])

            def F(w):
                return 0.5 * w @ w + C * float(np.sum((1.0 - t * (Xa @ w)) ** 2))
            w_direct = direct_sparse(Xa, t, C)
            worst = max(worst, abs(F(w_cg) - F(w_direct)) / F(w_direct))
            fns = {"cg": cg, "cg_plain": lambda: cg(plain),
                   "chol_sparse_xtx": lambda: direct_cholesky(lambda A: A.T @ A, Xa, t, C),
                   "lu": lambda: direct_sparse(Xa, t, C)}
            if Xd is not None:
                fns["chol_dense_xtx"] = lambda: direct_cholesky(lambda A: A.T @ A, Xd, t, C)
            for key, v in timed_rounds(fns, 1 if big else repeats).items():
                times.setdefault(key, []).append(v)
        mean = {k: float(np.mean(v)) for k, v in times.items()}
        rows.append((label, m, n, X.nnz / (m * n), len(Cs), mean, worst, float(np.mean(iters))))
    out = ["## 3. LS-SVM-CG vs direct normal equations (paper Table 2)", "",
           "Times are averaged over the C values (2^-5..2^5 for the paper's two sets; 2^-5, 1, 2^5 for "
           "the synthetic ones); ratio = direct method's average / ls's average (> 1: CGLS wins). ls is "
           "timed as the solver call (linsvm.solvers registry `fit`, no Model building), like the "
           "direct solves, which return w only.", "",
           "| data set | m | n | s = nnz/(mn) | ls (CGLS, Jacobi, -e 1e-6) | ls --no-precondition | "
           "Cholesky, X'X by dense BLAS | Cholesky, X'X by sparse product | sparse LU | "
           "best Cholesky / ls | sparse LU / ls | best Cholesky / ls plain | paper (proximal / LS-SVM-CG) | "
           "max rel. objective diff ls vs direct | mean CGLS iterations |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    paper = {"Australian (dense)": "0.72", "Web-7 = w7a (sparse)": "15.72"}
    for label, m, n, s, nC, mean, worst, it in rows:
        chol = min(v for k, v in mean.items() if k.startswith("chol"))
        out.append(f"| {label} | {m} | {n} | {s:.3f} | {fmt_s(mean['cg'])} | {fmt_s(mean['cg_plain'])} | "
                   f"{fmt_s(mean.get('chol_dense_xtx'))} | {fmt_s(mean['chol_sparse_xtx'])} | "
                   f"{fmt_s(mean['lu'])} | {chol / mean['cg']:.2f} | {mean['lu'] / mean['cg']:.2f} | "
                   f"{chol / mean['cg_plain']:.2f} | {paper.get(label, '-')} | {worst:.1e} | {it:.0f} |")
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--parts", default="l1,ord,ls")
    ap.add_argument("--datasets", default=",".join(BINARY), help="binary sets for part 1")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=None, help="also write the tables to this file")
    args = ap.parse_args(argv)
    parts = args.parts.split(",")
    t0 = time.perf_counter()
    head = ["# linsvm finite Newton family benchmark", "",
            f"- Machine: nproc {os.cpu_count()}, load average at start "
            f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}; {platform.platform()}.",
            f"- Versions: Python {platform.python_version()}, numpy {np.__version__}, scipy "
            f"{H.version('scipy')}, liblinear-official {H.version('liblinear-official')}, linsvm "
            f"{linsvm.__version__}.",
            f"- Run: `python examples/bench_mfn_family.py --parts {args.parts} --repeats {args.repeats}`; "
            "protocol in the script's docstring.", ""]
    body = []
    if "l1" in parts:
        body += bench_l1([d for d in args.datasets.split(",") if d], args.repeats) + [""]
    if "ord" in parts:
        body += bench_ord(args.repeats) + [""]
    if "ls" in parts:
        body += bench_ls(args.repeats) + [""]
    body.append(f"Total wall time {time.perf_counter() - t0:.0f} s.")
    text = "\n".join(head + body) + "\n"
    print(text)
    if args.out:
        pathlib.Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
