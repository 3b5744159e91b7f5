"""CITATION.cff validates against the CFF 1.2.0 schema, cites the book, and the
README's BibTeX is the one booktools.citation makes of it."""
import re
import tomllib
from pathlib import Path

from booktools import citation

ROOT = Path(__file__).resolve().parent.parent


def test_citation_validates_cites_a_book_and_the_readme_shows_its_bibtex():
    assert citation.problems() == []
    data = citation.load()
    cited = data["preferred-citation"]
    assert cited["type"] == "book" and cited["title"] == data["title"]
    # One version everywhere: the release (scripts/release.sh sets them together).
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert data["version"] == cited["version"] == version
    assert cited["year"] == int(data["date-released"][:4])
    bibtex = citation.bibtex()
    assert bibtex.startswith("@book{d2lgpu%dgpus,\n" % cited["year"])
    assert "YourReferenceHere" not in bibtex and f"  version = {{{version}}}" in bibtex
    shown = re.search(r"```bibtex\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert shown and shown.group(1) == bibtex, \
        "paste `python -m booktools.citation bibtex` into the README's Cite section"


def test_an_invalid_citation_is_named_with_its_field(tmp_path):
    text = (ROOT / "CITATION.cff").read_text()
    bad = tmp_path / "CITATION.cff"
    bad.write_text(text.replace("cff-version: 1.2.0", "cff-version: 1.2.0\nlicence: MIT")
                   .replace("  type: book", "  type: novel"))
    found = citation.problems(bad)
    assert len(found) == 2, found
    assert found[0].startswith("CITATION.cff: (top level): Additional properties are not "
                               "allowed ('licence' was unexpected)")
    assert found[1].startswith("CITATION.cff: preferred-citation/type: 'novel' is not one of")
    bad.write_text(text.replace('date-released: "2026-11-25"', 'date-released: "25 Nov 2026"'))
    found = citation.problems(bad)
    assert found and {p.split(": ")[1] for p in found} == {"date-released"}, found


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
    assert citation.problems(path) == []
    assert citation.bibtex(path) == (
        "@software{lovelace2024tour,\n"
        "  author = {Lovelace, Ada and van Rossum, Guido},\n"
        "  title = {{A Tour of the Queue}},\n"
        "  year = {2024},\n"
        "  version = {2.0.0}\n"
        "}\n")
