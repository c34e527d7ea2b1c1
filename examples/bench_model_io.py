"""Load time and peak memory of model files: linsvm (text, binary, LIBLINEAR format) against LIBLINEAR.

    python examples/bench_model_io.py MODEL_DIR [--sector FILE] [--synthetic ROWSxCOLS] [--repeats N]
        [--old-linsvm PATH]

For a SECTOR one-vs-rest model (trained with `linsvm-train -s dcd`, written in
every format) and a synthetic model of random weights, each measurement runs
in a fresh Python process: import the library, load the model, report the
seconds of the load and the peak resident set of the process (VmHWM; Linux
hands a parent's ru_maxrss on to its children) and what it was before the
load (imports).  LIBLINEAR's own Python loader
(liblinearutil.load_model, C code) reads the LIBLINEAR-format file.
`--old-linsvm PATH` adds the loader of another linsvm checkout (e.g. main
before format 2) reading the version-1 text file.  Repeats are interleaved;
the median is reported.
"""
import argparse
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))     # harness.py, beside this script
import harness as H  # noqa: E402  (puts this checkout's in-place build first on sys.path)

PROBE = """
import json, resource, sys, time
kind, path = sys.argv[1], sys.argv[2]
if kind == "liblinear":
    from liblinear import liblinearutil as L
    load = L.load_model
else:
    import linsvm
    load = linsvm.load_model
def peak_kb():
    # VmHWM: the peak resident set of this process's own memory (see harness.CHILD_PRELUDE)
    try:
        return status_kb("VmHWM")
    except (OSError, KeyError):
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
before = peak_kb()
t = time.perf_counter()
m = load(path)
sec = time.perf_counter() - t
print(json.dumps([sec, before, peak_kb()]))
"""


def measure(kind, path, pythonpath):
    env = dict(os.environ, PYTHONPATH=pythonpath)
    # cwd: `python -c` puts the working directory first on sys.path, before PYTHONPATH
    out, error = H.run_child(PROBE, [kind, os.path.abspath(path)], cwd=os.path.dirname(os.path.abspath(path)),
                             env=env)
    if out is None:
        raise RuntimeError(f"loading {path} ({kind}) failed: {error}")
    return float(out[0]), int(out[1]) / 1024, int(out[2]) / 1024


def write_models(model, stem, old_text):
    paths = {}
    for fmt in ("linsvm-binary", "linsvm-text", "liblinear"):
        p = f"{stem}.{fmt}.model"
        if not os.path.exists(p):
            model.save(p, format=fmt)
        paths[fmt] = p
    if old_text:
        p = f"{stem}.v1.model"
        if not os.path.exists(p):
            with open(paths["linsvm-text"], "rb") as src, open(p, "wb") as dst:
                first = src.readline()
                assert first == b"linsvm_model 2\n"
                dst.write(b"linsvm_model 1\n")
                while True:
                    block = src.read(1 << 20)
                    if not block:
                        break
                    dst.write(block)
        paths["v1"] = p
    return paths


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("model_dir")
    ap.add_argument("--sector", default=str(H.data_root() / "multiclass" / "sector.scale.bz2"))
    ap.add_argument("--synthetic", default="1000000x12")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--old-linsvm", default=None)
    args = ap.parse_args()
    import linsvm
    here = str(H.linsvm_home())

    os.makedirs(args.model_dir, exist_ok=True)
    sets = {}
    if os.path.exists(args.sector):
        stem = os.path.join(args.model_dir, "sector")
        if not os.path.exists(stem + ".linsvm-binary.model"):
            X, y = linsvm.load_svmlight(args.sector)
            model = linsvm.train(X, y, solver="dcd", C=1.0, tol=0.1)
        else:
            model = linsvm.load_model(stem + ".linsvm-binary.model")
        sets["SECTOR dcd one-vs-rest"] = (model.weights.shape, write_models(model, stem, args.old_linsvm))
    r, c = (int(v) for v in args.synthetic.split("x"))
    stem = os.path.join(args.model_dir, f"synthetic-{r}x{c}")
    if not os.path.exists(stem + ".linsvm-binary.model"):
        W = np.random.default_rng(0).standard_normal((r + 1, c))
        model = linsvm.Model(solver="mfn", classes=np.arange(1, c + 1), weights=W, bias=1.0, params={"C": 1.0})
    else:
        model = linsvm.load_model(stem + ".linsvm-binary.model")
    sets[f"synthetic {r} x {c}"] = (model.weights.shape, write_models(model, stem, args.old_linsvm))
    del model

    print("| model | weights | file | size MB | reader | load s | peak RSS MB | RSS before load MB |")
    print("|---|---|---|---|---|---|---|---|")
    for name, (shape, paths) in sets.items():
        runs = [("linsvm-binary", "linsvm", here), ("linsvm-text", "linsvm", here),
                ("liblinear", "linsvm", here), ("liblinear", "liblinear", here)]
        if "v1" in paths:
            runs.append(("v1", "linsvm", args.old_linsvm))
        results = H.interleaved({i: (lambda fmt=fmt, kind=kind, pp=pp: measure(kind, paths[fmt], pp))
                                 for i, (fmt, kind, pp) in enumerate(runs)}, args.repeats)
        for i, (fmt, kind, pp) in enumerate(runs):
            sec, before, peak = (float(np.median([m[j] for m in results[i]])) for j in range(3))
            reader = "LIBLINEAR (liblinearutil)" if kind == "liblinear" else (
                "linsvm (this tree)" if pp == here else f"linsvm ({pp})")
            size = os.path.getsize(paths[fmt]) / 1e6
            print(f"| {name} | {shape[0]} x {shape[1]} | {fmt} | {size:.1f} | {reader} | {sec:.3f} | "
                  f"{peak:.0f} | {before:.0f} |", flush=True)


if __name__ == "__main__":
    main()
