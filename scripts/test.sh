#!/usr/bin/env bash
# Set up (if needed) and run every test: d2lgpu's unit tests, the notebook
# pair checks, nbval (re-executes every chapter and compares its outputs), the
# strict site build and the checks of the built site.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k devices`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
# Several processes share the cores here (two test workers, a kernel or a
# browser each). libgomp's threads, which PyTorch's CPU ops use, spin while
# they wait for each other by default; a thread spinning on a core another
# process needs made single cells run 50 times longer (a copy loop of
# tensors.ipynb took 73 s instead of 1 s). PASSIVE makes them sleep instead.
# Nothing compared depends on it: it changes how fast, not what, is printed.
export OMP_WAIT_POLICY="${OMP_WAIT_POLICY:-PASSIVE}"
# One worker per core; --dist loadfile keeps each notebook in one kernel, and
# --no-loadscope-reorder hands out the files in the order tests/conftest.py
# sets (long ones first).
exec .venv/bin/python -m pytest -n "${TEST_WORKERS:-2}" --dist loadfile \
  --no-loadscope-reorder \
  --nbval --nbval-current-env --nbval-sanitize-with tests/sanitize.cfg \
  -p no:cacheprovider "$@"
