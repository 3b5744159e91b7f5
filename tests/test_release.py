"""Releases (booktools.release): cut makes a release commit on main and a tag whose
commit names the tag in every install cell and link; publish checks it."""
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


def test_cut_makes_a_release_commit_and_a_tag_that_names_itself(book):
    start = git(book, "rev-parse", "HEAD")
    tag = release.cut("0.2.0", book, today=datetime.date(2027, 3, 4))
    assert tag == "v0.2.0" and git(book, "branch", "--show-current") == "main"
    assert git(book, "status", "--porcelain") == ""
    # main: one commit, the version and nothing else; it still names main.
    assert git(book, "rev-parse", "HEAD~1") == start
    assert git(book, "diff", "--name-only", start, "HEAD").split() == [
        "CITATION.cff", "README.md", "pyproject.toml"]
    data = citation.load(book / "CITATION.cff")
    assert (data["version"], data["date-released"]) == ("0.2.0", "2027-03-04")
    assert (data["preferred-citation"]["version"], data["preferred-citation"]["year"]) == \
        ("0.2.0", 2027)
    assert 'version = "0.2.0"' in (book / "pyproject.toml").read_text()
    assert citation.bibtex(book / "CITATION.cff") in (book / "README.md").read_text()
    assert "@book{d2lgpu2027gpus," in (book / "README.md").read_text()
    assert repo.configured(book).branch == "main" and repo.problems(book) == []
    assert release.check("v0.2.0", "", book)[0].startswith("the checkout is ")
    # The tag: a child of main's release commit, in which everything names the tag.
    tagged = git(book, "rev-parse", "v0.2.0^{commit}")
    assert git(book, "rev-parse", f"{tagged}~1") == git(book, "rev-parse", "HEAD")
    git(book, "checkout", "-q", "v0.2.0")
    assert repo.configured(book).branch == "v0.2.0" and repo.problems(book) == []
    intro = (book / "chapters" / "intro.md").read_text()
    assert f'git+{OLD}@v0.2.0"' in intro and "@main" not in intro
    assert "github/d2l-gpu-book/gpu-book/blob/v0.2.0/chapters/intro.ipynb" in \
        (book / "README.md").read_text()  # the Colab link
    assert release.check("v0.2.0", tagged, book) == []
    # publish refuses another commit than the tested one
    assert release.check("v0.2.0", "0" * 40, book) == [
        f"the tag v0.2.0 is commit {tagged[:12]}, not the tested {'0' * 12}"]


def test_cut_refuses_a_dirty_tree_an_existing_tag_and_a_bad_version(book):
    with pytest.raises(ValueError, match="version '2': give MAJOR.MINOR.PATCH"):
        release.cut("2", book)
    (book / "README.md").write_text("changed\n")
    with pytest.raises(ValueError, match="the working tree has changes"):
        release.cut("0.2.0", book)
    git(book, "checkout", "-q", "--", "README.md")
    git(book, "tag", "v0.2.0")
    with pytest.raises(ValueError, match="the tag v0.2.0 exists already"):
        release.cut("0.2.0", book)
    assert git(book, "log", "--format=%s") == "book"


def test_a_tag_made_by_hand_on_main_is_not_published(book):
    git(book, "tag", "v0.1.0")  # main's commit: its install cells name main
    found = release.check("v0.1.0", git(book, "rev-parse", "HEAD"), book)
    assert found == ["_config.yml names main, not v0.1.0: the install cells would not install "
                     "the release (cut releases with bash scripts/release.sh)"]
    assert re.match(r"v\d", "v0.1.0") and release.check("main", "", book) == [
        "main is not a release tag (vMAJOR.MINOR.PATCH)"]
