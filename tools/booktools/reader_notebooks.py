"""The notebooks readers open in Colab and Studio Lab: each chapter's, per edition, in plain Markdown.

    python -m booktools.reader_notebooks    # every edition's, under _build/colab

Each chapter notebook at its source's path, its MyST as plain Markdown: labels dropped, notes
and exercises quoted and titled in the edition's words, solutions plain sections, roles links
to the edition's pages; cells, tags and outputs kept; a README beside them (the publish
workflow pushes them to ``NOTEBOOK_BRANCH``). Not sphinx-tojupyter 0.6.0: it rebuilds notebooks
from a doctree (no cell tags or stored outputs, English titles) and needs dask.
"""
from __future__ import annotations

import argparse
import copy
import gettext
import re
import sys
from dataclasses import dataclass
from pathlib import Path

import nbformat

from booktools import i18n
from booktools.typography import EXPLICIT_TITLE, has_cjk
from booktools.book import ROOT, book_config
from booktools.gpu_figures import directive_text, parser

__all__ = ["myst_left", "targets", "convert", "write", "main"]

OUT = ROOT / "_build" / "colab"
ADMONITIONS = {"note": "Note"}  # those the chapters use: another directive fails, named
ROLE = re.compile(r"\{(?P<role>ref|doc|numref)\}`(?P<body>[^`]+)`")
# Emphasis of CJK text: Colab slants it (no CJK italic exists); the site shows dots.
CJK_EMPHASIS = re.compile(r"(?<![*0-9A-Za-z_])\*([^*\n]+)\*(?![*0-9A-Za-z_])")
README = """# Reader notebooks

The notebooks the book's launch buttons open in Colab and SageMaker Studio Lab, made from
the book's chapters by `python -m booktools.reader_notebooks`. Edit the chapters in the
book's repository, not here: each release replaces this branch's files.
"""


def _directive(token) -> tuple[str, str, dict, list[str]] | None:
    """(name, argument, options, body lines) of a MyST directive's token, else None."""
    if token.type not in ("fence", "colon_fence") or not token.info.strip().startswith("{"):
        return None
    name, _, argument = token.info.strip().partition(" ")
    parsed = directive_text(token.content)
    return name.strip("{}"), argument.strip(), parsed.options, parsed.body


def myst_left(markdown: str) -> list[str]:
    """The MyST constructs a Markdown text still holds, each named (none: plain Markdown)."""
    found = []
    for token in parser().parse(markdown):
        if token.type == "myst_target":
            found.append(f"label ({token.content})=")
        elif _directive(token):
            found.append(f"directive {token.info.split()[0]}")
        elif token.type == "myst_block_break":
            found.append("block break +++")
        found += [f"role {{{child.meta['name']}}}`{child.content}`"
                  for child in token.children or [] if child.type == "myst_role"]
    return found


@dataclass(frozen=True)
class Target:
    chapter: str  # its name: "tensors"
    anchor: str  # "" for the chapter itself
    text: str  # what a link to it says


def _words(code: str) -> dict[str, str]:
    """Sphinx's words the site uses for these, in the edition's language (its overrides first)."""
    import sphinx
    lang = i18n.language(code)
    catalog = gettext.translation("sphinx", Path(sphinx.__file__).parent / "locale",
                                  [lang.sphinx], fallback=True)
    words = {w: catalog.gettext(w) for w in ("Fig. %s", *ADMONITIONS.values())}
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
    """Every label an edition's chapters define (sections, exercises, figures), and each
    chapter's name (for {doc})."""
    found: dict[str, Target] = {}
    words = _words(code)
    for chapter in _chapters(code):
        nb = nbformat.read(_notebook_path(code, chapter), as_version=4)
        figures = [c.metadata.get("mystnb", {}).get("figure", {}).get("name")
                   for c in nb.cells if c.cell_type == "code"]
        for number, name in enumerate(filter(None, figures), 1):
            found[name] = Target(chapter, name, words["Fig. %s"] % number)
        tokens = [t for c in nb.cells if c.cell_type == "markdown"
                  for t in parser().parse(c.source)]
        for token, after, inline in zip(tokens, tokens[1:], tokens[2:]):
            if token.type == "heading_open" and token.tag == "h1":
                found.setdefault(f"chapters/{chapter}", Target(chapter, "", after.content))
            if token.type == "myst_target" and after.type == "heading_open":
                chapter_label = after.tag == "h1" and f"chapters/{chapter}" not in found
                found[token.content] = Target(chapter, "" if chapter_label else token.content,
                                              inline.content)
            directive = _directive(token)
            if directive and directive[0] == "exercise" and directive[2].get("label"):
                found[directive[2]["label"]] = Target(chapter, directive[2]["label"],
                                                      directive[1])
    return found


