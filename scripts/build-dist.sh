#!/usr/bin/env bash
# bash scripts/build-dist.sh v0.2.0: d2lgpu's wheel and sdist into dist/ (the publish
# workflow), from a checkout of that tag (setuptools-scm: else refused), then the
# wheel installed into a fresh venv, as a chapter's install cell does, and imported.
# PIP_EXTRA_INDEX_URL may name PyTorch's CPU index for the install.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ $# -ne 1 ] || [[ $1 != v* ]]; then
  echo "usage: bash scripts/build-dist.sh vMAJOR.MINOR.PATCH" >&2
  exit 2
fi
version="${1#v}"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m venv "$work/build"
"$work/build/bin/python" -m pip install -q --disable-pip-version-check build
rm -rf dist
"$work/build/bin/python" -m build --outdir dist .
wheel="dist/d2lgpu-$version-py3-none-any.whl"
for built in "$wheel" "dist/d2lgpu-$version.tar.gz"; do
  [ -f "$built" ] || { echo "build-dist: no $built: is the checkout the commit of v$version?" \
                         "dist/ holds: $(ls dist)" >&2; exit 1; }
done
"$python" -m venv "$work/reader"
"$work/reader/bin/python" -m pip install -q --disable-pip-version-check "$wheel"
(cd "$work" && "$work/reader/bin/python" -c "import d2lgpu, sys
assert d2lgpu.__version__ == sys.argv[1], d2lgpu.__version__
print('build-dist: d2lgpu', d2lgpu.__version__, 'installs and imports; device:', d2lgpu.try_gpu())" "$version")
