#!/usr/bin/env bash
# Create .venv (if needed) and install requirements.txt into it (if it changed).
# Sourced or run by build-site.sh and test.sh; safe to run again: a no-op when
# nothing changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
python="${PYTHON:-}"
if [ -z "$python" ]; then
  for candidate in python3.11 python3.12 python3.13 python3; do
    if command -v "$candidate" >/dev/null 2>&1; then python="$candidate"; break; fi
  done
fi
if [ ! -x "$venv/bin/python" ]; then
  # requirements.txt pins releases that need Python 3.11 or later (numpy,
  # matplotlib, sphinx-book-theme, sphinx-design, ipykernel); d2lgpu alone
  # installs on 3.10 and later (pyproject.toml). 3.14 and later: the pins were
  # never run there (STACKS.md), so the build's outputs are not known to hold.
  found="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)"
  case "$found" in
    3.11|3.12|3.13) ;;
    3.1[4-9]|3.[2-9]?)
       echo "setup: the book's build and tests need Python 3.11 to 3.13, and $python is" \
         "Python $found, on which requirements.txt's pins have not been run (STACKS.md):" \
         "name one with PYTHON=/path/to/python3.13" >&2
       exit 1 ;;
    *) echo "setup: the book's build and tests need Python 3.11 to 3.13, and $python is" \
         "${found:+Python }${found:-no Python}: name one with PYTHON=/path/to/python3.11" >&2
       exit 1 ;;
  esac
  echo "setup: creating $venv with $($python --version)"
  "$python" -m venv "$venv"
fi
stamp="$venv/.requirements.sha256"
want="$(cat "$root/requirements.txt" "$root/pyproject.toml" "$root/tools/pyproject.toml" \
  "$root/scripts/venv_extras.py" | sha256sum | cut -d' ' -f1)"
# PyPI's torch for Linux is the CUDA build (5 GB with its libraries): the
# pinned version comes first from PyTorch's CPU index (BOOK_TORCH_INDEX), where
# its CPU build, 2.13.0+cpu, outranks PyPI's 2.13.0 (on macOS both are the same
# CPU build). Skipped when .venv has that version already.
torch_index="${BOOK_TORCH_INDEX:-https://download.pytorch.org/whl/cpu}"
torch_pin="$(grep -E '^torch==' "$root/requirements.txt" || true)"
needs_torch() {
  local have
  have="$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("torch"))' 2>/dev/null || true)"
  [ -n "$torch_pin" ] && [ "${have%%+*}" != "${torch_pin#torch==}" ]
}
cpu_torch() {
  "$venv/bin/python" -m pip install --disable-pip-version-check "$torch_pin" ${index_args[@]+"${index_args[@]}"}
}
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing requirements.txt into $venv"
  log="$venv/pip-install.log"
  index_args=()
  if needs_torch; then
    # An index that cannot be reached (a machine that sees only PyPI) would cost
    # pip five retries per package: ask it once, and say so.
    if "$venv/bin/python" -c "import sys, urllib.request as u; u.urlopen(sys.argv[1], timeout=10)" \
        "$torch_index/torch/" >/dev/null 2>&1; then
      index_args=(--extra-index-url "$torch_index")
    else
      echo "setup: $torch_index cannot be reached; torch comes from pip's own indexes" >&2
    fi
  fi
  if ! { { ! needs_torch || cpu_torch; } && (cd "$root" && "$venv/bin/python" -m pip install --disable-pip-version-check -r requirements.txt); } >"$log" 2>&1; then
    grep -v "is ignored: it is neither a file nor a directory" "$log" | tail -n 40 >&2
    echo "setup: pip install failed; full log in $log" >&2
    exit 1
  fi
  # pip install never removes what requirements.txt no longer names: .venv holds
  # exactly what a fresh one would (a test passing here on a dropped plugin
  # would fail in CI's fresh one).
  if ! "$venv/bin/python" "$root/scripts/venv_extras.py" "$root/requirements.txt" --remove; then
    echo "setup: could not remove what requirements.txt no longer names" >&2
    exit 1
  fi
  echo "$want" > "$stamp"
fi
# The venv's d2lgpu and booktools (editable installs) must be this checkout's:
# a .venv copied from another checkout, or shared with a second worktree,
# would otherwise build that checkout's site and run its chapters' helpers.
# Point them here again, or stop saying why.
installed() {  # from / : the current folder would come first on the path
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
