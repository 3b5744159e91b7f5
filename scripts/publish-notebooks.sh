#!/usr/bin/env bash
# Push the reader notebooks (_build/colab: python -m booktools.reader_notebooks)
# as one commit to the branch the launch buttons open (booktools.book.NOTEBOOK_BRANCH),
# which holds nothing else but a README (the publish workflow); unchanged: no push.
#
#   GITHUB_TOKEN=... bash scripts/publish-notebooks.sh TAG
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
if [ $# -ne 1 ] || [ -z "${GITHUB_TOKEN:-}" ]; then
  echo "usage: GITHUB_TOKEN=... bash scripts/publish-notebooks.sh TAG" >&2
  exit 2
fi
tag="$1"
if [ ! -d _build/colab ]; then
  echo "publish-notebooks: no _build/colab: build the site first (bash scripts/build-site.sh)" >&2
  exit 2
fi
# The branch is booktools.book.NOTEBOOK_BRANCH; the workflow has no .venv to ask.
branch="notebooks"
url="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY:?the repository (owner/name)}"
remote="https://x-access-token:${GITHUB_TOKEN}@${url#https://}.git"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
if git ls-remote --exit-code --heads "$remote" "$branch" >/dev/null; then
  git clone -q --depth 1 --branch "$branch" "$remote" "$work"
else
  git init -q -b "$branch" "$work"
fi
find "$work" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
cp -R _build/colab/. "$work/"
cat > "$work/README.md" <<TEXT
# Reader notebooks of ${tag}

The notebooks the book's launch buttons open in Colab and SageMaker Studio
Lab: every chapter of every edition, made from ${url}/tree/${tag} by
\`python -m booktools.reader_notebooks\` (its MyST rendered as plain
Markdown). Edit the chapters there, not here: each release replaces this branch's files.
TEXT
cd "$work"
git add -A
if git diff --cached --quiet; then
  echo "publish-notebooks: $branch already holds ${tag}'s notebooks"
  exit 0
fi
git -c user.name="github-actions[bot]" \
    -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
    commit -q -m "Reader notebooks of ${tag}"
git push -q "$remote" "HEAD:refs/heads/$branch"
echo "publish-notebooks: ${tag}'s notebooks pushed to $branch"
