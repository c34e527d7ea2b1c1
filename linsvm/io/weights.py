"""Instance weights files (LIBLINEAR's -W): one weight per training example,
whitespace separated."""
from __future__ import annotations

import numpy as np

from ..errors import DataError

__all__ = ["read_instance_weights", "InstanceWeightStream"]


def read_instance_weights(path, n):
    """The n weights of file `path` as a float64 array; DataError naming the file (and
    the value) when it cannot be read, a value is not a number, or it holds another
    number of values."""
    try:
        with open(path, "rb") as fh:
            lines = fh.read().split()
    except OSError as exc:
        raise DataError(f"cannot read instance weights '{path}': {exc.strerror}") from None
    values = np.empty(len(lines))
    for i, tok in enumerate(lines):
        try:
            values[i] = float(tok)
        except ValueError:
            raise DataError(f"{path}: value {i + 1} {tok.decode(errors='replace')!r} is not a number") from None
    if values.shape[0] != n:
        raise DataError(f"{path}: {values.shape[0]} instance weights for {n} training examples")
    return values


class InstanceWeightStream:
    """The weights of file `path` read in order as they are needed, so that memory holds
    one block of them (`linsvm convert -W`): `take(n)` gives the next n (fewer at the
    end of the file), `finish(n)` checks that the file held exactly n.  Values and
    messages as read_instance_weights."""

    _READ = 1 << 20

    def __init__(self, path):
        self.path = path
        try:
            self._fh = open(path, "rb")
        except OSError as exc:
            raise DataError(f"cannot read instance weights '{path}': {exc.strerror}") from None
        self._tokens, self._next, self._tail, self._ended = [], 0, b"", False
        self.count = 0                  # values handed out so far

    def close(self):
        self._fh.close()

    def _refill(self):
        """More tokens; False at the end of the file."""
        while self._next >= len(self._tokens) and not self._ended:
            try:
                chunk = self._fh.read(self._READ)
            except OSError as exc:
                raise DataError(f"cannot read instance weights '{self.path}': "
                                f"{exc.strerror}") from None
            text = self._tail + chunk
            if not chunk:
                self._ended, self._tail = True, b""
                self._tokens, self._next = text.split(), 0
            else:
                parts = text.split()
                cut = bool(parts) and not text[-1:].isspace()     # a token may go on
                self._tail = parts.pop() if cut else b""
                self._tokens, self._next = parts, 0
        return self._next < len(self._tokens)

    def take(self, n):
        """The next n weights (fewer when the file ends first) as float64."""
        out = np.empty(n)
        k = 0
        while k < n and self._refill():
            tok = self._tokens[self._next]
            try:
                out[k] = float(tok)
            except ValueError:
                raise DataError(f"{self.path}: value {self.count + 1} "
                                f"{tok.decode(errors='replace')!r} is not a number") from None
            self._next += 1
            self.count += 1
            k += 1
        return out[:k]

    def finish(self, n):
        """DataError unless the file held exactly n values (all of them counted)."""
        total = self.count
        while self._refill():
            total += len(self._tokens) - self._next
            self._next = len(self._tokens)
        if total != n:
            raise DataError(f"{self.path}: {total} instance weights for {n} training examples")
