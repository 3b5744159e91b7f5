#!/usr/bin/env bash
# Whether runs/MACHINE/ needs a new recording (the record workflow's second step):
# when asked by hand (EVENT workflow_dispatch), or `python -m booktools.runs stale`
# names something. Prints why and record=true|false (also to $GITHUB_OUTPUT).
#   bash scripts/record-needed.sh MACHINE [EVENT]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/record-python.sh"  # root, $python, PYTHONPATH
if [ $# -lt 1 ] || [ $# -gt 2 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/record-needed.sh MACHINE [EVENT]" >&2
  exit 2
fi
machine="$1" event="${2:-}"
if [ "$event" = workflow_dispatch ]; then
  echo "record-needed: asked by hand: recording runs/$machine/"
  record=true
else
  stale="$("$python" -m booktools.runs stale "$machine")"
  if [ -n "$stale" ]; then
    echo "record-needed: runs/$machine/ is not current for these hardware cells or d2lgpu/ files:"
    sed 's/^/  /' <<<"$stale"
    record=true
  else
    echo "record-needed: every hardware cell has a current recording in runs/$machine/"
    record=false
  fi
fi
echo "record=$record"
if [ -n "${GITHUB_OUTPUT:-}" ]; then
  echo "record=$record" >> "$GITHUB_OUTPUT"
fi
