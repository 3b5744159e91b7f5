"""axe-core (npm, served from node_modules) over every chapter page of every edition at 1280 px.

No serious or critical violation, except those of the theme itself that the
book cannot change (EXEMPT: rule id, the selector of the elements, why).
"""
from __future__ import annotations

import re

import pytest

from booktools import i18n
from booktools.book import ROOT, toc_pages
from test_site_browser import CHROMIUM, new_context, offline_chromium, sync_api

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
WIDTH = 1280
SERIOUS = {"serious", "critical"}
# (rule id, regular expression matched against an element's selector, why it is the theme's)
EXEMPT: list[tuple[str, str, str]] = [
    ("label-content-name-mismatch", r"\.search-button-field\.search-button__button",
     "pydata-sphinx-theme's search button shows 'Search' (in the edition's language) and "
     "its Ctrl+K keys, labelled by the word alone in the theme's search-button-field.html"),
]
PAGES = [(lang.code, page) for lang in i18n.languages() for page in toc_pages()
         if lang.english or any(alt.code == lang.code for alt in i18n.alternates(page))]

RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ['violations']});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    targets: v.nodes.map(n => `${n.target.join(' ')} ${n.html.slice(0, 100)}`)}));
}"""


def _exempt(rule: str, target: str) -> bool:
    return any(rule == r and re.search(pattern, target) for r, pattern, _ in EXEMPT)


@pytest.fixture(scope="module")
def violations(site_url):
    if not CHROMIUM.is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}")
    assert AXE.is_file(), "axe-core missing: bash scripts/fetch_mathjax.sh installs it"
    found = {}
    with sync_api.sync_playwright() as playwright, offline_chromium(playwright) as browser:
        context = new_context(browser, WIDTH)
        tab = context.new_page()
        for code, page in PAGES:
            tab.goto(f"{site_url}/{i18n.site_path(code, page)}", wait_until="load")
            tab.add_script_tag(path=str(AXE))
            found[code, page] = tab.evaluate(RUN)
        context.close()
    return found


@pytest.mark.parametrize("code,page", PAGES, ids=[f"{c}-{p}" for c, p in PAGES])
def test_no_serious_accessibility_violation(violations, code, page):
    left = [f"{v['id']} ({v['impact']}: {v['help']}): {t}"
            for v in violations[code, page] if v["impact"] in SERIOUS
            for t in v["targets"] if not _exempt(v["id"], t)]
    assert not left, "\n".join(left)


@pytest.mark.parametrize("rule,pattern,why", EXEMPT)
def test_every_exemption_is_still_needed(violations, rule, pattern, why):
    assert any(v["id"] == rule and re.search(pattern, t)
               for found in violations.values() for v in found for t in v["targets"]), \
        f"{rule} on {pattern} no longer occurs: remove the exemption"
