"""Build the book's website, every edition strictly, and its PDFs (scripts/build-site.sh).

    python -m booktools.site [--build DIR]

The checks first (CHECKS), then one ``jupyter-book build -W -n --keep-going`` per edition, all
at once, in DIR/i18n/<code>/ (its log beside it), incremental unless the last build did not
finish or ``work_key`` changed; DIR/.html.new, with the PDFs, then replaces DIR/html whole.
DIR/.lock: one build at a time. Exit status 1 when a check or a build failed.
"""
from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import yaml
from filelock import FileLock, Timeout

from booktools import chromium, files, i18n, notebooks, pdf
from booktools.book import ROOT

__all__ = ["BUILD", "CHECKS", "build_command", "work_key", "summary", "build", "main"]

BUILD = ROOT / "_build"
GRACE = 10  # seconds a build has to end after SIGTERM, before SIGKILL
# Sphinx's warnings and errors, an extension's error, and a traceback's last line.
PROBLEM = re.compile(r"\b(WARNING|ERROR|CRITICAL)\b|^(Extension|Sphinx|Configuration|Theme) error"
                     r"|^Handler <|^Exception occurred|^\w+(\.\w+)*(Error|Exception): ")
# myst-nb numbers a notebook's lines (cell index + 1) * 10000 + 1 + line, from 0.
NOTEBOOK_LINE = re.compile(r"(?P<path>\S+\.ipynb):(?P<line>\d{5,})")


def build_command(code: str, out: Path, src: Path | None = None) -> list[str]:
    """jupyter-book's arguments: English from the book's root, a translation from src."""
    return ["build", "-W", "-n", "--keep-going", str(ROOT if code == "en" else src),
            "--path-output", str(out)]


def work_key(root: Path = ROOT) -> str:
    """What Sphinx does not see change: the book's extensions, _static/, and Chromium
    (whether the pages link a PDF)."""
    digest = hashlib.sha256(f"chromium: {chromium.version()}\0".encode())
    for path in sorted((*(root / "tools/booktools").rglob("*"), *(root / "_static").rglob("*"))):
        if path.is_file() and path.suffix != ".pyc":
            digest.update(f"{path.relative_to(root)}\0".encode() + path.read_bytes())
    return digest.hexdigest()


# --- the checks that run before the builds ---

CHECKS = (  # name, the check (looked up when it runs), advice
    ("config_problems", lambda: config_problems(), "the book's configuration cannot be read"),
    ("markdown_problems", lambda: notebooks.markdown_problems(),
     "a chapter's .md cannot be read as a notebook: mend the line named"),
    ("pair_problems", lambda: notebooks.pair_problems(),
     "a chapter's .md and .ipynb disagree: bash scripts/refresh.sh chapters/NAME.md"),
    ("output_problems", lambda: notebooks.output_problems(),
     "a chapter's notebook lost the outputs of its code cells: "
     "bash scripts/refresh.sh chapters/NAME.md executes it again"),
    ("translation_problems", lambda: i18n.check(),
     "a translation's structure differs from English's, or it breaks its edition's rules "
     "(MAINTAINING.md: Translations)"),
)


def config_problems(root: Path = ROOT) -> list[str]:
    """_config.yml and _toc.yml as YAML mappings, or each file:line: what is wrong."""
    problems = []
    for name in ("_config.yml", "_toc.yml"):
        try:
            data = yaml.safe_load(files.read_text(root / name))
        except yaml.YAMLError as error:
            problems.append(f"{files.yaml_problem(root / name, error)}: mend that line "
                            f"(git diff {name} shows what changed)")
            continue
        if not isinstance(data, dict):
            problems.append(f"{name}: not a YAML mapping of settings")
    return problems


def _checks() -> list[str]:
    """Every problem the checks find, each check's advice after its problems."""
    said = []
    for name, check, advice in CHECKS:
        try:
            problems = check()
        except (ValueError, OSError) as error:  # a file it cannot read: one line
            problems = [str(error)]
        if problems:
            said += [*problems, f"site: {advice}"]
            if name in ("config_problems", "markdown_problems"):
                break  # nothing else can be read without it
    return said


# --- the editions' builds ---

