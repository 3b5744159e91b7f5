"""Recorded runs of the chapters on real GPUs, runs/<machine>/ (its format: runbooks/recording.md).

    python -m booktools.runs record MACHINE [--label L] [--chapter NAME ...] [--replace] [--if-stale]
    python -m booktools.runs stale [MACHINE]   what a new recording would change (default: each)

A recording belongs to a hardware cell by (chapter, cell name); it is current while
that cell and every code cell above it are the same program (same_program).
"""
from __future__ import annotations

import argparse
import ast
import copy
import datetime as _dt
import difflib
import functools
import io
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
import tokenize
from dataclasses import dataclass
from pathlib import Path

from booktools import files
from booktools.kernels import Stopped, execute

__all__ = ["Match", "Run", "NbvalComparison", "read_run", "read_notebook", "runs", "check_run",
           "named_cells", "name_problems", "cell_status", "cell_name", "is_hardware",
           "untagged_errors", "package_changes", "strip_volatile", "code_cells", "ARTIFACTS",
           "same_program", "as_python", "comments", "notebook_at", "earlier_change", "git",
           "hardware_statuses", "STALE_WHY"]

ROOT = Path(__file__).resolve().parents[2]  # tools/booktools/runs.py in a checkout
RUNS = ROOT / "runs"
CHAPTERS = ROOT / "chapters"
SANITIZE_CFG = ROOT / "tests" / "sanitize.cfg"
HARDWARE_TAG = "hardware"
NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# run.json's keys, each required (check_run; what each holds: runbooks/recording.md).
RUN_KEYS = {"label": str, "gpus": list, "gpu_count": int, "torch": str, "cuda": str,
            "python": str, "driver": str, "date": str, "commit": str, "recorded_with": str}
VOLATILE_CELL_KEYS = ("execution", "collapsed", "scrolled", "ExecuteTime")
VOLATILE_NOTEBOOK_KEYS = ("widgets",)
COMMIT = re.compile(r"[0-9a-f]{7,40}")  # a git commit hash, abbreviated or not
ARTIFACTS = "artifacts"  # runs/<machine>/artifacts/<chapter>/<cell name>/<file>
# A recording lives in git, and each edition's build copies its files.
ARTIFACT_MAX_BYTES = 10 * 2**20


def normalise_source(source: str) -> str:
    """A cell's source without trailing whitespace (per line and at the end)."""
    return "\n".join(line.rstrip() for line in source.rstrip().splitlines())


def same_program(a: str, b: str) -> bool:
    """Whether two sources are the same Python (IPython syntax), layout and comments aside."""
    if normalise_source(a) == normalise_source(b):
        return True
    parsed = _parsed(a), _parsed(b)
    return None not in parsed and parsed[0] == parsed[1]


@functools.lru_cache(maxsize=4096)
def _parsed(source: str) -> str | None:
    """ast.dump of the source, docstrings blanked (editions translate them); None if not Python."""
    try:
        tree = ast.parse(as_python(source))
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, _DOCUMENTED) and ast.get_docstring(node, clean=False) is not None:
            if not (isinstance(node, ast.Module) and len(node.body) == 1):  # a lone one is output
                node.body[0].value.value = ""
    return ast.dump(tree)


_DOCUMENTED = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)


def as_python(source: str) -> str:
    """A cell's source as the Python IPython runs (magics as calls), or as it is."""
    try:
        from IPython.core.inputtransformer2 import TransformerManager
    except ImportError:
        return source
    return TransformerManager().transform_cell(source)


def comments(source: str) -> list[tokenize.TokenInfo] | None:
    """The source's comment tokens (a "#" in a string is none), or None where Python's
    tokenizer cannot read it."""
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.COMMENT]
    except (tokenize.TokenError, SyntaxError):
        return None


def code_cells(nb) -> list:
    """The notebook's code cells, in order (nbval numbers cells this way)."""
    return [cell for cell in nb["cells"] if cell["cell_type"] == "code"]


def is_hardware(cell) -> bool:
    """Whether the cell carries the ``hardware`` tag."""
    return HARDWARE_TAG in cell.get("metadata", {}).get("tags", [])


