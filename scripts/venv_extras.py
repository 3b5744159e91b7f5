"""The packages of this interpreter's environment that requirements.txt does not need.

    python scripts/venv_extras.py requirements.txt [--remove]

What requirements.txt needs is its packages (name==version, and the projects
of its -e lines, by their pyproject.toml's name) and, installed, everything
they require, their extras and environment markers as pip reads them. The
rest was left by an earlier requirements.txt (pip install never removes what
a file no longer names): printed one a line, or with --remove uninstalled
(scripts/setup.sh), so that .venv holds what a fresh one would. pip,
setuptools and wheel, the venv's own, stay.
"""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

try:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name
except ImportError:  # a venv without packaging: pip's own copy
    from pip._vendor.packaging.requirements import Requirement
    from pip._vendor.packaging.utils import canonicalize_name

__all__ = ["roots", "needed", "extras", "main"]

KEPT = {"pip", "setuptools", "wheel"}


def roots(requirements: Path) -> list[Requirement]:
    """requirements.txt's packages; an -e line as its project's name."""
    found = []
    for line in requirements.read_text(encoding="utf-8").splitlines():
        line = line.split(" #", 1)[0].strip()
        editable = re.match(r"-e\s+(\S+)$", line)
        if editable:
            pyproject = (requirements.parent / editable[1] / "pyproject.toml")
            found.append(Requirement(tomllib.loads(pyproject.read_text(
                encoding="utf-8"))["project"]["name"]))
        elif line and not line.startswith(("#", "-")):
            found.append(Requirement(line))
    return found


def needed(wanted: list[Requirement], requires: dict[str, list[str]]) -> set[str]:
    """The names (canonical) of wanted and of all they require, transitively, among the
    installed ``requires``: name -> its Requires-Dist lines."""
    seen: set[str] = set()
    extras_of: dict[str, set[str]] = {}
    todo = [(canonicalize_name(r.name), set(r.extras)) for r in wanted]
    while todo:
        name, extras = todo.pop()
        if name in seen and extras <= extras_of[name]:
            continue
        seen.add(name)
        extras_of[name] = extras_of.get(name, set()) | extras
        for line in requires.get(name, []):
            requirement = Requirement(line)
            marker = requirement.marker
            if marker is None or any(marker.evaluate({"extra": extra})
                                     for extra in extras_of[name] | {""}):
                todo.append((canonicalize_name(requirement.name), set(requirement.extras)))
    return seen


def installed() -> dict[str, list[str]]:
    """This environment's distributions: canonical name -> Requires-Dist lines.

    Read from the environment's site-packages only: once setuptools is imported,
    sys.path also holds setuptools/_vendor, whose bundled copies of autocommand,
    jaraco.* and others are no installed packages."""
    import sysconfig
    places = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    return {canonicalize_name(d.metadata["Name"]): list(d.requires or [])
            for d in metadata.distributions(path=places)}


def extras(requirements: Path, found: dict[str, list[str]] | None = None) -> list[str]:
    """The installed packages requirements.txt does not need, sorted."""
    found = installed() if found is None else found
    return sorted(set(found) - needed(roots(requirements), found) - KEPT)


def main(argv: list[str]) -> int:
    left = extras(Path(argv[0]))
    if "--remove" not in argv[1:]:
        print("\n".join(left))
        return 0
    if left:
        print(f"setup: removing what requirements.txt no longer needs: {' '.join(left)}")
        return subprocess.run([sys.executable, "-m", "pip", "uninstall", "-y", "-q",
                               "--disable-pip-version-check", *left]).returncode
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
