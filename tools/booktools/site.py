"""Build the English site and its translated editions, strictly, side by side.

    python -m booktools.site

What ``scripts/build-site.sh`` runs once the book is set up and the last build
is found out of date. In order:

1. Jupyter Book and Sphinx are imported, once;
2. English builds into ``_build/html`` in a process of its own (a fork, so
   it imports nothing again), while this one checks that the chapters' .md
   and .ipynb agree (``booktools.notebooks``) and that every translation has
   English's structure and follows its edition's rules (``booktools.i18n``),
   and stages the editions;
3. each edition builds the same way into ``_build/html/<code>/``.

Each build is ``jupyter-book build -W -n --keep-going`` (a warning fails it),
its output in ``_build/i18n/<code>.log``. English's log is printed, and of
each edition's its warnings and errors; a failed build prints those and its
log's end.
Exit status 1 when a check or a build failed. Forking after the imports saves
each build a second of CPU: on two cores the four builds took 7.4 s instead
of 8.3 s as four ``jupyter-book`` commands.
"""
from __future__ import annotations

import importlib
import os
import re
import sys
import traceback
from pathlib import Path

from booktools import i18n, notebooks
from booktools.book import ROOT

__all__ = ["build_command", "main"]

LOGS = i18n.STAGES  # _build/i18n/<code>.log beside each edition's stage
# What every build imports: the earlier, the fewer imports each fork repeats.
# A module missing here is imported by the build that needs it, as usual.
PRELOAD = ("jupyter_book.cli.main", "jupyter_book.sphinx", "sphinx.application",
           "sphinx.builders.html", "myst_nb.sphinx_ext", "sphinx_book_theme",
           "pydata_sphinx_theme", "sphinx_design", "sphinx_exercise", "sphinx_togglebutton",
           "sphinx_copybutton", "sphinx_thebe", "sphinx_comments", "sphinx_external_toc",
           "sphinx_jupyterbook_latex", "sphinx_multitoc_numbering")
WARNING = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b")


def build_command(code: str, src: Path | None = None) -> list[str]:
    """The jupyter-book arguments that build an edition: English from the book's
    root, a translation from its stage (booktools.i18n.stage)."""
    args = ["build", "-W", "-n", "--keep-going"]
    if code == "en":
        return [*args, str(ROOT)]
    return [*args, str(src), "--path-output", str(src.parent)]


def _log(code: str) -> Path:
    return LOGS / f"{code}.log"


def _fork_build(code: str, src: Path | None = None) -> int:
    """Start one build in a child process, its output in its log; return the child's pid."""
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:
        log = os.open(_log(code), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(log, 1)
        os.dup2(log, 2)
        from jupyter_book.cli.main import main as jupyter_book
        try:
            jupyter_book(build_command(code, src), prog_name="jupyter-book", standalone_mode=False)
            status = 0
        except SystemExit as stop:
            status = stop.code if isinstance(stop.code, int) else 1
    except BaseException:  # noqa: BLE001 - the child reports everything, then exits
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _wait(builds: dict[str, int]) -> list[str]:
    """Wait for every build; return the codes of those that failed."""
    failed = []
    for code, pid in builds.items():
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(code)
    return failed


def main(argv: list[str] | None = None) -> int:
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:
            pass  # the build imports what it needs, and says what is missing
    LOGS.mkdir(parents=True, exist_ok=True)
    # English builds while this process checks (a failed check fails the
    # build all the same, and leaves the site's stamp unwritten).
    builds = {"en": _fork_build("en")}
    for problems, what in ((notebooks.pair_problems, "a chapter's .md and .ipynb disagree: "
                            "bash scripts/refresh.sh chapters/NAME.md"),
                           (i18n.check, "a translation's structure differs from English's, "
                            "or it breaks its edition's rules (README: Translations)")):
        problems = problems()
        if problems:
            print(*problems, f"site: {what}", sep="\n", file=sys.stderr)
            _wait(builds)
            return 1
    for lang in i18n.translations():
        builds[lang.code] = _fork_build(lang.code, i18n.stage(lang.code))
    failed = _wait(builds)
    for code in failed:
        log = _log(code)
        lines = log.read_text(errors="replace").splitlines()
        shown = log.relative_to(ROOT) if log.is_relative_to(ROOT) else log
        print(f"site: the {code} edition failed to build ({shown}):",
              *_warnings(lines), "...", *lines[-12:], sep="\n", file=sys.stderr)
    if failed:
        return 1
    print(_log("en").read_text(errors="replace"), end="")
    for code in builds:
        if code != "en":
            lines = _log(code).read_text(errors="replace").splitlines()
            print(f"site: the {code} edition built into _build/html/{code}/", *_warnings(lines),
                  sep="\n")
    return 0


def _warnings(lines: list[str]) -> list[str]:
    return [line for line in lines if WARNING.search(line)]


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
