"""linsvm's own model file format (version 2, 3 with probabilities, 4 with binary weights):
writing it, reading versions 1 to 4.

``Model.save(path)`` writes the linsvm format, version 2, a self-describing
text file (all floats are written in their shortest exact form, Python's
``repr`` in the C locale, with an integral ``.0`` dropped, so they read back
bit for bit)::

    linsvm_model 2
    solver mfn
    kind binary
    n_features 3
    bias 1
    classes 1 -1
    n_columns 1
    param C float 1
    param bias float 1
    param loss str "l2"
    param seed int 0
    param max_iter none
    stat objective float 12.345678901234567
    stat n_iter int 7
    weights 4
    0.5
    -1.25
    0
    0.125
    end

* Line 1 is ``linsvm_model <version>``.  Header lines follow in any order,
  each at most once: ``solver NAME`` (a registered solver or
  ``liblinear:<solver_type>``), ``kind binary|multiclass|ordinal|regression|oneclass``
  (the kinds the solver makes), ``n_features N``, ``bias B``, ``classes C1 C2 ...``
  (model order; none for a regression model), ``n_columns K``, for ordinal models
  only ``thresholds T1 ... T(k-1)``, and ``offset V`` when the model adds a constant
  V to its decision values (one-class: -rho; a regression solver's centering).
* Models with probability sigmoids (``linsvm-train -b 1``,
  `linsvm.fit.calibration.calibrate`) are written as version 3 (all others stay
  version 2, byte for byte, readable by older linsvm) and carry two more
  header lines, as LIBSVM names them: ``probA A1 ...`` and ``probB B1 ...``,
  one value for a two-class model (the sigmoid of ``classes_[0]``) and one
  per class column for k > 2 classes (`linsvm.model.Model`'s `probability`).
  Only version 3 may have them; both or neither; never for ordinal models.
* ``param NAME TYPE [VALUE]`` and ``stat NAME TYPE [VALUE]`` (any number, names
  unique within their group) record the training options and statistics with
  their Python type: ``float`` / ``int`` (decimal), ``bool`` (``true`` /
  ``false``), ``str`` (a JSON string literal) or ``none`` (no value).
* ``weights R`` starts the matrix: R lines of K numbers separated by single
  spaces, row j holding the weights of feature j + 1 (file numbering) in
  every column; the bias row last.  R = n_features + 1 when bias > 0,
  n_features when bias < 0, and either when bias = 0 (LIBLINEAR's ``-B 0``
  keeps a row for its always-zero bias feature).
* Or, binary weights: ``weights R binary float64-le crc32:XXXXXXXX``, then
  exactly R * K * 8 bytes (the matrix in row-major order, IEEE 754 doubles,
  little-endian) and a newline.  8 bytes per weight: LIBLINEAR's file size or
  less, read without parsing.  Files with binary weights are written as version
  4, whose crc32 (hex) is that of every header line before the weights line
  (newlines included) followed by the weight bytes, so that a corrupted
  ``offset``, ``classes``, ``thresholds``, ``bias`` or sigmoid line is caught as
  surely as a corrupted weight; in versions 2 and 3 it covers the weight bytes
  only (still read).  Version 4 allows what version 3 does (``probA`` /
  ``probB``) and has binary weights only.
* A regression model's ``offset`` is its ``stat y_offset`` (the centering of the
  targets); where the stat is there, the two must agree.
* ``end`` closes the file; nothing may follow it.

``format="linsvm"`` writes text weights for models of at most
BINARY_MIN_ENTRIES (2**20) weights and binary ones above;
``"linsvm-text"`` and ``"linsvm-binary"`` force one form.  Version 1 files
(text weights, bias 0 without a row) are still read; version 2 added the
binary form and bias 0 with a row.

Writing (`chunks`) yields the file in pieces: the text of up to
`_CHUNK_ENTRIES` weights at a time, or the binary weights as one memoryview of
the model's array.  Reading (`_LinsvmParser`, called by
`linsvm.model.load_model`) streams the rows into the preallocated weight array
(`linsvm.model.tokens.Parser.allocate`) and checks every field, with a ``FILE:LINE: ...``
ModelError for the first problem; it returns the fields of the Model.

The ``solver`` field names a registered solver or, for a model read from a
LIBLINEAR file and saved again, ``liblinear:<solver_type>``; `known_solver`
and `solver_kinds` say which names and kinds are valid (the Model checks them
too).
"""
from __future__ import annotations

import json
import re
import sys
import zlib

import numpy as np

