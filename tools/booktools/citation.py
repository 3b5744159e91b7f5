"""CITATION.cff: checked against the Citation File Format's schema, and its BibTeX.

    python -m booktools.citation            # validate; exit 1 naming each problem
    python -m booktools.citation bibtex     # the BibTeX of its preferred citation

The schema is CFF 1.2.0's own (``cff-schema-1.2.0.json`` beside this module:
``schema.json`` of citation-file-format/citation-file-format at its tag 1.2.0,
CC BY 4.0), read by ``jsonschema`` 4. cffconvert, which used to do
both, requires ``jsonschema<4`` and held the book's whole environment there.

The BibTeX is made from ``preferred-citation`` (the book), with a key made
of the first author's name, the year and the title's first word
(``d2lgpu2026gpus``), as Google Scholar makes them; the README shows it
(tests/test_citation.py checks that it is this module's output).
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import jsonschema
import yaml

from booktools.book import ROOT

__all__ = ["SCHEMA", "CITATION", "load", "problems", "key", "bibtex", "main"]

SCHEMA = Path(__file__).with_name("cff-schema-1.2.0.json")
CITATION = ROOT / "CITATION.cff"
# BibTeX entry types for CFF's reference types (the ones a book would cite).
ENTRY = {"book": "book", "software": "software", "report": "techreport",
         "article": "article", "generic": "misc"}


def load(path: Path = CITATION) -> dict:
    """The citation as YAML reads it (dates stay text, as the schema expects)."""
    text = path.read_text(encoding="utf-8")
    return yaml.load(text, Loader=_NoDates)


class _NoDates(yaml.SafeLoader):
    pass


# The schema wants date-released as a string "YYYY-MM-DD"; YAML would make a date of it.
_NoDates.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


def problems(path: Path = CITATION) -> list[str]:
    """Each way the file breaks the CFF 1.2.0 schema, as "where: what" (empty: valid)."""
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    try:
        data = load(path)
    except yaml.YAMLError as error:
        return [f"{path.name}: not YAML: {error}"]
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.FormatChecker())
    found = []
    for error in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
        where = "/".join(map(str, error.absolute_path)) or "(top level)"
        found.append(f"{path.name}: {where}: {error.message}")
    return found


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


def bibtex(path: Path = CITATION) -> str:
    """The BibTeX entry of the preferred citation (else of the file itself)."""
    data = load(path)
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
    if argv not in ([], ["bibtex"]):
        print(__doc__, file=sys.stderr)
        return 2
    found = problems()
    for problem in found:
        print(problem, file=sys.stderr)
    if found:
        return 1
    if argv == ["bibtex"]:
        print(bibtex(), end="")
    else:
        print(f"citation: {CITATION.name} is valid CFF 1.2.0")
    return 0


if __name__ == "__main__":
    sys.exit(main())
