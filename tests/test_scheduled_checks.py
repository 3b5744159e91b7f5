"""The scripts of the weekly workflows, without GitHub: scripts/colab-run.sh runs each
chapter as a Colab reader does, and scripts/report-failure.sh opens or updates the
issue about a failed check (gh faked)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(args, cwd, env=None, check=True):
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"{args} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc


def notebook(path: Path, cells: list[tuple[str, list[str], str | None]]) -> None:
    nb = nbformat.v4.new_notebook()
    for source, tags, name in cells:
        cell = nbformat.v4.new_code_cell(source)
        cell.metadata["tags"] = tags
        if name:
            cell.metadata["name"] = name
        nb.cells.append(cell)
    nbformat.write(nb, path)


def test_colab_run_executes_each_chapter_alone_and_names_the_cells_that_raised(tmp_path):
    book = tmp_path / "book"
    (book / "scripts").mkdir(parents=True)
    shutil.copy(ROOT / "scripts" / "colab-run.sh", book / "scripts")
    shutil.copytree(ROOT / "tools" / "booktools", book / "tools" / "booktools",
                    ignore=shutil.ignore_patterns("__pycache__"))
    chapters = book / "chapters"
    chapters.mkdir()
    (chapters / "helper.py").write_text("x = 1\n")  # a reader's Colab has only the notebook
    notebook(chapters / "alone.ipynb", [
        ("import os, sys\n"
         "assert os.listdir() == ['alone.ipynb'], os.listdir()\n"
         "assert not [p for p in sys.path if p and os.path.isdir(os.path.join(p, 'booktools'))]",
         [], None),
        ("1 / 0", ["raises-exception"], None)])
    notebook(chapters / "broken.ipynb", [
        ("print('fine')", [], None),
        ("import helper", ["hardware"], "uses-a-file")])
    report = tmp_path / "report.md"
    proc = run(["bash", "scripts/colab-run.sh", "--report", str(report)], book,
               {"PYTHON": sys.executable}, check=False)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("colab: alone ran in ")
    assert lines[1].startswith("colab: broken failed in ")
    assert lines[2] == ("  broken: code cell 1 (uses-a-file): ModuleNotFoundError: "
                        "No module named 'helper'")
    text = report.read_text()
    assert text.startswith("Each chapter run as a Colab reader runs it (Python ")
    assert "- `alone`: ran\n- `broken`: failed\n  - broken: code cell 1 (uses-a-file)" in text
    proc = run(["bash", "scripts/colab-run.sh", "nope"], book, {"PYTHON": sys.executable},
               check=False)
    assert proc.returncode == 2 and "colab: no chapter named ['nope']" in proc.stderr


FAKE_GH = """#!/usr/bin/env bash
# gh as report-failure.sh uses it: logs its arguments and the body it was given.
echo "$*" >> "$FAKE_GH_LOG"
for ((i = 1; i <= $#; i++)); do
  if [ "${!i}" = --body-file ]; then j=$((i + 1)); cp "${!j}" "$FAKE_GH_LOG.body"; fi
done
case "$1 $2" in
  "issue list") echo "${FAKE_GH_ISSUES:-[]}" ;;
  "issue create") echo "https://github.com/example/book/issues/9" ;;
  "issue comment") echo "https://github.com/example/book/issues/7#issuecomment-1" ;;
  *) echo "fake gh: unexpected: $*" >&2; exit 1 ;;
esac
"""


@pytest.fixture
def fake_gh(tmp_path) -> dict:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "gh").write_text(FAKE_GH)
    (bin_dir / "gh").chmod(0o755)
    return {"PATH": f"{bin_dir}:{os.environ['PATH']}", "FAKE_GH_LOG": str(tmp_path / "gh.log"),
            "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "example/book",
            "GITHUB_RUN_ID": "42"}


def test_report_failure_opens_an_issue_then_comments_on_the_open_one(fake_gh, tmp_path):
    report = tmp_path / "out.md"
    report.write_text("- https://example.com/gone: 404\n")
    title = "Weekly check: external links are broken"
    proc = run(["bash", str(ROOT / "scripts" / "report-failure.sh"), title, str(report)],
               tmp_path, fake_gh)
    assert proc.stdout.strip() == "https://github.com/example/book/issues/9"
    log = Path(fake_gh["FAKE_GH_LOG"])
    calls = log.read_text().splitlines()
    assert calls[0].startswith(f"issue list --state open --search in:title {title} --json")
    assert calls[1].startswith(f"issue create --title {title} --body-file ")
    body = Path(f"{log}.body").read_text()
    assert body.startswith("The scheduled run https://github.com/example/book/actions/runs/42 "
                           "failed on ")
    assert body.endswith("\n- https://example.com/gone: 404\n")
    # Next week: the issue is still open (and another whose title only contains it).
    issues = ('[{"number": 5, "title": "' + title + ' (old)"}, '
              '{"number": 7, "title": "' + title + '"}]')
    proc = run(["bash", str(ROOT / "scripts" / "report-failure.sh"), title], tmp_path,
               {**fake_gh, "FAKE_GH_ISSUES": issues})
    assert proc.stdout.splitlines()[-1] == "report-failure: commented on issue #7"
    assert log.read_text().splitlines()[-1].startswith("issue comment 7 --body-file ")
