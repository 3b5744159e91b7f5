"""scripts/setup.sh makes the venv import this checkout's d2lgpu and booktools:
a .venv copied from another checkout (or shared with a second worktree) built
that checkout's site. Here the venv's Python is a fake whose pip records the
editable installs it is asked for (the real one would take a minute and PyPI)."""
import shutil
import subprocess
import sys
from pathlib import Path

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
    for name in ("scripts/setup.sh", "requirements.txt", "pyproject.toml", "tools/pyproject.toml"):
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, path / name)
    for package in ("d2lgpu", "tools/booktools"):
        (path / package).mkdir(parents=True)
        (path / package / "__init__.py").write_text("")
    return path


def venv_of(other: Path, into: Path) -> Path:
    """A .venv in `into` that, as if copied from `other`, imports other's packages."""
    venv = into / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").write_text(FAKE_PYTHON)
    (venv / "bin" / "python").chmod(0o755)
    (venv / "editable").write_text(f"{other}\n")
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


def test_booktools_refuses_to_build_from_another_checkout(tmp_path):
    # Run from another book's root, this booktools would build its own book.
    (tmp_path / "_config.yml").write_text((ROOT / "_config.yml").read_text())
    proc = subprocess.run([sys.executable, "-m", "booktools.site"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2
    assert proc.stderr == (f"site: this booktools is {ROOT}'s, not {tmp_path.resolve()}'s, and "
                           f"would build that book; bash scripts/setup.sh in "
                           f"{tmp_path.resolve()} installs its own\n")
    assert list(tmp_path.iterdir()) == [tmp_path / "_config.yml"]


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
    assert proc.stderr == (f"setup: the book's build and tests need Python 3.11 to 3.13, and "
                           f"{old} is Python 3.10: name one with PYTHON=/path/to/python3.11\n")
    assert not (book / ".venv").exists() and not (tmp_path / "used").exists()
