"""LIBLINEAR's model file format: reading it into a linsvm model, writing one.

A LIBLINEAR model file (``save_model`` in LIBLINEAR's linear.cpp) is a header
of ``KEY VALUE...`` lines, ``w`` alone on a line, then one line per feature
(and a last one for the bias feature) of ``nr_w`` numbers, each followed by a
space::

    solver_type L2R_L2LOSS_SVC_DUAL
    nr_class 2
    label 1 -1
    nr_feature 3
    bias 1
    w
    0.5
    -1.25
    0
    0.125

``nr_w`` is 1 for two classes and ``nr_class`` otherwise, except for MCSVM_CS
(Crammer-Singer), which always stores ``nr_class`` columns; ``bias >= 0`` means
a bias feature and its row (the last) (LIBLINEAR's ``-B 0`` keeps an inert one), ``bias
-1`` none.  Labels are integers.  Numbers are written with ``%.17g`` so that
they read back bit for bit.

Reading (`_LiblinearParser`, called by `linsvm.model.load_model`, which tells
the formats apart by the first line) gives a model with solver
``liblinear:<solver_type>`` (`SOLVER_PREFIX`), params ``{"bias": b}``, no
stats, and kind binary (two classes, one column) or multiclass; a regression
model (`LIBLINEAR_OTHERS`, -s 11 to 13) has kind regression and no classes, a
one-class model (-s 21) kind oneclass, classes 1 and -1 and offset -rho.

Writing (`chunks`, for ``Model.save(format="liblinear")``) picks the
solver_type from the registry (`solver_type_for`): a solver's
`SolverInfo.liblinear_codes` say which of LIBLINEAR's ``-s`` codes solve the
same problem, with which options, and the name LIBLINEAR's files give each code
(`SOLVER_TYPES` is built from them).  The solver_type does not change LIBLINEAR's prediction;
it tells the reader which objective was solved.  Ordinal models (no thresholds
in LIBLINEAR) and labels that are not 32-bit integers cannot be written
(`int_labels` raises ModelError before anything is written).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ModelError
from ..problem.catalog import SOLVERS
from ..problem.kinds import get_kind
from .tokens import Parser, fmt_float, parse_float, parse_int, row_chunks

__all__ = ["SOLVER_TYPES", "SOLVER_PREFIX", "LIBLINEAR_CLASSIFIERS", "LIBLINEAR_OTHERS",
           "is_liblinear_solver", "liblinear_kinds", "solver_type_for", "int_labels", "layout",
           "chunks", "check_solver"]

# LIBLINEAR's solver_type enum (linear.h): the -s code -> the name its model files
# carry, as the catalog's solvers declare them (SolverInfo.liblinear_codes, in code
# order; the catalog covers every code of LIBLINEAR 2.50).  Classification models (the
# codes of classifier kinds, 0-7) share one prediction rule; regression (11-13) and
# one-class (21) models have no labels, one column, and the one-class model a rho.
_CODES = sorted((code, lc.solver_type, info.kind) for info in SOLVERS.values()
                for code, lc in info.liblinear_codes.items())
SOLVER_TYPES = {code: name for code, name, _ in _CODES}
# The model kind of each type (its solver's; a binary solver's one-vs-rest models are
# multiclass, classifiers all the same).
_TYPE_KINDS = {name: kind for _, name, kind in _CODES}
LIBLINEAR_CLASSIFIERS = tuple(name for name in SOLVER_TYPES.values()
                              if get_kind(_TYPE_KINDS[name]).classifier)
LIBLINEAR_OTHERS = tuple(name for name in SOLVER_TYPES.values() if name not in LIBLINEAR_CLASSIFIERS)
# The model kind of each non-classification type.
_OTHER_KINDS = {name: _TYPE_KINDS[name] for name in LIBLINEAR_OTHERS}
_MCSVM_CS = SOLVER_TYPES[4]
# The type written for a model without a matching LIBLINEAR code, by kind: the
# L2-loss SVM's for classifiers (any classification type gives the same prediction),
# for another kind its first type (regression: the L2-loss SVR's).
_ANY_TYPE = SOLVER_TYPES[2]
_ANY_TYPE_OF_KIND = {}
for _name, _kind in _OTHER_KINDS.items():
    _ANY_TYPE_OF_KIND.setdefault(_kind, _name)

# Solver names of models read from LIBLINEAR files: SOLVER_PREFIX + solver_type.
SOLVER_PREFIX = "liblinear:"

# scikit-learn's names of the two hinge losses, accepted for "l1" / "l2" in the params
# of a model built by hand.
_VALUE_ALIASES = {"hinge": "l1", "squared_hinge": "l2"}


def is_liblinear_solver(name) -> bool:
    """True for ``liblinear:<solver_type>`` with a LIBLINEAR solver_type."""
    return isinstance(name, str) and name.startswith(SOLVER_PREFIX) \
        and name[len(SOLVER_PREFIX):] in SOLVER_TYPES.values()


def liblinear_kinds(name) -> tuple:
    """The model kinds of ``liblinear:<solver_type>`` models."""
    kind = _OTHER_KINDS.get(name[len(SOLVER_PREFIX):])
    return (kind,) if kind else ("binary", "multiclass")


def _same_value(given, implied) -> bool:
    """Whether a model's option value `given` is the value `implied` by a LIBLINEAR code."""
    if given is None:
        return False
    text = str(given).lower()
    return _VALUE_ALIASES.get(text, text) == str(implied).lower()