def cell_name(cell) -> str | None:
    """The cell's name (metadata ``name``), or None."""
    return cell.get("metadata", {}).get("name")


def named_cells(nb) -> dict:
    """name -> code cell, for the notebook's named code cells ({} for None)."""
    if nb is None:
        return {}
    return {cell_name(c): c for c in code_cells(nb) if cell_name(c)}


def name_problems(nb, where: str) -> list[str]:
    """Hardware cells without a valid name, and names used twice, in one notebook."""
    problems, seen = [], {}
    for index, cell in enumerate(code_cells(nb)):
        name = cell_name(cell)
        if name is None:
            if is_hardware(cell):
                problems.append(f"{where}: code cell {index} is tagged hardware but has no "
                                "name (add `:name: some-name` to its code-cell options)")
            continue
        if not isinstance(name, str) or not NAME.fullmatch(name):
            problems.append(f"{where}: code cell {index} has name {name!r}: use lower-case "
                            "letters, digits and single hyphens")
        elif name in seen:
            problems.append(f"{where}: code cells {seen[name]} and {index} are both "
                            f"named {name!r}")
        else:
            seen[name] = index
    return problems


@dataclass(frozen=True)
class Match:
    """Where a chapter's code cell is in a recorded notebook."""
    recorded: int   # index among the recorded notebook's code cells
    current: bool   # the sources are the same program (same_program)


def pair_cells(chapter_cells: list, recorded_cells: list) -> dict[int, Match]:
    """Pair chapter with recorded code cells: by name, else unclaimed equal source (difflib)."""
    a = [normalise_source(c["source"]) for c in chapter_cells]
    b = [normalise_source(c["source"]) for c in recorded_cells]
    by_name = {cell_name(c): j for j, c in enumerate(recorded_cells) if cell_name(c)}
    matches: dict[int, Match] = {}
    for i, cell in enumerate(chapter_cells):
        j = by_name.get(cell_name(cell)) if cell_name(cell) else None
        if j is not None:
            matches[i] = Match(j, same_program(a[i], b[j]))
    claimed = {m.recorded for m in matches.values()}
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for i1, j1, size in matcher.get_matching_blocks():
        for i, j in zip(range(i1, i1 + size), range(j1, j1 + size)):
            if cell_name(chapter_cells[i]) is None and j not in claimed:
                matches[i] = Match(j, True)
    return matches


@dataclass
class Run:
    """One machine's recording: run.json and its notebooks by chapter name."""
    machine: str
    folder: Path
    meta: dict
    notebooks: dict  # chapter stem -> notebook (dict as nbformat reads it)

    @property
    def tab_label(self) -> str:
        """run.json's label without the vendor, e.g. "H100"."""
        short = re.sub(r"\b(NVIDIA|AMD|Intel|Apple)\s+", "", self.meta["label"]).strip()
        return short or self.meta["label"]

    @property
    def about(self) -> str:
        """One line inside the tab: the machine, PyTorch and the date."""
        gpus = self.meta.get("gpus") or []
        machine = gpus[0] if gpus else self.meta["label"]
        if len(gpus) > 1:
            machine = f"{len(gpus)}× {machine}"
        return f"{machine} · PyTorch {self.meta['torch']} · {self.meta['date']}"

    def cell(self, chapter: str, name: str | None):
        """The recorded code cell of chapter named ``name``, or None."""
        return named_cells(self.notebooks.get(chapter)).get(name) if name else None

    def artifacts(self, chapter: str, name: str | None) -> list[Path]:
        """The files the cell named ``name`` wrote on this machine, sorted."""
        folder = self.folder / ARTIFACTS / chapter / name if name else None
        if folder is None or not folder.is_dir():
            return []
        return sorted(p for p in folder.iterdir() if p.is_file())


def read_notebook(path: Path):
    import nbformat
    return nbformat.read(path, as_version=4)


