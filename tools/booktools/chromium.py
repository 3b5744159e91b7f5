"""Debian's Chromium, offline, for booktools.pdf and the browser tests ($BOOK_CHROMIUM: another).

Playwright's own builds do not run on the book's machines. Without one, no PDF is printed.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import socket
import subprocess
from pathlib import Path

__all__ = ["VARIABLE", "PACKAGE", "executable", "version", "launch_options"]

VARIABLE = "BOOK_CHROMIUM"
PACKAGE = "chromium"  # Debian's package of /usr/bin/chromium
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
VERSION = re.compile(r"\bChrom(?:e|ium)\b[^\n]*?\d+\.\d+[.\d]*")


def executable() -> Path:
    """The Chromium to start: $BOOK_CHROMIUM, else /usr/bin/chromium (it may be missing)."""
    return Path(os.environ.get(VARIABLE) or "/usr/bin/chromium")


def version() -> str | None:
    """What that Chromium says of its version ("Chromium 156.0.8078.73"), or None."""
    path = executable()
    ok = path.is_file() and os.access(path, os.X_OK)
    return _version(str(path), path.stat().st_mtime_ns) if ok else None


@functools.lru_cache(maxsize=None)  # asked once per process
def _version(path: str, mtime_ns: int) -> str | None:
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, encoding="utf-8",
                              errors="replace", timeout=60, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    found = VERSION.search(done.stdout) if done.returncode == 0 else None
    return found.group(0) if found else None


@contextlib.contextmanager
def launch_options():
    """Playwright's chromium.launch arguments: headless, and offline: every host but 127.0.0.1
    goes to a proxy port that is bound and never listens, so Chromium refuses it at once."""
    with socket.socket() as refusing:
        refusing.bind(("127.0.0.1", 0))
        # <-loopback>: localhost and ::1 go to the proxy too; only 127.0.0.1 does not.
        yield {"executable_path": str(executable()), "args": ARGS, "headless": True,
               "proxy": {"server": f"http://127.0.0.1:{refusing.getsockname()[1]}",
                         "bypass": "<-loopback>,127.0.0.1"}}
