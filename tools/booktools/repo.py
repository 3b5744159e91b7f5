"""The book's GitHub repository: named once in _config.yml, repeated where it must be.

    python -m booktools.repo                  # the address, and every file that repeats it
    python -m booktools.repo check            # exit 1, naming each place that disagrees
    python -m booktools.repo set URL [--branch BRANCH]
        Re-point the book (a fork, a renamed repository): _config.yml's
        ``repository`` and every place below, all files or none.

``_config.yml`` (``repository.url`` and ``branch``) is the source: the launch
buttons and the site's footer are derived from it while the site builds. The
places that must repeat it (``PLACES``) are each chapter's install cell in
every edition (the .md and its notebook),
the links of the README, CONTRIBUTING.md and MAINTAINING.md (clone, Colab,
the site on GitHub Pages, the BibTeX) and ``CITATION.cff``. Every GitHub address in them (a
repository on github.com, a raw file, a Pages site, a Colab or Studio Lab
link to a notebook) must be the book's, with its branch where it names one,
unless it is another project's, listed in ``ELSEWHERE``.

``set`` rewrites each of those addresses and nothing else: a notebook stays
byte for byte what it was apart from the address (it is not executed), its
.md twin and every translation change alike (booktools.notebooks and
booktools.i18n check agree afterwards), and a translation that was up to date
with its English chapter is stamped again (the English prose holds the
address too). Recorded runs (runs/) keep the address they ran with.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from booktools.book import ROOT

__all__ = ["Address", "Mention", "PLACES", "ELSEWHERE", "parse_url", "configured",
           "place_files", "mentions", "problems", "repoint", "main"]

# The files that repeat the address (globs under the book's root).
PLACES = ("_config.yml", "README.md", "CONTRIBUTING.md", "MAINTAINING.md", "CITATION.cff",
          "chapters/*.md", "chapters/*.ipynb", "chapters/*.py", "chapters/_snippets/*.md",
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
        return owner and self.name == address.name and self.branch in (None, address.branch)

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
    repository = (yaml.safe_load((root / "_config.yml").read_text()) or {}).get("repository") or {}
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
    return [m for path in place_files(root) for m in _mentions(path.read_text(), path)]


def _disagreements(found: list[Mention], address: Address, root: Path) -> list[str]:
    return [f"{m.path.relative_to(root)}:{m.line}: {m.text} is not the book's repository, "
            f"{address} as _config.yml names it" for m in found
            if not m.names(address) and not m.elsewhere()]


def problems(root: Path = ROOT) -> list[str]:
    """Each place that names a GitHub address other than _config.yml's (empty: they agree)."""
    return _disagreements(mentions(root), configured(root), root)


def _replace(match: re.Match, form: str, new: Address) -> str:
    if form == "repository":
        text = f"{new.url}{match['git'] or ''}"
        return text + (f"{match['sep']}{new.branch}" if match["branch"] else "")
    if form == "raw file":
        return f"https://raw.githubusercontent.com/{new.owner}/{new.name}/{new.branch}/"
    if form == "Pages site":
        return f"https://{new.owner.lower()}.github.io/{new.name}"
    return f"https://{match['host']}/github/{new.owner}/{new.name}/blob/{new.branch}/"


def _repointed(text: str, old: Address, new: Address) -> str:
    """The text with every mention of old (and only those) naming new instead."""
    for form, pattern in FORMS.items():
        def swap(match: re.Match, form=form) -> str:
            mention = Mention(Path(), 0, form, match.group(0), match["owner"], match["name"],
                              match.groupdict().get("branch"))
            return _replace(match, form, new) if mention.names(old) else match.group(0)
        text = pattern.sub(swap, text)
    return text


REPOSITORY_BRANCH = re.compile(r"^(repository:[ \t]*\n(?:(?:[ \t]+.*)?\n)*?[ \t]+branch:[ \t]*)"
                               r"(\S+)", re.M)


