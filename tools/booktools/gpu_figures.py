"""GPU figures in the chapters' prose, held to the recorded runs and datasheets.

    python -m booktools.gpu_figures    lists every offending figure (exit 1 if any)

A GPU figure (``Figure.is_gpu``) stands, same digits and unit, in a recording's text output
in a paragraph naming that machine, or is listed in tests/gpu_figures.yml: ``datasheet``
(its vendor named nearby) or ``not_measured``. ``prose_paragraphs`` is the prose that
booktools.words, typography and i18n read too.
"""
from __future__ import annotations

import bisect
import math
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

__all__ = ["parser", "directive_text", "prose_paragraphs", "find_figures", "chapter_figures",
           "output_text", "recorded_texts", "load_datasheet", "listed_for", "check_figures",
           "check_book", "format_problems", "main"]

ROOT = Path(__file__).resolve().parents[2]  # tools/booktools/gpu_figures.py in a checkout
CHAPTERS = ROOT / "chapters"
RUNS = ROOT / "runs"
DATASHEET = ROOT / "tests" / "gpu_figures.yml"
NEEDS = {"datasheet": ("chapter", "figures", "vendor", "source"),  # its sections' entries
         "not_measured": ("chapter", "figures", "context", "why")}

# Words that name a GPU (or its software stack) and words that name the CPU.
GPU_WORDS = re.compile(
    r"\b(?:GPUs?|CUDA|cuda(?::\d+)?|MPS|mps|NVIDIA|Nvidia|ROCm|Radeon|"
    r"[HAB]\d{2,3}|A10G?|L4|L40S?|T4|V100|P100|P4|K80|RTX|GTX|Quadro|Tesla|"
    r"Hopper|Ampere|Volta|Turing|Blackwell|tensor cores?|accelerators?)\b")
CPU_WORDS = re.compile(r"\b(?:CPUs?|cpu|Xeon|EPYC|Ryzen|Threadripper|laptop)\b")

_NUM = r"\d+(?:\.\d+)?"
# Unit families: the regex as written in prose, and the kind of figure.
_UNITS = [
    ("rate", r"[kKMGTP]?FLOP/s|[kKMGTP]?FLOPS|[kKMGTP]i?B/s|[kMGT]bit/s"),
    ("size", r"[kKMGTP]i?B|bytes?|B"),
    ("time", r"ns|[µμu]s|ms|s|seconds?|milliseconds?|microseconds?|minutes?|min|hours?"),
    ("ratio", r"[x×](?!\s*[\d$(])|times\b"),
    ("share", r"%|per ?cent\b"),
    ("count", r"waits?\b|synchroni[sz]ations?\b|syncs?\b"),
]
_UNIT = "|".join(f"(?P<{kind}>{regex})" for kind, regex in _UNITS)
# One figure, or a range of two ("7–54 GB/s", "1.2 to 1.4 times", "40 or 80 GB").
_FIGURE = re.compile(
    rf"(?<![\w.\-–])(?P<first>{_NUM})(?:\s*(?:–|—|-|to|or)\s*(?P<second>{_NUM}))?"
    rf"\s?(?:{_UNIT})(?![\w/])")
# A bare decimal number a list carries on from an earlier figure: ", 399.5 with", " and 783.8 in".
_CARRIED = re.compile(r"(?:,|;|\band|\bor)\s+(?P<num>\d+\.\d+)(?![\w.\-–×/%]|\s*[x×:]|\s*\d)")
# Sizes of the work, not measurements: "a 64 MiB copy", "a 200 GiB request".
_WORK_NOUN = re.compile(r"\s*(?:copy|copies|request|tensors?|matri(?:x|ces)|buffers?|"
                        r"blocks?|allocations?|transfers?|arrays?|files?|checkpoints?)\b")
_ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.", "cf.", "Fig.", "approx.", "No.")
_CANONICAL_UNITS = {"×": "x", "times": "x", "μs": "µs", "us": "µs", "percent": "%",
                    "per cent": "%", "wait": "waits", "sync": "syncs", "second": "s",
                    "seconds": "s", "byte": "B", "bytes": "B", "minute": "min",
                    "minutes": "min", "hour": "hours"}


@dataclass(frozen=True)
class Paragraph:
    """Prose lines joined by spaces; ``masked`` blanks code, math and link targets."""
    text: str
    masked: str
    starts: list  # (offset in text, line number in the file), one per joined line

    def line_at(self, offset: int) -> int:
        """The file's line number of the character at ``offset``."""
        return self.starts[max(0, bisect.bisect_right(self.starts, (offset, math.inf)) - 1)][1]


