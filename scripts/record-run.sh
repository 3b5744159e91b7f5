#!/usr/bin/env bash
# Record a run of every chapter on this machine as runs/MACHINE/ (the website
# shows it under each `hardware` cell; tests/test_recorded_runs.py compares
# the stored notebooks with it). On a GPU machine, from the project root:
#
#   bash scripts/record-run.sh nvidia-t4            # or nvidia-h100, 2x-nvidia-a100, ...
#   bash scripts/record-run.sh nvidia-t4 --label "NVIDIA T4 (Colab)"
#   PYTHON=/opt/conda/bin/python bash scripts/record-run.sh nvidia-a100
#
# It executes each chapters/*.ipynb in a fresh kernel from chapters/ and, only
# when no cell raised except those tagged raises-exception, writes
# runs/MACHINE/<chapter>.ipynb (volatile metadata removed),
# runs/MACHINE/run.json (commit, GPU names and compute capabilities from
# torch, torch/CUDA/Python versions, driver from nvidia-smi, date, and under
# "conditions" the SM clock, power draw and limit and clock-event reasons that
# nvidia-smi reported every second while recording: min/median/max per GPU)
# and runs/MACHINE/artifacts/<chapter>/
# <cell name>/: the files each named hardware cell wrote under chapters/ (a
# profiler trace, a memory snapshot; at most 10 MiB each, larger ones are left
# out with a warning), which the site offers for download under that cell's
# tab. Commit runs/MACHINE/ afterwards.
#
# Python: $PYTHON, else .venv-record/bin/python (scripts/record-setup.sh makes
# it, online or from a folder of wheels), else .venv/bin/python, else python3:
# an interpreter with a CUDA build of torch, matplotlib and what
# `python -m booktools.runs pins` lists. Each chapter runs in a kernel of that
# interpreter. This checkout's d2lgpu and booktools come first on its path, so
# the recording is of this commit's code.
#
# A recording made on GPUs is replaced only from the same GPUs: on a machine
# without one, or with another, this stops and writes nothing unless given
# --replace. The new recording is written beside the old one and swapped in
# when complete.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -lt 1 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/record-run.sh MACHINE [--label LABEL] [--chapter NAME ...] [--replace]" >&2
  exit 2
fi
python="$(bash "$root/scripts/record-python.sh")"
command -v "$python" >/dev/null 2>&1 || { echo "record-run: no Python at PYTHON=$python" >&2; exit 2; }
export PYTHONPATH="$root:$root/tools${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
if [ -n "$(git status --porcelain -- chapters d2lgpu 2>/dev/null)" ]; then
  echo "record-run: warning: chapters/ or d2lgpu/ has uncommitted changes; run.json names HEAD" >&2
fi
exec "$python" -m booktools.runs record "$@"
