"""Open-in-Studio-Lab button and paired-notebook downloads for the book's pages.

sphinx-book-theme builds the launch dropdown (the rocket) with a Colab entry
from ``launch_buttons.colab_url`` and ``repository.url`` / ``repository.branch``
in ``_config.yml``. It has no SageMaker Studio Lab entry, so this extension
appends one to that same dropdown while the page is being rendered
(``html-page-context``, after the theme's own handlers), derived from the same
repository settings: Studio Lab's import address is
``https://studiolab.sagemaker.aws/import/github/<owner>/<repo>/blob/<branch>/<path>.ipynb``
(it opens notebooks only, not markdown).

The theme's download dropdown offers the page's source (``.md``) and a
``.ipynb`` that it copies from the build's executed notebooks. Where the page
has a jupytext-paired notebook in the repository (``chapters/X.ipynb`` beside
``chapters/X.md``), this extension puts that notebook there instead, so the
download is the very file that Colab and Studio Lab open.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

STUDIO_LAB_IMPORT = "https://studiolab.sagemaker.aws/import/github"


def repository_parts(theme_options: dict) -> tuple[str, str, str, str] | None:
    """(owner, repo, branch, path_to_book) from the theme's repository options."""
    url = theme_options.get("repository_url", "").strip().rstrip("/")
    if url.endswith(".git"):
        url = url[: -len(".git")]
    if "github.com/" not in url:
        return None
    owner, repo = url.split("github.com/", 1)[1].split("/")[:2]
    branch = theme_options.get("repository_branch") or "main"
    book = theme_options.get("path_to_docs", "").strip("/")
    return owner, repo, branch, book


def studio_lab_url(owner: str, repo: str, branch: str, path: str) -> str:
    return f"{STUDIO_LAB_IMPORT}/{owner}/{repo}/blob/{branch}/{path}"


def _launch_group(context: dict[str, Any]) -> dict | None:
    for button in context.get("header_buttons", []):
        if button.get("label") == "launch-buttons":
            return button
    return None


def add_studio_lab_button(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree) -> None:
    group = _launch_group(context)  # present only on notebook pages
    parts = repository_parts(app.config.html_theme_options)
    if group is None or parts is None:
        return
    owner, repo, branch, book = parts
    path = f"{book}/{pagename}.ipynb" if book else f"{pagename}.ipynb"
    group["buttons"].append({
        "type": "link",
        "text": "Studio Lab",
        "tooltip": "Launch on SageMaker Studio Lab",
        "icon": "fas fa-flask",
        "url": studio_lab_url(owner, repo, branch, path),
        "label": "launch-studio-lab",
    })


def offer_paired_notebooks(app: Sphinx, exception: Exception | None) -> None:
    """Put each page's paired notebook where the download button points.

    Runs when the build ends, for every page (not only the pages rewritten by
    this build), so that a notebook refreshed without a change to its .md is
    still the one offered."""
    if exception is not None or app.builder.format != "html":
        return
    sources = Path(app.outdir) / "_sources"
    for docname in sorted(app.env.found_docs):
        paired = Path(app.srcdir) / f"{docname}.ipynb"
        target = sources / f"{docname}.ipynb"
        # The theme writes target (from the executed notebook) on notebook pages.
        if paired.is_file() and target.is_file():
            shutil.copyfile(paired, target)


def setup(app: Sphinx) -> dict:
    # The theme fills header_buttons at priority 501; run after it.
    app.connect("html-page-context", add_studio_lab_button, priority=600)
    app.connect("build-finished", offer_paired_notebooks)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