from ..problem.kinds import KINDS
from .tokens import (NAME_RE, TOKEN_RE, fmt_float, fmt_list, parse_float,
                       parse_int, Parser, row_chunks)
from ..problem.catalog import SOLVERS
from .format_liblinear import is_liblinear_solver, liblinear_kinds

__all__ = ["FORMAT_MAGIC", "FORMAT_VERSION", "PROBABILITY_VERSION", "SEALED_VERSION", "READ_VERSIONS", "BINARY_MIN_ENTRIES", "binary_weights",
           "chunks", "known_solver", "solver_kinds", "solver_choices"]

FORMAT_MAGIC = "linsvm_model"
FORMAT_VERSION = 2                  # written; 2 added binary weights, bias 0 with a bias row
PROBABILITY_VERSION = 3             # written instead for models with probability sigmoids
SEALED_VERSION = 4                  # written for binary weights: their crc32 covers the header
READ_VERSIONS = (1, 2, 3, 4)        # read
# format "linsvm" chooses text weights up to BINARY_MIN_ENTRIES weights and binary ones above.
BINARY_MIN_ENTRIES = 1 << 20
_INTEGRAL_SUFFIX_RE = re.compile(r"\.0(?=[ \n])")          # the ".0" repr puts on integral floats


# --------------------------------------------------------------------------- #
# Solver names, typed values
# --------------------------------------------------------------------------- #

def known_solver(name) -> bool:
    """True for a registered solver name or ``liblinear:<classifier solver_type>``."""
    if name in SOLVERS:
        return True
    return is_liblinear_solver(name)


def solver_kinds(name) -> tuple:
    """The model kinds solver `name` produces: a classifier's binary or multiclass
    models (one-vs-rest beyond two classes), else its own kind."""
    if is_liblinear_solver(name):
        return liblinear_kinds(name)
    info = SOLVERS.get(name)
    if info is not None and info.kind not in ("binary", "multiclass"):
        return (info.kind,)
    return ("binary", "multiclass")


def solver_choices() -> str:
    """The valid solver names, for an error message."""
    return f"expected one of {', '.join(SOLVERS)} or liblinear:<LIBLINEAR solver_type>"


def _fmt_typed(v) -> str:
    """Encode a params/stats value as 'TYPE [VALUE]' (see the module docstring)."""
    if v is None:
        return "none"
    if isinstance(v, bool):
        return "bool true" if v else "bool false"
    if isinstance(v, int):
        return f"int {v}"
    if isinstance(v, float):
        return f"float {fmt_float(v)}"
    return "str " + json.dumps(v, ensure_ascii=True)


def _parse_typed(typ: str, rest: str | None):
    """Decode 'TYPE [VALUE]'; return (value, None) or (None, error message)."""
    if typ == "none":
        return (None, None) if rest is None else (None, "type 'none' takes no value")
    if rest is None:
        return None, f"type {typ!r} needs a value"
    if typ == "str":
        try:
            v = json.loads(rest)
        except ValueError:
            v = None
        if not isinstance(v, str):
            return None, f"bad str value {rest.strip()!r} (expected a JSON string in double quotes)"
        return v, None
    tokens = rest.split()
    if len(tokens) != 1:
        return None, f"type {typ!r} takes exactly one value"
    tok = tokens[0]
    if typ == "float":
        v = parse_float(tok, finite=False)
        return (v, None) if v is not None else (None, f"bad float value {tok!r}")
    if typ == "int":
        v = parse_int(tok)
        return (v, None) if v is not None else (None, f"bad int value {tok!r}")
    if typ == "bool":
        if tok in ("true", "false"):
            return tok == "true", None
        return None, f"bad bool value {tok!r} (expected true or false)"
    return None, f"unknown value type {typ!r} (expected float, int, bool, str or none)"


# --------------------------------------------------------------------------- #
# Writing
# --------------------------------------------------------------------------- #

def binary_weights(format: str, n_weights: int) -> bool:
    """Whether `format` ("linsvm", "linsvm-text" or "linsvm-binary") writes the
    `n_weights` weights of a model in binary."""
    return format == "linsvm-binary" or (format == "linsvm" and n_weights > BINARY_MIN_ENTRIES)


