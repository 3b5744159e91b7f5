"""What a cell printed in parts is shown as one block (booktools.ext.merged_streams)."""
from docutils import nodes

from booktools.ext.merged_streams import merge_streams


def _block(text, stream="stream", language="myst-ansi"):
    return nodes.literal_block(text, text, classes=["output", stream], language=language)


def _output(*children):
    return nodes.container("", *children, nb_element="cell_code_output", classes=["cell_output"])


def _shown(output):
    return [(child.__class__.__name__, child.astext(), (child["classes"] or [""])[-1])
            for child in output.children]


def test_parts_of_one_stream_become_one_block_in_order():
    output = _output(_block("epoch 1\n"), _block("epoch 2\n"), _block("done"),
                     _block("\nafter"))
    assert merge_streams(output) == 3
    assert _shown(output) == [("literal_block", "epoch 1\nepoch 2\ndone\nafter", "stream")]
    assert output[0]["language"] == "myst-ansi"


def test_other_outputs_keep_the_parts_of_a_stream_apart():
    image = nodes.image(uri="plot.png")
    output = _output(_block("a\n"), _block("warning\n", "stderr"), _block("b\n"),
                     _block("c\n"), image, _block("d\n"),
                     _block("table\n", "text_plain"), _block("e\n"))
    assert merge_streams(output) == 1
    assert [text for _, text, _ in _shown(output)] == \
        ["a\n", "warning\n", "b\nc\n", "", "d\n", "table\n", "e\n"]


def test_blocks_of_two_renderings_are_not_joined():
    # The build's own stdout (ANSI) and a recorded tab's (plain): another kind.
    output = _output(_block("x\n"), _block("y\n", language="none"))
    assert merge_streams(output) == 0 and len(output) == 2


def test_a_recorded_tabs_parts_keep_their_line_breaks():
    from booktools.ext.recorded_runs import _literal
    output = _output(_literal("whole  peak 567 MiB\n", ["output", "stream"]),
                     _literal("halved peak 455 MiB\n", ["output", "stream"]))
    assert merge_streams(output) == 1
    assert output[0].astext() == "whole  peak 567 MiB\nhalved peak 455 MiB\n"
