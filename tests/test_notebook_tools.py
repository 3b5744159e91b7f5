"""booktools.notebooks with planted faults: what refresh keeps, stores and says, and what
the build is told about a chapter that lost its outputs."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from booktools import notebooks

ROOT = Path(__file__).resolve().parent.parent
# The front matter of a chapter's MyST text, as jupytext pairs it.
MYST_HEADER = """\
---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
TINY = MYST_HEADER + """
# A tiny chapter

```{code-cell} ipython3
import matplotlib.pyplot as plt
print("drawn")
```
"""


def _outputs(path: Path) -> list:
    return [(c.source, c.outputs, c.execution_count)
            for c in nbformat.read(path, as_version=4).cells if c.cell_type == "code"]


@pytest.fixture
def chapter(tmp_path):
    """A copy of chapters/devices.md and its executed notebook."""
    for suffix in (".md", ".ipynb"):
        shutil.copy(ROOT / "chapters" / f"devices{suffix}", tmp_path)
    return tmp_path / "devices.md"


def test_a_chapter_with_unexecuted_cells_is_refused(chapter, monkeypatch):
    ipynb = chapter.with_suffix(".ipynb")
    nb = nbformat.read(ipynb, as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code"]
    cells[0].outputs, cells[0].execution_count = [], None
    nbformat.write(nb, ipynb)
    monkeypatch.setattr(notebooks, "CHAPTERS", chapter.parent)
    assert notebooks.output_problems() == [
        f"{ipynb}: code cells 1 of {len(cells)} have no stored outputs (never executed): "
        f"bash scripts/refresh.sh {chapter}"]


def test_the_book_has_no_chapter_without_its_outputs():
    assert notebooks.output_problems() == []


def test_a_bad_code_cell_option_names_the_file_and_line(tmp_path, capsys):
    md = tmp_path / "tiny.md"
    md.write_text(TINY.replace("```{code-cell} ipython3\n", "```{code-cell} ipython3\n"
                               ":tags: [hide-input\n\n"))
    with pytest.raises(SystemExit) as stop:
        notebooks.refresh(md)
    line = TINY.splitlines().index("```{code-cell} ipython3") + 1
    assert str(stop.value).startswith(f"refresh: {md}:{line}: jupytext cannot read it (")
    assert str(stop.value).endswith("mend that cell's options (`:tags: [a, b]`, or YAML "
                                    "between two `---` lines)")
    assert "\n" not in str(stop.value) and not md.with_suffix(".ipynb").exists()


def test_a_chapter_runs_with_its_caches_in_a_temporary_folder(tmp_path, monkeypatch):
    # A home matplotlib cannot write to (here: below a file) made it store a
    # warning with this machine's paths in the notebook.
    (tmp_path / "file").touch()
    monkeypatch.setenv("HOME", str(tmp_path / "file" / "home"))
    monkeypatch.delenv("MPLCONFIGDIR", raising=False)
    md = tmp_path / "tiny.md"
    md.write_text(TINY)
    notebooks.refresh(md)
    [(_, outputs, count)] = _outputs(md.with_suffix(".ipynb"))
    assert count == 1 and outputs == [{"name": "stdout", "output_type": "stream",
                                       "text": "drawn\n"}]
    assert "MPLCONFIGDIR" not in __import__("os").environ  # restored


def test_kernel_caches_are_fresh_folders_and_are_removed(monkeypatch):
    monkeypatch.setenv("MPLCONFIGDIR", "/somewhere")
    from booktools import kernels
    with kernels.kernel_caches() as folder:
        assert all(Path(os.environ[name]).is_dir() and Path(os.environ[name]).parent == folder
                   for name in kernels.CACHE_VARIABLES)
    assert os.environ["MPLCONFIGDIR"] == "/somewhere" and not folder.exists()


def test_a_kernel_keeps_the_profilers_own_log_lines_out_of_the_outputs(tmp_path):
    # torch 2.13's profiler printed "USDT:<date> ... profiler_start" into the cell.
    from booktools import kernels
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
        "import torch\nfrom torch.profiler import profile\n"
        "with profile():\n    torch.ones(3) + 1\nprint('done')")])
    before = os.environ.get("KINETO_LOG_LEVEL")
    kernels.execute(nb, tmp_path, 120)
    printed = "".join(o.get("text", "") for o in nb.cells[0].outputs)
    assert printed == "done\n", printed
    assert os.environ.get("KINETO_LOG_LEVEL") == before  # restored