def read_run(folder: Path) -> Run:
    """Read runs/<machine>/; ValueError naming the file (and line) that cannot be read."""
    path, shown, name = folder / "run.json", _shown(folder / "run.json"), folder.name
    if not path.is_file():
        raise ValueError(f"{_shown(folder)}/: a folder under runs/ without run.json is no "
                         f"recording: git checkout -- {shown} restores a committed one, "
                         f"else remove the folder or record {name} again")
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        where = f"{shown}:{error.lineno}" if isinstance(error, json.JSONDecodeError) else shown
        raise ValueError(f"{where}: the recorded run of {name} cannot be read ({error}): "
                         f"git checkout -- {shown} restores it, or record {name} again") from None
    if not isinstance(meta, dict) or not isinstance(meta.get("gpus"), list):
        raise ValueError(f"{shown}: the recorded run of {name} names no 'gpus' (a list, [] "
                         f"for a CPU run): git checkout -- {shown} restores it")
    notebooks = {}
    for notebook in sorted(folder.glob("*.ipynb")):
        try:
            notebooks[notebook.stem] = read_notebook(notebook)
        except Exception as error:  # noqa: BLE001 - nbformat raises several kinds
            raise ValueError(f"{_shown(notebook)}: a notebook of the recorded run of {name} "
                             f"cannot be read ({' '.join(str(error).split())[:300]}): "
                             f"git checkout -- {_shown(notebook)} restores it") from None
    return Run(name, folder, meta, notebooks)


def _shown(path: Path) -> str:
    return files.shown(Path(path).resolve())  # a stage's link to runs/ resolved


def runs(root: Path = RUNS) -> list[Run]:
    """Every recorded run under root, by folder name."""
    if not root.is_dir():
        return []
    return [read_run(p) for p in sorted(root.iterdir())  # .<machine>.new: being written
            if p.is_dir() and not p.name.startswith(".")]


def strip_volatile(nb):
    """Drop timestamps and per-run metadata; keep sources, outputs and names."""
    for key in VOLATILE_NOTEBOOK_KEYS:
        nb.metadata.pop(key, None)
    for index, cell in enumerate(nb.cells):
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        cell["id"] = f"cell-{index}"  # stable ids keep diffs to what changed
    return nb


def untagged_errors(nb) -> list[tuple[int, dict]]:
    """(code cell index, error output) of each error of a cell not tagged raises-exception."""
    return [(index, output) for index, cell in enumerate(code_cells(nb))
            if "raises-exception" not in cell.get("metadata", {}).get("tags", [])
            for output in cell.get("outputs", []) if output.get("output_type") == "error"]


def check_run(run: Run, chapters: Path = CHAPTERS) -> list[str]:
    """Problems with a recording (an empty list when it is well-formed)."""
    problems = []
    for key, kind in RUN_KEYS.items():
        if not isinstance(run.meta.get(key), kind):
            problems.append(f"{run.machine}/run.json: {key!r} missing or not {kind.__name__}")
    if isinstance(run.meta.get("gpus"), list) and run.meta.get("gpu_count") != len(run.meta["gpus"]):
        problems.append(f"{run.machine}/run.json: gpu_count {run.meta.get('gpu_count')} "
                        f"but {len(run.meta['gpus'])} GPU names")
    if not re.fullmatch(r"\d{4}-\d\d-\d\d", str(run.meta.get("date", ""))):
        problems.append(f"{run.machine}/run.json: date {run.meta.get('date')!r} is not YYYY-MM-DD")
    if not COMMIT.fullmatch(str(run.meta.get("commit", ""))):
        problems.append(f"{run.machine}/run.json: commit {run.meta.get('commit')!r} is not a hash")
    if not run.notebooks:
        problems.append(f"{run.machine}: no recorded notebooks")
    for chapter, nb in run.notebooks.items():
        where = f"{run.machine}/{chapter}.ipynb"
        if not (chapters / f"{chapter}.md").is_file():
            problems.append(f"{where}: no chapter chapters/{chapter}.md")
        for index, cell in enumerate(code_cells(nb)):
            if cell.get("execution_count") is None:
                problems.append(f"{where}: code cell {index} was not executed")
        for index, error in untagged_errors(nb):
            problems.append(f"{where}: code cell {index} raised {error.get('ename')} "
                            "but is not tagged raises-exception")
        problems += [f"{where}: volatile cell metadata {key!r} kept" for key in VOLATILE_CELL_KEYS
                     if any(key in cell.get("metadata", {}) for cell in nb.cells)]
        # A cell tagged hardware after the recording has no name there.
        problems += [p for p in name_problems(nb, where) if "no name" not in p]
    return problems + artifact_problems(run)


