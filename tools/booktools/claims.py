"""The conclusions the prose draws from measured outputs, checked against every output.

    python -m booktools.claims [--chapter NAME ...] [--verbose]

One YAML file per English chapter, chapters/claims/<chapter>.yml, holds a
list of claims; each is one conclusion that chapters/<chapter>.md draws from
the output of one named code cell::

    - says: cost far more than one large copy   # verbatim on ONE line of the .md
      cell: copy-timings                        # the cell's :name:
      faster: [one copy of 4.00 MiB, 1024 copies of 4.00 KiB]
      by: [2, null]        # optional range of the relation's ratio (null: open)
      tolerance: 0.1       # optional noise tolerated (default 0.1, 10%)
      where: any           # optional scope: any | cpu | gpu | cuda | mps |
                           # "cc>=8.0" (CUDA compute capability; also >, <=, <, ==)
                           # | a machine folder under runs/ (glob allowed)

Values. A label names the first output line that starts (indentation aside)
with ``LABEL:``; its value is the first quantity after that colon, in base
units: times (ns, µs, us, ms, s), sizes (B, KiB, MiB, GiB, TiB, kB, MB, GB,
TB), rates (FLOP/s with k/M/G/T/P, B/s, kB/s ... GB/s, KiB/s ... GiB/s),
speed-ups and ratios (``x``, ``×``), percent (%) or a bare number. In a
relation, ``{label: L, nth: 2}`` takes the n-th quantity of the line
(1-based), and a plain number (not a string) stands for itself in base
units (e.g. ``ratio: ["cuda:0, float32, n = 1024", 1]``).

Relations (exactly one key per claim), v the value, s the speed-up:

- ``faster: [A, B]``: s = t(B)/t(A) for times, r(A)/r(B) for rates; holds
  when lo/(1+tol) <= s <= hi*(1+tol), ``by: [lo, hi]`` (default [1, null]).
- ``slower: [A, B]``: ``faster: [B, A]``.
- ``smaller: [A, B]``: v(B)/v(A) in ``by`` as above (any quantity).
- ``about: [A, B]``: v(A)/v(B) within [1/(1+w), 1+w], ``within: w`` (0.2).
- ``ratio: [A, B]``: v(A)/v(B) in ``between: [lo, hi]``, widened by tol.
- ``little_more: [A, B]``: 1/(1+tol) <= v(B)/v(A) <= ``at_most``*(1+tol)
  (at_most default 1.25).
- ``no_gain: [A, B]``: s <= 1+w, ``within: w`` (default 0.1).
- ``stops_improving: [A, B, ...]``: times or rates in order of growing
  effort; the last is within ``within`` (default 0.1) of the best.

Where. A claim is checked against the stored CPU outputs (chapters/
<chapter>.ipynb: scopes any, cpu) and each recording runs/<machine>/
<chapter>.ipynb (any; gpu, cuda, mps, cc by its run.json; cpu for a run
without GPUs; its folder name). A recorded cell that is not current
(booktools.runs.cell_status: unrecorded, source changed, stored output
changed, an error; or d2lgpu changed since the recorded commit,
runs.package_changes) leaves the claim *unchecked* there, with why; so does
an output that prints none of the claim's lines (a cell that says
"skipped"). A compute capability comes from run.json's
``compute_capability`` (the recorder writes it), else from the GPU's name.

Report. One line per contradiction and per unchecked claim::

    chapters/tensors.md:318: claim "..." (faster: A than B, by >= 2) contradicted by runs/nvidia-h100/tensors cell copy-timings: speed-up 0.5x

"(noisy)" follows when the output's ``noisy:`` line names a label of the
claim (still a contradiction). Then "claims: N held, M unchecked, K
contradicted" (each claim counted once per output it is checked against).
Exit 1 on any contradiction, else 0. A malformed declaration (unknown cell,
unknown or second relation, a ``says`` not on exactly one line of the .md,
bad scope or option, a label no in-scope output prints) is one line
``chapters/claims/X.yml:LINE: ...`` and exit 2.
"""
from __future__ import annotations

import argparse
import fnmatch
import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from booktools import runs

__all__ = ["Claim", "Place", "Result", "DeclarationError", "load_claims", "parse_quantity",
           "find_value", "evaluate", "places", "check", "compute_capabilities", "main"]

