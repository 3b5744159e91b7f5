#!/usr/bin/env bash
# Set up (if needed) and build the website into _build/html, strictly: any
# Sphinx warning or failing notebook cell fails the build.
# Then open _build/html/index.html in a browser.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
bash scripts/fetch_mathjax.sh
# Chapters whose .md and .ipynb agree are shown with the notebook's stored
# outputs (which nbval checks are current); any other chapter is executed.
.venv/bin/python scripts/notebooks.py seed-cache
# Sphinx rebuilds pages when a source or _config.yml changes, but not when
# the code of our own extensions (_ext/) does, and it copies _static/ (the
# book's CSS, JS, favicon) only when some page is rebuilt: when either
# changes, start the HTML afresh.
ext_hash="$(find _ext _static -type f \( -name '*.py' -o -path '_static/*' \) -print0 \
  | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
if [ "$(cat _build/.ext.sha256 2>/dev/null)" != "$ext_hash" ]; then
  rm -rf _build/html _build/.doctrees
  mkdir -p _build && echo "$ext_hash" > _build/.ext.sha256
fi
.venv/bin/jupyter-book build -W -n --keep-going .
echo "site: open $root/_build/html/index.html"
