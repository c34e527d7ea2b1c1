"""What a fit reports besides its weights: warnings, and the statistics of several solves.

A solve's warning (FitResult.warning) is about its accuracy when it did not
converge (linsvm.ConvergenceWarning) and a note otherwise (linsvm.LinsvmWarning).
train() and cross_validate() emit them with warnings.warn, attributed to their
caller, or, inside `collecting_warnings()`, append them to a list instead: the
command line prints them as one line each, and cross-validation folds hand
theirs to the main thread, which merges them.  Several units (one-vs-rest columns,
folds) that give the same message up to its numbers are reported once, with the
units that gave it (`group_warnings`).
"""
from __future__ import annotations

import contextlib
import contextvars
import re

from ..errors import warn as _warn

__all__ = ["collecting_warnings", "warning_records", "group_warnings", "merge_column_warnings",
           "report_warnings", "merge_stats"]

_SINK = contextvars.ContextVar("linsvm_warning_sink", default=None)


@contextlib.contextmanager
def collecting_warnings():
    """Within this block (in this thread or task), train() and cross_validate()
    append their warnings to the yielded list as (message, is_convergence) pairs
    instead of emitting them.  A worker thread starts with no sink (it emits,
    unless it opens one)."""
    sink = []
    token = _SINK.set(sink)
    try:
        yield sink
    finally:
        _SINK.reset(token)


def warning_records(results):
    """Per solve (weight column), its warnings as (message, is_convergence) pairs: a
    FitResult's warning is about its accuracy when it did not converge."""
    return [[(r.warning, not r.converged)] if r.warning is not None else [] for r in results]


def group_warnings(per_unit):
    """Group the records of several units (columns, folds) by message up to its
    numbers: [((first message, is_convergence), [units that gave it])], in order
    of first appearance."""
    groups = {}
    for unit, records in enumerate(per_unit):
        for message, convergence in records:
            key = re.sub(r"[-+]?\d[\d.eE+-]*", "#", message)
            group = groups.setdefault(key, [(message, convergence), []])
            if not group[1] or group[1][-1] != unit:
                group[1].append(unit)
    return list(groups.values())


def merge_column_warnings(per_column, classes):
    """One warning per kind of message of a one-vs-rest run, not one per column
    (105 columns capped would be 105 lines): the first column's message, with
    the number of columns and their classes."""
    out = []
    for (message, convergence), cols in group_warnings(per_column):
        if len(cols) == 1:
            out.append((f"class {classes[cols[0]]:g} vs rest: {message}", convergence))
            continue
        names = ", ".join(f"{classes[j]:g}" for j in cols[:8]) + (", ..." if len(cols) > 8 else "")
        out.append((f"{len(cols)} of {len(per_column)} one-vs-rest columns (classes {names}): "
                    f"{message} (shown for class {classes[cols[0]]:g})", convergence))
    return out


def report_warnings(records, stacklevel=3):
    """Emit (message, is_convergence) records with warnings.warn, attributed
    `stacklevel` frames up (the caller of train()), or append them to the sink of
    collecting_warnings()."""
    sink = _SINK.get()
    if sink is not None:
        sink.extend(records)
        return
    for message, convergence in records:
        _warn(message, convergence, stacklevel=stacklevel)


def merge_stats(col_stats, seconds):
    """The model's statistics from those of its solves (one per weight column):
    objective, n_iter, cg_iter and n_active summed, kkt_violation the largest;
    a single solve also keeps every other number it reports; STRING_STATS below."""
    if len(col_stats) == 1:
        st = col_stats[0]
        stats = {"objective": float(st["objective"]), "n_iter": int(st["n_iter"]), "seconds": seconds}
        for key, value in st.items():
            if key not in stats and not key.startswith("_") and isinstance(value, (int, float)) \
                    and not isinstance(value, bool) or key in STRING_STATS:
                stats[key] = float(value) if key == "kkt_violation" else value
        return stats
    stats = {"objective": float(sum(s["objective"] for s in col_stats)),
             "n_iter": int(sum(s["n_iter"] for s in col_stats)),
             "seconds": seconds}
    for key in ("cg_iter", "n_active"):
        if all(key in s for s in col_stats):
            stats[key] = int(sum(s[key] for s in col_stats))
    if all("kkt_violation" in s for s in col_stats):
        stats["kkt_violation"] = float(max(s["kkt_violation"] for s in col_stats))
    for key in STRING_STATS:
        values = {s.get(key) for s in col_stats}
        if len(values) == 1 and None not in values:
            stats[key] = values.pop()
    return stats


# the words a solve reports that a model's stats keep (one column's, or the value every
# column agrees on): weight_exchange, "split" or "allreduce" (a distributed finite
# Newton solve's CGLS arrangement)
STRING_STATS = ("weight_exchange",)
