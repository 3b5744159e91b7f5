"""Every chapter notebook opens ready to run in Colab and SageMaker Studio Lab.

The launch buttons open each page's reader notebook (booktools.reader_notebooks:
the paired ``.ipynb`` with its MyST rendered as Markdown, on the branch
booktools.book.NOTEBOOK_BRANCH), so the paired notebook must exist, install the
book's helpers when they are missing
(from the repository and branch named in _config.yml), ask Colab for a GPU
runtime, and draw its figures by code: an image file referenced by a relative
path loads on the website but not in Colab, which opens the notebook alone.
"""
from __future__ import annotations

import json
import re

import pytest

from booktools.book import ROOT, repository, toc_pages

PAGES = toc_pages()

# The install cell: its pip line may name the package or not ("d2lgpu @ URL"
# or just the URL) and say -q or --quiet, as long as it fits 80 columns (the
# website does not wrap code) and is the same in every chapter.
INSTALL_CELL = """\
# Colab or Studio Lab: install this book's helpers if they are missing.
try:
    import d2lgpu
except ModuleNotFoundError:
    %pip install (?:-q|--quiet) "(?:d2lgpu @ )?{pip_url}"
    import d2lgpu"""
SHORTEST_INSTALL_LINE = '    %pip install -q "{pip_url}"'

# Markdown image syntax, HTML <img>, and MyST/Sphinx image directives
# (as markdown cells carry them: ```{figure} path or :::{image} path).
IMAGE_REFERENCES = [
    re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)"),
    re.compile(r"<img\b[^>]*\bsrc\s*=\s*[\"']([^\"']+)", re.IGNORECASE),
    re.compile(r"^\s*(?:```+|:::+)\s*\{(?:figure|image)\}\s*(\S+)", re.MULTILINE),
    re.compile(r"^\s*\.\.\s+(?:figure|image)::\s*(\S+)", re.MULTILINE),
]
ABSOLUTE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:|//)", re.IGNORECASE)


def _notebook(page: str) -> dict:
    path = ROOT / f"{page}.ipynb"
    assert path.is_file(), (
        f"{page}.ipynb is missing: the Colab and Studio Lab buttons of {page} open it "
        f"(make it with: bash scripts/refresh.sh {page}.md)")
    return json.loads(path.read_text(encoding="utf-8"))


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else src


def _install_cell(page: str) -> str:
    code = [c for c in _notebook(page)["cells"] if c["cell_type"] == "code"]
    assert code, f"{page} has no code cell"
    return _source(code[0]).strip()


@pytest.mark.parametrize("page", PAGES)
def test_first_code_cell_installs_the_helpers_when_missing(page):
    pip_url = repository().pip_url()
    # From git, or (once released: python -m booktools.release pin) d2lgpu from PyPI,
    # at the version CITATION.cff names.
    version = re.search(r'^version: "(.*)"$', (ROOT / "CITATION.cff").read_text(), re.M)[1]
    pattern = re.escape(INSTALL_CELL).replace(
        re.escape("{pip_url}"), f"(?:{re.escape(pip_url)}|d2lgpu=={re.escape(version)})")
    # re.escape escaped the pattern's own groups too: restore them.
    for group in ("(?:-q|--quiet)", "(?:d2lgpu @ )?", "(?:"):
        pattern = pattern.replace(re.escape(group), group)
    cell = _install_cell(page)
    assert re.fullmatch(pattern, cell), (
        f"{page}: the first code cell must be the install cell, e.g.:\n"
        + INSTALL_CELL.replace("{pip_url}", pip_url))
    long = [line for line in cell.splitlines() if len(line) > 80]
    assert long == [], "lines over 80 columns, e.g. use: " + SHORTEST_INSTALL_LINE.format(pip_url=pip_url)


def test_every_chapter_has_the_same_install_cell():
    cells = {page: _install_cell(page) for page in PAGES}
    assert len(set(cells.values())) == 1, cells


@pytest.mark.parametrize("page", PAGES)
def test_notebook_asks_colab_for_a_gpu(page):
    meta = _notebook(page)["metadata"]
    assert meta.get("accelerator") == "GPU"
    assert meta.get("colab", {}).get("gpuType"), "metadata.colab.gpuType names the GPU Colab starts"
    assert meta.get("kernelspec", {}).get("name") == "python3"


@pytest.mark.parametrize("page", PAGES)
def test_no_markdown_cell_loads_an_image_by_relative_path(page):
    relative = []
    for index, cell in enumerate(_notebook(page)["cells"]):
        if cell["cell_type"] != "markdown":
            continue
        for pattern in IMAGE_REFERENCES:
            for target in pattern.findall(_source(cell)):
                if not ABSOLUTE.match(target):
                    relative.append(f"cell {index}: {target}")
    assert relative == [], "draw figures by code (a remove-input cell) so they load in Colab"



GITHUB_ADDRESS = re.compile(
    r"https://(?:github\.com|raw\.githubusercontent\.com)/([\w.-]+)/([\w.-]+?)(?:\.git)?[/@]([\w.-]+)")


@pytest.mark.parametrize("page", PAGES)
def test_every_repository_address_in_a_notebook_is_the_configured_one(page):
    # A cell that fetches from the repository (the install cell, a script
    # downloaded beside the notebook in Colab) must follow _config.yml too.
    repo = repository()
    wrong = []
    for index, cell in enumerate(_notebook(page)["cells"]):
        for owner, name, ref in GITHUB_ADDRESS.findall(_source(cell)):
            if (owner, name) != (repo.owner, repo.name) or ref not in (repo.branch, "blob", "tree"):
                wrong.append(f"cell {index}: {owner}/{name} at {ref}")
    assert wrong == [], f"expected {repo.owner}/{repo.name} at {repo.branch}"