def artifact_problems(run: Run) -> list[str]:
    """Kept files of no recorded cell, or larger than ARTIFACT_MAX_BYTES."""
    root = run.folder / ARTIFACTS
    if not root.is_dir():
        return []
    problems = []
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        where = f"{run.machine}/{ARTIFACTS}/{'/'.join(parts)}"
        if path.is_dir():
            if len(parts) == 1 and parts[0] not in run.notebooks:
                problems.append(f"{where}: no recording of chapter {parts[0]!r}")
            elif len(parts) == 2 and run.cell(*parts) is None:
                problems.append(f"{where}: the recording of {parts[0]} has no cell "
                                f"named {parts[1]!r}")
            elif len(parts) > 2:
                problems.append(f"{where}: a folder inside a cell's files")
        elif len(parts) != 3:
            problems.append(f"{where}: not in {ARTIFACTS}/<chapter>/<cell name>/")
        elif path.stat().st_size > ARTIFACT_MAX_BYTES:
            problems.append(f"{where}: {path.stat().st_size} bytes, more than "
                            f"{ARTIFACT_MAX_BYTES}")
    return problems


class NbvalComparison:
    """nbval's IPyNbCell.compare_outputs outside a kernel: a recording judged as a re-execution."""
    # nbval (pinned) has no public function for it: its methods are called unbound, this
    # object standing in for the item (tests/test_recorded_runs.py checks SKIP_COMPARE).
    # IPyNbFile.skip_compare without --nbdime: PNG and JPEG are never compared.
    SKIP_COMPARE = ('metadata', 'traceback', 'prompt_number', 'output_type', 'name',
                    'execution_count', 'application/vnd.jupyter.widget-view+json',
                    'image/png', 'image/jpeg')

    def __init__(self, sanitize_file: Path = SANITIZE_CFG):
        from types import SimpleNamespace

        from nbval import plugin
        self._nbval = plugin
        patterns = dict(plugin.get_sanitize_patterns(sanitize_file.read_text(encoding="utf-8")))
        if not patterns:
            raise ValueError(f"{sanitize_file}: no 'regex:'/'replace:' pairs found")
        self.parent = SimpleNamespace(skip_compare=self.SKIP_COMPARE, sanitize_patterns=patterns)
        self.colors = plugin.nocolors
        self.comparison_traceback = []

    def compare_outputs(self, test, ref, skip_compare=None):
        return self._nbval.IPyNbCell.compare_outputs(self, test, ref, skip_compare)

    def sanitize(self, s):
        return self._nbval.IPyNbCell.sanitize(self, s)

    def format_output_compare(self, key, left, right):  # nbval's asks pytest's assert hook
        self.comparison_traceback.append(f" mismatch {key!r} (- stored, + recorded)")
        self.comparison_traceback.extend(difflib.ndiff(
            str(left).splitlines(), str(right).splitlines()))

    def differs(self, stored_outputs, recorded_outputs) -> str | None:
        """None when nbval would accept recorded_outputs for stored ones, else why not."""
        self.comparison_traceback = []
        # As IPyNbCell.runtest: both sides' streams are coalesced (in place, so copies).
        ref = self._nbval.coalesce_streams(copy.deepcopy(stored_outputs))
        test = self._nbval.coalesce_streams(copy.deepcopy(recorded_outputs))
        if self.compare_outputs(test, ref):
            return None
        lines = self.comparison_traceback
        if len(lines) > 25:  # long tables: the first differing lines say enough
            lines = lines[:25] + [f"  ... {len(lines) - 25} more diff lines"]
        return "\n".join(lines)


def nbval_options(cell) -> dict:
    """The options nbval derives from a cell's tags and comment markers."""
    from nbval import plugin
    options = dict(plugin.find_metadata_tags(cell.metadata))
    options.update(dict(plugin.find_comment_markers(cell.source)))
    return options


def nbval_compares(cell) -> bool:
    """Whether nbval compares this cell's output: it ran, and nothing says not to."""
    options = nbval_options(cell)
    return (cell.get("execution_count") is not None
            and not (options.get("skip") or options.get("check") is False))


