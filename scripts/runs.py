"""Recorded runs of the chapters on real GPUs (runs/<machine>/).

Each folder under runs/ is one machine: its executed chapter notebooks
(runs/<machine>/<chapter>.ipynb), run.json (what ran them) and the baseline
(runs/<machine>/baseline/<chapter>.ipynb): the stored chapter notebooks of the
recorded commit as the CPU build machine executed them, PNG and JPEG data
dropped (nbval never compares those). The website shows the recordings under
every code cell tagged ``hardware`` (_ext/recorded_runs.py);
tests/test_recorded_runs.py compares them with the stored notebooks, and uses
the baseline to tell a cell whose output changed since the recording (the
code it prints or calls changed) from a real hardware difference.

    python scripts/runs.py import MACHINE EXECUTED_DIR --meta RUN.json
        Store an existing run's executed notebooks (volatile metadata removed)
        with the given run.json (every key of RUN_KEYS); the baseline comes
        from git: chapters/<chapter>.ipynb at run.json's commit.
    python scripts/runs.py baseline MACHINE
        (Re)write runs/MACHINE/baseline/ from git at run.json's commit.
    python scripts/runs.py record MACHINE [--label L] [--chapter NAME ...]
        Execute every chapter here (what scripts/record-run.sh calls) and store it.
    python scripts/runs.py report
        How many hardware cells have a current recording, per chapter
        (needs nbval: its comparison tells an unchanged output).

Only the standard library and nbformat (nbclient for `record`, nbval for the
comparison): it runs on a GPU machine that has no Sphinx and no jupytext.
"""
from __future__ import annotations

import argparse
import copy
import datetime as _dt
import difflib
import json
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "runs"
CHAPTERS = ROOT / "chapters"
SANITIZE_CFG = ROOT / "tests" / "sanitize.cfg"
BASELINE = "baseline"  # runs/<machine>/baseline/<chapter>.ipynb
# Output data the baseline leaves out: nbval never compares it (IPyNbFile's skip_compare).
BASELINE_DROPPED = ("image/png", "image/jpeg")
HARDWARE_TAG = "hardware"
# run.json: every key must be there (tests/test_recorded_runs.py checks it).
RUN_KEYS = {
    "label": str,        # the tab's label, e.g. "NVIDIA H100"
    "gpus": list,        # GPU names as torch.cuda.get_device_name reports them
    "gpu_count": int,
    "torch": str,        # torch.__version__
    "cuda": str,         # torch.version.cuda ("" for a build without CUDA)
    "python": str,
    "driver": str,       # NVIDIA driver version ("" where there is none)
    "date": str,         # YYYY-MM-DD
    "commit": str,       # the project's commit the chapters were run from
    "recorded_with": str,  # how: the command or the run it was imported from
}
VOLATILE_CELL_KEYS = ("execution", "collapsed", "scrolled", "ExecuteTime")
COMMIT = re.compile(r"[0-9a-f]{7,40}")  # a git commit hash, abbreviated or not
VOLATILE_NOTEBOOK_KEYS = ("widgets",)


def normalise_source(source: str) -> str:
    """A cell's source without trailing whitespace (per line and at the end)."""
    return "\n".join(line.rstrip() for line in source.rstrip().splitlines())


def code_cells(nb) -> list:
    """The notebook's code cells, in order (nbval numbers cells this way)."""
    return [cell for cell in nb["cells"] if cell["cell_type"] == "code"]


@dataclass(frozen=True)
class Match:
    """Where a chapter's code cell is in a recorded notebook."""
    recorded: int   # index among the recorded notebook's code cells
    current: bool   # the sources agree (after normalise_source)


def align(chapter_sources: list[str], recorded_sources: list[str]) -> dict[int, Match]:
    """Map chapter code-cell indices to recorded ones (difflib over the sources).

    Equal sources in the same order are current; within a replaced stretch the
    cells are paired in order and marked not current; inserted cells have none.
    """
    a = [normalise_source(s) for s in chapter_sources]
    b = [normalise_source(s) for s in recorded_sources]
    matches: dict[int, Match] = {}
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            for k in range(i2 - i1):
                matches[i1 + k] = Match(j1 + k, True)
        elif tag == "replace":
            for k in range(min(i2 - i1, j2 - j1)):
                matches[i1 + k] = Match(j1 + k, a[i1 + k] == b[j1 + k])
    return matches


