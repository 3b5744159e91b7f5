"""The repository's address: _config.yml names it, every place that repeats it
agrees, and a place that does not is named with its line (booktools.repo)."""
import shutil
from pathlib import Path

import pytest

from booktools import i18n, repo
from booktools.book import repository

ROOT = Path(__file__).resolve().parent.parent
OLD = "https://github.com/d2l-gpu-book/gpu-book"


def test_every_place_names_the_address_of_config():
    assert repo.problems() == []
    assert repository().url == OLD  # the book's own repository (a fork edits _config.yml)
    places = {path for pattern in repo.PLACES for path in ROOT.glob(pattern)}
    named = {path.relative_to(ROOT) for path in places
             if any(pattern.search(path.read_text()) for pattern in repo.ADDRESSES)}
    chapters = [p.name for p in (ROOT / "chapters").glob("*.md") if not p.name.startswith("_")]
    every_edition = {Path(folder, "chapters", f"{name[:-3]}{suffix}")
                     for folder in ["", *(f"i18n/{lang.code}" for lang in i18n.translations())]
                     for name in chapters for suffix in (".md", ".ipynb")}
    expected = every_edition | {Path(p) for p in ("_config.yml", "README.md", "CONTRIBUTING.md",
                                                  "MAINTAINING.md", "CITATION.cff")}
    # (a translation not written yet is booktools.i18n check's to report)
    expected = {path for path in expected if (ROOT / path).is_file()}
    assert len(every_edition) >= 8 * len(chapters) and len(expected) > 2 * len(chapters)
    assert named >= expected, sorted(expected - named)


def copy_places(root: Path) -> Path:
    """A copy of the book's place files (what booktools.repo reads) under root."""
    for path in {path for pattern in repo.PLACES for path in ROOT.glob(pattern)}:
        target = root / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    return root


def test_a_planted_stale_address_is_named_with_its_line(tmp_path):
    book = copy_places(tmp_path)
    ja = book / "i18n" / "ja" / "chapters" / "devices.ipynb"
    ja.write_text(ja.read_text().replace(f"git+{OLD}@main", f"git+{OLD}-old@main"))
    tensors = book / "chapters" / "tensors.md"
    line = next(i for i, text in enumerate(tensors.read_text().splitlines(), 1)
                if f"git+{OLD}@main" in text)
    tensors.write_text(tensors.read_text().replace(f"{OLD}@main", f"{OLD}@master"))
    found = repo.problems(book)
    assert len(found) == 2, found
    assert found[0].startswith(f"chapters/tensors.md:{line}: {OLD}@master is not the book's "
                               f"repository, {OLD} (branch main) as _config.yml names it")
    assert found[1].startswith("i18n/ja/chapters/devices.ipynb:")
    assert f"{OLD}-old@main is not the book's repository" in found[1]


@pytest.mark.parametrize("url", ["http://github.com/someone/fork", "https://gitlab.com/a/b",
                                 "https://github.com/someone"])
def test_a_config_that_names_no_github_repository_is_refused_in_one_line(tmp_path, url):
    book = copy_places(tmp_path)
    config = book / "_config.yml"
    config.write_text(config.read_text().replace(OLD, url, 1))
    with pytest.raises(ValueError, match=r"^_config.yml repository.url: .* is not a GitHub "
                                         r"repository's address"):
        repo.problems(book)
