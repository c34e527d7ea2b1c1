"""`linsvm inspect` once its options are parsed: load the model (and the feature names),
print its header in words and its largest weights, as text or as one JSON object
(docs/inspect.md has the schema, `SCHEMA_VERSION`)."""
from __future__ import annotations

import json
import math

import click

from ..errors import DataError
from ..io.features import read_feature_names
from ..model.model import load_model
from ..model.summary import column_meaning, file_format, summarize, top_weights
from ..problem.labels import format_label
from .job import refuse_launch

__all__ = ["inspect", "inspect_document", "SCHEMA_VERSION"]

# the solver options that define the objective, and -e (tol): the "options" line
_OPTIONS = ("loss", "p", "epsilon", "nu", "tol")

SCHEMA_VERSION = 1      # of the JSON object; raised when a key changes meaning or goes


def inspect(model_file, top, features_file, fmt):
    """The inspect command; its arguments are the command line's options."""
    refuse_launch("inspect")
    model = load_model(model_file)
    names = None
    if features_file is not None:
        names = read_feature_names(features_file)
        if len(names.names) < model.n_features_:
            what = "feature map" if names.form == "map" else "vocabulary"
            raise DataError(f"{names.path}: the {what} names {len(names.names)} features, the "
                            f"model {model_file} has {model.n_features_}: it must name every "
                            "feature (line i naming feature i)")
    doc = inspect_document(model, model_file, top, names)
    if fmt == "json":
        click.echo(json.dumps(_finite(doc), indent=1, allow_nan=False))
    else:
        for line in text_lines(doc):
            click.echo(line)


def inspect_document(model, model_file, top, names=None) -> dict:
    """The JSON object `linsvm inspect --format json` prints (docs/inspect.md, "JSON"):
    the model's summary (linsvm.model.summary.summarize) with its file's format, the
    feature names used, and per weight column its `top` largest positive and most
    negative weights."""
    summary = summarize(model)
    words = summary.pop("solver_words")
    fmt = file_format(model_file)
    doc = {"schema": SCHEMA_VERSION, "file": str(model_file), "format": fmt["format"],
           "format_version": fmt["version"], "weights_storage": fmt["weights"]}
    doc.update(summary)
    doc.update(words)
    doc["feature_names"] = None if names is None else {
        "file": names.path, "form": names.form, "count": len(names.names)}
    doc["top"] = top
    W = model.coef_
    columns = []
    for j, (pos, neg) in enumerate(top_weights(model, top)):
        scores, plus, minus = column_meaning(model, j)
        columns.append({
            "column": j + 1,
            "scores": scores,
            "class": float(model.classes_[j]) if model.kind == "multiclass" else None,
            "intercept": summary["intercepts"][j],
            "positive_favours": plus,
            "negative_favours": minus,
            "positive": [_entry(i, W[j, i], names) for i in pos.tolist()],
            "negative": [_entry(i, W[j, i], names) for i in neg.tolist()],
        })
    doc["columns"] = columns
    return doc


def _entry(i, weight, names):
    return {"feature": i + 1, "name": None if names is None else names.names[i],
            "weight": float(weight)}


