"""axe-core over every chapter page of the English and pt-BR editions at 1280 px (axe_scan)."""
from __future__ import annotations

import pytest

from axe_scan import EXEMPT, pages, problems, scan, still_needed

PAGES = pages(["en", "pt-BR"])


@pytest.fixture(scope="module")
def violations(site_url):
    return scan(site_url, PAGES)


@pytest.mark.parametrize("code,page", PAGES, ids=[f"{c}-{p}" for c, p in PAGES])
def test_no_serious_accessibility_violation(violations, code, page):
    left = problems(violations[code, page])
    assert not left, "\n".join(left)


@pytest.mark.parametrize("rule,pattern,why", EXEMPT)
def test_every_exemption_is_still_needed(violations, rule, pattern, why):
    assert still_needed(violations, rule, pattern), \
        f"{rule} on {pattern} no longer occurs: remove the exemption"