def solver_type_for(solver: str, params: dict) -> str:
    """LIBLINEAR's solver_type name for a model trained by `solver` with options `params`.

    A model read from a LIBLINEAR file keeps its own type.  A registered solver
    takes the type of its first LIBLINEAR code (`SolverInfo.liblinear_codes`, in
    code order) whose implied options all equal the model's (dcd with loss l1:
    -s 3, L2R_L1LOSS_SVC_DUAL; with l2: -s 1; mfn: -s 2; sdm-cs: -s 4,
    MCSVM_CS).  Any other model is written as L2R_L2LOSS_SVC: the type does not
    change LIBLINEAR's prediction.
    """
    if is_liblinear_solver(solver):
        return solver[len(SOLVER_PREFIX):]
    info = SOLVERS.get(solver)
    if info is not None:
        for _, liblinear in sorted(info.liblinear_codes.items()):
            if all(_same_value(params.get(k), v) for k, v in liblinear.implied.items()):
                return liblinear.solver_type
        return _ANY_TYPE_OF_KIND.get(info.kind, _ANY_TYPE)
    return _ANY_TYPE


def check_solver(solver) -> None:
    """ModelError for a model of `solver` that LIBLINEAR's file cannot describe: a
    multinomial logistic model (softmax; a logistic loss over all classes jointly).
    LIBLINEAR has none: its `predict -b 1` would read the columns as one-vs-rest
    log-odds and normalise sigmoids, not the softmax the model was trained for."""
    info = SOLVERS.get(solver) if isinstance(solver, str) else None
    if info is not None and info.probabilities and info.kind == "multiclass":
        raise ModelError(f"{solver} models cannot be written in LIBLINEAR format (LIBLINEAR has "
                         "no multinomial logistic regression: its predict -b 1 would give "
                         "one-vs-rest probabilities); use the linsvm format")


