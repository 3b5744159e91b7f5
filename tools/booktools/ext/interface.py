"""Every word of a page's interface in the page's language.

Sphinx and the themes translate with their own catalogues (booktools.i18n.stage sets
``language``); what they lack comes from the edition's ``interface`` words in
i18n/languages.yml: put before those catalogues (gettext), in the templates overridden in
``templates/`` (theme markup that writes English without ``_()``), and in the site's copies
of sphinx-copybutton's and sphinx-togglebutton's scripts. A translated page's footer is
the edition's ``ui.footer`` around _config.yml's three links.
"""
from __future__ import annotations

import gettext
import html
import json
import re
from pathlib import Path

from sphinx import locale
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError

from booktools import i18n

__all__ = ["Words", "TEMPLATES", "footer", "setup"]

TEMPLATES = Path(__file__).with_name("templates")
CATALOGUES = ("sphinx", "booktheme")  # Sphinx's and its themes'; sphinx-book-theme's
COPYBUTTON = "copybutton.js"
COPY_MESSAGES = {"copy": "Copy", "copy_to_clipboard": "Copy to clipboard",
                 "copy_success": "Copied!", "copy_failure": "Failed to copy"}
COPY_LOCALE = "\nlet locale = 'en'"  # where copybutton.js picks its table
TOGGLEBUTTON = "togglebutton.js"
TOGGLE_LABEL = 'aria-label="Toggle hidden content"'
LINK = re.compile(r"<a\b[^>]*>.*?</a>", re.S)


class Words(gettext.NullTranslations):
    """An edition's words (English message -> text) before another catalogue."""

    def __init__(self, words: dict, fallback: gettext.NullTranslations | None):
        super().__init__()
        self.words = dict(words)
        if fallback is not None:
            self.add_fallback(fallback)

    def gettext(self, message: str) -> str:
        return self.words.get(message) or super().gettext(message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.words.get(singular if n == 1 else plural) or \
            super().ngettext(singular, plural, n)


def _language(app: Sphinx) -> i18n.Language:
    return i18n.for_sphinx(app.config.language)


def put_words_first(app: Sphinx, config: Config) -> None:
    """The templates before the theme's, the edition's words before the catalogues."""
    config.templates_path.insert(0, str(TEMPLATES))
    words = _language(app).interface
    if not words:
        return
    for catalogue in CATALOGUES:
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
        raise ExtensionError(f"interface: the footer in _config.yml has {len(links)} links; "
                             "the editions' footers (languages.yml: ui: footer) place three: "
                             "the text's licence, the code's and the citation")
    return f"<p>{template.format(text=links[0], code=links[1], cite=links[2])}</p>\n"


def translate_footer(app: Sphinx, pagename: str, templatename: str, context: dict,
                     doctree) -> None:
    lang = _language(app)
    english = context.get("theme_extra_footer")
    if not lang.english and english:
        context["theme_extra_footer"] = footer(lang.ui["footer"], english)


def _patch(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    if old not in text:
        raise ExtensionError(f"interface: {path.name} no longer has {old!r}: the edition's "
                             "words cannot be put in it (see booktools.ext.interface)")
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def translate_scripts(app: Sphinx, exception: Exception | None) -> None:
    """The edition's words in its copies of sphinx-copybutton's and sphinx-togglebutton's."""
    if exception is not None or app.builder.format != "html":
        return
    lang, static = _language(app), Path(app.outdir) / "_static"
    words = lang.interface
    copy = {key: words[message] for key, message in COPY_MESSAGES.items() if message in words}
    if copy and (static / COPYBUTTON).is_file():
        table = json.dumps({**COPY_MESSAGES, **copy}, ensure_ascii=False)
        _patch(static / COPYBUTTON, COPY_LOCALE,
               f"\nmessages[{json.dumps(lang.code)}] = {table};{COPY_LOCALE}")
    label = words.get("Toggle hidden content")
    if label and (static / TOGGLEBUTTON).is_file():
        _patch(static / TOGGLEBUTTON, TOGGLE_LABEL, f'aria-label="{html.escape(label)}"')


def setup(app: Sphinx) -> dict:
    # Before Sphinx's own handler (priority 800) that reads figure numbers' words.
    app.connect("config-inited", put_words_first, priority=400)
    app.connect("html-page-context", translate_footer)
    app.connect("build-finished", translate_scripts)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
