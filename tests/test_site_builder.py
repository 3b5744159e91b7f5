"""booktools.site with planted faults: what stops the build, what a failed build says and
leaves behind, one build at a time, and no build outliving the command.

The real build runs once per test run (tests/conftest.py) and its result is
checked in test_site_build.py; here the editions' builds are small child
processes that write a page and a log.
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

from booktools import chromium, i18n, pdf, site
from booktools.ext import book_pdf

CODES = [lang.code for lang in i18n.languages()]
CHECKS = ("config_problems", "markdown_problems", "pair_problems", "output_problems",
          "translation_problems")


class Book:
    """The build folder main builds into, and how its fake editions' builds behave."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.site = folder / "html"
        self.started: list[str] = []
        self.fail: dict[str, str] = {}  # code -> the log of its failed build
        self.hang: set[str] = set()  # codes whose build never ends by itself
        self.pids: list[int] = []
        self.inputs = "inputs-1"
        self.key = "key-1"
        self.said = "reading sources\nbuilt\n"  # the log of a build that passed

    def main(self) -> int:
        return site.main(["--build", str(self.folder)])

    def fork_build(self, code, out, log, src=None):
        self.started.append(code)

        def child() -> int:
            html = out / "_build" / "html"
            html.mkdir(parents=True, exist_ok=True)
            link = book_pdf.link(code, "chapters/intro") if chromium.version() else ""
            (html / "index.html").write_text(f"{code} {self.inputs}\n{link}<p>text</p>\n")
            (out / "_build" / "jupyter_execute").mkdir(exist_ok=True)
            log.write_text(self.fail.get(code, self.said))
            while code in self.hang:
                time.sleep(0.05)
            return 1 if code in self.fail else 0

        pid = site._fork(child)  # as the real builds are forked
        self.pids.append(pid)
        return pid


@pytest.fixture
def book(monkeypatch, tmp_path):
    made = Book(tmp_path / "_build")
    monkeypatch.setattr(site, "PRELOAD", ())
    for name in CHECKS:
        monkeypatch.setattr(site, name, lambda: [])
    monkeypatch.setattr(i18n, "stage", lambda code, work: work / code / "src")
    monkeypatch.setattr(chromium, "version", lambda: None)
    monkeypatch.setattr(site, "inputs_hash", lambda: made.inputs)
    monkeypatch.setattr(site, "work_key", lambda: made.key)
    monkeypatch.setattr(site, "_fork_build", made.fork_build)
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
    assert out.startswith("reading sources\nbuilt\n")
    assert "site: the ja edition built" in out and "site: open " in out
    for code in CODES:
        page = book.site / ("" if code == "en" else code) / "index.html"
        assert page.read_text().startswith(f"{code} inputs-1")
    # What Sphinx and myst-nb write beside an edition's pages stays in its work folder.
    assert not list(book.site.rglob("jupyter_execute"))
    assert (book.folder / ".site-inputs.sha256").read_text().strip() == "inputs-1"
    assert not (book.folder / ".html.new").exists()


def test_an_unchanged_book_is_up_to_date_and_a_changed_one_is_built(book, capsys):
    assert book.main() == 0
    book.started.clear()
    assert book.main() == 0
    assert book.started == [] and "site: up to date" in capsys.readouterr().out
    book.inputs = "inputs-2"
    assert book.main() == 0
    assert book.started == CODES
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
    # The site is the last whole one; nothing marks anything up to date.
    assert (book.site / "ja" / "index.html").read_text().startswith("ja inputs-1")
    assert not (book.folder / ".site-inputs.sha256").exists()
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


def test_chromium_is_an_input_of_the_site_and_of_its_work_folders(monkeypatch):
    monkeypatch.setattr(chromium, "version", lambda: None)
    without = site.inputs_hash(), site.work_key()
    monkeypatch.setattr(chromium, "version", lambda: "Chromium 156.0.8078.73")
    with_it = site.inputs_hash(), site.work_key()
    monkeypatch.setattr(chromium, "version", lambda: "Chromium 157.0.1.1")
    newer = site.inputs_hash(), site.work_key()
    assert len({without[0], with_it[0], newer[0]}) == 3
    assert len({without[1], with_it[1], newer[1]}) == 3


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


