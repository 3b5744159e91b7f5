"""The translated editions, i18n/<code>/chapters/<chapter>.md, made from English (chapters/).

A translation keeps English's structure (code cells, labels, references, exercises, front
matter) and its edition's rules (booktools.typography, booktools.glossary, English's figures
carried over); its notebook is its cells with the English notebook's outputs. It records the
hash of the English prose it translates: a page whose English changed since shows a banner.

    python -m booktools.i18n check            # structure and rule problems; exit 1 if any
    python -m booktools.i18n sync [CODE ...]   # carry English's code, write the notebooks
    python -m booktools.i18n stamp CODE CHAPTER [CHAPTER ...]
    python -m booktools.i18n codes            # the translated editions' codes
"""
from __future__ import annotations

import argparse
import ast
import copy
import dataclasses
import gettext
import hashlib
import json
import os
import posixpath
import re
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import nbformat
import yaml

from booktools import files, glossary, notebooks, typography
from booktools.book import book_config, toc_pages
from booktools.files import read_text
from booktools.gpu_figures import find_figures, prose_paragraphs
from booktools.runs import as_python, code_cells, comments, same_program

__all__ = ["Language", "languages", "language", "for_sphinx", "translations", "english_chapters",
           "source", "notebook", "lags", "stamp", "structure_problems", "glossary_file",
           "exercise_word", "rule_problems", "comment_faults", "check", "sync",
           "site_path", "alternates", "edition_pages", "relative_url", "edition_toc", "stage",
           "main"]

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = ROOT / "chapters"
I18N = ROOT / "i18n"
LANGUAGES_FILE = I18N / "languages.yml"
STAGES = ROOT / "_build" / "i18n"  # where the editions build from (stage)
RECORD = "translation"           # the front-matter key of a translation's record
SNIPPET = notebooks.SNIPPET.relative_to(CHAPTERS)  # an edition's: i18n/<code>/_snippets/...
NOTE = notebooks.HARDWARE_NOTE
FRONT = re.compile(r"\A---\n(.*?\n)---\n", re.S)
# What a translation keeps as English has it (the exercises and solutions in English's order).
MARKERS = {
    "labels": re.compile(r"^\(([\w-]+)\)=\s*$", re.M),
    "exercise and solution labels": re.compile(r"^:label:\s*(\S+)\s*$", re.M),
    "references": re.compile(r"\{(ref|doc|numref)\}`(?:[^`<]*<)?([^`>]+)>?`"),
    "exercises and solutions": re.compile(r"^`{3,}\{(exercise|solution-start|solution-end)\}",
                                          re.M),
}
NUMBER = re.compile(r"(?<![0-9A-Za-z.,])\d+(?:[.,]\d+)*(?![0-9])")  # a figure's, in a translation
CODE_BLOCK = re.compile(r"^(`{3,})\{code-cell\}[^\n]*\n.*?^\1[ \t]*$", re.M | re.S)


@dataclass(frozen=True)
class Language:
    code: str    # folder, URL segment and <html lang>, e.g. "zh-CN"
    sphinx: str  # Sphinx's language for the build, e.g. "zh_CN"
    name: str    # the edition's name in its own language
    title: str
    ui: dict     # the words the book's extensions put on a page
    interface: dict = field(default_factory=dict)  # the themes' English -> this edition's

    @property
    def english(self) -> bool:
        return self.code == "en"

    @property
    def cjk(self) -> bool:
        return self.code.split("-")[0] in ("zh", "ja")


FIELDS = ", ".join(f.name for f in dataclasses.fields(Language))
REQUIRED = [f.name for f in dataclasses.fields(Language) if f.default_factory is dataclasses.MISSING]


