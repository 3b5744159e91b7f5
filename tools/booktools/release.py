"""Releases: a tag vX.Y.Z whose install cells and launch links name the tag.

    python -m booktools.release cut X.Y.Z      # scripts/release.sh: two commits and a tag
    python -m booktools.release check TAG SHA  # the publish workflow, before it builds

Readers open a chapter in Colab from the site's launch button, which names a
branch or tag of the repository, and the chapter's first cell installs
``d2lgpu`` from the one it names. Both must name the release, or every
reader would run whatever ``main`` holds that day. So ``cut``:

1. on the branch checked out (main), sets the version of the release in
   ``CITATION.cff`` (``version``, ``date-released``, and the preferred
   citation's ``version`` and ``year``) and ``pyproject.toml`` (d2lgpu's),
   writes the README's BibTeX again, and commits that;
2. from that commit, re-points the book to the tag (``booktools.repo``: the
   install cells, launch links and links of every edition name ``@vX.Y.Z``)
   and commits that on no branch, then tags this second commit ``vX.Y.Z``;
3. checks the branch out again, which still names itself, and says what to push.

The tag's commit is main's release commit plus the re-pointing, so ``test``
runs on exactly what readers get, and ``publish`` deploys it once ``test``
passes (``check`` refuses a tag whose commit does not name the tag).
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

__all__ = ["VERSION", "tag_of", "set_version", "cut", "check", "main"]

VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")


def tag_of(version: str) -> str:
    if not VERSION.fullmatch(version):
        raise ValueError(f"version {version!r}: give MAJOR.MINOR.PATCH, e.g. 0.2.0")
    return f"v{version}"


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True)
    if proc.returncode != 0:
        raise ValueError(f"git {' '.join(args)}: {proc.stderr.strip()}")
    return proc.stdout.strip()


def _sub(pattern: str, replacement: str, text: str, what: str) -> str:
    new, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
    if count != 1:
        raise ValueError(f"found no {what} to set")
    return new


def set_version(version: str, date: _dt.date, root: Path = ROOT) -> list[Path]:
    """Write the release's version and date where they live; return the files written."""
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
    cff.write_text(head + sep + cited, encoding="utf-8")
    pyproject = root / "pyproject.toml"
    pyproject.write_text(_sub(r'^version = ".*"$', f'version = "{version}"',
                              pyproject.read_text(encoding="utf-8"),
                              "version in pyproject.toml"), encoding="utf-8")
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    block = re.compile(r"```bibtex\n.*?```", re.S)
    if not block.search(text):
        raise ValueError("found no ```bibtex block in README.md")
    readme.write_text(block.sub(lambda _: f"```bibtex\n{citation.bibtex(cff)}```", text,
                                count=1), encoding="utf-8")
    problems = citation.problems(cff)
    if problems:
        raise ValueError("CITATION.cff would not validate:\n" + "\n".join(problems))
    return [cff, pyproject, readme]


def cut(version: str, root: Path = ROOT, today: _dt.date | None = None) -> str:
    """Make the release commit, the tag's commit and the tag (module docstring); return it."""
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
    changed = set_version(version, today or _dt.datetime.now(_dt.timezone.utc).date(), root)
    _git(root, "add", "--", *map(str, changed))
    _git(root, "commit", "-q", "-m", f"Release {version}: its version in CITATION.cff, "
         "pyproject.toml and the README's BibTeX")
    _git(root, "checkout", "-q", "--detach")
    try:
        repointed = repo.repoint(address.url, tag, root)
        _git(root, "add", "--", *map(str, repointed))
        _git(root, "commit", "-q", "-m", f"{tag}: the install cells and launch links name "
             f"the tag ({len(repointed)} files, by booktools.release)")
        _git(root, "tag", "-a", tag, "-m", f"GPUs from PyTorch {version}")
    finally:
        subprocess.run(["git", "checkout", "-q", "--force", branch], cwd=root,
                       capture_output=True)
    return tag


def check(tag: str, sha: str, root: Path = ROOT) -> list[str]:
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
    branch = repo.configured(root).branch
    if branch != tag:
        found.append(f"_config.yml names {branch}, not {tag}: the install cells would not "
                     "install the release (cut releases with bash scripts/release.sh)")
    found += repo.problems(root)
    version = str(citation.load(root / "CITATION.cff").get("version"))
    if f"v{version}" != tag:
        found.append(f"CITATION.cff's version is {version}, not {tag[1:]}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.release",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    c = sub.add_parser("cut", help="the release commit, the tag's commit and the tag")
    c.add_argument("version", help="MAJOR.MINOR.PATCH")
    k = sub.add_parser("check", help="whether the checkout may be published as TAG")
    k.add_argument("tag")
    k.add_argument("sha", nargs="?", default="", help="the commit that test passed on")
    args = parser.parse_args(argv)
    try:
        if args.command == "cut":
            branch = _git(ROOT, "symbolic-ref", "--quiet", "--short", "HEAD")
            tag = cut(args.version)
            print(f"release: {branch} has the release commit and {tag} its re-pointed child; "
                  f"publish with: git push origin {branch} {tag}")
            return 0
        found = check(args.tag, args.sha)
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
