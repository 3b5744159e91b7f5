#!/usr/bin/env bash
# Verify each runs/<slug>/ a pull request changes since BASE (the verify workflow):
# python -m booktools.runs verify runs/<slug> --base BASE; the Markdown report also
# goes to REPORT_FILE. Exit 1 when one is refused or none changed.
#   bash scripts/verify-recording.sh BASE [REPORT_FILE]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -lt 1 ] || [ $# -gt 2 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/verify-recording.sh BASE [REPORT_FILE]" >&2
  exit 2
fi
base="$1" report="${2:-/dev/null}"
bash scripts/setup.sh >/dev/null
mapfile -t folders < <(git diff --name-only "$base...HEAD" -- runs/ | cut -d/ -f1-2 | sort -u)
status=0
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
echo "## Recordings in this pull request" > "$out"
if [ ${#folders[@]} -eq 0 ]; then
  echo "No file under runs/ changed since $base." >> "$out"
  status=1
fi
for folder in "${folders[@]}"; do
  printf '\n### %s\n\n```\n' "$folder" >> "$out"
  .venv/bin/python -m booktools.runs verify "$folder" --base "$base" >> "$out" 2>&1 || status=1
  printf '```\n' >> "$out"
done
cat "$out"
[ "$report" = /dev/null ] || cp "$out" "$report"
exit "$status"
