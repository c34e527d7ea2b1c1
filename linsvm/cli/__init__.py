"""The command line (linsvm.cli.main): `linsvm`, `linsvm-train`, `linsvm-predict`,
`linsvm-cv`.  docs/train.md, docs/predict.md and docs/cv.md describe the commands."""
from .._lazy import lazy_exports
from .commands import COMMANDS
from .main import cli, cv_main, main, predict_main, train_main

# each command's declaration is imported when it is named (linsvm.cli.commands)
__getattr__ = lazy_exports(__name__, {attr: f".{module}" for module, attr in COMMANDS.values()})

__all__ = ["cli", "main", "train_main", "predict_main", "cv_main", "train_cmd", "predict_cmd",
           "cv_cmd", "synth_cmd", "renumber_cmd", "scale_cmd", "inspect_cmd", "convert_cmd"]
