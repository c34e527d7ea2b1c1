"""What a model file says about itself (`linsvm inspect`): its header in words and the
features with the largest weights.

`summarize` gathers what a model records -- solver and its objective, kind, C, bias,
classes, the training statistics, the certified duality gap -- as plain values;
`top_weights` finds, per weight column, the k largest positive and the k most negative
feature weights; `column_meaning` says what a column's positive and negative weights
favour; `file_format` reads which format a file is in.  None of them prints.

The certified gap is the relative duality gap (P - D) / |P| of the solution, P the
primal objective and D a dual objective value reached (an upper bound on the relative
suboptimality of P): the solver's own `gap` statistic, which is relative, or else
computed from the `objective` and `dual_objective` statistics when both are recorded.
"""
from __future__ import annotations

import math

import numpy as np

from ..problem.catalog import SOLVERS
from ..problem.labels import format_label
from .format_liblinear import SOLVER_PREFIX, SOLVER_TYPES
from .format_linsvm import FORMAT_MAGIC

__all__ = ["summarize", "top_weights", "column_meaning", "file_format", "certified_gap",
           "PROBLEMS"]

# a model's kind in words
PROBLEMS = {"binary": "binary classification", "multiclass": "multi-class classification",
            "ordinal": "ordinal regression (ranks)", "regression": "regression",
            "oneclass": "one-class (novelty detection)"}

_HEADER_LINES = 10000       # file_format reads at most this many lines before the weights


def file_format(path) -> dict:
    """The format of the model file `path` (already loaded, so valid): {"format":
    "linsvm" or "liblinear", "version": linsvm's format version (None for LIBLINEAR's),
    "weights": "text" or "binary"}, from its header lines."""
    with open(path, "rb") as fh:
        first = fh.readline().split()
        if first[:1] == [FORMAT_MAGIC.encode("ascii")]:
            for _ in range(_HEADER_LINES):
                toks = fh.readline().split()
                if toks[:1] == [b"weights"]:
                    return {"format": "linsvm", "version": int(first[1]),
                            "weights": "binary" if len(toks) > 2 else "text"}
            return {"format": "linsvm", "version": int(first[1]), "weights": "text"}
    return {"format": "liblinear", "version": None, "weights": "text"}


def certified_gap(stats) -> float | None:
    """The certified relative duality gap of a model's `stats` (module notes), or None
    when they record none."""
    gap = stats.get("gap")
    if isinstance(gap, (int, float)) and not isinstance(gap, bool):
        return float(gap)
    P, D = stats.get("objective"), stats.get("dual_objective")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (P, D)):
        return None
    diff = max(float(P) - float(D), 0.0)
    return diff / abs(P) if P != 0 else (0.0 if diff == 0 else math.inf)


def _solver_words(solver) -> dict:
    """The solver's objective and paper from the catalog; for a LIBLINEAR file's
    `liblinear:<TYPE>`, LIBLINEAR's -s code and the linsvm solver of the same problem."""
    out = {"objective_minimized": None, "paper": None, "liblinear_code": None,
           "same_problem_as": None}
    info = SOLVERS.get(solver)
    if solver.startswith(SOLVER_PREFIX):
        name = solver[len(SOLVER_PREFIX):]
        code = next(c for c, t in SOLVER_TYPES.items() if t == name)
        out["liblinear_code"] = code
        info = next((s for s in SOLVERS.values() if code in s.liblinear_codes), None)
        out["same_problem_as"] = None if info is None else info.name
    if info is not None:
        out["objective_minimized"], out["paper"] = info.objective, info.paper
    return out


def _problem_words(model) -> str:
    """The model's kind in words; a multi-class model of a binary solver (or of a
    LIBLINEAR code other than Crammer-Singer's -s 4) says it is one-vs-rest."""
    words = PROBLEMS[model.kind]
    if model.kind != "multiclass":
        return words
    solver = model.solver
    if solver.startswith(SOLVER_PREFIX):
        ovr = solver[len(SOLVER_PREFIX):] != SOLVER_TYPES[4]
    else:
        info = SOLVERS.get(solver)
        ovr = info is not None and info.kind == "binary"
    return words + (", one-vs-rest (a binary model per class)" if ovr else "")


