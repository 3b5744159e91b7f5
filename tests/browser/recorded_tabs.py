"""Recorded GPU runs on the built website: what a page must show (used by test_site_browser.py).

On every chapter page with `hardware` cells: one tab set per recorded cell,
"CPU (book’s output)" shown first, each machine's tab with a line naming it,
its PyTorch version and the date; clicking a machine's tab shows that machine's
output (plots loaded) and hides the build's; printing shows every tab; no
console errors. The checks run on the pages test_site_browser.py has loaded
anyway (one browser, each page loaded once).
"""
from __future__ import annotations

import nbformat

from booktools import files, runs
from booktools.book import ROOT, toc_pages

RUNS = runs.runs()


def printed_line(cell) -> str:
    """The first line a cell printed (a stream, or text/plain beside no plot), unescaped."""
    for output in cell.get("outputs", []):
        data = output.get("data", {})
        text = output.get("text") or ("" if "image/png" in data else data.get("text/plain", ""))
        text = files.ANSI_ESCAPE.sub("", text)
        if text.strip():
            return text.strip().splitlines()[0]
    return ""



def expected(page: str) -> tuple[int, list[list[str]], int]:
    """(hardware cells shown, per recorded one the first line each machine's
    tab must show, images recorded in them)."""
    nb = nbformat.read(ROOT / f"{page}.ipynb", as_version=4)
    chapter = page.split("/")[-1]
    hardware = [c for c in runs.code_cells(nb) if runs.is_hardware(c)
                and "remove-cell" not in c.metadata.get("tags", [])]
    lines, images = [], 0
    for cell in hardware:
        found = []
        for run in RUNS:
            recorded = run.cell(chapter, runs.cell_name(cell))
            if recorded is not None:
                found.append(printed_line(recorded))
                images += sum("image/png" in o.get("data", {}) for o in recorded.outputs)
        if found:
            lines.append(found)
    return len(hardware), lines, images


PAGES = [p for p in toc_pages() if (ROOT / f"{p}.ipynb").is_file() and expected(p)[0]]

STATE = """() => [...document.querySelectorAll('article .sd-tab-set.recorded-runs')].map(set => {
  const visible = el => { const b = el.getBoundingClientRect();
    return b.width > 0 && b.height > 0 && getComputedStyle(el).display !== 'none'; };
  return [...set.querySelectorAll(':scope > .sd-tab-content')].map(c => ({
    label: set.querySelector(`label[for="${c.id.replace(/-content$/, '')}"]`).textContent.trim(),
    meta: (c.querySelector(':scope > .recorded-run-meta') || {textContent: ''}).textContent,
    stale: c.classList.contains('recorded-run-stale'),
    above: c.classList.contains('recorded-run-stale-above'),
    staleParts: c.querySelectorAll(':scope > .recorded-run-stale-note, :scope > details.recorded-run-stale-source').length,
    visible: visible(c),
    text: c.textContent.trim().length,
    content: c.textContent,
    images: [...c.querySelectorAll('img')].map(i => ({w: i.naturalWidth, alt: i.alt})),
  }));
})"""


def check_tabs(v, page: str) -> None:
    """Tabs of page's recorded cells in Visit v: they exist, switch, show plots and print."""
    hardware, lines, images = expected(page)
    sets = v.page.evaluate(STATE)
    assert len(sets) == len(lines), "tab sets vs hardware cells with a recording"
    none = v.page.locator("article .recorded-runs-none").count()
    assert none == hardware - len(lines), "'Not yet recorded' lines vs unrecorded hardware cells"
    loaded = []
    for n, tabs in enumerate(sets):
        assert tabs[0]["label"] == "CPU (book’s output)" and tabs[0]["visible"]
        assert len(tabs) == 1 + len(lines[n]) >= 2
        labels = [run.tab_label for run in RUNS]
        assert all(t["label"] in labels for t in tabs[1:]), [t["label"] for t in tabs]
        # Each machine's tab names it, its PyTorch version and the date in a line.
        assert all("PyTorch" in t["meta"] for t in tabs[1:]), [t["meta"] for t in tabs]
        # An earlier version of the cell: a note and the source it had; of the code
        # above it: the note.
        assert all(t["staleParts"] == (1 if t["above"] else 2) for t in tabs if t["stale"]), \
            "a stale tab without its note, or an earlier version's without its source"
        assert not any(t["visible"] for t in tabs[1:]), "a recorded tab shown before any click"
        for k in range(1, len(tabs)):
            v.page.locator("article .sd-tab-set.recorded-runs").nth(n) \
                .locator(":scope > label").nth(k).click()
            now = v.page.evaluate(STATE)[n]
            assert now[k]["visible"] and not now[0]["visible"], f"tab {now[k]['label']} did not switch"
            assert now[k]["text"] > 0 or now[k]["images"], f"tab {now[k]['label']} is empty"
            # The tab shows the recording of this cell (by name), not another's.
            assert lines[n][k - 1] in now[k]["content"], (n, now[k]["label"], lines[n][k - 1])
            loaded += now[k]["images"]
    assert len(loaded) == images, "recorded plots shown vs recorded"
    assert all(i["w"] > 0 and i["alt"] for i in loaded), f"plots not loaded or without alt: {loaded}"
    v.page.emulate_media(media="print")
    printed = v.page.evaluate(STATE)
    v.page.emulate_media(media="screen")
    assert all(t["visible"] for tabs in printed for t in tabs), "a tab's content does not print"
    assert not v.console, "console errors:\n" + "\n".join(v.console)
    assert not v.failed and not v.bad_status, v.failed + v.bad_status
