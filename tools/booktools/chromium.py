"""Debian's Chromium, offline: how the PDF step (booktools.pdf) and the browser tests start it.

``BOOK_CHROMIUM`` names another executable (default ``/usr/bin/chromium``,
Debian's package ``chromium``; Playwright's downloaded builds do not run on
the book's machines). ``refusing_proxy`` keeps it offline: every host but
127.0.0.1 goes to a port of this process that is bound and never listens, so
Chromium's own network stack refuses the request at once.
"""
from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from pathlib import Path

__all__ = ["VARIABLE", "ARGS", "PACKAGE", "executable", "available", "refusing_proxy",
           "launch_options"]

VARIABLE = "BOOK_CHROMIUM"
DEFAULT = Path("/usr/bin/chromium")
PACKAGE = "chromium"  # Debian's package of it (apt-get install chromium)
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]


def executable() -> Path:
    """The Chromium to start: $BOOK_CHROMIUM, else /usr/bin/chromium (it may be missing)."""
    return Path(os.environ.get(VARIABLE) or DEFAULT)


def available() -> Path | None:
    """That Chromium if it is an executable file, else None."""
    path = executable()
    return path if path.is_file() and os.access(path, os.X_OK) else None


@contextlib.contextmanager
def refusing_proxy() -> Iterator[dict]:
    """A Playwright proxy setting that refuses every host but 127.0.0.1 itself."""
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))
        # <-loopback>: localhost and ::1 go to the proxy too; only 127.0.0.1 does not.
        yield {"server": f"http://127.0.0.1:{refusing.getsockname()[1]}",
               "bypass": "<-loopback>,127.0.0.1"}


def launch_options(proxy: dict) -> dict:
    """Keyword arguments of Playwright's chromium.launch for a headless, offline Chromium."""
    return {"executable_path": str(executable()), "args": ARGS, "headless": True,
            "proxy": proxy}
