"""The built website in a real browser: Debian's Chromium driven by Playwright.

The site is built once per test run, before any test (tests/conftest.py runs
``bash scripts/build-site.sh``), served on 127.0.0.1, and every page that
_toc.yml lists is opened once per width: 1280 px (a laptop) and 390 px (a
phone); the navigation is also tried at 800 px (a tablet) by resizing the
phone's page. Requests to any other host are recorded and blocked: the site
must render completely offline, math included. The bytes each page load
transferred go to ``_build/screenshots/weights.txt``; with BOOK_SCREENSHOTS=1,
screenshots for review too: each page at both widths, its first picture, its
launch menu, its recorded tabs and the phone's dialogs (review_shot).
"""
from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import jupytext
import nbformat
import pytest

import recorded_tabs  # tests/browser/recorded_tabs.py
from booktools import chromium
from booktools.book import ROOT, toc_pages

CHROMIUM = chromium.executable()
SCREENSHOTS = ROOT / "_build" / "screenshots"


def review_screenshots() -> bool:
    """Whether the browser tests save screenshots for review (BOOK_SCREENSHOTS=1)."""
    value = os.environ.get("BOOK_SCREENSHOTS", "")
    if value not in ("", "0", "1"):
        raise ValueError(f"BOOK_SCREENSHOTS={value!r}: use BOOK_SCREENSHOTS=1, or leave it unset")
    return value == "1"


REVIEW = review_screenshots()


def review_shot(target, path: Path, **options) -> None:
    """Save a screenshot of a tab or an element under _build/screenshots/ when REVIEW
    (they cost a sixth of the browser tests' time, for no assertion)."""
    if REVIEW:
        path.parent.mkdir(parents=True, exist_ok=True)
        target.screenshot(path=str(path), **options)
PAGES = toc_pages()
WIDE, PHONE, TABLET = 1280, 390, 800
# Bytes one page load may transfer (everything it loads, images included; the
# theme's icon fonts, 0.27 MB fetched once for every page, and MathJax where there is math).
BUDGET_WITHOUT_MATH = 1_200_000
BUDGET_WITH_MATH = 2_800_000

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.is_file(),
                       reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install -y chromium; .ci/run does)"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="the Playwright Python package is not installed")

# Evaluated in the page once it has loaded: what the tests below check.
COLLECT = r"""async () => {
  // Images marked lazy load only when scrolled to; load them all now.
  for (const img of document.images) img.loading = 'eager';
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  await document.fonts.ready;  // the fonts MathJax and the icons asked for
  const visible = el => {
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
  };
  const article = document.querySelector('article') || document.body;
  const hrefs = sel => [...document.querySelectorAll(sel)].map(a => a.href);
  const column = article.getBoundingClientRect();
  const describe = el => (el.closest('[id]') ? '#' + el.closest('[id]').id + ': ' : '') +
      el.textContent.trim().slice(0, 70).replace(/\s+/g, ' ');
  return {
    title: (article.querySelector('h1') || {}).textContent || '',
    inputs: [...article.querySelectorAll('div.cell_input')].map(visible),
    inputSources: [...article.querySelectorAll('div.cell_input')].filter(visible)
        .map(el => (el.querySelector('pre') || el).textContent.replace(/\s+$/, '')),
    // Output and error blocks that scroll sideways or stick out of the column
    // (a text table, class fixed-width, scrolls by design, inside the column).
    clippedOutputs: [...article.querySelectorAll('div.cell_output pre, div.cell_output .output')]
        .filter(el => visible(el) && ((el.scrollWidth > el.clientWidth + 1 && !el.closest('.fixed-width')) ||
                                      el.getBoundingClientRect().right > column.right + 1))
        .map(describe),
    // Code cells that scroll sideways (asserted at 1280 px only: a phone scrolls them).
    scrollingCode: [...article.querySelectorAll('div.cell_input pre')]
        .filter(el => visible(el) && el.scrollWidth > el.clientWidth)
        .map(el => describe(el) + ` (${el.scrollWidth} px of code in ${el.clientWidth} px)`),
    pageWidth: document.documentElement.scrollWidth,
    viewportWidth: window.innerWidth,
    // Table cells of several words squeezed narrower than a short phrase
    // (a phone shows a header row as each cell's label: book.js, book.css).
    squeezedCells: [...article.querySelectorAll('table td, table th')]
        .filter(el => visible(el) && !el.closest('table.book-reflow thead') &&
                      el.textContent.trim().split(/\s+/).length > 1 &&
                      el.getBoundingClientRect().width < 100)
        .map(describe),
    pictures: [...document.images].filter(visible).map(img => ({
        src: img.currentSrc || img.src, alt: img.getAttribute('alt') || '',
        natural: img.naturalWidth, shown: img.getBoundingClientRect().width})),
    outputs: [...article.querySelectorAll('div.cell_output')]
        .map(el => visible(el) && el.textContent.trim().length + el.querySelectorAll('img, svg').length > 0),
    images: [...document.images].map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth})),
    math: article.querySelectorAll('span.math, div.math').length,
    typeset: article.querySelectorAll('mjx-container').length,
    mathErrors: [...article.querySelectorAll('mjx-merror')].map(el => el.textContent),
    launch: hrefs('.dropdown-launch-buttons a'),
    downloads: hrefs('.dropdown-download-buttons a'),
    repository: hrefs('a.btn-source-repository-button'),
    issues: hrefs('a.btn-source-issues-button'),
    links: hrefs('article a[href]'),
    icons: [...document.querySelectorAll('link[rel~="icon"]')].map(l => l.href),
    exercises: [...article.querySelectorAll('div.exercise > .admonition-title')]
        .map(t => t.textContent.trim()),
  };
}"""