@dataclass
class Figure:
    """One number with its unit in a chapter's prose."""
    chapter: str
    line: int
    number: str
    unit: str          # canonical (see ``canonical``)
    kind: str          # rate, size, time, ratio, share or count
    written: str       # as the prose writes it (a range: the whole range)
    sentence: str
    paragraph: str
    lead: str          # the paragraph before (a table's or a list's lead-in)
    about: str         # "gpu", "cpu" or "" (what the sentence is about)

    @property
    def key(self) -> str:
        """The figure as matched: number and canonical unit, e.g. "1.4x"."""
        return canonical(self.number, self.unit)

    @property
    def is_gpu(self) -> bool:
        """Whether this figure must be recorded or a datasheet's."""
        return self.about == "gpu" or (self.kind == "rate" and self.about != "cpu")


@dataclass
class Problem:
    """An offending GPU figure and what to do about it."""
    figure: Figure
    why: str


_UNIT_AFTER = re.compile(rf"\s?(?:{_UNIT})(?![\w/])")
_MATH_END_NUMBER = re.compile(rf"(?<![\w.^_{{\\]){_NUM}(?=\$$)")


def _mask_math(match) -> str:
    """Inline math blanked, but for a number that ends it before a unit ("$\\ell = 14$ µs")."""
    span = match.group(0)
    last = _MATH_END_NUMBER.search(span)
    if last and _UNIT_AFTER.match(match.string, match.end()):
        return " " * (len(span) - len(last.group(0))) + last.group(0)
    return " " * len(span)


def _mask(text: str) -> str:
    """``text`` with inline code, roles, inline math and link targets blanked."""
    def blank(match):
        return " " * len(match.group(0))
    masked = re.sub(r"\{[\w:-]+\}(`+).*?\1", blank, text)   # {ref}`label`
    masked = re.sub(r"(`+).+?\1", blank, masked)             # `code`
    masked = re.sub(r"\$[^$]+\$", _mask_math, masked)         # $n = 16$, not $\ell = 14$ µs
    masked = re.sub(r"\]\([^)\s]*\)", blank, masked)          # [text](url)
    masked = re.sub(r"<[^>]+>", blank, masked)                # <br>, <span ...>
    return masked


# Fences whose body is code, not prose; directives whose argument is a label or a path.
_CODE_INFOS = {"", "{code-cell}", "{code-block}", "{code}", "{sourcecode}", "{math}",
               "{raw}", "{eval-rst}", "{literalinclude}", "{mermaid}"}
_ARGUMENT_NOT_PROSE = {"{solution-start}", "{solution-end}", "{figure}", "{image}",
                       "{include}"}


@lru_cache(maxsize=1)
def parser():
    """myst-parser's markdown-it, with the extensions _config.yml enables."""
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    from booktools.book import book_config

    extensions = set(book_config().get("parse", {}).get("myst_enable_extensions", []))
    return create_md_parser(MdParserConfig(enable_extensions=extensions), RendererHTML)


def _paragraph(lines: list, first: int) -> Paragraph:
    """The lines (the first is line ``first`` of the file), stripped and joined by spaces."""
    text, starts = "", []
    for number, line in enumerate(lines, first):
        text += " " if text else ""
        starts.append((len(text), number))
        text += line.strip()
    return Paragraph(text, _mask(text), starts)


def directive_text(content: str, as_yaml: bool = False):
    """myst-parser's split of a directive's content into options (any keys) and body."""
    from docutils.parsers.rst.directives.misc import TestDirective  # takes any option
    from myst_parser.parsers.directives import parse_directive_text

    return parse_directive_text(TestDirective, "", content, validate_options=not as_yaml)


def _alt_texts(options: dict, lines: list, first_line: int) -> list:
    """The image alt texts and captions in a code cell's options, each a Paragraph."""
    try:
        mystnb = options.get("mystnb") or {}
        texts = [(f, (mystnb.get(key) or {}).get(f)) for key in ("image", "figure")
                 for f in ("alt", "caption")]
    except AttributeError:  # not mappings: no alt text to read
        return []
    found = []
    for field_, text in texts:
        if isinstance(text, str):
            at = next((first_line + n for n, line in enumerate(lines)
                       if re.match(rf"\s*{field_}:", line)), first_line)
            found.append(_paragraph([text], at))
    return found