def _finite(v):
    """v with every float that is not finite replaced by None (JSON has no nan)."""
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {k: _finite(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_finite(x) for x in v]
    return v


def _num(v, digits=6):
    if v is None:
        return "not recorded"
    if isinstance(v, float) and not math.isfinite(v):
        return "n/a"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def _file_words(doc):
    if doc["format"] == "liblinear":
        return f"{doc['file']} (LIBLINEAR's format)"
    return (f"{doc['file']} (linsvm format version {doc['format_version']}, "
            f"{doc['weights_storage']} weights)")


def _solver_words(doc):
    if doc["liblinear_code"] is not None:
        same = doc["same_problem_as"]
        return (f"{doc['solver']} (LIBLINEAR -s {doc['liblinear_code']}"
                + (f"; linsvm's {same} solves the same problem)" if same else ")"))
    return doc["solver"]


def _bias_words(doc):
    if not doc["bias_row"]:
        return "none (-B -1: no constant feature)"
    return (f"{_num(doc['bias'])} (a constant feature of value {_num(doc['bias'])}; its weight "
            "is not listed among the features)")


def _gap_words(doc):
    gap = doc["certified_gap"]
    if gap is None:
        return "not recorded"
    if not math.isfinite(gap):
        return "n/a (no finite bound)"
    return f"{gap:.3g} (the objective is within {100 * gap:.3g}% of the optimum)"


def _classes_words(doc):
    labels = " ".join(format_label(c) for c in doc["classes"])
    if doc["kind"] == "binary":
        return f"{labels} (a decision value > 0 predicts {format_label(doc['classes'][0])})"
    if doc["kind"] in ("regression",):
        return "none (real-valued targets)"
    if doc["kind"] == "ordinal":
        return f"{labels} (ranks, lowest first)"
    return labels or "none"


def header_lines(doc) -> list:
    """The model's header in words: one `name: value` line per field."""
    rows = [("model", _file_words(doc)), ("solver", _solver_words(doc))]
    if doc["objective_minimized"]:
        rows.append(("minimizes", doc["objective_minimized"]))
    rows += [("problem", doc["problem"]),
             ("C", "not used (the one-class objective has nu)" if doc["kind"] == "oneclass"
              else _num(doc["C"]))]
    options = [f"{k} {_num(doc['params'][k])}" for k in _OPTIONS if doc["params"].get(k) is not None]
    if options:
        rows.append(("options", ", ".join(options)))
    rows += [
             ("bias", _bias_words(doc)),
             ("classes", _classes_words(doc)),
             ("features", f"{doc['n_features']} ({doc['nonzero_weights']} non-zero weights "
                          f"in {doc['n_columns']} column{'s' if doc['n_columns'] > 1 else ''})")]
    if doc["thresholds"] is not None:
        rows.append(("thresholds", " ".join(_num(t) for t in doc["thresholds"])))
    if doc["kind"] == "oneclass":
        rows.append(("rho", _num(-doc["offset"])))
    elif doc["offset"]:
        rows.append(("offset", _num(doc["offset"])))
    rows += [("objective", _num(doc["objective"], 10)),
             ("certified gap", _gap_words(doc))]
    if isinstance(doc["stats"].get("kkt_violation"), float):
        rows.append(("KKT violation", _num(doc["stats"]["kkt_violation"], 4)))
    rows += [
             ("iterations", _num(doc["n_iter"])),
             ("training time", "not recorded" if doc["seconds"] is None
              else f"{doc['seconds']:.3f}s"),
             ("probabilities", {"sigmoids": "Platt sigmoids (-b 1)",
                                "logistic": "from the logistic model's decision values",
                                None: "none"}[doc["probability"]])]
    if doc["status"]:
        rows.insert(-1, ("status", doc["status"]))
    width = max(len(name) for name, _ in rows)
    return [f"{name + ':':<{width + 1}} {value}" for name, value in rows]


def _weight_rows(entries, n_features):
    """One line per listed weight: rank, weight, feature index (padded to the widest
    index, so that the names line up) and name."""
    width = len(str(n_features))
    lines = []
    for rank, e in enumerate(entries, 1):
        name = "" if e["name"] is None else f"  {e['name']}"
        lines.append(f"  {rank:>4d}  {e['weight']:>+12.6g}  feature {e['feature']:<{width}d}{name}"
                     .rstrip())
    return lines


def text_lines(doc) -> list:
    """What `linsvm inspect` prints for people: the header, then per column its largest
    weights (none with --top 0)."""
    lines = header_lines(doc)
    if not doc["top"]:
        return lines
    for col in doc["columns"]:
        lines.append("")
        lines.append(f"column {col['column']}: {col['scores']} "
                     f"(intercept {_num(col['intercept'])})")
        for sign, key in (("positive", "positive"), ("negative", "negative")):
            entries = col[key]
            largest = "largest positive" if sign == "positive" else "most negative"
            lines.append(f"  {largest} weights (favour {col[sign + '_favours']}):"
                         + ("" if entries else " none"))
            lines += _weight_rows(entries, doc["n_features"])
    return lines
