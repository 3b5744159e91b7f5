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

Parts of MathJax that the entry script can never load are not shipped
(``unused``): the other output's code and fonts (``output/svg*`` beside a
``-chtml`` entry, and the reverse), the other input formats' entry scripts, and the speech
rule data of every language but English (the accessibility explorer of the
math menu reads only the reader's language, English here). page_scripts.py
keeps MathJax off the pages without math.
sphinx-mathjax-offline (PyPI, the same MathJax) does not fit: it copies all
of MathJax, every output and language, after the build, and npm stays anyway
for axe-core (tests/browser/axe_scan.py).
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
SPEECH_KEPT = {"base.json", "en.json"}  # sre/mathmaps/: the English speech rules


def unused(entry: str, relative: PurePosixPath) -> bool:
    """Whether MathJax, started from ``entry`` (e.g. tex-chtml.js), never loads this file."""
    outputs = {"chtml", "svg"}
    inputs = {"tex", "mml", "asciimath"}
    used = set(PurePosixPath(entry).stem.split("-"))
    top, name = relative.parts[0], relative.parts[1] if len(relative.parts) > 1 else ""
    stem = name.split(".")[0]
    if top == "output" and stem in outputs and stem not in used:
        return True
    # input/mml/ stays: TeX input loads its entity tables from there.
    if top == "input" and len(relative.parts) == 2 and stem in inputs and stem not in used:
        return True
    if relative.parts[:2] == ("sre", "mathmaps") and relative.name not in SPEECH_KEPT:
        return True
    return False


def _is_local(path: str) -> bool:
    return bool(path) and "://" not in path and not path.startswith("//")


def _package_version(package_dir: Path) -> str:
    return json.loads((package_dir / "package.json").read_text(encoding="utf-8"))["version"]


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
    stamp = f"{PACKAGE} {_package_version(package_dir)} {entry.name} without unused parts"
    if (target / STAMP).is_file() and (target / STAMP).read_text(encoding="utf-8") == stamp:
        return  # already copied by an earlier build
    logger.info(f"offline_mathjax: copying {stamp} into {target}")
    if target.exists():
        shutil.rmtree(target)
    target.mkdir(parents=True)
    shutil.copy2(source / entry.name, target / entry.name)
    for path in sorted(source.rglob("*")):
        relative = PurePosixPath(path.relative_to(source).as_posix())
        if path.is_file() and len(relative.parts) > 1 and not unused(entry.name, relative):
            (target / relative).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / relative)
    shutil.copy2(package_dir / "LICENSE", target / "LICENSE")
    (target / STAMP).write_text(stamp, encoding="utf-8")


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", copy_mathjax)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
