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


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", default_color_mode)
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
