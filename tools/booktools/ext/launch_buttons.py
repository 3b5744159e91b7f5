"""The launch and download buttons of the book's pages, beyond what sphinx-book-theme makes.

A Studio Lab entry in the theme's launch dropdown (the theme has none) beside its Colab one,
both opening the page's reader notebook on ``NOTEBOOK_BRANCH`` (booktools.reader_notebooks);
the paired .md offered for download beside the notebook (and copied into _sources/); the
"open issue" form and the tooltips in the edition's words (i18n/languages.yml).
"""
from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from sphinx.application import Sphinx

from booktools import i18n
from booktools.book import NOTEBOOK_BRANCH, STUDIO_LAB_IMPORT


def _group(context: dict[str, Any], label: str) -> dict | None:
    """The theme's header dropdown of that label ("launch-buttons", "download-buttons")."""
    return next((b for b in context.get("header_buttons", []) if b.get("label") == label), None)


def _ui(app: Sphinx) -> dict:
    return i18n.for_sphinx(app.config.language).ui


def add_studio_lab_button(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree) -> None:
    """Colab's entry and a Studio Lab one open the reader notebook, not the MyST source."""
    group = _group(context, "launch-buttons")  # present only on notebook pages
    options = app.config.html_theme_options
    url = options.get("repository_url", "").strip().rstrip("/").removesuffix(".git")
    if group is None or "github.com/" not in url:
        return
    owner, repo = url.split("github.com/", 1)[1].split("/")[:2]
    branch = options.get("repository_branch") or "main"
    book = options.get("path_to_docs", "").strip("/")
    for button in group["buttons"]:
        if button.get("text") == "Colab":
            button["tooltip"] = _ui(app)["launch_colab"]
            button["url"] = button["url"].replace(f"/blob/{branch}/", f"/blob/{NOTEBOOK_BRANCH}/", 1)
    path = f"{book}/{pagename}.ipynb" if book else f"{pagename}.ipynb"
    group["buttons"].append({
        "type": "link", "text": "Studio Lab", "tooltip": _ui(app)["launch_studio_lab"],
        "icon": "fas fa-flask", "label": "launch-studio-lab",
        "url": f"{STUDIO_LAB_IMPORT}/{owner}/{repo}/blob/{NOTEBOOK_BRANCH}/{path}"})


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
    group = _group(context, "download-buttons")
    if group is None or context.get("page_source_suffix") != ".ipynb" \
            or not (Path(app.srcdir) / f"{pagename}.md").is_file():
        return
    group["buttons"].insert(1, {
        "type": "link", "url": f"{context['pathto']('_sources', 1)}/{pagename}.md",
        "text": ".md", "tooltip": _ui(app)["download_md"], "icon": "fas fa-file",
        "label": "download-markdown-button"})


def copy_markdown_twins(app: Sphinx, exception: Exception | None) -> None:
    """Put each page's paired .md under _sources/, where its download link points."""
    if exception is not None or app.builder.format != "html":
        return
    for docname in sorted(app.env.found_docs):
        paired = Path(app.srcdir) / f"{docname}.md"
        if paired.is_file() and (Path(app.srcdir) / f"{docname}.ipynb").is_file():
            target = Path(app.outdir) / "_sources" / f"{docname}.md"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(paired, target)


def setup(app: Sphinx) -> dict:
    # The theme fills header_buttons at priority 501; run after it.
    for handler in (add_studio_lab_button, offer_markdown_twin, localise_issue_button):
        app.connect("html-page-context", handler, priority=600)
    app.connect("build-finished", copy_markdown_twins)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
