"""One build at a time: the build folder's lock, held by the site build and the PDF step.

booktools.site and booktools.pdf both take it; it sits below both, so that
neither imports the other for it.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import os
import sys
from pathlib import Path

from booktools.book import ROOT

__all__ = ["Locked", "locked"]


class Locked(RuntimeError):
    """Another build holds the build folder's lock."""


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


@contextlib.contextmanager
def locked(folder: Path, who: str = "site"):
    """Hold folder/.lock for this process (and the builds it forks) or raise Locked,
    whose message begins with ``who:``."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = (path.read_text(encoding="utf-8", errors="replace").strip()
                  or "a build that has not said who it is")
        os.close(fd)
        raise Locked(f"{who}: another build holds {_shown(path)} ({holder}): wait for it to end, "
                     f"or end it; two builds at once would write the same files") from None
    try:
        os.ftruncate(fd, 0)
        started = _dt.datetime.now().isoformat(timespec="seconds")
        os.write(fd, f"pid {os.getpid()}, started {started}: {' '.join(sys.argv)}\n".encode())
        yield
    finally:
        os.close(fd)  # the lock goes with the last process that holds it
