"""CITATION.cff cites the book, and the README's BibTeX is the one booktools.citation
makes of it (cffconvert validates the file against the CFF schema in CI: .ci/lint)."""
import re
from pathlib import Path

from booktools import citation

ROOT = Path(__file__).resolve().parent.parent


def test_citation_cites_a_book_and_the_readme_shows_its_bibtex():
    data = citation.load()
    cited = data["preferred-citation"]
    assert cited["type"] == "book" and cited["title"] == data["title"]
    # One version everywhere: the release (scripts/release.sh sets them together).
    version = data["version"]
    assert cited["version"] == version
    assert cited["year"] == int(data["date-released"][:4])
    bibtex = citation.bibtex()
    assert bibtex.startswith("@book{d2lgpu%dgpus,\n" % cited["year"])
    assert "YourReferenceHere" not in bibtex and f"  version = {{{version}}}" in bibtex
    shown = re.search(r"```bibtex\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert shown and shown.group(1) == bibtex, \
        "paste `python -m booktools.citation bibtex` into the README's Cite section"


def test_ci_validates_the_citation_with_cffconvert_apart_from_the_books_environment():
    lint = (ROOT / ".ci" / "lint").read_text()
    assert "cffconvert\" --validate --infile CITATION.cff" in lint and "-m venv" in lint
    assert "cffconvert" not in (ROOT / "requirements.txt").read_text()


def test_bibtex_keys_names_and_entry_types(tmp_path):
    path = tmp_path / "CITATION.cff"
    path.write_text("""cff-version: 1.2.0
message: Cite it.
title: A Tour of the Queue
authors:
  - given-names: Ada
    family-names: Lovelace
  - given-names: Guido
    name-particle: van
    family-names: Rossum
date-released: "2024-03-01"
version: 2.0.0
""")
    assert citation.bibtex(path) == (
        "@software{lovelace2024tour,\n"
        "  author = {Lovelace, Ada and van Rossum, Guido},\n"
        "  title = {{A Tour of the Queue}},\n"
        "  year = {2024},\n"
        "  version = {2.0.0}\n"
        "}\n")
