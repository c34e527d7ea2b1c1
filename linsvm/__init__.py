"""linsvm: linear SVMs and LIBLINEAR's problems on large sparse data.

The public API::

    X, y = linsvm.load_svmlight("train.svm")
    model = linsvm.train(X, y, solver="mfn", C=1.0)
    model.predict(X_test); model.save("train.model")
    model = linsvm.load_model("train.model")

Public and stable are the names here, `linsvm.errors`, `linsvm.sklearn`,
`linsvm.cv.cross_validate` and `linsvm.distributed.read_training_share`; every
other module is internal and may move (docs/design.md).  The names are imported on
first use, so that `import linsvm` and the command line's --help stay fast.
"""
from . import _openmp  # noqa: F401  (before any compiled module: the OpenMP runtime's wait)
from ._lazy import lazy_exports
from ._version import __version__
from .errors import DataError, LinsvmError, LinsvmWarning, ModelError, ParameterError

__all__ = [
    "__version__", "train", "load_svmlight", "dump_svmlight", "load_model", "Model",
    "LinsvmError", "DataError", "ModelError", "ParameterError", "LinsvmWarning",
    "ConvergenceWarning",
]

__getattr__ = lazy_exports(__name__, {
    "train": ".fit.training",
    "load_svmlight": ".io.svmlight", "dump_svmlight": ".io.svmlight",
    "Model": ".model.model", "load_model": ".model.model",
    "ConvergenceWarning": ".errors",    # made on first use (linsvm.errors)
})