@lru_cache(maxsize=None)
def languages(path: Path = LANGUAGES_FILE) -> tuple[Language, ...]:
    """Every edition, English first."""
    text, where = read_text(path), files.shown(path)
    try:
        entries, nodes = yaml.safe_load(text), yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise files.yaml_problem(path, error) from None
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError(f"{where}: a list of editions, each `- code: ...` with {FIELDS}")
    for entry, node in zip(entries, nodes.value):
        for key, _ in node.value:
            if key.value not in FIELDS:
                raise ValueError(f"{where}:{key.start_mark.line + 1}: unknown key "
                                 f"{key.value!r}; an edition has {FIELDS}")
        if missing := [name for name in REQUIRED if name not in entry]:
            raise ValueError(f"{where}:{node.start_mark.line + 1}: the edition lacks "
                             f"{', '.join(missing)}")
    found = tuple(Language(**entry) for entry in entries)
    if not found or found[0].code != "en":
        raise ValueError(f"{path}: the first edition must be English (code: en)")
    codes = [lang.code for lang in found]
    if len(set(codes)) != len(codes):
        raise ValueError(f"{path}: an edition is listed twice: {codes}")
    for lang in found[1:]:
        if missing := set(found[0].ui) - set(lang.ui):
            raise ValueError(f"{path}: {lang.code} lacks the ui words {sorted(missing)}")
    return found


def language(code: str, path: Path = LANGUAGES_FILE) -> Language:
    for lang in languages(path):
        if lang.code == code:
            return lang
    raise ValueError(f"no edition {code!r}: the editions are "
                     f"{', '.join(lang.code for lang in languages(path))} ({path})")


def for_sphinx(sphinx_language: str | None, path: Path = LANGUAGES_FILE) -> Language:
    """The edition a Sphinx build of that `language` makes (English for None)."""
    for lang in languages(path):
        if lang.sphinx == (sphinx_language or "en"):
            return lang
    raise ValueError(f"Sphinx language {sphinx_language!r} is no edition of {path}")


def translations(path: Path = LANGUAGES_FILE) -> tuple[Language, ...]:
    return languages(path)[1:]


def english_chapters(chapters: Path = CHAPTERS) -> list[str]:
    return sorted(p.stem for p in chapters.glob("*.md"))


def source(code: str, chapter: str, i18n: Path = I18N) -> Path:
    return i18n / code / "chapters" / f"{chapter}.md"


def notebook(code: str, chapter: str, i18n: Path = I18N) -> Path:
    return source(code, chapter, i18n).with_suffix(".ipynb")


def _shown(path: Path, i18n: Path) -> str:
    return str(path.relative_to(i18n.parent) if path.is_relative_to(i18n.parent) else path)


@lru_cache(maxsize=64)  # the cached notebooks are read-only: callers copy
def _parsed(path: Path, text: str):
    return notebooks.read_markdown(path) if path.suffix == ".md" else \
        nbformat.reads(text, as_version=4)


def _read(path: Path):
    """A .md (as jupytext reads it, or ValueError naming its line) or .ipynb as a notebook."""
    return _parsed(path, read_text(path))


# --- what a translation records, keeps and translates ---

def _front_matter(text: str) -> dict:
    match = FRONT.match(text)
    return yaml.safe_load(match.group(1)) if match else {}


def prose_hash(markdown: str) -> str:
    """A short hash of a page's prose (alt texts included; code, labels and options not)."""
    text = "\n".join(paragraph.text for paragraph in prose_paragraphs(markdown))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def lags(code: str, chapter: str, chapters: Path = CHAPTERS, i18n: Path = I18N) -> bool:
    """Whether the English prose changed since the translation was made (or it has no record)."""
    record = _front_matter(read_text(source(code, chapter, i18n))).get(RECORD) or {}
    recorded = record.get("english_prose") if isinstance(record, dict) else None
    return recorded != prose_hash(read_text(chapters / f"{chapter}.md"))