def on_this_machine(url: str) -> bool:
    """Whether a page may load this URL: the test's own server, or inline data."""
    return urlsplit(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:"))


@contextlib.contextmanager
def offline_chromium(playwright):
    """Debian's Chromium, headless, that can reach 127.0.0.1 and nothing else.

    Every other request goes to a proxy that refuses it: a port of this
    process, bound and never listening. Chromium's own network stack refuses
    the request, so a page that asks another host fails its test (PageLog)
    instead of loading from it, and no request waits on a Python handler
    (Playwright's page.route did that for each request, and turned the HTTP
    cache off).
    """
    with chromium.launch_options() as options:
        browser = playwright.chromium.launch(**options)
        try:
            yield browser
        finally:
            browser.close()


class PageLog:
    """What a tab reports, from when it is watched or last cleared: console
    errors, failed requests, HTTP errors, and requests to other hosts (refused:
    offline_chromium)."""

    def __init__(self, page):
        self.clear()
        page.on("console", lambda m: m.type == "error" and self.console.append(
            f"{m.text} ({m.location.get('url')}:{m.location.get('lineNumber')})"))
        page.on("pageerror", lambda e: self.console.append(f"uncaught: {e}"))
        page.on("request", lambda r: on_this_machine(r.url) or self.external.append(r.url))
        # A request to another host fails at the proxy: reported as external above.
        page.on("requestfailed", lambda r: on_this_machine(r.url) and self.failed.append(
            f"{r.url}: {r.failure}"))
        page.on("response", lambda r: r.status >= 400 and self.bad_status.append(f"{r.status} {r.url}"))

    def clear(self) -> None:
        self.console, self.failed, self.bad_status, self.external = [], [], [], []


def new_context(browser, width: int = WIDE):
    """A browser context (a private window) at that width."""
    return browser.new_context(viewport={"width": width, "height": 900 if width > PHONE else 844},
                               service_workers="block")


class Visit:
    """One page load in a tab of its own, with everything it recorded.

    Tabs of one width share a browser context: a context per page costs a
    renderer process and a cold start each (measured on 2 cores: 1.5 core-s a
    load against 0.7). The tab loads with the HTTP cache off, so that it
    transfers what a first visit does.
    """

    def __init__(self, context, url: str, screenshot: Path | None = None):
        self.context = context
        page = context.new_page()
        self.width = page.viewport_size["width"]
        self.log = PageLog(page)
        # Bytes on the wire per request, as Chromium counts them (headers included).
        self.transferred: dict[str, int] = {}
        urls: dict[str, str] = {}
        cdp = context.new_cdp_session(page)
        cdp.on("Network.requestWillBeSent", lambda e: urls.__setitem__(e["requestId"], e["request"]["url"]))
        cdp.on("Network.loadingFinished", lambda e: self.transferred.__setitem__(
            urls.get(e["requestId"], e["requestId"]), e["encodedDataLength"]))
        cdp.send("Network.enable")
        cdp.send("Network.setCacheDisabled", {"cacheDisabled": True})
        page.goto(url, wait_until="load")
        self.expand(page)
        self.data = page.evaluate(COLLECT)  # waits for images, math and fonts
        if screenshot is not None and REVIEW:
            page.evaluate("window.scrollTo(0, 0)")  # sticky header and sidebar at the top
            # The whole page at 1280 px; on a phone the first screen (a whole
            # phone page is ~40 000 px tall and costs a second per page to take).
            # JPEG: encoding a whole page as PNG took twice as long.
            review_shot(page, screenshot, full_page=self.width > PHONE, quality=85)
        self._page = page

    @property
    def page(self):
        """The tab, brought to the front first: a tab behind others gets no
        animation frames, so a click there would wait for one until it times out."""
        self._page.bring_to_front()
        return self._page

    def evaluate(self, script: str, arg=None):
        return self.page.evaluate(script, arg)

    @staticmethod
    def expand(page, limit: int = 500):
        """Open every folded part of the article: dropdown admonitions (exercise
        solutions) and <details> (hidden cells), clicking one at a time, since a
        click changes what is folded. The clicks are the DOM's own, in one call
        (a Playwright click per item cost 0.35 s a page); readers' clicks on
        every dropdown are tried in test_each_dropdown_opens_and_closes_only_itself."""
        clicks = page.evaluate("""limit => {
          const folded = () => [...document.querySelectorAll(
              "article .admonition.toggle-hidden > .admonition-title > .toggle-button, " +
              "article details:not([open]) > summary")].filter(el => el.getClientRects().length > 0);
          for (let clicks = 0; clicks < limit; clicks++) {
            const next = folded();
            if (next.length === 0) return clicks;
            next[0].click();
          }
          return -1;
        }""", limit)
        if clicks < 0:
            raise AssertionError(f"{page.url}: still folded after {limit} clicks")

    console = property(lambda self: self.log.console)
    failed = property(lambda self: self.log.failed)
    bad_status = property(lambda self: self.log.bad_status)
    external = property(lambda self: self.log.external)

    def fetch(self, url: str) -> tuple[int, bytes]:
        response = self.context.request.get(url)
        return response.status, response.body()



@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright, offline_chromium(playwright) as launched:
        yield launched


@pytest.fixture(scope="module")
def visits(browser, site_url):
    """visits(page, width) -> the Visit of that toc page at that width (each loaded once)."""
    loaded: dict[tuple[str, int], Visit] = {}
    contexts = {}
    for old in [*SCREENSHOTS.glob("*.png"), *SCREENSHOTS.glob("*.jpg")]:  # this run's only
        old.unlink()

    def get(page: str, width: int = WIDE) -> Visit:
        if (page, width) not in loaded:
            if width not in contexts:
                contexts[width] = new_context(browser, width)
            suffix = "" if width == WIDE else f"__{width}px"
            shot = SCREENSHOTS / f"{page.replace('/', '__')}{suffix}.jpg"
            loaded[page, width] = Visit(contexts[width], f"{site_url}/{page}.html", shot)
        return loaded[page, width]

    yield get
    weights = [f"{page} at {width} px: {sum(v.transferred.values()) / 1e6:.2f} MB "
               f"in {len(v.transferred)} requests" for (page, width), v in loaded.items()]
    if weights:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        (SCREENSHOTS / "weights.txt").write_text("\n".join(weights) + "\n")
    for context in contexts.values():
        context.close()


@pytest.fixture(scope="module")
def visit(visits):
    """visit(page) -> the Visit of that toc page at 1280 px."""
    return lambda page: visits(page, WIDE)


@pytest.fixture(scope="module")
def phone(visits):
    """phone(page) -> the Visit of that toc page at 390 px."""
    return lambda page: visits(page, PHONE)


def test_screenshots_for_review_are_asked_for_by_name(monkeypatch):
    monkeypatch.delenv("BOOK_SCREENSHOTS", raising=False)
    assert review_screenshots() is False
    monkeypatch.setenv("BOOK_SCREENSHOTS", "1")
    assert review_screenshots() is True
    monkeypatch.setenv("BOOK_SCREENSHOTS", "yes")
    with pytest.raises(ValueError, match="BOOK_SCREENSHOTS='yes': use BOOK_SCREENSHOTS=1"):
        review_screenshots()


@pytest.mark.parametrize("width", [WIDE, PHONE])
@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_errors(visits, page, width):
    v = visits(page, width)
    assert not v.console, "console errors:\n" + "\n".join(v.console)
    assert not v.failed, "failed requests:\n" + "\n".join(v.failed)
    assert not v.bad_status, "HTTP errors:\n" + "\n".join(v.bad_status)


@pytest.mark.parametrize("page", PAGES)
def test_page_requests_nothing_from_other_hosts(visit, page):
    external = visit(page).external
    assert not external, "requests that left 127.0.0.1 (blocked):\n" + "\n".join(external)


def test_requests_to_other_hosts_are_refused_and_reported(browser, site_url):
    # The test's own server under another name, an address and a domain: none
    # may load (offline_chromium), and each is reported (PageLog).
    others = [f"http://localhost:{urlsplit(site_url).port}/{PAGES[0]}.html",
              "http://203.0.113.9/picture.png", "https://example.com/script.js"]
    context = new_context(browser)
    try:
        tab = context.new_page()
        tab.goto(f"{site_url}/{PAGES[0]}.html", wait_until="load")
        log = PageLog(tab)
        outcomes = tab.evaluate("""urls => Promise.all(urls.map(url =>
            fetch(url, {mode: 'no-cors'}).then(() => 'loaded', () => 'refused')))""", others)
        assert outcomes == ["refused"] * len(others)
        assert sorted(log.external) == sorted(others)
        assert log.failed == [] and log.bad_status == []
    finally:
        context.close()


@pytest.mark.parametrize("page", PAGES)
def test_code_cells_and_outputs_are_visible(visit, page):
    # After every dropdown is opened (Visit.expand), each code cell and output
    # that the page renders is on screen, and none is missing: as many code
    # cells as the chapter's .md shows, as many outputs as its stored notebook
    # has (when that notebook is in step with the .md; the pair tests say
    # when it is not, and the build then executes the .md instead).
    data = visit(page).data
    shown = _code_cells(jupytext.read(ROOT / f"{page}.md"))
    assert len(data["inputs"]) == sum("remove-input" not in tags for _, tags, _ in shown), \
        "rendered code cells vs the chapter's"
    notebook = ROOT / f"{page}.ipynb"
    stored = _code_cells(nbformat.read(notebook, as_version=4)) if notebook.is_file() else []
    if [src for src, _, _ in stored] == [src for src, _, _ in shown]:
        want = sum(bool(outs) and "remove-output" not in tags for _, tags, outs in stored)
        assert len(data["outputs"]) == want, "rendered outputs vs the stored notebook's"
    assert all(data["inputs"]), f"code cells not visible (in page order): {data['inputs']}"
    assert all(data["outputs"]), f"outputs not visible or empty (in page order): {data['outputs']}"


def _code_cells(nb) -> list[tuple[str, set, list]]:
    """(source, tags, shown outputs) of each code cell the page renders."""
    cells = []
    for cell in nb.cells:
        tags = set(cell.metadata.get("tags", []))
        if cell.cell_type != "code" or "remove-cell" in tags:
            continue
        outputs = [o for o in cell.get("outputs", [])
                   if not (o.output_type == "stream" and f"remove-{o.name}" in tags)]
        cells.append((cell.source.strip(), tags, outputs))
    return cells


@pytest.mark.parametrize("page", PAGES)
def test_images_and_plots_have_loaded(visit, page):
    images = visit(page).data["images"]
    assert [i["src"] for i in images if i["width"] <= 0] == [], "images that did not load"


@pytest.mark.parametrize("page", PAGES)
def test_math_is_typeset(visit, page):
    data = visit(page).data
    if data["math"] == 0:
        pytest.skip("no math on this page")
    assert data["typeset"] >= data["math"], "math left untypeset by MathJax"
    assert data["mathErrors"] == []


@pytest.mark.parametrize("page", PAGES)
def test_launch_buttons_have_the_configured_addresses(visit, page, repo, colab_base):
    v = visit(page)
    expected = [repo.colab_url(page, colab_base), repo.studio_lab_url(page)]
    assert v.data["launch"] == expected
    assert v.data["repository"] == [repo.url]
    # A reader opens the rocket menu: both entries show, with their names.
    v.page.click(".dropdown-launch-buttons button.dropdown-toggle")
    menu = v.page.locator(".dropdown-launch-buttons .dropdown-menu")
    menu.wait_for(state="visible", timeout=15_000)  # generous: CI may be busy
    assert [t.strip() for t in menu.locator("a").all_inner_texts()] == ["Colab", "Studio Lab"]
    review_shot(v.page, SCREENSHOTS / f"{page.replace('/', '__')}__launch-menu.png",
                clip={"x": 640, "y": 0, "width": 640, "height": 300})


@pytest.mark.parametrize("page", PAGES)
def test_downloads_offer_the_notebook_and_the_markdown(visit, page):
    v = visit(page)
    by_suffix = {Path(urlsplit(h).path).suffix: h for h in v.data["downloads"]
                 if urlsplit(h).scheme.startswith("http")}
    assert set(by_suffix) == {".ipynb", ".md"}, v.data["downloads"]
    for suffix, href in by_suffix.items():
        status, body = v.fetch(href)
        assert status == 200, href
        # The very files of the repository: the .md one edits, the .ipynb Colab opens.
        assert body == (ROOT / f"{page}{suffix}").read_bytes(), href


def test_search_finds_a_word_from_a_chapter(browser, visit, site_url):
    # The longest word of the first chapter title that has one of 5+ letters.
    for page in PAGES:
        words = re.findall(r"[A-Za-z]{5,}", visit(page).data["title"])
        if words:
            break
    else:
        pytest.fail("no chapter title has a word to search for")
    word = max(words, key=len).lower()
    # A context of its own: the search page leaves its terms in localStorage
    # for the next page of its context to highlight.
    search = Visit(new_context(browser), f"{site_url}/search.html?q={word}")
    try:
        search.page.wait_for_selector("#search-results ul.search li a", timeout=20_000)
        hits = search.page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(a => a.href)")
        assert any(urlsplit(h).path == f"/{page}.html" for h in hits), (word, hits)
        assert search.console == [] and search.failed == [] and search.external == []
    finally:
        search.context.close()


# --- Reading on a phone or a tablet -----------------------------------------

def _open_dialog(v: Visit, toggle: str, dialog: str) -> list[str]:
    """Click the visible sidebar button; return the link texts of the dialog it
    opened (then close it with Escape, as a reader would)."""
    button = v.page.locator(toggle).filter(visible=True)
    assert button.count() == 1, f"{v.page.url} at {v.width} px: {button.count()} visible {toggle}"
    button.click()
    opened = v.page.locator(f"{dialog}[open]")
    opened.wait_for(state="visible", timeout=5_000)
    links = opened.locator("a").filter(visible=True).all_inner_texts()
    name = urlsplit(v.page.url).path.strip("/").removesuffix(".html").replace("/", "__")
    review_shot(v.page, SCREENSHOTS / f"{name}__{v.width}px__{dialog.strip('#')}.png")
    v.page.keyboard.press("Escape")
    opened.wait_for(state="detached", timeout=5_000)
    return links


@pytest.mark.parametrize("width", [PHONE, TABLET])
def test_navigation_drawer_and_page_contents_open_on_small_screens(phone, width):
    # pydata-sphinx-theme binds its handlers to hidden copies of these buttons
    # (issue 2451); _static/book.js passes the visible buttons' clicks on.
    page = next(p for p in PAGES[1:] if phone(p).page.locator("#pst-secondary-sidebar").count())
    v = phone(page)
    v.page.set_viewport_size({"width": width, "height": 844})
    v.width = width
    try:
        chapters = _open_dialog(v, ".primary-toggle", "#pst-primary-sidebar-modal")
        assert len([t for t in chapters if t.strip()]) >= len(PAGES) - 1, chapters
        sections = _open_dialog(v, ".secondary-toggle", "#pst-secondary-sidebar-modal")
        assert [t for t in sections if t.strip()], "the page-contents dialog lists no section"
    finally:
        v.page.set_viewport_size({"width": PHONE, "height": 844})
        v.width = PHONE
    assert not v.console, v.console


def test_sidebar_button_hides_the_navigation_on_a_wide_screen(visit):
    v = visit(PAGES[1])
    sidebar = v.page.locator("#pst-primary-sidebar")
    button = v.page.locator(".primary-toggle").filter(visible=True)
    assert sidebar.is_visible()
    button.click()
    assert sidebar.evaluate("el => el.classList.contains('pst-sidebar-hidden')")
    sidebar.wait_for(state="hidden", timeout=5_000)
    button.click()
    sidebar.wait_for(state="visible", timeout=5_000)
    assert not v.console, v.console


@pytest.mark.parametrize("page", PAGES)
def test_page_contents_list_every_section_and_subsection(visit, page):
    """The right sidebar on a wide screen shows each ## and ### heading of the page."""
    v = visit(page)
    headings = v.page.evaluate("""() => [...document.querySelectorAll(
        'article section > h2, article section > h3')].map(h => h.closest('section').id)""")
    shown = v.page.evaluate("""() => [...document.querySelectorAll('.bd-sidebar-secondary nav.page-toc a')]
        .filter(a => a.getBoundingClientRect().height > 0).map(a => a.hash.slice(1))""")
    missing = [h for h in headings if h not in shown]
    assert missing == [], f"not listed (or folded) in the page contents: {missing}"


@pytest.mark.parametrize("width", [WIDE, PHONE])
@pytest.mark.parametrize("page", PAGES)
def test_no_output_or_error_is_cut_off(visits, page, width):
    # Outputs wrap (book.css) rather than scroll sideways or stick out.
    assert visits(page, width).data["clippedOutputs"] == []


@pytest.mark.parametrize("page", PAGES)
def test_page_fits_a_phone_screen(phone, page):
    data = phone(page).data
    assert data["pageWidth"] <= data["viewportWidth"], "the page scrolls sideways"
    assert data["squeezedCells"] == [], "table cells squeezed to a word per line"


@pytest.mark.parametrize("width", [WIDE, PHONE])
@pytest.mark.parametrize("page", PAGES)
def test_images_have_alt_text_and_are_sharp_on_high_density_screens(visits, page, width):
    pictures = visits(page, width).data["pictures"]
    no_alt = [p["src"] for p in pictures
              if not p["alt"].strip() or re.fullmatch(r"\S*/\S*", p["alt"].strip())
              or re.search(r"\.(png|jpe?g|gif|svg|webp)$", p["alt"].strip(), re.IGNORECASE)]
    assert no_alt == [], "images without alt text (or with a file path as alt)"
    blurry = [f"{p['src']}: {p['natural']} px drawn {p['shown']:.0f} px wide" for p in pictures
              if not urlsplit(p["src"]).path.endswith(".svg") and p["natural"] < 2 * p["shown"] - 1]
    assert blurry == [], "raster images with fewer than 2 pixels per CSS pixel (use retina PNGs)"


# Every picture in the article as shown, the plots in tabs too (each tab is
# shown in turn, then the first again, as the page had it).
SHAPES = r"""() => {
  const article = document.querySelector('article');
  const column = article.getBoundingClientRect();
  const seen = new Map();
  const measure = () => {
    for (const img of article.querySelectorAll('img')) {
      const box = img.getBoundingClientRect();
      if (box.width === 0 || box.height === 0 || !img.naturalWidth) continue;
      seen.set(img.currentSrc || img.src, {
        src: (img.currentSrc || img.src).split('/').pop(),
        shown: box.width / box.height, file: img.naturalWidth / img.naturalHeight,
        width: box.width, natural: img.naturalWidth, outside: box.right > column.right + 1});
    }
  };
  measure();
  for (const set of article.querySelectorAll('.sd-tab-set')) {
    const labels = [...set.querySelectorAll(':scope > label')];
    for (const label of labels.slice(1)) { label.click(); measure(); }
    if (labels.length) labels[0].click();
  }
  return [...seen.values()];
}"""


@pytest.mark.parametrize("width", [WIDE, PHONE])
@pytest.mark.parametrize("page", PAGES)
def test_pictures_keep_their_shape_and_fit_the_column(visits, page, width):
    # myst-nb gives a plot's <img> its size inline; narrowed to the column,
    # it must keep its height in proportion (book.css), and no picture is
    # drawn wider than its file (a 1x recorded plot) or than the column.
    v = visits(page, width)
    pictures = v.evaluate(SHAPES)
    if pictures:  # for review: the page's first picture as shown
        review_shot(v.page.locator("article img").first,
                    SCREENSHOTS / f"{page.replace('/', '__')}__{width}px__picture.png")
    squashed = [f"{p['src']}: shown {p['shown']:.2f}, file {p['file']:.2f}" for p in pictures
                if abs(p["shown"] / p["file"] - 1) > 0.02]
    assert squashed == [], "pictures shown with another width/height ratio than their file's"
    stretched = [f"{p['src']}: {p['width']:.0f} px wide from {p['natural']} px" for p in pictures
                 if p["width"] > p["natural"] + 0.5]
    assert stretched == [], "pictures drawn wider than their file"
    assert [p["src"] for p in pictures if p["outside"]] == [], "pictures wider than the column"


@pytest.mark.parametrize("page", PAGES)
def test_code_fits_its_column_on_a_wide_screen(visit, page):
    # 80 columns of code (the book's limit) fit at 1280 px in the fonts the
    # browser really uses (book.css sets the code size): no code cell scrolls.
    assert visit(page).data["scrollingCode"] == []


@pytest.mark.parametrize("page", PAGES)
def test_no_visible_cell_only_sets_the_traceback_mode(visit, page):
    # %xmode Minimal cells carry the tag remove-cell: they run, but are not shown.
    shown = [src for src in visit(page).data["inputSources"]
             if re.fullmatch(r"\s*(%xmode\s+\w+\s*)+", src)]
    assert shown == []


@pytest.mark.parametrize("page", PAGES)
def test_code_lines_fit_80_columns(visit, page):
    # Code keeps its lines (only outputs wrap): at most 80 columns each.
    long = [line for src in visit(page).data["inputSources"] for line in src.splitlines()
            if len(line) > 80]
    assert long == []


# --- Dropdowns and print ----------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_exercises_are_numbered_from_1_on_every_page(visit, page):
    titles = visit(page).data["exercises"]
    numbers = [int(m.group(1)) if (m := re.match(r"Exercise (\d+)", t)) else t for t in titles]
    assert numbers == list(range(1, len(titles) + 1))


TOGGLES = "article .admonition.toggle"
TOGGLE_STATES = f"() => [...document.querySelectorAll('{TOGGLES}')].map(el => el.classList.contains('toggle-hidden'))"


@pytest.mark.parametrize("page", PAGES)
def test_each_dropdown_opens_and_closes_only_itself(visit, page):
    # From its title and from its chevron, with no console error: the title of
    # a solution once held a link that threw in sphinx-togglebutton and then
    # toggled another solution.
    v = visit(page)
    titles = v.page.locator(f"{TOGGLES} > .admonition-title")
    if titles.count() == 0:
        pytest.skip("no dropdown on this page")
    before = v.evaluate(TOGGLE_STATES)  # all open: Visit.expand opened them
    assert not any(before)
    for i in range(titles.count()):
        title = titles.nth(i)
        title.click(position={"x": 5, "y": 5})  # the title's text, left end
        want = [n == i for n in range(len(before))]
        assert v.evaluate(TOGGLE_STATES) == want, f"clicking title {i} folded {v.evaluate(TOGGLE_STATES)}"
        title.locator(".toggle-button").click()
        assert v.evaluate(TOGGLE_STATES) == before, f"its chevron did not unfold dropdown {i} alone"
        # Every element inside the title (code, emphasis) toggles it too; links are followed.
        for inner in title.locator(":scope > :not(.toggle-button):not(a)").all():
            inner.click()
            inner.click()
            assert v.evaluate(TOGGLE_STATES) == before
    assert not v.console, v.console


@pytest.mark.parametrize("page", PAGES)
def test_print_shows_every_dropdown_and_wraps_lines(visit, page):
    v = visit(page)
    # Fold everything a reader can fold, then print.
    v.evaluate(f"""() => {{
        document.querySelectorAll('{TOGGLES}:not(.toggle-hidden) > .admonition-title > .toggle-button')
            .forEach(b => b.click());
        document.querySelectorAll('article details[open]').forEach(d => d.open = false);
    }}""")
    try:
        v.page.emulate_media(media="print")
        hidden = v.evaluate(f"""() => [...document.querySelectorAll(
                '{TOGGLES} > .admonition-title ~ *, article details > :not(summary)')]
            .filter(el => {{ const box = el.getBoundingClientRect(), style = getComputedStyle(el);
                             return box.height === 0 || style.visibility === 'hidden' || style.opacity === '0'; }})
            .map(el => el.textContent.trim().slice(0, 60))""")
        assert hidden == [], "content hidden on paper"
        clipped = v.evaluate("""() => [...document.querySelectorAll('article pre')]
            .filter(el => el.scrollWidth > el.clientWidth + 1).map(el => el.textContent.slice(0, 60))""")
        assert clipped == [], "lines cut off on paper"
    finally:
        v.page.emulate_media(media="screen")
        v.evaluate(f"""() => {{
            document.querySelectorAll('{TOGGLES}.toggle-hidden > .admonition-title > .toggle-button')
                .forEach(b => b.click());
            document.querySelectorAll('article details').forEach(d => d.open = true);
        }}""")
    assert not v.console, v.console


# --- Weight -------------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_page_is_light(visit, page):
    v = visit(page)
    paths = {urlsplit(url).path: size for url, size in v.transferred.items()}
    total = sum(paths.values())
    math = v.data["math"] > 0
    budget = BUDGET_WITH_MATH if math else BUDGET_WITHOUT_MATH
    heaviest = sorted(paths.items(), key=lambda item: -item[1])[:6]
    assert total <= budget, f"{total / 1e6:.2f} MB > {budget / 1e6} MB; heaviest: {heaviest}"
    if not math:
        assert not [p for p in paths if "/mathjax/" in p], "MathJax loaded on a page without math"


@pytest.mark.parametrize("width", [WIDE, PHONE])
@pytest.mark.parametrize("page", PAGES)
def test_icons_come_from_the_font_and_no_icon_script_loads(visits, page, width):
    # The theme's CSS draws the icons with its font: booktools.ext.site_assets drops
    # the 1.5 MB script that draws them again.
    paths = [urlsplit(url).path for url in visits(page, width).transferred]
    assert [p for p in paths if p.endswith("/fontawesome.js")] == [], "the icon script"
    assert [p for p in paths if re.search(r"/webfonts/fa-solid-900\.woff2$", p)], \
        "the icon font did not load"


# --- Links out ----------------------------------------------------------------

@pytest.mark.parametrize("page", PAGES)
def test_page_links_to_d2l_the_issues_and_has_a_favicon(visit, page, repo):
    v = visit(page)
    assert [h for h in v.data["links"] if urlsplit(h).hostname == "d2l.ai"], \
        "no link to the d2l section this chapter follows"
    assert v.data["issues"] and all(h.startswith(f"{repo.url}/issues") for h in v.data["issues"])
    assert v.data["icons"], "no <link rel=icon>"
    for href in v.data["icons"]:
        status, body = v.fetch(href)
        assert status == 200 and body, href


def test_root_index_leads_to_the_first_chapter(visit, site_url):
    status, body = visit(PAGES[0]).fetch(f"{site_url}/index.html")
    # sphinx-external-toc's redirect: a reader never sees the page itself.
    assert status == 200
    assert re.search(rf'http-equiv="refresh"[^>]*url={re.escape(PAGES[0])}\.html', body.decode(),
                     re.IGNORECASE)


# --- Recorded GPU runs (tabs under `hardware` cells) -------------------------
# Last in this module: it clicks tabs and switches to print media on the
# pages the tests above have loaded.

def test_some_page_has_hardware_cells():
    assert recorded_tabs.PAGES, "no chapter has a code cell tagged `hardware`"


# Tab sets on a phone: how tall each label row is against one label's line
# (a probe label of one word), and, with each tab shown in turn, every
# output block: text tables (fixed-width) must keep their lines, inside the
# column; any other output must neither scroll nor stick out.
TABS_ON_A_PHONE = r"""() => {
  const article = document.querySelector('article');
  const column = article.getBoundingClientRect();
  const rows = [], tables = [], clipped = [];
  const describe = el => el.textContent.trim().slice(0, 60).replace(/\s+/g, ' ');
  const check = () => {
    for (const pre of article.querySelectorAll('.sd-tab-set.recorded-runs pre')) {
      const box = pre.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) continue;
      const table = pre.closest('.fixed-width');
      if (table) {
        const range = document.createRange();
        range.selectNodeContents(pre);
        const lines = new Set([...range.getClientRects()].map(r => Math.round(r.top))).size;
        tables.push({text: describe(pre), lines, wanted: pre.textContent.replace(/\n$/, '').split('\n').length,
                     outside: box.right > column.right + 1});
      } else if (pre.closest('.recorded-output') &&
                 (pre.scrollWidth > pre.clientWidth + 1 || box.right > column.right + 1)) {
        clipped.push(describe(pre));
      }
    }
  };
  for (const set of article.querySelectorAll('.sd-tab-set.recorded-runs')) {
    const labels = [...set.querySelectorAll(':scope > label')];
    const probe = labels[0].cloneNode(false);
    probe.textContent = 'H100';
    set.insertBefore(probe, labels[0]);
    const line = probe.getBoundingClientRect().height;
    probe.remove();
    const boxes = labels.map(l => l.getBoundingClientRect());
    rows.push({labels: labels.map(l => l.textContent.trim()), line,
               height: Math.max(...boxes.map(b => b.bottom)) - Math.min(...boxes.map(b => b.top))});
    for (const label of labels) { label.click(); check(); }
    labels[0].click();
  }
  return {rows, tables, clipped};
}"""


@pytest.mark.parametrize("page", recorded_tabs.PAGES)
def test_recorded_tabs_read_on_a_phone(phone, page):
    v = phone(page)
    found = v.evaluate(TABS_ON_A_PHONE)
    # For review: the first tab set with its first recorded tab open, where
    # the page has one (a chapter none of whose cells is recorded has none).
    tab_sets = v.page.locator("article .sd-tab-set.recorded-runs")
    if REVIEW and tab_sets.count():
        tabs = tab_sets.first
        tabs.locator(":scope > label").nth(1).click()
        review_shot(tabs, SCREENSHOTS / f"{page.replace('/', '__')}__{PHONE}px__tabs.png")
        tabs.locator(":scope > label").first.click()
    tall = [f"{r['labels']}: {r['height']:.0f} px, a line is {r['line']:.0f} px" for r in found["rows"]
            if r["height"] > 2 * r["line"] + 1]
    assert tall == [], "tab labels taking more than two lines on a phone"
    wrapped = [f"{t['text']}: {t['wanted']} lines shown on {t['lines']}" for t in found["tables"]
               if t["lines"] > t["wanted"]]
    assert wrapped == [], "text tables wrapped (they scroll sideways by design)"
    assert [t["text"] for t in found["tables"] if t["outside"]] == [], "text tables wider than the column"
    assert found["clipped"] == [], "recorded outputs that scroll sideways or stick out (they wrap)"


@pytest.mark.parametrize("page", recorded_tabs.PAGES)
def test_recorded_runs_tabs_switch_and_print(visit, page):
    recorded_tabs.check_tabs(visit(page), page)
