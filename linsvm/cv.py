"""Cross-validation (public path; the code lives in linsvm.fit.cv and linsvm.fit.folds).

    from linsvm.cv import cross_validate
    res = cross_validate(X, y, solver="mfn", Cs=[0.25, 1, 4])
    res.best.C
"""
from .fit.cv import (METRICS, PERCENT_METRICS, CVPoint, CVResult, cross_validate, make_folds,
                     parse_grid)

__all__ = ["cross_validate", "CVResult", "CVPoint", "parse_grid", "make_folds", "METRICS",
           "PERCENT_METRICS"]
