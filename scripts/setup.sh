#!/usr/bin/env bash
# .venv with requirements.txt and this checkout's d2lgpu and booktools (editable); a no-op
# when nothing changed, made afresh when requirements.txt or a pyproject.toml changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.requirements.sha256"
want="$(cat "$root/requirements.txt" "$root/pyproject.toml" "$root/tools/pyproject.toml" \
  | sha256sum | cut -d' ' -f1)"
if [ -d "$venv" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: requirements.txt or a pyproject.toml changed: making $venv afresh"
  rm -rf "$venv"
fi
if [ ! -x "$venv/bin/python" ]; then
  python="${PYTHON:-$(command -v python3.11 python3.12 python3.13 python3 | head -n 1 || true)}"
  found="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)"
  case "$found" in
    3.11|3.12|3.13) ;;
    *) echo "setup: the book's build and tests need Python 3.11 to 3.13, on which" \
         "requirements.txt's pins have been run (STACKS.md), and $python is" \
         "${found:+Python }${found:-no Python}: name one with PYTHON=/path/to/python3.13" >&2
       exit 1 ;;
  esac
  echo "setup: creating $venv with $($python --version) and installing requirements.txt"
  "$python" -m venv "$venv"
  # PyPI's torch for Linux is the CUDA build (5 GB): the pin comes first from PyTorch's
  # CPU index, where 2.13.0+cpu outranks PyPI's 2.13.0. An index pip cannot reach
  # would cost five retries a package: it is asked once.
  torch_index="${BOOK_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
  index=()
  if "$venv/bin/python" -c "import sys, urllib.request as u; u.urlopen(sys.argv[1], timeout=10)" \
      "$torch_index/torch/" >/dev/null 2>&1; then
    index=(--extra-index-url "$torch_index")
  else
    echo "setup: $torch_index cannot be reached; torch comes from pip's own indexes" >&2
  fi
  pip=("$venv/bin/python" -m pip install --disable-pip-version-check)
  log="$venv/pip-install.log"
  if ! { "${pip[@]}" "$(grep -E '^torch==' "$root/requirements.txt")" ${index[@]+"${index[@]}"} \
      && (cd "$root" && "${pip[@]}" -r requirements.txt); } >"$log" 2>&1; then
    grep -v "is ignored: it is neither a file nor a directory" "$log" | tail -n 40 >&2
    echo "setup: pip install failed; full log in $log" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
# A .venv copied from another checkout, or shared with a second worktree, would
# build that checkout's site: its editable d2lgpu and booktools must be this one's.
installed() {  # from /: the current folder would come first on the path
  (cd / && "$venv/bin/python" -c "import importlib.util as u
for name in ('d2lgpu', 'booktools'):
    spec = u.find_spec(name)
    print(name, spec.submodule_search_locations[0] if spec else 'missing')")
}
expected="d2lgpu $root/d2lgpu
booktools $root/tools/booktools"
if [ "$(installed)" != "$expected" ]; then
  echo "setup: $venv imports d2lgpu/booktools from elsewhere; installing this checkout's ($root)"
  (cd "$root" && "$venv/bin/python" -m pip install --disable-pip-version-check --no-deps -q \
    -e . -e ./tools) >&2
  if [ "$(installed)" != "$expected" ]; then
    echo "setup: $venv still imports another checkout's packages:" >&2
    installed >&2
    echo "setup: remove $venv and run bash scripts/setup.sh again" >&2
    exit 1
  fi
fi
