#!/usr/bin/env bash
# Cut a release of the book, from a clean checkout of main:
#
#   bash scripts/release.sh 0.2.0
#
# Sets the version (CITATION.cff, pyproject.toml, the README's BibTeX) in a
# commit on main, then makes the tag v0.2.0 on a child of that commit in which
# every install cell, launch link and link of the book names v0.2.0 instead of
# main (booktools.release). Pushes nothing: it prints the push, after which
# the test workflow runs on the tag and publish deploys it when it passes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -ne 1 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/release.sh MAJOR.MINOR.PATCH" >&2
  exit 2
fi
bash scripts/setup.sh
exec .venv/bin/python -m booktools.release cut "$1"
