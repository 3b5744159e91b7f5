"""Keep chapter notebooks in step with their MyST markdown twins.

    python -m booktools.notebooks refresh chapters/devices.md [...]
        Write each chapter's .ipynb from its .md (always in that direction),
        execute it in a fresh kernel from the chapter's folder and store the
        outputs without volatile metadata.
    python -m booktools.notebooks check
        Exit non-zero when a pair disagrees or a notebook has no markdown twin.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import jupytext
import nbformat
from jupytext.compare import compare_notebooks
from nbclient import NotebookClient
from booktools.runs import strip_volatile  # one definition of a clean stored notebook

__all__ = ["refresh", "pair_problem", "pair_problems", "chapter_markdowns", "HARDWARE_NOTE",
           "SNIPPET"]

ROOT = Path(__file__).resolve().parents[2]  # tools/booktools/notebooks.py in a checkout
CHAPTERS = ROOT / "chapters"
TIMEOUT = 300  # seconds per cell
# The first chapter holds the full hardware note; every other chapter pastes
# the one-line snippet between these markers (a translation, its own snippet).
HARDWARE_NOTE = re.compile(r"<!-- hardware-note:start -->\n(.*?)<!-- hardware-note:end -->", re.S)
SNIPPET = CHAPTERS / "_snippets" / "hardware-note.md"


def chapter_markdowns() -> list[Path]:
    """Every chapter's .md (the files people edit)."""
    return sorted(p for p in CHAPTERS.glob("*.md") if not p.name.startswith("_"))


def refresh(md: Path, execute: bool = True) -> Path:
    """Regenerate md's paired notebook and execute it; return its path."""
    md = md.resolve()
    if md.suffix != ".md" or not md.exists():
        raise SystemExit(f"refresh: {md} is not an existing .md chapter")
    nb = jupytext.read(md)
    if execute:
        NotebookClient(
            nb,
            timeout=TIMEOUT,
            kernel_name="python3",
            resources={"metadata": {"path": str(md.parent)}},
        ).execute()
    nb = strip_volatile(nb)
    ipynb = md.with_suffix(".ipynb")
    jupytext.write(nb, ipynb, fmt="ipynb")
    return ipynb


def pair_problem(md: Path) -> str | None:
    """Say how md and its notebook disagree, or None when they agree."""
    ipynb = md.with_suffix(".ipynb")
    if not ipynb.exists():
        return f"{md.relative_to(ROOT)} has no paired notebook"
    try:
        compare_notebooks(
            nbformat.read(ipynb, as_version=4),
            jupytext.read(md),
            fmt="md:myst",
            allow_expected_differences=False,
        )
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
    ref.add_argument("--no-execute", action="store_true")
    sub.add_parser("check", help="check that every pair agrees")
    args = parser.parse_args(argv)
    if args.command == "refresh":
        for md in args.markdowns or chapter_markdowns():
            print(f"refresh: {refresh(md, execute=not args.no_execute).relative_to(ROOT)}")
        return 0
    problems = pair_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
