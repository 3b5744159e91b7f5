#!/usr/bin/env bash
# Download what recording needs besides torch as wheels, for a GPU machine without
# network (then, there: bash scripts/record-setup.sh --wheels DIR).
#   bash scripts/record-wheels.sh DIR [PYTHON_VERSION] [PLATFORM]   # 3.12, x86-64 Linux
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ $# -lt 1 ] || [ $# -gt 3 ] || [[ $1 == -* ]]; then
  echo "usage: bash scripts/record-wheels.sh DIR [PYTHON_VERSION] [PLATFORM]" >&2
  exit 2
fi
dir="$1" version="${2:-3.12}" platform="${3:-}"
[[ $version =~ ^3\.[0-9]+$ ]] || { echo "record-wheels: Python version '$version': use 3.N" >&2; exit 2; }
python="${PYTHON:-python3}"
mapfile -t pins < <(awk '/# recording$/ {print $1}' "$root/requirements.txt")
[ ${#pins[@]} -gt 0 ] || exit 1
# pip matches each manylinux tag exactly: by default, offer the common ones.
args=()
for p in ${platform:-manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 \
    manylinux2014_x86_64 manylinux1_x86_64}; do
  args+=(--platform "$p")
done
mkdir -p "$dir"
"$python" -m pip download --disable-pip-version-check -q --only-binary=:all: \
  --python-version "$version" --implementation cp "${args[@]}" -d "$dir" "${pins[@]}" 2>&1 \
  | { grep -v "is ignored: it is neither a file nor a directory" || true; } >&2
echo "record-wheels: $(ls "$dir"/*.whl | wc -l) wheels for Python $version in $dir ($(du -sh "$dir" | cut -f1)): ${pins[*]}"
