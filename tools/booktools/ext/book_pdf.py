"""A link to the edition's PDF (booktools.pdf) above the text of every page.

The PDF is printed after the HTML, by Chromium. Where there is no Chromium
(booktools.chromium.version: none that says its version) the build prints no
PDF, so no page links one; where printing fails, the build publishes the
pages with their links taken out again (``strip_links``).
"""
from __future__ import annotations

import html
import re

from sphinx.application import Sphinx

from booktools import chromium, i18n, pdf

__all__ = ["LINK_CLASS", "link", "strip_links", "setup"]

LINK_CLASS = "book-pdf-link"  # book.css styles it and hides it on paper


def link(code: str, pagename: str) -> str:
    """The link, in the edition's language, from that page to the edition's PDF."""
    lang = i18n.language(code)
    url = i18n.relative_url(i18n.site_path(code, pagename), pdf.site_path(code))
    return (f'<p class="{LINK_CLASS}"><a href="{html.escape(url)}" type="application/pdf" '
            f'download title="{html.escape(lang.ui["pdf_title"])}">'
            f'{html.escape(lang.ui["pdf"])}</a></p>\n')


_LINK = re.compile(rf'<p class="{LINK_CLASS}"><a href="[^"]*" type="application/pdf" '
                   rf'download title="[^"]*">[^<]*</a></p>\n')


def strip_links(page: str) -> str:
    """A built page without the link that ``link`` put above its text."""
    return _LINK.sub("", page)


def add_link(app: Sphinx, pagename: str, templatename: str, context: dict, doctree) -> None:
    if "body" not in context or doctree is None or chromium.version() is None:
        return
    context["body"] = link(i18n.for_sphinx(app.config.language).code, pagename) + context["body"]


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", add_link)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
