"""The trained model: decision values, predictions, probabilities, its file formats
(linsvm's and LIBLINEAR's), and streaming prediction of a file.

    from linsvm.model import Model, load_model
"""
from .._lazy import lazy_exports
from .formats import MODEL_FORMATS

__getattr__ = lazy_exports(__name__, {
    **dict.fromkeys(("Model", "load_model", "check_model_format", "ScoreOverflowError",
                     "FORMAT_VERSION", "KINDS"), ".model"),
})

__all__ = ["Model", "load_model", "check_model_format", "ScoreOverflowError", "MODEL_FORMATS",
           "FORMAT_VERSION", "KINDS"]
