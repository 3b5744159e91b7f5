"""A light site: what the built HTML ships besides the pages themselves.

Runs when the HTML build ends (``build-finished``), over the whole output
folder, so that pages an incremental build did not rewrite are covered too:

- Font Awesome. pydata-sphinx-theme loads a 1.5 MB script (``fontawesome.js``,
  every icon as SVG) on every page, and its CSS has the icon font too, for the
  ~20 icons the theme and the book use. The script tag is removed from every
  page and the script deleted; the icons render from the theme's CSS with the
  font, subset here to the glyphs the pages use (fontTools, a dependency of
  matplotlib) into ``book-solid-900.woff`` and ``book-brands-400.woff``, which
  ``_static/book.css`` declares after the theme's fonts (so they win).
- Source maps (``*.map``, 3.4 MB) are not shipped, nor the comments that point
  browsers' developer tools at them.
- ``index.html``: sphinx-external-toc writes a bare redirect line when none
  exists; this writes a complete small page that redirects to the book's
  first page and links to it (for readers and crawlers without redirects),
  in the edition's language (``start`` in i18n/languages.yml).

And before any page is written (``builder-inited``): the stylesheets that
myst-nb and sphinx-exercise copy into ``_static/`` only when a build ends.
Sphinx gives a page's link a ``?v=checksum`` only for a file already there
when it writes the page, so a cold build had none and an incremental one had
them: two builds of the same inputs differed.
"""
from __future__ import annotations

import html
import re
from pathlib import Path

from sphinx.application import Sphinx

from booktools import i18n

FONTAWESOME_TAG = re.compile(
    r'[ \t]*<script\b[^>]*\bsrc="[^"]*_static/scripts/fontawesome\.js[^"]*"[^>]*>\s*</script>[ \t]*\n?')
SOURCE_MAP_COMMENT = re.compile(r"\n?(?://|/\*)# sourceMappingURL=\S+?\.map(?:\s*\*/)?[ \t]*$", re.MULTILINE)
ICON_NAME = re.compile(r"\bfa-[a-z0-9]+(?:-[a-z0-9]+)*")
CSS_RULE = re.compile(r"([^{}@;]+)\{([^{}]*)\}")
# content: "\f35d", or a custom property that content: var(...) reads.
CONTENT = re.compile(r"(?:content|--[\w-]+)\s*:\s*(\"[^\"]*\"|'[^']*')")
ESCAPE = re.compile(r"\\([0-9a-fA-F]{4,6})")
ICON_SELECTOR = re.compile(r"\.(fa-[a-z0-9-]+)::?before")
WEBFONTS = "_static/vendor/fontawesome/webfonts"
# (the theme's complete font, the subset that book.css declares)
SUBSETS = [("fa-solid-900.ttf", "book-solid-900.woff"),
           ("fa-brands-400.ttf", "book-brands-400.woff")]


def _characters(css_string: str) -> set[int]:
    """The code points in a CSS string, written as escapes or as themselves."""
    return ({int(h, 16) for h in ESCAPE.findall(css_string)}
            | {ord(c) for c in ESCAPE.sub("", css_string)})


def icon_codepoints(stylesheets: list[str], used_names: set[str]) -> set[int]:
    """The Font Awesome code points that pages can show.

    A rule that only names icons (``.fa-rocket:before{content:"\\f135"}``)
    counts when a page uses one of its names; any other rule with such a
    ``content`` or custom property (the theme's own marks, e.g.
    ``--pst-icon-external-link``: external links, admonition titles, toc
    chevrons) always counts."""
    points = set()
    for css in stylesheets:
        for selectors, body in CSS_RULE.findall(css):
            glyphs = {g for value in CONTENT.findall(body) for g in _characters(value)
                      if 0xE000 <= g <= 0xF8FF}  # Font Awesome's private-use area
            if not glyphs:
                continue
            parts = [part.strip() for part in selectors.split(",")]
            names = {ICON_SELECTOR.fullmatch(part).group(1) for part in parts
                     if ICON_SELECTOR.fullmatch(part)}
            if len(names) < len(parts) or names & used_names:
                points |= glyphs
    return points


