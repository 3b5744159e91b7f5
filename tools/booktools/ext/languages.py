"""The book's editions on every page: ``<html lang>`` as BCP 47 writes it, ``hreflang``
links (absolute, under ``html.baseurl``; an edition's own ``html_baseurl`` ends in
``<code>/``), a switcher, a banner on a translation whose English changed since, a
solution's title in the page's language, the class ``latin`` on a translated page's
emphasis without CJK (book.css keeps it italic), and in CJK an exercise's heading as
练习 1（title）.
"""
from __future__ import annotations

import html
import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.errors import ConfigError

from booktools import i18n, typography

LATIN_EMPHASIS = "latin"  # the class book.css exempts from CJK emphasis


def _switcher(lang: i18n.Language, links: list) -> str:
    items = []
    for edition, url in links:
        current = ' aria-current="page"' if edition.code == lang.code else ""
        items.append(f'<li><a href="{html.escape(url)}" hreflang="{edition.code}" '
                     f'lang="{edition.code}"{current}>{html.escape(edition.name)}</a></li>')
    label = html.escape(lang.ui["switcher"])
    return (f'<nav class="language-switcher" aria-label="{label}">'
            f'<ul>{"".join(items)}</ul></nav>\n')


def _banner(lang: i18n.Language, english_url: str) -> str:
    return (f'<div class="admonition warning translation-lag" role="note"><p>'
            f'{html.escape(lang.ui["lag"])} <a href="{html.escape(english_url)}" '
            f'hreflang="en" lang="en">{html.escape(lang.ui["lag_link"])}</a></p></div>\n')


def site_addresses(app: Sphinx, config) -> None:
    """The site's address (html_baseurl, the English site's), and this edition's own."""
    root = config.html_baseurl
    if not root.startswith("https://"):
        raise ConfigError("languages: html.baseurl in _config.yml must be the site's https:// "
                          f"address (hreflang links are absolute), not {root!r}")
    root = root.rstrip("/") + "/"
    config.book_site_root = root
    lang = i18n.for_sphinx(config.language)
    config.html_baseurl = root if lang.english else f"{root}{lang.code}/"


def add_editions(app: Sphinx, pagename: str, templatename: str, context: dict,
                 doctree) -> None:
    lang = i18n.for_sphinx(app.config.language)
    context["language"] = lang.code  # <html lang="zh-CN">
    editions = i18n.alternates(pagename)
    if not editions or "body" not in context:
        return
    here = i18n.site_path(lang.code, pagename)
    links = [(e, i18n.relative_url(here, i18n.site_path(e.code, pagename))) for e in editions]
    english_url = links[0][1]
    root = app.config.book_site_root
    context["metatags"] = context.get("metatags", "") + "".join(
        f'\n<link rel="alternate" hreflang="{e.code}" '
        f'href="{html.escape(root + i18n.site_path(e.code, pagename))}">' for e in editions) + \
        f'\n<link rel="alternate" hreflang="x-default" ' \
        f'href="{html.escape(root + i18n.site_path("en", pagename))}">'
    top = _switcher(lang, links) if len(links) > 1 else ""
    if not lang.english and i18n.lags(lang.code, pagename.removeprefix("chapters/")):
        top += _banner(lang, english_url)
    context["body"] = top + context["body"]


def translate_solution_titles(app: Sphinx, doctree, docname: str) -> None:
    word = i18n.for_sphinx(app.config.language).ui["solution"]
    for node in doctree.findall(lambda n: type(n).__name__ == "solution_node"):
        title = node.children[0] if node.children else None
        if isinstance(title, nodes.title) and title.astext() == "Solution" and word != "Solution":
            title.children = [nodes.Text(word)]


def mark_latin_emphasis(app: Sphinx, doctree, docname: str) -> None:
    if i18n.for_sphinx(app.config.language).english:
        return
    for node in doctree.findall(nodes.emphasis):
        if not typography.has_cjk(node.astext()) and LATIN_EMPHASIS not in node["classes"]:
            node["classes"].append(LATIN_EMPHASIS)


def _exercise_titles(doctree):
    for node in doctree.findall(lambda n: type(n).__name__ in ("exercise_node",
                                                              "exercise_enumerable_node")):
        if node.children and isinstance(node.children[0], nodes.title):
            yield node.children[0]


def full_width_exercise_parentheses(app: Sphinx, doctree, docname: str) -> None:
    """练习 1 (title) -> 练习 1（title）: the texts sphinx-exercise puts around a title."""
    if not i18n.for_sphinx(app.config.language).cjk:
        return
    for title in _exercise_titles(doctree):
        texts = [child for child in title.children if isinstance(child, nodes.Text)]
        if len(texts) >= 2 and texts[0] == " (" and texts[-1] == ")":
            title.replace(texts[0], nodes.Text("（"))
            title.replace(texts[-1], nodes.Text("）"))


# Sphinx writes a number as "<span class="caption-number">练习 1 </span>": its space
# then stood before the "（" of full_width_exercise_parentheses.
NUMBER_BEFORE_PARENTHESIS = re.compile(r'(<span class="caption-number">[^<]*?) </span>（')


def no_space_before_full_width_parenthesis(app: Sphinx, pagename: str, templatename: str,
                                           context: dict, doctree) -> None:
    if "body" in context and i18n.for_sphinx(app.config.language).cjk:
        context["body"] = NUMBER_BEFORE_PARENTHESIS.sub(r"\1</span>（", context["body"])


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_site_root", "", "html")
    app.connect("config-inited", site_addresses)
    app.connect("html-page-context", add_editions)
    app.connect("html-page-context", no_space_before_full_width_parenthesis)
    app.connect("doctree-resolved", full_width_exercise_parentheses)
    app.connect("doctree-resolved", translate_solution_titles)
    app.connect("doctree-resolved", mark_latin_emphasis)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
