"""CITATION.cff cites the book, and the README's hand-written BibTeX says what it says, field
by field (cffconvert validates the file against the CFF schema: a commit hook)."""
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def readme_bibtex(text: str) -> tuple[str, str, dict[str, str]]:
    """The entry type, key and fields of the README's ```bibtex block."""
    block = re.search(r"```bibtex\n@(\w+)\{([\w:-]+),\n(.*?)\n\}\n```", text, re.S)
    assert block, "README.md: no ```bibtex block with one @type{key, ...} entry"
    fields = re.findall(r"^  (\w+) = \{(.*)\},?$", block[3], re.M)
    assert len(fields) == len(block[3].splitlines()), "one `  name = {value},` a line"
    return block[1], block[2], dict(fields)


def expected_bibtex(cff: dict) -> dict[str, str]:
    """The BibTeX fields of CITATION.cff's preferred citation (authors that are entities)."""
    cited = cff["preferred-citation"]
    return {"author": " and ".join("{%s}" % person["name"] for person in cited["authors"]),
            "title": "{%s}" % cited["title"], "publisher": cited["publisher"]["name"],
            "year": str(cited["year"]), "url": cited["url"]}


def test_the_readme_bibtex_is_the_citation_of_the_book():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    cited = cff["preferred-citation"]
    assert cited["type"] == "book" and cited["title"] == cff["title"]
    assert cited["url"] == cff["url"] and cited["year"] <= int(cff["date-released"][:4])
    entry, key, fields = readme_bibtex((ROOT / "README.md").read_text())
    assert (entry, key) == ("book", f"d2lgpu{cited['year']}gpus")
    assert fields == expected_bibtex(cff)


def test_a_readme_bibtex_that_drifts_from_the_citation_fails():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    readme = (ROOT / "README.md").read_text()
    for name, value in readme_bibtex(readme)[2].items():
        drifted = readme.replace(f"  {name} = {{{value}}}", f"  {name} = {{{value}x}}")
        assert readme_bibtex(drifted)[2] != expected_bibtex(cff), name


def test_ci_validates_the_citation_with_cffconvert_apart_from_the_books_environment():
    import yaml
    hooks = {hook["id"]: hook for repo in yaml.safe_load(
        (ROOT / ".pre-commit-config.yaml").read_text())["repos"] for hook in repo["hooks"]}
    assert hooks["citation"]["entry"] == "cffconvert --validate --infile CITATION.cff"
    assert hooks["citation"]["language"] == "python"  # its own venv: jsonschema<4
    test = (ROOT / ".github" / "workflows" / "test.yml").read_text()
    assert "uses: pre-commit/action@" in test
    assert "cffconvert" not in (ROOT / "requirements.txt").read_text()