def used_icon_names(outdir: Path) -> set[str]:
    """Every fa-NAME in the pages and in the scripts they load (which add icons)."""
    names: set[str] = set()
    scripts = [p for p in (outdir / "_static").rglob("*.js")
               if "mathjax" not in p.parts and not p.name.startswith("fontawesome")]
    for path in [*outdir.rglob("*.html"), *scripts]:
        names.update(ICON_NAME.findall(path.read_text(encoding="utf-8", errors="replace")))
    return names


def subset_icon_fonts(outdir: Path) -> None:
    from fontTools import subset  # matplotlib's dependency, so always installed
    from fontTools.ttLib import TTFont

    stylesheets = [p.read_text(encoding="utf-8", errors="replace")
                   for p in (outdir / "_static").rglob("*.css") if "mathjax" not in p.parts]
    points = icon_codepoints(stylesheets, used_icon_names(outdir))
    points |= {0x20, 0xA0}  # spaces inside icon elements
    if not points:
        raise RuntimeError("site_assets: no Font Awesome icon found in the pages")
    options = subset.Options()
    options.flavor = "woff"  # zlib: needs no brotli, and is a few kB here
    options.layout_features = ["*"]
    for full, small in SUBSETS:
        # The font keeps its own time stamp: two builds give the same bytes.
        font = TTFont(outdir / WEBFONTS / full, recalcTimestamp=False)
        subsetter = subset.Subsetter(options=options)
        subsetter.populate(unicodes=points)
        subsetter.subset(font)
        font.flavor = "woff"
        font.save(outdir / WEBFONTS / small)


def strip_fontawesome_script(outdir: Path) -> None:
    for page in outdir.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        stripped = FONTAWESOME_TAG.sub("", text)
        if stripped != text:
            page.write_text(stripped, encoding="utf-8")
    for path in (outdir / "_static/scripts").glob("fontawesome.js*"):
        path.unlink()


def drop_source_maps(outdir: Path) -> None:
    for path in (outdir / "_static").rglob("*.map"):
        path.unlink()
    for path in [*(outdir / "_static").rglob("*.js"), *(outdir / "_static").rglob("*.css")]:
        if "mathjax" in path.parts:
            continue
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        stripped = SOURCE_MAP_COMMENT.sub("", text)
        if stripped != text:
            path.write_text(stripped, encoding="utf-8", errors="surrogateescape")


def write_index(app: Sphinx, outdir: Path) -> None:
    lang = i18n.for_sphinx(app.config.language)
    first = f"{app.config.root_doc}.html"
    title = html.escape(app.config.html_title or app.config.project)
    start = lang.ui["start"].format(book=f'<a href="{first}">{title}</a>')
    favicon = app.builder.config.html_favicon
    icon = (f'\n<link rel="icon" href="_static/{html.escape(Path(favicon).name)}">'
            if favicon and "://" not in favicon else "")
    (outdir / "index.html").write_text(f"""<!DOCTYPE html>
<html lang="{html.escape(lang.code)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<meta http-equiv="refresh" content="0; url={first}">
<link rel="canonical" href="{first}">{icon}
</head>
<body>
<p>{start}</p>
</body>
</html>
""", encoding="utf-8")


def copy_late_assets(app: Sphinx) -> None:
    """Copy, before the pages are written, what myst-nb and sphinx-exercise copy at the end,
    with their own functions (so their file names and places stay theirs)."""
    if app.builder.format != "html":
        return
    from myst_nb.sphinx_ext import add_global_html_resources
    from sphinx_exercise import copy_asset_files
    (Path(app.outdir) / "_static").mkdir(parents=True, exist_ok=True)
    add_global_html_resources(app, None)
    copy_asset_files(app, None)


def lighten_site(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    outdir = Path(app.outdir)
    subset_icon_fonts(outdir)  # reads the pages before they change
    strip_fontawesome_script(outdir)
    drop_source_maps(outdir)
    write_index(app, outdir)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", copy_late_assets)
    # Before sphinx-external-toc's build-finished handler (priority 500), which
    # writes its one-line redirect only where no index.html exists.
    app.connect("build-finished", lighten_site, priority=400)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
