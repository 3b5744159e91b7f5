"""Exercises numbered from 1 on every page.

sphinx-exercise numbers them with Sphinx's numfig, which counts through the whole book
when the toc is not section-numbered (sphinx-doc/sphinx#7135, #8170). After the toctree
collector has assigned the numbers, each page's are renumbered 1, 2, ... in page order.
"""
from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

__all__ = ["number_exercises_per_page"]

FIGTYPE = "exercise"  # the enumerable node type sphinx-exercise registers


def number_exercises_per_page(app: Sphinx, env: BuildEnvironment) -> list[str]:
    for numbers in env.toc_fignumbers.values():
        exercises = numbers.get(FIGTYPE)
        if exercises and all(len(n) == 1 for n in exercises.values()):  # not by section
            in_order = sorted(exercises, key=exercises.__getitem__)
            numbers[FIGTYPE] = {ident: (i,) for i, ident in enumerate(in_order, start=1)}
    return []


def setup(app: Sphinx) -> dict:
    # After the toctree collector (priority 500) has assigned the book-wide numbers.
    app.connect("env-get-updated", number_exercises_per_page, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
