"""Two builds of one commit give the same site, byte for byte.

The suite's own build (tests/conftest.py: incremental where _build/ was
there, cold on a fresh clone) is compared with a second, cold build into a
folder of its own (python -m booktools.site --build DIR). Ignored, and only
that: what booktools.pdf documents as volatile in a PDF (the time Chromium
printed it, the DOM node numbers in its tags). The second build costs as much
as a cold one (about 1.5 min of two cores, printing included), so the test
runs with BOOK_BUILD_TWICE=1 (the publish workflow sets it on a release tag)
and skips otherwise, saying so.
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from booktools import pdf

ROOT = Path(__file__).resolve().parent.parent

TWICE = pytest.mark.skipif(
    not os.environ.get("BOOK_BUILD_TWICE"),
    reason="builds the site a second time, cold (about 1.5 min): runs in publish, "
           "or with BOOK_BUILD_TWICE=1")


def _tree(site: Path) -> dict[str, str]:
    """Every file of a built site, by path, as a hash of its comparable bytes."""
    found = {}
    for path in sorted(site.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found[str(path.relative_to(site))] = hashlib.sha256(
                pdf.comparable(data) if path.suffix == ".pdf" else data).hexdigest()
    return found


@pytest.mark.slow
@TWICE
def test_two_builds_of_one_commit_are_byte_identical(built_site, tmp_path):
    second = tmp_path / "_build"
    proc = subprocess.run([sys.executable, "-m", "booktools.site", "--build", str(second)],
                          cwd=ROOT, capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    first, again = _tree(built_site), _tree(second / "html")
    assert sorted(first) == sorted(again)
    assert [name for name in first if first[name] != again[name]] == []


def test_comparable_blanks_only_what_chromium_makes_new_at_each_print():
    printed = (b"/CreationDate (D:20261126233113+00'00')\n/ID (node00000265)\n"
               b"/Headers [(node00000266)]\n/Title (node 1 printed 20261126233113)")
    again = (b"/CreationDate (D:20261126233349+00'00')\n/ID (node00000264)\n"
             b"/Headers [(node00000265)]\n/Title (node 1 printed 20261126233113)")
    assert pdf.comparable(printed) == pdf.comparable(again)
    assert len(pdf.comparable(printed)) == len(printed)
    assert pdf.comparable(printed.replace(b"printed", b"changed")) != pdf.comparable(again)
    # the file's /ID, a hash of bytes that hold the time
    assert pdf.comparable(b"/ID [<0A1b><FF00>]") == pdf.comparable(b"/ID [<9999><1234>]") \
        == b"/ID [<0000><0000>]"
    # the same date with its colon written as an octal escape (\072)
    escaped = printed.replace(b"(D:20261126233113", b"(D\\07220261126233113")
    assert pdf.comparable(escaped) == pdf.comparable(
        again.replace(b"(D:20261126233349", b"(D\\07220261126233349"))
