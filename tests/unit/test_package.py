"""The package: its public names, docstrings, version, and a quiet import."""

import inspect
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest

import d2lgpu
from d2lgpu import devices, plotting, timing, training

ROOT = Path(__file__).resolve().parents[2]

CONTRACT = {  # the names the chapters are written against
    "cpu", "gpu", "num_gpus", "try_gpu", "try_all_gpus", "accelerator",
    "device_report", "show_devices", "synchronize", "benchmark", "Measurement",
    "Module", "DataModule", "SyntheticRegressionData",
    "LinearRegression", "Trainer", "ProgressBoard",
}


def chapter_titles():
    """The title (first level-1 heading) of every chapter of the book."""
    titles = set()
    for path in sorted((ROOT / "chapters").glob("*.md")):
        match = re.search(r"^# (.+)$", path.read_text(encoding="utf-8"), re.M)
        if match:
            titles.add(match.group(1).strip())
    return titles


def test_public_names():
    assert CONTRACT <= set(d2lgpu.__all__)
    # Every public name is a module's own, and the package re-exports all of
    # that module's __all__ (d2lgpu.figures, d2lgpu.launch and
    # d2lgpu.ddp_train, imported by name only, are not re-exported).
    owners = {sys.modules[getattr(d2lgpu, name).__module__]
              for name in d2lgpu.__all__}
    assert {devices, timing, training, plotting} <= owners
    exported = sorted(n for m in owners for n in m.__all__)
    assert sorted(d2lgpu.__all__) == exported
    for module in owners:
        for name in module.__all__:
            assert getattr(d2lgpu, name) is getattr(module, name)
    assert d2lgpu._checks.__all__ == []  # private: nothing re-exported


@pytest.mark.parametrize("name", sorted(d2lgpu.__all__))
def test_docstring_first_line_names_the_chapter(name):
    first = inspect.getdoc(getattr(d2lgpu, name)).splitlines()[0]
    match = re.search(r'\(chapter "([^"]+)"\)\.$', first)
    assert match, first
    titles = chapter_titles()
    assert match.group(1) in titles, (match.group(1), sorted(titles))


def test_signatures_match_the_contract():
    sig = inspect.signature
    for helper in (d2lgpu.gpu, d2lgpu.try_gpu):
        assert list(sig(helper).parameters) == ["i"]
        assert sig(helper).parameters["i"].default == 0
    params = sig(d2lgpu.benchmark).parameters
    assert {k: p.default for k, p in params.items() if p.default is not p.empty} == {
        "device": None, "warmup": 1, "repeat": 7, "min_block_time": 0.02,
        "sync": True, "label": None}
    # d2l's defaults, as the objects built without them show.
    trainer = d2lgpu.Trainer(3)
    assert (trainer.max_epochs, trainer.num_gpus, trainer.gradient_clip_val,
            trainer.plot, trainer.gpus) == (3, 0, 0, True, [])
    data = d2lgpu.SyntheticRegressionData([1.0], 0.5)
    assert (data.noise, data.num_train, data.num_val, data.batch_size) == (
        0.01, 1000, 1000, 32)
    assert d2lgpu.LinearRegression().lr == 0.03


def test_version_is_the_installed_one_and_comes_from_the_git_tag():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert pyproject["project"]["dynamic"] == ["version"] and "version" not in pyproject["project"]
    assert "setuptools_scm" in pyproject["tool"]
    assert d2lgpu.__version__ == metadata.version("d2lgpu")
