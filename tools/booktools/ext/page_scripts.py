"""Keep the browser console of every page free of errors.

Two errors appear on every page of a Jupyter Book 1 site with this tool chain
(found by tests/browser/test_site_browser.py):

- ``Identifier 'THEBE_JS_URL' has already been declared``: Sphinx 7.4 writes an
  inline ``<script>`` twice when an extension adds it after the builder has
  started (sphinx-thebe and sphinx-togglebutton do): the builder stores it once
  with the file name ``None`` and once more, when it prepares writing, with
  ``''``, and the two do not compare equal. The second copy of sphinx-thebe's
  ``const`` declarations is a SyntaxError. We drop repeated scripts from each
  page's script list before the page is rendered.
- ``Got invalid theme mode: . Resetting to auto.``: pydata-sphinx-theme starts
  a first-time visitor in the ``html_context`` value ``default_mode``, which is
  empty unless set. We set it to ``auto`` (what the theme falls back to anyway:
  the reader's system preference) unless the book sets it.

And MathJax (1.2 MB) only on the pages that have math: Sphinx counts a page as
having math when any page of its toctree has some, so the book's first page,
whose toctree holds every chapter, loaded MathJax without a formula of its own.
We drop MathJax's scripts from a page whose own document has no math.
"""
from __future__ import annotations

from typing import Any

from sphinx.application import Sphinx
from sphinx.config import Config


def default_color_mode(app: Sphinx, config: Config) -> None:
    if not config.html_context.get("default_mode"):
        config.html_context["default_mode"] = "auto"


def drop_repeated_scripts(app: Sphinx, pagename: str, templatename: str,
                          context: dict[str, Any], doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        filename = getattr(script, "filename", script) or ""
        attributes = tuple(sorted(getattr(script, "attributes", {}).items()))
        key = (filename, getattr(script, "priority", None), attributes)
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique  # the builder's own list: it is restored after each page


def _is_mathjax(script, mathjax_path: str) -> bool:
    filename = getattr(script, "filename", script) or ""
    body = getattr(script, "attributes", {}).get("body", "")
    # The builder stores a local path as _static/PATH.
    return bool(filename) and filename in (mathjax_path, f"_static/{mathjax_path}") or body.startswith(
        ("window.MathJax =", "MathJax.Hub.Config("))


def mathjax_only_with_math(app: Sphinx, pagename: str, templatename: str,
                           context: dict[str, Any], doctree) -> None:
    scripts = context.get("script_files")
    if not scripts or app.env.get_domain("math").data["has_equations"].get(pagename, False):
        return
    scripts[:] = [s for s in scripts if not _is_mathjax(s, app.config.mathjax_path)]


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", default_color_mode)
    # After sphinx.ext.mathjax's own handler (priority 500) has added them.
    app.connect("html-page-context", mathjax_only_with_math, priority=890)
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
