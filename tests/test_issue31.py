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


# ------------------------------------------------------------------ item 6: synth's memory

def _limit_address_space(limit):
    def set_limit():
        import resource
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return set_limit


def test_item6_synth_checks_memory_before_allocating(tmp_path):
    """`linsvm synth --n-features 2147483647` tried the allocation and printed "out of
    memory (Unable to allocate 16.0 GiB ...)"; now it is refused before anything is
    allocated, in one line that says how much it needs and how much there is, as train's
    memory check does.  (The child's address space is capped at 6 GiB, so that the
    check has a limit to find whatever memory the machine has.)"""
    out = tmp_path / "big.svm"
    r = subprocess.run([sys.executable, "-m", "linsvm", "synth", "--n-features", "2147483647",
                        str(out), str(tmp_path / "big.t")], capture_output=True, text=True,
                       env=child_env(), timeout=300, preexec_fn=_limit_address_space(6 << 30))
    line = one_error_line(r.stderr)
    assert r.returncode == 1
    assert "needs about" in line and "is available (RLIMIT_AS)" in line, line
    assert "Unable to allocate" not in line and "out of memory" not in line
    assert sorted(p.name for p in tmp_path.iterdir()) == []
    # the Python function checks the same way, before drawing anything
    from linsvm.io.synth import make_text_classification, memory_needed
    assert memory_needed(20000, 2147483647) > 16 << 30
    assert memory_needed(100, 50) < 1 << 20
    X, y = make_text_classification(n_samples=100, n_features=50, seed=1)
    assert X.shape == (100, 50)