@dataclass
class Run:
    """One machine's recording: run.json and its notebooks by chapter name."""
    machine: str
    folder: Path
    meta: dict
    notebooks: dict  # chapter stem -> notebook (dict as nbformat reads it)
    # chapter stem -> the build machine's stored notebook of the recorded commit
    baselines: dict = field(default_factory=dict)

    @property
    def tab_label(self) -> str:
        return f"{self.meta['label']} · PyTorch {self.meta['torch']} · {self.meta['date']}"

    def match(self, chapter: str, chapter_sources: list[str]) -> dict[int, Match]:
        nb = self.notebooks.get(chapter)
        if nb is None:
            return {}
        return align(chapter_sources, [c["source"] for c in code_cells(nb)])


def read_notebook(path: Path):
    import nbformat
    return nbformat.read(path, as_version=4)


def read_run(folder: Path) -> Run:
    """Read runs/<machine>/ (run.json, every *.ipynb and baseline/*.ipynb)."""
    meta = json.loads((folder / "run.json").read_text())
    notebooks = {p.stem: read_notebook(p) for p in sorted(folder.glob("*.ipynb"))}
    baselines = {p.stem: read_notebook(p)
                 for p in sorted((folder / BASELINE).glob("*.ipynb"))}
    return Run(folder.name, folder, meta, notebooks, baselines)


def runs(root: Path = RUNS) -> list[Run]:
    """Every recorded run under root, by machine folder name."""
    if not root.is_dir():
        return []
    return [read_run(p) for p in sorted(root.iterdir())
            if p.is_dir() and (p / "run.json").is_file()]


def strip_volatile(nb):
    """Drop timestamps and per-run metadata; keep sources and outputs."""
    for key in VOLATILE_NOTEBOOK_KEYS:
        nb.metadata.pop(key, None)
    for index, cell in enumerate(nb.cells):
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        cell["id"] = f"cell-{index}"  # stable ids keep diffs to what changed
    return nb


def baseline_notebook(nb):
    """A stored chapter notebook as a baseline: volatile metadata and images dropped."""
    nb = strip_volatile(copy.deepcopy(nb))
    for cell in code_cells(nb):
        for output in cell.get("outputs", []):
            for key in BASELINE_DROPPED:
                output.get("data", {}).pop(key, None)
    return nb


def baselines_from_git(commit: str, chapters: list[str]) -> dict:
    """The stored chapters/<chapter>.ipynb of a commit, as baselines (from git)."""
    import nbformat
    if not COMMIT.fullmatch(commit):
        raise SystemExit(f"runs: commit {commit!r} is not a hash: no baseline from git")
    baselines = {}
    for chapter in chapters:
        try:
            text = subprocess.run(["git", "show", f"{commit}:chapters/{chapter}.ipynb"],
                                  cwd=ROOT, capture_output=True, text=True, check=True).stdout
        except (OSError, subprocess.CalledProcessError) as err:
            raise SystemExit(f"runs: no chapters/{chapter}.ipynb at commit {commit!r} in git: "
                             f"{getattr(err, 'stderr', '') or err}".strip())
        baselines[chapter] = baseline_notebook(nbformat.reads(text, as_version=4))
    return baselines


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
        problems += _volatile_problems(where, nb)
        problems += _check_baseline(run, chapter, nb)
    for chapter in sorted(set(run.baselines) - set(run.notebooks)):
        problems.append(f"{run.machine}/{BASELINE}/{chapter}.ipynb: no recording of {chapter}")
    return problems


