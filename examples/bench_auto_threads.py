"""The kernels' default thread count (linsvm.runtime.threads.resolve_threads) under load.

    python examples/bench_auto_threads.py [--sizes 0.5,1,2,4,8] [--busy 0,1,2] [--repeats 5]

For each size (millions of non-zeros: a text-like set of linsvm.io.synth, seed 1, with
about 69 non-zeros a row) and each number of busy processes (a load generator: that
many Python processes spinning in a loop, started before and stopped after the runs),
mfn (C = 1, its defaults) trains in this process on 1 and on 2 kernel threads, in
interleaved rounds; a cell is the median wall time, with the ratio 2 threads / 1
thread (below 1: the threads pay).  The 1-minute load average at the end of each
configuration is printed too (it includes the busy processes once they have run a
while; the machine's own background load shows in the busy = 0 rows).

docs/threads.md has the table and the rule chosen from it.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import harness as H

SPIN = "while True: pass"


def start_busy(k):
    """k spinning Python processes (the load generator); their Popen objects."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN]) for _ in range(k)]
    time.sleep(0.5 if k else 0.0)
    return procs


def stop_busy(procs):
    for p in procs:
        p.kill()
        p.wait()


def main():
    import linsvm
    from linsvm.io.synth import make_text_classification
    from linsvm.problem import CSRBuffers

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="0.5,1,2,4,8", help="millions of non-zeros")
    ap.add_argument("--busy", default="0,1,2")
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print("\n".join(H.machine_header()))
    rows = []
    for size in (float(s) for s in args.sizes.split(",")):
        n = int(size * 1e6 / 69)
        X, y = make_text_classification(n_samples=n, n_features=max(1000, n), seed=1)
        Xb = CSRBuffers(X)
        for busy in (int(b) for b in args.busy.split(",")):
            procs = start_busy(busy)
            try:
                runs = {t: H.timed(lambda t=t: linsvm.train(Xb, y, solver="mfn", C=1.0,
                                                            n_threads=t))
                        for t in (1, 2)}
                res = H.interleaved(runs, args.repeats, alternate=True)
            finally:
                load = os.getloadavg()[0]
                stop_busy(procs)
            one, two = H.median([r[0] for r in res[1]]), H.median([r[0] for r in res[2]])
            rows.append([f"{X.nnz / 1e6:.2f}M", X.shape[0], busy, H.fmt_s(one), H.fmt_s(two),
                         f"{two / one:.2f}",
                         f"{H.paired_ratio([r[0] for r in res[2]], [r[0] for r in res[1]]):.2f}",
                         f"{load:.2f}"])
            H.log(" ".join(map(str, rows[-1])))
    print("\n".join(H.markdown_table(
        ["nnz", "rows", "busy processes", "1 thread", "2 threads", "2 / 1 (medians)",
         "2 / 1 (paired)", "load at end"], rows)))


if __name__ == "__main__":
    main()
