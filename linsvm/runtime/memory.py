"""Memory a solve needs, against memory the process can have.

Every solver keeps dense vectors as long as the weight vector, whose length is
the largest feature index (+1 for the bias), however few features the data
use: one line ``1 2147483647:1`` asks for 16 GiB per vector.  Each solver's
catalog entry (`linsvm.problem.registry.SolverInfo.memory`) estimates the bytes of its
work arrays; `check` compares that with what this process can still get and
refuses, with one line that names the largest index and the remedy
(``linsvm renumber``), before anything is allocated.  `require` is the same
check for other work whose size its arguments fix (``linsvm synth``).

What the process can get is the smallest of: MemAvailable in /proc/meminfo;
RLIMIT_AS less the address space in use; RLIMIT_DATA less the data segment in
use; the cgroup's memory.max less its memory.current.  Any of them that
cannot be read is left out.
"""
from __future__ import annotations

import os
import resource

import numpy as np

from ..errors import DataError
from .threads import resolve_threads

F8 = 8                  # bytes of a float64 / int64
_SMALL = 64 << 20       # below this a solve or an allocation is not checked (no /proc reads)


def _read_kib(path, key):
    try:
        with open(path) as fh:
            for line in fh:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _cgroup_room():
    try:
        with open("/proc/self/cgroup") as fh:
            rel = next((ln.split(":", 2)[2].strip() for ln in fh if ln.startswith("0::")), None)
    except OSError:
        return None
    if rel is None:
        return None
    base = os.path.join("/sys/fs/cgroup", rel.lstrip("/"))
    try:
        with open(os.path.join(base, "memory.max")) as fh:
            limit = fh.read().strip()
        if limit == "max":
            return None
        with open(os.path.join(base, "memory.current")) as fh:
            current = int(fh.read().strip())
        return max(int(limit) - current, 0)
    except (OSError, ValueError):
        return None


def available():
    """(bytes, where) -- the most this process can still allocate, and which
    limit says so; (None, None) when none can be read."""
    found = []
    mem = _read_kib("/proc/meminfo", "MemAvailable")
    if mem is not None:
        found.append((mem, "MemAvailable"))
    for rlim, key, name in ((resource.RLIMIT_AS, "VmSize", "RLIMIT_AS"),
                            (resource.RLIMIT_DATA, "VmData", "RLIMIT_DATA")):
        try:
            soft = resource.getrlimit(rlim)[0]
        except (OSError, ValueError):
            continue
        if soft != resource.RLIM_INFINITY:
            used = _read_kib("/proc/self/status", key) or 0
            found.append((max(soft - used, 0), name))
    room = _cgroup_room()
    if room is not None:
        found.append((room, "cgroup memory.max"))
    return min(found) if found else (None, None)


def fmt_bytes(n):
    """n bytes as text: 512 B, 3.2 MiB, 16.0 GiB."""
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


def distinct_features(X):
    """How many distinct feature indices the CSRBuffers X uses (None if that
    cannot be counted in the memory left)."""
    try:
        return int(np.unique(X.indices).shape[0])
    except MemoryError:
        return None


def require(need, what, error=DataError, remedy=""):
    """Raise `error` (one line: WHAT needs about N but M is available (LIMIT)[; REMEDY])
    when this process cannot get `need` bytes; nothing when it can, or when no limit
    can be read.  For work whose size the arguments fix, checked before allocating."""
    if need < _SMALL:
        return
    have, where = available()
    if have is not None and need > have:
        raise error(f"{what} needs about {fmt_bytes(need)} but {fmt_bytes(have)} is available "
                    f"({where})" + (f"; {remedy}" if remedy else ""))


def check(need, X, solver, log=None):
    """Refuse (DataError) a solve that needs `need` bytes when this process
    cannot get them; log a note when the weight vectors dwarf the data."""
    have, where = available()
    n_features = X.n_features
    if have is not None and need > have:
        used = distinct_features(X)
        what = f"the data use {used} distinct feature{'s' if used != 1 else ''}" \
            if used is not None else "few of them may be used"
        raise DataError(
            f"training -s {solver} needs about {fmt_bytes(need)} but {fmt_bytes(have)} is "
            f"available ({where}): its dense work vectors are as long as the largest feature "
            f"index, {n_features}, and {what}; renumber the features with "
            f"'linsvm renumber IN OUT MAP' (then predict through the same MAP)")
    note(need, X, log)


def note(need, X, log):
    """Say in the progress (log) why a run whose weights dwarf its data is slow."""
    n_features = X.n_features
    if log is not None and n_features > 64 * (X.nnz + X.n_rows) and n_features > 1 << 20:
        log(f"note: {n_features} features but {X.nnz} non-zeros: every iteration does dense "
            f"work over all {n_features} weights (about {fmt_bytes(need)} of work arrays); "
            f"'linsvm renumber' shrinks them to the features in use")


def check_solve(info, X, n_rows, n_weights, n_classes, options, log=None):
    """The check of `check` for one train() call: the solver's own estimate
    (SolverInfo.memory), plus the weight matrix train() fills one column per
    class when it runs a binary solver one-vs-rest."""
    if info.memory is None:
        return
    threads = resolve_threads(options.get("n_threads", 1), X.nnz)
    need = info.memory(n_rows, n_weights, n_classes, X.nnz, options, threads)
    if info.kind == "binary" and n_classes > 2:
        need += F8 * n_weights * n_classes
    if need >= _SMALL:
        check(need, X, info.name, log)
    else:
        note(need, X, log)
