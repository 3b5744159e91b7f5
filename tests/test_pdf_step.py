"""The PDF step's signals and units (booktools.pdf), without printing."""
from __future__ import annotations

import asyncio
import os
import re
import signal

from booktools import chromium, i18n, pdf


def test_ctrl_c_while_printing_closes_chromium_and_says_one_line(tmp_path, monkeypatch, capsys):
    for lang in i18n.languages():
        for page in i18n.edition_pages(lang.code):
            path = tmp_path / "html" / i18n.site_path(lang.code, page)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"<p>{page}</p>", encoding="utf-8")
    closed = []

    async def printing(codes, site):
        asyncio.get_running_loop().call_later(0.1, os.kill, os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(30)
        finally:
            closed.append(codes)  # where pdf._build closes Chromium

    monkeypatch.setattr(chromium, "version", lambda: "Chromium 150.0")
    monkeypatch.setattr(pdf, "SITE", tmp_path / "html")
    monkeypatch.setattr(pdf, "_build", printing)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)  # as outside pytest
    try:
        assert pdf.main([]) == 130
    finally:
        signal.signal(signal.SIGINT, before)
    assert closed == [[lang.code for lang in i18n.languages()]]
    assert capsys.readouterr().err.splitlines() == [
        "pdf: interrupted; Chromium closed, no PDF half-written"]


def test_the_units_keep_a_number_company_not_a_word():
    unit = re.compile(rf"(\d)[ \u2009](?=(?:{pdf.UNITS})(?!\w))")
    assert unit.sub("\\1\u00a0", "80 GB and 2 s, 3 sets, 4 ms, 50 %, 32 ビット") == \
        "80\u00a0GB and 2\u00a0s, 3 sets, 4\u00a0ms, 50\u00a0%, 32\u00a0ビット"
