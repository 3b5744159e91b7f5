"""booktools.site with planted faults: what stops the build, what a failed build says and
leaves behind, one build at a time, and no build outliving the command.

The real build runs once per test run (tests/conftest.py) and its result is
checked in test_site_build.py; here each edition's build writes a page and a log,
and its process ends, fails or hangs as the test asks.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from filelock import FileLock

from booktools import chromium, i18n, notebooks, pdf, site
from booktools.book import ROOT
from booktools.ext import book_pdf

CODES = [lang.code for lang in i18n.languages()]
ADVICE = {name: advice for name, _, advice in site.CHECKS}
# Where each check of site.CHECKS is looked up when it runs.
CHECKS = {"config_problems": (site, "config_problems"),
          "markdown_problems": (notebooks, "markdown_problems"),
          "pair_problems": (notebooks, "pair_problems"),
          "output_problems": (notebooks, "output_problems"),
          "translation_problems": (i18n, "check")}


def plant(monkeypatch, name, check):
    monkeypatch.setattr(*CHECKS[name], check)


class Book:
    """The build folder main builds into, and how its fake editions' builds behave."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.site = folder / "html"
        self.started: list[str] = []
        self.fail: dict[str, str] = {}  # code -> the log of its failed build
        self.hang: set[str] = set()  # codes whose build never ends by itself
        self.pids: list[int] = []
        self.inputs = "inputs-1"  # what the pages say they were built from
        self.key = "key-1"
        self.said = "reading sources\nbuilt\n"  # the log of a build that passed

    def main(self) -> int:
        return site.main(["--build", str(self.folder)])

    def start(self, code, out, log, src=None):
        self.started.append(code)
        html = out / "_build" / "html"
        html.mkdir(parents=True, exist_ok=True)
        link = book_pdf.link(code, "chapters/intro") if chromium.version() else ""
        (html / "index.html").write_text(f"{code} {self.inputs}\n{link}<p>text</p>\n")
        (out / "_build" / "jupyter_execute").mkdir(exist_ok=True)
        log.write_text(self.fail.get(code, self.said))
        script = ("import time\nwhile True: time.sleep(0.05)" if code in self.hang
                  else f"raise SystemExit({int(code in self.fail)})")
        proc = subprocess.Popen([sys.executable, "-c", script])
        self.pids.append(proc.pid)
        return proc


@pytest.fixture
def book(monkeypatch, tmp_path):
    made = Book(tmp_path / "_build")
    for name in CHECKS:
        plant(monkeypatch, name, lambda: [])
    monkeypatch.setattr(i18n, "stage", lambda code, work: work / code / "src")
    monkeypatch.setattr(chromium, "version", lambda: None)
    monkeypatch.setattr(site, "work_key", lambda: made.key)
    monkeypatch.setattr(site, "_start", made.start)
    monkeypatch.setattr(site, "GRACE", 0.5)
    monkeypatch.delenv("CI", raising=False)
    handler = signal.getsignal(signal.SIGTERM)
    yield made
    signal.signal(signal.SIGTERM, handler)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as file:
            return file.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_every_edition_builds_into_its_own_folder_and_is_published_together(book, capsys):
    assert book.main() == 0
    assert book.started == CODES
    out = capsys.readouterr().out
    assert out.startswith("site: the en edition built\n")
    assert "site: the ja edition built" in out and "site: open " in out
    for code in CODES:
        page = book.site / ("" if code == "en" else code) / "index.html"
        assert page.read_text().startswith(f"{code} inputs-1")
    # What Sphinx and myst-nb write beside an edition's pages stays in its work folder.
    assert not list(book.site.rglob("jupyter_execute"))
    assert not (book.folder / ".html.new").exists()


def test_the_next_build_is_incremental_and_replaces_the_site(book, capsys):
    assert book.main() == 0
    kept = book.folder / "i18n" / "en" / "_build" / "environment.pickle"
    kept.write_text("what Sphinx keeps between builds")
    book.started.clear()
    book.inputs = "inputs-2"
    assert book.main() == 0
    assert book.started == CODES and kept.exists()
    assert "afresh" not in capsys.readouterr().out
    assert (book.site / "index.html").read_text().startswith("en inputs-2")


PLANTED_LOG = ("reading sources\n"
               "\x1b[91mWARNING: search index couldn't be loaded\x1b[39;49;00m\n"
               "\x1b[01mExtension error (booktools.ext.recorded_runs):\x1b[39;49;00m\n"
               "Handler <function load_runs> for event 'builder-inited' threw an exception "
               "(exception: Expecting value: line 1 column 1 (char 0))\n"
               "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)\n"
               "the end\n")