def int_labels(kind=None, classes=None) -> list:
    """The int labels of a model of `kind` with `classes`, as LIBLINEAR's file needs them
    (None for regression and one-class models, whose files have no labels), or
    ModelError: an ordinal model (LIBLINEAR has no thresholds) or a label that is not
    a 32-bit integer cannot be written.  What is not given is not checked."""
    if kind is not None and not get_kind(kind).liblinear:
        raise ModelError(f"{kind} models cannot be written in LIBLINEAR format "
                         f"({get_kind(kind).liblinear_note}); use the linsvm format")
    if kind in _ANY_TYPE_OF_KIND:
        return None
    out = []
    for c in ([] if classes is None else np.asarray(classes, dtype=np.float64).reshape(-1).tolist()):
        if c != math.floor(c) or not (-2**31 <= c < 2**31):
            raise ModelError(f"cannot write LIBLINEAR format: class label {fmt_float(c)} "
                             "is not a 32-bit integer (LIBLINEAR labels are int)")
        out.append(int(c))
    return out


def layout(model):
    """Return (solver_type, labels) for writing `model` in LIBLINEAR format, or raise ModelError.

    LIBLINEAR stores nr_w columns: 1 for two classes, nr_class otherwise,
    except MCSVM_CS which always stores nr_class.  So a one-column model is
    written with a non-CS type, a two-class two-column model as MCSVM_CS
    (the only layout that keeps both columns; LIBLINEAR then predicts by the
    sign of the first column, which equals the argmax when, as for every
    Crammer-Singer or Weston-Watkins solution, w_1 = -w_0), and k >= 3
    columns with the type `solver_type_for` gives.
    """
    check_solver(model.solver)
    out = int_labels(model.kind, model.classes_)
    name = solver_type_for(model.solver, model.params)
    if out is None:                             # regression, one-class: one column, no labels
        if model.offset_ != 0 and model.kind != "oneclass" and not model.bias > 0:
            raise ModelError("LIBLINEAR's model file has no place for this model's offset "
                             f"({fmt_float(model.offset_)}: the mean target the solver took out) "
                             "without a bias feature: save it in linsvm's format, or train "
                             "with -B 1 (the offset then goes into the bias weight)")
        return name, out
    k, n_columns = len(out), model.weights.shape[1]
    if n_columns == 1 and k == 2 and name == _MCSVM_CS:
        name = _ANY_TYPE
    elif n_columns == 2 and k == 2:
        name = _MCSVM_CS
    return name, out


def chunks(model, solver_type, labels):
    """Yield `model` as LIBLINEAR writes it ('%.17g' values, each followed by a space), in
    pieces of text; `solver_type` and `labels` are what `layout` returned."""
    W = model.weights
    has_bias_row = W.shape[0] == model.n_features_ + 1
    bias = model.bias if has_bias_row else -1.0    # LIBLINEAR: bias >= 0 has a row
    head = [f"solver_type {solver_type}", f"nr_class {2 if labels is None else len(labels)}"]
    if labels is not None:
        head.append(f"label {' '.join(str(c) for c in labels)}")
    head += [f"nr_feature {model.n_features_}", f"bias {'%.17g' % bias}"]
    if model.kind == "oneclass":
        head.append(f"rho {'%.17g' % -model.offset_}")
    elif model.offset_ != 0:                    # into the bias weight (layout checked bias > 0)
        W = np.array(W)
        W[-1] += model.offset_ / model.bias
    yield "\n".join(head) + "\nw\n"
    row = "%.17g " * W.shape[1] + "\n"
    for chunk in row_chunks(W):
        yield (row * chunk.shape[0]) % tuple(chunk.ravel().tolist())


