"""Releases: a tag vX.Y.Z on main, whose install cells pin d2lgpu X.Y.Z from PyPI.

    python -m booktools.release cut X.Y.Z        # scripts/release.sh: one commit, its tag
    python -m booktools.release pin X.Y.Z        # the install cells alone
    python -m booktools.release check TAG [SHA]  # the publish workflow, on the tag

``cut``, from a clean checkout of the branch readers install from (main),
checks everything before it writes anything: the version, that the tag is
new, the branch, and every text it rewrites. Then it writes the version and
date into ``CITATION.cff`` (``version``, ``date-released``, and the preferred
citation's ``version`` and ``year``), the README's BibTeX, and every install
cell of every edition, .md and notebook alike (``pin``:
``%pip install -q "d2lgpu==X.Y.Z"``), commits that and tags the commit.
d2lgpu's own version is the tag (setuptools-scm), so the wheel that publish
builds from the tag is the one the cells install. ``check`` refuses a tag
whose commit is not the tested one, or whose files name another version.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import re
import subprocess
import sys
from pathlib import Path

from booktools import citation, repo
from booktools.book import ROOT

__all__ = ["VERSION", "INSTALL", "tag_of", "install_texts", "pin", "version_texts", "cut",
           "check", "main"]

VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
# An install cell's pip line, in a .md or (its quotes escaped) in a notebook's JSON.
INSTALL = re.compile(r'(%pip install (?:-q|--quiet) )(\\?")(?:d2lgpu @ )?'
                     r'(?:git\+https://[^"\\]+|d2lgpu==[0-9.]+)\\?"')
CELLS = ("chapters/*.md", "chapters/*.ipynb", "i18n/*/chapters/*.md", "i18n/*/chapters/*.ipynb")


def tag_of(version: str) -> str:
    if not VERSION.fullmatch(version):
        raise ValueError(f"version {version!r}: give MAJOR.MINOR.PATCH, e.g. 0.2.0")
    return f"v{version}"


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          encoding="utf-8")
    if proc.returncode != 0:
        said = (proc.stderr.strip() or proc.stdout.strip() or f"exit {proc.returncode}")
        raise ValueError(f"git {' '.join(args)}: {said}")
    return proc.stdout.strip()


def _sub(pattern: str, replacement: str, text: str, what: str) -> str:
    new, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
    if count != 1:
        raise ValueError(f"found no {what} to set")
    return new


def install_texts(version: str, root: Path = ROOT) -> dict[Path, str]:
    """Every file with an install cell, as it reads with the cell pinned to ``version``."""
    tag_of(version)
    texts = {}
    for pattern in CELLS:
        for path in sorted(root.glob(pattern)):
            text = path.read_text(encoding="utf-8")
            if INSTALL.search(text):
                texts[path] = INSTALL.sub(lambda m: f"{m[1]}{m[2]}d2lgpu=={version}{m[2]}", text)
    if not texts:
        raise ValueError("found no install cell (%pip install -q \"...\") in the chapters")
    return texts


def pin(version: str, root: Path = ROOT) -> list[Path]:
    """Pin every install cell to d2lgpu==version; return the files changed."""
    changed = {path: text for path, text in install_texts(version, root).items()
               if text != path.read_text(encoding="utf-8")}
    for path, text in changed.items():
        path.write_text(text, encoding="utf-8")
    return sorted(changed)


def version_texts(version: str, date: _dt.date, root: Path = ROOT) -> dict[Path, str]:
    """CITATION.cff and README.md as they read with the release's version and date."""
    cff = root / "CITATION.cff"
    text = cff.read_text(encoding="utf-8")
    text = _sub(r'^version: ".*"$', f'version: "{version}"', text, "version in CITATION.cff")
    text = _sub(r'^date-released: ".*"$', f'date-released: "{date.isoformat()}"', text,
                "date-released in CITATION.cff")
    head, sep, cited = text.partition("\npreferred-citation:\n")
    if not sep:
        raise ValueError("found no preferred-citation in CITATION.cff")
    cited = _sub(r'^  version: ".*"$', f'  version: "{version}"', cited,
                 "preferred-citation version")
    cited = _sub(r"^  year: \d+$", f"  year: {date.year}", cited, "preferred-citation year")
    new_cff = head + sep + cited
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    block = re.compile(r"```bibtex\n.*?```", re.S)
    if not block.search(text):
        raise ValueError("found no ```bibtex block in README.md")
    bibtex = citation.bibtex(text=new_cff)
    return {cff: new_cff, readme: block.sub(lambda _: f"```bibtex\n{bibtex}```", text, count=1)}


