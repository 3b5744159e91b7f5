"""Fixtures for the checks of the built website (helpers in booktools.book)."""
from __future__ import annotations

from pathlib import Path

import pytest

from booktools.book import Repository, book_config, repository
from booktools.pdf import serve


@pytest.fixture(scope="session")
def repo() -> Repository:
    return repository()


@pytest.fixture(scope="session")
def colab_base() -> str:
    return book_config()["launch_buttons"]["colab_url"]


@pytest.fixture(scope="module")
def site_url(built_site: Path):
    """The built site served on 127.0.0.1 (a free port), for the module's tests."""
    with serve(built_site) as url:
        yield url
