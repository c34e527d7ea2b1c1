"""dcd on 1 and 2 threads against multi-core LIBLINEAR (-s 3 / -s 1, -m 1 / -m 2).

    python examples/bench_threads.py [--text FILE] [--repeats 5] [--llmc-python PY]

For each data set (a9a, w8a, ijcnn1 from $LINSVM_DATA/binary, and --text, a file of
`python -m linsvm synth`) and each loss (l1 = LIBLINEAR -s 3, l2 = -s 1), C = 1, bias 1,
-e 0.1 (both defaults): linsvm `dcd -m N` trains in this process (linsvm.train on a
prebuilt CSRBuffers) and multi-core LIBLINEAR `-m N` in a worker process of its own
venv (its Python binding on a prebuilt `problem`); only the training call is timed,
wall and process CPU.  The runs go in interleaved rounds (harness protocol, item 4),
each round recording the 1-minute load average; a cell is the median.  The objective
of each model is recomputed here with NumPy (harness.binary_objective) and shown
relative to the smaller of the two solvers' (LIBLINEAR's dual solvers stop at the
same PG-spread rule as dcd; dcd's gap guard may continue below 1%).

The ratio column is linsvm's median wall over multi-core LIBLINEAR's at the same N.
docs/threads.md has the table this prints and the machine it ran on.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import subprocess
import sys
import tempfile

import numpy as np
import scipy.sparse as sp

import harness as H

LLMC_PYTHON = "/work/peers/llmc-venv/bin/python"

# The worker: loads the CSR once, then for each line of options on stdin trains and
# answers one JSON line (wall and process CPU seconds of train() alone, labels, w).
WORKER = r'''
import json, sys, time
import numpy as np, scipy.sparse as sp
from liblinear.liblinearutil import parameter, problem, train
X = sp.load_npz(sys.argv[1]).tocsr()
y = np.load(sys.argv[2])
prob = problem(y, X)
print(json.dumps({"ready": True}), flush=True)
for line in sys.stdin:
    param = parameter(line.strip() + " -q")
    w0, c0 = time.perf_counter(), time.process_time()
    model = train(prob, param)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    w, b = model.get_decfun()
    print(json.dumps({"wall": wall, "cpu": cpu, "labels": list(model.get_labels()),
                      "w": list(w) + [b]}), flush=True)
'''


class Peer:
    """multi-core LIBLINEAR's Python binding in a worker process on one data set."""

    def __init__(self, python, ds, tmp):
        xf, yf = pathlib.Path(tmp) / "X.npz", pathlib.Path(tmp) / "y.npy"
        sp.save_npz(xf, ds.X, compressed=False)
        np.save(yf, ds.y)
        self.proc = subprocess.Popen([python, "-c", WORKER, str(xf), str(yf)], text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        json.loads(self.proc.stdout.readline())
        self.ds = ds

    def train(self, options):
        self.proc.stdin.write(options + "\n")
        self.proc.stdin.flush()
        out = json.loads(self.proc.stdout.readline())
        v = np.asarray(out["w"], dtype=np.float64)
        w = np.concatenate([v[:-1], np.zeros(max(0, self.ds.d - v.size + 1))])[: self.ds.d]
        sign = 1.0 if out["labels"][0] == self.ds.classes[0] else -1.0
        return out["wall"], out["cpu"], sign * w, sign * float(v[-1])

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def run_linsvm(X, ds, loss, n_threads):
    import linsvm

    model, wall, _, cpu = H.clocks(lambda: linsvm.train(X, ds.y, solver="dcd", loss=loss, C=1.0,
                                                        bias=1.0, tol=0.1, n_threads=n_threads))
    W = np.asarray(model.weights)[:, 0]
    return wall, cpu, W[:-1], float(W[-1]), model.n_iter


def bench(ds, peer, repeats, threads):
    """One table row per (loss, N): medians over `repeats` interleaved rounds."""
    X = H.linsvm_problem(ds, {})
    rows = []
    for loss, s in (("l1", 3), ("l2", 1)):
        runs, loads = {}, []
        for n in threads:
            runs[("linsvm", n)] = lambda n=n: run_linsvm(X, ds, loss, n)
            runs[("llmc", n)] = lambda n=n: peer.train(f"-s {s} -c 1 -B 1 -e 0.1 -m {n}")
        res = H.interleaved(runs, repeats, alternate=True,
                            after_round=lambda k, r: loads.append(os.getloadavg()[0]))
        objs = {key: H.binary_objective(ds, out[0][2], out[0][3], 1.0, loss)
                for key, out in res.items()}
        best = min(objs.values())
        for n in threads:
            a, b = res[("linsvm", n)], res[("llmc", n)]
            wa, wb = H.median([r[0] for r in a]), H.median([r[0] for r in b])
            rows.append([ds.name, loss, n, H.fmt_s(wa), H.fmt_s(H.median([r[1] for r in a])),
                         a[0][4], f"{H.relative_gap(objs[('linsvm', n)], best):.1e}",
                         H.fmt_s(wb), H.fmt_s(H.median([r[1] for r in b])),
                         f"{H.relative_gap(objs[('llmc', n)], best):.1e}", f"{wa / wb:.2f}",
                         f"{min(loads):.2f}-{max(loads):.2f}"])
        H.log(f"{ds.name} {loss}: " + "; ".join(" ".join(map(str, r[2:])) for r in rows[-2:]))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sets", default="a9a,w8a,ijcnn1.bz2")
    ap.add_argument("--text", help="a training file written by `python -m linsvm synth`")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--llmc-python", default=LLMC_PYTHON)
    ap.add_argument("--threads", default="1,2")
    args = ap.parse_args()
    threads = [int(n) for n in args.threads.split(",")]
    root = H.data_root()
    sets = [H.load_dataset(root, name) for name in args.sets.split(",") if name]
    if args.text:
        import linsvm

        X, y = linsvm.load_svmlight(args.text)
        classes = H.binary_class_order(y)
        sets.append(H.Dataset(name=pathlib.Path(args.text).stem, X=X, y=y,
                              t=np.where(y == classes[0], 1.0, -1.0), classes=classes,
                              Xt=None, yt=None, test_name=None))
    print("\n".join(H.machine_header()))
    rows = []
    for ds in sets:
        if ds is None:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            peer = Peer(args.llmc_python, ds, tmp)
            try:
                rows += bench(ds, peer, args.repeats, threads)
            finally:
                peer.close()
    cols = ["data set", "loss", "N", "linsvm wall", "linsvm CPU", "loops", "linsvm obj. gap",
            "llmc wall", "llmc CPU", "llmc obj. gap", "wall linsvm / llmc", "load"]
    print("\n".join(H.markdown_table(cols, rows)))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
