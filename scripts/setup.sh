#!/usr/bin/env bash
# Create .venv (if needed) and install requirements.txt into it (if it changed).
# Sourced or run by build-site.sh and test.sh; safe to run again: a no-op when
# nothing changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.10 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
if [ ! -x "$venv/bin/python" ]; then
  echo "setup: creating $venv with $($python --version)"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$(cat "$root/requirements.txt" "$root/pyproject.toml" "$root/tools/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing requirements.txt into $venv"
  log="$venv/pip-install.log"
  if ! (cd "$root" && "$venv/bin/python" -m pip install --disable-pip-version-check -r requirements.txt) >"$log" 2>&1; then
    grep -v "is ignored: it is neither a file nor a directory" "$log" | tail -n 40 >&2
    echo "setup: pip install failed; full log in $log" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
