#!/usr/bin/env bash
# Set up (if needed) and build the website into _build/html, strictly: any
# Sphinx warning fails the build. The pages are the chapter notebooks
# (chapters/*.ipynb) with their stored outputs: nothing is executed. A chapter
# whose .md and .ipynb disagree, or whose code cells lost their outputs, stops
# the build (bash scripts/refresh.sh chapters/NAME.md brings its notebook in
# step). Each translated edition (i18n/<code>/, booktools.i18n) is built the
# same way, as a site of its own with its language, into _build/html/<code>/.
# Then Chromium prints each edition's PDF beside its pages,
# _build/html/gpus-from-pytorch.pdf and _build/html/<code>/
# gpus-from-pytorch-<code>.pdf, which every page links; without Chromium it
# says so and prints none, and no page links one.
# _build/html is replaced only whole, by a build that ended without a
# warning; when nothing it is built from changed, the build says "up to
# date". One build at a time: a second one says which holds _build/.lock.
# python -m booktools.site does all this (its docstring says how).
# Then open _build/html/index.html in a browser.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
bash scripts/fetch_mathjax.sh
# The notebooks the launch buttons open: plain Markdown (booktools.reader_notebooks).
.venv/bin/python -m booktools.reader_notebooks
exec .venv/bin/python -m booktools.site
