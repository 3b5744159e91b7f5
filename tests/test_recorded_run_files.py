"""A recorded run that cannot be read (runs/<machine>/run.json or a notebook) is named,
with its line and how to restore it, by booktools.runs and by the site build."""
from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from booktools import runs
from booktools.ext import recorded_runs

ROOT = Path(__file__).resolve().parent.parent
MACHINE = "nvidia-h100"


@pytest.fixture
def corrupt(tmp_path, monkeypatch):
    """A copy of runs/nvidia-h100 (run.json and one notebook) whose run.json lost its
    first brace."""
    (tmp_path / "runs" / MACHINE).mkdir(parents=True)
    for name in ("run.json", "devices.ipynb"):
        shutil.copy(ROOT / "runs" / MACHINE / name, tmp_path / "runs" / MACHINE)
    path = tmp_path / "runs" / MACHINE / "run.json"
    text = path.read_text()
    assert text.startswith("{\n")
    path.write_text(text[1:])  # JSON sees the error at line 2, where the first key is
    monkeypatch.setattr(runs, "RUNS", tmp_path / "runs")
    return path


def test_read_run_names_the_file_line_and_fix(corrupt):
    with pytest.raises(ValueError) as error:
        runs.read_run(corrupt.parent)
    said = str(error.value)
    assert said.startswith(f"{corrupt}:2: the recorded run of {MACHINE} cannot be read (")
    assert said.endswith(f"git checkout -- {corrupt} restores it, or record {MACHINE} again")


def test_the_runs_command_says_it_in_one_line(corrupt, capsys):
    assert runs.main(["stale", MACHINE]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"runs: {corrupt}:2: ") and len(err.splitlines()) == 1


def test_a_bad_notebook_of_a_run_is_named(corrupt):
    corrupt.write_text((ROOT / "runs" / MACHINE / "run.json").read_text())
    notebook = corrupt.parent / "devices.ipynb"
    notebook.write_text(notebook.read_text()[:100])
    with pytest.raises(ValueError, match=rf"^{notebook}: a notebook of the recorded run of "
                                         rf"{MACHINE} cannot be read .*git checkout"):
        runs.read_run(corrupt.parent)


def test_the_site_build_warns_naming_the_file(corrupt, monkeypatch):
    said = []
    monkeypatch.setattr(recorded_runs.LOGGER, "warning",
                        lambda message, **kwargs: said.append(message))
    app = SimpleNamespace(srcdir=str(corrupt.parents[2]), outdir=str(corrupt.parents[2] / "out"),
                          config=SimpleNamespace(language="en"))
    recorded_runs.load_runs(app)
    assert app.recorded_runs == []
    assert len(said) == 1 and said[0].startswith(f"recorded run: {corrupt}:2: the recorded run")


def test_a_folder_without_run_json_is_named_by_the_figures_check(tmp_path, monkeypatch, capsys):
    """The fault run's S2: a runs/ folder without run.json was skipped without a word."""
    import functools

    from booktools import gpu_figures
    (tmp_path / "runs" / "nvidia-t4").mkdir(parents=True)
    shutil.copy(ROOT / "runs" / MACHINE / "devices.ipynb", tmp_path / "runs" / "nvidia-t4")
    monkeypatch.setattr(gpu_figures, "recorded_texts", functools.partial(
        gpu_figures.recorded_texts, tmp_path / "runs"))
    assert gpu_figures.main([]) == 2
    err = capsys.readouterr().err
    assert err.startswith("gpu_figures: ") and "nvidia-t4/: a folder under runs/ without " \
        "run.json" in err and len(err.splitlines()) == 1