def cut(version: str, root: Path = ROOT, today: _dt.date | None = None) -> str:
    """Check, then make the release commit on the branch and tag it; return the tag."""
    tag = tag_of(version)
    branch = _git(root, "symbolic-ref", "--quiet", "--short", "HEAD")
    if _git(root, "status", "--porcelain"):
        raise ValueError("the working tree has changes: commit or stash them first")
    if _git(root, "tag", "--list", tag):
        raise ValueError(f"the tag {tag} exists already")
    address = repo.configured(root)
    if address.branch != branch:
        raise ValueError(f"_config.yml names the branch {address.branch}, but {branch} is "
                         "checked out: release from the branch readers install from")
    date = today or _dt.datetime.now(_dt.timezone.utc).date()
    texts = {**version_texts(version, date, root), **install_texts(version, root)}
    for path, text in texts.items():
        path.write_text(text, encoding="utf-8")
    _git(root, "add", "--", *map(str, texts))
    _git(root, "commit", "-q", "-m", f"Release {version}: its version in CITATION.cff and the "
         f"README's BibTeX, and the install cells pinned to d2lgpu=={version}")
    _git(root, "tag", "-a", tag, "-m", f"GPUs from PyTorch {version}")
    return tag


def check(tag: str, sha: str = "", root: Path = ROOT) -> list[str]:
    """Why the checked-out commit may not be published as tag (empty: it may)."""
    if not re.fullmatch(r"v" + VERSION.pattern, tag):
        return [f"{tag} is not a release tag (vMAJOR.MINOR.PATCH)"]
    found = []
    try:
        tagged = _git(root, "rev-parse", f"refs/tags/{tag}^{{commit}}")
        head = _git(root, "rev-parse", "HEAD")
    except ValueError as error:
        return [str(error)]
    if sha and tagged != sha:
        found.append(f"the tag {tag} is commit {tagged[:12]}, not the tested {sha[:12]}")
    if head != tagged:
        found.append(f"the checkout is {head[:12]}, not the tag's commit {tagged[:12]}")
    version = str(citation.load(root / "CITATION.cff").get("version"))
    if f"v{version}" != tag:
        found.append(f"CITATION.cff's version is {version}, not {tag[1:]}")
    unpinned = [path for path, text in install_texts(tag[1:], root).items()
                if text != path.read_text(encoding="utf-8")]
    found += [f"{path.relative_to(root)}: its install cell does not pin d2lgpu=={tag[1:]} "
              "(cut releases with bash scripts/release.sh)" for path in unpinned]
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.release",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name, what in (("cut", "the release commit and its tag"),
                       ("pin", "pin every install cell to d2lgpu==VERSION")):
        sub.add_parser(name, help=what).add_argument("version", help="MAJOR.MINOR.PATCH")
    k = sub.add_parser("check", help="whether the checkout may be published as TAG")
    k.add_argument("tag")
    k.add_argument("sha", nargs="?", default="", help="the commit that test passed on")
    args = parser.parse_args(argv)
    try:
        if args.command == "cut":
            branch = _git(ROOT, "symbolic-ref", "--quiet", "--short", "HEAD")
            tag = cut(args.version, ROOT)
            print(f"release: {tag} tags the release commit on {branch}; "
                  f"publish with: git push origin {branch} {tag}")
            return 0
        if args.command == "pin":
            changed = pin(args.version, ROOT)
            print(f"release: {len(changed)} files now install d2lgpu=={args.version}; "
                  "commit them (nothing was executed)")
            return 0
        found = check(args.tag, args.sha, ROOT)
        for problem in found:
            print(f"release: {problem}", file=sys.stderr)
        if not found:
            print(f"release: {args.tag} may be published")
        return 1 if found else 0
    except ValueError as error:
        print(f"release: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
