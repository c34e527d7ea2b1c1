"""Benchmark linsvm's SVM-light reader against scikit-learn's, on the same files.

    python examples/bench_parser.py [FILE ...]

Files are named relative to the data directory: $LINSVM_DATA, by default
../shared/datasets next to the repository.  Missing files are skipped.  For a
.bz2 file a second row times the decompressed text (written to a temporary
directory), so that bzip2's own cost does not hide the parser's speed.

Columns: size on disk in MB, rows, stored entries, the median of 3 timed loads
by sklearn.datasets.load_svmlight_file(path, zero_based=False) and by
linsvm.data.load_svmlight(path), the speed ratio, and peak memory during a
linsvm load divided by the bytes of the final CSR arrays
(data + indices + indptr + labels = 12 nnz + 16 rows + 8).  Peak memory is
measured twice, each in a fresh process: tracemalloc's peak (linsvm allocates
through PyMem_Raw*, which tracemalloc traces), and the high-water resident
set size during the load minus the resident size just before it (Linux
/proc/self/status, with the high-water mark reset through clear_refs).  The last
column is tracemalloc's peak for scikit-learn, for comparison.
"""
import bz2
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

REPO = pathlib.Path(__file__).resolve().parents[1]
DATA = pathlib.Path(os.environ.get("LINSVM_DATA", REPO.parent / "shared" / "datasets"))
FILES = [
    "binary/w8a",
    "binary/a9a",
    "binary/w1a.t",
    "binary/a1a",
    "binary/ijcnn1.t.bz2",
    "multiclass/sector.scale.bz2",
]
REPEAT = 3

_CHILD = r"""
import io, json, sys, tracemalloc
sys.path.insert(0, {repo!r})
mode, path = sys.argv[1], sys.argv[2]
import numpy, scipy.sparse
from linsvm.data import load_svmlight
load_svmlight(io.BytesIO(b"1 1:1\n"))          # warm up lazy imports
if mode == "sktrace":
    from sklearn.datasets import load_svmlight_file
    load_svmlight_file(io.BytesIO(b"1 1:1\n"), zero_based=False)


def status(key):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024
    raise KeyError(key)


if mode == "rss":
    # High-water RSS during the load minus RSS just before it.  Writing 5 to
    # clear_refs resets the high-water mark (Linux >= 4.0); where that fails the
    # figure can only over-estimate.
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass
    before = status("VmRSS")
    X, y = load_svmlight(path)
    after = status("VmHWM")
    print(json.dumps({{"peak": max(after - before, 0)}}))
else:
    tracemalloc.start()
    if mode == "trace":
        X, y = load_svmlight(path)
    else:
        X, y = load_svmlight_file(path, zero_based=False)
    cur, peak = tracemalloc.get_traced_memory()
    print(json.dumps({{"peak": peak}}))
"""


def _child_peak(mode, path):
    code = _CHILD.format(repo=str(REPO))
    out = subprocess.run([sys.executable, "-c", code, mode, str(path)],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["peak"]


def _median_time(fn):
    times = []
    for _ in range(REPEAT):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def bench(path, label):
    from sklearn.datasets import load_svmlight_file
    from linsvm.data import load_svmlight

    X, y = load_svmlight(path)
    Xs, ys = load_svmlight_file(str(path), zero_based=False)
    assert X.shape == Xs.shape and X.nnz == Xs.nnz, f"disagreement on {path}"
    t_sk = _median_time(lambda: load_svmlight_file(str(path), zero_based=False))
    t_lin = _median_time(lambda: load_svmlight(path))
    csr = 12 * X.nnz + 16 * X.shape[0] + 8
    return {
        "file": label,
        "MB": os.path.getsize(path) / 1e6,
        "rows": X.shape[0],
        "nnz": X.nnz,
        "sklearn_s": t_sk,
        "linsvm_s": t_lin,
        "speedup": t_sk / t_lin,
        "peak_trace": _child_peak("trace", path) / csr,
        "peak_rss": _child_peak("rss", path) / csr,
        "sk_peak_trace": _child_peak("sktrace", path) / csr,
    }


def main(argv):
    names = argv or FILES
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = DATA / name
            if not path.exists():
                print(f"skip {name}: not found under {DATA}", file=sys.stderr)
                continue
            rows.append(bench(path, name))
            if name.endswith(".bz2"):
                text = pathlib.Path(tmp) / pathlib.Path(name).stem
                with bz2.open(path, "rb") as src:
                    text.write_bytes(src.read())
                rows.append(bench(text, name[:-4] + " (text)"))
                text.unlink()
    header = ("file", "MB", "rows", "nnz", "sklearn s", "linsvm s", "speedup",
              "peak/CSR trace", "peak/CSR rss", "sklearn peak/CSR")
    print("| " + " | ".join(header) + " |")
    print("|" + "|".join("---" for _ in header) + "|")
    for r in rows:
        print(f"| {r['file']} | {r['MB']:.2f} | {r['rows']} | {r['nnz']} | {r['sklearn_s']:.4f} "
              f"| {r['linsvm_s']:.4f} | {r['speedup']:.1f}x | {r['peak_trace']:.2f} "
              f"| {r['peak_rss']:.2f} | {r['sk_peak_trace']:.2f} |")


if __name__ == "__main__":
    sys.path.insert(0, str(REPO))
    main(sys.argv[1:])
