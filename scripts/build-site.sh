#!/usr/bin/env bash
# Set up (if needed) and build the website into _build/html, strictly: any
# Sphinx warning fails the build. The pages are the chapter notebooks
# (chapters/*.ipynb) with their stored outputs: nothing is executed. A chapter
# whose .md and .ipynb disagree stops the build (bash scripts/refresh.sh
# chapters/NAME.md brings its notebook in step).
# Each translated edition (i18n/<code>/, booktools.i18n) is then built the
# same way, as a site of its own with its language, into _build/html/<code>/.
# Then Chromium prints each edition's PDF from its pages (booktools.pdf) beside
# them, _build/html/gpus-from-pytorch.pdf and _build/html/<code>/
# gpus-from-pytorch-<code>.pdf, which every page links; without Chromium it
# says so and prints none, and no page links one.
# Then open _build/html/index.html in a browser.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/setup.sh
bash scripts/fetch_mathjax.sh
# Everything the pages are built from: when none of it changed since the last
# strict build (which ended without a warning, or it would not have written
# the stamp), that build is the one this one would make. Sphinx alone would
# find that out too, after several seconds of starting up.
inputs_hash="$( (git ls-files -co --exclude-standard -- chapters i18n runs tools/booktools \
    _static _config.yml _toc.yml requirements.txt package-lock.json scripts/build-site.sh \
    | grep -v '__pycache__' | LC_ALL=C sort | xargs sha256sum) 2>/dev/null \
  | sha256sum | cut -d' ' -f1)"
stamp="_build/.site-inputs.sha256"
if [ -f _build/html/index.html ] && [ "$(cat "$stamp" 2>/dev/null)" = "$inputs_hash" ]; then
  echo "site: up to date (nothing it is built from changed since the last strict build)"
  echo "site: open $root/_build/html/index.html"
  exit 0
fi
rm -f "$stamp"
# Sphinx rebuilds pages when a source or _config.yml changes, but not when
# the code of the book's extensions (tools/booktools/) does, and it copies
# _static/ (the book's CSS, JS, favicon) only when some page is rebuilt: when
# either changes, start the HTML afresh.
ext_hash="$(find tools/booktools _static -type f \( -name '*.py' -o -path '_static/*' \) -print0 \
  | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)"
if [ "$(cat _build/.ext.sha256 2>/dev/null)" != "$ext_hash" ]; then
  rm -rf _build/html _build/.doctrees _build/i18n
  mkdir -p _build && echo "$ext_hash" > _build/.ext.sha256
fi
# English and the translated editions build side by side, strictly, each
# into its folder, while the chapters' pairs and the translations' structure
# are checked (python -m booktools.site says how).
.venv/bin/python -m booktools.site
# Every page links its edition's PDF (when there is a Chromium to print it):
# if printing fails, no site is left whose pages link a PDF that is not there.
if ! .venv/bin/python -m booktools.pdf; then
  rm -rf _build/html _build/.doctrees _build/i18n
  echo "site: FAILED: the PDFs could not be printed (above); the site's pages, which link them, were removed" >&2
  exit 1
fi
echo "$inputs_hash" > "$stamp"
echo "site: open $root/_build/html/index.html"