def git(*args: str, root: Path = ROOT) -> subprocess.CompletedProcess:
    """git's answer in root (returncode 127 where there is no git)."""
    try:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                              encoding="utf-8")
    except OSError as error:
        return subprocess.CompletedProcess(["git", *args], 127, "", str(error))


@functools.lru_cache(maxsize=None)
def notebook_at(commit: str, chapter: str, root: Path = ROOT):
    """chapters/<chapter>.ipynb as stored at a commit (git), or None where git has none."""
    import nbformat
    shown = git("show", f"{commit}:chapters/{chapter}.ipynb", root=root) \
        if COMMIT.fullmatch(commit) else None
    return nbformat.reads(shown.stdout, as_version=4) if shown and not shown.returncode else None


# What cell_status says of a chapter's code cell against a recording.
UNRECORDED = "unrecorded"          # no recorded cell pairs with it
STALE_SOURCE = "source changed"    # its source changed since the recording
STALE_ABOVE = "code above changed"  # a code cell above it changed since the recording
NOT_COMPARED = "not compared"      # nbval compares nothing (nbval_compares)
RECORDED_ERROR = "recorded error"  # it raised on the recorded machine, untagged
SAME = "same"                      # nbval accepts the recorded output
OUTPUT_CHANGED = "output changed"  # the stored output changed since the recording
HARDWARE = "hardware"              # the CPU output did not change, the GPU's differs
STALE_WHY = {UNRECORDED: "not recorded", STALE_SOURCE: "recorded from an earlier version",
             OUTPUT_CHANGED: "its stored output changed since the recording"}


def earlier_change(above: list, match: Match, recorded_cells: list) -> str | None:
    """Why the code cells above a cell are not those that ran before its recording, or None."""
    then = recorded_cells[:match.recorded]
    for k, (now, old) in enumerate(zip(above, then)):
        if not same_program(now["source"], old["source"]):
            named = f" ({cell_name(now)})" if cell_name(now) else ""
            return f"code cell {k}{named} above it changed since the recording"
    if len(above) != len(then):
        change = "added" if len(above) > len(then) else "removed"
        return f"a code cell above it was {change} since the recording"
    return None


def cell_status(cell, match: Match | None, recorded_cells: list, base,
                comparison: NbvalComparison, above: list | None = None) -> tuple[str, str | None]:
    """(status, why) of a chapter's code cell against its recording (``base``: git's then)."""
    if match is None:
        return UNRECORDED, None
    if not match.current:
        return STALE_SOURCE, None
    changed = earlier_change(above, match, recorded_cells) if above is not None else None
    if changed:
        return STALE_ABOVE, changed
    if not nbval_compares(cell):
        return NOT_COMPARED, None
    recorded = recorded_cells[match.recorded]
    errors = [o for o in recorded.outputs if o.output_type == "error"]
    if errors and not nbval_options(cell).get("check_exception"):
        return RECORDED_ERROR, (f"raised {errors[0].ename} on the recorded machine, "
                                "and the cell is not tagged raises-exception")
    why = comparison.differs(cell.outputs, recorded.outputs)
    if why is None:
        return SAME, None
    then = [c for c in (code_cells(base) if base is not None else [])
            if same_program(c.source, cell.source)]
    if len(then) == 1 and comparison.differs(cell.outputs, then[0].outputs):
        return OUTPUT_CHANGED, why
    if not then:
        why = "(no cell of this source at the recorded commit: compared strictly)\n" + why
    return HARDWARE, why


def hardware_statuses(run: Run | None, chapters: Path, comparison: NbvalComparison | None = None):
    """(chapter, index, cell, status, why) of each hardware cell; run None: no recording."""
    comparison = NbvalComparison() if comparison is None else comparison
    for ipynb in sorted(chapters.glob("*.ipynb")):
        cells = code_cells(read_notebook(ipynb))
        recorded = run.notebooks.get(ipynb.stem) if run is not None else None
        recorded_cells = code_cells(recorded) if recorded is not None else []
        matches = pair_cells(cells, recorded_cells) if recorded_cells else {}
        # The build machine's stored notebook at the recorded commit (git), or None.
        base = notebook_at(str(run.meta.get("commit", "")), ipynb.stem) if matches else None
        for index, cell in enumerate(cells):
            if is_hardware(cell):
                status, why = cell_status(cell, matches.get(index), recorded_cells, base,
                                          comparison, above=cells[:index])
                yield ipynb.stem, index, cell, status, why


