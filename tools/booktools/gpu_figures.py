"""GPU figures in the chapters' prose, held to the recorded runs and datasheets.

A *GPU figure* is a number with a unit that the prose quotes as measured on a
GPU: a rate (TFLOP/s, GB/s), a time (µs, ms, s), a size (B, MiB, GiB), a ratio
(1.4x, 1.4×, "1.4 times"), a share (86%) or a count of waits ("1001 waits").
Each must be either

* *recorded*: the same number and unit stand in a text output (stream text,
  text/plain, an error's message) of a recorded chapter notebook,
  runs/<machine>/<chapter>.ipynb, and the sentence or its paragraph names
  that machine (run.json "label", e.g. "NVIDIA H100", or it without the
  vendor, "H100"); or
* a *datasheet* figure: listed for its chapter in tests/gpu_figures.yml with
  the vendor and the document it comes from, and the sentence, its paragraph
  or the paragraph leading into it (a table's) names the vendor ("NVIDIA's
  datasheet gives ...").

The same file's ``not_measured`` entries exempt a figure that is no
measurement at all (a threshold the code uses, say), each with the words of
its sentence (``context``) and why.

What is prose: the markdown of chapters/NAME.md without its YAML front matter,
code cells, code blocks, display math, labels and comments; inline code, inline
math and link targets are blanked (so a number there is never a figure; only a
number that ends inline math before a unit, "$\\ell \\approx 14$ µs", is), but
directive titles (not a label or path argument), exercises, solutions,
admonitions and the alt texts of code cells' images are prose. Paragraphs end at blank lines, list items, headings
and fences (a table is one paragraph); sentences end at ".", "!" or "?" before a space and a
character that is not a lower-case letter (not after "e.g." and the like).

Which figures are GPU figures, sentence by sentence: a sentence is *about a GPU*
when it names one (GPU_WORDS: "GPU", "CUDA", "MPS", "NVIDIA", H100, A100, T4,
RTX, ...), *about the CPU* when it names the CPU (CPU_WORDS) and no GPU, and
otherwise about what the sentence before it in the paragraph was about (so
"Each step took 47 µs." after "On the H100 ..." is about the GPU). A rate is
a GPU figure unless its sentence is about the CPU; any other unit only where
its sentence is about a GPU. Not figures: sizes that name the work rather than
measure it ("a 64 MiB copy", "a 200 GiB request"), hyphenated sizes
("24-byte"), products of sizes ("4096 × 4096"). A decimal number that a list
carries on from a figure with a unit ("51.5 TFLOP/s ..., 399.5 with ... and 783.8 in
bfloat16") is a figure in that unit. Ranges ("7–54 GB/s", "1.2 to 1.4 times",
"40 or 80 GB") are one figure per end.

Matching: the number's digits exactly (a longer number never matches: 1.4x is
not in 11.4x or 1.45x), the unit as written up to spacing and spelling
(x = × = "times"; µs = μs = us; "%" = "percent"; "waits" = "wait").

    python -m booktools.gpu_figures    lists every offending figure (exit 1 if any)
"""
from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "Paragraph", "Figure", "Problem", "GPU_WORDS", "CPU_WORDS",
    "prose_paragraphs", "sentence_spans", "find_figures", "chapter_figures",
    "canonical", "figure_keys", "recorded_texts", "in_texts", "load_datasheet", "listed_for",
    "check_figures", "check_book", "format_problems", "main",
]

ROOT = Path(__file__).resolve().parents[2]  # tools/booktools/gpu_figures.py in a checkout
CHAPTERS = ROOT / "chapters"
RUNS = ROOT / "runs"
DATASHEET = ROOT / "tests" / "gpu_figures.yml"

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


@dataclass
class Paragraph:
    """Prose lines joined by spaces; ``masked`` blanks code, math and link targets."""
    text: str
    masked: str
    starts: list  # (offset in text, line number in the file), one per joined line

    def line_at(self, offset: int) -> int:
        """The file's line number of the character at ``offset``."""
        line = self.starts[0][1]
        for start, number in self.starts:
            if start > offset:
                break
            line = number
        return line


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


_FENCE = re.compile(r"^\s*(?P<fence>`{3,}|~{3,}|:{3,})\s*"
                    r"(?P<info>\{[\w-]+\}|[\w-]*)\s*(?P<arg>.*)$")
_CODE_INFOS = {"", "{code-cell}", "{code-block}", "{code}", "{sourcecode}", "{math}",
               "{raw}", "{eval-rst}", "{literalinclude}", "{mermaid}"}
