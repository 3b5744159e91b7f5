"""scripts/setup.sh: a .venv that holds what requirements.txt installs, made afresh when
it changed, and that imports this checkout's d2lgpu and booktools (a .venv copied from
another checkout built that checkout's site). Here the venv's Python is a fake whose pip
records what it is asked to install (the real one would take minutes and PyPI)."""
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FAKE_PYTHON = f"""#!/usr/bin/env bash
# pip: record what is installed from where; -e . makes the packages of the
# folder pip runs in the ones imported (unless the venv is "stuck").
venv="$(cd "$(dirname "$0")/.." && pwd)"
if [ "$1" = -m ] && [ "$2" = pip ]; then
  echo "$PWD: ${{*:3}}" >> "$venv/pip.log"
  case " $* " in *" -e . "*) [ -f "$venv/stuck" ] || pwd > "$venv/editable";; esac
  exit 0
fi
root="$(cat "$venv/editable")"
PYTHONPATH="$root:$root/tools" exec {sys.executable} -S "$@"
"""


def checkout(path: Path) -> Path:
    """A checkout with setup.sh, what its stamp hashes, and the two packages."""
    for name in ("scripts/setup.sh", "requirements.txt", "pyproject.toml",
                 "tools/pyproject.toml"):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, path / name)
    for package in ("d2lgpu", "tools/booktools"):
        (path / package).mkdir(parents=True)
        (path / package / "__init__.py").write_text("")
    return path


def stamp(book: Path) -> str:
    """What setup.sh writes once it installed requirements.txt into the venv."""
    return hashlib.sha256(b"".join((book / name).read_bytes() for name in (
        "requirements.txt", "pyproject.toml", "tools/pyproject.toml"))).hexdigest()


def venv_of(other: Path, into: Path) -> Path:
    """A set-up .venv in `into` that, as if copied from `other`, imports other's packages."""
    venv = into / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(FAKE_PYTHON)
    (venv / "bin" / "python").chmod(0o755)
    (venv / "editable").write_text(f"{other}\n")
    (venv / ".requirements.sha256").write_text(stamp(into) + "\n")
    return venv


def setup(book: Path):
    return subprocess.run(["bash", "scripts/setup.sh"], cwd=book, capture_output=True,
                          text=True, timeout=60)


def test_a_venv_of_another_checkout_is_pointed_at_this_one(tmp_path):
    other, book = checkout(tmp_path / "other"), checkout(tmp_path / "book")
    venv = venv_of(other, book)
    proc = setup(book)
    assert proc.returncode == 0, proc.stderr
    assert f"imports d2lgpu/booktools from elsewhere; installing this checkout's ({book})" \
        in proc.stdout
    assert (venv / "editable").read_text().strip() == str(book)
    installs = (venv / "pip.log").read_text().splitlines()
    assert installs[-1].startswith(f"{book}: install") and installs[-1].endswith("-e . -e ./tools")
    again = setup(book)
    assert again.returncode == 0 and again.stdout == ""
    assert (venv / "pip.log").read_text().splitlines() == installs


def test_setup_stops_saying_why_when_the_venv_keeps_another_checkout(tmp_path):
    other, book = checkout(tmp_path / "other"), checkout(tmp_path / "book")
    venv = venv_of(other, book)
    (venv / "stuck").write_text("")
    proc = setup(book)
    assert proc.returncode == 1
    assert f"still imports another checkout's packages:\nd2lgpu {other}/d2lgpu" in proc.stderr
    assert f"remove {venv} and run bash scripts/setup.sh again" in proc.stderr


