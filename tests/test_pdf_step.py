"""The PDF step's inputs and signals (booktools.pdf), without printing."""
from __future__ import annotations

import asyncio
import os
import signal

import pytest

from booktools import chromium, i18n, pdf


def _site(tmp_path):
    for page in i18n.edition_pages("en"):
        path = tmp_path / i18n.site_path("en", page)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"<p>{page}</p>")
    return tmp_path


def _browser(tmp_path, name: str, says: str):
    script = tmp_path / name
    script.write_text(f"#!/bin/sh\necho '{says}'\n")
    script.chmod(0o755)
    return script


def test_another_or_a_broken_chromium_is_never_up_to_date(tmp_path, monkeypatch):
    site = _site(tmp_path / "site")
    monkeypatch.setenv(chromium.VARIABLE, str(_browser(tmp_path, "a", "Chromium 150.0.1.2")))
    first = pdf.inputs_hash("en", site)
    assert pdf.inputs_hash("en", site) == first
    # The same version said by another executable (one that cannot print, say).
    monkeypatch.setenv(chromium.VARIABLE, str(_browser(tmp_path, "b", "Chromium 150.0.1.2")))
    assert pdf.inputs_hash("en", site) != first
    monkeypatch.setenv(chromium.VARIABLE, str(_browser(tmp_path, "a2", "Chromium 151.0.0.1")))
    assert len({pdf.inputs_hash("en", site), first}) == 2


def test_sigterm_while_printing_says_one_line_and_restores_the_handler(capsys):
    before = signal.getsignal(signal.SIGTERM)

    async def printing():
        asyncio.get_running_loop().call_later(0.1, os.kill, os.getpid(), signal.SIGTERM)
        await asyncio.sleep(30)

    with pytest.raises(pdf.Stopped) as stopped:
        asyncio.run(pdf._stoppable(printing()))
    assert stopped.value.code == 128 + signal.SIGTERM
    assert capsys.readouterr().err.splitlines() == [
        "pdf: stopped by SIGTERM while printing; no PDF was left half-written"]
    assert signal.getsignal(signal.SIGTERM) == before


def test_the_units_keep_a_number_company_not_a_word():
    import re
    unit = re.compile(rf"(\d)[ \u2009](?=(?:{pdf.UNITS})(?!\w))")
    assert unit.sub("\\1\u00a0", "80 GB and 2 s, 3 sets, 4 ms, 50 %, 32 ビット") == \
        "80\u00a0GB and 2\u00a0s, 3 sets, 4\u00a0ms, 50\u00a0%, 32\u00a0ビット"
