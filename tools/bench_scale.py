#!/usr/bin/env python3
"""Benchmarks of data beyond memory, measured from outside as a user runs the programs.

    python tools/bench_scale.py [--table] [--cv] [--big] [--nnz 10M,100M,400M]
        [--threads 1,2] [--repeat 3] [--root /work/bench] [--liblinear DIR_OR_TRAIN]
        [--rows text,f64,f32,text01,pattern,cache,ll,ll01] [--dry-run] ...

Three modes (any combination; --table when none is given):

--table   For each size in --nnz, a generated text-like set (`linsvm synth`: Zipf
          vocabulary, tf-idf rows of unit length) and the same rows with every value 1
          (0/1 text), their binary files (`linsvm convert --values float64 | float32 |
          pattern`), and one training of each from a fresh process:
              linsvm-train -s 2 -c 1 -B 1 -m M FILE MODEL   (text, binary, --cache)
              train -s 2 -c 1 -B 1 FILE MODEL               (LIBLINEAR, the text files)
          timed end to end, with the peak resident set from /usr/bin/time -v, and the
          read phase and the solve taken from linsvm's own lines (`read ... in Ts`, the
          summary's `time = Ts`).  --cache runs twice: first with an empty cache
          directory (the run converts), then again (the run maps the cache file).
--cv      Repeated runs: `linsvm-cv -s 2 -v 5 -c 0.25,0.5,1,2,4 -j 1 -m M FILE`
          three times in a row on the tf-idf text, without and with --cache (the cache
          directory emptied before the first of the three), and on its float64 binary.
--big     A 0/1 set past 2^31 non-zeros written directly as a binary file (`linsvm
          synth --format binary --values pattern`, --n-samples from a probe's non-zeros
          per row), then `linsvm-train -s mfn -c 1 -m M` on it: time, iterations, CG
          iterations, passes (when linsvm prints `passes`), the KKT violation, peak RSS.
          linsvm-train's progress lines are on by default (its -v is cross-validation,
          as LIBLINEAR's, so it is not given); the logs keep them.

Protocol.  Repeated measurements are interleaved: round k runs every row once, in the
same order (A B C ... A B C ...), and the tables give each row's median over the rounds.
Threads are pinned (-m, one row per value of --threads; LIBLINEAR 2.50's train is
serial), since linsvm's automatic thread count follows the load average.  Before each
run the input file is read once, so that every run starts from the page cache (--cold
instead drops the page cache before each run: root, and the whole machine's cache).
Peak RSS is /usr/bin/time's "Maximum resident set size", so a mapped file counts by
the pages the run touched; MB are 10^6 bytes and bytes per non-zero are peak RSS
(KiB x 1024) over the set's non-zeros.  "end to end" is the wall time of the whole
process, interpreter start-up included (the start-up row shows its share).

Data.  Everything lives under --root (default /work/bench, outside the repository):
data/<set>/ holds tfidf.svm, 01.svm, f64.bin, f32.bin, pattern.bin and manifest.json
(rows, non-zeros counted in the text, the generation's seeds), reused by later
invocations; runs/<stamp>/ holds every run's stderr, stdout and /usr/bin/time output,
results.json (every sample) and tables.md.  A set larger than --chunk-nnz is written as
several `linsvm synth` outputs with seeds seed, seed+1, ... concatenated (one synth run
holds its whole set in memory): each chunk has its own vocabulary permutation and class
topics, so the concatenation is a mixture of text-like sets with the same statistics.
The 0/1 text is the tf-idf text with every value replaced by 1 (the same rows and
indices).  Before writing a set the free disk space is checked against an estimate.

Commands a checkout may not have yet (convert, --cache, synth --format binary) are
detected from their --help; the rows that need them are listed as skipped, with the
reason, and nothing else changes.  --dry-run prints the plan and the commands instead.

linsvm runs as `python -m linsvm` with PYTHONPATH set to --linsvm-home (default: this
checkout), so an in-place build measures the checkout.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = Path("/work/bench")
DEFAULT_LIBLINEAR = Path("/work/liblinear")
CV_GRID = "0.25,0.5,1,2,4"
CV_RUNS = 3                      # runs in a row per repeated-run measurement
BIG_NNZ = 2_200_000_000
PROBE_ROWS = 4000                # rows of the generation probe (non-zeros per row)

# Approximate on-disk bytes per non-zero of each file of a set (upper estimates, for the
# free-space check only): tf-idf text, 0/1 text, float64 / float32 / pattern binaries,
# and the cache file of the tf-idf text.
DISK_PER_NNZ = {"tfidf": 26.0, "01": 8.0, "f64": 12.2, "f32": 8.2, "pattern": 4.2, "cache": 12.2}
DISK_PER_ROW = 48.0              # labels, row pointers, line ends, a margin

# What linsvm's command line prints (linsvm/cli/runs.py read_line, run_train._summary).
READ_LINE = re.compile(r"^read (\d+) examples, (\d+) features, (\d+) non-zeros in ([0-9.]+)s", re.M)
SUMMARY = re.compile(r"^(\S+): objective = (\S+), iterations = (\d+)(.*?), time = ([0-9.]+)s", re.M)
PASSES = re.compile(r"\bpasses\s*(?:=|:)?\s*(\d+)|\b(\d+) passes\b")


def log(msg):
    print(f"[bench] {msg}", file=sys.stderr, flush=True)


def parse_size(text):
    """'200k', '10M', '2.2G', '2.2e9' -> an int."""
    m = re.fullmatch(r"\s*([0-9.]+(?:e[0-9]+)?)\s*([kKmMgG]?)\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"not a size: {text!r} (e.g. 200k, 10M, 2.2e9)")
    scale = {"": 1, "k": 10**3, "m": 10**6, "g": 10**9}[m.group(2).lower()]
    return int(round(float(m.group(1)) * scale))


def size_label(n):
    """A short name for a size: 200k, 10M, 2.2G."""
    for unit, scale in (("G", 10**9), ("M", 10**6), ("k", 10**3)):
        if n >= scale:
            return f"{n / scale:.4g}{unit}"
    return str(n)


def parse_time_v(text):
    """The fields of /usr/bin/time -v's report used here: peak RSS (KiB), exit status."""
    peak = re.search(r"Maximum resident set size \(kbytes\):\s*(\d+)", text)
    status = re.search(r"Exit status:\s*(-?\d+)", text)
    return {"peak_kb": int(peak.group(1)) if peak else None,
            "exit": int(status.group(1)) if status else None}


