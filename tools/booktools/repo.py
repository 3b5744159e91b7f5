"""The book's GitHub repository, named once in _config.yml; the places that repeat it agree.

A fork edits ``repository.url`` and ``branch`` in _config.yml, then each place that
tests/test_repository_address.py names (``problems``: file:line).
"""
from __future__ import annotations

import re
from pathlib import Path

import yaml

from booktools.book import NOTEBOOK_BRANCH, ROOT

__all__ = ["PLACES", "ADDRESSES", "problems"]

# The files that repeat the address (globs under the book's root).
PLACES = ("_config.yml", "README.md", "CONTRIBUTING.md", "MAINTAINING.md", "CITATION.cff",
          "runbooks/*.md", "chapters/*.md", "chapters/*.ipynb", "chapters/*.py",
          "chapters/_snippets/*.md", "notebooks/*.md", "notebooks/*.ipynb",
          "i18n/*/chapters/*.md", "i18n/*/chapters/*.ipynb", "i18n/*/_snippets/*.md")
_REPO = r"(?P<owner>[\w-]+)/(?P<name>[\w.-]+?)(?:\.git)?(?![\w.-])"
# A repository or a file in it (on github.com, Colab or Studio Lab), a raw file, a Pages site.
ADDRESSES = (
    re.compile(r"https://(?:github\.com|colab\.research\.google\.com/github|"
               rf"studiolab\.sagemaker\.aws/import/github)/{_REPO}"
               r"(?:(?:@|/blob/|/tree/|/raw/|/edit/)(?P<branch>[\w.-]+))?"),
    re.compile(rf"https://raw\.githubusercontent\.com/{_REPO}/(?P<branch>[\w.-]+)/"),
    re.compile(r"https://(?P<owner>[\w-]+)\.github\.io/(?P<name>[\w.-]+)"),
)


def problems(root: Path = ROOT) -> list[str]:
    """Each GitHub address in the places that is not _config.yml's, as 'file:line: ...'."""
    config = yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}
    repository = config.get("repository") or {}
    url, branch = str(repository.get("url", "")), str(repository.get("branch") or "main")
    match = re.fullmatch(r"https://github\.com/([\w-]+)/([\w.-]+?)(?:\.git)?/?", url)
    if not match:
        raise ValueError(f"_config.yml repository.url: {url!r} is not a GitHub repository's "
                         "address (https://github.com/OWNER/NAME)")
    own = (match[1].lower(), match[2].lower())
    found = []
    for path in sorted({path for pattern in PLACES for path in root.glob(pattern)}):
        text = path.read_text(encoding="utf-8")
        for pattern in ADDRESSES:
            for m in pattern.finditer(text):
                # GitHub's owners and names are case-insensitive (a Pages host is lower-case).
                if (m["owner"].lower(), m["name"].lower()) != own or \
                        m.groupdict().get("branch") not in (None, branch, NOTEBOOK_BRANCH):
                    found.append((path.relative_to(root), text.count("\n", 0, m.start()) + 1, m[0]))
    return [f"{path}:{line}: {address} is not the book's repository, {url} (branch {branch}) "
            "as _config.yml names it" for path, line, address in sorted(found)]

