"""Every page's browser console free of errors, and MathJax only where there is math.

- Sphinx 7.4 writes an inline script added after the builder started twice (stored
  once with the file name None, once with ''): sphinx-thebe's second ``const
  THEBE_JS_URL`` is a SyntaxError. Repeated scripts are dropped from each page
  (fixed upstream in Sphinx 8.2: sphinx-doc/sphinx#13402).
- pydata-sphinx-theme starts a first visit in the ``default_mode`` of html_context,
  "" unless set: "Got invalid theme mode". It is set to ``auto``, the theme's
  fallback (pydata/pydata-sphinx-theme#1635).
- Sphinx loads MathJax on a page when any page of its toctree has math (the first
  page holds every chapter's): its scripts are dropped where the page has none.
"""
from __future__ import annotations

from sphinx.application import Sphinx
from sphinx.config import Config

__all__ = ["default_color_mode", "drop_repeated_scripts", "mathjax_only_with_math"]


def default_color_mode(app: Sphinx, config: Config) -> None:
    if not config.html_context.get("default_mode"):
        config.html_context["default_mode"] = "auto"


def drop_repeated_scripts(app: Sphinx, pagename, templatename, context: dict, doctree) -> None:
    scripts, seen, unique = context.get("script_files") or [], set(), []
    for script in scripts:
        key = (getattr(script, "filename", script) or "", getattr(script, "priority", None),
               tuple(sorted(getattr(script, "attributes", {}).items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    scripts[:] = unique  # the builder's own list: it is restored after each page


def _is_mathjax(script, mathjax_path: str) -> bool:
    filename = getattr(script, "filename", script) or ""
    body = getattr(script, "attributes", {}).get("body", "")
    return bool(filename) and filename in (mathjax_path, f"_static/{mathjax_path}") or body.startswith(
        ("window.MathJax =", "MathJax.Hub.Config("))


def mathjax_only_with_math(app: Sphinx, pagename, templatename, context: dict, doctree) -> None:
    scripts = context.get("script_files")
    if scripts and not app.env.get_domain("math").data["has_equations"].get(pagename, False):
        scripts[:] = [s for s in scripts if not _is_mathjax(s, app.config.mathjax_path)]


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", default_color_mode)
    # After sphinx.ext.mathjax's own handler (priority 500) has added them.
    app.connect("html-page-context", mathjax_only_with_math, priority=890)
    app.connect("html-page-context", drop_repeated_scripts, priority=900)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
