"""Bytes per non-zero: the fused CGLS pass and mfn on binary terms scaled to unit rows.

    python examples/bench_bytes.py [--rows 600000] [--features 500000] [--length 60]
        [--repeats 5] [--threads 1,2]

A pass over CSR moves 12 bytes per non-zero (an int32 index and a float64 value),
4 when every value is 1; binary term presence scaled to unit rows has one value per row,
so the kernels can read only the indices there too and multiply once per row
(csrc/csr.pxd, row_scale).  This script generates such a set (linsvm.io.synth's text
generator, its values replaced by 1/sqrt(row length)), and times in one process, each
timing the median of --repeats interleaved runs of thread CPU time:

- the fused pass of a CGLS iteration (q = X p, X'Cq; csr.pxd normal_matvec) on all rows,
  reading the values as stored ("values") and with the row scales ("row scale");
- the same set with one more value per row, an explicit 0.0 in an extra column, so the
  values differ within each row (the path every other data set takes), for mfn;
- mfn at its defaults (C = 1) on both forms: the same problem, so the same model to
  rounding (tested in tests/test_mfn.py);
- the machine's memory bandwidth for a streaming read (numpy sum over 1 GB), so that each
  pass's bytes per second can be set beside it.

float32 values (8 bytes per non-zero) are not run (linsvm's kernels are float64
throughout): a pass over them streams between the two measured ones, so its time lies
between theirs (the row-scale pass also drops one multiplication per non-zero).

Output: Markdown on stdout.
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np                          # noqa: E402
import scipy.sparse as sp                   # noqa: E402

import linsvm                               # noqa: E402
from linsvm import _testing                 # noqa: E402
from linsvm._data import DataView           # noqa: E402
from linsvm.problem.csr import CSRBuffers   # noqa: E402
from linsvm.io.synth import make_text_classification   # noqa: E402


def unit_rows(n, d, length, seed):
    X, y = make_text_classification(n_samples=n, n_features=d, avg_length=length, seed=seed)
    X = X.tocsr()
    counts = np.diff(X.indptr)
    X.data = np.repeat(1.0 / np.sqrt(np.maximum(counts, 1)), counts)
    return X, y


def with_explicit_zero(X):
    """X with an explicit 0.0 in a new last column on every row: the same problem, whose
    rows no longer hold one value each."""
    n, d = X.shape
    at = X.indptr[1:]
    return sp.csr_matrix((np.insert(X.data, at, 0.0), np.insert(X.indices, at, d),
                          X.indptr + np.arange(n + 1)), shape=(n, d + 1))


def cpu(fn):
    t0 = time.thread_time()
    out = fn()
    return time.thread_time() - t0, out


def bandwidth():
    a = np.ones(1 << 27)                    # 1 GiB of float64
    a.sum()
    times = [cpu(a.sum)[0] for _ in range(5)]
    return a.nbytes / statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=600_000)
    ap.add_argument("--features", type=int, default=500_000)
    ap.add_argument("--length", type=int, default=60)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", default="1")
    a = ap.parse_args()
    X, y = unit_rows(a.rows, a.features, a.length, 7)
    Z = with_explicit_zero(X)
    n, nnz = X.shape[0], X.nnz
    rows = np.arange(n, dtype=np.int64)
    rng = np.random.default_rng(0)
    p = rng.standard_normal(X.shape[1] + 1)
    c = rng.random(n)
    bw = bandwidth()
    print(f"Machine: {platform.processor() or platform.machine()}, nproc {os.cpu_count()}, "
          f"load average {os.getloadavg()}; streaming read {bw / 1e9:.1f} GB/s (numpy sum, 1 GiB).")
    print(f"Data: {n} x {X.shape[1]}, {nnz} non-zeros ({nnz / n:.1f} per row), binary terms "
          f"scaled to unit rows; medians of {a.repeats} interleaved runs, thread CPU seconds.\n")
    print("| threads | pass | s per pass | passes/s | bytes/nnz | GB/s streamed |")
    print("|---|---|---|---|---|---|")
    for T in [int(t) for t in a.threads.split(",")]:
        args = (DataView(CSRBuffers(X), 1.0, rows), p, c)
        res = {"values": [], "row scale": []}
        for _ in range(a.repeats):
            for name, pattern in (("values", False), ("row scale", True)):
                t = time.perf_counter() if T > 1 else None
                dt, _ = cpu(lambda: _testing.csr_normal_matvec(*args, n_threads=T, pattern=pattern))
                res[name].append(time.perf_counter() - t if T > 1 else dt)
        for name, b in (("values", 12), ("row scale", 4)):
            s = statistics.median(res[name])
            print(f"| {T} | {name} | {s:.4f} | {1 / s:.1f} | {b} | {b * nnz / s / 1e9:.2f} |")
    print("\n| solver | form | CPU s | Newton | CGLS | objective |")
    print("|---|---|---|---|---|---|")
    runs = {"one value per row (row scale)": X, "explicit zero per row (values)": Z}
    out = {k: [] for k in runs}
    for _ in range(max(1, a.repeats // 2)):
        for name, M in runs.items():
            dt, m = cpu(lambda: linsvm.train(M, y, solver="mfn", C=1.0))
            out[name].append((dt, m))
    for name, lst in out.items():
        m = lst[-1][1]
        print(f"| mfn | {name} | {statistics.median(t for t, _ in lst):.3f} | "
              f"{m.stats['n_iter']} | {m.stats['cg_iter']} | {m.stats['objective']:.10g} |")


if __name__ == "__main__":
    main()