def _probability(model) -> str | None:
    """How the model gives probabilities: "sigmoids" (Platt, -b 1), "logistic" (its own
    link), or None."""
    if model.probability_ is not None:
        return "sigmoids"
    return "logistic" if model.link_ is not None else None


def _number(stats, key):
    v = stats.get(key)
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def summarize(model) -> dict:
    """What `model` (a Model) records, as plain values (JSON-ready but for nan/inf):
    solver, solver_words (catalog objective, paper, LIBLINEAR code), kind, problem (the
    kind in words, one-vs-rest said), C (None when not recorded), bias, bias_row
    (whether the weights have a bias row), classes (labels in model order), n_features, n_columns, nonzero_weights
    (non-zero feature weights, the bias row left out), objective, dual_objective,
    certified_gap (`certified_gap`), n_iter, seconds (training time), status,
    probability ("sigmoids", "logistic" or None), thresholds (ordinal, else None),
    offset, intercepts (per column: bias * its bias weight plus the offset), params and
    stats (everything the file records)."""
    stats, params = model.stats, model.params
    C = params.get("C")
    return {
        "solver": model.solver,
        "solver_words": _solver_words(model.solver),
        "kind": model.kind,
        "problem": _problem_words(model),
        "C": C if isinstance(C, (int, float)) and not isinstance(C, bool) else None,
        "bias": model.bias,
        "bias_row": model.weights.shape[0] == model.n_features_ + 1,
        "classes": [float(c) for c in model.classes_],
        "n_features": model.n_features_,
        "n_columns": model.weights.shape[1],
        "nonzero_weights": int(np.count_nonzero(model.coef_)),
        "objective": _number(stats, "objective"),
        "dual_objective": _number(stats, "dual_objective"),
        "certified_gap": certified_gap(stats),
        "n_iter": _number(stats, "n_iter"),
        "seconds": _number(stats, "seconds"),
        "status": stats.get("status") if isinstance(stats.get("status"), str) else None,
        "probability": _probability(model),
        "thresholds": None if model.thresholds_ is None else [float(t) for t in model.thresholds_],
        "offset": model.offset_,
        "intercepts": [float(v) for v in model.intercept_],
        "params": params,
        "stats": stats,
    }


def column_meaning(model, column) -> tuple:
    """(what weight column `column` (0-based) scores, what its positive weights favour,
    what its negative weights favour), in words."""
    c = [format_label(v) for v in model.classes_]
    if model.kind == "binary":
        return (f"class {c[0]} against {c[1]}", f"class {c[0]}", f"class {c[1]}")
    if model.kind == "multiclass":
        return (f"class {c[column]}", f"class {c[column]}", f"not class {c[column]}")
    if model.kind == "ordinal":
        return ("the rank", "higher ranks", "lower ranks")
    if model.kind == "oneclass":
        return ("inliers (+1) against outliers (-1)", "inliers (+1)", "outliers (-1)")
    return ("the target", "larger targets", "smaller targets")


def _largest(w, k):
    """0-based indices of the k largest entries of w among those > 0, largest first,
    the smaller index first on ties."""
    idx = np.flatnonzero(w > 0) if k > 0 else np.zeros(0, dtype=np.intp)
    if idx.size > k:
        kth = np.partition(w[idx], idx.size - k)[idx.size - k]     # the k-th largest value
        idx = idx[w[idx] >= kth]
    order = np.lexsort((idx, -w[idx]))
    return idx[order][:k]


def top_weights(model, k) -> list:
    """Per weight column of `model`, (positive, negative): 0-based indices of the k
    features with the largest weights > 0 (largest first) and of the k with the most
    negative weights < 0 (most negative first); ties go to the smaller index.  The bias
    row is not a feature and is left out; zero weights are never listed."""
    W = model.coef_                             # (n_columns, n_features)
    out = []
    for column in range(W.shape[0]):
        w = np.asarray(W[column], dtype=np.float64)
        out.append((_largest(w, k), _largest(-w, k)))
    return out

