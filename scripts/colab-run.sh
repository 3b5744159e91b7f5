#!/usr/bin/env bash
# bash scripts/colab-run.sh [--report FILE] [CHAPTER ...]: python -m booktools.colab with
# the Python of Colab's runtime image ($PYTHON, else python3; the weekly colab workflow).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || { echo "colab-run: no Python at PYTHON=$python" >&2; exit 2; }
# booktools alone (tools/) for the runner; the kernels get no PYTHONPATH.
PYTHONPATH="$PWD/tools" exec "$python" -m booktools.colab "$@"
