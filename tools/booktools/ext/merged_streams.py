"""Show what a cell printed in several parts as one block, as a terminal shows it.

A kernel sends a cell's printing to the notebook in parts, wherever its
buffer happened to be flushed: a loop that prints a line per epoch may be
stored as four stream outputs, and myst-nb draws each as a box of its own.
This transform joins every run of adjacent output blocks of the same stream
(stdout or stderr) into one, in the build's own outputs and in the recorded
runs' tabs (booktools.ext.recorded_runs, which runs first). Outputs between
them (a plot, stderr between two stdout parts) keep them apart, in order.
"""
from __future__ import annotations

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

__all__ = ["MergedStreams", "merge_streams"]

STREAMS = ("stream", "stderr")  # myst-nb's classes for stdout and stderr blocks


def _kind(node: nodes.Node) -> tuple | None:
    """What makes two blocks one stream: their classes and language; None if not a stream."""
    if not isinstance(node, nodes.literal_block) or "output" not in node["classes"] \
            or not any(s in node["classes"] for s in STREAMS):
        return None
    return tuple(node["classes"]), node.get("language")


def merge_streams(document: nodes.Node) -> int:
    """Join adjacent blocks of one stream under the same parent; return how many were joined."""
    joined = 0
    for parent in list(document.findall(nodes.Element)):
        i = 0
        while i + 1 < len(parent.children):
            block, following = parent[i], parent[i + 1]
            kind = _kind(block)
            if kind is None or _kind(following) != kind:
                i += 1
                continue
            text = block.astext() + following.astext()
            merged = nodes.literal_block(text, text)
            merged.attributes.update(block.attributes)
            merged["classes"] = list(block["classes"])
            merged["ids"] = block["ids"] + following["ids"]
            parent[i] = merged
            del parent[i + 1]
            joined += 1
    return joined


class MergedStreams(SphinxTransform):
    """Join the parts of each stream in every cell output (merge_streams)."""

    default_priority = 505  # after recorded_runs (500), before fixed_width_outputs (510)

    def apply(self, **kwargs) -> None:
        merge_streams(self.document)


def setup(app: Sphinx) -> dict:
    app.add_transform(MergedStreams)
    return {"version": "0.1", "parallel_read_safe": True, "parallel_write_safe": True}
