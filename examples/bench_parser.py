"""Benchmark linsvm's SVM-light reader against scikit-learn's, on the same files.

    python examples/bench_parser.py [--repeat N] [FILE ...]

Files are named relative to the data directory: $LINSVM_DATA, by default
../shared/datasets next to the repository.  Missing files are skipped.  A .bz2
file gets four rows: linsvm as it is (indexed_bzip2 on two threads when the
fast-io extra is installed), the same again ("2 threads"), linsvm on the
standard library's serial libbz2 ("serial bz2"), and the
decompressed text (written to a temporary directory), so that bzip2's own
cost does not hide the parser's speed.

Columns: size on disk in MB, rows, stored entries, the median of N (default 5)
timed loads by sklearn.datasets.load_svmlight_file(path, zero_based=False) and
by linsvm.io.svmlight.load_svmlight(path), the speed ratio, and peak memory during a
linsvm load divided by the bytes of the final CSR arrays
(data + indices + indptr + labels = 12 nnz + 16 rows + 8).  The loads of a
file are interleaved (scikit-learn, linsvm, linsvm 2 threads, linsvm serial,
scikit-learn, ...) so that the machine's load at the time weighs on all of
them alike; each ratio divides medians of the same run.  Peak memory is
measured twice, each in a fresh process: tracemalloc's peak (linsvm allocates
through PyMem_Raw*, which tracemalloc traces, as is libbz2's memory), and the
high-water resident set size during the load minus the resident size just
before it (Linux /proc/self/status, with the high-water mark reset through
clear_refs; it includes the pages of a mapped .bz2 file while they are
resident).  The last column is tracemalloc's peak for scikit-learn, for
comparison.
"""
import bz2
import os
import pathlib
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)

DATA = H.data_root()
FILES = [
    "binary/w8a",
    "binary/a9a",
    "binary/w1a.t",
    "binary/a1a",
    "binary/ijcnn1.t.bz2",
    "multiclass/sector.scale.bz2",
]
REPEAT = 5

_CHILD = r"""
import io, json, sys, tracemalloc
mode, path, threads = sys.argv[1], sys.argv[2], sys.argv[3]
import numpy, scipy.sparse
import linsvm.io.compressed
from linsvm.io.svmlight import load_svmlight
if threads == "1":
    import linsvm.io.svmlight
    linsvm.io.compressed._indexed_bzip2 = None
load_svmlight(io.BytesIO(b"1 1:1\n"))          # warm up lazy imports
if mode == "sktrace":
    from sklearn.datasets import load_svmlight_file
    load_svmlight_file(io.BytesIO(b"1 1:1\n"), zero_based=False)

if mode == "rss":
    # High-water RSS during the load minus RSS just before it.  Where the high-water mark
    # cannot be reset the figure can only over-estimate.
    reset_peak()
    before = status_kb("VmRSS") * 1024
    X, y = load_svmlight(path)
    after = status_kb("VmHWM") * 1024
    print(json.dumps({"peak": max(after - before, 0)}))
else:
    tracemalloc.start()
    if mode == "trace":
        X, y = load_svmlight(path)
    else:
        X, y = load_svmlight_file(path, zero_based=False)
    cur, peak = tracemalloc.get_traced_memory()
    print(json.dumps({"peak": peak}))
"""


def _child_peak(mode, path, threads="auto"):
    out, error = H.run_child(_CHILD, [mode, path, threads])
    if out is None:
        raise RuntimeError(f"peak-memory child ({mode}, {path}) failed: {error}")
    return out["peak"]


def _load_threads(path, threads):
    """linsvm.io.svmlight.load_svmlight, on the standard library's libbz2 when threads == 1."""
    import linsvm.io.svmlight
    from linsvm.io.svmlight import load_svmlight

    saved = linsvm.io.compressed._indexed_bzip2
    if threads == 1:
        linsvm.io.compressed._indexed_bzip2 = None
    try:
        return load_svmlight(path)
    finally:
        linsvm.io.compressed._indexed_bzip2 = saved