def stamp(code: str, names: list[str], chapters: Path = CHAPTERS, i18n: Path = I18N) -> list:
    """Record that the translations are of the English prose as it is now (all checked before
    any is written); return the hashes."""
    language(code)  # a known edition
    for chapter in names:  # English is no translation: i18n/en/chapters/ does not exist
        if not source(code, chapter, i18n).is_file():
            raise ValueError(f"{_shown(source(code, chapter, i18n), i18n)} does not exist: "
                             f"translate chapters/{chapter}.md into it first "
                             "(MAINTAINING.md: Translations)")
    digests = []
    for chapter in names:
        path = source(code, chapter, i18n)
        text = read_text(path)
        match = FRONT.match(text)
        if match is None:
            raise ValueError(f"{path}: no front matter to record the translation in")
        digests.append(prose_hash(read_text(chapters / f"{chapter}.md")))
        kept = re.sub(rf"^{RECORD}:\n(?:[ \t]+.*\n)*", "", match.group(1), flags=re.M)
        record = f"{RECORD}:\n  of: chapters/{chapter}.md\n  english_prose: {digests[-1]}\n"
        _write(path, f"---\n{kept}{record}---\n{text[match.end():]}")
    return digests


def _options_key(cell) -> str:
    """A code cell's metadata as a translation keeps it: all but mystnb's texts."""
    metadata = {k: v for k, v in cell.metadata.items() if k != "mystnb"}
    mystnb = copy.deepcopy(cell.metadata.get("mystnb", {}))
    mystnb.get("image", {}).pop("alt", None)
    mystnb.get("figure", {}).pop("caption", None)
    return json.dumps([metadata, mystnb], sort_keys=True)


def _changed(english, path: Path, i18n: Path) -> list[tuple[int, str]]:
    """(index, file:line) of each of the translation's code cells that is not English's
    program (comments aside) with English's options; ValueError if it has more or fewer."""
    a, b = code_cells(english), code_cells(_read(path))
    where = _shown(path, i18n)
    if len(a) != len(b):
        raise ValueError(f"{where}: {len(b)} code cells, English has {len(a)}: place the new "
                         "or removed cells by hand, as in English (sync cannot)")
    text = read_text(path)
    lines = [text.count("\n", 0, block.start()) + 1 for block in CODE_BLOCK.finditer(text)]
    return [(i, f"{where}:{lines[i]}" if i < len(lines) else where)
            for i, (x, y) in enumerate(zip(a, b))
            if _options_key(x) != _options_key(y) or not same_program(x.source, y.source)]


def _code_problems(english, path: Path, i18n: Path, code: str) -> list[str]:
    """What sync would carry from English into the translation, each a problem."""
    problems, cells = [], code_cells(_read(path))  # a file jupytext cannot read raises
    try:
        changed = _changed(english, path, i18n)
    except ValueError as error:
        return [str(error)]
    for i, where in changed:
        cell = code_cells(english)[i]
        what = "tags, name or options" if same_program(cell.source, cells[i].source) else "program"
        name = f" ({cell.metadata['name']})" if cell.metadata.get("name") else ""
        problems.append(f"{where}: code cell {i + 1}{name} differs from English's in its {what}: "
                        f"python -m booktools.i18n sync {code} copies English's")
    return problems


def structure_problems(code: str, chapter: str, chapters: Path = CHAPTERS,
                       i18n: Path = I18N) -> list[str]:
    """Where a translation's structure differs from English's (empty: none)."""
    path = source(code, chapter, i18n)
    where = _shown(path, i18n)
    if not path.is_file():
        return [f"{where}: missing (English has chapters/{chapter}.md)"]
    english, text = read_text(chapters / f"{chapter}.md"), read_text(path)
    problems = _code_problems(_read(chapters / f"{chapter}.md"), path, i18n, code)
    if {k: v for k, v in _front_matter(text).items() if k != RECORD} != _front_matter(english):
        problems.append(f"{where}: front matter differs from English's "
                        f"(beyond its `{RECORD}` record)")
    for kind, marker in MARKERS.items():
        found, want = marker.findall(text), marker.findall(english)
        if (found != want) if kind == "exercises and solutions" else sorted(found) != sorted(want):
            problems.append(f"{where}: {kind} differ from English's: "
                            f"{sorted(set(map(str, found)) ^ set(map(str, want)))}")
    problems += _note_problems(code, text, english, where, i18n)
    ipynb = notebook(code, chapter, i18n)
    if problems:
        return problems
    if not ipynb.is_file():
        return [f"{where}: no notebook (python -m booktools.i18n sync {code})"]
    stored = read_text(ipynb)
    if stored != _notebook_text(code, chapter, chapters, i18n, nbformat.reads(stored, 4)):
        return [f"{_shown(ipynb, i18n)}: out of step with its .md or the English notebook "
                f"(python -m booktools.i18n sync {code})"]
    return []


