"""Distributed training: 1 and 2 MPI ranks on this machine, and a cost model for clusters.

    python examples/bench_mpi.py [--rows 200000] [--features 100000] [--avg-length 120]
                                 [--solver mfn] [-c 1] [--repeats 3] [--cache DIR] [--out DIR]
                                 [--cluster A_NS,C_NS,CG,PER_NEWTON[,M_NS]] [--model-only]

Needs the `mpi` extra (pip install ".[mpi]": mpi4py and MPICH's mpiexec).

Data: a generated text set (linsvm.io.synth.make_text_classification, seed 0; with the
defaults 200,000 x 100,000, about 20M non-zeros, tf-idf rows of unit length) written
once as a plain SVM-light file under --cache (default $TMPDIR/linsvm-bench-mpi), so
that each rank reads only its byte range of it, as `mpiexec -n P linsvm-train` does.

Runs (interleaved over --repeats rounds, medians): the solver at its defaults, C = 1,
bias 1, on P = 1 (the serial program: no mpiexec, mpi4py not imported) and P = 2
(`mpiexec -n 2`), each rank one kernel thread, and for reference P = 1 with two kernel
threads (--n-threads 2: this machine has two cores, so that is the other way to use
them).  A child process reads its share (timed: "read"), trains through
linsvm.train(..., comm=MPI.COMM_WORLD) (timed: "train") and reports the model's
stats: Newton and CGLS iterations, objective, and for P > 1 the seconds inside
collectives, their number and the bytes one rank contributed.  The models of P = 1 and
P = 2 must agree (relative objective difference and predictions on the training rows
are printed); the iterations must be the same, because the distributed solve takes the
serial iterates.

Collectives: an allreduce microbenchmark under mpiexec -n 2 (sizes 1 .. 2^20 doubles)
fits t = alpha + bytes / B to this machine's MPI (shared memory).

Cost model (`predict`): one CGLS iteration of a "rows" solver on P ranks costs

    t(P) = a nnz / P  +  c d  +  allreduce(8 (d + 3) bytes, P)

a nnz / P: the rank's pass over its rows (a: seconds per non-zero per iteration,
calibrated on the serial run as train seconds / (CGLS iterations x nnz), which also
spreads the Newton steps' own passes over the iterations); c d: the work on the
replicated d-vectors, the same on every rank (c calibrated on this machine from BLAS's
time for the iteration's two dots, four axpys, scaled product and buffer copy over d
doubles, `vector_seconds_per_double`); allreduce as MPICH does it, recursive
doubling below 2 KiB (log2 P (alpha + m / B)) and reduce-scatter + allgather above
(2 log2 P alpha + 2 (P - 1) / P m / B + (P - 1) / P m g, g the local reduction's
seconds per byte).  Each rank sends and receives 2 (P - 1) / P x 8 (d + 3) bytes per
iteration.  The number of iterations does not depend on P (the same iterates), so the
model predicts per iteration and multiplies by the serial count.  Checked here: the
model's prediction of the P = 2 train time on this machine (alpha, B from the
microbenchmark) against the measured median.  Then predicted for P = 2..256 on data of
rcv1's shape (677,399 x 47,236, 49.6M non-zeros: rcv1.binary train + test) and
kdd2010's (algebra: 8,407,752 x 20,216,830, 305.6M non-zeros) over a 10 Gbit/s network
(alpha = 25 us per message, B = 1.1 GB/s, a TCP cluster's usual figures; --latency,
--bandwidth change them), with the CGLS iteration count and a of the generated set.

Weight split (--weight-split on; linsvm/runtime/wsplit.py): the 2-rank run is made in
both arrangements, and the split's plan is reported (weights each rank's rows touch,
bytes of one CGLS iteration's two exchanges) beside the formula `split_traffic` gives
from the set's rows per feature: with the rows spread at random over P ranks, a
feature in c rows is touched by k = P (1 - (1 - 1/P)^c) ranks and each of its k - 1
non-owners sends one double per exchange.  `predict_split` prices a CGLS iteration of
the mfn family in the split (its Newton loop split too):

    t(P) = a nnz / P + c d / P + m (|T_r| + d / P) + 2 alltoallv(8 shared) + 2 small
           allreduces + (3 alltoallv + 2 m d + 6 m (|T_r| + d / P)) / (CGLS its per Newton step)

m (|T_r| + d / P): the clear of X'Cq on the rank's weights after each use; m d: the
kernel's clear of the Jacobi pass's two d-long sums once per Newton step (m: seconds per
double of a streaming pass, measured);
alltoallv: P - 1 latencies and the rank's bytes at the link's bandwidth.  The plan
(one gather of 4 |T_r| bytes and O(d) work per solve) and the final gather of beta are
left out of t(P) and reported.  For the cluster table the feature counts of rcv1's and
kdd2010's shapes are Poisson draws from the generator's Zipf law (`zipf_counts`: the
assumption; kdd2010's own counts are not at hand).  --cluster gives the table another
calibration (a, c in ns, CGLS iterations, CGLS iterations per Newton step: e.g. those of
the quiet-machine run of docs/mpi.md), and --model-only prints only that table.

Output: Markdown on stdout (and OUT/bench_mpi.md with --out); progress on stderr.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402  (puts this checkout first on sys.path)

# ---------------------------------------------------------------------------- the child
CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    path, solver, C, n_ranks, n_threads = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    split = sys.argv[7]
    import linsvm
    from linsvm.io.svmlight import load_svmlight_buffers
    t0 = time.perf_counter()
    if n_ranks > 1:
        from mpi4py import MPI
        from linsvm.distributed import read_svmlight_share
        comm = MPI.COMM_WORLD
        share = read_svmlight_share(path, comm)
        X, y = share.X, share.y
    else:
        comm = None
        X, y = load_svmlight_buffers(path)
    t1 = time.perf_counter()
    from linsvm.solvers import get_solver
    threads = {"n_threads": n_threads} if "n_threads" in get_solver(solver).options else {}
    if "weight_split" in get_solver(solver).options:
        threads["weight_split"] = split
    c1 = time.process_time()
    model = linsvm.train(X, y, solver=solver, C=C, comm=comm, **threads)
    t2 = time.perf_counter()
    cpu = time.process_time() - c1
    plan = {}
    if n_ranks > 1 and split == "on":      # the exchange plan's sizes, every rank's
        from linsvm.runtime.collective import Collective
        from linsvm.runtime.wsplit import plan as split_plan
        coll = Collective(comm)
        d = X.n_features + 1
        comm.Barrier()
        t3 = time.perf_counter()
        pl = split_plan(coll, X.indptr, X.indices, np.arange(X.n_rows), d, [X.n_features])
        t4 = time.perf_counter()
        facts = comm.allgather((pl.n_touched, len(pl.own), pl.bytes_per_iteration(), t4 - t3))
        plan = dict(touched=[f[0] for f in facts], owned=[f[1] for f in facts],
                    split_bytes=[f[2] for f in facts], plan_s=max(f[3] for f in facts))
    import scipy.sparse as sp
    dec = model.decision_function(sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.n_rows, X.n_features)))
    out = {k: (float(v) if isinstance(v, (int, float)) else v) for k, v in model.stats.items()
           if isinstance(v, (int, float, str))}
    out.update(read=t1 - t0, train=t2 - t1, train_cpu=cpu, n_rows=int(X.n_rows), nnz=int(X.nnz),
               **plan)
    rank = 0 if comm is None else comm.rank
    if n_ranks == 1:                        # rows per feature, for the split's cost model
        np.save(sys.argv[6] + ".counts.npy", np.bincount(X.indices, minlength=X.n_features))
    np.save(sys.argv[6] + f".{rank}.npy", dec)
    if rank == 0:
        print(json.dumps(out))
""")

