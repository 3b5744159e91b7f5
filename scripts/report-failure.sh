#!/usr/bin/env bash
# Open an issue titled TITLE about a failed scheduled run (the weekly links and
# colab workflows), or comment on the open one: a link to the run (GitHub
# Actions' variables) and REPORT_FILE's first 60,000 characters. Needs gh, python3.
#
#   GH_TOKEN=... bash scripts/report-failure.sh TITLE [REPORT_FILE]
set -euo pipefail
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then
  echo "usage: bash scripts/report-failure.sh TITLE [REPORT_FILE]" >&2
  exit 2
fi
title="$1" report="${2:-}"
run="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}/actions/runs/${GITHUB_RUN_ID:?GITHUB_RUN_ID is not set}"
body="$(mktemp)"
trap 'rm -f "$body"' EXIT
{
  echo "The scheduled run $run failed on $(date -u +%Y-%m-%d)."
  if [ -n "$report" ] && [ -s "$report" ]; then
    printf '\n'
    head -c 60000 "$report"
  fi
} > "$body"
# The open issue with exactly this title (gh's search matches words, not titles).
number="$(gh issue list --state open --search "in:title $title" --json number,title --limit 100 \
  | python3 -c 'import json, sys
print(next((str(i["number"]) for i in json.load(sys.stdin) if i["title"] == sys.argv[1]), ""))' "$title")"
if [ -n "$number" ]; then
  gh issue comment "$number" --body-file "$body"
  echo "report-failure: commented on issue #$number"
else
  gh issue create --title "$title" --body-file "$body"
fi