def _note_problems(code, text, english_text, where, i18n) -> list[str]:
    note, english_note = NOTE.search(text), NOTE.search(english_text)
    if bool(note) != bool(english_note):
        return [f"{where}: the hardware-note markers differ from English's"]
    if note is None or "(hardware-note)=" in english_note.group(1):
        return []  # the intro: its full note is translated freely
    snippet = i18n / code / SNIPPET
    if not snippet.is_file():
        return [f"{where}: {snippet} is missing"]
    if note.group(1).strip() != read_text(snippet).strip():
        return [f"{where}: paste i18n/{code}/{SNIPPET} between the hardware-note markers"]
    return []


# --- the edition's rules ---

def glossary_file(code: str, i18n: Path = I18N) -> Path:
    return i18n / code / "glossary.yml"


def exercise_word(code: str) -> str:
    """What sphinx-exercise calls an exercise in the edition's language ("练习")."""
    import sphinx_exercise
    locales = Path(sphinx_exercise.__file__).parent / "translations" / "locales"
    catalog = gettext.translation("exercise", locales, [language(code).sphinx], fallback=True)
    return catalog.gettext("Exercise")


@lru_cache(maxsize=16)  # read again whenever one of the edition's chapters changed
def _titles(code: str, folder: Path, stamp: tuple) -> typography.Titles:
    return typography.Titles.of(folder, exercise_word(code))


def _edition_titles(code: str, i18n: Path) -> typography.Titles:
    folder = i18n / code / "chapters"
    return _titles(code, folder,
                   tuple((p.name, p.stat().st_mtime_ns) for p in sorted(folder.glob("*.md"))))


def rule_problems(code: str, chapter: str, i18n: Path = I18N,
                  chapters: Path = CHAPTERS) -> list[str]:
    """Where a translation breaks its edition's rules, as file:line: what to do."""
    path = source(code, chapter, i18n)
    if not path.is_file():
        return []  # structure_problems says it is missing
    lang, where, text = language(code), _shown(path, i18n), read_text(path)
    glossary_name = _shown(glossary_file(code, i18n), i18n)
    try:
        terms, problems = glossary.load(glossary_file(code, i18n), glossary_name), []
    except ValueError as error:
        terms, problems = [], [str(error)]
    titles = _edition_titles(code, i18n)
    found = typography.faults(text, lang.cjk, titles, typography.REFERENCE_RULES.get(code),
                              {t.term: t.en for t in terms},
                              bare=lang.cjk and chapter != "summary")  # its lists point
    found += comment_faults(code, text) + d2l_link_faults(code, text)
    for paragraph in prose_paragraphs(text) if terms else []:
        for offset, form, term in glossary.avoided(terms, paragraph.masked):
            found.append((paragraph.line_at(offset),
                          f'"{form}" is avoided in this edition ({glossary_name}: use '
                          f'"{term.term}" for "{term.en}")'))
    problems += [f"{where}:{line}: {message}" for line, message in sorted(found, key=lambda f: f[0])]
    english = chapters / f"{chapter}.md"
    figures = find_figures(read_text(english)) if english.is_file() else []
    wanted, have, seen = Counter(f.number for f in figures), Counter(), set()
    for paragraph in prose_paragraphs(text):  # "1,35" 1.35, "51.155,7" 51155.7, "1,024" 1024
        for written in NUMBER.findall(paragraph.masked):
            comma = written.replace(".", "").replace(",", ".")
            have.update({written.replace(",", ""), *([comma] if comma.count(".") <= 1 else [])})
    for figure in figures:
        if have[figure.number] < wanted[figure.number] and figure.number not in seen:
            seen.add(figure.number)
            shown = re.sub(r" (?=[x%])", "", f"{figure.number} {figure.unit}")
            problems.append(f"{_shown(english, i18n)}:{figure.line}: the figure {shown} stands "
                            f"{wanted[figure.number]} time(s) in this prose and "
                            f"{have[figure.number]} in {where}'s prose: carry it over "
                            "(a decimal comma is fine)")
    return problems