def parse_linsvm_log(text):
    """What linsvm-train / linsvm-cv print on stderr: the read line (rows, features,
    non-zeros, seconds), the training summary (objective, iterations, CG iterations,
    KKT violation, seconds) and a number of passes if one is printed."""
    out = {}
    m = READ_LINE.search(text)
    if m:
        out.update(rows=int(m.group(1)), features=int(m.group(2)), nnz=int(m.group(3)),
                   read_s=float(m.group(4)))
    m = SUMMARY.search(text)
    if m:
        out.update(solver=m.group(1), objective=float(m.group(2)), iterations=int(m.group(3)),
                   solve_s=float(m.group(5)))
        for key in ("cg_iter", "n_active", "kkt_violation"):
            k = re.search(rf"\b{key} = ([0-9.eE+-]+)", m.group(4))
            if k:
                out[key] = float(k.group(1))
    m = PASSES.search(text)
    if m:
        out["passes"] = int(m.group(1) or m.group(2))
    return out


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ---------------------------------------------------------------------------
# running a command from outside
# ---------------------------------------------------------------------------

@dataclass
class Bench:
    """What every measurement needs: where things are and how to start them."""

    root: Path
    home: Path
    liblinear_train: Path | None
    logs: Path
    cold: bool = False
    dry_run: bool = False
    counter: int = 0
    _help: dict = field(default_factory=dict)

    def linsvm(self, *args):
        return [sys.executable, "-m", "linsvm", *map(str, args)]

    @property
    def cwd(self):
        """Where the processes start: not a checkout, whose linsvm `python -m` would
        take before PYTHONPATH's."""
        return self.root / "tmp"

    def env(self, cache_dir=None):
        """The environment of a linsvm process: this checkout first on the path, caching
        on (LINSVM_CACHE) only when cache_dir is given."""
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([str(self.home)] + [p for p in
                                            env.get("PYTHONPATH", "").split(os.pathsep) if p])
        env.pop("LINSVM_CACHE", None)
        if cache_dir is not None:
            env["LINSVM_CACHE"] = str(cache_dir)
        return env

    def help_text(self, *command):
        """`python -m linsvm COMMAND --help` (None when the command does not exist)."""
        if command not in self._help:
            res = subprocess.run(self.linsvm(*command, "--help"), capture_output=True,
                                 text=True, env=self.env(), cwd=self.cwd)
            self._help[command] = res.stdout if res.returncode == 0 else None
        return self._help[command]

    def measure(self, name, cmd, warm=(), env=None, stdout_file=None):
        """Run cmd under /usr/bin/time -v; the wall time, peak RSS, exit status, the
        parsed linsvm lines, and the log files' paths."""
        self.counter += 1
        stem = self.logs / f"{self.counter:04d}-{re.sub(r'[^A-Za-z0-9.-]+', '_', name)}"
        if self.dry_run:
            cache = (env or {}).get("LINSVM_CACHE")
            print("  $ " + (f"LINSVM_CACHE={cache} " if cache else "") + " ".join(map(str, cmd)))
            return {"name": name, "cmd": cmd, "dry_run": True}
        self.prepare_cache(warm)
        tfile, efile = Path(f"{stem}.time"), Path(f"{stem}.stderr")
        ofile = Path(stdout_file) if stdout_file else Path(f"{stem}.stdout")
        t0 = time.perf_counter()
        with open(ofile, "wb") as out, open(efile, "wb") as err:
            rc = subprocess.run(["/usr/bin/time", "-v", "-o", str(tfile)] + cmd, stdout=out,
                                stderr=err, env=env or self.env(), cwd=self.cwd).returncode
        wall = time.perf_counter() - t0
        text = efile.read_text(errors="replace")
        res = {"name": name, "cmd": cmd, "rc": rc, "wall_s": wall, "stderr_file": str(efile),
               **parse_time_v(tfile.read_text(errors="replace") if tfile.exists() else "")}
        res.update(parse_linsvm_log(text))
        if rc != 0:
            res["error"] = (text.strip().splitlines() or [f"exit status {rc}"])[-1]
            log(f"{name}: failed ({res['error']}); log {efile}")
        else:
            log(f"{name}: {wall:.2f} s, peak {(res['peak_kb'] or 0) / 1024:.0f} MiB")
        return res

    def prepare_cache(self, paths):
        """Before a run: read its inputs into the page cache, or (--cold) drop it."""
        if self.cold:
            os.sync()
            with open("/proc/sys/vm/drop_caches", "w") as fh:
                fh.write("3\n")
            return
        buf = bytearray(16 << 20)
        for p in paths:
            if p is not None and Path(p).is_file():
                with open(p, "rb", buffering=0) as fh:
                    while fh.readinto(buf):
                        pass


