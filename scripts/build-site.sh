#!/usr/bin/env bash
# Set up (if needed) and build the website into _build/html, strictly (a Sphinx
# warning fails it), from the chapters' stored outputs (nothing is executed):
# every edition, and its PDF when Chromium is there (python -m booktools.site;
# its docstring says how). Then open _build/html/index.html in a browser.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
# The notebooks the launch buttons open: plain Markdown (booktools.reader_notebooks).
.venv/bin/python -m booktools.reader_notebooks
exec .venv/bin/python -m booktools.site
