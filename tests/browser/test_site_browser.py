"""The built website in a real browser: Debian's Chromium driven by Playwright.

The site is built once per test run (the ``built_site`` fixture runs
``bash scripts/build-site.sh``), served on 127.0.0.1, and every page that
_toc.yml lists is opened once. Requests to any other host are recorded and
blocked: the site must render completely offline, math included. Each page's
screenshot is saved under ``_build/screenshots/`` for review.
"""
from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import urlsplit

import jupytext
import nbformat
import pytest

from booksite import ROOT, toc_pages

CHROMIUM = Path(os.environ.get("BOOK_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]
SCREENSHOTS = ROOT / "_build" / "screenshots"
PAGES = toc_pages()

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not CHROMIUM.is_file(),
                       reason=f"no Chromium at {CHROMIUM} (Debian: apt-get install -y chromium; .ci/run does)"),
]
sync_api = pytest.importorskip("playwright.sync_api", reason="the Playwright Python package is not installed")

# Evaluated in the page once it has loaded: what the tests below check.
COLLECT = """async () => {
  // Images marked lazy load only when scrolled to; load them all now.
  for (const img of document.images) img.loading = 'eager';
  await Promise.all([...document.images].map(img => img.complete ? null :
      new Promise(done => { img.addEventListener('load', done); img.addEventListener('error', done); })));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) await MathJax.startup.promise;
  const visible = el => {
    const box = el.getBoundingClientRect(), style = getComputedStyle(el);
    return box.width > 0 && box.height > 0 && style.visibility !== 'hidden' && style.display !== 'none';
  };
  const article = document.querySelector('article') || document.body;
  const hrefs = sel => [...document.querySelectorAll(sel)].map(a => a.href);
  return {
    title: (article.querySelector('h1') || {}).textContent || '',
    inputs: [...article.querySelectorAll('div.cell_input')].map(visible),
    outputs: [...article.querySelectorAll('div.cell_output')]
        .map(el => visible(el) && el.textContent.trim().length + el.querySelectorAll('img, svg').length > 0),
    images: [...document.images].map(img => ({src: img.currentSrc || img.src, width: img.naturalWidth})),
    math: article.querySelectorAll('span.math, div.math').length,
    typeset: article.querySelectorAll('mjx-container').length,
    mathErrors: [...article.querySelectorAll('mjx-merror')].map(el => el.textContent),
    launch: hrefs('.dropdown-launch-buttons a'),
    downloads: hrefs('.dropdown-download-buttons a'),
    repository: hrefs('a.btn-source-repository-button'),
  };
}"""


class Visit:
    """One page load in a fresh browser context, with everything it recorded."""

    def __init__(self, browser, url: str, screenshot: Path | None = None):
        self.console, self.failed, self.bad_status, self.external = [], [], [], []
        self.context = browser.new_context(viewport={"width": 1280, "height": 900},
                                           service_workers="block")
        self.context.route("**/*", self._only_this_machine)
        page = self.context.new_page()
        page.on("console", lambda m: m.type == "error" and self.console.append(
            f"{m.text} ({m.location.get('url')}:{m.location.get('lineNumber')})"))
        page.on("pageerror", lambda e: self.console.append(f"uncaught: {e}"))
        page.on("requestfailed", lambda r: self._failed(r))
        page.on("response", lambda r: r.status >= 400 and self.bad_status.append(f"{r.status} {r.url}"))
        page.goto(url, wait_until="networkidle")
        self.expand(page)
        self.data = page.evaluate(COLLECT)
        page.wait_for_load_state("networkidle")  # fonts MathJax asked for
        if screenshot is not None:
            page.evaluate("window.scrollTo(0, 0)")  # sticky header and sidebar at the top
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(screenshot), full_page=True)
        self.page = page

    @staticmethod
    def expand(page, limit: int = 500):
        """Open every folded part of the article as a reader would, by clicking:
        dropdown admonitions (exercise solutions) and <details> (hidden cells)."""
        folded = page.locator("article .admonition.toggle-hidden > .admonition-title > .toggle-button, "
                              "article details:not([open]) > summary").filter(visible=True)
        for _ in range(limit):  # one at a time: a click changes what is folded
            if folded.count() == 0:
                return
            folded.first.click()
        raise AssertionError(f"{page.url}: still folded after {limit} clicks")

    def _only_this_machine(self, route):
        url = route.request.url
        if urlsplit(url).hostname == "127.0.0.1" or url.startswith(("data:", "blob:")):
            route.continue_()
        else:
            self.external.append(url)
            route.abort("blockedbyclient")

    def _failed(self, request):
        if request.url not in self.external:  # blocked above, reported separately
            self.failed.append(f"{request.url}: {request.failure}")

    def fetch(self, url: str) -> tuple[int, bytes]:
        response = self.context.request.get(url)
        return response.status, response.body()

    def close(self):
        self.context.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def visit(browser, site_url):
    """visit(page) -> the Visit of that toc page (each page is loaded once)."""
    visits: dict[str, Visit] = {}
    for old in SCREENSHOTS.glob("*.png"):  # keep only this run's pages
        old.unlink()

    def get(page: str) -> Visit:
        if page not in visits:
            shot = SCREENSHOTS / f"{page.replace('/', '__')}.png"
            visits[page] = Visit(browser, f"{site_url}/{page}.html", shot)
        return visits[page]

    yield get
    for v in visits.values():
        v.close()


@pytest.mark.parametrize("page", PAGES)
def test_page_loads_without_errors(visit, page):
    v = visit(page)
    assert not v.console, "console errors:\n" + "\n".join(v.console)
    assert not v.failed, "failed requests:\n" + "\n".join(v.failed)
    assert not v.bad_status, "HTTP errors:\n" + "\n".join(v.bad_status)


@pytest.mark.parametrize("page", PAGES)
def test_page_requests_nothing_from_other_hosts(visit, page):
    external = visit(page).external
    assert not external, "requests that left 127.0.0.1 (blocked):\n" + "\n".join(external)


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
    v.page.screenshot(path=str(SCREENSHOTS / f"{page.replace('/', '__')}__launch-menu.png"),
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
    search = Visit(browser, f"{site_url}/search.html?q={word}")
    try:
        search.page.wait_for_selector("#search-results ul.search li a", timeout=20_000)
        hits = search.page.eval_on_selector_all("#search-results ul.search li a", "els => els.map(a => a.href)")
        assert any(urlsplit(h).path == f"/{page}.html" for h in hits), (word, hits)
        assert search.console == [] and search.failed == [] and search.external == []
    finally:
        search.close()
