#!/usr/bin/env bash
# Run every chapter as a Colab reader does, in Colab's runtime image (the
# weekly colab workflow runs this in us-docker.pkg.dev/colab-images/public/runtime):
#
#   bash scripts/colab-run.sh [--report FILE] [CHAPTER ...]
#
# Each chapters/NAME.ipynb is executed alone, in an empty folder, by the
# image's Python ($PYTHON, else python3) with nothing of this checkout on its
# path: its first cell installs d2lgpu from GitHub as a reader's does
# (python -m booktools.colab). Exit 1, naming each failing cell, when a
# chapter raised outside its raises-exception cells.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || { echo "colab-run: no Python at PYTHON=$python" >&2; exit 2; }
# booktools alone (tools/), so that the runner imports; the kernels get no PYTHONPATH.
PYTHONPATH="$root/tools" exec "$python" -m booktools.colab "$@"