def test_a_failed_edition_says_why_leaves_the_site_and_no_stamp(book, capsys):
    assert book.main() == 0
    capsys.readouterr()
    book.inputs, book.fail["ja"] = "inputs-2", PLANTED_LOG
    assert book.main() == 1
    err = capsys.readouterr().err
    assert "site: the ja edition failed to build (its log: " in err
    # Sphinx's coloured warning at the start of a line, and an extension's error.
    assert "\nWARNING: search index couldn't be loaded\n" in err
    assert "\nExtension error (booktools.ext.recorded_runs):\n" in err
    assert "JSONDecodeError: Expecting value" in err and "\x1b[" not in err
    assert "the en edition failed" not in err
    # The site is the last whole one, and the next build starts afresh.
    assert (book.site / "ja" / "index.html").read_text().startswith("ja inputs-1")
    assert (book.folder / "i18n" / ".unfinished").exists()


def test_after_a_failed_or_interrupted_build_every_edition_is_built_afresh(book, capsys):
    # Sphinx saved its environment but had not written the pages: an incremental
    # build then wrote a site without them, and marked it up to date.
    book.fail["ja"] = PLANTED_LOG
    assert book.main() == 1
    leftover = book.folder / "i18n" / "en" / "_build" / "leftover"
    leftover.write_text("from the build that did not finish")
    del book.fail["ja"]
    capsys.readouterr()
    assert book.main() == 0
    assert "site: building every edition afresh: the last build did not finish" in \
        capsys.readouterr().out
    assert not leftover.exists() and not (book.folder / "i18n" / ".unfinished").exists()


def test_a_change_sphinx_cannot_see_starts_the_editions_afresh(book, capsys):
    assert book.main() == 0
    leftover = book.folder / "i18n" / "en" / "_build" / "leftover"
    leftover.write_text("x")
    book.inputs, book.key = "inputs-2", "key-2"  # e.g. Chromium installed since
    capsys.readouterr()
    assert book.main() == 0
    assert "afresh: the book's extensions, _static/ or Chromium changed" in capsys.readouterr().out
    assert not leftover.exists()


def test_chromium_and_the_extensions_are_inputs_of_the_work_folders(monkeypatch, tmp_path):
    keys = set()
    for version in (None, "Chromium 156.0.8078.73", "Chromium 157.0.1.1"):
        monkeypatch.setattr(chromium, "version", lambda: version)
        keys.add(site.work_key())
    assert len(keys) == 3
    (tmp_path / "tools" / "booktools").mkdir(parents=True)
    (tmp_path / "_static").mkdir()
    before = site.work_key(tmp_path)
    (tmp_path / "tools" / "booktools" / "ext.py").write_text("x = 1\n")
    assert site.work_key(tmp_path) != before


def test_chromium_says_its_version_or_is_none(tmp_path, monkeypatch):
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\necho 'Chromium 156.0.8078.73 built on Debian'\n")
    fake.chmod(0o755)
    for path, expected in ((fake, "Chromium 156.0.8078.73"), ("/bin/true", None),
                           (tmp_path / "missing", None)):
        monkeypatch.setenv(chromium.VARIABLE, str(path))
        assert chromium.version() == expected


def test_a_build_without_chromium_links_and_keeps_no_pdf(book, monkeypatch, capsys):
    monkeypatch.setattr(chromium, "version", lambda: "Chromium 156.0")
    monkeypatch.setattr(pdf, "build", lambda site: [
        (site / pdf.site_path(code)).write_bytes(b"%PDF") for code in CODES] and [])
    assert book.main() == 0
    assert book_pdf.LINK_CLASS in (book.site / "index.html").read_text()
    assert (book.site / pdf.site_path("ja")).is_file()
    monkeypatch.setattr(chromium, "version", lambda: None)
    book.inputs, book.key = "inputs-2", "key-2"
    assert book.main() == 0
    assert book_pdf.LINK_CLASS not in (book.site / "index.html").read_text()
    assert not list(book.site.rglob("*.pdf"))
    assert "pdf: NO PDF PRINTED: no Chromium at" in capsys.readouterr().err


def test_a_chromium_that_fails_keeps_the_last_site_and_says_what_to_do(
        book, monkeypatch, capsys):
    assert book.main() == 0  # no Chromium: the HTML alone
    monkeypatch.setattr(chromium, "version", lambda: "Chromium 156.0")
    monkeypatch.setenv(chromium.VARIABLE, "/opt/broken/chromium")

    def fails(site):
        raise RuntimeError("BrowserType.launch: Target page, context or browser has been closed")

    monkeypatch.setattr(pdf, "build", fails)
    book.inputs, book.key = "inputs-2", "key-2"
    assert book.main() == 1
    err = capsys.readouterr().err
    assert "pdf: FAILED: the PDFs could not be printed (BrowserType.launch: Target page" in err
    assert "with the Chromium at /opt/broken/chromium (Chromium 156.0)" in err
    assert "BOOK_CHROMIUM=/nonexistent bash scripts/build-site.sh" in err
    for code in CODES:  # the pages that link a PDF that failed are not published
        page = (book.site / ("" if code == "en" else code) / "index.html").read_text()
        assert page.startswith(f"{code} inputs-1") and book_pdf.LINK_CLASS not in page