def _interleaved_medians(fns, repeat):
    """Median wall time of each function, calling them in turn `repeat` times."""
    timed = H.interleaved({name: H.timed(fn) for name, fn in fns.items()}, repeat)
    return {name: H.median([s for s, _ in runs]) for name, runs in timed.items()}


# Rows for a .bz2 file: linsvm as it is, then forced to 2 threads and to 1.
_BZ2_ROWS = (("auto", ""), ("2", " (2 threads)"), ("1", " (serial bz2)"))


def bench(path, label, repeat):
    """Rows for one file: linsvm (and, for .bz2, both paths) vs scikit-learn."""
    import linsvm.io.svmlight
    from sklearn.datasets import load_svmlight_file
    from linsvm.io.svmlight import load_svmlight

    with open(path, "rb") as fh:
        is_bz2 = fh.read(3) == b"BZh"
    X, y = load_svmlight(path)
    Xs, ys = load_svmlight_file(str(path), zero_based=False)
    assert X.shape == Xs.shape and X.nnz == Xs.nnz, f"disagreement on {path}"
    fns = {"sklearn": lambda: load_svmlight_file(str(path), zero_based=False),
           "auto": lambda: load_svmlight(path)}
    variants = _BZ2_ROWS if is_bz2 else _BZ2_ROWS[:1]
    for threads, _ in variants[1:]:
        X2, y2 = _load_threads(path, int(threads))
        assert (X2 != X).nnz == 0 and (y2 == y).all(), f"{threads} thread(s) disagree on {path}"
        fns[threads] = lambda n=int(threads): _load_threads(path, n)
    auto = (linsvm.io.compressed._BZ2_THREADS if linsvm.io.compressed._indexed_bzip2 else 1) if is_bz2 else None
    t = _interleaved_medians(fns, repeat)
    csr = 12 * X.nnz + 16 * X.shape[0] + 8
    sk_peak = _child_peak("sktrace", path) / csr
    rows = []
    for threads, suffix in variants:
        rows.append({
            "file": label + (f" (auto: {auto} thread{'s' if auto > 1 else ''})"
                             if is_bz2 and threads == "auto" else suffix),
            "MB": os.path.getsize(path) / 1e6,
            "rows": X.shape[0],
            "nnz": X.nnz,
            "sklearn_s": t["sklearn"],
            "linsvm_s": t[threads],
            "speedup": t["sklearn"] / t[threads],
            "peak_trace": _child_peak("trace", path, threads) / csr,
            "peak_rss": _child_peak("rss", path, threads) / csr,
            "sk_peak_trace": sk_peak,
        })
    return rows


def main(argv):
    repeat = REPEAT
    if argv[:1] == ["--repeat"]:
        repeat = int(argv[1])
        argv = argv[2:]
    names = argv or FILES
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            path = DATA / name
            if not path.exists():
                print(f"skip {name}: not found under {DATA}", file=sys.stderr)
                continue
            rows += bench(path, name, repeat)
            if name.endswith(".bz2"):
                text = pathlib.Path(tmp) / pathlib.Path(name).stem
                with bz2.open(path, "rb") as src:
                    text.write_bytes(src.read())
                rows += bench(text, name[:-4] + " (text)", repeat)
                text.unlink()
    header = ("file", "MB", "rows", "nnz", "sklearn s", "linsvm s", "speedup",
              "peak/CSR trace", "peak/CSR rss", "sklearn peak/CSR")
    print(f"median of {repeat} interleaved loads per file; {os.cpu_count()} CPUs; "
          f"load average {os.getloadavg()[0]:.2f} at the end")
    print("\n".join(H.markdown_table(header, [])))
    for r in rows:
        print(f"| {r['file']} | {r['MB']:.2f} | {r['rows']} | {r['nnz']} | {r['sklearn_s']:.4f} "
              f"| {r['linsvm_s']:.4f} | {r['speedup']:.2f}x | {r['peak_trace']:.2f} "
              f"| {r['peak_rss']:.2f} | {r['sk_peak_trace']:.2f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
