"""booktools.site: what stops the build, and what a failed build says.

The real build runs once per test run (tests/conftest.py) and its result is
checked in test_site_build.py; here the builds are small child processes.
"""
from __future__ import annotations

import os

import pytest

from booktools import i18n, notebooks, site


@pytest.fixture
def builds(monkeypatch, tmp_path):
    """The builds main starts, as {code: exit status}; each child writes its log and exits."""
    monkeypatch.setattr(site, "LOGS", tmp_path)
    monkeypatch.setattr(site, "PRELOAD", ())
    monkeypatch.setattr(notebooks, "pair_problems", lambda: [])
    monkeypatch.setattr(i18n, "check", lambda: [])
    monkeypatch.setattr(i18n, "stage", lambda code: tmp_path / code)
    started, outcome = {}, {}

    def fork_build(code, src=None):
        started[code] = src
        pid = os.fork()
        if pid == 0:
            status = outcome.get(code, 0)
            (tmp_path / f"{code}.log").write_text(
                f"reading sources\n{code}.md:3: WARNING: a planted warning\nbuilt\n"
                if status else "reading sources\nbuilt\n")
            os._exit(status)
        return pid

    monkeypatch.setattr(site, "_fork_build", fork_build)
    return started, outcome


def test_every_edition_builds_and_english_log_is_printed(builds, capsys):
    started, _ = builds
    assert site.main([]) == 0
    assert list(started) == ["en", *(lang.code for lang in i18n.translations())]
    out = capsys.readouterr().out
    assert out.startswith("reading sources\nbuilt\n")
    assert "site: the ja edition built into _build/html/ja/" in out


def test_a_failed_edition_fails_the_build_and_shows_its_warning(builds, capsys):
    _, outcome = builds
    outcome["ja"] = 1
    assert site.main([]) == 1
    err = capsys.readouterr().err
    assert "site: the ja edition failed to build" in err
    assert "ja.md:3: WARNING: a planted warning" in err
    assert "the en edition failed" not in err


def test_a_structure_problem_stops_the_editions(builds, monkeypatch, capsys):
    started, _ = builds
    monkeypatch.setattr(i18n, "check", lambda: ["i18n/ja/chapters/x.md: labels differ"])
    assert site.main([]) == 1
    assert list(started) == ["en"]  # English was already building; no edition starts
    assert "labels differ" in capsys.readouterr().err


def test_a_chapter_pair_out_of_step_stops_the_editions(builds, monkeypatch, capsys):
    started, _ = builds
    monkeypatch.setattr(notebooks, "pair_problems", lambda: ["chapters/x.md and its notebook differ"])
    assert site.main([]) == 1
    assert list(started) == ["en"]
    err = capsys.readouterr().err
    assert "chapters/x.md and its notebook differ" in err and "refresh.sh" in err


def test_build_commands_are_strict():
    assert site.build_command("en")[:4] == ["build", "-W", "-n", "--keep-going"]
    ja = site.build_command("ja", site.LOGS / "ja" / "src")
    assert ja[:4] == ["build", "-W", "-n", "--keep-going"]
    assert ja[-2:] == ["--path-output", str(site.LOGS / "ja")]
