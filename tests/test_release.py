"""Releases (booktools.release): cut checks everything, then makes one release commit on
main, whose install cells pin d2lgpu from PyPI, and tags it; publish checks the tag."""
import datetime
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from booktools import citation, release, repo

ROOT = Path(__file__).resolve().parent.parent
OLD = "https://github.com/d2l-gpu-book/gpu-book"


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=M", "-c", "user.email=m@example.com", *args],
                          cwd=root, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def book(tmp_path, monkeypatch) -> Path:
    """A repository with the book's place files (booktools.repo), pyproject.toml and main."""
    for path in [*repo.place_files(), ROOT / "pyproject.toml"]:
        target = tmp_path / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-q", "-m", "book")
    monkeypatch.setenv("GIT_AUTHOR_NAME", "M")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "m@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "M")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "m@example.com")
    return tmp_path


def test_cut_makes_one_release_commit_on_main_and_tags_it(book):
    start = git(book, "rev-parse", "HEAD")
    tag = release.cut("0.2.0", book, today=datetime.date(2027, 3, 4))
    assert tag == "v0.2.0" and git(book, "branch", "--show-current") == "main"
    assert git(book, "status", "--porcelain") == ""
    assert git(book, "rev-parse", "HEAD~1") == start
    assert git(book, "rev-parse", "v0.2.0^{commit}") == git(book, "rev-parse", "HEAD")
    changed = git(book, "diff", "--name-only", start, "HEAD").split()
    cells = sorted(str(p.relative_to(book)) for pattern in release.CELLS
                   for p in book.glob(pattern))
    assert changed == sorted(["CITATION.cff", "README.md", *cells])
    data = citation.load(book / "CITATION.cff")
    assert (data["version"], data["date-released"]) == ("0.2.0", "2027-03-04")
    assert (data["preferred-citation"]["version"], data["preferred-citation"]["year"]) == \
        ("0.2.0", 2027)
    assert citation.bibtex(book / "CITATION.cff") in (book / "README.md").read_text()
    assert "@book{d2lgpu2027gpus," in (book / "README.md").read_text()
    intro = (book / "chapters" / "intro.md").read_text()
    assert '    %pip install -q "d2lgpu==0.2.0"\n' in intro and "git+" not in intro
    assert '%pip install -q \\"d2lgpu==0.2.0\\"' in (book / "chapters" / "intro.ipynb").read_text()
    assert repo.configured(book).branch == "main" and repo.problems(book) == []
    tagged = git(book, "rev-parse", "v0.2.0^{commit}")
    assert release.check("v0.2.0", tagged, book) == []
    # publish refuses another commit than the tested one
    assert release.check("v0.2.0", "0" * 40, book) == [
        f"the tag v0.2.0 is commit {tagged[:12]}, not the tested {'0' * 12}"]


def test_cut_checks_everything_before_it_writes(book):
    with pytest.raises(ValueError, match="version '2': give MAJOR.MINOR.PATCH"):
        release.cut("2", book)
    (book / "README.md").write_text("changed\n")
    with pytest.raises(ValueError, match="the working tree has changes"):
        release.cut("0.2.0", book)
    git(book, "checkout", "-q", "--", "README.md")
    git(book, "tag", "v0.2.0")
    with pytest.raises(ValueError, match="the tag v0.2.0 exists already"):
        release.cut("0.2.0", book)
    # A file it would rewrite lacks what it sets: nothing is written, nothing committed.
    readme = (book / "README.md").read_text()
    (book / "README.md").write_text(re.sub(r"```bibtex\n.*?```", "", readme, flags=re.S))
    git(book, "commit", "-q", "-am", "no bibtex")
    before = {p: p.read_bytes() for p in book.rglob("*") if p.is_file() and ".git" not in p.parts}
    with pytest.raises(ValueError, match="found no ```bibtex block in README.md"):
        release.cut("0.3.0", book)
    assert {p: p.read_bytes() for p in before} == before
    assert git(book, "log", "--format=%s") == "no bibtex\nbook"


def test_a_tag_made_by_hand_without_pinning_is_not_published(book):
    git(book, "tag", "v0.1.0")  # main's commit: its install cells install from git
    found = release.check("v0.1.0", git(book, "rev-parse", "HEAD"), book)
    assert found[0].endswith("its install cell does not pin d2lgpu==0.1.0 "
                             "(cut releases with bash scripts/release.sh)")
    assert len(found) == len(list(book.glob("chapters/*.md"))) * 2 * 4  # four editions
    assert release.check("main", "", book) == ["main is not a release tag (vMAJOR.MINOR.PATCH)"]


def test_pin_rewrites_only_the_install_cells_and_says_how_many(book, capsys, monkeypatch):
    monkeypatch.setattr(release, "ROOT", book)
    assert release.main(["pin", "0.4.0"]) == 0
    said = capsys.readouterr().out
    assert said.startswith("release: ") and "files now install d2lgpu==0.4.0" in said
    assert git(book, "diff", "--numstat").count("\t") // 2 == int(said.split()[1])
    assert all(line.startswith("1\t1\t") for line in git(book, "diff", "--numstat").splitlines())
    assert release.pin("0.4.0", book) == []  # again: nothing left to change


def test_git_failures_say_what_git_said_even_on_stdout(book):
    with pytest.raises(ValueError, match=r"git rev-parse --verify nothing: "):
        release._git(book, "rev-parse", "--verify", "nothing")
    (book / "x").write_text("x")
    with pytest.raises(ValueError, match=r"(?s)git commit -q -m x: On branch main.*nothing added to commit"):
        release._git(book, "commit", "-q", "-m", "x")