def stale_cells(run: Run | None, chapters: Path = CHAPTERS) -> list[str]:
    """"chapter: name (why)" for each hardware cell a new recording on run's machine changes."""
    return [f"{chapter}: {cell_name(cell) or f'code cell {index}'} "
            f"({why if status == STALE_ABOVE else STALE_WHY[status]})"
            for chapter, index, cell, status, why in hardware_statuses(run, chapters)
            if status in STALE_WHY or status == STALE_ABOVE]


PACKAGE = "d2lgpu"  # the helpers the chapters import; a recording ran one version of them


def package_changes(run: Run | None, root: Path = ROOT, package: str = PACKAGE) -> list[str]:
    """A line per d2lgpu file that is not the same program at the run's commit and HEAD."""
    commit = str(run.meta.get("commit", "")) if run is not None else ""
    if not commit:
        return []
    if not COMMIT.fullmatch(commit):
        return [f"{package}: cannot compare with the recorded commit {commit!r} (not a commit)"]
    proc = git("diff", "--name-only", commit, "HEAD", "--", package, root=root)
    if proc.returncode != 0:
        return [f"{package}: cannot compare with the recorded commit {commit} "
                "(git does not know it here: fetch the whole history)"]
    return [f"{package}: {Path(name).relative_to(package)} (changed since the recorded commit "
            f"{commit})" for name in proc.stdout.split()
            if not _same_module(root, commit, name)]


def _same_module(root: Path, commit: str, name: str) -> bool:
    """Whether a Python file is the same program at commit and at HEAD (same_program)."""
    if not name.endswith(".py"):
        return False
    sources = [git("show", f"{rev}:{name}", root=root) for rev in (commit, "HEAD")]
    return all(p.returncode == 0 for p in sources) and \
        same_program(sources[0].stdout, sources[1].stdout)


def write_run(machine: str, notebooks: dict, meta: dict, root: Path = RUNS,
              artifacts: dict | None = None) -> Path:
    """Write root/<machine>/ in root/.<machine>.new/, swapped in only once complete."""
    import nbformat
    folder = root / machine
    new, old = root / f".{machine}.new", root / f".{machine}.old"
    shutil.rmtree(new, ignore_errors=True)
    new.mkdir(parents=True)
    try:
        for (chapter, name), paths in sorted((artifacts or {}).items()):
            target = new / ARTIFACTS / chapter / name
            target.mkdir(parents=True)
            for path in paths:
                shutil.copyfile(path, target / path.name)
        for chapter, nb in notebooks.items():
            nbformat.write(strip_volatile(nb), new / f"{chapter}.ipynb")
        (new / "run.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(new, ignore_errors=True)
        raise
    if folder.exists():  # a stop between the renames leaves it in .<machine>.old
        shutil.rmtree(old, ignore_errors=True)
        folder.rename(old)
    new.rename(folder)
    shutil.rmtree(old, ignore_errors=True)
    return folder


class ArtifactWatch:
    """nbclient hooks: the files each named hardware cell writes (``found``), what is not kept."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.found: dict[str, list[Path]] = {}
        self.problems: list[str] = []
        self._before = None

    def _listing(self) -> dict[Path, tuple[int, int]]:
        found = {}
        for path in self.folder.rglob("*"):
            parts = path.relative_to(self.folder).parts
            if (path.is_file() and "__pycache__" not in parts
                    and not any(part.startswith(".") for part in parts)):
                stat = path.stat()
                found[path] = (stat.st_size, stat.st_mtime_ns)
        return found

    def before(self, cell, **_) -> None:
        named = is_hardware(cell) and cell_name(cell)
        self._before = self._listing() if named else None

    def after(self, cell, **_) -> None:
        if self._before is None:
            return
        now = self._listing()
        written = sorted(p for p, stat in now.items() if self._before.get(p) != stat)
        self._before = None
        name, kept = cell_name(cell), []
        for path in written:
            where = f"cell {name!r}: {path.relative_to(self.folder)}"
            if now[path][0] > ARTIFACT_MAX_BYTES:
                self.problems.append(f"{where} has {now[path][0]} bytes, more than "
                                     f"{ARTIFACT_MAX_BYTES}: not kept")
            elif path.name in {p.name for p in kept}:
                self.problems.append(f"{where}: a second file of that name: not kept")
            else:
                kept.append(path)
        if kept:
            self.found[name] = kept


def _machine_facts() -> dict:
    """This machine's GPUs, versions and driver, as torch and nvidia-smi say."""
    import torch
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    driver = ""
    try:
        driver = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, check=True,
            encoding="utf-8").stdout.split("\n")[0].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    # booktools.claims scopes claims by it ("cc>=8.0")
    capability = [".".join(map(str, torch.cuda.get_device_capability(i)))
                  for i in range(len(gpus))] if torch.version.cuda else []
    return {"gpus": gpus, "gpu_count": len(gpus), "torch": torch.__version__,
            "cuda": torch.version.cuda or "", "python": platform.python_version(),
            "driver": driver, **({"compute_capability": capability} if capability else {})}