def _quoted(title: str, body: str) -> str:
    lines = [f"**{title}**", ""] + body.splitlines()
    return "\n".join(f"> {line}".rstrip() for line in lines)


class _Renderer:
    def __init__(self, code: str):
        self.code = code
        self.words = _words(code)
        self.found = targets(code)
        self.exercises = 0
        self.cjk = i18n.language(code).cjk

    def link(self, match: re.Match, where: str) -> str:
        """A {ref}, {doc} or {numref} as a link to its target's page in this edition."""
        body = match["body"].strip()
        explicit = EXPLICIT_TITLE.match(body)  # "text <target>"
        text, name = (explicit[1], explicit[2]) if explicit else (None, body)
        if match["role"] == "doc":
            name = "chapters/" + name.rsplit("/", 1)[-1].removesuffix(".md").removesuffix(".ipynb")
        target = self.found.get(name)
        if target is None:
            raise ValueError(f"{where}: {{{match['role']}}}`{body}`: no such label in the "
                             f"{self.code} edition")
        url = book_config()["html"]["baseurl"].rstrip("/") + "/" + i18n.site_path(
            self.code, f"chapters/{target.chapter}")
        return f"[{text or target.text}]({url}{f'#{target.anchor}' if target.anchor else ''})"

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
            elif _directive(token):
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
        if self.cjk:  # bold, as no CJK font has an italic
            rendered = CJK_EMPHASIS.sub(
                lambda m: f"**{m[1]}**" if has_cjk(m[1]) else m[0], rendered)
        return ROLE.sub(lambda match: self.link(match, where), rendered)

    def directive(self, token, where: str) -> str | None:
        name, argument, _, body = _directive(token)
        inner = self.markdown("\n".join(body), where)
        if name in ADMONITIONS or name == "admonition":
            return _quoted(argument or self.words[ADMONITIONS.get(name, "Note")], inner)
        if name == "exercise":
            self.exercises += 1
            title = f"{self.words['Exercise']} {self.exercises}"
            colon = "：" if self.cjk else ": "
            return _quoted(title + (colon + argument if argument else ""), inner)
        if name == "solution-start":
            return f"**{self.words['Solution']}**" + (f"\n\n{inner}" if inner.strip() else "")
        if name == "solution-end":
            return None
        raise ValueError(f"{where}: directive {{{name}}} has no plain-Markdown form "
                         "(booktools.reader_notebooks)")


def convert(code: str, chapter: str):
    """The reader's notebook of one chapter in one edition (an nbformat notebook)."""
    source = _notebook_path(code, chapter)
    reader = copy.deepcopy(nbformat.read(source, as_version=4))
    reader.metadata.pop("jupytext", None)  # no paired .md beside it
    renderer = _Renderer(code)
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
            number = f"**{target.text}** " if target else ""  # as the site sets it
            caption = renderer.markdown(figure["caption"], where)
            cells.append(nbformat.v4.new_markdown_cell(f"{number}{caption.strip()}"))
    reader.cells = cells
    for index, cell in enumerate(cells):  # unique and the same every build
        cell["id"] = f"{chapter}-{index}"
    return reader


def write(out: Path = OUT) -> list[Path]:
    """Write every edition's reader notebooks under out, at their sources' paths."""
    written = []
    for code in [lang.code for lang in i18n.languages()]:
        for chapter in _chapters(code):
            path = out / _notebook_path(code, chapter).relative_to(ROOT)
            path.parent.mkdir(parents=True, exist_ok=True)
            nbformat.write(convert(code, chapter), path)
            written.append(path)
    (out / "README.md").write_text(README, encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(prog="python -m booktools.reader_notebooks",
                            description=__doc__.splitlines()[0]).parse_args(argv)
    try:
        written = write()
    except ValueError as error:
        print(f"reader_notebooks: {error}", file=sys.stderr)
        return 1
    print(f"reader_notebooks: {len(written)} notebooks in {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
