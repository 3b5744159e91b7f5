"""d2lgpu as PyPI gets it (publish.yml, scripts/build-dist.sh): a wheel whose version is
the git tag's, which a fresh environment that already has torch (Colab's) installs and
imports as a chapter's install cell does."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_the_wheel_of_a_tag_installs_beside_a_torch_and_knows_its_version(tmp_path):
    source = tmp_path / "source"  # a copy: a build in the checkout rewrites its egg-info
    shutil.copytree(ROOT / "d2lgpu", source / "d2lgpu",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source)
    env = {**os.environ, "SETUPTOOLS_SCM_PRETEND_VERSION": "9.8.7"}  # as if tagged v9.8.7
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w",
                    str(tmp_path / "dist"), str(source)], check=True, env=env, timeout=600)
    wheel = tmp_path / "dist" / "d2lgpu-9.8.7-py3-none-any.whl"
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"d2lgpu", "d2lgpu-9.8.7.dist-info"}
    requires = zipfile.ZipFile(wheel).read("d2lgpu-9.8.7.dist-info/METADATA").decode()
    assert "Requires-Dist: torch>=" in requires
    reader = tmp_path / "reader"
    venv.create(reader, with_pip=False)
    python = reader / "bin" / "python"
    # The reader's torch and matplotlib are already there (Colab's image): this venv
    # sees .venv's packages after its own, so d2lgpu comes from the wheel.
    site = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                    "--target", site, str(wheel)], check=True, timeout=300)
    found = subprocess.run(
        [python, "-c", "import sys; sys.path.append(sys.argv[1]); import d2lgpu; "
                       "print(d2lgpu.__version__, d2lgpu.__file__, d2lgpu.try_gpu())",
         sysconfig.get_path("purelib")],
        cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert found.returncode == 0, found.stderr
    version, path, device = found.stdout.split()
    assert version == "9.8.7" and path.startswith(site) and device in ("cpu", "cuda:0", "mps")
