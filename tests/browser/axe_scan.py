"""axe-core (npm, served from node_modules) over chapter pages at 1280 px.

The shared part of test_axe.py (English and pt-BR) and test_axe_cjk.py
(zh-CN and ja): the scan is split in two files so that two test workers
share it (pytest-xdist hands out whole files). No serious or critical
violation is allowed, except those of the theme itself that the book cannot
change (EXEMPT: rule id, the selector of the elements, why).
"""
from __future__ import annotations

import re

import pytest

from booktools import i18n
from booktools.book import ROOT, toc_pages
from test_site_browser import CHROMIUM, new_context, offline_chromium, sync_api

__all__ = ["EXEMPT", "pages", "problems", "scan", "still_needed", "axe_tests"]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WIDTH = 1280
SERIOUS = {"serious", "critical"}
# (rule id, regular expression matched against an element's selector, why it is the theme's)
EXEMPT: list[tuple[str, str, str]] = [
    ("label-content-name-mismatch", r"\.search-button-field\.search-button__button",
     "pydata-sphinx-theme's search button shows 'Search' (in the edition's language) and "
     "its Ctrl+K keys, labelled by the word alone in the theme's search-button-field.html"),
]
RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map(n => `${n.target.join(' ')} ${n.html.slice(0, 100)}`)}));
}"""


def pages(codes: list[str]) -> list[tuple[str, str]]:
    """(edition, toc page) of every chapter page those editions have."""
    return [(lang.code, page) for lang in i18n.languages() if lang.code in codes
            for page in toc_pages()
            if lang.english or any(alt.code == lang.code for alt in i18n.alternates(page))]


def scan(site_url: str, chosen: list[tuple[str, str]]) -> dict:
    """axe's violations on each page, by (edition, page)."""
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    assert AXE.is_file(), "axe-core missing: bash scripts/fetch_mathjax.sh installs it"
    found = {}
    with sync_api.sync_playwright() as playwright, offline_chromium(playwright) as browser:
        context = new_context(browser, WIDTH)
        tab = context.new_page()
        for code, page in chosen:
            tab.goto(f"{site_url}/{i18n.site_path(code, page)}", wait_until="load")
            tab.add_script_tag(path=str(AXE))
            found[code, page] = tab.evaluate(RUN)
        context.close()
    return found


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
    chosen = pages(codes)

    @pytest.fixture(scope="module")
    def violations(site_url):
        return scan(site_url, chosen)

    @pytest.mark.parametrize("code,page", chosen, ids=[f"{c}-{p}" for c, p in chosen])
    def test_no_serious_accessibility_violation(violations, code, page):
        left = problems(violations[code, page])
        assert not left, "\n".join(left)

    @pytest.mark.parametrize("rule,pattern,why", EXEMPT)
    def test_every_exemption_is_still_needed(violations, rule, pattern, why):
        assert still_needed(violations, rule, pattern), \
            f"{rule} on {pattern} no longer occurs: remove the exemption"

    return violations, test_no_serious_accessibility_violation, test_every_exemption_is_still_needed