@pytest.mark.parametrize("planted, said", [
    ("pair_problems", "chapters/x.md and its notebook differ"),
    ("translation_problems", "i18n/ja/chapters/x.md: labels differ"),
    ("output_problems", "chapters/x.ipynb: code cells 3 of 9 have no stored outputs"),
])
def test_a_failed_check_stops_the_editions(book, monkeypatch, capsys, planted, said):
    plant(monkeypatch, planted, lambda: [said])
    assert book.main() == 1
    assert book.started == []  # the checks run before any build
    err = capsys.readouterr().err
    assert said in err and ADVICE[planted] in err


def test_a_check_that_cannot_read_a_file_says_so_in_one_line(book, monkeypatch, capsys):
    def unreadable():
        raise ValueError("i18n/ja/chapters/x.md:12: not UTF-8 (byte 0xe9): save the file as UTF-8")

    plant(monkeypatch, "translation_problems", unreadable)
    assert book.main() == 1
    assert "i18n/ja/chapters/x.md:12: not UTF-8" in capsys.readouterr().err


def test_a_bad_config_names_its_line(tmp_path):
    (tmp_path / "_config.yml").write_text("title: x\nsphinx:\n  config: [a\n  b: c\n")
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    [problem] = site.config_problems(tmp_path)
    assert problem.startswith(f"{tmp_path / '_config.yml'}:4: not YAML (")
    assert "mend that line" in problem
    assert site.config_problems() == []  # the book's own


def test_a_second_build_is_refused(book, capsys):
    with FileLock(book.folder / ".lock"):
        assert book.main() == 1
    assert f"another build holds {book.folder / '.lock'}: wait" in capsys.readouterr().err
    assert book.started == []
    assert book.main() == 0  # released


def test_an_error_beside_the_builds_ends_them(book, monkeypatch):
    book.hang.add("en")

    def raises(code, work):
        raise RuntimeError("a bug in staging a translation")

    monkeypatch.setattr(i18n, "stage", raises)  # while English builds
    with pytest.raises(RuntimeError):
        book.main()
    assert book.pids and not any(_alive(pid) for pid in book.pids)


def test_sigterm_ends_the_builds(book, monkeypatch):
    book.hang.add("en")
    monkeypatch.setattr(i18n, "stage", lambda code, work: os.kill(os.getpid(), signal.SIGTERM))
    with pytest.raises(SystemExit) as stop:
        book.main()
    assert stop.value.code == 128 + signal.SIGTERM
    assert book.pids and not any(_alive(pid) for pid in book.pids)


