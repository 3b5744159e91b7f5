"""Words of prose in the chapters, against the limits in pyproject.toml.

    python -m booktools.words        # each limit's count, and an exit status of 1 over one

The prose is booktools.gpu_figures.prose_paragraphs' (headings, lists, tables, admonitions,
exercises, solutions and alt texts; no code, math, labels or comments); a word is a
whitespace-separated token with a letter or digit in it.
"""
from __future__ import annotations

import argparse
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from booktools.gpu_figures import prose_paragraphs

__all__ = ["Limit", "count_words", "limits", "main"]

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"


def count_words(text: str) -> int:
    """Words of prose in one page's MyST markdown."""
    return sum(1 for paragraph in prose_paragraphs(text) for token in paragraph.text.split()
               if re.search(r"\w", token))


@dataclass(frozen=True)
class Limit:
    name: str
    chapters: tuple[str, ...]
    limit: int

    def words(self, chapters: Path = CHAPTERS) -> int:
        return sum(count_words((chapters / f"{c}.md").read_text(encoding="utf-8"))
                   for c in self.chapters)


def limits(pyproject: Path = ROOT / "pyproject.toml", chapters: Path = CHAPTERS) -> list[Limit]:
    """The limits of [tool.booktools.word-limits]; "*" means every chapter."""
    table = tomllib.loads(pyproject.read_text(encoding="utf-8"))["tool"]["booktools"]
    every = tuple(sorted(p.stem for p in chapters.glob("*.md")))
    found = []
    for name, entry in table["word-limits"].items():
        names = every if entry["chapters"] == "*" else tuple(entry["chapters"])
        missing = [c for c in names if not (chapters / f"{c}.md").is_file()]
        if missing:
            raise ValueError(f"word limit {name!r} names missing chapters: {missing}")
        found.append(Limit(name, names, int(entry["limit"])))
    return found


def main(argv=None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    status = 0
    for lim in limits():
        n = lim.words()
        status |= n > lim.limit
        print(f"{lim.name}: {n} words of at most {lim.limit}"
              f"{'  OVER' if n > lim.limit else ''} ({', '.join(lim.chapters)})")
    return status


if __name__ == "__main__":
    sys.exit(main())
