#!/usr/bin/env bash
# Install the npm packages that package-lock.json pins, with npm ci, into
# node_modules/ (gitignored): the MathJax that the website serves itself (so
# pages typeset math without network access; the Sphinx extension
# booktools.ext.offline_mathjax in tools/booktools/ext/ copies it into
# _build/html/_static/), and, as a devDependency, axe-core for the browser
# tests (tests/browser/axe_scan.py).
# Idempotent: a no-op when node_modules/ was installed from this very lock file.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
pkg=mathjax
want="$(sed -n '/"node_modules\/'"$pkg"'"/,/}/s/.*"version": *"\([^"]*\)".*/\1/p' package-lock.json)"
if [ -z "$want" ]; then
  echo "fetch_mathjax: package-lock.json pins no $pkg version" >&2
  exit 1
fi
stamp=node_modules/.package-lock.sha256  # the lock file npm ci last installed
lock="$(sha256sum package-lock.json | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" = "$lock" ] && [ -f "node_modules/$pkg/es5/tex-chtml.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "fetch_mathjax: npm is missing; the site serves MathJax $want from node_modules/ and needs npm (Node.js) to install it." >&2
  echo "fetch_mathjax: install Node.js and npm (Debian: apt-get install -y npm), then run: bash scripts/fetch_mathjax.sh" >&2
  exit 1
fi
echo "fetch_mathjax: installing package-lock.json ($pkg $want and the test tools) with npm ci"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
test -f "node_modules/$pkg/es5/tex-chtml.js"
echo "$lock" > "$stamp"
