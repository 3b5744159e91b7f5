"""The numbers carry over: each figure with a unit in an English chapter's prose stands in
its translation's prose.

The English figures are booktools.gpu_figures' (``find_figures``: every number
with a unit in prose, GPU figure or not). A translation may write the unit its
own way (倍 for x, 秒 for s), so only the number is looked for, as a whole
number (1.4 is not in 11.4 or 1.45), in the translation's prose with code,
math and link targets blanked, as many times as English writes it. A number
is read both ways, so that an edition may write the decimal comma (pt-BR
"1,35 TFLOP/s", "51.155,7 GFLOP/s") or quote a printed "51155.7" as printed.
"""
from __future__ import annotations

import re
from collections import Counter

from booktools.gpu_figures import find_figures, prose_paragraphs

__all__ = ["numbers_in", "missing_figures"]

_NUMBER = re.compile(r"(?<![0-9A-Za-z.,])\d+(?:[.,]\d+)*(?![0-9])")


def _readings(written: str) -> set[str]:
    """A number as English writes it: "1,35" -> 1.35, "51.155,7" -> 51155.7, "1,024" -> 1024."""
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
    """(English line, figure as written, times in English, times in the translation) of each
    English figure whose number the translation's prose has fewer times."""
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