def _check_baseline(run: Run, chapter: str, recorded) -> list[str]:
    """The baseline of a chapter holds the recorded cells, executed, without images."""
    where = f"{run.machine}/{BASELINE}/{chapter}.ipynb"
    baseline = run.baselines.get(chapter)
    if baseline is None:
        return [f"{where}: missing (the build machine's stored notebook of the recorded "
                f"commit; python scripts/runs.py baseline {run.machine})"]
    problems = []
    ours = [normalise_source(c["source"]) for c in code_cells(baseline)]
    theirs = [normalise_source(c["source"]) for c in code_cells(recorded)]
    if ours != theirs:
        differ = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b),
                      min(len(ours), len(theirs)))
        problems.append(f"{where}: code cells differ from the recording's from cell {differ} "
                        f"({len(ours)} vs {len(theirs)} code cells): not the same commit")
    for index, cell in enumerate(code_cells(baseline)):
        if any(key in output.get("data", {}) for output in cell.get("outputs", [])
               for key in BASELINE_DROPPED):
            problems.append(f"{where}: code cell {index} keeps image data")
    return problems + _volatile_problems(where, baseline)


def untagged_errors(nb) -> list[tuple[int, dict]]:
    """(code cell index, error output) of every error a cell without raises-exception stored."""
    return [(index, output) for index, cell in enumerate(code_cells(nb))
            if "raises-exception" not in cell.get("metadata", {}).get("tags", [])
            for output in cell.get("outputs", []) if output.get("output_type") == "error"]


def _volatile_problems(where: str, nb) -> list[str]:
    return [f"{where}: volatile cell metadata {key!r} kept" for key in VOLATILE_CELL_KEYS
            if any(key in cell.get("metadata", {}) for cell in nb.cells)]


class NbvalComparison:
    """nbval's own output comparison (IPyNbCell.compare_outputs), outside a kernel.

    The comparison is nbval's, unchanged (only its failure message is
    formatted here, without pytest's assertion hook); only what it reads from
    its pytest item and parent file is given here: the keys nbval skips (as
    IPyNbFile.__init__ sets them without --nbdime, so PNG data is not
    compared) and the sanitize patterns read from the file as nbval reads it.
    nbval is imported here, not with the module: `record` does not need it.
    """
    SKIP_COMPARE = ('metadata', 'traceback', 'prompt_number', 'output_type', 'name',
                    'execution_count', 'application/vnd.jupyter.widget-view+json',
                    'image/png', 'image/jpeg')

    def __init__(self, sanitize_file: Path = SANITIZE_CFG):
        from types import SimpleNamespace

        from nbval import plugin
        self._nbval = plugin
        self.parent = SimpleNamespace(
            skip_compare=self.SKIP_COMPARE,
            sanitize_patterns=dict(plugin.get_sanitize_patterns(sanitize_file.read_text())))
        self.colors = plugin.nocolors
        self.comparison_traceback = []

    def compare_outputs(self, test, ref, skip_compare=None):
        return self._nbval.IPyNbCell.compare_outputs(self, test, ref, skip_compare)

    def sanitize(self, s):
        return self._nbval.IPyNbCell.sanitize(self, s)

    def format_output_compare(self, key, left, right):
        # nbval's own asks pytest's assertion hook; a plain diff says the same.
        left, right = (self._nbval._trim_base64(v) if isinstance(v, str) else v
                       for v in (left, right))
        self.comparison_traceback.append(f" mismatch {key!r} (- stored, + recorded)")
        self.comparison_traceback.extend(difflib.ndiff(
            str(left).splitlines(), str(right).splitlines()))

    def differs(self, stored_outputs, recorded_outputs) -> str | None:
        """None when nbval would accept recorded_outputs for stored ones, else why not."""
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


# What compare_cell says about a stored cell whose source the recording shares.
SAME = "same"                      # nbval accepts the recorded output
OUTPUT_CHANGED = "output changed"  # the stored output changed since the recording
HARDWARE = "hardware"              # the CPU output did not change, the GPU's differs


def compare_cell(cell, recorded_cell, baseline_cell, comparison: NbvalComparison
                 ) -> tuple[str, str | None]:
    """(SAME | OUTPUT_CHANGED | HARDWARE, why the recorded output differs).

    The recording is compared with the stored output first. Where they differ,
    the baseline (the stored output of the recorded commit on the build
    machine) tells why: if the stored output differs from it too, the cell's
    output changed since the recording (code it prints or calls changed);
    if it does not, or there is no baseline cell, the machine is to blame.
    """
    why = comparison.differs(cell.outputs, recorded_cell.outputs)
    if why is None:
        return SAME, None
    if baseline_cell is not None and comparison.differs(cell.outputs, baseline_cell.outputs):
        return OUTPUT_CHANGED, why
    return HARDWARE, why


