#!/usr/bin/env bash
# d2lgpu's unit tests and nbval under PyPI's CUDA build of the pinned torch, no GPU visible
# (a Colab CPU runtime), in .venv-cuda/; CUDA_TORCH_VERSION picks another version.
#   bash scripts/test-cuda-build.sh [PYTEST ARGS]   # default: tests/unit chapters
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
torch="${CUDA_TORCH_VERSION:-$(sed -n 's/^torch==//p' requirements.txt)}"
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
