#!/usr/bin/env bash
# A release commit and tag from a clean main (runbooks/release.md); pushes nothing.
#   bash scripts/release.sh 0.2.0
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
fail() { echo "release: $*" >&2; exit 2; }
[ $# -eq 1 ] && [[ $1 != -* ]] || fail "usage: bash scripts/release.sh MAJOR.MINOR.PATCH"
[ "$(git branch --show-current)" = main ] || fail "check out main: readers install from it"
[ -z "$(git status --porcelain)" ] || fail "the working tree has changes: commit or stash them"
! git rev-parse -q --verify "refs/tags/v$1" >/dev/null || fail "the tag v$1 exists already"
.venv/bin/python -m booktools.release pin "$1"
git commit -q -am "Release $1: the install cells pin d2lgpu==$1, CITATION.cff names it"
git tag -a "v$1" -m "GPUs from PyTorch $1"
echo "release: v$1 tags the release commit; publish with: git push origin main v$1"
