#!/usr/bin/env bash
# Cut a release of the book, from a clean checkout of main:
#
#   bash scripts/release.sh 0.2.0
#
# Checks everything first, then makes one commit on main (the version in
# CITATION.cff, the README's BibTeX, every install cell pinned to
# d2lgpu==0.2.0) and tags it v0.2.0 (booktools.release). Pushes nothing: it
# prints the push, after which publish tests the tag, deploys the site and
# uploads d2lgpu 0.2.0 to PyPI (runbooks/release.md).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -ne 1 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/release.sh MAJOR.MINOR.PATCH" >&2
  exit 2
fi
bash scripts/setup.sh
exec .venv/bin/python -m booktools.release cut "$1"
