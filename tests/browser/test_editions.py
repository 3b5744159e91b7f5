"""The translated editions on the built website (booktools.i18n, booktools.ext.languages).

Each page of each edition, read from the built HTML: its language, its links
to the other editions, its launch buttons and its recorded GPU tabs; then
opened in Chromium at 390 px (a phone): no console error, nothing wider than
the screen, the switcher shown, emphasis as the language's tradition has it.
The English pages' own browser checks are in test_site_browser.py; the links
of every edition are crawled by test_links.py.
"""
from __future__ import annotations

import dataclasses
import html
import re

import pytest

from booktools import i18n, typography
from booktools.book import ROOT, book_config, repository, toc_pages
from test_site_browser import (CHROMIUM, PHONE, SCREENSHOTS, PageLog, new_context,
                               offline_chromium, sync_api)

CHAPTERS = [page for page in toc_pages() if i18n.alternates(page)]
EDITIONS = i18n.translations()
PAGES = [(lang, page) for lang in EDITIONS for page in CHAPTERS]
IDS = [f"{lang.code}:{page}" for lang, page in PAGES]

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _html(built_site, code: str, page: str) -> str:
    return (built_site / i18n.site_path(code, page)).read_text()


@pytest.mark.parametrize("lang, page", PAGES, ids=IDS)
def test_edition_page_declares_its_language_and_its_alternates(built_site, lang, page):
    text = _html(built_site, lang.code, page)
    assert re.search(rf'<html[^>]* lang="{re.escape(lang.code)}"', text)
    alternates = dict(re.findall(r'<link rel="alternate" hreflang="([^"]+)" href="([^"]+)">', text))
    site = book_config()["html"]["baseurl"]  # absolute: search engines need them so
    expected = {e.code: site + i18n.site_path(e.code, page) for e in i18n.alternates(page)}
    assert alternates == {**expected, "x-default": expected["en"]}
    canonical = re.search(r'<link rel="canonical" href="([^"]+)"', text)
    assert canonical and canonical.group(1) == site + i18n.site_path(lang.code, page)
    assert "translation-lag" not in text or i18n.lags(lang.code, page.removeprefix("chapters/"))


@pytest.mark.parametrize("lang, page", PAGES, ids=IDS)
def test_edition_page_launches_its_own_notebook(built_site, lang, page):
    edition = dataclasses.replace(repository(), book_path=f"i18n/{lang.code}/")
    assert (ROOT / edition.notebook(page)).is_file()
    text = html.unescape(_html(built_site, lang.code, page))
    assert edition.colab_url(page, book_config()["launch_buttons"]["colab_url"]) in text
    assert edition.studio_lab_url(page) in text


@pytest.mark.parametrize("lang, page", PAGES, ids=IDS)
def test_edition_page_has_the_recorded_tabs_of_english(built_site, lang, page):
    def tabs(text):
        return len(re.findall(r'class="[^"]*\brecorded-runs(?![\w-])', text)), \
            len(re.findall(r'class="[^"]*\brecorded-runs-none\b', text))
    english, translated = _html(built_site, "en", page), _html(built_site, lang.code, page)
    assert tabs(translated) == tabs(english)
    assert lang.ui["build_tab"] in translated or tabs(english)[0] == 0


@pytest.mark.parametrize("code", [lang.code for lang in EDITIONS])
def test_edition_searches_in_its_language(built_site, code):
    options = (built_site / code / "_static" / "documentation_options.js").read_text()
    assert re.search(r"LANGUAGE: '([^']+)'", options).group(1) in (code, i18n.language(code).sphinx)
    assert (built_site / code / "searchindex.js").is_file()


