"""Serve MathJax from the site itself, so that pages typeset math offline.

MathJax comes from the npm registry at the version pinned in package.json and
package-lock.json (``bash scripts/fetch_mathjax.sh`` installs it into
``node_modules/``, which is not committed). When ``mathjax_path`` is a path
inside the site (e.g. ``mathjax/tex-chtml.js``, which Sphinx reads relative to
``_static/``), this extension copies MathJax's browser build into
``_static/mathjax/`` when the builder starts: the entry script named by
``mathjax_path`` and every folder next to it, because MathJax loads its fonts
and on-demand TeX extensions from paths relative to the entry script.
A ``mathjax_path`` with a scheme (the CDN default) is left alone.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path, PurePosixPath

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError
from sphinx.util import logging

logger = logging.getLogger(__name__)

PACKAGE = "mathjax"
BROWSER_BUILD = "es5"  # the folder of the npm package that browsers load
STAMP = ".installed-from"


def _is_local(path: str) -> bool:
    return bool(path) and "://" not in path and not path.startswith("//")


def _package_version(package_dir: Path) -> str:
    return json.loads((package_dir / "package.json").read_text())["version"]


def copy_mathjax(app: Sphinx) -> None:
    if app.builder.format != "html" or not _is_local(app.config.mathjax_path):
        return
    entry = PurePosixPath(app.config.mathjax_path.split("?")[0])
    if len(entry.parts) != 2:
        raise ExtensionError(
            f"mathjax_path {app.config.mathjax_path!r}: expected FOLDER/ENTRY.js "
            "inside _static (e.g. mathjax/tex-chtml.js)")
    package_dir = Path(app.srcdir) / "node_modules" / PACKAGE
    source = package_dir / BROWSER_BUILD
    if not (source / entry.name).is_file():
        raise ExtensionError(
            f"{source / entry.name} is missing: the site serves MathJax itself. "
            "Install it with: bash scripts/fetch_mathjax.sh (needs npm)")
    target = Path(app.outdir) / "_static" / entry.parent
    stamp = f"{PACKAGE} {_package_version(package_dir)} {entry.name}"
    if (target / STAMP).is_file() and (target / STAMP).read_text() == stamp:
        return  # already copied by an earlier build
    logger.info(f"offline_mathjax: copying {stamp} into {target}")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copy2(source / entry.name, target / entry.name)
    for folder in sorted(p for p in source.iterdir() if p.is_dir()):
        shutil.copytree(folder, target / folder.name)
    shutil.copy2(package_dir / "LICENSE", target / "LICENSE")
    (target / STAMP).write_text(stamp)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", copy_mathjax)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
