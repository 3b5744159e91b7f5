#!/usr/bin/env bash
# Build the site of a release for GitHub Pages (the publish workflow):
#
#   bash scripts/publish-site.sh TAG SHA
#
# Refuses, saying why, unless the checkout is the commit of TAG that the test
# workflow passed on (SHA) and names that tag in its install cells and links
# (python -m booktools.release check). Then builds every edition strictly and
# scans every page of every edition with axe-core (BOOK_AXE=all): the test
# command scans every English page and one page per translation. The site is
# left in _build/html.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -ne 2 ]; then
  echo "usage: bash scripts/publish-site.sh TAG SHA" >&2
  exit 2
fi
bash scripts/setup.sh
.venv/bin/python -m booktools.release check "$1" "$2"
BOOK_AXE=all bash scripts/test.sh tests/browser/test_axe.py tests/browser/test_axe_editions.py
