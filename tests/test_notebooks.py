"""Static checks of the chapter pairs: the .md and the .ipynb agree, and the
stored notebooks are clean. nbval (run by the same test command) re-executes
the notebooks and compares their outputs."""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

from booktools import notebooks
from booktools.runs import VOLATILE_CELL_KEYS, name_problems

ROOT = Path(__file__).resolve().parent.parent

MARKDOWNS = notebooks.chapter_markdowns()
NOTEBOOKS = sorted((ROOT / "chapters").glob("*.ipynb"))
SNIPPET = notebooks.SNIPPET
NOTE = notebooks.HARDWARE_NOTE


def ids(paths):
    return [p.name for p in paths]


def test_there_are_chapters():
    assert MARKDOWNS and NOTEBOOKS


def test_pairs_agree():
    # Independent of file times: each .md is read and compared with its .ipynb
    # (cell types, sources, tags and other cell metadata).
    assert notebooks.pair_problems() == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_hardware_cells_have_unique_names(path):
    # A recorded GPU run finds its cell by this name (booktools.runs).
    assert name_problems(nbformat.read(path, as_version=4), path.name) == []


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_notebook_is_executed_and_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    counts = [c.execution_count for c in code]
    assert None not in counts, "some cells were never executed: run scripts/refresh.sh"
    assert counts == list(range(1, len(code) + 1)), "cells were not run top to bottom in one kernel"
    for cell in nb.cells:
        assert not set(cell.metadata) & set(VOLATILE_CELL_KEYS), "volatile metadata"
        if cell.cell_type == "code":
            assert not re.search(r"#\s*NBVAL_", cell.source), "use cell tags, not NBVAL comments"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_exceptions_are_tagged_and_real(path):
    # nbval compares `ename`/`evalue`, so a stored error output makes nbval fail
    # when a `raises-exception` cell stops raising; this test makes sure every
    # such cell stores its error, and that no other cell does.
    nb = nbformat.read(path, as_version=4)
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        tags = set(cell.metadata.get("tags", []))
        errors = [o for o in cell.outputs if o.output_type == "error"]
        if "raises-exception" in tags:
            assert errors, f"cell {index} is tagged raises-exception but did not raise"
            assert not tags & {"nbval-ignore-output", "nbval-skip"}, (
                f"cell {index}: nbval must compare the error of a raises-exception cell")
        else:
            assert not errors, f"cell {index} raised {errors[0].ename} without the raises-exception tag"


FIRST_PAGE = ROOT / "chapters" / "intro.md"


@pytest.mark.parametrize("path", MARKDOWNS, ids=ids(MARKDOWNS))
def test_hardware_note_is_said_once(path):
    # The full note lives on the first page, under the label the one-line
    # form links to; every other page carries exactly the one-line snippet.
    found = NOTE.findall(path.read_text())
    assert len(found) == 1, "put the hardware note once, between its markers"
    one_line = SNIPPET.read_text().strip()
    if path.resolve() == FIRST_PAGE:
        note = found[0].strip()
        assert note.startswith("(hardware-note)=\n#"), (
            "the full note starts with the label `(hardware-note)=` on a heading")
        assert one_line not in note and len(note.split()) > 100, (
            "the first page has the full note, not the one-line link")
    else:
        assert found[0].strip() == one_line, (
            "paste chapters/_snippets/hardware-note.md between the markers")


def test_hardware_note_label_is_on_the_first_page_only():
    labelled = [p for p in MARKDOWNS if "(hardware-note)=" in p.read_text()]
    assert [p.resolve() for p in labelled] == [FIRST_PAGE], (
        "the label hardware-note belongs to the first page only")
