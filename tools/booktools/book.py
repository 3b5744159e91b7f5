"""The book's pages (_toc.yml), configuration, and the addresses its launch buttons open."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

__all__ = ["ROOT", "NOTEBOOK_BRANCH", "toc_pages", "book_config", "Repository", "repository"]

ROOT = Path(__file__).resolve().parents[2]
STUDIO_LAB_IMPORT = "https://studiolab.sagemaker.aws/import/github"
# The branch the launch buttons open: the reader notebooks, plain Markdown
# (booktools.reader_notebooks; the publish workflow pushes them).
NOTEBOOK_BRANCH = "notebooks"


def toc_pages() -> list[str]:
    """Every page that _toc.yml lists (root first), as docnames like 'chapters/intro'."""
    from sphinx_external_toc.parsing import parse_toc_yaml  # jupyter-book's own reader

    return list(parse_toc_yaml(ROOT / "_toc.yml"))


def book_config() -> dict:
    return yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))


@dataclass(frozen=True)
class Repository:
    url: str  # https://github.com/OWNER/REPO
    owner: str
    name: str
    branch: str
    book_path: str  # the book's folder inside the repository, "" or "book/"

    def notebook(self, page: str) -> str:
        """The page's paired notebook, relative to the repository root."""
        return f"{self.book_path}{page}.ipynb"

    def colab_url(self, page: str, colab: str) -> str:
        """Where the page's launch button opens its reader notebook (NOTEBOOK_BRANCH)."""
        return (f"{colab.rstrip('/')}/github/{self.owner}/{self.name}/blob/"
                f"{NOTEBOOK_BRANCH}/{self.notebook(page)}")

    def studio_lab_url(self, page: str) -> str:
        return (f"{STUDIO_LAB_IMPORT}/{self.owner}/{self.name}/blob/"
                f"{NOTEBOOK_BRANCH}/{self.notebook(page)}")

    def pip_url(self) -> str:
        return f"git+{self.url}@{self.branch}"

    @classmethod
    def at(cls, url: str, branch: str = "main", book: str = "") -> Repository:
        """The GitHub repository at url, the book in its folder ``book`` ("" at its root)."""
        url = url.strip().rstrip("/").removesuffix(".git")
        if not url.startswith("https://github.com/"):
            raise ValueError(f"Colab and Studio Lab open GitHub files: {url}")
        owner, name = url.removeprefix("https://github.com/").split("/")[:2]
        book = book.strip("/")
        return cls(url, owner, name, branch, f"{book}/" if book else "")


def repository() -> Repository:
    repo = book_config()["repository"]
    return Repository.at(repo["url"], repo.get("branch") or "main", repo.get("path_to_book") or "")
