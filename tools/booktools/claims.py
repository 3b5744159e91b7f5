"""The conclusions the prose draws from measured outputs, checked against every output.

    python -m booktools.claims [--chapter NAME ...] [--verbose]

chapters/claims/<chapter>.yml (its files are the examples) lists claims: ``says`` (words of
one line of chapters/<chapter>.md), ``cell`` (a code cell's name), one relation (``evaluate``)
between values the cell prints as ``LABEL: quantity`` and ``where`` it holds (any, cpu, gpu,
cuda, mps, "cc>=8.0" or a runs/ folder glob). Each is checked against the stored CPU outputs
and each recording in scope; a recording that is not current (runs.cell_status,
runs.package_changes) leaves it unchecked, saying why. Exit 1 on a contradiction; a malformed
declaration is one line ``chapters/claims/X.yml:LINE: ...`` and exit 2.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import math
import operator
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import yaml

from booktools import runs
from booktools.gpu_figures import output_text

__all__ = ["Claim", "Result", "load_claims", "parse_quantity", "find_value", "evaluate",
           "check_claims", "format_result", "compute_capabilities", "check", "main"]

ROOT = runs.ROOT
RELATIONS = ("faster", "slower", "smaller", "about", "ratio", "no_gain")
_RANGE = "is not [lo, hi] of positive numbers, one may be null"
_AMOUNT = "is not a number >= 0"
# option -> (the relations it goes with, whether a value is valid, what a bad one is not)
OPTIONS = {"by": (("faster", "slower", "smaller"), lambda v: _range(v), _RANGE),
           "within": (("about", "no_gain"), lambda v: _number(v) and v >= 0, _AMOUNT),
           "between": (("ratio",), lambda v: _range(v), _RANGE),
           "tolerance": (RELATIONS, lambda v: _number(v) and v >= 0, _AMOUNT)}
KEYS = {"says", "cell", "where", *OPTIONS, *RELATIONS}
KINDS = ("any", "cpu", "gpu", "cuda", "mps")
CC_SCOPE = re.compile(r"cc\s*(>=|<=|==|>|<)\s*(\d+(?:\.\d+)?)")
COMPARE = {">=": operator.ge, "<=": operator.le, "==": operator.eq, ">": operator.gt,
           "<": operator.lt}
MACHINE_GLOB = re.compile(r"[A-Za-z0-9._*?\[\]-]+")

_PREFIX = {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
UNITS = {u: (f, "time") for u, f in
         {"ns": 1e-9, "µs": 1e-6, "μs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}.items()}
UNITS.update({f"{p}B": (f, "size") for p, f in {**_PREFIX, **_BINARY}.items()})
UNITS.update({f"{p}B/s": (f, "rate") for p, f in {**_PREFIX, **_BINARY}.items()})
UNITS.update({f"{p}FLOP/s": (f, "rate") for p, f in _PREFIX.items()})
UNITS.update({"x": (1.0, "ratio"), "×": (1.0, "ratio"), "%": (0.01, "percent")})
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
    stored: dict | None = None                 # the cell in chapters/<chapter>.ipynb


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


def _error(path: Path, line: int, message: str, root: Path) -> DeclarationError:
    shown = Path(path).relative_to(root) if Path(path).is_relative_to(root) else path
    return DeclarationError(f"{shown}:{line}: {message}")


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _range(value) -> bool:
    """Whether value is [lo, hi] of positive numbers, one of them maybe null."""
    return (isinstance(value, list) and len(value) == 2
            and all(v is None or (_number(v) and v > 0) for v in value)
            and value != [None, None] and (None in value or value[0] <= value[1]))


def _operand(value):
    """A label, {label, nth} (its line's nth quantity) or a number (base units); else None."""
    if _number(value):
        return float(value)
    if isinstance(value, str) and value.strip():
        value = {"label": value}
    if isinstance(value, dict) and set(value) <= {"label", "nth"} and isinstance(
            value.get("label"), str) and value["label"].strip():
        nth = value.get("nth", 1)
        if isinstance(nth, int) and not isinstance(nth, bool) and nth >= 1:
            return {"label": value["label"].strip(), "nth": nth}
    return None


def _item_claim(path: Path, node, chapter: str, cells: dict, md: list[str], root: Path,
                machines: list[str]) -> Claim:
    """One item of a claims file, as a Claim; DeclarationError naming its line if malformed."""
    line = node.start_mark.line + 1
    if not isinstance(node, yaml.MappingNode):
        raise _error(path, line, "a claim is a mapping (says:, cell:, one relation)", root)
    loader, item, lines = yaml.SafeLoader(""), {}, {}  # key -> value, key -> its line
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if key in item:
            raise _error(path, key_node.start_mark.line + 1, f"{key!r} given twice", root)
        lines[key] = key_node.start_mark.line + 1
        item[key] = loader.construct_object(value_node, deep=True)

    def fail(key, message):
        raise _error(path, lines.get(key, line), message, root)

    unknown = [k for k in item if k not in KEYS]
    if unknown:
        fail(unknown[0], f"unknown relation or key {unknown[0]!r} "
             f"(relations: {', '.join(RELATIONS)})")
    relations = [k for k in item if k in RELATIONS]
    if len(relations) != 1:
        what = f"{len(relations)} relations ({', '.join(relations)})" if relations else "no relation"
        fail(relations[1] if relations else None,
             f"{what}: a claim has exactly one of {', '.join(RELATIONS)}")
    relation = relations[0]
    for key in ("says", "cell"):
        if not isinstance(item.get(key), str) or not item[key].strip():
            fail(key, f"{key!r} missing or not text")
    says, cell = item["says"].strip(), item["cell"].strip()
    md_path = f"chapters/{chapter}.md"
    if cell not in cells:
        fail("cell", f"unknown cell {cell!r} in {md_path}")
    found = [n for n, text in enumerate(md, 1) if says in text]
    if len(found) != 1:
        fail("says", f"says {says!r} is found on {f'{len(found)} lines' if found else 'no line'}"
             f" of {md_path}: quote words of one line")
    raw = item[relation]
    operands = [_operand(v) for v in raw] if isinstance(raw, list) else []
    if len(operands) != 2 or None in operands:
        fail(relation, f"{relation}: wants a list of two labels (text, {{label: L, nth: N}}) "
             f"or numbers, got {raw!r}")
    if all(isinstance(o, float) for o in operands):
        fail(relation, f"{relation}: no label of {cell!r} among {raw!r}")
    options = {key: item[key] for key in OPTIONS if key in item}
    for key, value in options.items():
        relations, valid, not_what = OPTIONS[key]
        if relation not in relations:
            fail(key, f"{key!r} does not go with {relation} (it goes with {', '.join(relations)})")
        if not valid(value):
            fail(key, f"{key}: {value!r} {not_what}")
    if relation == "ratio" and "between" not in options:
        fail(relation, "ratio needs between: [lo, hi]")
    where = item.get("where", "any")
    if not isinstance(where, str):
        fail("where", f"scope {where!r} is not text")
    if not (where in KINDS or CC_SCOPE.fullmatch(where) or MACHINE_GLOB.fullmatch(where)
            and fnmatch.filter(machines, where)):
        fail("where", f"bad scope {where!r}: not any, cpu, gpu, cuda, mps or \"cc>=X.Y\", and "
             f"no machine folder under runs/ matches it ({', '.join(machines) or 'none'})")
    return Claim(path, line, chapter, says, found[0], cell, relation, operands, options,
                 where, lines, cells[cell])


def load_claims(path: Path, root: Path = ROOT, machines: list[str] | None = None) -> list[Claim]:
    """The claims of one chapters/claims/<chapter>.yml; DeclarationError if one is malformed."""
    chapter = path.stem
    md, ipynb = root / "chapters" / f"{chapter}.md", root / "chapters" / f"{chapter}.ipynb"
    if not md.is_file() or not ipynb.is_file():
        raise _error(path, 1, f"no chapter chapters/{chapter}.md (with its .ipynb) for these "
                     "claims", root)
    if machines is None:
        machines = [r.machine for r in runs.runs(root / "runs")]
    try:
        document = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as error:
        mark = error.context_mark or error.problem_mark  # where the construct began
        problem = " ".join(str(error.problem or error).split())
        raise _error(path, mark.line + 1 if mark else 1, f"not valid YAML: {problem}",
                     root) from None
    if document is None:
        return []
    if not isinstance(document, yaml.SequenceNode):
        raise _error(path, document.start_mark.line + 1, "a claims file is a list of claims",
                     root)
    cells = runs.named_cells(nbformat.read(ipynb, as_version=4))
    lines = md.read_text(encoding="utf-8").splitlines()
    return [_item_claim(path, node, chapter, cells, lines, root, machines)
            for node in document.value]


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


def find_value(text: str, operand) -> tuple[float, str] | None:
    """An operand's (value, kind): the nth quantity after the first ``LABEL:``; else None."""
    if isinstance(operand, float):
        return operand, "constant"
    for line in text.splitlines():
        if line.strip().startswith(operand["label"] + ":"):
            return parse_quantity(line.strip()[len(operand["label"]) + 1:], operand["nth"])
    return None


def _name(operand) -> str:
    return operand["label"] if isinstance(operand, dict) else f"{operand:g}"


def _within(x: float, lo, hi, tol: float) -> bool:
    return (lo is None or x >= lo / (1 + tol)) and (hi is None or x <= hi * (1 + tol))


def evaluate(claim: Claim, values: list[tuple[float, str]]) -> tuple[bool, str] | str:
    """(holds, what was measured) for the operands' values; a string: why it cannot be judged.

    For [A, B], widened by ``tolerance`` (0.1): faster: the speed-up s, t(B)/t(A) for times
    or r(A)/r(B) for rates, is in ``by`` (default [1, null]); slower: faster [B, A];
    no_gain: s <= 1 + ``within`` (0.1); smaller: v(B)/v(A) is in ``by``; about: v(A)/v(B)
    is within a factor 1 + ``within`` (0.2); ratio: v(A)/v(B) is in ``between``.
    """
    o, tol, rel = claim.options, claim.options.get("tolerance", 0.1), claim.relation
    (va, ka), (vb, kb) = values if rel != "slower" else values[::-1]
    kinds = {ka, kb} - {"constant"}
    if len(kinds) != 1:
        return f"{ka} and {kb} cannot be compared"
    if rel in ("faster", "slower", "no_gain"):
        if kinds - {"time", "rate", "ratio", "number"}:
            return f"a speed-up needs two times or two rates, not {ka} and {kb}"
        if va <= 0 or vb <= 0:
            return "a value is not positive"
        s = vb / va if kinds == {"time"} else va / vb
        if rel == "no_gain":
            return s <= 1 + o.get("within", 0.1), f"speed-up {s:.3g}x"
        lo, hi = o.get("by", [1, None])
        return _within(s, lo, hi, tol), f"{'slow-down' if rel == 'slower' else 'speed-up'} {s:.3g}x"
    if vb <= 0 or va < 0 or (va == 0 and rel == "about"):
        return "a value is not positive"  # a count of 0 is smaller, and a ratio of 0x
    if rel == "smaller":
        lo, hi = o.get("by", [1, None])
        if va == 0:
            return hi is None, f"0 against {vb:.3g}"
        return _within(vb / va, lo, hi, tol), f"ratio {vb / va:.3g}x"
    if rel == "about":
        w = o.get("within", 0.2)
        return 1 / (1 + w) <= va / vb <= 1 + w, f"ratio {va / vb:.3g}x"
    return _within(va / vb, *o["between"], tol), f"ratio {va / vb:.3g}x"


def compute_capabilities(meta: dict) -> tuple[float, ...]:
    """run.json's compute capabilities, as floats (empty: unknown)."""
    try:
        return tuple(float(c) for c in meta.get("compute_capability") or ())
    except (TypeError, ValueError):
        return ()


def _place(chapter: str, run) -> Place:
    """Where a claim is checked: the stored outputs (run None) or a recording."""
    if run is None:
        return Place(f"chapters/{chapter}.ipynb", None, frozenset({"any", "cpu"}), ())
    gpus = run.meta.get("gpus") or []
    text = " ".join([str(run.meta.get("label", "")), *map(str, gpus)])
    if re.search(r"\b(Apple|MPS)\b", text):
        kinds = {"any", "gpu", "mps"}
    elif gpus:
        kinds = {"any", "gpu", "cuda"} if run.meta.get("cuda") else {"any", "gpu"}
    else:
        kinds = {"any", "cpu"}
    return Place(f"runs/{run.machine}/{chapter}", run.machine, frozenset(kinds),
                 compute_capabilities(run.meta))


def _in_scope(claim: Claim, place: Place) -> bool | None:
    """Whether the claim's scope includes the place (None: its compute capability is unknown)."""
    if claim.where in KINDS:
        return claim.where in place.kinds
    cc = CC_SCOPE.fullmatch(claim.where)
    if cc is None:
        return place.machine is not None and fnmatch.fnmatch(place.machine, claim.where)
    if "cuda" not in place.kinds:
        return False
    if not place.capabilities:
        return None
    return all(COMPARE[cc[1]](c, float(cc[2])) for c in place.capabilities)


class _Outputs:
    """Per recording, why a recorded cell is not current (None: it is)."""

    def __init__(self, root: Path, comparison):
        self.root, self.comparison, self._why = root, comparison, {}

    def why_not(self, run, chapter: str, name: str) -> str | None:
        if run.machine not in self._why:
            statuses = runs.hardware_statuses(run, self.root / "chapters", self.comparison)
            self._why[run.machine] = (runs.package_changes(run), {
                (ch, runs.cell_name(cell)): (status, why) for ch, _, cell, status, why in statuses})
        changed, statuses = self._why[run.machine]
        status, why = statuses.get((chapter, name), (runs.UNRECORDED, None))
        if status in (runs.STALE_ABOVE, runs.RECORDED_ERROR):
            return why
        if status in runs.STALE_WHY:
            return runs.STALE_WHY[status]
        if changed:
            files = ", ".join(line.split(": ", 1)[1].split(" (")[0] for line in changed)
            return f"d2lgpu changed since the recorded commit ({files})"
        return None


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
    # an output's "noisy:" line names a label of the claim: still a contradiction
    noisy = not holds and any(line.strip().startswith("noisy:") and any(
        o["label"] in line for o in claim.operands if isinstance(o, dict))
        for line in text.splitlines())
    return Result(claim, place, "held" if holds else "contradicted",
                  measured + (" (noisy)" if noisy else ""))


def _results(claim: Claim, outputs: _Outputs, recorded: list) -> tuple[list[Result], bool]:
    """The claim at each place in scope; whether the current outputs printed its labels."""
    found, looked, printed = [], False, False
    for run in [None, *recorded]:
        place = _place(claim.chapter, run)
        scoped = _in_scope(claim, place)
        if scoped is None:
            found.append(Result(claim, place, "unchecked", "compute capability unknown"))
        if not scoped:
            continue
        if run is None:
            cell, why = claim.stored, None
        else:
            cell, why = run.cell(claim.chapter, claim.cell), outputs.why_not(run, claim.chapter,
                                                                             claim.cell)
        if why is not None:
            # Never a pass: what an earlier recording says, for the author to weigh.
            earlier = _judge(claim, place, cell) if cell is not None else None
            if earlier is not None and earlier.status != "unchecked":
                why += f"; its earlier recording {earlier.status}: {earlier.detail}"
            found.append(Result(claim, place, "unchecked", why))
            continue
        result = _judge(claim, place, cell)
        looked = True
        printed = printed or not result.detail.startswith(f"cell {claim.cell} printed no")
        found.append(result)
    return found, printed or not looked


def check_claims(claims: list[Claim], root: Path = ROOT, recorded: list | None = None,
                 comparison=None) -> list[Result]:
    """Every claim at every place in its scope; DeclarationError for a label no output prints."""
    recorded = runs.runs(root / "runs") if recorded is None else recorded
    comparison = runs.NbvalComparison() if comparison is None else comparison
    outputs, results = _Outputs(root, comparison), []
    for claim in claims:
        found, printed = _results(claim, outputs, recorded)
        if not printed:  # a typo: a stale recording may lack a line the cell prints today
            labels = [_name(o) for o in claim.operands if isinstance(o, dict)]
            raise _error(claim.path, claim.lines.get(claim.relation, claim.line),
                         f"label {labels!r}: no output of cell {claim.cell!r} in scope "
                         f"{claim.where!r} prints a line 'LABEL: quantity' for each", root)
        results += found or [Result(claim, Place("(nowhere)", None, frozenset(), ()),
                                    "unchecked", f"no output in scope {claim.where!r}")]
    return results


def format_result(result: Result, root: Path = ROOT) -> str:
    """One report line, e.g. chapters/x.md:12: claim "..." (...) contradicted by ...: ..."""
    c = result.claim
    by = "by" if result.status == "contradicted" else "on"
    declared = f"{c.relation}: " + ", ".join(map(_name, c.operands)) + "".join(
        f"; {k}: {json.dumps(v)}" for k, v in c.options.items())
    return (f"chapters/{c.chapter}.md:{c.says_line}: claim \"{c.says}\" ({declared}) "
            f"{result.status} {by} {result.place.name} cell {c.cell}: {result.detail}")


def check(root: Path = ROOT, only: list[str] | None = None, verbose: bool = False,
          out=sys.stdout, err=sys.stderr) -> int:
    """Load and check every claims file; print the report; return the exit status."""
    paths = sorted((root / "chapters" / "claims").glob("*.yml"))
    unknown = sorted(set(only or ()) - {p.stem for p in paths})
    if unknown:
        print(f"claims: no claims file for {', '.join(unknown)} in chapters/claims", file=err)
        return 2
    paths = [p for p in paths if not only or p.stem in only]
    try:
        recorded = runs.runs(root / "runs")
        machines = [r.machine for r in recorded]
        claims = [c for path in paths for c in load_claims(path, root, machines)]
        results = check_claims(claims, root, recorded)
    except (ValueError, DeclarationError) as error:
        print(f"claims: {error}" if not isinstance(error, DeclarationError) else error, file=err)
        return 2
    counts = Counter(r.status for r in results)
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
