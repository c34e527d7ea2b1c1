"""Converting data between SVM-light text and linsvm's binary data file, streaming.

`convert(source, output)` reads `source` -- SVM-light text (plain, gzip, bzip2 or xz, or
``-`` for standard input) or a binary data file -- and writes `output` as a binary data
file (linsvm.io.binwrite.BinaryWriter) or, with ``to="svmlight"``, as SVM-light text.
Text is parsed a read chunk at a time (linsvm.io.compressed.CHUNK_BYTES of input, the
rows it completes handed on at once), a binary file is walked in spans of about
BLOCK_NNZ entries of its map, so memory does not grow with the input: one block of rows,
and for text output one block of text.

What the binary file holds: the rows, labels, qids when the text has them (every row, as
the parser requires), and instance weights read in step from a ``-W`` file (one per row,
as linsvm-train -W reads them: linsvm.io.weights), or, from a binary source, its own
weights unless ``-W`` replaces them.  Text output is byte for byte what
linsvm.io.svmlight.dump_svmlight writes for the loaded data (labels, qids when there are
any, every stored entry), so text -> binary -> text gives the canonical text of the
data; instance weights have no place in SVM-light text and are left out (`note` says so).

Both outputs are written atomically (linsvm.io.atomic): a failure, Ctrl-C included,
leaves nothing.  Bad input raises DataError ``FILE:LINE: what`` as the parser names it;
a value the layout cannot store (``values="pattern"``: a value other than 1;
``"float32"``: beyond its range) names the line of text it is on (``FILE: example N`` in
a binary source).
"""
from __future__ import annotations

import contextlib
from typing import NamedTuple

import numpy as np

from .. import _svmlight
from ..errors import DataError, ParameterError
from .atomic import atomic_output
from .binfile import is_binary_file, open_binary
from .binwrite import VALUE_CHOICES, BinaryWriter, NotStorableError
from .compressed import Input
from .places import RowPlaces
from .weights import InstanceWeightStream

__all__ = ["convert", "ConvertResult", "TARGETS", "BLOCK_NNZ"]

TARGETS = ("binary", "svmlight")
BLOCK_NNZ = 1 << 20             # entries of a binary source handed on at a time


class ConvertResult(NamedTuple):
    """What convert wrote: rows, features (the width), stored entries, the layout of the
    values ("text" for text output), and whether qids and weights were written."""

    n_rows: int
    n_features: int
    nnz: int
    layout: str
    with_qid: bool
    with_weights: bool


def convert(source, output, values="auto", instance_weights=None, to="binary", note=None,
            progress=None, source_record=None):
    """Write `source` as `output` (module notes).

    `values`: the binary file's layout ("auto", "float64", "float32", "pattern"; see
    linsvm.io.binwrite).  `instance_weights`: a file of one weight per row to store (not
    with text output).  `to`: "binary" or "svmlight" (``output`` may then be ``-``).
    `note(text)`: told what is left out; `progress(rows)`: called as rows are written.
    `source_record`: a linsvm.io.binformat.SourceRecord to store (the cache's).
    Returns a ConvertResult.
    """
    if to not in TARGETS:
        raise ParameterError(f"to must be one of {', '.join(TARGETS)}, not {to!r}")
    if values not in VALUE_CHOICES:
        raise ParameterError(f"values must be one of {', '.join(VALUE_CHOICES)}, not {values!r}")
    note = note or (lambda text: None)
    progress = progress or (lambda rows: None)
    binary = open_binary(source) if is_binary_file(source) else None
    if to == "svmlight":
        if instance_weights is not None:
            raise ParameterError("instance weights have no place in SVM-light text")
        return _to_text(source, binary, output, note, progress)
    with contextlib.ExitStack() as stack:
        weights = None
        if instance_weights is not None:
            weights = InstanceWeightStream(instance_weights)
            stack.callback(weights.close)
        if binary is not None:
            return _binary_to_binary(binary, output, values, weights, progress, source_record)
        return _text_to_binary(source, output, values, weights, progress, source_record)


# ---------------------------------------------------------------------------
# the sources, block by block
# ---------------------------------------------------------------------------

class _TextBlocks:
    """The blocks of rows of SVM-light text, one per read chunk (with qids: `with_qid`
    is known once a block has rows), and where each row is (for messages)."""

    def __init__(self, source):
        self.source = source
        self.parser = _svmlight.Parser(True, None)
        self.name = None
        self.n_rows = 0

    @property
    def with_qid(self):
        return self.parser.qid_mode == 1

    def where(self, row):
        """FILE:LINE of row `row` (0-based) of the rows handed on."""
        return RowPlaces().add(self.name, self.n_rows, self.parser.row_gaps()).where(row)

    def __iter__(self):
        """(indptr, indices, data, labels, qid) of each block with rows."""
        parser = self.parser
        with Input(self.source) as src:
            src.fast = True
            self.name = src.name
            for buf, n in src.chunks():
                parser.feed(buf, n)
                yield from self._drain(parser)
            parser.end()
            yield from self._drain(parser)

    def _drain(self, parser):
        if parser.parse() < 0:
            line, what = parser.error()
            raise DataError(f"{self.name}:{line}: {what}")
        if parser.n_rows:
            indptr, indices, data, labels, qid, _ = parser.take()
            self.n_rows += labels.shape[0]
            yield indptr, indices, data, labels, qid


