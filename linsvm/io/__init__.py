"""Reading and writing files: SVM-light data (plain or compressed, whole, streamed or
one share per MPI rank), feature maps, generated data sets, and the one atomic
writer every output goes through.  docs/design.md places it."""
from .._lazy import lazy_exports

__getattr__ = lazy_exports(__name__, {
    **dict.fromkeys(("load_svmlight", "load_svmlight_buffers", "iter_svmlight",
                     "dump_svmlight"), ".svmlight"),
})
