"""One build at a time: the build folder's lock (fcntl.flock), taken by booktools.site and booktools.pdf."""
from __future__ import annotations

import contextlib
import datetime
import fcntl
import os
import sys
from pathlib import Path

from booktools.files import shown

__all__ = ["Locked", "locked"]


class Locked(RuntimeError):
    """Another build holds the build folder's lock."""


@contextlib.contextmanager
def locked(folder: Path, who: str = "site"):
    """Hold folder/.lock or raise Locked("who: ..."); the file names the holder."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / ".lock", "a+", encoding="utf-8", errors="replace") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            raise Locked(f"{who}: another build holds {shown(folder / '.lock')} "
                         f"({lock.read().strip() or 'unnamed'}): wait for it to end, or end it; "
                         "two builds at once would write the same files") from None
        started = datetime.datetime.now().isoformat(timespec="seconds")
        lock.truncate(0)
        lock.write(f"pid {os.getpid()}, started {started}: {' '.join(sys.argv)}\n")
        lock.flush()
        yield
