"""Recorded runs of the chapters on real GPUs (runs/<machine>/).

Each folder under runs/ is one machine: its executed chapter notebooks
(runs/<machine>/<chapter>.ipynb) and run.json (what ran them). The website
shows them under every code cell tagged ``hardware`` (_ext/recorded_runs.py);
tests/test_recorded_runs.py compares them with the stored notebooks.

    python scripts/runs.py import MACHINE EXECUTED_DIR --meta RUN.json
        Store an existing run's executed notebooks (volatile metadata removed)
        with the given run.json (every key of RUN_KEYS).
    python scripts/runs.py record MACHINE [--label L] [--chapter NAME ...]
        Execute every chapter here (what scripts/record-run.sh calls) and store it.
    python scripts/runs.py report
        How many hardware cells have a current recording, per chapter.

Only the standard library and nbformat (nbclient for `record`): it runs on a
GPU machine that has no Sphinx and no jupytext.
"""
from __future__ import annotations

import argparse
import datetime as _dt
import difflib
import json
import platform
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ROOT", "RUNS", "CHAPTERS", "RUN_KEYS", "HARDWARE_TAG", "Run", "Match",
    "normalise_source", "code_cells", "read_notebook", "align", "runs", "read_run",
    "strip_volatile", "check_run", "hardware_report",
]

ROOT = Path(__file__).resolve().parent.parent
RUNS = ROOT / "runs"
CHAPTERS = ROOT / "chapters"
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
    """Read runs/<machine>/ (run.json and every *.ipynb)."""
    meta = json.loads((folder / "run.json").read_text())
    notebooks = {p.stem: read_notebook(p) for p in sorted(folder.glob("*.ipynb"))}
    return Run(folder.name, folder, meta, notebooks)


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
        cell["id"] = f"cell-{index}"
    return nb


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
    if not re.fullmatch(r"[0-9a-f]{7,40}", str(run.meta.get("commit", ""))):
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
            tags = cell.get("metadata", {}).get("tags", [])
            for output in cell.get("outputs", []):
                if output.get("output_type") == "error" and "raises-exception" not in tags:
                    problems.append(f"{where}: code cell {index} raised {output.get('ename')} "
                                    "but is not tagged raises-exception")
        for key in VOLATILE_CELL_KEYS:
            if any(key in cell.get("metadata", {}) for cell in nb.cells):
                problems.append(f"{where}: volatile cell metadata {key!r} kept")
    return problems


def hardware_report(chapters: Path = CHAPTERS, recorded: list[Run] | None = None) -> dict:
    """Per chapter: hardware cells, and per machine how many are current / stale."""
    recorded = runs() if recorded is None else recorded
    report = {}
    for ipynb in sorted(chapters.glob("*.ipynb")):
        cells = code_cells(read_notebook(ipynb))
        sources = [c["source"] for c in cells]
        hardware = [i for i, c in enumerate(cells)
                    if HARDWARE_TAG in c.get("metadata", {}).get("tags", [])]
        entry = {"hardware": len(hardware), "machines": {}}
        for run in recorded:
            matches = run.match(ipynb.stem, sources)
            current = sum(1 for i in hardware if i in matches and matches[i].current)
            stale = sum(1 for i in hardware if i in matches and not matches[i].current)
            entry["machines"][run.machine] = {"current": current, "stale": stale}
        report[ipynb.stem] = entry
    return report


def format_report(report: dict) -> str:
    """The report as a small table, one line per chapter."""
    machines = sorted({m for e in report.values() for m in e["machines"]})
    lines = ["chapter      hardware cells  " + "  ".join(f"{m}: current/stale" for m in machines)]
    totals = {m: [0, 0] for m in machines}
    for chapter, entry in report.items():
        cols = []
        for m in machines:
            c = entry["machines"].get(m, {"current": 0, "stale": 0})
            totals[m][0] += c["current"]
            totals[m][1] += c["stale"]
            cols.append(f"{c['current']}/{c['stale']}".rjust(len(m) + 15))
        lines.append(f"{chapter:<12} {entry['hardware']:>14}  " + "  ".join(cols))
    total = sum(e["hardware"] for e in report.values())
    lines.append(f"{'total':<12} {total:>14}  " + "  ".join(
        f"{totals[m][0]}/{totals[m][1]}".rjust(len(m) + 15) for m in machines))
    return "\n".join(lines)


def _check_machine_name(machine: str) -> None:
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", machine):
        raise SystemExit(f"runs: machine name {machine!r}: use letters, digits, '.', '_', '-'")


def _write_run(machine: str, notebooks: dict, meta: dict, root: Path = RUNS) -> Path:
    import nbformat
    missing = [k for k in RUN_KEYS if k not in meta]
    if missing:
        raise SystemExit(f"runs: run.json would lack {missing}")
    _check_machine_name(machine)
    folder = root / machine
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.ipynb"):
        if old.stem not in notebooks:
            old.unlink()
    for chapter, nb in notebooks.items():
        nbformat.write(strip_volatile(nb), folder / f"{chapter}.ipynb")
    (folder / "run.json").write_text(json.dumps(meta, indent=1) + "\n")
    return folder


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
    notebooks, problems = {}, []
    paths = sorted(CHAPTERS.glob("*.ipynb"))
    unknown = sorted(set(only or []) - {p.stem for p in paths})
    if unknown:
        raise SystemExit(f"record: no chapter named {unknown}")
    for path in paths:
        if only and path.stem not in only:
            continue
        nb = nbformat.read(path, as_version=4)
        start = time.time()
        try:
            NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=True,
                           resources={"metadata": {"path": str(CHAPTERS)}}).execute()
        except Exception as err:  # a dead kernel or a timeout: say so, store nothing
            problems.append(f"{path.name}: {err!r}"[:500])
        for index, cell in enumerate(code_cells(nb)):
            tags = cell.metadata.get("tags", [])
            for out in cell.get("outputs", []):
                if out.get("output_type") == "error" and "raises-exception" not in tags:
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
    folder = _write_run(machine, notebooks, meta)
    print(f"record: wrote {folder.relative_to(ROOT)}/ ({len(notebooks)} notebooks, run.json)")
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
    sub.add_parser("report", help="hardware cells with a current recording, per chapter")
    args = parser.parse_args(argv)
    if args.command == "import":
        import nbformat
        meta = json.loads(args.meta.read_text())
        notebooks = {p.stem: nbformat.read(p, as_version=4)
                     for p in sorted(args.executed.glob("*.ipynb"))}
        if not notebooks:
            raise SystemExit(f"runs: no notebooks in {args.executed}")
        folder = _write_run(args.machine, notebooks, meta)
        problems = check_run(read_run(folder))
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"import: wrote {folder.relative_to(ROOT)}/ ({len(notebooks)} notebooks)")
        return 1 if problems else 0
    if args.command == "record":
        return record(args.machine, args.label, args.only)
    print(format_report(hardware_report()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
