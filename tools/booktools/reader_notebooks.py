"""The notebooks readers open in Colab and Studio Lab: each chapter's, per edition, in plain Markdown.

    python -m booktools.reader_notebooks [--out DIR]     # default: _build/colab

The chapter notebooks (chapters/X.ipynb, i18n/<code>/chapters/X.ipynb) hold
MyST, which the website renders and Colab and JupyterLab show as it is:
``(label)=``, ``:::{note}``, ``{ref}`label```. This writes a copy of each at
the same path under DIR, its markdown cells rendered as the Markdown those
front ends show: labels dropped, admonitions and exercises as quoted blocks
with their title (the theme's word for "Note" in the edition's language),
solutions as plain sections, ``{ref}``/``{doc}``/``{numref}`` as links to
that edition's page on the site (``html.baseurl``), a figure's caption
below it. Code cells (the first install cell too), their tags, outputs and
the math are kept as they are. myst-parser's own markdown-it parser (with
mdit-py-plugins) finds the MyST; ``myst_left`` says what MyST a rendered
text still holds (none, tests/test_reader_notebooks.py checks).
scripts/publish-notebooks.sh pushes DIR to the branch the launch buttons
open (``NOTEBOOK_BRANCH``).
"""
from __future__ import annotations

import argparse
import copy
import gettext
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from booktools import i18n
from booktools.book import NOTEBOOK_BRANCH, ROOT, book_config

__all__ = ["NOTEBOOK_BRANCH", "OUT", "Target", "parser", "myst_left", "targets",
           "convert", "write", "main"]

OUT = ROOT / "_build" / "colab"
EXTENSIONS = {"colon_fence", "dollarmath", "amsmath", "deflist", "substitution"}  # _config.yml's
ADMONITIONS = ("note", "tip", "hint", "important", "warning", "caution", "attention", "danger",
               "error", "seealso")
