"""d2lgpu.plots: measured plots carry their data and draw again from it in each language."""

import base64

import pytest
import torch

from d2lgpu import matmul, plots


# --- measured plots: drawn in a language, redrawn from the data their output carries ---

_LOSS = {"step_loss": [40.0, 3.0, 0.2, 0.001], "device": "cpu", "world_size": 1,
         "backend": "gloo", "global_batch": 32, "per_rank_batch": 32}
PLOTS = {
    "roofline": lambda: plots.roofline({"x + y": (1 / 12, 2e9), "A @ A": (170.7, 1e12)},
                                          2.4e10),
    "loss_curves": lambda: plots.loss_curves(
        _LOSS, {**_LOSS, "world_size": 2, "per_rank_batch": 16}),
    "rates": lambda: matmul.plot_rates(
        {(torch.device("cpu"), torch.float32): {16: (1e-6, 8e9), 32: (2e-6, 3e10)}}),
}


def _words(fig) -> str:
    ax, = fig.axes
    legends = [ax.get_legend(), *fig.legends]
    return " ".join([ax.get_xlabel(), ax.get_ylabel(), ax.get_title()]
                    + [t.get_text() for legend in legends if legend for t in legend.get_texts()])


@pytest.mark.slow
@pytest.mark.parametrize("kind", PLOTS)
def test_a_measured_plot_carries_its_data_through_json_and_redraws_in_each_language(
        kind, monkeypatch):
    import json

    from d2lgpu.figures import LABELS
    monkeypatch.delenv("D2LGPU_LANGUAGE", raising=False)
    data, metadata = PLOTS[kind]()._repr_mimebundle_()
    metadata = json.loads(json.dumps(metadata))  # as the notebook stores it
    assert metadata[plots.PLOT_DATA]["kind"] == kind
    assert plots.redraw(metadata, "en") == (data["image/png"], metadata["image/png"])
    drawn = {code: plots.redraw(metadata, code)[0] for code in LABELS}
    assert len(set(drawn.values())) == len(LABELS)  # each language its own words
    for code in LABELS:
        words = _words(plots._DRAW[kind](metadata[plots.PLOT_DATA]["data"], code))
        others = [w for c in LABELS if c != code for w in LABELS[c].values()
                  if "{" not in w and w not in LABELS[code].values()]
        assert not [w for w in others if w in words], (code, words)


def test_a_measured_plot_shows_as_a_png_of_a_phones_size_in_a_notebook():
    plot = PLOTS["rates"]()
    data, metadata = plot._repr_mimebundle_()
    assert base64.b64decode(data["image/png"]).startswith(b"\x89PNG")
    assert metadata["image/png"] == {"width": 500, "height": 440}  # drawn at twice that
    ax, = plot.fig.axes
    assert ax.xaxis.get_label().get_fontsize() >= 14
    assert all(t.get_fontsize() >= 12 for t in ax.get_legend().get_texts())


def test_a_plot_in_chinese_or_japanese_takes_a_cjk_font_where_one_is_installed():
    from matplotlib import font_manager
    have = {font.name for font in font_manager.fontManager.ttflist}
    for code, fonts in (("zh-CN", "Noto Sans CJK SC"), ("ja", "Noto Sans CJK JP")):
        label = plots._DRAW["loss_curves"](
            PLOTS["loss_curves"]().data, code).axes[0].xaxis.get_label()
        assert label.get_family()[0] == "DejaVu Sans"
        assert (fonts in label.get_family()) == (fonts in have)


def test_the_loss_curves_name_both_runs_and_the_rates_each_device():
    fig = PLOTS["loss_curves"]().fig
    loss, = fig.axes
    assert [t.get_text() for t in fig.legends[0].get_texts()] == [
        "1 process, batch 32 (cpu)", "2 processes, 16 each (gloo, cpu)"]
    assert list(loss.get_lines()[0].get_ydata()) == _LOSS["step_loss"]
    rates = PLOTS["rates"]().fig.axes[0]
    assert [t.get_text() for t in rates.get_legend().get_texts()] == [
        f"CPU ({torch.get_num_threads()} threads), float32"]
    assert list(rates.get_lines()[0].get_ydata()) == pytest.approx([8e-3, 3e-2])
