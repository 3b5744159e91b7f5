"""The book's GitHub repository: named once in _config.yml, repeated where it must be.

    python -m booktools.repo           # the address, and every file that repeats it
    python -m booktools.repo check     # exit 1, naming each place that disagrees

``_config.yml`` (``repository.url`` and ``branch``) is the source: the launch
buttons and the site's footer are derived from it while the site builds. The
places that repeat it (``PLACES``): the chapters of every edition (an install
cell from git), the README, the guides and
``CITATION.cff``. Every GitHub address in them (a repository, a raw file, a
Pages site, a Colab or Studio Lab link) must be the book's, with its branch
where it names one, unless it is another project's, listed in ``ELSEWHERE``.
A fork edits ``_config.yml``, then each place ``check`` names (file:line);
released install cells name PyPI, not the repository (booktools.release).
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from booktools.book import NOTEBOOK_BRANCH, ROOT

__all__ = ["Address", "Mention", "PLACES", "ELSEWHERE", "parse_url", "configured",
           "place_files", "mentions", "problems", "main"]

# The files that repeat the address (globs under the book's root).
PLACES = ("_config.yml", "README.md", "CONTRIBUTING.md", "MAINTAINING.md", "CITATION.cff",
          "runbooks/*.md",
          "chapters/*.md", "chapters/*.ipynb", "chapters/*.py", "chapters/_snippets/*.md",
          "notebooks/*.md", "notebooks/*.ipynb",
          "i18n/*/chapters/*.md", "i18n/*/chapters/*.ipynb", "i18n/*/_snippets/*.md")
# Other projects' repositories that the places may link to, as "owner/name".
ELSEWHERE: frozenset[str] = frozenset()

OWNER = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})"
NAME = r"[A-Za-z0-9._-]+"
BRANCH = r"[A-Za-z0-9._-]+"
_END = r"(?![A-Za-z0-9._-])"
# Each form of a GitHub address, with the groups owner, name and (where it names one) branch.
FORMS = {
    "repository": re.compile(
        rf"https://github\.com/(?P<owner>{OWNER})/(?P<name>{NAME}?)(?P<git>\.git)?{_END}"
        rf"(?:(?P<sep>@|/(?:blob|tree|raw|edit)/)(?P<branch>{BRANCH}){_END})?"),
    "raw file": re.compile(
        rf"https://raw\.githubusercontent\.com/(?P<owner>{OWNER})/(?P<name>{NAME})/"
        rf"(?P<branch>{BRANCH})/"),
    "Pages site": re.compile(rf"https://(?P<owner>{OWNER})\.github\.io/(?P<name>{NAME}){_END}"),
    "notebook launcher": re.compile(
        rf"https://(?P<host>colab\.research\.google\.com|studiolab\.sagemaker\.aws/import)"
        rf"/github/(?P<owner>{OWNER})/(?P<name>{NAME})/blob/(?P<branch>{BRANCH})/"),
}


@dataclass(frozen=True)
class Address:
    owner: str
    name: str
    branch: str

    @property
    def url(self) -> str:
        return f"https://github.com/{self.owner}/{self.name}"

    def __str__(self) -> str:
        return f"{self.url} (branch {self.branch})"


@dataclass(frozen=True)
class Mention:
    path: Path
    line: int
    form: str
    text: str
    owner: str
    name: str
    branch: str | None

    def names(self, address: Address) -> bool:
        """Whether this is the address (a Pages host is lower-case, whatever the owner)."""
        owner = self.owner.lower() == address.owner.lower() if self.form == "Pages site" \
            else self.owner == address.owner
        # The launch buttons' notebooks are on a branch of their own (reader_notebooks).
        return owner and self.name == address.name and \
            self.branch in (None, address.branch, NOTEBOOK_BRANCH)

    def elsewhere(self) -> bool:
        return f"{self.owner}/{self.name}" in ELSEWHERE


def parse_url(url: str, branch: str = "main") -> Address:
    """The address of a GitHub repository URL, or ValueError saying what is wrong with it."""
    match = re.fullmatch(rf"https://github\.com/({OWNER})/({NAME}?)(?:\.git)?/?", url.strip())
    if not match or match.group(2) in (".", ".."):
        raise ValueError(f"{url!r} is not a GitHub repository's address: give "
                         "https://github.com/OWNER/NAME (Colab and Studio Lab open notebooks "
                         "from GitHub only)")
    if not re.fullmatch(BRANCH, branch) or branch.startswith(("-", ".")) or ".." in branch \
            or branch.endswith(".lock"):
        raise ValueError(f"branch {branch!r}: use letters, digits, '.', '_' and '-' "
                         "(a branch that the install cells can name after @)")
    return Address(match.group(1), match.group(2), branch)


def configured(root: Path = ROOT) -> Address:
    """The address _config.yml names (``repository.url`` and ``branch``)."""
    repository = (yaml.safe_load((root / "_config.yml").read_text(encoding="utf-8")) or {}).get("repository") or {}
    try:
        return parse_url(str(repository.get("url", "")), str(repository.get("branch") or "main"))
    except ValueError as error:
        raise ValueError(f"_config.yml repository: {error}") from None


def place_files(root: Path = ROOT) -> list[Path]:
    """The files that may repeat the address, sorted."""
    return sorted({path for pattern in PLACES for path in root.glob(pattern) if path.is_file()})


def _mentions(text: str, path: Path) -> list[Mention]:
    found = []
    for form, pattern in FORMS.items():
        for match in pattern.finditer(text):
            found.append(Mention(path, text.count("\n", 0, match.start()) + 1, form,
                                 match.group(0), match["owner"], match["name"],
                                 match.groupdict().get("branch")))
    return sorted(found, key=lambda m: (m.line, m.text))


def mentions(root: Path = ROOT) -> list[Mention]:
    """Every GitHub address in the places, in file and line order."""
    return [m for path in place_files(root) for m in _mentions(path.read_text(encoding="utf-8"), path)]


def _disagreements(found: list[Mention], address: Address, root: Path) -> list[str]:
    return [f"{m.path.relative_to(root)}:{m.line}: {m.text} is not the book's repository, "
            f"{address} as _config.yml names it" for m in found
            if not m.names(address) and not m.elsewhere()]


def problems(root: Path = ROOT) -> list[str]:
    """Each place that names a GitHub address other than _config.yml's (empty: they agree)."""
    return _disagreements(mentions(root), configured(root), root)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.repo",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("check", help="exit 1 when a place disagrees with _config.yml")
    args = parser.parse_args(argv)
    try:
        found = problems()
        if args.command == "check":
            print("\n".join(found) or f"repo: every place names {configured()}")
            return 1 if found else 0
        files = {}
        for mention in mentions():
            files.setdefault(mention.path.relative_to(ROOT), []).append(mention)
        print(f"repo: {configured()} (_config.yml)")
        for path, found_here in files.items():
            print(f"  {path}: {len(found_here)}")
        print("\n".join(found))
        return 1 if found else 0
    except ValueError as error:
        print(f"repo: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
