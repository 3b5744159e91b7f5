#!/usr/bin/env bash
# Install the MathJax that the website serves itself (so pages typeset math
# without network access) from the npm registry, at the exact version pinned in
# package.json / package-lock.json, into node_modules/ (gitignored).
# The Sphinx extension booktools.ext.offline_mathjax (tools/booktools/ext/) copies it into _build/html/_static/.
# Idempotent: a no-op when the locked version is already installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
pkg=mathjax
want="$(sed -n '/"node_modules\/'"$pkg"'"/,/}/s/.*"version": *"\([^"]*\)".*/\1/p' package-lock.json)"
if [ -z "$want" ]; then
  echo "fetch_mathjax: package-lock.json pins no $pkg version" >&2
  exit 1
fi
have="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "node_modules/$pkg/package.json" 2>/dev/null | head -n1 || true)"
if [ "$have" = "$want" ] && [ -f "node_modules/$pkg/es5/tex-chtml.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
  echo "fetch_mathjax: npm is missing; the site serves MathJax $want from node_modules/ and needs npm (Node.js) to install it." >&2
  echo "fetch_mathjax: install Node.js and npm (Debian: apt-get install -y npm), then run: bash scripts/fetch_mathjax.sh" >&2
  exit 1
fi
echo "fetch_mathjax: installing $pkg $want with npm ci"
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
test -f "node_modules/$pkg/es5/tex-chtml.js"