# English that gives a comment away in Portuguese prose (none of them Portuguese).
_ENGLISH_WORDS = frozenset("the of and is are to for with when this that it on".split())


def comment_faults(code: str, text: str) -> list[tuple[int, str]]:
    """(line, message) of each code comment or docstring left in English: in zh-CN and ja two
    Latin words and no CJK, in pt-BR two of _ENGLISH_WORDS (a "#" in a string or a magic is
    no comment; a docstring inside a string is the program's)."""
    cjk, found = language(code).cjk, []
    for block in CODE_BLOCK.finditer(text):
        body = as_python(block.group(0).split("\n", 1)[1].rsplit("\n", 1)[0])
        tokens = comments(body)
        if tokens is None:
            continue
        said = [(t.start[0], "comment", t.string) for t in tokens]
        try:
            said += [(n.body[0].lineno, "docstring", ast.get_docstring(n)) for n in ast.walk(ast.parse(body))
                     if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                     and ast.get_docstring(n)]
        except SyntaxError:  # a cell that is not whole Python (the tokenizer still reads it)
            pass
        for line, kind, words_of in said:
            words = re.findall(r"[A-Za-z]+", words_of)
            if (sum(len(w) >= 3 for w in words) >= 2 and not typography.has_cjk(words_of)
                    if cjk else len({w.lower() for w in words} & _ENGLISH_WORDS) >= 2):
                # IPython's rewrite of a magic keeps its lines
                found.append((text.count("\n", 0, block.start()) + 1 + line,
                              f"the {kind} {words_of!r} is English: translate it "
                              "(only the program must stay English's)"))
    return found


# d2l in the edition's language, where a current one exists: a link to English d2l
# from that edition is a fault (the others say that their link is in English).
D2L_EDITIONS = {"zh-CN": "https://zh.d2l.ai/"}


def d2l_link_faults(code: str, text: str) -> list[tuple[int, str]]:
    """(line, message) of each link to English d2l on a line without the edition's own d2l."""
    own = D2L_EDITIONS.get(code)
    if own is None:
        return []
    return [(n, f"{m.group(0)} is English d2l: link {own} (this edition's d2l) instead")
            for n, line in enumerate(text.splitlines(), 1) if own not in line
            for m in re.finditer(r"https?://(?:www\.)?d2l\.ai/[^\s)>\]]*", line)]


# --- the notebooks ---

