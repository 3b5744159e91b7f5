"""Mark cell outputs whose lines are meant to line up, so that they scroll.

Outputs wrap on the website (_static/book.css): a warning must be read whole,
not cut off at the column's edge. A table drawn in text (``nvidia-smi``'s
box, a run's aligned columns) is the exception: wrapped, its lines break
apart and nothing lines up. Such an output gets the class ``fixed-width``, and
book.css lets it keep its lines and scroll sideways inside its own box.

The rule (``is_fixed_width``): the text has a box-drawing character (U+2500
to U+257F); or at least 3 consecutive lines that have ``|`` at the same 2 or
more columns (the edges and separators of a table drawn in ASCII, like
``nvidia-smi``'s); or at least 2 rule lines of 2 or more dashed runs apart
(``-----  -----``, the column rules of torch.profiler's table). An ordinary
message, a traceback or printed source has none of these, and keeps wrapping. It applies to the build's own outputs (myst-nb)
and to the recorded runs' (booktools.ext.recorded_runs, which runs first).
"""
from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

BOX_DRAWING = re.compile("[\u2500-\u257f]")
RUN = 3        # consecutive lines ...
SHARED = 2     # ... with "|" at this many of the same columns
COLUMN_RULE = re.compile(r"^\s*-{3,}(\s+-{3,})+\s*$")  # "-----  -----"
RULES = 2      # a header rule and a closing one


def is_fixed_width(text: str) -> bool:
    if BOX_DRAWING.search(text):
        return True
    if sum(bool(COLUMN_RULE.match(line)) for line in text.splitlines()) >= RULES:
        return True
    run, shared = 0, set()
    for line in text.splitlines():
        bars = {i for i, ch in enumerate(line) if ch == "|"}
        if run and len(shared & bars) >= SHARED:
            shared, run = shared & bars, run + 1
        elif len(bars) >= SHARED:
            shared, run = bars, 1
        else:
            shared, run = set(), 0
        if run >= RUN:
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
