"""Keep chapter notebooks in step with their MyST markdown twins (jupytext).

    python -m booktools.notebooks refresh chapters/devices.md [...]
        Write each .ipynb from its .md and execute it (booktools.kernels).
    python -m booktools.notebooks check
        Exit 1 when a pair disagrees or a notebook has no markdown twin.

An executed notebook's metadata ``stored_outputs`` names the machine (``machine``),
which the CPU tab shows (booktools.ext.recorded_runs).
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import jupytext
import nbformat
from jupytext.compare import compare_notebooks
from markdown_it import MarkdownIt

from booktools import kernels
from booktools.files import read_text, shown
from booktools.runs import code_cells, strip_volatile

__all__ = ["refresh", "machine", "MACHINE_KEY",
           "read_markdown", "pair_problem", "pair_problems", "chapter_markdowns",
           "unexecuted", "output_problems", "md_line", "unclosed_fence", "markdown_problems",
           "HARDWARE_NOTE", "SNIPPET"]

ROOT = Path(__file__).resolve().parents[2]  # tools/booktools/notebooks.py in a checkout
CHAPTERS = ROOT / "chapters"
TIMEOUT = 300  # seconds per cell
MACHINE_KEY = "stored_outputs"  # notebook metadata: the machine that made the outputs
# Every chapter but the first pastes the snippet between these markers (booktools.i18n).
HARDWARE_NOTE = re.compile(r"<!-- hardware-note:start -->\n(.*?)<!-- hardware-note:end -->", re.S)
SNIPPET = CHAPTERS / "_snippets" / "hardware-note.md"


def chapter_markdowns() -> list[Path]:
    """Every chapter's .md (the files people edit)."""
    return sorted(p for p in CHAPTERS.glob("*.md") if not p.name.startswith("_"))


def unclosed_fence(text: str) -> int | None:
    """The line (from 1) of a fence that is never closed (CommonMark: markdown-it), or None."""
    for token in MarkdownIt("commonmark").parse(text):
        start, end = token.map or (0, 0)
        if token.type == "fence" and len(token.content.splitlines()) == end - start - 1:
            return start + 1  # no closing line: the content runs to the end
    return None


def read_markdown(md: Path):
    """md as a notebook (jupytext), or ValueError naming md, its line and what to mend."""
    text = read_text(md)
    unclosed = unclosed_fence(text)
    if unclosed is not None:  # jupytext would make the rest of the file one code cell
        fence = text.splitlines()[unclosed - 1].strip()[:40]
        raise ValueError(f"{shown(md)}:{unclosed}: this fence ({fence}) is never closed, so "
                         "the rest of the file would be its content: close it with a line of "
                         "the same backticks")
    try:
        return jupytext.reads(text, fmt="md:myst")
    except Exception as error:  # noqa: BLE001 - jupytext raises several kinds
        said = " ".join(str(error).split())
        line = re.search(r"\bat line (\d+)", said)
        raise ValueError(f"{shown(md)}{f':{line[1]}' if line else ''}: jupytext cannot read it "
                         f"({said[:300]}): mend that cell's options (`:tags: [a, b]`, or YAML "
                         "between two `---` lines)") from None


def machine() -> dict:
    """This machine as the kernels (this interpreter) see it: CPU, PyTorch's threads, version."""
    import torch
    with kernels.kernel_caches():  # d2lgpu imports matplotlib, whose caches go under $HOME
        from d2lgpu.matmul import cpu_model
    return {"cpu": cpu_model(), "threads": torch.get_num_threads(), "torch": torch.__version__}


