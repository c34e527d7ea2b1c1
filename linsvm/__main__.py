"""The entry points of the command line: `python -m linsvm` and the console scripts
`linsvm`, `linsvm-train`, `linsvm-predict`, `linsvm-cv` (pyproject.toml's
[project.scripts] name the functions here).

Ctrl-C must print `interrupted` and exit 130 from the first instruction on, also
while the command line is still being imported (linsvm.runtime.sigint), so this
module arranges for SIGINT before it imports anything else of linsvm: the console
script imports it, and with it the package (whose __init__ imports only the
errors, lazily the rest), before any of its code runs.  Each entry point here ends
the process once its command has ended, without the interpreter's module teardown
(linsvm.runtime.quick_exit).
"""
from .runtime import sigint

sigint.arrange()

import functools  # noqa: E402 - after arrange(), as every import below

from .cli.main import cv_main as _cv, main as _main, predict_main as _predict  # noqa: E402
from .cli.main import train_main as _train  # noqa: E402 - all after arrange()
from .runtime import quick_exit  # noqa: E402

__all__ = ["main", "train_main", "predict_main", "cv_main"]


def _program(entry):
    """The entry point `entry` of linsvm.cli.main as a whole program: once the command
    has ended, the process ends without the interpreter's module teardown
    (linsvm.runtime.quick_exit, which says when the normal exit runs instead)."""
    @functools.wraps(entry)
    def run():
        quick_exit.start()
        try:
            entry()
        except SystemExit as exc:
            quick_exit.finish(exc.code)
            raise
        quick_exit.finish(None)
    return run


main = _program(_main)
train_main = _program(_train)
predict_main = _program(_predict)
cv_main = _program(_cv)

if __name__ == "__main__":
    sigint.run_module_main(main)
