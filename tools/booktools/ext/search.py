"""The search page in the edition's language: its queries split as its index is, its
messages, and snippets that start at the text.

Sphinx indexes Chinese with jieba and Japanese with TinySegmenter but splits a query only
at spaces (sphinx-doc/sphinx#13395), so a CJK edition splits each term the index does not
hold into the longest terms it does (``SPLITTER``). Not sphinx-tsegsearch: it splits
Japanese queries only, and as TinySegmenter splits a query, not as it split the text.
A snippet leaves out what is not the page's text (``SKIPPED_TOO``).
"""
from __future__ import annotations

import json
from pathlib import Path

from sphinx.application import Sphinx

from booktools import i18n
from booktools.ext.languages import _patch

__all__ = ["MESSAGES", "SPLITTER", "CJK_SCRIPTS", "setup"]

SCRIPT = "searchtools.js"
MESSAGES = (
    "Your search did not match any documents. Please make sure that all words are spelled "
    "correctly and that you've selected enough categories.",
    "Search finished, found ${resultCount} page(s) matching the search query.",
    "Preparing search...",
    "Searching",
    "Search Results",
)
SKIPPED = '[".headerlink", "script", "style"]'
SKIPPED_TOO = ('[".headerlink", "script", "style", ".onlyprint", "details.hide > summary", '
               '".language-switcher", ".book-pdf-link", ".translation-lag"]')
SPLIT_AT = 'if (typeof splitQuery === "undefined") {'
CJK_SCRIPTS = ("zh", "ja")  # the editions whose index is split by a segmenter
MARK = "/* booktools.ext.search */"
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


def patch_search(app: Sphinx, exception: Exception | None) -> None:
    """The edition's splitter, messages and snippets in its copy of searchtools.js."""
    if exception is not None or app.builder.format != "html":
        return
    path = Path(app.outdir) / "_static" / SCRIPT
    if not path.is_file() or MARK in path.read_text(encoding="utf-8"):
        return
    lang = i18n.for_sphinx(app.config.language)
    _patch(path, SKIPPED, SKIPPED_TOO)
    for message in MESSAGES:
        if message in lang.interface:
            _patch(path, json.dumps(message), json.dumps(lang.interface[message],
                                                         ensure_ascii=False))
    splitter = SPLITTER if lang.code.split("-")[0] in CJK_SCRIPTS else MARK + "\n"
    _patch(path, SPLIT_AT, splitter + SPLIT_AT)


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", patch_search)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