def require_disk(path, need, force):
    free = shutil.disk_usage(path).free
    if need > free and not force:
        sys.exit(f"bench_scale: about {need / 1e9:.1f} GB needed under {path}, "
                 f"{free / 1e9:.1f} GB free (--force to try anyway)")


def count_file(path):
    """(lines, ':' characters) of a text file: rows and non-zeros of a synth output."""
    lines = colons = 0
    buf = bytearray(16 << 20)
    with open(path, "rb", buffering=0) as fh:
        while n := fh.readinto(buf):
            view = buf if n == len(buf) else buf[:n]
            lines += view.count(b"\n")
            colons += view.count(b":")
    return lines, colons


# ---------------------------------------------------------------------------
# the data sets
# ---------------------------------------------------------------------------

@dataclass
class DataSet:
    """One generated set: its directory, manifest and the paths of its files."""

    dir: Path
    manifest: dict

    def path(self, kind):
        return self.dir / {"tfidf": "tfidf.svm", "01": "01.svm", "f64": "f64.bin",
                           "f32": "f32.bin", "pattern": "pattern.bin"}[kind]

    @property
    def nnz(self):
        return self.manifest["nnz"]

    def save(self):
        tmp = self.dir / "manifest.json.part"
        tmp.write_text(json.dumps(self.manifest, indent=1) + "\n")
        os.replace(tmp, self.dir / "manifest.json")


def nnz_per_row(bench, n_features, seed, extra=()):
    """Non-zeros per row of `linsvm synth` at this width (a small probe set, counted)."""
    probe = bench.root / "tmp" / f"probe-d{n_features}-s{seed}.svm"
    subprocess.run(bench.linsvm("synth", "--n-samples", PROBE_ROWS, "--n-features", n_features,
                                "--seed", seed, *extra, probe),
                   check=True, env=bench.env(), cwd=bench.cwd)
    rows, nnz = count_file(probe)
    probe.unlink()
    return nnz / rows