class _LiblinearParser(Parser):
    """Reader of LIBLINEAR's model files (header keys, then 'w' and one row per feature)."""

    REQUIRED = ("solver_type", "nr_class", "nr_feature", "bias")

    def parse(self) -> dict:
        """Read the file; return the fields of its Model (keyword arguments of Model())."""
        seen = {}
        values = {}
        while True:
            i, line = self.header_line(
                lambda n: f"truncated file: the LIBLINEAR header has no 'w' line (file ends after line {n})")
            toks = line.split()
            if not toks:
                raise self.error(i, "blank line in the header")
            key = toks[0]
            if key == "w":
                if len(toks) != 1:
                    raise self.error(i, "'w' takes no value")
                break
            if key in seen:
                raise self.error(i, f"duplicate '{key}' line (first on line {seen[key] + 1})")
            seen[key] = i
            if key == "solver_type":
                name = self.one_token(i, toks, "a LIBLINEAR solver name")
                if name not in SOLVER_TYPES.values():
                    raise self.error(i, f"unknown LIBLINEAR solver_type {name!r}")
                values[key] = name
            elif key == "nr_class":
                values[key] = self.count(i, toks, "an integer >= 1", 1)
            elif key == "nr_feature":
                values[key] = self.count(i, toks, "an integer >= 0", 0)
            elif key == "bias":
                values[key] = self.number(i, toks, "a finite number")
            elif key == "label":
                labels = [parse_int(t) for t in toks[1:]]
                if not labels or None in labels:
                    raise self.error(i, "'label' needs integer class labels")
                if len(set(labels)) != len(labels):
                    raise self.error(i, "duplicate class label in 'label'")
                values[key] = labels
            elif key == "rho":
                values[key] = self.number(i, toks, "a finite number")
            elif parse_float(key, finite=False) is not None:
                raise self.error(i, "a number where a header key belongs (no 'w' line before the weights?)")
            else:
                raise self.error(i, f"unknown key {key!r} in the LIBLINEAR model header")

        for key in self.REQUIRED:
            if key not in values:
                raise self.error(i, f"the LIBLINEAR header has no '{key}' line")
        name = values["solver_type"]
        kind, labels, offset = self._kind_labels_offset(i, name, values, seen)
        k = values["nr_class"]
        n_columns = 1 if (k == 2 and name != _MCSVM_CS) else k
        bias = values["bias"]
        n_features = values["nr_feature"]
        n_rows = n_features + (1 if bias >= 0 else 0)       # LIBLINEAR: bias >= 0 adds a feature
        W = self.allocate(n_rows, n_columns)
        s = self.stream
        s.text_rows(W.reshape(-1), n_rows, n_columns, lambda: self.file_error(
            f"truncated file: expected {n_rows} weight rows after 'w' on line {i + 1}, "
            f"found {s.lineno - i - 1}"))
        if s.readline() is not None:
            raise self.error(s.lineno - 1, f"unexpected content after the {n_rows} weight rows")
        if kind is None:
            kind = "binary" if (k == 2 and n_columns == 1) else "multiclass"
        return dict(solver=SOLVER_PREFIX + name, classes=labels, weights=W, bias=bias,
                    params={"bias": bias}, stats={}, n_features=n_features, kind=kind,
                    offset=offset)

    def _kind_labels_offset(self, i, name, values, seen):
        """(kind or None for a classifier, class labels, offset) of a header: a classifier
        needs its 'label' line; a regression or one-class model has none (and nr_class
        2), a one-class model a 'rho' (offset -rho)."""
        k = values["nr_class"]
        kind = _OTHER_KINDS.get(name)
        if kind is None:
            if "label" not in values:
                raise self.error(i, "the LIBLINEAR header has no 'label' line")
            labels = values["label"]
            if len(labels) != k:
                raise self.error(seen["label"], f"'label' lists {len(labels)} classes but nr_class is {k}")
            if "rho" in values:
                raise self.error(seen["rho"], f"'rho' belongs to one-class models, not {name}")
            return None, labels, 0.0
        if k != 2:
            raise self.error(seen["nr_class"], f"a LIBLINEAR {name} model has nr_class 2, not {k}")
        if "label" in values:
            raise self.error(seen["label"], f"a LIBLINEAR {name} model has no 'label' line")
        if kind == "oneclass":
            if "rho" not in values:
                raise self.error(i, "the LIBLINEAR one-class header has no 'rho' line")
            return kind, [1.0, -1.0], -values["rho"]
        if "rho" in values:
            raise self.error(seen["rho"], f"'rho' belongs to one-class models, not {name}")
        return kind, [], 0.0
