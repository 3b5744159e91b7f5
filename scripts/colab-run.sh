#!/usr/bin/env bash
# Run every chapter as a Colab reader does (python -m booktools.colab), with the
# Python of Colab's runtime image ($PYTHON, else python3; the weekly colab workflow):
#
#   bash scripts/colab-run.sh [--report FILE] [CHAPTER ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || { echo "colab-run: no Python at PYTHON=$python" >&2; exit 2; }
# booktools alone (tools/) for the runner; the kernels get no PYTHONPATH.
PYTHONPATH="$root/tools" exec "$python" -m booktools.colab "$@"
