"""Accessible names that match what a page shows (axe-core's label-content-name-mismatch).

myst-nb labels the summary of a hidden cell "Toggle hidden content" while it
shows "Show code cell source": a reader using speech input says what they
see. Without the label, the summary's name is its visible text.
"""
from __future__ import annotations

from sphinx.application import Sphinx

__all__ = ["name_summaries_by_their_text"]

MYST_NB_SUMMARY = '<summary aria-label="Toggle hidden content">'


def name_summaries_by_their_text(app: Sphinx, pagename: str, templatename: str,
                                 context: dict, doctree) -> None:
    """Drop myst-nb's aria-label from hidden cells' summaries."""
    if "body" in context:
        context["body"] = context["body"].replace(MYST_NB_SUMMARY, "<summary>")


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", name_summaries_by_their_text)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
