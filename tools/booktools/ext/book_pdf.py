"""A link to the edition's PDF (booktools.pdf) above every page's text, where Chromium is."""
from __future__ import annotations

import html

from sphinx.application import Sphinx

from booktools import chromium, i18n, pdf

__all__ = ["LINK_CLASS", "link", "setup"]

LINK_CLASS = "book-pdf-link"  # book.css hides it on paper


def link(code: str, pagename: str) -> str:
    """The link, in the edition's language, from that page to the edition's PDF."""
    lang = i18n.language(code)
    url = i18n.relative_url(i18n.site_path(code, pagename), pdf.site_path(code))
    return (f'<p class="{LINK_CLASS}"><a href="{html.escape(url)}" type="application/pdf" '
            f'download title="{html.escape(lang.ui["pdf_title"])}">'
            f'{html.escape(lang.ui["pdf"])}</a></p>\n')


def add_link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if "body" in context and doctree is not None and chromium.version() is not None:
        code = i18n.for_sphinx(app.config.language).code
        context["body"] = link(code, pagename) + context["body"]


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", add_link)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
