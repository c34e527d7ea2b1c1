"""Exceptions of linsvm.

Every error a user can cause (bad data, bad model file, bad parameter) is a
subclass of LinsvmError, so the command line can print it as one line and exit
non-zero without a traceback.  They also subclass ValueError, which is what a
Python caller expects from bad input.
"""
import threading
import warnings


class LinsvmError(ValueError):
    """Base class of all user-facing linsvm errors."""


class DataError(LinsvmError):
    """Malformed or unusable data; the message names the file and line."""


class NoExamplesError(DataError):
    """No examples to train on (an empty input, or no rows on any MPI rank); the command
    line puts the input's name in front (linsvm.cli.runs.labels_located)."""


class ModelError(LinsvmError):
    """A model file that is truncated, corrupt, foreign, or inconsistent."""


class ParameterError(LinsvmError):
    """An option or parameter out of its valid range."""


class LinsvmWarning(UserWarning):
    """Base class of linsvm's warnings (a note about a solve, e.g. a warm start ignored)."""


def _make_convergence_warning():
    """ConvergenceWarning: a subclass of scikit-learn's when scikit-learn is
    importable (so `warnings.filterwarnings("ignore", category=sklearn's)` and
    sklearn-style code catch it too), of LinsvmWarning (a UserWarning) always."""
    try:
        from sklearn.exceptions import ConvergenceWarning as _SkConvergenceWarning
    except Exception:                   # not installed or broken: UserWarning only
        bases = (LinsvmWarning,)
    else:
        bases = (_SkConvergenceWarning, LinsvmWarning)
    return type("ConvergenceWarning", bases, {
        "__module__": __name__,
        "__doc__": "A solve stopped without certifying its stated accuracy (iteration cap, "
                   "stall, breakdown); the message names the solver, the measure reached and "
                   "the tolerance.",
    })


# Importing scikit-learn costs several times linsvm's own import (docs/benchmarks.md,
# "Start-up"), so the class is made on first use (PEP 562 module
# __getattr__): by `linsvm.ConvergenceWarning`, or when a solve first warns.  The
# command line prints warnings itself and never makes it.  If scikit-learn is
# already imported, making it costs nothing.
_LAZY = {}
_LAZY_LOCK = threading.Lock()    # one class, even if threads ask at once


def __getattr__(name):
    if name == "ConvergenceWarning":
        with _LAZY_LOCK:
            if name not in _LAZY:
                _LAZY[name] = _make_convergence_warning()
        return _LAZY[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def warn(message, convergence=True, stacklevel=2):
    """Emit one linsvm warning: a ConvergenceWarning, or (convergence=False) a
    LinsvmWarning; stacklevel as for warnings.warn, counted from the caller."""
    category = __getattr__("ConvergenceWarning") if convergence else LinsvmWarning
    warnings.warn(message, category, stacklevel=stacklevel + 1)
