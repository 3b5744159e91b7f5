"""Keep chapter notebooks in step with their MyST markdown twins.

    python scripts/notebooks.py refresh chapters/devices.md [...]
        Write each chapter's .ipynb from its .md (always in that direction),
        execute it in a fresh kernel from the chapter's folder and store the
        outputs without volatile metadata.
    python scripts/notebooks.py check
        Exit non-zero when a pair disagrees or a notebook has no markdown twin.
    python scripts/notebooks.py seed-cache
        Offer each agreeing pair's stored, executed notebook to the site build's
        execution cache, so the site shows exactly the outputs that nbval
        checks; a chapter whose notebook is out of step is executed instead.
"""
from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

import jupytext
import nbformat
from jupytext.compare import compare_notebooks
from nbclient import NotebookClient
# The one definition of a clean stored notebook, shared with the recorded runs
# (runs.py needs nothing but nbformat, so it is the one that defines it).
from runs import strip_volatile

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = ROOT / "chapters"
BUILD_CACHE = ROOT / "_build" / ".jupyter_cache"  # Jupyter Book's default
TIMEOUT = 300  # seconds per cell


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


def seed_cache(cache_dir: Path = BUILD_CACHE) -> list[Path]:
    """Cache the stored notebooks of agreeing pairs for the site build; return them."""
    from jupyter_cache import get_cache

    cache = get_cache(str(cache_dir))
    seeded = []
    for md in chapter_markdowns():
        if pair_problem(md) is None:
            ipynb = md.with_suffix(".ipynb")
            # check_validity: the cells must have run in order, from 1.
            cache.cache_notebook_file(str(ipynb), uri=str(md),
                                      check_validity=True, overwrite=True)
            seeded.append(ipynb)
            # Sphinx re-reads a page only when its source is newer than the
            # last build: after a refresh that left the .md as it was, make
            # it so, or the page keeps showing the old outputs.
            stamp = cache_dir.parent / ".seeded" / f"{md.stem}.sha256"
            digest = hashlib.sha256(ipynb.read_bytes()).hexdigest()
            if stamp.is_file() and stamp.read_text() != digest:
                md.touch()
            stamp.parent.mkdir(parents=True, exist_ok=True)
            stamp.write_text(digest)
    return seeded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    ref = sub.add_parser("refresh", help="regenerate and execute notebooks")
    ref.add_argument("markdowns", nargs="*", type=Path, help="default: every chapter")
    ref.add_argument("--no-execute", action="store_true")
    sub.add_parser("check", help="check that every pair agrees")
    sub.add_parser("seed-cache", help="offer stored notebooks to the build cache")
    args = parser.parse_args(argv)
    if args.command == "refresh":
        for md in args.markdowns or chapter_markdowns():
            print(f"refresh: {refresh(md, execute=not args.no_execute).relative_to(ROOT)}")
        return 0
    if args.command == "seed-cache":
        for ipynb in seed_cache():
            print(f"seed-cache: {ipynb.relative_to(ROOT)}")
        return 0
    problems = pair_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
