"""Reading the book's text files: UTF-8 whatever the locale, and one line naming the file otherwise."""
from __future__ import annotations

import re
from pathlib import Path

__all__ = ["shown", "read_text", "yaml_problem", "ANSI_ESCAPE"]

# Terminal colours and underlines, in a build's log or a recorded output
# (nvidia-smi underlines its headers): what a page or a message drops.
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

ROOT = Path(__file__).resolve().parents[2]  # tools/booktools/files.py in a checkout


def shown(path: Path) -> str:
    """A path as messages show it: from the book's root where it is inside."""
    path = Path(path)
    return str(path.relative_to(ROOT) if path.is_absolute() and path.is_relative_to(ROOT)
               else path)


def read_text(path: Path) -> str:
    """The file's text as UTF-8, or ValueError saying file:line, the byte, and the fix."""
    data = Path(path).read_bytes()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[:error.start].count(b"\n") + 1
        raise ValueError(f"{shown(path)}:{line}: not UTF-8 (byte 0x{data[error.start]:02x}): "
                         "save the file as UTF-8") from None


def yaml_problem(path: Path, error: Exception) -> ValueError:
    """PyYAML's error as one line, file:line first (its own names "<unicode string>")."""
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f"{shown(path)}:{mark.line + 1}" if mark is not None else shown(path)
    what = " ".join(str(part) for part in (getattr(error, "context", None),
                                            getattr(error, "problem", None)) if part)
    return ValueError(f"{where}: not YAML ({what or str(error).splitlines()[0]})")
