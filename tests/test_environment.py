"""The book's environment stays light where every process pays: importing nbformat
(each test worker, the build, every booktools command) must not import
rfc3987_syntax, which builds a grammar at import (1.4 s of CPU each time). It
comes with jsonschema's format-nongpl extra from 4.25 on, which JupyterLab asks
for; requirements.txt pins the release before, and .github/dependabot.yml
leaves jsonschema there."""
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def test_importing_nbformat_imports_no_grammar_builder():
    proc = subprocess.run([sys.executable, "-X", "importtime", "-c", "import nbformat"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    imported = {line.rsplit("|", 1)[-1].strip() for line in proc.stderr.splitlines()}
    assert "nbformat" in imported and "jsonschema" in imported
    assert not {"rfc3987_syntax", "lark"} & imported, \
        "rfc3987-syntax is installed: pin jsonschema below 4.25 and pip uninstall it"


def test_dependabot_leaves_jsonschema_below_the_release_that_brings_it():
    pins = dict(line.split("==") for line in (ROOT / "requirements.txt").read_text().splitlines()
                if "==" in line and not line.startswith("#"))
    assert tuple(map(int, pins["jsonschema"].split(".")[:2])) < (4, 25)
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text())
    pip = next(u for u in config["updates"] if u["package-ecosystem"] == "pip")
    assert {"dependency-name": "jsonschema", "versions": [">=4.25"]} in pip["ignore"]
