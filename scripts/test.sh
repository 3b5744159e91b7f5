#!/usr/bin/env bash
# Every test (pytest's options: pyproject.toml); extra arguments go to pytest. npm ci
# installs axe-core for the browser tests.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
[ -f node_modules/axe-core/axe.min.js ] || npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
exec .venv/bin/python -m pytest "$@"
