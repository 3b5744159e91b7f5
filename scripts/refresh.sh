#!/usr/bin/env bash
# After editing chapters/X.md: bash scripts/refresh.sh chapters/X.md
# Writes chapters/X.ipynb from the .md (never the other way), executes it in a
# fresh kernel and stores its outputs; then carries the English code cells and
# outputs into the editions' notebooks (booktools.i18n sync). With no argument:
# every chapter. Then: bash scripts/check.sh chapters/X.md
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
"$root/.venv/bin/python" -m booktools.notebooks refresh "$@"
exec "$root/.venv/bin/python" -m booktools.i18n sync