def prose_paragraphs(markdown: str, first: int = 1) -> list:
    """The Paragraphs a reader reads in MyST markdown whose first line is line ``first``."""
    return list(_prose_paragraphs(markdown, first))


@lru_cache(maxsize=128)  # the checks of a page read its prose several times (frozen Paragraphs)
def _prose_paragraphs(markdown: str, first: int) -> tuple:
    lines, found = markdown.splitlines(), []
    for token in parser().parse(markdown):
        if token.map is None:
            continue
        start, end = token.map
        if token.type in ("paragraph_open", "heading_open", "table_open"):
            found.append(_paragraph(lines[start:end], first + start))
        elif token.type not in ("fence", "colon_fence"):
            continue
        name, _, argument = token.info.strip().partition(" ")
        if name == "{code-cell}":
            options = directive_text(token.content, as_yaml=True).options
            found += _alt_texts(options, token.content.splitlines(), first + start + 1)
        elif token.type == "colon_fence" or name.startswith("{") and name not in _CODE_INFOS:
            if argument.strip() and name not in _ARGUMENT_NOT_PROSE:  # a title is prose
                found.append(_paragraph([argument], first + start))
            parsed = directive_text(token.content)
            found += prose_paragraphs("\n".join(parsed.body),
                                      first + start + 1 + parsed.body_offset)
    return tuple(found)


def sentence_spans(text: str) -> list:
    """(start, end) of each sentence of a paragraph's text."""
    spans, start = [], 0
    for match in re.finditer(r"[.!?][)\]\"'”’*_]*\s+(?=[^a-z\s])", text):
        before = text[start:match.start() + 1]
        if before.endswith(_ABBREVIATIONS):
            continue
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def canonical(number: str, unit: str) -> str:
    """A figure as matched: ``number`` and its unit, spelling unified ("1.4 times" -> "1.4x")."""
    unit = re.sub(r"\s+", " ", unit.strip())
    return number + _CANONICAL_UNITS.get(unit, unit)


def find_figures(markdown: str, chapter: str = "") -> list:
    """Every number with a unit in the prose of ``markdown``, GPU figures or not."""
    figures, lead = [], ""
    for paragraph in prose_paragraphs(markdown):
        about = ""
        for start, end in sentence_spans(paragraph.masked):
            sentence, masked = paragraph.text[start:end], paragraph.masked[start:end]
            named = re.sub(r"\]\([^)\s]*\)", "]", sentence)  # not in URLs
            # what the sentence is about: what it names, else what the one before was about
            about = ("gpu" if GPU_WORDS.search(named) else "cpu" if CPU_WORDS.search(named)
                     else about)
            found = []
            for match in _FIGURE.finditer(masked):
                kind = next(k for k, _ in _UNITS if match[k] is not None)
                unit = match[kind]
                if kind == "size" and _WORK_NOUN.match(masked, match.end()):
                    continue
                for group in ("first", "second"):
                    if match[group] is not None:
                        found.append((start + match.start(group), match[group], unit, kind,
                                      match[0].strip()))
                # numbers a list carries on from this figure, up to the next figure
                following = _FIGURE.search(masked, match.end())
                stop = following.start() if following else len(masked)
                for carried in _CARRIED.finditer(masked, match.end(), stop):
                    found.append((start + carried.start("num"), carried["num"], unit, kind,
                                  carried["num"]))
            for offset, number, unit, kind, written in found:
                figures.append(Figure(
                    chapter=chapter, line=paragraph.line_at(offset), number=number,
                    unit=canonical("", unit), kind=kind, written=written,
                    sentence=" ".join(sentence.split()), paragraph=paragraph.text,
                    lead=lead, about=about))
        lead = paragraph.text
    return figures


def chapter_figures() -> list:
    """The GPU figures of every chapters/*.md."""
    return [f for path in sorted(CHAPTERS.glob("*.md"))
            for f in find_figures(path.read_text(encoding="utf-8"), path.stem) if f.is_gpu]


def output_text(cell) -> str:
    """What a code cell printed: its streams, text results and errors' messages, in order."""
    def text(output):
        value = output.get("text") or output.get("data", {}).get("text/plain") or output.get(
            "evalue") or ""
        return "".join(value) if isinstance(value, list) else value
    return "".join(text(o) for o in cell.get("outputs", []))