def refresh(md: Path) -> Path:
    """Write md's paired notebook, executed; return its path."""
    md = md.resolve()
    if md.suffix != ".md" or not md.exists():
        raise SystemExit(f"refresh: {md} is not an existing .md chapter")
    try:
        nb = read_markdown(md)
    except ValueError as error:
        raise SystemExit(f"refresh: {error}") from None
    from nbclient.exceptions import CellExecutionError
    try:
        kernels.execute(nb, md.parent, TIMEOUT)
    except CellExecutionError as error:  # nbclient's: the cell, its traceback, the error
        raise SystemExit(f"refresh: {shown(md)}: {error}\n"
                         "refresh: nothing written; mend the cell, or tag it "
                         "raises-exception where raising is what it shows") from None
    except kernels.Stopped as stop:  # Ctrl-C, SIGTERM: the kernel is shut down
        raise SystemExit(f"refresh: {shown(md)}: {stop}; nothing written") from None
    nb.metadata[MACHINE_KEY] = machine()
    ipynb = md.with_suffix(".ipynb")
    jupytext.write(strip_volatile(nb), ipynb, fmt="ipynb")
    return ipynb


def markdown_problems() -> list[str]:
    """Each chapter .md that cannot be read as a notebook (read_markdown), file:line."""
    problems = []
    for md in chapter_markdowns():
        try:
            read_markdown(md)
        except ValueError as error:
            problems.append(str(error))
    return problems


def unexecuted(nb) -> list[int]:
    """The numbers (from 1) of nb's code cells that were never executed."""
    return [i for i, cell in enumerate(code_cells(nb), 1) if cell.get("execution_count") is None]


def output_problems() -> list[str]:
    """Each chapter notebook with code cells that were never executed (their outputs lost)."""
    problems = []
    for md in chapter_markdowns():
        ipynb = md.with_suffix(".ipynb")
        if not ipynb.is_file():
            continue  # pair_problems says so
        nb = nbformat.read(ipynb, as_version=4)
        missing = unexecuted(nb)
        if missing:
            problems.append(f"{shown(ipynb)}: code cells {', '.join(map(str, missing))} of "
                            f"{len(code_cells(nb))} have no stored outputs (never executed): "
                            f"bash scripts/refresh.sh {shown(md)}")
    return problems


def md_line(md: Path, cell: int, line: int) -> int | None:
    """The line of md holding line ``line`` of its notebook's code cell ``cell`` (from 0), or None."""
    try:
        text = read_text(md)
        cells = jupytext.reads(text, fmt="md:myst").cells
    except Exception:  # noqa: BLE001 - a message's detail, never a failure of its own
        return None
    if not 0 <= cell < len(cells):
        return None
    at = 0
    for found in cells[:cell + 1]:  # each cell's source after the one before
        start = text.find(found.source, at)
        if start < 0:
            return None
        at = start + len(found.source)
    return text.count("\n", 0, start) + 1 + line


def pair_problem(md: Path) -> str | None:
    """Say how md and its notebook disagree, or None when they agree."""
    ipynb = md.with_suffix(".ipynb")
    if not ipynb.exists():
        return f"{md.relative_to(ROOT)} has no paired notebook"
    try:
        text = read_markdown(md)
    except ValueError as error:
        return str(error)
    try:
        compare_notebooks(nbformat.read(ipynb, as_version=4), text, fmt="md:myst",
                          allow_expected_differences=False)
    except Exception as err:  # jupytext raises several comparison errors
        return f"{md.relative_to(ROOT)} and its notebook differ: {err}"
    return None


def pair_problems() -> list[str]:
    """Describe every disagreement between a chapter and its notebook."""
    mds = {p.with_suffix("") for p in chapter_markdowns()}
    problems = [f"{ipynb.relative_to(ROOT)} has no markdown twin"
                for ipynb in sorted(CHAPTERS.glob("*.ipynb"))
                if ipynb.with_suffix("") not in mds]
    problems += filter(None, map(pair_problem, chapter_markdowns()))
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.notebooks", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("refresh", help="regenerate and execute notebooks")
    ref.add_argument("markdowns", nargs="*", type=Path, help="default: every chapter")
    sub.add_parser("check", help="check that every pair agrees")
    args = parser.parse_args(argv)
    if args.command == "refresh":
        for md in args.markdowns or chapter_markdowns():
            print(f"refresh: {shown(refresh(md))}")
        return 0
    problems = pair_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
