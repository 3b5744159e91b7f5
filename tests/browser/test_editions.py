"""The translated editions on the built website (booktools.i18n, booktools.ext.languages).

Each page of each edition, read from the built HTML: its language, its links
to the other editions, its launch buttons and its recorded GPU tabs, its
exercise headings; then opened in Chromium at 390 px (a phone): no console
error, nothing wider than the screen, the switcher shown, emphasis as the
language's tradition has it, and no English left in its interface (the same
chapter's English page, loaded once in the same tab, says what English is).
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
                               offline_chromium, review_shot, sync_api)

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


@pytest.mark.parametrize("lang", [lang for lang in EDITIONS if lang.cjk], ids=lambda edition: edition.code)
def test_cjk_exercise_headings_have_full_width_parentheses_and_no_space(built_site, lang):
    """练习 1（批量该多大？）, not sphinx-exercise's 练习 1 (批量该多大？)."""
    headings = [html.unescape(re.sub(r"<[^>]+>", "", heading)).strip()
                for page in CHAPTERS for heading in re.findall(
                    r'<div class="exercise[^"]*" id="[^"]+">\s*<p class="admonition-title">'
                    r'(.*?)</p>', _html(built_site, lang.code, page), re.S)]
    word = i18n.exercise_word(lang.code)
    assert len(headings) >= 10, headings  # the book's exercises, every chapter's
    wrong = [h for h in headings if not re.fullmatch(rf"{word} \d+(?:（[^（(].*）)?", h)]
    assert not wrong, wrong


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
        self.slanted = tab.evaluate(SLANTED)
        self.interface = tab.evaluate(INTERFACE)
        if screenshot is not None:
            review_shot(tab, screenshot, quality=85)
        # The tab goes on to the next page: a request of this one still in flight (a font,
        # the favicon) is aborted then, and may be reported during the next load. A file
        # that is missing answers 404 (bad_status), so an abort says nothing about the page.
        self.console, self.external = log.console, log.external
        self.failed = [f for f in log.failed if not f.endswith("net::ERR_ABORTED")] + log.bad_status


@pytest.fixture(scope="module")
def phone_visits(site_url):
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    with sync_api.sync_playwright() as playwright, offline_chromium(playwright) as browser:
        context = new_context(browser, PHONE)
        tab = context.new_page()
        log = PageLog(tab)
        loaded = {}
        for old in (SCREENSHOTS / "editions").glob("*.jpg"):  # this run's only
            old.unlink()

        def get(code: str, page: str) -> PhoneVisit:
            if (code, page) not in loaded:
                # A folder of their own: test_site_browser clears its own shots
                # at its start, which may come after these in another worker.
                shot = (SCREENSHOTS / "editions"
                        / f"{code}__{page.replace('/', '__')}__{PHONE}px.jpg"
                        if code != "en" else None)  # English: test_site_browser's
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
# What a reader sees or hears of the interface: every text outside the chapter's
# own text (header, sidebars, footer, buttons, the screen readers' hidden text),
# the book's words inside it (tabs, solution titles, the switcher), and the
# labels and tooltips of every element; not code, math, nor what is marked as
# another language (the switcher's "English"). Copy buttons come from a script
# that waits for another: they are waited for, briefly.
INTERFACE = r"""async () => {
  const code = document.querySelector('article div.highlight pre');
  for (let i = 0; code && !document.querySelector('.copybtn') && i < 40; i++)
    await new Promise(done => setTimeout(done, 50));
  const lang = document.documentElement.lang;
  const ATTRIBUTES = ['aria-label', 'title', 'placeholder', 'alt', 'data-tooltip',
                      'data-bs-title', 'data-bs-original-title', 'data-toggle-hint'];
  const SKIP = 'script, style, noscript, template, code, pre, kbd, samp, mjx-container, svg, .math';
  const BOOK_WORDS = '.headerlink, .sd-tab-label, .recorded-run-meta, .recorded-runs-none, ' +
      '.recorded-run-stale-note, .recorded-run-files, summary, .admonition-title, .copybtn, ' +
      '.language-switcher, .book-pdf-link, .translation-lag, .caption-number, .toggle-button';
  const article = document.querySelector('article.bd-article');
  const found = [{where: 'document title', text: document.title, element: 'title'}];
  const name = el => el.tagName.toLowerCase() +
      (typeof el.className === 'string' && el.className ? '.' + el.className.split(' ')[0] : '');
  // One walk down the page: an element's language and whether its text is the
  // chapter's own are its parent's unless it says otherwise.
  const walk = (el, chapterText) => {
    if (el.matches(SKIP) || (el.hasAttribute('lang') && el.getAttribute('lang') !== lang)) return;
    if (el === article) chapterText = true;
    else if (chapterText && el.matches(BOOK_WORDS)) chapterText = false;
    for (const attribute of ATTRIBUTES) {
      const value = el.getAttribute(attribute);
      if (value && value.trim()) found.push({where: attribute, text: value, element: name(el)});
    }
    for (const child of el.childNodes) {
      if (child.nodeType === Node.ELEMENT_NODE) walk(child, chapterText);
      else if (child.nodeType === Node.TEXT_NODE && !chapterText && child.textContent.trim())
        found.push({where: 'text', text: child.textContent, element: name(el)});
    }
  };
  walk(document.body, false);
  return {strings: found, chapter: article ? article.textContent : ''};
}"""
# Words that stay as they are in every edition: names, units (a recorded file's
# size, "43.4 KiB"), and the interface's English words an edition's translators
# may keep ("Link"; "issue", which pt-BR's prose says). The English terms an edition keeps in
# its chapters are its glossary's business (kept_terms).
KEPT = {"PyTorch", "Colab", "GitHub", "SageMaker", "Studio", "Lab", "MyST", "Markdown",
        "PDF", "pdf", "ipynb", "md", "CPU", "GPU", "GPUs", "NVIDIA", "CC", "BY-SA", "MIT",
        "Link", "issue", "KiB", "MiB", "GiB", "TiB", "kB", "MB", "GB", "TB"}


