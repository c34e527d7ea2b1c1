"""Names resolved on first use, so that start-up imports only what a command needs.

Importing NumPy, SciPy and the compiled cores costs far more than running
`linsvm-train --help` or `--version`, so three places name what they hand out
instead of importing it:

* a package's ``__init__`` exports its public names with `lazy_exports`
  (``from linsvm.model import Model`` imports linsvm.model.model then, not before);
* the solver catalog (linsvm.problem.catalog) reads each family's pure-Python spec
  module linsvm/solvers/FAMILY_spec.py with `import_by_name`, where each solver's fit
  is a `LazyFunction` of linsvm.solvers, imported when a solve runs (and reads
  linsvm.problem.kinds, which imports NumPy, by name when a command asks it which
  LIBLINEAR options a code ignores);
* the command line (linsvm.cli.commands) builds a command's declaration when the
  command is wanted, and gives each command's body as a `LazyFunction` of its runner
  module; a runner names the parts only some of its runs need (-b 1, -C, -v) the
  same way.

These are the only imports by name in linsvm; tests/test_layout.py checks that the
names resolve and that they point where the layers allow (docs/design.md).
"""
from __future__ import annotations

import importlib
import sys

__all__ = ["lazy_exports", "LazyFunction", "import_by_name"]


def import_by_name(module: str):
    """The module called `module`, imported now: the catalog's spec modules, named by
    their family (linsvm.problem.catalog.FAMILIES) rather than imported by a statement
    of the layer below them."""
    return importlib.import_module(module)


def lazy_exports(package: str, table: dict):
    """A module-level ``__getattr__`` (PEP 562) for `package` that imports
    ``table[name]`` (a module name relative to the package, e.g. ".model") on the
    first access of `name`, and keeps the value in the package's namespace."""
    def __getattr__(name):
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(target, package), name)
        setattr(sys.modules[package], name, value)
        return value
    return __getattr__


class LazyFunction:
    """A function named by module and attribute, imported on its first call.

    ``LazyFunction("linsvm.solvers.mfn", "fit_mfn")(problem, ...)`` imports
    linsvm.solvers.mfn (once) and calls its fit_mfn.  `module` and `name` say what
    it stands for without importing anything."""

    __slots__ = ("module", "name", "_function")

    def __init__(self, module: str, name: str):
        self.module, self.name, self._function = module, name, None

    def resolve(self):
        """The function itself (imported on the first call)."""
        if self._function is None:
            self._function = getattr(importlib.import_module(self.module), self.name)
        return self._function

    def __call__(self, *args, **kwargs):
        return self.resolve()(*args, **kwargs)

    def __repr__(self):
        return f"LazyFunction({self.module!r}, {self.name!r})"