ROOT = runs.ROOT
RELATIONS = ("faster", "slower", "smaller", "about", "ratio", "little_more", "no_gain",
             "stops_improving")
OPTIONS = {"by": ("faster", "slower", "smaller"), "within": ("about", "no_gain", "stops_improving"),
           "between": ("ratio",), "at_most": ("little_more",),
           "tolerance": RELATIONS}
KEYS = {"says", "cell", "where", *OPTIONS, *RELATIONS}
KINDS = ("any", "cpu", "gpu", "cuda", "mps")
CC_SCOPE = re.compile(r"cc\s*(>=|<=|==|>|<)\s*(\d+(?:\.\d+)?)")
MACHINE_GLOB = re.compile(r"[A-Za-z0-9._*?\[\]-]+")
# Compute capability of GPUs by name, for recordings whose run.json predates
# the recorder writing it (NVIDIA's CUDA GPUs table); longest match first.
KNOWN_CC = {"H100": "9.0", "H200": "9.0", "GH200": "9.0", "B200": "10.0", "B100": "10.0",
            "A100": "8.0", "A30": "8.0", "A10G": "8.6", "A10": "8.6", "A40": "8.6",
            "L40S": "8.9", "L40": "8.9", "L4": "8.9", "T4": "7.5", "V100": "7.0",
            "P100": "6.0", "RTX 4090": "8.9", "RTX 3090": "8.6", "RTX 2080": "7.5"}

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
_TIME = {"ns": 1e-9, "µs": 1e-6, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def _units() -> dict[str, tuple[float, str]]:
    units = {u: (f, "time") for u, f in _TIME.items()}
    for p, f in {**_PREFIX, **_BINARY}.items():
        units[f"{p}B"] = (f, "size")
        units[f"{p}B/s"] = (f, "rate")
    for p, f in _PREFIX.items():
        units[f"{p}FLOP/s"] = (f, "rate")
    units.update({"x": (1.0, "ratio"), "×": (1.0, "ratio"), "%": (0.01, "percent")})
    return units


UNITS = _units()
_UNIT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True))
_QUANTITY = re.compile(r"(?<![\w.])([-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(\s?)"
                       rf"({_UNIT})?(?![\w/])")


class DeclarationError(Exception):
    """A malformed claim: its message is the one line to print (file:line: ...)."""


@dataclass
class Claim:
    """One declared claim."""
    path: Path            # chapters/claims/<chapter>.yml
    line: int             # its line in that file
    chapter: str
    says: str
    says_line: int        # its line in chapters/<chapter>.md
    cell: str
    relation: str
    operands: list        # labels ({label, nth}) or numbers
    options: dict
    where: str = "any"
    lines: dict = field(default_factory=dict)  # key -> line in the .yml


@dataclass(frozen=True)
class Place:
    """An output a claim can be checked against: the stored CPU one or a recording."""
    name: str             # e.g. "chapters/tensors.ipynb" or "runs/nvidia-h100/tensors"
    machine: str | None   # the runs/ folder, None for the stored outputs
    kinds: frozenset      # the scopes it answers: any, cpu, gpu, cuda, mps
    capabilities: tuple   # compute capabilities, as floats (empty: unknown or none)


@dataclass
class Result:
    """A claim at one place: held, contradicted or unchecked, and the line that says so."""
    claim: Claim
    place: Place
    status: str           # "held" | "contradicted" | "unchecked"
    detail: str


# --- declarations ---

def _error(path: Path, line: int, message: str, root: Path) -> DeclarationError:
    return DeclarationError(f"{_rel(path, root)}:{line}: {message}")


def _rel(path: Path, root: Path) -> str:
    path = Path(path)
    return str(path.relative_to(root)) if path.is_relative_to(root) else str(path)


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _range(value) -> bool:
    return (isinstance(value, list) and len(value) == 2
            and all(v is None or (_number(v) and v > 0) for v in value)
            and any(v is not None for v in value)
            and (None in value or value[0] <= value[1]))


def _operand(value):
    """A relation's operand, or None if malformed: a label, {label, nth} or a number."""
    if _number(value):
        return float(value)
    if isinstance(value, str) and value.strip():
        return {"label": value.strip(), "nth": 1}
    if isinstance(value, dict) and set(value) <= {"label", "nth"} and isinstance(
            value.get("label"), str) and value["label"].strip():
        nth = value.get("nth", 1)
        if isinstance(nth, int) and not isinstance(nth, bool) and nth >= 1:
            return {"label": value["label"].strip(), "nth": nth}
    return None


