#!/usr/bin/env bash
# Sourced by record-run.sh and record-needed.sh: cd to the root; $python is $PYTHON, else
# .venv-record (record-setup.sh), else .venv, else python3, with this checkout first on its path.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-}"
for candidate in .venv-record/bin/python .venv/bin/python; do
  [ -n "$python" ] || [ ! -x "$candidate" ] || python="$root/$candidate"
done
python="${python:-python3}"
export PYTHONPATH="$root:$root/tools${PYTHONPATH:+:$PYTHONPATH}"