def test_a_chromium_that_fails_keeps_the_html_without_pdf_links_and_says_what_to_do(
        book, monkeypatch, capsys):
    monkeypatch.setattr(chromium, "version", lambda: "Chromium 156.0")
    monkeypatch.setenv(chromium.VARIABLE, "/opt/broken/chromium")

    def fails(site):
        raise RuntimeError("BrowserType.launch: Target page, context or browser has been closed")

    monkeypatch.setattr(pdf, "build", fails)
    assert book.main() == 1
    err = capsys.readouterr().err
    assert "pdf: FAILED: the PDFs could not be printed (BrowserType.launch: Target page" in err
    assert "with the Chromium at /opt/broken/chromium (Chromium 156.0)" in err
    assert "BOOK_CHROMIUM=/nonexistent bash scripts/build-site.sh" in err
    for code in CODES:
        page = (book.site / ("" if code == "en" else code) / "index.html").read_text()
        assert page.startswith(code) and "<p>text</p>" in page
        assert book_pdf.LINK_CLASS not in page
    assert not (book.folder / ".site-inputs.sha256").exists()


def test_strip_links_takes_out_exactly_the_link_the_extension_put():
    body = "<p>text</p>\n"
    for code in CODES:
        assert book_pdf.strip_links(book_pdf.link(code, "chapters/devices") + body) == body


@pytest.mark.parametrize("planted, said", [
    ("pair_problems", "chapters/x.md and its notebook differ"),
    ("translation_problems", "i18n/ja/chapters/x.md: labels differ"),
    ("output_problems", "chapters/x.ipynb: code cells 3 of 9 have no stored outputs"),
])
def test_a_failed_check_stops_the_editions(book, monkeypatch, capsys, planted, said):
    monkeypatch.setattr(site, planted, lambda: [said])
    assert book.main() == 1
    assert book.started == ["en"]  # English was already building; no edition starts
    err = capsys.readouterr().err
    assert said in err and dict(site.CHECKS)[planted] in err
    assert not all(_alive(pid) for pid in book.pids)


def test_a_check_that_cannot_read_a_file_says_so_in_one_line(book, monkeypatch, capsys):
    def unreadable():
        raise ValueError("i18n/ja/chapters/x.md:12: not UTF-8 (byte 0xe9): save the file as UTF-8")

    monkeypatch.setattr(site, "translation_problems", unreadable)
    assert book.main() == 1
    assert "i18n/ja/chapters/x.md:12: not UTF-8" in capsys.readouterr().err


def test_a_bad_config_names_its_line(tmp_path):
    (tmp_path / "_config.yml").write_text("title: x\nsphinx:\n  config: [a\n  b: c\n")
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    [problem] = site.config_problems(tmp_path)
    assert problem.startswith("_config.yml:4: not YAML (") and "mend that line" in problem
    assert site.config_problems() == []  # the book's own


def test_a_second_build_is_refused_naming_the_holder(book, capsys):
    with site.locked(book.folder):
        assert book.main() == 1
    err = capsys.readouterr().err
    assert f"another build holds {book.folder / '.lock'} (pid {os.getpid()}, started " in err
    assert book.started == []
    assert book.main() == 0  # released


def test_an_error_beside_the_builds_ends_them(book, monkeypatch):
    book.hang.add("en")

    def raises():
        raise RuntimeError("a bug in a check")

    monkeypatch.setattr(site, "pair_problems", raises)
    with pytest.raises(RuntimeError):
        book.main()
    assert book.pids and not any(_alive(pid) for pid in book.pids)


def test_sigterm_ends_the_builds(book, monkeypatch):
    book.hang.add("en")
    monkeypatch.setattr(site, "pair_problems", lambda: os.kill(os.getpid(), signal.SIGTERM))
    with pytest.raises(SystemExit) as stop:
        book.main()
    assert stop.value.code == 128 + signal.SIGTERM
    assert book.pids and not any(_alive(pid) for pid in book.pids)


