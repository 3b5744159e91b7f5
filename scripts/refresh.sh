#!/usr/bin/env bash
# After editing chapters/X.md: bash scripts/refresh.sh chapters/X.md (no argument: every
# chapter). Writes chapters/X.ipynb from the .md, executes it in a fresh kernel, then
# carries its code and outputs into the editions' notebooks (booktools.i18n sync).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/scripts/setup.sh"
"$root/.venv/bin/python" -m booktools.notebooks refresh "$@"
exec "$root/.venv/bin/python" -m booktools.i18n sync
