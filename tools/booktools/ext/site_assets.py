"""Every page the same cold or incremental, and no icon script.

What three extensions copy only at the end is copied before any page is written, so that every
page links it with ``?v=checksum``, cold or not. The theme's Font Awesome script (1.5 MB on
every page) is neither linked nor shipped: the theme's CSS draws the icons with its font.
"""
from __future__ import annotations

import importlib
import re
from pathlib import Path

from sphinx.application import Sphinx

__all__ = ["FONTAWESOME_TAG"]

FONTAWESOME_TAG = re.compile(
    r'[ \t]*<script\b[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>\s*</script>[ \t]*\n?')


def copy_late_assets(app: Sphinx) -> None:
    """Copy what myst-nb, sphinx-exercise and sphinx-mathjax-offline copy at the end, now."""
    if app.builder.format != "html":
        return
    from myst_nb.sphinx_ext import add_global_html_resources
    from sphinx_exercise import copy_asset_files
    (Path(app.outdir) / "_static").mkdir(parents=True, exist_ok=True)
    add_global_html_resources(app, None)
    copy_asset_files(app, None)
    if "sphinx-mathjax-offline" in app.extensions:
        importlib.import_module("sphinx-mathjax-offline").copy_mathjax_files(app, None)


def drop_icon_script(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if FONTAWESOME_TAG.search(text):
            page.write_text(FONTAWESOME_TAG.sub("", text), encoding="utf-8")
    for path in (Path(app.outdir) / "_static" / "scripts").glob("fontawesome.js*"):
        path.unlink()


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", copy_late_assets)
    app.connect("build-finished", drop_icon_script)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