# Directives whose argument is a label or a path, not a title to read.
_ARGUMENT_NOT_PROSE = {"{solution-start}", "{solution-end}", "{figure}", "{image}",
                       "{include}"}
_NEW_BLOCK = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s|^\s*#{1,6}\s")
_SKIP_LINE = re.compile(r"^\s*(?:\(.+\)=\s*$|\+\+\+|<!--.*-->\s*$)")


def _alt_texts(header: list, first_line: int) -> list:
    """(line of its key, text) of the image alt texts and captions in a code cell's YAML header."""
    try:
        import yaml
        meta = yaml.safe_load("\n".join(header)) or {}
    except Exception:  # a header that is not YAML has no alt text to read
        return []
    found = []
    mystnb = meta.get("mystnb") if isinstance(meta, dict) else None
    for key in ("image", "figure"):
        part = (mystnb or {}).get(key) or {}
        for field_ in ("alt", "caption"):
            if isinstance(part, dict) and isinstance(part.get(field_), str):
                at = next((first_line + n for n, line in enumerate(header)
                           if re.match(rf"\s*{field_}:", line)), first_line)
                found.append((at, part[field_]))
    return found


def prose_paragraphs(markdown: str) -> list:
    """The prose paragraphs of a MyST markdown chapter (see the module's docstring)."""
    lines = markdown.splitlines()
    paragraphs, current = [], []
    stack = []  # open fences: (char, length, is_code)

    def flush():
        if current:
            text, starts = "", []
            for number, line in current:
                if text:
                    text += " "
                starts.append((len(text), number))
                text += line.strip()
            paragraphs.append(Paragraph(text, _mask(text), starts))
            current.clear()

    def add(number, line):
        current.append((number, line))

    i = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        i = 1
        while i < len(lines) and lines[i].strip() != "---":
            i += 1
        i += 1
    in_math = in_comment = False
    while i < len(lines):
        line, number = lines[i], i + 1
        i += 1
        fence = _FENCE.match(line)
        if stack and stack[-1][2]:  # inside code: only its closing fence matters
            char, length, _ = stack[-1]
            if fence and fence["fence"][0] == char and len(fence["fence"]) >= length \
                    and not fence["info"] and not fence["arg"]:
                stack.pop()
            continue
        if in_comment:
            in_comment = "-->" not in line
            continue
        if in_math:
            in_math = line.strip() != "$$" and not line.rstrip().endswith("$$")
            continue
        if fence:
            flush()
            char = fence["fence"][0]
            if stack and char == stack[-1][0] and len(fence["fence"]) >= stack[-1][1] \
                    and not fence["info"] and not fence["arg"]:
                stack.pop()  # a directive ends
                continue
            info = fence["info"]
            is_code = char != ":" and (info in _CODE_INFOS or not info.startswith("{"))
            stack.append((char, len(fence["fence"]), is_code))
            if is_code and info == "{code-cell}" and i < len(lines) and lines[i].strip() == "---":
                header_start, j = i + 1, i + 1
                while j < len(lines) and lines[j].strip() != "---":
                    j += 1
                paragraphs.extend(Paragraph(text, _mask(text), [(0, at)]) for at, text
                                  in _alt_texts(lines[header_start:j], header_start + 1))
            elif not is_code:
                if fence["arg"] and info not in _ARGUMENT_NOT_PROSE:  # a title is prose
                    add(number, fence["arg"])
                    flush()
                while i < len(lines) and re.match(r"^\s*:[\w-]+:", lines[i]):
                    i += 1  # the directive's options
            continue
        stripped = line.strip()
        if not stripped:
            flush()
            continue
        if stripped.startswith("<!--"):
            flush()
            in_comment = "-->" not in stripped
            continue
        if stripped.startswith("$$"):
            flush()
            in_math = not (len(stripped) > 2 and stripped.endswith("$$"))
            continue
        if _SKIP_LINE.match(line):
            flush()
            continue
        in_table = bool(current) and current[-1][1].lstrip().startswith("|")
        if _NEW_BLOCK.match(line) or in_table != stripped.startswith("|"):
            flush()  # a list item, a heading, or a table's first row or the line after it
        add(number, line)
        if stripped.startswith("#"):
            flush()
    flush()
    return paragraphs


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


def _about(sentence: str, before: str) -> str:
    """What a sentence is about ("gpu", "cpu" or ""), ``before`` if it names neither."""
    if GPU_WORDS.search(sentence):
        return "gpu"
    if CPU_WORDS.search(sentence):
        return "cpu"
    return before