COLLECTIVES = textwrap.dedent("""
    import json, time
    import numpy as np
    from mpi4py import MPI
    comm = MPI.COMM_WORLD
    out = []
    for k in range(0, 21, 2):
        buf = np.ones(2 ** k)
        reps = max(5, min(2000, 2 ** 22 // 2 ** k))
        comm.Barrier()
        for _ in range(3):
            comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
        ts = []
        for _ in range(5):
            comm.Barrier()
            t0 = time.perf_counter()
            for _ in range(reps):
                comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
            ts.append((time.perf_counter() - t0) / reps)
        out.append((8 * 2 ** k, sorted(ts)[2]))
    if comm.rank == 0:
        print(json.dumps(out))
""")


def mpiexec():
    """The mpiexec beside this Python (the mpich wheel's), else the one on PATH, else None."""
    here = Path(sys.executable).parent / "mpiexec"
    return str(here) if here.exists() else shutil.which("mpiexec")


def generate(path, rows, features, avg_length):
    """Write the generated text set to `path` once (skipped when it exists)."""
    if path.exists():
        return
    from linsvm.io.svmlight import dump_svmlight
    from linsvm.io.synth import make_text_classification

    harness.log(f"generating {rows} x {features} (avg length {avg_length}) into {path}")
    X, y = make_text_classification(n_samples=rows, n_features=features,
                                    avg_length=avg_length, seed=0)
    dump_svmlight(X, y, path)


