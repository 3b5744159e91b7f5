#!/usr/bin/env bash
# The fast lane after editing a chapter or a translation (under a minute): its pairs, words,
# GPU figures, nbval (naming the cell that differs), claims, editions; tests/unit not slow.
#   bash scripts/check.sh [--no-unit] chapters/NAME.md [i18n/CODE/chapters/NAME.md ...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
unit=(tests/unit)
if [ "${1:-}" = "--no-unit" ]; then unit=(); shift; fi
if [ $# -eq 0 ]; then
  echo "usage: bash scripts/check.sh [--no-unit] chapters/NAME.md [i18n/CODE/chapters/NAME.md ...]" >&2
  exit 2
fi
bash "$root/scripts/setup.sh"
py="$root/.venv/bin/python"
tests=()
claimed=()
for arg in "$@"; do
  md="$(realpath -m "$arg")"
  name="$(basename "$md" .md)"
  if [ ! -f "$md" ] || [ "${md%.md}" = "$md" ]; then
    echo "check: $arg is not a chapter's .md file" >&2
    exit 2
  fi
  notebook="${md%.md}.ipynb"
  case "${md#"$root"/}" in
    chapters/*) codes="$("$py" -m booktools.i18n codes)" ;;
    i18n/*/chapters/*) codes="$(basename "$(dirname "$(dirname "$md")")")"
                       notebook="$root/chapters/$name.ipynb" ;;
    *) codes="" ;;  # outside the book: nbval only
  esac
  if [ ! -f "$notebook" ]; then
    echo "check: $arg has no paired notebook: bash scripts/refresh.sh $arg" >&2
    exit 1
  fi
  tests+=("$notebook")
  [ ! -f "$root/chapters/claims/$name.yml" ] || claimed+=(--chapter "$name")
  for code in $codes; do
    tests+=("tests/test_i18n.py::test_translation_has_englishs_structure[$code-$name]"
            "tests/test_i18n.py::test_translated_notebook_has_englishs_code_and_outputs_and_its_own_text[$code-$name]"
            "tests/test_i18n_rules.py::test_translation_follows_its_editions_rules[$code-$name]")
  done
done
cd "$root"
books_checks() {  # the book's own checks: pairs, words, GPU figures, claims
  local failed=0
  "$py" -m booktools.notebooks check || failed=1
  "$py" -m booktools.words >/dev/null || failed=1
  "$py" -m booktools.gpu_figures >/dev/null || failed=1
  [ ${#claimed[@]} -eq 0 ] || "$py" -m booktools.claims "${claimed[@]}" || failed=1
  return "$failed"
}
# They run beside pytest (a chapter's kernel is the longest part), their output after its.
said="$(mktemp)"
trap 'rm -f "$said"' EXIT
books_checks >"$said" 2>&1 &
checks=$!
status=0
# One pytest run, two workers: the notebooks beside the unit tests.
"$py" -m pytest -q -n 2 -m "not slow and not browser" \
  "${tests[@]}" tests/test_notebooks.py ${unit[@]+"${unit[@]}"} || status=1
wait "$checks" || status=1
cat "$said"
[ "$status" -eq 0 ] || echo "check: FAILED (above: file, cell or test, and what differs)" >&2
exit "$status"