def text_set(bench, target, args):
    """The tf-idf and 0/1 text files of a set of about `target` non-zeros (made once)."""
    d = bench.root / "data" / f"nnz{size_label(target)}-d{args.n_features}-s{args.seed}"
    if (d / "manifest.json").exists():
        ds = DataSet(d, json.loads((d / "manifest.json").read_text()))
        if all(ds.path(k).exists() for k in ("tfidf", "01")):
            return ds
    if bench.dry_run:
        print(f"  (generate {d}/tfidf.svm and 01.svm with linsvm synth, chunks of "
              f"{size_label(args.chunk_nnz)} non-zeros)")
        return DataSet(d, {"nnz": target, "rows": None})
    d.mkdir(parents=True, exist_ok=True)
    need = target * (DISK_PER_NNZ["tfidf"] + DISK_PER_NNZ["01"]) + target / 60 * DISK_PER_ROW
    require_disk(d, need, args.force)
    per_row = nnz_per_row(bench, args.n_features, args.seed)
    n_rows = max(2, round(target / per_row))
    n_chunks = max(1, math.ceil(n_rows * per_row / args.chunk_nnz))
    sizes = [n_rows // n_chunks + (i < n_rows % n_chunks) for i in range(n_chunks)]
    log(f"generating {d.name}: {n_rows} rows in {n_chunks} synth run(s), "
        f"{per_row:.1f} non-zeros per row")
    t0 = time.perf_counter()
    part = d / "tfidf.svm.part"
    with open(part, "wb") as out:
        for i, rows in enumerate(sizes):
            subprocess.run(bench.linsvm("synth", "--n-samples", rows, "--n-features",
                                        args.n_features, "--seed", args.seed + i, "-"),
                           stdout=out, check=True, env=bench.env(), cwd=bench.cwd)
    os.replace(part, d / "tfidf.svm")
    gen_s = time.perf_counter() - t0
    part = d / "01.svm.part"
    with open(d / "tfidf.svm", "rb") as src, open(part, "wb") as out:
        subprocess.run(["sed", "-E", "s/:[^ ]+/:1/g"], stdin=src, stdout=out, check=True,
                       env={**os.environ, "LC_ALL": "C"})
    os.replace(part, d / "01.svm")
    rows, nnz = count_file(d / "tfidf.svm")
    if count_file(d / "01.svm") != (rows, nnz):
        sys.exit(f"bench_scale: {d}/01.svm does not have the rows and non-zeros of tfidf.svm")
    ds = DataSet(d, {"target_nnz": target, "nnz": nnz, "rows": rows,
                     "n_features": args.n_features, "chunk_rows": sizes,
                     "seeds": [args.seed + i for i in range(n_chunks)],
                     "generate_s": gen_s, "bytes": {"tfidf": (d / "tfidf.svm").stat().st_size,
                                                    "01": (d / "01.svm").stat().st_size},
                     "convert": {}})
    ds.save()
    log(f"{d.name}: {rows} rows, {nnz} non-zeros")
    return ds


CONVERSIONS = (("f64", "tfidf", "float64"), ("f32", "tfidf", "float32"),
               ("pattern", "01", "pattern"))


def binary_files(bench, ds, features, args):
    """`linsvm convert` the set's text files into its binaries (each once, timed)."""
    if not features["convert"]:
        return
    need = sum(DISK_PER_NNZ[k] for k, _, _ in CONVERSIONS) * ds.nnz
    if not bench.dry_run and not all(ds.path(k).exists() for k, _, _ in CONVERSIONS):
        require_disk(ds.dir, need, args.force)
    for kind, src, values in CONVERSIONS:
        if ds.path(kind).exists():
            continue
        cmd = bench.linsvm("convert", ds.path(src), ds.path(kind), "--values", values)
        res = bench.measure(f"convert-{kind}-{ds.dir.name}", cmd, warm=[ds.path(src)])
        if not bench.dry_run:
            ds.manifest.setdefault("convert", {})[kind] = {
                k: res.get(k) for k in ("wall_s", "peak_kb", "rc", "error")}
            ds.save()


# ---------------------------------------------------------------------------
# what exists in this checkout
# ---------------------------------------------------------------------------

def detect(bench):
    """Which of the commands and options the benchmarks use this checkout has."""
    train_help = bench.help_text("train") or ""
    cv_help = bench.help_text("cv") or ""
    synth_help = bench.help_text("synth") or ""
    convert_help = bench.help_text("convert")
    row_opt = re.search(r"(--(?:mean-nnz|nnz-per-row|row-nnz|mean-length|avg-length|doc-length))\b",
                        synth_help)
    return {
        "convert": convert_help is not None and "--values" in convert_help,
        "train_cache": "--cache" in train_help,
        "cv_cache": "--cache" in cv_help,
        "synth_binary": "--format" in synth_help and "--values" in synth_help,
        "synth_row_option": row_opt.group(1) if row_opt else None,
        "liblinear": bench.liblinear_train is not None and bench.liblinear_train.exists(),
    }


MISSING = {
    "convert": "`linsvm convert ... --values` is not in this checkout",
    "train_cache": "`linsvm-train --cache` is not in this checkout",
    "cv_cache": "`linsvm-cv --cache` is not in this checkout",
    "synth_binary": "`linsvm synth --format binary --values pattern` is not in this checkout",
    "liblinear": "LIBLINEAR's train was not found (--liblinear)",
}


# ---------------------------------------------------------------------------
# --table
# ---------------------------------------------------------------------------

@dataclass
class Row:
    """One line of the table: a command on one input, measured once per round."""

    key: str                 # the --rows name
    program: str
    layout: str
    threads: str
    needs: tuple             # detect() keys that must be true
    input: str | None        # DataSet file kind the command reads
    cache: str | None = None  # None, "first" or "second"


def table_rows(threads, wanted):
    rows = []
    for m in threads:
        rows += [Row("text", "linsvm", "text, tf-idf", m, (), "tfidf"),
                 Row("f64", "linsvm", "binary float64 (tf-idf)", m, ("convert",), "f64"),
                 Row("f32", "linsvm", "binary float32 (tf-idf)", m, ("convert",), "f32"),
                 Row("text01", "linsvm", "text, 0/1", m, (), "01"),
                 Row("pattern", "linsvm", "binary pattern (0/1)", m, ("convert",), "pattern"),
                 Row("cache", "linsvm", "text, tf-idf, --cache first run", m, ("train_cache",),
                     "tfidf", "first"),
                 Row("cache", "linsvm", "text, tf-idf, --cache second run", m, ("train_cache",),
                     "tfidf", "second")]
    rows += [Row("ll", "LIBLINEAR 2.50", "text, tf-idf", "1", ("liblinear",), "tfidf"),
             Row("ll01", "LIBLINEAR 2.50", "text, 0/1", "1", ("liblinear",), "01")]
    return [r for r in rows if r.key in wanted]


def row_command(bench, row, ds, model):
    if row.program.startswith("LIBLINEAR"):
        return [str(bench.liblinear_train), "-s", "2", "-c", "1", "-B", "1",
                str(ds.path(row.input)), str(model)]
    cmd = bench.linsvm("train", "-s", "2", "-c", "1", "-B", "1", "-m", row.threads)
    if row.cache:
        cmd.append("--cache")
    return cmd + [str(ds.path(row.input)), str(model)]


def run_table(bench, ds, features, args):
    """Every row of one set, interleaved over --repeat rounds: {row index: [samples]}."""
    rows = table_rows(args.threads, args.rows)
    cache_dir = bench.root / "cache" / ds.dir.name
    samples = {i: [] for i in range(len(rows))}
    skipped = {}
    for i, row in enumerate(rows):
        missing = [n for n in row.needs if not features[n]]
        if missing:
            skipped[i] = "; ".join(MISSING[n] for n in missing)
        elif not bench.dry_run and not ds.path(row.input).exists():
            skipped[i] = f"{ds.path(row.input)} is missing (see the set's manifest.json)"
    for k in range(args.repeat):
        for i, row in enumerate(rows):
            if i in skipped:
                continue
            if row.cache == "second" and samples[i - 1] and samples[i - 1][-1].get("rc"):
                samples[i].append({"rc": 1, "error": "the first --cache run failed"})
                continue
            if row.cache == "first" and not bench.dry_run:
                shutil.rmtree(cache_dir, ignore_errors=True)
                cache_dir.mkdir(parents=True)
            model = bench.root / "tmp" / "bench.model"
            name = f"{ds.dir.name}-{row.key}-{row.cache or ''}-m{row.threads}-r{k}"
            env = bench.env(cache_dir if row.cache else None)
            res = bench.measure(name, row_command(bench, row, ds, model), env=env,
                                warm=[] if row.cache == "second" else [ds.path(row.input)])
            if row.cache == "first" and res.get("rc") == 0 and not any(cache_dir.iterdir()):
                res.update(rc=1, error=f"--cache left nothing in LINSVM_CACHE={cache_dir}")
            samples[i].append(res)
        if bench.dry_run:
            break
    return rows, samples, skipped


def fmt(x, digits=3):
    if x is None:
        return ""
    if isinstance(x, int):
        return str(x)
    return f"{x:.{digits}g}" if abs(x) < 1000 else f"{x:.0f}"


def md_row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def table_markdown(ds, rows, samples, skipped):
    cols = ["program", "layout", "-m", "nnz", "end to end s", "read s", "solve s", "peak RSS MB",
            "bytes per non-zero", "runs"]
    lines = [md_row(cols), md_row(["---"] * len(cols))]
    notes = []
    for i, row in enumerate(rows):
        head = [row.program, row.layout, row.threads, ds.nnz]
        if i in skipped:
            lines.append(md_row(head + ["skipped", "", "", "", "", 0]))
            notes.append(((row.program, row.layout), row.threads, f"skipped: {skipped[i]}"))
            continue
        ok = [s for s in samples[i] if s.get("rc") == 0]
        for s in samples[i]:
            if s.get("rc") not in (0, None):
                notes.append(((row.program, row.layout), row.threads,
                              f"failed: {s.get('error')} ({s.get('stderr_file')})"))
        if not ok:
            lines.append(md_row(head + ["failed", "", "", "", "", 0]))
            continue
        peak = median([s.get("peak_kb") for s in ok])
        peak_b = peak * 1024 if peak is not None else None
        lines.append(md_row(head + [
            fmt(median([s["wall_s"] for s in ok])), fmt(median([s.get("read_s") for s in ok])),
            fmt(median([s.get("solve_s") for s in ok])), fmt(peak_b / 1e6 if peak_b else None),
            fmt(peak_b / ds.nnz if peak_b else None), len(ok)]))
    return lines, grouped(notes)


def grouped(notes):
    """Notes (what, -m, text) as lines, one per (what, text) with its -m values."""
    by = {}
    for what, m, text in notes:
        ms = by.setdefault((what, text), [])
        if m not in ms:
            ms.append(m)
    return [f"{', '.join(what)} (-m {','.join(ms)}): {text}" for (what, text), ms in by.items()]


# ---------------------------------------------------------------------------
# --cv
# ---------------------------------------------------------------------------

def run_cv(bench, ds, features, args):
    """linsvm-cv three times in a row per mode, interleaved over rounds."""
    modes = [("text", "text, tf-idf", ("tfidf",), None),
             ("cache", "text, tf-idf, --cache", ("tfidf",), "cv_cache"),
             ("f64", "binary float64", ("f64",), "convert")]
    cache_dir = bench.root / "cache" / ("cv-" + ds.dir.name)
    results, skipped = {}, {}
    for m in args.threads:
        for key, label, (kind,), need in modes:
            if need and not features[need]:
                skipped[(key, m)] = MISSING[need]
            results[(key, m)] = [[] for _ in range(CV_RUNS)]
    for k in range(args.repeat):
        for m in args.threads:
            for key, label, (kind,), need in modes:
                if (key, m) in skipped:
                    continue
                if key == "cache" and not bench.dry_run:
                    shutil.rmtree(cache_dir, ignore_errors=True)
                    cache_dir.mkdir(parents=True)
                cmd = bench.linsvm("cv", "-s", "2", "-v", "5", "-c", CV_GRID, "-j", "1", "-m", m,
                                   *(["--cache"] if key == "cache" else []), ds.path(kind))
                env = bench.env(cache_dir if key == "cache" else None)
                for j in range(CV_RUNS):
                    res = bench.measure(f"cv-{ds.dir.name}-{key}-m{m}-r{k}-{j + 1}", cmd, env=env,
                                        warm=[ds.path(kind)] if j == 0 or key != "cache" else [])
                    results[(key, m)][j].append(res)
        if bench.dry_run:
            break
    return modes, results, skipped


def convert_markdown(ds):
    """The conversions of a set (timed when the binary files were written)."""
    lines = [md_row(["output", "--values", "end to end s", "peak RSS MB", "status"]),
             md_row(["---"] * 5)]
    for kind, _, values in CONVERSIONS:
        v = ds.manifest["convert"].get(kind)
        if v:
            lines.append(md_row([ds.path(kind).name, values, fmt(v.get("wall_s")),
                                 fmt((v.get("peak_kb") or 0) * 1024 / 1e6),
                                 "ok" if v.get("rc") == 0 else f"failed: {v.get('error')}"]))
    return lines


def cv_markdown(ds, modes, results, skipped, threads):
    cols = (["input", "-m", "nnz"] + [f"run {j + 1} s" for j in range(CV_RUNS)]
            + [f"{CV_RUNS} runs s", f"read s (run 1 / run {CV_RUNS})", "peak RSS MB", "rounds"])
    lines = [md_row(cols), md_row(["---"] * len(cols))]
    notes = []
    for m in threads:
        for key, label, _, _ in modes:
            head = [label, m, ds.nnz]
            if (key, m) in skipped:
                lines.append(md_row(head + ["skipped"] + [""] * (len(cols) - 4)))
                notes.append((("linsvm-cv", label), m, f"skipped: {skipped[(key, m)]}"))
                continue
            runs = [[s for s in r if s.get("rc") == 0] for r in results[(key, m)]]
            for s in (s for r in results[(key, m)] for s in r if s.get("rc") not in (0, None)):
                notes.append((("linsvm-cv", label), m,
                              f"failed: {s.get('error')} ({s.get('stderr_file')})"))
            walls = [median([s["wall_s"] for s in r]) for r in runs]
            reads = [median([s.get("read_s") for s in r]) for r in runs]
            peak = max((s.get("peak_kb") or 0 for r in runs for s in r), default=0)
            total = sum(walls) if all(w is not None for w in walls) else None
            lines.append(md_row(head + [fmt(w) for w in walls] + [
                fmt(total), f"{fmt(reads[0])} / {fmt(reads[-1])}",
                fmt(peak * 1024 / 1e6 if peak else None), min(len(r) for r in runs)]))
    return lines, grouped(notes)


# ---------------------------------------------------------------------------
# --big
# ---------------------------------------------------------------------------

def big_synth_args(features, args):
    extra = list(args.big_synth_arg)
    if not extra and features["synth_row_option"]:
        extra = [features["synth_row_option"], str(args.big_row_nnz)]
    return extra


def binary_nnz(bench, path):
    """Rows and non-zeros of a binary file, read back by linsvm."""
    code = ("import sys, linsvm; X, y = linsvm.load_svmlight(sys.argv[1]); "
            "print(X.shape[0], X.nnz)")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                         env=bench.env(), cwd=bench.cwd, check=True).stdout.split()
    return int(out[0]), int(out[1])


