"""The catalog: every solver linsvm has, its objective, tolerance, options and defaults.

A solver family declares its solvers in its own pure-Python spec module beside its fit
code, linsvm/solvers/FAMILY_spec.py: a tuple SPECS of SolverInfo (linsvm.problem.registry),
the one home of the family's defaults.  FAMILIES below names the families, one line
each, in the order of `linsvm-train --help`; the catalog imports each spec module by
name (linsvm._lazy.import_by_name) and registers its SPECS in order, each with
`family` FAMILY (docs/design.md, "Adding a solver").  The imports stay downward: a spec
module imports only linsvm.problem.registry, linsvm._lazy and other spec modules
(tests/test_layout.py), so this layer has no import statement of linsvm.solvers; a
solver's `fit` is a LazyFunction, imported on the first solve, so that reading the
catalog -- for `--help`, option checks, model files -- imports no solver and no NumPy.
"""
from __future__ import annotations

import types

from .._lazy import import_by_name
from ..errors import ParameterError
from .registry import Params, SolverInfo, check_options, check_positive

__all__ = ["FAMILIES", "SOLVERS", "register_family", "get_solver", "liblinear_code",
           "liblinear_entry", "liblinear_no_effect", "make_params", "penalty_of",
           "solver_for_penalty", "streaming_solvers"]

# The solver families: FAMILY is the module linsvm/solvers/FAMILY_spec.py.  Adding a
# family is one line here; adding a solver to a family is an entry in its SPECS.
FAMILIES = (
    "alm",
    "dcd",
    "mfn",
    "perf",
    "sdm",
    "svr",
    "oneclass",
    "l1",
    "logistic",
)

SOLVERS: dict[str, SolverInfo] = {}


def register_family(family: str) -> tuple:
    """Register the solvers of linsvm/solvers/`family`_spec.py (its SPECS, in order),
    each with family `family`; returns them.  Names and LIBLINEAR codes are unique."""
    specs = tuple(info._replace(family=family)
                  for info in import_by_name(f"linsvm.solvers.{family}_spec").SPECS)
    codes = {c: i.name for i in SOLVERS.values() for c in i.liblinear_codes}
    for info in specs:
        if info.name in SOLVERS:
            raise ValueError(f"solver {info.name!r} registered twice")
        for code, entry in info.liblinear_codes.items():
            if code in codes:
                raise ValueError(f"LIBLINEAR code {code} of {info.name!r} is {codes[code]!r}'s")
            codes[code] = info.name
            named = set(entry.implied) | set(entry.defaults)
            if set(entry.implied) & set(entry.defaults) or not named <= set(info.options):
                raise ValueError(f"LIBLINEAR code {code} of {info.name!r}: its implied options "
                                 "and defaults must be distinct options of the solver")
        SOLVERS[info.name] = info
    return specs


def get_solver(name: str) -> SolverInfo:
    """Return the registered solver called `name`, or raise ParameterError."""
    info = SOLVERS.get(name) if isinstance(name, str) else None
    if info is None:
        raise ParameterError(f"unknown solver {name!r}; choose one of: {', '.join(sorted(SOLVERS))}")
    return info


def liblinear_code(code: int):
    """(solver name, implied options) for LIBLINEAR's `-s code` (linsvm solves every
    code of LIBLINEAR 2.50), or a ParameterError listing the codes."""
    name, entry = liblinear_entry(code)
    return name, dict(entry.implied)


def liblinear_entry(code: int):
    """(solver name, its LiblinearCode) for LIBLINEAR's `-s code`: the options the code
    implies and the defaults that make the problem LIBLINEAR's; a ParameterError listing
    the codes for any other number."""
    for info in SOLVERS.values():
        if code in info.liblinear_codes:
            return info.name, info.liblinear_codes[code]
    known = sorted(c for info in SOLVERS.values() for c in info.liblinear_codes)
    raise ParameterError(f"-s {code} is not a LIBLINEAR solver code; linsvm accepts the codes "
                         f"{', '.join(map(str, known))} or a solver name")


# LIBLINEAR's train options whose use depends on the -s code, and what each sets in
# linsvm: -p the tube width (or alm's p), -n nu, -w the class weights, -c the cost C
_CODE_FLAGS = ("-c", "-p", "-n", "-w")