def run_child(path, solver, C, n_ranks, n_threads, workdir, split="off"):
    """One training run in a fresh process (mpiexec for n_ranks > 1; split: its
    --weight-split); its stats, wall seconds of the whole process, and rank 0's decision
    values.  The serial run also leaves the rows per feature in workdir/counts.npy."""
    script = workdir / "child.py"
    script.write_text(CHILD)
    dec = workdir / f"dec-{n_ranks}-{n_threads}-{split}"
    cmd = [sys.executable, str(script), str(path), solver, repr(C), str(n_ranks), str(n_threads),
           str(dec), split]
    if n_ranks > 1:
        cmd = [mpiexec(), "-n", str(n_ranks)] + cmd
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=harness.child_env(OMP_NUM_THREADS=str(n_threads)))
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({' '.join(cmd)}):\n{proc.stderr[-3000:]}")
    import numpy as np

    stats = json.loads(proc.stdout.strip().splitlines()[-1])
    decs = [np.load(f"{dec}.{r}.npy") for r in range(n_ranks)]
    if n_ranks == 1:
        shutil.copy(f"{dec}.counts.npy", workdir / "counts.npy")
    return stats, wall, np.concatenate(decs)


def measure_collectives(workdir):
    """[(bytes, seconds per allreduce)] under mpiexec -n 2, and the fit (alpha, B)."""
    script = workdir / "collectives.py"
    script.write_text(COLLECTIVES)
    proc = subprocess.run([mpiexec(), "-n", "2", sys.executable, str(script)], capture_output=True,
                          text=True, env=harness.child_env())
    if proc.returncode != 0:
        raise SystemExit(f"allreduce microbenchmark failed:\n{proc.stderr[-3000:]}")
    points = json.loads(proc.stdout.strip().splitlines()[-1])
    return points, fit_latency_bandwidth(points)


def fit_latency_bandwidth(points):
    """(alpha, B): least squares of t = alpha + bytes / B over the measured points,
    weighted by 1 / t (relative errors, so the small sizes count as much as the large)."""
    import numpy as np

    m = np.array([p[0] for p in points], dtype=float)
    t = np.array([p[1] for p in points], dtype=float)
    A = np.column_stack([np.ones_like(m), m]) / t[:, None]
    alpha, inv_b = np.linalg.lstsq(A, np.ones_like(t), rcond=None)[0]
    return max(float(alpha), 0.0), 1.0 / max(float(inv_b), 1e-15)