def run_big(bench, features, args):
    """Write the big 0/1 binary set (once) and train mfn on it, per --threads value."""
    if not features["synth_binary"]:
        return None, [f"--big: skipped: {MISSING['synth_binary']}"]
    extra = big_synth_args(features, args)
    d = bench.root / "big"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"pattern-{size_label(args.big_nnz)}-d{args.big_features}-s{args.seed}.bin"
    meta_path = path.with_suffix(".json")
    synth = ["synth", "--format", "binary", "--values", "pattern", "--n-features",
             args.big_features, "--seed", args.seed, *extra]
    if meta_path.exists() and path.exists():
        meta = json.loads(meta_path.read_text())
    elif bench.dry_run:
        print(f"  (probe non-zeros per row, then) $ python -m linsvm {' '.join(map(str, synth))}"
              f" --n-samples N {path}")
        meta = {"rows": None, "nnz": args.big_nnz}
    else:
        probe = d / "probe.bin"
        try:
            subprocess.run(bench.linsvm(*synth, "--n-samples", PROBE_ROWS, probe), check=True,
                           env=bench.env(), cwd=bench.cwd, capture_output=True)
            per_row = binary_nnz(bench, probe)[1] / PROBE_ROWS
        except subprocess.CalledProcessError as exc:
            why = (exc.stderr or b"").decode(errors="replace").strip().splitlines() or ["?"]
            return None, [f"--big: the probe `{' '.join(map(str, exc.cmd))}` failed: {why[-1]}"]
        probe.unlink()
        n_rows = math.ceil(args.big_nnz * 1.002 / per_row)
        require_disk(d, args.big_nnz * DISK_PER_NNZ["pattern"] + n_rows * 24, args.force)
        log(f"writing {path.name}: {n_rows} rows, about {per_row:.1f} non-zeros per row")
        res = bench.measure("big-synth", bench.linsvm(*synth, "--n-samples", n_rows, path))
        if res["rc"] != 0:
            return None, [f"--big: synth failed: {res.get('error')} ({res['stderr_file']})"]
        meta = {"rows": n_rows, "nnz": None, "synth": synth, "synth_s": res["wall_s"],
                "synth_peak_kb": res["peak_kb"], "bytes": path.stat().st_size}
        meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    results = {}
    for k in range(args.repeat):
        for m in args.threads:
            cmd = bench.linsvm("train", "-s", "mfn", "-c", "1", "-m", m, path,
                               bench.root / "tmp" / "big.model")
            results.setdefault(m, []).append(
                bench.measure(f"big-train-m{m}-r{k}", cmd, warm=[path]))
        if bench.dry_run:
            return None, []
    return big_markdown(meta, results), []


