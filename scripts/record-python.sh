#!/usr/bin/env bash
# Print the Python the record scripts use (record-run.sh, record-needed.sh):
# $PYTHON, else .venv-record/bin/python (scripts/record-setup.sh makes it),
# else .venv/bin/python, else python3.
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
