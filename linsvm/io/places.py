"""Where the rows of data read from SVM-light files are: FILE:LINE for a row number.

The parser names the file and line of what it refuses.  Some faults show only
after reading, in the labels as a whole -- a classifier's label that is not an
integer, an ordinal rank that is not one, more classes than look like classes
(linsvm.problem.kinds) -- and their messages must name the file and line of the
first row at fault too.  Row r of a file is on line r + 1 plus the blank and
comment lines before it; the parser notes one (row, lines skipped so far) pair
for each row that follows such lines (`Parser.row_gaps`), so a file without them
costs nothing, and `RowPlaces` turns those notes into FILE:LINE.  One RowPlaces
may span several files (shards) or a part of one (an MPI rank's rows).  A binary data
file (linsvm.io.binfile) has no lines: its rows are named ``FILE: example N``.
"""
from __future__ import annotations

import bisect
from typing import NamedTuple

import numpy as np

__all__ = ["RowPlaces"]


class _Segment(NamedTuple):
    first_row: int          # the segment's first row among the RowPlaces' rows
    n_rows: int
    name: str               # the file's name, for messages
    first_line: int         # the line of the file's (part's) first line
    gap_rows: np.ndarray    # Parser.row_gaps of the file (part), rows counted from 0
    gap_skipped: np.ndarray
    row_shift: int          # the segment's first row is row `row_shift` of the file (part)
    examples: bool = False  # rows of a file without lines (a binary one): "example N"


class RowPlaces:
    """FILE:LINE of each row of data read from files, in the order read (module notes)."""

    def __init__(self):
        self._segments = []
        self._starts = []
        self.n_rows = 0

    def add(self, name, n_rows, gaps=None, first_line=1, row_shift=0):
        """Append the next `n_rows` rows: those of file `name` whose lines start at line
        `first_line` (1 for a whole file), with the parser's notes `gaps` ((rows,
        skipped) as Parser.row_gaps gives them, or None: no line skipped), from row
        `row_shift` of that parse on.  Returns self."""
        rows, skipped = gaps if gaps is not None else (np.zeros(0, np.int64),) * 2
        self._segments.append(_Segment(self.n_rows, int(n_rows), str(name), int(first_line),
                                       np.asarray(rows, dtype=np.int64),
                                       np.asarray(skipped, dtype=np.int64), int(row_shift)))
        self._starts.append(self.n_rows)
        self.n_rows += int(n_rows)
        return self

    def add_examples(self, name, n_rows, row_shift=0):
        """Append the next `n_rows` rows: examples row_shift + 1, ... of `name`, a file
        without lines (a binary data file, linsvm.io.binfile), each named
        ``NAME: example N``.  Returns self."""
        self._segments.append(_Segment(self.n_rows, int(n_rows), str(name), 1,
                                       np.zeros(0, np.int64), np.zeros(0, np.int64),
                                       int(row_shift), True))
        self._starts.append(self.n_rows)
        self.n_rows += int(n_rows)
        return self

    def extend(self, other):
        """Append the rows of another RowPlaces.  Returns self."""
        for seg in other._segments:
            self._append(seg, seg.n_rows, seg.row_shift)
        return self

    def _append(self, seg, n_rows, row_shift):
        """Append n_rows rows of segment seg from its row row_shift on."""
        if seg.examples:
            self.add_examples(seg.name, n_rows, row_shift)
        else:
            self.add(seg.name, n_rows, (seg.gap_rows, seg.gap_skipped), seg.first_line,
                     row_shift)

    def place(self, row):
        """(file name, line) of row `row` (0-based); of a file without lines, (file name,
        example number)."""
        return self._place(row)[:2]

    def _place(self, row):
        if not 0 <= row < self.n_rows:
            raise IndexError(f"row {row} of {self.n_rows}")
        seg = self._segments[bisect.bisect_right(self._starts, row) - 1]
        r = row - seg.first_row + seg.row_shift       # the row of the file (part)
        k = int(np.searchsorted(seg.gap_rows, r, side="right")) - 1
        skipped = int(seg.gap_skipped[k]) if k >= 0 else 0
        return seg.name, seg.first_line + r + skipped, seg.examples

    def where(self, row):
        """``FILE:LINE`` of row `row`, as the parser names a line (``FILE: example N`` in
        a file without lines)."""
        name, line, examples = self._place(row)
        return f"{name}: example {line}" if examples else f"{name}:{line}"

    def slice(self, start, stop):
        """A RowPlaces of rows [start, stop) of this one, numbered from 0."""
        out = RowPlaces()
        for seg in self._segments:
            a, b = max(start, seg.first_row), min(stop, seg.first_row + seg.n_rows)
            if a < b:
                out._append(seg, b - a, seg.row_shift + a - seg.first_row)
        return out
