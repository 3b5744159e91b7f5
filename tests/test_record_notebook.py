"""The readers' recording notebook (notebooks/record.ipynb) runs top to bottom in
rehearsal (RECORD_REHEARSAL=1, on the CPU, one small chapter) and packs a zip that
`python -m booktools.contributed` accepts; its pair with notebooks/record.md agrees.

The rehearsal records a shallow clone of this commit (as a reader's Colab clones the
book), with this checkout's tools and scripts over it, so nothing is written here.
"""
from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from pathlib import Path

import jupytext
import nbformat

from booktools import contributed
from booktools.kernels import execute

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "record.ipynb"


def test_the_notebook_is_its_markdown():
    md = jupytext.read(NOTEBOOK.with_suffix(".md"))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert [(c.cell_type, c.source) for c in md.cells] == \
        [(c.cell_type, c.source) for c in nb.cells], \
        "jupytext --to ipynb notebooks/record.md"
    assert not any(c.get("outputs") for c in nb.cells), "store it without outputs"


def test_a_rehearsal_packs_a_zip_that_verify_accepts(tmp_path, monkeypatch):
    book = tmp_path / "book"
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{ROOT}", str(book)],
                   check=True)
    for part in ("tools/booktools", "scripts"):  # this checkout's, edited or not
        shutil.copytree(ROOT / part, book / part, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__"))
    for name, value in {"RECORD_REHEARSAL": "1", "RECORD_CHAPTERS": "summary",
                        "RECORD_BOOK": str(book), "RECORD_OUT": str(tmp_path)}.items():
        monkeypatch.setenv(name, value)
    nb = nbformat.read(NOTEBOOK, as_version=4)
    execute(nb, tmp_path, timeout=120)
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                      for o in c.outputs)
    assert "Recording CPU (rehearsal) into runs/cpu-rehearsal/" in printed
    assert "verify: accepted runs/cpu-rehearsal/ (no GPU, " in printed
    assert "issues/new?template=recording.yml" in printed
    packed = tmp_path / "cpu-rehearsal.zip"
    with zipfile.ZipFile(packed) as zf:
        assert sorted(zf.namelist()) == ["runs/cpu-rehearsal/run.json",
                                         "runs/cpu-rehearsal/summary.ipynb"]
    # A maintainer's check of the zip alone, in a checkout without the folder.
    shutil.rmtree(book / "runs" / "cpu-rehearsal")
    out = io.StringIO()
    assert contributed.main(str(packed), root=book, out=out) == 0, out.getvalue()
