"""axe-core (npm, served from node_modules) over chapter pages at 1280 px.

The shared part of test_axe.py (English) and test_axe_editions.py (the
translations): two files, so that two test workers share the scan
(pytest-xdist hands out whole files). No serious or critical violation is
allowed, except those of the theme itself that the book cannot change
(EXEMPT: rule id, the selector of the elements, why). One chapter per
edition (DARK_PAGE) is also scanned in the theme's dark mode, with its
solutions, hidden cells and recorded tabs open: the contrast rules there,
and its plots must sit on the book's light card.

Which pages (``pages``): the test command scans one page per edition
(DARK_PAGE: plots, recorded tabs, solutions), in light and in dark: the
pages share their theme, CSS and structure, so one page each finds what is
the site's and the edition's (the language, its fonts, its words). Every
English page took 8% of the suite's CPU; publish still scans them: with
``BOOK_AXE=all`` (the publish workflow, before it deploys) every page of
every edition is scanned.
"""
from __future__ import annotations

import os
import re

import pytest

from booktools import i18n
from booktools import chromium
from booktools.book import ROOT
from test_site_browser import new_context, offline_chromium, sync_api

__all__ = ["EXEMPT", "full_scan", "pages", "problems", "scan", "still_needed", "axe_tests"]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WIDTH = 1280
SERIOUS = {"serious", "critical"}
# (rule id, regular expression matched against an element's selector, why it is the theme's)
EXEMPT: list[tuple[str, str, str]] = [
    ("label-content-name-mismatch", r"\.search-button-field\.search-button__button",
     "pydata-sphinx-theme's search button shows 'Search' (in the edition's language) and "
     "its Ctrl+K keys, labelled by the word alone in the theme's search-button-field.html"),
]
RUN = """async (options) => {
  const result = await axe.run(document, {resultTypes: ['violations'], ...options});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map(n => `${n.target.join(' ')} ${n.html.slice(0, 100)}`)}));
}"""


# The dark pass: a chapter with plots, recorded tabs and solutions.
DARK_PAGE = "chapters/tensors"
# Every solution and hidden cell open, each tab set's recorded tab shown, so
# that the contrast rules see them (an opened cell fades in: measure it at rest).
OPEN_ALL = """async () => {
  const still = document.createElement('style');
  still.textContent = '*, *::before, *::after {animation: none !important; transition: none !important}';
  document.head.append(still);
  document.querySelectorAll('details').forEach(d => d.open = true);
  document.querySelectorAll('button.toggle-button-hidden').forEach(b => b.click());
  document.querySelectorAll('.sd-tab-set').forEach(set => {
    const tabs = set.querySelectorAll(':scope > input');
    if (tabs.length > 1) tabs[1].checked = true;
  });
  await new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)));
}"""
PLOTS = """() => [...document.querySelectorAll(
    'article .cell_output img, article .recorded-run img, article figure img')]
  .map(img => ({src: img.getAttribute('src'), background: getComputedStyle(img).backgroundColor}))"""


def full_scan() -> bool:
    """Whether every page of every edition is scanned (BOOK_AXE=all), not the test command's."""
    value = os.environ.get("BOOK_AXE", "")
    if value not in ("", "all"):
        raise ValueError(f"BOOK_AXE={value!r}: use BOOK_AXE=all, or leave it unset")
    return value == "all"


def pages(codes: list[str], full: bool = False) -> list[tuple[str, str]]:
    """(edition, toc page) of the pages to scan: DARK_PAGE of each edition, or, full, every
    page of every edition."""
    return [(code, page) for code in codes for page in i18n.edition_pages(code)
            if full or page == DARK_PAGE]