def baseline_cell(baseline, recorded_index: int, recorded_source: str):
    """The baseline's code cell paired with a recorded one: same index, same source.

    None where there is none (no baseline, or it does not hold that cell).
    """
    cells = code_cells(baseline) if baseline is not None else []
    if recorded_index >= len(cells) or normalise_source(cells[recorded_index]["source"]) \
            != normalise_source(recorded_source):
        return None
    return cells[recorded_index]


# What cell_status says beyond compare_cell's verdicts.
UNRECORDED = "unrecorded"          # no recorded cell pairs with it
STALE_SOURCE = "source changed"    # its source changed since the recording
NOT_COMPARED = "not compared"      # nbval compares nothing (nbval_compares)
RECORDED_ERROR = "recorded error"  # it raised on the recorded machine, untagged


def nbval_compares(cell) -> bool:
    """Whether nbval compares this cell's output: it ran, and no tag or marker says not to."""
    options = nbval_options(cell)
    return (cell.get("execution_count") is not None
            and not (options.get("skip") or options.get("check") is False))


def cell_status(cell, match: Match | None, recorded_cells: list, baseline,
                comparison: NbvalComparison) -> tuple[str, str | None]:
    """(status, why) of a chapter's code cell against its recording.

    ``match`` pairs it with ``recorded_cells[match.recorded]`` (Run.match);
    ``baseline`` is the run's baseline notebook of the chapter, or None. The
    status is UNRECORDED, STALE_SOURCE, NOT_COMPARED, RECORDED_ERROR, or
    compare_cell's SAME, OUTPUT_CHANGED or HARDWARE; ``why`` says how the
    recorded output differs.
    """
    if match is None:
        return UNRECORDED, None
    if not match.current:
        return STALE_SOURCE, None
    if not nbval_compares(cell):
        return NOT_COMPARED, None
    recorded = recorded_cells[match.recorded]
    errors = [o for o in recorded.outputs if o.output_type == "error"]
    if errors and not nbval_options(cell).get("check_exception"):
        return RECORDED_ERROR, (f"raised {errors[0].ename} on the recorded machine, "
                                "and the cell is not tagged raises-exception")
    base = baseline_cell(baseline, match.recorded, recorded.source)
    verdict, why = compare_cell(cell, recorded, base, comparison)
    if verdict == HARDWARE and base is None:
        why = "(no baseline cell: compared strictly)\n" + why
    return verdict, why


def hardware_report(chapters: Path = CHAPTERS, recorded: list[Run] | None = None,
                    comparison: NbvalComparison | None = None) -> dict:
    """Per chapter: hardware cells, and per machine how many are current or stale.

    A recorded hardware cell is stale_source when its source changed since the
    recording; stale_output when its source is the same but nbval compares its
    output and the stored output changed since the recording (cell_status:
    OUTPUT_CHANGED); else current.
    """
    recorded = runs() if recorded is None else recorded
    comparison = NbvalComparison() if comparison is None else comparison
    counted = {STALE_SOURCE: "stale_source", OUTPUT_CHANGED: "stale_output"}
    report = {}
    for ipynb in sorted(chapters.glob("*.ipynb")):
        cells = code_cells(read_notebook(ipynb))
        sources = [c["source"] for c in cells]
        hardware = [i for i, c in enumerate(cells)
                    if HARDWARE_TAG in c.get("metadata", {}).get("tags", [])]
        entry = {"hardware": len(hardware), "machines": {}}
        for run in recorded:
            matches = run.match(ipynb.stem, sources)
            recorded_cells = code_cells(run.notebooks[ipynb.stem]) if matches else []
            counts = {"current": 0, "stale_source": 0, "stale_output": 0}
            for i in hardware:
                status, _ = cell_status(cells[i], matches.get(i), recorded_cells,
                                        run.baselines.get(ipynb.stem), comparison)
                if status != UNRECORDED:
                    counts[counted.get(status, "current")] += 1
            entry["machines"][run.machine] = counts
        report[ipynb.stem] = entry
    return report


