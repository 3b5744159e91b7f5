"""The licences exist and both pyproject.toml files declare the code's in the
form setuptools supports from 77.0.3 on (PEP 639), with no deprecation; the
footer naming them: tests/test_site_build.py."""
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FILES = {"LICENSE": "MIT License", "LICENSE-CC-BY-SA-4.0.txt":
         "Creative Commons Attribution-ShareAlike 4.0 International"}
# The first setuptools that reads `license` as an SPDX expression and
# `license-files`, with 77.0.0's regressions fixed.
PEP_639 = (77, 0, 3)


def test_licence_files_exist():
    for name, title in FILES.items():
        assert (ROOT / name).read_text().startswith(title), name
    # booktools' own copy: licence files must lie inside the project's folder.
    assert (ROOT / "tools" / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()


@pytest.mark.parametrize("folder", ["", "tools"])
def test_pyproject_declares_mit_with_a_setuptools_floor_that_reads_it(folder, tmp_path):
    project_dir = ROOT / folder
    pyproject = tomllib.loads((project_dir / "pyproject.toml").read_text())
    assert pyproject["project"]["license"] == "MIT"
    assert pyproject["project"]["license-files"] == ["LICENSE"]
    requirement = next(r for r in pyproject["build-system"]["requires"]
                       if r.startswith("setuptools>"))
    floor = re.fullmatch(r"setuptools>=([\d.]+)", requirement)
    assert floor and tuple(map(int, floor.group(1).split("."))) >= PEP_639, requirement
    # The metadata as the build backend writes it, from a copy of the project
    # (it writes an .egg-info beside the sources), warnings as errors
    # (setuptools' deprecation of the table form was a warning).
    copy = tmp_path / "project"
    copy.mkdir()
    for name in ("pyproject.toml", "LICENSE", "README.md", "d2lgpu", "booktools"):
        if (project_dir / name).is_dir():
            shutil.copytree(project_dir / name, copy / name,
                            ignore=shutil.ignore_patterns("__pycache__"))
        elif (project_dir / name).is_file():
            shutil.copy(project_dir / name, copy / name)
    out = tmp_path / "metadata"
    out.mkdir()
    script = ("import sys, warnings; warnings.simplefilter('error');"
              # setuptools-scm's own notice about an entry point setuptools reads, not ours
              "warnings.filterwarnings('ignore', 'The setuptools.file_finders entry point');"
              "from setuptools import build_meta;"
              "print(build_meta.prepare_metadata_for_build_wheel(sys.argv[1]))")
    env = {**os.environ, "SETUPTOOLS_SCM_PRETEND_VERSION": "1.2.3"}  # a copy has no git tag
    proc = subprocess.run([sys.executable, "-c", script, str(out)], cwd=copy, env=env,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    metadata = (out / proc.stdout.strip().splitlines()[-1] / "METADATA").read_text()
    assert "License-Expression: MIT\n" in metadata and "License-File: LICENSE\n" in metadata
    assert "\nLicense: " not in metadata
