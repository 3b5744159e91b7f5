#!/usr/bin/env bash
# After editing chapters/X.md: bash scripts/refresh.sh chapters/X.md
# Writes chapters/X.ipynb from the .md (never the other way), executes it in a
# fresh kernel and stores its outputs. With no argument: every chapter.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
exec "$root/.venv/bin/python" -m booktools.notebooks refresh "$@"
