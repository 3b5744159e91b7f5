"""The scripts the record workflow calls, as far as they go without GitHub or a GPU:
scripts/record-setup.sh, scripts/record-needed.sh and scripts/record-pr.sh."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent
PYTHON = sys.executable


def run(args, cwd, env=None, check=True):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


FAKE_TORCH = """
__version__ = {version!r}
class version:
    cuda = {cuda!r}
class cuda:
    is_available = staticmethod(lambda: False)
"""


@pytest.mark.parametrize("version, cuda, says", [
    ("2.13.0+cpu", None, "torch 2.13.0+cpu at {python} is not a CUDA build"),
    ("2.13.0", "12.8", "torch 2.13.0 (CUDA 12.8) sees no GPU here"),
    (None, None, "{python} has no torch; install a CUDA build of PyTorch first"),
])
def test_record_setup_refuses_a_python_that_cannot_record(tmp_path, version, cuda, says):
    # A fake torch with the attributes the script reads (or none): nothing is installed.
    if version:
        (tmp_path / "torch").mkdir()
        (tmp_path / "torch" / "__init__.py").write_text(FAKE_TORCH.format(version=version,
                                                                           cuda=cuda))
    python = tmp_path / "python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={tmp_path} exec {PYTHON} -S \"$@\"\n")
    python.chmod(0o755)
    proc = run(["bash", "scripts/record-setup.sh"], ROOT, {"PYTHON": str(python)}, check=False)
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "record-setup: " + says.format(python=PYTHON)
    assert proc.stdout == ""


@pytest.fixture
def book(tmp_path) -> Path:
    """A book with one chapter, its tooling and runs/current/ recorded from that very chapter."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "record-needed.sh", tmp_path / "scripts")
    shutil.copytree(ROOT / "tools" / "booktools", tmp_path / "tools" / "booktools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (tmp_path / "tests").mkdir()
    shutil.copy(ROOT / "tests" / "sanitize.cfg", tmp_path / "tests")
    shutil.copy(ROOT / "_config.yml", tmp_path)
    (tmp_path / "chapters").mkdir()
    shutil.copy(ROOT / "chapters" / "devices.ipynb", tmp_path / "chapters")
    current = tmp_path / "runs" / "current"
    current.mkdir(parents=True)
    shutil.copy(ROOT / "chapters" / "devices.ipynb", current)
    meta = json.loads((ROOT / "runs" / "nvidia-h100" / "run.json").read_text())
    (current / "run.json").write_text(json.dumps({**meta, "commit": ""}))
    return tmp_path


def needed(book: Path, *args) -> tuple[str, str]:
    """record-needed.sh's output and what it wrote to $GITHUB_OUTPUT."""
    output = book / "github-output"
    output.write_text("")
    proc = run(["bash", "scripts/record-needed.sh", *args], book,
               {"PYTHON": PYTHON, "GITHUB_OUTPUT": str(output)})
    return proc.stdout, output.read_text()


def test_record_needed_only_when_a_hardware_cell_lacks_a_current_recording(book):
    out, github = needed(book, "current", "push")
    assert github == "record=false\n"
    assert "every hardware cell has a current recording in runs/current/" in out
    # Edit one hardware cell of the chapter: its recording is now of an earlier version.
    path = book / "chapters" / "devices.ipynb"
    nb = nbformat.read(path, as_version=4)
    cell = next(c for c in nb.cells if "hardware" in c.metadata.get("tags", []))
    cell.source += "\nprint('edited')"
    nbformat.write(nb, path)
    out, github = needed(book, "current", "push")
    assert github == "record=true\n"
    assert f"  devices: {cell.metadata['name']} (recorded from an earlier version)\n" in out
    assert out.count("(recorded from an earlier version)") == 1


def test_record_needed_for_a_new_machine_and_when_asked_by_hand(book):
    out, github = needed(book, "new-machine", "push")
    assert github == "record=true\n" and "devices: choose-device (not recorded)" in out
    out, github = needed(book, "current", "workflow_dispatch")
    assert github == "record=true\n" and "asked by hand" in out
    proc = run(["bash", "scripts/record-needed.sh", "../up"], book, {"PYTHON": PYTHON}, check=False)
    assert proc.returncode != 0 and "machine name '../up'" in proc.stderr


FAKE_GH = """#!/usr/bin/env bash
# gh as record-pr.sh uses it: logs its arguments; `pr list` prints $FAKE_GH_OPEN_PR.
args="$*"
echo "${args//$'\n'/\\n}" >> "$FAKE_GH_LOG"
case "$1 $2" in
  "pr list") echo "${FAKE_GH_OPEN_PR:-}" ;;
  "pr create") echo "https://github.com/example/book/pull/1" ;;
  *) echo "fake gh: unexpected: $*" >&2; exit 1 ;;
esac
"""


@pytest.fixture
def clone(tmp_path) -> tuple[Path, dict]:
    """A clone of a small repository (origin: a bare one), with gh faked on PATH."""
    env = {"GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1",
           "FAKE_GH_LOG": str(tmp_path / "gh.log")}
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    env["PATH"] = f"{bin_dir}:{os.environ['PATH']}"
    run(["git", "init", "-q", "--bare", "-b", "main", "origin.git"], tmp_path, env)
    run(["git", "clone", "-q", "origin.git", "work"], tmp_path, env)
    work = tmp_path / "work"
    (work / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "record-pr.sh", work / "scripts")
    (work / "runs").mkdir()
    (work / "runs" / "README").write_text("recorded runs\n")
    identity = ["-c", "user.name=Maintainer", "-c", "user.email=m@example.com"]
    run(["git", "add", "."], work, env)
    run(["git", *identity, "commit", "-q", "-m", "start"], work, env)
    run(["git", "push", "-q", "origin", "main"], work, env)
    return work, env


def record_into(work: Path, label: str, commit: str) -> None:
    folder = work / "runs" / "gpu-box"
    folder.mkdir(exist_ok=True)
    (folder / "run.json").write_text(json.dumps({"label": label, "commit": commit}))
    (folder / "devices.ipynb").write_text(f"{{\"recorded\": \"{commit}\"}}\n")


def test_record_pr_commits_the_run_alone_and_opens_a_pull_request(clone):
    work, env = clone
    record_into(work, "NVIDIA T4", "abc1234")
    (work / "stray.txt").write_text("not part of the run\n")
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env)
    assert proc.stdout.strip() == "https://github.com/example/book/pull/1"
    log = Path(env["FAKE_GH_LOG"]).read_text().splitlines()
    assert log[0] == "pr list --head record/gpu-box --state open --json url --jq .[0].url // \"\""
    assert log[1].startswith("pr create --base main --head record/gpu-box --title Recorded run: "
                             "runs/gpu-box/ (NVIDIA T4, commit abc1234) --body ")
    git = lambda *args: run(["git", *args], work, env).stdout.strip()  # noqa: E731
    assert git("branch", "--show-current") == "main"
    pushed = "origin/record/gpu-box"
    git("fetch", "-q", "origin")
    assert git("log", "--format=%s|%an", f"main..{pushed}") == \
        "Record runs/gpu-box/ on NVIDIA T4 at abc1234|github-actions[bot]"
    assert git("diff", "--name-only", "main", pushed).splitlines() == [
        "runs/gpu-box/devices.ipynb", "runs/gpu-box/run.json"]
    assert (work / "stray.txt").is_file() and "stray.txt" in git("status", "--porcelain")

    # A second recording while that pull request is open: the branch moves, no new PR.
    record_into(work, "NVIDIA T4", "def5678")
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work,
               {**env, "FAKE_GH_OPEN_PR": "https://github.com/example/book/pull/1"})
    assert proc.stdout.strip() == "record-pr: updated https://github.com/example/book/pull/1"
    assert [line.split()[1] for line in Path(env["FAKE_GH_LOG"]).read_text().splitlines()] == \
        ["list", "create", "list"]
    git("fetch", "-q", "origin")
    assert git("log", "--format=%s", f"main..{pushed}") == \
        "Record runs/gpu-box/ on NVIDIA T4 at def5678"


def test_record_pr_does_nothing_for_an_unchanged_run_and_refuses_a_detached_head(clone):
    work, env = clone
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env, check=False)
    assert proc.returncode == 2 and "no recorded run runs/gpu-box/run.json" in proc.stderr
    record_into(work, "NVIDIA T4", "abc1234")
    identity = ["-c", "user.name=Maintainer", "-c", "user.email=m@example.com"]
    run(["git", "add", "runs"], work, env)
    run(["git", *identity, "commit", "-q", "-m", "runs"], work, env)
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env)
    assert proc.stdout.strip() == "record-pr: runs/gpu-box/ is as main has it: no pull request"
    run(["git", "checkout", "-q", "--detach"], work, env)
    proc = run(["bash", "scripts/record-pr.sh", "gpu-box"], work, env, check=False)
    assert proc.returncode == 2 and "HEAD is detached" in proc.stderr
    assert not Path(env["FAKE_GH_LOG"]).exists()
