"""The reader notebooks (booktools.reader_notebooks): plain Markdown, the same code, and they run."""
from __future__ import annotations

import re

import nbformat
import pytest

from booktools import i18n, reader_notebooks
from booktools.book import ROOT
from booktools.colab import run_as_a_reader

CODES = [lang.code for lang in i18n.languages()]
# What a reader would see raw if a construct were left: checked beside myst_left's parse.
RAW = re.compile(r"\{(ref|doc|numref|eq|term)\}`|^\([\w.:-]+\)=\s*$|^:::|^```\{", re.M)


@pytest.fixture(scope="module")
def written(built_site):
    """The reader notebooks the site build wrote (python -m booktools.reader_notebooks)."""
    return reader_notebooks.OUT, sorted(reader_notebooks.OUT.rglob("*.ipynb"))


def _pairs(written):
    out, paths = written
    for path in paths:
        yield nbformat.read(ROOT / path.relative_to(out), as_version=4), \
            nbformat.read(path, as_version=4), path.relative_to(out)


def test_one_per_chapter_and_edition_at_its_source_path(written):
    out, paths = written
    expected = {reader_notebooks._notebook_path(code, chapter).relative_to(ROOT)
                for code in CODES for chapter in reader_notebooks._chapters(code)}
    assert {p.relative_to(out) for p in paths} == expected
    assert (out / "chapters/tensors.ipynb").is_file()
    assert (out / "i18n/zh-CN/chapters/tensors.ipynb").is_file()
    # the published branch's README, beside them
    assert "Edit the chapters in the" in (out / "README.md").read_text(encoding="utf-8")


def test_no_markdown_cell_holds_myst(written):
    left = [f"{where} cell {i}: {found}" for source, reader, where in _pairs(written)
            for i, cell in enumerate(reader.cells) if cell.cell_type == "markdown"
            for found in reader_notebooks.myst_left(cell.source) + RAW.findall(cell.source)]
    assert left == []


def test_code_cells_tags_and_outputs_kept(written):
    for source, reader, where in _pairs(written):
        kept = [(c.source, c.metadata.get("tags"), c.get("outputs")) for c in source.cells
                if c.cell_type == "code"]
        assert kept == [(c.source, c.metadata.get("tags"), c.get("outputs"))
                        for c in reader.cells if c.cell_type == "code"], where
        first = next(c for c in reader.cells if c.cell_type == "code")
        assert "%pip install" in first.source, where


def test_math_kept(written):
    def count(nb):
        return sum(c.source.count("$") for c in nb.cells if c.cell_type == "markdown")
    for source, reader, where in _pairs(written):
        assert count(reader) == count(source), where


@pytest.mark.parametrize("code", ["en", "zh-CN"])
def test_myst_rendered_as_markdown(code):
    renderer = reader_notebooks._Renderer(code)
    text = ("(x-label)=\n## A section\n\n:::{note}\nSee {ref}`hardware-note` and "
            "{doc}`tensors`.\n:::\n\n:::{admonition} Version notes\nBody.\n:::\n")
    rendered = renderer.markdown(text, "sample")
    base = "https://d2l-gpu-book.github.io/gpu-book/" + ("" if code == "en" else f"{code}/")
    note = {"en": "Note", "zh-CN": reader_notebooks._words("zh-CN")["Note"]}[code]
    assert rendered.startswith("## A section\n\n> **" + note + "**\n>\n> See [")
    assert f"]({base}chapters/intro.html#hardware-note)" in rendered
    assert f"]({base}chapters/tensors.html)" in rendered
    assert "> **Version notes**\n>\n> Body." in rendered
    assert reader_notebooks.myst_left(rendered) == []


def test_exercises_numbered_and_solutions_plain_sections():
    nb = reader_notebooks.convert("en", "exercises")
    text = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "> **Exercise 1: How much faster is a GPU?**" in text
    assert "> **Exercise 4: Two GPUs, two products**" in text
    assert text.count("**Solution**") == 4


@pytest.mark.parametrize("code", ["zh-CN", "ja"])
def test_a_cjk_notebook_slants_nothing_and_titles_as_its_language_does(code):
    renderer = reader_notebooks._Renderer(code)
    rendered = renderer.markdown("张量*放置*在 GPU 上；*x* 与 *y* 不变。", "sample")
    assert rendered == "张量**放置**在 GPU 上；*x* 与 *y* 不变。"
    text = "\n".join(c.source for c in reader_notebooks.convert(code, "exercises").cells
                     if c.cell_type == "markdown")
    exercise = reader_notebooks._words(code)["Exercise"]
    assert f"> **{exercise} 1：" in text and f"{exercise} 1: " not in text
    tensors = reader_notebooks.convert(code, "tensors").cells
    caption = next(c.source for c in tensors if c.cell_type == "markdown"
                   and c.source.startswith("**" + reader_notebooks._words(code)["Fig. %s"] % 1))
    assert not caption.endswith("*")


def test_an_unknown_label_is_named():
    renderer = reader_notebooks._Renderer("en")
    with pytest.raises(ValueError, match=r"here: \{ref\}`nowhere`: no such label in the en"):
        renderer.markdown("See {ref}`nowhere`.", "here")
    with pytest.raises(ValueError, match=r"here: directive \{warning\} has no plain-Markdown"):
        renderer.markdown(":::{warning}\nCareful.\n:::\n", "here")


def test_myst_left_finds_each_construct():
    found = reader_notebooks.myst_left("(a)=\n# T\n\n:::{note}\nx\n:::\n\nSee {ref}`a`.\n")
    assert found == ["label (a)=", "directive {note}", "role {ref}`a`"]


def test_a_chapter_runs_as_a_reader_runs_it(tmp_path):
    # English's alone: each edition's code cells are English's program (test_i18n.py's
    # test_translated_notebook_has_englishs_code...), kept in its reader notebooks
    # (test_code_cells_tags_and_outputs_kept); a run costs a kernel and torch's import.
    path = tmp_path / "devices.ipynb"
    nbformat.write(reader_notebooks.convert("en", "devices"), path)
    assert run_as_a_reader(path, timeout=600) == []
