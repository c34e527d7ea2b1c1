"""The entry points of the command line: `python -m linsvm` and the console scripts
`linsvm`, `linsvm-train`, `linsvm-predict`, `linsvm-cv` (pyproject.toml's
[project.scripts] name the functions here).

Ctrl-C must print `interrupted` and exit 130 from the first instruction on, also
while the command line is still being imported (linsvm.runtime.sigint), so this
module arranges for SIGINT before it imports anything else of linsvm: the console
script imports it, and with it the package (whose __init__ imports only the
errors, lazily the rest), before any of its code runs.
"""
from .runtime import sigint

sigint.arrange()

from .cli.main import cv_main, main, predict_main, train_main  # noqa: E402 - after arrange()

__all__ = ["main", "train_main", "predict_main", "cv_main"]

if __name__ == "__main__":
    sigint.run_module_main(main)
