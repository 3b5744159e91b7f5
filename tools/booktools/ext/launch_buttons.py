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
from booktools.book import Repository


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


def page_buttons(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                 doctree) -> None:
    """Colab's entry and a Studio Lab one open the reader notebook, not the MyST source; the
    paired .md offered after the notebook; the "open issue" form in the edition's words."""
    lang, options = i18n.for_sphinx(app.config.language), app.config.html_theme_options
    raw = options.get("repository_url", "")
    groups = {b.get("label"): b for b in context.get("header_buttons", [])}
    launch = groups.get("launch-buttons")  # present only on notebook pages
    if launch is not None and "github.com/" in raw:
        repo = Repository.at(raw, options.get("repository_branch") or "main",
                             options.get("path_to_docs", ""))
        for button in launch["buttons"]:
            if button.get("text") == "Colab":
                button["tooltip"] = lang.ui["launch_colab"]
                button["url"] = repo.colab_url(pagename, options["launch_buttons"]["colab_url"])
        launch["buttons"].append({
            "type": "link", "text": "Studio Lab", "tooltip": lang.ui["launch_studio_lab"],
            "icon": "fas fa-flask", "label": "launch-studio-lab", "url": repo.studio_lab_url(pagename)})
    download = groups.get("download-buttons")
    if download is not None and context.get("page_source_suffix") == ".ipynb" \
            and (Path(app.srcdir) / f"{pagename}.md").is_file():
        download["buttons"].insert(1, {
            "type": "link", "url": f"{context['pathto']('_sources', 1)}/{pagename}.md",
            "text": ".md", "tooltip": lang.ui["download_md"], "icon": "fas fa-file",
            "label": "download-markdown-button"})
    for button in _buttons(context.get("header_buttons", [])):
        if button.get("label") == "source-issues-button" and "github.com/" in raw:
            button["url"] = issue_url(lang.code, pagename, raw)


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
    app.connect("html-page-context", page_buttons, priority=600)
    app.connect("build-finished", copy_markdown_twins)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
