"""linsvm: linear SVMs on large sparse data.

The public API::

    X, y = linsvm.load_svmlight("train.svm")
    model = linsvm.train(X, y, solver="mfn", C=1.0)
    model.predict(X_test); model.save("train.model")
    model = linsvm.load_model("train.model")
"""
from ._version import __version__
from .errors import DataError, LinsvmError, LinsvmWarning, ModelError, ParameterError
from .data import dump_svmlight, load_svmlight
from .model import Model, load_model
from .train import train

__all__ = [
    "__version__", "train", "load_svmlight", "dump_svmlight", "load_model", "Model",
    "LinsvmError", "DataError", "ModelError", "ParameterError", "LinsvmWarning",
    "ConvergenceWarning",
]


def __getattr__(name):
    """`linsvm.ConvergenceWarning` is made on first use (see linsvm.errors: importing
    scikit-learn, its base class, would triple linsvm's import time)."""
    if name == "ConvergenceWarning":
        from . import errors

        return errors.ConvergenceWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