def liblinear_no_effect(code: int) -> tuple:
    """The options of LIBLINEAR's train that `-s code` accepts and ignores, in the order
    -c, -p, -n, -w: those the code's solver has no use for.  LIBLINEAR's train parses
    every option for every code and its solvers read only their own (-p: the regression
    codes' tube width; -n: the one-class nu; -w: the classifiers' class weights; -c:
    every code but the one-class), and linsvm's solver for the code has an option or a
    kind that uses each exactly where LIBLINEAR's does, so the two lists are one."""
    info = get_solver(liblinear_code(code)[0])
    kind = import_by_name("linsvm.problem.kinds").KINDS[info.kind]    # NumPy: when it runs
    uses = {"-c": kind.uses_C, "-p": "epsilon" in info.options or "p" in info.options,
            "-n": "nu" in info.options, "-w": kind.weighs_classes}
    return tuple(f for f in _CODE_FLAGS if not uses[f])


_DEFAULT_OPTIONS: dict = {}     # solver name -> its checked defaults (read-only mappings)


def make_params(solver, C=1.0, tol=None, seed=0, options=None):
    """Params for `solver` (a name or SolverInfo): C and tol checked (> 0, finite; tol
    None: the solver's default_tol), seed an integer, the options by check_options."""
    info = solver if isinstance(solver, SolverInfo) else get_solver(solver)
    C = check_positive("C", C)
    tol = info.default_tol if tol is None else check_positive("tolerance", tol)
    try:
        seed = int(seed)
    except (TypeError, ValueError):
        raise ParameterError(f"seed must be an integer, got {seed!r}") from None
    if options:
        opts = types.MappingProxyType(check_options(info, options))
    else:
        opts = _DEFAULT_OPTIONS.get(info.name)
        if opts is None:
            opts = _DEFAULT_OPTIONS[info.name] = types.MappingProxyType(check_options(info, {}))
    return Params(info.name, C, tol, seed, opts)


def penalty_of(solver) -> str:
    """The regularizer of a model's solver: "l1" or "l2".  `solver` is a catalog name or
    a LIBLINEAR model's ``liblinear:<solver_type>`` (L1R_* types are L1-regularized);
    anything else is "l2"."""
    if isinstance(solver, str) and solver.startswith("liblinear:"):
        return "l1" if solver[len("liblinear:"):].startswith("L1R_") else "l2"
    info = SOLVERS.get(solver) if isinstance(solver, str) else None
    return info.penalty if info is not None else "l2"


def solver_for_penalty(solver, penalty, default="mfn"):
    """The solver scikit-learn's `penalty` asks for: None keeps `solver`; "l1" with the
    default solver gives cdn (scikit-learn's LinearSVC(penalty="l1") minimizes cdn's
    problem: squared hinge, dual=False); otherwise `solver` must have that penalty
    (ValueError, naming the solvers that do)."""
    if penalty is None:
        return solver
    if penalty not in ("l1", "l2"):
        raise ValueError(f"penalty must be 'l1', 'l2' or None, got {penalty!r}")
    if penalty_of(solver) == penalty:
        return solver
    if penalty == "l1" and solver == default:
        return "cdn"
    l1 = ", ".join(n for n, i in SOLVERS.items() if i.penalty == "l1")
    raise ValueError(f"solver {solver!r} is {penalty_of(solver).upper()}-regularized but penalty="
                     f"{penalty!r}: the L1-regularized solvers are {l1}, the others L2")


def streaming_solvers(kind):
    """The names of the solvers that read the rows in passes (SolverInfo.streams) and
    train a problem of `kind`: its own, and for multi-class problems the binary ones too
    (train() runs them one-vs-rest); mfn's family first (the default solver's), then in
    the catalog's order."""
    kinds = ("multiclass", "binary") if kind == "multiclass" else (kind,)
    found = [info for info in SOLVERS.values() if info.streams and info.kind in kinds]
    return [info.name for info in sorted(found, key=lambda i: i.family != "mfn")]


for _family in FAMILIES:
    register_family(_family)

