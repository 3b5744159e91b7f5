"""Exercises numbered from 1 on every page.

sphinx-exercise numbers exercises with Sphinx's ``numfig``, which counts
through the whole book when the toc is not section-numbered: the exercises of
the distributed chapter were "Exercise 5" to "Exercise 7" because the
exercises chapter has four. Each page's exercises are its own, so after Sphinx
has assigned the numbers (``env-get-updated``, where the toctree collector
does it) this renumbers them 1, 2, ... per page, in page order. Titles and
references read the numbers from there when pages are written.
"""
from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

FIGTYPE = "exercise"  # the enumerable node type sphinx-exercise registers


def number_exercises_per_page(app: Sphinx, env: BuildEnvironment) -> list[str]:
    for numbers in env.toc_fignumbers.values():
        exercises = numbers.get(FIGTYPE)
        if not exercises or any(len(n) != 1 for n in exercises.values()):
            continue  # none, or section-numbered (then already per section)
        in_order = sorted(exercises, key=exercises.__getitem__)
        numbers[FIGTYPE] = {ident: (i,) for i, ident in enumerate(in_order, start=1)}
    return []


def setup(app: Sphinx) -> dict:
    # After the toctree collector (priority 500) has assigned the book-wide numbers.
    app.connect("env-get-updated", number_exercises_per_page, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
