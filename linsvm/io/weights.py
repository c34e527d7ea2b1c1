"""Instance weights files (LIBLINEAR's -W): one weight per training example,
whitespace separated."""
from __future__ import annotations

import numpy as np

from ..errors import DataError

__all__ = ["read_instance_weights"]


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
