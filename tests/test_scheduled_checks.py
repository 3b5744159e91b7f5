"""The weekly workflows without GitHub: scripts/colab-run.sh runs each chapter as a
Colab reader does; .github/failure-issue.md is the issue a failed check opens."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jinja2
import nbformat
import yaml

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


def test_the_failure_issue_names_the_run_and_holds_the_report(tmp_path):
    # The template as JasonEtco/create-an-issue renders it: front matter, then nunjucks,
    # whose syntax used here is Jinja's; the report is included from the workspace.
    template = (ROOT / ".github" / "failure-issue.md").read_text(encoding="utf-8")
    front, body = template.split("---\n")[1:]
    (tmp_path / "out.md").write_text("- https://example.com/gone: 404\n")
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(tmp_path),
                             keep_trailing_newline=True)
    env.filters["date"] = lambda value, moment_format: moment_format.replace(
        "YYYY", "2026").replace("MM", "11").replace("DD", "30")
    variables = {"date": 0, "env": {
        "TITLE": "Weekly check: broken external links", "REPORT": "out.md",
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "example/book",
        "GITHUB_RUN_ID": "42"}}
    title = env.from_string(yaml.safe_load(front)["title"]).render(variables)
    assert title == "Weekly check: broken external links"
    assert env.from_string(body).render(variables) == (
        "The scheduled run https://github.com/example/book/actions/runs/42 failed on "
        "2026-11-30.\n\n- https://example.com/gone: 404\n\n")
    variables["env"]["REPORT"] = "none.md"  # no report: the run's link alone
    assert env.from_string(body).render(variables).endswith("2026-11-30.\n\n\n")
