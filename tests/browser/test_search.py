"""Search in every edition finds the book's words, says what it found in the edition's
language, and shows snippets of the text (booktools.ext.languages); the issue link opens a
form in the edition's language naming the edition's page (booktools.ext.launch_buttons)."""
from __future__ import annotations

import re
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from booktools import chromium, i18n
from booktools.ext import languages as search_ext
from test_site_browser import PageLog  # tests/browser/test_site_browser.py

sync_api = pytest.importorskip("playwright.sync_api",
                               reason="the Playwright Python package is not installed")

WORDS = {"zh-CN": ["核函数", "损失缩放", "锁页内存"],
         "ja": ["非同期", "勾配累積", "損失スケーリング"]}
CODES = [lang.code for lang in i18n.languages()]
CASES = [(code, word) for code, words in WORDS.items() for word in words] + \
    [(code, "pin_memory") for code in CODES]


@pytest.fixture(scope="module")
def search_tab():
    """The one tab every search navigates (a tab each started a cold renderer: twice the
    CPU), and the PageLog of what its current page reports."""
    if chromium.version() is None:
        pytest.skip(f"no Chromium at {chromium.executable()}")
    with sync_api.sync_playwright() as playwright, chromium.launch_options() as options:
        launched = playwright.chromium.launch(**options)
        context = launched.new_context(service_workers="block")
        tab = context.new_page()
        yield tab, PageLog(tab)
        context.close()
        launched.close()


def _search(search_tab, site_url: str, code: str, query: str) -> dict:
    tab, log = search_tab
    log.clear()
    prefix = "" if code == "en" else f"{code}/"
    tab.goto(f"{site_url}/{prefix}search.html?q={quote(query)}")
    tab.wait_for_function("() => { const s = document.querySelector('p.search-summary');"
                          " return s && s.innerText.trim() !== ''; }", timeout=30_000)
    # Sphinx writes the summary once every result is listed, but each result's
    # snippet arrives after a fetch of its page: wait for them too.
    tab.wait_for_function("() => { const items = document.querySelectorAll("
                          "'#search-results ul.search li'); return items.length === 0 || "
                          "[...items].every(li => li.querySelector('p.context')); }",
                          timeout=30_000)
    found = tab.evaluate("""() => ({
        summary: document.querySelector('p.search-summary').innerText,
        hits: [...document.querySelectorAll('#search-results ul.search li a')].map(a => a.href),
        snippets: [...document.querySelectorAll('#search-results ul.search li p.context')]
            .map(p => p.innerText)})""")
    found["errors"] = list(log.console)  # console errors and uncaught exceptions
    return found


def _text(code: str, word: str) -> set[str]:
    """The edition's chapters whose notebook holds the word."""
    from booktools.reader_notebooks import _chapters, _notebook_path
    return {c for c in _chapters(code) if word in _notebook_path(code, c).read_text(encoding="utf-8")}


@pytest.mark.parametrize(("code", "word"), CASES)
def test_search_finds_the_books_words(search_tab, site_url, code, word):
    assert _text(code, word), f"{word} is not in the {code} edition's text"
    found = _search(search_tab, site_url, code, word)
    pages = {urlsplit(h).path.rsplit("/", 1)[-1].removesuffix(".html") for h in found["hits"]}
    assert found["errors"] == []
    assert pages & _text(code, word), (found["summary"], pages)
    lang = i18n.language(code)
    # A snippet is of the text: not the language switcher, the print header's contents,
    # nor the page header's launch button (a snippet of "...Colab" where the word is stemmed).
    before_the_text = (lang.ui["switcher"], "Contents", "目录", "目次", "Conteúdo", "Sumário",
                       "Colab")
    assert found["snippets"] and not any(s.lstrip(" .").startswith(before_the_text)
                                         for s in found["snippets"])
    switches = (lang.ui["show_code"].split("{")[0].strip(), lang.ui["hide_code"].split("{")[0].strip())
    assert not any(w in s for s in found["snippets"] for w in switches)
    said = lang.interface[search_ext.SEARCH_MESSAGES[1]].replace("${resultCount}", str(len(found["hits"])))
    assert found["summary"] == said


@pytest.mark.parametrize("code", CODES)
def test_no_results_say_so_in_the_editions_words(search_tab, site_url, code):
    found = _search(search_tab, site_url, code, "qqqzzzxxyy")
    assert found["hits"] == []
    assert found["summary"] == i18n.language(code).interface[search_ext.SEARCH_MESSAGES[0]]
    assert "categor" not in found["summary"] and "分类" not in found["summary"]


@pytest.mark.parametrize("code", CODES)
def test_the_issue_link_names_the_editions_page_in_its_words(built_site, code):
    page = built_site / i18n.site_path(code, "chapters/tensors")
    links = re.findall(r'href="([^"]*/issues/new\?[^"]*)"', page.read_text(encoding="utf-8"))
    assert len(links) == 1
    query = parse_qs(urlsplit(links[0].replace("&amp;", "&")).query)
    lang = i18n.language(code)
    path = "/" + i18n.site_path(code, "chapters/tensors")
    assert query["title"] == [lang.ui["issue_title"].format(page=path)]
    assert lang.name in query["body"][0] and path in query["body"][0]
    assert "Your issue content here" not in query["body"][0]
