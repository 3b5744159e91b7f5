"""Fixtures for the checks of the built website (helpers in booktools.book)."""
from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

from booktools.book import Repository, book_config, repository


@pytest.fixture(scope="session")
def repo() -> Repository:
    return repository()


@pytest.fixture(scope="session")
def colab_base() -> str:
    return book_config()["launch_buttons"]["colab_url"]


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass


@pytest.fixture(scope="module")
def site_url(built_site: Path):
    """The built site served on 127.0.0.1 (a free port), for the module's tests."""
    handler = functools.partial(_QuietHandler, directory=str(built_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