REPORT_KEYS = ("current", "stale_source", "stale_output")


def format_report(report: dict) -> str:
    """The report as a small table, one line per chapter."""
    machines = sorted({m for e in report.values() for m in e["machines"]})
    head = "/".join(k.replace("_", "-") for k in REPORT_KEYS)
    width = {m: max(len(m) + len(head) + 2, 14) for m in machines}
    lines = ["chapter      hardware cells  " + "  ".join(f"{m}: {head}" for m in machines)]
    totals = {m: dict.fromkeys(REPORT_KEYS, 0) for m in machines}
    for chapter, entry in report.items():
        cols = []
        for m in machines:
            c = entry["machines"].get(m, dict.fromkeys(REPORT_KEYS, 0))
            for k in REPORT_KEYS:
                totals[m][k] += c[k]
            cols.append("/".join(str(c[k]) for k in REPORT_KEYS).rjust(width[m]))
        lines.append(f"{chapter:<12} {entry['hardware']:>14}  " + "  ".join(cols))
    total = sum(e["hardware"] for e in report.values())
    lines.append(f"{'total':<12} {total:>14}  " + "  ".join(
        "/".join(str(totals[m][k]) for k in REPORT_KEYS).rjust(width[m]) for m in machines))
    return "\n".join(lines)