def chunks(model, binary=False):
    """Yield the native text of `model` (version 2, or 3 when it has probability
    sigmoids), in pieces (str; with `binary`, the weights as one little-endian
    float64 memoryview)."""
    W = model.weights
    thresholds = model.thresholds_
    proba = model.probability_
    version = SEALED_VERSION if binary else FORMAT_VERSION if proba is None else PROBABILITY_VERSION
    head = [
        f"{FORMAT_MAGIC} {version}",
        f"solver {model.solver}",
        f"kind {model.kind}",
        f"n_features {model.n_features_}",
        f"bias {fmt_float(model.bias)}",
        f"classes {fmt_list(model.classes_)}",
        f"n_columns {W.shape[1]}",
    ]
    if thresholds is not None:
        head.append(f"thresholds {fmt_list(thresholds)}")
    if model.offset_ != 0:
        head.append(f"offset {fmt_float(model.offset_)}")
    if proba is not None:
        head.append(f"probA {fmt_list(proba[:, 0])}")
        head.append(f"probB {fmt_list(proba[:, 1])}")
    head += [f"param {k} {_fmt_typed(v)}" for k, v in model.params.items()]
    head += [f"stat {k} {_fmt_typed(v)}" for k, v in model.stats.items()]
    if binary:
        Wle = W if sys.byteorder == "little" else W.byteswap()
        raw = memoryview(np.ascontiguousarray(Wle)).cast("B")
        text = "\n".join(head) + "\n"
        crc = zlib.crc32(raw, zlib.crc32(text.encode("ascii")))     # the header, then the weights
        yield text + f"weights {W.shape[0]} binary float64-le crc32:{crc:08x}\n"
        yield raw
        yield "\nend\n"
        return
    head.append(f"weights {W.shape[0]}")
    yield "\n".join(head) + "\n"
    row = " ".join(["%r"] * W.shape[1]) + "\n"
    for chunk in row_chunks(W):
        text = (row * chunk.shape[0]) % tuple(chunk.ravel().tolist())
        yield _INTEGRAL_SUFFIX_RE.sub("", text)
    yield "end\n"


# --------------------------------------------------------------------------- #
# Reading
# --------------------------------------------------------------------------- #

