#!/usr/bin/env bash
# Set up (if needed) and run every test: d2lgpu's unit tests, the notebook
# pair checks, nbval (re-executes every chapter and compares its outputs), the
# recorded GPU runs, the strict site build and the checks of the built site.
# After setting up .venv this is plain `pytest`: its options are in
# pyproject.toml, and tests/conftest.py builds the site first.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k devices`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
exec .venv/bin/python -m pytest "$@"