ROLE = re.compile(r"\{(?P<role>ref|doc|numref)\}`(?P<body>[^`]+)`")
EXPLICIT = re.compile(r"^(?P<text>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
OPTION = re.compile(r"^:(?P<key>[\w-]+):\s*(?P<value>.*)$")


@lru_cache(maxsize=1)
def parser():
    """myst-parser's markdown-it, with the extensions the book enables."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions=EXTENSIONS), RendererHTML)


def myst_left(markdown: str) -> list[str]:
    """The MyST constructs a Markdown text still holds, each named (none: plain Markdown)."""
    found = []
    for token in parser().parse(markdown):
        if token.type == "myst_target":
            found.append(f"label ({token.content})=")
        elif token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
            found.append(f"directive {token.info.split()[0]}")
        elif token.type == "myst_block_break":
            found.append("block break +++")
        for child in token.children or []:
            if child.type == "myst_role":
                found.append(f"role {{{child.meta['name']}}}`{child.content}`")
    return found


@dataclass(frozen=True)
class Target:
    chapter: str  # its name: "tensors"
    anchor: str  # "" for the chapter itself
    text: str  # what a link to it says


def _heading(line: str) -> str | None:
    found = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
    return found[1] if found else None


def _words(code: str) -> dict[str, str]:
    """Sphinx's words the site uses for these, in the edition's language (its overrides first)."""
    import sphinx
    lang = i18n.language(code)
    catalog = gettext.translation("sphinx", Path(sphinx.__file__).parent / "locale",
                                  [lang.sphinx], fallback=True)
    words = {"Note": catalog.gettext("Note"), "Fig. %s": catalog.gettext("Fig. %s")}
    for name in ADMONITIONS:
        english = {"seealso": "See also"}.get(name, name.capitalize())
        words[english] = catalog.gettext(english)
    words.update({k: v for k, v in lang.interface.items() if k in words})
    words["Exercise"] = i18n.exercise_word(code)
    words["Solution"] = lang.ui["solution"]
    return words


def _notebook_path(code: str, chapter: str) -> Path:
    return ROOT / "chapters" / f"{chapter}.ipynb" if code == "en" else i18n.notebook(code, chapter)


def _chapters(code: str) -> list[str]:
    return [page.removeprefix("chapters/") for page in i18n.edition_pages(code)
            if page.startswith("chapters/")]


def targets(code: str) -> dict[str, Target]:
    """Every label an edition's chapters define, and each chapter's name (for {doc})."""
    import nbformat

    found: dict[str, Target] = {}
    words = _words(code)
    for chapter in _chapters(code):
        nb = nbformat.read(_notebook_path(code, chapter), as_version=4)
        figures = 0
        first = True
        for cell in nb.cells:
            if cell.cell_type == "code":
                name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name")
                if name:
                    figures += 1
                    found[name] = Target(chapter, name, words["Fig. %s"] % figures)
                continue
            lines = cell.source.splitlines()
            for i, line in enumerate(lines):
                label = re.match(r"^\((?P<label>[\w.:-]+)\)=\s*$", line)
                following = next((later for later in lines[i + 1:] if later.strip()), "")
                if label and _heading(following) is not None:
                    chapter_label = first and following.startswith("# ")
                    found[label["label"]] = Target(chapter, "" if chapter_label else label["label"],
                                                   _heading(following))
                if _heading(line) is not None and line.startswith("# ") and first:
                    found[f"chapters/{chapter}"] = Target(chapter, "", _heading(line))
                    first = False
                exercise = re.match(r"^```+\{exercise\}\s*(.*)$", line)
                if exercise:
                    option = next((OPTION.match(later) for later in lines[i + 1:]
                                   if OPTION.match(later)
                                   and OPTION.match(later)["key"] == "label"), None)
                    if option:
                        found[option["value"]] = Target(chapter, option["value"], exercise[1])
    return found


def _url(code: str, target: Target) -> str:
    base = book_config()["html"]["baseurl"].rstrip("/") + "/"
    page = i18n.site_path(code, f"chapters/{target.chapter}")
    return base + page + (f"#{target.anchor}" if target.anchor else "")


def _role(code: str, found: dict[str, Target], chapter: str, where: str):
    def link(match: re.Match) -> str:
        body = match["body"].strip()
        explicit = EXPLICIT.match(body)
        text, name = (explicit["text"], explicit["target"]) if explicit else (None, body)
        if match["role"] == "doc":
            name = "chapters/" + name.rsplit("/", 1)[-1].removesuffix(".md").removesuffix(".ipynb")
        target = found.get(name)
        if target is None:
            raise ValueError(f"{where}: {{{match['role']}}}`{body}`: no such label in the "
                             f"{code} edition")
        return f"[{text or target.text}]({_url(code, target)})"
    return link


def _options(body: list[str]) -> tuple[dict[str, str], list[str]]:
    """A directive's options (``:key: value`` lines or a ``---`` block) and the rest of its body."""
    options, i = {}, 0
    if body and body[0].strip() == "---":
        end = body.index("---", 1)
        import yaml
        options = yaml.safe_load("\n".join(body[1:end])) or {}
        i = end + 1
    else:
        while i < len(body) and OPTION.match(body[i]):
            options[OPTION.match(body[i])["key"]] = OPTION.match(body[i])["value"]
            i += 1
    while i < len(body) and not body[i].strip():
        i += 1
    return options, body[i:]


def _quoted(title: str, body: str) -> str:
    lines = [f"**{title}**", ""] + body.splitlines()
    return "\n".join(f"> {line}".rstrip() for line in lines)


class _Renderer:
    def __init__(self, code: str, chapter: str):
        self.code, self.chapter = code, chapter
        self.words = _words(code)
        self.found = targets(code)
        self.exercises = 0

    def markdown(self, text: str, where: str) -> str:
        """The cell's MyST as plain Markdown."""
        lines = text.split("\n")
        out: list[str] = []
        done = 0
        for token in parser().parse(text):
            if token.level != 0 or token.map is None or token.nesting == -1:
                continue
            start, end = token.map
            if token.type == "myst_target":
                replacement = None
            elif token.type in ("fence", "colon_fence") and token.info.strip().startswith("{"):
                replacement = self.directive(token, where)
            else:
                continue
            out += lines[done:start]
            if replacement is not None:
                out.append(replacement)
            elif out and not out[-1].strip() and end < len(lines) and not lines[end].strip():
                end += 1  # a dropped label leaves no double blank line
            done = end
        out += lines[done:]
        rendered = "\n".join(out).strip("\n") + ("\n" if text.endswith("\n") else "")
        return ROLE.sub(_role(self.code, self.found, self.chapter, where), rendered)

    def directive(self, token, where: str) -> str | None:
        name, _, argument = token.info.strip().partition(" ")
        name = name.strip("{}")
        options, body = _options(token.content.rstrip("\n").split("\n"))
        inner = self.markdown("\n".join(body), where)
        if name in ADMONITIONS:
            english = {"seealso": "See also"}.get(name, name.capitalize())
            return _quoted(argument.strip() or self.words[english], inner)
        if name == "admonition":
            return _quoted(argument.strip(), inner)
        if name == "exercise":
            self.exercises += 1
            title = f"{self.words['Exercise']} {self.exercises}"
            title += f": {argument.strip()}" if argument.strip() else ""
            return _quoted(title, inner)
        if name in ("solution-start", "solution"):
            head = f"**{self.words['Solution']}**"
            return head + (f"\n\n{inner}" if inner.strip() else "")
        if name in ("solution-end",):
            return None
        if name == "dropdown":
            return f"**{argument.strip()}**\n\n{inner}"
        raise ValueError(f"{where}: directive {{{name}}} has no plain-Markdown form "
                         "(booktools.reader_notebooks)")


def convert(code: str, chapter: str):
    """The reader's notebook of one chapter in one edition (an nbformat notebook)."""
    import nbformat

    source = _notebook_path(code, chapter)
    nb = nbformat.read(source, as_version=4)
    reader = copy.deepcopy(nb)
    reader.metadata.pop("jupytext", None)  # no paired .md beside it
    renderer = _Renderer(code, chapter)
    cells = []
    for index, cell in enumerate(reader.cells):
        where = f"{source.relative_to(ROOT)} cell {index}"
        if cell.cell_type == "markdown":
            cell.source = renderer.markdown(cell.source, where)
            if not cell.source.strip():
                continue
        cells.append(cell)
        figure = cell.metadata.get("mystnb", {}).get("figure", {})
        if cell.cell_type == "code" and figure.get("caption"):
            target = renderer.found.get(figure.get("name", ""))
            number = f"{target.text} " if target else ""
            caption = renderer.markdown(figure["caption"], where)
            cells.append(nbformat.v4.new_markdown_cell(f"*{number}{caption.strip()}*"))
    reader.cells = cells
    for index, cell in enumerate(cells):  # unique and the same every build
        cell["id"] = f"{chapter}-{index}"
    return reader


def write(out: Path = OUT, codes: list[str] | None = None) -> list[Path]:
    """Write every edition's reader notebooks under out, at their sources' paths."""
    import nbformat

    written = []
    for code in codes or [lang.code for lang in i18n.languages()]:
        for chapter in _chapters(code):
            path = out / _notebook_path(code, chapter).relative_to(ROOT)
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(convert(code, chapter), path)
            written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    arguments = argparse.ArgumentParser(prog="python -m booktools.reader_notebooks",
                                        description=__doc__.splitlines()[0])
    arguments.add_argument("--out", type=Path, default=OUT, help="default: _build/colab")
    arguments.add_argument("codes", nargs="*", help="editions (default: all)")
    args = arguments.parse_args(argv)
    try:
        written = write(args.out, args.codes or None)
    except ValueError as error:
        print(f"reader_notebooks: {error}", file=sys.stderr)
        return 1
    print(f"reader_notebooks: {len(written)} notebooks in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