def _scope_problem(where, machines: list[str]) -> str | None:
    if not isinstance(where, str):
        return f"scope {where!r} is not text"
    if where in KINDS or CC_SCOPE.fullmatch(where):
        return None
    if where.startswith("cc"):
        return f"bad scope {where!r}: a compute capability reads e.g. \"cc>=8.0\""
    if not MACHINE_GLOB.fullmatch(where):
        return (f"bad scope {where!r}: use any, cpu, gpu, cuda, mps, \"cc>=X.Y\" "
                "or a machine folder under runs/")
    if not fnmatch.filter(machines, where):
        return (f"bad scope {where!r}: not any, cpu, gpu, cuda, mps or \"cc>=X.Y\", and "
                f"no machine folder under runs/ matches it ({', '.join(machines) or 'none'})")
    return None


def _md_line(md: Path, says: str) -> tuple[int | None, int]:
    """(line of the one line of md holding says or None, how many lines hold it)."""
    found = [n for n, line in enumerate(md.read_text(encoding="utf-8").splitlines(), 1)
             if says in line]
    return (found[0] if len(found) == 1 else None), len(found)


def _compose(path: Path, root: Path):
    try:
        return yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.context_mark or error.problem_mark  # where the construct began
        line = mark.line + 1 if mark else 1
        problem = " ".join(str(error.problem or error).split())
        raise _error(path, line, f"not valid YAML: {problem}", root) from None