def _stale(machine: str, root: Path | None = None,
           chapters: Path = CHAPTERS) -> tuple[Run | None, list[str], list[str]]:
    """(root/<machine>/'s run or None, its stale_cells, its package_changes)."""
    root = RUNS if root is None else root  # RUNS read when called (tests move it)
    run = read_run(root / machine) if (root / machine).is_dir() else None
    return run, stale_cells(run, chapters), package_changes(run)


def _github_output(**values: str) -> None:
    """Append name=value lines to $GITHUB_OUTPUT (a workflow step's outputs), if set."""
    if os.environ.get("GITHUB_OUTPUT"):
        with open(os.environ["GITHUB_OUTPUT"], "a", encoding="utf-8") as out:
            out.writelines(f"{k}={v}\n" for k, v in values.items())


def record(machine: str, label: str | None, only: list[str] | None = None,
           timeout: int = 600, chapters: Path = CHAPTERS, root: Path = RUNS,
           replace: bool = False, if_stale: bool = False) -> int:
    """Execute the chapters and store root/<machine>/ (runbooks/recording.md); exit status."""
    import nbformat
    stale = sum(_stale(machine, root, chapters)[1:], []) if if_stale else None
    if stale == []:
        print(f"record: every hardware cell has a current recording in runs/{machine}/ "
              "(runs stale): nothing to record")
        _github_output(record="false")
        return 0
    if stale:
        print(f"record: runs/{machine}/ is not current (runs stale):", *stale, sep="\n  ",
              flush=True)
    kept = [p.name for p in (root / machine).glob("*.ipynb") if only and p.stem not in only]
    if kept:
        raise SystemExit(f"record: runs/{machine}/ holds {kept}, recorded in another run; "
                         "one folder holds one run: record every chapter, or use a new folder")
    paths = sorted(chapters.glob("*.ipynb"))
    unknown = sorted(set(only or []) - {p.stem for p in paths})
    if unknown:
        raise SystemExit(f"record: no chapter named {unknown}")
    paths = [p for p in paths if not only or p.stem in only]
    unnamed = [p for path in paths for p in name_problems(read_notebook(path), path.name)]
    if unnamed:
        raise SystemExit("record: every hardware cell needs a unique name first:\n  "
                         + "\n  ".join(unnamed))
    facts, folder = _machine_facts(), root / machine
    if not replace and folder.is_dir() and any(folder.iterdir()):
        try:
            recorded = read_run(folder).meta["gpus"]
        except ValueError as error:
            raise SystemExit(f"record: refused: {error}; or pass --replace") from None
        if recorded and recorded != facts["gpus"]:  # another machine's, or a GPU's on a CPU
            raise SystemExit(f"record: refused: {folder} was recorded on {', '.join(recorded)}, "
                             f"and this machine has {', '.join(facts['gpus']) or 'no CUDA GPU'}; "
                             "record into another folder (a name for this machine), or pass "
                             "--replace to overwrite that recording")
    if not facts["gpus"]:
        print(f"record: warning: torch {facts['torch']} sees no CUDA GPU here; "
              "recording a CPU run", file=sys.stderr)
    notebooks, problems, artifacts = {}, [], {}
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        start = time.time()
        watch = ArtifactWatch(path.parent)
        try:
            execute(nb, path.parent, timeout, allow_errors=True,
                    on_cell_execute=watch.before, on_cell_executed=watch.after)
        except Stopped as stop:  # Ctrl-C, SIGTERM: the whole run, not one chapter
            print(f"record: {stop}; nothing stored", file=sys.stderr)
            return 128 + stop.signum
        except Exception as err:  # a dead kernel or a timeout: say so, store nothing
            problems.append(f"{path.name}: {err!r}"[:500])
        for index, out in untagged_errors(nb):
            problems.append(f"{path.name} code cell {index}: {out.get('ename')}: "
                            f"{out.get('evalue', '')[:200]}")
        for problem in watch.problems:  # the run is kept without these files
            print(f"record: warning: {path.name} {problem}", file=sys.stderr)
        artifacts.update({(path.stem, name): found for name, found in watch.found.items()})
        notebooks[path.stem] = nb
        print(f"record: {path.name} {time.time() - start:.1f} s", flush=True)
    if problems:
        print("record: errors outside raises-exception cells; nothing stored:", *problems,
              sep="\n  ", file=sys.stderr)
        return 1
    gpus = facts["gpus"]
    if not label:  # None, or "" from a workflow whose label input was left empty
        label = (f"{len(gpus)}x " if len(gpus) > 1 else "") + (gpus[0] if gpus else "CPU")
    meta = {"label": label, **facts, "date": _dt.date.today().isoformat(),
            "commit": git("rev-parse", "--short", "HEAD").stdout.strip(),
            "recorded_with": f"scripts/record-run.sh {machine}"}
    folder = write_run(machine, notebooks, meta, root=root, artifacts=artifacts)
    _github_output(record="true", label=label, commit=meta["commit"])
    kept = sum(map(len, artifacts.values()))
    print(f"record: wrote {folder}/ ({len(notebooks)} notebooks, run.json and "
          f"{kept} files the hardware cells wrote)")
    return 0


