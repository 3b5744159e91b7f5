#!/usr/bin/env bash
# The fast lane, after editing a chapter or a translation (about a minute):
#   bash scripts/check.sh chapters/NAME.md [i18n/CODE/chapters/NAME.md ...]
# For each: every .md/.ipynb pair agrees; nbval re-executes the chapter's
# notebook and fails naming the cell whose stored output differs; the
# chapter's claims (booktools.claims, where it exists), word limits and GPU
# figures; its editions' structure, typography, glossary and synced notebooks
# (all three editions for an English chapter, one for a translation). Then
# d2lgpu's fast unit tests (tests/unit, without the slow and browser ones);
# --no-unit leaves them out (a change to prose only).
# The whole suite (the site, PDFs, browsers) is bash scripts/test.sh, in CI.
# Extra pytest options: PYTEST_ADDOPTS, e.g. PYTEST_ADDOPTS=-x.
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
  if [ ! -f "$md" ] || [ "${md%.md}" = "$md" ]; then
    echo "check: $arg is not a chapter's .md file" >&2
    exit 2
  fi
  name="$(basename "$md" .md)"
  case "${md#"$root"/}" in
    chapters/*) codes="$("$py" -m booktools.i18n codes)"; notebook="${md%.md}.ipynb" ;;
    # A translation runs English's code: nbval of the English notebook.
    i18n/*/chapters/*) codes="$(basename "$(dirname "$(dirname "$md")")")"
                       notebook="$root/chapters/$name.ipynb" ;;
    *) codes=""; notebook="${md%.md}.ipynb" ;;  # outside the book: nbval only
  esac
  if [ ! -f "$notebook" ]; then
    echo "check: $arg has no paired notebook: bash scripts/refresh.sh $arg" >&2
    exit 1
  fi
  tests+=("$notebook")
  claimed+=(--chapter "$name")
  for code in $codes; do
    tests+=("tests/test_i18n.py::test_translation_has_englishs_structure[$code-$name]"
            "tests/test_i18n.py::test_translated_notebook_has_englishs_code_and_outputs_and_its_own_text[$code-$name]"
            "tests/test_i18n_rules.py::test_translation_follows_its_editions_rules[$code-$name]")
  done
done
cd "$root"
status=0
"$py" -m booktools.notebooks check || status=1  # every pair: a second's work
"$py" -m booktools.words >/dev/null || status=1
"$py" -m booktools.gpu_figures >/dev/null || status=1
if "$py" -c "import booktools.claims" 2>/dev/null; then
  "$py" -m booktools.claims "${claimed[@]}" || status=1  # the claims of these chapters
fi
# One pytest run, two workers: the notebooks beside the unit tests.
"$py" -m pytest -q -n 2 -m "not slow and not browser" \
  "${tests[@]}" tests/test_notebooks.py ${unit[@]+"${unit[@]}"} || status=1
if [ "$status" -ne 0 ]; then
  echo "check: FAILED (above: file, cell or test, and what differs)" >&2
fi
exit "$status"