class _LinsvmParser(Parser):
    """Reader of the native format (see the module docstring)."""

    SINGLE_KEYS = ("solver", "kind", "n_features", "bias", "classes", "n_columns", "thresholds",
                   "probA", "probB", "offset")
    REQUIRED = ("solver", "kind", "n_features", "bias", "classes", "n_columns")

    def parse(self) -> dict:
        """Read the file; return the fields of its Model (keyword arguments of Model())."""
        i, line = self.header_line(lambda n: "empty file (not a model)")
        magic = line.split()
        if len(magic) != 2 or parse_int(magic[1]) is None:
            raise self.error(0, f"bad first line {line.strip()!r} "
                                f"(expected '{FORMAT_MAGIC} {FORMAT_VERSION}')")
        version = int(magic[1])
        if version not in READ_VERSIONS:
            raise self.error(0, f"unsupported linsvm model format version {magic[1]} "
                                f"(this linsvm reads versions {', '.join(map(str, READ_VERSIONS))})")
        self.header_crc = zlib.crc32((line + "\n").encode("ascii"))
        i, line, seen, values, params, stats = self.header_fields()
        for key in self.REQUIRED:
            if key not in values:
                raise self.error(i, f"the header has no '{key}' line")
        kind = values["kind"]
        if not values["classes"] and kind != "regression":
            raise self.error(seen["classes"], "'classes' needs at least one value")
        if (kind == "ordinal") != ("thresholds" in values):
            if kind == "ordinal":
                raise self.error(i, "an ordinal model needs a 'thresholds' line in the header")
            raise self.error(seen["thresholds"], f"only ordinal models have thresholds (this one is {kind})")
        probability = self.probability(i, version, kind, values, seen)
        solver = values["solver"]
        if not known_solver(solver):
            raise self.error(seen["solver"], f"unknown solver {solver!r} ({solver_choices()})")
        expected_kinds = solver_kinds(solver)
        if kind not in expected_kinds:
            raise self.error(seen["kind"], f"solver {solver} makes {' or '.join(expected_kinds)} models, "
                                           f"not {kind}")
        self.check_offset(values, seen, stats)
        toks = line.split()
        binary = len(toks) > 2
        if binary:
            n_rows, crc = self.binary_header(i, toks, version)
        elif version == SEALED_VERSION:
            raise self.error(i, f"a version {SEALED_VERSION} model has binary weights "
                                "('weights ROWS binary float64-le crc32:XXXXXXXX')")
        else:
            n_rows = self.count(i, toks, "the number of weight rows", 0)
        bias = values["bias"]
        n_features = values["n_features"]
        expect = [n_features + 1] if bias > 0 else [n_features] if bias < 0 else [n_features, n_features + 1]
        if n_rows not in expect:
            need = " or ".join(map(str, expect))
            raise self.error(i, f"weights has {n_rows} rows but n_features {n_features} and bias "
                                f"{fmt_float(bias)} need {need}")
        n_columns = values["n_columns"]
        W = self.allocate(n_rows, n_columns)
        if binary:
            self.binary_rows(i, W, crc, self.header_crc if version == SEALED_VERSION else None)
        else:
            self.stream.text_rows(W.reshape(-1), n_rows, n_columns, lambda: self.file_error(
                f"truncated file: expected {n_rows} weight rows after line {i + 1} and an 'end' line, "
                f"the file ends after line {self.stream.lineno}"))
        self.end_line(i, n_rows)
        return dict(solver=solver, classes=values["classes"], weights=W, bias=bias,
                    params=params, stats=stats, kind=kind, thresholds=values.get("thresholds"),
                    n_features=n_features, probability=probability,
                    offset=values.get("offset", 0.0))

    def header_fields(self):
        """Read the header lines up to 'weights'; return that line's index and text, the
        line of each single key, their values, and the param and stat groups."""
        seen = {}
        values = {}
        params, stats = {}, {}
        group_line = {"param": {}, "stat": {}}
        while True:
            i, line = self.header_line(
                lambda n: f"truncated file: the header has no 'weights' line (file ends after line {n})")
            toks = line.split()
            if not toks:
                raise self.error(i, "blank line in the header")
            key = toks[0]
            if key == "weights":
                break
            self.header_crc = zlib.crc32((line + "\n").encode("ascii"), self.header_crc)
            if key in ("param", "stat"):
                parts = line.split(None, 3)
                if len(parts) < 3:
                    raise self.error(i, f"'{key}' needs a name and a type: '{key} NAME TYPE [VALUE]'")
                name, typ = parts[1], parts[2]
                if not NAME_RE.match(name):
                    raise self.error(i, f"bad {key} name {name!r}")
                if name in group_line[key]:
                    raise self.error(i, f"duplicate {key} {name!r} (first on line {group_line[key][name] + 1})")
                value, msg = _parse_typed(typ, parts[3] if len(parts) > 3 else None)
                if msg:
                    raise self.error(i, f"{key} {name}: {msg}")
                group_line[key][name] = i
                (params if key == "param" else stats)[name] = value
            elif key in self.SINGLE_KEYS:
                if key in seen:
                    raise self.error(i, f"duplicate '{key}' line (first on line {seen[key] + 1})")
                seen[key] = i
                values[key] = self.header_value(i, toks)
            else:
                raise self.error(i, f"unknown key {key!r} in the model header")
        return i, line, seen, values, params, stats

    def end_line(self, i, n_rows):
        """Check the 'end' line after the n_rows weight rows (which follow line i + 1) and
        that nothing comes after it."""
        s = self.stream
        end_line = s.readline()
        if end_line is None:
            raise self.file_error(f"truncated file: expected {n_rows} weight rows after line {i + 1} "
                                  f"and an 'end' line, the file ends after line {s.lineno}")
        if end_line.split() != [b"end"]:
            shown = end_line.decode("utf-8", "replace").strip()[:40]
            raise self.error(s.lineno - 1, f"expected 'end' after the {n_rows} weight rows, found {shown!r}")
        if s.partial:
            raise self.error(s.lineno - 1, "truncated file (the last line has no newline)")
        if s.readline() is not None:
            raise self.error(s.lineno - 1, "unexpected content after 'end'")

    def check_offset(self, values, seen, stats):
        """The 'offset' line against the 'stat y_offset' it repeats (a regression solver's
        centering: the model adds y_offset to its decision values): they must agree."""
        y_offset = stats.get("y_offset")
        if not isinstance(y_offset, float):
            return
        offset = values.get("offset", 0.0)
        if offset != y_offset:
            where = seen.get("offset")
            text = f"offset {fmt_float(offset)} differs from its 'stat y_offset' {fmt_float(y_offset)}"
            raise self.error(where, text) if where is not None else self.file_error(
                f"no 'offset' line, but 'stat y_offset' is {fmt_float(y_offset)}")

    def probability(self, i, version, kind, values, seen):
        """The (n_sigmoids, 2) array of the 'probA' and 'probB' lines, None without them,
        or a located error (line i + 1 is the 'weights' line)."""
        keys = [key for key in ("probA", "probB") if key in values]
        if not keys:
            return None
        first = min(seen[key] for key in keys)
        if version < PROBABILITY_VERSION:
            raise self.error(first, f"probability sigmoids need model format version {PROBABILITY_VERSION} "
                                    f"(this file says {version})")
        if kind == "ordinal":
            raise self.error(first, "an ordinal model has no probability sigmoids")
        if len(keys) == 1:
            other = "probB" if keys[0] == "probA" else "probA"
            raise self.error(seen[keys[0]], f"'{keys[0]}' without a '{other}' line")
        k = len(values["classes"])
        n = 1 if k == 2 else k
        for key in keys:
            if len(values[key]) != n:
                raise self.error(seen[key], f"'{key}' has {len(values[key])} values but a model with "
                                            f"{k} classes needs {n}")
        return np.column_stack([values["probA"], values["probB"]])

    def binary_header(self, i, toks, version):
        """(n_rows, crc32) of 'weights R binary float64-le crc32:XXXXXXXX', or a located error."""
        if version < 2:
            raise self.error(i, f"binary weights need model format version 2 (this file says {version})")
        if len(toks) != 5 or toks[2] != "binary" or toks[3] != "float64-le" \
                or not re.fullmatch(r"crc32:[0-9a-f]{8}", toks[4]):
            raise self.error(i, "bad weights line (expected 'weights ROWS' or "
                                "'weights ROWS binary float64-le crc32:XXXXXXXX')")
        n_rows = parse_int(toks[1])
        if n_rows is None or n_rows < 0:
            raise self.error(i, f"bad weights {toks[1]!r} (expected the number of weight rows)")
        return n_rows, int(toks[4][6:], 16)

    def binary_rows(self, i, W, crc, header_crc=None):
        """Read the raw little-endian float64 weights after line i+1 into W and check them:
        their crc32 (version 4: continued from `header_crc`, that of the header lines
        before the weights line) must be `crc`."""
        s = self.stream
        raw = W.reshape(-1).view(np.uint8)
        n = raw.size
        got = s.read_into(memoryview(raw))
        if got < n:
            raise self.file_error(f"truncated file: the binary weights after line {i + 1} need {n} bytes, "
                                  f"the file has {got}")
        actual = zlib.crc32(memoryview(raw), 0 if header_crc is None else header_crc)
        if actual != crc and header_crc is not None:
            raise self.file_error(f"corrupt header or binary weights (their crc32 is {actual:08x}, "
                                  f"the weights line {i + 1} says {crc:08x})")
        if actual != crc:
            raise self.file_error(f"corrupt binary weights after line {i + 1} (crc32 {actual:08x}, "
                                  f"the header says {crc:08x})")
        if sys.byteorder != "little":
            W.byteswap(inplace=True)
        bad = ~np.isfinite(W)
        if bad.any():
            r, c = np.argwhere(bad)[0]
            raise self.file_error(f"binary weights after line {i + 1}: row {r + 1}, column {c + 1} "
                                  "is not finite")
        sep = s.readline()
        if sep != b"" or s.partial:
            raise self.file_error(f"truncated or corrupt file: a newline must follow the {n} bytes "
                                  f"of binary weights after line {i + 1}")
        s.lineno = i + 2                    # the raw bytes and their newline count as one line

    def header_value(self, i, toks):
        """Parse the value of a single-valued header key."""
        key = toks[0]
        if key == "solver":
            tok = self.one_token(i, toks, "a solver name")
            if not TOKEN_RE.match(tok):
                raise self.error(i, f"bad solver name {tok!r}")
            return tok
        if key == "kind":
            tok = self.one_token(i, toks, " or ".join(KINDS))
            if tok not in KINDS:
                raise self.error(i, f"unknown model kind {tok!r} (expected {', '.join(KINDS)})")
            return tok
        if key == "n_features":
            return self.count(i, toks, "an integer >= 0", 0)
        if key == "n_columns":
            return self.count(i, toks, "an integer >= 1", 1)
        if key in ("bias", "offset"):
            return self.number(i, toks, "a finite number")
        # classes, thresholds, probA, probB: lists of finite numbers (a regression
        # model's classes: none)
        if len(toks) < 2 and key != "classes":
            raise self.error(i, f"'{key}' needs at least one value")
        out = []
        for tok in toks[1:]:
            v = parse_float(tok)
            if v is None:
                raise self.error(i, f"bad value {tok!r} in '{key}' (expected a finite number)")
            out.append(v)
        if key == "classes" and len(set(out)) != len(out):
            raise self.error(i, "duplicate class label in 'classes'")
        if key == "thresholds" and any(b < a for a, b in zip(out, out[1:])):
            raise self.error(i, "thresholds must be ascending")
        return out