def _config_text(text: str, old: Address, new: Address) -> str:
    text = _repointed(text, old, new)
    text, count = REPOSITORY_BRANCH.subn(lambda m: m.group(1) + new.branch, text, count=1)
    if count == 0:  # no branch yet: add one under the url
        text = re.sub(r"^([ \t]+)(url:.*\n)", rf"\g<1>\g<2>\g<1>branch: {new.branch}\n", text,
                      count=1, flags=re.M)
    return text


def _restamped(texts: dict[Path, str], old_texts: dict[Path, str], root: Path) -> None:
    """Stamp again each translation that was up to date with its English chapter."""
    from booktools import i18n
    for path, text in texts.items():
        relative = path.relative_to(root).parts
        if len(relative) != 4 or relative[0] != "i18n" or path.suffix != ".md":
            continue
        english = root / "chapters" / path.name
        if english not in texts:
            continue
        before, after = i18n.prose_hash(old_texts[english]), i18n.prose_hash(texts[english])
        if before == after or i18n.recorded_hash(old_texts[path]) != before:
            continue
        front, sep, rest = text.partition("\n---\n")
        texts[path] = front.replace(before, after, 1) + sep + rest
        if i18n.recorded_hash(texts[path]) != after:
            raise ValueError(f"{path.relative_to(root)}: could not stamp the translation again")


def repoint(url: str, branch: str | None = None, root: Path = ROOT) -> list[Path]:
    """Make the book name another repository (and branch); return the files changed.

    Everything is checked before a file is written: a bad URL or branch, or a
    place that already disagrees with _config.yml, raises ValueError and
    changes nothing. The files are then each written whole (a temporary file,
    renamed over it).
    """
    old = configured(root)
    new = parse_url(url, branch or old.branch)
    stale = problems(root)
    if stale:
        raise ValueError("these places already disagree with _config.yml; make them agree "
                         "(or list other projects' repositories in booktools.repo.ELSEWHERE) "
                         "first:\n" + "\n".join(stale))
    old_texts = {path: path.read_text() for path in place_files(root)}
    texts = {}
    for path, text in old_texts.items():
        texts[path] = (_config_text(text, old, new) if path == root / "_config.yml"
                       else _repointed(text, old, new))
    _restamped(texts, old_texts, root)
    changed = {path: text for path, text in texts.items() if text != old_texts[path]}
    # What is about to be written must name the new address, everywhere.
    config = yaml.safe_load(texts[root / "_config.yml"])["repository"]
    assert parse_url(config["url"], str(config["branch"])) == new, config
    left = [m for path, text in texts.items() for m in _mentions(text, path)]
    left = _disagreements(left, new, root)
    if left:
        raise ValueError("re-pointing would leave these addresses:\n" + "\n".join(left))
    temporary = []
    try:
        for path, text in changed.items():
            with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False,
                                             prefix=f".{path.name}.", encoding="utf-8",
                                             newline="") as tmp:
                tmp.write(text)
            os.chmod(tmp.name, path.stat().st_mode & 0o7777)
            temporary.append((tmp.name, path))
    except BaseException:
        for name, _ in temporary:
            os.unlink(name)
        raise
    for name, path in temporary:
        os.replace(name, path)
    return sorted(changed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.repo",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("check", help="exit 1 when a place disagrees with _config.yml")
    s = sub.add_parser("set", help="re-point the book to another repository")
    s.add_argument("url", help="https://github.com/OWNER/NAME")
    s.add_argument("--branch", help="the branch readers install from (default: unchanged)")
    args = parser.parse_args(argv)
    try:
        if args.command == "set":
            old = configured()
            changed = repoint(args.url, args.branch)
            for path in changed:
                print(f"repo: {path.relative_to(ROOT)}")
            print(f"repo: {len(changed)} files now name {configured()} instead of {old}; "
                  "commit them (the notebooks were not executed)")
            return 0
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
