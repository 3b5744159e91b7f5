#!/usr/bin/env bash
# d2lgpu's unit tests and nbval over chapters/ under PyTorch's CUDA build with
# no GPU visible: what `pip install torch` gives on Linux and what a Colab CPU
# runtime has. The fakes of the unit tests must stand in for a GPU there too
# (a CUDA build lists its architectures without a GPU), and the stored
# outputs (recorded with the CPU-only build) must hold.
#
# Creates .venv-cuda/ (git-ignored) the first time, with requirements.txt and
# its pinned torch as PyPI's CUDA build (~5.5 GB with its nvidia-* wheels),
# then runs `CUDA_VISIBLE_DEVICES= pytest tests/unit chapters` (nbval with
# tests/sanitize.cfg, as pyproject.toml sets). Extra arguments go to pytest
# instead (e.g. chapters/devices.ipynb). Where a local wheel or index gives a CPU-only
# build of the pinned version instead (as on the book's CI machine), the
# script says so and stops: set CUDA_TORCH_VERSION to a version whose CUDA
# build pip does get there (e.g. CUDA_TORCH_VERSION=2.14.1).
# Not part of scripts/test.sh: installing takes minutes, the run about as long
# as the nbval part of the main test command.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
venv="$root/.venv-cuda"
pinned="$(sed -n 's/^torch==//p' requirements.txt)"
[ -n "$pinned" ] || { echo "test-cuda-build: no torch==VERSION pin in requirements.txt" >&2; exit 1; }
torch_version="${CUDA_TORCH_VERSION:-$pinned}"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
stamp="$venv/.requirements.sha256"
want="$( (cat requirements.txt pyproject.toml; echo "$torch_version") | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  reqs="$venv/requirements-cuda.txt"
  sed "s/^torch==.*/torch==$torch_version/" requirements.txt > "$reqs"
  grep -q "^torch==$torch_version\$" "$reqs" || { echo "test-cuda-build: no torch pin in requirements.txt" >&2; exit 1; }
  echo "test-cuda-build: installing requirements.txt with torch==$torch_version into $venv"
  start=$(date +%s)
  if ! "$venv/bin/python" -m pip install --disable-pip-version-check -r "$reqs" >"$venv/pip-install.log" 2>&1; then
    tail -n 30 "$venv/pip-install.log" >&2
    echo "test-cuda-build: pip install failed; full log in $venv/pip-install.log" >&2
    exit 1
  fi
  echo "test-cuda-build: installed in $(( $(date +%s) - start )) s"
  echo "$want" > "$stamp"
fi
# The CUDA build is what is being tested: refuse to report on anything else.
CUDA_VISIBLE_DEVICES= "$venv/bin/python" - <<'PY'
import torch
assert torch.version.cuda, (
    f"torch {torch.__version__} is not a CUDA build: pip took a CPU-only wheel of this version "
    "(a local wheel or index shadows PyPI's); set CUDA_TORCH_VERSION to a version whose CUDA "
    "build pip gets here, e.g. 2.14.1")
assert not torch.cuda.is_available(), "a GPU is visible; this script tests the no-GPU case"
print(f"test-cuda-build: torch {torch.__version__} (CUDA {torch.version.cuda}), no GPU visible")
PY
[ $# -gt 0 ] || set -- tests/unit chapters
start=$(date +%s)
set +e
# Plain pytest: its options (nbval, the sanitizer, workers) are in pyproject.toml.
CUDA_VISIBLE_DEVICES= "$venv/bin/python" -m pytest -q "$@"
rc=$?
echo "test-cuda-build: pytest $* ran in $(( $(date +%s) - start )) s (exit $rc)"
exit $rc
