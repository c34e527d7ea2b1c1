"""Memory a solve needs, against memory the process can have.

Every solver keeps dense vectors as long as the weight vector, whose length is
the largest feature index (+1 for the bias), however few features the data
use: one line ``1 2147483647:1`` asks for 16 GiB per vector.  Each solver's
catalog entry (`linsvm.problem.registry.SolverInfo.memory`) estimates the bytes of its
work arrays; `check` compares that with what this process can still get and
refuses, with one line that names the largest index and the remedy
(``linsvm renumber``), before anything is allocated.  `require` is the same
check for other work whose size its arguments fix (``linsvm synth``).

What the process can still get (`available`) is the smallest of: MemAvailable in
/proc/meminfo; RLIMIT_AS less the address space in use; RLIMIT_DATA less the data
segment in use; for each memory cgroup from the process's up to the root (v2's
memory.max, v1's memory.limit_in_bytes), its limit less what it holds other than page
cache.  Any of them that cannot be read is left out.  Page cache is not counted as held:
the kernel reclaims it when the cgroup needs room, and the pages of a data file mapped
from disk (docs/streaming.md) are page cache -- a mapped file larger than the limit
fills memory.current with them without leaving a solve less room.

Data beyond memory (`check_in_memory`): the solvers that read the rows in passes
(SolverInfo.streams) train on a mapped file larger than memory, its pages streaming
from disk each pass; the others visit rows in random order and would re-read the file
at every step.  Before one of those starts, the data's bytes (row pointers, indices and
values, whatever their layout, mapped or not) are compared with what the process can
have in all (`capacity`: the limits themselves, not what is left of them), and a solve
whose data cannot fit is refused in one line that names the solvers that stream.
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


_NO_LIMIT = 1 << 62          # a cgroup v1 limit at or above this is "none" (LONG_MAX, page-rounded)
_PROC_CGROUP = "/proc/self/cgroup"
_V1_ROOT = "/sys/fs/cgroup/memory"       # the v1 memory hierarchy's mount
_V2_ROOT = "/sys/fs/cgroup"              # the v2 unified hierarchy's mount


def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    return value if value < _NO_LIMIT else None


def _cache_bytes(path, keys):
    """Page cache of a cgroup (the sum of `keys` in its memory.stat), 0 if unreadable."""
    total = 0
    try:
        with open(path) as fh:
            for line in fh:
                key, _, value = line.partition(" ")
                if key in keys:
                    total += int(value)
    except (OSError, ValueError):
        return 0
    return total


def _cgroup_levels():
    """[(limit, held less page cache, the limit's file name)] of the memory cgroups from
    this process's up to the root of its hierarchy that set a limit: cgroup v2
    (memory.max, memory.current) or v1 (memory.limit_in_bytes, memory.usage_in_bytes);
    the page cache is the file pages of memory.stat (active_file + inactive_file; v1's
    total_ counts include the children)."""
    try:
        with open(_PROC_CGROUP) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    entries = [ln.split(":", 2) for ln in lines if ln.count(":") >= 2]
    v1 = next((e[2] for e in entries if "memory" in e[1].split(",")), None)
    v2 = next((e[2] for e in entries if e[0] == "0" and e[1] == ""), None)
    if v1 is not None:
        root, rel = _V1_ROOT, v1
        files = ("memory.limit_in_bytes", "memory.usage_in_bytes",
                 ("total_active_file", "total_inactive_file"))
    elif v2 is not None:
        root, rel = _V2_ROOT, v2
        files = ("memory.max", "memory.current", ("active_file", "inactive_file"))
    else:
        return []
    levels = []
    parts = [p for p in rel.strip().split("/") if p]
    while True:                 # the mount's own level too: a namespace's root has limits
        base = os.path.join(root, *parts)
        limit = _read_int(os.path.join(base, files[0]))
        if limit is not None:
            used = _read_int(os.path.join(base, files[1])) or 0
            cache = _cache_bytes(os.path.join(base, "memory.stat"), files[2])
            levels.append((limit, max(used - cache, 0), files[0]))
        if not parts:
            return levels
        parts.pop()


def _cgroup_room():
    """(room, "cgroup FILE"): the room the memory cgroups leave this process, the least
    over them of the limit less what the cgroup holds other than page cache, and the
    limit's file (v2 memory.max, v1 memory.limit_in_bytes); (None, None) without one."""
    levels = _cgroup_levels()
    if not levels:
        return None, None
    room, name = min((max(limit - held, 0), name) for limit, held, name in levels)
    return room, f"cgroup {name}"


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
    room, where = _cgroup_room()
    if room is not None:
        found.append((room, where))
    return min(found) if found else (None, None)


def capacity():
    """(bytes, where) -- the most memory this process can have in all, whatever it holds
    now, and which limit says so; (None, None) when none can be read.  The smallest of:
    the memory cgroups' limits (the cap itself, not the cap less memory.current: page
    cache counts there but is reclaimed, so a mapped file's pages are room); RAM, as
    MemAvailable (free memory and reclaimable page cache, a mapped file's among it) plus
    the process's own anonymous memory (RssAnon, which it holds already); RLIMIT_AS and
    RLIMIT_DATA."""
    found = []
    mem = _read_kib("/proc/meminfo", "MemAvailable")
    if mem is not None:
        found.append((mem + (_read_kib("/proc/self/status", "RssAnon") or 0), "MemAvailable"))
    for rlim, name in ((resource.RLIMIT_AS, "RLIMIT_AS"), (resource.RLIMIT_DATA, "RLIMIT_DATA")):
        try:
            soft = resource.getrlimit(rlim)[0]
        except (OSError, ValueError):
            continue
        if soft != resource.RLIM_INFINITY:
            found.append((soft, name))
    found.extend((limit, f"cgroup {name}") for limit, _, name in _cgroup_levels())
    return min(found) if found else (None, None)


def data_bytes(X):
    """Bytes of the CSR buffers of X (a CSRBuffers): row pointers, column indices and the
    values if it stores any (a pattern stores none), as laid out -- in memory or mapped
    from a file."""
    return sum(int(a.nbytes) for a in (getattr(X, name, None) for name in
                                       ("indptr", "indices", "data")) if a is not None)


def check_in_memory(X, solver, streaming, kind_noun="a model"):
    """Refuse (DataError, one line) a solve by `solver`, which visits the rows in random
    order and so needs them in memory, when the data's bytes (data_bytes) exceed what this
    process can have (capacity).  streaming: the names of the solvers of the same problem
    that read the rows in passes (SolverInfo.streams), which the message offers;
    kind_noun: what they train ("a one-class model"), for a message without any.  Nothing for data under 64 MiB
    (no /proc reads) or when no limit can be read."""
    need = data_bytes(X)
    if need < _SMALL:
        return
    have, where = capacity()
    if have is None or need <= have:
        return
    head = (f"data ({fmt_bytes(need)}) exceed the memory this process can have "
            f"({fmt_bytes(have)}, {where}): solver {solver} needs them in memory")
    if streaming:
        raise DataError(f"{head}; use -s {', '.join(streaming)}, which read the rows in passes")
    raise DataError(f"{head}, and no solver that trains {kind_noun} reads the rows in passes: "
                    "train on a share of the rows, or where more memory is free")


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


def check_solve(info, X, n_rows, n_weights, n_classes, options, log=None, streaming=(),
                kind_noun="a model"):
    """The checks for one train() call: a solver that does not stream (SolverInfo.streams
    False) is refused when the data cannot fit in memory (check_in_memory, offering
    `streaming`); then `check` of the solver's own estimate (SolverInfo.memory), plus the
    weight matrix train() fills one column per class when it runs a binary solver
    one-vs-rest."""
    if not info.streams:
        check_in_memory(X, info.name, streaming, kind_noun)
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
