"""Hidden cells' summaries named by what they show (axe-core's label-content-name-mismatch).

myst-nb labels the summary "Toggle hidden content" while it shows "Show code cell
source", and speech input says what it sees; without the label the name is the text.
"""
from __future__ import annotations

from sphinx.application import Sphinx

__all__ = ["name_summaries_by_their_text"]

MYST_NB_SUMMARY = '<summary aria-label="Toggle hidden content">'


def name_summaries_by_their_text(app: Sphinx, pagename, templatename, context: dict,
                                 doctree) -> None:
    if "body" in context:
        context["body"] = context["body"].replace(MYST_NB_SUMMARY, "<summary>")


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", name_summaries_by_their_text)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