def _check_machine_name(machine: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", machine):
        raise SystemExit(f"runs: machine name {machine!r}: use letters, digits, '.', '_', '-'")


def _write_run(machine: str, notebooks: dict, meta: dict, baselines: dict,
               root: Path = RUNS) -> Path:
    missing = [k for k in RUN_KEYS if k not in meta]
    if missing:
        raise SystemExit(f"runs: run.json would lack {missing}")
    if set(baselines) != set(notebooks):
        raise SystemExit(f"runs: baselines {sorted(baselines)} are not of the recorded "
                         f"chapters {sorted(notebooks)}")
    _check_machine_name(machine)
    folder = root / machine
    _write_notebooks(folder, {c: strip_volatile(nb) for c, nb in notebooks.items()})
    _write_baselines(folder, baselines)
    (folder / "run.json").write_text(json.dumps(meta, indent=1) + "\n")
    return folder


def _print_problems(folder: Path) -> list[str]:
    """check_run of the run in folder, each problem printed to stderr."""
    problems = check_run(read_run(folder))
    for problem in problems:
        print(problem, file=sys.stderr)
    return problems


def _write_notebooks(folder: Path, notebooks: dict) -> None:
    """Write folder/<chapter>.ipynb for each notebook, removing any other."""
    import nbformat
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.ipynb"):
        if old.stem not in notebooks:
            old.unlink()
    for chapter, nb in notebooks.items():
        nbformat.write(nb, folder / f"{chapter}.ipynb")


def _write_baselines(folder: Path, baselines: dict) -> None:
    """Write folder/baseline/<chapter>.ipynb (images dropped), removing others."""
    _write_notebooks(folder / BASELINE,
                     {c: baseline_notebook(nb) for c, nb in baselines.items()})


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def _machine_facts() -> dict:
    """GPU names, versions and driver of this machine, as torch and nvidia-smi say."""
    import torch
    gpus = [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]
    driver = ""
    try:
        driver = subprocess.run(
            ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
            capture_output=True, text=True, check=True).stdout.split("\n")[0].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return {"gpus": gpus, "gpu_count": len(gpus), "torch": torch.__version__,
            "cuda": torch.version.cuda or "", "python": platform.python_version(),
            "driver": driver}


def record(machine: str, label: str | None, only: list[str] | None = None,
           timeout: int = 600) -> int:
    """Execute every chapter (or those named) in a fresh kernel; store runs/<machine>/."""
    import nbformat
    from nbclient import NotebookClient
    _check_machine_name(machine)
    kept = [p.name for p in (RUNS / machine).glob("*.ipynb") if only and p.stem not in only]
    if kept:
        raise SystemExit(f"record: runs/{machine}/ holds {kept}, recorded in another run; "
                         "one folder holds one run: record every chapter, or use a new folder")
    facts = _machine_facts()
    if not facts["gpus"]:
        print(f"record: warning: torch {facts['torch']} sees no CUDA GPU here; "
              "recording a CPU run", file=sys.stderr)
    notebooks, baselines, problems = {}, {}, []
    paths = sorted(CHAPTERS.glob("*.ipynb"))
    unknown = sorted(set(only or []) - {p.stem for p in paths})
    if unknown:
        raise SystemExit(f"record: no chapter named {unknown}")
    for path in paths:
        if only and path.stem not in only:
            continue
        nb = nbformat.read(path, as_version=4)
        # The stored notebook as the build machine executed it: the baseline.
        baselines[path.stem] = baseline_notebook(nb)
        start = time.time()
        try:
            NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(CHAPTERS)}}).execute()
        except Exception as err:  # a dead kernel or a timeout: say so, store nothing
            problems.append(f"{path.name}: {err!r}"[:500])
        for index, out in untagged_errors(nb):
            problems.append(f"{path.name} code cell {index}: {out.get('ename')}: "
                            f"{out.get('evalue', '')[:200]}")
        notebooks[path.stem] = nb
        print(f"record: {path.name} {time.time() - start:.1f} s", flush=True)
    if problems:
        print("record: errors outside raises-exception cells; nothing stored:", file=sys.stderr)
        for problem in problems:
            print("  " + problem, file=sys.stderr)
        return 1
    gpus = facts["gpus"]
    if label is None:
        label = gpus[0] if gpus else "CPU"
        if len(gpus) > 1:
            label = f"{len(gpus)}x {label}"
    meta = {"label": label, **facts, "date": _dt.date.today().isoformat(),
            "commit": _git_commit(), "recorded_with": f"scripts/record-run.sh {machine}"}
    folder = _write_run(machine, notebooks, meta, baselines, root=RUNS)
    print(f"record: wrote {folder}/ ({len(notebooks)} notebooks, "
          f"run.json, {BASELINE}/)")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    imp = sub.add_parser("import", help="store an existing run's executed notebooks")
    imp.add_argument("machine")
    imp.add_argument("executed", type=Path)
    imp.add_argument("--meta", type=Path, required=True,
                     help="JSON file with every run.json key (see RUN_KEYS)")
    rec = sub.add_parser("record", help="execute every chapter here and store it")
    rec.add_argument("machine")
    rec.add_argument("--label", help="tab label (default: the first GPU's name)")
    rec.add_argument("--chapter", action="append", dest="only", metavar="NAME",
                     help="record only this chapter (repeatable; default: all)")
    base = sub.add_parser("baseline", help="(re)write runs/MACHINE/baseline/ from git "
                                           "at run.json's commit")
    base.add_argument("machine")
    sub.add_parser("report", help="hardware cells with a current recording, per chapter")
    args = parser.parse_args(argv)
    if args.command == "import":
        import nbformat
        meta = json.loads(args.meta.read_text())
        notebooks = {p.stem: nbformat.read(p, as_version=4)
                     for p in sorted(args.executed.glob("*.ipynb"))}
        if not notebooks:
            raise SystemExit(f"runs: no notebooks in {args.executed}")
        baselines = baselines_from_git(str(meta.get("commit", "")), sorted(notebooks))
        folder = _write_run(args.machine, notebooks, meta, baselines)
        problems = _print_problems(folder)
        print(f"import: wrote {folder.relative_to(ROOT)}/ ({len(notebooks)} notebooks, "
              f"{BASELINE}/ from commit {meta.get('commit')})")
        return 1 if problems else 0
    if args.command == "baseline":
        _check_machine_name(args.machine)
        folder = RUNS / args.machine
        if not (folder / "run.json").is_file():
            raise SystemExit(f"runs: no recorded run {folder.relative_to(ROOT)}/run.json")
        run = read_run(folder)
        _write_baselines(folder, baselines_from_git(str(run.meta.get("commit", "")),
                                                    sorted(run.notebooks)))
        problems = _print_problems(folder)
        print(f"baseline: wrote {folder.relative_to(ROOT)}/{BASELINE}/ "
              f"(commit {run.meta['commit']})")
        return 1 if problems else 0
    if args.command == "record":
        return record(args.machine, args.label, args.only)
    print(format_report(hardware_report()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