def vector_seconds_per_double():
    """c: seconds per replicated weight per CGLS iteration: the d-vector work every rank
    repeats in csrc/cgls.pxd's distributed iteration -- two dots, four axpys, a scaled
    product and the copy into the allreduce's buffer -- timed with BLAS on d = 4M doubles
    (out of cache, as the weight vectors of the large cases are); best of 9, measured
    before any MPI process starts."""
    import numpy as np
    from scipy.linalg import blas

    d = 1 << 22
    rng = np.random.default_rng(0)
    p, beta, r, h, minv, s, pack = (rng.random(d) for _ in range(7))
    best = math.inf
    for _ in range(9):
        t0 = time.perf_counter()
        np.copyto(pack, h)                          # h (and 3 scalars) into the allreduce buffer
        pp = blas.ddot(p, p)
        blas.daxpy(p, beta, a=1e-3)                 # beta += gamma p
        blas.daxpy(h, r, a=-1e-3)                   # r -= gamma (h + lam p)
        blas.daxpy(p, r, a=-1e-6)
        np.multiply(minv, r, out=s)                 # s = M^-1 r
        rho = blas.ddot(r, s)
        blas.dscal(0.5, p)                          # p = s + omega p
        blas.daxpy(s, p, a=1.0)
        best = min(best, time.perf_counter() - t0)
    assert math.isfinite(pp + rho)
    return best / d


# ---------------------------------------------------------------------------- the model
MPICH_SHORT = 2048          # bytes: MPICH's switch from recursive doubling to Rabenseifner


def allreduce_seconds(n_bytes, P, alpha, bandwidth, reduce_per_byte):
    """Time of one allreduce of n_bytes on P ranks (module notes: MPICH's two algorithms)."""
    if P <= 1:
        return 0.0
    steps = math.ceil(math.log2(P))
    if n_bytes < MPICH_SHORT:
        return steps * (alpha + n_bytes / bandwidth)
    share = (P - 1) / P * n_bytes
    return 2 * steps * alpha + 2 * share / bandwidth + share * reduce_per_byte


def bytes_per_rank(d, P):
    """Bytes one rank sends (and receives) per CGLS iteration: 2 (P - 1) / P x 8 (d + 3)."""
    return 0.0 if P <= 1 else 2 * (P - 1) / P * 8 * (d + 3)


def predict(nnz, d, P, a, c, alpha, bandwidth, reduce_per_byte):
    """(seconds, of which communication) of one CGLS iteration (module notes)."""
    comm = allreduce_seconds(8 * (d + 3), P, alpha, bandwidth, reduce_per_byte)
    return a * nnz / P + c * d + comm, comm


def memset_seconds_per_double():
    """m: seconds per double of one streaming pass over a weight-length vector (a
    memset, out of cache; best of 9): the split's replicated work is such passes."""
    import numpy as np

    buf = np.ones(1 << 22)
    best = math.inf
    for _ in range(9):
        t0 = time.perf_counter()
        buf.fill(0.0)
        best = min(best, time.perf_counter() - t0)
    return best / buf.shape[0]


def zipf_counts(nnz, d, seed=0):
    """Rows per feature of a set of nnz non-zeros over d features whose frequencies
    follow the generator's Zipf law (linsvm.io.synth: p_r ~ (r + 2.7)^-1.07): Poisson
    draws of nnz p_r (the assumption for a shape such as kdd2010's)."""
    import numpy as np

    p = (np.arange(d) + 2.7) ** -1.07
    p *= nnz / p.sum()
    return np.random.default_rng(seed).poisson(p)


