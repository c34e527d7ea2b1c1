"""Start-up: what a command costs on a tiny file, beside `import numpy` and LIBLINEAR.

    python examples/bench_startup.py [--repeats 21] [--liblinear-dir DIR] [--imports]

Issue 28's start-up target: `linsvm-train` on a tiny file costs at most 60 ms more than
`python -c "import numpy"`.  Users run linsvm-predict in shell loops and cron jobs, where
the interpreter's start-up and the imports are the whole cost.

The commands run as an installed linsvm runs them: console-script stubs like the ones pip
writes (`from linsvm.__main__ import train_main`), in child processes that import the same
linsvm as this script, with bytecode caching on (PYTHONDONTWRITEBYTECODE removed from the
children's environment: pip compiles an installed package's modules, so a run without
.pyc files would time the compiler).  One warm-up round, then --repeats interleaved
rounds; each row is the median wall time and the median CPU time (user + system; less
sensitive to a shared machine's load) of its command, and "over numpy" is that median
less the same median of `python -c "import numpy"`.  The data: a heart_scale-sized file (270
rows, 13 features, 10 values per row) written here.  With --liblinear-dir DIR (or
$LIBLINEAR_DIR), LIBLINEAR's own `train` and `predict` built in DIR run on the same file.

With --imports, the modules each command imports beyond `import numpy, click`, with their
own import times (python -X importtime; those times include the tracing's overhead).

Output: Markdown on stdout.
"""
from __future__ import annotations

import argparse
import os
import pathlib
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time

STUB = ("import re\nimport sys\nfrom linsvm.__main__ import {function}\n"
        "if __name__ == '__main__':\n"
        "    sys.argv[0] = re.sub(r'(-script\\.pyw|\\.exe)?$', '', sys.argv[0])\n"
        "    sys.exit({function}())\n")


def linsvm_home():
    """The directory the imported linsvm package lies in."""
    import linsvm
    return pathlib.Path(linsvm.__file__).resolve().parents[1]


def child_env():
    """The children's environment: this linsvm first on the path, bytecode caching on."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    top = str(linsvm_home())
    env["PYTHONPATH"] = top + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def write_tiny(path, seed=1):
    """270 rows x 13 features, 10 values per row, two classes (heart_scale's shape)."""
    rng = random.Random(seed)
    with open(path, "w") as f:
        for _ in range(270):
            cols = sorted(rng.sample(range(1, 14), 10))
            label = "+1" if rng.random() < 0.5 else "-1"
            f.write(label + " " + " ".join(f"{j}:{rng.uniform(-1, 1):.3f}" for j in cols) + "\n")


def commands(work, liblinear_dir):
    """name -> argv, in the order of the table."""
    py = sys.executable
    stubs = {}
    for name, function in (("linsvm-train", "train_main"), ("linsvm-predict", "predict_main")):
        stubs[name] = work / name
        stubs[name].write_text(STUB.format(function=function))
    out = {
        "python -c pass": [py, "-c", "pass"],
        "python -c 'import numpy'": [py, "-c", "import numpy"],
        "linsvm-train --help": [py, str(stubs["linsvm-train"]), "--help"],
        "linsvm-train tiny.svm m": [py, str(stubs["linsvm-train"]), "-q", "tiny.svm", "m"],
        "linsvm-train -s lr tiny.svm m": [py, str(stubs["linsvm-train"]), "-q", "-s", "0",
                                          "tiny.svm", "m0"],
        "linsvm-predict tiny.svm m p": [py, str(stubs["linsvm-predict"]), "-q", "tiny.svm", "m",
                                        "p"],
    }
    if liblinear_dir:
        d = pathlib.Path(liblinear_dir)
        out["LIBLINEAR train tiny.svm"] = [str(d / "train"), "-q", "tiny.svm", "lm"]
        out["LIBLINEAR predict tiny.svm"] = [str(d / "predict"), "tiny.svm", "lm", "lp"]
    return out


def _children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def time_commands(cmds, work, env, repeats):
    """name -> [(wall seconds, CPU seconds)] of each round (after one untimed warm-up
    round); the commands run one at a time, so the children's CPU time grows by the
    command's own."""
    times = {name: [] for name in cmds}
    for r in range(repeats + 1):
        for name, argv in cmds.items():
            t, c = time.perf_counter(), _children_cpu()
            subprocess.run(argv, cwd=work, env=env, check=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            if r:
                times[name].append((time.perf_counter() - t, _children_cpu() - c))
    return times


def imported_modules(argv, work, env):
    """[(self microseconds, module)] a command imports beyond `import numpy, click`."""
    def trace(args):
        err = subprocess.run([sys.executable, "-X", "importtime", *args], cwd=work, env=env,
                             capture_output=True, text=True).stderr
        rows = []
        for line in err.splitlines():
            if line.startswith("import time:") and "self [us]" not in line:
                own, _, name = line[len("import time:"):].split("|")
                rows.append((int(own), name.strip()))
        return rows
    base = {name for _, name in trace(["-c", "import numpy, click"])}
    return [(us, name) for us, name in trace(argv[1:]) if name not in base]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=21)
    ap.add_argument("--liblinear-dir", default=os.environ.get("LIBLINEAR_DIR"),
                    help="directory of LIBLINEAR's built train and predict (default "
                         "$LIBLINEAR_DIR; without it no LIBLINEAR rows)")
    ap.add_argument("--imports", action="store_true",
                    help="also list the modules train and predict import beyond numpy and click")
    args = ap.parse_args(argv)
    if args.repeats < 1:
        ap.error("--repeats must be >= 1")
    env = child_env()
    with tempfile.TemporaryDirectory() as tmp:
        work = pathlib.Path(tmp)
        write_tiny(work / "tiny.svm")
        cmds = commands(work, args.liblinear_dir)
        # the model predict reads, and LIBLINEAR's, before any timing
        subprocess.run(cmds["linsvm-train tiny.svm m"], cwd=work, env=env, check=True)
        if args.liblinear_dir:
            subprocess.run(cmds["LIBLINEAR train tiny.svm"], cwd=work, check=True)
        times = time_commands(cmds, work, env, args.repeats)
        traces = {}
        if args.imports:
            for name in ("linsvm-train tiny.svm m", "linsvm-predict tiny.svm m p"):
                traces[name] = imported_modules(cmds[name], work, env)
    def median(name, k):
        return 1000 * statistics.median(t[k] for t in times[name])
    numpy_wall, numpy_cpu = (median("python -c 'import numpy'", k) for k in (0, 1))
    print(f"Start-up on {platform.machine()}, Python {platform.python_version()}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f} at the end; "
          f"medians of {args.repeats} interleaved rounds, wall time and CPU time (user + "
          "system) of the child.\n")
    print("| command | wall ms | over numpy | CPU ms | over numpy |")
    print("|---|---|---|---|---|")
    for name in times:
        wall, cpu = median(name, 0), median(name, 1)
        print(f"| `{name}` | {wall:.1f} | {wall - numpy_wall:+.1f} | {cpu:.1f} | "
              f"{cpu - numpy_cpu:+.1f} |")
    for name, rows in traces.items():
        total = sum(us for us, _ in rows) / 1000
        print(f"\n`{name}`: {len(rows)} modules beyond numpy and click, {total:.1f} ms of "
              "their own import time under -X importtime; the largest:\n")
        for us, mod in sorted(rows, reverse=True)[:15]:
            print(f"- {mod}: {us / 1000:.2f} ms")


if __name__ == "__main__":
    main()
