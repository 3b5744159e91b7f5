"""The stored code of a chapter's cells, for the tests that run them under fakes."""
from pathlib import Path

from booktools import runs

__all__ = ["CHAPTERS", "cell_source"]

CHAPTERS = Path(__file__).resolve().parents[2] / "chapters"


def cell_source(chapter: str | None = None, name: str | None = None,
                marker: str | None = None) -> str:
    """The source of the one code cell named ``name``, or containing ``marker``, in
    chapters/<chapter>.ipynb (in any chapter, when ``chapter`` is None)."""
    paths = [CHAPTERS / f"{chapter}.ipynb"] if chapter else sorted(CHAPTERS.glob("*.ipynb"))
    found = [cell for path in paths for cell in runs.code_cells(runs.read_notebook(path))
             if (name is not None and runs.cell_name(cell) == name)
             or (marker is not None and marker in cell.source)]
    wanted = f"named {name!r}" if name is not None else f"containing {marker!r}"
    assert len(found) == 1, f"{len(found)} cells {wanted} in {chapter or 'any chapter'}"
    return found[0].source
