"""Text tables in cell outputs keep their lines and scroll; everything else wraps.

A table drawn in text (nvidia-smi's box, torch.profiler's columns) gets the class
``fixed-width``: a box-drawing character, 3 lines in a row with ``|`` at 2 or more of the
same columns, or 2 dashed rules (``---  ---``). myst-nb has no per-output setting for this.
"""
from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

__all__ = ["is_fixed_width", "FixedWidthOutputs"]

BOX_DRAWING = re.compile("[\u2500-\u257f]")
COLUMN_RULE = re.compile(r"^\s*-{3,}(\s+-{3,})+\s*$")


def is_fixed_width(text: str) -> bool:
    lines = text.splitlines()
    if BOX_DRAWING.search(text) or sum(bool(COLUMN_RULE.match(line)) for line in lines) >= 2:
        return True
    run, shared = 0, set()
    for line in lines:
        bars = {i for i, ch in enumerate(line) if ch == "|"}
        if run and len(shared & bars) >= 2:
            shared, run = shared & bars, run + 1
        elif len(bars) >= 2:
            shared, run = bars, 1
        else:
            shared, run = set(), 0
        if run >= 3:
            return True
    return False


class FixedWidthOutputs(SphinxTransform):
    """Add the class fixed-width to every output literal block that is a table."""

    default_priority = 510  # after recorded_runs (500) has added the recorded outputs

    def apply(self, **kwargs) -> None:
        for block in self.document.findall(nodes.literal_block):
            if "output" in block["classes"] and is_fixed_width(block.astext()):
                block["classes"].append("fixed-width")


def setup(app: Sphinx) -> dict:
    app.add_transform(FixedWidthOutputs)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
