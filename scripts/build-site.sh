#!/usr/bin/env bash
# Set up (if needed) and build the website into _build/html, strictly: any
# Sphinx warning fails the build. The pages are the chapter notebooks
# (chapters/*.ipynb) with their stored outputs: nothing is executed. A chapter
# whose .md and .ipynb disagree stops the build (bash scripts/refresh.sh
# chapters/NAME.md brings its notebook in step).
# Each translated edition (i18n/<code>/, booktools.i18n) is then built the
# same way, as a site of its own with its language, into _build/html/<code>/.
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
.venv/bin/python -m booktools.notebooks check || {
  echo "site: a chapter's .md and .ipynb disagree: bash scripts/refresh.sh chapters/NAME.md" >&2
  exit 1
}
.venv/bin/python -m booktools.i18n check || {
  echo "site: a translation's structure differs from English's (README: Translations)" >&2
  exit 1
}
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
# English and the translated editions build side by side (one process each).
# An edition builds from a folder that links the book's files and its own
# chapters (booktools.i18n stage), straight into _build/html/<code>/ (its
# output folder is a link there).
mkdir -p _build/i18n _build/html
.venv/bin/jupyter-book build -W -n --keep-going . > _build/i18n/en.log 2>&1 &
pids=("$!:en")
while IFS=$'\t' read -r code src; do
  mkdir -p "_build/i18n/$code/_build" "_build/html/$code"
  ln -sfn "$root/_build/html/$code" "_build/i18n/$code/_build/html"
  .venv/bin/jupyter-book build -W -n --keep-going "$src" --path-output "_build/i18n/$code" \
    > "_build/i18n/$code.log" 2>&1 &
  pids+=("$!:$code")
done < <(.venv/bin/python -m booktools.i18n stage)
failed=0
for entry in "${pids[@]}"; do
  if ! wait "${entry%%:*}"; then
    echo "site: the ${entry#*:} edition failed to build:" >&2
    tail -n 30 "_build/i18n/${entry#*:}.log" >&2
    failed=1
  fi
done
[ "$failed" = 0 ] || exit 1
cat _build/i18n/en.log
echo "$inputs_hash" > "$stamp"
echo "site: open $root/_build/html/index.html"
