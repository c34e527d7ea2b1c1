"""examples/bench_defaults.py (the table of the solvers' defaults) on tiny generated data: the table has
the rows and columns it should, and every gap and accuracy it reports is recomputed here from
the weights it saved, against optima found independently with scipy.  No timing is checked."""
import json
import subprocess
import sys

import numpy as np
import pytest
import scipy.optimize as so

from conftest import REPO, augmented, child_env, random_problem

pytest.importorskip("liblinear")
import linsvm  # noqa: E402

COLUMNS = ["data set", "C", "linsvm", "LIBLINEAR", "gap linsvm", "gap LIBLINEAR",
           "train s linsvm", "train s LIBLINEAR", "wall ratio", "CPU ratio",
           "end-to-end s linsvm", "end-to-end s LIBLINEAR", "end-to-end ratio", "end-to-end CPU ratio",
           "test acc linsvm", "test acc LIBLINEAR"]


def binary_objective(Xa, t, v, C, loss):
    slack = np.maximum(0.0, 1.0 - t * (Xa @ v))
    return 0.5 * v @ v + C * (slack @ slack if loss == "l2" else slack.sum())


def cs_objective(Xa, codes, W, C):
    S = Xa @ W
    n, k = S.shape
    margins = 1.0 - np.eye(k)[codes] + S - S[np.arange(n), codes][:, None]
    return 0.5 * np.sum(W * W) + C * margins.max(axis=1).sum()


def optimum_l2(Xa, t, C):
    """The squared hinge is C^1 and convex: L-BFGS to a tiny gradient."""
    A = Xa.toarray()

    def fg(v):
        slack = np.maximum(0.0, 1.0 - t * (A @ v))
        return 0.5 * v @ v + C * slack @ slack, v - 2 * C * A.T @ (t * slack)
    res = so.minimize(fg, np.zeros(A.shape[1]), jac=True, method="L-BFGS-B",
                      options={"ftol": 1e-15, "gtol": 1e-11, "maxiter": 10000})
    return res.fun


def optimum_hinge(Xa, t, C):
    """The hinge through its dual max 1'a - 1/2 a'Qa, 0 <= a <= C (no equality constraint:
    the bias is a regularized feature), by L-BFGS-B; the primal at w = X'(t a)."""
    A = Xa.toarray() * t[:, None]
    Q = A @ A.T
    res = so.minimize(lambda a: (0.5 * a @ Q @ a - a.sum(), Q @ a - 1.0), np.zeros(A.shape[0]),
                      jac=True, method="L-BFGS-B", bounds=[(0.0, C)] * A.shape[0],
                      options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10000})
    w = A.T @ res.x
    return binary_objective(Xa, t, w, C, "l1"), -res.fun      # primal (upper) and dual (lower)


def optimum_cs(Xa, codes, k, C):
    """Crammer-Singer as a QP in (W, xi): min 1/2||W||^2 + C sum xi subject to
    xi_i >= e_i^m + (w_m - w_y_i).x_i, by SLSQP with the exact constraint Jacobian; returns
    the objective of the W found (an upper bound on the optimum, tight when SLSQP converged)."""
    A = Xa.toarray()
    n, d = A.shape
    m = d * k
    rows, lower = [], []
    for i in range(n):
        for j in range(k):
            r = np.zeros(m + n)
            r[m + i] = 1.0
            if j != codes[i]:
                r[np.arange(d) * k + j] -= A[i]
                r[np.arange(d) * k + codes[i]] += A[i]
            rows.append(r)
            lower.append(0.0 if j == codes[i] else 1.0)
    G, lower = np.array(rows), np.array(lower)
    res = so.minimize(lambda z: 0.5 * z[:m] @ z[:m] + C * z[m:].sum(),
                      np.concatenate([np.zeros(m), np.full(n, 2.0)]),
                      jac=lambda z: np.concatenate([z[:m], np.full(n, C)]), method="SLSQP",
                      constraints=[{"type": "ineq", "fun": lambda z: G @ z - lower, "jac": lambda z: G}],
                      options={"ftol": 1e-15, "maxiter": 5000})
    assert res.status in (0, 8), res.message        # 8: no descent left, at the optimum
    return cs_objective(Xa, codes, res.x[:m].reshape(d, k), C)


def first_appearance(y):
    labels, first = np.unique(y, return_index=True)
    return labels[np.argsort(first)]


