"""Releases: scripts/release.sh checks the checkout, then makes one release commit on main,
whose install cells pin d2lgpu from PyPI (booktools.release pin), and tags it; publish checks
the tag (booktools.release check)."""
import datetime
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from booktools import release

ROOT = Path(__file__).resolve().parent.parent


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def book(tmp_path, monkeypatch) -> Path:
    """A repository on main with the files a release rewrites, release.sh and booktools."""
    files = [ROOT / "CITATION.cff", ROOT / "scripts" / "release.sh",
             *(path for pattern in release.CELLS for path in ROOT.glob(pattern))]
    for path in files:
        target = tmp_path / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    # release.sh runs .venv/bin/python -m booktools.release: the copy's, so its ROOT is the copy.
    shutil.copytree(ROOT / "tools" / "booktools", tmp_path / "tools" / "booktools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "tools"))
    (tmp_path / ".venv").symlink_to(ROOT / ".venv")
    (tmp_path / ".gitignore").write_text(".venv\n__pycache__/\n")
    for variable in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        monkeypatch.setenv(variable, "M")
    for variable in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        monkeypatch.setenv(variable, "m@example.com")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "book")
    return tmp_path


def release_sh(book: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "scripts/release.sh", *args], cwd=book, capture_output=True,
                          text=True, env=os.environ, timeout=120)


def test_release_makes_one_commit_on_main_pinning_every_install_cell_and_tags_it(book):
    start = git(book, "rev-parse", "HEAD")
    done = release_sh(book, "0.2.0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == ("release: v0.2.0 tags the release commit; "
                                            "publish with: git push origin main v0.2.0")
    assert git(book, "status", "--porcelain") == "" and git(book, "rev-parse", "HEAD~1") == start
    assert git(book, "rev-parse", "v0.2.0^{commit}") == git(book, "rev-parse", "HEAD")
    cells = [str(p.relative_to(book)) for pattern in release.CELLS for p in book.glob(pattern)]
    assert len(cells) >= 4 * 2 * 12  # four editions, .md and .ipynb, twelve chapters
    assert git(book, "diff", "--name-only", start, "HEAD").split() == \
        sorted(["CITATION.cff", *cells])
    cff = yaml.safe_load((book / "CITATION.cff").read_text())
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    assert (cff["version"], cff["date-released"]) == ("0.2.0", today)
    intro = (book / "chapters" / "intro.md").read_text()
    assert '    %pip install -q "d2lgpu==0.2.0"\n' in intro and "git+" not in intro
    assert '%pip install -q \\"d2lgpu==0.2.0\\"' in (book / "chapters" / "intro.ipynb").read_text()
    # Each changed line is an install cell's, or CITATION.cff's version and date.
    changed = [line for line in git(book, "diff", "-U0", start, "HEAD").splitlines()
               if line[:1] in "+-" and not line.startswith(("+++", "---"))]
    assert all("d2lgpu==0.2.0" in line or "git+https://" in line for line in changed
               if not line[1:].startswith(("version:", "date-released:"))), changed
    assert release.check("v0.2.0", book) == []


@pytest.mark.parametrize("why, prepare, args", [
    ("usage: bash scripts/release.sh MAJOR.MINOR.PATCH", None, []),
    ("version '2': give MAJOR.MINOR.PATCH", None, ["2"]),
    ("the working tree has changes", lambda b: (b / "CITATION.cff").write_text("x"), ["0.2.0"]),
    ("the tag v0.2.0 exists already", lambda b: git(b, "tag", "v0.2.0"), ["0.2.0"]),
    ("check out main", lambda b: git(b, "checkout", "-q", "-b", "other"), ["0.2.0"]),
])
def test_release_refuses_in_one_line_and_commits_nothing(book, why, prepare, args):
    if prepare:
        prepare(book)
    before = {p: p.read_bytes() for p in book.rglob("*") if p.is_file() and ".git" not in p.parts}
    done = release_sh(book, *args)
    assert done.returncode == 2 and why in done.stderr and len(done.stderr.splitlines()) == 1
    assert {p: p.read_bytes() for p in before} == before
    assert git(book, "log", "--format=%s") == "book"


def test_a_tag_made_by_hand_without_pinning_is_not_published(book):
    found = release.check("v0.9.0", book)  # main's install cells install from git
    cells = [p for pattern in release.CELLS for p in book.glob(pattern)]
    assert len(found) == len(cells) + 1  # and CITATION.cff's version
    assert "CITATION.cff: does not name d2lgpu 0.9.0 (make the release commit with bash " \
           "scripts/release.sh 0.9.0)" in found
    assert release.check("main", book) == ["main is not a release tag (vMAJOR.MINOR.PATCH)"]


def test_pin_rewrites_only_the_release_lines_and_says_how_many(book, capsys, monkeypatch):
    monkeypatch.setattr(release, "ROOT", book)
    assert release.main(["pin", "0.4.0"]) == 0
    said = capsys.readouterr().out
    assert said == f"release: {int(said.split()[1])} files now name d2lgpu 0.4.0\n"
    numstat = git(book, "diff", "--numstat").splitlines()
    assert len(numstat) == int(said.split()[1])
    assert all(line.startswith(("1\t1\t", "2\t2\tCITATION.cff")) for line in numstat), numstat
    assert release.pin("0.4.0", book) == []  # again: nothing left to change
    assert release.main(["check", "v0.4.0"]) == 0
    assert release.main(["check", "v0.5.0"]) == 1
