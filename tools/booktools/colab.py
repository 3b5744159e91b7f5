"""Run every chapter as a Colab reader does (the weekly colab workflow, scripts/colab-run.sh).

    python -m booktools.colab [--report FILE] [CHAPTER ...]

Each chapter notebook runs alone in an empty folder, in a fresh kernel with nothing of this
checkout on its path, so its first cell installs d2lgpu from GitHub as a reader's does. A
cell that raises, unless tagged ``raises-exception``, fails the chapter (exit 1); the report
(Markdown, for the issue the workflow opens) names each.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from booktools.kernels import execute
from booktools.runs import CHAPTERS, cell_name, code_cells, untagged_errors

__all__ = ["run_as_a_reader", "main"]


def run_as_a_reader(notebook: Path, timeout: int = 1800) -> list[str]:
    """Execute a copy of the notebook alone in an empty folder; each failure, one line."""
    import nbformat
    with tempfile.TemporaryDirectory(prefix="colab-") as folder:
        copy = Path(folder) / notebook.name
        shutil.copy(notebook, copy)
        nb = nbformat.read(copy, as_version=4)
        found = []
        try:
            execute(nb, Path(folder), timeout, allow_errors=True)
        except Exception as error:  # a dead kernel or a timeout
            found.append(f"{notebook.stem}: {error!r}"[:500])
        cells = code_cells(nb)
        for index, output in untagged_errors(nb):
            name = f" ({cell_name(cells[index])})" if cell_name(cells[index]) else ""
            found.append(f"{notebook.stem}: code cell {index}{name}: {output.get('ename')}: "
                         f"{output.get('evalue', '')[:300]}")
        return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.colab",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--report", type=Path, help="write a Markdown report here")
    parser.add_argument("chapters", nargs="*", help="chapter names (default: all)")
    args = parser.parse_args(argv)
    paths = sorted(CHAPTERS.glob("*.ipynb"))
    unknown = sorted(set(args.chapters) - {p.stem for p in paths})
    if unknown:
        print(f"colab: no chapter named {unknown}", file=sys.stderr)
        return 2
    paths = [p for p in paths if not args.chapters or p.stem in args.chapters]
    # The kernels must not find this checkout's packages (a reader's Colab has none).
    os.environ.pop("PYTHONPATH", None)
    lines, failed = [], []
    for path in paths:
        start = time.monotonic()
        found = run_as_a_reader(path)
        verdict = "failed" if found else "ran"
        print(f"colab: {path.stem} {verdict} in {time.monotonic() - start:.0f} s", flush=True)
        print("".join(f"  {problem}\n" for problem in found), end="", flush=True)
        lines += [f"- `{path.stem}`: {verdict}", *(f"  - {problem}" for problem in found)]
        failed += found
    if args.report:
        args.report.write_text(f"Each chapter run as a Colab reader runs it (Python "
                               f"{sys.version.split()[0]}):\n\n" + "\n".join(lines) + "\n",
                               encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