def scan(site_url: str, chosen: list[tuple[str, str]]) -> tuple[dict, dict]:
    """axe's violations on each page, by (edition, page), and each edition's dark pass."""
    if chromium.version() is None:
        pytest.skip(f"no Chromium at {chromium.executable()}")
    assert AXE.is_file(), "axe-core missing: npm ci installs it (bash scripts/test.sh does)"
    light, dark = {}, {}
    with sync_api.sync_playwright() as playwright, offline_chromium(playwright) as browser:
        context = new_context(browser, WIDTH)
        tab = context.new_page()
        for code, page in chosen:
            tab.goto(f"{site_url}/{i18n.site_path(code, page)}", wait_until="load")
            tab.add_script_tag(path=str(AXE))
            light[code, page] = tab.evaluate(RUN, {})
        context.close()
        context = new_context(browser, WIDTH)
        # The theme reads the reader's choice from localStorage before it paints.
        context.add_init_script("localStorage.setItem('mode', 'dark'); localStorage.setItem('theme', 'dark');")
        tab = context.new_page()
        for code, page in chosen:
            if page != DARK_PAGE:
                continue
            tab.goto(f"{site_url}/{i18n.site_path(code, page)}", wait_until="load")
            tab.add_script_tag(path=str(AXE))
            tab.evaluate(OPEN_ALL)
            dark[code, page] = {
                "theme": tab.evaluate("document.documentElement.dataset.theme"),
                "plots": tab.evaluate(PLOTS),
                "violations": tab.evaluate(RUN, {"runOnly": ["color-contrast", "link-in-text-block"]})}
        context.close()
    return light, dark


def _exempt(rule: str, target: str) -> bool:
    return any(rule == r and re.search(pattern, target) for r, pattern, _ in EXEMPT)


def problems(violations: list[dict]) -> list[str]:
    """The serious and critical violations of one page that no exemption covers."""
    return [f"{v['id']} ({v['impact']}: {v['help']}): {t}"
            for v in violations if v["impact"] in SERIOUS
            for t in v["targets"] if not _exempt(v["id"], t)]


def still_needed(found: dict, rule: str, pattern: str) -> bool:
    """Whether an exemption still matches a violation on some scanned page."""
    return any(v["id"] == rule and re.search(pattern, t)
               for violations in found.values() for v in violations for t in v["targets"])


def axe_tests(codes: list[str]):
    """The module fixture and tests that scan those editions' chapter pages."""
    chosen = pages(codes, full_scan())
    dark = [(code, page) for code, page in chosen if page == DARK_PAGE]

    @pytest.fixture(scope="module")
    def violations(site_url):
        return scan(site_url, chosen)

    @pytest.mark.parametrize("code,page", chosen, ids=[f"{c}-{p}" for c, p in chosen])
    def test_no_serious_accessibility_violation(violations, code, page):
        left = problems(violations[0][code, page])
        assert not left, "\n".join(left)

    @pytest.mark.parametrize("rule,pattern,why", EXEMPT)
    def test_every_exemption_is_still_needed(violations, rule, pattern, why):
        assert still_needed(violations[0], rule, pattern), \
            f"{rule} on {pattern} no longer occurs: remove the exemption"

    @pytest.mark.parametrize("code,page", dark, ids=[f"{c}-{p}" for c, p in dark])
    def test_dark_mode_keeps_contrast_and_plots_on_a_light_card(violations, code, page):
        found = violations[1][code, page]
        assert found["theme"] == "dark", "the theme did not switch to dark mode"
        left = problems(found["violations"])
        assert not left, "in dark mode (solutions open, recorded tabs shown):\n" + "\n".join(left)
        assert found["plots"], f"no plot found (is {DARK_PAGE} still the chapter with plots?)"
        # In dark mode the theme alone gives images a grey background (rgb(206,
        # 214, 221): a dim frame around a white plot); the book's card is near-white.
        dim = [p["src"] for p in found["plots"]
               if sum(map(int, re.findall(r"\d+", p["background"])[:3])) < 3 * 230]
        assert not dim, f"plots without a light card in dark mode: {dim}"

    return (violations, test_no_serious_accessibility_violation,
            test_every_exemption_is_still_needed,
            test_dark_mode_keeps_contrast_and_plots_on_a_light_card)