def test_a_notebook_line_is_given_as_its_markdown_line():
    # myst-nb numbers a notebook's lines from (cell index + 1) * 10000; a message
    # about chapters/X.ipynb:10012 is about a line of chapters/X.md.
    md = ROOT / "chapters" / "devices.md"
    cells = nbformat.read(md.with_suffix(".ipynb"), as_version=4).cells
    lines = md.read_text().splitlines()
    for index in (0, 2, len(cells) - 1):
        source = cells[index].source.splitlines()
        offset = len(source) - 1
        line = notebooks.md_line(md, index, offset)
        assert lines[line - 1] == source[offset], index
    assert notebooks.md_line(md, len(cells), 0) is None


def test_a_cell_that_raises_in_refresh_writes_nothing_and_says_what_to_do(tmp_path):
    md = tmp_path / "tiny.md"
    md.write_text(TINY.replace('print("drawn")', 'print("drawn")\nsizes = {}\nsizes["gpu"]'))
    with pytest.raises(SystemExit) as stop:
        notebooks.refresh(md)
    said = str(stop.value)
    assert said.startswith(f"refresh: {md}: ") and 'sizes["gpu"]' in said and "KeyError" in said
    assert said.endswith("\nrefresh: nothing written; mend the cell, or tag it raises-exception "
                         "where raising is what it shows")
    assert not md.with_suffix(".ipynb").exists()


def test_an_unclosed_fence_is_named_by_its_line(tmp_path, monkeypatch):
    # jupytext made the rest of the file one code cell; the build said "Cell content
    # differ on code cell #9", blamed the translations and advised refresh.sh.
    text = TINY + "\nSome prose.\n\n```{code-cell} ipython3\nx = 1\n\nMore prose.\n"
    md = tmp_path / "tiny.md"
    md.write_text(text)
    line = text.splitlines().index("x = 1")
    with pytest.raises(SystemExit, match=rf"^refresh: {md}:{line}: this fence "
                                         r"\(```\{code-cell\} ipython3\) is never closed"):
        notebooks.refresh(md)
    assert not md.with_suffix(".ipynb").exists()
    monkeypatch.setattr(notebooks, "CHAPTERS", tmp_path)
    assert [p.split(": this fence")[0] for p in notebooks.markdown_problems()] == [f"{md}:{line}"]


@pytest.mark.parametrize("text, line", [
    ("```python\nx\n```\n", None),
    ("````{note}\n```python\nx\n```\n````\n", None),  # a fence inside a longer one
    ("```{code-cell}\nx\n```python\n", 1),            # an info string does not close
    ("~~~\n```\n~~~\n```\n", 4),
])
def test_unclosed_fence_follows_commonmark(text, line):
    assert notebooks.unclosed_fence(text) == line


def test_measurings_setup_keeps_the_cuda_home_warning_out_of_its_outputs(tmp_path):
    """The stacks run: every CUDA build without a GPU printed "No CUDA runtime is found,
    using CUDA_HOME='/usr/local'" in torch-benchmark-timer's output. Here the CPU build
    is told it has no CUDA runtime but a CUDA_HOME, after the chapter's hidden setup."""
    nb = notebooks.read_markdown(ROOT / "chapters" / "measuring.md")
    [setup] = [c for c in nb.cells if c.cell_type == "code"
               and "remove-cell" in c.metadata.get("tags", []) and "%xmode" in c.source]
    python = "\n".join(line for line in setup.source.splitlines() if not line.startswith("%"))
    script = python + (
        "\nimport torch\nimport torch.utils.cpp_extension as ext\n"
        "torch.cuda.is_available = lambda: False\n"
        "assert ext._find_cuda_home()\n")
    env = {**os.environ, "CUDA_HOME": str(tmp_path)}
    said = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=300, env=env)
    assert said.returncode == 0, said.stderr
    assert said.stderr == ""
    # Without it, the same lines warn: the check can fail.
    loud = subprocess.run([sys.executable, "-c", script.replace(python, "")],
                          capture_output=True, text=True, timeout=300, env=env)
    assert "No CUDA runtime is found" in loud.stderr
