"""Seconds, bytes per non-zero and GB/s of one pass over the rows in each value layout.

    python tools/layout_passes.py [--nnz 20000000] [--row-nnz 100] [--features 100000]
                                  [--repeats 5] [--threads 1] [--seed 0] [--shuffle]

generates a random CSR matrix of about NNZ non-zeros (ROW_NNZ per row, column indices
strictly increasing within a row, values standard normal), holds it in the three layouts
of linsvm.problem.csr (float64; float32 of the same values rounded; a pattern of the same
columns) and times, in each, one mat-vec X w (linsvm._kernels.csr_matvec, what every
Newton step's X d is) and one scatter X' u (linsvm._testing.csr_rmatvec, the gradient's
pass), the best of REPEATS runs of each.  Both go through the data view, on all rows in
order (as a solver's list of training or active rows is) or, with --shuffle, in a random
order (a pass then waits on memory at every row, not on its bandwidth), with THREADS
threads, the layouts taking turns in each round.

For each it prints the seconds, the bytes per non-zero the pass must stream from memory
(the row list, row pointers, indices and values: 20 + 8 (n + 1) / nnz for float64, 4 less
per value byte saved) and that stream's rate in GB/s; the gather of w and the scatter
into X' u hit the cache mostly (FEATURES doubles), and are not counted.  A memory-bound
pass gets faster in proportion to the bytes it reads; one bound by the arithmetic or the
cache misses of w does not.  Timings on a shared machine vary: compare the layouts of one
run, not runs.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from linsvm import _kernels, _testing
from linsvm._data import DataView
from linsvm.problem.csr import CSRBuffers, with_layout


def matrix(nnz, row_nnz, n_features, seed):
    """A float64 CSRBuffers of n = nnz // row_nnz rows of row_nnz entries each."""
    rng = np.random.default_rng(seed)
    n = max(nnz // row_nnz, 1)
    step = max(n_features // row_nnz, 1)
    indices = np.empty(n * row_nnz, dtype=np.int32)
    block = max(1, 2_000_000 // row_nnz)                 # rows generated at a time
    for a in range(0, n, block):
        b = min(a + block, n)
        gaps = rng.integers(1, step + 1, size=(b - a, row_nnz), dtype=np.int32)
        cols = np.cumsum(gaps, axis=1, dtype=np.int32) - 1
        indices[a * row_nnz:b * row_nnz] = cols.reshape(-1)
    indptr = np.arange(0, n * row_nnz + 1, row_nnz, dtype=np.int64)
    data = rng.standard_normal(n * row_nnz)
    width = max(int(indices.max()) + 1, n_features) if indices.size else n_features
    return CSRBuffers.trusted(indptr, indices, data, width, width)


def best_times(calls, repeats):
    """{name: the shortest of `repeats` timed runs of calls[name]()}, the calls taking
    turns in each round, so that a load that comes and goes on a shared machine falls
    on every layout alike."""
    out = {name: float("inf") for name in calls}
    for f in calls.values():
        f()                                               # warm the caches and pages
    for _ in range(repeats):
        for name, f in calls.items():
            t0 = time.perf_counter()
            f()
            out[name] = min(out[name], time.perf_counter() - t0)
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nnz", type=int, default=20_000_000)
    ap.add_argument("--row-nnz", type=int, default=100)
    ap.add_argument("--features", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--shuffle", action="store_true", help="rows in a random order")
    a = ap.parse_args(argv)
    X64 = matrix(a.nnz, a.row_nnz, a.features, a.seed)
    rng = np.random.default_rng(a.seed + 1)
    rows = np.arange(X64.n_rows, dtype=np.int64)
    if a.shuffle:
        rows = rng.permutation(X64.n_rows).astype(np.int64)
    w = rng.standard_normal(X64.n_features)
    u = rng.standard_normal(X64.n_rows)
    layouts = {"float64": X64, "float32": with_layout(X64, "float32")}
    layouts["pattern"] = CSRBuffers.trusted(X64.indptr, X64.indices, None, X64.n_features,
                                            X64.n_features)
    nnz = X64.nnz
    print(f"{X64.n_rows} rows, {X64.n_features} features, {nnz} non-zeros, "
          f"{a.threads} thread(s), rows {'shuffled' if a.shuffle else 'in order'}, "
          f"best of {a.repeats}")
    print(f"{'layout':8} {'pass':8} {'seconds':>9} {'bytes/nnz':>10} {'GB/s':>7} {'vs float64':>11}")
    calls, stream = {}, {}
    for name, X in layouts.items():
        view = DataView(X, -1.0, rows)
        stream[name] = (rows.nbytes + X.nbytes) / nnz
        calls[name, "matvec"] = (lambda v: lambda: _kernels.csr_matvec(v, w, a.threads))(view)
        calls[name, "rmatvec"] = (lambda v: lambda: _testing.csr_rmatvec(v, u, a.threads))(view)
    times = best_times(calls, a.repeats)
    for (name, pname), s in times.items():
        b = stream[name]
        print(f"{name:8} {pname:8} {s:9.4f} {b:10.2f} {b * nnz / s / 1e9:7.2f} "
              f"{times['float64', pname] / s:10.2f}x")

if __name__ == "__main__":
    main()
