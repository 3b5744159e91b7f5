"""The tooling reads and writes every text file as UTF-8, whatever the locale.

Under a Latin-1 locale (the fault run of 2026-11-28: `localedef -i en_US -f
ISO-8859-1`), a read without an encoding decoded the book's UTF-8 files as
Latin-1: `repo set` garbled 101 files and reported success, and `words`
counted other words. Every call that opens text names its encoding (read
from the sources), and the commands say the same under both locales."""
from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*(ROOT / "tools" / "booktools").rglob("*.py"), *(ROOT / "scripts").glob("*.py")])


def _call_name(node: ast.Call) -> str | None:
    func = node.func
    return func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)


def unencoded(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, call) of each text open, read, write or subprocess without an encoding."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or "encoding" in {k.arg for k in node.keywords}:
            continue
        name, func = _call_name(node), node.func
        if name == "read_text":  # Path.read_text(); files.read_text(path) is UTF-8
            bad = isinstance(func, ast.Attribute) and not node.args and not (
                isinstance(func.value, ast.Name) and func.value.id == "files")
        elif name == "write_text":
            bad = isinstance(func, ast.Attribute) and len(node.args) < 2
        elif name == "open" and not (isinstance(func, ast.Attribute)  # a descriptor, a PDF
                                     and getattr(func.value, "id", None) in ("os", "pikepdf")):
            mode = node.args[1] if len(node.args) > 1 else next(
                (k.value for k in node.keywords if k.arg == "mode"), None)
            bad = not (isinstance(mode, ast.Constant) and "b" in str(mode.value))
        else:  # subprocess.run(..., text=True): decoded in the locale's encoding
            bad = any(k.arg in ("text", "universal_newlines") and isinstance(k.value, ast.Constant)
                      and k.value.value for k in node.keywords)
        if bad:
            found.append((node.lineno, name))
    return found


def test_every_text_file_is_opened_as_utf8():
    found = [f"{path.relative_to(ROOT)}:{line}: {name}" for path in SOURCES
             for line, name in unencoded(ast.parse(path.read_text(encoding="utf-8")))]
    assert found == [], "name encoding=\"utf-8\":\n" + "\n".join(found)


def test_the_check_finds_what_it_looks_for():
    code = ("p.read_text()\np.write_text(s)\nopen(f)\nopen(f, 'w')\nsubprocess.run(a, text=True)\n"
            "p.read_text(encoding='utf-8')\nfiles.read_text(p)\nopen(f, 'rb')\nos.open(f, 1)\n"
            "p.write_text(s, 'utf-8')\nsubprocess.run(a, text=True, encoding='utf-8')\n"
            "pikepdf.open(p)\n")
    assert [line for line, _ in unencoded(ast.parse(code))] == [1, 2, 3, 4, 5]


@pytest.fixture(scope="module")
def latin1(tmp_path_factory):
    """The environment of a Latin-1 locale, made with localedef into a temporary LOCPATH."""
    if not shutil.which("localedef"):
        pytest.skip("no localedef to make a Latin-1 locale")
    locales = tmp_path_factory.mktemp("locales")
    made = subprocess.run(["localedef", "-i", "en_US", "-f", "ISO-8859-1",
                           str(locales / "en_US.ISO-8859-1")], capture_output=True)
    env = {**os.environ, "LOCPATH": str(locales), "LC_ALL": "en_US.ISO-8859-1"}
    env.pop("PYTHONUTF8", None)
    env.pop("PYTHONIOENCODING", None)
    probe = subprocess.run([sys.executable, "-c", "import locale; print("
                            "locale.getpreferredencoding(False))"], env=env,
                           capture_output=True, text=True)
    if made.returncode not in (0, 1) or probe.stdout.strip() != "ISO-8859-1":
        pytest.skip(f"no Latin-1 locale here ({probe.stdout.strip()})")
    return env


@pytest.mark.parametrize("command", [["words"], ["runs", "stale", "nvidia-h100"],
                                     ["i18n", "check"], ["gpu_figures"]],
                         ids=lambda c: " ".join(c))
def test_commands_say_the_same_under_a_latin1_locale(latin1, command):
    utf8 = {**latin1, "LC_ALL": "C.UTF-8"}
    said = [subprocess.run([sys.executable, "-m", f"booktools.{command[0]}", *command[1:]],
                           cwd=ROOT, env=env, capture_output=True, timeout=600)
            for env in (utf8, latin1)]
    # What the book's state makes them say (a lagging translation, say) is not the point:
    # the same, and no traceback.
    assert b"Traceback" not in said[0].stderr, said[0].stderr.decode("utf-8", "replace")
    # A Latin-1 terminal cannot show CJK: what it cannot show comes as \\uXXXX escapes.
    shown = re.sub(r"\\(?:u([0-9a-f]{4})|U([0-9a-f]{8})|x([0-9a-f]{2}))",
                   lambda m: chr(int(next(g for g in m.groups() if g), 16)),
                   said[1].stdout.decode("latin-1"))
    assert (said[1].returncode, shown) == (said[0].returncode, said[0].stdout.decode("utf-8")), \
        said[1].stderr.decode("latin-1")