def test_a_build_ends_when_the_command_is_killed(tmp_path):
    # SIGKILL leaves no time to end anything: the kernel tells each build (Linux).
    script = textwrap.dedent("""
        import os, signal, subprocess, sys, time
        from booktools import site
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 preexec_fn=site._end_with_parent)
        print(child.pid, flush=True)
        time.sleep(0.5)
        os.kill(os.getpid(), signal.SIGKILL)
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)
    child = int(proc.stdout.split()[0])
    deadline = time.monotonic() + 10
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child)


def test_the_summary_gives_a_notebook_line_as_its_markdown_line():
    # Planted by the review: `:::{nota}` for `:::{note}` at devices.md:29, which
    # Sphinx reported as devices.ipynb:10012 (myst-nb's line 10 of cell 0, from 0).
    # The chapter's first markdown cell starts after the front matter, at
    # devices.md:19; its line k (from 0) is notebook line 10000 + k + 2.
    root = site.ROOT
    md = (root / "chapters" / "devices.md").read_text().splitlines()
    note = md.index(":::{note}") + 1  # 29 when the review planted it
    assert md[16] == "---" and md[18] == "(devices)="
    lines = [f"{root}/chapters/devices.ipynb:{10000 + note - 19 + 2}: WARNING: Unknown "
             "directive type: 'nota'", f"{root}/_build/html/x.html: fine"]
    assert site.summary(lines) == [f"chapters/devices.md:{note}: WARNING: Unknown directive "
                                   "type: 'nota'"]


def test_build_commands_are_strict(tmp_path):
    en = site.build_command("en", tmp_path / "en")
    assert en[:4] == ["build", "-W", "-n", "--keep-going"]
    assert en[4:] == [str(site.ROOT), "--path-output", str(tmp_path / "en")]
    ja = site.build_command("ja", tmp_path / "ja", tmp_path / "ja" / "src")
    assert ja[:4] == ["build", "-W", "-n", "--keep-going"]
    assert ja[4:] == [str(tmp_path / "ja" / "src"), "--path-output", str(tmp_path / "ja")]


def test_ctrl_c_ends_the_builds_and_says_so_in_one_line(book, monkeypatch, capsys):
    book.hang.add("en")

    def interrupted():
        raise KeyboardInterrupt

    monkeypatch.setattr(i18n, "stage", lambda code, work: interrupted())
    assert book.main() == 130
    assert capsys.readouterr().err == ("site: interrupted; its builds were ended, and the next "
                                       "build starts afresh\n")
    assert book.pids and not any(_alive(pid) for pid in book.pids)
    assert (book.folder / "i18n" / ".unfinished").exists()


def test_a_chapter_that_cannot_be_read_gets_only_its_own_advice(book, monkeypatch, capsys):
    # The fault run's C5: a bad cell option or an unclosed fence was named, then
    # followed by "refresh.sh" (which would execute prose as code) and the
    # translations' advice, though neither was at fault.
    said = "chapters/devices.md:76: this fence (```{code-cell}) is never closed"
    plant(monkeypatch, "markdown_problems", lambda: [said])
    plant(monkeypatch, "pair_problems", lambda: ["chapters/devices.md and its notebook differ"])
    plant(monkeypatch, "translation_problems", lambda: ["i18n/ja/chapters/devices.md: x"])
    assert book.main() == 1
    err = capsys.readouterr().err
    assert said in err and ADVICE["markdown_problems"] in err
    assert "refresh.sh" not in err and "Translations" not in err and "differ" not in err


def test_the_books_chapters_all_read_as_notebooks():
    assert notebooks.markdown_problems() == []


def test_a_rewritten_page_links_its_stylesheets_and_mathjax_as_a_cold_build_does(tmp_path):
    """The fault run's S4: myst-nb's and sphinx-exercise's CSS (and MathJax, from
    sphinx-mathjax-offline) reached _static/ only when a build ended, so only a page
    written by a later build got `?v=`."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "sphinx_exercise", "sphinx-mathjax-offline",\n'
        '              "booktools.ext.site_assets"]\nmyst_enable_extensions = ["dollarmath"]\n'
        'root_doc = "page"\nproject = "p"\nhtml_theme = "sphinx_book_theme"\n', encoding="utf-8")
    (src / "page.md").write_text("# A page\n\nText and $x^2$.\n", encoding="utf-8")
    out = tmp_path / "out"

    def build(*options) -> str:
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", *options,
                               str(src), str(out)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return (out / "page.html").read_text(encoding="utf-8")

    cold = build()
    assert re.search(r'href="_static/mystnb\.[0-9a-f]+\.css\?v=', cold)
    assert re.search(r'href="_static/exercise\.css\?v=', cold)
    assert re.search(r'src="_static/mathjax/tex-chtml\.js\?v=', cold)
    assert build("-a") == cold  # every page written again, as an incremental build may


def test_the_build_does_not_point_at_its_work_folder(book, capsys):
    # jupyter-book's box named _build/i18n/en/_build/html/, not the site.
    from jupyter_book.utils import _message_box
    box = _message_box("Finished generating HTML for book.\nYour book's HTML pages are "
                       "here:\n    _build/i18n/en/_build/html/\n", doprint=False)
    book.said = f"reading sources\nbuilt\n{box}\n"
    assert book.main() == 0
    out = capsys.readouterr().out
    assert "HTML pages are here" not in out
    assert "=====" not in out and "site: open " in out


def test_no_booktools_module_imports_torch():
    """The build and the checks import booktools in every process; d2lgpu (and so torch,
    seconds of CPU a process) only where a plot is redrawn."""
    modules = sorted(f"booktools.{p.relative_to(ROOT / 'tools' / 'booktools').with_suffix('')}"
                     .replace("/", ".").removesuffix(".__init__")
                     for p in (ROOT / "tools" / "booktools").rglob("*.py"))
    done = subprocess.run([sys.executable, "-c", "import importlib, sys\nfor m in sys.argv[1:]: "
                           "importlib.import_module(m)\nprint(sorted(m for m in sys.modules "
                           "if m.split('.')[0] in ('torch', 'd2lgpu')))", *modules],
                          capture_output=True, text=True, encoding="utf-8", check=True)
    assert done.stdout.strip() == "[]", done.stdout
