"""Open-in-Studio-Lab button and paired-notebook downloads for the book's pages.

sphinx-book-theme builds the launch dropdown (the rocket) with a Colab entry
from ``launch_buttons.colab_url`` and ``repository.url`` / ``repository.branch``
in ``_config.yml``. It has no SageMaker Studio Lab entry, so this extension
appends one to that same dropdown while the page is being rendered
(``html-page-context``, after the theme's own handlers), derived from the same
repository settings: Studio Lab's import address is
``https://studiolab.sagemaker.aws/import/github/<owner>/<repo>/blob/<branch>/<path>.ipynb``
(it opens notebooks only, not markdown). Both open the page's reader notebook
on the branch ``NOTEBOOK_BRANCH`` (booktools.reader_notebooks: its MyST
rendered as plain Markdown), at the path of its source notebook.

The book is built from the chapter notebooks, so the theme's download
dropdown offers the page's source, ``chapters/X.ipynb``: the very file that
Colab and Studio Lab open. Where that notebook has a jupytext-paired MyST
markdown twin (``chapters/X.md``, the file people edit), this extension
offers it beside the notebook and copies it into the site's ``_sources/``.

The theme's "open issue" link opens a form whose title and text are in the
edition's words (``issue_title``, ``issue_body``), naming the edition's page
by its path and address, not the English page's path.

The buttons' tooltips are in the page's language (``launch_colab``,
``launch_studio_lab`` and ``download_md`` in i18n/languages.yml): the theme
writes "Launch on" and the service's name, an order not every language has.
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from booktools import i18n
from booktools.book import NOTEBOOK_BRANCH

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


def _header_group(context: dict[str, Any], label: str) -> dict | None:
    """The theme's header dropdown of that label ("launch-buttons", "download-buttons")."""
    for button in context.get("header_buttons", []):
        if button.get("label") == label:
            return button
    return None


def _words(app: Sphinx) -> dict:
    return i18n.for_sphinx(app.config.language).ui


def add_studio_lab_button(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree) -> None:
    group = _header_group(context, "launch-buttons")  # present only on notebook pages
    parts = repository_parts(app.config.html_theme_options)
    if group is None or parts is None:
        return
    owner, repo, branch, book = parts
    for button in group["buttons"]:
        if button.get("text") == "Colab":
            button["tooltip"] = _words(app)["launch_colab"]
            # The reader notebook (plain Markdown), not the MyST source on `branch`.
            button["url"] = button["url"].replace(f"/blob/{branch}/", f"/blob/{NOTEBOOK_BRANCH}/", 1)
    branch = NOTEBOOK_BRANCH
    path = f"{book}/{pagename}.ipynb" if book else f"{pagename}.ipynb"
    group["buttons"].append({
        "type": "link",
        "text": "Studio Lab",
        "tooltip": _words(app)["launch_studio_lab"],
        "icon": "fas fa-flask",
        "url": studio_lab_url(owner, repo, branch, path),
        "label": "launch-studio-lab",
    })


def _buttons(buttons: list) -> list:
    """Every button of the header, those inside its dropdowns too."""
    return [b for button in buttons for b in [button, *_buttons(button.get("buttons", []))]]


def issue_url(code: str, pagename: str, repo_url: str) -> str:
    """A new issue's form, its title and text in the edition's words, naming the
    edition's page (its path from the site's root and its address)."""
    from urllib.parse import urlencode

    from booktools.book import book_config
    lang = i18n.language(code)
    page = i18n.site_path(code, pagename)
    url = book_config()["html"]["baseurl"].rstrip("/") + "/" + page
    words = {"page": f"/{page}", "url": url, "edition": lang.name}
    query = urlencode({"title": lang.ui["issue_title"].format(**words),
                       "body": lang.ui["issue_body"].format(**words)})
    return f"{repo_url.rstrip('/')}/issues/new?{query}"


def localise_issue_button(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree) -> None:
    """The theme's "open issue" link pre-fills English naming the English page's path."""
    url = app.config.html_theme_options.get("repository_url", "")
    for button in _buttons(context.get("header_buttons", [])):
        if button.get("label") == "source-issues-button" and "github.com/" in url:
            button["url"] = issue_url(i18n.for_sphinx(app.config.language).code, pagename, url)


def offer_markdown_twin(app: Sphinx, pagename: str, templatename: str,
                        context: dict[str, Any], doctree) -> None:
    """Add the page's paired .md to the download dropdown, after the notebook."""
    group = _header_group(context, "download-buttons")
    if group is None or context.get("page_source_suffix") != ".ipynb" \
            or not (Path(app.srcdir) / f"{pagename}.md").is_file():
        return
    group["buttons"].insert(1, {
        "type": "link",
        "url": f"{context['pathto']('_sources', 1)}/{pagename}.md",
        "text": ".md",
        "tooltip": _words(app)["download_md"],
        "icon": "fas fa-file",
        "label": "download-markdown-button",
    })


def copy_markdown_twins(app: Sphinx, exception: Exception | None) -> None:
    """Put each page's paired .md under _sources/, where its download link points."""
    if exception is not None or app.builder.format != "html":
        return
    sources = Path(app.outdir) / "_sources"
    for docname in sorted(app.env.found_docs):
        paired = Path(app.srcdir) / f"{docname}.md"
        if paired.is_file() and (Path(app.srcdir) / f"{docname}.ipynb").is_file():
            target = sources / f"{docname}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(paired, target)


def setup(app: Sphinx) -> dict:
    # The theme fills header_buttons at priority 501; run after it.
    app.connect("html-page-context", add_studio_lab_button, priority=600)
    app.connect("html-page-context", offer_markdown_twin, priority=600)
    app.connect("html-page-context", localise_issue_button, priority=600)
    app.connect("build-finished", copy_markdown_twins)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