def parse_table(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("| ")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[1:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] == "data set":          # the reference table's header
            break
        rows.append(dict(zip(header, cells)))
    return header, rows


def cell_float(text):
    return float(text.rstrip("%"))


STAND_IN_TRAIN = """#!{python}
# LIBLINEAR's `train` command line (options... DATA MODEL) through the liblinear-official package
import sys
from liblinear.liblinearutil import save_model, svm_read_problem, train
y, x = svm_read_problem(sys.argv[-2])
save_model(sys.argv[-1], train(y, x, " ".join(sys.argv[1:-2])))
"""


def stand_in_train(tmp_path):
    """An executable that behaves like LIBLINEAR's `train` (the real one is built outside the
    repository and is not needed here)."""
    path = tmp_path / "train"
    path.write_text(STAND_IN_TRAIN.format(python=sys.executable))
    path.chmod(0o755)
    return path


def run_script(args, data, timeout=600):
    env = child_env(LINSVM_DATA=str(data))
    env.pop("LIBLINEAR_TRAIN", None)
    return subprocess.run([sys.executable, str(REPO / "examples" / "bench_defaults.py")] + args,
                          capture_output=True, text=True, env=env, timeout=timeout)


@pytest.mark.slow
@pytest.mark.subprocess
def test_bench_defaults_without_liblinear_train_skips_end_to_end_with_a_note(tmp_path):
    data = tmp_path / "data"
    (data / "binary").mkdir(parents=True)
    X, y = random_problem(n_samples=40, n_features=6, seed=5)
    linsvm.dump_svmlight(X, y, data / "binary" / "tiny")
    proc = run_script(["--datasets", "tiny", "--pairs", "mfn", "--C", "1", "--repeats", "1",
                       "--liblinear-train", str(tmp_path / "absent")], data)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "end-to-end columns skipped" in proc.stdout and "is not an executable file" in proc.stdout
    header, rows = parse_table(proc.stdout)
    assert header == COLUMNS and len(rows) == 1
    assert rows[0]["end-to-end s linsvm"] == rows[0]["end-to-end ratio"] == "—"
    assert rows[0]["test acc linsvm"] == "—"        # no test file


@pytest.mark.slow
@pytest.mark.subprocess
def test_bench_defaults_quick_gaps_match_independent_optima(tmp_path):
    data = tmp_path / "data"
    (data / "binary").mkdir(parents=True)
    (data / "multiclass").mkdir()
    X, y = random_problem(n_samples=70, n_features=8, density=0.5, seed=3)
    linsvm.dump_svmlight(X[:50], y[:50], data / "binary" / "tiny")
    linsvm.dump_svmlight(X[50:], y[50:], data / "binary" / "tiny.t")
    Xm, ym = random_problem(n_samples=45, n_features=5, density=0.6, n_classes=3, seed=4)
    linsvm.dump_svmlight(Xm[:30], ym[:30], data / "multiclass" / "tinymc.scale")
    linsvm.dump_svmlight(Xm[30:], ym[30:], data / "multiclass" / "tinymc.t.scale")
    out = tmp_path / "out"
    proc = run_script(["--quick", "--datasets", "tiny,tinymc,absent", "--pairs", "mfn,dcd-l1,sdm-cs",
                       "--C", "cv", "--repeats", "2", "--linsvm-options", "mfn:tol=0.01,gtol=0.003",
                       "--liblinear-train", str(stand_in_train(tmp_path)), "--out", str(out)], data)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    assert "end-to-end columns skipped" not in proc.stdout and "absent: not found, skipped" in proc.stdout
    header, rows = parse_table(proc.stdout)
    assert header == COLUMNS
    payload = json.loads((out / "bench_defaults.json").read_text())
    cases = payload["cases"]

    # rows: per data set and C (the CV C of each objective), one per linsvm configuration
    expected = set()
    for case in cases:
        names = {"l2": ["linsvm mfn (defaults)", "linsvm mfn [tol=0.01,gtol=0.003]"],
                 "l1": ["linsvm dcd --loss l1 (defaults)"], "cs": ["linsvm sdm-cs (defaults)"]}
        for name in names[case["objective"]]:
            expected.add((case["dataset"], case["C"], name))
    got = {(r["data set"], float(r["C"].split()[0]), r["linsvm"]) for r in rows}
    assert got == expected and len(rows) == len(expected)
    assert {(c["dataset"], c["objective"]) for c in cases} == {("tiny", "l2"), ("tiny", "l1"),
                                                               ("tinymc", "cs")}
    assert all(c["cv"] for c in cases) and all(r["C"].endswith("(CV)") for r in rows)
    assert all(cell_float(r[c]) > 0 for r in rows for c in ("end-to-end ratio", "end-to-end CPU ratio"))

    t = np.where(y == 1.0, 1.0, -1.0)       # linsvm's positive class of {-1, +1} is +1
    Xa, Xta = augmented(X[:50]), augmented(X[50:])
    classes = first_appearance(ym[:30])
    codes = np.array([list(classes).index(v) for v in ym[:30]])
    Xma, Xmta = augmented(Xm[:30]), augmented(Xm[30:])
    for case in cases:
        C, obj = case["C"], case["objective"]
        if obj == "cs":
            fstar = optimum_cs(Xma, codes, classes.size, C)
            value = lambda W: cs_objective(Xma, codes, W, C)                                # noqa: E731
            acc = lambda W: np.mean(classes[np.argmax(Xmta @ W, axis=1)] == ym[30:])       # noqa: E731
        else:
            if obj == "l2":
                fstar = optimum_l2(Xa, t[:50], C)
            else:
                fstar, dual = optimum_hinge(Xa, t[:50], C)
                assert dual <= case["fstar"] * (1 + 1e-9)       # the reference is above the dual
            value = lambda v: binary_objective(Xa, t[:50], v, C, obj)                       # noqa: E731
            acc = lambda v: np.mean(np.where(Xta @ v > 0, 1.0, -1.0) == y[50:])              # noqa: E731
        # the script's tight reference is the optimum scipy finds (squared hinge), or lies
        # between it and the optimum plus the dual certificate the reference table prints
        if obj == "l2":
            assert case["fstar"] >= fstar * (1 - 1e-9), (case["dataset"], C, obj)
            assert case["dual_bound"] is None
            assert case["fstar"] - fstar <= 1e-6 * abs(fstar), (case["dataset"], C, obj)
        else:       # D <= optimum <= fstar (scipy's may sit a little above the optimum)
            assert case["dual_bound"] <= fstar * (1 + 1e-9)
            assert case["fstar"] - case["dual_bound"] <= 1e-4 * abs(fstar)
            assert abs(case["fstar"] - fstar) <= case["fstar"] - case["dual_bound"] + 1e-8 * abs(fstar)
            assert f"| {case['dataset']} | {C:g} | " in proc.stdout.split("Reference optima")[1]
        weights = np.load(out / case["weights_file"])
        for label, run in case["runs"].items():
            gaps = [(value(weights[f"{label}#{k}"]) - case["fstar"]) / abs(case["fstar"]) for k in range(2)]
            np.testing.assert_allclose(run["gap"], gaps, rtol=1e-6, atol=1e-12)
            assert min(gaps) >= -1e-9                 # nothing beats f*
            accs = [acc(weights[f"{label}#{k}"]) for k in range(2)]
            np.testing.assert_allclose(run["accuracy"], accs)
            if run["kind"] != "linsvm":
                continue
            row = next(r for r in rows if r["data set"] == case["dataset"] and r["linsvm"] == label
                       and float(r["C"].split()[0]) == C)
            vs = case["runs"][run["vs"]]
            assert row["LIBLINEAR"] == run["vs"] == {"l2": "LIBLINEAR -s 2 -B 1", "l1": "LIBLINEAR -s 3 -B 1",
                                                     "cs": "LIBLINEAR -s 4 -B 1"}[obj]
            lib_gaps = [(value(weights[f"{run['vs']}#{k}"]) - case["fstar"]) / abs(case["fstar"])
                        for k in range(2)]
            for cell, g in ((row["gap linsvm"], np.median(gaps)), (row["gap LIBLINEAR"], np.median(lib_gaps))):
                assert abs(cell_float(cell) - g) <= 0.051 * abs(g) + 1e-15, (cell, g)
            assert abs(cell_float(row["test acc linsvm"]) - 100 * np.median(accs)) <= 0.006
            assert cell_float(row["wall ratio"]) > 0 and cell_float(row["CPU ratio"]) > 0
            assert len(run["wall"]) == len(run["thread_cpu"]) == len(vs["wall"]) == 2
            assert len(run["e2e_wall"]) == len(run["e2e_cpu"]) == len(vs["e2e_wall"]) == 2
            # the command line's defaults are train()'s: the saved model has the same gap
            assert run["e2e_gap"] == pytest.approx(gaps[0], rel=1e-9, abs=1e-13)
            assert vs["e2e_gap"] >= -1e-9
