"""A release is a tag vX.Y.Z on main whose install cells pin d2lgpu X.Y.Z from PyPI.

    python -m booktools.release pin X.Y.Z    # the install cells, CITATION.cff's version and date
    python -m booktools.release check vX.Y.Z  # publish (.ci/run): the checkout names that version

``bash scripts/release.sh X.Y.Z`` runs ``pin``, commits and tags. d2lgpu's own
version is the tag (setuptools-scm), so the wheel publish builds is the one the cells install.
"""
from __future__ import annotations

import argparse
import datetime
import re
import sys
from pathlib import Path

from booktools.book import ROOT

__all__ = ["VERSION", "INSTALL", "CELLS", "RELEASED", "texts", "pin", "check", "main"]

VERSION = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
# An install cell's pip line, in a .md or (its quotes escaped) in a notebook's JSON.
INSTALL = re.compile(r'(%pip install (?:-q|--quiet) )(\\?")'
                     r'(?:git\+https://[^"\\]+|d2lgpu==[0-9.]+)\\?"')
CELLS = ("chapters/*.md", "chapters/*.ipynb", "i18n/*/chapters/*.md", "i18n/*/chapters/*.ipynb")
RELEASED = re.compile(r'^version: ".*"\ndate-released: "(.*)"$', re.M)  # in CITATION.cff


def texts(version: str, today: str = "", root: Path = ROOT) -> dict[Path, str]:
    """Each file that names the release as it reads for version (and today's date, if given)."""
    if not VERSION.fullmatch(version):
        raise ValueError(f"version {version!r}: give MAJOR.MINOR.PATCH, e.g. 0.2.0")
    found = {}
    for path in sorted(path for pattern in CELLS for path in root.glob(pattern)):
        text = path.read_text(encoding="utf-8")
        if INSTALL.search(text):
            found[path] = INSTALL.sub(lambda m: f"{m[1]}{m[2]}d2lgpu=={version}{m[2]}", text)
    if not found:
        raise ValueError('found no install cell (%pip install -q "...") in the chapters')
    cff = root / "CITATION.cff"
    text = cff.read_text(encoding="utf-8")
    if not RELEASED.search(text):
        raise ValueError('CITATION.cff: found no lines version: "..." and date-released: "..."')
    found[cff] = RELEASED.sub(
        lambda m: f'version: "{version}"\ndate-released: "{today or m[1]}"', text, count=1)
    return found


def pin(version: str, root: Path = ROOT) -> list[Path]:
    """Write the files that name the release for version, dated today; return those changed."""
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    changed = {path: text for path, text in texts(version, today, root).items()
               if text != path.read_text(encoding="utf-8")}
    for path, text in changed.items():
        path.write_text(text, encoding="utf-8")
    return sorted(changed)


def check(tag: str, root: Path = ROOT) -> list[str]:
    """Why the checkout may not be published as tag (empty: it may)."""
    version = tag.removeprefix("v")
    if not tag.startswith("v") or not VERSION.fullmatch(version):
        return [f"{tag} is not a release tag (vMAJOR.MINOR.PATCH)"]
    return [f"{path.relative_to(root)}: does not name d2lgpu {version} (make the release "
            f"commit with bash scripts/release.sh {version})"
            for path, text in texts(version, root=root).items()
            if text != path.read_text(encoding="utf-8")]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.release",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("pin").add_argument("version", help="MAJOR.MINOR.PATCH")
    sub.add_parser("check").add_argument("tag", help="vMAJOR.MINOR.PATCH")
    args = parser.parse_args(argv)
    try:
        if args.command == "pin":
            changed = pin(args.version, ROOT)
            print(f"release: {len(changed)} files now name d2lgpu {args.version}")
            return 0
        found = check(args.tag, ROOT)
    except ValueError as error:
        print(f"release: {error}", file=sys.stderr)
        return 2
    for problem in found:
        print(f"release: {problem}", file=sys.stderr)
    if not found:
        print(f"release: {args.tag} may be published")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
