"""The fast lane (scripts/check.sh): it fails, naming the cell, when a stored output is wrong."""
from __future__ import annotations

import subprocess
from pathlib import Path

import jupytext
import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent

TOY = """\
---
jupytext:
  text_representation: {extension: .md, format_name: myst}
kernelspec: {display_name: Python 3, language: python, name: python3}
---

# Toy

```{code-cell} ipython3
print(6 * 7)
```
"""


@pytest.mark.slow
def test_check_names_the_cell_whose_stored_output_changed(tmp_path):
    """A toy chapter whose stored output says 41 where the code prints 42."""
    md = tmp_path / "toy.md"
    md.write_text(TOY)
    nb = jupytext.reads(TOY, fmt="md:myst")
    nb.cells[1].execution_count = 1
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="41\n")]
    nbformat.write(nb, md.with_suffix(".ipynb"))
    done = subprocess.run(["bash", "scripts/check.sh", "--no-unit", str(md)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode != 0, done.stdout + done.stderr
    assert "Cell 0: Cell outputs differ" in done.stdout, done.stdout
    assert "- 42" in done.stdout and "+ 41" in done.stdout, done.stdout
    assert "1 failed" in done.stdout, done.stdout  # nothing else of the book failed


def test_check_refuses_what_is_not_a_chapter(tmp_path):
    done = subprocess.run(["bash", "scripts/check.sh", str(tmp_path / "nowhere.md")], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().endswith("nowhere.md is not a chapter's .md file")
