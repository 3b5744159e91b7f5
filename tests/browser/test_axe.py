"""axe-core over the English edition at 1280 px: its tensors chapter in light and dark
mode, or with BOOK_AXE=all every chapter page (axe_scan)."""
import pytest
from axe_scan import axe_tests

(violations, test_no_serious_accessibility_violation, test_every_exemption_is_still_needed,
 test_dark_mode_keeps_contrast_and_plots_on_a_light_card) = axe_tests(["en"])


def test_the_test_command_scans_one_page_per_edition_and_publish_every_page(monkeypatch):
    from axe_scan import DARK_PAGE, full_scan, pages
    from booktools import i18n
    codes = [lang.code for lang in i18n.languages()]
    monkeypatch.delenv("BOOK_AXE", raising=False)
    assert pages(codes, full_scan()) == [(code, DARK_PAGE) for code in codes]
    assert len(codes) == 4 and all(DARK_PAGE in i18n.edition_pages(code) for code in codes)
    monkeypatch.setenv("BOOK_AXE", "all")  # the publish workflow's scan
    assert pages(codes, full_scan()) == [(code, page) for code in codes
                                         for page in i18n.edition_pages(code)]
    monkeypatch.setenv("BOOK_AXE", "yes")
    with pytest.raises(ValueError, match="BOOK_AXE='yes': use BOOK_AXE=all"):
        full_scan()


BROKEN = """<!DOCTYPE html><html lang="en"><head><title>Broken</title></head><body><main>
<img src="plot.png"><p style="color: #bbb; background: #fff">faint text</p>
<button aria-label="Close">Open menu</button></main></body></html>"""


def test_a_broken_page_fails_naming_the_rule_and_the_element():
    from axe_scan import AXE, RUN, WIDTH, problems
    from booktools import chromium
    from test_site_browser import new_context, offline_chromium, sync_api
    if chromium.version() is None:
        pytest.skip(f"no Chromium at {chromium.executable()}")
    with sync_api.sync_playwright() as playwright, offline_chromium(playwright) as browser:
        tab = new_context(browser, WIDTH).new_page()
        tab.set_content(BROKEN)
        tab.add_script_tag(path=str(AXE))
        found, contrast = tab.evaluate(RUN, {}), tab.evaluate(RUN, {"runOnly": ["color-contrast"]})
    left = problems(found)
    assert any(p.startswith("image-alt (critical: ") and p.endswith('img <img src="plot.png">')
               for p in left), left
    assert any(p.startswith("color-contrast (serious: ") and "faint text" in p for p in left), left
    assert any(p.startswith("label-content-name-mismatch (serious: ") and "Open menu" in p
               for p in left), left
    # runOnly reaches axe: the dark pass's contrast rules alone.
    assert {v["id"] for v in contrast} == {"color-contrast"}
