"""Build the book's website, every edition strictly, and publish it whole or not at all.

    python -m booktools.site [--build DIR]

What ``scripts/build-site.sh`` runs once the book is set up. The published
site is DIR/html (default ``_build/html``): English at its root, each
translated edition under ``<code>/``, each edition's PDF beside its pages.
It is replaced only whole, and only by a build that ended without a warning;
DIR/.site-inputs.sha256 then holds the hash of what it was built from
(``inputs_hash``), and while that is unchanged the command says "up to date"
and does nothing. In order:

1. DIR/.lock is taken: a second build at once is refused, naming the holder
   (its forked builds hold it too, until the last has ended).
2. Sphinx builds each edition in a work folder of its own,
   DIR/i18n/<code>/_build/ (its pages, doctrees, ``jupyter_execute/`` and
   ``recorded_runs/``): English from the book's root, each translation from
   its stage (booktools.i18n.stage), side by side in forked processes, while
   this one checks that the chapters' .md and .ipynb agree and that every code
   cell has its stored output (booktools.notebooks), and that every
   translation has English's structure and follows its edition's rules
   (booktools.i18n). Each build is ``jupyter-book build -W -n --keep-going``,
   its output in DIR/i18n/<code>.log; a failed one prints its warnings and
   errors and its log's end, a page's line given in its .md.
   The work folders are Sphinx's incremental state: they are started afresh
   when the last build did not finish (DIR/i18n/.unfinished stays behind a
   build that failed or was interrupted; a failed build's warnings would not
   be said again by an incremental one) and when Sphinx would not see what
   changed (``work_key``: the book's extensions, ``_static/``, and Chromium,
   which decides whether pages link a PDF).
3. The editions are put together in DIR/.html.new, Chromium prints each
   edition's PDF there (booktools.pdf), and DIR/.html.new replaces DIR/html.
   If printing fails, the pages are published without their PDF links, and
   the build fails, saying which Chromium failed and how to build without
   PDFs. Without Chromium no PDF is printed and no page links one (the build
   fails where $CI is set).

Every process this build starts ends with it: the builds get SIGTERM when
this process ends (also when it is killed), and are ended when it is
interrupted or stops on an error. Exit status 1 when a check or a build
failed, or another build holds the lock.
"""
from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import traceback
from pathlib import Path

import yaml

from booktools import chromium, files, i18n, notebooks, pdf
from booktools.book import ROOT
from booktools.lock import Locked, locked  # noqa: F401 - part of this module's interface

__all__ = ["BUILD", "INPUTS", "build_command", "inputs_hash", "work_key", "Locked", "locked",
           "summary", "build", "main"]

BUILD = ROOT / "_build"
# What the pages are built from (beside Chromium): when none of it changed
# since the last published build, that build is the one this one would make.
INPUTS = ("chapters", "i18n", "runs", "tools/booktools", "_static", "_config.yml", "_toc.yml",
          "requirements.txt", "package-lock.json", "scripts/build-site.sh")
# What every build imports: the earlier, the fewer imports each fork repeats.
# A module missing here is imported by the build that needs it, as usual.
PRELOAD = ("jupyter_book.cli.main", "jupyter_book.sphinx", "sphinx.application",
           "sphinx.builders.html", "myst_nb.sphinx_ext", "sphinx_book_theme",
           "pydata_sphinx_theme", "sphinx_design", "sphinx_exercise", "sphinx_togglebutton",
           "sphinx_copybutton", "sphinx_thebe", "sphinx_comments", "sphinx_external_toc",
           "sphinx_jupyterbook_latex", "sphinx_multitoc_numbering")
# A line of a build's log that says what went wrong: Sphinx's warnings and
# errors (coloured or not), an extension's error, and a traceback's last line.
PROBLEM = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b|^(Extension|Sphinx|Configuration|Theme) error"
                     r"|^Handler <|^Exception occurred|^\w+(\.\w+)*(Error|Exception): ")
