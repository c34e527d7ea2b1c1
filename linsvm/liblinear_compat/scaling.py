"""liblinearutil's scaling of a csr matrix: `csr_find_scale_param` and `csr_scale`.

Each feature j is mapped linearly from its range [min_j, max_j] over the rows (zeros
of the sparse matrix included) onto [lower, upper]:

    x'_ij = x_ij coef_j + offset_j,   coef_j = (upper - lower) / (max_j - min_j),
                                      offset_j = lower - min_j coef_j,

with coef_j = offset_j = 0 for a constant feature (it is dropped).  A non-zero offset
makes every row hold that feature, so both functions warn on standard error, as
LIBLINEAR's do, when the scaled matrix is much denser than the original.
(`linsvm scale` does the same for files, linsvm.io.scale.)
"""
from __future__ import annotations

import sys

import numpy as np

from ..errors import DataError, ParameterError

__all__ = ["csr_find_scale_param", "csr_scale"]


def _checked_csr(x):
    import scipy.sparse as sp           # slow to import: only when scaling
    if not (sp.issparse(x) and x.format == "csr"):
        raise DataError(f"x must be a scipy csr_matrix, got {type(x).__name__}")
    return sp


def csr_find_scale_param(x, lower=-1, upper=1):
    """{'coef': coef, 'offset': offset} mapping each column of csr x onto [lower, upper]
    (module notes); lower < upper."""
    _checked_csr(x)
    if not float(lower) < float(upper):
        raise ParameterError(f"lower ({lower!r}) must be below upper ({upper!r})")
    l = x.shape[0]
    lo = np.asarray(x.min(axis=0).todense(), dtype=np.float64).ravel()
    hi = np.asarray(x.max(axis=0).todense(), dtype=np.float64).ravel()
    width = hi - lo
    coef = np.zeros_like(width)
    varying = width != 0
    coef[varying] = (float(upper) - float(lower)) / width[varying]
    offset = np.where(varying, float(lower) - lo * coef, 0.0)
    if np.count_nonzero(offset) * l > 3 * x.nnz:
        print("WARNING: scaled with these parameters, x would hold at least twice its "
              "non-zeros (non-zero offsets fill every row); for sparse non-negative "
              "features pass lower=0 instead of the default -1.", file=sys.stderr)
    return {"coef": coef, "offset": offset}


def csr_scale(x, scale_param):
    """x (csr) scaled by scale_param from csr_find_scale_param: x diag(coef) + 1 offset'
    as a csr_matrix.  Columns beyond the parameters' are dropped (coef 0), missing ones
    are zero; either way a warning says the widths differ."""
    sp = _checked_csr(x)
    coef = np.asarray(scale_param["coef"], dtype=np.float64).ravel()
    offset = np.asarray(scale_param["offset"], dtype=np.float64).ravel()
    if coef.shape != offset.shape:
        raise DataError(f"scale_param has {coef.size} coef and {offset.size} offset values")
    l, n = x.shape
    if n != coef.size:
        print(f"WARNING: x has {n} features but the scaling parameters {coef.size}; "
              "features without parameters become 0", file=sys.stderr)
        pad = np.zeros(max(0, n - coef.size))
        coef, offset = np.concatenate([coef, pad])[:n], np.concatenate([offset, pad])[:n]
    scaled = x @ sp.diags(coef, 0, shape=(n, n), format="csr")
    if np.any(offset):
        ones = sp.csr_matrix(np.ones((l, 1)))
        scaled = scaled + ones @ sp.csr_matrix(offset.reshape(1, n))
    scaled = sp.csr_matrix(scaled)
    if scaled.nnz > x.nnz:
        print(f"WARNING: scaling raised the non-zeros of x from {x.nnz} to {scaled.nnz}; for "
              "sparse non-negative features find the parameters with lower=0.", file=sys.stderr)
    return scaled
