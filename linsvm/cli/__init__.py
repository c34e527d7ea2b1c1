"""The command line (linsvm.cli.main): `linsvm`, `linsvm-train`, `linsvm-predict`,
`linsvm-cv`.  docs/train.md, docs/predict.md and docs/cv.md describe the commands."""
from .commands import cv_cmd, predict_cmd, renumber_cmd, scale_cmd, synth_cmd, train_cmd
from .main import cli, cv_main, main, predict_main, train_main

__all__ = ["cli", "main", "train_main", "predict_main", "cv_main", "train_cmd", "predict_cmd",
           "cv_cmd", "synth_cmd", "renumber_cmd", "scale_cmd"]
