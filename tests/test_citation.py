"""CITATION.cff validates, and the README's BibTeX is the one cffconvert makes of it."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CFFCONVERT = Path(sys.executable).with_name("cffconvert")


def cffconvert(*args, cwd=ROOT):
    return subprocess.run([str(CFFCONVERT), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=60)


def test_citation_validates_and_the_readme_shows_its_bibtex():
    proc = cffconvert("--validate", "-i", "CITATION.cff")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bibtex = cffconvert("-f", "bibtex", "-i", "CITATION.cff")
    assert bibtex.returncode == 0, bibtex.stderr
    shown = re.search(r"```bibtex\n(.*?)```", (ROOT / "README.md").read_text(), re.S)
    assert shown and shown.group(1) == bibtex.stdout, "paste cffconvert -f bibtex into README"


def test_an_invalid_citation_fails_validation(tmp_path):
    text = (ROOT / "CITATION.cff").read_text()
    (tmp_path / "CITATION.cff").write_text(text.replace("cff-version: 1.2.0", "cff-version: 1.2.0\nlicence: MIT"))
    proc = cffconvert("--validate", "-i", "CITATION.cff", cwd=tmp_path)
    assert proc.returncode != 0 and "licence" in proc.stdout + proc.stderr
