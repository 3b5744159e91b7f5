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
# runs/MACHINE/<chapter>.ipynb (volatile metadata removed),
# runs/MACHINE/run.json (commit, GPU names from torch, torch/CUDA/Python
# versions, driver from nvidia-smi, date) and runs/MACHINE/baseline/<chapter>.ipynb
# (the checkout's stored notebooks as they were before executing, images
# dropped: what the CPU build machine showed at this commit, which
# tests/test_recorded_runs.py uses to tell an output that changed since the
# recording from a hardware difference). Commit runs/MACHINE/ afterwards.
#
# Python: where .gpu/whl/ exists (../shared/gpu/fetch-wheels.sh), the
# environment of ../shared/gpu/check.sh: the machine's python3 with its own
# CUDA torch, the wheels of .gpu/ installed into /tmp/site, this checkout
# first on PYTHONPATH. Otherwise .venv/bin/python, else python3. Set PYTHON
# to choose another interpreter.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -lt 1 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/record-run.sh MACHINE [--label LABEL] [--chapter NAME ...]" >&2
  exit 2
fi
python="${PYTHON:-}"
if [ -z "$python" ] && compgen -G ".gpu/whl/*.whl" >/dev/null; then
  # As ../shared/gpu/check.sh does: the machine's python3 and torch, plus the
  # Jupyter wheels of .gpu/ installed into /tmp/site.
  python=python3
  "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .gpu/whl/*.whl || { echo "record-run: wheel install failed" >&2; exit 9; }
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}" PATH="/tmp/site/bin:$PATH"
elif [ -z "$python" ] && [ -x .venv/bin/python ]; then
  python=.venv/bin/python
elif [ -z "$python" ]; then
  python=python3
fi
# The checkout's d2lgpu, so that the recording is of this commit's code.
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ -n "$(git status --porcelain -- chapters d2lgpu 2>/dev/null)" ]; then
  echo "record-run: warning: chapters/ or d2lgpu/ has uncommitted changes; run.json names HEAD" >&2
fi
exec "$python" scripts/runs.py record "$@"
