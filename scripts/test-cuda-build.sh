#!/usr/bin/env bash
# d2lgpu's unit tests and nbval over chapters/ under PyPI's CUDA build of the
# pinned torch, with no GPU visible: what `pip install torch` gives an ordinary
# Linux user, and what a Colab CPU runtime has. The unit tests' fakes and the
# stored outputs (recorded with the CPU build) must hold there too.
#
#   bash scripts/test-cuda-build.sh [PYTEST ARGS]   # default: tests/unit chapters
#
# Installs requirements.txt into .venv-cuda/ (git-ignored, several GB of
# nvidia-* wheels). Where pip finds only a CPU build of the pin (a local wheel
# or index shadows PyPI's), set CUDA_TORCH_VERSION to a version it has.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
torch="${CUDA_TORCH_VERSION:-$(sed -n 's/^torch==//p' requirements.txt)}"
[ -n "$torch" ] || { echo "test-cuda-build: no torch==VERSION in requirements.txt" >&2; exit 2; }
[ -x .venv-cuda/bin/python ] || "${PYTHON:-python3}" -m venv .venv-cuda
sed "s/^torch==.*/torch==$torch/" requirements.txt > .venv-cuda/requirements.txt
.venv-cuda/bin/python -m pip install -q --disable-pip-version-check -r .venv-cuda/requirements.txt
export CUDA_VISIBLE_DEVICES=
.venv-cuda/bin/python -c "import torch
assert torch.version.cuda, f'torch {torch.__version__} is not a CUDA build: set CUDA_TORCH_VERSION'
assert not torch.cuda.is_available(), 'a GPU is visible: this tests the no-GPU case'
print('test-cuda-build: torch', torch.__version__, 'CUDA', torch.version.cuda, 'no GPU visible')"
[ $# -gt 0 ] || set -- tests/unit chapters
exec .venv-cuda/bin/python -m pytest -q "$@"
