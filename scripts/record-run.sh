#!/usr/bin/env bash
# Record every chapter on this machine as runs/MACHINE/ (runbooks/recording.md),
# with the Python record-python.sh names and this checkout's d2lgpu and booktools.
#   bash scripts/record-run.sh nvidia-t4 [--label "NVIDIA T4 (Colab)"] [--chapter NAME ...] [--replace]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/record-python.sh"  # root, $python, PYTHONPATH
if [ $# -lt 1 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/record-run.sh MACHINE [--label LABEL] [--chapter NAME ...] [--replace]" >&2
  exit 2
fi
command -v "$python" >/dev/null 2>&1 || { echo "record-run: no Python at PYTHON=$python" >&2; exit 2; }
export PYTHONUNBUFFERED=1
if [ -n "$(git status --porcelain -- chapters d2lgpu 2>/dev/null)" ]; then
  echo "record-run: warning: chapters/ or d2lgpu/ has uncommitted changes; run.json names HEAD" >&2
fi
exec "$python" -m booktools.runs record "$@"
