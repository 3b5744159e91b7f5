"""The book's editions on every page, each in its own language.

``<html lang>`` (BCP 47), absolute ``hreflang`` links under ``html.baseurl``, a switcher, a
banner on a translation whose English changed since, the footer (``ui.footer`` around
_config.yml's three links); in a translation a solution's title, the class ``latin`` on
emphasis without CJK, and in CJK 练习 1（title）. The edition's ``interface`` words
(i18n/languages.yml) come before the catalogues of Sphinx and the themes, in ``templates/``
and in the site's copies of the copybutton, togglebutton and search scripts. Sphinx splits a
query only at spaces (sphinx-doc/sphinx#13395): a CJK edition splits a term its index does
not hold into the longest ones it does (``SPLITTER``; sphinx-tsegsearch splits only Japanese,
and not as the index was). Search snippets leave out what is not the page's text.
"""
from __future__ import annotations

import gettext
import html
import json
import re
from pathlib import Path

from docutils import nodes
from sphinx import locale
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError, ExtensionError

from booktools import i18n, typography

__all__ = ["Words", "TEMPLATES", "footer", "LATIN_EMPHASIS", "SEARCH_MESSAGES", "SPLITTER",
           "setup"]

LATIN_EMPHASIS = "latin"  # the class book.css exempts from CJK emphasis
TEMPLATES = Path(__file__).with_name("templates")
COPY_MESSAGES = {"copy": "Copy", "copy_to_clipboard": "Copy to clipboard",
                 "copy_success": "Copied!", "copy_failure": "Failed to copy"}
COPY_LOCALE = "\nlet locale = 'en'"  # where copybutton.js picks its table
LINK = re.compile(r"<a\b[^>]*>.*?</a>", re.S)
SEARCH_MESSAGES = (
    "Your search did not match any documents. Please make sure that all words are spelled "
    "correctly and that you've selected enough categories.",
    "Search finished, found ${resultCount} page(s) matching the search query.",
    "Preparing search...", "Searching", "Search Results",
)
SKIPPED = '[".headerlink", "script", "style"]'
SKIPPED_TOO = ('[".headerlink", "script", "style", ".onlyprint", "details.hide > summary", '
               '".language-switcher", ".book-pdf-link", ".translation-lag", ".bd-header-article"]')
SPLIT_AT = 'if (typeof splitQuery === "undefined") {'
MARK = "/* booktools.ext.languages */"
SPLITTER = MARK + r"""
var splitQuery = (query) => {
  const index = (typeof Search !== "undefined" && Search._index) || {};
  const terms = index.terms || {}, titles = index.titleterms || {};
  const stemmer = typeof Stemmer === "undefined" ? null : new Stemmer();
  const held = (word) => {
    const lower = word.toLowerCase();
    const stem = stemmer ? stemmer.stemWord(lower) : lower;
    return [lower, stem].some((key) => key in terms || key in titles);
  };
  const cjk = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30fc\u3005]/u;
  const pieces = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30fc\u3005]+|[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30fc\u3005_]+/gu;
  const found = [];
  for (const word of query.split(/[^\p{Letter}\p{Number}_\p{Emoji_Presentation}]+/gu)) {
    if (!word) continue;
    if (held(word)) { found.push(word); continue; }
    for (const piece of word.match(pieces) || []) {
      if (!cjk.test(piece)) { found.push(piece); continue; }
      // The longest term of the index at each place; a character none holds is left out.
      for (let start = 0; start < piece.length;) {
        let end = Math.min(piece.length, start + 16);
        while (end > start + 1 && !held(piece.slice(start, end))) end--;
        if (held(piece.slice(start, end))) found.push(piece.slice(start, end));
        start = end;
      }
    }
  }
  return found;
};
"""


def _edition(app: Sphinx) -> i18n.Language:
    return i18n.for_sphinx(app.config.language)


class Words(gettext.NullTranslations):
    """An edition's words (English message -> text) before another catalogue."""

    def __init__(self, words: dict, fallback: gettext.NullTranslations | None):
        super().__init__()
        self.words = dict(words)
        self.add_fallback(fallback)  # None: none

    def gettext(self, message: str) -> str:  # no template or theme here asks ngettext
        return self.words.get(message) or super().gettext(message)


def put_words_first(app: Sphinx, config: Config) -> None:
    """The templates before the theme's, the edition's words before the catalogues."""
    config.templates_path.insert(0, str(TEMPLATES))
    words = _edition(app).interface
    if not words:
        return
    for catalogue in ("sphinx", "booktheme"):  # Sphinx's and sphinx-book-theme's
        key = ("general", catalogue)
        locale.translators[key] = Words(words, locale.translators.get(key))
    app.translator = locale.translators["general", "sphinx"]
    # sphinx-togglebutton read its hint from its catalogue when it was set up.
    for name, message in (("togglebutton_hint", "Click to show"),
                          ("togglebutton_hint_hide", "Click to hide")):
        if message in words and name in config:
            config[name] = words[message]


def footer(template: str, english: str) -> str:
    """The edition's footer: its words around the English footer's three links."""
    links = LINK.findall(english)
    if len(links) != 3:
        raise ExtensionError(f"languages: the footer in _config.yml has {len(links)} links; "
                             "the editions' footers (languages.yml: ui: footer) place three: "
                             "the text's licence, the code's and the citation")
    return f"<p>{template.format(text=links[0], code=links[1], cite=links[2])}</p>\n"


