"""Distributed training: 1 and 2 MPI ranks on this machine, and a cost model for clusters.

    python examples/bench_mpi.py [--rows 200000] [--features 100000] [--avg-length 120]
                                 [--solver mfn] [-c 1] [--repeats 3] [--cache DIR] [--out DIR]

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
    model = linsvm.train(X, y, solver=solver, C=C, comm=comm, **threads)
    t2 = time.perf_counter()
    import scipy.sparse as sp
    dec = model.decision_function(sp.csr_matrix((X.data, X.indices, X.indptr), shape=(X.n_rows, X.n_features)))
    out = {k: (float(v) if isinstance(v, (int, float)) else v) for k, v in model.stats.items()
           if isinstance(v, (int, float, str))}
    out.update(read=t1 - t0, train=t2 - t1, n_rows=int(X.n_rows), nnz=int(X.nnz))
    rank = 0 if comm is None else comm.rank
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


def run_child(path, solver, C, n_ranks, n_threads, workdir):
    """One training run in a fresh process (mpiexec for n_ranks > 1); its stats, wall
    seconds of the whole process, and rank 0's decision values."""
    script = workdir / "child.py"
    script.write_text(CHILD)
    dec = workdir / f"dec-{n_ranks}-{n_threads}"
    cmd = [sys.executable, str(script), str(path), solver, repr(C), str(n_ranks), str(n_threads),
           str(dec)]
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
    args = ap.parse_args(argv)
    if mpiexec() is None:
        raise SystemExit("mpiexec not found: pip install '.[mpi]'")
    import numpy as np

    args.cache.mkdir(parents=True, exist_ok=True)
    path = args.cache / f"text-{args.rows}x{args.features}-{args.avg_length}.svm"
    generate(path, args.rows, args.features, args.avg_length)
    work = Path(tempfile.mkdtemp(prefix="bench-mpi-"))
    load0 = os.getloadavg()[0]
    c = vector_seconds_per_double()
    harness.log("allreduce microbenchmark (mpiexec -n 2)")
    points, (alpha2, bw2) = measure_collectives(work)
    from linsvm.solvers import get_solver

    configs = [(1, 1), (2, 1)] + ([(1, 2)] if "n_threads" in get_solver(args.solver).options else [])
    runs = {cfg: [] for cfg in configs}
    decs = {}
    for r in range(args.repeats):
        for cfg in configs:
            harness.log(f"round {r + 1}: P = {cfg[0]}, threads = {cfg[1]}")
            st, wall, dec = run_child(path, args.solver, args.c, cfg[0], cfg[1], work)
            runs[cfg].append((st, wall))
            decs[cfg] = dec
    shutil.rmtree(work, ignore_errors=True)
    load1 = os.getloadavg()[0]

    def med(cfg, key):
        return statistics.median(st[key] if key != "wall" else wall for st, wall in runs[cfg])

    s1, s2 = runs[(1, 1)][0][0], runs[(2, 1)][0][0]
    nnz = int(s1["nnz"])            # the serial run read the whole file
    d = args.features + 1
    cg = s1.get("cg_iter", 0) or 1
    a = (med((1, 1), "train") - cg * c * d) / (cg * nnz)
    red_per_byte = c / 8 / 2          # the local sum of a reduction: about a third of an axpy per double
    pred2, pred2_comm = predict(nnz, d, 2, a, c, alpha2, bw2, red_per_byte)
    out = []
    out.append(f"# Distributed training: {args.solver}, C = {args.c:g}, generated text set\n")
    out.append(f"Data: {args.rows} x {args.features}, {nnz} non-zeros ({path.stat().st_size / 1e6:.0f} MB plain "
               f"text); {args.repeats} interleaved rounds, medians; load average {load0:.2f} before, "
               f"{load1:.2f} after; {os.cpu_count()} CPUs.\n")
    out.append("| run | read s | train s | wall s | speed-up (train) | iterations | CGLS | comm s | "
               "collectives | bytes per rank per iteration | objective |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|")
    base = med((1, 1), "train")
    for cfg, name in (((1, 1), "1 rank, 1 thread"), ((2, 1), "2 ranks (mpiexec -n 2)"),
                      ((1, 2), "1 rank, 2 threads")):
        if cfg not in runs:
            continue
        st = runs[cfg][0][0]
        calls = st.get("comm_calls", 0)
        per_it = (st.get("comm_bytes", 0) / _inner_iterations(st)) if calls else 0
        out.append(f"| {name} | {med(cfg, 'read'):.2f} | {med(cfg, 'train'):.2f} | {med(cfg, 'wall'):.2f} | "
                   f"{base / med(cfg, 'train'):.2f} | {int(st.get('n_iter', 0))} | {int(st.get('cg_iter', 0))} | "
                   f"{(med(cfg, 'comm_seconds') if calls else 0):.3f} | {int(calls)} | {per_it:,.0f} | "
                   f"{st['objective']:.12g} |")
    out.append("\nBytes per rank per iteration: the payload of all the solve's collectives over "
               "its inner iterations (CGLS iterations for the finite Newton family: their "
               "allreduce of 8 (d + 3) bytes and each Newton step's start residual, Jacobi "
               "diagonal and line search; CoCoA+ rounds; cutting-plane or ALM iterations). "
               "Comm s: rank 0's time inside collectives, waiting for the other rank included.")
    rel = abs(s2["objective"] - s1["objective"]) / abs(s1["objective"])
    agree = float(np.mean(np.sign(decs[(1, 1)]) == np.sign(decs[(2, 1)])))
    out.append(f"\nP = 2 vs P = 1: relative objective difference {rel:.2e}; the same sign of the "
               f"decision value on {100 * agree:.4f}% of the training rows.\n")
    out.append(f"Allreduce on this machine (mpiexec -n 2, shared memory): alpha = {alpha2 * 1e6:.1f} us, "
               f"B = {bw2 / 1e9:.2f} GB/s (fit over {len(points)} sizes, 8 B .. 8 MiB).\n")
    if "cg_iter" in s1:               # the cost model below is that of a CGLS iteration
        out.append(f"Calibration: a = {a * 1e9:.2f} ns per non-zero per CGLS iteration, "
                   f"c = {c * 1e9:.2f} ns per weight per iteration.\n")
    else:
        text = "\n".join(out) + "\n"
        print(text)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "bench_mpi.md").write_text(text)
        return
    meas2 = med((2, 1), "train")
    out.append(f"Model check: predicted P = 2 train time {cg * pred2:.2f} s (of which allreduce "
               f"{cg * pred2_comm:.3f} s), measured {meas2:.2f} s: ratio {cg * pred2 / meas2:.2f}.\n")
    out.append(f"## Predicted on a cluster: 10 Gbit/s, alpha = {args.latency * 1e6:.0f} us, "
               f"B = {args.bandwidth / 1e9:.1f} GB/s; {cg} CGLS iterations (this set's count)\n")
    out.append("| data | P | time s | speed-up | allreduce share | MB/rank/iteration |")
    out.append("|---|---|---|---|---|---|")
    for name, (n, dd, nz) in SHAPES.items():
        t1, _ = predict(nz, dd + 1, 1, a, c, args.latency, args.bandwidth, red_per_byte)
        for P in (1, 2, 4, 8, 16, 32, 64, 128, 256):
            t, comm = predict(nz, dd + 1, P, a, c, args.latency, args.bandwidth, red_per_byte)
            out.append(f"| {name} | {P} | {cg * t:.2f} | {t1 / t:.2f} | {comm / t:.0%} | "
                       f"{bytes_per_rank(dd + 1, P) / 1e6:.2f} |")
    text = "\n".join(out) + "\n"
    print(text)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "bench_mpi.md").write_text(text)


def _inner_iterations(stats):
    """A solve's inner iterations: CGLS iterations, CoCoA+ rounds, or its iterations."""
    for key in ("cg_iter", "rounds", "n_iter"):
        if stats.get(key):
            return stats[key]
    return 1


if __name__ == "__main__":
    main()