# myst-nb numbers a notebook's lines from (cell index + 1) * 10000 + 1, and a
# warning names the line after that (as in a .md): 10012 is the cell's line 10, from 0.
NOTEBOOK_LINE = re.compile(r"(?P<path>\S+\.ipynb):(?P<line>\d{5,})")
GRACE = 10  # seconds a build has to end after SIGTERM, before SIGKILL
# What builds before the work folders left in the build folder (removed once).
LEGACY = (".doctrees", "jupyter_execute", "recorded_runs", ".ext.sha256")


def build_command(code: str, out: Path, src: Path | None = None) -> list[str]:
    """The jupyter-book arguments that build an edition into out/_build/html:
    English from the book's root, a translation from its stage (booktools.i18n.stage)."""
    return ["build", "-W", "-n", "--keep-going", str(ROOT if code == "en" else src),
            "--path-output", str(out)]


def _files(root: Path, names) -> list[Path]:
    """The files under names that git tracks or would (every file where git cannot say)."""
    try:
        listed = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z", "--", *names],
                                cwd=root, capture_output=True, check=True).stdout
        found = [root / name for name in os.fsdecode(listed).split("\0") if name]
    except (OSError, subprocess.CalledProcessError):
        found = [p for name in names for p in
                 ([root / name] if (root / name).is_file() else (root / name).rglob("*"))]
    return sorted({p for p in found if p.is_file() and "__pycache__" not in p.parts})


def _digest(root: Path, files: list[Path], *extra: str) -> str:
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(root)}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    for text in extra:
        digest.update(f"{text}\0".encode())
    return digest.hexdigest()


def _chromium() -> str:
    return f"chromium: {chromium.version() or 'none'}"


def inputs_hash(root: Path = ROOT) -> str:
    """What the published site is built from: INPUTS' files, and the Chromium that prints."""
    return _digest(root, _files(root, INPUTS), _chromium())


def work_key(root: Path = ROOT) -> str:
    """What Sphinx does not see change between two incremental builds: the book's
    extensions (tools/booktools), _static/ (copied only when a page is written), and
    Chromium (whether the pages link a PDF)."""
    return _digest(root, _files(root, ("tools/booktools", "_static")), _chromium())


# --- the editions' builds, each in a forked process ---

def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def _end_with_parent(parent: int) -> None:
    """In a fork: get SIGTERM when the process that forked it ends (Linux), however it ends."""
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it ended before prctl
        os._exit(1)


def _fork(child) -> int:
    """Run child() in a forked process that exits with what it returns; return its pid.

    SIGTERM and SIGINT are blocked across the fork: the child takes them with
    their default action (it ends), never with this process's handlers, which
    would have it go on as a second copy of this process.
    """
    sys.stdout.flush()
    sys.stderr.flush()
    parent = os.getpid()
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT})
    pid = os.fork()
    if pid:
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        return pid
    status = 1
    try:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        _end_with_parent(parent)
        status = child()
    except BaseException:  # noqa: BLE001 - the child reports everything, then exits
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)


def _fork_build(code: str, out: Path, log: Path, src: Path | None = None) -> int:
    """Start one build in a child process, its output in log; return the child's pid."""

    def child() -> int:
        fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        for stream in (sys.stdout, sys.stderr):  # the log is read as UTF-8 (_said)
            stream.reconfigure(encoding="utf-8", errors="backslashreplace")
        from jupyter_book.cli.main import main as jupyter_book
        try:
            jupyter_book(build_command(code, out, src), prog_name="jupyter-book",
                         standalone_mode=False)
        except SystemExit as stop:
            return stop.code if isinstance(stop.code, int) else 1
        return 0

    return _fork(child)


def _wait(builds: dict[str, int]) -> list[str]:
    """Wait for every build; return the codes of those that failed."""
    failed = []
    for code, pid in list(builds.items()):
        _, status = os.waitpid(pid, 0)
        del builds[code]
        if os.waitstatus_to_exitcode(status) != 0:
            failed.append(code)
    return failed


def _end(builds: dict[str, int]) -> None:
    """End the builds still running: SIGTERM, then SIGKILL after GRACE seconds."""
    for pid in builds.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE
    for pid in builds.values():
        while True:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        if not done:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    builds.clear()


