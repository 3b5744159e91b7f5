#!/usr/bin/env bash
# Record every chapter on this machine as runs/MACHINE/ (runbooks/recording.md):
# python -m booktools.runs record, with $PYTHON, else .venv-record (record-setup.sh),
# else .venv, else python3, and this checkout's d2lgpu and booktools first on its path.
#   bash scripts/record-run.sh nvidia-t4 [--label "NVIDIA T4 (Colab)"] [--chapter NAME ...] [--replace] [--if-stale]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-}"
for candidate in .venv-record/bin/python .venv/bin/python; do
  [ -n "$python" ] || [ ! -x "$candidate" ] || python="$root/$candidate"
done
python="${python:-python3}"
if [ $# -lt 1 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/record-run.sh MACHINE [--label LABEL] [--chapter NAME ...] [--replace] [--if-stale]" >&2
  exit 2
fi
command -v "$python" >/dev/null 2>&1 || { echo "record-run: no Python at PYTHON=$python" >&2; exit 2; }
export PYTHONUNBUFFERED=1 PYTHONPATH="$root:$root/tools${PYTHONPATH:+:$PYTHONPATH}"
if [ -n "$(git status --porcelain -- chapters d2lgpu 2>/dev/null)" ]; then
  echo "record-run: warning: chapters/ or d2lgpu/ has uncommitted changes; run.json names HEAD" >&2
fi
exec "$python" -m booktools.runs record "$@"
