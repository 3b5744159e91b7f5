#!/usr/bin/env bash
# Verify every recording a pull request adds or changes (the verify workflow's
# check; by hand, the same): each folder runs/<slug>/ changed since BASE goes
# through `python -m booktools.runs verify runs/<slug> --base BASE`, which also
# refuses any file changed outside it (booktools.contributed).
#
#   bash scripts/verify-recording.sh BASE [REPORT_FILE]
#
# Prints the report (what is refused and why, or the claims each recording
# confirms and contradicts) and writes it, as Markdown, to REPORT_FILE when
# given. Exit 1 when a recording is refused or the change holds none.
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
