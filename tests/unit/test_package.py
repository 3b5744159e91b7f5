"""The package: its public names, docstrings, version, and a quiet import."""

import inspect
import json
import re
import subprocess
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
    "Timer", "Module", "DataModule", "SyntheticRegressionData",
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
    modules = (devices, timing, training, plotting)
    assert sorted(d2lgpu.__all__) == sorted(n for m in modules for n in m.__all__)
    for name in d2lgpu.__all__:
        assert getattr(d2lgpu, name) is not None


@pytest.mark.parametrize("name", sorted(d2lgpu.__all__))
def test_docstring_first_line_names_the_chapter(name):
    first = inspect.getdoc(getattr(d2lgpu, name)).splitlines()[0]
    match = re.search(r'\(chapter "([^"]+)"\)\.$', first)
    assert match, first
    titles = chapter_titles()
    if not titles:
        pytest.skip("no chapters/*.md in this checkout")
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
    assert [p.default for p in sig(d2lgpu.Trainer).parameters.values()][1:3] == [0, 0]
    assert list(sig(d2lgpu.SyntheticRegressionData).parameters.values())[2].default == 0.01
    assert sig(d2lgpu.LinearRegression).parameters["lr"].default == 0.03


def test_version_agrees_with_pyproject_and_metadata():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert d2lgpu.__version__ == pyproject["project"]["version"]
    assert d2lgpu.__version__ == metadata.version("d2lgpu")


def test_package_does_not_import_the_chapters_figures_module():
    # d2lgpu/figures.py belongs to the chapters' helper; importing d2lgpu must
    # neither need it nor pull in what it needs.
    source = "".join(Path(m.__file__).read_text()
                     for m in (d2lgpu, devices, timing, training, plotting))
    assert "figures" not in source


# dict.items bypasses RcParams.__getitem__: reading rcParams["backend"] would
# itself resolve a backend and import pyplot.
IMPORT_PROBE = r"""
import json, random, sys, warnings
import matplotlib, torch
before = dict(rng=torch.get_rng_state().tolist(), py=repr(random.getstate()),
              rc=repr(sorted(dict.items(matplotlib.rcParams))), filters=repr(warnings.filters),
              threads=torch.get_num_threads(),
              backend=matplotlib.rcParams._get_backend_or_none())
import d2lgpu
after = dict(rng=torch.get_rng_state().tolist(), py=repr(random.getstate()),
             rc=repr(sorted(dict.items(matplotlib.rcParams))), filters=repr(warnings.filters),
             threads=torch.get_num_threads(),
             backend=matplotlib.rcParams._get_backend_or_none())
changed = sorted(k for k in before if before[k] != after[k])
print(json.dumps(dict(changed=changed, pyplot="matplotlib.pyplot" in sys.modules)))
"""


def test_import_has_no_side_effects():
    done = subprocess.run([sys.executable, "-c", IMPORT_PROBE],
                          capture_output=True, text=True, timeout=60, check=True)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result == {"changed": [], "pyplot": False}
