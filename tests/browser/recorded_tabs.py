"""Recorded GPU runs on the built website: what a page must show (used by test_site_browser.py).

On every chapter page with `hardware` cells: one tab set per recorded cell,
"CPU (this build)" shown first, each machine's tab with a line naming it,
its PyTorch version and the date; clicking a machine's tab shows that machine's
output (plots loaded) and hides the build's; printing shows every tab; no
console errors. The checks run on the pages test_site_browser.py has loaded
anyway (one browser, each page loaded once).
"""
from __future__ import annotations

import nbformat

import runs as runs_module  # scripts/runs.py (pyproject.toml: pythonpath)
from booksite import ROOT, toc_pages

RUNS = runs_module.runs()


def expected(page: str) -> tuple[int, int, int]:
    """(hardware cells shown, of which with a recording, images recorded in them)."""
    nb = nbformat.read(ROOT / f"{page}.ipynb", as_version=4)
    cells = runs_module.code_cells(nb)
    shown = [i for i, c in enumerate(cells) if "remove-cell" not in c.metadata.get("tags", [])]
    hardware = [i for i in shown if runs_module.HARDWARE_TAG in cells[i].metadata.get("tags", [])]
    recorded, images = set(), 0
    for run in RUNS:
        matches = run.match(page.split("/")[-1], [cells[i].source for i in shown])
        for k, match in matches.items():
            if shown[k] in hardware:
                recorded.add(shown[k])
                rec = runs_module.code_cells(run.notebooks[page.split("/")[-1]])[match.recorded]
                images += sum("image/png" in o.get("data", {}) for o in rec.outputs)
    return len(hardware), len(recorded), images


PAGES = [p for p in toc_pages() if (ROOT / f"{p}.ipynb").is_file() and expected(p)[0]]

STATE = """() => [...document.querySelectorAll('article .sd-tab-set.recorded-runs')].map(set => {
  const visible = el => { const b = el.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && getComputedStyle(el).display !== 'none'; };
  return [...set.querySelectorAll(':scope > .sd-tab-content')].map(c => ({
    label: set.querySelector(`label[for="${c.id.replace(/-content$/, '')}"]`).textContent.trim(),
    meta: (c.querySelector(':scope > .recorded-run-meta') || {textContent: ''}).textContent,
    stale: c.classList.contains('recorded-run-stale'),
    staleParts: c.querySelectorAll(':scope > .recorded-run-stale-note, :scope > details.recorded-run-stale-source').length,
    visible: visible(c),
    text: c.textContent.trim().length,
    images: [...c.querySelectorAll('img')].map(i => ({w: i.naturalWidth, alt: i.alt})),
  }));
})"""


def check_tabs(v, page: str) -> None:
    """Tabs of page's recorded cells in Visit v: they exist, switch, show plots and print."""
    hardware, recorded, images = expected(page)
    sets = v.page.evaluate(STATE)
    assert len(sets) == recorded, "tab sets vs hardware cells with a recording"
    none = v.page.locator("article .recorded-runs-none").count()
    assert none == hardware - recorded, "'Not yet recorded' lines vs unrecorded hardware cells"
    loaded = []
    for n, tabs in enumerate(sets):
        assert tabs[0]["label"] == "CPU (this build)" and tabs[0]["visible"]
        # Each machine's tab names it, its PyTorch version and the date in a line.
        assert len(tabs) == 1 + sum(1 for t in tabs[1:] if "PyTorch" in t["meta"]) >= 2
        assert all(t["staleParts"] == 2 for t in tabs if t["stale"]), \
            "an earlier version's tab without its note and folded source"
        assert [t["label"] for t in tabs if not t["stale"] and "earlier" in t["label"]] == []
        assert not any(t["visible"] for t in tabs[1:]), "a recorded tab shown before any click"
        for k in range(1, len(tabs)):
            v.page.locator("article .sd-tab-set.recorded-runs").nth(n) \
                .locator(":scope > label").nth(k).click()
            now = v.page.evaluate(STATE)[n]
            assert now[k]["visible"] and not now[0]["visible"], f"tab {now[k]['label']} did not switch"
            assert now[k]["text"] > 0 or now[k]["images"], f"tab {now[k]['label']} is empty"
            loaded += now[k]["images"]
    assert len(loaded) == images, "recorded plots shown vs recorded"
    assert all(i["w"] > 0 and i["alt"] for i in loaded), f"plots not loaded or without alt: {loaded}"
    v.page.emulate_media(media="print")
    printed = v.page.evaluate(STATE)
    v.page.emulate_media(media="screen")
    assert all(t["visible"] for tabs in printed for t in tabs), "a tab's content does not print"
    assert not v.console, "console errors:\n" + "\n".join(v.console)
    assert not v.failed and not v.bad_status, v.failed + v.bad_status
