"""The licences exist and pyproject declares the code's (the footer naming them:
tests/test_site_build.py)."""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = {"LICENSE": "MIT License", "LICENSE-CC-BY-SA-4.0.txt":
         "Creative Commons Attribution-ShareAlike 4.0 International"}


def test_licence_files_and_pyproject_agree():
    for name, title in FILES.items():
        assert (ROOT / name).read_text().startswith(title), name
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == {"text": "MIT"}

