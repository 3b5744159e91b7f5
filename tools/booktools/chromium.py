"""Debian's Chromium, offline: how the PDF step (booktools.pdf) and the browser tests start it.

``BOOK_CHROMIUM`` names another executable (default ``/usr/bin/chromium``,
Debian's package ``chromium``; Playwright's downloaded builds do not run on
the book's machines). ``version`` is what it says with ``--version``, asked
once per process: None where it is missing or says no Chromium version, and
then no PDF is printed and no page links one (it is an input of the site
build, booktools.site). ``refusing_proxy`` keeps it offline: every host but
127.0.0.1 goes to a port of this process that is bound and never listens, so
Chromium's own network stack refuses the request at once.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

__all__ = ["VARIABLE", "ARGS", "PACKAGE", "executable", "available", "version",
           "refusing_proxy", "launch_options"]

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


VERSION = re.compile(r"\bChrom(?:e|ium)\b[^\n]*?\d+\.\d+[.\d]*")
VERSION_TIMEOUT = 60  # seconds; Debian's wrapper answers in well under one


def version() -> str | None:
    """What that Chromium says of its version ("Chromium 156.0.8078.73"), or None:
    missing, not executable, or not saying a Chromium version (asked once per process)."""
    path = available()
    return None if path is None else _version(str(path), path.stat().st_mtime_ns)


@functools.lru_cache(maxsize=None)
def _version(path: str, mtime_ns: int) -> str | None:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, encoding="utf-8",
                              errors="replace", timeout=VERSION_TIMEOUT, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    found = VERSION.search(done.stdout) if done.returncode == 0 else None
    return found.group(0) if found else None


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
