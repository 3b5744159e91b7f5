"""figures/ holds SVG copies of the code-drawn figures; they must be current."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_committed_figures_match_the_code_that_draws_them():
    proc = subprocess.run([sys.executable, "scripts/make_figures.py", "--check"],
                          cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
