"""The numbers carry over: each figure with a unit in an English chapter's prose
(booktools.gpu_figures) stands as often in its translation's prose, its number read with
a decimal point or comma (the unit may be the edition's own: 倍, 秒).
"""
from __future__ import annotations

import re
from collections import Counter

from booktools.gpu_figures import find_figures, prose_paragraphs

__all__ = ["numbers_in", "missing_figures"]

_NUMBER = re.compile(r"(?<![0-9A-Za-z.,])\d+(?:[.,]\d+)*(?![0-9])")


def _readings(written: str) -> set[str]:
    """The readings of a number: "1,35" -> 1.35, "51.155,7" -> 51155.7, "1,024" -> 1024."""
    readings = {written.replace(",", "")}  # decimal point, thousands comma
    comma = written.replace(".", "").replace(",", ".")  # decimal comma, thousands point
    if comma.count(".") <= 1:
        readings.add(comma)
    return readings


def numbers_in(markdown: str) -> Counter:
    """How often each number (in each reading) stands in the prose of ``markdown``."""
    found = Counter()
    for paragraph in prose_paragraphs(markdown):
        for match in _NUMBER.finditer(paragraph.masked):
            found.update(_readings(match[0]))
    return found


def missing_figures(english: str, translation: str) -> list[tuple[int, str, int, int]]:
    """(English line, figure, times in English, in the translation) of each figure missing."""
    figures = find_figures(english)
    wanted = Counter(figure.number for figure in figures)
    have = numbers_in(translation)
    missing, seen = [], set()
    for figure in figures:
        if have[figure.number] < wanted[figure.number] and figure.number not in seen:
            seen.add(figure.number)
            missing.append((figure.line, re.sub(r" (?=[x%])", "", f"{figure.number} {figure.unit}"),
                            wanted[figure.number], have[figure.number]))
    return missing