def test_a_build_ends_when_the_command_is_killed(tmp_path):
    # SIGKILL leaves no time to end anything: the kernel tells each build (Linux).
    script = textwrap.dedent("""
        import os, signal, sys, time
        from booktools import site
        parent = os.getpid()
        pid = os.fork()
        if pid == 0:
            for fd in (1, 2):  # the test reads the parent's output to its end
                os.dup2(os.open(os.devnull, os.O_WRONLY), fd)
            site._end_with_parent(parent)
            time.sleep(60)
            os._exit(0)
        print(pid, flush=True)
        time.sleep(0.5)
        os.kill(parent, signal.SIGKILL)
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

    monkeypatch.setattr(site, "pair_problems", interrupted)
    assert book.main() == 130
    assert capsys.readouterr().err == ("site: interrupted; its builds were ended, and the next "
                                       "build starts afresh\n")
    assert book.pids and not any(_alive(pid) for pid in book.pids)
    assert (book.folder / "i18n" / ".unfinished").exists()


def test_a_fork_takes_sigterm_as_its_end_never_as_this_process():
    # With this process's handler, a SIGTERM right after the fork raised SystemExit
    # in the child, which then went on as a second copy of the test run.
    handler = signal.signal(signal.SIGTERM, site._stop)
    try:
        pid = site._fork(lambda: 0 if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL else 3)
        assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
        for _ in range(20):  # some land before the child has done anything
            pid = site._fork(lambda: time.sleep(30) or 0)
            os.kill(pid, signal.SIGTERM)
            assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == -signal.SIGTERM
    finally:
        signal.signal(signal.SIGTERM, handler)


def test_a_chapter_that_cannot_be_read_gets_only_its_own_advice(book, monkeypatch, capsys):
    # The fault run's C5: a bad cell option or an unclosed fence was named, then
    # followed by "refresh.sh" (which would execute prose as code) and the
    # translations' advice, though neither was at fault.
    said = "chapters/devices.md:76: this fence (```{code-cell}) is never closed"
    monkeypatch.setattr(site, "markdown_problems", lambda: [said])
    monkeypatch.setattr(site, "pair_problems", lambda: ["chapters/devices.md and its notebook "
                                                        "differ"])
    monkeypatch.setattr(site, "translation_problems", lambda: ["i18n/ja/chapters/devices.md: x"])
    assert book.main() == 1
    err = capsys.readouterr().err
    assert said in err and dict(site.CHECKS)["markdown_problems"] in err
    assert "refresh.sh" not in err and "Translations" not in err and "differ" not in err


def test_the_books_chapters_all_read_as_notebooks():
    assert site.markdown_problems() == []


def test_a_rewritten_page_links_its_stylesheets_as_a_cold_build_does(tmp_path):
    """The fault run's S4: myst-nb's and sphinx-exercise's CSS reached _static/ only
    when a build ended, so only a page written by a later build got `?v=`."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "conf.py").write_text(
        'extensions = ["myst_nb", "sphinx_exercise", "booktools.ext.site_assets"]\n'
        'root_doc = "page"\nproject = "p"\nhtml_theme = "sphinx_book_theme"\n', encoding="utf-8")
    (src / "page.md").write_text("# A page\n\nText.\n", encoding="utf-8")
    out = tmp_path / "out"

    def build(*options) -> str:
        proc = subprocess.run([sys.executable, "-m", "sphinx", "-q", "-b", "html", *options,
                               str(src), str(out)], capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr
        return (out / "page.html").read_text(encoding="utf-8")

    cold = build()
    assert re.search(r'href="_static/mystnb\.[0-9a-f]+\.css\?v=', cold)
    assert re.search(r'href="_static/exercise\.css\?v=', cold)
    assert build("-a") == cold  # every page written again, as an incremental build may


def test_the_build_does_not_point_at_its_work_folder(book, capsys):
    # jupyter-book's box named _build/i18n/en/_build/html/, not the site.
    from jupyter_book.utils import _message_box
    box = _message_box("Finished generating HTML for book.\nYour book's HTML pages are "
                       "here:\n    _build/i18n/en/_build/html/\n", doprint=False)
    book.said = f"reading sources\nbuilt\n{box}\n"
    assert book.main() == 0
    out = capsys.readouterr().out
    assert out.startswith("reading sources\nbuilt\n") and "HTML pages are here" not in out
    assert "=====" not in out and "site: open " in out
