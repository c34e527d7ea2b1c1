"""The solvers: one module per family, each running its compiled core in csrc/.

Every solver keeps the fit contract of linsvm.problem.registry.  A family's solvers are
declared in its pure-Python spec module FAMILY_spec.py beside its fit code (name,
options, defaults, the fit function by name), which linsvm.problem.catalog registers.
The registry's names are re-exported here for convenience.
"""
from .._lazy import lazy_exports

__getattr__ = lazy_exports(__name__, {
    **dict.fromkeys(("Option", "SolverInfo", "Params", "FitResult", "WorkMemory", "LiblinearCode",
                     "option_error", "check_options"), "..problem.registry"),
    **dict.fromkeys(("SOLVERS", "FAMILIES", "get_solver", "make_params", "liblinear_code"),
                    "..problem.catalog"),
    **dict.fromkeys(("GAP_GUARD", "GAP_GUARD_MIN_EPS", "relative_gap", "gap_guard_shrink"),
                    ".gaps"),
})
