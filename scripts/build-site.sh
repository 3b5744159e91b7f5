#!/usr/bin/env bash
# The website into _build/html, strictly, from the stored outputs: every edition and its
# PDF (python -m booktools.site). Then open _build/html/index.html.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
# The notebooks the launch buttons open: plain Markdown (booktools.reader_notebooks).
.venv/bin/python -m booktools.reader_notebooks
exec .venv/bin/python -m booktools.site
