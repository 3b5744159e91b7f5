"""Words of prose in the chapters, against the limits in pyproject.toml.

What counts: the text of ``chapters/*.md`` a reader reads as prose, headings,
lists, tables, admonitions, exercises and solutions included. What does not:
the front matter, code cells and other code blocks, math blocks, HTML
comments, ``(label)=`` lines, directive options (``:name: x``) and a token
without a letter or digit (a bare ``|`` or ``-``).

    python -m booktools.words        # a table, and an exit status of 1 over a limit
"""
from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Limit", "count_words", "prose", "limits", "over_limits", "main"]

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
FENCE = re.compile(r"^(`{3,}|~{3,})\s*(\S*)")
OPTION = re.compile(r"^:[\w-]+:")
LABEL = re.compile(r"^\([\w-]+\)=\s*$")
WORD = re.compile(r"\w")
# Directives whose argument is a label or a path, not a title.
UNTITLED = ("{solution-start}", "{solution-end}", "{figure}", "{image}", "{include}")


def prose(text: str) -> str:
    """The prose of one MyST markdown page (see the module's docstring)."""
    text = re.sub(r"\A---\n.*?\n---\n", "", text, flags=re.S)
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    kept, fences = [], []  # fences: stack of (marker, is_code)
    in_math = in_options = False
    for line in text.splitlines():
        stripped = line.strip()
        match = FENCE.match(stripped)
        if match and fences and stripped == fences[-1][0]:
            fences.pop()
            in_options = False
            continue
        if match and not (fences and fences[-1][1]):
            info = match.group(2)
            fences.append((match.group(1), not info.startswith("{")
                           or info.startswith("{code-cell}")))
            if not fences[-1][1] and info not in UNTITLED:
                kept.append(stripped[len(match.group(0)):])  # a directive's title
            in_options = not fences[-1][1]
            continue
        if fences and fences[-1][1]:
            continue
        if stripped == "$$":
            in_math = not in_math
            continue
        if in_math or LABEL.match(stripped):
            continue
        if in_options:  # a directive's ":key: value" lines, or a --- block
            if OPTION.match(stripped):
                continue
            in_options = False
        kept.append(line)
    return "\n".join(kept)


def count_words(text: str) -> int:
    """Words of prose in one page's MyST markdown."""
    return sum(1 for token in prose(text).split() if WORD.search(token))


@dataclass(frozen=True)
class Limit:
    name: str
    chapters: tuple[str, ...]
    limit: int

    def words(self, chapters: Path = CHAPTERS) -> int:
        return sum(count_words((chapters / f"{c}.md").read_text())
                   for c in self.chapters)


def limits(pyproject: Path = ROOT / "pyproject.toml",
           chapters: Path = CHAPTERS) -> list[Limit]:
    """The limits of [tool.booktools.word-limits]; "*" means every chapter."""
    table = tomllib.loads(pyproject.read_text())["tool"]["booktools"]["word-limits"]
    every = tuple(sorted(p.stem for p in chapters.glob("*.md")))
    found = []
    for name, entry in table.items():
        names = every if entry["chapters"] == "*" else tuple(entry["chapters"])
        missing = [c for c in names if not (chapters / f"{c}.md").is_file()]
        if missing:
            raise ValueError(f"word limit {name!r} names missing chapters: {missing}")
        found.append(Limit(name, names, int(entry["limit"])))
    return found


def over_limits(chapters: Path = CHAPTERS, pyproject: Path = ROOT / "pyproject.toml"):
    """[(limit, words)] for every limit the chapters exceed."""
    return [(lim, n) for lim in limits(pyproject, chapters)
            if (n := lim.words(chapters)) > lim.limit]


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    for path in sorted(CHAPTERS.glob("*.md")):
        print(f"{path.stem:12} {count_words(path.read_text()):6}")
    status = 0
    for lim in limits():
        n = lim.words()
        over = n > lim.limit
        status |= over
        print(f"{lim.name}: {n} words of at most {lim.limit}"
              f"{'  OVER' if over else ''} ({', '.join(lim.chapters)})")
    return status


if __name__ == "__main__":
    sys.exit(main())
