#!/usr/bin/env bash
# Make .venv-record/ beside the machine's CUDA torch ($PYTHON, else python3) and
# install what recording needs besides torch (requirements.txt's lines marked "# recording").
#   bash scripts/record-setup.sh [--wheels DIR]    # DIR: from scripts/record-wheels.sh, offline
# RECORD_REHEARSAL=1 skips the GPU checks, to rehearse on a CPU into a scratch folder.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
wheels=""
if [ $# -eq 2 ] && [ "$1" = --wheels ]; then
  wheels="$(cd "$2" 2>/dev/null && pwd)" || { echo "record-setup: no folder of wheels at $2" >&2; exit 2; }
  ls "$wheels"/*.whl >/dev/null 2>&1 || { echo "record-setup: $2 holds no wheels (bash scripts/record-wheels.sh $2)" >&2; exit 2; }
elif [ $# -ne 0 ]; then
  echo "usage: bash scripts/record-setup.sh [--wheels DIR]" >&2
  exit 2
fi
python="${PYTHON:-python3}"
command -v "$python" >/dev/null 2>&1 || { echo "record-setup: no Python at PYTHON=$python" >&2; exit 2; }
"$python" - <<'PY'
import os
import sys
try:
    import torch
except ImportError:
    sys.exit(f"record-setup: {sys.executable} has no torch; install a CUDA build of PyTorch first")
if os.environ.get("RECORD_REHEARSAL") == "1":  # a rehearsal on a CPU: no GPU needed
    print(f"record-setup: rehearsal with torch {torch.__version__} (no GPU needed)")
    sys.exit(0)
if not torch.version.cuda:
    sys.exit(f"record-setup: torch {torch.__version__} at {sys.executable} is not a CUDA build")
if not torch.cuda.is_available():
    sys.exit(f"record-setup: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU here")
print(f"record-setup: torch {torch.__version__} sees {torch.cuda.device_count()} GPU(s): "
      f"{torch.cuda.get_device_name(0)}")
PY
venv="$root/.venv-record"
# Without pip: it borrows the machine's (Debian's python3 may have no ensurepip).
"$python" -m venv --system-site-packages --clear --without-pip "$venv"
# Where $python is itself a venv (GPU images ship torch in one), its packages too.
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
"$python" -c 'import site, sys; print("\n".join(site.getsitepackages()))' > "$site/_record_parent.pth"
if ! "$venv/bin/python" -m pip --version >/dev/null 2>&1; then
  "$venv/bin/python" -m ensurepip --default-pip >/dev/null \
    || { echo "record-setup: $python has no pip to lend the venv, and no ensurepip to make one" >&2; exit 1; }
fi
mapfile -t pins < <(awk '/# recording$/ {print $1}' "$root/requirements.txt")
[ ${#pins[@]} -gt 0 ] || exit 1
source=()
[ -z "$wheels" ] || source=(--no-index --find-links "$wheels")
"$venv/bin/python" -m pip install --disable-pip-version-check -q "${source[@]}" "${pins[@]}"
torch="$("$venv/bin/python" -c "import os, torch
assert os.environ.get('RECORD_REHEARSAL') == '1' or torch.cuda.is_available(), 'the venv lost the GPU torch'
print(torch.__version__)")"
echo "record-setup: $venv has ${pins[*]} beside torch $torch"