def _md_line(match: re.Match) -> str:
    """``x.ipynb:10012`` as the line of x.md that holds it, where x.md is its twin."""
    line, md = int(match["line"]), Path(match["path"]).resolve().with_suffix(".md")
    found = notebooks.md_line(md, line // 10000 - 1, line % 10000 - 2) if md.is_file() else None
    return f"{files.shown(md)}:{found}" if found else match.group(0)


def summary(lines: list[str]) -> list[str]:
    """A log's lines that say what went wrong, uncoloured, a notebook's line as its .md's."""
    lines = [files.ANSI_ESCAPE.sub("", line) for line in lines]
    return [NOTEBOOK_LINE.sub(_md_line, line) for line in lines if PROBLEM.search(line)]


def _end_with_parent() -> None:
    """In a started build: get SIGTERM when this process ends, however it ends (Linux)."""
    if sys.platform.startswith("linux"):
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


def _start(code: str, out: Path, log: Path, src: Path | None = None) -> subprocess.Popen:
    """Start one edition's build, its output in log."""
    with open(log, "wb") as output:
        return subprocess.Popen([str(Path(sys.executable).with_name("jupyter-book")),
                                 *build_command(code, out, src)],
                                stdout=output, stderr=subprocess.STDOUT,
                                preexec_fn=_end_with_parent,
                                env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def _end(builds: dict[str, subprocess.Popen]) -> None:
    """End the builds still running: SIGTERM, then SIGKILL after GRACE seconds."""
    for proc in builds.values():
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + GRACE
    for proc in builds.values():
        try:
            proc.wait(max(0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _stop(signum, frame) -> None:
    raise SystemExit(128 + signum)  # so that the builds are ended on the way out


def _editions(work: Path) -> int:
    """Build every edition into work/<code>/_build/html; 0 when the checks and all passed."""
    problems = _checks()
    if problems:
        print(*problems, sep="\n", file=sys.stderr)
        return 1
    builds: dict[str, subprocess.Popen] = {}
    try:
        builds["en"] = _start("en", work / "en", work / "en.log")
        for lang in i18n.translations():
            src = i18n.stage(lang.code, work)
            builds[lang.code] = _start(lang.code, src.parent, work / f"{lang.code}.log", src)
        failed = [code for code, proc in builds.items() if proc.wait() != 0]
    finally:
        _end(builds)
    for code in builds:
        log = work / f"{code}.log"
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
        if code in failed:
            print(f"site: the {code} edition failed to build (its log: {files.shown(log)}):",
                  *(summary(lines) or ["(no warning or error in its log; its end follows)"]),
                  "...", *(files.ANSI_ESCAPE.sub("", line) for line in lines[-12:]),
                  sep="\n", file=sys.stderr)
        else:
            print(f"site: the {code} edition built", *summary(lines), sep="\n")
    return 1 if failed else 0


# --- the site: put together, printed, published whole ---

def build(folder: Path = BUILD) -> int:
    """Build the editions and publish folder/html with their PDFs; 0 on success."""
    work, site = folder / "i18n", folder / "html"
    unfinished, key_file, key = work / ".unfinished", work / ".work-key", work_key()
    fresh = ("the last build did not finish" if unfinished.exists() else
             "the book's extensions, _static/ or Chromium changed"
             if work.exists() and (not key_file.is_file()
                                   or key_file.read_text(encoding="utf-8") != key) else None)
    if fresh:
        print(f"site: building every edition afresh: {fresh}")
        shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    key_file.write_text(key, encoding="utf-8")
    unfinished.write_text(f"pid {os.getpid()}\n", encoding="utf-8")
    if _editions(work):
        return 1
    unfinished.unlink()
    new = folder / ".html.new"  # the editions' pages together, then the site whole
    shutil.rmtree(new, ignore_errors=True)
    shutil.copytree(work / "en" / "_build" / "html", new)
    for lang in i18n.translations():
        shutil.copytree(work / lang.code / "_build" / "html", new / lang.code)
    if not pdf.publish(new):  # the last whole site stays, its PDFs with it
        return 1
    shutil.rmtree(site, ignore_errors=True)
    new.rename(site)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m booktools.site",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, default=BUILD,
                        help="the build folder (default: _build); the site is BUILD/html")
    folder = parser.parse_args(argv).build.resolve()
    signal.signal(signal.SIGTERM, _stop)
    try:
        with FileLock(folder / ".lock", timeout=0):  # one build at a time
            status = build(folder)
    except Timeout:
        print(f"site: another build holds {files.shown(folder / '.lock')}: wait for it to end, "
              "or end it; two builds at once would write the same files", file=sys.stderr)
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
