"""The BibTeX of CITATION.cff's preferred citation, which the README shows.

    python -m booktools.citation bibtex

cffconvert validates CITATION.cff, in CI only (``.ci/lint``, a venv of its
own): it needs ``jsonschema<4``, which the book's environment cannot hold.
Its BibTeX does not fit the README: its key and fields are not a book's.

The BibTeX is made from ``preferred-citation`` (the book), with a key made
of the first author's name, the year and the title's first word
(``d2lgpu2026gpus``), as Google Scholar makes them; the README shows it
(tests/test_citation.py checks that it is this module's output).
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

from booktools.book import ROOT

__all__ = ["CITATION", "load", "key", "bibtex", "main"]

CITATION = ROOT / "CITATION.cff"
# BibTeX entry types for CFF's reference types (the ones a book would cite).
ENTRY = {"book": "book", "software": "software", "report": "techreport",
         "article": "article", "generic": "misc"}


def load(path: Path = CITATION, text: str | None = None) -> dict:
    """The citation (the file's, or ``text``) as YAML reads it; dates stay text, as CFF has them."""
    return yaml.load(path.read_text(encoding="utf-8") if text is None else text, Loader=_NoDates)


class _NoDates(yaml.SafeLoader):
    pass


# The schema wants date-released as a string "YYYY-MM-DD"; YAML would make a date of it.
_NoDates.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def _name(person: dict) -> str:
    """A BibTeX name: 'Family, Given', or an entity's name in braces (never split)."""
    if "name" in person:
        return "{" + person["name"] + "}"
    given, family = person.get("given-names", ""), person.get("family-names", "")
    particle = person.get("name-particle", "")
    family = f"{particle} {family}".strip()
    return f"{family}, {given}" if given else family


def key(cited: dict) -> str:
    """The first author's name, the year and the title's first word, lower-case."""
    first = cited["authors"][0]
    name = first.get("family-names") or first.get("name", "")
    words = [w for w in re.findall(r"[A-Za-z0-9]+", name) if w.lower() != "the"]
    title = [w for w in re.findall(r"[A-Za-z0-9]+", cited["title"])
             if w.lower() not in ("a", "an", "the")]
    return f"{(words or ['anon'])[0]}{cited.get('year', '')}{title[0] if title else ''}".lower()


def bibtex(path: Path = CITATION, text: str | None = None) -> str:
    """The BibTeX entry of the preferred citation (else of the file itself)."""
    data = load(path, text)
    cited = data.get("preferred-citation") or {**data, "type": data.get("type", "software")}
    if "year" not in cited and "date-released" in data:
        cited = {**cited, "year": int(str(data["date-released"])[:4])}
    fields = [("author", " and ".join(map(_name, cited["authors"]))),
              ("title", "{" + cited["title"] + "}")]
    if "publisher" in cited:
        fields.append(("publisher", cited["publisher"]["name"]))
    fields.append(("year", str(cited["year"])))
    version = cited.get("version") or data.get("version")
    if version:
        fields.append(("version", str(version)))
    if cited.get("doi"):
        fields.append(("doi", cited["doi"]))
    if cited.get("url"):
        fields.append(("url", cited["url"]))
    entry = ENTRY.get(cited.get("type", "generic"), "misc")
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{entry}{{{key(cited)},\n{body}\n}}\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv != ["bibtex"]:
        print(__doc__, file=sys.stderr)
        return 2
    print(bibtex(), end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