def _notebook_text(code: str, chapter: str, chapters: Path, i18n: Path, stored=None) -> str:
    """The translated notebook: its .md's cells, with the English notebook's outputs (the
    figures drawn in its language, or, given the stored notebook, its figures kept)."""
    path = source(code, chapter, i18n)
    english = _read(chapters / f"{chapter}.ipynb")
    problems = _code_problems(english, path, i18n, code)
    if problems:
        raise ValueError("\n".join(problems))
    built = nbformat.v4.new_notebook(metadata=copy.deepcopy(english.metadata))
    english_code = iter(code_cells(english))
    for cell in _read(path).cells:
        if cell.cell_type == "code":
            done = copy.deepcopy(next(english_code))
            done.source = cell.source  # the same program, its comments translated
            if "mystnb" in cell.metadata:
                done.metadata["mystnb"] = copy.deepcopy(cell.metadata["mystnb"])
            if stored is None:
                done.outputs = drawn_in(code, done)
            elif len(stored.cells) > len(built.cells):
                done.outputs = _images_of(done, stored.cells[len(built.cells)])
        else:
            done = (nbformat.v4.new_markdown_cell if cell.cell_type == "markdown"
                    else nbformat.v4.new_raw_cell)(cell.source, metadata=copy.deepcopy(cell.metadata))
        done["id"] = f"cell-{len(built.cells)}"  # as the English notebooks number them
        built.cells.append(done)
    built.nbformat, built.nbformat_minor = english.nbformat, english.nbformat_minor
    return nbformat.writes(built) + "\n"


def _images_of(cell, stored) -> list:
    """The cell's outputs with the PNGs the stored cell holds in the same places (checking
    a notebook: sync draws them, which takes seconds)."""
    outputs, kept = copy.deepcopy(cell.outputs), stored.get("outputs", [])
    figure = FIGURE_CODE.search(cell.source)
    for output, old in zip(outputs, kept):
        if ((figure or PLOT_DATA in output.get("metadata", {}))
                and "image/png" in output.get("data", {}) and "image/png" in old.get("data", {})):
            output["data"]["image/png"] = old["data"]["image/png"]
            output["metadata"]["image/png"] = old.get("metadata", {}).get("image/png")
    return outputs


# d2lgpu.plots.PLOT_DATA, named here so that checking imports no matplotlib.
PLOT_DATA = "d2lgpu/plot"
# A cell that draws a d2lgpu.figures figure, whose words are in the language that
# $D2LGPU_LANGUAGE names: each edition stores it drawn in its own.
FIGURE_CODE = re.compile(r"^\s*from d2lgpu\.figures import |\bd2lgpu\.figures\.", re.M)


def drawn_in(code: str, cell) -> list:
    """The cell's outputs with each figure drawn again in the edition's language, as the
    notebook stores it (retina PNG): a d2lgpu.plots plot from the data its output
    carries, a d2lgpu.figures figure by running the cell again with $D2LGPU_LANGUAGE set."""
    import warnings
    from unittest import mock

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from d2lgpu.figures import LANGUAGE_VARIABLE
    from d2lgpu.plots import redraw
    from IPython.core.pylabtools import retina_figure

    outputs = copy.deepcopy(cell.outputs)
    for output in outputs:
        if PLOT_DATA in output.get("metadata", {}):
            output["data"]["image/png"], output["metadata"]["image/png"] = \
                redraw(output["metadata"], code)
    if not FIGURE_CODE.search(cell.source):
        return outputs
    images = [o for o in outputs if "image/png" in o.get("data", {})]
    before = set(plt.get_fignums())
    try:
        with mock.patch.dict(os.environ, {LANGUAGE_VARIABLE: code}), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # plt.show() on Agg
            exec(compile(cell.source, "<figure cell>", "exec"), {"plt": plt})
        drawn = [plt.figure(n) for n in plt.get_fignums() if n not in before]
        if len(drawn) != len(images):
            raise ValueError(f"a figure cell drew {len(drawn)} figures and stored "
                             f"{len(images)}: {cell.source.splitlines()[-1]!r}")
        for output, figure in zip(images, drawn):
            output["data"]["image/png"], output["metadata"]["image/png"] = \
                retina_figure(figure, base64=True)
    finally:
        for n in set(plt.get_fignums()) - before:
            plt.close(n)
    return outputs


def _has_texts(cell) -> bool:
    mystnb = cell.metadata.get("mystnb", {})
    return bool(mystnb.get("image", {}).get("alt") or mystnb.get("figure", {}).get("caption"))


