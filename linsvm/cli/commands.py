"""The commands: where each is declared, and the body each runs.

Each command's declaration (arguments, options, help) is in its own module --
command_train, command_predict, command_cv, command_tools, command_inspect,
command_convert -- imported when the command is wanted (`command`), and its body in a
runner module (linsvm.cli.run_train, run_predict, run_cv, run_tools, run_inspect,
run_convert), imported only when the command runs: `--help` and `--version` read the declarations and the solver
catalog alone and import no NumPy, and `linsvm-predict` builds none of the training
options (linsvm._lazy; docs/benchmarks.md, "Start-up").  Every body is wrapped by
fail_on_errors: one line per error, never a traceback.
"""
from __future__ import annotations

from .._lazy import LazyFunction
from .failures import fail_on_errors

__all__ = ["COMMANDS", "command", "runner"]

# `linsvm NAME` -> (module of linsvm.cli declaring it, the command's name there)
COMMANDS = {
    "train": ("command_train", "train_cmd"),
    "predict": ("command_predict", "predict_cmd"),
    "cv": ("command_cv", "cv_cmd"),
    "synth": ("command_tools", "synth_cmd"),
    "renumber": ("command_tools", "renumber_cmd"),
    "scale": ("command_tools", "scale_cmd"),
    "inspect": ("command_inspect", "inspect_cmd"),
    "convert": ("command_convert", "convert_cmd"),
}


def command(name):
    """The Click command `linsvm NAME`, its module imported on first use."""
    module, attr = COMMANDS[name]
    return LazyFunction(f"linsvm.cli.{module}", attr).resolve()


def runner(module, name):
    """The body of a command: linsvm.cli.`module`.`name`, imported when the command runs,
    its errors as one line each."""
    return fail_on_errors(LazyFunction(f"linsvm.cli.{module}", name))
