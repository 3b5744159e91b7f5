#!/usr/bin/env bash
# Post verify-recording.sh's report on the run's Summary page, and as a comment on
# the pull request where the token may write one (not a fork's).
#   GH_TOKEN=... bash scripts/verify-report.sh REPORT_FILE PR_NUMBER
set -euo pipefail
if [ $# -ne 2 ] || [ ! -f "$1" ] || [[ ! $2 =~ ^[0-9]+$ ]]; then
  echo "usage: bash scripts/verify-report.sh REPORT_FILE PR_NUMBER" >&2
  exit 2
fi
report="$1" number="$2"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  head -c 60000 "$report" >> "$GITHUB_STEP_SUMMARY"
fi
if gh pr comment "$number" --body-file <(head -c 60000 "$report"); then
  echo "verify-report: commented on pull request $number"
else
  echo "verify-report: no comment (a fork's pull request gets a read-only token); the report is on the run's Summary page"
fi
