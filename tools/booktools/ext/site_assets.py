"""A lighter site, built the same cold or incremental.

Not shipped: the theme's Font Awesome script (its CSS draws the icons), source maps, and what
MathJax's entry script never loads. What three extensions copy only at the end is copied
before any page is written, so that every page links it with ``?v=checksum``, cold or not.
"""
from __future__ import annotations

import importlib
import re
import shutil
from pathlib import Path

from sphinx.application import Sphinx

__all__ = ["FONTAWESOME_TAG", "unused_mathjax"]

FONTAWESOME_TAG = re.compile(
    r'[ \t]*<script\b[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>\s*</script>[ \t]*\n?')


def unused_mathjax(mathjax: Path, entry: str) -> list[Path]:
    """What MathJax, started from mathjax/entry (e.g. tex-chtml.js), never loads."""
    used = set(Path(entry).stem.split("-"))
    return sorted({*(p for p in mathjax.glob("*.js") if p.name != entry),
                   *(p for p in mathjax.glob("output/*") if p.name.split(".")[0] not in used),
                   # input/mml/ stays: TeX input loads its entity tables from there.
                   *(p for p in mathjax.glob("input/*.js")
                     if p.stem in {"tex", "mml", "asciimath"} - used),
                   *(p for p in mathjax.glob("sre/mathmaps/*")
                     if p.name not in ("base.json", "en.json"))})


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


def lighten_site(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    static = Path(app.outdir) / "_static"
    for page in Path(app.outdir).rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        if FONTAWESOME_TAG.search(text):
            page.write_text(FONTAWESOME_TAG.sub("", text), encoding="utf-8")
    entry = Path(app.config.mathjax_path)
    mathjax = static / entry.parent
    for path in {*static.glob("scripts/fontawesome.js*"), *static.rglob("*.map"),
                 *(unused_mathjax(mathjax, entry.name) if mathjax != static else [])}:
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", copy_late_assets)
    # After sphinx-mathjax-offline's copy (priority 500).
    app.connect("build-finished", lighten_site, priority=600)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
