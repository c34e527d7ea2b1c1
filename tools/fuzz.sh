#!/usr/bin/env bash
# Long property-based runs (tests/test_fuzz_input.py, tests/test_model_fuzz.py): the parser
# against an independent reader, the streaming reader against load_svmlight, the
# compressed readers against the standard library, the model loader on mutated files;
# and (issue 31) labels a kind refuses (non-integer, huge, negative zero, many classes)
# naming their line, output paths that are inputs or each other (by name, symlink,
# hard link, relative or absolute, '-'), weights near and beyond overflow.
#
#   tools/fuzz.sh [EXAMPLES_PER_TEST] [extra pytest args]
#
# EXAMPLES_PER_TEST (default 100000; 1M runs for hours) sets the `long` hypothesis
# profile registered in tests/conftest.py.  Failures are shrunk and printed with a
# `git apply`-able patch that adds them as @example cases; hypothesis keeps them in
# .hypothesis/ (ignored by git) and replays them first on the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
export LINSVM_FUZZ_EXAMPLES="${1:-100000}"
shift || true
exec python3 -m pytest -q -p no:cacheprovider tests/test_fuzz_input.py tests/test_model_fuzz.py \
    --hypothesis-profile=long --hypothesis-show-statistics "$@"