def _machine(name: str) -> str:
    """A runs/ folder name from the command line (argparse's type)."""
    if not NAME.fullmatch(name):
        raise argparse.ArgumentTypeError(f"machine name {name!r}: use lower-case letters, "
                                         "digits and single hyphens")
    return name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.runs",
                                     description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    rec = sub.add_parser("record", help="execute every chapter here and store it")
    rec.add_argument("machine", type=_machine)
    rec.add_argument("--label", help="the machine (default: the first GPU's name)")
    rec.add_argument("--chapter", action="append", dest="only", metavar="NAME",
                     help="record only this chapter (repeatable; default: all)")
    rec.add_argument("--replace", action="store_true",
                     help="overwrite a recording made on other GPUs (or of unknown origin)")
    rec.add_argument("--if-stale", action="store_true",
                     help="record only where `runs stale MACHINE` names something")
    stale = sub.add_parser("stale", help="hardware cells without a current recording")
    stale.add_argument("machine", nargs="?", type=_machine, help="default: each under runs/")
    args = parser.parse_args(argv)
    try:
        return _run_command(args)
    except ValueError as error:  # a recording that cannot be read: said in one line
        print(f"runs: {error}", file=sys.stderr)
        return 2


def _run_command(args) -> int:
    if args.command == "record":
        return record(args.machine, args.label, args.only, replace=args.replace,
                      if_stale=args.if_stale)
    for machine in [args.machine] if args.machine else [r.machine for r in runs()]:
        run, found, changed = _stale(machine)
        for line in found + changed:
            print(line if args.machine else f"{machine}: {line}")
        where = f"runs/{machine}/" if run else f"no recording runs/{machine}/ yet"
        print(f"stale: {len(found)} hardware cells without a current recording ({where}); "
              f"{len(changed)} changes in {PACKAGE}/ since it was recorded", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
