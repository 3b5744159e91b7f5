#!/usr/bin/env bash
# Record a run of every chapter on this machine as runs/MACHINE/ (the website
# shows it under each `hardware` cell; tests/test_recorded_runs.py compares
# the stored notebooks with it). On a GPU machine, from the project root:
#
#   bash scripts/record-run.sh nvidia-t4            # or nvidia-h100, 2x-nvidia-a100, ...
#   bash scripts/record-run.sh nvidia-t4 --label "NVIDIA T4 (Colab)"
#
# It executes each chapters/*.ipynb in a fresh kernel from chapters/ and, only
# when no cell raised except those tagged raises-exception, writes
# runs/MACHINE/<chapter>.ipynb (volatile metadata removed) and
# runs/MACHINE/run.json (commit, GPU names from torch, torch/CUDA/Python
# versions, driver from nvidia-smi, date). Commit runs/MACHINE/ afterwards.
#
# Python: .venv/bin/python when there is one; otherwise the environment of
# ../shared/gpu/check.sh (Python 3.12 with its own torch, the wheels of .gpu/
# installed into /tmp/site, this checkout first on PYTHONPATH), set up here
# the same way when .gpu/whl exists. Set PYTHON to use another interpreter.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -lt 1 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/record-run.sh MACHINE [--label LABEL]" >&2
  exit 2
fi
python="${PYTHON:-}"
if [ -z "$python" ] && [ -x .venv/bin/python ]; then
  python=.venv/bin/python
elif [ -z "$python" ]; then
  python=python3
  if compgen -G ".gpu/whl/*.whl" >/dev/null; then
    # As ../shared/gpu/check.sh does: Jupyter's wheels into /tmp/site.
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
      --target /tmp/site .gpu/whl/*.whl || { echo "record-run: wheel install failed" >&2; exit 9; }
    export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}" PATH="/tmp/site/bin:$PATH"
  fi
fi
# The checkout's d2lgpu, so that the recording is of this commit's code.
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ -n "$(git status --porcelain -- chapters d2lgpu 2>/dev/null)" ]; then
  echo "record-run: warning: chapters/ or d2lgpu/ has uncommitted changes; run.json names HEAD" >&2
fi
exec "$python" scripts/runs.py record "$@"