def split_traffic(counts, P):
    """(|T_r|, shared): the features one rank's rows touch and the doubles one rank
    sends per exchange, on average, when the rows are spread at random over P ranks.
    A feature in c rows is touched by a rank with probability 1 - (1 - 1/P)^c, so by
    k = P (1 - (1 - 1/P)^c) ranks; each of its k - 1 non-owners sends one double in a
    reduction and receives one in a scatter: (k - 1) doubles per exchange in all,
    shared = sum over features of (k - 1) / P per rank."""
    import numpy as np

    counts = np.asarray(counts, dtype=float)
    used = counts > 0
    q = -np.expm1(counts[used] * math.log1p(-1.0 / P)) if P > 1 else np.ones(int(used.sum()))
    return float(q.sum()), float((P * q - 1.0).sum() / P)


def alltoallv_seconds(n_bytes, P, alpha, bandwidth):
    """A personalized exchange sending (and receiving) n_bytes per rank: P - 1
    messages, the bytes at the link's bandwidth."""
    return 0.0 if P <= 1 else (P - 1) * alpha + n_bytes / bandwidth


def allgather_seconds(n_bytes, P, alpha, bandwidth):
    """An allgather of n_bytes in all (ring / recursive doubling): log2 P latencies,
    (P - 1) / P of the bytes received."""
    return 0.0 if P <= 1 else math.ceil(math.log2(P)) * alpha + (P - 1) / P * n_bytes / bandwidth


# the Newton step's own work in the split arrangement (csrc/_mfn.pyx with Split.outer):
# the start residual's and Jacobi diagonal's reductions and the step's scatter (three
# exchanges), the kernel's clear of those two d-long sums (2 passes over d), and about six
# passes over the rank's own weights and T_r (copies, the line search's sums, the update)
SPLIT_NEWTON_EXCHANGES = 3
SPLIT_NEWTON_CLEARS = 2
SPLIT_NEWTON_PASSES = 6


def predict_split(nnz, d, P, a, c, m, alpha, bandwidth, shared, touched, per_newton):
    """(seconds, of which communication) of one CGLS iteration of the mfn family in the
    weight split, the Newton loop split too (module notes): the rank's rows a nnz / P,
    the owners' vector work c d / P, the clear of X'Cq on the rank's weights, two
    exchanges of 8 shared bytes and two allreduces of a few doubles; plus each Newton
    step's own work (SPLIT_NEWTON_*) spread over its per_newton CGLS iterations.  The
    plan and the final gather of beta, once per solve, are left out."""
    if P <= 1:                                  # one rank: the serial iteration
        return predict(nnz, d, 1, a, c, alpha, bandwidth, 0.0)
    exchange = alltoallv_seconds(8 * shared, P, alpha, bandwidth)
    small = allreduce_seconds(32, P, alpha, bandwidth, 0.0)
    comm = 2 * exchange + 2 * small + (SPLIT_NEWTON_EXCHANGES * exchange + 2 * small) / per_newton
    work = a * nnz / P + c * d / P + m * (touched + d / P) + \
        (SPLIT_NEWTON_CLEARS * m * d + SPLIT_NEWTON_PASSES * m * (touched + d / P)) / per_newton
    return work + comm, comm


SHAPES = {"rcv1": (677_399, 47_236, 49_556_258), "kdd2010": (8_407_752, 20_216_830, 305_613_510)}


