#!/usr/bin/env bash
# Propose runs/MACHINE/ as a pull request (the record workflow's last step): commit it
# alone on record/MACHINE (afresh from HEAD), push and open (or update) a pull request
# into the current branch. --from DIR copies the run from DIR first.
#   GH_TOKEN=... bash scripts/record-pr.sh MACHINE [--from DIR]
# The push authenticates with GH_TOKEN through gh, for this push alone, never with a
# credential left in git's configuration (a workflow's own token would start no checks).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if { [ $# -ne 1 ] && [ $# -ne 3 ]; } || [[ $1 == -* ]] || { [ $# -eq 3 ] && [ "$2" != --from ]; }; then
  echo "usage: bash scripts/record-pr.sh MACHINE [--from DIR]" >&2
  exit 2
fi
machine="$1"
folder="runs/$machine"
if [ $# -eq 3 ]; then
  [ -f "$3/run.json" ] || { echo "record-pr: no recorded run $3/run.json" >&2; exit 2; }
  rm -rf "$folder" && mkdir -p "$folder" && cp -R "$3/." "$folder/"
fi
[ -f "$folder/run.json" ] || { echo "record-pr: no recorded run $folder/run.json" >&2; exit 2; }
base="$(git symbolic-ref --quiet --short HEAD)" \
  || { echo "record-pr: HEAD is detached; check out the branch the pull request is for" >&2; exit 2; }
branch="record/$machine"
[ "$base" != "$branch" ] || { echo "record-pr: already on $branch; check out its base branch" >&2; exit 2; }
if [ -z "$(git status --porcelain -- "$folder")" ]; then
  echo "record-pr: $folder/ is as $base has it: no pull request"
  exit 0
fi
if [ -z "${GH_TOKEN:-}" ] && ! gh auth status >/dev/null 2>&1; then
  echo "record-pr: no GH_TOKEN (the record workflow: the App RECORD_APP_CLIENT_ID, or the secret RECORD_TOKEN)" >&2
  exit 2
fi
meta() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$folder/run.json" "$1"; }
label="$(meta label)" commit="$(meta commit)"
git config user.email >/dev/null || git config user.email "41898282+github-actions[bot]@users.noreply.github.com"
git config user.name >/dev/null || git config user.name "github-actions[bot]"
git checkout --quiet -B "$branch"
git add --all -- "$folder"
git commit --quiet -m "Record $folder/ on $label at $commit" -- "$folder"
origin="$(git remote get-url origin)"
git -c credential.helper= -c 'credential.helper=!gh auth git-credential' \
  -c http.extraHeader= -c "http.$origin.extraHeader=" \
  push --quiet --force origin "$branch"
git checkout --quiet "$base"
title="Recorded run: $folder/ ($label, commit $commit)"
body="$(printf 'The chapters executed on %s at commit %s by scripts/record-run.sh (the record workflow).\n\nrun.json:\n\n```json\n%s\n```\n' "$label" "$commit" "$(git show "$branch:$folder/run.json")")"
url="$(gh pr list --head "$branch" --state open --json url --jq '.[0].url // ""')"
if [ -n "$url" ]; then
  echo "record-pr: updated $url"
else
  gh pr create --base "$base" --head "$branch" --title "$title" --body "$body"
fi
