"""What each rank runs in the launches of tests/test_mpiexec.py, and the data they share.

`python tests/mpiexec_programs.py PROGRAM OUT ARGS` under `mpiexec -n P`:

* ``shares OUT WITH_QID PATH...``: every rank reads its share of each file
  (linsvm.distributed.read_svmlight_share) and saves it as OUT/<k>/rank<R>.npz, or the
  error as OUT/<k>/err<R>.txt; the exit status is 1 if any file was refused;
* ``family OUT``: every rank trains each case of `family_cases` on its block of the
  rows, on the world communicator (and for CoCoA+ with 3 ranks also on a communicator
  of ranks 0 and 1, rank 2 sitting that one out), and pickles its models' weights,
  thresholds, predictions on the whole set and statistics to OUT/rank<R>.pkl;
* ``cli OUT``: the command lines of OUT/commands.json one after the other through
  linsvm's entry point, each with its own directory, its own standard output and
  error per rank (OUT/<name>/out<R>, err<R>) and its exit status per rank
  (OUT/<name>/exit<R>); a command with "fail_rank" raises on that rank once training
  started, which ends the job (so it goes last).

The data builders are plain functions so that the test computes its serial
references from the very same data, in its own process.
"""
import json
import os
import pickle
import sys

import numpy as np
import scipy.sparse as sp

TESTS = os.path.dirname(os.path.abspath(__file__))


# ------------------------------------------------------------------ data and cases

def newton_binary():
    from linsvm.io.synth import make_text_classification
    return make_text_classification(n_samples=500, n_features=300, avg_length=20, seed=2)


def newton_ordinal():
    rng = np.random.default_rng(5)
    X = sp.random(300, 20, density=0.3, format="csr", random_state=rng,
                  data_rvs=lambda k: rng.standard_normal(k))
    s = X @ rng.standard_normal(20) + 0.3 * rng.standard_normal(300)
    return X, np.digitize(s, np.quantile(s, [0.25, 0.5, 0.75]))


def wide_binary():
    """Many features, few non-zeros per row, 20 columns no row touches: auto picks the
    weight split (1,521 weights against 12 x 1,800 / P bytes of rows)."""
    from linsvm.io.synth import make_text_classification
    X, y = make_text_classification(n_samples=300, n_features=1500, avg_length=6, seed=7)
    return sp.hstack([X, sp.csr_matrix((300, 20))], format="csr"), y


def wide_ordinal():
    from linsvm.io.synth import make_text_classification
    return make_text_classification(n_samples=300, n_features=1500, n_classes=3, avg_length=6,
                                    seed=9)


def logistic_set():
    """Three classes (softmax) and class 1 against the rest (lr)."""
    from linsvm.io.synth import make_text_classification
    X, y = make_text_classification(n_samples=500, n_features=300, n_classes=3, avg_length=20,
                                    seed=2)
    return X, y, np.where(y == 1, 1.0, -1.0)


def regression_set():
    from linsvm.io.synth import make_text_regression
    return make_text_regression(n_samples=400, n_features=300, avg_length=20, offset=7.0, seed=3)


def alm_perf_set():
    """Binary and 3-level labels from one noisy score, 8 queries of 25 rows."""
    rng = np.random.default_rng(0)
    n, d = 200, 12
    X = sp.random(n, d, density=0.4, format="csr", random_state=rng)
    s = X @ rng.standard_normal(d) + 0.3 * rng.standard_normal(n)
    return (X, np.where(s > 0, 1.0, -1.0), np.digitize(s, np.quantile(s, [0.3, 0.7])),
            np.repeat(np.arange(8), 25))


def cocoa_set():
    """Binary and 3-class labels on 240 rows."""
    rng = np.random.RandomState(0)
    X = sp.random(240, 10, density=0.5, random_state=rng, format="csr")
    y = (np.asarray(X @ rng.randn(10)).ravel() > 0).astype(float)
    y3 = (np.asarray(X @ rng.randn(10, 3)).argmax(axis=1) + 1).astype(float)
    return X, y, y3


