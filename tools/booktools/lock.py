"""One build at a time: the build folder's lock, taken by booktools.site and booktools.pdf."""
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
    """Hold folder/.lock (with the processes this one starts) or raise Locked("who: ...")."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ".lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = path.read_text(encoding="utf-8", errors="replace").strip() or "unnamed"
        os.close(fd)
        raise Locked(f"{who}: another build holds {shown(path)} ({holder}): wait for it to end, "
                     f"or end it; two builds at once would write the same files") from None
    try:
        os.ftruncate(fd, 0)
        started = datetime.datetime.now().isoformat(timespec="seconds")
        os.write(fd, f"pid {os.getpid()}, started {started}: {' '.join(sys.argv)}\n".encode())
        yield
    finally:
        os.close(fd)  # the lock goes with the last process that holds it
