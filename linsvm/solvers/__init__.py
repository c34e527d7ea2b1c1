"""The solvers: one module per family, each running its compiled core in csrc/.

Every solver keeps the fit contract of linsvm.problem.registry and is declared in
linsvm.problem.catalog (its name, options and defaults), which names the function
here that runs it.  The registry's names are re-exported here for convenience.
"""
from .._lazy import lazy_exports

__getattr__ = lazy_exports(__name__, {
    **dict.fromkeys(("Option", "SolverInfo", "Params", "FitResult", "WorkMemory", "work_memory",
                     "option_error", "check_options"), "..problem.registry"),
    **dict.fromkeys(("SOLVERS", "register", "get_solver", "make_params", "liblinear_code"),
                    "..problem.catalog"),
    **dict.fromkeys(("GAP_GUARD", "GAP_GUARD_MIN_EPS", "relative_gap", "gap_guard_shrink"),
                    ".gaps"),
})