def _item_claim(path: Path, node, chapter: str, cells: dict, md: Path, root: Path,
                machines: list[str]) -> Claim:
    """One item of a claims file, as a Claim; DeclarationError naming its line if malformed."""
    line = node.start_mark.line + 1
    if not isinstance(node, yaml.MappingNode):
        raise _error(path, line, "a claim is a mapping (says:, cell:, one relation)", root)
    loader = yaml.SafeLoader("")
    lines, item = {}, {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        lines[key] = key_node.start_mark.line + 1
        if key in item:
            raise _error(path, lines[key], f"{key!r} given twice", root)
        item[key] = loader.construct_object(value_node, deep=True)
    at = lambda key: lines.get(key, line)  # noqa: E731
    unknown = [k for k in item if k not in KEYS]
    if unknown:
        raise _error(path, at(unknown[0]), f"unknown relation or key {unknown[0]!r} "
                     f"(relations: {', '.join(RELATIONS)})", root)
    relations = [k for k in item if k in RELATIONS]
    if len(relations) != 1:
        what = (f"{len(relations)} relations ({', '.join(relations)})" if relations
                else "no relation")
        raise _error(path, at(relations[1]) if relations else line,
                     f"{what}: a claim has exactly one of {', '.join(RELATIONS)}", root)
    relation = relations[0]
    for key in ("says", "cell"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            raise _error(path, at(key), f"{key!r} missing or not text", root)
    says, cell = item["says"].strip(), item["cell"].strip()
    if cell not in cells:
        raise _error(path, at("cell"), f"unknown cell {cell!r} in {_rel(md, root)}", root)
    says_line, count = _md_line(md, says)
    if says_line is None:
        where = "no line" if count == 0 else f"{count} lines"
        raise _error(path, at("says"), f"says {says!r} is found on {where} of "
                     f"{_rel(md, root)}: quote words of one line", root)
    raw = item[relation]
    operands = [_operand(v) for v in raw] if isinstance(raw, list) else []
    wanted = "two or more" if relation == "stops_improving" else "two"
    if (not operands or None in operands
            or (len(operands) != 2 if relation != "stops_improving" else len(operands) < 2)):
        raise _error(path, at(relation), f"{relation}: wants a list of {wanted} labels "
                     f"(text, {{label: L, nth: N}}) or numbers, got {raw!r}", root)
    if all(isinstance(o, float) for o in operands):
        raise _error(path, at(relation), f"{relation}: no label of {cell!r} among {raw!r}", root)
    options = {}
    for key, allowed in OPTIONS.items():
        if key not in item:
            continue
        value = item[key]
        if relation not in allowed:
            raise _error(path, at(key), f"{key!r} does not go with {relation} "
                         f"(it goes with {', '.join(allowed)})", root)
        good = _range(value) if key in ("by", "between") else (_number(value) and value >= 0)
        if not good:
            shape = "[lo, hi] of positive numbers, one may be null" if key in (
                "by", "between") else "a number >= 0"
            raise _error(path, at(key), f"{key}: {value!r} is not {shape}", root)
        options[key] = value
    if relation == "ratio" and "between" not in options:
        raise _error(path, at(relation), "ratio needs between: [lo, hi]", root)
    where = item.get("where", "any")
    problem = _scope_problem(where, machines)
    if problem:
        raise _error(path, at("where"), problem, root)
    return Claim(path, line, chapter, says, says_line, cell, relation, operands, options,
                 where, lines)


def load_claims(path: Path, root: Path = ROOT, machines: list[str] | None = None) -> list[Claim]:
    """The claims of one chapters/claims/<chapter>.yml; DeclarationError if one is malformed."""
    chapter = path.stem
    md, ipynb = root / "chapters" / f"{chapter}.md", root / "chapters" / f"{chapter}.ipynb"
    if not md.is_file() or not ipynb.is_file():
        raise _error(path, 1, f"no chapter {_rel(md, root)} (with its .ipynb) for these claims",
                     root)
    if machines is None:
        machines = [r.machine for r in runs.runs(root / "runs")]
    document = _compose(path, root)
    if document is None:
        return []
    if not isinstance(document, yaml.SequenceNode):
        raise _error(path, document.start_mark.line + 1, "a claims file is a list of claims",
                     root)
    cells = runs.named_cells(runs.read_notebook(ipynb))
    return [_item_claim(path, node, chapter, cells, md, root, machines)
            for node in document.value]


# --- values ---

def parse_quantity(text: str, nth: int = 1) -> tuple[float, str] | None:
    """The nth quantity in text, (value in base units, kind), or None."""
    found = list(_QUANTITY.finditer(text))
    if len(found) < nth:
        return None
    number, space, unit = found[nth - 1].groups()
    if unit in ("x", "×") and space:  # "3 x 4" is not a ratio
        unit = None
    factor, kind = UNITS[unit] if unit else (1.0, "number")
    return float(number) * factor, kind


def output_text(cell) -> str:
    """What a code cell printed: its streams and text results, in order."""
    parts = []
    for output in cell.get("outputs", []):
        text = output.get("text")
        if text is None:
            text = output.get("data", {}).get("text/plain", "")
        parts.append(text if isinstance(text, str) else "".join(text))
    return "".join(parts)


def _label_line(text: str, label: str) -> str | None:
    """What follows ``label:`` on the first line that starts with it, or None."""
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(label + ":"):
            return stripped[len(label) + 1:]
    return None


def find_value(text: str, operand) -> tuple[float, str] | None:
    """An operand's (value, kind) in a cell's printed text, or None where it is not printed."""
    if isinstance(operand, float):
        return operand, "constant"
    rest = _label_line(text, operand["label"])
    return None if rest is None else parse_quantity(rest, operand["nth"])


def _noisy(text: str, claim: Claim) -> bool:
    labels = [o["label"] for o in claim.operands if isinstance(o, dict)]
    return any(line.strip().startswith("noisy:") and any(label in line for label in labels)
               for line in text.splitlines())


# --- relations ---

def _name(operand) -> str:
    return operand["label"] if isinstance(operand, dict) else f"{operand:g}"


def describe(claim: Claim) -> str:
    """The relation in words, e.g. "faster: A than B, by >= 2"."""
    names, o = [_name(x) for x in claim.operands], claim.options
    text = {"faster": " than ", "slower": " than ", "smaller": " than ", "about": " as ",
            "ratio": " to ", "no_gain": " over "}.get(claim.relation, ", ").join(names)
    lo, hi = o.get("by") or o.get("between") or (None, None)
    if claim.relation in ("faster", "slower", "smaller") and "by" in o:
        text += (f", by {lo:g} to {hi:g}" if lo is not None and hi is not None
                 else f", by >= {lo:g}" if lo is not None else f", by <= {hi:g}")
    elif claim.relation == "ratio":
        text += (f", between {lo:g} and {hi:g}" if lo is not None and hi is not None
                 else f", at least {lo:g}" if lo is not None else f", at most {hi:g}")
    elif claim.relation in ("about", "no_gain", "stops_improving"):
        default = 0.2 if claim.relation == "about" else 0.1
        text += f", within {o.get('within', default):.0%}"
    elif claim.relation == "little_more":
        text += f", at most {o.get('at_most', 1.25):g}x"
    return f"{claim.relation}: {text}"


def _x(value: float) -> str:
    return f"{value:.3g}x"


def _speedup(a: tuple, b: tuple) -> float | str:
    """How many times faster a is than b (times or rates), or why it cannot say."""
    (va, ka), (vb, kb) = a, b
    kinds = {ka, kb} - {"constant"}
    if len(kinds) != 1 or kinds - {"time", "rate", "ratio", "number"}:
        return f"a speed-up needs two times or two rates, not {ka} and {kb}"
    kind = kinds.pop()
    if va <= 0 or vb <= 0:
        return "a value is not positive"
    return vb / va if kind == "time" else va / vb


def _within(x: float, lo, hi, tol: float) -> bool:
    return (lo is None or x >= lo / (1 + tol)) and (hi is None or x <= hi * (1 + tol))


def evaluate(claim: Claim, values: list[tuple[float, str]]) -> tuple[bool, str] | str:
    """(holds, what was measured) for the operands' values; a string: why it cannot be judged."""
    o, tol = claim.options, claim.options.get("tolerance", 0.1)
    rel = claim.relation
    if rel in ("faster", "slower", "no_gain"):
        a, b = values if rel != "slower" else values[::-1]
        s = _speedup(a, b)
        if isinstance(s, str):
            return s
        if rel == "no_gain":
            return s <= 1 + o.get("within", 0.1), f"speed-up {_x(s)}"
        lo, hi = o.get("by", [1, None])
        return _within(s, lo, hi, tol), f"{'slow-down' if rel == 'slower' else 'speed-up'} {_x(s)}"
    if rel == "stops_improving":
        kinds = {k for _, k in values} - {"constant"}
        if len(kinds) != 1 or kinds - {"time", "rate"}:
            return f"stops_improving needs times or rates, not {', '.join(sorted(kinds))}"
        vals = [v for v, _ in values]
        best = min(vals) if kinds == {"time"} else max(vals)
        gap = vals[-1] / best if kinds == {"time"} else best / vals[-1]
        return gap <= 1 + o.get("within", 0.1), f"the last is {_x(gap)} off the best"
    (va, ka), (vb, kb) = values
    if {ka, kb} - {"constant"} and len({ka, kb} - {"constant"}) != 1:
        return f"{ka} and {kb} cannot be compared"
    if vb <= 0 or va < 0 or (va == 0 and rel not in ("smaller", "ratio")):
        return "a value is not positive"  # a count of 0 is smaller, and a ratio of 0x
    if rel == "smaller":
        lo, hi = o.get("by", [1, None])
        if va == 0:
            return hi is None, f"0 against {vb:.3g}"
        return _within(vb / va, lo, hi, tol), f"ratio {_x(vb / va)}"
    if rel == "about":
        w = o.get("within", 0.2)
        return 1 / (1 + w) <= va / vb <= 1 + w, f"ratio {_x(va / vb)}"
    if rel == "ratio":
        lo, hi = o["between"]
        return _within(va / vb, lo, hi, tol), f"ratio {_x(va / vb)}"
    # little_more
    r = vb / va
    return 1 / (1 + tol) <= r <= o.get("at_most", 1.25) * (1 + tol), f"ratio {_x(r)}"


# --- where a claim is checked ---

def compute_capabilities(meta: dict) -> tuple[float, ...]:
    """The recording's compute capabilities: run.json's, else from its GPUs' names."""
    recorded = meta.get("compute_capability")
    if isinstance(recorded, list) and recorded:
        try:
            return tuple(float(c) for c in recorded)
        except (TypeError, ValueError):
            return ()
    found = []
    for gpu in meta.get("gpus") or []:
        names = sorted(KNOWN_CC, key=len, reverse=True)
        match = next((n for n in names if re.search(rf"\b{re.escape(n)}\b", gpu)), None)
        if match is None:
            return ()
        found.append(float(KNOWN_CC[match]))
    return tuple(found)


def _run_kinds(meta: dict) -> frozenset:
    gpus = meta.get("gpus") or []
    text = " ".join([str(meta.get("label", "")), *map(str, gpus)])
    if re.search(r"\b(Apple|MPS)\b", text):
        return frozenset({"any", "gpu", "mps"})
    if gpus:
        return frozenset({"any", "gpu", "cuda"} if meta.get("cuda") else {"any", "gpu"})
    return frozenset({"any", "cpu"})


def in_scope(claim: Claim, place: Place) -> bool:
    """Whether the claim's scope includes this place."""
    if claim.where in KINDS:
        return claim.where in place.kinds
    found = CC_SCOPE.fullmatch(claim.where)
    if found:
        return "cuda" in place.kinds
    return place.machine is not None and fnmatch.fnmatch(place.machine, claim.where)


def _cc_holds(claim: Claim, place: Place) -> bool | None:
    found = CC_SCOPE.fullmatch(claim.where)
    if not found or not place.capabilities:
        return None if found else True
    op, bound = found.group(1), float(found.group(2))
    test = {">=": float.__ge__, "<=": float.__le__, "==": float.__eq__, ">": float.__gt__,
            "<": float.__lt__}[op]
    return all(test(cc, bound) for cc in place.capabilities)


def places(chapter: str, recorded: list) -> list[tuple[Place, object]]:
    """(place, its Run or None) for a chapter: the stored outputs, then each recording."""
    stored = Place(f"chapters/{chapter}.ipynb", None, frozenset({"any", "cpu"}), ())
    found = [(stored, None)]
    for run in recorded:
        found.append((Place(f"runs/{run.machine}/{chapter}", run.machine, _run_kinds(run.meta),
                            compute_capabilities(run.meta)), run))
    return found


class _Chapter:
    """A chapter's stored cells and, per recording, each named cell's output or why not."""

    def __init__(self, chapter: str, root: Path, comparison):
        self.chapter = chapter
        self.cells = runs.code_cells(runs.read_notebook(root / "chapters" / f"{chapter}.ipynb"))
        self.comparison = comparison
        self._per_run = {}

    def stored(self, name: str):
        return next(c for c in self.cells if runs.cell_name(c) == name)

    def recorded(self, run, name: str) -> tuple[object | None, str | None]:
        """(the recorded cell, None) where current, else (None, why it is not)."""
        if run.machine not in self._per_run:
            changed = runs.package_changes(run)
            matches = run.pairs(self.chapter, self.cells)
            nb = run.notebooks.get(self.chapter)
            self._per_run[run.machine] = (changed, matches,
                                          runs.code_cells(nb) if nb is not None else [])
        changed, matches, recorded_cells = self._per_run[run.machine]
        index = next(i for i, c in enumerate(self.cells) if runs.cell_name(c) == name)
        cell = self.cells[index]
        status, detail = runs.cell_status(cell, matches.get(index), recorded_cells,
                                          runs.baseline(run, self.chapter) if matches else None,
                                          self.comparison, above=self.cells[:index])
        why = {runs.UNRECORDED: "not recorded", runs.STALE_SOURCE: "recorded from an earlier "
               "version of the cell", runs.STALE_ABOVE: str(detail),
               runs.OUTPUT_CHANGED: "its stored output changed since the recording",
               runs.RECORDED_ERROR: "it raised on the recorded machine"}
        if status in why:
            return None, why[status]
        if changed:
            files = ", ".join(line.split(": ", 1)[1].split(" (")[0] for line in changed)
            return None, f"d2lgpu changed since the recorded commit ({files})"
        return recorded_cells[matches[index].recorded], None


def _judge(claim: Claim, place: Place, cell) -> Result:
    text = output_text(cell)
    values = [find_value(text, o) for o in claim.operands]
    missing = [_name(o) for o, v in zip(claim.operands, values) if v is None]
    if missing:
        return Result(claim, place, "unchecked", f"cell {claim.cell} printed no "
                      f"'{missing[0]}:' line with a quantity")
    judged = evaluate(claim, values)
    if isinstance(judged, str):
        return Result(claim, place, "unchecked", judged)
    holds, measured = judged
    noisy = " (noisy)" if not holds and _noisy(text, claim) else ""
    return Result(claim, place, "held" if holds else "contradicted", measured + noisy)


def check_claims(claims: list[Claim], root: Path = ROOT, recorded: list | None = None,
                 comparison=None) -> list[Result]:
    """Every claim at every place in its scope; DeclarationError for a label no output prints."""
    recorded = runs.runs(root / "runs") if recorded is None else recorded
    comparison = runs.NbvalComparison() if comparison is None else comparison
    chapters, results = {}, []
    for claim in claims:
        chapter = chapters.setdefault(claim.chapter, _Chapter(claim.chapter, root, comparison))
        found, printed, looked = [], False, False
        for place, run in places(claim.chapter, recorded):
            if not in_scope(claim, place) or _cc_holds(claim, place) is False:
                continue
            if _cc_holds(claim, place) is None:
                found.append(Result(claim, place, "unchecked", "compute capability unknown"))
                continue
            if run is None:
                cell, why = chapter.stored(claim.cell), None
                looked = True
            else:
                # A label no current output prints is a typo; a recording of an earlier
                # version of the cell may lack a line the cell prints today.
                cell, why = chapter.recorded(run, claim.cell)
                stale = run.cell(claim.chapter, claim.cell)
                looked = looked or cell is not None
            if cell is None:
                if run is not None and stale is not None:
                    # Never a pass: what the earlier recording says, for the author to weigh.
                    earlier = _judge(claim, place, stale)
                    if earlier.status != "unchecked":
                        why += f"; its earlier recording {earlier.status}: {earlier.detail}"
                found.append(Result(claim, place, "unchecked", why))
                continue
            result = _judge(claim, place, cell)
            printed = printed or not result.detail.startswith(f"cell {claim.cell} printed no")
            found.append(result)
        if not found:
            found.append(Result(claim, Place("(nowhere)", None, frozenset(), ()), "unchecked",
                                f"no output in scope {claim.where!r}"))
        elif looked and not printed:
            labels = [_name(o) for o in claim.operands if isinstance(o, dict)]
            raise _error(claim.path, claim.lines.get(claim.relation, claim.line),
                         f"label {labels!r}: no output of cell {claim.cell!r} in scope "
                         f"{claim.where!r} prints a line 'LABEL: quantity' for each", root)
        results += found
    return results


def format_result(result: Result, root: Path = ROOT) -> str:
    """One report line, e.g. chapters/x.md:12: claim "..." (...) contradicted by ...: ..."""
    c = result.claim
    head = f"chapters/{c.chapter}.md:{c.says_line}: claim \"{c.says}\" ({describe(c)})"
    where = f"{result.place.name} cell {c.cell}"
    if result.status == "contradicted":
        return f"{head} contradicted by {where}: {result.detail}"
    if result.status == "unchecked":
        return f"{head} unchecked on {where}: {result.detail}"
    return f"{head} held on {where}: {result.detail}"


def check(root: Path = ROOT, only: list[str] | None = None, verbose: bool = False,
          out=sys.stdout, err=sys.stderr) -> int:
    """Load and check every claims file; print the report; return the exit status."""
    folder = root / "chapters" / "claims"
    paths = sorted(folder.glob("*.yml")) if folder.is_dir() else []
    if only:
        unknown = sorted(set(only) - {p.stem for p in paths})
        if unknown:
            print(f"claims: no claims file for {', '.join(unknown)} in {_rel(folder, root)}",
                  file=err)
            return 2
        paths = [p for p in paths if p.stem in only]
    try:
        recorded = runs.runs(root / "runs")
    except ValueError as error:
        print(f"claims: {error}", file=err)
        return 2
    machines = [r.machine for r in recorded]
    claims, problems = [], []
    for path in paths:
        try:
            claims += load_claims(path, root, machines)
        except DeclarationError as error:
            problems.append(str(error))
    results = []
    if not problems:
        try:
            results = check_claims(claims, root, recorded)
        except DeclarationError as error:
            problems.append(str(error))
    if problems:
        print("\n".join(problems), file=err)
        return 2
    counts = {s: sum(r.status == s for r in results) for s in ("held", "unchecked",
                                                               "contradicted")}
    for result in results:
        if result.status != "held" or verbose:
            print(format_result(result, root), file=out)
    print(f"claims: {counts['held']} held, {counts['unchecked']} unchecked, "
          f"{counts['contradicted']} contradicted", file=out)
    return 1 if counts["contradicted"] else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.claims",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", action="append", dest="only", metavar="NAME",
                        help="check only this chapter's claims (repeatable)")
    parser.add_argument("--verbose", "-v", action="store_true", help="print held claims too")
    args = parser.parse_args(argv)
    return check(only=args.only, verbose=args.verbose)


if __name__ == "__main__":
    sys.exit(main())
