#!/usr/bin/env bash
# The Python of the record scripts: $PYTHON, else .venv-record (record-setup.sh),
# else .venv, else python3.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -n "${PYTHON:-}" ]; then
  echo "$PYTHON"
elif [ -x .venv-record/bin/python ]; then
  echo "$PWD/.venv-record/bin/python"
elif [ -x .venv/bin/python ]; then
  echo "$PWD/.venv/bin/python"
else
  echo python3
fi