def _stop(signum, frame) -> None:
    raise SystemExit(128 + signum)  # so that the builds are ended on the way out


# --- what a failed build says ---

def _md_line(match: re.Match) -> str:
    """``x.ipynb:10012`` as the line of x.md that holds it, where x.md is its twin."""
    path, line = Path(match["path"]), int(match["line"])
    md = path.resolve().with_suffix(".md")
    found = notebooks.md_line(md, line // 10000 - 1, line % 10000 - 2) if md.is_file() else None
    return f"{_shown(md)}:{found}" if found else match.group(0)


def summary(lines: list[str]) -> list[str]:
    """The lines of a build's log that say what went wrong, uncoloured, each place in a
    notebook given as the line of its .md where it has one."""
    found = []
    for line in lines:
        line = files.ANSI_ESCAPE.sub("", line)
        if PROBLEM.search(line):
            found.append(NOTEBOOK_LINE.sub(_md_line, line))
    return found


def _said(code: str, log: Path) -> list[str]:
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.is_file() else []
    problems = summary(lines)
    return [f"site: the {code} edition failed to build (its log: {_shown(log)}):",
            *(problems or ["(no warning or error in its log; its end follows)"]),
            "...", *(files.ANSI_ESCAPE.sub("", line) for line in lines[-12:])]


# --- the checks that run beside the English build ---

CHECKS = (
    ("config_problems", "the book's configuration cannot be read"),
    ("markdown_problems", "a chapter's .md cannot be read as a notebook: mend the line named"),
    ("pair_problems", "a chapter's .md and .ipynb disagree: bash scripts/refresh.sh chapters/NAME.md"),
    ("output_problems", "a chapter's notebook lost the outputs of its code cells: "
                        "bash scripts/refresh.sh chapters/NAME.md executes it again"),
    ("translation_problems", "a translation's structure differs from English's, or it breaks "
                             "its edition's rules (MAINTAINING.md: Translations)"),
)


def config_problems(root: Path = ROOT) -> list[str]:
    """_config.yml and _toc.yml as YAML mappings, or each file:line: what is wrong."""
    problems = []
    for name in ("_config.yml", "_toc.yml"):
        path = root / name
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as error:
            problems.append(f"{name}: cannot be read as UTF-8 text ({error})")
            continue
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            where = f"{name}:{mark.line + 1}" if mark else name
            what = getattr(error, "problem", None) or str(error).splitlines()[0]
            problems.append(f"{where}: not YAML ({what}): mend that line "
                            f"(git diff {name} shows what changed)")
            continue
        if not isinstance(data, dict):
            problems.append(f"{name}: not a YAML mapping of settings")
    return problems


def markdown_problems() -> list[str]:
    return notebooks.markdown_problems()


def pair_problems() -> list[str]:
    return notebooks.pair_problems()


def output_problems() -> list[str]:
    return notebooks.output_problems()


def translation_problems() -> list[str]:
    return i18n.check()


def _checks() -> list[str]:
    """Every problem the checks find, each check's advice after its problems."""
    said = []
    for name, advice in CHECKS:
        try:
            problems = globals()[name]()
        except (ValueError, OSError) as error:  # a file it cannot read: said in one line
            problems = [str(error)]
        if problems:
            said += [*problems, f"site: {advice}"]
            if name in ("config_problems", "markdown_problems"):
                break  # nothing else can be read without it: no advice that does not apply
    return said


# --- the whole build ---

def _editions(work: Path) -> int:
    """Build every edition into work/<code>/_build/html while checking; 0 when all passed."""
    work.mkdir(parents=True, exist_ok=True)
    builds: dict[str, int] = {}
    try:
        builds["en"] = _fork_build("en", work / "en", work / "en.log")
        problems = _checks()
        if problems:
            print(*problems, sep="\n", file=sys.stderr)
            return 1
        for lang in i18n.translations():
            src = i18n.stage(lang.code, work)
            builds[lang.code] = _fork_build(lang.code, src.parent, work / f"{lang.code}.log", src)
        order = list(builds)
        failed = _wait(builds)
    finally:
        _end(builds)
    for code in failed:
        print(*_said(code, work / f"{code}.log"), sep="\n", file=sys.stderr)
    if failed:
        return 1
    print(without_box(work / "en.log"), end="")
    for code in order[1:]:
        lines = (work / f"{code}.log").read_text(encoding="utf-8", errors="replace").splitlines()
        print(f"site: the {code} edition built", *summary(lines), sep="\n")
    return 0


# jupyter-book's box at the end of a build, between two lines of "=" (coloured):
# it names the English edition's work folder, which is not where the site is.
BOX = re.compile(r"^[^\n]*={20,}[^\n]*\n\s*Finished generating HTML for book\..*?"
                 r"^[^\n]*={20,}[^\n]*\n?", re.M | re.S)


def without_box(log: Path) -> str:
    """A build's log without jupyter-book's "Your book's HTML pages are here" box."""
    return BOX.sub("", log.read_text(encoding="utf-8", errors="replace"))


def _html(work: Path, code: str) -> Path:
    return work / code / "_build" / "html"


def _assemble(work: Path, target: Path) -> None:
    """Put the editions' pages together in target."""
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(_html(work, "en"), target)
    for lang in i18n.translations():
        shutil.copytree(_html(work, lang.code), target / lang.code)


def _replace(new: Path, site: Path) -> None:
    """Put new in site's place (site is never half-written: at worst briefly missing)."""
    old = site.with_name(f".{site.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if site.exists():
        site.rename(old)
    new.rename(site)
    shutil.rmtree(old, ignore_errors=True)


def _strip_pdf_links(site: Path) -> None:
    from booktools.ext import book_pdf

    for page in site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        stripped = book_pdf.strip_links(text)
        if stripped != text:
            page.write_text(stripped, encoding="utf-8")


def build(folder: Path = BUILD) -> int:
    """Build and publish folder/html unless it is up to date; 0 on success (the lock held)."""
    site, stamp, work = folder / "html", folder / ".site-inputs.sha256", folder / "i18n"
    digest = inputs_hash()  # asks Chromium its version: once, before the forks inherit it
    if ((site / "index.html").is_file() and stamp.is_file()
            and stamp.read_text(encoding="utf-8").strip() == digest):
        print("site: up to date (nothing it is built from changed since the last build)")
        return 0
    stamp.unlink(missing_ok=True)
    for name in LEGACY:
        path = folder / name
        shutil.rmtree(path) if path.is_dir() else path.unlink(missing_ok=True)
    unfinished, key_file, key = work / ".unfinished", work / ".work-key", work_key()
    fresh = ("the last build did not finish" if unfinished.exists() else
             "the book's extensions, _static/ or Chromium changed"
             if work.exists()
             and (not key_file.is_file() or key_file.read_text(encoding="utf-8") != key)
             else None)
    if fresh:
        print(f"site: building every edition afresh: {fresh}")
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    key_file.write_text(key, encoding="utf-8")
    unfinished.write_text(f"pid {os.getpid()}\n", encoding="utf-8")
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)  # the build says what is missing
    if _editions(work):
        return 1
    unfinished.unlink()
    new = folder / ".html.new"
    _assemble(work, new)
    printed = pdf.publish(new)
    if not printed:  # the pages link no PDF that failed to print
        _strip_pdf_links(new)
    _replace(new, site)
    if not printed:
        return 1
    stamp.write_text(digest + "\n", encoding="utf-8")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.site",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=BUILD,
                        help="the build folder (default: _build); the site is BUILD/html")
    args = parser.parse_args(argv)
    here = Path.cwd().resolve()
    if (here / "_config.yml").is_file() and here != ROOT:
        print(f"site: this booktools is {ROOT}'s, not {here}'s, and would build that book; "
              f"bash scripts/setup.sh in {here} installs its own", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, _stop)
    folder = args.build.resolve()
    try:
        with locked(folder):
            status = build(folder)
    except Locked as error:
        print(error, file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("site: interrupted; its builds were ended, and the next build starts afresh",
              file=sys.stderr)
        return 130
    if status == 0:
        print(f"site: open {folder / 'html' / 'index.html'}")
    return status


if __name__ == "__main__":
    sys.exit(main())