# ---------------------------------------------------------------------------- report
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--features", type=int, default=100_000)
    ap.add_argument("--avg-length", type=int, default=120)
    ap.add_argument("--solver", default="mfn")
    ap.add_argument("-c", type=float, default=1.0)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "linsvm-bench-mpi")
    ap.add_argument("--latency", type=float, default=25e-6, help="cluster: seconds per message")
    ap.add_argument("--bandwidth", type=float, default=1.1e9, help="cluster: bytes per second")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--cluster", help="A_NS,C_NS,CG,PER_NEWTON[,M_NS]: the cluster table with "
                    "this calibration (a, c in ns, CGLS iterations, CGLS iterations per Newton "
                    "step, m in ns) instead of this run's")
    ap.add_argument("--model-only", action="store_true",
                    help="print the cluster table of --cluster alone (m measured here), no runs")
    args = ap.parse_args(argv)
    if args.model_only:
        a, c, cg, per_newton, m = _calibration(args.cluster, memset_seconds_per_double())
        print("\n".join(cluster_table(args, a, c, m, cg, per_newton)))
        return
    if mpiexec() is None:
        raise SystemExit("mpiexec not found: pip install '.[mpi]'")
    args.cache.mkdir(parents=True, exist_ok=True)
    path = args.cache / f"text-{args.rows}x{args.features}-{args.avg_length}.svm"
    generate(path, args.rows, args.features, args.avg_length)
    work = Path(tempfile.mkdtemp(prefix="bench-mpi-"))
    load0 = os.getloadavg()[0]
    c, m = vector_seconds_per_double(), memset_seconds_per_double()
    harness.log("allreduce microbenchmark (mpiexec -n 2)")
    points, (alpha2, bw2) = measure_collectives(work)
    from linsvm.solvers import get_solver

    opts = get_solver(args.solver).options
    configs = [(1, 1, "off"), (2, 1, "off")] + ([(2, 1, "on")] if "weight_split" in opts else []) \
        + ([(1, 2, "off")] if "n_threads" in opts else [])
    runs = {cfg: [] for cfg in configs}
    decs = {}
    for r in range(args.repeats):
        for cfg in configs:
            harness.log(f"round {r + 1}: P = {cfg[0]}, threads = {cfg[1]}, weight split {cfg[2]}")
            st, wall, dec = run_child(path, args.solver, args.c, cfg[0], cfg[1], work, cfg[2])
            runs[cfg].append((st, wall))
            decs[cfg] = dec
    import numpy as np

    counts = np.load(work / "counts.npy")
    shutil.rmtree(work, ignore_errors=True)
    load1 = os.getloadavg()[0]
    calib = dict(c=c, m=m, alpha2=alpha2, bw2=bw2, points=len(points), counts=counts)
    text = report(args, path, runs, decs, calib, load0, load1)
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_mpi.md").write_text(text)


RUN_NAMES = {(1, 1, "off"): "1 rank, 1 thread", (2, 1, "off"): "2 ranks (mpiexec -n 2), allreduce",
             (2, 1, "on"): "2 ranks (mpiexec -n 2), weight split", (1, 2, "off"): "1 rank, 2 threads"}