def _patch(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise ExtensionError(f"languages: {path.name} no longer has {old!r}: the edition's "
                             "words cannot be put in it (see booktools.ext.languages)")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def translate_scripts(app: Sphinx, exception: Exception | None) -> None:
    """The edition's words in its copies of sphinx-copybutton's, sphinx-togglebutton's and
    Sphinx's search scripts; its search's query split as its index is, and its snippets."""
    if exception is not None or app.builder.format != "html":
        return
    lang, static = _edition(app), Path(app.outdir) / "_static"
    words = lang.interface
    copybutton, togglebutton, search = (static / name for name in
                                        ("copybutton.js", "togglebutton.js", "searchtools.js"))
    copy = {key: words[message] for key, message in COPY_MESSAGES.items() if message in words}
    if copy and copybutton.is_file():
        table = json.dumps({**COPY_MESSAGES, **copy}, ensure_ascii=False)
        _patch(copybutton, COPY_LOCALE,
               f"\nmessages[{json.dumps(lang.code)}] = {table};{COPY_LOCALE}")
    label = words.get("Toggle hidden content")
    if label and togglebutton.is_file():
        _patch(togglebutton, 'aria-label="Toggle hidden content"',
               f'aria-label="{html.escape(label)}"')
    if search.is_file() and MARK not in search.read_text(encoding="utf-8"):
        _patch(search, SKIPPED, SKIPPED_TOO)
        for message in SEARCH_MESSAGES:
            if message in words:
                _patch(search, json.dumps(message), json.dumps(words[message], ensure_ascii=False))
        _patch(search, SPLIT_AT, (SPLITTER if lang.cjk else MARK + "\n") + SPLIT_AT)


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


# Sphinx writes a number as "<span class="caption-number">练习 1 </span>": its space
# then stood before the "（" of translate_titles_and_emphasis.
NUMBER_BEFORE_PARENTHESIS = re.compile(r'(<span class="caption-number">[^<]*?) </span>（')


def add_editions(app: Sphinx, pagename: str, templatename: str, context: dict,
                 doctree) -> None:
    """<html lang>, the edition's footer, hreflang links, the switcher and the lag banner."""
    lang = _edition(app)
    context["language"] = lang.code  # <html lang="zh-CN">
    if not lang.english and context.get("theme_extra_footer"):
        context["theme_extra_footer"] = footer(lang.ui["footer"], context["theme_extra_footer"])
    if "body" in context and lang.cjk:
        context["body"] = NUMBER_BEFORE_PARENTHESIS.sub(r"\1</span>（", context["body"])
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
    items = "".join(f'<li><a href="{html.escape(url)}" hreflang="{e.code}" lang="{e.code}"'
                    + (' aria-current="page"' if e.code == lang.code else "")
                    + f'>{html.escape(e.name)}</a></li>' for e, url in links)
    top = (f'<nav class="language-switcher" aria-label="{html.escape(lang.ui["switcher"])}">'
           f'<ul>{items}</ul></nav>\n') if len(links) > 1 else ""
    if not lang.english and i18n.lags(lang.code, pagename.removeprefix("chapters/")):
        top += (f'<div class="admonition warning translation-lag" role="note"><p>'
                f'{html.escape(lang.ui["lag"])} <a href="{html.escape(english_url)}" '
                f'hreflang="en" lang="en">{html.escape(lang.ui["lag_link"])}</a></p></div>\n')
    context["body"] = top + context["body"]


def translate_titles_and_emphasis(app: Sphinx, doctree, docname: str) -> None:
    """In a translation: a solution's title in its words, emphasis without CJK marked
    ``latin``, and in CJK 练习 1 (title) -> 练习 1（title） (sphinx-exercise's texts)."""
    lang = _edition(app)
    if lang.english:
        return
    for node in doctree.findall(nodes.emphasis):
        if not typography.has_cjk(node.astext()) and LATIN_EMPHASIS not in node["classes"]:
            node["classes"].append(LATIN_EMPHASIS)
    for title in doctree.findall(nodes.title):
        kind = type(title.parent).__name__
        if title is not title.parent.children[0]:
            continue
        if kind == "solution_node" and title.astext() == "Solution":
            title.children = [nodes.Text(lang.ui["solution"])]
        elif lang.cjk and kind in ("exercise_node", "exercise_enumerable_node"):
            texts = [child for child in title.children if isinstance(child, nodes.Text)]
            if len(texts) >= 2 and texts[0] == " (" and texts[-1] == ")":
                title.replace(texts[0], nodes.Text("（"))
                title.replace(texts[-1], nodes.Text("）"))


def setup(app: Sphinx) -> dict:
    app.add_config_value("book_site_root", "", "html")
    # Before Sphinx's own handler (priority 800) that reads figure numbers' words.
    app.connect("config-inited", put_words_first, priority=400)
    app.connect("config-inited", site_addresses)
    app.connect("html-page-context", add_editions)
    app.connect("doctree-resolved", translate_titles_and_emphasis)
    app.connect("build-finished", translate_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
