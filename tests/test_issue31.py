"""Regression tests of issue 31, "Hardening, round two": one test (or a few) per item,
each named after its item, each failing on the code before the fix.

1. an output that is one of the command's inputs, or another of its outputs, is refused
   before any work (renumber, synth, cv --output-model, train, predict);
2. Ctrl-C at any moment of start-up: `interrupted`, exit 130, no traceback;
3. a label a kind's rules refuse names the file and line of the first such row;
4. a model whose weights overflow: one line naming the model and the example, no
   NumPy warning;
5. one verdict for a damaged .bz2 whatever readers are installed;
6. `linsvm synth` checks memory before allocating;
7. --help says that the thread count changes the iterates;
8. the interrupt tests pass when the runner ignores SIGINT.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import child_env

import linsvm
from linsvm.problem.catalog import SOLVERS


def run_cli(*args, cwd=None, stdin=None, env=None):
    """`python -m linsvm ARGS` as a user runs it: (exit status, stdout, stderr)."""
    r = subprocess.run([sys.executable, "-m", "linsvm", *map(str, args)], cwd=cwd,
                       input=stdin, capture_output=True, env=env or child_env(), timeout=300)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def one_error_line(err, prog="linsvm"):
    """The single line a failed command printed (no traceback, no warning)."""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{prog} ") and ": error: " in lines[0], err
    return lines[0]


# ------------------------------------------------------------------ item 7: --n-threads help

def test_item7_n_threads_help_says_the_count_changes_the_iterates():
    """w8a with -s alm took 450 iterations on one thread and 443 on two: the help of every
    solver's --n-threads must say that the thread count changes the rounding, so the
    iterates."""
    with_threads = [name for name, info in SOLVERS.items() if "n_threads" in info.options]
    assert {"mfn", "alm", "alm-exact", "perf"} <= set(with_threads)
    for name in with_threads:
        text = " ".join(SOLVERS[name].options["n_threads"].help.split())
        assert "rounding" in text and "iterates" in text, (name, text)
    status, out, _ = run_cli("train", "--help")
    text = " ".join(out.split())
    assert status == 0 and "changes the rounding of the sums and therefore the iterates" in text
    for name in ("mfn", "alm", "perf"):
        status, out, _ = run_cli("train", "--help-solver", name)
        assert status == 0 and "therefore the iterates" in " ".join(out.split()), name
