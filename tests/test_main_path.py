"""The main path shows today's PyTorch in its plainest form.

No code cell of a main-path chapter (pyproject.toml's word-limits "main")
branches on a PyTorch version or probes torch with ``hasattr``/``getattr``:
such compatibility code lives in d2lgpu, tested with fakes. Printing the
version is fine; deciding on it is not.
"""
from __future__ import annotations

import ast
import tomllib
from pathlib import Path

import pytest

from booktools import runs

ROOT = Path(__file__).resolve().parent.parent
MAIN = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["booktools"][
    "word-limits"]["main"]["chapters"]


def _rooted_at_torch(node) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return isinstance(node, ast.Name) and node.id == "torch"


def _mentions_version(node) -> bool:
    return any((isinstance(n, ast.Attribute) and n.attr in ("__version__", "version")
                and _rooted_at_torch(n))
               or (isinstance(n, ast.Name) and n.id in ("Version", "parse_version"))
               for n in ast.walk(node))


def compatibility_code(source: str) -> list[str]:
    """What in a cell's source probes torch or branches on its version, one line each."""
    lines = [line for line in source.splitlines() if not line.lstrip().startswith(("%", "!"))]
    tree = ast.parse("\n".join(lines))
    found = []
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in ("hasattr", "getattr") and node.args
                and _rooted_at_torch(node.args[0])):
            found.append(f"line {node.lineno}: {node.func.id}() on torch")
        if isinstance(node, (ast.If, ast.IfExp, ast.While, ast.Assert)) and _mentions_version(node.test):
            found.append(f"line {node.lineno}: a branch on torch's version")
    return found


@pytest.mark.parametrize("chapter", MAIN)
def test_main_path_cells_carry_no_compatibility_code(chapter):
    nb = runs.read_notebook(ROOT / "chapters" / f"{chapter}.ipynb")
    found = {i: compatibility_code(cell.source) for i, cell in enumerate(runs.code_cells(nb))}
    assert not {i: f for i, f in found.items() if f}, (
        f"{chapter}: move these into d2lgpu (tested with fakes), or the cell into a "
        "going-further chapter")


@pytest.mark.parametrize("source", [
    'if hasattr(torch, "accelerator"):\n    pass',
    'x = getattr(torch.amp, "is_autocast_available", None)',
    'if torch.__version__ >= "2.6":\n    pass',
    'ok = "yes" if Version(torch.__version__) > Version("2.1") else "no"',
])
def test_the_rule_catches_compatibility_code(source):
    assert compatibility_code(source)


def test_the_rule_leaves_plain_code_alone():
    assert compatibility_code('print("PyTorch version:", torch.__version__)\n'
                              'if torch.cuda.is_available():\n    pass\n'
                              'getattr(model, "weight")') == []