def test_setup_refuses_a_python_the_pins_do_not_install_on(tmp_path):
    # requirements.txt pins releases that need 3.11; on 3.10, pip failed halfway.
    book = checkout(tmp_path / "book")
    old = tmp_path / "python3.10"
    old.write_text(f"#!/usr/bin/env bash\n[ \"$1\" = -c ] && echo 3.10 && exit 0\n"
                   f"echo created >> {tmp_path / 'used'}\n")
    old.chmod(0o755)
    proc = subprocess.run(["bash", "scripts/setup.sh"], cwd=book, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHON": str(old)})
    assert proc.returncode == 1
    assert proc.stderr == (f"setup: the book's build and tests need Python 3.11 to 3.13, on "
                           f"which requirements.txt's pins have been run (STACKS.md), and {old} "
                           f"is Python 3.10: name one with PYTHON=/path/to/python3.13\n")
    assert not (book / ".venv").exists() and not (tmp_path / "used").exists()


@pytest.fixture
def torch_index(tmp_path):
    """A reachable index on loopback with a torch/ page, as PyTorch's CPU index has."""
    (tmp_path / "index" / "torch").mkdir(parents=True)
    server = subprocess.Popen([sys.executable, "-m", "http.server", "0", "--bind", "127.0.0.1",
                               "--directory", str(tmp_path / "index")],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        port = re.search(r"port (\d+)", server.stdout.readline()).group(1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.kill()
        server.wait()


def python_making_fake_venvs(tmp_path: Path, book: Path) -> Path:
    """A Python 3.11 whose `-m venv DIR` makes DIR a venv of the fake Python above."""
    (tmp_path / "venv-python").write_text(FAKE_PYTHON)
    python = tmp_path / "python3.11"
    python.write_text(f"""#!/usr/bin/env bash
case "$1" in -c) echo 3.11;; --version) echo Python 3.11;; -m)
  mkdir -p "$3/bin" && cp {tmp_path / "venv-python"} "$3/bin/python" && chmod +x "$3/bin/python"
  echo {book} > "$3/editable";; esac
""")
    python.chmod(0o755)
    return python


def _setup_calls(tmp_path, book, index):
    proc = subprocess.run(["bash", "scripts/setup.sh"], cwd=book, capture_output=True, text=True,
                          timeout=60, env={**os.environ, "BOOK_TORCH_INDEX": index,
                                           "PYTHON": str(python_making_fake_venvs(tmp_path, book))})
    assert proc.returncode == 0, proc.stderr
    log = book / ".venv" / "pip.log"
    return proc, [line.split(": ", 1)[1] for line in log.read_text().splitlines()]


PIN = next(line for line in (ROOT / "requirements.txt").read_text().splitlines()
           if line.startswith("torch=="))


def test_setup_installs_the_cpu_torch_first(tmp_path, torch_index):
    """The stacks run: on Python 3.13 setup.sh installed PyPI's torch, the 5.3 GB CUDA build."""
    book = checkout(tmp_path / "book")
    _, calls = _setup_calls(tmp_path, book, torch_index)
    assert calls == [
        f"install --disable-pip-version-check {PIN} --extra-index-url {torch_index}",
        "install --disable-pip-version-check -r requirements.txt"]
    assert (book / ".venv" / ".requirements.sha256").read_text().strip() == stamp(book)


def test_setup_says_so_and_goes_on_when_the_cpu_index_cannot_be_reached(tmp_path):
    """A machine that reaches only PyPI: one probe, one line, no five retries a package."""
    book = checkout(tmp_path / "book")
    proc, calls = _setup_calls(tmp_path, book, "http://127.0.0.1:9")  # the discard port: refused
    assert "setup: http://127.0.0.1:9 cannot be reached; torch comes from pip's own " \
        "indexes" in proc.stderr
    assert calls == [f"install --disable-pip-version-check {PIN}",
                     "install --disable-pip-version-check -r requirements.txt"]


def test_a_changed_requirements_txt_makes_the_venv_afresh(tmp_path, torch_index):
    """The fault run's S5: a package dropped from requirements.txt stayed in .venv."""
    book = checkout(tmp_path / "book")
    _setup_calls(tmp_path, book, torch_index)
    left = book / ".venv" / "lib" / "pytest_timeout.py"  # what the old file installed
    left.parent.mkdir()
    left.write_text("")
    again = subprocess.run(["bash", "scripts/setup.sh"], cwd=book, capture_output=True,
                           text=True, timeout=60)
    assert again.returncode == 0 and again.stdout == "" and left.exists()  # nothing changed
    (book / "requirements.txt").write_text("".join(
        line + "\n" for line in (ROOT / "requirements.txt").read_text().splitlines()
        if not line.startswith("pytest-timeout==")))
    proc, calls = _setup_calls(tmp_path, book, torch_index)
    assert "changed: making " in proc.stdout and not left.exists()
    assert calls[1:] == ["install --disable-pip-version-check -r requirements.txt"]


def _floor(requirement: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.search(r">=\s*([\d.]+)", requirement)[1].split("."))


def test_the_python_and_pytorch_claims_agree():
    """The stacks run: CONTRIBUTING said 3.10 to 3.13, setup.sh refused 3.10;
    pyproject said torch>=2.4, whose performance chapter prints another log."""
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    deps = {re.match(r"[\w-]+", d)[0]: d for d in project["dependencies"]}
    setup_sh = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    accepted = re.search(r"^\s*(3\.\d+(?:\|3\.\d+)*)\) ;;", setup_sh, re.M)[1].split("|")
    book = f"Python {accepted[0]} to {accepted[-1]}"
    python, torch = ".".join(map(str, _floor(project["requires-python"]))), \
        ".".join(map(str, _floor(deps["torch"])))
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    contributing = " ".join((ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8").split())
    stacks = " ".join((ROOT / "STACKS.md").read_text(encoding="utf-8").split())
    assert f"You need {book}" in readme
    assert f"installs on {python} and later, with PyTorch {torch} or later" in readme
    assert f"you need {book}" in contributing
    assert f"need {book}" in stacks
    assert f"installs on Python {python} and later beside PyTorch {torch} or later" in stacks
    # The floor ran: a row of STACKS.md on that PyTorch whose unit tests and nbval passed.
    assert re.search(rf"\| {re.escape(torch)}\.\d+ \| unit tests, nbval \| \d+ and \d+ passed",
                     stacks)
    assert "<" not in project["requires-python"]  # 3.14 allowed where torch ships it


def test_matplotlibs_floor_imports_beside_the_numpy_pip_gives_it():
    # matplotlib 3.7.0 takes NumPy 2 and fails to import; 3.8.4 is the first that works
    # with it (STACKS.md, 2026-11-28).
    import tomllib
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    [matplotlib] = [d for d in project["dependencies"] if d.startswith("matplotlib")]
    assert _floor(matplotlib) >= (3, 8, 4)


def test_setup_refuses_python_3_14_saying_why(tmp_path):
    book = checkout(tmp_path / "book")
    new = tmp_path / "python3.14"
    new.write_text("#!/usr/bin/env bash\n[ \"$1\" = -c ] && echo 3.14 && exit 0\nexit 3\n")
    new.chmod(0o755)
    proc = subprocess.run(["bash", "scripts/setup.sh"], cwd=book, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHON": str(new)})
    assert proc.returncode == 1
    assert "Python 3.11 to 3.13, on which requirements.txt's pins have been run (STACKS.md), " \
        f"and {new} is Python 3.14: " in proc.stderr