def carry_code(code: str, chapter: str, chapters: Path = CHAPTERS, i18n: Path = I18N) -> str:
    """The translation's markdown with each English code cell that changed (_changed) in
    place; ValueError for a cell added or removed, or changed with a translated alt or caption."""
    path, english = source(code, chapter, i18n), chapters / f"{chapter}.md"
    text = read_text(path)
    english_blocks = list(CODE_BLOCK.finditer(read_text(english)))
    blocks = list(CODE_BLOCK.finditer(text))
    english_cells, cells = code_cells(_read(english)), code_cells(_read(path))
    if not (len(english_blocks) == len(english_cells) and len(blocks) == len(cells)):
        raise ValueError(f"{path}: a code cell is not a plain ```{{code-cell}} block")
    for i, where in reversed(_changed(_read(english), path, i18n)):
        if _has_texts(english_cells[i]) or _has_texts(cells[i]):
            raise ValueError(f"{where}: code cell {i + 1} changed in English and has a "
                             "translated alt text or caption: copy English's cell and "
                             "translate those")
        text = text[:blocks[i].start()] + english_blocks[i].group(0) + text[blocks[i].end():]
    return text


def _write(path: Path, text: str) -> bool:
    """Write a file whole or not at all (a temporary file, then a rename) if it changed."""
    if path.is_file() and read_text(path) == text:
        return False
    with tempfile.NamedTemporaryFile("w", dir=path.parent, suffix=path.suffix,
                                     delete=False, encoding="utf-8") as tmp:
        tmp.write(text)
    os.replace(tmp.name, path)
    return True


def sync(codes: list[str] | None = None, chapters: Path = CHAPTERS, i18n: Path = I18N) -> list[Path]:
    """Carry English's code into the translations and write the notebooks that changed;
    nothing written if an English notebook is unexecuted or a translation needs a translator."""
    problems = []
    for chapter in english_chapters(chapters):
        english = chapters / f"{chapter}.ipynb"
        if english.is_file() and (missing := notebooks.unexecuted(_read(english))):
            problems.append(f"{_shown(english, i18n)}: code cells {', '.join(map(str, missing))} "
                            "have no stored outputs (never executed): bash scripts/refresh.sh "
                            f"{_shown(english.with_suffix('.md'), i18n)}")
    if problems:
        raise ValueError("nothing written: the translations would lose these outputs; "
                         "execute the English first:\n" + "\n".join(problems))
    texts, pages = {}, []
    for code in codes or [lang.code for lang in translations()]:
        language(code)
        for chapter in english_chapters(chapters):
            if source(code, chapter, i18n).is_file():
                try:
                    texts[source(code, chapter, i18n)] = carry_code(code, chapter,
                                                                    chapters, i18n)
                    pages.append((code, chapter))
                except ValueError as error:
                    problems.append(str(error))
    if problems:
        raise ValueError("nothing written: these translations need a translator first:\n"
                         + "\n".join(problems))
    changed = [path for path, text in texts.items() if _write(path, text)]
    return changed + [notebook(code, c, i18n) for code, c in pages
                      if _write(notebook(code, c, i18n), _notebook_text(code, c, chapters, i18n))]


# --- the website: one site per edition, _build/html/ and _build/html/<code>/ ---

def site_path(code: str, docname: str) -> str:
    """A page's path from the site's root: chapters/x.html, or zh-CN/chapters/x.html."""
    return f"{docname}.html" if code == "en" else f"{code}/{docname}.html"


def alternates(docname: str, i18n: Path = I18N, chapters: Path = CHAPTERS) -> list[Language]:
    """The editions that have this page (a chapter), English first."""
    chapter = docname.removeprefix("chapters/")
    if chapter == docname or not (chapters / f"{chapter}.md").is_file():
        return []
    return [lang for lang in languages() if lang.english
            or source(lang.code, chapter, i18n).is_file()]


def edition_pages(code: str) -> list[str]:
    """The toc pages an edition has, in _toc.yml's order (English: all of them)."""
    return [page for page in toc_pages()
            if code == "en" or any(lang.code == code for lang in alternates(page))]