def big_markdown(meta, results):
    lines = ["| -m | rows | nnz | synth s | synth peak RSS MB | end to end s | read s | solve s "
             "| iterations | CG iterations | passes | KKT violation | objective | peak RSS GB "
             "| bytes per non-zero | runs |", "|---" * 16 + "|"]
    notes = []
    for m, samples in results.items():
        ok = [s for s in samples if s.get("rc") == 0]
        notes += [f"--big -m {m}: failed: {s.get('error')} ({s.get('stderr_file')})"
                  for s in samples if s.get("rc") not in (0, None)]
        if not ok:
            continue
        nnz = ok[0].get("nnz") or meta.get("nnz")
        if nnz is not None and nnz < 2**31 and not any("2^31" in n for n in notes):
            notes.append(f"--big: the set has {nnz} non-zeros, not past 2^31")
        peak = median([s.get("peak_kb") for s in ok])
        cell = lambda key: fmt(median([s.get(key) for s in ok]))  # noqa: E731
        lines.append("| " + " | ".join([
            m, fmt(ok[0].get("rows") or meta.get("rows")), fmt(nnz), fmt(meta.get("synth_s")),
            fmt((meta.get("synth_peak_kb") or 0) * 1024 / 1e6 or None),
            fmt(median([s["wall_s"] for s in ok])), cell("read_s"), cell("solve_s"),
            cell("iterations"), cell("cg_iter"), cell("passes"),
            fmt(median([s.get("kkt_violation") for s in ok]), 3),
            fmt(median([s.get("objective") for s in ok]), 10),
            fmt(peak * 1024 / 1e9 if peak else None),
            fmt(peak * 1024 / nnz if peak and nnz else None), str(len(ok))]) + " |")
    return lines, notes


