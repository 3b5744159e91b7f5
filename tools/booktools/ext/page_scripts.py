"""Every page's browser console free of errors, and MathJax only where there is math.

- Sphinx 7.4 writes a late inline script twice (sphinx-thebe's ``const`` is then a
  SyntaxError): repeated scripts are dropped (sphinx-doc/sphinx#13402, fixed in 8.2).
- pydata-sphinx-theme's ``default_mode`` is "" unless set ("Got invalid theme mode"):
  ``auto``, its fallback (pydata/pydata-sphinx-theme#1635).
- Sphinx loads MathJax where any page of the toctree has math: dropped where a page has none.
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