def kept_terms(code: str) -> set[str]:
    """The English words an edition's glossary keeps as its own terms ("stream",
    "build" in pt-BR), with their plurals: a chapter title in the sidebar says them."""
    from booktools import glossary
    words = {w for term in glossary.load(i18n.glossary_file(code))
             for w in _words(term.term) & _words(term.en)}
    return words | {f"{w}s" for w in words if not w.endswith("s")}


def _interface_text(text: str) -> str:
    return re.sub(r"^[\s.,:;()·—–-]+|[\s.,:;()·—–-]+$", "", " ".join(text.split()))


def _words(text: str) -> set[str]:
    """The English-looking words of a text: Latin letters only ("H100", "2.11.0+cu130",
    "CITATION.cff" and "TFLOP/s" are names, versions and units)."""
    tokens = (token.strip(".-") for token in re.findall(r"[\w.+/-]+", text))
    return {t for t in tokens if len(t) > 1 and re.fullmatch(r"[A-Za-z]+(?:-[A-Za-z]+)*", t)}


def english_left(page: dict, english_page: dict, kept: set[str] = frozenset()) -> list[str]:
    """What INTERFACE found on a translated page that is English: a string the same
    chapter's English page says too, or one with a word of the English page's interface
    that the edition's own chapter text never uses ("著者 The d2lgpu authors"); names
    and KEPT words aside. One line each: "title: 'Back to top' (a.btn)"."""
    english = {_interface_text(item["text"]) for item in english_page["strings"]}
    kept = KEPT | kept
    vocabulary = {w for item in english_page["strings"] for w in _words(item["text"])} - kept
    own = _words(page["chapter"]) | set(re.findall(r"\w+", page["chapter"]))
    left = set()
    for item in page["strings"]:
        text, words = _interface_text(item["text"]), _words(item["text"])
        if (text in english and words - kept) or (words & vocabulary) - own:
            left.add(f"{item['where']}: {text!r} ({item['element']})")
    return sorted(left)


def test_english_left_is_the_english_pages_words_but_names_and_the_chapters_own():
    english_page = {"strings": [{"where": "title", "text": text, "element": "a"} for text in (
        "Back to top", ". Code: ", "Colab", "CC BY-SA 4.0", "By The d2lgpu authors",
        "Open issue", "NVIDIA H100 80GB · PyTorch 2.11.0+cu130", "Link to this heading",
        "43.4 KiB")],
        "chapter": "The text."}
    found = ["Back to top", "Voltar ao topo", ". Code: ", "Colab", "CC BY-SA 4.0",
             "De The d2lgpu authors", "NVIDIA H100 80GB · PyTorch 2.11.0+cu130",
             "Abrir uma issue", "Link para este título", "Open a notebook", "43.4 KiB"]
    page = {"strings": [{"where": "text", "text": text, "element": "p"} for text in found],
            "chapter": "Um notebook: open e close."}
    assert english_left(page, english_page) == [
        "text: 'Back to top' (p)", "text: 'Code' (p)", "text: 'De The d2lgpu authors' (p)",
        "text: 'Open a notebook' (p)"]
    # An English term the edition's glossary keeps is no English left.
    english_page["strings"].append({"where": "text", "text": "Copies and streams", "element": "a"})
    page["strings"].append({"where": "text", "text": "Cópias e streams", "element": "a"})
    assert "text: 'Cópias e streams' (a)" in english_left(page, english_page)
    assert "text: 'Cópias e streams' (a)" not in english_left(page, english_page, {"streams"})
    assert {"stream", "streams", "build"} <= kept_terms("pt-BR")


@pytest.mark.parametrize("lang, page", PAGES, ids=IDS)
def test_edition_page_interface_is_in_its_language(phone_visits, lang, page):
    """No word of the theme, the book's buttons, footer and tabs, nor any label a screen
    reader reads, left in English: Sphinx and the themes in the edition's language, the
    rest from i18n/languages.yml (booktools.ext.languages)."""
    left = english_left(phone_visits(lang.code, page).interface,
                        phone_visits("en", page).interface, kept_terms(lang.code))
    assert not left, "English left on the page (i18n/languages.yml: interface, ui):\n" + \
        "\n".join(left)


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


# Text with a CJK character whose element is drawn slanted: Chromium fakes an
# oblique for CJK, which neither tradition uses (the book's own notes, the
# recorded-run tabs' "not yet recorded", stay upright on zh and ja pages).
SLANTED = """() => {
  const cjk = /[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff01-\uff60]/;
  const found = [];
  const walk = document.createTreeWalker(document.querySelector('article') || document.body,
                                         NodeFilter.SHOW_TEXT);
  while (walk.nextNode()) {
    const text = walk.currentNode.textContent, e = walk.currentNode.parentElement;
    if (cjk.test(text) && getComputedStyle(e).fontStyle !== 'normal')
      found.push(`${e.tagName.toLowerCase()}.${e.className}: ${text.trim().slice(0, 40)}`);
  }
  return found;
}"""


@pytest.mark.parametrize("lang, page", [(lang, page) for lang, page in PAGES if lang.cjk],
                         ids=[i for (lang, _), i in zip(PAGES, IDS) if lang.cjk])
def test_cjk_edition_slants_no_cjk_text(phone_visits, lang, page):
    assert not phone_visits(lang.code, page).slanted


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