def report(args, path, runs, decs, calib, load0, load1):
    """The Markdown report: the runs, the model's calibration and check, the cluster table."""
    import numpy as np

    def med(cfg, key):
        return statistics.median(st[key] if key != "wall" else wall for st, wall in runs[cfg])

    s1 = runs[(1, 1, "off")][0][0]
    nnz = int(s1["nnz"])            # the serial run read the whole file
    d = args.features + 1
    out = [f"# Distributed training: {args.solver}, C = {args.c:g}, generated text set\n",
           f"Data: {args.rows} x {args.features}, {nnz} non-zeros ({path.stat().st_size / 1e6:.0f} MB "
           f"plain text); {args.repeats} interleaved rounds, medians; load average {load0:.2f} "
           f"before, {load1:.2f} after; {os.cpu_count()} CPUs.\n",
           "| run | read s | train s | train CPU s | wall s | speed-up (train) | iterations | CGLS | "
           "comm s | collectives | bytes per rank per iteration | objective |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    base = med((1, 1, "off"), "train")
    for cfg, name in RUN_NAMES.items():
        if cfg not in runs:
            continue
        st = runs[cfg][0][0]
        calls = st.get("comm_calls", 0)
        per_it = (st.get("comm_bytes", 0) / _inner_iterations(st)) if calls else 0
        out.append(f"| {name} | {med(cfg, 'read'):.2f} | {med(cfg, 'train'):.2f} | "
                   f"{med(cfg, 'train_cpu'):.2f} | {med(cfg, 'wall'):.2f} | "
                   f"{base / med(cfg, 'train'):.2f} | {int(st.get('n_iter', 0))} | {int(st.get('cg_iter', 0))} | "
                   f"{(med(cfg, 'comm_seconds') if calls else 0):.3f} | {int(calls)} | {per_it:,.0f} | "
                   f"{st['objective']:.12g} |")
    out.append("\nBytes per rank per iteration: the payload of all the solve's collectives over "
               "its inner iterations (CGLS iterations for the finite Newton family: their "
               "allreduce of 8 (d + 3) bytes, or the split's two exchanges, and each Newton step's "
               "start residual, Jacobi diagonal, line search and, split, the gathered step; "
               "CoCoA+ rounds; cutting-plane or ALM iterations). Comm s: rank 0's time inside "
               "collectives, waiting for the other rank included. Train CPU s: rank 0's process CPU "
               "time (MPICH polls while it waits, so waiting counts too).")
    for cfg in runs:
        if cfg[0] == 1:
            continue
        sd = runs[cfg][0][0]
        rel = abs(sd["objective"] - s1["objective"]) / abs(s1["objective"])
        agree = float(np.mean(np.sign(decs[(1, 1, "off")]) == np.sign(decs[cfg])))
        out.append(f"\n{RUN_NAMES[cfg]} vs 1 rank: relative objective difference {rel:.2e}; the "
                   f"same sign of the decision value on {100 * agree:.4f}% of the training rows.")
    split = runs.get((2, 1, "on"))
    if split and "touched" in split[0][0]:
        st = split[0][0]
        touched, shared = split_traffic(calib["counts"], 2)
        out.append(f"\nSplit plan on 2 ranks: the ranks' rows touch {st['touched']} of {d} weights, "
                   f"own {st['owned']}; one CGLS iteration's two exchanges send "
                   f"{st['split_bytes']} bytes per rank (an allreduce: {8 * (d + 3):,} bytes of "
                   f"payload); the random-rows formula (split_traffic) on this set's feature counts "
                   f"predicts {touched:,.0f} touched and {16 * shared:,.0f} bytes.")
    out.append(f"\nAllreduce on this machine (mpiexec -n 2, shared memory): alpha = "
               f"{calib['alpha2'] * 1e6:.1f} us, B = {calib['bw2'] / 1e9:.2f} GB/s (fit over "
               f"{calib['points']} sizes, 8 B .. 8 MiB).\n")
    if "cg_iter" not in s1:           # the cost model below is that of a CGLS iteration
        return "\n".join(out) + "\n"
    out += model_report(args, runs, med, nnz, d, calib)
    return "\n".join(out) + "\n"


def model_report(args, runs, med, nnz, d, calib):
    """The cost model's calibration, its check on the 2-rank runs and the cluster table."""
    s1 = runs[(1, 1, "off")][0][0]
    c, m, alpha2, bw2 = calib["c"], calib["m"], calib["alpha2"], calib["bw2"]
    cg = s1.get("cg_iter", 0) or 1
    per_newton = cg / max(s1.get("n_iter", 1), 1)
    a = (med((1, 1, "off"), "train") - cg * c * d) / (cg * nnz)
    red_per_byte = c / 8 / 2          # the local sum of a reduction: about a third of an axpy per double
    out = [f"Calibration: a = {a * 1e9:.2f} ns per non-zero per CGLS iteration, c = {c * 1e9:.2f} ns "
           f"per weight per iteration, m = {m * 1e9:.3f} ns per double of a pass; {per_newton:.1f} "
           f"CGLS iterations per Newton step.\n"]
    pred2, pred2_comm = predict(nnz, d, 2, a, c, alpha2, bw2, red_per_byte)
    meas2 = med((2, 1, "off"), "train")
    out.append(f"Model check, allreduce: predicted P = 2 train time {cg * pred2:.2f} s (of which "
               f"communication {cg * pred2_comm:.3f} s), measured {meas2:.2f} s: ratio "
               f"{cg * pred2 / meas2:.2f}.\n")
    if (2, 1, "on") in runs:
        touched, shared = split_traffic(calib["counts"], 2)
        ps, ps_comm = predict_split(nnz, d, 2, a, c, m, alpha2, bw2, shared, touched, per_newton)
        meas = med((2, 1, "on"), "train")
        plan_s = statistics.median(st.get("plan_s", 0.0) for st, _ in runs[(2, 1, "on")])
        out.append(f"Model check, weight split: predicted P = 2 train time {cg * ps:.2f} s (of which "
                   f"communication {cg * ps_comm:.3f} s) + the plan, measured alone {plan_s:.2f} s "
                   f"(once per solve), measured {meas:.2f} s: ratio {(cg * ps + plan_s) / meas:.2f}.\n")
    if args.cluster:                  # another calibration for the cluster table
        a, c, cg, per_newton, m = _calibration(args.cluster, m)
    return out + cluster_table(args, a, c, m, cg, per_newton)


def _calibration(text, m):
    """(a, c, CGLS iterations, per Newton step, m) of --cluster A_NS,C_NS,CG,PER_NEWTON[,M_NS]
    (m: this machine's unless given)."""
    v = [float(x) for x in text.split(",")]
    return v[0] * 1e-9, v[1] * 1e-9, v[2], v[3], v[4] * 1e-9 if len(v) > 4 else m


def auto_splits(d, nnz, P, shared):
    """--weight-split auto's choice (linsvm/runtime/wsplit.py: use_split, then pays) with
    the average rank's exchange bytes for the busiest's."""
    return P > 1 and 4 * 8.0 * d > 12.0 * nnz / P and 16 * shared <= 0.5 * bytes_per_rank(d, P)


def cluster_table(args, a, c, m, cg, per_newton):
    """The predicted cluster table (Markdown lines): both arrangements on rcv1's and
    kdd2010's shapes, feature counts from zipf_counts."""
    red_per_byte = c / 8 / 2
    out = [f"## Predicted on a cluster: 10 Gbit/s, alpha = {args.latency * 1e6:.0f} us, "
           f"B = {args.bandwidth / 1e9:.1f} GB/s; a = {a * 1e9:.2f} ns, c = {c * 1e9:.2f} ns, "
           f"m = {m * 1e9:.3f} ns; {cg:g} CGLS iterations, {per_newton:.2f} per Newton step; "
           f"feature counts Zipf (zipf_counts)\n",
           "| data | P | allreduce s | speed-up | comm share | MB/rank/it. | split s | speed-up "
           "| comm share | MB/rank/it. | auto picks |",
           "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, (n, dd, nz) in SHAPES.items():
        counts = zipf_counts(nz, dd + 1)
        t1, _ = predict(nz, dd + 1, 1, a, c, args.latency, args.bandwidth, red_per_byte)
        for P in (1, 2, 8, 32, 128, 256):
            t, comm = predict(nz, dd + 1, P, a, c, args.latency, args.bandwidth, red_per_byte)
            touched, shared = split_traffic(counts, P)
            ts, cs = predict_split(nz, dd + 1, P, a, c, m, args.latency, args.bandwidth, shared,
                                   touched, per_newton)
            auto = "split" if auto_splits(dd + 1, nz, P, shared) else "allreduce"
            out.append(f"| {name} | {P} | {cg * t:.2f} | {t1 / t:.2f} | {comm / t:.0%} | "
                       f"{bytes_per_rank(dd + 1, P) / 1e6:.2f} | {cg * ts:.2f} | {t1 / ts:.2f} | "
                       f"{cs / ts:.0%} | {16 * shared / 1e6:.2f} | {auto} |")
    return out


def _inner_iterations(stats):
    """A solve's inner iterations: CGLS iterations, CoCoA+ rounds, or its iterations."""
    for key in ("cg_iter", "rounds", "n_iter"):
        if stats.get(key):
            return stats[key]
    return 1


if __name__ == "__main__":
    main()