def find_figures(markdown: str, chapter: str = "") -> list:
    """Every number with a unit in the prose of ``markdown``, GPU figures or not."""
    figures, lead = [], ""
    for paragraph in prose_paragraphs(markdown):
        about = ""
        for start, end in sentence_spans(paragraph.masked):
            sentence, masked = paragraph.text[start:end], paragraph.masked[start:end]
            about = _about(re.sub(r"\]\([^)\s]*\)", "]", sentence), about)  # not URLs
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


def chapter_figures(chapters: Path = CHAPTERS) -> list:
    """The GPU figures of every chapters/*.md."""
    figures = []
    for path in sorted(Path(chapters).glob("*.md")):
        figures += [f for f in find_figures(path.read_text(encoding="utf-8"), path.stem)
                    if f.is_gpu]
    return figures


def output_text(cell) -> str:
    """What a code cell printed: its streams, text results and errors' messages, in order."""
    def text(output):
        value = output.get("text") or output.get("data", {}).get("text/plain") or output.get(
            "evalue") or ""
        return "".join(value) if isinstance(value, list) else value
    return "".join(text(o) for o in cell.get("outputs", []))


def recorded_texts(runs: Path = RUNS) -> dict:
    """{machine's names: what its cells printed} of every recording: run.json's label first,
    then the label without its vendor ("H100") and its GPUs' names."""
    from booktools.runs import code_cells, runs as recorded_runs
    recorded = {}
    for run in recorded_runs(Path(runs)):
        label = run.meta.get("label", "")
        names = {run.tab_label, *run.meta.get("gpus", [])} - {label, ""}
        texts = [output_text(cell) for nb in run.notebooks.values() for cell in code_cells(nb)]
        recorded[(label, *sorted(names))] = "\n".join(t for t in texts if t)
    return recorded


def in_texts(figure: Figure, text: str) -> bool:
    """Whether ``text`` holds the figure: its exact number, its unit as spelled (any spacing)."""
    unit_forms = [re.escape(u) for u, c in _CANONICAL_UNITS.items() if c == figure.unit]
    unit_forms.append(re.escape(figure.unit))
    pattern = (rf"(?<![\d.]){re.escape(figure.number)}\s?(?:{'|'.join(unit_forms)})"
               rf"(?![\w/])")
    return re.search(pattern, text) is not None


def load_datasheet(path: Path = DATASHEET) -> dict:
    """tests/gpu_figures.yml: {"datasheet": [...], "not_measured": [...]}, entries checked."""
    import yaml
    data = {}
    if Path(path).exists():
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    listed = {section: data.get(section) or [] for section in ("datasheet", "not_measured")}
    needs = {"datasheet": ("chapter", "figures", "vendor", "source"),
             "not_measured": ("chapter", "figures", "context", "why")}
    for section, entries in listed.items():
        for entry in entries:
            missing = [k for k in needs[section] if not entry.get(k)]
            if missing:
                raise ValueError(f"{path}: a {section} entry lacks {', '.join(missing)}: {entry}")
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
        holders = [names for names, text in recorded.items() if in_texts(figure, text)]
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


def check_book(chapters: Path = CHAPTERS, runs: Path = RUNS, datasheet: Path = DATASHEET) -> list:
    """The Problems of every chapter's GPU figures."""
    return check_figures(chapter_figures(chapters), recorded_texts(runs), load_datasheet(datasheet))


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
        lines.append(
            "\nEvery GPU figure in the prose must be quoted verbatim (same digits and unit) "
            "from a text output of a recorded run, runs/<machine>/<chapter>.ipynb, in a "
            "sentence that names the machine (\"on the H100\"); or be a vendor's datasheet "
            "figure listed for its chapter in tests/gpu_figures.yml with its source, in a "
            "sentence that names the vendor. Otherwise drop it, or rewrite the sentence to "
            "quote a recorded figure.")
    return "\n".join(lines)


def main(argv=None) -> int:
    """List the offending GPU figures of the chapters; 1 if there are any."""
    try:
        problems = check_book()
    except ValueError as error:  # a recording or a datasheet that cannot be read
        print(f"gpu_figures: {error}", file=sys.stderr)
        return 2
    if problems:
        print(format_problems(problems))
        print(f"\n{len(problems)} offending GPU figure(s)")
        return 1
    print("every GPU figure is recorded or a listed datasheet figure")
    return 0


if __name__ == "__main__":
    sys.exit(main())