def _spans(indptr, n_rows):
    """(start, stop) row ranges of about BLOCK_NNZ entries each (at least one row)."""
    start = 0
    while start < n_rows:
        stop = int(np.searchsorted(indptr, int(indptr[start]) + BLOCK_NNZ, side="right")) - 1
        stop = min(max(stop, start + 1), n_rows)
        yield start, stop
        start = stop


def _binary_blocks(data):
    """(X, y, qid, weights) of each span of a BinaryData (its rows())."""
    for start, stop in _spans(data.indptr, data.n_rows):
        yield data.rows(start, stop)


# ---------------------------------------------------------------------------
# binary output
# ---------------------------------------------------------------------------

def _storable(write, where):
    """write(), a NotStorableError as a DataError naming where(row) of the row."""
    try:
        write()
    except NotStorableError as exc:
        raise DataError(f"{where(exc.row)}: value {exc.value!r} of feature {exc.column + 1} "
                        f"{exc.why}") from None


def _weights_for(weights, m):
    """The next m weights, or None once the file ran short (finish names the counts)."""
    w = weights.take(m)
    return w if w.shape[0] == m else None


def _text_to_binary(source, output, values, weights, progress, record):
    blocks = _TextBlocks(source)
    with contextlib.ExitStack() as stack:
        writer, short = None, False
        for indptr, indices, data, labels, qid in blocks:
            if writer is None:
                writer = stack.enter_context(BinaryWriter(
                    output, values, with_qid=blocks.with_qid,
                    with_weights=weights is not None, source=record))
            w = None
            if weights is not None and not short:
                w = _weights_for(weights, labels.shape[0])
                short = w is None
            if not short:
                first = writer.n_rows
                _storable(lambda: writer.append(indptr, indices, data, labels,
                                                qid if writer.with_qid else None, w),
                          lambda row: blocks.where(row))
                progress(first + labels.shape[0])
        if weights is not None:
            weights.finish(blocks.n_rows)
        if writer is None:                  # no rows
            writer = stack.enter_context(BinaryWriter(output, values,
                                                      with_weights=weights is not None,
                                                      source=record))
    return _result(writer)


def _binary_to_binary(data, output, values, weights, progress, record):
    with_weights = weights is not None or data.weights is not None
    with BinaryWriter(output, values, n_features=data.n_features,
                      with_qid=data.qid is not None, with_weights=with_weights,
                      source=record) as writer:
        short = False
        for X, y, qid, w in _binary_blocks(data):
            if weights is not None and not short:
                w = _weights_for(weights, y.shape[0])
                short = w is None
            if not short:
                _storable(lambda: writer.append(X.indptr, X.indices, X.data, y, qid, w),
                          lambda row: f"{data.path}: example {row + 1}")
                progress(writer.n_rows)
        if weights is not None:
            weights.finish(data.n_rows)
    return _result(writer)


def _result(writer):
    return ConvertResult(writer.n_rows, writer.width, writer.nnz, writer.layout,
                         writer.with_qid, writer.with_weights)


# ---------------------------------------------------------------------------
# text output
# ---------------------------------------------------------------------------

def _format(indptr, indices, data, labels, qid):
    """SVM-light text of one block, as dump_svmlight formats it."""
    if data is None:
        data = np.ones(indices.shape[0])
    data = np.ascontiguousarray(data, dtype=np.float64)
    with_qid = qid is not None
    q = qid if with_qid else np.zeros(0, dtype=np.int64)
    return _svmlight.format_rows(indptr, indices, data, labels, q, with_qid, 0,
                                 labels.shape[0])


def _to_text(source, binary, output, note, progress):
    rows = nnz = width = 0
    if binary is not None and binary.weights is not None:
        note(f"the instance weights of {binary.path} are not written: SVM-light text has "
             "no place for them")
    text_blocks = _TextBlocks(source) if binary is None else None
    try:
        with atomic_output(output, stdout_ok=True) as fh:
            if binary is not None:
                for X, y, qid, _ in _binary_blocks(binary):
                    fh.write(_format(X.indptr, X.indices, X.data, y, qid))
                    rows, nnz = rows + y.shape[0], nnz + X.nnz
                    progress(rows)
                width, with_qid = binary.n_features, binary.qid is not None
            else:
                for indptr, indices, data, labels, qid in text_blocks:
                    with_qid = text_blocks.with_qid
                    fh.write(_format(indptr, indices, data, labels, qid if with_qid else None))
                    rows, nnz = rows + labels.shape[0], nnz + indices.shape[0]
                    width = max(width, int(indices.max()) + 1 if indices.shape[0] else 0)
                    progress(rows)
                with_qid = text_blocks.with_qid
    except BrokenPipeError:
        raise
    except OSError as e:
        name = "<stdout>" if output == "-" else str(output)
        raise DataError(f"{name}: cannot write: {e.strerror or e}") from None
    return ConvertResult(rows, width, nnz, "text", with_qid, False)
