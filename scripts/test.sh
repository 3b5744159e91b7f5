#!/usr/bin/env bash
# Set up (if needed) and run every test: plain pytest, its options in pyproject.toml
# (tests/conftest.py builds the site first). Extra arguments go to pytest, e.g.
# `bash scripts/test.sh -k devices`. npm ci installs axe-core (package-lock.json)
# for the browser tests (tests/browser/axe_scan.py).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
[ -f node_modules/axe-core/axe.min.js ] || npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
exec .venv/bin/python -m pytest "$@"