# ---------------------------------------------------------------------------
# the report
# ---------------------------------------------------------------------------

def liblinear_version(train):
    try:
        text = (train.parent / "linear.h").read_text()
        v = int(re.search(r"LIBLINEAR_VERSION\s+(\d+)", text).group(1))
        return f"{v // 100}.{v % 100:02d}"
    except (OSError, AttributeError):
        return "?"


def header(bench, features):
    commit = subprocess.run(["git", "-C", str(bench.home), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip() or "?"
    mem = "?"
    try:
        mem = next(f"{int(line.split()[1]) / 2**20:.1f} GiB" for line in
                   open("/proc/meminfo") if line.startswith("MemTotal"))
    except (OSError, StopIteration):
        pass
    return [f"Machine: {os.cpu_count()} CPUs, {mem}, load average at start "
            f"{'%.2f %.2f %.2f' % os.getloadavg()}; {platform.system()} {platform.release()}; "
            f"Python {platform.python_version()}.",
            f"linsvm from {bench.home} (HEAD {commit}); LIBLINEAR "
            f"{liblinear_version(bench.liblinear_train) if features['liblinear'] else 'absent'} "
            f"({bench.liblinear_train}); page cache {'dropped' if bench.cold else 'warm'} "
            "before each run.",
            "Command: " + " ".join([Path(sys.argv[0]).name] + sys.argv[1:]), ""]


def start_up_row(bench):
    """What every linsvm run costs whatever the data: a training on a 20-row set, end to
    end and peak RSS (the interpreter, numpy, scipy and linsvm's compiled modules)."""
    tiny = bench.root / "tmp" / "tiny.svm"
    if not bench.dry_run:
        subprocess.run(bench.linsvm("synth", "--n-samples", 20, "--n-features", 20, tiny),
                       check=True, env=bench.env(), cwd=bench.cwd)
    res = bench.measure("start-up", bench.linsvm("train", "-s", "2", "-m", "1", tiny,
                                                 bench.root / "tmp" / "tiny.model"))
    if bench.dry_run or res.get("rc") != 0:
        return []
    return [f"Fixed cost of a linsvm run (`linsvm-train -s 2` on 20 rows): "
            f"{res['wall_s']:.2f} s end to end, peak RSS {res['peak_kb'] * 1024 / 1e6:.0f} MB.", ""]


def liblinear_path(given):
    p = Path(given)
    return p / "train" if p.is_dir() else p


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--table", action="store_true", help="the training table (default mode)")
    ap.add_argument("--cv", action="store_true",
                    help="repeated linsvm-cv runs, with and without --cache")
    ap.add_argument("--big", action="store_true",
                    help="mfn on a 0/1 binary set past 2^31 non-zeros")
    ap.add_argument("--nnz", default="10M,100M,400M", help="sizes, e.g. 200k,10M,400M")
    ap.add_argument("--threads", default="1,2", help="-m values, one row each")
    ap.add_argument("--repeat", type=int, default=3, help="interleaved rounds (medians)")
    ap.add_argument("--rows", default="text,f64,f32,text01,pattern,cache,ll,ll01",
                    help="which rows of --table")
    ap.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="data, caches and logs")
    ap.add_argument("--linsvm-home", type=Path, default=REPO, help="the checkout to measure")
    ap.add_argument("--liblinear", default=str(DEFAULT_LIBLINEAR),
                    help="LIBLINEAR's directory or its train program")
    ap.add_argument("--n-features", type=int, default=20000, help="vocabulary of --table/--cv sets")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk-nnz", type=parse_size, default=parse_size("20M"),
                    help="non-zeros per synth run when generating a text set")
    ap.add_argument("--big-nnz", type=parse_size, default=BIG_NNZ)
    ap.add_argument("--big-features", type=int, default=1_000_000)
    ap.add_argument("--big-row-nnz", type=int, default=400,
                    help="non-zeros per row asked of synth, when it has such an option")
    ap.add_argument("--big-synth-arg", action="append", default=[],
                    help="extra argument for the big synth run, as --big-synth-arg=--opt "
                         "(repeatable; replaces the detected row-length option)")
    ap.add_argument("--cold", action="store_true", help="drop the page cache before each run")
    ap.add_argument("--force", action="store_true", help="skip the free-disk check")
    ap.add_argument("--clean", action="store_true", help="delete each set once measured")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and commands only")
    args = ap.parse_args(argv)
    args.root = args.root.resolve()
    args.threads = [t.strip() for t in args.threads.split(",") if t.strip()]
    args.rows = {r.strip() for r in args.rows.split(",")}
    sizes = [parse_size(s) for s in args.nnz.split(",") if s.strip()]
    if not (args.table or args.cv or args.big):
        args.table = True
    stamp = time.strftime("%Y%m%d-%H%M%S")
    logs = args.root / "runs" / stamp
    for sub in ([] if args.dry_run else [logs]) + [args.root / "tmp"]:
        sub.mkdir(parents=True, exist_ok=True)
    bench = Bench(root=args.root, home=args.linsvm_home.resolve(), logs=logs, cold=args.cold,
                  liblinear_train=liblinear_path(args.liblinear), dry_run=args.dry_run)
    features = detect(bench)
    log("this checkout has: " + ", ".join(f"{k} = {v}" for k, v in features.items()))
    out = header(bench, features) + start_up_row(bench)
    results = {"features": features, "args": vars(args) | {"root": str(args.root),
               "linsvm_home": str(args.linsvm_home), "rows": sorted(args.rows)}, "runs": []}

    def emit(title, lines, notes):
        block = [f"### {title}", ""] + (lines + [""] if lines else []) + [f"- {n}" for n in notes]
        block += [""] if notes else []
        out.extend(block)
        if bench.dry_run:
            print("\n".join([f"### {title}"] + [f"- {n}" for n in notes]), flush=True)
        else:
            print("\n".join(block), flush=True)
            (logs / "tables.md").write_text("\n".join(out) + "\n")
            (logs / "results.json").write_text(json.dumps(results, indent=1, default=str) + "\n")

    for target in sizes if (args.table or args.cv) else []:
        ds = text_set(bench, target, args)
        binary_files(bench, ds, features, args)
        if args.table:
            rows, samples, skipped = run_table(bench, ds, features, args)
            results["runs"] += [s for v in samples.values() for s in v]
            emit(f"linsvm-train -s 2 and LIBLINEAR train -s 2 on {ds.dir.name} "
                 f"({ds.manifest.get('rows')} rows, {ds.nnz} non-zeros)",
                 *table_markdown(ds, rows, samples, skipped))
            if ds.manifest.get("convert"):
                emit(f"linsvm convert on {ds.dir.name}", convert_markdown(ds), [])
        if args.cv:
            modes, res, skipped = run_cv(bench, ds, features, args)
            results["runs"] += [s for v in res.values() for r in v for s in r]
            emit(f"linsvm-cv -s 2 -v 5 -c {CV_GRID}, {CV_RUNS} runs in a row, on {ds.dir.name}",
                 *cv_markdown(ds, modes, res, skipped, args.threads))
        if args.clean and not bench.dry_run:
            shutil.rmtree(ds.dir)
            shutil.rmtree(bench.root / "cache" / ds.dir.name, ignore_errors=True)
            shutil.rmtree(bench.root / "cache" / ("cv-" + ds.dir.name), ignore_errors=True)
    if args.big:
        table, notes = run_big(bench, features, args)
        lines, more = table if table else ([], [])
        emit(f"linsvm-train -s mfn on a 0/1 binary set of {size_label(args.big_nnz)} non-zeros",
             lines, notes + more)
    if not bench.dry_run:
        log(f"tables: {logs / 'tables.md'}")


if __name__ == "__main__":
    main()
