"""What is being solved: the data as the solvers see it (CSRBuffers, Problem), labels
and classes, kinds of problems, measures, and the catalog of solvers with their
options (pure Python: reading it imports no solver).

This layer imports only linsvm.errors and the compiled kernels (docs/design.md).
"""
from .._lazy import lazy_exports

__getattr__ = lazy_exports(__name__, {
    "CSRBuffers": ".csr", "to_scipy": ".csr", "take_rows": ".csr",
    "Problem": ".problem",
    "n_weights": ".checks",
    "check_positive": ".registry",
})
