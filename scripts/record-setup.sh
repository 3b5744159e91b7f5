#!/usr/bin/env bash
# Prepare this machine's Python for recording a run (the record workflow's
# first step; by hand, the same): it must have a CUDA build of torch that sees
# a GPU, and gets this checkout's d2lgpu and booktools (with nbval, which
# `python -m booktools.runs stale` compares outputs with), keeping that torch.
#
#   bash scripts/record-setup.sh                  # python3
#   PYTHON=/opt/conda/bin/python bash scripts/record-setup.sh
#
# Stops, installing nothing, when the Python has no torch, a torch without
# CUDA, or no visible GPU.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || { echo "record-setup: no Python at PYTHON=$python" >&2; exit 2; }
if ! "$python" - <<'PY'
import sys
try:
    import torch
except ImportError:
    sys.exit(f"record-setup: {sys.executable} has no torch; install a CUDA build of PyTorch first")
if not torch.version.cuda:
    sys.exit(f"record-setup: torch {torch.__version__} at {sys.executable} is not a CUDA build")
if not torch.cuda.is_available():
    sys.exit(f"record-setup: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU here")
print(f"record-setup: torch {torch.__version__} sees {torch.cuda.device_count()} GPU(s): "
      f"{torch.cuda.get_device_name(0)}")
PY
then
  exit 1
fi
"$python" -m pip install --disable-pip-version-check -q -e . -e "./tools[check]"
echo "record-setup: $python has this checkout's d2lgpu and booktools"