def relative_url(from_path: str, to_path: str) -> str:
    return posixpath.relpath(to_path, posixpath.dirname(from_path) or ".")


TOC_CAPTIONS = {"Main path": "toc_main", "Going further": "toc_further"}


def edition_toc(lang: Language, toc: Path = ROOT / "_toc.yml") -> str:
    """_toc.yml with its part captions in the edition's words (ui.toc_main, ui.toc_further)."""
    data = yaml.safe_load(read_text(toc))
    for part in data.get("parts", []):
        key = TOC_CAPTIONS.get(part.get("caption"))
        if key is None:
            raise ValueError(f"{toc}: part caption {part.get('caption')!r} has no translation "
                             f"key; add it to booktools.i18n.TOC_CAPTIONS and languages.yml's ui")
        part["caption"] = lang.ui[key]
    return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)


def stage(code: str, build: Path = STAGES) -> Path:
    """The folder a translated site builds from: links to its chapters and the book's files,
    _toc.yml and _config.yml in its words (built with ``--path-output`` its parent)."""
    lang = language(code)
    src = build / code / "src"
    src.mkdir(parents=True, exist_ok=True)
    (src.parent / "_build").mkdir(exist_ok=True)
    for name, target in (("chapters", I18N / code / "chapters"), ("_static", ROOT / "_static"),
                         ("runs", ROOT / "runs"), ("node_modules", ROOT / "node_modules")):
        link = src / name
        if not (link.is_symlink() and link.readlink() == target):
            link.unlink(missing_ok=True)
            link.symlink_to(target)
    _write(src / "_toc.yml", edition_toc(lang))
    config = book_config()
    config["title"] = lang.title
    config.setdefault("repository", {})["path_to_book"] = f"i18n/{code}"
    sphinx = config.setdefault("sphinx", {}).setdefault("config", {})
    sphinx["language"] = lang.sphinx
    # Words Jupyter Book and myst-nb set in English whatever the language.
    sphinx.setdefault("html_theme_options", {})["search_bar_text"] = lang.ui["search"]
    sphinx["nb_code_prompt_show"] = lang.ui["show_code"]
    sphinx["nb_code_prompt_hide"] = lang.ui["hide_code"]
    _write(src / "_config.yml", yaml.safe_dump(config, allow_unicode=True, sort_keys=False))
    return src


def check(chapters: Path = CHAPTERS, i18n: Path = I18N) -> list[str]:
    """The structure and rule problems of every translation (a bad glossary once)."""
    return list(dict.fromkeys(  # each chapter's rule_problems repeat a bad glossary
        problem for lang in translations() for chapter in english_chapters(chapters)
        for problem in (structure_problems(lang.code, chapter, chapters, i18n)
                        + rule_problems(lang.code, chapter, i18n, chapters))))


def main(argv: list[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a message quotes CJK text: any locale prints it
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = argparse.ArgumentParser(prog="python -m booktools.i18n", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    for command, *arguments in (("check",), ("sync", "codes*"), ("stamp", "code", "chapters+"),
                                ("codes",)):
        each = sub.add_parser(command)
        for argument in arguments:  # "codes*": any number of codes
            name = argument.rstrip("*+")
            each.add_argument(name, nargs=argument[len(name):] or None)
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            problems = check()
            print("\n".join(problems) or "every translation has English's structure "
                  "and follows its edition's rules")
            return 1 if problems else 0
        if args.command == "sync":
            print("\n".join(f"sync: {files.shown(path)}" for path in sync(args.codes))
                  or "sync: every translation and notebook was in step")
        elif args.command == "stamp":
            for chapter, digest in zip(args.chapters, stamp(args.code, args.chapters)):
                print(f"stamp: i18n/{args.code}/chapters/{chapter}.md translates "
                      f"English prose {digest}")
        elif args.command == "codes":
            print("\n".join(lang.code for lang in translations()))
    except ValueError as error:
        print(f"i18n: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