def recorded_texts(runs: Path = RUNS) -> dict:
    """{(label, its short form, its GPUs' names): what its cells printed} per recording."""
    from booktools.runs import code_cells, runs as recorded_runs
    recorded = {}
    for run in recorded_runs(Path(runs)):
        label = run.meta.get("label", "")
        names = {run.tab_label, *run.meta.get("gpus", [])} - {label, ""}
        texts = [output_text(cell) for nb in run.notebooks.values() for cell in code_cells(nb)]
        recorded[(label, *sorted(names))] = "\n".join(t for t in texts if t)
    return recorded


def load_datasheet() -> dict:
    """tests/gpu_figures.yml: {"datasheet": [...], "not_measured": [...]}, entries checked."""
    import yaml
    data = yaml.safe_load(DATASHEET.read_text(encoding="utf-8")) or {}
    listed = {section: data.get(section) or [] for section in NEEDS}
    for section, entries in listed.items():
        for entry in entries:
            missing = [k for k in NEEDS[section] if not entry.get(k)]
            if missing:
                raise ValueError(f"{DATASHEET}: a {section} entry lacks {', '.join(missing)}: "
                                 f"{entry}")
            for written in entry["figures"]:
                figure_keys(written)
    return listed


def listed_for(figure: Figure, entries: list) -> list:
    """The entries (of one section of tests/gpu_figures.yml) that list ``figure``."""
    return [e for e in entries if e["chapter"] == figure.chapter
            and any(figure.key in figure_keys(w) for w in e["figures"])
            and (not e.get("context") or e["context"] in figure.sentence)]


def _names(text: str, names) -> bool:
    return any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text) for n in names)


def check_figures(figures: list, recorded: dict, listed: dict) -> list:
    """The Problems among ``figures`` (GPU figures) against recordings and tests/gpu_figures.yml."""
    problems = []
    for figure in figures:
        if listed_for(figure, listed.get("not_measured", [])):
            continue
        sheets = listed_for(figure, listed.get("datasheet", []))
        if sheets:
            vendors = sorted({e["vendor"] for e in sheets})
            context = " ".join((figure.lead, figure.paragraph))
            if not any(_names(context, [v]) for v in vendors):
                problems.append(Problem(figure, f"a datasheet figure ({sheets[0]['source']}): "
                                        f"name the vendor ({', '.join(vendors)}) in its sentence"))
            continue
        # its exact number, its unit as any spelling of it
        units = "|".join(re.escape(u) for u, c in [*_CANONICAL_UNITS.items(), (figure.unit,) * 2]
                         if c == figure.unit)
        held = re.compile(rf"(?<![\d.]){re.escape(figure.number)}\s?(?:{units})(?![\w/])")
        holders = [names for names, text in recorded.items() if held.search(text)]
        if not holders:
            problems.append(Problem(figure, "in no recorded output"))
        elif not any(_names(figure.paragraph, names) for names in holders):
            problems.append(Problem(figure, "recorded on " + " / ".join(
                names[0] for names in holders) + ", but the sentence does not name "
                "that machine"))
    return problems


def figure_keys(written: str) -> set:
    """The keys of a figure as written in tests/gpu_figures.yml: "80 GB", "1.6–4.8 TB/s"."""
    match = _FIGURE.fullmatch(str(written).strip())
    if not match:
        raise ValueError(f"not a figure: {written!r} (a number and a unit, e.g. '80 GB')")
    unit = next(match[k] for k, _ in _UNITS if match[k] is not None)
    return {canonical(match[g], unit) for g in ("first", "second") if match[g] is not None}


def check_book() -> list:
    """The Problems of every chapter's GPU figures."""
    return check_figures(chapter_figures(), recorded_texts(), load_datasheet())


def format_problems(problems: list) -> str:
    """One paragraph per offending figure, then what to do."""
    lines = []
    for p in problems:
        f = p.figure
        shown = f.number + ("" if f.unit in ("x", "%") else " ") + f.unit
        if f.written != shown:
            shown += f" (in {f.written!r})"
        lines.append(f"chapters/{f.chapter}.md:{f.line}: {shown}: {p.why}\n    {f.sentence}")
    if lines:
        lines.append("\nQuote it from a recorded run's output naming the machine, or list "
                     "it in tests/gpu_figures.yml (a datasheet's: name the vendor); else drop it.")
    return "\n".join(lines)


def main(argv=None) -> int:
    try:
        problems = check_book()
    except ValueError as error:  # a recording or a datasheet that cannot be read
        print(f"gpu_figures: {error}", file=sys.stderr)
        return 2
    if problems:
        print(format_problems(problems))
        return 1
    print("every GPU figure is recorded or a listed datasheet figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