class PhoneVisit:
    """One page load at 390 px, in the one tab this module navigates: what its
    PageLog recorded and what SWITCHER and EMPHASIS read. Lighter than test_site_browser's
    Visit (no folds opened, no page weight, the HTTP cache on), which the
    English pages get."""

    def __init__(self, tab, log: PageLog, url: str, screenshot):
        log.clear()
        tab.goto(url, wait_until="load")
        self.data = tab.evaluate(SWITCHER)
        self.emphasis = tab.evaluate(EMPHASIS)
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        tab.screenshot(path=str(screenshot), quality=85)
        self.console, self.failed = log.console, log.failed + log.bad_status
        self.external = log.external


@pytest.fixture(scope="module")
def phone_visits(site_url):
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright, offline_chromium(playwright) as browser:
        context = new_context(browser, PHONE)
        tab = context.new_page()
        log = PageLog(tab)
        loaded = {}

        def get(code: str, page: str) -> PhoneVisit:
            if (code, page) not in loaded:
                # A folder of their own: test_site_browser clears its own shots
                # at its start, which may come after these in another worker.
                shot = (SCREENSHOTS / "editions"
                        / f"{code}__{page.replace('/', '__')}__{PHONE}px.jpg")
                loaded[code, page] = PhoneVisit(
                    tab, log, f"{site_url}/{i18n.site_path(code, page)}", shot)
            return loaded[code, page]

        yield get
        context.close()


SWITCHER = """() => {
  const nav = document.querySelector('nav.language-switcher');
  const box = nav ? nav.getBoundingClientRect() : null;
  return {
    pageWidth: document.documentElement.scrollWidth,
    viewportWidth: window.innerWidth,
    lang: document.documentElement.lang,
    switcher: nav && {
      shown: box.width > 0 && box.height > 0 && box.right <= window.innerWidth + 1,
      links: [...nav.querySelectorAll('a')].map(a => a.getAttribute('hreflang')),
      current: (nav.querySelector('a[aria-current="page"]') || {}).lang || null},
  };
}"""


EMPHASIS = """() => [...document.querySelectorAll('article em, article strong')].map(e => {
  const style = getComputedStyle(e);
  return {tag: e.tagName.toLowerCase(), text: e.textContent, latin: e.classList.contains('latin'),
          slant: style.fontStyle, marks: style.textEmphasisStyle,
          position: style.textEmphasisPosition};
})"""
# How each tradition emphasises (Chromium's computed names): Chinese dots
# under the characters, Japanese sesame dots over them.
CJK_EMPHASIS = {"zh": ("dot", "under"), "ja": ("sesame", "over")}


@pytest.mark.parametrize("lang, page", PAGES, ids=IDS)
def test_edition_emphasis_follows_its_tradition(phone_visits, lang, page):
    """Chinese and Japanese emphasis upright with dots, Latin emphasis italic, bold as it was."""
    marks, position = CJK_EMPHASIS.get(lang.code.split("-")[0], ("none", None))
    for e in phone_visits(lang.code, page).emphasis:
        cjk = typography.has_cjk(e["text"])
        if e["tag"] == "strong":
            assert (e["slant"], e["marks"]) == ("normal", "none"), e
        elif cjk and lang.cjk:
            assert not e["latin"] and e["slant"] == "normal" and e["marks"] == marks \
                and position in e["position"], e
        else:
            assert e["latin"] and (e["slant"], e["marks"]) == ("italic", "none"), e


@pytest.mark.parametrize("lang, page", PAGES, ids=IDS)
def test_edition_page_on_a_phone(phone_visits, lang, page):
    v = phone_visits(lang.code, page)
    assert not v.console, "console errors:\n" + "\n".join(v.console)
    assert not (v.failed or v.external), (v.failed, v.external)
    assert v.data["pageWidth"] <= v.data["viewportWidth"], "the page is wider than the phone"
    switcher = v.data["switcher"]
    assert switcher is not None and switcher["shown"], "no language switcher on screen"
    assert switcher["links"] == [e.code for e in i18n.alternates(page)]
    assert switcher["current"] == v.data["lang"] == lang.code