def family_cases(size):
    """{case: (data builder, label index, solver, options, row cuts of `size` ranks)}.

    Cuts are uneven, with an empty rank (or rank 0 empty) on 3 ranks; CoCoA+ cases
    are run by `_cocoa` instead (several communicators)."""
    def newton_cuts(n):
        return [0, n // 5, n] if size == 2 else [0, n // 7, n // 7, n]

    def alm_cuts(n):
        return list(np.linspace(0, n, size + 1).astype(int) + np.array([0] + [7] * (size - 1)
                                                                      + [0]))
    cases = {}
    for solver in ("mfn", "ls", "mfn-huber", "mfn-l1", "mfn-ord"):
        # mfn-l1 at -e 1e-9 (its answer is only determined to about -e) on the small set:
        # a tenth of the CGLS iterations, each an allreduce
        data = {"mfn-ord": newton_ordinal, "mfn-l1": alm_perf_set}.get(solver, newton_binary)
        n = {"mfn-ord": 300, "mfn-l1": 200}.get(solver, 500)
        cases[f"newton/{solver}"] = (data, 1, solver, {"mfn": {"tol": 1e-6},
                                                       "mfn-l1": {"tol": 1e-9}}.get(solver, {}),
                                     newton_cuts(n))
    split = [0, 70, 300] if size == 2 else [0, 120, 120, 300]
    cases["split/mfn"] = (wide_binary, 1, "mfn", {"tol": 1e-6}, split)
    cases["split/mfn-ord"] = (wide_ordinal, 1, "mfn-ord", {"tol": 1e-8}, split)
    lr_cuts = [0, 120, 500] if size == 2 else [0, 0, 250, 500]
    cases["logistic/lr"] = (logistic_set, 2, "lr", {"tol": 1e-8}, lr_cuts)
    cases["logistic/softmax"] = (logistic_set, 1, "softmax", {"tol": 1e-8}, lr_cuts)
    for solver, labels in (("alm", 1), ("alm-exact", 1), ("perf", 1), ("perf-ord", 2)):
        cases[f"alm-perf/{solver}"] = (alm_perf_set, labels, solver, {}, alm_cuts(200))
    return cases


SVR_CUTS = {2: [0, 90, 400], 3: [0, 90, 250, 400]}
SVR_OPTIONS = {"C": 4.0, "tol": 1e-9}
COCOA_CASES = (("dcd-l1", "dcd", 1, {"loss": "l1"}), ("dcd-l2", "dcd", 1, {"loss": "l2"}),
               ("sdm-cs", "sdm-cs", 2, {}), ("sdm-ww", "sdm-ww", 2, {}))
COCOA_TOL = 0.01


def cocoa_cuts(P):
    b = np.linspace(0, 240, P + 1).astype(int)
    b[1] = 40
    return b


def svr_fit(X, y, rows, coll):
    """svr's own fit on the rows `rows` of the whole X (each rank holds all of X and a
    list of its rows), on the Collective coll (None: serial)."""
    from linsvm.problem import CSRBuffers, Problem
    from linsvm.solvers import get_solver, make_params
    info = get_solver("svr")
    rows = np.asarray(rows, dtype=np.int64)
    prob = Problem(CSRBuffers(X), rows, np.ones(len(rows)), 1.0, t=y[rows], comm=coll)
    return info.fit(prob, make_params(info, **SVR_OPTIONS), None, None, None)


# ------------------------------------------------------------------ the programs

def _record(model, X):
    w = model.weights
    return {"weights": w, "thresholds": getattr(model, "thresholds_", None),
            "pred": model.predict(X), "stats": dict(model.stats)}


def _cocoa(world, out):
    """The CoCoA+ cases on the world and, with 3 ranks, on ranks 0 and 1 alone."""
    import linsvm
    X, y, y3 = cocoa_set()
    comms = [(world.size, world)]
    if world.size == 3:
        comms.append((2, world.Split(0 if world.rank < 2 else 1, world.rank)))
    for P, comm in comms:
        if world.rank >= P:
            continue
        b, r = cocoa_cuts(P), comm.rank
        for name, solver, labels, kw in COCOA_CASES:
            lab = (y, y3)[labels - 1]
            m = linsvm.train(X[b[r]:b[r + 1]], lab[b[r]:b[r + 1]], solver=solver, tol=COCOA_TOL,
                             comm=comm, **kw)
            out[f"cocoa{P}/{name}"] = {"weights": m.weights, "stats": dict(m.stats)}


def family(out_dir):
    import linsvm
    from mpi4py import MPI
    from linsvm.runtime.collective import Collective
    world = MPI.COMM_WORLD
    rank, size = world.Get_rank(), world.Get_size()
    out = {}
    for case, (data, labels, solver, kw, cuts) in family_cases(size).items():
        sets = data()
        X, y = sets[0], sets[labels]
        a, b = cuts[rank], cuts[rank + 1]
        extra = {"qid": sets[3][a:b]} if solver == "perf-ord" else {}
        m = linsvm.train(X[a:b], y[a:b], solver=solver, comm=world, **kw, **extra)
        out[case] = _record(m, X)
    X, y = regression_set()
    cuts = SVR_CUTS[size]
    res = svr_fit(X, y, np.arange(cuts[rank], cuts[rank + 1]), Collective(world))
    out["svr"] = {"weights": res.weights, "stats": dict(res.stats)}
    _cocoa(world, out)
    with open(f"{out_dir}/rank{rank}.pkl", "wb") as fh:
        pickle.dump(out, fh)


def shares(out_dir, with_qid, paths):
    from mpi4py import MPI
    from linsvm.distributed import read_svmlight_share
    from linsvm.errors import DataError
    comm = MPI.COMM_WORLD
    refused = False
    for k, path in enumerate(paths):
        out = f"{out_dir}/{k}"
        os.makedirs(out, exist_ok=True)
        try:
            s = read_svmlight_share(path, comm, with_qid=with_qid)
        except DataError as e:
            with open(f"{out}/err{comm.rank}.txt", "w") as fh:
                fh.write(str(e))
            refused = True
            continue
        np.savez(f"{out}/rank{comm.rank}.npz", indptr=s.X.indptr, indices=s.X.indices,
                 data=s.X.data, y=s.y, qid=s.qid if with_qid else np.zeros(0, np.int64),
                 labels=s.labels, meta=np.array([s.row_offset, s.n_rows_total, s.n_features,
                                                 s.first_line, s.n_ranks]))
    sys.exit(1 if refused else 0)


def _failing_on(rank, name):
    """Make solver `name` raise on `rank` once training started (a fault on one rank)."""
    from linsvm.solvers import SOLVERS
    info = SOLVERS[name]

    def failing(problem, params, start, state, log):
        if problem.comm is not None and problem.comm.rank == rank:
            raise RuntimeError("injected fault")
        return info.fit(problem, params, start, state, log)
    SOLVERS[name] = info._replace(fit=failing)


def _run_command(main, rank, out_dir, argv, redirect):
    """One command line through `main` in out_dir, its exit status to exit<R>; with
    redirect, its stdout/stderr (the file descriptors: what the launcher would forward)
    to out<R>/err<R>."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = os.dup(1), os.dup(2)
    if redirect:
        with open(f"{out_dir}/out{rank}", "wb") as fo, open(f"{out_dir}/err{rank}", "wb") as fe:
            os.dup2(fo.fileno(), 1)
            os.dup2(fe.fileno(), 2)
    cwd = os.getcwd()
    os.chdir(out_dir)
    code = 0
    try:
        sys.argv = ["linsvm", *argv]
        main()
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    finally:
        os.chdir(cwd)
        sys.stdout.flush()
        sys.stderr.flush()
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])
    with open(f"{out_dir}/exit{rank}", "w") as fh:
        fh.write(str(code))


def cli(out_dir):
    sys.path.insert(0, TESTS)
    import gathering_solver
    from linsvm.cli import main
    from linsvm.distributed import mpi_launch
    name = gathering_solver.install()
    rank = mpi_launch().rank
    with open(f"{out_dir}/commands.json") as fh:
        commands = json.load(fh)
    for cmd in commands:
        if "fail_rank" in cmd:
            _failing_on(cmd["fail_rank"], name)
        _run_command(main, rank, f"{out_dir}/{cmd['name']}", cmd["argv"],
                     cmd.get("redirect", True))


if __name__ == "__main__":
    program, out = sys.argv[1], sys.argv[2]
    if program == "shares":
        shares(out, sys.argv[3] == "1", sys.argv[4:])
    elif program == "family":
        family(out)
    else:
        cli(out)
